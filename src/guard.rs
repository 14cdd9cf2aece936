//! What moved while `guard`'s command ran: the difference between the snapshot taken before the
//! command and the cluster after it, summed up in bounded memory. Pure.
//!
//! The partition differences come one at a time from [`crate::diff::diff_rows`]; a [`Collector`]
//! keeps the counts and the first [`LISTED`] moved partitions and groups, never all of them.

use serde::Serialize;

use crate::diff::{Change, ConnectorChange, ConnectorDiff, PartitionCounts, PartitionDiff};

/// How many moved partitions (and moved groups) a comparison lists; the rest are counted.
pub const LISTED: usize = 100;

/// One partition whose committed offset differs from the snapshot's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedPartition {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// The offset in the snapshot; `None` when the group had none there.
    pub old: Option<i64>,
    /// The offset now; `None` when it was deleted.
    pub new: Option<i64>,
    /// `new - old`, when both exist: negative means records will be processed again, positive
    /// that records were skipped (or consumed).
    pub delta: Option<i64>,
    /// The topic was deleted and created again: the old offset is of records that are gone.
    pub topic_recreated: bool,
}

impl MovedPartition {
    /// The partition's entry when it moved, `None` when it did not.
    fn of(d: PartitionDiff) -> Option<MovedPartition> {
        let (old, new, delta) = match d.change {
            Change::Unchanged { .. } if d.topic_recreated.is_none() => return None,
            Change::Unchanged { offset } => (Some(offset), Some(offset), Some(0)),
            Change::Added { new } => (None, Some(new), None),
            Change::Removed { old } => (Some(old), None, None),
            Change::Changed {
                old, new, delta, ..
            } => (Some(old), Some(new), Some(delta)),
        };
        Some(MovedPartition {
            group: d.group,
            topic: d.topic,
            partition: d.partition,
            old,
            new,
            delta,
            topic_recreated: d.topic_recreated.is_some(),
        })
    }
}

/// A connector whose offsets differ from the snapshot's, or that is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedConnector {
    pub name: String,
    /// `changed` (its offsets differ) or `removed` (not found now).
    pub change: ConnectorChange,
    /// Its source or sink partitions whose offset differs.
    pub offsets_moved: u64,
}

/// What moved between the snapshot and the cluster after the command, or why that could not
/// be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The offsets were compared. When false, `error` says why, and they may have moved.
    pub checked: bool,
    pub error: Option<String>,
    pub groups_compared: u64,
    pub connectors_compared: u64,
    pub partitions_compared: u64,
    /// Partitions whose committed offset changed, appeared or was deleted.
    pub partitions_moved: u64,
    pub groups_moved: u64,
    /// Records to be processed again: the sum over the partitions that moved backward.
    pub records_reprocessed: i64,
    /// Records skipped (or consumed): the sum over the partitions that moved forward.
    pub records_skipped: i64,
    /// The first [`LISTED`] moved groups, in name order (`groups_moved` counts them all).
    pub groups: Vec<String>,
    /// The first [`LISTED`] moved partitions, in (group, topic, partition) order.
    pub partitions: Vec<MovedPartition>,
    /// Moved partitions left out of `partitions`.
    pub partitions_not_listed: u64,
    pub connectors: Vec<MovedConnector>,
}

impl Comparison {
    /// A comparison that could not be made.
    pub fn failed(error: impl std::fmt::Display) -> Comparison {
        Comparison {
            checked: false,
            error: Some(error.to_string()),
            groups_compared: 0,
            connectors_compared: 0,
            partitions_compared: 0,
            partitions_moved: 0,
            groups_moved: 0,
            records_reprocessed: 0,
            records_skipped: 0,
            groups: vec![],
            partitions: vec![],
            partitions_not_listed: 0,
            connectors: vec![],
        }
    }

    /// Something moved, or nobody knows: a rollback may be needed.
    pub fn may_have_moved(&self) -> bool {
        !self.checked || self.partitions_moved > 0 || !self.connectors.is_empty()
    }
}

/// Collects the partition differences in the order [`crate::diff::diff_rows`] hands them over.
#[derive(Debug, Default)]
pub struct Collector {
    partitions: Vec<MovedPartition>,
    moved: u64,
    groups: Vec<String>,
    groups_moved: u64,
    last_group: Option<String>,
}

impl Collector {
    /// Takes one partition's difference; keeps it if it moved and the list has room.
    pub fn add(&mut self, d: PartitionDiff) {
        let Some(m) = MovedPartition::of(d) else {
            return;
        };
        self.moved += 1;
        // Differences come sorted by group: a new moved group is one unlike the last.
        if self.last_group.as_deref() != Some(m.group.as_str()) {
            self.groups_moved += 1;
            if self.groups.len() < LISTED {
                self.groups.push(m.group.clone());
            }
            self.last_group = Some(m.group.clone());
        }
        if self.partitions.len() < LISTED {
            self.partitions.push(m);
        }
    }

    /// The comparison, given the merge's counts, how many groups and connectors were compared,
    /// and the connectors that differ.
    pub fn finish(
        self,
        counts: &PartitionCounts,
        (groups_compared, connectors_compared): (u64, u64),
        connectors: &[ConnectorDiff],
    ) -> Comparison {
        Comparison {
            checked: true,
            error: None,
            groups_compared,
            connectors_compared,
            partitions_compared: counts.added + counts.removed + counts.changed + counts.unchanged,
            partitions_moved: self.moved,
            groups_moved: self.groups_moved,
            records_reprocessed: counts.backward_records,
            records_skipped: counts.forward_records,
            partitions_not_listed: self.moved - self.partitions.len() as u64,
            groups: self.groups,
            partitions: self.partitions,
            connectors: connectors.iter().filter_map(moved_connector).collect(),
        }
    }
}

/// A connector's entry when its offsets moved or it is gone; config and state changes alone
/// are not offsets moving.
fn moved_connector(d: &ConnectorDiff) -> Option<MovedConnector> {
    let moved = match d.change {
        ConnectorChange::Removed => true,
        ConnectorChange::Changed | ConnectorChange::Added => !d.offsets.is_empty(),
        ConnectorChange::Unchanged => false,
    };
    moved.then(|| MovedConnector {
        name: d.name.clone(),
        change: d.change,
        offsets_moved: d.offsets.len() as u64,
    })
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
