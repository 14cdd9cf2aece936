use chrono::TimeZone;

use super::*;
use crate::log::segment::SEGMENT_FORMAT_VERSION;

/// 2027-01-10 at `h`:`m`.
fn at(h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2027, 1, 10, h, m, 0).unwrap()
}

/// A segment of `partition` over `[start, next)` with records from `first` to `last` (hours of
/// the day; `None`: an empty segment), sealed at `sealed`.
fn seg(
    partition: i32,
    start: i64,
    next: i64,
    records: Option<(u32, u32)>,
    sealed: u32,
) -> SegmentManifest {
    let meta = SegmentMeta {
        format_version: SEGMENT_FORMAT_VERSION.into(),
        cluster_id: "c1".into(),
        topic: "__consumer_offsets".into(),
        partitions: 50,
        partition,
        start,
        next,
        rows: 1,
        ignored: 0,
        unknown: 0,
        first_timestamp: records.map(|(f, _)| ms(at(f, 0))),
        last_timestamp: records.map(|(_, l)| ms(at(l, 0))),
        sealed_at: at(sealed, 0),
        gap: None,
    };
    let file = meta.key().replace(".parquet", "-abcdef01.parquet");
    SegmentManifest {
        meta,
        file,
        size: 1,
        sha256: "x".into(),
    }
}

fn gap(partition: i32, start: i64, next: i64, sealed: u32) -> SegmentManifest {
    let mut m = seg(partition, start, next, None, sealed);
    m.meta.gap = Some("the log no longer held these offsets".into());
    m.meta.rows = 0;
    m.file = String::new();
    m
}

fn keyed(ms: Vec<SegmentManifest>) -> Vec<(String, SegmentManifest)> {
    ms.into_iter().map(|m| (m.key(), m)).collect()
}

#[test]
fn only_a_prefix_of_entries_older_than_the_base_goes_and_the_lead_stays() {
    // (chain, base hour, entries removed)
    let cases: Vec<(&str, Vec<SegmentManifest>, u32, usize)> = vec![
        ("empty chain", vec![], 12, 0),
        (
            "one entry is never removed",
            vec![seg(0, 0, 10, Some((1, 2)), 3)],
            12,
            0,
        ),
        (
            "all old: everything but the last",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                seg(0, 10, 20, Some((3, 4)), 5),
                seg(0, 20, 30, Some((5, 6)), 7),
            ],
            12,
            2,
        ),
        (
            "the segment holding the base leads",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                seg(0, 10, 20, Some((3, 4)), 5),
                seg(0, 20, 30, Some((8, 14)), 15),
                seg(0, 30, 40, Some((15, 16)), 17),
            ],
            12,
            2,
        ),
        (
            "a segment starting after the base needs the one before it",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                seg(0, 10, 20, Some((3, 4)), 5),
                seg(0, 20, 30, Some((13, 14)), 15),
            ],
            12,
            1,
        ),
        (
            "nothing before the base",
            vec![
                seg(0, 0, 10, Some((13, 14)), 15),
                seg(0, 10, 20, Some((15, 16)), 17),
            ],
            12,
            0,
        ),
        (
            "an empty segment may lead",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                seg(0, 10, 20, None, 11),
                seg(0, 20, 30, Some((13, 14)), 15),
            ],
            12,
            1,
        ),
        (
            "an empty segment sealed after the base is not before it",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                seg(0, 10, 20, None, 13),
                seg(0, 20, 30, Some((13, 14)), 15),
            ],
            12,
            1,
        ),
        (
            "an old recorded gap goes with the prefix",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                gap(0, 10, 20, 4),
                seg(0, 20, 30, Some((5, 6)), 7),
                seg(0, 30, 40, Some((13, 14)), 15),
            ],
            12,
            2,
        ),
        (
            "a gap found after the base stays, and so does what follows",
            vec![
                seg(0, 0, 10, Some((1, 2)), 3),
                gap(0, 10, 20, 13),
                seg(0, 20, 30, Some((13, 14)), 15),
            ],
            12,
            1,
        ),
    ];
    for (name, chain, base, want) in cases {
        let refs: Vec<&SegmentManifest> = chain.iter().collect();
        let plan = plan_chain(0, &refs, at(base, 0));
        assert_eq!(plan.remove.len(), want, "{name}");
        assert!(plan.refused.is_none(), "{name}");
        // What stays is a suffix of the chain, starting where the removed prefix ended.
        if let (Some(last), Some(first)) = (plan.remove.last(), &plan.first_kept) {
            assert_eq!(last.next, first.start, "{name}");
        }
        assert!(plan
            .remove
            .iter()
            .all(|s| s.action == SegmentAction::Remove));
        assert!(
            plan.remove.len() < chain.len() || chain.is_empty(),
            "{name}"
        );
    }
}

#[test]
fn a_chain_with_an_overlap_or_an_unrecorded_gap_is_left_whole() {
    for chain in [
        vec![
            seg(3, 0, 10, Some((1, 2)), 3),
            seg(3, 12, 20, Some((3, 4)), 5),
            seg(3, 20, 30, Some((5, 6)), 7),
        ],
        vec![
            seg(3, 0, 10, Some((1, 2)), 3),
            seg(3, 8, 20, Some((3, 4)), 5),
            seg(3, 20, 30, Some((5, 6)), 7),
        ],
    ] {
        let refs: Vec<&SegmentManifest> = chain.iter().collect();
        let plan = plan_chain(3, &refs, at(12, 0));
        assert!(plan.remove.is_empty());
        assert!(
            plan.refused.as_deref().unwrap().contains("verify"),
            "{plan:?}"
        );
    }
}

#[test]
fn the_window_base_is_the_newest_kept_snapshot_before_the_window_per_group() {
    let c = |id: &str, h: u32, groups: &[&str]| BaseCandidate {
        id: id.into(),
        created_at: at(h, 0),
        group_ids: groups.iter().map(|g| g.to_string()).collect(),
        holds: "group",
    };
    let start = at(12, 0);
    // (kept snapshots, base hour, base snapshot)
    let cases: Vec<(Vec<BaseCandidate>, u32, Option<&str>)> = vec![
        (vec![], 12, None),
        (
            vec![c("s1", 3, &["a"]), c("s2", 9, &["a"]), c("s3", 14, &["a"])],
            9,
            Some("s2"),
        ),
        // The policy removed s2: the base moves back to the kept s1.
        (vec![c("s1", 3, &["a"]), c("s3", 14, &["a"])], 3, Some("s1")),
        // b was last snapshot alone at 5: a --group b restore starts there.
        (
            vec![
                c("s1", 5, &["b"]),
                c("s2", 9, &["a"]),
                c("s3", 14, &["a", "b"]),
            ],
            5,
            Some("s1"),
        ),
        // Only snapshots after the window's start: the log is kept from the start.
        (vec![c("s3", 14, &["a"])], 12, Some("s3")),
        // A snapshot of connectors only is no base.
        (vec![c("s1", 3, &[]), c("s2", 9, &["a"])], 9, Some("s2")),
        // Exactly at the window's start.
        (vec![c("s1", 12, &["a"])], 12, Some("s1")),
    ];
    for (kept, hour, snapshot) in cases {
        let w = window_base(&kept, start, Duration::zero());
        assert_eq!(w.base, at(hour, 0), "{kept:?}");
        assert_eq!(w.keep_from, w.base, "{kept:?}");
        let w = window_base(&kept, start, Duration::minutes(15));
        assert_eq!(w.keep_from, at(hour, 0) - Duration::minutes(15), "{kept:?}");
        assert_eq!(w.snapshot.as_deref(), snapshot, "{kept:?}");
        assert!(w.base <= start);
    }
}

#[test]
fn orphans_go_when_superseded_and_old_only() {
    let now = at(12, 0);
    let grace = Duration::hours(1);
    let key = "log/date=2027-01-10/partition=04/00000000000000000010-00000000000000000020-0123abcd.parquet";
    // (key, sealed hour, chain end, action)
    let cases = [
        (key, Some(3), Some(30), OrphanAction::Remove),
        (key, Some(11), Some(30), OrphanAction::KeepYoung),
        (key, Some(3), Some(10), OrphanAction::KeepAtEnd),
        (key, Some(3), None, OrphanAction::KeepAtEnd),
        (key, None, Some(30), OrphanAction::LeaveAlone),
        (
            "log/date=2027-01-10/partition=04/stray.parquet",
            Some(3),
            Some(30),
            OrphanAction::LeaveAlone,
        ),
    ];
    for (k, sealed, end, want) in cases {
        let o = orphan_action(k, sealed.map(|h| at(h, 0)), end, grace, now);
        assert_eq!(o.action, want, "{k} {sealed:?} {end:?}");
    }
}

#[test]
fn apply_records_go_when_older_than_every_kept_record() {
    let r = |k: &str, t: Option<DateTime<Utc>>| RecordTime {
        key: k.into(),
        finished_at: t,
    };
    let records = vec![
        r("old", Some(at(1, 0))),
        r("skew", Some(at(4, 0) - Duration::seconds(10))),
        r("new", Some(at(10, 0))),
        r("unreadable", None),
    ];
    assert_eq!(
        records_to_remove(&records, at(12, 0), Some(ms(at(4, 0)))),
        ["old"]
    );
    // The base bounds it too.
    assert_eq!(
        records_to_remove(&records, at(2, 0), Some(ms(at(11, 0)))),
        ["old"]
    );
    assert!(records_to_remove(&records, at(12, 0), None).is_empty());
}

#[test]
fn the_whole_plan_counts_what_goes_and_keeps_apply_records_kept_segments_explain() {
    let manifests = keyed(vec![
        seg(0, 0, 10, Some((1, 2)), 3),
        seg(0, 10, 20, Some((3, 4)), 5),
        seg(0, 20, 30, Some((8, 14)), 15),
        seg(1, 0, 5, Some((1, 1)), 2),
        seg(1, 5, 9, Some((2, 3)), 4),
        seg(2, 0, 5, Some((1, 1)), 2),
        seg(2, 7, 9, Some((2, 3)), 4),
    ]);
    let orphan = "log/date=2027-01-10/partition=00/00000000000000000000-00000000000000000010-99999999.parquet";
    let window = WindowBase {
        window_start: at(12, 0),
        base: at(12, 30),
        keep_from: at(12, 0),
        snapshot: None,
        why: String::new(),
    };
    let records = vec![
        RecordTime {
            key: "a".into(),
            finished_at: Some(at(0, 30)),
        },
        RecordTime {
            key: "b".into(),
            finished_at: Some(at(2, 30)),
        },
    ];
    let plan = build(
        "12h",
        window,
        &manifests,
        &[(orphan.to_string(), Some(at(3, 0)))],
        &records,
        Duration::days(1),
        at(12, 0) + Duration::days(2),
    );
    let removed: Vec<(i32, i64)> = plan.segments().map(|s| (s.partition, s.start)).collect();
    // Partition 0: two old ones before the lead; 1: all but the last; 2: refused (gap 5..7).
    assert_eq!(removed, [(0, 0), (0, 10), (1, 0)]);
    assert_eq!(plan.summary.refused_partitions, 1);
    assert_eq!(plan.summary.remove_orphans, 1);
    // Partition 2 keeps a record of 01:00: only the record that ended before it goes.
    assert_eq!(plan.apply_records, ["a"]);
    assert_eq!(plan.summary.remove_segments, 3);
    assert_eq!(plan.summary.entries, 7);

    // The margin before the base is kept too: cut at 03:30, only partition 0's first goes (its
    // second holds a record of 04:00), and partition 1's first (its last record is 01:00).
    let window = window_base(&[], at(12, 0), Duration::minutes(8 * 60 + 30));
    assert_eq!(window.keep_from, at(3, 30));
    let plan = build(
        "12h",
        window,
        &manifests,
        &[],
        &[],
        Duration::days(1),
        at(12, 0),
    );
    let removed: Vec<(i32, i64)> = plan.segments().map(|s| (s.partition, s.start)).collect();
    assert_eq!(removed, [(0, 0), (1, 0)]);
}

#[test]
fn a_segment_of_connects_offsets_topic_is_removed_by_its_own_index_key() {
    // Regression: the plan named every segment by the commit log's index, so a prune of the
    // archive of Connect's offsets topic deleted the commit log's entry of the same partition
    // and offset (and left its own).
    let lane = |mut m: SegmentManifest| {
        m.meta.topic = "connect-offsets".into();
        m.file = m.meta.key().replace(".parquet", "-abcdef01.parquet");
        m
    };
    let chain = [
        lane(seg(4, 0, 10, Some((1, 2)), 2)),
        lane(seg(4, 10, 20, Some((3, 4)), 4)),
        lane(seg(4, 20, 30, Some((9, 10)), 10)),
    ];
    let refs: Vec<&SegmentManifest> = chain.iter().collect();
    let plan = plan_chain(4, &refs, at(5, 0));
    let removed: Vec<&str> = plan.remove.iter().map(|s| s.manifest.as_str()).collect();
    assert_eq!(removed, [chain[0].key().as_str()]);
    assert!(
        removed[0].starts_with("connect-log/index/partition=04/"),
        "{removed:?}"
    );
    assert!(
        plan.remove[0].file.starts_with("connect-log/date="),
        "{plan:?}"
    );
    // The commit log's own entries keep their keys.
    let offsets = seg(4, 0, 10, Some((1, 2)), 2);
    let kept = [
        offsets.clone(),
        seg(4, 10, 20, Some((3, 4)), 4),
        seg(4, 20, 30, Some((9, 10)), 10),
    ];
    let refs: Vec<&SegmentManifest> = kept.iter().collect();
    let plan = plan_chain(4, &refs, at(5, 0));
    assert_eq!(plan.remove[0].manifest, offsets.key());
    assert!(plan.remove[0].manifest.starts_with("log/index/"));
}
