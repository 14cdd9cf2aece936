//! Share, streams, classic and consumer groups end to end against the real services: snapshots
//! checked against what the real group tools show, restores checked by reading back with them,
//! `--all-groups` on a cluster holding every type, the direct protocol path over the SCRAM and
//! TLS listeners, and reads of more groups than one OffsetFetch batch holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

use crate::support::groups::{self, ResetTo};
use crate::support::kafka::{self, Take};
use crate::support::kcg::{self, parse_kcg_describe};
use crate::support::ov::{local_store, ov, ov_raw, show, snapshot, Run};
use crate::support::poll::eventually;
use crate::support::streams::{self, AppMode};
use crate::support::{blocking, env, share, unique_name};

/// One row of a snapshot: (group, topic, partition, offset).
type Row = (String, String, i32, i64);

/// The rows of a snapshot, as `show --output json` gives them.
fn rows(shown: &Value) -> BTreeSet<Row> {
    groups_of(shown)
        .iter()
        .flat_map(|g| {
            let group = g["group_id"].as_str().expect("group_id").to_string();
            partitions_of(g)
                .iter()
                .map(|p| {
                    (
                        group.clone(),
                        p["topic"].as_str().expect("topic").to_string(),
                        p["partition"].as_i64().expect("partition") as i32,
                        p["offset"].as_i64().expect("offset"),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn groups_of(shown: &Value) -> &Vec<Value> {
    shown["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("no groups in {shown:#}"))
}

fn partitions_of(group: &Value) -> &Vec<Value> {
    group["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no partitions in {group:#}"))
}

/// The group `id` of a `show --output json` document; panics when it is not there.
fn group_of<'a>(shown: &'a Value, id: &str) -> &'a Value {
    groups_of(shown)
        .iter()
        .find(|g| g["group_id"] == id)
        .unwrap_or_else(|| panic!("group {id} is not in the snapshot"))
}

/// (offset, lag) per (topic, partition) of one group of a snapshot.
fn offsets_and_lag(group: &Value) -> BTreeMap<(String, i32), (i64, Option<i64>)> {
    partitions_of(group)
        .iter()
        .map(|p| {
            (
                (
                    p["topic"].as_str().expect("topic").to_string(),
                    p["partition"].as_i64().expect("partition") as i32,
                ),
                (p["offset"].as_i64().expect("offset"), p["lag"].as_i64()),
            )
        })
        .collect()
}

/// Offset per partition of `topic` in one group of a snapshot.
fn offsets_on(group: &Value, topic: &str) -> BTreeMap<i32, i64> {
    offsets_and_lag(group)
        .into_iter()
        .filter(|((t, _), _)| t == topic)
        .map(|((_, p), (offset, _))| (p, offset))
        .collect()
}

/// Lines of stderr that start with `note:` (the direct path's fallback to librdkafka says so).
fn note_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("note:"))
        .collect()
}

/// The real `kafka-console-share-consumer` as a member of a share group, with no record limit:
/// it stays in the group until dropped, which kills it.
struct ShareMember {
    child: Child,
}

impl ShareMember {
    fn start(group: &str, topic: &str) -> ShareMember {
        let program = env::kafka_tools_dir().join("kafka-console-share-consumer");
        let child = Command::new(&program)
            .args([
                "--bootstrap-server",
                env::bootstrap().as_str(),
                "--topic",
                topic,
                "--group",
                group,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        ShareMember { child }
    }
}

impl Drop for ShareMember {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the share group's state, as `kafka-share-groups` shows it, is `state`.
pub(crate) async fn wait_share_state(group: &str, state: &str) {
    eventually(
        &format!("kafka-share-groups to show share group {group} {state}"),
        Duration::from_secs(60),
        || async {
            let seen = share::group_state(group).await;
            (seen.as_deref() == Some(state))
                .then_some(())
                .ok_or(format!("{seen:?}"))
        },
    )
    .await
}

/// Waits until `kafka-share-groups` shows start offset `start` and lag `lag` on one partition.
pub(crate) async fn wait_share_partition(
    group: &str,
    topic: &str,
    partition: i32,
    start: i64,
    lag: i64,
) {
    eventually(
        &format!("kafka-share-groups to show start offset {start} and lag {lag} on {topic}[{partition}] of {group}"),
        Duration::from_secs(30),
        || async {
            let rows = share::describe_offsets(group).await;
            let seen = rows
                .iter()
                .find(|r| r.topic == topic && r.partition == partition)
                .map(|r| (r.start_offset, r.lag));
            (seen == Some((Some(start), Some(lag))))
                .then_some(())
                .ok_or(format!("{rows:?}"))
        },
    )
    .await
}

/// A share group that consumed (and acknowledged) 4 of the 10 records on partition 0 of a new
/// two-partition topic, settled as the tool shows it: start offset 4, lag 6.
pub(crate) async fn share_group_with_progress(prefix: &str) -> (String, String) {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    let group = unique_name(&format!("{prefix}-g"));
    share::set_group_config(&group, "share.auto.offset.reset=earliest").await;
    let values = share::consume(&group, &topic, 4).await;
    let first: Vec<String> = (0..4).map(|i| kafka::record_value(&topic, 0, i)).collect();
    assert_eq!(values, first);
    wait_share_partition(&group, &topic, 0, 4, 6).await;
    wait_share_state(&group, "Empty").await;
    (topic, group)
}

#[tokio::test(flavor = "multi_thread")]
async fn share_group_start_offsets_are_captured_as_the_tool_shows_them_and_restored_while_empty() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = share_group_with_progress("gt-share").await;
    let tool = share::describe_offsets(&group).await;
    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &group]).await;

    // The snapshot holds what kafka-share-groups shows: start offsets and the broker's lag, for
    // every partition the group has state for; and the group's configs.
    let shown = show(&store, &id).await;
    let g = group_of(&shown, &group);
    assert_eq!(g["group_type"], "share", "{g:#}");
    assert_eq!(g["protocol_type"], "share", "{g:#}");
    assert_eq!(g["state"], "Empty", "{g:#}");
    assert_eq!(g["configs"]["share.auto.offset.reset"], "earliest", "{g:#}");
    let from_tool: BTreeMap<(String, i32), (i64, Option<i64>)> = tool
        .iter()
        .filter_map(|r| Some(((r.topic.clone(), r.partition), (r.start_offset?, r.lag))))
        .collect();
    assert_eq!(offsets_and_lag(g), from_tool, "tool: {tool:?}");
    assert_eq!(
        offsets_and_lag(g).get(&(topic.clone(), 0)),
        Some(&(4, Some(6)))
    );
    let captured = offsets_on(g, &topic);

    // The real tool moves the start offsets to the end; the restore moves them back.
    let reset = share::reset_offsets(&group, Some(&topic), ResetTo::Latest).await;
    assert_eq!(
        reset
            .iter()
            .map(|r| (r.partition, r.offset))
            .collect::<Vec<_>>(),
        vec![(0, 10), (1, 0)]
    );
    let done = ov(&store, &["restore", &id, "--execute", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true, "{done:#}");
    let after = share::start_offsets(&group, &topic).await;
    for (partition, offset) in &captured {
        assert_eq!(
            after.get(partition),
            Some(offset),
            "kafka-share-groups shows the snapshot's start offset on {topic}[{partition}]; all: {after:?}"
        );
    }
    // The restore cleared the acknowledgements above the start offset: all 6 records are owed.
    wait_share_partition(&group, &topic, 0, 4, 6).await;

    // With a member in the group, the restore is blocked and nothing changes.
    share::reset_offsets(&group, Some(&topic), ResetTo::Latest).await;
    let before = share::start_offsets(&group, &topic).await;
    assert_eq!(before.get(&0), Some(&10));
    let member = ShareMember::start(&group, &topic);
    wait_share_state(&group, "Stable").await;
    let blocked = ov(&store, &["restore", &id, "--execute"])
        .await
        .expect_code(6);
    let text = format!("{}{}", blocked.stdout, blocked.stderr);
    assert!(
        text.contains(&format!("group {group} is Stable with 1 member(s)")),
        "{text}"
    );
    assert_eq!(
        share::start_offsets(&group, &topic).await,
        before,
        "a blocked restore changes nothing"
    );
    assert_eq!(share::group_state(&group).await.as_deref(), Some("Stable"));
    drop(member);
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_group_offsets_are_captured_and_restored_and_the_plan_says_state_is_not() {
    if !env::require_kafka() {
        return;
    }
    let input = unique_name("gt-streams-in");
    let output = unique_name("gt-streams-out");
    kafka::create_topic(&input, 3).await;
    kafka::create_topic(&output, 1).await;
    for (partition, n) in [(0, 3), (1, 4), (2, 5)] {
        kafka::produce(&input, partition, n).await;
    }
    let app_id = unique_name("gt-streams-app");
    share::set_group_config(&app_id, "streams.session.timeout.ms=50000").await;
    let run = streams::run_app(
        &app_id,
        &input,
        &output,
        12,
        Duration::from_secs(90),
        AppMode::PassThrough,
    )
    .await
    .ok();
    assert_eq!(run.processed, Some(12), "{}", run.stderr);
    let committed = streams::committed(&app_id, &input).await;
    assert_eq!(committed, BTreeMap::from([(0, 3), (1, 4), (2, 5)]));

    let (_dir, store) = local_store();
    let id = snapshot(&store, &["--group", &app_id]).await;
    let shown = show(&store, &id).await;
    let g = group_of(&shown, &app_id);
    assert_eq!(g["group_type"], "streams", "{g:#}");
    assert_eq!(g["state"], "Empty", "{g:#}");
    assert_eq!(g["configs"]["streams.session.timeout.ms"], "50000", "{g:#}");
    assert_eq!(offsets_on(g, &input), committed);
    assert!(
        partitions_of(g)
            .iter()
            .all(|p| p["topic"] == input.as_str()),
        "only the input topic has committed offsets: {g:#}"
    );

    let reset = streams::reset_offsets(&app_id, Some(&input), ResetTo::Earliest).await;
    assert_eq!(reset.len(), 3, "{reset:?}");
    assert_eq!(
        streams::committed(&app_id, &input).await,
        BTreeMap::from([(0, 0), (1, 0), (2, 0)])
    );

    let restored = ov(&store, &["restore", &id, "--execute"]).await.ok();
    assert!(
        restored.stdout.contains(&format!(
            "note: streams group {app_id}: only the committed offsets of its input topics are restored; its state stores"
        )),
        "{}",
        restored.stdout
    );
    assert_eq!(
        streams::committed(&app_id, &input).await,
        committed,
        "kafka-streams-groups shows the snapshot's offsets"
    );
}

/// The group id of the Kafka Connect worker, from the test environment's worker config.
fn connect_worker_group() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/test-env/connect-distributed.properties.in");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .find_map(|l| l.strip_prefix("group.id="))
        .unwrap_or_else(|| panic!("no group.id in {}", path.display()))
        .trim()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn all_groups_captures_every_group_type_and_leaves_out_the_connect_worker_group() {
    if !env::require_kafka() || !env::require_connect() {
        return;
    }
    let topic = unique_name("gt-all");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    kafka::produce(&topic, 1, 10).await;

    // classic: offsets committed by the real tool, without any member.
    let classic = unique_name("gt-all-classic");
    let out = kcg::kcg(&[
        "--reset-offsets",
        "--to-offset",
        "3",
        "--execute",
        "--group",
        &classic,
        "--topic",
        &topic,
    ])
    .await;
    groups::assert_tool_ok("kafka-consumer-groups --reset-offsets --to-offset 3", &out);
    // consumer (KIP-848): librdkafka with group.protocol=consumer.
    let consumer = unique_name("gt-all-consumer");
    kafka::consume_and_commit_with(
        &consumer,
        &topic,
        Take::per_partition(&[(0, 2), (1, 5)]),
        &[("group.protocol", "consumer")],
    )
    .await;
    // share
    let share_group = unique_name("gt-all-share");
    share::consume(&share_group, &topic, 3).await;
    // The 3 acknowledged records are the first of their partitions: wait until the start
    // offsets the tool shows have moved past all of them.
    eventually(
        &format!("kafka-share-groups to show start offsets adding up to 3 for {share_group}"),
        Duration::from_secs(30),
        || async {
            let starts = share::start_offsets(&share_group, &topic).await;
            (starts.values().sum::<i64>() == 3)
                .then_some(())
                .ok_or(format!("{starts:?}"))
        },
    )
    .await;
    // streams
    let app_id = unique_name("gt-all-streams");
    let output = unique_name("gt-all-streams-out");
    kafka::create_topic(&output, 1).await;
    streams::run_app(
        &app_id,
        &topic,
        &output,
        20,
        Duration::from_secs(90),
        AppMode::PassThrough,
    )
    .await
    .ok();

    let listed = groups::list_groups(&[]).await;
    let listed_type = |g: &str| {
        listed
            .iter()
            .find(|l| l.group == g)
            .map(|l| (l.group_type.clone(), l.protocol.clone()))
    };
    assert_eq!(listed_type(&classic), Some(("Classic".into(), None)));
    assert_eq!(
        listed_type(&consumer),
        Some(("Consumer".into(), Some("consumer".into())))
    );
    assert_eq!(
        listed_type(&share_group),
        Some(("Share".into(), Some("share".into())))
    );
    assert_eq!(
        listed_type(&app_id),
        Some(("Streams".into(), Some("streams".into())))
    );
    let worker = connect_worker_group();
    assert_eq!(
        listed_type(&worker),
        Some(("Classic".into(), Some("connect".into()))),
        "kafka-groups --list shows the Connect worker group {worker} with protocol connect"
    );

    let (_dir, store) = local_store();
    let run = ov(&store, &["snapshot", "--all-groups", "--output", "json"])
        .await
        .ok();
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains("Kafka Connect worker group"))
        .unwrap_or_else(|| panic!("no warning about worker groups:\n{}", run.stderr));
    assert!(warning.contains(&worker), "{warning}");
    let summary = run.json();
    let ids: BTreeSet<&str> = summary["summary"]["group_ids"]
        .as_array()
        .expect("group_ids")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!ids.contains(worker.as_str()), "{ids:?}");

    let id = summary["id"].as_str().expect("id").to_string();
    let shown = show(&store, &id).await;
    assert!(
        groups_of(&shown)
            .iter()
            .all(|g| g["group_id"] != worker.as_str()),
        "the worker group is not in the snapshot"
    );
    let expect = [
        (&classic, "classic"),
        (&consumer, "consumer"),
        (&share_group, "share"),
        (&app_id, "streams"),
    ];
    for (name, group_type) in expect {
        assert_eq!(
            group_of(&shown, name)["group_type"],
            group_type,
            "{name}: {:#}",
            group_of(&shown, name)
        );
    }
    assert_eq!(
        offsets_on(group_of(&shown, &classic), &topic),
        kcg::committed(&classic, &topic).await
    );
    assert_eq!(
        offsets_on(group_of(&shown, &consumer), &topic),
        BTreeMap::from([(0, 2), (1, 5)])
    );
    assert_eq!(
        offsets_on(group_of(&shown, &app_id), &topic),
        streams::committed(&app_id, &topic).await
    );
    assert_eq!(
        offsets_on(group_of(&shown, &share_group), &topic),
        share::start_offsets(&share_group, &topic).await
    );

    // --group-type keeps only the types asked for.
    let some = snapshot(&store, &["--all-groups", "--group-type", "share,streams"]).await;
    let shown = show(&store, &some).await;
    let types: BTreeSet<&str> = groups_of(&shown)
        .iter()
        .filter_map(|g| g["group_type"].as_str())
        .collect();
    assert!(
        types.iter().all(|t| *t == "share" || *t == "streams"),
        "{types:?}"
    );
    let names: BTreeSet<&str> = groups_of(&shown)
        .iter()
        .filter_map(|g| g["group_id"].as_str())
        .collect();
    assert!(names.contains(share_group.as_str()) && names.contains(app_id.as_str()));
    assert!(!names.contains(classic.as_str()) && !names.contains(consumer.as_str()));
}

/// Arguments for a run against `bootstrap` with librdkafka `settings` (each `-X key=value`).
fn args_with(bootstrap: &str, store: &str, settings: &[String], rest: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--bootstrap-server".into(),
        bootstrap.into(),
        "--store".into(),
        store.into(),
        "--timeout".into(),
        "20s".into(),
    ];
    for setting in settings {
        args.push("-X".into());
        args.push(setting.clone());
    }
    args.extend(rest.iter().map(|a| a.to_string()));
    args
}

fn scram_settings(mechanism: &str, password: &str) -> Vec<String> {
    vec![
        "security.protocol=SASL_PLAINTEXT".into(),
        format!("sasl.mechanism={mechanism}"),
        format!("sasl.username={}", env::scram_user()),
        format!("sasl.password={password}"),
    ]
}

fn tls_settings() -> Vec<String> {
    vec![
        "security.protocol=SSL".into(),
        format!("ssl.ca.location={}", env::tls_ca_file().display()),
    ]
}

/// The snapshot id of a successful `snapshot --output json` run.
fn snapshot_id(run: &Run) -> String {
    run.json()["id"].as_str().expect("id").to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn direct_path_over_scram_and_tls_reads_what_librdkafka_and_the_tool_read() {
    if !env::require_kafka() || !env::require_scram() || !env::require_tls() {
        return;
    }
    let topic = unique_name("gt-listeners");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 8).await;
    kafka::produce(&topic, 1, 8).await;
    let first = unique_name("gt-listeners-a");
    let second = unique_name("gt-listeners-b");
    kafka::consume_and_commit(&first, &topic, Take::per_partition(&[(0, 3), (1, 1)])).await;
    kafka::consume_and_commit(&second, &topic, Take::per_partition(&[(0, 8), (1, 6)])).await;
    let selection = [
        "snapshot", "--output", "json", "--group", &first, "--group", &second,
    ];
    let (_dir, store) = local_store();

    let mut reference = vec!["--librdkafka-only"];
    reference.extend_from_slice(&selection);
    let plain = ov_raw(args_with(&env::bootstrap(), &store, &[], &reference))
        .await
        .ok();
    let plain = rows(&show(&store, &snapshot_id(&plain)).await);
    let mut expected = BTreeSet::new();
    for (group, offsets) in [
        (&first, BTreeMap::from([(0, 3), (1, 1)])),
        (&second, BTreeMap::from([(0, 8), (1, 6)])),
    ] {
        assert_eq!(kcg::committed(group, &topic).await, offsets);
        for (partition, offset) in offsets {
            expected.insert((group.clone(), topic.clone(), partition, offset));
        }
    }
    assert_eq!(plain, expected, "librdkafka over the plain listener");

    for (what, bootstrap, settings) in [
        (
            "SCRAM-SHA-256",
            env::scram_bootstrap(),
            scram_settings("SCRAM-SHA-256", &env::scram_password()),
        ),
        (
            "SCRAM-SHA-512",
            env::scram_bootstrap(),
            scram_settings("SCRAM-SHA-512", &env::scram_password()),
        ),
        ("TLS", env::tls_bootstrap(), tls_settings()),
    ] {
        let run = ov_raw(args_with(&bootstrap, &store, &settings, &selection))
            .await
            .ok();
        assert_eq!(
            note_lines(&run.stderr),
            Vec::<&str>::new(),
            "{what}: the direct path takes these settings without falling back"
        );
        let got = rows(&show(&store, &snapshot_id(&run)).await);
        assert_eq!(got, expected, "{what}");
    }

    let denied = ov_raw(args_with(
        &env::scram_bootstrap(),
        &store,
        &scram_settings("SCRAM-SHA-512", "not-the-password"),
        &selection,
    ))
    .await
    .expect_code(10);
    assert!(
        denied.stderr.contains("refused access"),
        "{}",
        denied.stderr
    );
}

/// Commits `offsets[i]` (partition, offset) for `groups[i]` on `topic`, without joining, on a few
/// threads at once.
async fn commit_many(topic: &str, commits: Vec<(String, Vec<(i32, i64)>)>) {
    let topic = topic.to_string();
    blocking(move || {
        let threads = 8;
        let chunk = commits.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for part in commits.chunks(chunk) {
                let topic = &topic;
                scope.spawn(move || {
                    for (group, offsets) in part {
                        let consumer: BaseConsumer = kafka::kafka_config()
                            .set("group.id", group)
                            .set("enable.auto.commit", "false")
                            .create()
                            .expect("cannot create a Kafka consumer");
                        let mut tpl = TopicPartitionList::new();
                        for (partition, offset) in offsets {
                            tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                                .expect("build offset list");
                        }
                        let deadline = Instant::now() + Duration::from_secs(30);
                        while let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
                            assert!(Instant::now() < deadline, "commit for {group}: {e}");
                            std::thread::sleep(Duration::from_millis(200));
                        }
                    }
                });
            }
        });
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn more_groups_than_one_batch_are_read_exactly_by_the_direct_path() {
    if !env::require_kafka() {
        return;
    }
    const GROUPS: usize = 600;
    let topic = unique_name("gt-batch");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let prefix = unique_name("gt-batch-g");
    let commits: Vec<(String, Vec<(i32, i64)>)> = (0..GROUPS)
        .map(|i| {
            let offsets = vec![(0, (i % 20) as i64 + 1), (1, (i * 7 % 20) as i64)];
            (format!("{prefix}-{i:04}"), offsets)
        })
        .collect();
    let expected: BTreeSet<Row> = commits
        .iter()
        .flat_map(|(group, offsets)| {
            offsets
                .iter()
                .map(|(p, o)| (group.clone(), topic.clone(), *p, *o))
        })
        .collect();
    commit_many(&topic, commits.clone()).await;

    let (_dir, store) = local_store();
    let pattern = format!("{prefix}-.*");
    let direct = ov(
        &store,
        &["snapshot", "--output", "json", "--group-pattern", &pattern],
    )
    .await
    .ok();
    assert_eq!(note_lines(&direct.stderr), Vec::<&str>::new());
    let direct = rows(&show(&store, &snapshot_id(&direct)).await);
    let reference = ov(
        &store,
        &[
            "--librdkafka-only",
            "snapshot",
            "--output",
            "json",
            "--group-pattern",
            &pattern,
        ],
    )
    .await
    .ok();
    let reference = rows(&show(&store, &snapshot_id(&reference)).await);
    assert_eq!(direct.len(), GROUPS * 2);
    assert_eq!(direct, reference, "direct path and librdkafka, row for row");
    assert_eq!(direct, expected, "what was committed");

    // The real tool on every one of the groups, in one run (a few seconds).
    let mut args = vec!["--describe"];
    for (group, _) in &commits {
        args.extend(["--group", group.as_str()]);
    }
    let out = kcg::kcg(&args).await;
    groups::assert_tool_ok("kafka-consumer-groups --describe (every group)", &out);
    let from_tool: BTreeSet<Row> = parse_kcg_describe(&out.stdout)
        .into_iter()
        .filter_map(|r| Some((r.group, r.topic, r.partition, r.current_offset?)))
        .collect();
    assert_eq!(direct, from_tool, "kafka-consumer-groups --describe");
}

#[tokio::test(flavor = "multi_thread")]
async fn show_and_diff_list_a_share_group_and_export_leaves_it_out_unless_named() {
    if !env::require_kafka() {
        return;
    }
    let (topic, share_group) = share_group_with_progress("gt-share-archive").await;
    let classic = unique_name("gt-share-archive-classic");
    kafka::consume_and_commit(&classic, &topic, Take::per_partition(&[(0, 7)])).await;
    let (dir, store) = local_store();
    let old = snapshot(&store, &["--group", &share_group, "--group", &classic]).await;

    // Two more records acknowledged: the start offset moves from 4 to 6.
    share::consume(&share_group, &topic, 2).await;
    wait_share_partition(&share_group, &topic, 0, 6, 4).await;
    let new = snapshot(&store, &["--group", &share_group, "--group", &classic]).await;

    let table = ov(&store, &["show", &new]).await.ok();
    let line = table
        .stdout
        .lines()
        .find(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            cells.first() == Some(&share_group.as_str()) && cells.get(4) == Some(&"0")
        })
        .unwrap_or_else(|| panic!("share group not listed:\n{}", table.stdout));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells,
        vec![
            share_group.as_str(),
            "share",
            "Empty",
            topic.as_str(),
            "0",
            "6",
            "0",
            "10",
            "4"
        ],
        "{}",
        table.stdout
    );

    let diff = ov(&store, &["diff", &old, &new, "--output", "json"])
        .await
        .ok()
        .json();
    let changed: Vec<&Value> = diff["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .filter(|p| p["group"] == share_group.as_str() && p["partition"] == 0)
        .collect();
    assert_eq!(changed.len(), 1, "{diff:#}");
    let p = changed[0];
    assert_eq!(
        (
            p["topic"].as_str(),
            p["partition"].as_i64(),
            p["change"].as_str(),
            p["old"].as_i64(),
            p["new"].as_i64(),
            p["delta"].as_i64(),
            p["direction"].as_str()
        ),
        (
            Some(topic.as_str()),
            Some(0),
            Some("changed"),
            Some(4),
            Some(6),
            Some(2),
            Some("forward")
        ),
        "{diff:#}"
    );
    let table = ov(&store, &["diff", &old, &new]).await.ok();
    assert!(
        table.stdout.contains(share_group.as_str()),
        "{}",
        table.stdout
    );
    // The cluster now is the new snapshot: `diff --live` reads the share group's start offsets
    // (the snapshot says it is a share group) and finds the same changes, in batches of one
    // partition too.
    for batch in ["10000", "1"] {
        let live = ov(
            &store,
            &[
                "diff",
                &old,
                "--live",
                "--all",
                "--batch-partitions",
                batch,
                "--output",
                "json",
            ],
        )
        .await
        .ok()
        .json();
        let all = ov(&store, &["diff", &old, &new, "--all", "--output", "json"])
            .await
            .ok()
            .json();
        assert_eq!(live["partitions"], all["partitions"], "{live:#}");
        assert_eq!(live["summary"], all["summary"], "{live:#}");
    }

    // export: the share group only when named.
    let file = dir.path().join("all.csv");
    let file = file.to_str().expect("UTF-8");
    let all = ov(&store, &["export", &new, "--file", file]).await.ok();
    assert!(
        all.stderr
            .contains(&format!("note: left out share group(s) {share_group}")),
        "{}",
        all.stderr
    );
    // One group is left, so it is written in the one-group form (topic,partition,offset).
    assert_eq!(
        std::fs::read_to_string(file).expect("export file"),
        format!("{topic},0,7\n")
    );
    let named = dir.path().join("share.csv");
    let named = named.to_str().expect("UTF-8");
    let one = ov(
        &store,
        &["export", &new, "--group", &share_group, "--file", named],
    )
    .await
    .ok();
    assert!(!one.stderr.contains("left out"), "{}", one.stderr);
    let shown = show(&store, &new).await;
    let expected: String = offsets_on(group_of(&shown, &share_group), &topic)
        .into_iter()
        .map(|(partition, offset)| format!("{topic},{partition},{offset}\n"))
        .collect();
    assert!(
        expected.starts_with(&format!("{topic},0,6\n")),
        "{expected}"
    );
    assert_eq!(
        std::fs::read_to_string(named).expect("export file"),
        expected
    );
}
