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
use parquet::file::reader::ChunkReader;

use crate::error::{Error, Result};
use crate::model::check_format_version;
use crate::model::{GroupSnapshot, PartitionOffset, SnapshotMeta, FORMAT_VERSION};

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

/// Rows per record batch written, and per row group: a reader of the file needs memory for one
/// row group's columns at a time.
const BATCH_ROWS: usize = 8192;
const ROW_GROUP_ROWS: usize = 128 * 1024;

pub fn encode_offsets(meta: &SnapshotMeta, groups: &[GroupSnapshot]) -> Result<Vec<u8>> {
    let headers: Vec<GroupSnapshot> = groups.iter().map(header).collect();
    let mut out = Vec::new();
    write_offsets(
        &mut out,
        meta,
        &headers,
        &mut groups.iter().cloned().map(Ok),
    )?;
    Ok(out)
}

/// A group without its partitions, as the file's group list holds it.
pub fn header(g: &GroupSnapshot) -> GroupSnapshot {
    GroupSnapshot {
        group_id: g.group_id.clone(),
        state: g.state.clone(),
        protocol_type: g.protocol_type.clone(),
        group_type: g.group_type,
        members: g.members.clone(),
        connector: g.connector.clone(),
        configs: g.configs.clone(),
        partitions: Vec::new(),
    }
}

/// Writes an offsets file as the groups come: `headers` is every group without its partitions
/// (in the order of `groups`), for the file's group list; the rows are written in batches of
/// [`BATCH_ROWS`], so only a batch of groups is held at a time.
pub fn write_offsets<W: std::io::Write + Send>(
    out: W,
    meta: &SnapshotMeta,
    headers: &[GroupSnapshot],
    groups: &mut dyn Iterator<Item = Result<GroupSnapshot>>,
) -> Result<W> {
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
            serde_json::to_string(headers).map_err(enc_err)?,
        ),
    ]);
    let kv: Vec<KeyValue> = metadata
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let schema = Arc::new(schema().with_metadata(metadata));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(kv))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(enc_err)?;
    let mut pending: Vec<GroupSnapshot> = Vec::new();
    let mut rows = 0;
    let mut any = false;
    for g in groups {
        let g = g?;
        rows += g.partitions.len();
        pending.push(g);
        if rows >= BATCH_ROWS {
            writer
                .write(&batch(&schema, meta, &pending)?)
                .map_err(enc_err)?;
            pending.clear();
            rows = 0;
            any = true;
        }
    }
    if rows > 0 || !any {
        writer
            .write(&batch(&schema, meta, &pending)?)
            .map_err(enc_err)?;
    }
    writer.into_inner().map_err(enc_err)
}

/// The rows of some groups as one record batch.
fn batch(
    schema: &Arc<Schema>,
    meta: &SnapshotMeta,
    groups: &[GroupSnapshot],
) -> Result<RecordBatch> {
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
    RecordBatch::try_new(schema.clone(), columns).map_err(enc_err)
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
pub fn decode_offsets(path: &str, bytes: Bytes) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    super::collect(|each| read_offsets(path, bytes, each))
}

/// Reads an offsets file one record batch at a time and hands each group to `each` once its
/// rows are read (groups with no rows too, in the order of the file's group list). Only one
/// group and one batch are held. Returns the snapshot metadata.
///
/// The parquet crate panics on some malformed files (a dictionary-encoded page with no dictionary
/// page, for one). A file that breaks the reader is a file that cannot be decoded: the panic is
/// turned into [`Error::Decode`].
pub fn read_offsets<R: ChunkReader + 'static>(
    path: &str,
    reader: R,
    each: &mut dyn FnMut(GroupSnapshot) -> Result<()>,
) -> Result<SnapshotMeta> {
    let decoded =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(path, reader, each)));
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

/// Hands out the groups of the file's group list in order, each filled with its rows.
struct Assembler<'a> {
    path: &'a str,
    headers: Vec<Option<GroupSnapshot>>,
    index: std::collections::HashMap<String, usize>,
    /// The next header not handed out yet.
    next: usize,
    current: Option<GroupSnapshot>,
    each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
}

impl Assembler<'_> {
    /// The group a row belongs to; hands out the groups before it.
    fn group(&mut self, g: &str, row: usize) -> Result<&mut GroupSnapshot> {
        let path = self.path;
        let dec = |detail: String| Error::Decode {
            path: path.to_string(),
            detail,
        };
        if self.current.as_ref().is_some_and(|c| c.group_id == g) {
            return Ok(self.current.as_mut().expect("checked"));
        }
        let Some(&i) = self.index.get(g) else {
            return Err(dec(format!(
                "row {row}: group {g} is not in the group list"
            )));
        };
        if i < self.next {
            return Err(dec(format!(
                "row {row}: the rows of group {g} are not together, in the order of the group list"
            )));
        }
        self.flush()?;
        while self.next < i {
            self.hand_out_next()?;
        }
        self.current = self.headers[i].take();
        self.next = i + 1;
        Ok(self.current.as_mut().expect("each header is taken once"))
    }

    fn flush(&mut self) -> Result<()> {
        match self.current.take() {
            Some(g) => (self.each)(g),
            None => Ok(()),
        }
    }

    fn hand_out_next(&mut self) -> Result<()> {
        let g = self.headers[self.next].take();
        self.next += 1;
        match g {
            Some(g) => (self.each)(g),
            None => Ok(()),
        }
    }

    fn finish(mut self) -> Result<()> {
        self.flush()?;
        while self.next < self.headers.len() {
            self.hand_out_next()?;
        }
        Ok(())
    }
}

fn decode<R: ChunkReader + 'static>(
    path: &str,
    reader: R,
    each: &mut dyn FnMut(GroupSnapshot) -> Result<()>,
) -> Result<SnapshotMeta> {
    let dec = |detail: String| Error::Decode {
        path: path.to_string(),
        detail,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(reader).map_err(|e| dec(e.to_string()))?;
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
    let headers: Vec<GroupSnapshot> =
        serde_json::from_str(&value(KV_GROUPS)?).map_err(|e| dec(e.to_string()))?;
    let mut index = std::collections::HashMap::new();
    for (i, g) in headers.iter().enumerate() {
        if index.insert(g.group_id.clone(), i).is_some() {
            return Err(dec(format!(
                "group {} is twice in the group list",
                g.group_id
            )));
        }
    }
    let mut groups = Assembler {
        path,
        headers: headers.into_iter().map(Some).collect(),
        index,
        next: 0,
        current: None,
        each,
    };

    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| dec(e.to_string()))?;
    let mut first_row = 0;
    for batch in reader {
        let batch = batch.map_err(|e| dec(e.to_string()))?;
        add_rows(path, &batch, first_row, &mut groups)?;
        first_row += batch.num_rows();
    }
    groups.finish()?;
    Ok(meta)
}

/// Adds the rows of one record batch (its first row is row `first_row` of the file) to their
/// groups.
fn add_rows(
    path: &str,
    batch: &RecordBatch,
    first_row: usize,
    groups: &mut Assembler<'_>,
) -> Result<()> {
    let dec = |detail: String| Error::Decode {
        path: path.to_string(),
        detail,
    };
    let c = Columns { batch, path };
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
        let row = first_row + i;
        let last_ts = if ts.is_valid(i) {
            Some(
                DateTime::<Utc>::from_timestamp_millis(ts.value(i))
                    .ok_or_else(|| dec(format!("row {row}: bad timestamp")))?,
            )
        } else {
            None
        };
        let g = groups.group(group.value(i), row)?;
        g.partitions.push(PartitionOffset {
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
    Ok(())
}
