//! Failing over onto a MirrorMaker 2 replica, and rehearsing on staging (issue 23), against the
//! real MirrorMaker 2 of the test environment (`mm2` in `scripts/test-env`: the main cluster,
//! alias `primary`, replicated onto the second one, `mm2.X` becoming `primary.mm2.X`) and, for a
//! replica that MirrorMaker did not make, topics the test copies by hand to the second cluster:
//! same keys, values, headers and timestamps, with records missing at the start or in the middle.
//!
//! What is checked is what a consumer would see after the failover: the record it reads first on
//! the replica, with the offsets read back by the real `kafka-consumer-groups`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::mirror::{
    all_output, commit, committed, create_topic, delete_records, first_records_from_committed,
    mirrored_group, mirrored_topic, other_connect, ov_on, plan_rows, produce, read_partition,
    replica_topic, require_mirror_maker, timestamp_base, wait_checkpoints,
    wait_other_connector_running, wait_replicated, Cluster, OtherConnectorCleanup, Rec,
    REPLICATION_POLICY,
};
use crate::support::ov::local_store;
use crate::support::{env, kafka, unique_name};

use Cluster::{Primary, Replica};

/// Seconds after the base of each record's timestamp, by offset: single records and runs of
/// records that share one timestamp (offsets 2-5, 7-9).
const STEPS: [i64; 12] = [0, 1, 2, 2, 2, 2, 3, 4, 4, 4, 5, 6];

/// Records for `partitions` partitions of `topic`, one per entry of `steps` each, with
/// timestamps `base + step seconds` (each partition a minute later than the one before), and
/// distinct keys, values and headers.
fn records(topic: &str, partitions: i32, steps: &[i64], base: i64) -> Vec<Rec> {
    (0..partitions)
        .flat_map(|p| {
            steps.iter().enumerate().map(move |(i, step)| {
                Rec::new(
                    p,
                    base + i64::from(p) * 60_000 + step * 1000,
                    &format!("k-{p}-{i}"),
                    &format!("{topic}/{p}/{i}"),
                )
                .with_header("seq", &format!("{p}.{i}"))
            })
        })
        .collect()
}

/// How many records of `partition` share the timestamp of the one at `offset`.
fn same_time(records: &[Rec], partition: i32, offset: i64) -> i64 {
    let at = records
        .iter()
        .find(|r| r.partition == partition && r.offset == offset)
        .unwrap_or_else(|| panic!("no record {partition}/{offset}"))
        .timestamp;
    records
        .iter()
        .filter(|r| r.partition == partition && r.timestamp == at)
        .count() as i64
}

/// The record of `records` at `partition`/`offset`.
fn record_at(records: &[Rec], partition: i32, offset: i64) -> &Rec {
    records
        .iter()
        .find(|r| r.partition == partition && r.offset == offset)
        .unwrap_or_else(|| panic!("no record {partition}/{offset} in {records:?}"))
}

/// `snapshot --group GROUP --with-timestamps` on the primary; returns the id.
async fn snapshot_with_timestamps(store: &str, group: &str) -> String {
    let run = ov_on(
        Primary,
        store,
        &[
            "snapshot",
            "--group",
            group,
            "--with-timestamps",
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    run.json()["id"].as_str().expect("id").to_string()
}

/// `restore --latest --group GROUP --allow-other-cluster ARGS... --output json` onto the replica.
async fn restore_on_replica(store: &str, group: &str, args: &[&str]) -> crate::support::ov::Run {
    let mut all = vec![
        "restore",
        "--latest",
        "--group",
        group,
        "--allow-other-cluster",
    ];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--output", "json"]);
    ov_on(Replica, store, &all).await
}

fn i(row: &Value, field: &str) -> Option<i64> {
    row[field].as_i64()
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_by_timestamp_reads_exactly_the_first_unconsumed_record() {
    if !require_mirror_maker().await {
        return;
    }
    let topic = mirrored_topic("failover");
    let replica = replica_topic(&topic);
    create_topic(Primary, &topic, 3).await;
    let base = timestamp_base(Duration::from_secs(3600));
    let produced = produce(Primary, &topic, &records(&topic, 3, &STEPS, base)).await;

    // Committed positions: inside a run of equal timestamps (partition 0: last consumed offset 3
    // of the run 2-5), just after a record of its own (1: last consumed 6, the next one starts
    // the run 7-9), and inside the next run (2: last consumed 8 of 7-9).
    let group = mirrored_group("failover-g");
    let positions: BTreeMap<i32, i64> = [(0, 4), (1, 7), (2, 9)].into();
    commit(Primary, &group, &topic, &positions).await;
    assert_eq!(committed(Primary, &group, &topic).await, positions);

    wait_replicated(&topic).await;
    let (_dir, store) = local_store();
    let id = snapshot_with_timestamps(&store, &group).await;
    let checkpoints = wait_checkpoints(&group, &replica, &positions).await;

    // The snapshot holds the last consumed record's time and fingerprint (a hex SHA-256), one per
    // record: three different records, three different fingerprints.
    let shown = ov_on(Primary, &store, &["show", &id, "--output", "json"])
        .await
        .ok()
        .json();
    let mut digests = Vec::new();
    for part in shown["groups"][0]["partitions"]
        .as_array()
        .expect("partitions")
    {
        let p = part["partition"].as_i64().unwrap() as i32;
        let last = record_at(&produced, p, positions[&p] - 1);
        let at = chrono::DateTime::parse_from_rfc3339(
            part["last_record_timestamp"].as_str().expect("a timestamp"),
        )
        .unwrap_or_else(|e| panic!("{part}: {e}"));
        assert_eq!(at.timestamp_millis(), last.timestamp, "{part}");
        let digest = part["last_record_digest"].as_str().expect("a digest");
        assert!(
            digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{part}"
        );
        digests.push(digest.to_string());
    }
    digests.sort();
    digests.dedup();
    assert_eq!(digests.len(), 3, "{shown:#}");

    // show under the replica's names: each partition's topic as the replica names it, and the
    // snapshot's name beside it.
    let mapped = ov_on(
        Primary,
        &store,
        &[
            "show",
            &id,
            "--replication-policy",
            REPLICATION_POLICY,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let parts = mapped["groups"][0]["partitions"]
        .as_array()
        .expect("partitions");
    assert_eq!(parts.len(), 3, "{mapped:#}");
    for part in parts {
        assert_eq!(part["topic"], replica, "{part}");
        assert_eq!(part["source_topic"], topic, "{part}");
    }

    // diff --live against the replica, under the replica's names: the group is not there yet.
    let diff = [
        "diff",
        &id,
        "--live",
        "--allow-other-cluster",
        "--replication-policy",
        REPLICATION_POLICY,
        "--exit-code",
    ];
    ov_on(Replica, &store, &diff).await.expect_code(1);

    // auto: MirrorMaker 2 copied the topic from its first record, so the offsets are the same,
    // and the last consumed record is where it was: identity.
    let auto = restore_on_replica(
        &store,
        &group,
        &["--replication-policy", REPLICATION_POLICY],
    )
    .await
    .ok()
    .json();
    for (p, row) in plan_rows(&auto, &replica) {
        assert_eq!(row["source_topic"], topic, "{row:#}");
        assert_eq!(row["translation"]["method"], "identity", "{row:#}");
        assert_eq!(i(&row, "target"), Some(positions[&p]), "{row:#}");
    }

    // checkpoints: MirrorMaker 2's own answer, as its checkpoints topic holds it.
    let by_checkpoints = restore_on_replica(
        &store,
        &group,
        &[
            "--replication-policy",
            REPLICATION_POLICY,
            "--translate",
            "checkpoints",
        ],
    )
    .await
    .ok()
    .json();
    for (p, row) in plan_rows(&by_checkpoints, &replica) {
        assert_eq!(row["translation"]["method"], "checkpoints", "{row:#}");
        assert_eq!(
            i(&row, "target"),
            Some(checkpoints[&p].downstream),
            "{row:#}"
        );
        assert_eq!(
            i(&row["translation"], "checkpoint"),
            Some(checkpoints[&p].downstream),
            "{row:#}"
        );
        assert_eq!(
            i(&row["translation"], "checkpoint_repeats"),
            Some(0),
            "{row:#}"
        );
    }
    assert!(
        committed(Replica, &group, &replica).await.is_empty(),
        "dry runs committed something on the replica"
    );

    // timestamp, applied.
    let done = restore_on_replica(
        &store,
        &group,
        &[
            "--replication-policy",
            REPLICATION_POLICY,
            "--translate",
            "timestamp",
            "--execute",
        ],
    )
    .await
    .ok()
    .json();
    let rows = plan_rows(&done, &replica);
    assert_eq!(rows.len(), 3, "{done:#}");
    for (p, row) in &rows {
        let want = positions[p];
        assert_eq!(row["source_topic"], topic, "{row:#}");
        assert_eq!(row["topic"], replica, "{row:#}");
        assert_eq!(i(row, "snapshot_offset"), Some(want), "{row:#}");
        assert_eq!(i(row, "target"), Some(want), "{row:#}");
        let translation = &row["translation"];
        assert_eq!(translation["method"], "timestamp", "{row:#}");
        assert_eq!(
            i(translation, "same_time"),
            Some(same_time(&produced, *p, want - 1)),
            "{row:#}"
        );
        let checkpoint = checkpoints[p].downstream;
        assert_eq!(i(translation, "checkpoint"), Some(checkpoint), "{row:#}");
        assert_eq!(
            i(translation, "checkpoint_repeats"),
            Some(want - checkpoint),
            "{row:#}"
        );
    }

    // What the group's consumers see on the replica: the offsets, and the first record each
    // partition gives them is the one the primary has at the committed position.
    assert_eq!(committed(Replica, &group, &replica).await, positions);
    let same = ov_on(Replica, &store, &diff).await;
    assert_eq!(
        same.code,
        0,
        "diff --live after the restore:\n{}",
        all_output(&same)
    );
    let first = first_records_from_committed(Replica, &group, &replica, 3).await;
    for (p, offset) in &positions {
        let on_primary = read_partition(Primary, &topic, *p).await;
        let want = record_at(&on_primary, *p, *offset);
        assert_eq!(
            first[p].content(),
            want.content(),
            "partition {p}: read {:?} on the replica, the primary's next record is {want:?}",
            first[p]
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_topic_map_the_replica_is_said_to_lack_the_topic_by_its_name() {
    if !require_mirror_maker().await {
        return;
    }
    let topic = mirrored_topic("unmapped");
    create_topic(Primary, &topic, 1).await;
    let base = timestamp_base(Duration::from_secs(3600));
    produce(Primary, &topic, &records(&topic, 1, &STEPS[..6], base)).await;
    let group = mirrored_group("unmapped-g");
    commit(Primary, &group, &topic, &[(0, 3)].into()).await;
    wait_replicated(&topic).await;
    let (_dir, store) = local_store();
    snapshot_with_timestamps(&store, &group).await;

    // The snapshot has record timestamps: what the replica lacks is a topic of that name (it has
    // primary.<topic>), and that is what is said.
    let run = ov_on(
        Replica,
        &store,
        &[
            "restore",
            "--latest",
            "--group",
            &group,
            "--by-timestamp",
            "--allow-other-cluster",
        ],
    )
    .await
    .expect_code(7);
    let text = all_output(&run);
    assert!(
        !text.contains("no record timestamps"),
        "the snapshot has timestamps:\n{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains(&topic) && l.to_lowercase().contains("missing")),
        "no line names {topic} as missing:\n{text}"
    );

    let plan = ov_on(
        Replica,
        &store,
        &[
            "restore",
            "--latest",
            "--group",
            &group,
            "--by-timestamp",
            "--allow-other-cluster",
            "--output",
            "json",
        ],
    )
    .await
    .expect_code(7)
    .json();
    let rows = plan_rows(&plan, &topic);
    assert_eq!(rows[&0]["action"], "topic-missing", "{plan:#}");
    assert!(committed(Replica, &group, &replica_topic(&topic))
        .await
        .is_empty());
}

/// A topic of the primary that MirrorMaker 2 does not replicate (`gap.X`), its group's committed
/// positions, a snapshot of them with timestamps, and the records as they are on the primary.
struct HandCopied {
    topic: String,
    copy: String,
    group: String,
    records: Vec<Rec>,
    store: String,
    _dir: tempfile::TempDir,
}

impl HandCopied {
    /// `--topic-map gap.X=copy.X`.
    fn map(&self) -> String {
        format!("{}={}", self.topic, self.copy)
    }

    /// The records of `partition` on the primary whose offsets `keep` accepts.
    fn kept(&self, partition: i32, keep: impl Fn(i64) -> bool) -> Vec<Rec> {
        self.records
            .iter()
            .filter(|r| r.partition == partition && keep(r.offset))
            .cloned()
            .collect()
    }
}

/// A primary topic with `partitions` partitions of 12 records each (a second apart), committed at
/// `positions`, snapshotted with timestamps, and an empty `copy.X` with as many partitions on
/// the replica.
async fn hand_copied(prefix: &str, partitions: i32, positions: &BTreeMap<i32, i64>) -> HandCopied {
    let suffix = unique_name(prefix);
    let (topic, copy) = (format!("gap.{suffix}"), format!("copy.{suffix}"));
    create_topic(Primary, &topic, partitions).await;
    create_topic(Replica, &copy, partitions).await;
    let steps: Vec<i64> = (0..12).collect();
    let base = timestamp_base(Duration::from_secs(3600));
    let records = produce(Primary, &topic, &records(&topic, partitions, &steps, base)).await;
    let group = unique_name(&format!("{prefix}-g"));
    commit(Primary, &group, &topic, positions).await;
    let (_dir, store) = local_store();
    snapshot_with_timestamps(&store, &group).await;
    HandCopied {
        topic,
        copy,
        group,
        records,
        store,
        _dir,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replica_whose_log_starts_later_is_refused_or_clamped_on_request() {
    if !(env::require_kafka() && env::require_other_kafka()) {
        return;
    }
    let positions: BTreeMap<i32, i64> = [(0, 6)].into();
    let h = hand_copied("start", 1, &positions).await;
    // The whole partition, offsets as on the primary; then its first 8 records deleted: the
    // group's position (6) is before the copy's log start.
    produce(Replica, &h.copy, &h.kept(0, |_| true)).await;
    delete_records(Replica, &h.copy, 0, 8).await;

    let map = h.map();
    let refused = restore_on_replica(&h.store, &h.group, &["--topic-map", &map])
        .await
        .expect_code(7)
        .json();
    let row = &plan_rows(&refused, &h.copy)[&0];
    assert_eq!(row["action"], "out-of-range", "{refused:#}");
    assert_eq!(row["source_topic"], h.topic, "{row:#}");
    assert_eq!(i(row, "log_start"), Some(8), "{row:#}");

    let clamped = restore_on_replica(
        &h.store,
        &h.group,
        &["--topic-map", &map, "--on-out-of-range", "clamp"],
    )
    .await
    .ok()
    .json();
    let row = &plan_rows(&clamped, &h.copy)[&0];
    assert_eq!(row["action"], "clamped", "{clamped:#}");
    assert_eq!(i(row, "target"), Some(8), "{row:#}");
    assert!(
        committed(Replica, &h.group, &h.copy).await.is_empty(),
        "dry runs committed something on the replica"
    );

    restore_on_replica(
        &h.store,
        &h.group,
        &[
            "--topic-map",
            &map,
            "--on-out-of-range",
            "clamp",
            "--execute",
        ],
    )
    .await
    .ok();
    assert_eq!(
        committed(Replica, &h.group, &h.copy).await,
        BTreeMap::from([(0, 8)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replica_with_a_gap() {
    if !(env::require_kafka() && env::require_other_kafka()) {
        return;
    }
    // Both partitions consumed up to offset 5 (committed 6).
    let positions: BTreeMap<i32, i64> = [(0, 6), (1, 6)].into();
    let h = hand_copied("gap", 2, &positions).await;
    // Partition 0 copied without offsets 4-6 (the last consumed record, 5, and its neighbours):
    // the copy holds primary 0-3 at 0-3 and primary 7-11 at 4-8. Partition 1 copied whole.
    let skipped = |o: i64| (4..=6).contains(&o);
    let copy0 = produce(Replica, &h.copy, &h.kept(0, |o| !skipped(o))).await;
    produce(Replica, &h.copy, &h.kept(1, |_| true)).await;
    let after_gap = copy0
        .iter()
        .find(|r| r.value == record_at(&h.records, 0, 7).value)
        .expect("primary's record 7 copied")
        .offset;
    assert_eq!(after_gap, 4);

    let map = h.map();
    let refused = restore_on_replica(&h.store, &h.group, &["--topic-map", &map])
        .await
        .expect_code(7)
        .json();
    let rows = plan_rows(&refused, &h.copy);
    assert_eq!(rows[&0]["action"], "untranslated", "{refused:#}");
    assert_eq!(rows[&1]["action"], "reset", "{refused:#}");
    assert_eq!(i(&rows[&1], "target"), Some(6), "{refused:#}");
    assert!(
        committed(Replica, &h.group, &h.copy).await.is_empty(),
        "a refused plan committed something on the replica"
    );

    // Clamped: partition 0 to the first record after the last consumed one's time, the
    // primary's record 7, at 4 on the copy.
    let clamped = restore_on_replica(
        &h.store,
        &h.group,
        &[
            "--topic-map",
            &map,
            "--on-out-of-range",
            "clamp",
            "--execute",
        ],
    )
    .await
    .ok()
    .json();
    let rows = plan_rows(&clamped, &h.copy);
    assert_eq!(rows[&0]["action"], "clamped", "{clamped:#}");
    assert_eq!(i(&rows[&0], "target"), Some(after_gap), "{clamped:#}");
    assert_eq!(i(&rows[&1], "target"), Some(6), "{clamped:#}");
    assert_eq!(
        committed(Replica, &h.group, &h.copy).await,
        BTreeMap::from([(0, after_gap), (1, 6)])
    );
    let first = first_records_from_committed(Replica, &h.group, &h.copy, 2).await;
    assert_eq!(
        first[&0].content(),
        record_at(&h.records, 0, 7).content(),
        "{first:?}"
    );
    assert_eq!(
        first[&1].content(),
        record_at(&h.records, 1, 6).content(),
        "{first:?}"
    );
}

/// The lines of a FileStreamSink's file.
fn lines(path: &Path) -> Vec<String> {
    connect::lines(path)
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_connector_fails_over_and_writes_exactly_the_records_not_yet_written() {
    if !(require_mirror_maker().await && env::require_connect() && env::require_other_connect()) {
        return;
    }
    let (n, m) = (5, 4);
    let topic = mirrored_topic("sink");
    let replica = replica_topic(&topic);
    create_topic(Primary, &topic, 1).await;
    let base = timestamp_base(Duration::from_secs(600));
    let batch = |name: &str, count: i64| -> Vec<Rec> {
        (0..count)
            .map(|i| {
                let value = format!("{name}-{i}");
                Rec::new(0, base + i * 1000, &value, &value)
            })
            .collect()
    };
    let first = batch("first", n);
    let values = |records: &[Rec]| -> Vec<String> {
        records.iter().map(|r| r.value.clone().unwrap()).collect()
    };
    produce(Primary, &topic, &first).await;

    // The sink on the primary writes the first n records and commits them.
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = (
        dir.path().join("primary.txt"),
        dir.path().join("replica.txt"),
    );
    let name = unique_name("mm2-sink-conn");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_sink(&topic, &before)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let group = format!("connect-{name}");
    kafka::wait_committed(&group, &topic, [(0, n)].into()).await;
    connect::wait_lines(&before, n as usize, Duration::from_secs(30)).await;
    let (_store_dir, store) = local_store();
    let snapshot = ov_on(
        Primary,
        &store,
        &[
            "snapshot",
            "--connector",
            &name,
            "--with-timestamps",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(snapshot["summary"]["connectors"], 1, "{snapshot:#}");

    // The primary's Connect is lost; m more records arrive and reach the replica.
    cleanup.delete().await;
    let second = batch("second", m);
    produce(Primary, &topic, &second).await;
    wait_replicated(&topic).await;

    let file = format!("file={}", after.to_str().unwrap());
    let _other_cleanup = OtherConnectorCleanup::new(&name);
    let done = ov_on(
        Replica,
        &store,
        &[
            "restore",
            "--latest",
            "--connector",
            &name,
            "--allow-other-cluster",
            "--replication-policy",
            REPLICATION_POLICY,
            "--recreate-connectors",
            "--connector-config-override",
            &file,
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let rows = plan_rows(&done, &replica);
    assert_eq!(i(&rows[&0], "target"), Some(n), "{done:#}");
    assert_eq!(rows[&0]["source_topic"], topic, "{done:#}");

    // Created again on the replica's Connect, reading the replica's topic, writing the new file.
    let (status, config) = other_connect(
        reqwest::Method::GET,
        &format!("/connectors/{name}/config"),
        None,
    )
    .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{config}");
    assert_eq!(config["topics"], replica, "{config:#}");
    assert_eq!(config["file"], after.to_str().unwrap(), "{config:#}");
    wait_other_connector_running(&name, Duration::from_secs(60)).await;

    // Exactly the m records it had not written, not the n it had.
    connect::wait_lines(&after, m as usize, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(lines(&after), values(&second));
    assert_eq!(lines(&before), values(&first));
}

/// The production command in `text`: a line (lines continued with a trailing backslash joined)
/// with `offset-vault` and all of `words`, and no staging option.
fn production_command(text: &str, words: &[&str]) -> Option<String> {
    let mut joined: Vec<String> = Vec::new();
    let mut continued = false;
    for line in text.lines() {
        let (body, continues) = match line.trim_end().strip_suffix('\\') {
            Some(body) => (body, true),
            None => (line, false),
        };
        match joined.last_mut() {
            Some(last) if continued => {
                last.push(' ');
                last.push_str(body.trim());
            }
            _ => joined.push(body.to_string()),
        }
        continued = continues;
    }
    joined.into_iter().find(|line| {
        line.contains("offset-vault")
            && words.iter().all(|w| line.contains(w))
            && !line.contains("--rehearse-on")
    })
}

#[test]
fn a_production_command_may_span_lines() {
    let text = "staging: 2 partitions moved\nproduction:\n  offset-vault reset --group g \\\n      --to-earliest --execute\n";
    assert_eq!(
        production_command(text, &["reset", "g", "--to-earliest", "--execute"]).as_deref(),
        Some("  offset-vault reset --group g  --to-earliest --execute")
    );
    assert_eq!(
        production_command(
            "offset-vault reset --group g --rehearse-on x --execute",
            &["g"]
        ),
        None
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rehearse_moves_the_staging_group_and_not_the_production_one() {
    if !require_mirror_maker().await {
        return;
    }
    let topic = mirrored_topic("rehearse");
    let replica = replica_topic(&topic);
    create_topic(Primary, &topic, 2).await;
    let base = timestamp_base(Duration::from_secs(3600));
    produce(Primary, &topic, &records(&topic, 2, &STEPS, base)).await;
    let group = mirrored_group("rehearse-g");
    let positions: BTreeMap<i32, i64> = [(0, 6), (1, 8)].into();
    commit(Primary, &group, &topic, &positions).await;
    wait_replicated(&topic).await;
    let (dir, store) = local_store();
    let staging = Replica.bootstrap();

    // The staging group somewhere else than where the reset will put it.
    commit(Replica, &group, &replica, &[(0, 3), (1, 3)].into()).await;
    let run = ov_on(
        Primary,
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
            "--rehearse-on",
            &staging,
            "--replication-policy",
            REPLICATION_POLICY,
        ],
    )
    .await
    .ok();
    assert_eq!(
        committed(Replica, &group, &replica).await,
        BTreeMap::from([(0, 0), (1, 0)]),
        "staging after the rehearsed reset:\n{}",
        all_output(&run)
    );
    assert_eq!(committed(Primary, &group, &topic).await, positions);
    let text = all_output(&run);
    assert!(
        production_command(&text, &["reset", &group, "--to-earliest", "--execute"]).is_some(),
        "no production command in:\n{text}"
    );

    // A restore rehearsed after the production group moved on: staging goes to the snapshot's
    // positions, production stays where it now is. Staging is named by a context of the
    // configuration file this time.
    let rehearsed = snapshot_with_timestamps(&store, &group).await;
    let moved_on: BTreeMap<i32, i64> = [(0, 10), (1, 11)].into();
    commit(Primary, &group, &topic, &moved_on).await;
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[contexts.staging]\nbootstrap-server = \"{staging}\"\n"),
    )
    .unwrap();
    let run = ov_on(
        Primary,
        &store,
        &[
            "--config",
            config.to_str().unwrap(),
            "restore",
            "--latest",
            "--group",
            &group,
            "--rehearse-on",
            "staging",
            "--replication-policy",
            REPLICATION_POLICY,
        ],
    )
    .await
    .ok();
    assert_eq!(
        committed(Replica, &group, &replica).await,
        positions,
        "staging after the rehearsed restore:\n{}",
        all_output(&run)
    );
    assert_eq!(committed(Primary, &group, &topic).await, moved_on);
    let text = all_output(&run);
    assert!(text.contains("rehearsed on context staging"), "{text}");
    assert!(
        // It names the snapshot rehearsed, not --latest (a newer one could be taken meanwhile).
        production_command(&text, &["restore", &rehearsed, &group, "--execute"])
            .is_some_and(|c| !c.contains("--latest")),
        "no production command in:\n{text}"
    );
}
