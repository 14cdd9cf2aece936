//! `diff`, `export` and `import` against the real cluster and stores (`prune` in `prune.rs`).
//! Offsets are moved and checked with the real `kafka-consumer-groups`.

mod prune;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::{connect, env, kcg, unique_name};

/// A topic with 20 records on each partition, and an empty group that committed `first[p]`
/// records of partition p.
async fn group_on_topic(prefix: &str, first: &[usize]) -> (String, String) {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, first.len() as i32).await;
    for p in 0..first.len() as i32 {
        kafka::produce(&topic, p, 20).await;
    }
    let group = unique_name(&format!("{prefix}-g"));
    let take: Vec<(i32, usize)> = first
        .iter()
        .enumerate()
        .map(|(p, n)| (p as i32, *n))
        .collect();
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&take)).await;
    (topic, group)
}

/// Moves an empty group with the real tool; panics if it refuses.
async fn reset(group: &str, scope: &str, how: &[&str]) {
    let mut args = vec![
        "--group",
        group,
        "--topic",
        scope,
        "--reset-offsets",
        "--execute",
    ];
    args.extend_from_slice(how);
    let out = kcg::kcg(&args).await;
    assert!(
        out.success && !out.stdout.contains("Error"),
        "kafka-consumer-groups {args:?}:\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

fn partitions(diff: &Value) -> Vec<Value> {
    diff["partitions"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_shows_exactly_the_moved_partitions_and_live_matches_after_a_restore() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = group_on_topic("ov-diff", &[5, 5, 5]).await;
    let (_dir, store) = local_store();
    let a = snapshot(&store, &["--group", &group]).await;
    reset(&group, &format!("{topic}:0,2"), &["--to-offset", "12"]).await;
    let b = snapshot(&store, &["--group", &group]).await;

    let d = ov(&store, &["diff", &a, &b, "--output", "json"])
        .await
        .ok()
        .json();
    let moved: Vec<(i64, String, i64, i64, i64)> = partitions(&d)
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap(),
                p["change"].as_str().unwrap().to_string(),
                p["old"].as_i64().unwrap(),
                p["new"].as_i64().unwrap(),
                p["delta"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        moved,
        vec![
            (0, "changed".to_string(), 5, 12, 7),
            (2, "changed".to_string(), 5, 12, 7)
        ],
        "{d:#}"
    );
    assert_eq!(d["summary"]["partitions"]["unchanged"], 1, "{d:#}");
    assert_eq!(d["summary"]["partitions"]["forward_records"], 14, "{d:#}");
    assert_eq!(d["summary"]["differs"], true);
    assert!(partitions(&d).iter().all(|p| p["direction"] == "forward"));

    // --all lists the unchanged partition too; the other way round, the deltas are negative.
    let all = ov(&store, &["diff", &a, &b, "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(partitions(&all).len(), 3);
    let back = ov(&store, &["diff", &b, &a, "--output", "json"])
        .await
        .ok()
        .json();
    assert!(partitions(&back)
        .iter()
        .all(|p| p["delta"] == -7 && p["direction"] == "backward"));

    // Filters, the table, and the exit codes.
    let only = ov(
        &store,
        &[
            "diff",
            &a,
            &b,
            "--topic",
            &topic,
            "--partition",
            "2",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(partitions(&only).len(), 1);
    assert_eq!(partitions(&only)[0]["partition"], 2);
    let table = ov(&store, &["diff", &a, &b, "--exit-code"])
        .await
        .expect_code(1);
    assert!(
        table.stdout.contains("forward") && table.stdout.contains("+7"),
        "{}",
        table.stdout
    );
    assert!(
        table
            .stdout
            .contains("2 partition(s) changed (14 record(s) forward"),
        "{}",
        table.stdout
    );
    ov(&store, &["diff", &a, &a, "--exit-code"])
        .await
        .expect_code(0);
    ov(&store, &["diff", &a, "--latest", "--exit-code"])
        .await
        .expect_code(1);
    ov(&store, &["diff", &a]).await.expect_code(2);

    // The cluster now is B; after restoring A, the live view is A again.
    ov(&store, &["diff", &b, "--live", "--exit-code"])
        .await
        .expect_code(0);
    ov(&store, &["restore", &a, "--execute"]).await.ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 5), (1, 5), (2, 5)])
    );
    let live = ov(
        &store,
        &["diff", &a, "--live", "--exit-code", "--output", "json"],
    )
    .await
    .expect_code(0)
    .json();
    assert_eq!(live["summary"]["differs"], false, "{live:#}");
    assert_eq!(live["summary"]["partitions"]["unchanged"], 3, "{live:#}");
    ov(&store, &["diff", &b, "--live", "--exit-code"])
        .await
        .expect_code(1);
}

#[tokio::test(flavor = "multi_thread")]
async fn exported_csv_applied_by_kafka_consumer_groups_gives_the_snapshot_offsets() {
    if !env::require_kafka() {
        return;
    }
    let (topic, g1) = group_on_topic("ov-export", &[3, 5, 7]).await;
    let g2 = unique_name("ov-export-g2");
    kafka::consume_and_commit(&g2, &topic, Take::per_partition(&[(0, 11), (2, 13)])).await;
    let (dir, store) = local_store();
    let id = snapshot(&store, &["--group", &g1, "--group", &g2]).await;
    reset(&g1, &topic, &["--to-latest"]).await;
    reset(&g2, &format!("{topic}:0,2"), &["--to-earliest"]).await;

    // One group: topic,partition,offset.
    let one = dir.path().join("one.csv");
    ov(
        &store,
        &[
            "export",
            &id,
            "--group",
            &g1,
            "--file",
            one.to_str().unwrap(),
        ],
    )
    .await
    .ok();
    let text = std::fs::read_to_string(&one).unwrap();
    assert_eq!(text, format!("{topic},0,3\n{topic},1,5\n{topic},2,7\n"));
    let applied = kcg::kcg(&[
        "--group",
        &g1,
        "--reset-offsets",
        "--from-file",
        one.to_str().unwrap(),
        "--execute",
    ])
    .await;
    assert!(applied.success, "{}\n{}", applied.stdout, applied.stderr);
    assert_eq!(
        kcg::committed(&g1, &topic).await,
        BTreeMap::from([(0, 3), (1, 5), (2, 7)])
    );

    // Several groups: group,topic,partition,offset, on standard output.
    reset(&g1, &topic, &["--to-latest"]).await;
    let both = ov(&store, &["export", &id]).await.ok().stdout;
    assert_eq!(both.lines().count(), 5, "{both}");
    assert!(both.lines().all(|l| l.split(',').count() == 4), "{both}");
    let path = dir.path().join("both.csv");
    std::fs::write(&path, &both).unwrap();
    let applied = kcg::kcg(&[
        "--group",
        &g1,
        "--group",
        &g2,
        "--reset-offsets",
        "--from-file",
        path.to_str().unwrap(),
        "--execute",
    ])
    .await;
    assert!(applied.success, "{}\n{}", applied.stdout, applied.stderr);
    assert_eq!(
        kcg::committed(&g1, &topic).await,
        BTreeMap::from([(0, 3), (1, 5), (2, 7)])
    );
    assert_eq!(
        kcg::committed(&g2, &topic).await,
        BTreeMap::from([(0, 11), (2, 13)])
    );

    ov(&store, &["export", &id, "--group", "no-such-group"])
        .await
        .expect_code(4);
}

#[tokio::test(flavor = "multi_thread")]
async fn csv_exported_by_kafka_consumer_groups_imports_and_restores_to_its_offsets() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = group_on_topic("ov-import", &[4, 9]).await;
    let (dir, store) = local_store();
    let exported = kcg::kcg(&[
        "--group",
        &group,
        "--topic",
        &topic,
        "--reset-offsets",
        "--to-current",
        "--export",
        "--dry-run",
    ])
    .await;
    assert!(exported.success, "{}", exported.stderr);
    let csv = dir.path().join("group.csv");
    std::fs::write(&csv, &exported.stdout).unwrap();

    // A malformed file is refused with its line, and nothing is written.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, format!("{topic},0,4\n{topic},1,nine\n")).unwrap();
    let refused = ov(
        &store,
        &["import", bad.to_str().unwrap(), "--group", &group],
    )
    .await
    .expect_code(2);
    assert!(refused.stderr.contains("line 2"), "{}", refused.stderr);
    ov(&store, &["import", csv.to_str().unwrap()])
        .await
        .expect_code(2);
    assert!(
        !std::path::Path::new(&store).exists(),
        "a refused import must write nothing, not even the store"
    );

    let out = ov(
        &store,
        &[
            "import",
            csv.to_str().unwrap(),
            "--group",
            &group,
            "--tag",
            "source=kcg",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let id = out["id"].as_str().unwrap().to_string();
    assert_eq!(out["kind"], "import");
    ov(&store, &["verify", &id]).await.ok();
    let shown = crate::support::ov::show(&store, &id).await;
    assert_eq!(shown["manifest"]["kind"], "import");
    assert_eq!(shown["manifest"]["tags"]["source"], "kcg");
    let parts = shown["groups"][0]["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(
        parts[1]["log_end_offset"], 20,
        "live log ranges are captured"
    );

    reset(&group, &topic, &["--to-earliest"]).await;
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 0), (1, 0)])
    );
    ov(&store, &["restore", &id, "--execute"]).await.ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 4), (1, 9)])
    );
    // The import is not what --latest picks.
    ov(&store, &["restore", "--latest", "--group", &group])
        .await
        .expect_code(4);
}

/// The connector part of a diff (there is one connector in these tests).
fn connector(diff: &Value) -> Value {
    diff["connectors"][0].clone()
}

fn config_keys(c: &Value) -> Vec<String> {
    c["config"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|k| k["key"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_shows_connector_config_changes_without_printing_secrets() {
    if !env::require_kafka() || !env::require_connect() {
        return;
    }
    let topic = unique_name("ov-diff-conn");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("ov-diff-sink");
    let cleanup = connect::ConnectorCleanup::new(&name);
    let (dir, store) = local_store();
    let mut config = connect::file_sink(&topic, &dir.path().join("out.txt"));
    config["db.password"] = "first-secret-value".into();
    connect::create_connector(&name, config.clone()).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let put = |config: Value| {
        let name = name.clone();
        async move {
            let (status, body) = connect::connect_request(
                reqwest::Method::PUT,
                &format!("/connectors/{name}/config"),
                Some(&config),
            )
            .await;
            assert!(status.is_success(), "{status}: {body}");
            connect::wait_connector_running(&name, Duration::from_secs(60)).await;
        }
    };

    let args = ["--connector", name.as_str(), "--include-secrets"];
    let a = snapshot(&store, &args).await;
    let a_redacted = snapshot(&store, &["--connector", &name]).await;
    config["db.password"] = "second-secret-value".into();
    config["tasks.max"] = "2".into();
    put(config.clone()).await;
    let b = snapshot(&store, &args).await;
    let b_redacted = snapshot(&store, &["--connector", &name]).await;

    // In clear in the snapshots: compared by hash, reported, never printed.
    let run = ov(&store, &["diff", &a, &b, "--output", "json"]).await.ok();
    assert!(!run.stdout.contains("secret-value"), "{}", run.stdout);
    let c = connector(&run.json());
    assert_eq!(config_keys(&c), ["db.password", "tasks.max"], "{c:#}");
    assert_eq!(c["config"][0]["new"], serde_json::json!({"secret": true}));
    assert_eq!(c["config"][1]["old"], "1");
    assert_eq!(c["config"][1]["new"], "2");
    let table = ov(&store, &["diff", &a, &b]).await.ok().stdout;
    assert!(
        table.contains("config db.password: (secret) -> (secret)"),
        "{table}"
    );
    assert!(!table.contains("secret-value"), "{table}");

    // Redacted in the snapshots: not comparable, and said so.
    let c = connector(
        &ov(
            &store,
            &["diff", &a_redacted, &b_redacted, "--output", "json"],
        )
        .await
        .ok()
        .json(),
    );
    assert_eq!(config_keys(&c), ["tasks.max"], "{c:#}");
    assert_eq!(c["not_compared"], serde_json::json!(["db.password"]));

    // Against the connector now: its config is read live.
    config["tasks.max"] = "1".into();
    put(config.clone()).await;
    let run = ov(
        &store,
        &[
            "diff",
            &b,
            "--live",
            "--connector",
            &name,
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    assert!(!run.stdout.contains("secret-value"), "{}", run.stdout);
    let c = connector(&run.json());
    assert_eq!(config_keys(&c), ["tasks.max"], "{c:#}");
    assert_eq!(c["config"][0]["old"], "2");
    assert_eq!(c["config"][0]["new"], "1");
    cleanup.delete().await;
}
