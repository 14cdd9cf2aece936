use super::*;
use crate::log::testing;

fn p(topic: &str, partition: i32, offset: i64, log_end: i64) -> PartitionOffset {
    PartitionOffset {
        log_start_offset: Some(0),
        log_end_offset: Some(log_end),
        topic_id: Some("id".into()),
        ..PartitionOffset::new(topic, partition, offset)
    }
}

fn group(id: &str, partitions: Vec<PartitionOffset>) -> GroupSnapshot {
    GroupSnapshot {
        group_id: id.into(),
        state: crate::kafka::GroupState::Empty,
        protocol_type: "consumer".into(),
        group_type: crate::kafka::GroupType::Classic,
        members: vec![],
        connector: None,
        configs: Default::default(),
        partitions,
    }
}

#[test]
fn the_group_gets_the_positions_of_the_instant_and_keeps_what_the_snapshot_knew() {
    let g = group("g", vec![p("t", 0, 5, 50), p("t", 1, 6, 60)]);
    let mut state = base_of(&g);
    // At the instant: partition 0 moved to 9, partition 1 was deleted, partition 2 is new.
    let pos = |offset| Position {
        offset,
        leader_epoch: Some(1),
        metadata: String::new(),
        topic_id: None,
        committed_at: Some(1),
    };
    state.insert(("g".into(), "t".into(), 0), pos(9));
    state.remove(&("g".into(), "t".into(), 1));
    state.insert(("g".into(), "t".into(), 2), pos(3));
    state.insert(("other".into(), "t".into(), 0), pos(77));
    let out = at_instant(&g, &state);
    let got: Vec<(i32, i64, Option<i64>, Option<&str>)> = out
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition,
                p.offset,
                p.log_end_offset,
                p.topic_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(got, [(0, 9, Some(50), Some("id")), (2, 3, None, None)]);
    assert_eq!(out.partitions[0].leader_epoch, Some(1));
}

/// An Empty group captured with no commits is a base like any other: its offsets at the
/// instant are the commits after it, and it is not a newcomer.
#[test]
fn a_base_that_holds_the_group_with_no_offsets_is_its_base() {
    let g = group("e", vec![]);
    let mut state = base_of(&g);
    assert!(state.is_empty(), "{state:?}");
    state.insert(
        ("e".into(), "t".into(), 1),
        Position {
            offset: 4,
            leader_epoch: None,
            metadata: String::new(),
            topic_id: None,
            committed_at: Some(1),
        },
    );
    let out = at_instant(&g, &state);
    let got: Vec<(i32, i64)> = out
        .partitions
        .iter()
        .map(|p| (p.partition, p.offset))
        .collect();
    assert_eq!(got, [(1, 4)]);
    assert_eq!(out.group_id, "e");
}

/// A commit of `group` on `topic`, at `at`.
fn commit_on(group: &str, topic: &str, partition: i32, offset: i64, at: i64) -> Timed {
    let mut record = testing::commit(group, partition, offset, at);
    if let LogRecord::OffsetCommit { topic: t, .. } = &mut record {
        *t = topic.into();
    }
    Timed::new(record, at)
}

#[test]
fn a_group_is_replayed_from_its_own_records_up_to_the_instant_and_the_selected_topics() {
    let commit = |g: &str, partition, offset, at| commit_on(g, "t", partition, offset, at);
    let later = vec![
        commit("g", 0, 8, 110),
        commit("other", 0, 99, 115),
        // A rebalance's metadata moves nothing and is not counted.
        Timed::new(
            LogRecord::GroupMetadata {
                group: "g".into(),
                kind: crate::log::record::GroupKind::Classic {
                    protocol_type: Some("consumer".into()),
                },
                deleted: false,
            },
            118,
        ),
        commit_on("g", "u", 0, 4, 120),
        commit("g", 0, 15, 130),
        Timed::new(testing::tombstone("g", 1), 140),
        Timed::new(testing::group_deleted("g"), 150),
        commit("g", 0, 2, 160),
    ];
    let base = group("g", vec![p("t", 0, 3, 30), p("t", 1, 6, 60)]);
    let all = Filter::default();
    let only_t = Filter {
        topics: vec!["t".into()],
        ..Default::default()
    };
    // (instant, filter, (topic, partition, offset) at the instant, records replayed, last)
    type Case<'a> = (
        i64,
        &'a Filter,
        Vec<(&'a str, i32, i64)>,
        usize,
        Option<i64>,
    );
    let cases: Vec<Case> = vec![
        // Before any record: the base as it was.
        (105, &all, vec![("t", 0, 3), ("t", 1, 6)], 0, None),
        // Between two commits: the earlier one; the other group's commit is not counted.
        (
            125,
            &all,
            vec![("t", 0, 8), ("t", 1, 6), ("u", 0, 4)],
            2,
            Some(120),
        ),
        // The log also holds topics the selection leaves out.
        (125, &only_t, vec![("t", 0, 8), ("t", 1, 6)], 2, Some(120)),
        (
            130,
            &all,
            vec![("t", 0, 15), ("t", 1, 6), ("u", 0, 4)],
            3,
            Some(130),
        ),
        // An offset deleted before the instant is gone.
        (145, &all, vec![("t", 0, 15), ("u", 0, 4)], 4, Some(140)),
        // A deleted group has nothing at the instant, until it commits again.
        (155, &all, vec![], 5, Some(150)),
        (500, &all, vec![("t", 0, 2)], 6, Some(160)),
    ];
    for (at, filter, want, records, last) in cases {
        let (out, n, l) = replay_group(&base, &[], &later, at, filter);
        let got: Vec<(&str, i32, i64)> = out
            .partitions
            .iter()
            .map(|p| (p.topic.as_str(), p.partition, p.offset))
            .collect();
        assert_eq!(got, want, "at {at} {filter:?}");
        assert_eq!((n, l), (records, last), "at {at} {filter:?}");
    }
}

#[test]
fn records_before_the_base_are_replayed_first_and_change_only_what_the_base_lacked() {
    let commit = |partition, offset, at| commit_on("g", "t", partition, offset, at);
    // The base (taken at 100) holds partition 0 at 8, the last commit before it, and
    // partition 1 at 2: the transaction that sent 9 for it at 90 committed only after 100.
    let base = group("g", vec![p("t", 0, 8, 50), p("t", 1, 2, 50)]);
    let before = vec![
        commit(0, 5, 60),
        commit(0, 8, 80),
        commit(1, 9, 90),
        commit_on("other", "t", 1, 77, 95),
    ];
    let later = vec![commit(0, 12, 120)];
    let all = Filter::default();
    // (instant, (partition, offset) at the instant, records after the base replayed)
    type Case = (i64, Vec<(i32, i64)>, usize);
    let cases: [Case; 2] = [
        (110, vec![(0, 8), (1, 9)], 0),
        (130, vec![(0, 12), (1, 9)], 1),
    ];
    for (at, want, records) in cases {
        let (out, n, _) = replay_group(&base, &before, &later, at, &all);
        let got: Vec<(i32, i64)> = out
            .partitions
            .iter()
            .map(|p| (p.partition, p.offset))
            .collect();
        assert_eq!((got, n), (want, records), "at {at}");
    }
    // With no record before the base, the base's partition 1 stands.
    let (out, _, _) = replay_group(&base, &[], &later, 130, &all);
    assert_eq!(out.partitions[1].offset, 2);
}

fn manifest(
    partition: i32,
    start: i64,
    last: Option<i64>,
    cluster: &str,
) -> (String, SegmentManifest) {
    let meta = SegmentMeta {
        format_version: "1.0".into(),
        cluster_id: cluster.into(),
        topic: "__consumer_offsets".into(),
        partitions: 50,
        partition,
        start,
        next: start + 10,
        rows: 1,
        ignored: 0,
        unknown: 0,
        first_timestamp: last,
        last_timestamp: last,
        sealed_at: DateTime::from_timestamp_millis(1_000).unwrap(),
        gap: None,
    };
    (
        format!("{}.json", meta.key()),
        SegmentManifest {
            meta,
            file: String::new(),
            size: 0,
            sha256: String::new(),
        },
    )
}

#[test]
fn only_the_segments_of_the_partition_that_can_hold_later_records_are_read_in_log_order() {
    let all = vec![
        manifest(3, 20, Some(300), "c"),
        manifest(3, 0, Some(100), "c"),
        manifest(3, 10, Some(200), "c"),
        manifest(4, 0, Some(900), "c"),
        manifest(3, 30, None, "c"),
    ];
    let starts: Vec<i64> = segments_after(&all, 3, 150)
        .iter()
        .map(|(_, m)| m.meta.start)
        .collect();
    assert_eq!(starts, [10, 20, 30]);
}

#[test]
fn a_segment_of_another_cluster_is_refused() {
    let a = manifest(3, 0, Some(100), "c").1.meta;
    let b = manifest(3, 10, Some(200), "other").1.meta;
    assert_eq!(cluster_problem(&[&a], 3, "c"), None);
    let why = cluster_problem(&[&a, &b], 3, "c").unwrap();
    assert!(
        why.contains("of cluster other, but the snapshot is of cluster c"),
        "{why}"
    );
}

#[test]
fn the_instant_says_where_its_groups_came_from_and_which_are_absent() {
    let t = |ms| DateTime::from_timestamp_millis(ms).unwrap();
    let source = |id: &str, records, committed| Source {
        group_id: id.into(),
        source_partition: 7,
        segments: 2,
        records,
        last_record_at: None,
        committed,
        in_base: id != "n",
    };
    let instant = AtInstant {
        at: t(1_796_292_197_250),
        base_id: "20261203T100000.000Z-abc".into(),
        base_created_at: t(1_796_292_000_000),
        groups: vec![
            AtGroup {
                snapshot: group("a", vec![p("t", 0, 1, 1)]),
                source: source("a", 3, true),
            },
            AtGroup {
                snapshot: group("b", vec![]),
                source: source("b", 1, false),
            },
            AtGroup {
                snapshot: group("n", vec![p("t", 0, 2, 2)]),
                source: source("n", 2, true),
            },
        ],
        segments: 2,
        left_out: vec!["s".into()],
        connectors: vec![],
        sources_as_snapshot: vec!["src".into()],
        undiscovered: vec!["__consumer_offsets[4] (no segment)".into()],
        caveats: vec!["the base is the log from its start".into()],
    };
    assert_eq!(
        instant.describe(),
        "at 2026-12-03T10:03:17.250Z: snapshot 20261203T100000.000Z-abc plus 6 archived record(s) after it from 2 segment(s) (1 not in the base, created after it, replayed from no offsets: n)"
    );
    assert_eq!(instant.newcomers(), ["n"]);
    assert_eq!(instant.absent(), ["b"]);
    let present: Vec<&str> = instant.present().map(|g| g.group_id.as_str()).collect();
    assert_eq!(present, ["a", "n"]);
    let notes = instant.notes();
    assert_eq!(notes.len(), 5, "{notes:?}");
    assert!(notes[0].contains("for b (not yet committed"), "{notes:?}");
    assert!(
        notes[1].contains("source connector(s) src are the base snapshot's"),
        "{notes:?}"
    );
    assert!(
        notes[2].contains("__consumer_offsets[4] (no segment): they could not be looked for"),
        "{notes:?}"
    );
    assert!(notes[3].contains("the log from its start"), "{notes:?}");
    assert!(notes[4].contains("share group(s) s"), "{notes:?}");
}

#[test]
fn a_source_connector_gets_its_base_offsets_then_its_own_records_up_to_the_instant() {
    use serde_json::json;
    let c = ConnectorSnapshot {
        name: "src".into(),
        connect_url: "http://c".into(),
        connector_type: "source".into(),
        group_id: None,
        config: Default::default(),
        redacted_keys: vec![],
        state: "RUNNING".into(),
        tasks: vec![],
        offsets: Some(vec![
            json!({"partition": {"filename": "/a"}, "offset": {"position": 1}}),
            json!({"partition": {"filename": "/b"}, "offset": {"position": 2}}),
        ]),
        offsets_unavailable: None,
    };
    let rec = |connector: &str, file: &str, position: Option<i64>, at: i64| {
        Timed::new(
            LogRecord::SourceOffset {
                connector: connector.into(),
                partition: canonical_json(&json!({ "filename": file })),
                offset: position.map(|p| canonical_json(&json!({ "position": p }))),
            },
            at,
        )
    };
    let later = vec![
        rec("src", "/a", Some(10), 100),
        rec("other", "/a", Some(99), 150),
        rec("src", "/b", None, 200),
        rec("src", "/c", Some(5), 250),
        rec("src", "/a", Some(20), 300),
    ];
    // (instant, want: (file, position) sorted by partition text, records replayed)
    type Case<'a> = (i64, Vec<(&'a str, i64)>, usize);
    let cases: Vec<Case> = vec![
        (50, vec![("/a", 1), ("/b", 2)], 0),
        (100, vec![("/a", 10), ("/b", 2)], 1),
        (200, vec![("/a", 10)], 2),
        (299, vec![("/a", 10), ("/c", 5)], 3),
        (300, vec![("/a", 20), ("/c", 5)], 4),
    ];
    for (at, want, records) in cases {
        let got = source_at(&c, &later, at);
        let offsets: Vec<(String, i64)> = got
            .offsets
            .iter()
            .map(|o| {
                (
                    o["partition"]["filename"].as_str().unwrap().to_string(),
                    o["offset"]["position"].as_i64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, i64)> = want.iter().map(|(f, p)| (f.to_string(), *p)).collect();
        assert_eq!(offsets, want, "at {at}");
        assert_eq!(got.records, records, "at {at}");
    }
}
