use crate::diff::{diff_rows, Row};

use super::*;

fn row(group: &str, partition: i32, offset: i64) -> Row {
    Row {
        group: group.into(),
        topic: "t".into(),
        partition,
        offset,
        log_start: None,
        topic_id: None,
    }
}

/// Rows of `group` on topic `t`, one per (partition, offset).
fn rows(group: &str, offsets: &[(i32, i64)]) -> Vec<Row> {
    offsets.iter().map(|(p, o)| row(group, *p, *o)).collect()
}

fn compare(old: Vec<Row>, new: Vec<Row>, connectors: &[ConnectorDiff]) -> Comparison {
    let mut collector = Collector::default();
    let groups: std::collections::BTreeSet<String> =
        old.iter().chain(&new).map(|r| r.group.clone()).collect();
    let counts = diff_rows(old.into_iter(), new.into_iter(), |d| collector.add(d)).unwrap();
    collector.finish(&counts, (groups.len() as u64, 0), connectors)
}

fn moved(partition: i32, old: Option<i64>, new: Option<i64>) -> MovedPartition {
    MovedPartition {
        group: "g".into(),
        topic: "t".into(),
        partition,
        old,
        new,
        delta: old.zip(new).map(|(o, n)| n - o),
        topic_recreated: false,
    }
}

#[test]
fn moved_partitions_are_listed_with_old_new_and_delta_and_summed_by_direction() {
    // (old, new, listed moved partitions, records reprocessed, records skipped)
    type Case = (
        Vec<(i32, i64)>,
        Vec<(i32, i64)>,
        Vec<MovedPartition>,
        i64,
        i64,
    );
    let cases: Vec<Case> = vec![
        // The reset of issue 17: two partitions moved, one each way.
        (
            vec![(0, 10), (1, 20), (2, 30)],
            vec![(0, 55), (1, 5), (2, 30)],
            vec![moved(0, Some(10), Some(55)), moved(1, Some(20), Some(5))],
            15,
            45,
        ),
        (vec![(0, 10), (1, 20)], vec![(0, 10), (1, 20)], vec![], 0, 0),
        (vec![], vec![], vec![], 0, 0),
        // A commit for a partition the group had none for, and a deleted one.
        (
            vec![(0, 10)],
            vec![(1, 7)],
            vec![moved(0, Some(10), None), moved(1, None, Some(7))],
            0,
            0,
        ),
    ];
    for (old, new, listed, reprocessed, skipped) in cases {
        let c = compare(rows("g", &old), rows("g", &new), &[]);
        let label = format!("{old:?} -> {new:?}");
        assert!(c.checked && c.error.is_none(), "{label}");
        assert_eq!(c.partitions, listed, "{label}");
        assert_eq!(c.partitions_moved, listed.len() as u64, "{label}");
        assert_eq!(c.groups_moved, u64::from(!listed.is_empty()), "{label}");
        assert_eq!(c.records_reprocessed, reprocessed, "{label}");
        assert_eq!(c.records_skipped, skipped, "{label}");
        assert_eq!(c.partitions_not_listed, 0, "{label}");
        assert_eq!(c.may_have_moved(), !listed.is_empty(), "{label}");
    }
}

#[test]
fn the_comparison_counts_what_it_compared() {
    let c = compare(
        rows("a", &[(0, 1), (1, 2)]),
        [rows("a", &[(0, 1), (1, 3)]), rows("b", &[(0, 4)])].concat(),
        &[],
    );
    assert_eq!(
        (
            c.groups_compared,
            c.partitions_compared,
            c.partitions_moved,
            c.groups_moved
        ),
        (2, 3, 2, 2)
    );
    assert_eq!(c.groups, ["a", "b"]);
}

#[test]
fn long_lists_are_capped_and_the_rest_counted() {
    // 3 groups of 100 moved partitions each, and 150 groups of one.
    let many = |n: i32| (0..n).map(|p| (p, 0)).collect::<Vec<_>>();
    let ahead = |n: i32| (0..n).map(|p| (p, 1)).collect::<Vec<_>>();
    let mut old = Vec::new();
    let mut new = Vec::new();
    for g in ["a", "b", "c"] {
        old.extend(rows(g, &many(100)));
        new.extend(rows(g, &ahead(100)));
    }
    for g in 0..150 {
        let name = format!("z{g:03}");
        old.extend(rows(&name, &many(1)));
        new.extend(rows(&name, &ahead(1)));
    }
    let c = compare(old, new, &[]);
    assert_eq!(c.partitions_moved, 450);
    assert_eq!(c.partitions.len(), LISTED);
    assert_eq!(c.partitions_not_listed, 450 - LISTED as u64);
    assert!(c.partitions.iter().all(|p| p.group == "a"));
    assert_eq!(c.groups_moved, 153);
    assert_eq!(c.groups.len(), LISTED);
    assert_eq!(&c.groups[..4], ["a", "b", "c", "z000"]);
    assert_eq!(c.records_skipped, 450);
}

#[test]
fn a_recreated_topic_counts_as_moved_even_at_the_same_offset() {
    let with_id = |id: &str| {
        let mut r = row("g", 0, 5);
        r.topic_id = Some(id.into());
        r
    };
    let c = compare(vec![with_id("old-id")], vec![with_id("new-id")], &[]);
    assert_eq!(c.partitions_moved, 1);
    assert!(c.partitions[0].topic_recreated);
    assert_eq!(c.partitions[0].delta, Some(0));
}

fn connector(name: &str, change: ConnectorChange, offsets: usize, config: usize) -> ConnectorDiff {
    ConnectorDiff {
        name: name.into(),
        change,
        state: None,
        config: (0..config)
            .map(|i| crate::diff::KeyChange {
                key: format!("k{i}"),
                old: None,
                new: None,
            })
            .collect(),
        offsets: (0..offsets)
            .map(|i| crate::diff::OffsetChange {
                partition: serde_json::json!({ "p": i }),
                old: Some(serde_json::json!(1)),
                new: Some(serde_json::json!(2)),
            })
            .collect(),
        not_compared: vec![],
    }
}

#[test]
fn connectors_count_when_their_offsets_moved_or_they_are_gone() {
    use ConnectorChange::*;
    // (diff, listed with the number of offsets moved)
    let cases = [
        (connector("src", Changed, 2, 0), Some(2)),
        (connector("src", Changed, 0, 3), None),
        (connector("src", Unchanged, 0, 0), None),
        (connector("src", Removed, 0, 0), Some(0)),
    ];
    for (diff, want) in cases {
        let c = compare(vec![], vec![], std::slice::from_ref(&diff));
        let got = c.connectors.first().map(|m| m.offsets_moved);
        assert_eq!(got, want, "{diff:?}");
        assert_eq!(c.may_have_moved(), want.is_some(), "{diff:?}");
    }
}

#[test]
fn a_failed_check_may_have_moved_anything() {
    let c = Comparison::failed("Kafka is down");
    assert!(!c.checked && c.may_have_moved());
    assert_eq!(c.error.as_deref(), Some("Kafka is down"));
}
