//! File formats of a snapshot: the offsets file (Parquet or JSON) and `connectors.json`.
//! Both offsets formats carry the same information and decode to the same content.
//! [`spliced`] writes the `--output json` documents whose arrays are too large to hold.

pub mod csv;
pub mod json;
pub mod parquet;
pub mod spliced;
mod stream;

use crate::error::Result;
use crate::model::Format;
use crate::model::{GroupSnapshot, SnapshotMeta};

/// Encodes the groups of a snapshot in the given format.
pub fn encode_offsets(
    format: Format,
    meta: &SnapshotMeta,
    groups: &[GroupSnapshot],
) -> Result<Vec<u8>> {
    match format {
        Format::Json => json::encode_offsets(meta, groups),
        Format::Parquet => parquet::encode_offsets(meta, groups),
    }
}

/// Decodes an offsets file; `path` names it in errors.
pub fn decode_offsets(
    format: Format,
    path: &str,
    bytes: bytes::Bytes,
) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    match format {
        Format::Json => json::decode_offsets(path, &bytes),
        Format::Parquet => parquet::decode_offsets(path, bytes),
    }
}

/// Writes an offsets file in the given format as the groups come.
pub fn write_offsets<W: std::io::Write + Send>(
    format: Format,
    out: W,
    meta: &SnapshotMeta,
    groups: &mut dyn Iterator<Item = Result<GroupSnapshot>>,
) -> Result<W> {
    match format {
        Format::Json => json::write_offsets(out, meta, groups),
        Format::Parquet => parquet::write_offsets(out, meta, groups),
    }
}

/// Reads a local offsets file one group at a time; `path` names it in errors. Returns the
/// snapshot metadata recorded in it.
pub fn read_offsets(
    format: Format,
    path: &str,
    file: &std::path::Path,
    each: &mut dyn FnMut(GroupSnapshot) -> Result<()>,
) -> Result<SnapshotMeta> {
    let open = std::fs::File::open(file).map_err(|e| crate::error::Error::Decode {
        path: path.to_string(),
        detail: format!("cannot open the local copy {}: {e}", file.display()),
    })?;
    match format {
        Format::Json => json::read_offsets(path, open, each),
        Format::Parquet => parquet::read_offsets(path, open, each),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GroupState, GroupType, Member, PartitionOffset, Selection, FORMAT_VERSION};
    use chrono::{DateTime, TimeZone, Utc};
    use proptest::prelude::*;

    fn meta() -> SnapshotMeta {
        SnapshotMeta {
            id: "20261201T093005.042Z-0123456789abcdef".into(),
            created_at: Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 5).unwrap()
                + chrono::Duration::milliseconds(42),
            tool_version: "0.1.0".into(),
            cluster_id: "cluster-1".into(),
            bootstrap_servers: "k:9092".into(),
            brokers: vec!["1@k:9092".into()],
            selection: Selection {
                all_groups: true,
                ..Default::default()
            },
            tags: [("deploy".to_string(), "1".to_string())].into(),
            ..Default::default()
        }
    }

    fn partition() -> impl Strategy<Value = PartitionOffset> {
        (
            "[a-z][a-z0-9._-]{0,12}",
            0i32..1000,
            any::<i64>().prop_map(|o| o.abs()),
            proptest::option::of(0i32..i32::MAX),
            proptest::option::of(".{0,8}"),
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
            proptest::option::of(any::<i64>()),
            (
                proptest::option::of(0i64..4_102_444_800_000),
                proptest::option::of("[A-Za-z0-9_-]{22}"),
            ),
        )
            .prop_map(
                |(topic, partition, offset, epoch, md, s, e, lag, (ts, id))| PartitionOffset {
                    leader_epoch: epoch,
                    metadata: md,
                    log_start_offset: s,
                    log_end_offset: e,
                    lag,
                    last_record_timestamp: ts.and_then(DateTime::<Utc>::from_timestamp_millis),
                    last_record_digest: ts.map(|t| format!("{:064x}", t.unsigned_abs())),
                    topic_id: id,
                    ..PartitionOffset::new(topic, partition, offset)
                },
            )
    }

    fn group() -> impl Strategy<Value = GroupSnapshot> {
        (
            "[a-z][a-z0-9-]{0,10}",
            prop_oneof!["Empty", "Stable", "Dead"],
            proptest::collection::vec(partition(), 0..6),
            proptest::bool::ANY,
            prop_oneof![
                Just(GroupType::Classic),
                Just(GroupType::Consumer),
                Just(GroupType::Share),
                Just(GroupType::Streams)
            ],
            proptest::collection::btree_map("[a-z.]{1,12}", ".{0,6}", 0..3),
        )
            .prop_map(|(id, state, partitions, member, group_type, configs)| {
                GroupSnapshot {
                    group_id: id,
                    state: GroupState::from_name(&state),
                    protocol_type: "consumer".into(),
                    group_type,
                    members: if member {
                        vec![Member {
                            member_id: "m-1".into(),
                            client_id: "c".into(),
                            host: "/127.0.0.1".into(),
                        }]
                    } else {
                        vec![]
                    },
                    connector: None,
                    configs,
                    partitions,
                }
            })
    }

    fn unique(groups: Vec<GroupSnapshot>) -> Vec<GroupSnapshot> {
        let mut seen = std::collections::BTreeSet::new();
        groups
            .into_iter()
            .filter(|g| seen.insert(g.group_id.clone()))
            .collect()
    }

    proptest! {
        #[test]
        fn both_formats_round_trip_exactly(groups in proptest::collection::vec(group(), 0..5)) {
            let groups = unique(groups);
            for format in [Format::Json, Format::Parquet] {
                let bytes = encode_offsets(format, &meta(), &groups).unwrap();
                let (m, back) = decode_offsets(format, "t", bytes::Bytes::from(bytes)).unwrap();
                prop_assert_eq!(&m, &meta());
                prop_assert_eq!(&back, &groups);
            }
        }
    }

    #[test]
    fn many_batches_decode_to_the_same_groups_in_order() {
        // More rows than one record batch and one row group, groups with no rows in between.
        let groups: Vec<GroupSnapshot> = (0..60)
            .map(|i| GroupSnapshot {
                group_id: format!("g{i:03}"),
                state: GroupState::Empty,
                protocol_type: "consumer".into(),
                group_type: GroupType::Classic,
                members: vec![],
                connector: None,
                configs: Default::default(),
                partitions: (0..if i % 7 == 3 { 0 } else { 3000 })
                    .map(|p| PartitionOffset {
                        leader_epoch: Some(1),
                        log_start_offset: Some(0),
                        log_end_offset: Some(i64::from(p) * 4),
                        lag: Some(i64::from(p)),
                        ..PartitionOffset::new(format!("t{}", p % 3), p, i64::from(p) * 3)
                    })
                    .collect(),
            })
            .collect();
        for format in [Format::Json, Format::Parquet] {
            let bytes = encode_offsets(format, &meta(), &groups).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("offsets");
            std::fs::write(&file, &bytes).unwrap();
            let mut seen = 0;
            let m = read_offsets(format, "o", &file, &mut |g| {
                assert_eq!(g, groups[seen], "{format:?}");
                seen += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!((m, seen), (meta(), groups.len()), "{format:?}");
        }
        let bytes = encode_offsets(Format::Parquet, &meta(), &groups).unwrap();
        let reader =
            ::parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let row_groups = ::parquet::file::reader::FileReader::metadata(&reader).num_row_groups();
        assert!(row_groups > 1, "{row_groups} row group(s)");
    }

    #[test]
    fn a_reader_error_stops_the_stream_and_is_returned() {
        let groups: Vec<GroupSnapshot> = ["a", "b", "c"]
            .iter()
            .map(|id| GroupSnapshot {
                group_id: id.to_string(),
                state: GroupState::Empty,
                protocol_type: String::new(),
                group_type: GroupType::Classic,
                members: vec![],
                connector: None,
                configs: Default::default(),
                partitions: vec![],
            })
            .collect();
        for format in [Format::Json, Format::Parquet] {
            let bytes = encode_offsets(format, &meta(), &groups).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("offsets");
            std::fs::write(&file, &bytes).unwrap();
            let mut seen = Vec::new();
            let err = read_offsets(format, "o", &file, &mut |g| {
                seen.push(g.group_id);
                if seen.len() == 2 {
                    return Err(crate::error::Error::usage("enough"));
                }
                Ok(())
            })
            .unwrap_err();
            assert_eq!(
                err.to_string(),
                crate::error::Error::usage("enough").to_string()
            );
            assert_eq!(seen, ["a", "b"], "{format:?}");
            // A write that fails mid-way hands its error back too.
            let mut failing = groups.iter().cloned().map(Ok).chain(std::iter::once(Err(
                crate::error::Error::usage("spill lost"),
            )));
            let err = write_offsets(format, Vec::new(), &meta(), &mut failing).unwrap_err();
            assert!(err.to_string().contains("spill lost"), "{format:?}: {err}");
        }
    }

    #[test]
    fn parquet_rows_of_a_group_apart_are_refused() {
        let one = |id: &str, p: i32| GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: String::new(),
            group_type: GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: vec![PartitionOffset::new("t", p, 1)],
        };
        let mut rows = vec![one("a", 0), one("b", 0), one("a", 1)]
            .into_iter()
            .map(Ok);
        let bytes = parquet::write_offsets(Vec::new(), &meta(), &mut rows).unwrap();
        let err = parquet::decode_offsets("o.parquet", bytes::Bytes::from(bytes)).unwrap_err();
        assert!(
            err.to_string()
                .contains("row 2: group a is in the file twice"),
            "{err}"
        );
    }

    #[test]
    fn extreme_offsets_stay_exact() {
        let mut g = unique(vec![GroupSnapshot {
            group_id: "g".into(),
            state: GroupState::Empty,
            protocol_type: String::new(),
            group_type: GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: vec![],
        }]);
        g[0].partitions.push(PartitionOffset {
            topic: "t".into(),
            partition: i32::MAX,
            offset: i64::MAX,
            leader_epoch: None,
            metadata: None,
            log_start_offset: Some(9_007_199_254_740_993), // 2^53 + 1: not exact as a double
            log_end_offset: Some(i64::MAX),
            lag: Some(0),
            last_record_timestamp: None,
            last_record_digest: None,
            topic_id: None,
        });
        for format in [Format::Json, Format::Parquet] {
            let bytes = encode_offsets(format, &meta(), &g).unwrap();
            let (_, back) = decode_offsets(format, "t", bytes::Bytes::from(bytes)).unwrap();
            assert_eq!(back, g, "{format:?}");
        }
    }

    #[test]
    fn unknown_major_version_is_refused() {
        let json = String::from_utf8(encode_offsets(Format::Json, &meta(), &[]).unwrap())
            .unwrap()
            .replacen(&format!("\"{FORMAT_VERSION}\""), "\"2.0\"", 1);
        let err = decode_offsets(Format::Json, "o.json", json.into()).unwrap_err();
        assert!(
            err.to_string().contains("unsupported format_version 2.0"),
            "{err}"
        );
    }
}
