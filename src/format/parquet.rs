//! `offsets.parquet`: one row per (group, topic, partition) with typed columns.
//!
//! Every row carries the snapshot id, capture time and cluster id, so a query over a whole archive
//! of snapshot files needs no join. The file alone decodes back to the full snapshot content:
//! the snapshot metadata is in the file's key-value metadata as JSON; each group's header
//! (members, configs, connector) is JSON in the `group_header` column of the group's first row;
//! the groups with no committed offset, which have no rows, are listed with their place among
//! the others in the key-value metadata, written when the file is closed.
//!
//! Files of layout 1.x (written before [`PARQUET_FORMAT_VERSION`] 2.0) keep every group's header
//! in one key-value entry (`offset_vault.groups`); they are still read. A reader of such a file
//! parses the whole list first, about 1 KiB per group; a file of layout 2.0 costs nothing per
//! group with rows.

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
use crate::model::{GroupSnapshot, PartitionOffset, SnapshotMeta};

pub const KV_FORMAT_VERSION: &str = "offset_vault.format_version";
/// The version of the offsets file's layout. 2.0 moved the group headers from the footer's
/// group list (1.x) to the rows; 2.1 added the `last_record_digest` column (optional: older
/// files lack it). Files of both majors are read. Apart from the layout, a file
/// holds what the snapshot format of [`crate::model::FORMAT_VERSION`] holds.
pub const PARQUET_FORMAT_VERSION: &str = "2.1";

/// Files of major version 1 (one group list in the footer) and 2 (headers on the rows).
fn check_parquet_version(path: &str, found: &str) -> Result<()> {
    match found.split('.').next().and_then(|m| m.parse::<u32>().ok()) {
        Some(1 | 2) => Ok(()),
        _ => Err(Error::UnsupportedFormat {
            path: path.to_string(),
            found: found.to_string(),
            supported: "major versions 1 and 2".into(),
        }),
    }
}
pub const KV_SNAPSHOT: &str = "offset_vault.snapshot";
/// The group list of files of layout 1.x.
pub const KV_GROUPS: &str = "offset_vault.groups";
/// The groups without rows (layout 2.0): `[{"position": N, "group": HEADER}, ...]`, where N is
/// the group's place in the order of all groups.
pub const KV_GROUPS_WITHOUT_ROWS: &str = "offset_vault.groups_without_rows";

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
        Field::new("group_header", DataType::Utf8, true),
        Field::new("last_record_digest", DataType::Utf8, true),
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
    let mut out = Vec::new();
    write_offsets(&mut out, meta, &mut groups.iter().cloned().map(Ok))?;
    Ok(out)
}

/// A group without its partitions, as the `group_header` column holds it.
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

/// A group with no rows and its place among all groups.
#[derive(serde::Serialize, serde::Deserialize)]
struct WithoutRows {
    position: usize,
    group: GroupSnapshot,
}

/// Writes an offsets file as the groups come: the rows are written in batches of
/// [`BATCH_ROWS`], so only a batch of groups is held at a time, plus the headers of the groups
/// that have no rows (listed in the footer).
pub fn write_offsets<W: std::io::Write + Send>(
    out: W,
    meta: &SnapshotMeta,
    groups: &mut dyn Iterator<Item = Result<GroupSnapshot>>,
) -> Result<W> {
    // In the file's key-value metadata, and on the Arrow schema too, since readers that rebuild
    // the schema from it (pyarrow) show only the schema's metadata.
    let metadata = std::collections::HashMap::from([
        (
            KV_FORMAT_VERSION.to_string(),
            PARQUET_FORMAT_VERSION.to_string(),
        ),
        (
            KV_SNAPSHOT.to_string(),
            serde_json::to_string(meta).map_err(enc_err)?,
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
    let mut without_rows = Vec::new();
    let mut rows = 0;
    let mut any = false;
    for (position, g) in groups.enumerate() {
        let g = g?;
        if g.partitions.is_empty() {
            without_rows.push(WithoutRows { position, group: g });
            continue;
        }
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
    writer.append_key_value_metadata(KeyValue::new(
        KV_GROUPS_WITHOUT_ROWS.to_string(),
        serde_json::to_string(&without_rows).map_err(enc_err)?,
    ));
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
    // The header on each group's first row.
    let headers: Result<Vec<Option<String>>> = groups
        .iter()
        .flat_map(|g| {
            let first = serde_json::to_string(&header(g)).map_err(enc_err).map(Some);
            std::iter::once(first).chain((1..g.partitions.len()).map(|_| Ok(None)))
        })
        .collect();
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
        Arc::new(StringArray::from(headers?)),
        column(&|_, p| p.last_record_digest.clone()),
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
    super::stream::collect(|each| read_offsets(path, bytes, each))
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

/// Hands out the groups in order, each filled with its rows, as the rows are read.
trait Assemble {
    /// The group a row belongs to (`header`: the row's `group_header`); hands out the groups
    /// before it.
    fn group(&mut self, g: &str, header: Option<&str>, row: usize) -> Result<&mut GroupSnapshot>;
    /// Hands out the groups left.
    fn finish(self: Box<Self>) -> Result<()>;
}

fn decode_err(path: &str, detail: String) -> Error {
    Error::Decode {
        path: path.to_string(),
        detail,
    }
}

/// The groups of a file of layout 1.x, from its group list.
struct Listed<'a> {
    path: &'a str,
    headers: Vec<Option<GroupSnapshot>>,
    index: std::collections::HashMap<String, usize>,
    /// The next header not handed out yet.
    next: usize,
    current: Option<GroupSnapshot>,
    each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
}

impl<'a> Listed<'a> {
    fn new(
        path: &'a str,
        list: &str,
        each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
    ) -> Result<Self> {
        let headers: Vec<GroupSnapshot> = serde_json::from_str(list)
            .map_err(|e| decode_err(path, format!("{KV_GROUPS}: {e}")))?;
        let mut index = std::collections::HashMap::new();
        for (i, g) in headers.iter().enumerate() {
            if index.insert(g.group_id.clone(), i).is_some() {
                return Err(decode_err(
                    path,
                    format!("group {} is twice in the group list", g.group_id),
                ));
            }
        }
        Ok(Listed {
            path,
            headers: headers.into_iter().map(Some).collect(),
            index,
            next: 0,
            current: None,
            each,
        })
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
}

impl Assemble for Listed<'_> {
    fn group(&mut self, g: &str, _header: Option<&str>, row: usize) -> Result<&mut GroupSnapshot> {
        if self.current.as_ref().is_some_and(|c| c.group_id == g) {
            return Ok(self.current.as_mut().expect("checked"));
        }
        let Some(&i) = self.index.get(g) else {
            return Err(decode_err(
                self.path,
                format!("row {row}: group {g} is not in the group list"),
            ));
        };
        if i < self.next {
            return Err(decode_err(
                self.path,
                format!(
                    "row {row}: the rows of group {g} are not together, in the order of the group list"
                ),
            ));
        }
        self.flush()?;
        while self.next < i {
            self.hand_out_next()?;
        }
        self.current = self.headers[i].take();
        self.next = i + 1;
        Ok(self.current.as_mut().expect("each header is taken once"))
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.flush()?;
        while self.next < self.headers.len() {
            self.hand_out_next()?;
        }
        Ok(())
    }
}

/// The groups of a file of layout 2.0: each group's header on its first row, the groups without
/// rows from the footer's list, put back at their places.
struct Streamed<'a> {
    path: &'a str,
    without_rows: std::collections::VecDeque<WithoutRows>,
    /// Groups handed out so far.
    handed: usize,
    current: Option<GroupSnapshot>,
    /// A 64-bit hash of every group id seen, to refuse a group twice without keeping the ids.
    seen: std::collections::HashSet<u64>,
    each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
}

impl<'a> Streamed<'a> {
    fn new(
        path: &'a str,
        list: &str,
        each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
    ) -> Result<Self> {
        let without_rows: Vec<WithoutRows> = serde_json::from_str(list)
            .map_err(|e| decode_err(path, format!("{KV_GROUPS_WITHOUT_ROWS}: {e}")))?;
        if let Some(w) = without_rows
            .windows(2)
            .find(|w| w[0].position >= w[1].position)
        {
            return Err(decode_err(
                path,
                format!(
                    "the groups without rows are not in the order of their places ({} at {}, then {} at {})",
                    w[0].group.group_id, w[0].position, w[1].group.group_id, w[1].position
                ),
            ));
        }
        Ok(Streamed {
            path,
            without_rows: without_rows.into(),
            handed: 0,
            current: None,
            seen: std::collections::HashSet::new(),
            each,
        })
    }

    fn id_hash(g: &str) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        g.hash(&mut h);
        h.finish()
    }

    /// Counts a group id; one seen before is refused.
    fn see(&mut self, g: &str, row: Option<usize>) -> Result<()> {
        if self.seen.insert(Self::id_hash(g)) {
            return Ok(());
        }
        let at = row.map(|r| format!("row {r}: ")).unwrap_or_default();
        Err(decode_err(
            self.path,
            format!("{at}group {g} is in the file twice (the rows of a group must be together)"),
        ))
    }

    /// Hands out the current group, then the groups without rows whose place comes next.
    fn flush(&mut self) -> Result<()> {
        if let Some(g) = self.current.take() {
            self.handed += 1;
            (self.each)(g)?;
        }
        while self
            .without_rows
            .front()
            .is_some_and(|w| w.position == self.handed)
        {
            let w = self.without_rows.pop_front().expect("checked");
            self.see(&w.group.group_id, None)?;
            self.handed += 1;
            (self.each)(w.group)?;
        }
        Ok(())
    }
}

impl Assemble for Streamed<'_> {
    fn group(&mut self, g: &str, header: Option<&str>, row: usize) -> Result<&mut GroupSnapshot> {
        let path = self.path;
        let continues = self.current.as_ref().is_some_and(|c| c.group_id == g);
        match (continues, header) {
            (true, None) => return Ok(self.current.as_mut().expect("checked")),
            (true, Some(_)) => {
                return Err(decode_err(
                    path,
                    format!("row {row}: a second header of group {g} in its rows"),
                ))
            }
            (false, None) => {
                return Err(decode_err(
                    path,
                    format!("row {row}: the rows of group {g} are not together (its first row has no group_header)"),
                ))
            }
            (false, Some(_)) => {}
        }
        self.flush()?;
        self.see(g, Some(row))?;
        let header: GroupSnapshot = serde_json::from_str(header.expect("matched"))
            .map_err(|e| decode_err(path, format!("row {row}: group_header: {e}")))?;
        if header.group_id != g || !header.partitions.is_empty() {
            return Err(decode_err(
                path,
                format!(
                    "row {row}: the group_header of group {g} is not that group's header (it names {})",
                    header.group_id
                ),
            ));
        }
        self.current = Some(header);
        Ok(self.current.as_mut().expect("just set"))
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.flush()?;
        match self.without_rows.front() {
            None => Ok(()),
            Some(w) => Err(decode_err(
                self.path,
                format!(
                    "group {} without rows is placed at {}, past the {} groups of the file",
                    w.group.group_id, w.position, self.handed
                ),
            )),
        }
    }
}

fn decode<R: ChunkReader + 'static>(
    path: &str,
    reader: R,
    each: &mut dyn FnMut(GroupSnapshot) -> Result<()>,
) -> Result<SnapshotMeta> {
    let dec = |detail: String| decode_err(path, detail);
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(reader).map_err(|e| dec(e.to_string()))?;
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let find = |key: &str| -> Option<String> {
        kv.iter()
            .find(|e| e.key == key)
            .and_then(|e| e.value.clone())
    };
    let value = |key: &str| -> Result<String> {
        find(key).ok_or_else(|| dec(format!("key-value metadata {key} is missing")))
    };
    check_parquet_version(path, &value(KV_FORMAT_VERSION)?)?;
    let meta: SnapshotMeta =
        serde_json::from_str(&value(KV_SNAPSHOT)?).map_err(|e| dec(e.to_string()))?;
    let mut groups: Box<dyn Assemble + '_> = match find(KV_GROUPS) {
        Some(list) => Box::new(Listed::new(path, &list, each)?),
        None => Box::new(Streamed::new(path, &value(KV_GROUPS_WITHOUT_ROWS)?, each)?),
    };
    drop(kv);

    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| dec(e.to_string()))?;
    let mut first_row = 0;
    for batch in reader {
        let batch = batch.map_err(|e| dec(e.to_string()))?;
        add_rows(path, &batch, first_row, groups.as_mut())?;
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
    groups: &mut dyn Assemble,
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
    // Files of layout 1.x have no group headers on the rows.
    let header = match batch.column_by_name("group_header") {
        None => None,
        Some(_) => Some(c.get::<StringArray>("group_header")?),
    };
    // Files written before format 1.4 have no record fingerprints.
    let digest = match batch.column_by_name("last_record_digest") {
        None => None,
        Some(_) => Some(c.get::<StringArray>("last_record_digest")?),
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
        let h = header.filter(|h| h.is_valid(i)).map(|h| h.value(i));
        let g = groups.group(group.value(i), h, row)?;
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
            last_record_digest: digest
                .filter(|d| d.is_valid(i))
                .map(|d| d.value(i).to_string()),
            topic_id: topic_id
                .filter(|ids| ids.is_valid(i))
                .map(|ids| ids.value(i).to_string()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GroupState, GroupType, Member};

    fn meta() -> SnapshotMeta {
        SnapshotMeta {
            id: "20261205T020000.000Z-0123456789abcdef".into(),
            cluster_id: "c".into(),
            ..Default::default()
        }
    }

    fn group(id: &str, partitions: i32) -> GroupSnapshot {
        GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Stable,
            protocol_type: "consumer".into(),
            group_type: GroupType::Classic,
            members: vec![Member {
                member_id: format!("{id}-m"),
                client_id: "c".into(),
                host: "/127.0.0.1".into(),
            }],
            connector: None,
            configs: Default::default(),
            partitions: (0..partitions)
                .map(|p| PartitionOffset::new("t", p, 7))
                .collect(),
        }
    }

    fn decode_all(bytes: Vec<u8>) -> Result<Vec<GroupSnapshot>> {
        decode_offsets("o.parquet", Bytes::from(bytes)).map(|(_, g)| g)
    }

    /// The key-value metadata of a file, as the footer holds it.
    fn footer_kv(bytes: &[u8]) -> Vec<(String, usize)> {
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(Bytes::copy_from_slice(bytes)).unwrap();
        let kv = builder.metadata().file_metadata().key_value_metadata();
        kv.into_iter()
            .flatten()
            .map(|e| (e.key.clone(), e.value.as_ref().map_or(0, String::len)))
            .collect()
    }

    #[test]
    fn groups_without_rows_keep_their_places() {
        let cases: &[&[i32]] = &[
            &[0],
            &[0, 0, 0],
            &[0, 2, 0],
            &[2, 0, 3],
            &[1, 0, 0, 2, 0],
            &[0, 0, 1, 1],
        ];
        for sizes in cases {
            let groups: Vec<GroupSnapshot> = sizes
                .iter()
                .enumerate()
                .map(|(i, &n)| group(&format!("g{i}"), n))
                .collect();
            let back = decode_all(encode_offsets(&meta(), &groups).unwrap()).unwrap();
            assert_eq!(back, groups, "sizes {sizes:?}");
        }
    }

    #[test]
    fn the_footer_does_not_grow_with_the_groups_that_have_rows() {
        let small: Vec<GroupSnapshot> = vec![group("a", 2)];
        let many: Vec<GroupSnapshot> = (0..2000).map(|i| group(&format!("g{i:05}"), 2)).collect();
        let footer = |groups: &[GroupSnapshot]| -> usize {
            let kv = footer_kv(&encode_offsets(&meta(), groups).unwrap());
            assert!(kv.iter().all(|(k, _)| k != KV_GROUPS), "{kv:?}");
            kv.iter().map(|(_, n)| n).sum()
        };
        assert_eq!(footer(&small), footer(&many));
    }

    /// A Parquet file of these rows with this key-value metadata.
    fn file(rows: &RecordBatch, kv: Vec<KeyValue>) -> Vec<u8> {
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(kv))
            .build();
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, rows.schema(), Some(props)).unwrap();
        writer.write(rows).unwrap();
        writer.close().unwrap();
        out
    }

    /// The key-value metadata of a file of layout 2.0 with this list of groups without rows.
    fn kv_without_rows(list: &str) -> Vec<KeyValue> {
        vec![
            KeyValue::new(KV_FORMAT_VERSION.into(), PARQUET_FORMAT_VERSION.to_string()),
            KeyValue::new(KV_SNAPSHOT.into(), serde_json::to_string(&meta()).unwrap()),
            KeyValue::new(KV_GROUPS_WITHOUT_ROWS.into(), list.to_string()),
        ]
    }

    /// A file of layout 1.3: no group_header column, every header in one entry.
    fn legacy_file(groups: &[GroupSnapshot]) -> Vec<u8> {
        let with_rows: Vec<GroupSnapshot> = groups
            .iter()
            .filter(|g| !g.partitions.is_empty())
            .cloned()
            .collect();
        let full = Arc::new(schema());
        let rows = batch(&full, &meta(), &with_rows).unwrap();
        // Layout 1 has neither the group_header column nor the later last_record_digest.
        let header_col = full.index_of("group_header").unwrap();
        let rows = rows.project(&(0..header_col).collect::<Vec<_>>()).unwrap();
        let headers: Vec<GroupSnapshot> = groups.iter().map(header).collect();
        let kv = vec![
            KeyValue::new(KV_FORMAT_VERSION.into(), "1.3".to_string()),
            KeyValue::new(KV_SNAPSHOT.into(), serde_json::to_string(&meta()).unwrap()),
            KeyValue::new(KV_GROUPS.into(), serde_json::to_string(&headers).unwrap()),
        ];
        file(&rows, kv)
    }

    #[test]
    fn files_of_layout_1_are_still_read() {
        let groups = vec![group("a", 0), group("b", 2), group("c", 0), group("d", 1)];
        let file = legacy_file(&groups);
        assert!(footer_kv(&file).iter().any(|(k, _)| k == KV_GROUPS));
        assert_eq!(decode_all(file).unwrap(), groups);
    }

    #[test]
    fn a_newer_major_layout_is_refused_with_an_upgrade_hint() {
        // The version is a plain string after its key in the footer: "2.1" -> "3.1".
        assert_eq!(PARQUET_FORMAT_VERSION, "2.1");
        let mut edited = encode_offsets(&meta(), &[group("a", 1)]).unwrap();
        let at = edited
            .windows(KV_FORMAT_VERSION.len() + 8)
            .position(|w| w.starts_with(KV_FORMAT_VERSION.as_bytes()))
            .unwrap();
        let v = at
            + KV_FORMAT_VERSION.len()
            + edited[at + KV_FORMAT_VERSION.len()..]
                .windows(3)
                .position(|w| w == b"2.1")
                .unwrap();
        edited[v] = b'3';
        let err = decode_all(edited).unwrap_err();
        assert!(
            err.to_string().contains(
                "unsupported format_version 3.1 (this offset-vault reads major versions 1 and 2)"
            ),
            "{err}"
        );
    }

    /// The file of `groups` with its footer entry of groups without rows replaced.
    fn with_without_rows(groups: &[GroupSnapshot], list: &str) -> Vec<u8> {
        let full = Arc::new(schema());
        let with_rows: Vec<GroupSnapshot> = groups
            .iter()
            .filter(|g| !g.partitions.is_empty())
            .cloned()
            .collect();
        let rows = batch(&full, &meta(), &with_rows).unwrap();
        file(&rows, kv_without_rows(list))
    }

    #[test]
    fn a_malformed_group_layout_is_refused_with_what_is_wrong() {
        let rows = [group("a", 2), group("b", 1)];
        let empty = |id: &str, at: usize| {
            format!(
                r#"{{"position":{at},"group":{}}}"#,
                serde_json::to_string(&group(id, 0)).unwrap()
            )
        };
        let cases: Vec<(String, &str)> = vec![
            (
                format!("[{}]", empty("z", 3)),
                "is placed at 3, past the 2 groups",
            ),
            (
                format!("[{},{}]", empty("y", 1), empty("z", 0)),
                "not in the order of their places",
            ),
            (
                format!("[{}]", empty("a", 0)),
                "group a is in the file twice",
            ),
            (
                "{".to_string(),
                "offset_vault.groups_without_rows: invalid type: map",
            ),
        ];
        for (list, expected) in cases {
            let err = decode_all(with_without_rows(&rows, &list)).unwrap_err();
            assert!(err.to_string().contains(expected), "{list}: {err}");
        }
        // The footer entry missing altogether.
        let mut file = with_without_rows(&rows, "[]");
        let needle = KV_GROUPS_WITHOUT_ROWS.as_bytes();
        let at = file
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap();
        file[at + needle.len() - 1] = b'X';
        let err = decode_all(file).unwrap_err();
        assert!(
            err.to_string()
                .contains("offset_vault.groups_without_rows is missing"),
            "{err}"
        );
    }

    #[test]
    fn a_header_that_names_another_group_or_repeats_is_refused() {
        let full = Arc::new(schema());
        let good = batch(&full, &meta(), &[group("a", 2)]).unwrap();
        let header_col = full.index_of("group_header").unwrap();
        let edit = |headers: Vec<Option<String>>| -> Vec<u8> {
            let mut columns = good.columns().to_vec();
            columns[header_col] = Arc::new(StringArray::from(headers));
            let rows = RecordBatch::try_new(full.clone(), columns).unwrap();
            file(&rows, kv_without_rows("[]"))
        };
        let of = |id: &str| Some(serde_json::to_string(&group(id, 0)).unwrap());
        let cases = vec![
            (
                vec![of("b"), None],
                "is not that group's header (it names b)",
            ),
            (vec![of("a"), of("a")], "row 1: a second header of group a"),
            (
                vec![None, None],
                "row 0: the rows of group a are not together",
            ),
            (vec![Some("[1]".into()), None], "row 0: group_header"),
        ];
        for (headers, expected) in cases {
            let err = decode_all(edit(headers.clone())).unwrap_err();
            assert!(err.to_string().contains(expected), "{headers:?}: {err}");
        }
        assert_eq!(
            decode_all(edit(vec![of("a"), None])).unwrap(),
            vec![group("a", 2)]
        );
    }
}
