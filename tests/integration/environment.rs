//! First end-to-end checks of the test environment itself: the broker, the reference tool,
//! Kafka Connect with the FileStream connectors, the S3 server and the Python reader. If these
//! fail, the other integration tests cannot be trusted either.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value;

use crate::support::kafka::Take;
use crate::support::poll::eventually;
use crate::support::{self, connect, env, kafka, kcg, s3};

fn offsets(pairs: &[(i32, i64)]) -> BTreeMap<i32, i64> {
    pairs.iter().copied().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn committed_offsets_agree_with_kafka_consumer_groups() {
    if !env::require_kafka() {
        return;
    }
    let topic = support::unique_name("ov-env-offsets");
    kafka::create_topic(&topic, 3).await;

    // Different counts per partition, so a mix-up between partitions cannot go unnoticed.
    let produced = [(0, 7usize), (1, 3), (2, 12)];
    for (partition, n) in produced {
        let delivered = kafka::produce(&topic, partition, n).await;
        let got: Vec<(i32, i64, String)> = delivered
            .into_iter()
            .map(|d| (d.partition, d.offset, d.value))
            .collect();
        let want: Vec<(i32, i64, String)> = (0..n)
            .map(|i| {
                (
                    partition,
                    i as i64,
                    kafka::record_value(&topic, partition, i),
                )
            })
            .collect();
        assert_eq!(got, want, "deliveries to partition {partition}");
    }
    let marks = kafka::watermarks(&topic).await;
    assert_eq!(
        marks,
        BTreeMap::from([(0, (0, 7)), (1, (0, 3)), (2, (0, 12))])
    );

    let group = support::unique_name("ov-env-offsets-group");
    let committed = kafka::consume_and_commit(
        &group,
        &topic,
        Take::per_partition(&[(0, 5), (1, 3), (2, 9)]),
    )
    .await;
    let expected = offsets(&[(0, 5), (1, 3), (2, 9)]);
    assert_eq!(committed, expected, "what the consumer committed");

    // Read back through the Kafka protocol ...
    assert_eq!(kafka::committed_offsets(&group, &topic).await, expected);

    // ... and through Apache Kafka's own tool.
    let rows = kcg::kcg_describe(&group).await;
    assert_eq!(rows.len(), 3, "kafka-consumer-groups rows: {rows:?}");
    for row in &rows {
        assert_eq!(row.group, group);
        assert_eq!(row.topic, topic);
        let log_end = marks[&row.partition].1;
        assert_eq!(
            row.current_offset,
            Some(expected[&row.partition]),
            "{row:?}"
        );
        assert_eq!(row.log_end, Some(log_end), "{row:?}");
        assert_eq!(row.lag, Some(log_end - expected[&row.partition]), "{row:?}");
        assert_eq!(row.consumer_id, None, "the group has no members: {row:?}");
    }
    let from_tool: BTreeMap<i32, i64> = rows
        .iter()
        .map(|r| (r.partition, r.current_offset.expect("committed offset")))
        .collect();
    assert_eq!(from_tool, expected);
    assert_eq!(kcg::kcg_group_state(&group).await.as_deref(), Some("Empty"));
}

#[tokio::test(flavor = "multi_thread")]
async fn active_consumer_keeps_group_stable_until_dropped() {
    if !env::require_kafka() {
        return;
    }
    let topic = support::unique_name("ov-env-active");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 4).await;
    kafka::produce(&topic, 1, 6).await;

    let group = support::unique_name("ov-env-active-group");
    let member =
        kafka::ActiveConsumer::start(&group, &topic, Take::per_partition(&[(0, 2), (1, 5)])).await;
    let expected = offsets(&[(0, 2), (1, 5)]);
    assert_eq!(member.committed(), &expected);

    assert_eq!(
        kcg::kcg_group_state(&group).await.as_deref(),
        Some("Stable")
    );
    let rows = kcg::kcg_describe(&group).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in &rows {
        assert_eq!(
            row.current_offset,
            Some(expected[&row.partition]),
            "{row:?}"
        );
        assert!(row.consumer_id.is_some(), "an active member owns {row:?}");
    }
    assert_eq!(kafka::committed_offsets(&group, &topic).await, expected);

    drop(member);
    let group_for_check = group.clone();
    eventually(
        "the group to become Empty after its member left",
        Duration::from_secs(30),
        || {
            let group = group_for_check.clone();
            async move {
                (kcg::kcg_group_state(&group).await.as_deref() == Some("Empty")).then_some(())
            }
        },
    )
    .await;
    // Leaving the group does not touch its committed offsets.
    assert_eq!(kafka::committed_offsets(&group, &topic).await, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_sink_connector_commits_offsets_for_its_group() {
    if !env::require_kafka() || !env::require_connect() {
        return;
    }
    let topic = support::unique_name("ov-env-sink");
    kafka::create_topic(&topic, 2).await;
    let mut values = Vec::new();
    for (partition, n) in [(0, 6usize), (1, 4)] {
        values.extend(
            kafka::produce(&topic, partition, n)
                .await
                .into_iter()
                .map(|d| d.value),
        );
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("sink.txt");
    let name = support::unique_name("ov-env-sink-connector");
    let cleanup = connect::ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_sink(&topic, &out)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;

    // A sink connector's consumer group is connect-<name>; the worker commits its offsets every
    // offset.flush.interval.ms.
    let group = format!("connect-{name}");
    let expected = offsets(&[(0, 6), (1, 4)]);
    let (group_ref, topic_ref, expected_ref) = (&group, &topic, &expected);
    eventually(
        "the sink connector's group to commit every record",
        Duration::from_secs(60),
        || async move {
            (kafka::committed_offsets(group_ref, topic_ref).await == *expected_ref).then_some(())
        },
    )
    .await;

    let rows = kcg::kcg_describe(&group).await;
    let from_tool: BTreeMap<i32, Option<i64>> = rows
        .iter()
        .map(|r| (r.partition, r.current_offset))
        .collect();
    assert_eq!(
        from_tool,
        BTreeMap::from([(0, Some(6)), (1, Some(4))]),
        "{rows:?}"
    );

    // The Connect REST API reports the same offsets, in the sink format.
    let reported = connect::connector_offsets(&name).await;
    let mut from_rest = BTreeMap::new();
    for entry in reported["offsets"].as_array().expect("offsets array") {
        assert_eq!(
            entry["partition"]["kafka_topic"],
            Value::from(topic.as_str()),
            "{reported}"
        );
        from_rest.insert(
            entry["partition"]["kafka_partition"]
                .as_i64()
                .expect("kafka_partition") as i32,
            entry["offset"]["kafka_offset"]
                .as_i64()
                .expect("kafka_offset"),
        );
    }
    assert_eq!(from_rest, expected, "{reported}");

    // Every record reached the output file.
    let out_ref = &out;
    let mut lines = eventually(
        "the sink file to hold 10 lines",
        Duration::from_secs(30),
        || async move {
            let text = tokio::fs::read_to_string(out_ref).await.unwrap_or_default();
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            (lines.len() >= 10).then_some(lines)
        },
    )
    .await;
    lines.sort();
    values.sort();
    assert_eq!(lines, values);

    cleanup.delete().await;
    assert!(connect::connector_status(&name).await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn file_source_connector_offsets_are_reported_by_rest_api() {
    if !env::require_kafka() || !env::require_connect() {
        return;
    }
    let topic = support::unique_name("ov-env-source");
    kafka::create_topic(&topic, 1).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("source.txt");
    let lines: Vec<String> = (0..10).map(|i| format!("source line {i}")).collect();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&input, &text).expect("write the source file");
    let input_name = input.to_str().expect("UTF-8 path").to_string();

    let name = support::unique_name("ov-env-source-connector");
    let cleanup = connect::ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;

    // FileStreamSource offsets: partition {"filename": <path>}, offset {"position": <byte offset
    // after the last line read>}.
    let (name_ref, input_ref) = (&name, &input_name);
    let want_position = text.len() as i64;
    let entry = eventually(
        "the source connector to report its position at the end of the file",
        Duration::from_secs(60),
        || async move {
            let reported = connect::connector_offsets(name_ref).await;
            reported["offsets"]
                .as_array()
                .and_then(|entries| {
                    entries.iter().find(|e| {
                        e["partition"]["filename"].as_str() == Some(input_ref.as_str())
                            && e["offset"]["position"].as_i64() == Some(want_position)
                    })
                })
                .cloned()
        },
    )
    .await;
    assert_eq!(
        entry,
        serde_json::json!({
            "partition": { "filename": input_name },
            "offset": { "position": want_position }
        })
    );

    let records = kafka::read_records(&topic, lines.len(), Duration::from_secs(30)).await;
    let values: Vec<String> = records
        .iter()
        .map(|r| r.value.clone().expect("record value"))
        .collect();
    assert_eq!(values, lines);
    let positions: Vec<i64> = records.iter().map(|r| r.offset).collect();
    assert_eq!(positions, (0..lines.len() as i64).collect::<Vec<_>>());

    cleanup.delete().await;
    assert!(connect::connector_status(&name).await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_server_stores_objects_and_checks_signatures() {
    if !env::require_s3() {
        return;
    }
    let store = s3::s3_store();
    let prefix = StorePath::from(support::unique_name("ov-env-s3"));
    let key = prefix.clone().join("hello.json");
    let body = br#"{"hello":"offset-vault"}"#.to_vec();

    store
        .put(&key, PutPayload::from(body.clone()))
        .await
        .expect("put with the right credentials");

    let listed: Vec<_> = store
        .list(Some(&prefix))
        .try_collect()
        .await
        .expect("list with the right credentials");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].location, key);
    assert_eq!(listed[0].size, body.len() as u64);

    let fetched = store
        .get(&key)
        .await
        .expect("get")
        .bytes()
        .await
        .expect("read the body");
    assert_eq!(fetched.as_ref(), body.as_slice());

    // A client with the right access key but a wrong secret is turned away.
    let impostor = s3::s3_store_with_secret("not-the-secret-0123456789");
    let forged = prefix.clone().join("forged.json");
    let put = impostor.put(&forged, PutPayload::from(body.clone())).await;
    match put {
        Err(error @ object_store::Error::PermissionDenied { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains("SignatureDoesNotMatch"),
                "expected SignatureDoesNotMatch: {message}"
            );
        }
        other => panic!("a put with a wrong secret must be denied: {other:?}"),
    }
    let listing = impostor.list(Some(&prefix)).try_collect::<Vec<_>>().await;
    assert!(
        listing.is_err(),
        "a list with a wrong secret succeeded: {listing:?}"
    );
    let get = impostor.get(&key).await;
    assert!(get.is_err(), "a get with a wrong secret succeeded");
    match store.head(&forged).await {
        Err(object_store::Error::NotFound { .. }) => {}
        other => panic!("the forged object must not exist: {other:?}"),
    }

    store.delete(&key).await.expect("delete");
    let left: Vec<_> = store
        .list(Some(&prefix))
        .try_collect()
        .await
        .expect("list after delete");
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn python_reads_parquet_written_by_pyarrow() {
    if !env::require_python() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("check.parquet");
    let script = r#"
import sys
import pyarrow as pa
import pyarrow.parquet as pq
path = sys.argv[1]
pq.write_table(pa.table({"partition": pa.array([0, 1], pa.int32()), "offset": pa.array([5, 9], pa.int64())}), path)
t = pq.read_table(path)
print(t.schema.field("partition").type, t.schema.field("offset").type, sum(t.column("offset").to_pylist()))
"#;
    let python = env::python();
    let output = support::blocking(move || {
        std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .arg(&file)
            .output()
            .expect("run python")
    })
    .await;
    assert!(
        output.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "int32 int64 14"
    );
}
