//! `--watch` after an executed reset: the connector's tasks are followed after the resume, and a
//! task that fails again on a record it cannot convert ends the watch early, with its trace in
//! the report and exit code 16.

use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov};
use crate::support::{env, unique_name};

#[tokio::test(flavor = "multi_thread")]
async fn watch_reports_a_sink_task_failing_again_on_a_poison_record() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("watch-poison");
    kafka::create_topic(&topic, 1).await;
    kafka::produce_keyed(&topic, &[("a", r#"{"n": 1}"#), ("b", "poison: not JSON")]).await;
    let name = unique_name("watch-poison-sink");
    // The sink's group starts on the poison record (offset 1), so the task fails at once.
    kafka::consume_and_commit(
        &format!("connect-{name}"),
        &topic,
        Take::per_partition(&[(0, 1)]),
    )
    .await;
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(
        &name,
        connect::json_file_sink(&topic, &dir.path().join("sink.txt")),
    )
    .await;
    let before = connect::wait_task_failed(&name).await;
    let trace_before = before["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace_before.contains("DataException"),
        "the task should fail on converting the poison record: {before:#}"
    );

    // Back to the earliest offset: the good record is written again, then the poison one fails
    // the task again, well within the watch.
    let (_store_dir, store) = local_store();
    let run = ov(
        &store,
        &[
            "reset",
            "--connector",
            &name,
            "--all-topics",
            "--to-earliest",
            "--stop-connectors",
            "--execute",
            "--watch",
            "60s",
            "--output",
            "json",
        ],
    )
    .await
    .expect_code(16);
    let doc = run.json();
    assert_eq!(doc["status"], "applied", "{doc:#}");
    let watch = &doc["watch"];
    assert_eq!(watch["verdict"], "connector-failed", "{doc:#}");
    assert!(
        watch["duration_s"].as_f64().unwrap_or(f64::MAX) < 55.0,
        "a FAILED task ends the watch early: {watch:#}"
    );
    let watched = watch["connectors"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name.as_str()))
        .unwrap_or_else(|| panic!("connector {name} not in the watch report: {watch:#}"));
    let task = &watched["tasks"][0];
    assert_eq!(task["state"], "FAILED", "{watched:#}");
    let lines: Vec<&str> = task["trace"]["lines"]
        .as_array()
        .unwrap_or_else(|| panic!("no trace lines for the FAILED task: {watched:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !lines.is_empty() && lines.len() <= 10,
        "the first lines of the trace, at most 10: {lines:#?}"
    );
    assert_eq!(
        lines[0],
        trace_before.lines().next().unwrap_or_default().trim_end(),
        "the trace starts as the worker's does"
    );
    let causes = task["trace"]["caused_by"].to_string();
    assert!(
        lines.iter().any(|l| l.contains("DataException")) || causes.contains("DataException"),
        "the trace names the conversion failure: {task:#}"
    );
    assert!(
        watch["problems"].to_string().contains("FAILED"),
        "the failure is listed as a problem: {watch:#}"
    );
    cleanup.delete().await;
}
