//! The commit-log archive against the real broker: `follow --once` archives the group's commits
//! and deletions, and `history` lists them exactly as Kafka's own `OffsetsMessageFormatter`
//! decodes the same records of `__consumer_offsets`.

use std::time::Duration;

use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::kcg::{kcg, run_kafka_tool};
use crate::support::ov::{local_store, ov};
use crate::support::{env, unique_name};

/// (topic, partition, offset or None for a deletion, commit time or None) of a group's records,
/// as OffsetsMessageFormatter prints them, in log order.
type Seen = Vec<(String, i64, Option<i64>, Option<i64>)>;

/// Kafka's own decoder over one partition of `__consumer_offsets`, filtered to `group`.
async fn formatter(group: &str, partition: i64) -> Seen {
    let partition = partition.to_string();
    let out = run_kafka_tool(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            &env::bootstrap(),
            "--topic",
            "__consumer_offsets",
            "--partition",
            &partition,
            "--offset",
            "earliest",
            "--timeout-ms",
            "8000",
            "--formatter",
            "org.apache.kafka.tools.consumer.OffsetsMessageFormatter",
        ],
    )
    .await;
    // One JSON document per record, not always separated by a newline.
    serde_json::Deserializer::from_str(&out.stdout)
        .into_iter::<Value>()
        .map(|d| d.unwrap_or_else(|e| panic!("formatter output: {e}\n{}", out.stdout)))
        .filter(|d| d["key"]["data"]["group"] == group)
        .map(|d| {
            let k = &d["key"]["data"];
            let v = &d["value"]["data"];
            (
                k["topic"].as_str().unwrap().to_string(),
                k["partition"].as_i64().unwrap(),
                v["offset"].as_i64(),
                v["commitTimestamp"].as_i64(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn history_lists_every_commit_and_deletion_as_kafkas_own_decoder_does() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-hist");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    kafka::produce(&topic, 1, 10).await;
    let group = unique_name("log-hist-g");
    for (a, b) in [(2, 1), (5, 4)] {
        kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, a), (1, b)])).await;
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    // A rewind, then a deletion of partition 1's offset (a tombstone).
    let reset = kcg(&[
        "--group",
        &group,
        "--topic",
        &format!("{topic}:0"),
        "--reset-offsets",
        "--to-offset",
        "1",
        "--execute",
    ])
    .await;
    assert!(reset.success, "{}{}", reset.stdout, reset.stderr);
    let deleted = kcg(&[
        "--delete-offsets",
        "--group",
        &group,
        "--topic",
        &format!("{topic}:1"),
    ])
    .await;
    assert!(deleted.success, "{}{}", deleted.stdout, deleted.stderr);

    let (_dir, store) = local_store();
    let follower = unique_name("log-hist-follower");
    let first = ov(
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
    assert!(first["records"].as_u64().unwrap() > 0, "{first:#}");

    let h = ov(&store, &["history", &group, "--output", "json"])
        .await
        .ok()
        .json();
    let ours: Seen = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let deletion = c["kind"] == "deletion";
            (
                c["topic"].as_str().unwrap().to_string(),
                c["partition"].as_i64().unwrap(),
                c["offset"].as_i64(),
                (!deletion).then(|| c["at"].as_i64().unwrap()),
            )
        })
        .collect();
    let theirs = formatter(&group, h["source_partition"].as_i64().unwrap()).await;
    assert_eq!(ours, theirs, "{h:#}");
    // 2 commits of 2 partitions, the rewind, the deletion.
    assert_eq!(ours.len(), 6, "{h:#}");
    let kinds: Vec<&str> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"rewind") && kinds.contains(&"deletion"),
        "{kinds:?}"
    );

    // A second run starts where the first committed: the archive stays continuous and nothing
    // is listed twice.
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3)])).await;
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let again = ov(&store, &["history", &group, "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(again["discontinuities"], serde_json::json!([]), "{again:#}");
    let n = again["changes"].as_array().unwrap().len();
    assert_eq!(n, 7, "{again:#}");
    assert_eq!(
        formatter(&group, h["source_partition"].as_i64().unwrap())
            .await
            .len(),
        n
    );

    // CSV: a header and a line a change.
    let csv = ov(&store, &["history", &group, "--csv"]).await.ok().stdout;
    assert_eq!(csv.lines().count(), n + 1, "{csv}");
    assert!(
        csv.starts_with("at,kind,topic,partition,offset,previous,delta,flagged,"),
        "{csv}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_at_an_instant_between_two_commits_leaves_the_earlier_one() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-at");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 30).await;
    let group = unique_name("log-at-g");
    let take = |n| Take::per_partition(&[(0, n)]);
    let (_dir, store) = local_store();
    let follower = unique_name("log-at-follower");
    // The follower runs before the snapshot, as a service following the log would.
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    kafka::consume_and_commit(&group, &topic, take(3)).await;
    crate::support::ov::snapshot(&store, &["--group", &group]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    kafka::consume_and_commit(&group, &topic, take(5)).await; // 8
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let between = chrono::Utc::now() - chrono::Duration::milliseconds(750);
    kafka::consume_and_commit(&group, &topic, take(7)).await; // 15
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let (at, after_15) = (text(between), text(chrono::Utc::now()));

    // Before the archive holds the later commits: refused, nothing changed.
    let refused = ov(
        &store,
        &["restore", "--at", &at, "--group", &group, "--execute"],
    )
    .await
    .expect_code(7);
    assert!(
        refused.stderr.contains("follow --once"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        crate::support::kcg::committed(&group, &topic).await,
        [(0, 15)].into()
    );

    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let plan = ov(
        &store,
        &[
            "restore", "--at", &at, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    let p = &plan["plan"]["groups"][0]["partitions"][0];
    assert_eq!(
        (p["current"].as_i64(), p["target"].as_i64()),
        (Some(15), Some(8)),
        "{plan:#}"
    );
    assert!(
        plan["chosen_because"]
            .as_str()
            .unwrap()
            .contains("archived record(s)"),
        "{plan:#}"
    );
    ov(
        &store,
        &[
            "restore",
            "--at",
            &at,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert_eq!(
        crate::support::kcg::committed(&group, &topic).await,
        [(0, 8)].into()
    );

    // Now is after the restore's own commit, which the archive does not hold yet: refused.
    let now = text(chrono::Utc::now());
    let refused = ov(&store, &["restore", "--at", &now, "--group", &group])
        .await
        .expect_code(7);
    assert!(refused.stderr.contains("ends at"), "{}", refused.stderr);
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    // Once archived: 15 just after the third commit, 8 after the restore.
    for (instant, want) in [(&after_15, 15), (&now, 8)] {
        let plan = ov(
            &store,
            &[
                "restore", "--at", instant, "--group", &group, "--output", "json",
            ],
        )
        .await
        .ok()
        .json();
        assert_eq!(
            plan["plan"]["groups"][0]["partitions"][0]["target"], want,
            "{plan:#}"
        );
    }
}
