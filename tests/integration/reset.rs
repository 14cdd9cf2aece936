//! `reset` against the real cluster, with the real `kafka-consumer-groups --reset-offsets` as the
//! oracle: every scenario plans the offsets the tool would set (out-of-range ones refused, or
//! clamped as the tool clamps them; a time after a partition's last record its log end, noted), an
//! executed reset leaves exactly the plan and its pre-reset snapshot restores what was there, and
//! an active group is refused.

mod connectors;
mod review;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::support::groups::parse_new_offsets;
use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_store, ov};
use crate::support::{env, kcg, unique_name};

/// A topic of 3 partitions, 20 records each one every 3 minutes from an hour ago (so times and
/// durations fall between records with minutes to spare), log-start moved to 2 on partition 0,
/// and a group that committed 5, 10 and 15.
struct Fixture {
    topic: String,
    group: String,
    /// The first record's timestamp (ms).
    base: i64,
}

async fn fixture(prefix: &str) -> Fixture {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 3).await;
    let now = chrono::Utc::now().timestamp_millis();
    let base = now - 3_600_000;
    let times: Vec<i64> = (0..20).map(|i| base + i * 180_000).collect();
    for p in 0..3 {
        kafka::produce_at(&topic, p, &times).await;
    }
    let group = unique_name(&format!("{prefix}-g"));
    kafka::consume_and_commit(
        &group,
        &topic,
        Take::per_partition(&[(0, 5), (1, 10), (2, 15)]),
    )
    .await;
    kafka::delete_records_before(&topic, 0, 2).await;
    Fixture { topic, group, base }
}

/// The targets of a reset's dry run, per partition, from its JSON plan.
fn planned(doc: &Value) -> BTreeMap<i32, i64> {
    doc["plan"]["groups"][0]["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no plan in {doc:#}"))
        .iter()
        // Partitions outside the reset are listed, left as they are.
        .filter(|p| p["action"] != "not-in-snapshot")
        .map(|p| {
            (
                p["partition"].as_i64().unwrap() as i32,
                p["target"]
                    .as_i64()
                    .unwrap_or_else(|| panic!("no target: {p:#}")),
            )
        })
        .collect()
}

/// `ARGS... --execute --output json`, which must apply and verify; returns the document.
pub(super) async fn applied(store: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--execute", "--output", "json"]);
    let done = ov(store, &all).await.ok().json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true, "{done:#}");
    done
}

/// What `kafka-consumer-groups --reset-offsets ... --dry-run` would set.
async fn kcg_new_offsets(group: &str, args: &[&str]) -> BTreeMap<i32, i64> {
    let mut all = vec!["--group", group, "--reset-offsets"];
    all.extend_from_slice(args);
    all.push("--dry-run");
    let out = kcg::kcg(&all).await;
    assert!(
        out.success,
        "kafka-consumer-groups {all:?}: {}{}",
        out.stdout, out.stderr
    );
    parse_new_offsets(&out.stdout)
        .into_iter()
        .map(|r| (r.partition, r.offset))
        .collect()
}

fn millis_text(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_scenario_plans_what_kafka_consumer_groups_would_set() {
    if !env::require_kafka() {
        return;
    }
    let f = fixture("reset-kcg").await;
    let (dir, store) = local_store();
    let csv = dir.path().join("offsets.csv");
    std::fs::write(&csv, format!("{t},0,4\n{t},1,9\n{t},2,3\n", t = f.topic)).unwrap();
    let csv = csv.display().to_string();
    let at = millis_text(f.base + 22 * 60_000 + 30_000);
    let topic_t02 = format!("{}:0,2", f.topic);
    // (scope, scenario): the same words for both tools.
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["--topic", &f.topic], vec!["--to-earliest"]),
        (vec!["--topic", &f.topic], vec!["--to-latest"]),
        (vec!["--all-topics"], vec!["--to-current"]),
        (vec!["--topic", &f.topic], vec!["--to-offset", "12"]),
        (vec!["--topic", &f.topic], vec!["--shift-by", "-3"]),
        (vec!["--all-topics"], vec!["--shift-by", "2"]),
        (vec!["--topic", &f.topic], vec!["--to-datetime", &at]),
        (vec!["--topic", &f.topic], vec!["--by-duration", "PT30M30S"]),
        (vec![], vec!["--from-file", &csv]),
        (vec!["--topic", &topic_t02], vec!["--to-latest"]),
    ];
    for (scope, scenario) in &cases {
        let mut ours = vec!["reset", "--group", &f.group];
        ours.extend(scope.iter().copied());
        ours.extend(scenario.iter().copied());
        ours.extend(["--output", "json"]);
        let doc = ov(&store, &ours).await.ok().json();
        assert_eq!(doc["status"], "dry-run", "{doc:#}");
        let mut theirs = scope.clone();
        theirs.extend(scenario.iter().copied());
        let want = kcg_new_offsets(&f.group, &theirs).await;
        assert!(!want.is_empty(), "{theirs:?}");
        assert_eq!(planned(&doc), want, "{scope:?} {scenario:?}: {doc:#}");
    }
    // The time cases land where the fixture says: record 8 (at base + 24 min) and record 10.
    let doc = ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--topic",
            &f.topic,
            "--to-datetime",
            &at,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(planned(&doc), BTreeMap::from([(0, 8), (1, 8), (2, 8)]));

    // Out of range: kafka-consumer-groups clamps without a word; here it is refused, and clamped
    // only when asked, to the same offsets.
    for scenario in [vec!["--to-offset", "100"], vec!["--shift-by", "-10"]] {
        let mut ours = vec!["reset", "--group", &f.group, "--topic", &f.topic];
        ours.extend(scenario.iter().copied());
        let refused = ov(&store, &ours).await.expect_code(7);
        assert!(
            refused.stdout.contains("--on-out-of-range clamp"),
            "{}{}",
            refused.stdout,
            refused.stderr
        );
        ours.extend(["--on-out-of-range", "clamp", "--output", "json"]);
        let doc = ov(&store, &ours).await.ok().json();
        let mut theirs = vec!["--topic", f.topic.as_str()];
        theirs.extend(scenario.iter().copied());
        assert_eq!(
            planned(&doc),
            kcg_new_offsets(&f.group, &theirs).await,
            "{scenario:?}"
        );
    }
    // Nothing above changed anything.
    assert_eq!(
        kcg::committed(&f.group, &f.topic).await,
        BTreeMap::from([(0, 5), (1, 10), (2, 15)])
    );
}

/// The note of each partition of a reset's dry run, from its JSON plan.
fn notes(doc: &Value) -> BTreeMap<i32, Option<String>> {
    doc["plan"]["groups"][0]["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no plan in {doc:#}"))
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap() as i32,
                p["note"].as_str().map(String::from),
            )
        })
        .collect()
}

/// The partitions `kafka-consumer-groups --reset-offsets --to-datetime` says it found no record
/// at or after the time in, and set to their log end ("Falling back to latest known offset").
fn kcg_fell_back(stdout: &str) -> BTreeSet<i32> {
    stdout
        .lines()
        .filter(|l| l.contains("Falling back to latest known offset"))
        .filter_map(|l| {
            l.trim()
                .strip_prefix("Warn: Partition ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn kcg_fell_back_reads_the_warnings_of_kafka_consumer_groups() {
    // Kafka 4.3.1's, with a time after the last record of partitions 2 and 1.
    let stdout = "
Warn: Partition 2 from topic orders is empty. Falling back to latest known offset.

Warn: Partition 1 from topic orders is empty. Falling back to latest known offset.

GROUP                                 TOPIC                               PARTITION  NEW-OFFSET
billing                               orders                              2          0
billing                               orders                              1          5
billing                               orders                              0          11
";
    assert_eq!(kcg_fell_back(stdout), BTreeSet::from([1, 2]));
    assert!(kcg_fell_back("GROUP TOPIC PARTITION NEW-OFFSET\n").is_empty());
}

/// `--to-datetime` after the last record of a partition: kafka-consumer-groups falls back to its
/// log end, and only a warning beside its table says so. The plan sets the same offsets, and
/// says it on the row of each such partition (an empty one too), not on one that has a record
/// after the instant.
#[tokio::test(flavor = "multi_thread")]
async fn to_datetime_after_the_last_record_plans_the_log_end_with_a_note() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("reset-past");
    kafka::create_topic(&topic, 3).await;
    // Partition 0: 20 records, one every 3 minutes from an hour ago; partition 1: the first 5
    // of them (the last 48 minutes ago); partition 2: none.
    let base = chrono::Utc::now().timestamp_millis() - 3_600_000;
    let times: Vec<i64> = (0..20).map(|i| base + i * 180_000).collect();
    kafka::produce_at(&topic, 0, &times).await;
    kafka::produce_at(&topic, 1, &times[..5]).await;
    let group = unique_name("reset-past-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 2)])).await;
    let (_dir, store) = local_store();
    // Between record 10 and record 11 of partition 0; after every record of partitions 1 and 2.
    let at = millis_text(base + 31 * 60_000 + 30_000);
    let ours = [
        "reset",
        "--group",
        &group,
        "--topic",
        &topic,
        "--to-datetime",
        &at,
    ];
    let mut json = ours.to_vec();
    json.extend(["--output", "json"]);
    let doc = ov(&store, &json).await.ok().json();
    assert_eq!(doc["status"], "dry-run", "{doc:#}");

    let tool = kcg::kcg(&[
        "--group",
        &group,
        "--reset-offsets",
        "--topic",
        &topic,
        "--to-datetime",
        &at,
        "--dry-run",
    ])
    .await;
    assert!(tool.success, "{}{}", tool.stdout, tool.stderr);
    let want: BTreeMap<i32, i64> = parse_new_offsets(&tool.stdout)
        .into_iter()
        .map(|r| (r.partition, r.offset))
        .collect();
    assert_eq!(
        want,
        BTreeMap::from([(0, 11), (1, 5), (2, 0)]),
        "{}",
        tool.stdout
    );
    assert_eq!(planned(&doc), want, "{doc:#}");
    // The partitions the tool says it fell back on are the ones the plan notes.
    assert_eq!(
        kcg_fell_back(&tool.stdout),
        BTreeSet::from([1, 2]),
        "{}",
        tool.stdout
    );

    let note = |end: i64| {
        Some(format!(
            "no record at or after {at}: target is the log end {end} (as kafka-consumer-groups)"
        ))
    };
    assert_eq!(
        notes(&doc),
        BTreeMap::from([(0, None), (1, note(5)), (2, note(0))]),
        "{doc:#}"
    );
    // The table's NOTE column says it too.
    let table = ov(&store, &ours).await.ok();
    assert!(
        table.stdout.contains(note(5).unwrap().as_str()),
        "{}",
        table.stdout
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 3), (1, 2)])
    );
    // Executed: the document of the applied reset (planned again before the commits) keeps the
    // notes, and the real tool sees the targets it computed.
    let mut run = json.clone();
    run.extend(["--execute", "--settle", "0s"]);
    let done = ov(&store, &run).await.ok().json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(
        notes(&done),
        BTreeMap::from([(0, None), (1, note(5)), (2, note(0))]),
        "{done:#}"
    );
    assert_eq!(kcg::committed(&group, &topic).await, want);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executed_reset_leaves_the_plan_and_its_pre_reset_snapshot_undoes_it() {
    if !env::require_kafka() {
        return;
    }
    let f = fixture("reset-exec").await;
    let (_dir, store) = local_store();
    let args = [
        "reset",
        "--group",
        &f.group,
        "--all-topics",
        "--shift-by",
        "-3",
        "--execute",
        "--output",
        "json",
    ];
    let run = ov(&store, &args).await.ok();
    let done = run.json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true);
    let id = done["pre_reset_snapshot"]
        .as_str()
        .expect("pre-reset id")
        .to_string();
    assert!(
        run.stderr
            .contains(&format!("pre-reset snapshot {id} written")),
        "{}",
        run.stderr
    );
    let moved = BTreeMap::from([(0, 2), (1, 7), (2, 12)]);
    assert_eq!(planned(&done), moved);
    assert_eq!(kcg::committed(&f.group, &f.topic).await, moved);

    // The pre-reset snapshot is listed with its kind and scenario, and --latest passes it over
    // unless asked.
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let s = &listed["snapshots"][0];
    assert_eq!(
        (s["id"].as_str(), s["kind"].as_str()),
        (Some(id.as_str()), Some("pre-reset")),
        "{listed:#}"
    );
    assert_eq!(s["tags"]["reset"], "--shift-by -3", "{listed:#}");
    ov(&store, &["restore", "--latest", "--group", &f.group])
        .await
        .expect_code(4);
    let chosen = ov(
        &store,
        &[
            "restore",
            "--latest",
            "--include-pre-reset",
            "--group",
            &f.group,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(chosen["snapshot"], id.as_str());

    // Restoring it undoes the reset.
    ov(&store, &["restore", &id, "--execute"]).await.ok();
    assert_eq!(
        kcg::committed(&f.group, &f.topic).await,
        BTreeMap::from([(0, 5), (1, 10), (2, 15)])
    );

    // An absolute reset run twice: the second finds nothing to change and writes nothing.
    let to_offset = [
        "reset",
        "--group",
        &f.group,
        "--all-topics",
        "--to-offset",
        "9",
        "--execute",
        "--output",
        "json",
    ];
    assert_eq!(
        ov(&store, &to_offset).await.ok().json()["status"],
        "applied"
    );
    let again = ov(&store, &to_offset).await.ok().json();
    assert_eq!(again["status"], "nothing-to-change", "{again:#}");
    assert!(again["pre_reset_snapshot"].is_null(), "{again:#}");
    assert_eq!(
        kcg::committed(&f.group, &f.topic).await,
        BTreeMap::from([(0, 9), (1, 9), (2, 9)])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_active_group_is_refused_and_nothing_changes() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("reset-active");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 10).await;
    let group = unique_name("reset-active-g");
    let consumer = ActiveConsumer::start(&group, &topic, Take::per_partition(&[(0, 6)])).await;
    let (_dir, store) = local_store();
    let run = ov(
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--all-topics",
            "--to-earliest",
            "--execute",
        ],
    )
    .await
    .expect_code(6);
    assert!(
        run.stderr.contains("stop those consumers"),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 6)])
    );
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    assert_eq!(
        listed["snapshots"].as_array().unwrap().len(),
        0,
        "no pre-reset snapshot: {listed:#}"
    );
    drop(consumer);
}
