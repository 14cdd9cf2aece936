//! Retention of the commit-log archive (`prune --keep-log DURATION`): which segments, orphan
//! data files and apply records may go. Pure: manifests, listings and times in, a plan out.
//!
//! The window that must stay reconstructable is `[now - DURATION, now]`, and what `--at` needs
//! for it: an instant is rebuilt from the newest snapshot at or before it plus the log after
//! that snapshot. So the window's base is the newest complete snapshot at or before
//! `now - DURATION` that the snapshot policy keeps (taken per group: a `--group` restore uses the
//! newest snapshot that holds the group); when the policy keeps none that old, the oldest kept
//! snapshot. Nothing after the base is removed, nor the margin before it that `--at` replays
//! too (`--keep-log-margin`, by default [`crate::log::at::BEFORE_BASE_MS`]: a transaction open
//! while the base was taken has its offset commits there).
//!
//! Of each partition's chain only a prefix goes, and never the last entry (the follower resumes
//! where the chain ends): entries whose every record is older than the base, up to the entry
//! the reconstruction from the base starts with (its first record at or before the base), which
//! stays. A chain with an overlap or an unrecorded gap is left whole: `verify` says what is
//! wrong with it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::log::applied::CLOCK_SKEW_MS;
use crate::log::archive::SegmentManifest;
use crate::log::segment::{discontinuities, SegmentMeta};
use crate::log::verify::parse_data_key;

/// A complete snapshot-kind snapshot the policy keeps, as a possible base of `--at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseCandidate {
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub group_ids: Vec<String>,
    /// What `group_ids` name, for the plan's reasons: "group", or "connector" for the archive
    /// of Connect's offsets topic (whose bases are taken per source connector).
    pub holds: &'static str,
}

/// Where the window that must stay reconstructable begins, and why there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WindowBase {
    /// `now - DURATION`: every instant from here on stays reconstructable.
    pub window_start: DateTime<Utc>,
    /// The oldest base `--at` inside the window may start from.
    pub base: DateTime<Utc>,
    /// `base` less the margin `--at` replays before it: nothing of the log from here on is
    /// removed.
    pub keep_from: DateTime<Utc>,
    /// The snapshot `base` is the time of, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    pub why: String,
}

/// The window's base: for each group of the kept snapshots, the newest one at or before
/// `window_start` that holds it (else the oldest that holds it), and the oldest of those. With
/// no kept snapshot holding a group, `window_start` itself. The log is kept from `margin` before
/// the base. Pure.
pub fn window_base(
    kept: &[BaseCandidate],
    window_start: DateTime<Utc>,
    margin: Duration,
) -> WindowBase {
    let mut w = base_of_window(kept, window_start);
    w.keep_from = w.base - margin;
    w
}

fn base_of_window(kept: &[BaseCandidate], window_start: DateTime<Utc>) -> WindowBase {
    let mut per_group: BTreeMap<&str, &BaseCandidate> = BTreeMap::new();
    for c in kept {
        for g in &c.group_ids {
            let better = match per_group.get(g.as_str()) {
                None => true,
                Some(cur) => {
                    let (new_in, cur_in) =
                        (c.created_at <= window_start, cur.created_at <= window_start);
                    match (new_in, cur_in) {
                        (true, true) => c.created_at > cur.created_at,
                        (true, false) => true,
                        (false, true) => false,
                        (false, false) => c.created_at < cur.created_at,
                    }
                }
            };
            if better {
                per_group.insert(g, c);
            }
        }
    }
    let oldest = per_group
        .iter()
        .min_by_key(|(g, c)| (c.created_at, *g))
        .map(|(g, c)| (*g, *c));
    match oldest {
        None => WindowBase {
            window_start,
            base: window_start,
            keep_from: window_start,
            snapshot: None,
            why: "no kept snapshot can be a base: the log is kept from the window's start".to_string(),
        },
        Some((g, c)) if c.created_at <= window_start => WindowBase {
            window_start,
            base: c.created_at,
            keep_from: c.created_at,
            snapshot: Some(c.id.clone()),
            why: format!(
                "snapshot {} is the newest kept snapshot at or before the window's start that holds {} {g}: --at inside the window may start from it",
                c.id, c.holds
            ),
        },
        Some((g, c)) => WindowBase {
            window_start,
            base: c.created_at.min(window_start),
            keep_from: c.created_at.min(window_start),
            snapshot: Some(c.id.clone()),
            why: format!(
                "no kept snapshot at or before the window's start holds {} {g}; the log is kept from the window's start on (the oldest kept snapshot holding it is {})",
                c.holds, c.id
            ),
        },
    }
}

/// What happens to an index entry (and its data file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentAction {
    Remove,
    Keep,
}

/// One index entry of a chain and what the plan does with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedSegment {
    pub partition: i32,
    pub start: i64,
    pub next: i64,
    /// The index manifest's key.
    pub manifest: String,
    /// The data file's key (empty for a recorded gap).
    pub file: String,
    pub gap: bool,
    pub first_record_at: Option<DateTime<Utc>>,
    pub last_record_at: Option<DateTime<Utc>>,
    pub sealed_at: DateTime<Utc>,
    pub action: SegmentAction,
}

/// One partition's chain: what is removed, or why nothing is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedChain {
    pub partition: i32,
    pub entries: usize,
    pub remove: Vec<PlannedSegment>,
    /// The entry the chain begins with after the prune.
    pub first_kept: Option<PlannedSegment>,
    /// Why this chain is left whole although it has entries older than the base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn planned(m: &SegmentMeta, file: &str, action: SegmentAction) -> PlannedSegment {
    PlannedSegment {
        partition: m.partition,
        start: m.start,
        next: m.next,
        // The lane's own index: a segment of Connect's offsets topic is under connect-log/.
        manifest: SegmentManifest::index_key_in(
            crate::log::archive::Lane::of_topic(&m.topic),
            m.partition,
            m.start,
        ),
        file: file.to_string(),
        gap: m.gap.is_some(),
        first_record_at: m.first_timestamp.and_then(DateTime::from_timestamp_millis),
        last_record_at: m.last_timestamp.and_then(DateTime::from_timestamp_millis),
        sealed_at: m.sealed_at,
        action,
    }
}

/// Every record of the entry is older than `base` (a gap or an empty segment: sealed before it).
fn entirely_before(m: &SegmentMeta, base: i64) -> bool {
    match m.last_timestamp {
        Some(last) if m.gap.is_none() => last < base,
        _ => ms(m.sealed_at) < base,
    }
}

/// The reconstruction from `base` may start with this entry: its first record is at or before
/// the base, or it has none (an empty segment, a recorded gap).
fn may_lead(m: &SegmentMeta, base: i64) -> bool {
    m.gap.is_some() || m.first_timestamp.is_none_or(|t| t <= base)
}

/// How many entries of a chain (sorted by start, continuous) may go for `base` (ms): the
/// longest prefix of entries entirely before the base that leaves, as the chain's new first
/// entry, one the reconstruction may start with; never the last entry. Pure.
pub fn removable_prefix(chain: &[&SegmentMeta], base: i64) -> usize {
    if chain.len() < 2 {
        return 0;
    }
    let before = chain
        .iter()
        .take_while(|m| entirely_before(m, base))
        .count();
    let limit = before.min(chain.len() - 1);
    (0..=limit)
        .rev()
        .find(|&i| may_lead(chain[i], base))
        .unwrap_or(0)
}

/// The plan of one partition's chain for `base`. Pure.
pub fn plan_chain(partition: i32, chain: &[&SegmentManifest], base: DateTime<Utc>) -> PlannedChain {
    let mut sorted: Vec<&SegmentManifest> = chain.to_vec();
    sorted.sort_by_key(|m| m.meta.start);
    let metas: Vec<SegmentMeta> = sorted.iter().map(|m| m.meta.clone()).collect();
    let broken = discontinuities(&metas);
    let refs: Vec<&SegmentMeta> = metas.iter().collect();
    let n = if broken.is_empty() {
        removable_prefix(&refs, ms(base))
    } else {
        0
    };
    let refused = (!broken.is_empty()).then(|| {
        format!(
            "the chain is not continuous ({} overlap(s) or unrecorded gap(s)); nothing of it is removed: run offset-vault verify --all",
            broken.len()
        )
    });
    PlannedChain {
        partition,
        entries: sorted.len(),
        remove: sorted[..n]
            .iter()
            .map(|m| planned(&m.meta, &m.file, SegmentAction::Remove))
            .collect(),
        first_kept: sorted
            .get(n)
            .map(|m| planned(&m.meta, &m.file, SegmentAction::Keep)),
        refused,
    }
}

/// What happens to an orphan data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrphanAction {
    /// Before its chain's end and older than the grace period: removed.
    Remove,
    /// Younger than the grace period: a follower may be between its two writes.
    KeepYoung,
    /// At or after its chain's end: the next follower run may still publish it.
    KeepAtEnd,
    /// Its name or content cannot be read: left alone.
    LeaveAlone,
}

/// A data file no manifest names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Orphan {
    pub key: String,
    pub sealed_at: Option<DateTime<Utc>>,
    pub action: OrphanAction,
    pub why: String,
}

/// What to do with an orphan: `sealed_at` is from the file's own description (when it
/// decodes), `chain_end` its partition's end. Pure.
pub fn orphan_action(
    key: &str,
    sealed_at: Option<DateTime<Utc>>,
    chain_end: Option<i64>,
    grace: Duration,
    now: DateTime<Utc>,
) -> Orphan {
    let (action, why) = match (parse_data_key(key), sealed_at) {
        (None, _) | (_, None) => (
            OrphanAction::LeaveAlone,
            "its name or its content cannot be read; left alone (see offset-vault verify --all)",
        ),
        (Some((_, start, _)), Some(_)) if chain_end.is_none_or(|end| start >= end) => (
            OrphanAction::KeepAtEnd,
            "at the end of its partition's chain: the next follower run may still publish it",
        ),
        (Some(_), Some(t)) if now - t <= grace => (
            OrphanAction::KeepYoung,
            "within the grace period: a follower may be between its two writes",
        ),
        (Some(_), Some(_)) => (
            OrphanAction::Remove,
            "named by no manifest, before the end of its chain, older than the grace period",
        ),
    };
    Orphan {
        key: key.to_string(),
        sealed_at,
        action,
        why: why.to_string(),
    }
}

/// An apply record's key and end (`None`: unreadable, never removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordTime {
    pub key: String,
    pub finished_at: Option<DateTime<Utc>>,
}

/// The apply records that can explain no commit the archive keeps: their window (plus the
/// clock tolerance of `history`) ended before the base and before the oldest record kept in any
/// partition. With no record kept at all, none is removed. Pure.
pub fn records_to_remove(
    records: &[RecordTime],
    base: DateTime<Utc>,
    oldest_kept_record: Option<i64>,
) -> Vec<String> {
    let Some(oldest) = oldest_kept_record else {
        return Vec::new();
    };
    let limit = oldest.min(ms(base));
    records
        .iter()
        .filter(|r| r.finished_at.is_some_and(|t| ms(t) + CLOCK_SKEW_MS < limit))
        .map(|r| r.key.clone())
        .collect()
}

/// Counts for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LogSummary {
    pub partitions: usize,
    pub entries: usize,
    pub remove_segments: usize,
    pub remove_orphans: usize,
    pub keep_orphans: usize,
    pub remove_apply_records: usize,
    pub refused_partitions: usize,
}

/// Everything `prune --keep-log` would do to the archive.
#[derive(Debug, Clone, Serialize)]
pub struct LogPlan {
    pub keep_log: String,
    pub window: WindowBase,
    pub chains: Vec<PlannedChain>,
    pub orphans: Vec<Orphan>,
    /// Keys of the apply records removed with the segments.
    pub apply_records: Vec<String>,
    pub summary: LogSummary,
}

/// The oldest record still in the archive after the chains' plans. Pure.
fn oldest_kept(manifests: &[(String, SegmentManifest)], removed: &BTreeSet<String>) -> Option<i64> {
    manifests
        .iter()
        .filter(|(k, m)| !removed.contains(k) && m.meta.gap.is_none())
        .filter_map(|(_, m)| m.meta.first_timestamp)
        .min()
}

/// The whole plan. `orphans` are (key, sealed_at read from the file); `records` the apply
/// records with their end. Pure.
pub fn build(
    keep_log: &str,
    window: WindowBase,
    manifests: &[(String, SegmentManifest)],
    orphans: &[(String, Option<DateTime<Utc>>)],
    records: &[RecordTime],
    grace: Duration,
    now: DateTime<Utc>,
) -> LogPlan {
    let mut by_partition: BTreeMap<i32, Vec<&SegmentManifest>> = BTreeMap::new();
    for (_, m) in manifests {
        by_partition.entry(m.meta.partition).or_default().push(m);
    }
    let chains: Vec<PlannedChain> = by_partition
        .iter()
        .map(|(p, chain)| plan_chain(*p, chain, window.keep_from))
        .collect();
    let ends: BTreeMap<i32, i64> = by_partition
        .iter()
        .filter_map(|(p, c)| c.iter().map(|m| m.meta.next).max().map(|e| (*p, e)))
        .collect();
    let orphans: Vec<Orphan> = orphans
        .iter()
        .map(|(key, sealed)| {
            let end = parse_data_key(key).and_then(|(p, _, _)| ends.get(&p).copied());
            orphan_action(key, *sealed, end, grace, now)
        })
        .collect();
    let removed: BTreeSet<String> = chains
        .iter()
        .flat_map(|c| c.remove.iter().map(|s| s.manifest.clone()))
        .collect();
    let apply_records =
        records_to_remove(records, window.keep_from, oldest_kept(manifests, &removed));
    let count = |f: &dyn Fn(&Orphan) -> bool| orphans.iter().filter(|o| f(o)).count();
    let summary = LogSummary {
        partitions: chains.len(),
        entries: manifests.len(),
        remove_segments: removed.len(),
        remove_orphans: count(&|o| o.action == OrphanAction::Remove),
        keep_orphans: count(&|o| o.action != OrphanAction::Remove),
        remove_apply_records: apply_records.len(),
        refused_partitions: chains.iter().filter(|c| c.refused.is_some()).count(),
    };
    LogPlan {
        keep_log: keep_log.to_string(),
        window,
        chains,
        orphans,
        apply_records,
        summary,
    }
}

impl LogPlan {
    /// The segments to remove, chain by chain, oldest first.
    pub fn segments(&self) -> impl Iterator<Item = &PlannedSegment> {
        self.chains.iter().flat_map(|c| c.remove.iter())
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
