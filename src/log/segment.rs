//! Segments of the commit-log archive: the decoded records of one partition of
//! `__consumer_offsets` over an exact range of its offsets, as one Parquet file, and the rules
//! that tell a complete archive from one with a gap or an overlap. Pure: rows in, bytes out, and
//! back.
//!
//! A segment covers the source offsets `[start, next)`: `start` is where the previous segment of
//! the partition ended, `next` where the following one begins, so offsets that hold no record
//! (compacted away, transaction markers) are covered too and continuity is one comparison. Rows
//! are the records that matter for positions (commits, offset tombstones, group metadata);
//! records of other types are counted in the segment's description, not stored.
//!
//! The Parquet file carries one row per record with typed columns and the segment's description
//! in its key-value metadata, so DuckDB or Spark read an archive directly with Hive partitioning
//! (`log/date=YYYY-MM-DD/partition=NN/*.parquet`).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use super::record::{CommitValue, GroupKind, LogRecord};
use crate::error::{Error, Result};

/// Version of the segment layout (`MAJOR.MINOR`).
pub const SEGMENT_FORMAT_VERSION: &str = "1.0";
/// The key-value metadata entry that holds the segment's description.
pub const KV_SEGMENT: &str = "offset_vault.segment";

/// One archived record: where it was in the source, when, and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub source_offset: i64,
    /// The record's timestamp (ms).
    pub timestamp: i64,
    pub record: LogRecord,
}

/// What a segment covers; written into the file and kept beside it as its manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMeta {
    pub format_version: String,
    pub cluster_id: String,
    /// The source topic (`__consumer_offsets`).
    pub topic: String,
    /// How many partitions the source topic has (a group's records are in partition
    /// `hash(group) % partitions`).
    pub partitions: i32,
    pub partition: i32,
    /// The first source offset covered.
    pub start: i64,
    /// The first source offset not covered: where the next segment starts.
    pub next: i64,
    pub rows: u64,
    /// Records of types not stored (members, assignments, ...), and of types not known.
    pub ignored: u64,
    pub unknown: u64,
    pub first_timestamp: Option<i64>,
    pub last_timestamp: Option<i64>,
    pub sealed_at: DateTime<Utc>,
    /// Set on an index entry that stands for offsets that could not be archived (the log no
    /// longer held them), with the reason; such an entry has no data file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
}

impl SegmentMeta {
    /// The segment's key in the store: by the day of its first record and its partition, named
    /// by its range (zero-padded, so names sort by offset).
    pub fn key(&self) -> String {
        let day = self
            .first_timestamp
            .and_then(DateTime::from_timestamp_millis)
            .unwrap_or(self.sealed_at)
            .format("%Y-%m-%d");
        format!(
            "{}/date={day}/partition={:02}/{:020}-{:020}.parquet",
            Lane::of_topic(&self.topic).root(),
            self.partition,
            self.start,
            self.next
        )
    }
}

/// Which log an archive holds: `__consumer_offsets` under `log/`, or Kafka Connect's offsets
/// topic (whatever its name) under `connect-log/`. Both have the same layout below their root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    Offsets,
    Connect,
}

impl Lane {
    /// The lane of a segment of `topic`.
    pub fn of_topic(topic: &str) -> Lane {
        if topic == "__consumer_offsets" {
            Lane::Offsets
        } else {
            Lane::Connect
        }
    }

    /// The store prefix of the lane.
    pub fn root(self) -> &'static str {
        match self {
            Lane::Offsets => "log",
            Lane::Connect => "connect-log",
        }
    }
}

/// Where two segments of a partition do not meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum Discontinuity {
    /// Source offsets `[from, to)` are in no segment.
    Gap { partition: i32, from: i64, to: i64 },
    /// Source offsets `[from, to)` are in two segments.
    Overlap { partition: i32, from: i64, to: i64 },
}

/// The gaps and overlaps between the segments of each partition (in any order). Pure.
pub fn discontinuities(segments: &[SegmentMeta]) -> Vec<Discontinuity> {
    let mut by_partition: std::collections::BTreeMap<i32, Vec<(i64, i64)>> = Default::default();
    for s in segments {
        by_partition
            .entry(s.partition)
            .or_default()
            .push((s.start, s.next));
    }
    let mut out = Vec::new();
    for (partition, mut ranges) in by_partition {
        ranges.sort();
        for pair in ranges.windows(2) {
            let ((_, end), (start, _)) = (pair[0], pair[1]);
            if start > end {
                out.push(Discontinuity::Gap {
                    partition,
                    from: end,
                    to: start,
                });
            } else if start < end {
                out.push(Discontinuity::Overlap {
                    partition,
                    from: start,
                    to: end,
                });
            }
        }
    }
    out
}

fn utc_ms() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

/// The Arrow schema of a segment.
pub fn schema() -> Schema {
    Schema::new(vec![
        Field::new("source_partition", DataType::Int32, false),
        Field::new("source_offset", DataType::Int64, false),
        Field::new("record_timestamp", utc_ms(), false),
        // commit, tombstone, group-metadata, group-deleted
        Field::new("kind", DataType::Utf8, false),
        Field::new("group_id", DataType::Utf8, false),
        // classic, consumer, share, streams (group metadata records)
        Field::new("group_type", DataType::Utf8, true),
        Field::new("protocol_type", DataType::Utf8, true),
        Field::new("topic", DataType::Utf8, true),
        // Not `partition`: a reader with Hive partitioning (DuckDB, Spark) would shadow it with
        // the folder's `partition=NN`, the partition of the source topic.
        Field::new("topic_partition", DataType::Int32, true),
        Field::new("committed_offset", DataType::Int64, true),
        Field::new("leader_epoch", DataType::Int32, true),
        Field::new("commit_metadata", DataType::Utf8, true),
        Field::new("commit_timestamp", utc_ms(), true),
        Field::new("topic_id", DataType::Utf8, true),
        Field::new("value_version", DataType::Int32, true),
        Field::new("expire_timestamp", utc_ms(), true),
        // Kafka Connect's offsets topic (kinds source-offset, source-offset-deleted): the
        // connector, and the source partition and offset as canonical JSON.
        Field::new("connector", DataType::Utf8, true),
        Field::new("connect_partition", DataType::Utf8, true),
        Field::new("connect_offset", DataType::Utf8, true),
    ])
}

fn enc_err(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("encode a log segment: {e}"))
}

/// The columns of one row, `None` where the record has no such field.
#[derive(Default)]
struct Flat<'a> {
    kind: &'static str,
    group: &'a str,
    group_type: Option<&'static str>,
    protocol_type: Option<&'a str>,
    topic: Option<&'a str>,
    partition: Option<i32>,
    value: Option<&'a CommitValue>,
    connector: Option<&'a str>,
    connect_partition: Option<&'a str>,
    connect_offset: Option<&'a str>,
}

fn flat(record: &LogRecord) -> Option<Flat<'_>> {
    Some(match record {
        LogRecord::OffsetCommit {
            group,
            topic,
            partition,
            value,
        } => Flat {
            kind: if value.is_some() {
                "commit"
            } else {
                "tombstone"
            },
            group,
            topic: Some(topic),
            partition: Some(*partition),
            value: value.as_ref(),
            ..Default::default()
        },
        LogRecord::GroupMetadata {
            group,
            kind,
            deleted,
        } => {
            let (group_type, protocol_type) = match kind {
                GroupKind::Classic { protocol_type } => ("classic", protocol_type.as_deref()),
                GroupKind::Consumer => ("consumer", None),
                GroupKind::Share => ("share", None),
                GroupKind::Streams => ("streams", None),
            };
            Flat {
                kind: if *deleted {
                    "group-deleted"
                } else {
                    "group-metadata"
                },
                group,
                group_type: Some(group_type),
                protocol_type,
                ..Default::default()
            }
        }
        LogRecord::SourceOffset {
            connector,
            partition,
            offset,
        } => Flat {
            kind: if offset.is_some() {
                "source-offset"
            } else {
                "source-offset-deleted"
            },
            connector: Some(connector),
            connect_partition: Some(partition),
            connect_offset: offset.as_deref(),
            ..Default::default()
        },
        LogRecord::Ignored { .. } | LogRecord::Unknown { .. } => return None,
    })
}

/// Encodes a segment: its rows (in source-offset order) and its description.
pub fn encode(meta: &SegmentMeta, rows: &[Row]) -> Result<Vec<u8>> {
    let schema = Arc::new(schema());
    let flats: Vec<(&Row, Flat)> = rows
        .iter()
        .filter_map(|r| flat(&r.record).map(|f| (r, f)))
        .collect();
    fn v<'a>(f: &Flat<'a>) -> Option<&'a CommitValue> {
        f.value
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![meta.partition; flats.len()])),
        Arc::new(Int64Array::from_iter_values(
            flats.iter().map(|(r, _)| r.source_offset),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter_values(flats.iter().map(|(r, _)| r.timestamp))
                .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from_iter_values(
            flats.iter().map(|(_, f)| f.kind),
        )),
        Arc::new(StringArray::from_iter_values(
            flats.iter().map(|(_, f)| f.group),
        )),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| f.group_type),
        )),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| f.protocol_type),
        )),
        Arc::new(StringArray::from_iter(flats.iter().map(|(_, f)| f.topic))),
        Arc::new(Int32Array::from_iter(
            flats.iter().map(|(_, f)| f.partition),
        )),
        Arc::new(Int64Array::from_iter(
            flats.iter().map(|(_, f)| v(f).map(|v| v.offset)),
        )),
        Arc::new(Int32Array::from_iter(
            flats.iter().map(|(_, f)| v(f).and_then(|v| v.leader_epoch)),
        )),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| v(f).map(|v| v.metadata.as_str())),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter(
                flats.iter().map(|(_, f)| v(f).map(|v| v.commit_timestamp)),
            )
            .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from_iter(
            flats
                .iter()
                .map(|(_, f)| v(f).and_then(|v| v.topic_id.as_deref())),
        )),
        Arc::new(Int32Array::from_iter(
            flats
                .iter()
                .map(|(_, f)| v(f).map(|v| i32::from(v.version))),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter(
                flats
                    .iter()
                    .map(|(_, f)| v(f).and_then(|v| v.expire_timestamp)),
            )
            .with_timezone("UTC"),
        ),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| f.connector),
        )),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| f.connect_partition),
        )),
        Arc::new(StringArray::from_iter(
            flats.iter().map(|(_, f)| f.connect_offset),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(enc_err)?;
    let description = serde_json::to_string(meta).map_err(enc_err)?;
    let props = writer_properties(description)?;
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, schema, Some(props)).map_err(enc_err)?;
    writer.write(&batch).map_err(enc_err)?;
    writer.close().map_err(enc_err)?;
    Ok(out)
}

/// How a segment is written, for size: most of a commit is the same group, topic, kind and
/// epoch as the rows around it (dictionary encoded, the default), and its source offset, record
/// time, committed offset and commit time each grow by small steps (delta encoded, no
/// dictionary); zstd on top. Statistics per column chunk only (min/max for readers that prune),
/// no page index: a segment is one row group of a few thousand rows.
fn writer_properties(description: String) -> Result<WriterProperties> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(enc_err)?))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .set_key_value_metadata(Some(vec![KeyValue::new(KV_SEGMENT.into(), description)]));
    for column in [
        "source_offset",
        "record_timestamp",
        "committed_offset",
        "commit_timestamp",
    ] {
        builder = builder
            .set_column_dictionary_enabled(ColumnPath::from(column), false)
            .set_column_encoding(ColumnPath::from(column), Encoding::DELTA_BINARY_PACKED);
    }
    Ok(builder.build())
}

/// Typed access to one decoded batch's columns.
struct Columns<'a>(&'a RecordBatch, &'a str);

impl<'a> Columns<'a> {
    /// A column that older segments do not have: `None` when absent.
    fn optional<T: 'static>(&self, name: &str) -> Result<Option<&'a T>> {
        match self.0.column_by_name(name) {
            None => Ok(None),
            Some(_) => self.get(name).map(Some),
        }
    }

    fn get<T: 'static>(&self, name: &str) -> Result<&'a T> {
        self.0
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<T>())
            .ok_or_else(|| Error::Decode {
                path: self.1.to_string(),
                detail: format!("column {name} is missing or of another type"),
            })
    }
}

fn value<T: Array>(column: &T, row: usize) -> bool {
    !column.is_null(row)
}

/// Decodes a segment back into its description and rows.
pub fn decode(path: &str, bytes: Bytes) -> Result<(SegmentMeta, Vec<Row>)> {
    let bad = |detail: String| Error::Decode {
        path: path.to_string(),
        detail,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| bad(e.to_string()))?;
    let description = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == KV_SEGMENT))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| bad(format!("no {KV_SEGMENT} metadata: not a log segment")))?;
    let meta: SegmentMeta =
        serde_json::from_str(&description).map_err(|e| bad(format!("{KV_SEGMENT}: {e}")))?;
    crate::snapshot::manifest::check_format_version(path, &meta.format_version)?;
    let reader = builder.build().map_err(|e| bad(e.to_string()))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(e.to_string()))?;
        decode_batch(path, &batch, &mut rows)?;
    }
    Ok((meta, rows))
}

/// Decodes the rows of one record batch of a segment.
fn decode_batch(path: &str, batch: &RecordBatch, rows: &mut Vec<Row>) -> Result<()> {
    let bad = |detail: String| Error::Decode {
        path: path.to_string(),
        detail,
    };
    let c = Columns(batch, path);
    let source_offset = c.get::<Int64Array>("source_offset")?;
    let timestamp = c.get::<TimestampMillisecondArray>("record_timestamp")?;
    let kind = c.get::<StringArray>("kind")?;
    let group = c.get::<StringArray>("group_id")?;
    let group_type = c.get::<StringArray>("group_type")?;
    let protocol_type = c.get::<StringArray>("protocol_type")?;
    let topic = c.get::<StringArray>("topic")?;
    let partition = c.get::<Int32Array>("topic_partition")?;
    let offset = c.get::<Int64Array>("committed_offset")?;
    let epoch = c.get::<Int32Array>("leader_epoch")?;
    let metadata = c.get::<StringArray>("commit_metadata")?;
    let commit_ts = c.get::<TimestampMillisecondArray>("commit_timestamp")?;
    let topic_id = c.get::<StringArray>("topic_id")?;
    let version = c.get::<Int32Array>("value_version")?;
    let expire_ts = c.get::<TimestampMillisecondArray>("expire_timestamp")?;
    // Absent from segments written before Connect's offsets topic was archived.
    let connector = c.optional::<StringArray>("connector")?;
    let connect_partition = c.optional::<StringArray>("connect_partition")?;
    let connect_offset = c.optional::<StringArray>("connect_offset")?;
    let text = |column: Option<&StringArray>, i: usize| {
        column
            .filter(|c| value(*c, i))
            .map(|c| c.value(i).to_string())
    };
    for i in 0..batch.num_rows() {
        let group_id = group.value(i).to_string();
        let record = match kind.value(i) {
            k @ ("commit" | "tombstone") => LogRecord::OffsetCommit {
                group: group_id,
                topic: topic.value(i).to_string(),
                partition: partition.value(i),
                value: (k == "commit").then(|| CommitValue {
                    version: version.value(i) as i16,
                    offset: offset.value(i),
                    leader_epoch: value(epoch, i).then(|| epoch.value(i)),
                    metadata: metadata.value(i).to_string(),
                    commit_timestamp: commit_ts.value(i),
                    expire_timestamp: value(expire_ts, i).then(|| expire_ts.value(i)),
                    topic_id: value(topic_id, i).then(|| topic_id.value(i).to_string()),
                }),
            },
            k @ ("group-metadata" | "group-deleted") => LogRecord::GroupMetadata {
                group: group_id,
                kind: match group_type.value(i) {
                    "consumer" => GroupKind::Consumer,
                    "share" => GroupKind::Share,
                    "streams" => GroupKind::Streams,
                    _ => GroupKind::Classic {
                        protocol_type: value(protocol_type, i)
                            .then(|| protocol_type.value(i).to_string()),
                    },
                },
                deleted: k == "group-deleted",
            },
            k @ ("source-offset" | "source-offset-deleted") => LogRecord::SourceOffset {
                connector: text(connector, i)
                    .ok_or_else(|| bad(format!("row {i}: {k} without a connector")))?,
                partition: text(connect_partition, i)
                    .ok_or_else(|| bad(format!("row {i}: {k} without a partition")))?,
                offset: if k == "source-offset" {
                    Some(
                        text(connect_offset, i)
                            .ok_or_else(|| bad(format!("row {i}: {k} without an offset")))?,
                    )
                } else {
                    None
                },
            },
            other => return Err(bad(format!("row {i}: unknown kind {other:?}"))),
        };
        rows.push(Row {
            source_offset: source_offset.value(i),
            timestamp: timestamp.value(i),
            record,
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "segment_tests.rs"]
mod tests;
