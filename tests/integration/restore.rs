//! `restore` against the real cluster: round trip with undo, refusal of active groups, connectors
//! stopped and resumed, integrity and cluster guards, out-of-range targets, translation by time,
//! and choosing a snapshot by time. Offsets are checked with the real `kafka-consumer-groups`.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_files, local_store, ov, snapshot};
use crate::support::poll::eventually;
use crate::support::{env, kcg, unique_name};

fn admin() -> AdminClient<DefaultClientContext> {
    kafka::kafka_config().create().expect("admin client")
}

/// A topic with `per_partition` records on each of `partitions` partitions.
async fn filled_topic(prefix: &str, partitions: i32, per_partition: usize) -> String {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, partitions).await;
    for p in 0..partitions {
        kafka::produce(&topic, p, per_partition).await;
    }
    topic
}

/// A group on a filled topic with `first` records per partition committed and snapshotted (with
/// `snapshot_args` added) into a fresh local store.
struct Snapshotted {
    topic: String,
    group: String,
    store: String,
    id: String,
    _dir: tempfile::TempDir,
}

async fn snapshotted_group(
    prefix: &str,
    partitions: i32,
    first: usize,
    snapshot_args: &[&str],
) -> Snapshotted {
    let topic = filled_topic(prefix, partitions, 20).await;
    let group = unique_name(&format!("{prefix}-g"));
    kafka::consume_and_commit(&group, &topic, per_partition(first, partitions)).await;
    let (dir, store) = local_store();
    let mut args = vec!["--group", group.as_str()];
    args.extend_from_slice(snapshot_args);
    let id = snapshot(&store, &args).await;
    Snapshotted {
        topic,
        group,
        store,
        id,
        _dir: dir,
    }
}

fn per_partition(n: usize, partitions: i32) -> Take {
    Take::PerPartition((0..partitions).map(|p| (p, n)).collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_resets_a_group_exactly_and_the_undo_snapshot_restores_the_later_position() {
    if !env::require_kafka() {
        return;
    }
    let Snapshotted {
        topic,
        group,
        store,
        id,
        _dir,
    } = snapshotted_group("restore-rt", 3, 5, &[]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(6, 3)).await;
    let later = kcg::committed(&group, &topic).await;
    assert_eq!(later, BTreeMap::from([(0, 11), (1, 11), (2, 11)]));

    // Dry run: the plan, exit 0, nothing changed.
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    let plan_path = plan_file.path().to_str().unwrap();
    let dry = ov(
        &store,
        &["restore", &id, "--output", "json", "--plan-file", plan_path],
    )
    .await
    .ok()
    .json();
    let written: Value = serde_json::from_slice(&std::fs::read(plan_file.path()).unwrap()).unwrap();
    assert_eq!(
        written["plan"], dry["plan"],
        "--plan-file holds the plan that was printed"
    );
    assert_eq!(written["snapshot_id"], id.as_str());
    assert_eq!(written["kind"], "offset-vault-restore-plan");
    assert_eq!(dry["executed"], false);
    let plan = &dry["plan"];
    assert_eq!(plan["applicable"], true);
    assert_eq!(plan["summary"]["reprocess"], 18);
    for p in plan["groups"][0]["partitions"].as_array().unwrap() {
        assert_eq!(
            (p["current"].as_i64(), p["target"].as_i64()),
            (Some(11), Some(5))
        );
        assert_eq!(p["action"], "reset");
    }
    assert_eq!(
        kcg::committed(&group, &topic).await,
        later,
        "a dry run changes nothing"
    );

    let done = ov(&store, &["restore", &id, "--execute", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(done["verified"], true);
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 5), (1, 5), (2, 5)]),
        "kafka-consumer-groups sees exactly the snapshot offsets"
    );
    let undo = done["undo_snapshot"]
        .as_str()
        .expect("undo snapshot id")
        .to_string();
    assert!(done["undo_command"].as_str().unwrap().contains(&undo));

    ov(&store, &["restore", &undo, "--execute"]).await.ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        later,
        "the undo snapshot restores the later position"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_active_group_is_refused_and_left_unchanged() {
    if !env::require_kafka() {
        return;
    }
    let Snapshotted {
        topic,
        group,
        store,
        id,
        _dir,
    } = snapshotted_group("restore-active", 2, 2, &[]).await;
    let member = ActiveConsumer::start(&group, &topic, per_partition(3, 2)).await;
    let before = kcg::committed(&group, &topic).await;
    assert_eq!(before, BTreeMap::from([(0, 5), (1, 5)]));

    let dry = ov(&store, &["restore", &id]).await.expect_code(6);
    assert!(
        dry.stdout.contains("stop those consumers"),
        "{}",
        dry.stdout
    );
    let run = ov(&store, &["restore", &id, "--execute"])
        .await
        .expect_code(6);
    assert!(
        run.stderr.contains(&format!("group {group} is Stable")),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        before,
        "nothing changed"
    );
    drop(member);
}

/// `restore --latest --connector NAME --stop-connectors --execute`, which must succeed.
async fn restore_connector_latest(store: &str, name: &str) -> Value {
    let args = [
        "restore",
        "--latest",
        "--connector",
        name,
        "--stop-connectors",
        "--execute",
        "--output",
        "json",
    ];
    ov(store, &args).await.ok().json()
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_connector_is_stopped_reset_and_rewrites_the_reprocessed_records() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let sink = connect::running_file_sink("restore-sink", 5).await;
    let (name, topic, group, out) = (&sink.name, &sink.topic, &sink.group, &sink.out);

    let (_dir, store) = local_store();
    snapshot(&store, &["--connector", name]).await;
    kafka::produce(topic, 0, 3).await;
    kafka::wait_committed(group, topic, BTreeMap::from([(0, 8)])).await;
    connect::wait_lines(out, 8, Duration::from_secs(30)).await;

    // Without --stop-connectors the running connector blocks the restore.
    let blocked = ov(
        &store,
        &["restore", "--latest", "--connector", name, "--execute"],
    )
    .await
    .expect_code(6);
    assert!(
        blocked.stderr.contains("--stop-connectors"),
        "{}",
        blocked.stderr
    );

    let done = restore_connector_latest(&store, name).await;
    assert_eq!(done["verified"], true);
    assert_eq!(done["plan"]["groups"][0]["partitions"][0]["target"], 5);
    assert_eq!(done["connectors"][0]["name"], name.as_str());
    assert_eq!(done["connectors"][0]["state_before"], "RUNNING");
    assert_eq!(done["connectors"][0]["resumed"], true);

    // The connector runs again, and writes the records at offsets 5, 6, 7 a second time (the
    // second produce call wrote them with the values of indexes 0..3).
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    connect::wait_lines(out, 11, Duration::from_secs(60)).await;
    let written = connect::lines(out);
    assert_eq!(
        written[8..],
        written[5..8],
        "the reprocessed records, in order"
    );
    let second_batch: Vec<String> = (0..3).map(|i| kafka::record_value(topic, 0, i)).collect();
    assert_eq!(written[5..8], second_batch[..]);
    kafka::wait_committed(group, topic, BTreeMap::from([(0, 8)])).await;
    sink.cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn source_connector_rereads_its_file_from_the_snapshot_position() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a1\na2\na3\n").unwrap();
    let topic = unique_name("restore-source");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("restore-source-conn");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let position = |o: &Value| o["offsets"][0]["offset"]["position"].as_i64();
    let name_ref = &name;
    eventually(
        "the source offsets to reach position 9",
        Duration::from_secs(60),
        || async move {
            let offsets = connect::connector_offsets(name_ref).await;
            (position(&offsets) == Some(9)).then_some(())
        },
    )
    .await;
    let (_dir, store) = local_store();
    snapshot(&store, &["--connector", &name]).await;

    std::fs::write(&input, "a1\na2\na3\nb1\nb2\n").unwrap();
    kafka::read_records(&topic, 5, Duration::from_secs(60)).await;

    let done = restore_connector_latest(&store, &name).await;
    assert_eq!(done["verified"], true, "{done:#}");
    let planned = &done["plan"]["connectors"][0];
    assert_eq!(planned["method"], "rest");
    assert_eq!(planned["offsets"][0]["target"]["position"], 9);
    assert_eq!(planned["offsets"][0]["current"]["position"], 15);

    // Resumed from position 9: b1 and b2 are sent again.
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let records = kafka::read_records(&topic, 7, Duration::from_secs(60)).await;
    let values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    assert_eq!(values, ["a1", "a2", "a3", "b1", "b2", "b1", "b2"]);
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn corrupted_or_foreign_snapshots_are_refused_and_nothing_changes() {
    if !env::require_kafka() {
        return;
    }
    let Snapshotted {
        topic,
        group,
        store,
        id,
        _dir,
    } = snapshotted_group("restore-guard", 1, 3, &["--format", "json"]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(4, 1)).await;
    let before = kcg::committed(&group, &topic).await;

    // A snapshot re-written as if it came from another cluster: valid checksums, other id.
    let foreign = rewrite_with_cluster(&store, &id, "another-cluster-id").await;
    let run = ov(&store, &["restore", &foreign, "--execute"])
        .await
        .expect_code(9);
    assert!(run.stderr.contains("another-cluster-id"), "{}", run.stderr);
    assert!(
        run.stderr.contains("--allow-other-cluster"),
        "{}",
        run.stderr
    );
    // Onto another cluster, offsets are translated (--translate auto): a snapshot without
    // record timestamps and fingerprints gives nothing to confirm them with, so the plan refuses
    // them, saying what each method found; --translate identity takes them as they are.
    let refused = ov(
        &store,
        &[
            "restore",
            &foreign,
            "--allow-other-cluster",
            "--output",
            "json",
        ],
    )
    .await
    .expect_code(7)
    .json();
    let p = &refused["plan"]["groups"][0]["partitions"][0];
    assert_eq!(p["action"], "untranslated", "{refused:#}");
    assert!(
        p["note"]
            .as_str()
            .unwrap()
            .contains("no method could translate it"),
        "{p:#}"
    );
    ov(
        &store,
        &[
            "restore",
            &foreign,
            "--allow-other-cluster",
            "--translate",
            "identity",
        ],
    )
    .await
    .ok();
    assert_eq!(kcg::committed(&group, &topic).await, before);

    // One flipped byte: refused before anything else.
    let file = local_files(&store, &id)
        .into_iter()
        .find(|f| f.ends_with("offsets.json"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    std::fs::write(&file, bytes).unwrap();
    let run = ov(&store, &["restore", &id, "--execute"])
        .await
        .expect_code(5);
    assert!(
        run.stderr.contains("offsets.json: SHA-256"),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        before,
        "nothing changed"
    );
}

/// Loads a snapshot with the library, changes its cluster id, and writes it as a new snapshot.
async fn rewrite_with_cluster(store: &str, id: &str, cluster: &str) -> String {
    use offset_vault::snapshot::{self as snap, repo, Captured};
    let store = offset_vault::store::Store::open(store, Duration::from_secs(10)).unwrap();
    let manifest = repo::resolve(&store, id).await.unwrap();
    let loaded = repo::load_verified(&store, &manifest).await.unwrap();
    let mut meta = loaded.manifest.meta.clone();
    meta.cluster_id = cluster.to_string();
    meta.created_at += chrono::Duration::milliseconds(1);
    let captured =
        Captured::from_content(meta, loaded.manifest.format, loaded.content, vec![]).unwrap();
    snap::write(&store, &captured).await.unwrap().meta.id
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_range_targets_fail_the_plan_unless_clamped() {
    if !env::require_kafka() {
        return;
    }
    let Snapshotted {
        topic,
        group,
        store,
        id,
        _dir,
    } = snapshotted_group("restore-range", 1, 3, &[]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(5, 1)).await;

    // Move log-start past the snapshot's offset 3.
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, Offset::Offset(6))
        .unwrap();
    admin()
        .delete_records(&tpl, &AdminOptions::new())
        .await
        .expect("delete records");

    let run = ov(&store, &["restore", &id, "--execute"])
        .await
        .expect_code(7);
    assert!(run.stderr.contains("before log-start 6"), "{}", run.stderr);
    assert!(
        run.stderr.contains("--on-out-of-range clamp"),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 8)])
    );

    let done = ov(
        &store,
        &[
            "restore",
            &id,
            "--on-out-of-range",
            "clamp",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let p = &done["plan"]["groups"][0]["partitions"][0];
    assert_eq!(
        (p["snapshot_offset"].as_i64(), p["target"].as_i64()),
        (Some(3), Some(6))
    );
    assert_eq!(p["action"], "clamped");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 6)])
    );
}

/// A base time for records produced with their own timestamps: a whole second (so that times
/// read back through floating point stay exact), an hour ago. Never a fixed date: a record older
/// than the topic's retention (the broker's default, 7 days) is deleted by the next retention
/// check (every minute in the test environment), which empties the log under the test.
fn recent_base_ms() -> i64 {
    (chrono::Utc::now().timestamp() - 3600) * 1000
}

/// Produces records with timestamps `base + i * 1000` for i in `range` to partition 0.
async fn produce_timed(topic: &str, range: std::ops::Range<i64>, base: i64) {
    let producer: FutureProducer = kafka::kafka_config().create().unwrap();
    for i in range {
        let value = format!("r{i}");
        producer
            .send(
                FutureRecord::<(), String>::to(topic)
                    .partition(0)
                    .payload(&value)
                    .timestamp(base + i * 1000),
                Duration::from_secs(30),
            )
            .await
            .unwrap_or_else(|(e, _)| panic!("produce: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn by_timestamp_translates_offsets_onto_a_recreated_topic() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("restore-time");
    kafka::create_topic(&topic, 1).await;
    let base = recent_base_ms();
    produce_timed(&topic, 0..10, base).await;
    let group = unique_name("restore-time-g");
    kafka::consume_and_commit(&group, &topic, per_partition(4, 1)).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group, "--with-timestamps"]).await;

    // Recreate the topic with 3 older records first: the same records now sit 3 offsets later.
    kafka::recreate_topic(&topic, 1).await;
    kafka::partition_count(&topic).await;
    produce_timed(&topic, -3..0, base - 60_000).await;
    produce_timed(&topic, 0..10, base).await;

    // Without translation the old offsets would point at other records: the plan refuses them,
    // unless that is what is wanted.
    let refused = ov(&store, &["restore", &id, "--output", "json"])
        .await
        .expect_code(7)
        .json();
    let p = &refused["plan"]["groups"][0]["partitions"][0];
    assert_eq!(p["action"], "recreated", "{refused:#}");
    assert!(p["note"].as_str().unwrap().contains("--by-timestamp"));
    ov(&store, &["restore", &id, "--allow-recreated-topics"])
        .await
        .ok();

    let done = ov(
        &store,
        &[
            "restore",
            &id,
            "--by-timestamp",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let p = &done["plan"]["groups"][0]["partitions"][0];
    assert_eq!(p["snapshot_offset"], 4);
    assert_eq!(p["target"], 7, "{p:#}");
    assert!(p["note"].as_str().unwrap().contains("exact"), "{p:#}");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 7)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn before_picks_the_newest_complete_snapshot_before_the_time() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("restore-before", 1, 10).await;
    let group = unique_name("restore-before-g");
    let (_dir, store) = local_store();
    kafka::consume_and_commit(&group, &topic, per_partition(1, 1)).await;
    let first = snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(1, 1)).await;
    let incomplete = snapshot(&store, &["--group", &group]).await;
    for f in local_files(&store, &incomplete) {
        if f.ends_with("manifest.json") {
            std::fs::remove_file(f).unwrap();
        }
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let cut = chrono::Utc::now().to_rfc3339();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    kafka::consume_and_commit(&group, &topic, per_partition(1, 1)).await;
    let last = snapshot(&store, &["--group", &group]).await;

    let chosen = |v: Value| v["snapshot"].as_str().unwrap().to_string();
    let before = ov(
        &store,
        &[
            "restore", "--before", &cut, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(
        chosen(before),
        first,
        "the incomplete snapshot is never used"
    );
    let latest = ov(
        &store,
        &["restore", "--latest", "--group", &group, "--output", "json"],
    )
    .await
    .ok()
    .json();
    assert_eq!(chosen(latest), last);
    let none = ov(
        &store,
        &["restore", "--before", "2001-01-01", "--group", &group],
    )
    .await
    .expect_code(4);
    assert!(
        none.stderr.contains("snapshot not found"),
        "{}",
        none.stderr
    );
}
