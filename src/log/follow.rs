//! `follow`: archives the records of `__consumer_offsets` as sealed segments (see
//! [`super::archive`] for the layout and the fence between followers).
//!
//! Where a partition starts is decided by the archive, not by the follower's committed
//! position: the `next` of the partition's last index entry, or the log start when the archive
//! has none or the log no longer holds that offset (then the skipped range is recorded as a gap
//! and a base snapshot of the groups is taken, so a restore to an instant after it has a base).
//! A follower killed at any point therefore resumes with no gap and no duplicate: a segment is
//! part of the archive once its index entry exists, and the next run starts after it. The
//! group's position is committed after each segment too, for monitoring and as the group's
//! record of progress.
//!
//! Several followers in one group split the partitions through Kafka's group protocol; a
//! partition's buffered records are dropped when it is revoked (its new owner reads them again
//! from the archive's end), and two followers that sealed the same range race on the index
//! entry's create-only key, which exactly one wins.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use regex::Regex;
use serde::Serialize;

use super::archive::{self, Head, Lane, Published};
use super::record::{decode, decode_connect, LogRecord};
use super::segment::{Row, SegmentMeta, SEGMENT_FORMAT_VERSION};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::tail::{Assignment, PartitionRead, RawRecord, Tail, TailEvent};
use crate::kafka::KafkaClient;
use crate::store::Store;

pub use super::archive::SegmentManifest;

/// The topic the follower archives.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// Why there is nothing to archive on a cluster where `__consumer_offsets` does not exist.
pub const NO_COMMIT_YET: &str = "no group has committed on this cluster yet: __consumer_offsets does not exist (the broker creates it at the first group coordinator lookup or offset commit)";

/// The longest pause between two looks at the metadata while a continuous follower waits for
/// `__consumer_offsets` to exist.
const TOPIC_WAIT_MAX: Duration = Duration::from_secs(10);

/// How the follower runs.
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// The follower's own consumer group (never archived).
    pub group: String,
    /// Archive up to the log end seen at the start, on every partition, then stop.
    pub once: bool,
    /// The longest a record waits in memory before its segment is sealed.
    pub interval: Duration,
    /// Records held in memory, over all partitions, before the largest buffer is sealed early.
    pub max_buffered: usize,
    /// The same bound in bytes (an estimate of the decoded records' memory, their buffers'
    /// spare capacity included): whichever bound is reached first seals the largest buffer.
    pub max_buffered_bytes: usize,
    /// Only these groups (none: every group but the follower's own).
    pub groups: Vec<String>,
    pub group_pattern: Option<String>,
    /// Kafka Connect's offsets topic (the workers' `offset.storage.topic`), archived too when
    /// set, by a second consumer in the group `<group>.connect`.
    pub connect_topic: Option<String>,
    /// Where a running follower reports its segments, rewinds and lag (for `serve`).
    pub progress: Option<Arc<super::progress::FollowProgress>>,
    /// Where each gap that loses archived history is recorded as an audit event (`follow.gap`).
    pub audit: Option<crate::audit::Auditor>,
}

impl FollowOptions {
    /// The follower group of Connect's offsets topic.
    pub fn connect_group(&self) -> String {
        format!("{}.connect", self.group)
    }
}

/// What a run archived.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Followed {
    /// Data files written.
    pub segments: Vec<String>,
    pub records: u64,
    /// Records of types not stored, or of groups not selected.
    pub ignored: u64,
    pub unknown: u64,
    /// Ranges the log no longer held, recorded as gaps.
    pub gaps: Vec<String>,
    /// Ranges another follower archived first.
    pub lost: Vec<String>,
    /// Commits that moved an offset backwards.
    pub rewinds: u64,
    /// The base snapshot taken after a first start or a gap.
    pub base_snapshot: Option<String>,
    /// Records that could not be decoded (counted with `unknown`) and other problems, one line
    /// each.
    pub warnings: Vec<String>,
    /// What was archived of Connect's offsets topic, when it is followed too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect: Option<Box<Followed>>,
    /// The topic did not exist ([`NO_COMMIT_YET`]): a run with --once, or one stopped while it
    /// waited for the topic, archived nothing, and that is no failure.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub topic_absent: bool,
}

/// One source record, decoded.
enum Decoded {
    Row(Row),
    Ignored,
    Unknown(String),
}

fn decode_raw(topic: &str, partition: i32, r: &RawRecord) -> Decoded {
    let Some(key) = &r.key else {
        return Decoded::Unknown(format!(
            "{topic}[{partition}]@{}: a record without a key; skipped",
            r.offset
        ));
    };
    let decoded = match Lane::of_topic(topic) {
        Lane::Offsets => decode(key, r.value.as_deref()),
        Lane::Connect => decode_connect(key, r.value.as_deref()),
    };
    match decoded {
        Ok(LogRecord::Ignored { .. }) => Decoded::Ignored,
        Ok(LogRecord::Unknown { record_type }) => Decoded::Unknown(format!(
            "{topic}[{partition}]@{}: record type {record_type} is not known; skipped",
            r.offset
        )),
        Ok(record) => Decoded::Row(Row {
            source_offset: r.offset,
            timestamp: r.timestamp,
            record,
        }),
        Err(e) => Decoded::Unknown(format!("{topic}[{partition}]@{}: {e}; skipped", r.offset)),
    }
}

/// The rows of one partition's read, with the counts of records not stored. Pure.
pub fn rows_of(read: &PartitionRead, warnings: &mut Vec<String>) -> (Vec<Row>, u64, u64) {
    let (mut ignored, mut unknown) = (0, 0);
    let mut rows = Vec::new();
    for r in &read.records {
        match decode_raw(OFFSETS_TOPIC, read.partition, r) {
            Decoded::Row(row) => rows.push(row),
            Decoded::Ignored => ignored += 1,
            Decoded::Unknown(w) => {
                // A record without a key is counted, not reported one by one.
                if r.key.is_some() {
                    warnings.push(w);
                }
                unknown += 1;
            }
        }
    }
    (rows, ignored, unknown)
}

/// The group a record is about.
fn group_of(record: &LogRecord) -> Option<&str> {
    match record {
        LogRecord::OffsetCommit { group, .. } | LogRecord::GroupMetadata { group, .. } => {
            Some(group)
        }
        _ => None,
    }
}

/// Which groups are archived. Pure.
struct Selected {
    own: Vec<String>,
    names: Vec<String>,
    pattern: Option<Regex>,
}

impl Selected {
    fn new(opts: &FollowOptions) -> Result<Self> {
        let pattern = opts
            .group_pattern
            .as_deref()
            .map(|p| {
                Regex::new(&format!("^(?:{p})$"))
                    .map_err(|e| Error::usage(format!("--group-pattern {p}: {e}")))
            })
            .transpose()?;
        Ok(Selected {
            own: vec![opts.group.clone(), opts.connect_group()],
            names: opts.groups.clone(),
            pattern,
        })
    }

    fn wants(&self, group: &str) -> bool {
        if self.own.iter().any(|o| o == group) {
            return false;
        }
        if self.names.is_empty() && self.pattern.is_none() {
            return true;
        }
        self.names.iter().any(|n| n == group)
            || self.pattern.as_ref().is_some_and(|p| p.is_match(group))
    }
}

/// One partition's records since its last segment.
#[derive(Debug)]
struct Buffer {
    start: i64,
    /// The first offset not read yet.
    next: i64,
    rows: Vec<Row>,
    raw: u64,
    /// What the rows' strings hold on the heap (an estimate, see [`heap_size`]).
    heap: usize,
    ignored: u64,
    unknown: u64,
    first_timestamp: Option<i64>,
    last_timestamp: Option<i64>,
    opened: Option<Instant>,
    /// The log end was reached and nothing was read since.
    at_end: bool,
    /// When the head was last written.
    head_written: Option<Instant>,
    /// For --once: the log end when the run started.
    stop_at: Option<i64>,
}

impl Buffer {
    fn new(start: i64) -> Self {
        Buffer {
            start,
            next: start,
            rows: Vec::new(),
            raw: 0,
            heap: 0,
            ignored: 0,
            unknown: 0,
            first_timestamp: None,
            last_timestamp: None,
            opened: None,
            at_end: false,
            head_written: None,
            stop_at: None,
        }
    }

    fn reset(&mut self, start: i64) {
        let (at_end, head_written, stop_at) = (self.at_end, self.head_written, self.stop_at);
        *self = Buffer::new(start);
        (self.at_end, self.head_written, self.stop_at) = (at_end, head_written, stop_at);
    }

    fn done(&self) -> bool {
        self.at_end || self.stop_at.is_some_and(|end| self.next >= end)
    }

    /// The memory the buffered rows take: the vector's whole capacity, and their strings.
    fn bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<Row>() + self.heap
    }
}

/// What a row's strings hold on the heap, with the allocator's per-block overhead (an
/// estimate: the bound it serves is approximate by nature). Pure.
fn heap_size(record: &LogRecord) -> usize {
    const BLOCK: usize = 16;
    let s = |t: &String| {
        if t.capacity() == 0 {
            0
        } else {
            t.capacity() + BLOCK
        }
    };
    match record {
        LogRecord::OffsetCommit {
            group,
            topic,
            value,
            ..
        } => {
            s(group)
                + s(topic)
                + value
                    .as_ref()
                    .map_or(0, |v| s(&v.metadata) + v.topic_id.as_ref().map_or(0, s))
        }
        LogRecord::GroupMetadata { group, .. } => s(group),
        LogRecord::SourceOffset {
            connector,
            partition,
            offset,
        } => s(connector) + s(partition) + offset.as_ref().map_or(0, s),
        LogRecord::Ignored { .. } | LogRecord::Unknown { .. } => 0,
    }
}

/// The partition to seal early when the held records reach either bound: the one whose
/// buffer takes the most memory. Pure.
fn over_bound(
    buffers: &BTreeMap<i32, Buffer>,
    max_records: usize,
    max_bytes: usize,
) -> Option<i32> {
    let held: usize = buffers.values().map(|b| b.raw as usize).sum();
    let bytes: usize = buffers.values().map(Buffer::bytes).sum();
    if held < max_records && bytes < max_bytes {
        return None;
    }
    buffers
        .iter()
        .filter(|(_, b)| b.raw > 0)
        .max_by_key(|(_, b)| b.bytes())
        .map(|(p, _)| *p)
}

/// Tracks the last offset of each group partition seen, to flag commits that move backwards.
///
/// Keyed by a 64-bit hash of (group, topic, partition) rather than the names, so that its
/// memory is 16 bytes and a little per partition committed to (about 25 MB for a million),
/// not the names' hundreds. Two keys that share a hash (about one chance in 10^8 among a
/// million keys) could hide or invent one rewind warning; the archive itself is not affected.
/// A group's deletion forgets its keys through the list of each group's keys.
#[derive(Default)]
struct Rewinds {
    last: std::collections::HashMap<u64, i64>,
    of_group: std::collections::HashMap<u64, Vec<u64>>,
}

/// A hash that is the same in every run (std's SipHash with its fixed keys).
fn key_hash(parts: &[&[u8]]) -> u64 {
    use std::hash::{Hash, Hasher};
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

impl Rewinds {
    /// A line when `row` moves an offset backwards.
    fn check(&mut self, row: &Row) -> Option<String> {
        match &row.record {
            LogRecord::OffsetCommit {
                group,
                topic,
                partition,
                value: Some(v),
            } => {
                let key = key_hash(&[group.as_bytes(), topic.as_bytes(), &partition.to_be_bytes()]);
                let before = match self.last.insert(key, v.offset) {
                    Some(before) => before,
                    None => {
                        self.of_group
                            .entry(key_hash(&[group.as_bytes()]))
                            .or_default()
                            .push(key);
                        return None;
                    }
                };
                (v.offset < before).then(|| {
                    format!(
                        "rewind: group {group} moved {topic}[{partition}] back from {before} to {} at {} (by a client; an offset-vault restore or reset shows in history as kind restore)",
                        v.offset,
                        crate::timeutil::millis_text(row.timestamp)
                    )
                })
            }
            LogRecord::OffsetCommit {
                group,
                topic,
                partition,
                value: None,
            } => {
                // Forgotten, but kept in its group's list: the next commit is no rewind.
                let key = key_hash(&[group.as_bytes(), topic.as_bytes(), &partition.to_be_bytes()]);
                if let Some(last) = self.last.get_mut(&key) {
                    *last = i64::MIN;
                }
                None
            }
            LogRecord::GroupMetadata {
                group,
                deleted: true,
                ..
            } => {
                for key in self
                    .of_group
                    .remove(&key_hash(&[group.as_bytes()]))
                    .unwrap_or_default()
                {
                    self.last.remove(&key);
                }
                None
            }
            _ => None,
        }
    }
}

/// Where each partition starts: the archive's end; with no archive of it yet, the group's
/// committed position (a follower group moved on purpose, e.g. to the log end) or else the log
/// start; the log start when the log no longer holds that offset. Pure.
fn start_of(archive_end: Option<i64>, committed: Option<i64>, log_start: i64) -> i64 {
    archive_end
        .or(committed)
        .filter(|o| *o >= log_start)
        .unwrap_or(log_start)
}

/// The log start of `partition` as the broker reported it; in a test build,
/// `FAILPOINTS="follow-log-start=return(P:N)"` moves partition P's to N, as retention would
/// have (the broker refuses DeleteRecords on `__consumer_offsets`), for the tests of a gap.
#[cfg(feature = "failpoints")]
fn injected_log_start(partition: i32, log_start: i64) -> i64 {
    fail::eval("follow-log-start", |arg| {
        let arg = arg?;
        let (p, n) = arg.split_once(':')?;
        let n = n.trim().parse::<i64>().ok()?;
        (p.trim().parse::<i32>().ok()? == partition).then_some(n)
    })
    .flatten()
    .map_or(log_start, |n| n.max(log_start))
}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
fn injected_log_start(_partition: i32, log_start: i64) -> i64 {
    log_start
}

/// [`start_of`] for each partition (with the group's committed position, if any).
async fn starts(
    store: &Store,
    kafka: &KafkaClient,
    topic: &str,
    partitions: &[(i32, Option<i64>)],
) -> Result<Vec<(i32, i64)>> {
    let set = partitions
        .iter()
        .map(|(p, _)| (topic.to_string(), *p))
        .collect();
    let marks = kafka.watermarks(&set).await?;
    let mut out = Vec::new();
    for (p, committed) in partitions {
        let end = archive::chain_end(store, Lane::of_topic(topic), *p).await?;
        let log_start = marks
            .get(&(topic.to_string(), *p))
            .and_then(|w| w.log_start)
            .ok_or_else(|| Error::Internal(format!("no log start offset of {topic}[{p}]")))?;
        let log_start = match Lane::of_topic(topic) {
            Lane::Offsets => injected_log_start(*p, log_start),
            Lane::Connect => log_start,
        };
        out.push((*p, start_of(end, *committed, log_start)));
    }
    Ok(out)
}

/// The follower: its consumer, its buffers and what it did.
struct Follower<'a> {
    /// The topic followed, and where its archive is.
    topic: &'a str,
    lane: Lane,
    connect: &'a [ConnectClient],
    tail: &'a Tail,
    store: &'a Store,
    kafka: &'a KafkaClient,
    handle: &'a tokio::runtime::Handle,
    opts: &'a FollowOptions,
    selected: Selected,
    partitions: i32,
    buffers: BTreeMap<i32, Buffer>,
    rewinds: Rewinds,
    out: Followed,
    need_base: bool,
    /// Why the partitions of a rebalance got no start, if they did not.
    no_start: Arc<std::sync::Mutex<Option<String>>>,
    /// When the lag was last reported (with `opts.progress`).
    reported: Option<Instant>,
}

impl Follower<'_> {
    fn template(&self, partition: i32) -> SegmentMeta {
        SegmentMeta {
            format_version: SEGMENT_FORMAT_VERSION.into(),
            cluster_id: self.kafka.cluster_id().to_string(),
            topic: self.topic.into(),
            partitions: self.partitions,
            partition,
            start: 0,
            next: 0,
            rows: 0,
            ignored: 0,
            unknown: 0,
            first_timestamp: None,
            last_timestamp: None,
            sealed_at: Utc::now(),
            gap: None,
        }
    }

    fn warn(&mut self, line: String) {
        tracing::warn!("{line}");
        self.out.warnings.push(line);
    }

    /// One audit event for a gap recorded in the archive (the first read of a partition, which
    /// starts the archive, is none). A failed write is a warning: the gap itself is recorded.
    fn audit_gap(&mut self, partition: i32, from: i64, to: i64, why: &str) {
        let opts: &FollowOptions = self.opts;
        let Some(auditor) = &opts.audit else {
            return;
        };
        let written = crate::audit::event::new_id().and_then(|id| {
            let mut facts = crate::audit::Facts {
                subject: Some(format!("{}[{partition}]", self.topic)),
                message: Some(why.to_string()),
                ..Default::default()
            };
            for (k, v) in [
                ("topic", serde_json::json!(self.topic)),
                ("partition", serde_json::json!(partition)),
                ("from_offset", serde_json::json!(from)),
                ("to_offset", serde_json::json!(to)),
                ("records_lost", serde_json::json!(to - from)),
            ] {
                facts.detail.insert(k.into(), v);
            }
            let event = auditor.bare(crate::audit::EventType::FollowGap, &id, facts);
            self.handle.block_on(auditor.record(&event)).map(|()| id)
        });
        if let Err(e) = written {
            self.warn(format!(
                "the gap of {}[{partition}] ({from} to {to}) is recorded in the archive, but its audit event could not be written: {e}",
                self.topic
            ));
        }
    }

    /// Partitions now read: record a gap where the log no longer held the archive's end.
    fn assigned(&mut self, starts: &[(i32, i64)]) -> Result<()> {
        for &(p, start) in starts {
            let end = self
                .handle
                .block_on(archive::chain_end(self.store, self.lane, p))?;
            let from = end.unwrap_or(0);
            if start > from {
                let why = match end {
                    Some(e) => format!("the log no longer held offsets {e} to {start} (compaction or retention passed the follower)"),
                    None => format!("the follower's first read of the partition began at {start}"),
                };
                match self.handle.block_on(archive::publish_gap(
                    self.store,
                    &self.template(p),
                    from,
                    start,
                    &why,
                ))? {
                    Published::Written(_) => {
                        let line = format!(
                            "{}[{p}] offsets {from} to {start}: {why}; recorded as a gap",
                            self.topic
                        );
                        if end.is_some() {
                            self.warn(line.clone());
                            self.audit_gap(p, from, start, &why);
                        } else {
                            tracing::info!("{line}");
                        }
                        self.out.gaps.push(line);
                    }
                    Published::Lost(_) => {}
                }
            }
            if end.is_none() || start > from {
                self.need_base = true;
            }
            let mut buffer = Buffer::new(start);
            if self.opts.once {
                let (_, high) = self.tail.watermarks(p)?;
                buffer.stop_at = Some(high);
            }
            self.buffers.insert(p, buffer);
            tracing::info!("reading {}[{p}] from offset {start}", self.topic);
        }
        Ok(())
    }

    fn revoked(&mut self, partitions: &[i32]) {
        for p in partitions {
            if let Some(b) = self.buffers.remove(p) {
                tracing::info!(
                    "no longer reading {}[{p}] (revoked); its {} unsealed record(s) are left to its next follower",
                    self.topic,
                    b.raw
                );
            }
        }
    }

    fn record(&mut self, p: i32, raw: RawRecord) {
        let Some(b) = self.buffers.get_mut(&p) else {
            return;
        };
        if raw.offset < b.next {
            return;
        }
        b.next = raw.offset + 1;
        b.raw += 1;
        b.at_end = false;
        b.opened.get_or_insert_with(Instant::now);
        b.first_timestamp.get_or_insert(raw.timestamp);
        b.last_timestamp = Some(raw.timestamp);
        match decode_raw(self.topic, p, &raw) {
            Decoded::Row(row) => {
                if group_of(&row.record).is_some_and(|g| !self.selected.wants(g)) {
                    b.ignored += 1;
                    return;
                }
                let rewind = self.rewinds.check(&row);
                b.heap += heap_size(&row.record);
                b.rows.push(row);
                if let Some(line) = rewind {
                    self.out.rewinds += 1;
                    if let Some(p) = &self.opts.progress {
                        p.rewound(self.topic);
                    }
                    tracing::warn!("{line}");
                }
            }
            Decoded::Ignored => b.ignored += 1,
            Decoded::Unknown(w) => {
                b.unknown += 1;
                self.warn(w);
            }
        }
    }

    /// Seals partition `p`'s buffer as a segment, then commits the position past it.
    fn seal(&mut self, p: i32) -> Result<()> {
        let position = self.tail.position(p);
        let template = self.template(p);
        let Some(b) = self.buffers.get_mut(&p) else {
            return Ok(());
        };
        if b.raw == 0 {
            return Ok(());
        }
        let next = position.filter(|n| *n >= b.next).unwrap_or(b.next);
        let meta = SegmentMeta {
            start: b.start,
            next,
            rows: b.rows.len() as u64,
            ignored: b.ignored,
            unknown: b.unknown,
            first_timestamp: b.first_timestamp,
            last_timestamp: b.last_timestamp,
            sealed_at: Utc::now(),
            ..template
        };
        let rows = std::mem::take(&mut b.rows);
        let published = self
            .handle
            .block_on(archive::publish(self.store, &meta, &rows))?;
        let b = self.buffers.get_mut(&p).expect("buffer");
        match published {
            Published::Written(m) => {
                self.out.records += m.meta.rows;
                self.out.ignored += m.meta.ignored;
                self.out.unknown += m.meta.unknown;
                self.out.segments.push(m.file);
                if let Some(progress) = &self.opts.progress {
                    progress.sealed(self.topic);
                }
                b.reset(next);
                // Not waited for: the broker may be away, and a catching-up run seals thousands
                // of segments. A run with --once commits every position again, waiting, at its end.
                if let Err(e) = self.tail.commit(&[(p, next)], false) {
                    // The archive already holds the segment; the next run starts after it.
                    tracing::warn!("committing the follower's position {}[{p}]@{next}: {e} (the segment is archived; only the group's record of progress lags)", self.topic);
                }
            }
            Published::Lost(w) => {
                let line = format!(
                    "{}[{p}] from {}: another follower archived it first (to {}, {}); this follower's copy was withdrawn and it goes on from {}",
                    self.topic,
                    meta.start, w.meta.next, w.file, w.meta.next
                );
                b.reset(w.meta.next);
                self.out.lost.push(line.clone());
                self.warn(line);
                self.tail.seek(p, w.meta.next)?;
            }
        }
        Ok(())
    }

    /// Writes the heads of partitions read to their end with nothing pending (at most once per
    /// interval each, always when `now`).
    fn heads(&mut self, now: bool) -> Result<()> {
        let interval = self.opts.interval;
        for (p, b) in self.buffers.iter_mut() {
            let stale = b.head_written.is_none_or(|t| t.elapsed() >= interval);
            if b.raw == 0 && b.done() && (now || stale) {
                // Markers past the last record are not archived: the head is the archive's end.
                let head = Head {
                    partition: *p,
                    next: b.start,
                    checked_at: Utc::now(),
                };
                self.handle
                    .block_on(archive::write_head(self.store, self.lane, &head))?;
                b.head_written = Some(Instant::now());
            }
        }
        Ok(())
    }

    /// Reports the lag to `opts.progress`, at most every 10 s (the log ends are a request per
    /// partition). A partition whose log end cannot be read now is left out of that report.
    fn report_lag(&mut self) {
        let Some(progress) = self.opts.progress.clone() else {
            return;
        };
        if self
            .reported
            .is_some_and(|t| t.elapsed() < Duration::from_secs(10))
        {
            return;
        }
        self.reported = Some(Instant::now());
        let mut records = 0;
        let mut oldest: Option<i64> = None;
        for (p, b) in &self.buffers {
            if let Ok((_, end)) = self.tail.watermarks(*p) {
                records += super::progress::partition_lag(b.start, end, b.raw, b.at_end);
            }
            if b.raw > 0 {
                oldest = match (oldest, b.first_timestamp) {
                    (Some(a), Some(f)) => Some(a.min(f)),
                    (a, f) => a.or(f),
                };
            }
        }
        let seconds = oldest
            .map(|t| ((Utc::now().timestamp_millis() - t).max(0)) as f64 / 1000.0)
            .unwrap_or(0.0);
        progress.lag(self.topic, records, seconds);
    }

    /// The partitions due for sealing: their oldest record waited the interval, their log end
    /// was reached in a run with --once, or (the largest) memory is at its bound.
    fn due(&self) -> Vec<i32> {
        let mut due: Vec<i32> = self
            .buffers
            .iter()
            .filter(|(_, b)| {
                b.raw > 0
                    && (b.opened.is_some_and(|t| t.elapsed() >= self.opts.interval)
                        || (self.opts.once && b.done()))
            })
            .map(|(p, _)| *p)
            .collect();
        due.extend(over_bound(
            &self.buffers,
            self.opts.max_buffered,
            self.opts.max_buffered_bytes,
        ));
        due
    }

    fn base_snapshot(&mut self) {
        self.need_base = false;
        let selection = crate::snapshot::model::Selection {
            groups: self.opts.groups.clone(),
            group_pattern: self.opts.group_pattern.clone(),
            all_groups: self.opts.groups.is_empty() && self.opts.group_pattern.is_none(),
            // Connect's lane needs its connectors' positions in the base.
            all_connectors: !self.connect.is_empty(),
            ..Default::default()
        };
        let opts = crate::snapshot::capture::CaptureOptions {
            selection,
            tags: [
                ("taken-by".to_string(), "follow".to_string()),
                ("reason".to_string(), "commit-log base".to_string()),
            ]
            .into(),
            format: Default::default(),
            include_secrets: false,
            encrypt_to: None,
            allow_partial: true,
            allow_empty: true,
            kind: Default::default(),
            undo_of: None,
        };
        match self
            .handle
            .block_on(crate::snapshot::take(
                self.store,
                self.kafka,
                self.connect,
                &opts,
            ))
        {
            Ok((m, _)) => {
                tracing::info!("base snapshot {} taken: --at an instant after it has a base", m.meta.id);
                self.out.base_snapshot = Some(m.meta.id);
            }
            Err(e) => self.warn(format!(
                "the base snapshot could not be taken ({e}): until a snapshot exists, --at before the archive's first records is refused; take one with offset-vault snapshot"
            )),
        }
    }

    /// Takes in the assignments and revocations of the rebalances the last poll ran.
    fn rebalanced(&mut self) -> Result<()> {
        // Assigned partitions that got no start are read by nobody: stop rather than stall.
        if let Some(why) = self.no_start.lock().ok().and_then(|mut w| w.take()) {
            return Err(Error::kafka(
                "deciding where to read the commit log",
                format!("{why}; the follower stops (run it again: it starts where the archive ends, with no gap)"),
            ));
        }
        for a in self.tail.assignments() {
            match a {
                Assignment::Assigned(starts) => self.assigned(&starts)?,
                Assignment::Revoked(ps) => self.revoked(&ps),
            }
        }
        Ok(())
    }

    fn run(&mut self, stop: &AtomicBool) -> Result<()> {
        loop {
            self.rebalanced()?;
            if self.need_base {
                self.base_snapshot();
            }
            if stop.load(Ordering::SeqCst) {
                break;
            }
            if self.opts.once && self.buffers.values().all(|b| b.raw == 0 && b.done()) {
                break;
            }
            match self.tail.poll(Duration::from_millis(200))? {
                Some(TailEvent::Record(p, raw)) => self.record(p, raw),
                Some(TailEvent::End(p)) => {
                    let position = self.tail.position(p);
                    if let Some(b) = self.buffers.get_mut(&p) {
                        if !b.at_end {
                            tracing::debug!(
                                "{}[{p}] read to its end at {} ({} record(s) held since the last segment)",
                                self.topic,
                                position.filter(|n| *n >= b.next).unwrap_or(b.next),
                                b.raw
                            );
                        }
                        b.at_end = true;
                    }
                }
                None => {}
            }
            // A partition revoked in that poll is another follower's now: not sealed here.
            self.rebalanced()?;
            for p in self.due() {
                self.seal(p)?;
            }
            self.heads(false)?;
            self.report_lag();
        }
        // Stopping (the end with --once, or a signal): seal what is held.
        let held: Vec<i32> = self.buffers.keys().copied().collect();
        for p in held {
            self.seal(p)?;
        }
        if self.opts.once {
            // Every partition's archive now ends at its buffer's start: the group's position.
            let positions: Vec<(i32, i64)> =
                self.buffers.iter().map(|(p, b)| (*p, b.start)).collect();
            if let Err(e) = self.tail.commit(&positions, true) {
                tracing::warn!("committing the follower's positions of {}: {e} (the segments are archived; only the group's record of progress lags)", self.topic);
            }
        }
        self.heads(true)
    }
}

/// Follows `__consumer_offsets` (and, with `opts.connect_topic`, Connect's offsets topic, at
/// the same time) into `store` until `stop` is set (or, with `--once`, the log end seen at the
/// start). Everything buffered is sealed before it returns. `connect` are the Connect workers
/// whose connectors a base snapshot includes.
pub async fn follow(
    kafka: &KafkaClient,
    store: &Store,
    connect: &[ConnectClient],
    opts: &FollowOptions,
    stop: Arc<AtomicBool>,
) -> Result<Followed> {
    let offsets = follow_topic(
        kafka,
        store,
        connect,
        opts,
        OFFSETS_TOPIC.to_string(),
        opts.group.clone(),
        stop.clone(),
    );
    let Some(topic) = opts.connect_topic.clone() else {
        return offsets.await;
    };
    if topic == OFFSETS_TOPIC {
        return Err(Error::usage(format!(
            "--connect-offsets-topic {topic}: that is the commit log itself; name Kafka Connect's offset.storage.topic"
        )));
    }
    let connect_lane = follow_topic(
        kafka,
        store,
        connect,
        opts,
        topic,
        opts.connect_group(),
        stop.clone(),
    );
    let (offsets, connect_lane) = tokio::join!(offsets, connect_lane);
    // One lane failing stops the other too, sealed, so the run ends as a whole.
    let mut out = offsets?;
    out.connect = Some(Box::new(connect_lane?));
    Ok(out)
}

/// What a follower does about the topic it follows, from what the metadata says of it (`None`:
/// it does not exist; else its partition count and whether every partition has a leader) and
/// whether the follower already waited for it. Pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopicWait {
    /// Follow it, with this many partitions.
    Follow(i32),
    /// Look again after a pause.
    Wait,
    /// Nothing to archive: `__consumer_offsets` is not there and the run is --once.
    NothingYet,
    /// Connect's offsets topic is not there: a wrong name, not a cluster without commits.
    NotFound,
}

fn topic_wait(lane: Lane, once: bool, seen: Option<(i32, bool)>, waited: bool) -> TopicWait {
    match (seen, lane) {
        (Some((n, true)), _) => TopicWait::Follow(n),
        // A topic there from the start goes on as it is: the reads wait for a leader away.
        (Some((n, false)), _) if !waited || once => TopicWait::Follow(n),
        // Just created: its leaders are a moment away.
        (Some((_, false)), _) => TopicWait::Wait,
        (None, Lane::Connect) => TopicWait::NotFound,
        (None, Lane::Offsets) if once => TopicWait::NothingYet,
        (None, Lane::Offsets) => TopicWait::Wait,
    }
}

/// The next pause between two looks at the metadata: doubled, up to [`TOPIC_WAIT_MAX`]. Pure.
fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(TOPIC_WAIT_MAX)
}

/// The partition count of the topic to follow, once it is there, or `None` when there is
/// nothing to archive. `__consumer_offsets` does not exist on a cluster where no group has
/// committed yet ([`NO_COMMIT_YET`]): a run with --once ends there, and a continuous follower
/// waits for it, saying so once and looking at the metadata with a growing pause (a `None` when
/// it is stopped while it waits). Nothing here makes the broker create the topic: the metadata
/// is read without a group. Blocking.
fn wait_for_topic(
    kafka: &KafkaClient,
    topic: &str,
    group: &str,
    once: bool,
    stop: &AtomicBool,
) -> Result<Option<i32>> {
    let lane = Lane::of_topic(topic);
    let mut pause = Duration::from_millis(500);
    let mut waited = false;
    loop {
        let decision = match kafka.topic_partitions(topic, group) {
            Ok(seen) => topic_wait(lane, once, seen, waited),
            // While it waits, a broker away is waited for too; a refusal never is.
            Err(e) if waited && !matches!(e, Error::AccessDenied { .. }) => {
                tracing::warn!("looking for {topic}: {e} (looking again)");
                TopicWait::Wait
            }
            Err(e) => return Err(e),
        };
        match decision {
            TopicWait::Follow(n) => {
                if waited {
                    crate::noteln!("{topic} exists now, with {n} partition(s): following it");
                }
                return Ok(Some(n));
            }
            TopicWait::NothingYet => return Ok(None),
            TopicWait::NotFound => {
                return Err(Error::NotFound {
                    what: "topic",
                    name: topic.to_string(),
                    hint: "; --connect-offsets-topic must name the Connect workers' offset.storage.topic, which they create when they start".into(),
                })
            }
            // Only an absent topic is waited for from the first look (see `topic_wait`).
            TopicWait::Wait if !waited => {
                crate::noteln!(
                    "{NO_COMMIT_YET}; waiting for it (looking every {} at most)",
                    humantime::format_duration(TOPIC_WAIT_MAX)
                );
                waited = true;
            }
            TopicWait::Wait => {}
        }
        let until = Instant::now() + pause;
        while Instant::now() < until {
            if stop.load(Ordering::SeqCst) {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
        }
        pause = next_pause(pause);
    }
}

/// [`follow`] of one topic, as the consumer group `group`.
async fn follow_topic(
    kafka: &KafkaClient,
    store: &Store,
    connect: &[ConnectClient],
    opts: &FollowOptions,
    topic: String,
    group: String,
    stop: Arc<AtomicBool>,
) -> Result<Followed> {
    let selected = Selected::new(opts)?;
    let handle = tokio::runtime::Handle::current();
    let (kafka, store, opts, connect) =
        (kafka.clone(), store.clone(), opts.clone(), connect.to_vec());
    tokio::task::spawn_blocking(move || {
        let no_start: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let starter = {
            let (kafka, store, handle, topic) =
                (kafka.clone(), store.clone(), handle.clone(), topic.clone());
            let no_start = no_start.clone();
            Box::new(
                move |partitions: &[(i32, Option<i64>)]| -> Vec<(i32, i64)> {
                    match handle.block_on(starts(&store, &kafka, &topic, partitions)) {
                        Ok(s) => s,
                        Err(e) => {
                            // Without a start the partition would be read from the group's
                            // position, which the archive may not end at: stop instead.
                            let ps: Vec<i32> = partitions.iter().map(|(p, _)| *p).collect();
                            if let Ok(mut no_start) = no_start.lock() {
                                no_start.get_or_insert(format!("{topic} partitions {ps:?}: {e}"));
                            }
                            Vec::new()
                        }
                    }
                },
            ) as crate::kafka::tail::Starter
        };
        let result = (|| {
            // Before the tail exists: its group's coordinator lookup would create the topic.
            let Some(partitions) = wait_for_topic(&kafka, &topic, &group, opts.once, &stop)? else {
                return Ok(Followed {
                    topic_absent: true,
                    ..Default::default()
                });
            };
            let tail = kafka.tail(&topic, &group, !opts.once, starter)?;
            let mut follower = Follower {
                topic: &topic,
                lane: Lane::of_topic(&topic),
                connect: &connect,
                tail: &tail,
                store: &store,
                kafka: &kafka,
                handle: &handle,
                opts: &opts,
                selected,
                partitions,
                buffers: BTreeMap::new(),
                rewinds: Rewinds::default(),
                out: Followed::default(),
                need_base: false,
                no_start,
                reported: None,
            };
            if opts.once {
                let all: Vec<i32> = (0..partitions).collect();
                let committed = tail.committed(&all)?;
                let asked: Vec<(i32, Option<i64>)> = all
                    .iter()
                    .map(|p| (*p, committed.get(p).copied()))
                    .collect();
                let s = handle.block_on(starts(&store, &kafka, &topic, &asked))?;
                follower.assigned(&s)?;
                let reading: Vec<(i32, i64)> = s
                    .iter()
                    .copied()
                    .filter(|(p, _)| !follower.buffers[p].done())
                    .collect();
                tail.assign(&reading)?;
            }
            let result = follower.run(&stop);
            let out = follower.out;
            tail.close();
            result.map(|()| out)
        })();
        if result.is_err() {
            stop.store(true, Ordering::SeqCst);
        }
        result
    })
    .await
    .map_err(|e| Error::Internal(format!("the follower stopped: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_rows_and_the_others_are_counted_with_a_warning_for_the_unknown() {
        let commit_key = {
            let mut k = 1i16.to_be_bytes().to_vec();
            for s in ["g", "t"] {
                k.extend((s.len() as i16).to_be_bytes());
                k.extend(s.as_bytes());
            }
            k.extend(0i32.to_be_bytes());
            k
        };
        let raw = |offset, key: Option<Vec<u8>>, value: Option<Vec<u8>>| RawRecord {
            offset,
            timestamp: 1000 + offset,
            key,
            value,
        };
        let read = PartitionRead {
            partition: 4,
            start: 10,
            next: 16,
            records: vec![
                raw(10, Some(commit_key.clone()), None),
                raw(11, Some(5i16.to_be_bytes().to_vec()), Some(vec![1])),
                raw(12, Some(99i16.to_be_bytes().to_vec()), None),
                raw(13, Some(vec![0]), None),
                raw(14, None, Some(vec![1])),
                raw(15, Some(commit_key), None),
            ],
        };
        let mut warnings = Vec::new();
        let (rows, ignored, unknown) = rows_of(&read, &mut warnings);
        let offsets: Vec<i64> = rows.iter().map(|r| r.source_offset).collect();
        assert_eq!(offsets, [10, 15]);
        assert_eq!((ignored, unknown), (1, 3));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("__consumer_offsets[4]@12") && warnings[0].contains("type 99")
        );
        assert!(warnings[1].contains("@13"), "{warnings:?}");
    }

    #[test]
    fn a_partition_starts_where_its_archive_ends_unless_the_log_no_longer_holds_it() {
        // (archive end, committed, log start, start)
        let cases = [
            (Some(40), Some(10), 0, 40),
            (Some(40), Some(90), 0, 40),
            (Some(40), None, 50, 50),
            (None, Some(90), 0, 90),
            (None, Some(10), 50, 50),
            (None, None, 0, 0),
            (None, None, 7, 7),
        ];
        for (end, committed, log_start, want) in cases {
            assert_eq!(
                start_of(end, committed, log_start),
                want,
                "{end:?} {committed:?} {log_start}"
            );
        }
    }

    #[test]
    fn a_commit_log_not_there_yet_is_waited_for_unless_once_and_connects_is_not_found() {
        use Lane::{Connect, Offsets};
        use TopicWait::*;
        // (lane, once, what the metadata says, waited already, decision)
        let cases = [
            (Offsets, false, Some((50, true)), false, Follow(50)),
            (Offsets, true, Some((50, true)), false, Follow(50)),
            (Offsets, false, None, false, Wait),
            (Offsets, false, None, true, Wait),
            (Offsets, true, None, false, NothingYet),
            // Appeared while waiting: followed once every partition has its leader, with the
            // partition count it has then.
            (Offsets, false, Some((3, false)), true, Wait),
            (Offsets, false, Some((3, true)), true, Follow(3)),
            // There from the start, a leader away: followed as before.
            (Offsets, false, Some((3, false)), false, Follow(3)),
            (Offsets, true, Some((3, false)), false, Follow(3)),
            (Connect, false, None, false, NotFound),
            (Connect, true, None, false, NotFound),
            (Connect, false, Some((25, true)), false, Follow(25)),
        ];
        for (lane, once, seen, waited, want) in cases {
            assert_eq!(
                topic_wait(lane, once, seen, waited),
                want,
                "{lane:?} once={once} {seen:?} waited={waited}"
            );
        }
        let pauses: Vec<u64> =
            std::iter::successors(Some(Duration::from_millis(500)), |p| Some(next_pause(*p)))
                .take(7)
                .map(|p| p.as_millis() as u64)
                .collect();
        assert_eq!(pauses, [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    }

    #[test]
    fn the_selection_leaves_out_the_followers_own_group() {
        let opts = |groups: &[&str], pattern: Option<&str>| FollowOptions {
            group: "me".into(),
            once: true,
            interval: Duration::from_secs(60),
            max_buffered: 10,
            max_buffered_bytes: 1 << 20,
            groups: groups.iter().map(|g| g.to_string()).collect(),
            group_pattern: pattern.map(String::from),
            connect_topic: None,
            progress: None,
            audit: None,
        };
        // (names, pattern, group, archived)
        let cases = [
            (vec![], None, "orders", true),
            (vec![], None, "me", false),
            (vec!["orders"], None, "orders", true),
            (vec!["orders"], None, "billing", false),
            (vec![], Some("bill.*"), "billing", true),
            (vec![], Some("bill"), "billing", false),
            (vec![], Some("m."), "me", false),
            (vec![], None, "me.connect", false),
        ];
        for (names, pattern, group, want) in cases {
            let s = Selected::new(&opts(&names, pattern)).unwrap();
            assert_eq!(s.wants(group), want, "{names:?} {pattern:?} {group}");
        }
        assert!(Selected::new(&opts(&[], Some("("))).is_err());
    }

    #[test]
    fn the_buffer_taking_the_most_memory_is_sealed_when_either_bound_is_reached() {
        use crate::log::testing;
        let buffer = |rows: Vec<LogRecord>| {
            let mut b = Buffer::new(0);
            for (i, record) in rows.into_iter().enumerate() {
                b.raw += 1;
                b.heap += heap_size(&record);
                b.rows.push(Row {
                    source_offset: i as i64,
                    timestamp: 0,
                    record,
                });
            }
            b
        };
        let long = "g".repeat(4000);
        let buffers: BTreeMap<i32, Buffer> = [
            (0, buffer(vec![testing::commit("g", 0, 1, 1); 3])),
            (1, buffer(vec![testing::commit(&long, 0, 1, 1)])),
            (2, Buffer::new(5)),
        ]
        .into();
        let bytes: usize = buffers.values().map(Buffer::bytes).sum();
        assert!(bytes > 4000, "{bytes}");
        // (max records, max bytes, sealed)
        let cases = [
            (100, usize::MAX, None),
            (100, bytes + 1, None),
            (100, bytes, Some(1)),
            (4, usize::MAX, Some(1)),
            (5, usize::MAX, None),
        ];
        for (records, max_bytes, want) in cases {
            assert_eq!(
                over_bound(&buffers, records, max_bytes),
                want,
                "{records} {max_bytes}"
            );
        }
        // Nothing held: nothing to seal, whatever the bounds.
        assert_eq!(over_bound(&[(0, Buffer::new(0))].into(), 0, 0), None);
    }

    #[test]
    fn a_rows_heap_is_its_strings_with_the_allocators_overhead() {
        use crate::log::testing;
        let commit = testing::commit("group", 0, 1, 1);
        let LogRecord::OffsetCommit {
            group,
            topic,
            value,
            ..
        } = &commit
        else {
            panic!("{commit:?}")
        };
        let v = value.as_ref().unwrap();
        let strings = [group, topic, &v.metadata]
            .into_iter()
            .chain(v.topic_id.as_ref())
            .filter(|s| s.capacity() > 0)
            .map(|s| s.capacity() + 16)
            .sum::<usize>();
        assert_eq!(heap_size(&commit), strings);
        assert!(heap_size(&commit) >= "group".len() + 16);
        assert_eq!(heap_size(&LogRecord::Ignored { record_type: 2 }), 0);
    }

    #[test]
    fn a_commit_below_the_last_one_is_a_rewind_until_the_offset_is_deleted() {
        use crate::log::testing;
        let row = |at, record| Row {
            source_offset: at,
            timestamp: at,
            record,
        };
        let mut r = Rewinds::default();
        let seen: Vec<bool> = [
            row(1, testing::commit("g", 0, 10, 1)),
            row(2, testing::commit("g", 0, 12, 2)),
            row(3, testing::commit("g", 0, 5, 3)),
            row(4, testing::commit("g", 1, 1, 4)),
            row(5, testing::tombstone("g", 0)),
            row(6, testing::commit("g", 0, 1, 6)),
            row(7, testing::group_deleted("g")),
            row(8, testing::commit("g", 1, 0, 8)),
        ]
        .iter()
        .map(|row| r.check(row).is_some())
        .collect();
        assert_eq!(
            seen,
            [false, false, true, false, false, false, false, false]
        );
    }
}
