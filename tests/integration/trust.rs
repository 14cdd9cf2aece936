//! Regression tests for restores and snapshots that must be trustworthy under retries, unknown
//! states and partial failures, each named after what once went wrong. Against the real services;
//! offsets are checked with the real `kafka-consumer-groups`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov, ov_raw, snapshot};
use crate::support::{self, env, kcg, unique_name};

async fn filled_topic(prefix: &str, partitions: i32, per_partition: usize) -> String {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, partitions).await;
    for p in 0..partitions {
        kafka::produce(&topic, p, per_partition).await;
    }
    topic
}

fn per_partition(n: usize, partitions: i32) -> Take {
    Take::PerPartition((0..partitions).map(|p| (p, n)).collect())
}

fn count_snapshots(store: &str) -> usize {
    let root = std::path::Path::new(store).join("snapshots");
    std::fs::read_dir(root)
        .map(|days| {
            days.flatten()
                .map(|d| std::fs::read_dir(d.path()).map(|e| e.count()).unwrap_or(0))
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_restore_does_not_undo_itself() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-retry", 2, 100).await;
    let group = unique_name("trust-retry-g");
    kafka::consume_and_commit(&group, &topic, per_partition(10, 2)).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(70, 2)).await;
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 80), (1, 80)])
    );

    let args = [
        "restore",
        "--latest",
        "--group",
        &group,
        "--execute",
        "--settle",
        "0s",
    ];
    let first = ov(&store, &args).await.ok();
    assert!(
        first
            .stderr
            .contains(&format!("using snapshot {id} (kind snapshot")),
        "the choice names id and kind:\n{}",
        first.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 10), (1, 10)])
    );
    assert_eq!(
        count_snapshots(&store),
        2,
        "the first run wrote one undo snapshot"
    );

    // The retry (a runbook or CI step run again) must not pick the undo snapshot: it plans no
    // change, writes no new undo snapshot, and exits 0.
    let second = ov(&store, &[&args[..], &["--output", "json"]].concat())
        .await
        .ok();
    let out = second.json();
    assert_eq!(out["snapshot"], id.as_str(), "{out:#}");
    assert_eq!(out["status"], "nothing-to-change", "{out:#}");
    assert_eq!(out["undo_snapshot"], Value::Null);
    assert_eq!(count_snapshots(&store), 2, "no new undo snapshot");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 10), (1, 10)])
    );

    // The undo snapshot is listed with its kind, and restored by id or with --include-undo.
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let kinds: Vec<&str> = listed["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["undo", "snapshot"], "{listed:#}");
    assert_eq!(listed["snapshots"][0]["undo_of"], id.as_str());
    let undo_choice = ov(
        &store,
        &["restore", "--latest", "--include-undo", "--group", &group],
    )
    .await
    .ok();
    assert!(
        undo_choice.stderr.contains("kind undo"),
        "{}",
        undo_choice.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_that_no_longer_exists_is_not_found_and_may_be_restored() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-gone", 1, 30).await;
    let group = unique_name("trust-gone-g");
    kafka::consume_and_commit(&group, &topic, per_partition(12, 1)).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group]).await;
    let deleted = kcg::kcg(&["--delete", "--group", &group]).await;
    assert!(deleted.stdout.contains("successful"), "{deleted:?}");

    let dry = ov(&store, &["restore", &id, "--output", "json"])
        .await
        .ok()
        .json();
    // librdkafka describes a deleted classic group as Dead; a KIP-848 lookup says NotFound.
    // Either is known to be safe to change (unlike a state that could not be read).
    let state = dry["plan"]["groups"][0]["state"].as_str().unwrap();
    assert!(["Dead", "NotFound"].contains(&state), "{dry:#}");
    assert_eq!(dry["plan"]["blocked"], false);
    ov(&store, &["restore", &id, "--execute", "--settle", "0s"])
        .await
        .ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 12)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_applied_plan_is_the_reviewed_plan() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-review", 2, 50).await;
    let group = unique_name("trust-review-g");
    kafka::consume_and_commit(&group, &topic, per_partition(10, 2)).await;
    let (dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(20, 2)).await;
    let plan_path = dir.path().join("plan.json");
    let plan_arg = plan_path.to_str().unwrap();
    ov(&store, &["restore", &id, "--plan-file", plan_arg])
        .await
        .ok();

    // An edited plan file is refused before anything else.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    let target = &mut doc["plan"]["groups"][0]["partitions"][0]["target"];
    assert_eq!(*target, 10, "the first target of the plan");
    *target = 3.into();
    let edited_path = dir.path().join("edited.json");
    std::fs::write(&edited_path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let edited = ov(
        &store,
        &[
            "restore",
            "--from-plan",
            edited_path.to_str().unwrap(),
            "--execute",
        ],
    )
    .await
    .expect_code(5);
    assert!(
        edited.stderr.contains("changed after it was written"),
        "{}",
        edited.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 30), (1, 30)])
    );

    // The group moves on after the review: current offsets moved, targets did not; allowed.
    kafka::consume_and_commit(&group, &topic, per_partition(5, 2)).await;
    let applied = ov(
        &store,
        &[
            "restore",
            "--from-plan",
            plan_arg,
            "--execute",
            "--settle",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(applied["status"], "applied", "{applied:#}");
    assert_eq!(applied["moved"].as_array().unwrap().len(), 2, "{applied:#}");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 10), (1, 10)])
    );

    // A range check that changed since the review (records deleted past the target) stops the
    // apply with its own exit code, and nothing changes.
    let plan2 = dir.path().join("plan2.json");
    kafka::consume_and_commit(&group, &topic, per_partition(30, 2)).await;
    ov(
        &store,
        &["restore", &id, "--plan-file", plan2.to_str().unwrap()],
    )
    .await
    .ok();
    let offsets_json = dir.path().join("delete.json");
    std::fs::write(
        &offsets_json,
        format!(
            r#"{{"partitions":[{{"topic":"{topic}","partition":0,"offset":20}}],"version":1}}"#
        ),
    )
    .unwrap();
    let deleted = kcg::run_kafka_tool(
        "kafka-delete-records",
        &[
            "--bootstrap-server",
            &env::bootstrap(),
            "--offset-json-file",
            offsets_json.to_str().unwrap(),
        ],
    )
    .await;
    assert!(deleted.stdout.contains("low_watermark: 20"), "{deleted:?}");
    let changed = ov(
        &store,
        &[
            "restore",
            "--from-plan",
            plan2.to_str().unwrap(),
            "--execute",
        ],
    )
    .await
    .expect_code(11);
    assert!(
        changed.stderr.contains("out-of-range"),
        "{}",
        changed.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 40), (1, 40)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_selection_is_a_usage_error_unless_allowed() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let pattern = format!("{}-.*", unique_name("trust-typo"));
    let run = ov(&store, &["snapshot", "--group-pattern", &pattern])
        .await
        .expect_code(2);
    assert!(run.stderr.contains("--allow-empty"), "{}", run.stderr);
    // A group type that does not exist is refused, never taken for "all".
    let bad = ov(
        &store,
        &["snapshot", "--all-groups", "--group-type", "shared"],
    )
    .await
    .expect_code(2);
    assert!(
        bad.stderr.contains("classic, consumer, share, streams"),
        "{}",
        bad.stderr
    );
    assert_eq!(count_snapshots(&store), 0, "nothing written");
    ov(
        &store,
        &["snapshot", "--group-pattern", &pattern, "--allow-empty"],
    )
    .await
    .ok();
    assert_eq!(count_snapshots(&store), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_reads_and_verifies_the_snapshot_before_contacting_the_cluster() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-order", 1, 10).await;
    let group = unique_name("trust-order-g");
    kafka::consume_and_commit(&group, &topic, per_partition(4, 1)).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group, "--format", "json"]).await;
    let file = crate::support::ov::local_files(&store, &id)
        .into_iter()
        .find(|f| f.ends_with("offsets.json"))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("\"offset\": 4", "\"offset\": 5", 1)).unwrap();
    // Nothing listens on port 1: a run that contacted Kafka would wait for its timeout and exit 3.
    let args = |id: &str| -> Vec<String> {
        [
            "--bootstrap-server",
            "127.0.0.1:1",
            "--store",
            &store,
            "--timeout",
            "30s",
            "restore",
            id,
            "--execute",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let started = Instant::now();
    let corrupt = ov_raw(args(&id)).await.expect_code(5);
    let missing = ov_raw(args("19990101T000000")).await.expect_code(4);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "both ended without waiting for the cluster: {corrupt:?} {missing:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn configuration_and_output_errors_are_reported_plainly() {
    let (_dir, store) = local_store();
    // An unknown store scheme is a usage error naming the accepted ones.
    let scheme = ov_raw(vec!["--store".into(), "foo://x".into(), "list".into()])
        .await
        .expect_code(2);
    assert!(
        scheme.stderr.contains("s3://bucket/prefix"),
        "{}",
        scheme.stderr
    );
    // A store directory that does not exist: exit 4, documented.
    let missing = ov_raw(vec![
        "--store".into(),
        format!("{store}/nope"),
        "list".into(),
    ])
    .await
    .expect_code(4);
    assert!(
        missing.stderr.contains("does not exist") || missing.stderr.contains("not found"),
        "{}",
        missing.stderr
    );

    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-pipe", 1, 5).await;
    let group = unique_name("trust-pipe-g");
    kafka::consume_and_commit(&group, &topic, per_partition(2, 1)).await;
    // -q: only the id on stdout, nothing on stderr.
    let quiet = ov(&store, &["-q", "snapshot", "--group", &group])
        .await
        .ok();
    assert_eq!(quiet.stdout.trim().len(), 37, "{quiet:?}");
    assert!(
        quiet.stderr.is_empty(),
        "-q printed on stderr: {}",
        quiet.stderr
    );

    // A closed stdout ends the command quietly, without a panic.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let out = std::process::Command::new(bin)
        .args(["--store", &store, "list", "--output", "json"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn kafka_authentication_failure_says_so() {
    if !env::require_kafka() {
        return;
    }
    let sasl = std::env::var("OV_SASL_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:19094".into());
    let (_dir, store) = local_store();
    let run = |password: &str| {
        let args: Vec<String> = [
            "--bootstrap-server",
            &sasl,
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            "sasl.mechanism=PLAIN",
            "-X",
            "sasl.username=ov-test",
            "-X",
            &format!("sasl.password={password}"),
            "--store",
            &store,
            "--timeout",
            "10s",
            "snapshot",
            "--all-groups",
            "--allow-empty",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        ov_raw(args)
    };
    run("ov-test-secret").await.ok();
    let denied = run("wrong").await.expect_code(10);
    assert!(
        denied.stderr.contains("refused access") && denied.stderr.contains("SASL"),
        "{}",
        denied.stderr
    );
}

/// Commits `offset` for every partition of `topic` in `group` without joining it, as a consumer
/// using assign() does.
fn commit_assigned(group: &str, topic: &str, partitions: i32, offset: i64) {
    let consumer: BaseConsumer = kafka::kafka_config()
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Offset(offset))
            .unwrap();
    }
    consumer.commit(&tpl, CommitMode::Sync).expect("commit");
}

#[tokio::test(flavor = "multi_thread")]
async fn drift_after_a_restore_is_reported() {
    if !env::require_kafka() {
        return;
    }
    let topic = filled_topic("trust-drift", 1, 50).await;
    let group = unique_name("trust-drift-g");
    kafka::consume_and_commit(&group, &topic, per_partition(10, 1)).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit(&group, &topic, per_partition(20, 1)).await;

    // Something outside the group keeps committing: as soon as the restore has set offset 10,
    // it commits 40 again (after the restore's read-back, within its settle time).
    let (g, t) = (group.clone(), topic.clone());
    let rogue = tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if kcg::committed(&g, &t).await.get(&0) == Some(&10) {
                tokio::time::sleep(Duration::from_millis(800)).await;
                let (g, t) = (g.clone(), t.clone());
                support::blocking(move || commit_assigned(&g, &t, 1, 40)).await;
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    });
    let run = ov(
        &store,
        &[
            "restore",
            &id,
            "--execute",
            "--settle",
            "8s",
            "--output",
            "json",
        ],
    )
    .await
    .expect_code(14);
    assert!(rogue.await.unwrap(), "the rogue committer saw the restore");
    let out = run.json();
    assert_eq!(out["status"], "applied", "{out:#}");
    assert_eq!(out["verified"], true);
    assert_eq!(out["drift"][0]["after_settle"], 40, "{out:#}");
    assert_eq!(out["drift"][0]["target"], 10);
}

/// An HTTP proxy in front of the real Kafka Connect worker that answers 500 to
/// `GET /connectors/<name>/offsets` and forwards every other request unchanged.
async fn failing_offsets_proxy(name: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let upstream = env::connect_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let failing = format!("GET /connectors/{name}/offsets ");
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            let (upstream, failing) = (upstream.clone(), failing.clone());
            tokio::spawn(async move {
                let Some(request) = read_request(&mut client).await else {
                    return;
                };
                if request.starts_with(failing.as_bytes()) {
                    let body = r#"{"error_code":500,"message":"offsets unavailable (injected)"}"#;
                    let answer = format!(
                        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = client.write_all(answer.as_bytes()).await;
                    return;
                }
                let Ok(mut up) = TcpStream::connect(&upstream).await else {
                    return;
                };
                if up.write_all(&request).await.is_err() {
                    return;
                }
                let mut answer = Vec::new();
                let _ = up.read_to_end(&mut answer).await;
                let _ = client.write_all(&answer).await;
            });
        }
    });
    url
}

/// Reads one HTTP/1.1 request (head and Content-Length body) and rewrites it to close the
/// connection after the answer, so the upstream answer can be read to its end.
async fn read_request(client: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = client.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let mut lines: Vec<&str> = head
        .trim_end()
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    lines.push("Connection: close");
    let mut out = format!("{}\r\n\r\n", lines.join("\r\n")).into_bytes();
    out.extend_from_slice(&buf[head_end..]);
    Some(out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partial_snapshot_is_not_reported_as_success() {
    if !env::require_connect() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "a\nb\nc\n").unwrap();
    let topic = unique_name("trust-partial");
    kafka::create_topic(&topic, 1).await;
    let name = unique_name("trust-partial-src");
    let cleanup = ConnectorCleanup::new(&name);
    connect::create_connector(&name, connect::file_source(&input, &topic)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let proxy = failing_offsets_proxy(&name).await;
    let (_d, store) = local_store();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "--bootstrap-server",
            &env::bootstrap(),
            "--connect-url",
            &proxy,
            "--store",
            &store,
            "snapshot",
            "--connector",
            &name,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let failed = ov_raw(args(&[])).await.expect_code(3);
    assert!(
        failed.stderr.contains("could not be read") && failed.stderr.contains("--allow-partial"),
        "{}",
        failed.stderr
    );
    assert_eq!(
        count_snapshots(&store),
        0,
        "no snapshot, not even an incomplete one"
    );

    let partial = ov_raw(args(&["--allow-partial", "--output", "json"]))
        .await
        .ok();
    let id = partial.json()["id"].as_str().unwrap().to_string();
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    assert_eq!(
        listed["snapshots"][0]["partial"][0]
            .as_str()
            .map(|s| s.contains("injected")),
        Some(true),
        "{listed:#}"
    );
    let table = ov(&store, &["list"]).await.ok();
    assert!(table.stdout.contains("partial"), "{}", table.stdout);
    // Restoring it needs --allow-partial too; --latest passes it over.
    ov(&store, &["restore", &id]).await.expect_code(2);
    ov(&store, &["restore", "--latest", "--connector", &name])
        .await
        .expect_code(4);
    let accepted = ov(&store, &["restore", &id, "--allow-partial"]).await;
    assert!(
        accepted.stderr.contains(&format!("using snapshot {id}"))
            && accepted.stderr.contains("PARTIAL"),
        "{accepted:?}"
    );
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_connector_is_created_again_with_the_snapshot_offsets() {
    if !env::require_connect() {
        return;
    }
    let topic = unique_name("trust-recreate");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 10).await;
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("out.txt");
    let name = unique_name("trust-recreate-sink");
    let cleanup = ConnectorCleanup::new(&name);
    let mut config = connect::file_sink(&topic, &out_file);
    config["unused.password"] = Value::from("s3cret");
    connect::create_connector(&name, config).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let group = format!("connect-{name}");
    let committed = |n: i64| {
        let (group, topic) = (group.clone(), topic.clone());
        async move {
            crate::support::poll::eventually(
                &format!("the sink to commit {n}"),
                Duration::from_secs(60),
                || async {
                    (kcg::committed(&group, &topic).await.get(&0) == Some(&n)).then_some(())
                },
            )
            .await
        }
    };
    committed(10).await;
    let (_d, store) = local_store();
    let id = snapshot(&store, &["--connector", &name]).await;
    kafka::produce(&topic, 0, 5).await;
    committed(15).await;
    connect::delete_connector(&name).await;

    // Without --recreate-connectors the plan says how; with it, the redacted secret is needed.
    let plain = ov(&store, &["restore", &id]).await.expect_code(7);
    assert!(plain.stdout.contains("--recreate-connectors"), "{plain:?}");
    let no_secret = ov(&store, &["restore", &id, "--recreate-connectors"])
        .await
        .expect_code(7);
    assert!(
        no_secret.stdout.contains("unused.password"),
        "{no_secret:?}"
    );

    let done = ov(
        &store,
        &[
            "restore",
            &id,
            "--recreate-connectors",
            "--connector-config-override",
            "unused.password=s3cret",
            "--execute",
            "--settle",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["checks"][0]["actual"], 10, "{done:#}");
    assert_eq!(done["connectors"][0]["recreated"], true, "{done:#}");
    assert_eq!(done["connectors"][0]["resumed"], true, "{done:#}");
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let (_, config) = connect::connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/config"),
        None,
    )
    .await;
    assert_eq!(config["unused.password"], "s3cret", "{config:#}");
    // It runs from the snapshot's position: records 10..14 are written a second time.
    committed(15).await;
    crate::support::poll::eventually(
        "the sink file to hold 20 lines",
        Duration::from_secs(60),
        || async {
            let lines = std::fs::read_to_string(&out_file)
                .unwrap_or_default()
                .lines()
                .count();
            (lines == 20).then_some(()).ok_or(format!("{lines} lines"))
        },
    )
    .await;
    cleanup.delete().await;
}
