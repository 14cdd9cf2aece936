//! Carrying a snapshot's groups onto another cluster: each topic renamed by the topic map, each
//! offset translated per partition (see [`super::decide`]) from what the target cluster holds.
//! Only the target cluster is read: the record the group consumed last is known from the
//! snapshot (its timestamp and fingerprint), and MirrorMaker 2's checkpoints and offset syncs
//! are on the target.
//!
//! How far an offset translated by timestamp and fingerprint can be from the exact position on
//! the target (never past it; exact unless identical records share the last consumed record's
//! time) is stated, case by case, on [`at_time`] and tested in `translate_tests.rs`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tokio::sync::OnceCell;

use super::checkpoints::{decode_checkpoint, decode_offset_sync, Checkpoint, OffsetSync};
use super::decide::{self, ByTime, Decision, Facts, IdentityCheck, Method, MirrorAnswer};
use super::topic_map::{Mapping, ReplicationPolicy, TopicMap};
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, Range, RecordPrint, TopicPartition, Watermarks};
use crate::live::LiveView;
use crate::model::{ConnectorSnapshot, GroupSnapshot};

/// At most this many records sharing one timestamp are read to find the last consumed one.
const MAX_SAME_TIME: i64 = 1000;

/// Where a restore or reset carries offsets to another cluster: names and translation.
#[derive(Debug, Default)]
pub struct Mirror {
    pub map: TopicMap,
    pub method: Method,
    /// `--checkpoints-topic`, else `ALIAS.checkpoints.internal` of the policy's alias.
    pub checkpoints_topic: Option<String>,
    /// `--offset-syncs-topic`, else the one `mm2-offset-syncs.*.internal` on the target.
    pub offset_syncs_topic: Option<String>,
    /// MirrorMaker 2's records, read once per run.
    records: OnceCell<MirrorRecords>,
    /// What carrying did to each connector, for its plan.
    pub connector_notes: BTreeMap<String, Vec<String>>,
}

/// MirrorMaker 2's checkpoints (the latest per group and partition, keyed by the target's topic
/// name) and offset syncs (per source topic and partition).
#[derive(Debug, Default)]
struct MirrorRecords {
    checkpoints: BTreeMap<(String, TopicPartition), Checkpoint>,
    syncs: BTreeMap<TopicPartition, Vec<OffsetSync>>,
}

/// Per (group, partition on the target): the topic's name in the snapshot, and how its offset
/// was translated (or why it was not).
pub type Decisions = BTreeMap<(String, TopicPartition), (String, Decision)>;

/// What carrying the snapshot onto another cluster gives a plan computed there, besides the live
/// state: each partition's decision and what carrying did to each connector. Empty on the
/// snapshot's own cluster.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// From [`Mirror::translate`].
    pub decisions: Decisions,
    /// From [`Mirror::carry_connectors`].
    pub connector_notes: BTreeMap<String, Vec<String>>,
}

/// The groups as the target cluster names them (what the plan reads the cluster for), each
/// partition's slot for its decision, and the partitions to translate.
#[derive(Debug, Default)]
pub struct Renamed {
    pub groups: Vec<GroupSnapshot>,
    /// Filled by [`Mirror::translate`]; a topic never carried over is refused here already.
    decisions: Decisions,
    /// (group, partition on the target, the snapshot's partition under the target's name).
    parts: Vec<Part>,
}

impl Mirror {
    pub fn new(
        map: TopicMap,
        method: Method,
        checkpoints_topic: Option<String>,
        offset_syncs_topic: Option<String>,
    ) -> Self {
        Mirror {
            map,
            method,
            checkpoints_topic,
            offset_syncs_topic,
            records: OnceCell::new(),
            connector_notes: BTreeMap::new(),
        }
    }

    /// Carries the connectors' configs to the target: a sink connector's `topics` are renamed
    /// (its group's offsets are translated like any group's); a source connector's offsets
    /// describe its source system, not Kafka, and are copied as they are. The notes say so in
    /// the plan.
    pub fn carry_connectors(&mut self, connectors: &mut [ConnectorSnapshot]) -> Result<()> {
        for c in connectors.iter_mut() {
            let mut notes = Vec::new();
            if c.connector_type == "source" {
                notes.push(
                    "a source connector's offsets describe its source system, not Kafka: they are copied as they are"
                        .to_string(),
                );
            }
            if let Some(topics) = c.config.get("topics").cloned() {
                let mut renamed = Vec::new();
                for t in topics.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    match self.target_topic(t)? {
                        Ok(name) => renamed.push(name),
                        Err(why) => {
                            return Err(Error::usage(format!(
                                "connector {}: {why}; leave it out with --group or --connector",
                                c.name
                            )))
                        }
                    }
                }
                let renamed = renamed.join(",");
                if renamed != topics {
                    notes.push(format!(
                        "created again with topics={renamed} (topics={topics} in the snapshot)"
                    ));
                    c.config.insert("topics".into(), renamed);
                }
            }
            if let Some(re) = c.config.get("topics.regex") {
                notes.push(format!(
                    "topics.regex={re} is kept as it is: check that it matches this cluster's topic names, or pass --connector-config-override topics.regex=..."
                ));
            }
            if !notes.is_empty() {
                self.connector_notes.insert(c.name.clone(), notes);
            }
        }
        Ok(())
    }

    /// The topic `topic` of the snapshot is on the target, or why it is not.
    pub fn target_topic(&self, topic: &str) -> Result<std::result::Result<String, String>> {
        Ok(match self.map.map(topic)? {
            Mapping::Replicated { topic, .. } => Ok(topic),
            Mapping::NotReplicated { reason } => Err(format!(
                "topic {topic} is {reason}, which a replicator never carries over"
            )),
        })
    }

    /// The groups under the target's names. Pure: the cluster is read for the renamed groups
    /// (by the plan), then [`Mirror::translate`] decides each partition from what was read.
    pub fn rename(&self, groups: &[GroupSnapshot]) -> Result<Renamed> {
        let mut out = Renamed::default();
        let parts = &mut out.parts;
        for g in groups {
            let mut renamed = g.clone();
            for p in renamed.partitions.iter_mut() {
                let source = p.topic.clone();
                match self.target_topic(&source)? {
                    Ok(name) => {
                        p.topic = name;
                        p.topic_id = None;
                        p.leader_epoch = None;
                        parts.push((
                            g.group_id.clone(),
                            (p.topic.clone(), p.partition),
                            p.clone(),
                        ));
                        // The source name travels with the decision made below.
                        out.decisions.insert(
                            (g.group_id.clone(), (p.topic.clone(), p.partition)),
                            (source, placeholder()),
                        );
                    }
                    Err(why) => {
                        let translation = decide::Translation {
                            method: decide::Used::None,
                            basis: why.clone(),
                            same_time: None,
                            checkpoint: None,
                            checkpoint_repeats: None,
                        };
                        out.decisions.insert(
                            (g.group_id.clone(), (p.topic.clone(), p.partition)),
                            (
                                source,
                                Decision::Refused {
                                    why,
                                    clamp_to: None,
                                    translation,
                                },
                            ),
                        );
                    }
                }
            }
            let mut seen: BTreeMap<TopicPartition, &str> = BTreeMap::new();
            for (p, before) in renamed.partitions.iter().zip(&g.partitions) {
                if let Some(other) = seen.insert((p.topic.clone(), p.partition), &before.topic) {
                    return Err(Error::usage(format!(
                        "group {}: topics {other} and {} are both {} on this cluster; give each its own name with --topic-map",
                        g.group_id, before.topic, p.topic
                    )));
                }
            }
            out.groups.push(renamed);
        }
        Ok(out)
    }

    /// Translates each renamed partition onto the target cluster `kafka`, given what the plan
    /// read of it (`live`: its topics and log ranges). Partitions whose topic does not exist
    /// there keep their slot: the plan reports them missing.
    pub async fn translate(
        &self,
        kafka: &KafkaClient,
        renamed: &Renamed,
        live: &LiveView,
    ) -> Result<Decisions> {
        let mut decisions = renamed.decisions.clone();
        let marks = &live.watermarks;
        let parts: Vec<Part> = renamed
            .parts
            .iter()
            .filter(|(_, tp, _)| marks.contains_key(tp))
            .cloned()
            .collect();

        let identity = if matches!(self.method, Method::Auto | Method::Identity) {
            check_identity(kafka, &parts, marks).await?
        } else {
            HashMap::new()
        };
        let need_time = |key: &(String, TopicPartition)| match self.method {
            Method::Timestamp => true,
            Method::Auto => !matches!(identity.get(key), Some(IdentityCheck::Confirmed)),
            _ => false,
        };
        let timed: Vec<_> = parts
            .iter()
            .filter(|(g, tp, _)| need_time(&(g.clone(), tp.clone())))
            .cloned()
            .collect();
        let by_time = find_by_time(kafka, &timed, marks).await?;
        let mirror = self.mirror_records(kafka).await?;

        for (group, tp, p) in &parts {
            let key = (group.clone(), tp.clone());
            let source_topic = decisions[&key].0.clone();
            let facts = Facts {
                source_offset: p.offset,
                identity: identity.get(&key).cloned().unwrap_or_else(|| {
                    IdentityCheck::Unchecked("not checked (--translate)".into())
                }),
                by_time: by_time.get(&key).cloned().unwrap_or_else(|| {
                    ByTime::NotLooked(match self.method {
                        Method::Identity | Method::Checkpoints => {
                            "not looked up (--translate)".into()
                        }
                        _ => "the offsets are the same (identity confirmed)".into(),
                    })
                }),
                checkpoint: mirror.answer(group, tp, &source_topic, p.offset),
                source_log_start: p.log_start_offset,
                target_log_start: marks.get(tp).and_then(|w| w.log_start),
            };
            let decision = decide::decide(self.method, &facts);
            decisions.insert(key, (source_topic, decision));
        }
        Ok(decisions)
    }

    /// MirrorMaker 2's checkpoints and offset syncs on the target, read once. Missing topics
    /// give none.
    async fn mirror_records(&self, kafka: &KafkaClient) -> Result<&MirrorRecords> {
        self.records
            .get_or_try_init(|| async {
                let (_, all) = kafka.metadata().await?;
                let checkpoints = self.checkpoints_topic.clone().or_else(|| {
                    match self.map.policy() {
                        Some(ReplicationPolicy::Default { alias, separator }) => Some(format!(
                            "{alias}{separator}checkpoints{separator}internal"
                        )),
                        _ => None,
                    }
                });
                let syncs = self.offset_syncs_topic.clone().or_else(|| {
                    let found: Vec<&String> = all
                        .keys()
                        .filter(|t| t.starts_with("mm2-offset-syncs.") && t.ends_with(".internal"))
                        .collect();
                    (found.len() == 1).then(|| found[0].clone())
                });
                for (flag, name) in [
                    ("--checkpoints-topic", &self.checkpoints_topic),
                    ("--offset-syncs-topic", &self.offset_syncs_topic),
                ] {
                    if let Some(name) = name.as_ref().filter(|n| !all.contains_key(*n)) {
                        return Err(Error::usage(format!(
                            "{flag} {name}: no such topic on the target cluster; MirrorMaker 2 writes it on the cluster given by its offset-syncs.topic.location (checkpoints: always the target)"
                        )));
                    }
                }
                let mut out = MirrorRecords::default();
                if let Some(topic) = checkpoints.filter(|t| all.contains_key(t)) {
                    for r in read_topic(kafka, &topic, &all).await? {
                        let c = decode_checkpoint(
                            r.key.as_deref().unwrap_or_default(),
                            r.value.as_deref().unwrap_or_default(),
                        )?;
                        out.checkpoints
                            .insert((c.group.clone(), (c.topic.clone(), c.partition)), c);
                    }
                }
                if let Some(topic) = syncs.filter(|t| all.contains_key(t)) {
                    for r in read_topic(kafka, &topic, &all).await? {
                        let s = decode_offset_sync(
                            r.key.as_deref().unwrap_or_default(),
                            r.value.as_deref().unwrap_or_default(),
                        )?;
                        out.syncs
                            .entry((s.topic.clone(), s.partition))
                            .or_default()
                            .push(s);
                    }
                }
                Ok(out)
            })
            .await
    }
}

/// The group with its topics as `map` names them on another cluster (offsets unchanged, topic
/// ids and epochs dropped: they belong to the other cluster), partitions in order. Topics a
/// replicator never carries over, and topics a rule would give a name Kafka refuses, keep their
/// names. For comparisons and display.
pub fn rename_group(map: &TopicMap, mut g: GroupSnapshot) -> GroupSnapshot {
    for p in g.partitions.iter_mut() {
        if let Ok(Mapping::Replicated { topic, .. }) = map.map(&p.topic) {
            p.topic = topic;
            p.topic_id = None;
            p.leader_epoch = None;
        }
    }
    g.partitions
        .sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    g
}

/// A decision's slot until the partition is decided; it stays for a partition the target does
/// not have (the plan reports it missing).
fn placeholder() -> Decision {
    Decision::Refused {
        why: "not translated: the partition does not exist on the target".into(),
        clamp_to: None,
        translation: decide::Translation {
            method: decide::Used::None,
            basis: "the partition does not exist on the target".into(),
            same_time: None,
            checkpoint: None,
            checkpoint_repeats: None,
        },
    }
}

impl MirrorRecords {
    /// MirrorMaker 2's offset on the target for `offset` of the source partition: its
    /// checkpoint of the group when that is at `offset`, else from the offset syncs (the
    /// newest sync at or before `offset`; past it, one more, as MirrorMaker does).
    fn answer(
        &self,
        group: &str,
        target: &TopicPartition,
        source_topic: &str,
        offset: i64,
    ) -> Option<MirrorAnswer> {
        if let Some(c) = self
            .checkpoints
            .get(&(group.to_string(), target.clone()))
            .filter(|c| c.upstream_offset == offset)
        {
            return Some(MirrorAnswer {
                offset: c.downstream_offset,
                basis: format!(
                    "MirrorMaker 2's checkpoint of the group: {offset} on the source is {} here",
                    c.downstream_offset
                ),
            });
        }
        let syncs = self.syncs.get(&(source_topic.to_string(), target.1))?;
        let sync = syncs
            .iter()
            .filter(|s| s.upstream_offset <= offset)
            .max_by_key(|s| s.upstream_offset)?;
        let past = i64::from(offset > sync.upstream_offset);
        Some(MirrorAnswer {
            offset: sync.downstream_offset + past,
            basis: format!(
                "MirrorMaker 2's offset sync {} -> {}{}",
                sync.upstream_offset,
                sync.downstream_offset,
                if past == 1 {
                    " plus one (records after a sync are not mapped exactly)"
                } else {
                    ""
                }
            ),
        })
    }
}

/// Every record of a (small, internal) topic.
async fn read_topic(
    kafka: &KafkaClient,
    topic: &str,
    all: &BTreeMap<String, i32>,
) -> Result<Vec<RecordPrint>> {
    let n = all.get(topic).copied().unwrap_or(0);
    let tps: BTreeSet<TopicPartition> = (0..n).map(|p| (topic.to_string(), p)).collect();
    let marks = kafka.watermarks(&tps).await?;
    let ranges = marks
        .into_iter()
        .filter_map(|(tp, w)| {
            Some(Range {
                tp,
                from: w.log_start?,
                until: w.log_end?,
            })
        })
        .collect();
    Ok(kafka
        .read_ranges(ranges, true)
        .await?
        .into_values()
        .flatten()
        .collect())
}

type Part = (String, TopicPartition, crate::model::PartitionOffset);

/// Reads the record at `U - 1` on the target for each partition and compares it with the
/// snapshot's last consumed record.
async fn check_identity(
    kafka: &KafkaClient,
    parts: &[Part],
    marks: &BTreeMap<TopicPartition, Watermarks>,
) -> Result<HashMap<(String, TopicPartition), IdentityCheck>> {
    let mut out = HashMap::new();
    let mut positions = BTreeSet::new();
    for (g, tp, p) in parts {
        let key = (g.clone(), tp.clone());
        let w = marks.get(tp).copied().unwrap_or_default();
        let (Some(start), Some(end)) = (w.log_start, w.log_end) else {
            out.insert(
                key,
                IdentityCheck::Unchecked("the target's log range was not read".into()),
            );
            continue;
        };
        let u = p.offset;
        if p.last_record_digest.is_none() {
            out.insert(
                key,
                IdentityCheck::Unchecked(
                    "the snapshot has no fingerprint of the last consumed record (take snapshots with --with-timestamps)"
                        .into(),
                ),
            );
        } else if u > end {
            out.insert(
                key,
                IdentityCheck::Differs(format!(
                    "the target's log ends at {end}, before offset {u}"
                )),
            );
        } else if u - 1 < start {
            out.insert(
                key,
                IdentityCheck::Unchecked(format!(
                    "offset {} is before the target's log start {start}",
                    u - 1
                )),
            );
        } else {
            positions.insert((tp.clone(), u));
        }
    }
    let (found, unread) = kafka.last_records(positions.into_iter().collect()).await?;
    for (g, tp, p) in parts {
        let key = (g.clone(), tp.clone());
        if out.contains_key(&key) {
            continue;
        }
        let u = p.offset;
        let check = match found.get(&(tp.clone(), u)) {
            Some(r)
                if Some(&r.digest) == p.last_record_digest.as_ref()
                    && (p.last_record_timestamp.is_none()
                        || r.timestamp
                            == p.last_record_timestamp.map(|t| t.timestamp_millis())) =>
            {
                IdentityCheck::Confirmed
            }
            Some(_) => IdentityCheck::Differs(format!(
                "the record at offset {} on the target is not the last one the group consumed",
                u - 1
            )),
            None if unread
                .iter()
                .any(|u| u.starts_with(&format!("{}[{}]@", tp.0, tp.1))) =>
            {
                IdentityCheck::Unchecked(format!(
                    "the record at offset {} was not read in time",
                    u - 1
                ))
            }
            None => IdentityCheck::Differs(format!(
                "no record at offset {} on the target (compacted or deleted)",
                u - 1
            )),
        };
        out.insert(key, check);
    }
    Ok(out)
}

/// Finds each partition's last consumed record on the target by its timestamp (ListOffsets) and,
/// among the records of that time, by its fingerprint: the reading; what is found, and how far
/// the offset it leads to can be from the exact one, is [`at_time`]'s.
async fn find_by_time(
    kafka: &KafkaClient,
    parts: &[Part],
    marks: &BTreeMap<TopicPartition, Watermarks>,
) -> Result<HashMap<(String, TopicPartition), ByTime>> {
    let mut out = HashMap::new();
    // Distinct (partition, time) pairs, looked up in rounds: a request holds a partition once.
    let mut pending: BTreeMap<TopicPartition, BTreeSet<i64>> = BTreeMap::new();
    for (g, tp, p) in parts {
        match p.last_record_timestamp {
            Some(ts) => {
                pending
                    .entry(tp.clone())
                    .or_default()
                    .insert(ts.timestamp_millis());
            }
            None => {
                out.insert(
                    (g.clone(), tp.clone()),
                    ByTime::NotLooked(
                        "the snapshot has no record timestamp for it (take snapshots with --with-timestamps)"
                            .into(),
                    ),
                );
            }
        }
    }
    // (partition, time) -> (first offset at or after it, first offset after it).
    let spans = crate::live::spans_at_times(kafka, pending, marks).await?;
    // The records of each span whose fingerprint is needed, in rounds of one span per partition.
    let mut wanted: BTreeMap<TopicPartition, BTreeSet<(i64, i64)>> = BTreeMap::new();
    for (_, tp, p) in parts {
        if let (Some(ts), Some(_)) = (p.last_record_timestamp, &p.last_record_digest) {
            if let Some(window) = same_time_window(spans[&(tp.clone(), ts.timestamp_millis())]) {
                wanted.entry(tp.clone()).or_default().insert(window);
            }
        }
    }
    let mut records: BTreeMap<(TopicPartition, i64), Vec<RecordPrint>> = BTreeMap::new();
    loop {
        let round: Vec<Range> = wanted
            .iter_mut()
            .filter_map(|(tp, spans)| {
                spans.pop_first().map(|(from, until)| Range {
                    tp: tp.clone(),
                    from,
                    until,
                })
            })
            .collect();
        if round.is_empty() {
            break;
        }
        let froms: HashMap<TopicPartition, i64> =
            round.iter().map(|r| (r.tp.clone(), r.from)).collect();
        for (tp, rs) in kafka.read_ranges(round, false).await? {
            let from = froms[&tp];
            records.insert((tp, from), rs);
        }
    }
    for (g, tp, p) in parts {
        let Some(ts) = p.last_record_timestamp else {
            continue;
        };
        let span = spans[&(tp.clone(), ts.timestamp_millis())];
        let log = marks.get(tp).map_or((0, 0), |w| {
            (w.log_start.unwrap_or(0), w.log_end.unwrap_or(0))
        });
        let read = records
            .get(&(tp.clone(), span.0))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let found = at_time(ts, span, log, p.last_record_digest.as_deref(), read);
        out.insert((g.clone(), tp.clone()), found);
    }
    Ok(out)
}

/// The records of a span `(x, y)` (see [`at_time`]) whose fingerprints are read: the first
/// [`MAX_SAME_TIME`] of them; none when no record has the time.
fn same_time_window((x, y): (i64, i64)) -> Option<(i64, i64)> {
    (y > x).then(|| (x, y.min(x + MAX_SAME_TIME)))
}

/// What the target partition holds at `ts`, the timestamp of the last record the group consumed
/// (pure; [`find_by_time`] does the reading). `span` is `(x, y)`: ListOffsets at `ts` and at
/// `ts + 1 ms` (the first offset whose record is at or after each; the log end where there is
/// none), so `y - x` records share the time when timestamps are in order; `log` is the target's
/// `(log start, log end)`; `digest` the snapshot's fingerprint of that record (key, value and
/// headers); `read` the records of [`same_time_window`] of the span, in offset order.
///
/// # How far the offset it leads to can be from the exact one
///
/// Let R be the last consumed record (offset `U - 1` on the source), T its timestamp, `E` the
/// exact position on the target (the offset after R's copy there) and `V` the offset
/// [`super::decide`] makes of the answer (`offset + 1` of a match, else `first`). With a
/// fingerprint (every snapshot `--with-timestamps` of format 2.1 or later) and the target's
/// timestamps not decreasing in offset order (a replica keeps the source's timestamps, so this
/// holds when it holds on the source: in-order producers, or `LogAppendTime`):
/// - `V <= E` always: no record after R is ever skipped, some may be processed again.
/// - `V == E` exactly when R's copy is among the first [`MAX_SAME_TIME`] records at T and no
///   record before it at T has the same fingerprint. Records sharing T, offset gaps
///   (compaction, control records), a log that starts later, records missing elsewhere and any
///   shift between the clusters' offsets leave it exact.
/// - `E - V <= n - 1`, `n` the records at T (`same_time` in the plan), when an identical record
///   (same timestamp, key, value and headers) precedes R's copy: the first is taken
///   ([`ByTime::Matched`] with `identical > 1`), so the records from it up to R are processed
///   again.
/// - `E - V <= n` when more than [`MAX_SAME_TIME`] records share T and R's copy is not among
///   the first of them ([`ByTime::Unmatched`]: `V` is the first record at T).
/// - No offset when R is not on the target (deleted, compacted away, not replicated yet, or
///   before its log start): [`ByTime::Missing`] or [`ByTime::BeforeStart`], refused unless
///   clamped on request to the first record at or after T (or the log start).
///
/// Without a fingerprint (older snapshots): `V == E` when R is the one record at T; with `n > 1`
/// records at T, `E - V <= n`; but when R is missing and one other record has T, that record is
/// taken for R: `V` can be one past `E` (the only way to skip a record).
///
/// With timestamps out of order, `V <= E` still holds (R's copy is never before the first
/// record at or after T), but `n` no longer bounds `E - V`: an identical record anywhere from
/// the first record at T on can be taken, and R's copy behind a later-stamped record is not
/// found (the partition is refused).
fn at_time(
    ts: chrono::DateTime<chrono::Utc>,
    (x, y): (i64, i64),
    (start, end): (i64, i64),
    digest: Option<&str>,
    read: &[RecordPrint],
) -> ByTime {
    let ms = ts.timestamp_millis();
    let when = ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    if y == x && x == start && start > 0 && x < end {
        ByTime::BeforeStart {
            start,
            why: format!(
                "the last consumed record ({when}) is older than this cluster's first record at offset {start}: the target is before log-start {start}"
            ),
        }
    } else if y == x {
        ByTime::Missing {
            next: x,
            why: if x >= end {
                format!("no record on the target at or after {when}, the time of the last consumed record: not replicated yet")
            } else {
                format!("no record on the target has {when}, the time of the last consumed record: the target has a gap there")
            },
        }
    } else {
        match digest {
            None => ByTime::Unmatched {
                first: x,
                same_time: y - x,
            },
            Some(digest) => {
                let same: Vec<&RecordPrint> = read
                    .iter()
                    .filter(|r| r.timestamp == Some(ms) && r.digest == digest)
                    .collect();
                match same.first() {
                    Some(first) => ByTime::Matched {
                        offset: first.offset,
                        same_time: y - x,
                        identical: same.len() as i64,
                    },
                    None if y - x > MAX_SAME_TIME => ByTime::Unmatched {
                        first: x,
                        same_time: y - x,
                    },
                    None => ByTime::Missing {
                        next: x,
                        why: format!(
                            "none of the {} record(s) on the target at {when} is the last consumed record (its fingerprint differs): the target has a gap there",
                            y - x
                        ),
                    },
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
