use super::*;

fn meta(partition: i32, start: i64, next: i64) -> SegmentMeta {
    SegmentMeta {
        format_version: SEGMENT_FORMAT_VERSION.into(),
        cluster_id: "c1".into(),
        topic: "__consumer_offsets".into(),
        partitions: 50,
        partition,
        start,
        next,
        rows: 0,
        ignored: 0,
        unknown: 0,
        first_timestamp: Some(1_796_320_000_000),
        last_timestamp: Some(1_796_320_001_000),
        sealed_at: DateTime::from_timestamp_millis(1_796_320_002_000).unwrap(),
        gap: None,
    }
}

fn commit(offset: i64, version: i16, epoch: Option<i32>, expire: Option<i64>) -> LogRecord {
    LogRecord::OffsetCommit {
        group: "g,1\"".into(),
        topic: "t".into(),
        partition: 3,
        value: Some(CommitValue {
            version,
            offset,
            leader_epoch: epoch,
            metadata: if offset % 2 == 0 {
                String::new()
            } else {
                "m".into()
            },
            commit_timestamp: 1_796_320_000_500 + offset,
            expire_timestamp: expire,
            topic_id: (version == 4).then(|| "P7hnbBMcRE++EvS8jPkzbw".to_string()),
        }),
    }
}

#[test]
fn every_kind_of_row_round_trips_through_parquet() {
    let rows: Vec<Row> = [
        commit(10, 4, Some(0), None),
        commit(11, 1, None, Some(1_796_400_000_000)),
        LogRecord::OffsetCommit {
            group: "g,1\"".into(),
            topic: "t".into(),
            partition: 3,
            value: None,
        },
        LogRecord::GroupMetadata {
            group: "g2".into(),
            kind: GroupKind::Classic {
                protocol_type: Some("consumer".into()),
            },
            deleted: false,
        },
        LogRecord::GroupMetadata {
            group: "g2".into(),
            kind: GroupKind::Classic {
                protocol_type: None,
            },
            deleted: true,
        },
        LogRecord::GroupMetadata {
            group: "s".into(),
            kind: GroupKind::Share,
            deleted: false,
        },
        LogRecord::GroupMetadata {
            group: "st".into(),
            kind: GroupKind::Streams,
            deleted: true,
        },
        LogRecord::GroupMetadata {
            group: "c".into(),
            kind: GroupKind::Consumer,
            deleted: false,
        },
        LogRecord::SourceOffset {
            connector: "src".into(),
            partition: r#"{"filename":"/in.txt"}"#.into(),
            offset: Some(r#"{"position":42}"#.into()),
        },
        LogRecord::SourceOffset {
            connector: "src".into(),
            partition: r#"{"filename":"/in.txt"}"#.into(),
            offset: None,
        },
    ]
    .into_iter()
    .enumerate()
    .map(|(i, record)| Row {
        source_offset: 100 + 2 * i as i64,
        timestamp: 1_796_320_000_000 + i as i64,
        record,
    })
    .collect();
    let m = meta(7, 100, 120);
    let bytes = encode(&m, &rows).unwrap();
    let (back_meta, back) = decode("s.parquet", Bytes::from(bytes)).unwrap();
    assert_eq!(back_meta, m);
    assert_eq!(back, rows);
}

#[test]
fn ignored_and_unknown_records_are_not_rows() {
    let rows = vec![
        Row {
            source_offset: 1,
            timestamp: 1,
            record: LogRecord::Ignored { record_type: 5 },
        },
        Row {
            source_offset: 2,
            timestamp: 2,
            record: LogRecord::Unknown { record_type: 99 },
        },
    ];
    let bytes = encode(&meta(0, 0, 3), &rows).unwrap();
    let (_, back) = decode("s.parquet", Bytes::from(bytes)).unwrap();
    assert!(back.is_empty());
}

#[test]
fn a_file_that_is_not_a_segment_is_refused() {
    let e = decode("x.parquet", Bytes::from_static(b"PAR1 nope")).unwrap_err();
    assert_eq!(e.exit_code(), crate::error::exit::INTEGRITY, "{e}");
    let mut newer = meta(0, 0, 1);
    newer.format_version = "2.0".into();
    let e = decode("y.parquet", Bytes::from(encode(&newer, &[]).unwrap())).unwrap_err();
    assert!(e.to_string().contains("format_version 2.0"), "{e}");
}

#[test]
fn keys_sort_by_offset_under_day_and_partition() {
    assert_eq!(
        meta(7, 100, 116).key(),
        "log/date=2026-12-03/partition=07/00000000000000000100-00000000000000000116.parquet"
    );
    let mut empty = meta(12, 5, 5);
    empty.first_timestamp = None;
    assert!(empty.key().starts_with("log/date=2026-12-03/partition=12/"));
}

#[test]
fn gaps_and_overlaps_between_segments_are_found_per_partition() {
    // (segments as (partition, start, next), problems)
    type Ranges = Vec<(i32, i64, i64)>;
    let cases: Vec<(Ranges, Vec<Discontinuity>)> = vec![
        (vec![(0, 0, 10), (0, 10, 20), (1, 0, 5)], vec![]),
        // Order does not matter.
        (vec![(0, 10, 20), (0, 0, 10)], vec![]),
        (
            vec![(0, 0, 10), (0, 12, 20)],
            vec![Discontinuity::Gap {
                partition: 0,
                from: 10,
                to: 12,
            }],
        ),
        (
            vec![(3, 0, 10), (3, 8, 20)],
            vec![Discontinuity::Overlap {
                partition: 3,
                from: 8,
                to: 10,
            }],
        ),
        // Partitions do not meet each other.
        (vec![(0, 0, 10), (1, 10, 20)], vec![]),
    ];
    for (segments, want) in cases {
        let metas: Vec<SegmentMeta> = segments.iter().map(|(p, s, n)| meta(*p, *s, *n)).collect();
        assert_eq!(discontinuities(&metas), want, "{segments:?}");
    }
}

#[test]
fn a_segment_of_connects_offsets_topic_lives_under_its_own_root() {
    let mut m = meta(3, 0, 10);
    assert!(m.key().starts_with("log/date="), "{}", m.key());
    m.topic = "connect-offsets".into();
    assert!(m.key().starts_with("connect-log/date="), "{}", m.key());
    assert_eq!(Lane::of_topic("__consumer_offsets"), Lane::Offsets);
    assert_eq!(Lane::of_topic("connect-offsets"), Lane::Connect);
}
