use serde_json::{json, Value};

use crate::redact::REDACTED;

use super::*;

fn row(group: &str, topic: &str, partition: i32, offset: i64, log_start: Option<i64>) -> Row {
    Row {
        group: group.into(),
        topic: topic.into(),
        partition,
        offset,
        log_start,
        topic_id: None,
    }
}

fn with_id(mut r: Row, id: &str) -> Row {
    r.topic_id = Some(id.into());
    r
}

fn run(old: Vec<Row>, new: Vec<Row>) -> (Vec<PartitionDiff>, PartitionCounts) {
    let mut out = Vec::new();
    let counts = diff_rows(old.into_iter(), new.into_iter(), |d| out.push(d)).unwrap();
    (out, counts)
}

#[test]
fn partitions_are_added_removed_changed_or_unchanged() {
    use Change::*;
    // (old rows, new rows, expected changes in key order)
    type Expected = Vec<(&'static str, i32, Change, Option<i64>)>;
    let cases: Vec<(Vec<Row>, Vec<Row>, Expected)> = vec![
        (vec![], vec![], vec![]),
        (
            vec![row("g", "t", 0, 5, None)],
            vec![row("g", "t", 0, 5, None)],
            vec![("g", 0, Unchanged { offset: 5 }, None)],
        ),
        (
            vec![row("g", "t", 0, 5, None)],
            vec![row("g", "t", 0, 12, Some(0))],
            vec![(
                "g",
                0,
                Changed {
                    old: 5,
                    new: 12,
                    delta: 7,
                    direction: Direction::Forward,
                },
                None,
            )],
        ),
        (
            vec![row("g", "t", 0, 12, None)],
            vec![row("g", "t", 0, 5, None)],
            vec![(
                "g",
                0,
                Changed {
                    old: 12,
                    new: 5,
                    delta: -7,
                    direction: Direction::Backward,
                },
                None,
            )],
        ),
        (
            vec![row("g", "t", 0, 1, None), row("g", "t", 2, 1, None)],
            vec![row("g", "t", 1, 1, None), row("g", "t", 2, 1, None)],
            vec![
                ("g", 0, Removed { old: 1 }, None),
                ("g", 1, Added { new: 1 }, None),
                ("g", 2, Unchanged { offset: 1 }, None),
            ],
        ),
        // Groups interleave: a group only on one side.
        (
            vec![row("a", "t", 0, 1, None), row("c", "t", 0, 3, None)],
            vec![row("b", "t", 0, 2, None), row("c", "t", 0, 3, None)],
            vec![
                ("a", 0, Removed { old: 1 }, None),
                ("b", 0, Added { new: 2 }, None),
                ("c", 0, Unchanged { offset: 3 }, None),
            ],
        ),
        // The log start moved past the old offset: flagged, changed or not.
        (
            vec![row("g", "t", 0, 10, Some(0)), row("g", "t", 1, 10, Some(0))],
            vec![
                row("g", "t", 0, 10, Some(11)),
                row("g", "t", 1, 30, Some(10)),
            ],
            vec![
                ("g", 0, Unchanged { offset: 10 }, Some(11)),
                (
                    "g",
                    1,
                    Changed {
                        old: 10,
                        new: 30,
                        delta: 20,
                        direction: Direction::Forward,
                    },
                    None,
                ),
            ],
        ),
    ];
    for (i, (old, new, want)) in cases.into_iter().enumerate() {
        let (got, _) = run(old, new);
        let got: Vec<(&str, i32, Change, Option<i64>)> = got
            .iter()
            .map(|d| {
                (
                    d.group.as_str(),
                    d.partition,
                    d.change,
                    d.log_start_past_old,
                )
            })
            .collect();
        assert_eq!(got, want, "case {i}");
    }
}

#[test]
fn counts_sum_records_per_direction() {
    let (diffs, counts) = run(
        vec![
            row("g", "t", 0, 10, None),
            row("g", "t", 1, 10, None),
            row("g", "t", 2, 10, None),
            row("g", "u", 0, 4, None),
        ],
        vec![
            row("g", "t", 0, 15, None),
            row("g", "t", 1, 7, None),
            row("g", "t", 2, 10, None),
            row("h", "t", 0, 1, Some(0)),
        ],
    );
    assert_eq!(diffs.len(), 5);
    assert_eq!(
        counts,
        PartitionCounts {
            added: 1,
            removed: 1,
            changed: 2,
            unchanged: 1,
            forward_records: 5,
            backward_records: 3,
            log_start_past_old: 0,
            topic_recreated: 0,
        }
    );
    assert!(counts.differs());
    let same = run(
        vec![row("g", "t", 0, 1, None)],
        vec![row("g", "t", 0, 1, None)],
    )
    .1;
    assert!(!same.differs());
}

#[test]
fn a_recreated_topic_is_flagged_when_both_sides_know_its_id() {
    // (old id, new id, flagged?)
    let cases = [
        (Some("AAA"), Some("AAA"), false),
        (Some("AAA"), Some("BBB"), true),
        (None, Some("BBB"), false),
        (Some("AAA"), None, false),
    ];
    for (old_id, new_id, flagged) in cases {
        let old = row("g", "t", 0, 10, None);
        let new = row("g", "t", 0, 10, None);
        let old = old_id.map_or(old.clone(), |id| with_id(old, id));
        let new = new_id.map_or(new.clone(), |id| with_id(new, id));
        let (diffs, counts) = run(vec![old], vec![new]);
        assert_eq!(
            diffs[0].topic_recreated.is_some(),
            flagged,
            "{old_id:?} {new_id:?}"
        );
        assert_eq!(diffs[0].is_notable(), flagged);
        assert_eq!(
            counts.differs(),
            flagged,
            "same offsets, so only the id can differ"
        );
        assert_eq!(counts.topic_recreated, u64::from(flagged));
    }
    let (diffs, _) = run(
        vec![with_id(row("g", "t", 0, 10, None), "AAA")],
        vec![with_id(row("g", "t", 0, 3, None), "BBB")],
    );
    assert_eq!(
        diffs[0].topic_recreated,
        Some(TopicIds {
            old: "AAA".into(),
            new: "BBB".into()
        })
    );
}

#[test]
fn unsorted_or_duplicate_rows_are_refused() {
    let cases = [
        (
            vec![row("g", "t", 1, 0, None), row("g", "t", 0, 0, None)],
            vec![],
            "old",
        ),
        (
            vec![],
            vec![row("g", "t", 0, 0, None), row("g", "t", 0, 0, None)],
            "new",
        ),
        (
            vec![row("b", "t", 0, 0, None), row("a", "t", 0, 0, None)],
            vec![row("c", "t", 0, 0, None)],
            "old",
        ),
    ];
    for (old, new, side) in cases {
        let err = diff_rows(old.into_iter(), new.into_iter(), |_| {}).unwrap_err();
        assert_eq!(err.side, side);
    }
}

#[test]
fn the_merge_streams_without_collecting() {
    // A million rows on each side, generated lazily: the diff holds none of them.
    let n = 1_000_000;
    let old = (0..n).map(|i| row("g", "t", i, i64::from(i), None));
    let new = (0..n).map(|i| row("g", "t", i, i64::from(i) + i64::from(i % 2), None));
    let mut changed = 0;
    let counts = diff_rows(old, new, |d| {
        if matches!(d.change, Change::Changed { .. }) {
            changed += 1;
        }
    })
    .unwrap();
    assert_eq!(changed, n / 2);
    assert_eq!(counts.forward_records, i64::from(n / 2));
}

fn view(config: &[(&str, &str)], redacted: &[&str], offsets: Value) -> ConnectorView {
    ConnectorView {
        name: "c".into(),
        state: Some("RUNNING".into()),
        config: Some(
            config
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        redacted_keys: redacted.iter().map(|k| k.to_string()).collect(),
        offsets: offsets.as_array().cloned(),
    }
}

#[test]
fn connector_config_changes_hide_secrets() {
    let none = json!([]);
    // (old config, old redacted, new config, new redacted, expected changes, not compared)
    type Cfg = &'static [(&'static str, &'static str)];
    type Keys = &'static [&'static str];
    type Case = (Cfg, Keys, Cfg, Keys, Vec<KeyChange>, Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            &[("tasks.max", "1")],
            &[],
            &[("tasks.max", "1")],
            &[],
            vec![],
            vec![],
        ),
        (
            &[("tasks.max", "1")],
            &[],
            &[("tasks.max", "2"), ("topics", "t")],
            &[],
            vec![
                KeyChange {
                    key: "tasks.max".into(),
                    old: Some(ConfigValue::Shown("1".into())),
                    new: Some(ConfigValue::Shown("2".into())),
                },
                KeyChange {
                    key: "topics".into(),
                    old: None,
                    new: Some(ConfigValue::Shown("t".into())),
                },
            ],
            vec![],
        ),
        // Secrets in clear on both sides (--include-secrets): compared, never shown.
        (
            &[("db.password", "hunter2")],
            &[],
            &[("db.password", "hunter3")],
            &[],
            vec![KeyChange {
                key: "db.password".into(),
                old: Some(ConfigValue::Hidden { secret: true }),
                new: Some(ConfigValue::Hidden { secret: true }),
            }],
            vec![],
        ),
        (
            &[("db.password", "same")],
            &[],
            &[("db.password", "same")],
            &[],
            vec![],
            vec![],
        ),
        // Redacted on a side: cannot be compared, and said so.
        (
            &[("db.password", REDACTED)],
            &["db.password"],
            &[("db.password", REDACTED)],
            &["db.password"],
            vec![],
            vec!["db.password"],
        ),
        // A redacted key that appears: its presence is a change, its value is hidden.
        (
            &[],
            &[],
            &[("connection.url", REDACTED)],
            &["connection.url"],
            vec![KeyChange {
                key: "connection.url".into(),
                old: None,
                new: Some(ConfigValue::Hidden { secret: true }),
            }],
            vec![],
        ),
    ];
    for (i, (oc, or, nc, nr, want, not_compared)) in cases.into_iter().enumerate() {
        let d = diff_connector(
            Some(&view(oc, or, none.clone())),
            Some(&view(nc, nr, none.clone())),
        );
        let (got, nc_got) = d.map(|d| (d.config, d.not_compared)).unwrap_or_default();
        assert_eq!(got, want, "case {i}");
        assert_eq!(nc_got, not_compared, "case {i}");
        let text = serde_json::to_string(&got).unwrap();
        assert!(
            !text.contains("hunter"),
            "case {i}: a secret leaked: {text}"
        );
    }
}

#[test]
fn connector_offsets_are_compared_by_partition() {
    let p0 = json!({"kafka_topic": "t", "kafka_partition": 0});
    let p1 = json!({"kafka_partition": 1, "kafka_topic": "t"});
    let old = view(
        &[],
        &[],
        json!([
            {"partition": p0, "offset": {"kafka_offset": 5}},
            {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 9}},
        ]),
    );
    // Same partitions, keys in another order; partition 0 moved.
    let new = view(
        &[],
        &[],
        json!([
            {"partition": p1, "offset": {"kafka_offset": 9}},
            {"partition": p0, "offset": {"kafka_offset": 8}},
        ]),
    );
    let d = diff_connector(Some(&old), Some(&new)).expect("a difference");
    assert_eq!(d.change, ConnectorChange::Changed);
    assert_eq!(
        d.offsets,
        vec![OffsetChange {
            partition: p0,
            old: Some(json!({"kafka_offset": 5})),
            new: Some(json!({"kafka_offset": 8})),
        }]
    );
    assert!(diff_connector(Some(&old), Some(&old)).is_none());
    assert_eq!(
        diff_connector(Some(&old), None).unwrap().change,
        ConnectorChange::Removed
    );
    assert_eq!(
        diff_connector(None, Some(&old)).unwrap().change,
        ConnectorChange::Added
    );
}

#[test]
fn filters_select_groups_partitions_and_connectors() {
    let f = Filter {
        topics: vec!["t".into()],
        partitions: vec![1],
        ..Default::default()
    };
    assert!(f.wants_partition("t", 1));
    assert!(!f.wants_partition("t", 0));
    assert!(!f.wants_partition("u", 1));
    assert!(!f.wants_connector("c"));
    assert!(Filter::default().wants_connector("c"));
    assert_eq!(Filter::default().group_set(&[]), None);
    let sink = ConnectorSnapshot {
        name: "sink".into(),
        connect_url: "http://c".into(),
        connector_type: "sink".into(),
        group_id: Some("connect-sink".into()),
        config: Default::default(),
        redacted_keys: vec![],
        state: "RUNNING".into(),
        tasks: vec![],
        offsets: None,
        offsets_unavailable: None,
    };
    let f = Filter {
        groups: vec!["g".into()],
        connectors: vec!["sink".into()],
        ..Default::default()
    };
    let set = f.group_set(&[&sink]).unwrap();
    assert_eq!(set.into_iter().collect::<Vec<_>>(), ["connect-sink", "g"]);
    assert!(f.wants_connector("sink") && !f.wants_connector("other"));
}
