use std::collections::BTreeMap;

use super::*;
use crate::model::{GroupState, GroupType, PartitionOffset};

fn part(topic: &str, partition: i32, offset: i64) -> PartitionOffset {
    PartitionOffset {
        leader_epoch: Some(3),
        topic_id: Some("id".into()),
        ..PartitionOffset::new(topic, partition, offset)
    }
}

fn group(partitions: Vec<PartitionOffset>) -> GroupSnapshot {
    GroupSnapshot {
        group_id: "g".into(),
        state: GroupState::Empty,
        protocol_type: "consumer".into(),
        group_type: GroupType::Classic,
        members: Vec::new(),
        connector: None,
        configs: BTreeMap::new(),
        partitions,
    }
}

fn connector(name: &str, kind: &str, config: &[(&str, &str)]) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: name.into(),
        connect_url: "http://c".into(),
        connector_type: kind.into(),
        group_id: None,
        config: config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        redacted_keys: Vec::new(),
        state: "RUNNING".into(),
        tasks: Vec::new(),
        offsets: None,
        offsets_unavailable: None,
    }
}

fn policy(alias: &str) -> TopicMap {
    TopicMap::parse::<&str>(&[], Some(&format!("default:{alias}"))).unwrap()
}

#[test]
fn renaming_drops_what_belongs_to_the_other_cluster_and_keeps_order() {
    let map = TopicMap::parse(&["b=a2"], Some("default:primary")).unwrap();
    let g = rename_group(
        &map,
        group(vec![
            part("a", 0, 5),
            part("b", 0, 6),
            part("__consumer_offsets", 1, 7),
        ]),
    );
    let names: Vec<(&str, i64)> = g
        .partitions
        .iter()
        .map(|p| (p.topic.as_str(), p.offset))
        .collect();
    // `b` is `a2` by the rule and sorts before `primary.a`; an internal topic keeps its name.
    assert_eq!(
        names,
        vec![("__consumer_offsets", 7), ("a2", 6), ("primary.a", 5)]
    );
    let renamed = &g.partitions[1];
    assert_eq!((renamed.leader_epoch, &renamed.topic_id), (None, &None));
    assert_eq!(g.partitions[0].topic_id.as_deref(), Some("id"));
}

#[test]
fn a_sink_connector_gets_its_topics_renamed_and_a_source_connector_a_note() {
    let mut m = Mirror::new(policy("primary"), Method::Auto, None, None);
    let mut connectors = vec![
        connector("sink", "sink", &[("topics", "orders, payments")]),
        connector("re", "sink", &[("topics.regex", "orders.*")]),
        connector("src", "source", &[("topic", "x")]),
    ];
    m.carry_connectors(&mut connectors).unwrap();
    assert_eq!(
        connectors[0].config["topics"],
        "primary.orders,primary.payments"
    );
    assert!(m.connector_notes["sink"][0].contains("topics=primary.orders,primary.payments"));
    assert_eq!(connectors[1].config["topics.regex"], "orders.*");
    assert!(m.connector_notes["re"][0].contains("topics.regex=orders.* is kept"));
    assert!(m.connector_notes["src"][0].contains("copied as they are"));

    let mut internal = vec![connector(
        "bad",
        "sink",
        &[("topics", "__consumer_offsets")],
    )];
    let err = m.carry_connectors(&mut internal).unwrap_err().to_string();
    assert!(
        err.contains("connector bad") && err.contains("never carries over"),
        "{err}"
    );
}

fn sync(up: i64, down: i64) -> OffsetSync {
    OffsetSync {
        topic: "orders".into(),
        partition: 0,
        upstream_offset: up,
        downstream_offset: down,
    }
}

#[test]
fn mirror_maker_answers_from_its_checkpoint_at_the_offset_else_from_offset_syncs() {
    let target = ("primary.orders".to_string(), 0);
    let mut records = MirrorRecords::default();
    records.syncs.insert(
        ("orders".into(), 0),
        vec![sync(0, 0), sync(100, 90), sync(40, 35)],
    );
    records.checkpoints.insert(
        ("g".into(), target.clone()),
        Checkpoint {
            group: "g".into(),
            topic: target.0.clone(),
            partition: 0,
            upstream_offset: 50,
            downstream_offset: 9,
            metadata: String::new(),
        },
    );
    let at = |offset: i64| {
        records
            .answer("g", &target, "orders", offset)
            .map(|a| a.offset)
    };
    // The checkpoint, where it is at the offset.
    assert_eq!(at(50), Some(9));
    // Else the newest sync at or before the offset: exactly on it, or one past it.
    assert_eq!(at(40), Some(35));
    assert_eq!(at(41), Some(36));
    assert_eq!(at(99), Some(36));
    assert_eq!(at(100), Some(90));
    assert_eq!(at(0), Some(0));
    // Another group has no checkpoint but the same syncs; another partition has none.
    assert_eq!(
        records.answer("h", &target, "orders", 50).map(|a| a.offset),
        Some(36)
    );
    assert_eq!(
        records.answer("g", &("primary.orders".into(), 1), "orders", 50),
        None
    );
}

#[test]
fn carrying_renames_refuses_what_is_never_replicated_and_two_topics_made_one() {
    let m = Mirror::new(policy("primary"), Method::Auto, None, None);
    let carried = m
        .rename(&[group(vec![
            part("orders", 0, 5),
            part("__consumer_offsets", 3, 7),
        ])])
        .unwrap();
    let parts = &carried.parts;
    assert_eq!(carried.groups[0].partitions[0].topic, "primary.orders");
    let key = |t: &str, p: i32| ("g".to_string(), (t.to_string(), p));
    assert_eq!(carried.decisions[&key("primary.orders", 0)].0, "orders");
    assert!(matches!(
        &carried.decisions[&key("__consumer_offsets", 3)].1,
        Decision::Refused { why, .. } if why.contains("never carries over")
    ));
    // Only the replicated partition is translated.
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].1, ("primary.orders".to_string(), 0));

    let merged = Mirror::new(
        TopicMap::parse(&["re:(a|b)=c"], None).unwrap(),
        Method::Auto,
        None,
        None,
    );
    let err = merged
        .rename(&[group(vec![part("a", 0, 1), part("b", 0, 2)])])
        .unwrap_err()
        .to_string();
    assert!(err.contains("topics a and b are both c"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Translation by timestamp and fingerprint on constructed target logs: the bound stated on
// `at_time`, case by case. The broker is modelled only where the engine asks it something:
// ListOffsets by time (the first record in offset order whose timestamp is at or after T; the
// log end when there is none) and the reading of the window of records at T.

/// A target partition: `(offset, timestamp ms, fingerprint)` in offset order (offsets may skip,
/// as after compaction), its log start and its log end.
struct Log {
    records: Vec<(i64, i64, &'static str)>,
    start: i64,
    end: i64,
}

/// A log of consecutive offsets from `first`, starting there.
fn log(first: i64, records: &[(i64, &'static str)]) -> Log {
    let records: Vec<_> = records
        .iter()
        .enumerate()
        .map(|(i, &(ts, d))| (first + i as i64, ts, d))
        .collect();
    let end = records.last().map_or(first, |r| r.0 + 1);
    Log {
        records,
        start: first,
        end,
    }
}

impl Log {
    fn list_offsets(&self, ts: i64) -> i64 {
        self.records
            .iter()
            .find(|r| r.0 >= self.start && r.1 >= ts)
            .map_or(self.end, |r| r.0)
    }
}

/// The offset `--translate timestamp` gives the partition whose last consumed record has time
/// `ts` and fingerprint `digest`, through the engine's own steps: the span at `ts`, the window
/// of it that is read, `at_time`, then `decide`. None: refused or before the log start.
fn translated(log: &Log, ts: i64, digest: Option<&str>) -> Option<i64> {
    let span = (log.list_offsets(ts), log.list_offsets(ts + 1));
    let read: Vec<RecordPrint> = same_time_window(span)
        .map(|(from, until)| {
            log.records
                .iter()
                .filter(|r| r.0 >= from && r.0 < until)
                .map(|&(offset, ts, d)| RecordPrint {
                    offset,
                    timestamp: Some(ts),
                    digest: d.to_string(),
                    key: None,
                    value: None,
                })
                .collect()
        })
        .unwrap_or_default();
    let when = chrono::DateTime::from_timestamp_millis(ts).unwrap();
    let facts = Facts {
        source_offset: 1_000,
        identity: IdentityCheck::Unchecked("not checked (--translate)".into()),
        by_time: at_time(when, span, (log.start, log.end), digest, &read),
        checkpoint: None,
        source_log_start: Some(0),
        target_log_start: Some(log.start),
    };
    match decide::decide(Method::Timestamp, &facts) {
        Decision::Target { offset, .. } => Some(offset),
        _ => None,
    }
}

/// What the bound on `at_time` says of a case.
#[derive(Debug, Clone, Copy)]
enum Bound {
    /// The exact position.
    Exact,
    /// `exact - n ..= exact`: at most n records processed again, none skipped.
    Reprocess(i64),
    /// No offset (the partition is refused, or out of range).
    NoOffset,
}

fn check(name: &str, got: Option<i64>, exact: i64, bound: Bound) {
    match (bound, got) {
        (Bound::Exact, Some(v)) => assert_eq!(v, exact, "{name}: not exact"),
        (Bound::Reprocess(n), Some(v)) => assert!(
            v <= exact && exact - v <= n,
            "{name}: {v} is not within {n} records before {exact}"
        ),
        (Bound::NoOffset, None) => {}
        (bound, got) => panic!("{name}: {got:?}, where the bound says {bound:?}"),
    }
}

/// (case, target log, T, fingerprint, exact position, bound).
type Case = (&'static str, Log, i64, Option<&'static str>, i64, Bound);

#[test]
fn translation_by_time_is_exact_or_within_the_stated_bound() {
    // n = the records at T on the target; the Reprocess bounds are n - 1 (an identical record
    // before R) and n (more than MAX_SAME_TIME at T, R not among the first).
    let big: Vec<(i64, &'static str)> = (0..1500)
        .map(|i| (500, if i == 1200 { "R" } else { "o" }))
        .collect();
    let big_early: Vec<(i64, &'static str)> = (0..1500)
        .map(|i| (500, if i == 10 { "R" } else { "o" }))
        .collect();
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        // (case, target log, T, fingerprint, exact position E, bound)
        ("unique timestamps, same offsets",
            log(0, &[(100, "a"), (200, "R"), (300, "b")]), 200, Some("R"), 2, Bound::Exact),
        ("unique timestamps, the target's offsets 40 higher",
            log(40, &[(100, "a"), (200, "R"), (300, "b")]), 200, Some("R"), 42, Bound::Exact),
        ("the target's log starts later (records before R gone)",
            log(7, &[(200, "R"), (300, "b")]), 200, Some("R"), 8, Bound::Exact),
        ("R is the last record of the target",
            log(0, &[(100, "a"), (200, "R")]), 200, Some("R"), 2, Bound::Exact),
        ("equal timestamps, R first of three",
            log(0, &[(100, "a"), (200, "R"), (200, "b"), (200, "c")]), 200, Some("R"), 2, Bound::Exact),
        ("equal timestamps, R last of three",
            log(0, &[(100, "a"), (200, "b"), (200, "c"), (200, "R"), (300, "d")]), 200, Some("R"), 4, Bound::Exact),
        ("an identical record after R",
            log(0, &[(200, "R"), (200, "R"), (300, "d")]), 200, Some("R"), 1, Bound::Exact),
        ("an identical record right before R (n = 2)",
            log(0, &[(100, "a"), (200, "R"), (200, "R"), (300, "d")]), 200, Some("R"), 3, Bound::Reprocess(1)),
        ("an identical record two before R (n = 4)",
            log(0, &[(200, "R"), (200, "b"), (200, "R"), (200, "c")]), 200, Some("R"), 3, Bound::Reprocess(3)),
        ("the fingerprint matches three records (n = 3)",
            log(0, &[(200, "R"), (200, "R"), (200, "R")]), 200, Some("R"), 3, Bound::Reprocess(2)),
        ("more than MAX_SAME_TIME at T, R among the first",
            log(0, &big_early), 500, Some("R"), 11, Bound::Exact),
        ("more than MAX_SAME_TIME at T, R past the first (n = 1500)",
            log(0, &big), 500, Some("R"), 1201, Bound::Reprocess(1500)),
        ("R deleted on the target, other records at T",
            log(0, &[(200, "b"), (200, "c"), (300, "d")]), 200, Some("R"), 0, Bound::NoOffset),
        ("R deleted on the target, nothing at T",
            log(0, &[(100, "a"), (300, "d")]), 200, Some("R"), 1, Bound::NoOffset),
        ("R not replicated yet",
            log(0, &[(100, "a")]), 200, Some("R"), 1, Bound::NoOffset),
        ("the target's log starts after R",
            log(9, &[(300, "d"), (400, "e")]), 200, Some("R"), 9, Bound::NoOffset),
        ("no fingerprint, R the one record at T",
            log(0, &[(100, "a"), (200, "R"), (300, "b")]), 200, None, 2, Bound::Exact),
        ("no fingerprint, three records at T (n = 3)",
            log(0, &[(200, "b"), (200, "R"), (200, "c")]), 200, None, 2, Bound::Reprocess(3)),
    ];
    for (name, log, ts, digest, exact, bound) in &cases {
        check(name, translated(log, *ts, *digest), *exact, *bound);
    }
}

#[test]
fn compaction_gaps_and_a_later_log_start_leave_the_translation_exact() {
    // Offsets skip where compaction removed records, around R and inside the run at T; the log
    // start is past the first record kept (deleted records).
    let gaps = |start| Log {
        records: vec![
            (3, 100, "a"),
            (10, 200, "b"),
            (14, 200, "R"),
            (15, 200, "c"),
            (40, 300, "d"),
        ],
        start,
        end: 41,
    };
    #[rustfmt::skip]
    let cases = [
        // (case, log start, bound); the exact position is 15 in each
        ("gaps around and inside the run", 3, Bound::Exact),
        ("gaps, log start after the first kept record", 5, Bound::Exact),
        ("gaps, log start inside the run at T", 12, Bound::Exact),
        ("gaps, log start right after R", 15, Bound::NoOffset),
    ];
    for (name, start, bound) in cases {
        check(name, translated(&gaps(start), 200, Some("R")), 15, bound);
    }
}

#[test]
fn without_a_fingerprint_a_missing_record_can_be_skipped_by_one() {
    // On the source R and then c shared T; the target lost R: c is the one record at T and is
    // taken for R, so the translation is one past the exact position (c, never consumed, is
    // skipped). With the fingerprint the partition is refused instead.
    let target = log(0, &[(100, "a"), (200, "c"), (300, "d")]);
    assert_eq!(translated(&target, 200, None), Some(2));
    let exact = 1;
    assert_eq!(translated(&target, 200, None).unwrap() - exact, 1);
    assert_eq!(translated(&target, 200, Some("R")), None);
}

#[test]
fn out_of_order_timestamps_never_skip_but_escape_the_same_time_bound() {
    #[rustfmt::skip]
    let cases = [
        // R (T = 200) behind a record stamped later: ListOffsets at T finds that one, no record
        // of the span has T, the partition is refused.
        ("R behind a later-stamped record",
            log(0, &[(100, "a"), (300, "b"), (200, "R"), (400, "c")]), 3, Bound::NoOffset),
        // An identical record at T before the later-stamped one is taken: 2 records before the
        // exact position, though the span at T holds one record (n = 1).
        ("an identical record before a later-stamped one",
            log(0, &[(200, "R"), (300, "b"), (200, "R"), (400, "c")]), 3, Bound::Reprocess(2)),
        // Records stamped earlier inside the span are passed over: still exact.
        ("an earlier-stamped record inside the span",
            log(0, &[(200, "b"), (150, "x"), (200, "R"), (300, "c")]), 3, Bound::Exact),
    ];
    for (name, log, exact, bound) in &cases {
        check(name, translated(log, 200, Some("R")), *exact, *bound);
    }
    // Not the same-time bound (n - 1 = 0), but no skip either.
    assert_eq!(translated(&cases[1].1, 200, Some("R")), Some(1));
}
