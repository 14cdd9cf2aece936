//! `snapshot`, `list`, `show`: captured offsets compared with the real `kafka-consumer-groups`,
//! connectors through the Connect REST API, the local store and the S3 server, both formats.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::ObjectStore;
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_files, local_store, ov, show, snapshot};
use crate::support::poll::eventually;
use crate::support::{env, kcg, s3, unique_name};

/// (offset, log-end, lag) per (topic, partition) of one group in `show --output json`.
fn shown_offsets(shown: &Value, group: &str) -> BTreeMap<(String, i32), (i64, i64, i64)> {
    let g = group_of(shown, group);
    g["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .map(|p| {
            (
                (
                    p["topic"].as_str().unwrap().to_string(),
                    p["partition"].as_i64().unwrap() as i32,
                ),
                (
                    p["offset"].as_i64().unwrap(),
                    p["log_end_offset"].as_i64().unwrap(),
                    p["lag"].as_i64().unwrap(),
                ),
            )
        })
        .collect()
}

fn group_of<'a>(shown: &'a Value, group: &str) -> &'a Value {
    shown["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["group_id"] == group)
        .unwrap_or_else(|| panic!("group {group} not in snapshot: {shown:#}"))
}

/// The same, from the real `kafka-consumer-groups --describe`.
async fn reference_offsets(group: &str) -> BTreeMap<(String, i32), (i64, i64, i64)> {
    kcg::kcg_describe(group)
        .await
        .into_iter()
        .filter_map(|r| {
            Some((
                (r.topic, r.partition),
                (r.current_offset?, r.log_end?, r.lag?),
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_and_active_groups_match_kafka_consumer_groups_in_both_formats() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("snap-groups");
    kafka::create_topic(&topic, 3).await;
    for p in 0..3 {
        kafka::produce(&topic, p, 10 + 5 * p as usize).await;
    }
    let empty = unique_name("snap-empty");
    let committed = kafka::consume_and_commit(
        &empty,
        &topic,
        Take::per_partition(&[(0, 4), (1, 7), (2, 0)]),
    )
    .await;
    assert_eq!(committed, BTreeMap::from([(0, 4), (1, 7)]));
    let active_group = unique_name("snap-active");
    let active = ActiveConsumer::start(
        &active_group,
        &topic,
        Take::per_partition(&[(0, 2), (1, 3), (2, 5)]),
    )
    .await;

    let (_dir, store) = local_store();
    for format in ["json", "parquet"] {
        let id = snapshot(
            &store,
            &[
                "--group",
                &empty,
                "--group",
                &active_group,
                "--format",
                format,
            ],
        )
        .await;
        let shown = show(&store, &id).await;
        assert_eq!(shown["manifest"]["format"], format);
        assert_eq!(shown["manifest"]["id"], id.as_str());

        let got_empty = shown_offsets(&shown, &empty);
        assert_eq!(
            got_empty,
            reference_offsets(&empty).await,
            "{format}: empty group"
        );
        let offsets: BTreeMap<i32, i64> = got_empty
            .iter()
            .map(|((_, p), (o, _, _))| (*p, *o))
            .collect();
        assert_eq!(offsets, committed, "{format}: exactly what was committed");
        assert_eq!(group_of(&shown, &empty)["state"], "Empty");

        let got_active = shown_offsets(&shown, &active_group);
        assert_eq!(
            got_active,
            reference_offsets(&active_group).await,
            "{format}: active group"
        );
        assert_eq!(got_active.len(), 3);
        let g = group_of(&shown, &active_group);
        assert_eq!(
            g["state"], "Stable",
            "active groups are captured as they are"
        );
        assert_eq!(g["members"].as_array().map(Vec::len), Some(1));

        // Local snapshot files are private to their owner.
        #[cfg(unix)]
        for f in local_files(&store, &id) {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.display());
        }
    }
    drop(active);

    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let listed = listed["snapshots"].as_array().expect("list has snapshots");
    assert_eq!(listed.len(), 2);
    assert!(
        listed[0]["id"].as_str() > listed[1]["id"].as_str(),
        "newest first"
    );
    assert!(listed.iter().all(|l| l["complete"] == true));
    let by_group = ov(&store, &["list", "--group", &empty, "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(by_group["snapshots"].as_array().map(Vec::len), Some(2));
    let by_other = ov(
        &store,
        &["list", "--group", "no-such-group", "--output", "json"],
    )
    .await
    .ok()
    .json();
    assert_eq!(by_other["snapshots"].as_array().map(Vec::len), Some(0));
}

/// Waits until `GET /connectors/{name}/offsets` satisfies `ready`; returns the offsets.
async fn wait_offsets(name: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let ready = &ready;
    eventually(
        &format!("the offsets of {name} to be ready"),
        Duration::from_secs(90),
        || async move {
            let offsets = connect::connector_offsets(name).await;
            if ready(&offsets) {
                Ok(offsets)
            } else {
                Err(format!("{offsets:#}"))
            }
        },
    )
    .await
}

fn sink_offsets(offsets: &Value) -> BTreeMap<i64, i64> {
    offsets["offsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                o["partition"]["kafka_partition"].as_i64()?,
                o["offset"]["kafka_offset"].as_i64()?,
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_and_source_connectors_to_s3_with_redacted_secrets() {
    if !(env::require_kafka() && env::require_connect() && env::require_s3()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("snap-sink");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 5).await;
    kafka::produce(&topic, 1, 3).await;

    let sink = unique_name("snap-sink-conn");
    let sink_cleanup = ConnectorCleanup::new(&sink);
    let mut config = connect::file_sink(&topic, &dir.path().join("sink.txt"));
    config["connection.password"] = Value::from("hunter2-never-stored");
    connect::create_connector(&sink, config).await;
    connect::wait_connector_running(&sink, Duration::from_secs(60)).await;
    let expected_sink = BTreeMap::from([(0, 5), (1, 3)]);
    wait_offsets(&sink, |o| sink_offsets(o) == expected_sink).await;

    let source_topic = unique_name("snap-source");
    kafka::create_topic(&source_topic, 1).await;
    let input = dir.path().join("source.txt");
    std::fs::write(&input, "one\ntwo\nthree\nfour\n").unwrap();
    let source = unique_name("snap-source-conn");
    let source_cleanup = ConnectorCleanup::new(&source);
    connect::create_connector(&source, connect::file_source(&input, &source_topic)).await;
    connect::wait_connector_running(&source, Duration::from_secs(60)).await;
    let source_offsets = wait_offsets(&source, |o| {
        o["offsets"][0]["offset"]["position"].as_i64() == Some(19)
    })
    .await;

    let prefix = unique_name("snap-s3");
    let store = s3::s3_url(&prefix);
    let json_id = snapshot(
        &store,
        &[
            "--connector",
            &sink,
            "--connector",
            &source,
            "--format",
            "json",
        ],
    )
    .await;
    let id = snapshot(&store, &["--connector", &sink, "--connector", &source]).await;
    let shown = show(&store, &id).await;
    let shown_json = show(&store, &json_id).await;
    assert_eq!(shown_json["manifest"]["format"], "json");
    assert_eq!(
        shown_json["groups"], shown["groups"],
        "both formats hold the same offsets"
    );
    assert_eq!(shown_json["connectors"].as_array().map(Vec::len), Some(2));

    let connectors = shown["connectors"].as_array().expect("connectors");
    assert_eq!(connectors.len(), 2);
    let sink_snap = connectors
        .iter()
        .find(|c| c["name"] == sink.as_str())
        .unwrap();
    let group = format!("connect-{sink}");
    assert_eq!(sink_snap["connector_type"], "sink");
    assert_eq!(sink_snap["group_id"], group.as_str());
    assert_eq!(sink_snap["state"], "RUNNING");
    assert_eq!(sink_snap["config"]["connection.password"], "<redacted>");
    assert_eq!(
        sink_snap["redacted_keys"],
        serde_json::json!(["connection.password"])
    );
    assert_eq!(
        sink_offsets(&serde_json::json!({ "offsets": sink_snap["offsets"] })),
        expected_sink
    );
    let source_snap = connectors
        .iter()
        .find(|c| c["name"] == source.as_str())
        .unwrap();
    assert_eq!(source_snap["connector_type"], "source");
    assert!(source_snap.get("group_id").is_none());
    assert_eq!(source_snap["offsets"], source_offsets["offsets"]);

    // The sink connector's group came with it, and matches the reference tool.
    assert_eq!(group_of(&shown, &group)["connector"], sink.as_str());
    let got = shown_offsets(&shown, &group);
    assert_eq!(got, reference_offsets(&group).await);
    assert_eq!(
        got.iter()
            .map(|((_, p), (o, _, _))| (*p as i64, *o))
            .collect::<BTreeMap<_, _>>(),
        expected_sink
    );

    // No stored object holds the secret in clear.
    let s3 = s3::s3_store();
    let objects: Vec<_> = s3
        .list(Some(&object_store::path::Path::from(prefix.as_str())))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        objects.len(),
        6,
        "two snapshots of offsets, connectors and manifest: {objects:?}"
    );
    for o in objects {
        let bytes = object_store::ObjectStoreExt::get(&s3, &o.location)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("hunter2"), "{} holds the secret", o.location);
    }

    sink_cleanup.delete().await;
    source_cleanup.delete().await;
}

/// A base time for records produced with their own timestamps: a whole second (so that times
/// read back through floating point stay exact), an hour ago. Never a fixed date: a record older
/// than the topic's retention (the broker's default, 7 days) is deleted by the next retention
/// check (every minute in the test environment), which empties the log under the test.
fn recent_base_ms() -> i64 {
    (chrono::Utc::now().timestamp() - 3600) * 1000
}

/// Produces `n` records to one partition with timestamps `base_ms + i * 1000`.
async fn produce_timed(topic: &str, partition: i32, n: usize, base_ms: i64) {
    let producer: FutureProducer = kafka::kafka_config().create().unwrap();
    for i in 0..n {
        let value = format!("v{i}");
        producer
            .send(
                FutureRecord::<(), String>::to(topic)
                    .partition(partition)
                    .payload(&value)
                    .timestamp(base_ms + i as i64 * 1000),
                Duration::from_secs(30),
            )
            .await
            .unwrap_or_else(|(e, _)| panic!("produce: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_snapshot_reads_in_pyarrow_with_typed_columns() {
    if !(env::require_kafka() && env::require_python()) {
        return;
    }
    let topic = unique_name("snap-pq");
    kafka::create_topic(&topic, 2).await;
    let base = recent_base_ms();
    produce_timed(&topic, 0, 6, base).await;
    produce_timed(&topic, 1, 4, base + 500).await;
    let group = unique_name("snap-pq-g");
    let committed =
        kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 5), (1, 2)])).await;

    let (_dir, store) = local_store();
    let args = [
        "snapshot",
        "--output",
        "json",
        "--group",
        &group,
        "--with-timestamps",
        "--format",
        "parquet",
    ];
    let run = ov(&store, &args).await.ok();
    let id = run.json()["id"].as_str().unwrap().to_string();
    let file = local_files(&store, &id)
        .into_iter()
        .find(|f| f.ends_with("offsets.parquet"))
        .expect("offsets.parquet");
    let script = r#"
import json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items() if k.startswith(b"offset_vault")}
rows = [{k: (str(v) if k.endswith("_at") or k.endswith("timestamp") else v) for k, v in r.items()} for r in t.to_pylist()]
ts = [None if r["last_record_timestamp"] is None else int(r["last_record_timestamp"].timestamp() * 1000) for r in t.to_pylist()]
import duckdb
archive = sys.argv[2] + "/snapshots/*/*/offsets.parquet"
hive = duckdb.sql(f"SELECT count(*), min(CAST(date AS VARCHAR)) FROM read_parquet('{archive}', hive_partitioning = true)").fetchall()[0]
print(json.dumps({"schema": {f.name: str(f.type) for f in t.schema}, "rows": rows, "ts": ts, "meta": meta, "hive": [hive[0], hive[1]]}))
"#;
    let out = std::process::Command::new(env::python())
        .args(["-c", script, file.to_str().unwrap(), &store])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema = &read["schema"];
    assert_eq!(schema["partition"], "int32");
    assert_eq!(schema["group_type"], "string");
    assert_eq!(schema["topic_id"], "string");
    assert_eq!(schema["committed_offset"], "int64");
    assert_eq!(schema["log_end_offset"], "int64");
    assert_eq!(schema["captured_at"], "timestamp[us, tz=UTC]");
    assert_eq!(schema["last_record_timestamp"], "timestamp[ms, tz=UTC]");
    assert_eq!(read["meta"]["offset_vault.format_version"], "2.1");

    // The date folders are Hive partitions: DuckDB reads the archive with a `date` column.
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert_eq!(read["hive"], serde_json::json!([2, today]));

    let rows = read["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["snapshot_id"], id.as_str());
        assert_eq!(row["group_id"], group.as_str());
        assert_eq!(row["topic"], topic.as_str());
        let p = row["partition"].as_i64().unwrap() as i32;
        let offset = row["committed_offset"].as_i64().unwrap();
        assert_eq!(Some(&offset), committed.get(&p));
        let end = if p == 0 { 6 } else { 4 };
        assert_eq!(row["log_end_offset"].as_i64(), Some(end));
        assert_eq!(row["lag"].as_i64(), Some(end - offset));
        // The last consumed record is offset - 1, produced at base (+500 on p1) + (offset-1) s.
        let expected_ts = base + if p == 1 { 500 } else { 0 } + (offset - 1) * 1000;
        assert_eq!(
            read["ts"][i].as_i64(),
            Some(expected_ts),
            "partition {p}; snapshot stderr:\n{}",
            run.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn topic_filter_keeps_only_those_topics_and_the_groups_on_them() {
    if !env::require_kafka() {
        return;
    }
    let base = unique_name("snap-topics");
    let (t1, t2) = (format!("{base}-one"), format!("{base}-two"));
    for t in [&t1, &t2] {
        kafka::create_topic(t, 1).await;
        kafka::produce(t, 0, 4).await;
    }
    let (both, only_two) = (format!("{base}-g-both"), format!("{base}-g-two"));
    kafka::consume_and_commit(&both, &t1, Take::Total(3)).await;
    kafka::consume_and_commit(&both, &t2, Take::Total(2)).await;
    kafka::consume_and_commit(&only_two, &t2, Take::Total(1)).await;

    let (_dir, store) = local_store();
    let pattern = format!("{base}-g-.*");
    let id = snapshot(&store, &["--group-pattern", &pattern, "--topic", &t1]).await;
    let shown = show(&store, &id).await;
    let groups = shown["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{shown:#}");
    assert_eq!(
        shown_offsets(&shown, &both),
        BTreeMap::from([((t1.clone(), 0), (3, 4, 1))])
    );
    // Named groups stay, even with nothing on the topic.
    let id = snapshot(&store, &["--group", &only_two, "--topic", &t1]).await;
    let shown = show(&store, &id).await;
    assert_eq!(
        group_of(&shown, &only_two)["partitions"],
        serde_json::json!([])
    );
}

/// An offsets file larger than one upload part (5 MiB) goes to S3 as a multipart upload, and
/// `verify`, `show` and `export` read it back through a local copy, checked against the manifest.
#[tokio::test(flavor = "multi_thread")]
async fn an_offsets_file_larger_than_one_part_goes_to_s3_in_parts_and_reads_back() {
    use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
    use rdkafka::{Offset, TopicPartitionList};
    if !(env::require_kafka() && env::require_s3()) {
        return;
    }
    const PARTITIONS: i32 = 1500;
    let topic = unique_name("snap-big");
    kafka::create_topic(&topic, PARTITIONS).await;
    let group = unique_name("snap-big-g");
    // 3,900 bytes of commit metadata per partition (the broker keeps up to 4,096), different for
    // each partition: about 6 MB of JSON.
    let metadata = |p: i32| format!("{p:05}-{}", "m".repeat(3894));
    // In commits of 200 partitions: the broker writes one commit as one record batch, which must
    // fit the offsets topic's 1 MB message size.
    let chunks: Vec<TopicPartitionList> = (0..PARTITIONS)
        .collect::<Vec<_>>()
        .chunks(200)
        .map(|ps| {
            let mut tpl = TopicPartitionList::new();
            for &p in ps {
                tpl.add_partition_offset(&topic, p, Offset::Offset(0))
                    .unwrap();
                tpl.find_partition(&topic, p)
                    .unwrap()
                    .set_metadata(metadata(p));
            }
            tpl
        })
        .collect();
    let committing = group.clone();
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = kafka::kafka_config()
            .set("group.id", &committing)
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        for tpl in &chunks {
            consumer
                .commit(tpl, CommitMode::Sync)
                .expect("commit offsets with metadata");
        }
    })
    .await
    .unwrap();

    let prefix = unique_name("snap-big-s3");
    let store = s3::s3_url(&prefix);
    let id = snapshot(&store, &["--group", &group, "--format", "json"]).await;
    let objects: Vec<object_store::ObjectMeta> = s3::s3_store()
        .list(Some(&object_store::path::Path::from(prefix.as_str())))
        .try_collect()
        .await
        .unwrap();
    let offsets = objects
        .iter()
        .find(|o| o.location.as_ref().ends_with(&format!("{id}/offsets.json")))
        .unwrap_or_else(|| panic!("offsets.json of {id} in {objects:?}"));
    assert!(
        offsets.size > offset_vault::store::PART_SIZE as u64,
        "offsets.json is {} bytes, not more than one part",
        offsets.size
    );

    ov(&store, &["verify", &id]).await.ok();
    let shown = show(&store, &id).await;
    let partitions = shown["groups"][0]["partitions"]
        .as_array()
        .expect("partitions");
    assert_eq!(partitions.len(), PARTITIONS as usize);
    for p in partitions {
        let n = p["partition"].as_i64().unwrap() as i32;
        assert_eq!(p["metadata"], metadata(n).as_str(), "partition {n}");
        assert_eq!(p["offset"], 0, "partition {n}");
    }
    let exported = ov(&store, &["export", &id]).await.ok();
    assert_eq!(exported.stdout.lines().count(), PARTITIONS as usize);
    assert!(exported
        .stdout
        .lines()
        .all(|l| l.starts_with(&format!("{topic},")) && l.ends_with(",0")));
    kafka::delete_topic(&topic).await;
}
