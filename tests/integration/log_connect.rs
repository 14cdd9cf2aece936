//! Kafka Connect's offsets topic in the commit-log archive, against the real worker: `follow
//! --connect-offsets-topic` archives a source connector's positions, and `restore --at` an
//! instant between two of them puts the connector back to the earlier one through Connect's
//! REST API (the connector then sends again what it read after it). Without that archive a
//! named source connector is refused, not restored to the snapshot's position.

use std::time::Duration;

use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka;
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::poll::eventually;
use crate::support::{env, unique_name};

fn text(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The position of the connector's one source partition, as Connect's REST API reports it.
async fn position(name: &str) -> Option<i64> {
    let offsets = connect::connector_offsets(name).await;
    offsets["offsets"][0]["offset"]["position"].as_i64()
}

async fn wait_position(name: &str, want: i64) {
    eventually(
        &format!("the source offsets of {name} to reach position {want}"),
        Duration::from_secs(60),
        || async move { (position(name).await == Some(want)).then_some(()) },
    )
    .await;
}

/// `follow --once`, with Connect's offsets topic when `connect_topic`.
async fn follow(store: &str, follower: &str, connect_topic: Option<&str>) -> Value {
    let mut args = vec!["follow", "--once", "--group-id", follower];
    if let Some(t) = connect_topic {
        args.extend(["--connect-offsets-topic", t]);
    }
    args.extend(["--output", "json"]);
    ov(store, &args).await.ok().json()
}

/// A FileStreamSource connector reading three lines of a file into a new topic, at its
/// position 9.
struct Source {
    _dir: tempfile::TempDir,
    input: std::path::PathBuf,
    topic: String,
    name: String,
    cleanup: ConnectorCleanup,
}

async fn source(prefix: &str) -> Source {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a1\na2\na3\n").unwrap();
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    let name = unique_name(&format!("{prefix}-src"));
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    wait_position(&name, 9).await;
    Source {
        _dir: dir,
        input,
        topic,
        name,
        cleanup,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_at_puts_a_source_connector_back_to_its_position_at_the_instant() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let Source {
        _dir,
        input,
        topic,
        name,
        cleanup,
    } = source("log-connect").await;

    let (_dir, store) = local_store();
    let follower = unique_name("log-connect-follower");
    let connect_topic = env::connect_offsets_topic();
    let first = follow(&store, &follower, Some(&connect_topic)).await;
    assert!(
        first["connect"]["segments"].as_array().is_some(),
        "{first:#}"
    );
    snapshot(&store, &["--connector", &name]).await;

    std::fs::write(&input, "a1\na2\na3\nb1\nb2\n").unwrap();
    wait_position(&name, 15).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let between = chrono::Utc::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    std::fs::write(&input, "a1\na2\na3\nb1\nb2\nc1\n").unwrap();
    wait_position(&name, 18).await;
    kafka::read_records(&topic, 6, Duration::from_secs(60)).await;

    let second = follow(&store, &follower, Some(&connect_topic)).await;
    assert!(
        second["connect"]["records"].as_u64().unwrap() >= 2,
        "the positions 15 and 18 are archived: {second:#}"
    );
    // The follower group of Connect's topic is its own, beside the commit log's.
    let at = text(between);
    let plan = ov(
        &store,
        &[
            "restore",
            "--at",
            &at,
            "--connector",
            &name,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let planned = &plan["plan"]["connectors"][0];
    assert_eq!(planned["offsets"][0]["target"]["position"], 15, "{plan:#}");
    assert_eq!(planned["offsets"][0]["current"]["position"], 18, "{plan:#}");
    assert!(
        plan["chosen_because"]
            .as_str()
            .unwrap()
            .contains("Connect's offsets topic replayed"),
        "{plan:#}"
    );

    let done = ov(
        &store,
        &[
            "restore",
            "--at",
            &at,
            "--connector",
            &name,
            "--stop-connectors",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(done["verified"], true, "{done:#}");
    // Resumed from position 15: c1 is sent again, and nothing before it.
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let records = kafka::read_records(&topic, 7, Duration::from_secs(60)).await;
    let values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    assert_eq!(values, ["a1", "a2", "a3", "b1", "b2", "c1", "c1"]);
    wait_position(&name, 18).await;

    // A store with no archive of Connect's topic: the named source connector is refused, and
    // nothing is changed.
    let (_dir2, other) = local_store();
    follow(&other, &unique_name("log-connect-nolane"), None).await;
    snapshot(&other, &["--connector", &name]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let now = text(chrono::Utc::now());
    follow(&other, &unique_name("log-connect-nolane"), None).await;
    let refused = ov(
        &other,
        &[
            "restore",
            "--at",
            &now,
            "--connector",
            &name,
            "--stop-connectors",
            "--execute",
        ],
    )
    .await
    .expect_code(7);
    assert!(
        refused.stderr.contains("--connect-offsets-topic"),
        "{}",
        refused.stderr
    );
    assert_eq!(position(&name).await, Some(18));

    // verify --all checks the archive of Connect's topic like the commit log's: clean, then a
    // flipped byte in one of its data files is a checksum problem (exit 5).
    let clean = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(clean["log"]["ok"], true, "{clean:#}");
    let files: Vec<std::path::PathBuf> = walk(&std::path::Path::new(&store).join("connect-log"))
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
        .collect();
    assert!(
        !files.is_empty(),
        "no data file under connect-log/ in {store}"
    );
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&files[0], bytes).unwrap();
    let broken = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .expect_code(5)
        .json();
    let problems = broken["log"]["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["kind"] == "checksum"
                && p["key"].as_str().unwrap().starts_with("connect-log/")),
        "{broken:#}"
    );
    cleanup.delete().await;
}

/// The index entries of Connect's lane in a local store, by path under the store.
fn connect_index(store: &str) -> Vec<String> {
    let root = std::path::Path::new(store);
    let mut keys: Vec<String> = walk(&root.join("connect-log/index"))
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect();
    keys.sort();
    keys
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_log_prunes_the_archive_of_connects_offsets_topic_and_restore_at_inside_the_window_still_works(
) {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let Source {
        _dir,
        input,
        name,
        cleanup,
        ..
    } = source("log-connect-prune").await;

    let (_dir, store) = local_store();
    let follower = unique_name("log-connect-prune-follower");
    let connect_topic = env::connect_offsets_topic();
    follow(&store, &follower, Some(&connect_topic)).await;
    let mine = ["--connector", &name, "--tag", "kept=yes"];
    snapshot(&store, &mine).await;
    std::fs::write(&input, "a1\na2\na3\nb1\nb2\n").unwrap();
    wait_position(&name, 15).await;
    follow(&store, &follower, Some(&connect_topic)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The window's base: the newest snapshot holding the connector.
    snapshot(&store, &mine).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let between = text(chrono::Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::write(&input, "a1\na2\na3\nb1\nb2\nc1\n").unwrap();
    wait_position(&name, 18).await;
    follow(&store, &follower, Some(&connect_topic)).await;
    let before = connect_index(&store);

    // A window of a millisecond keeps the log from the newest snapshot holding the connector
    // (no margin): everything of Connect's lane wholly older than it may go. Only the test's
    // snapshots are kept: the follower's base snapshot holds every connector of the shared
    // worker, whose newest snapshot it would be, and would hold the window's base back.
    let args = [
        "prune",
        "--keep-tag",
        "kept=yes",
        "--allow-empty-group",
        "--keep-log",
        "1ms",
        "--keep-log-margin",
        "0s",
    ];
    let dry = ov(&store, &[&args[..], &["--output", "json"]].concat())
        .await
        .ok()
        .json();
    let planned = dry["connect_log"]["summary"]["remove_segments"]
        .as_u64()
        .unwrap_or_else(|| panic!("no plan of Connect's lane: {dry:#}"));
    assert!(planned >= 1, "{dry:#}");
    assert!(
        dry["connect_log"]["window"]["why"]
            .as_str()
            .unwrap()
            .contains(&format!("connector {name}")),
        "{dry:#}"
    );
    assert_eq!(connect_index(&store), before, "a dry run deletes nothing");

    let done = ov(
        &store,
        &[&args[..], &["--execute", "--output", "json"]].concat(),
    )
    .await
    .ok()
    .json();
    let removed: Vec<String> = done["connect_log_deleted"]["segments"]
        .as_array()
        .unwrap_or_else(|| panic!("{done:#}"))
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(removed.len() as u64, planned, "{done:#}");
    let after = connect_index(&store);
    assert_eq!(
        after.len(),
        before.len() - removed.len(),
        "before {before:#?}\nafter {after:#?}\nremoved {removed:#?}"
    );
    assert!(removed
        .iter()
        .all(|k| !after.contains(k) && before.contains(k)));
    // Every partition's chain keeps its last entry: the follower resumes where it ends.
    let partitions = |keys: &[String]| -> std::collections::BTreeSet<String> {
        keys.iter()
            .map(|k| k.split('/').nth(2).unwrap().to_string())
            .collect()
    };
    assert_eq!(partitions(&after), partitions(&before));

    let clean = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(clean["log"]["ok"], true, "{clean:#}");
    // An instant inside the kept window is still rebuilt from the base and the kept log.
    let plan = ov(
        &store,
        &[
            "restore",
            "--at",
            &between,
            "--connector",
            &name,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let planned = &plan["plan"]["connectors"][0];
    assert_eq!(planned["offsets"][0]["target"]["position"], 15, "{plan:#}");
    // Nothing more to remove: the same prune again plans nothing of Connect's lane.
    let again = ov(&store, &[&args[..], &["--output", "json"]].concat())
        .await
        .ok()
        .json();
    assert_eq!(
        again["connect_log"]["summary"]["remove_segments"], 0,
        "{again:#}"
    );
    cleanup.delete().await;
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
