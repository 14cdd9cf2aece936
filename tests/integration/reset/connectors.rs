//! `reset` of Kafka Connect connectors against the real worker: a FileStreamSink writes its topic
//! again after `--to-earliest`, a FileStreamSource reads its file again from the first line, and
//! a sink task that failed on a record that cannot be converted runs again past it after
//! `--shift-by 1`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka;
use crate::support::ov::{local_store, ov};
use crate::support::poll::eventually;
use crate::support::{env, kcg, unique_name};

/// `reset --connector NAME --stop-connectors ARGS... --execute`, which must apply and verify.
async fn reset_connector(store: &str, name: &str, args: &[&str]) -> Value {
    let mut all = vec!["reset", "--connector", name, "--stop-connectors"];
    all.extend_from_slice(args);
    super::applied(store, &all).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_connector_reset_to_earliest_writes_its_whole_topic_again_and_runs() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let sink = connect::running_file_sink("reset-sink", 5).await;
    let (name, topic, group, out) = (&sink.name, &sink.topic, &sink.group, &sink.out);
    let (_dir, store) = local_store();

    // Running, and --stop-connectors not given: refused, nothing changed.
    let blocked = ov(
        &store,
        &["reset", "--connector", name, "--to-earliest", "--execute"],
    )
    .await
    .expect_code(6);
    assert!(
        blocked.stderr.contains("--stop-connectors"),
        "{}",
        blocked.stderr
    );
    assert_eq!(kcg::committed(group, topic).await, BTreeMap::from([(0, 5)]));

    let done = reset_connector(&store, name, &["--to-earliest"]).await;
    assert_eq!(done["verified"], true, "{done:#}");
    let planned = &done["plan"]["connectors"][0];
    assert_eq!(planned["method"], "rest-sink", "{done:#}");
    assert_eq!(done["plan"]["groups"][0]["partitions"][0]["target"], 0);
    assert_eq!(done["connectors"][0]["state_before"], "RUNNING");
    assert_eq!(done["connectors"][0]["resumed"], true);
    assert!(done["pre_reset_snapshot"].is_string(), "{done:#}");

    // It runs again and writes the five records a second time, in order.
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    connect::wait_lines(out, 10, Duration::from_secs(60)).await;
    let written = connect::lines(out);
    assert_eq!(written[5..], written[..5]);
    kafka::wait_committed(group, topic, BTreeMap::from([(0, 5)])).await;
    sink.cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_connector_reset_to_earliest_reads_its_file_again_from_the_first_line() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a1\na2\na3\n").unwrap();
    let topic = unique_name("reset-source");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("reset-source-conn");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let name_ref = &name;
    eventually(
        "the source offsets to reach position 9",
        Duration::from_secs(60),
        || async move {
            let offsets = connect::connector_offsets(name_ref).await;
            (offsets["offsets"][0]["offset"]["position"].as_i64() == Some(9)).then_some(())
        },
    )
    .await;
    kafka::read_records(&topic, 3, Duration::from_secs(60)).await;
    let (_dir, store) = local_store();

    // Its offsets are its own: a Kafka-partition scenario is a usage error that says why.
    let refused = ov(&store, &["reset", "--connector", &name, "--shift-by", "1"])
        .await
        .expect_code(2);
    assert!(
        refused
            .stderr
            .contains("cannot be used on source connector")
            && refused.stderr.contains("--to-earliest"),
        "{}",
        refused.stderr
    );

    let done = reset_connector(&store, &name, &["--to-earliest"]).await;
    assert_eq!(done["verified"], true, "{done:#}");
    let planned = &done["plan"]["connectors"][0];
    assert_eq!(planned["reset_all"], true, "{done:#}");
    assert_eq!(planned["offsets"][0]["current"]["position"], 9, "{done:#}");

    // Read again from the first line: the topic holds the file twice.
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let records = kafka::read_records(&topic, 6, Duration::from_secs(60)).await;
    let values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    assert_eq!(values, ["a1", "a2", "a3", "a1", "a2", "a3"]);
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shift_by_one_skips_the_record_a_sink_task_failed_on_and_it_runs_again() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sink.txt");
    let topic = unique_name("reset-poison");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("reset-poison-conn");
    let cleanup = ConnectorCleanup::new(&name);
    let group = format!("connect-{name}");
    kafka::produce_keyed(
        &topic,
        &[
            ("k", r#"{"n":1}"#),
            ("k", r#"{"n":2}"#),
            ("k", r#"{"n":3}"#),
        ],
    )
    .await;
    connect::create_connector(&name, connect::json_file_sink(&topic, &out)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    kafka::wait_committed(&group, &topic, BTreeMap::from([(0, 3)])).await;
    connect::wait_lines(&out, 3, Duration::from_secs(30)).await;

    // Offset 3 cannot be converted: the task fails on it, and the group stays at 3.
    kafka::produce_keyed(&topic, &[("k", "this is not JSON"), ("k", r#"{"n":4}"#)]).await;
    let status = connect::wait_task_failed(&name).await;
    assert!(
        status["tasks"][0]["trace"]
            .as_str()
            .unwrap_or_default()
            .contains("DataException"),
        "{status:#}"
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 3)])
    );

    let (_dir, store) = local_store();
    let done = reset_connector(&store, &name, &["--topic", &topic, "--shift-by", "1"]).await;
    assert_eq!(done["verified"], true, "{done:#}");
    let p = &done["plan"]["groups"][0]["partitions"][0];
    assert_eq!(
        (
            p["current"].as_i64(),
            p["target"].as_i64(),
            p["skip"].as_i64()
        ),
        (Some(3), Some(4), Some(1)),
        "{done:#}"
    );

    // Resumed with new tasks: the record after the poison one is written, the task runs.
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    connect::wait_lines(&out, 4, Duration::from_secs(60)).await;
    kafka::wait_committed(&group, &topic, BTreeMap::from([(0, 5)])).await;
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 5)])
    );
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_connector_takes_explicit_offsets_in_its_own_json_form() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a1\na2\na3\n").unwrap();
    let topic = unique_name("reset-source-file");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("reset-source-file-conn");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    kafka::read_records(&topic, 3, Duration::from_secs(60)).await;
    let name_ref = &name;
    let offsets = eventually(
        "the source offsets to reach position 9",
        Duration::from_secs(60),
        || async move {
            let offsets = connect::connector_offsets(name_ref).await;
            (offsets["offsets"][0]["offset"]["position"].as_i64() == Some(9)).then_some(offsets)
        },
    )
    .await;

    // The connector's own form, as GET .../offsets returns it, with position 3: after "a1\n".
    let mut edited = offsets.clone();
    edited["offsets"][0]["offset"]["position"] = json!(3);
    let file = dir.path().join("offsets.json");
    std::fs::write(&file, serde_json::to_vec(&edited).unwrap()).unwrap();
    let (_sdir, store) = local_store();
    let file = file.display().to_string();
    let done = reset_connector(&store, &name, &["--from-file", &file]).await;
    assert_eq!(done["verified"], true, "{done:#}");
    let planned = &done["plan"]["connectors"][0];
    assert_eq!(planned["method"], "rest", "{done:#}");
    assert_eq!(planned["offsets"][0]["target"]["position"], 3, "{done:#}");

    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let records = kafka::read_records(&topic, 5, Duration::from_secs(60)).await;
    let values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    assert_eq!(values, ["a1", "a2", "a3", "a2", "a3"]);
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_whose_group_has_no_committed_offset_is_reported_not_reset() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    // An empty topic: the sink runs but its group never commits (as an exactly-once sink that
    // keeps its offsets in the target system would not).
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("reset-nocommit");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("reset-nocommit-conn");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_sink(&topic, &dir.path().join("o.txt"))).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let (_sdir, store) = local_store();
    let run = ov(
        &store,
        &[
            "reset",
            "--connector",
            &name,
            "--to-earliest",
            "--stop-connectors",
            "--execute",
        ],
    )
    .await
    .expect_code(2);
    assert!(
        run.stderr
            .contains("has no committed offsets, so it is not reset")
            && run.stderr.contains(&format!("--group connect-{name}")),
        "{}",
        run.stderr
    );
    // Left alone: still running, and nothing was written to the store.
    connect::wait_connector_running(&name, Duration::from_secs(30)).await;
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    assert_eq!(
        listed["snapshots"].as_array().map(Vec::len),
        Some(0),
        "{listed:#}"
    );
    cleanup.delete().await;
}
