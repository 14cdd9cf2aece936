//! Fault injection: real services are killed by PID at chosen steps of a snapshot or a restore,
//! and brought back. A failpoint compiled into the test build (`--features failpoints`) holds the
//! command at the step until the test has killed the service, so each fault lands exactly there.
//!
//! These tests stop services every other test uses, so they live in their own test binary (cargo
//! runs test binaries one after another) and run one at a time within it.
#![allow(dead_code)]

#[path = "../integration/support/mod.rs"]
mod support;

mod follow;
mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use support::ov::{local_store, ov, ov_raw_env, Run};
use support::services::{kill_service, start_service, Service};
use support::{connect, env, kafka, kcg, s3, unique_name};

/// One fault test at a time: they stop shared services.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Starts a killed service again when the test ends, also when it fails.
struct Revive(Service);

impl Drop for Revive {
    fn drop(&mut self) {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/test-env");
        let _ = std::process::Command::new(script)
            .args(["start", self.0.name()])
            .env("OV_TEST_ENV_DIR", env::test_env_dir())
            .stdin(std::process::Stdio::null())
            .status();
    }
}

/// A failpoint rendezvous directory: the binary writes `<point>.reached` and waits for
/// `<point>.go`.
struct Rendezvous {
    dir: tempfile::TempDir,
}

impl Rendezvous {
    fn new() -> Self {
        Rendezvous {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn failpoints(&self, point: &str) -> String {
        format!("{point}=return({})", self.dir.path().display())
    }

    async fn reached(&self, point: &str) {
        let file = self.dir.path().join(format!("{point}.reached"));
        let deadline = Instant::now() + Duration::from_secs(120);
        while !file.exists() {
            assert!(Instant::now() < deadline, "failpoint {point} never reached");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn go(&self, point: &str) {
        std::fs::write(self.dir.path().join(format!("{point}.go")), b"go").expect("go file");
    }
}

/// Runs offset-vault in the background with a failpoint set.
fn spawn_ov(store: &str, args: &[&str], failpoints: String) -> tokio::task::JoinHandle<Run> {
    let all = support::ov::with_services(store, "5s", args);
    tokio::spawn(async move { ov_raw_env(all, &[("FAILPOINTS", failpoints.as_str())]).await })
}

/// After a broker restart, waits until the group coordinator answers with the group's offsets
/// (loading the offsets topic after an unclean stop can take a while after the broker is up).
async fn serves_group_again(group: &str, topic: &str, want: BTreeMap<i32, i64>) {
    support::poll::eventually(
        "the restarted broker to serve the group's offsets",
        Duration::from_secs(120),
        || async { (kcg::committed(group, topic).await == want).then_some(()) },
    )
    .await;
}

fn take(n: usize) -> kafka::Take {
    kafka::Take::per_partition(&[(0, n)])
}

/// Three groups (`PREFIX-g0` < `-g1` < `-g2`) on one single-partition topic, snapshotted at
/// offset 10 and then moved to 60.
struct ThreeGroups {
    topic: String,
    groups: Vec<String>,
    store: String,
    id: String,
    _dir: tempfile::TempDir,
}

async fn three_groups_snapshotted_then_moved(prefix: &str) -> ThreeGroups {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 100).await;
    let groups: Vec<String> = (0..3)
        .map(|i| unique_name(&format!("{prefix}-g{i}")))
        .collect();
    for g in &groups {
        kafka::consume_and_commit(g, &topic, take(10)).await;
    }
    let (dir, store) = local_store();
    let mut args = vec!["snapshot".to_string(), "--output".into(), "json".into()];
    for g in &groups {
        args.extend(["--group".to_string(), g.clone()]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let id = ov(&store, &argv).await.ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    for g in &groups {
        kafka::consume_and_commit(g, &topic, take(50)).await;
    }
    ThreeGroups {
        topic,
        groups,
        store,
        id,
        _dir: dir,
    }
}

/// Runs `restore ARGS` with the failpoint `point`, kills the broker when the restore reaches it,
/// and lets the restore go on: it must stop partway (exit 12) after announcing its undo snapshot
/// before the first change. Returns its JSON outcome, the undo id, and the guard that starts the
/// broker again.
async fn restore_with_broker_killed_at(
    point: &str,
    store: &str,
    args: &[&str],
) -> (Value, String, Revive) {
    let rv = Rendezvous::new();
    let run = spawn_ov(store, args, rv.failpoints(point));
    rv.reached(point).await;
    let revive = Revive(Service::Kafka);
    kill_service(Service::Kafka).await;
    rv.go(point);
    let failed = run.await.unwrap().expect_code(12);
    let out = failed.json();
    assert_eq!(out["status"], "partially-applied", "{out:#}");
    let undo = out["undo_snapshot"].as_str().expect("undo id").to_string();
    assert!(
        failed.stderr.contains(&format!("undo snapshot {undo}")),
        "the undo id was printed before the first change:\n{}",
        failed.stderr
    );
    (out, undo, revive)
}

/// After the broker is back: the first group was committed before it went away and the others
/// were not; the undo snapshot brings back exactly the offsets from before the restore.
async fn only_the_first_changed_and_the_undo_restores(
    store: &str,
    undo: &str,
    groups: &[String],
    topic: &str,
) {
    serves_group_again(&groups[2], topic, BTreeMap::from([(0, 60)])).await;
    let now: Vec<BTreeMap<i32, i64>> =
        futures::future::join_all(groups.iter().map(|g| kcg::committed(g, topic))).await;
    assert_eq!(now[0], BTreeMap::from([(0, 10)]), "{now:?}");
    assert_eq!(now[1], BTreeMap::from([(0, 60)]), "{now:?}");
    assert_eq!(now[2], BTreeMap::from([(0, 60)]), "{now:?}");
    ov(store, &["restore", undo, "--execute", "--settle", "0s"])
        .await
        .ok();
    for g in groups {
        assert_eq!(
            kcg::committed(g, topic).await,
            BTreeMap::from([(0, 60)]),
            "{g}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn broker_killed_while_committing_a_multi_group_restore() {
    let _serial = SERIAL.lock().await;
    if !env::require_kafka() {
        return;
    }
    let ThreeGroups {
        topic,
        groups,
        store,
        id,
        _dir,
    } = three_groups_snapshotted_then_moved("fault-commit").await;

    let (out, undo, revive) = restore_with_broker_killed_at(
        "restore-after-group-commit",
        &store,
        &[
            "restore",
            &id,
            "--execute",
            "--settle",
            "0s",
            // One group at a time, so the broker dies between the first commit and the rest.
            "--commit-concurrency",
            "1",
            "--output",
            "json",
        ],
    )
    .await;
    let errors = out["errors"].to_string();
    assert!(
        errors.contains(&groups[1]) && errors.contains("stopped partway"),
        "{errors}"
    );

    start_service(Service::Kafka).await;
    drop(revive);
    only_the_first_changed_and_the_undo_restores(&store, &undo, &groups, &topic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broker_killed_between_batches_names_exactly_the_changed_groups() {
    let _serial = SERIAL.lock().await;
    if !env::require_kafka() {
        return;
    }
    // g0 < g1 < g2 by id: the batches' order.
    let ThreeGroups {
        topic,
        groups,
        store,
        id,
        _dir,
    } = three_groups_snapshotted_then_moved("fault-batch").await;

    // One group per batch: the broker dies after the first batch was committed and read back.
    let (out, undo, revive) = restore_with_broker_killed_at(
        "restore-between-batches",
        &store,
        &[
            "restore",
            &id,
            "--execute",
            "--settle",
            "0s",
            "--batch-partitions",
            "1",
            "--output",
            "json",
        ],
    )
    .await;
    assert_eq!(
        out["changed_groups"],
        serde_json::json!([groups[0]]),
        "{out:#}"
    );
    assert_eq!(
        out["unconfirmed_groups"],
        serde_json::json!([groups[1]]),
        "{out:#}"
    );
    assert_eq!(out["groups_not_attempted"], 1, "{out:#}");
    // The first batch was read back before the broker went away.
    let checks = out["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 1, "{out:#}");
    assert_eq!(checks[0]["group_id"], groups[0].as_str(), "{out:#}");
    assert_eq!(checks[0]["ok"], true, "{out:#}");

    start_service(Service::Kafka).await;
    drop(revive);
    only_the_first_changed_and_the_undo_restores(&store, &undo, &groups, &topic).await;
}

/// A running FileStream sink connector on its own topic that has committed `first` records, a
/// snapshot of it taken then, and `more` records committed after the snapshot.
struct SnapshottedSink {
    name: String,
    topic: String,
    group: String,
    store: String,
    id: String,
    cleanup: connect::ConnectorCleanup,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

async fn snapshotted_sink(prefix: &str, first: usize, more: usize) -> SnapshottedSink {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, first).await;
    let dir = tempfile::tempdir().unwrap();
    let name = unique_name(&format!("{prefix}-sink"));
    let cleanup = connect::ConnectorCleanup::new(&name);
    let out = dir.path().join("out.txt");
    connect::create_connector(&name, connect::file_sink(&topic, &out)).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    let group = format!("connect-{name}");
    let committed = |n: usize| {
        let (group, topic) = (group.clone(), topic.clone());
        async move {
            support::poll::eventually(
                &format!("the sink to commit {n}"),
                Duration::from_secs(60),
                || async {
                    (kcg::committed(&group, &topic).await.get(&0) == Some(&(n as i64)))
                        .then_some(())
                },
            )
            .await
        }
    };
    committed(first).await;
    let (store_dir, store) = local_store();
    let id = support::ov::snapshot(&store, &["--connector", &name]).await;
    kafka::produce(&topic, 0, more).await;
    committed(first + more).await;
    SnapshottedSink {
        name,
        topic,
        group,
        store,
        id,
        cleanup,
        _dirs: (dir, store_dir),
    }
}

/// Kills the Connect worker at `point` of a sink connector's restore, and checks that the
/// failure names the connector and the command that resumes it, and that the command works once
/// the worker is back. Returns the restore's JSON outcome.
async fn connect_killed_at(prefix: &str, point: &str) -> Value {
    let sink = snapshotted_sink(prefix, 10, 5).await;
    let (name, store, id) = (sink.name.as_str(), sink.store.as_str(), sink.id.as_str());
    let rv = Rendezvous::new();
    let run = spawn_ov(
        store,
        &[
            "restore",
            id,
            "--stop-connectors",
            "--execute",
            "--settle",
            "0s",
            "--output",
            "json",
        ],
        rv.failpoints(point),
    );
    rv.reached(point).await;
    let revive = Revive(Service::Connect);
    kill_service(Service::Connect).await;
    rv.go(point);
    let failed = run.await.unwrap().expect_code(13);
    let out = failed.json();
    let conn = &out["connectors"][0];
    assert_eq!(conn["name"], name, "{out:#}");
    assert_eq!(conn["resumed"], false);
    let command = conn["resume_command"]
        .as_str()
        .expect("resume command")
        .to_string();
    assert!(
        command.contains(&format!("/connectors/{name}/resume")),
        "{command}"
    );

    start_service(Service::Connect).await;
    drop(revive);
    let status = connect::connector_status(name)
        .await
        .expect("connector exists");
    assert_eq!(
        status["connector"]["state"], "STOPPED",
        "left stopped: {status:#}"
    );
    // The printed command resumes it.
    let ran = std::process::Command::new("sh")
        .args(["-c", &format!("{command} --fail --silent --show-error")])
        .output()
        .expect("run the resume command");
    assert!(ran.status.success(), "{ran:?}");
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    sink.cleanup.delete().await;
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_killed_after_the_connectors_were_stopped() {
    let _serial = SERIAL.lock().await;
    if !env::require_connect() {
        return;
    }
    // Planning again needs the worker: nothing is applied, and the connector is reported.
    let out = connect_killed_at("fault-connect", "restore-connectors-stopped").await;
    assert_eq!(out["status"], "not-applied", "{out:#}");
    assert_eq!(out["undo_snapshot"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_killed_after_a_successful_reset_keeps_the_undo_id_and_the_checks() {
    let _serial = SERIAL.lock().await;
    if !env::require_connect() {
        return;
    }
    let out = connect_killed_at("fault-resume", "restore-after-group-commit").await;
    assert_eq!(out["status"], "applied", "{out:#}");
    assert!(out["undo_snapshot"].is_string(), "{out:#}");
    assert_eq!(out["verified"], true, "{out:#}");
    assert_eq!(out["checks"][0]["actual"], 10, "{out:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_down_before_a_reset_stops_its_connector_changes_nothing() {
    let _serial = SERIAL.lock().await;
    if !env::require_connect() {
        return;
    }
    let sink = snapshotted_sink("fault-reset", 10, 5).await;
    let (name, topic, group) = (&sink.name, &sink.topic, &sink.group);
    let (_dir, store) = local_store();
    let point = "restore-before-stop";
    let rv = Rendezvous::new();
    let run = spawn_ov(
        &store,
        &[
            "reset",
            "--connector",
            name,
            "--to-earliest",
            "--stop-connectors",
            "--execute",
            "--output",
            "json",
        ],
        rv.failpoints(point),
    );
    // Planned with the worker up; it goes down before the connector is stopped.
    rv.reached(point).await;
    let revive = Revive(Service::Connect);
    kill_service(Service::Connect).await;
    rv.go(point);
    let failed = run.await.unwrap().expect_code(6);
    let out = failed.json();
    assert_eq!(out["status"], "not-applied", "{out:#}");
    assert_eq!(out["undo_snapshot"], Value::Null, "{out:#}");
    assert_eq!(
        out["connectors"],
        serde_json::json!([]),
        "never stopped: {out:#}"
    );
    assert!(
        out["errors"][0]["message"].as_str().is_some_and(
            |m| m.contains("could not be stopped") && m.contains("nothing was changed")
        ),
        "{out:#}"
    );
    assert_eq!(
        kcg::committed(group, topic).await,
        BTreeMap::from([(0, 15)]),
        "the group keeps its offsets"
    );
    assert!(
        snapshot_folders(&store).is_empty(),
        "no pre-reset snapshot was written"
    );
    start_service(Service::Connect).await;
    drop(revive);
    // Never stopped: it runs as before.
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    sink.cleanup.delete().await;
}

fn snapshot_folders(store: &str) -> Vec<PathBuf> {
    let root = Path::new(store).join("snapshots");
    let mut out = Vec::new();
    for day in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for snap in std::fs::read_dir(day.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(snap.path());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_killed_in_the_middle_of_a_snapshot() {
    let _serial = SERIAL.lock().await;
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let topic = unique_name("fault-s3");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 10).await;
    let group = unique_name("fault-s3-g");
    kafka::consume_and_commit(&group, &topic, take(4)).await;
    let store = s3::s3_url(&unique_name("fault-s3"));

    let point = "snapshot-before-manifest";
    let rv = Rendezvous::new();
    let run = spawn_ov(
        &store,
        &["snapshot", "--group", &group],
        rv.failpoints(point),
    );
    rv.reached(point).await;
    let revive = Revive(Service::S3);
    kill_service(Service::S3).await;
    rv.go(point);
    let failed = run.await.unwrap();
    assert_ne!(failed.code, 0, "{failed:?}");
    assert!(failed.stdout.trim().is_empty(), "no id printed: {failed:?}");
    start_service(Service::S3).await;
    drop(revive);

    // No snapshot is complete; the data files written before the fault show as incomplete.
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let all = listed["snapshots"].as_array().unwrap();
    assert!(all.iter().all(|l| l["complete"] == false), "{listed:#}");
    assert_eq!(all.len(), 1, "{listed:#}");
    let complete = ov(&store, &["list", "--complete-only", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(complete["snapshots"], Value::Array(vec![]));
    ov(&store, &["restore", "--latest", "--group", &group])
        .await
        .expect_code(4);

    // The next snapshot, with the server back, succeeds and verifies.
    let id = support::ov::snapshot(&store, &["--group", &group]).await;
    ov(&store, &["verify", &id]).await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn broker_killed_in_the_middle_of_a_snapshot() {
    let _serial = SERIAL.lock().await;
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("fault-snap");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    kafka::produce(&topic, 1, 10).await;
    let group = unique_name("fault-snap-g");
    kafka::consume_and_commit(
        &group,
        &topic,
        kafka::Take::per_partition(&[(0, 3), (1, 3)]),
    )
    .await;
    let (_d, store) = local_store();

    let point = "snapshot-after-describe";
    let rv = Rendezvous::new();
    let run = spawn_ov(
        &store,
        &["snapshot", "--group", &group],
        rv.failpoints(point),
    );
    rv.reached(point).await;
    let revive = Revive(Service::Kafka);
    kill_service(Service::Kafka).await;
    rv.go(point);
    let failed = run.await.unwrap().expect_code(3);
    assert!(failed.stdout.trim().is_empty(), "no id printed: {failed:?}");
    let folders = snapshot_folders(&store);
    assert!(
        folders.iter().all(|f| !f.join("manifest.json").exists()),
        "no manifest: {folders:?}"
    );
    start_service(Service::Kafka).await;
    drop(revive);
    serves_group_again(&group, &topic, BTreeMap::from([(0, 3), (1, 3)])).await;
    let id = support::ov::snapshot(&store, &["--group", &group]).await;
    ov(&store, &["verify", &id]).await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_after_the_connectors_were_stopped_resumes_them() {
    let _serial = SERIAL.lock().await;
    if !env::require_connect() {
        return;
    }
    let sink = snapshotted_sink("fault-sigint", 6, 4).await;
    let (name, store, id) = (sink.name.as_str(), sink.store.as_str(), sink.id.as_str());

    let point = "restore-connectors-stopped";
    let rv = Rendezvous::new();
    let run = spawn_ov(
        store,
        &[
            "restore",
            id,
            "--stop-connectors",
            "--execute",
            "--output",
            "json",
        ],
        rv.failpoints(point),
    );
    rv.reached(point).await;
    let pid = std::fs::read_to_string(rv.dir.path().join(format!("{point}.reached"))).unwrap();
    let sent = std::process::Command::new("kill")
        .args(["-INT", pid.trim()])
        .status()
        .unwrap();
    assert!(sent.success());
    rv.go(point);
    let out = run.await.unwrap().expect_code(130).json();
    assert_eq!(out["status"], "not-applied", "{out:#}");
    assert_eq!(out["connectors"][0]["resumed"], true, "{out:#}");
    assert!(out["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("interrupted"));
    assert_eq!(
        out["undo_snapshot"],
        Value::Null,
        "nothing was changed, no undo"
    );
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    assert_eq!(
        kcg::committed(&sink.group, &sink.topic).await,
        BTreeMap::from([(0, 10)])
    );
    sink.cleanup.delete().await;
}
