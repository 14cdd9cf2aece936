use chrono::DateTime;

use super::*;
use crate::log::segment::{Row, SEGMENT_FORMAT_VERSION};

fn meta(partition: i32, start: i64, next: i64) -> SegmentMeta {
    SegmentMeta {
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
        first_timestamp: Some(1_796_320_000_000),
        last_timestamp: Some(1_796_320_001_000),
        sealed_at: DateTime::from_timestamp_millis(1_796_320_002_000).unwrap(),
        gap: None,
    }
}

fn manifest(m: SegmentMeta) -> (String, SegmentManifest) {
    let file = m.key().replace(".parquet", "-0123abcd.parquet");
    let s = SegmentManifest {
        meta: m,
        file,
        size: 1,
        sha256: "x".into(),
    };
    (s.key(), s)
}

fn kinds(findings: &[Finding]) -> Vec<(FindingKind, Option<i32>)> {
    let mut out: Vec<_> = findings.iter().map(|f| (f.kind, f.partition)).collect();
    out.sort();
    out
}

#[test]
fn chains_report_overlaps_unrecorded_gaps_missing_files_and_orphans() {
    let mut gap = manifest(meta(1, 10, 20));
    gap.1.meta.gap = Some("deleted by retention".into());
    gap.1.file = String::new();
    let all = vec![
        manifest(meta(0, 0, 10)),
        manifest(meta(0, 10, 20)),
        manifest(meta(0, 25, 30)), // 20..25 in nothing
        manifest(meta(1, 0, 10)),
        gap, // recorded: a note
        manifest(meta(1, 20, 30)),
        manifest(meta(2, 0, 10)),
        manifest(meta(2, 5, 30)), // 5..10 twice
    ];
    let mut files: Vec<String> = all
        .iter()
        .map(|(_, m)| m.file.clone())
        .filter(|f| !f.is_empty())
        .collect();
    files.retain(|f| !f.contains("partition=01/00000000000000000020"));
    let orphan =
        "log/date=2026-12-01/partition=01/00000000000000000030-00000000000000000040-ffffffff.parquet";
    files.push(orphan.to_string());
    let found = check_chains(&all, &files);
    assert_eq!(
        kinds(&found),
        [
            (FindingKind::MissingData, Some(1)),
            (FindingKind::Overlap, Some(2)),
            (FindingKind::UnrecordedGap, Some(0)),
            (FindingKind::Orphan, Some(1)),
            (FindingKind::RecordedGap, Some(1)),
        ]
    );
    let report = LogReport::from_findings(found);
    assert!(!report.ok);
    assert_eq!(report.problems.len(), 3);
    assert_eq!(report.notes.len(), 2);
    let orphan_note = report
        .notes
        .iter()
        .find(|f| f.kind == FindingKind::Orphan)
        .unwrap();
    assert!(orphan_note.detail.contains("harmless") && orphan_note.detail.contains("prune"));
    let gap = report
        .problems
        .iter()
        .find(|f| f.kind == FindingKind::UnrecordedGap)
        .unwrap();
    assert!(gap.detail.contains("offsets 20 to 25"), "{}", gap.detail);
}

#[test]
fn a_continuous_chain_with_its_files_has_nothing_to_say() {
    let all = vec![manifest(meta(0, 0, 10)), manifest(meta(0, 10, 20))];
    let files: Vec<String> = all.iter().map(|(_, m)| m.file.clone()).collect();
    assert!(check_chains(&all, &files).is_empty());
    // A manifest at another key than its range's is a problem.
    let moved = vec![(SegmentManifest::index_key(0, 5), all[0].1.clone())];
    assert_eq!(
        kinds(&check_chains(&moved, &files[..1])),
        [(FindingKind::BadManifest, Some(0))]
    );
}

#[test]
fn data_is_checked_by_size_checksum_and_description() {
    let m = meta(0, 0, 10);
    let rows = vec![Row {
        source_offset: 3,
        timestamp: 1_796_320_000_000,
        record: crate::log::testing::commit("g", 0, 5, 1_796_320_000_000),
    }];
    let bytes = bytes::Bytes::from(segment::encode(&m, &rows).unwrap());
    let good = SegmentManifest {
        meta: m.clone(),
        file: "f".into(),
        size: bytes.len() as u64,
        sha256: sha256_hex(&bytes),
    };
    assert_eq!(check_data("k", &good, bytes.clone()), None);
    let mut flipped = bytes.to_vec();
    flipped[10] ^= 1;
    let f = check_data("k", &good, flipped.into()).unwrap();
    assert_eq!(f.kind, FindingKind::Checksum);
    assert!(f.detail.contains("manifest k"), "{}", f.detail);
    let mut other = good.clone();
    other.meta.next = 11;
    assert_eq!(
        check_data("k", &other, bytes).unwrap().kind,
        FindingKind::Content
    );
}

#[test]
fn apply_records_that_do_not_decode_are_problems() {
    let f = check_apply_record("applies/date=2027-01-01/x.json", b"{not json").unwrap();
    assert_eq!(f.kind, FindingKind::BadApplyRecord);
    let f = check_apply_record("applies/date=2027-01-01/x.json", b"{\"kind\":\"other\"}").unwrap();
    assert_eq!(f.kind, FindingKind::BadApplyRecord);
}

#[test]
fn data_keys_parse_to_their_partition_and_range() {
    let cases = [
        (
            "log/date=2027-01-01/partition=07/00000000000000000010-00000000000000000020-0123abcd.parquet",
            Some((7, 10, 20)),
        ),
        ("log/date=2027-01-01/partition=07/x.parquet", None),
        ("log/index/partition=07/00000000000000000010.json", None),
        ("log/date=2027-01-01/partition=07/a/00-01-ab.parquet", None),
        (
            "connect-log/date=2027-01-01/partition=03/00000000000000000000-00000000000000000005-0123abcd.parquet",
            Some((3, 0, 5)),
        ),
        ("connect-log/index/partition=03/00000000000000000000.json", None),
    ];
    for (key, want) in cases {
        assert_eq!(parse_data_key(key), want, "{key}");
    }
}
