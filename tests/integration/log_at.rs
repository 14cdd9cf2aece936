//! `--at TIME` on the read commands against the real broker: `show`, `export` and `diff` at an
//! instant between two commits give exactly the earlier commit's offsets (the export applied by
//! the real `kafka-consumer-groups --from-file`), a group deleted before the instant is reported
//! and not invented, an instant the archive does not cover is refused with what to do, and the
//! JSON documents match the published schemas.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::kcg::{committed, kcg};
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::schema::validate;
use crate::support::{env, unique_name};

fn text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// (topic, partition, offset) of a snapshot-form group in JSON.
fn offsets(group: &Value) -> Vec<(String, i64, i64)> {
    group["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
                p["offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// (partition, change, old, new) of a diff's partitions.
pub(crate) fn changes(diff: &Value) -> Vec<(i64, String, Option<i64>, Option<i64>)> {
    diff["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap(),
                p["change"].as_str().unwrap().to_string(),
                p["old"].as_i64(),
                p["new"].as_i64(),
            )
        })
        .collect()
}

/// `follow --once` as `follower`.
async fn follow(store: &str, follower: &str) {
    ov(store, &["follow", "--once", "--group-id", follower])
        .await
        .ok();
}

/// `diff ARGS --output json`, which must succeed.
async fn diff(store: &str, args: &[&str]) -> Value {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    all.extend(["--output", "json"]);
    ov(store, &all).await.ok().json()
}

#[tokio::test(flavor = "multi_thread")]
async fn show_export_and_diff_at_an_instant_between_two_commits_give_the_earlier_one() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-at-read");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 30).await;
    kafka::produce(&topic, 1, 10).await;
    let (g, h) = (unique_name("log-at-read-g"), unique_name("log-at-read-h"));
    let (_dir, store) = local_store();
    let follower = unique_name("log-at-read-follower");
    // The follower runs before the snapshot, as a service following the log would.
    follow(&store, &follower).await;
    kafka::consume_and_commit(&g, &topic, Take::per_partition(&[(0, 3), (1, 2)])).await;
    kafka::consume_and_commit(&h, &topic, Take::per_partition(&[(0, 1)])).await;
    let id = snapshot(&store, &["--group", &g, "--group", &h]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // h is deleted after the snapshot and before the instant: it had no offsets then.
    let deleted = kcg(&["--delete", "--group", &h]).await;
    assert!(deleted.success, "{}{}", deleted.stdout, deleted.stderr);
    kafka::consume_and_commit(&g, &topic, Take::per_partition(&[(0, 5)])).await; // 8
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let between = text(Utc::now() - chrono::Duration::milliseconds(750));
    kafka::consume_and_commit(&g, &topic, Take::per_partition(&[(0, 7)])).await; // 15
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_15 = text(Utc::now());

    // Before the archive holds the later commits: every command refuses, and says what to do.
    for args in [
        &["show", "--at", &between, "--group", &g][..],
        &["export", "--at", &between, "--group", &g],
        &["diff", "--at", &between, "--live", "--group", &g],
    ] {
        let refused = ov(&store, args).await.expect_code(7);
        assert!(
            refused.stderr.contains("follow --once") && refused.stderr.contains("--at"),
            "{args:?}: {}",
            refused.stderr
        );
    }
    follow(&store, &follower).await;

    // show --at: the earlier commit, where it came from, and h reported absent.
    let doc = ov(
        &store,
        &[
            "show", "--at", &between, "--group", &g, "--group", &h, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("show", &doc);
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{doc:#}");
    assert_eq!(groups[0]["group_id"], g.as_str(), "{doc:#}");
    assert_eq!(
        offsets(&groups[0]),
        [(topic.clone(), 0, 8), (topic.clone(), 1, 2)],
        "{doc:#}"
    );
    assert_eq!(doc["absent"], serde_json::json!([h]), "{doc:#}");
    assert_eq!(doc["base"]["snapshot"], id.as_str(), "{doc:#}");
    let source = |group: &str| -> Value {
        doc["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["group_id"] == group)
            .cloned()
            .unwrap_or_else(|| panic!("no source for {group}: {doc:#}"))
    };
    let (sg, sh) = (source(&g), source(&h));
    assert_eq!(
        (sg["committed"].as_bool(), sg["records"].as_u64()),
        (Some(true), Some(1))
    );
    let last: DateTime<Utc> = sg["last_record_at"].as_str().unwrap().parse().unwrap();
    let created: DateTime<Utc> = doc["base"]["created_at"].as_str().unwrap().parse().unwrap();
    let at: DateTime<Utc> = between.parse().unwrap();
    assert!(created < last && last <= at, "{doc:#}");
    assert_eq!(sh["committed"], false, "{doc:#}");
    assert!(sh["records"].as_u64().unwrap() >= 1, "{doc:#}");

    // The same as a table, with the absent group named on stderr.
    let table = ov(
        &store,
        &["show", "--at", &between, "--group", &g, "--group", &h],
    )
    .await
    .ok();
    assert!(
        table.stdout.contains(&format!("base       snapshot {id}")),
        "{}",
        table.stdout
    );
    let row = |partition: i64, offset: i64| {
        table.stdout.lines().any(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.first() == Some(&g.as_str())
                && cells.get(2) == Some(&topic.as_str())
                && cells.get(3) == Some(&partition.to_string().as_str())
                && cells.get(4) == Some(&offset.to_string().as_str())
        })
    };
    assert!(row(0, 8) && row(1, 2), "{}", table.stdout);
    assert!(
        table.stderr.contains("no committed offset at") && table.stderr.contains(&h),
        "{}",
        table.stderr
    );

    // diff --at: against now, against a later instant, and a snapshot against the instant.
    let changed = |old, new| vec![(0, "changed".to_string(), Some(old), Some(new))];
    let live = diff(&store, &["--at", &between, "--live", "--group", &g]).await;
    validate("diff", &live);
    assert_eq!(changes(&live), changed(8, 15), "{live:#}");
    assert_eq!(
        live["old"]["at"].as_str().map(|t| &t[..23]),
        Some(&between[..23])
    );
    assert_eq!(live["old"]["snapshot"], id.as_str(), "{live:#}");
    assert_eq!(live["connectors"], serde_json::json!([]), "{live:#}");
    let two = diff(
        &store,
        &["--at", &between, "--at", &after_15, "--group", &g],
    )
    .await;
    validate("diff", &two);
    assert_eq!(changes(&two), changed(8, 15), "{two:#}");
    let from_snapshot = diff(&store, &[&id, "--at", &between, "--group", &g]).await;
    assert_eq!(changes(&from_snapshot), changed(3, 8), "{from_snapshot:#}");
    ov(
        &store,
        &[
            "diff",
            "--at",
            &between,
            "--live",
            "--group",
            &g,
            "--exit-code",
        ],
    )
    .await
    .expect_code(1);

    // export --at: kafka-consumer-groups' own form, which it applies as it is.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("g.csv");
    let csv_arg = csv.to_str().unwrap();
    ov(
        &store,
        &["export", "--at", &between, "--group", &g, "--file", csv_arg],
    )
    .await
    .ok();
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        format!("{topic},0,8\n{topic},1,2\n")
    );
    let applied = kcg(&[
        "--group",
        &g,
        "--topic",
        &topic,
        "--reset-offsets",
        "--from-file",
        csv_arg,
        "--execute",
    ])
    .await;
    assert!(applied.success, "{}{}", applied.stdout, applied.stderr);
    assert_eq!(
        committed(&g, &topic).await,
        BTreeMap::from([(0, 8), (1, 2)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instant_the_archive_or_the_snapshots_do_not_cover_is_refused_with_what_to_do() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-at-gap");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 20).await;
    let g = unique_name("log-at-gap-g");
    let take = |n| Take::per_partition(&[(0, n)]);
    let (_dir, store) = local_store();
    kafka::consume_and_commit(&g, &topic, take(2)).await;
    let before_any = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    snapshot(&store, &["--group", &g]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let now = || text(Utc::now());

    // No archive at all.
    let refused = ov(&store, &["show", "--at", &now(), "--group", &g])
        .await
        .expect_code(7);
    assert!(
        refused
            .stderr
            .contains("has none: run offset-vault follow --once"),
        "{}",
        refused.stderr
    );
    // Before any snapshot: no base.
    let refused = ov(&store, &["export", "--at", &before_any, "--group", &g])
        .await
        .expect_code(4);
    assert!(
        refused
            .stderr
            .contains("--at needs a snapshot taken at or before TIME"),
        "{}",
        refused.stderr
    );
    // The future, and a time that is not one: usage errors, before anything is read.
    for bad in ["2999-01-01T00:00:00.000Z", "yesterday"] {
        ov(&store, &["show", "--at", bad]).await.expect_code(2);
    }

    // A follower that first starts past the log start (its group was moved to the log end)
    // records the offsets before as a gap and takes a base snapshot: an instant after the older
    // snapshot and before the follower's start needs what the gap lost, and is refused.
    let follower = unique_name("log-at-gap-follower");
    let moved = kcg(&[
        "--group",
        &follower,
        "--topic",
        "__consumer_offsets",
        "--reset-offsets",
        "--to-latest",
        "--execute",
    ])
    .await;
    assert!(moved.success, "{}{}", moved.stdout, moved.stderr);
    kafka::consume_and_commit(&g, &topic, take(3)).await; // 5
    tokio::time::sleep(Duration::from_millis(300)).await;
    let in_gap = now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let followed = ov(
        &store,
        &[
            "follow",
            "--once",
            "--group-id",
            &follower,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert!(
        followed["base_snapshot"].is_string() && !followed["gaps"].as_array().unwrap().is_empty(),
        "{followed:#}"
    );
    let refused = ov(&store, &["show", "--at", &in_gap, "--group", &g])
        .await
        .expect_code(7);
    assert!(
        refused.stderr.contains("has a gap: offsets"),
        "{}",
        refused.stderr
    );

    // A snapshot after the archive began is a base it covers; an instant after the archive's
    // last segment is refused until the follower has run again.
    snapshot(&store, &["--group", &g]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    kafka::consume_and_commit(&g, &topic, take(4)).await; // 9
    tokio::time::sleep(Duration::from_millis(300)).await;
    let at = now();
    let refused = ov(&store, &["diff", "--at", &at, "--live", "--group", &g])
        .await
        .expect_code(7);
    assert!(
        refused.stderr.contains("ends at") && refused.stderr.contains("follow --once"),
        "{}",
        refused.stderr
    );
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let doc = ov(
        &store,
        &["show", "--at", &at, "--group", &g, "--output", "json"],
    )
    .await
    .ok()
    .json();
    validate("show", &doc);
    assert_eq!(
        offsets(&doc["groups"][0]),
        [(topic.clone(), 0, 9)],
        "{doc:#}"
    );
}
