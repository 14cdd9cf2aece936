//! `offsets.parquet`: one row per (group, topic, partition) with typed columns.
//!
//! Every row carries the snapshot id, capture time and cluster id, so a query over a whole archive
//! of snapshot files needs no join. The snapshot metadata and the group headers (state, members;
//! also for groups with no committed offset, which have no rows) are in the file's key-value
//! metadata as JSON, so the file alone decodes back to the full snapshot content.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};
use crate::snapshot::manifest::check_format_version;
use crate::snapshot::model::{GroupSnapshot, PartitionOffset, SnapshotMeta, FORMAT_VERSION};

pub const KV_FORMAT_VERSION: &str = "offset_vault.format_version";
pub const KV_SNAPSHOT: &str = "offset_vault.snapshot";
pub const KV_GROUPS: &str = "offset_vault.groups";

fn utc(unit: TimeUnit) -> DataType {
    DataType::Timestamp(unit, Some("UTC".into()))
}

/// The Arrow schema of the offsets file.
pub fn schema() -> Schema {
    Schema::new(vec![
        Field::new("snapshot_id", DataType::Utf8, false),
        Field::new("captured_at", utc(TimeUnit::Microsecond), false),
        Field::new("cluster_id", DataType::Utf8, false),
        Field::new("group_id", DataType::Utf8, false),
        Field::new("group_state", DataType::Utf8, false),
        Field::new("group_type", DataType::Utf8, false),
        Field::new("topic", DataType::Utf8, false),
        Field::new("partition", DataType::Int32, false),
        Field::new("committed_offset", DataType::Int64, false),
        Field::new("leader_epoch", DataType::Int32, true),
        Field::new("commit_metadata", DataType::Utf8, true),
        Field::new("log_start_offset", DataType::Int64, true),
        Field::new("log_end_offset", DataType::Int64, true),
        Field::new("lag", DataType::Int64, true),
        Field::new("last_record_timestamp", utc(TimeUnit::Millisecond), true),
        Field::new("topic_id", DataType::Utf8, true),
    ])
}

fn enc_err(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("encode Parquet: {e}"))
}

pub fn encode_offsets(meta: &SnapshotMeta, groups: &[GroupSnapshot]) -> Result<Vec<u8>> {
    let rows: Vec<(&GroupSnapshot, &PartitionOffset)> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(move |p| (g, p)))
        .collect();
    let n = rows.len();
    let captured = meta.created_at.timestamp_micros();
    let column = |f: &dyn Fn(&GroupSnapshot, &PartitionOffset) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(
            rows.iter().map(|(g, p)| f(g, p)).collect::<Vec<_>>(),
        ))
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![meta.id.as_str(); n])),
        Arc::new(TimestampMicrosecondArray::from(vec![captured; n]).with_timezone("UTC")),
        Arc::new(StringArray::from(vec![meta.cluster_id.as_str(); n])),
        column(&|g, _| Some(g.group_id.clone())),
        column(&|g, _| Some(g.state.to_string())),
        column(&|g, _| Some(g.group_type.to_string())),
        column(&|_, p| Some(p.topic.clone())),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|(_, p)| p.partition),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, p)| p.offset),
        )),
        Arc::new(Int32Array::from_iter(
            rows.iter().map(|(_, p)| p.leader_epoch),
        )),
        column(&|_, p| p.metadata.clone()),
        Arc::new(Int64Array::from_iter(
            rows.iter().map(|(_, p)| p.log_start_offset),
        )),
        Arc::new(Int64Array::from_iter(
            rows.iter().map(|(_, p)| p.log_end_offset),
        )),
        Arc::new(Int64Array::from_iter(rows.iter().map(|(_, p)| p.lag))),
        Arc::new(
            TimestampMillisecondArray::from_iter(
                rows.iter()
                    .map(|(_, p)| p.last_record_timestamp.map(|t| t.timestamp_millis())),
            )
            .with_timezone("UTC"),
        ),
        column(&|_, p| p.topic_id.clone()),
    ];
    let headers: Vec<GroupSnapshot> = groups
        .iter()
        .map(|g| GroupSnapshot {
            partitions: Vec::new(),
            ..g.clone()
        })
        .collect();
    // In the file's key-value metadata, and on the Arrow schema too, since readers that rebuild
    // the schema from it (pyarrow) show only the schema's metadata.
    let metadata = std::collections::HashMap::from([
        (KV_FORMAT_VERSION.to_string(), FORMAT_VERSION.to_string()),
        (
            KV_SNAPSHOT.to_string(),
            serde_json::to_string(meta).map_err(enc_err)?,
        ),
        (
            KV_GROUPS.to_string(),
            serde_json::to_string(&headers).map_err(enc_err)?,
        ),
    ]);
    let kv: Vec<KeyValue> = metadata
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let schema = Arc::new(schema().with_metadata(metadata));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(enc_err)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(kv))
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, schema, Some(props)).map_err(enc_err)?;
    writer.write(&batch).map_err(enc_err)?;
    writer.close().map_err(enc_err)?;
    Ok(out)
}

struct Columns<'a> {
    batch: &'a RecordBatch,
    path: &'a str,
}

impl<'a> Columns<'a> {
    fn get<T: 'static>(&self, name: &str) -> Result<&'a T> {
        self.batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<T>())
            .ok_or_else(|| Error::Decode {
                path: self.path.to_string(),
                detail: format!("column {name} is missing or has the wrong type"),
            })
    }
}

fn opt<T>(present: bool, value: T) -> Option<T> {
    present.then_some(value)
}

/// Decodes an offsets file; `path` names it in errors.
///
/// The parquet crate panics on some malformed files (a dictionary-encoded page with no dictionary
/// page, for one). A file that breaks the reader is a file that cannot be decoded: the panic is
/// turned into [`Error::Decode`].
pub fn decode_offsets(path: &str, bytes: Bytes) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(path, bytes)));
    decoded.unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::Decode {
            path: path.to_string(),
            detail: format!("malformed Parquet file: the reader failed ({reason})"),
        })
    })
}

fn decode(path: &str, bytes: Bytes) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    let dec = |detail: String| Error::Decode {
        path: path.to_string(),
        detail,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| dec(e.to_string()))?;
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let value = |key: &str| -> Result<String> {
        kv.iter()
            .find(|e| e.key == key)
            .and_then(|e| e.value.clone())
            .ok_or_else(|| dec(format!("key-value metadata {key} is missing")))
    };
    check_format_version(path, &value(KV_FORMAT_VERSION)?)?;
    let meta: SnapshotMeta =
        serde_json::from_str(&value(KV_SNAPSHOT)?).map_err(|e| dec(e.to_string()))?;
    let mut groups: Vec<GroupSnapshot> =
        serde_json::from_str(&value(KV_GROUPS)?).map_err(|e| dec(e.to_string()))?;
    let index: std::collections::HashMap<String, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.group_id.clone(), i))
        .collect();

    let reader = builder.build().map_err(|e| dec(e.to_string()))?;
    for batch in reader {
        let batch = batch.map_err(|e| dec(e.to_string()))?;
        let c = Columns {
            batch: &batch,
            path,
        };
        let group = c.get::<StringArray>("group_id")?;
        let topic = c.get::<StringArray>("topic")?;
        let partition = c.get::<Int32Array>("partition")?;
        let offset = c.get::<Int64Array>("committed_offset")?;
        let epoch = c.get::<Int32Array>("leader_epoch")?;
        let metadata = c.get::<StringArray>("commit_metadata")?;
        let start = c.get::<Int64Array>("log_start_offset")?;
        let end = c.get::<Int64Array>("log_end_offset")?;
        let lag = c.get::<Int64Array>("lag")?;
        let ts = c.get::<TimestampMillisecondArray>("last_record_timestamp")?;
        // Files of format 1.0 have no topic ids.
        let topic_id = match batch.column_by_name("topic_id") {
            None => None,
            Some(_) => Some(c.get::<StringArray>("topic_id")?),
        };
        for i in 0..batch.num_rows() {
            let g = group.value(i);
            let gi = *index
                .get(g)
                .ok_or_else(|| dec(format!("row {i}: group {g} is not in the group list")))?;
            let last_ts = if ts.is_valid(i) {
                Some(
                    DateTime::<Utc>::from_timestamp_millis(ts.value(i))
                        .ok_or_else(|| dec(format!("row {i}: bad timestamp")))?,
                )
            } else {
                None
            };
            groups[gi].partitions.push(PartitionOffset {
                topic: topic.value(i).to_string(),
                partition: partition.value(i),
                offset: offset.value(i),
                leader_epoch: opt(epoch.is_valid(i), epoch.value(i)),
                metadata: opt(metadata.is_valid(i), metadata.value(i).to_string()),
                log_start_offset: opt(start.is_valid(i), start.value(i)),
                log_end_offset: opt(end.is_valid(i), end.value(i)),
                lag: opt(lag.is_valid(i), lag.value(i)),
                last_record_timestamp: last_ts,
                topic_id: topic_id
                    .filter(|ids| ids.is_valid(i))
                    .map(|ids| ids.value(i).to_string()),
            });
        }
    }
    Ok((meta, groups))
}
