//! The committed offsets of groups at an instant (`--at TIME`): the newest snapshot created
//! before it (the base) plus every record the commit-log archive holds between the two, replayed
//! in log order (and, first, those of the [`BEFORE_BASE_MS`] before the base: a transaction open
//! while the base was taken committed its offsets after it). One reconstruction for every command
//! that takes `--at`: `restore` replaces the snapshot's targets with it, `show`, `diff` and
//! `export` read it.
//!
//! The archive must cover the interval for each group's partition of `__consumer_offsets`
//! ([`coverage_problem`]): anything less is refused, never papered over. A share group's
//! positions are not in this log (they live in `__share_group_state`): share groups are left out,
//! and one named on the command line is refused.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::archive::Lane;
use super::bins::Bins;
use super::coverage::{coverage_problem, coverage_problem_of};
use super::follow::SegmentManifest;
use super::history::read_segment;
pub use super::instant::millis;
use super::record::canonical_json;
use super::record::LogRecord;
use super::replay::{state_at, Position, State, Timed};
use super::segment::SegmentMeta;
use crate::diff::Filter;
use crate::error::{Error, Result};
use crate::kafka::GroupType;
use crate::snapshot::choose::{Chosen, Eligible};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, PartitionOffset, SnapshotMeta};
use crate::snapshot::repo;
use crate::store::Store;

/// What to reconstruct: the instant, the selection, and the command (for its messages).
#[derive(Debug, Clone)]
pub struct AtRequest {
    pub at: DateTime<Utc>,
    /// The groups, connectors, topics and partitions selected (empty: everything). A group
    /// named here that cannot be reconstructed is refused instead of left out.
    pub filter: Filter,
    /// `restore`, `show`, `diff`, `export`: how errors name what was asked.
    pub command: &'static str,
}

impl AtRequest {
    fn refusal(&self, why: impl std::fmt::Display) -> Error {
        Error::NotApplicable(format!("{} --at {}: {why}", self.command, millis(self.at)))
    }
}

/// Where one group's positions at the instant came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub group_id: String,
    /// The partition of `__consumer_offsets` that holds the group's records.
    pub source_partition: i32,
    /// The segments of that partition read (those that can hold records after the base).
    pub segments: usize,
    /// The group's records after the base and up to the instant that can move a position
    /// (commits, deletions, the group's deletion), replayed.
    pub records: usize,
    /// When the last of them belongs (a commit's commit time, a deletion's record time);
    /// `None` when no record was replayed (the base's positions held at the instant).
    pub last_record_at: Option<DateTime<Utc>>,
    /// The group had a committed offset (of the selected partitions) at the instant. When not,
    /// it is reported, never invented: it had not committed yet, or its offsets were deleted.
    pub committed: bool,
    /// The group is in the base. When not, it did not exist when the base was taken (the base
    /// would have captured it) and was replayed from no offsets.
    pub in_base: bool,
}

/// One group at the instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtGroup {
    /// The group with the positions of the instant (no partitions: no committed offset then).
    /// Its state, members and configs are the base snapshot's: the log does not say them.
    pub snapshot: GroupSnapshot,
    pub source: Source,
}

/// One source connector at the instant, from Connect's offsets topic archived beside the
/// commit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtConnector {
    pub name: String,
    /// The entries of `GET /connectors/{name}/offsets` at the instant: `{"partition", "offset"}`.
    pub offsets: Vec<serde_json::Value>,
    /// The connector's records after the base and up to the instant, replayed.
    pub records: usize,
    pub last_record_at: Option<DateTime<Utc>>,
}

/// The selected groups at the instant, and where they came from.
#[derive(Debug, Clone)]
pub struct AtInstant {
    pub at: DateTime<Utc>,
    pub base_id: String,
    pub base_created_at: DateTime<Utc>,
    /// In the base's group order.
    pub groups: Vec<AtGroup>,
    /// Segments read, over all groups.
    pub segments: usize,
    /// Share groups of the base left out: their positions are not in the commit log.
    pub left_out: Vec<String>,
    /// The source connectors at the instant (empty when Connect's offsets topic is not
    /// archived: then their offsets are the base's, see `sources_as_snapshot`).
    pub connectors: Vec<AtConnector>,
    /// Source connectors whose offsets stay the base's, because the store holds no archive of
    /// Connect's offsets topic.
    pub sources_as_snapshot: Vec<String>,
    /// Partitions of `__consumer_offsets` whose archive does not cover the interval, so the
    /// groups born after the base there could not be looked for (each with the reason). Only
    /// when nothing was named: a named group's partition must be covered.
    pub undiscovered: Vec<String>,
    /// What the answer cannot rule out, in words (the base is the log from its start, and the
    /// log's compaction may have passed records before the follower read them).
    pub caveats: Vec<String>,
}

impl AtInstant {
    /// The archived records replayed, over all groups.
    pub fn records(&self) -> usize {
        self.groups.iter().map(|g| g.source.records).sum()
    }

    /// The groups with no committed offset at the instant.
    pub fn absent(&self) -> Vec<&str> {
        self.groups
            .iter()
            .filter(|g| !g.source.committed)
            .map(|g| g.source.group_id.as_str())
            .collect()
    }

    /// The groups that had a committed offset at the instant.
    pub fn present(&self) -> impl Iterator<Item = &GroupSnapshot> {
        self.groups
            .iter()
            .filter(|g| g.source.committed)
            .map(|g| &g.snapshot)
    }

    /// The groups that were not in the base (created after it), replayed from no offsets.
    pub fn newcomers(&self) -> Vec<&str> {
        self.groups
            .iter()
            .filter(|g| !g.source.in_base)
            .map(|g| g.source.group_id.as_str())
            .collect()
    }

    /// One line: the instant, the base and what was replayed onto it.
    pub fn describe(&self) -> String {
        describe(
            self.at,
            &self.base_id,
            self.records() + self.connectors.iter().map(|c| c.records).sum::<usize>(),
            self.segments,
            &self.newcomers(),
        )
    }

    /// The notes for stderr: groups absent at the instant, share groups left out.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let absent = self.absent();
        if !absent.is_empty() {
            out.push(format!(
                "note: no committed offset at {} for {} (not yet committed, or deleted by then)",
                millis(self.at),
                absent.join(", ")
            ));
        }
        if !self.sources_as_snapshot.is_empty() {
            out.push(format!(
                "note: the offsets of source connector(s) {} are the base snapshot's: the store holds no archive of Connect's offsets topic (run offset-vault follow --connect-offsets-topic TOPIC)",
                self.sources_as_snapshot.join(", ")
            ));
        }
        for u in &self.undiscovered {
            out.push(format!(
                "note: groups created after the base whose records are in {u}: they could not be looked for, and are not in this answer"
            ));
        }
        for c in &self.caveats {
            out.push(format!("note: {c}"));
        }
        if !self.left_out.is_empty() {
            out.push(format!(
                "note: left out share group(s) {}: their positions are kept in __share_group_state, which the commit-log archive does not hold (`offset-vault show ID` has them as the snapshot took them)",
                self.left_out.join(", ")
            ));
        }
        out
    }
}

/// One line: the instant, the base, and the records replayed onto it (`records`, from
/// `segments` segments; `newcomers`: the groups not in the base).
fn describe(
    at: DateTime<Utc>,
    base_id: &str,
    records: usize,
    segments: usize,
    newcomers: &[&str],
) -> String {
    let base = if base_id == super::base::LOG_START {
        "the log from its start".to_string()
    } else {
        format!("snapshot {base_id}")
    };
    let newcomers = if newcomers.is_empty() {
        String::new()
    } else {
        format!(
            " ({} not in the base, created after it, replayed from no offsets: {})",
            newcomers.len(),
            newcomers.join(", ")
        )
    };
    format!(
        "at {}: {base} plus {records} archived record(s) after it from {segments} segment(s){newcomers}",
        millis(at)
    )
}

/// An [`AtInstant`] whose groups were handed out one at a time ([`reconstruct_each`]): what it
/// says of them is counted as they go.
#[derive(Debug, Clone)]
pub struct AtSummary {
    pub at: DateTime<Utc>,
    pub base_id: String,
    pub base_created_at: DateTime<Utc>,
    /// How many groups were handed out.
    pub groups: usize,
    /// The archived records replayed, over all groups.
    pub records: usize,
    /// The groups with no committed offset at the instant, in order.
    pub absent: Vec<String>,
    /// The groups that were not in the base (created after it), in order.
    pub newcomers: Vec<String>,
    /// As in [`AtInstant`].
    pub segments: usize,
    pub left_out: Vec<String>,
    pub connectors: Vec<AtConnector>,
    pub sources_as_snapshot: Vec<String>,
    pub undiscovered: Vec<String>,
    pub caveats: Vec<String>,
}

impl AtSummary {
    /// Counts one group handed out.
    fn count(&mut self, g: &AtGroup) {
        self.groups += 1;
        self.records += g.source.records;
        if !g.source.committed {
            self.absent.push(g.source.group_id.clone());
        }
        if !g.source.in_base {
            self.newcomers.push(g.source.group_id.clone());
        }
    }

    /// The instant with its groups (those handed out, in order).
    fn with_groups(self, groups: Vec<AtGroup>) -> AtInstant {
        AtInstant {
            at: self.at,
            base_id: self.base_id,
            base_created_at: self.base_created_at,
            groups,
            segments: self.segments,
            left_out: self.left_out,
            connectors: self.connectors,
            sources_as_snapshot: self.sources_as_snapshot,
            undiscovered: self.undiscovered,
            caveats: self.caveats,
        }
    }

    /// As [`AtInstant::describe`].
    pub fn describe(&self) -> String {
        let newcomers: Vec<&str> = self.newcomers.iter().map(String::as_str).collect();
        describe(
            self.at,
            &self.base_id,
            self.records + self.connectors.iter().map(|c| c.records).sum::<usize>(),
            self.segments,
            &newcomers,
        )
    }
}

/// The group whose positions a record can change, if any: an offset commit or tombstone, or a
/// group's deletion (a group's other metadata records, written at every rebalance, change none).
fn moves(record: &LogRecord) -> Option<&str> {
    match record {
        LogRecord::OffsetCommit { group, .. }
        | LogRecord::GroupMetadata {
            group,
            deleted: true,
            ..
        } => Some(group),
        LogRecord::GroupMetadata { .. }
        | LogRecord::SourceOffset { .. }
        | LogRecord::Ignored { .. }
        | LogRecord::Unknown { .. } => None,
    }
}

/// The snapshot's positions of one group, as the replay's base.
fn base_of(g: &GroupSnapshot) -> State {
    g.partitions
        .iter()
        .map(|p| {
            (
                (g.group_id.clone(), p.topic.clone(), p.partition),
                Position {
                    offset: p.offset,
                    leader_epoch: p.leader_epoch,
                    metadata: p.metadata.clone().unwrap_or_default(),
                    topic_id: p.topic_id.clone(),
                    committed_at: None,
                },
            )
        })
        .collect()
}

/// The group with the positions it had at the instant. Partitions with no offset then are left
/// out; the rest keep what the snapshot knew of them (log range, topic id) where it knew them.
/// Pure.
pub fn at_instant(g: &GroupSnapshot, state: &State) -> GroupSnapshot {
    let known: BTreeMap<(String, i32), &PartitionOffset> = g
        .partitions
        .iter()
        .map(|p| ((p.topic.clone(), p.partition), p))
        .collect();
    let partitions = state
        .iter()
        .filter(|((group, _, _), _)| group == &g.group_id)
        .map(|((_, topic, partition), pos)| {
            let before = known.get(&(topic.clone(), *partition));
            PartitionOffset {
                topic: topic.clone(),
                partition: *partition,
                offset: pos.offset,
                leader_epoch: pos.leader_epoch,
                metadata: Some(pos.metadata.clone()).filter(|m| !m.is_empty()),
                log_start_offset: before.and_then(|p| p.log_start_offset),
                log_end_offset: before.and_then(|p| p.log_end_offset),
                lag: None,
                last_record_timestamp: None,
                last_record_digest: None,
                topic_id: pos
                    .topic_id
                    .clone()
                    .or_else(|| before.and_then(|p| p.topic_id.clone())),
            }
        })
        .collect();
    GroupSnapshot {
        partitions,
        ..g.clone()
    }
}

/// How long before the base its partition's records are replayed too, in log order, before the
/// records after it (ms): Kafka's default `transaction.max.timeout.ms`, 15 minutes.
///
/// A transaction's offset commits carry the time they were sent (`send_offsets_to_transaction`)
/// but are committed, and seen by a snapshot, only when the transaction commits, up to that
/// timeout later. A base taken while such a transaction was open lacks its offsets, and its
/// records belong before the base: replayed from after the base only, they would be lost for
/// good. Replaying records from before the base changes nothing else: for every position the
/// last of them is what the base holds, unless a later record (after it in the log) replaces
/// it, and those are replayed too.
pub const BEFORE_BASE_MS: i64 = 15 * 60 * 1000;

/// One group at `at` (ms): its base positions; then its records among `before` (the records of
/// its partition in the [`BEFORE_BASE_MS`] before the base, in log order, which the base holds
/// unless they are a transaction's committed after it); then its records among `later` (the
/// records after the base, in log order) that belong at or before `at`. Only the partitions the
/// filter selects are kept: the log also holds the group's other topics. Returns the group, the
/// records after the base replayed (those that can move a position: commits, deletions, the
/// group's deletion) and when the last of them belongs. Pure.
pub fn replay_group(
    g: &GroupSnapshot,
    before: &[Timed],
    later: &[Timed],
    at: i64,
    filter: &Filter,
) -> (GroupSnapshot, usize, Option<i64>) {
    let group = Some(g.group_id.as_str());
    let earlier = before.iter().filter(|t| moves(&t.record) == group);
    let mine: Vec<&Timed> = later
        .iter()
        .filter(|t| t.at <= at && moves(&t.record) == group)
        .collect();
    let last = mine.last().map(|t| t.at);
    let state = state_at(base_of(g), earlier.chain(mine.iter().copied()), at);
    let mut out = at_instant(g, &state);
    out.partitions
        .retain(|p| filter.wants_partition(&p.topic, p.partition));
    (out, mine.len(), last)
}

/// One source partition's records by the group they belong to (commits, offset tombstones and
/// the group's metadata records; the others move no group), each in log order: those of the
/// window before the base, and those after it up to the instant.
struct ByGroup {
    groups: std::collections::HashMap<String, (Vec<Timed>, Vec<Timed>)>,
}

impl ByGroup {
    fn new(before: Vec<Timed>, later: Vec<Timed>, at: i64) -> ByGroup {
        let mut groups: std::collections::HashMap<String, (Vec<Timed>, Vec<Timed>)> =
            std::collections::HashMap::new();
        let group_of = |t: &Timed| match &t.record {
            LogRecord::OffsetCommit { group, .. } | LogRecord::GroupMetadata { group, .. } => {
                Some(group.clone())
            }
            _ => None,
        };
        for t in before {
            if let Some(g) = group_of(&t) {
                groups.entry(g).or_default().0.push(t);
            }
        }
        for t in later.into_iter().filter(|t| t.at <= at) {
            if let Some(g) = group_of(&t) {
                groups.entry(g).or_default().1.push(t);
            }
        }
        ByGroup { groups }
    }

    /// The group's records before the base and after it.
    fn of(&self, group: &str) -> (&[Timed], &[Timed]) {
        self.groups
            .get(group)
            .map(|(b, l)| (b.as_slice(), l.as_slice()))
            .unwrap_or((&[], &[]))
    }

    /// The group's records, the window's first.
    fn records(&self, group: &str) -> Vec<&Timed> {
        let (before, later) = self.of(group);
        before.iter().chain(later).collect()
    }

    /// Every record of the partition held (in no particular order across groups).
    fn all(&self) -> Vec<&Timed> {
        self.groups
            .values()
            .flat_map(|(b, l)| b.iter().chain(l))
            .collect()
    }
}

/// The segment manifests of one source partition that can hold records after `from` (ms), in
/// log order. Pure.
fn segments_after(
    all: &[(String, SegmentManifest)],
    partition: i32,
    from: i64,
) -> Vec<&(String, SegmentManifest)> {
    let mut mine: Vec<&(String, SegmentManifest)> = all
        .iter()
        .filter(|(_, m)| m.meta.partition == partition)
        .filter(|(_, m)| m.meta.last_timestamp.is_none_or(|t| t > from))
        .collect();
    mine.sort_by_key(|(_, m)| m.meta.start);
    mine
}

/// Why the archive cannot be used for a base of `cluster_id`, if it cannot: a segment of
/// another cluster's log would replay that cluster's commits. Pure.
fn cluster_problem(segments: &[&SegmentMeta], partition: i32, cluster_id: &str) -> Option<String> {
    let other = segments.iter().find(|m| m.cluster_id != cluster_id)?;
    Some(format!(
        "the commit-log archive of __consumer_offsets[{partition}] holds segment {} of cluster {}, but the snapshot is of cluster {cluster_id}: keep each cluster's archive in a store of its own",
        other.key(),
        other.cluster_id
    ))
}

/// The groups beyond the base's that a reconstruction also gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Beyond {
    /// These groups, each with the connector it was selected through (if it was): the named
    /// groups and those of the selected connectors. One the base lacks did not exist when it
    /// was taken (the base's selection would have captured it) and is replayed from no offsets.
    Named(Vec<(String, Option<String>)>),
    /// Nothing was named: also every group that the archive shows committing after the base
    /// and that the base's selection would have captured.
    Discover,
}

/// The selected groups at `req.at`, from the base `base`: `groups` are the base's groups the
/// selection keeps (with their selected partitions); `beyond` says which other groups to give
/// (those created after the base). Refused (exit 7) when the archive does not cover the
/// interval for one of them, or when a named group is a share group.
pub async fn reconstruct(
    store: &Store,
    base: &SnapshotMeta,
    groups: Vec<GroupSnapshot>,
    beyond: Beyond,
    connectors: &[ConnectorSnapshot],
    req: &AtRequest,
) -> Result<AtInstant> {
    let mut out = Vec::new();
    let summary = reconstruct_each(
        store,
        base,
        &mut groups.into_iter().map(Ok),
        beyond,
        connectors,
        req,
        false,
        &mut |g| {
            out.push(g);
            Ok(())
        },
    )
    .await?;
    Ok(summary.with_groups(out))
}

/// [`reconstruct`], the groups handed to `each` one at a time instead of returned: the base's
/// groups (read from `groups`, in their order) in that order, then the named groups created
/// after the base, then those found in the log. With `spill`, the groups wait on the local disk
/// between the steps (one bin per source partition, [`super::bins`]), so what is held at once is
/// one source partition's records, not every group. The same answer, in the same order, either
/// way.
#[allow(clippy::too_many_arguments)]
pub async fn reconstruct_each(
    store: &Store,
    base: &SnapshotMeta,
    groups: &mut (dyn Iterator<Item = Result<GroupSnapshot>> + Send),
    beyond: Beyond,
    connectors: &[ConnectorSnapshot],
    req: &AtRequest,
    spill: bool,
    each: &mut (dyn FnMut(AtGroup) -> Result<()> + Send),
) -> Result<AtSummary> {
    let count = super::archive::partition_count(store, Lane::Offsets).await?;
    let partition_of =
        |g: &str, count: i32| crate::wire::offsets_partition(g, count as usize).unwrap_or(0) as i32;
    let named: BTreeSet<&str> = match &beyond {
        Beyond::Named(named) => named.iter().map(|(g, _)| g.as_str()).collect(),
        Beyond::Discover => BTreeSet::new(),
    };
    let mut staged = Staged::new(spill);
    for g in groups {
        let g = g?;
        if named.contains(g.group_id.as_str()) {
            staged.named_in_base.insert(g.group_id.clone());
        }
        if g.group_type == GroupType::Share {
            staged.share.push(g.group_id);
            continue;
        }
        // Without an archive there is nothing to replay: the refusal below says so.
        if let Some(count) = count {
            staged.push(partition_of(&g.group_id, count), g)?;
        }
    }
    if let Some(g) = staged.share.iter().find(|g| req.filter.groups.contains(*g)) {
        return Err(req.refusal(format!(
            "group {g} is a share group: its positions are kept in __share_group_state, which the commit-log archive does not hold; use a snapshot (its id) instead"
        )));
    }
    let Some(count) = count else {
        return Err(req.refusal(format!(
            "--at needs the commit-log archive, and {} has none: run offset-vault follow --once (regularly, from before the snapshots), then try again",
            store.url()
        )));
    };
    let partition_of = |g: &str| partition_of(g, count);
    // The named groups the base lacks: created after it, when it would have captured them.
    let mut named_new: Vec<(String, Option<String>)> = Vec::new();
    if let Beyond::Named(named) = &beyond {
        for (g, connector) in named {
            if staged.named_in_base.contains(g) || named_new.iter().any(|(n, _)| n == g) {
                continue;
            }
            let covered = match connector {
                Some(c) => base.selection.covers_connector(c),
                None => base.selection.covers_group(g),
            };
            if !covered {
                return Err(req.refusal(format!(
                    "group {g} is not in the base {}, and that snapshot's selection would not have captured it: pick a base that holds it",
                    base.id
                )));
            }
            named_new.push((g.clone(), connector.clone()));
        }
    }
    let discover = beyond == Beyond::Discover;
    // Only the index of the partitions needed is read: the groups' own, or every one when
    // groups created after the base are looked for.
    let required: BTreeSet<i32> = staged
        .first
        .keys()
        .copied()
        .chain(named_new.iter().map(|(g, _)| partition_of(g)))
        .collect();
    let needed: BTreeSet<i32> = if discover {
        (0..count).collect()
    } else {
        required.clone()
    };
    let mut all = Vec::new();
    for p in &needed {
        all.extend(super::archive::manifests_of(store, Lane::Offsets, *p).await?);
    }
    let heads = super::archive::heads(store).await?;
    let metas: Vec<SegmentMeta> = all.iter().map(|(_, m)| m.meta.clone()).collect();
    // Every group's coverage is checked before any segment is read: once per source partition,
    // the refusal naming the first group (in order) of a partition that is not covered.
    let mut coverage: BTreeMap<i32, std::result::Result<(), String>> = BTreeMap::new();
    for (p, g) in staged
        .firsts()
        .into_iter()
        .chain(named_new.iter().map(|(g, _)| (partition_of(g), g.as_str())))
    {
        coverage
            .entry(p)
            .or_insert_with(|| covered(&all, &metas, &heads, p, base, req))
            .clone()
            .map_err(|why| req.refusal(format!("group {g}: {why}")))?;
    }
    let mut undiscovered = Vec::new();
    let mut readable = required.clone();
    for p in needed.difference(&required) {
        match covered(&all, &metas, &heads, *p, base, req) {
            Ok(()) => {
                readable.insert(*p);
            }
            Err(why) => undiscovered.push(format!("__consumer_offsets[{p}] ({why})")),
        }
    }
    // Each source partition is read once, however many groups it holds, and its records are
    // let go before the next one is read: the groups are replayed partition by partition, each
    // from its own records (indexed by group), and put back in their order afterwards.
    let at_ms = req.at.timestamp_millis();
    let mut named_of_partition: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (i, (g, _)) in named_new.iter().enumerate() {
        named_of_partition
            .entry(partition_of(g))
            .or_default()
            .push(i);
    }
    let mut from_base: Bins<AtGroup> = Bins::new(spill);
    let mut from_named: Vec<Option<AtGroup>> = named_new.iter().map(|_| None).collect();
    let mut from_log: Bins<AtGroup> = Bins::new(spill);
    let mut segments_read = 0;
    for partition in &readable {
        let (segments, before, later) = read_partition(store, &all, *partition, base).await?;
        segments_read += segments;
        let index = ByGroup::new(before, later, at_ms);
        let replayed = |g: &GroupSnapshot, in_base: bool| {
            let (before, later) = index.of(&g.group_id);
            let (snapshot, records, last) = replay_group(g, before, later, at_ms, &req.filter);
            AtGroup {
                source: Source {
                    group_id: g.group_id.clone(),
                    source_partition: *partition,
                    segments,
                    records,
                    last_record_at: last.and_then(DateTime::from_timestamp_millis),
                    committed: !snapshot.partitions.is_empty(),
                    in_base,
                },
                snapshot,
            }
        };
        // The groups known here: the base's of this partition, its share groups and the named
        // ones (a group found in the log is of this partition, so no other partition's matter).
        let mut known: BTreeSet<String> = BTreeSet::new();
        for g in staged.bins.drain(*partition)? {
            let g = g?;
            from_base.push(*partition, replayed(&g, true))?;
            if discover {
                known.insert(g.group_id);
            }
        }
        for i in named_of_partition.get(partition).into_iter().flatten() {
            let (g, c) = &named_new[*i];
            let newcomer = super::base::newcomer(g, &index.records(g), c.clone());
            from_named[*i] = Some(replayed(&newcomer, false));
        }
        if discover {
            let known: BTreeSet<&str> = known
                .iter()
                .chain(&staged.share)
                .map(String::as_str)
                .chain(named_new.iter().map(|(g, _)| g.as_str()))
                .collect();
            for g in super::base::discovered(&index.all(), &base.selection, &known) {
                if partition_of(&g) == *partition {
                    let newcomer = super::base::newcomer(&g, &index.records(&g), None);
                    let at = replayed(&newcomer, false);
                    // A group found in the log but without an offset at the instant did not
                    // exist then.
                    if at.source.committed {
                        from_log.push(*partition, at)?;
                    }
                }
            }
        }
    }
    let sources: Vec<&ConnectorSnapshot> = connectors
        .iter()
        .filter(|c| c.connector_type == "source")
        .collect();
    let (connectors, connect_segments, sources_as_snapshot) =
        connectors_at(store, base, &sources, req).await?;
    let caveats = if super::base::is_log_start(base) {
        vec![format!(
            "the base is the log from its start: a commit that __consumer_offsets' compaction removed before the follower first read it is not in the archive (the archive of the partitions read begins at offset 0 and is continuous)"
        )]
    } else {
        Vec::new()
    };
    let mut summary = AtSummary {
        at: req.at,
        base_id: base.id.clone(),
        base_created_at: base.created_at,
        groups: 0,
        records: 0,
        absent: Vec::new(),
        newcomers: Vec::new(),
        segments: segments_read + connect_segments,
        left_out: std::mem::take(&mut staged.share),
        connectors,
        sources_as_snapshot,
        undiscovered,
        caveats,
    };
    // In the base's order, then the named groups, then those found in the log (by partition).
    let logged: Vec<i32> = readable.iter().copied().collect();
    let from_log = logged
        .iter()
        .map(|p| from_log.drain(*p))
        .collect::<Result<Vec<_>>>()?;
    let ordered = from_base
        .merge(staged.order.into_iter())?
        .chain(
            from_named
                .into_iter()
                .map(|g| Ok(g.expect("every group's partition was read"))),
        )
        .chain(from_log.into_iter().flatten());
    for g in ordered {
        let g = g?;
        summary.count(&g);
        each(g)?;
    }
    Ok(summary)
}

/// The base's groups as a reconstruction reads them: each in the bin of its source partition,
/// the order of them all, and the first of each partition (the coverage refusal names it).
struct Staged {
    bins: Bins<GroupSnapshot>,
    /// The source partition of each group, in the base's order.
    order: Vec<i32>,
    /// The first group of each source partition: its place in the order and its id.
    first: BTreeMap<i32, (usize, String)>,
    /// The share groups of the base (left out).
    share: Vec<String>,
    /// The named groups that the base holds.
    named_in_base: BTreeSet<String>,
}

impl Staged {
    fn new(spill: bool) -> Self {
        Staged {
            bins: Bins::new(spill),
            order: Vec::new(),
            first: BTreeMap::new(),
            share: Vec::new(),
            named_in_base: BTreeSet::new(),
        }
    }

    fn push(&mut self, partition: i32, g: GroupSnapshot) -> Result<()> {
        let at = self.order.len();
        self.first
            .entry(partition)
            .or_insert_with(|| (at, g.group_id.clone()));
        self.order.push(partition);
        self.bins.push(partition, g)
    }

    /// The first group of each source partition, in the base's order: (partition, group).
    fn firsts(&self) -> Vec<(i32, &str)> {
        let mut firsts: Vec<(usize, i32, &str)> = self
            .first
            .iter()
            .map(|(p, (at, g))| (*at, *p, g.as_str()))
            .collect();
        firsts.sort_unstable();
        firsts.into_iter().map(|(_, p, g)| (p, g)).collect()
    }
}

/// Whether the archive of source `partition` covers the base's time to the instant, with
/// segments of the base's cluster only; the reason when it does not.
fn covered(
    all: &[(String, SegmentManifest)],
    metas: &[SegmentMeta],
    heads: &BTreeMap<i32, super::archive::Head>,
    partition: i32,
    base: &SnapshotMeta,
    req: &AtRequest,
) -> std::result::Result<(), String> {
    if super::base::is_log_start(base) {
        let first = all
            .iter()
            .map(|(_, m)| &m.meta)
            .filter(|m| m.partition == partition)
            .min_by_key(|m| m.start);
        if let Some(m) = first.filter(|m| m.start > 0 || m.gap.is_some()) {
            return Err(format!(
                "no snapshot precedes the instant, and the commit-log archive of __consumer_offsets[{partition}] does not begin at the log's start (it begins at offset {}): what was committed before it is not archived",
                m.start
            ));
        }
    }
    if let Some(why) = coverage_problem(
        partition,
        metas,
        heads.get(&partition),
        base.created_at,
        req.at,
    ) {
        return Err(why);
    }
    let used: Vec<&SegmentMeta> =
        segments_after(all, partition, base.created_at.timestamp_millis())
            .into_iter()
            .map(|(_, m)| &m.meta)
            .collect();
    match cluster_problem(&used, partition, &base.cluster_id) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Reads one source partition's records: the segments that can hold records after the base, and
/// those of the window before it. Of the window, only the records after the last gap recorded by
/// the base's time (and after any segment of another cluster) are replayed: one before it may
/// have been replaced by a record the gap lost. Returns (segments after the base, records of the
/// window, records after the base).
async fn read_partition(
    store: &Store,
    all: &[(String, SegmentManifest)],
    partition: i32,
    base: &SnapshotMeta,
) -> Result<(usize, Vec<Timed>, Vec<Timed>)> {
    let from = base.created_at;
    let from_ms = from.timestamp_millis();
    let after = segments_after(all, partition, from_ms).len();
    let floor = all
        .iter()
        .filter(|(_, m)| m.meta.partition == partition)
        .filter(|(_, m)| {
            (m.meta.gap.is_some() && m.meta.sealed_at <= from)
                || m.meta.cluster_id != base.cluster_id
        })
        .map(|(_, m)| m.meta.next)
        .max()
        .unwrap_or(i64::MIN);
    let mine = segments_after(all, partition, from_ms.saturating_sub(BEFORE_BASE_MS));
    let (mut before, mut later) = (Vec::new(), Vec::new());
    for (key, m) in &mine {
        for row in read_segment(store, key, m).await? {
            let offset = row.source_offset;
            let timed = Timed::new(row.record, row.timestamp);
            if timed.at > from_ms {
                later.push(timed);
            } else if offset >= floor {
                before.push(timed);
            }
        }
    }
    Ok((after, before, later))
}

/// The source connectors `sources` of the base at the instant, from the archive of Connect's
/// offsets topic: their base offsets, then their records after the base up to the instant. A
/// connector's records can be in any partition of that topic (Connect keys them by connector
/// and source partition), so every partition's archive must cover the interval. With no such
/// archive, a source connector named on the command line is refused; the others keep the
/// base's offsets (returned by name). Returns the connectors, the segments read and those names.
async fn connectors_at(
    store: &Store,
    base: &SnapshotMeta,
    sources: &[&ConnectorSnapshot],
    req: &AtRequest,
) -> Result<(Vec<AtConnector>, usize, Vec<String>)> {
    if sources.is_empty() {
        return Ok(Default::default());
    }
    let all = super::archive::manifests_in(store, Lane::Connect).await?;
    let Some(first) = all.first().map(|(_, m)| m.meta.clone()) else {
        if let Some(c) = sources
            .iter()
            .find(|c| req.filter.connectors.contains(&c.name))
        {
            return Err(req.refusal(format!(
                "source connector {}: its offsets are in Kafka Connect's offsets topic, and {} holds no archive of it: run offset-vault follow --connect-offsets-topic TOPIC (the workers' offset.storage.topic) regularly, from before the snapshots",
                c.name,
                store.url()
            )));
        }
        return Ok((
            Vec::new(),
            0,
            sources.iter().map(|c| c.name.clone()).collect(),
        ));
    };
    let metas: Vec<SegmentMeta> = all.iter().map(|(_, m)| m.meta.clone()).collect();
    let heads = super::archive::heads_in(store, Lane::Connect).await?;
    let (from, from_ms, at_ms) = (
        base.created_at,
        base.created_at.timestamp_millis(),
        req.at.timestamp_millis(),
    );
    let mut later: Vec<Timed> = Vec::new();
    let mut segments = 0;
    for partition in 0..first.partitions {
        if let Some(why) = coverage_problem_of(
            &first.topic,
            partition,
            &metas,
            heads.get(&partition),
            from,
            req.at,
        ) {
            return Err(req.refusal(format!("the source connectors' offsets: {why}")));
        }
        let mine = segments_after(&all, partition, from_ms);
        let used: Vec<&SegmentMeta> = mine.iter().map(|(_, m)| &m.meta).collect();
        if let Some(why) = cluster_problem(&used, partition, &base.cluster_id) {
            return Err(req.refusal(format!("the source connectors' offsets: {why}")));
        }
        segments += mine.len();
        for (key, m) in &mine {
            for row in read_segment(store, key, m).await? {
                if row.timestamp > from_ms && row.timestamp <= at_ms {
                    later.push(Timed::new(row.record, row.timestamp));
                }
            }
        }
    }
    let out = sources
        .iter()
        .map(|c| source_at(c, &later, at_ms))
        .collect();
    Ok((out, segments, Vec::new()))
}

/// One source connector at `at` (ms): its base offsets, then its records among `later` (in log
/// order within each partition of Connect's topic, which is all the order one source partition
/// has) that belong at or before `at`. Pure.
pub fn source_at(c: &ConnectorSnapshot, later: &[Timed], at: i64) -> AtConnector {
    use serde_json::Value;
    let mut state: BTreeMap<String, (Value, Value)> = BTreeMap::new();
    for entry in c.offsets.iter().flatten() {
        let partition = entry["partition"].clone();
        state.insert(
            canonical_json(&partition),
            (partition, entry["offset"].clone()),
        );
    }
    let mut records = 0;
    let mut last = None;
    for t in later.iter().filter(|t| t.at <= at) {
        let LogRecord::SourceOffset {
            connector,
            partition,
            offset,
        } = &t.record
        else {
            continue;
        };
        if *connector != c.name {
            continue;
        }
        records += 1;
        last = Some(t.at);
        match offset {
            Some(o) => {
                let p: Value = serde_json::from_str(partition).unwrap_or(Value::Null);
                let o: Value = serde_json::from_str(o).unwrap_or(Value::Null);
                state.insert(partition.clone(), (p, o));
            }
            None => {
                state.remove(partition);
            }
        }
    }
    AtConnector {
        name: c.name.clone(),
        offsets: state
            .into_values()
            .map(
                |(partition, offset)| serde_json::json!({"partition": partition, "offset": offset}),
            )
            .collect(),
        records,
        last_record_at: last.and_then(DateTime::from_timestamp_millis),
    }
}

/// The error of a base that was not found, with what `--at` needs.
pub fn no_base(e: Error) -> Error {
    match e {
        Error::NotFound {
            what: "snapshot",
            name,
            hint,
        } => Error::NotFound {
            what: "snapshot",
            name,
            hint: format!(
                "{hint}. --at needs a snapshot taken at or before TIME as its base, and the commit-log archive from before that snapshot on: pick a later TIME, or take snapshots (and run offset-vault follow --once) regularly"
            ),
        },
        other => other,
    }
}

/// What `show`, `diff` and `export` read for `--at TIME`.
#[derive(Debug, Clone)]
pub struct ReadAt {
    /// The base snapshot, and why it was chosen.
    pub chosen: Chosen,
    /// The base's connectors: they name the sink groups of `--connector`. Their config, state
    /// and source offsets are the base's, not the instant's: the commit log does not hold them.
    pub connectors: Vec<ConnectorSnapshot>,
    pub instant: AtInstant,
}

/// Chooses the base (the newest complete snapshot-kind snapshot created at or before the
/// instant that holds, or would have captured, the named groups and connectors; before the
/// first, the log from its start), verifies it, and reconstructs the groups the filter selects
/// at the instant, those created after the base included. Reads only the store.
pub async fn read(store: &Store, req: &AtRequest) -> Result<ReadAt> {
    let eligible = Eligible {
        groups: req.filter.groups.clone(),
        connectors: req.filter.connectors.clone(),
        ..Default::default()
    };
    let chosen = super::base::choose_base(store, req.at, &eligible)
        .await
        .map_err(no_base)?;
    let meta = &chosen.manifest.meta;
    let (mut base_connectors, mut groups) = (Vec::new(), Vec::new());
    if !super::base::is_log_start(meta) {
        let opened = repo::open_verified(store, &chosen.manifest).await?;
        base_connectors = opened.connectors.clone();
        let refs: Vec<&ConnectorSnapshot> = opened.connectors.iter().collect();
        let wanted = req.filter.group_set(&refs);
        opened.for_each_group(&mut |mut g| {
            if wanted.as_ref().is_none_or(|w| w.contains(&g.group_id)) {
                g.partitions
                    .retain(|p| req.filter.wants_partition(&p.topic, p.partition));
                groups.push(g);
            }
            Ok(())
        })?;
    }
    let later =
        super::base::connectors_from_later(store, meta, &req.filter.connectors, &base_connectors)
            .await?;
    let mut caveats = Vec::new();
    for (c, from) in later {
        caveats.push(format!(
            "connector {} is not in the base (created after it): its config and group are snapshot {from}'s",
            c.name
        ));
        base_connectors.push(c);
    }
    let selected: Vec<ConnectorSnapshot> = base_connectors
        .iter()
        .filter(|c| req.filter.connectors.is_empty() || req.filter.connectors.contains(&c.name))
        .cloned()
        .collect();
    let beyond = beyond(&req.filter.groups, &req.filter.connectors, &base_connectors);
    let mut instant = reconstruct(store, meta, groups, beyond, &selected, req)
        .await
        .map_err(|e| log_start_refusal(e, meta))?;
    instant.caveats.extend(caveats);
    // The connectors as they were at the instant: a source connector's offsets are the
    // reconstruction's.
    let connectors = base_connectors
        .iter()
        .map(
            |c| match instant.connectors.iter().find(|a| a.name == c.name) {
                Some(a) => ConnectorSnapshot {
                    offsets: Some(a.offsets.clone()),
                    ..c.clone()
                },
                None => c.clone(),
            },
        )
        .collect();
    Ok(ReadAt {
        connectors,
        chosen,
        instant,
    })
}

/// Which groups beyond the base's a selection asks for: the named groups and those of the
/// named connectors (with their connector), or, when nothing is named, every group the log
/// shows was created after the base. Pure.
pub fn beyond(groups: &[String], connectors: &[String], known: &[ConnectorSnapshot]) -> Beyond {
    if groups.is_empty() && connectors.is_empty() {
        return Beyond::Discover;
    }
    let mut named: Vec<(String, Option<String>)> =
        groups.iter().map(|g| (g.clone(), None)).collect();
    for c in known.iter().filter(|c| connectors.contains(&c.name)) {
        if let Some(g) = &c.group_id {
            named.push((g.clone(), Some(c.name.clone())));
        }
    }
    Beyond::Named(named)
}

/// A refusal on the base "the log from its start" says what else could serve the instant: a
/// snapshot at or before it.
pub fn log_start_refusal(e: Error, base: &SnapshotMeta) -> Error {
    match e {
        Error::NotApplicable(why) if super::base::is_log_start(base) => Error::NotApplicable(format!(
            "{why}; --at needs a snapshot taken at or before the instant, or the archive from the log's start: pick an instant after the first snapshot (offset-vault list), or run offset-vault follow from the log's start before taking snapshots"
        )),
        other => other,
    }
}

#[cfg(test)]
#[path = "at_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "at_each_tests.rs"]
mod each_tests;
