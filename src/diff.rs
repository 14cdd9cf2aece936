//! The difference between two sets of committed offsets (two snapshots, or a snapshot and the
//! cluster now), and between two views of the same connectors. Pure.
//!
//! Partitions are compared as two row streams sorted by (group, topic, partition), merged in one
//! pass: memory does not depend on the number of rows, and each difference is handed to the
//! caller as it is found.

mod connectors;
pub mod live;

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde::Serialize;

pub use connectors::{
    diff_connector, ConfigValue, ConnectorChange, ConnectorDiff, ConnectorView, KeyChange,
    OffsetChange,
};

use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};

/// One committed offset on one side.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The partition's log-start offset on this side, when known.
    pub log_start: Option<i64>,
    /// The topic's id on this side, when recorded.
    pub topic_id: Option<String>,
}

impl Row {
    fn key(&self) -> (&str, &str, i32) {
        (&self.group, &self.topic, self.partition)
    }
}

/// Which way a changed offset moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The new offset is ahead: `delta` more records were consumed.
    Forward,
    /// The new offset is behind: the group was rewound by `delta` records.
    Backward,
}

/// What happened to one (group, topic, partition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "lowercase")]
pub enum Change {
    /// Only on the new side.
    Added { new: i64 },
    /// Only on the old side.
    Removed { old: i64 },
    /// On both sides with different offsets; `delta` is `new - old`.
    Changed {
        old: i64,
        new: i64,
        delta: i64,
        direction: Direction,
    },
    /// On both sides with the same offset.
    Unchanged { offset: i64 },
}

/// The difference for one (group, topic, partition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionDiff {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    #[serde(flatten)]
    pub change: Change,
    /// Set when the new side's log-start offset is past the old side's offset: the old offset
    /// can no longer be restored (those records are gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_start_past_old: Option<i64>,
    /// Set when both sides recorded the topic's id and the ids differ: the topic was deleted and
    /// created again, and the old offset belongs to records that no longer exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_recreated: Option<TopicIds>,
}

/// A topic's id on the old and on the new side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicIds {
    pub old: String,
    pub new: String,
}

impl PartitionDiff {
    /// Is this worth showing without `--all`?
    pub fn is_notable(&self) -> bool {
        !matches!(self.change, Change::Unchanged { .. })
            || self.log_start_past_old.is_some()
            || self.topic_recreated.is_some()
    }
}

/// Counts over all partitions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartitionCounts {
    pub added: u64,
    pub removed: u64,
    pub changed: u64,
    pub unchanged: u64,
    /// Records consumed between the two sides, over the partitions that moved forward.
    pub forward_records: i64,
    /// Records rewound, over the partitions that moved backward.
    pub backward_records: i64,
    /// Partitions whose old offset is now before the log start.
    pub log_start_past_old: u64,
    /// Partitions of topics that were deleted and created again.
    pub topic_recreated: u64,
}

impl PartitionCounts {
    /// Any added, removed or changed partition, or a recreated topic.
    pub fn differs(&self) -> bool {
        self.added + self.removed + self.changed + self.topic_recreated > 0
    }

    fn count(&mut self, d: &PartitionDiff) {
        match d.change {
            Change::Added { .. } => self.added += 1,
            Change::Removed { .. } => self.removed += 1,
            Change::Unchanged { .. } => self.unchanged += 1,
            Change::Changed {
                delta, direction, ..
            } => {
                self.changed += 1;
                match direction {
                    Direction::Forward => {
                        self.forward_records = self.forward_records.saturating_add(delta)
                    }
                    Direction::Backward => {
                        self.backward_records = self.backward_records.saturating_add(-delta)
                    }
                }
            }
        }
        if d.log_start_past_old.is_some() {
            self.log_start_past_old += 1;
        }
        if d.topic_recreated.is_some() {
            self.topic_recreated += 1;
        }
    }
}

/// A row stream was not sorted by (group, topic, partition), or held a key twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {side} rows are not sorted by (group, topic, partition) with each key once: {group} {topic}[{partition}] came after a greater or equal key")]
pub struct Unsorted {
    pub side: &'static str,
    pub group: String,
    pub topic: String,
    pub partition: i32,
}

/// Pulls rows from one side and checks that they are strictly increasing.
struct Checked<I: Iterator<Item = Row>> {
    side: &'static str,
    rows: std::iter::Peekable<I>,
    last: Option<(String, String, i32)>,
}

impl<I: Iterator<Item = Row>> Checked<I> {
    fn new(side: &'static str, rows: I) -> Self {
        Checked {
            side,
            rows: rows.peekable(),
            last: None,
        }
    }

    fn peek(&mut self) -> Option<&Row> {
        self.rows.peek()
    }

    fn next(&mut self) -> Result<Option<Row>, Unsorted> {
        let Some(row) = self.rows.next() else {
            return Ok(None);
        };
        if let Some(last) = &self.last {
            if (last.0.as_str(), last.1.as_str(), last.2) >= row.key() {
                return Err(Unsorted {
                    side: self.side,
                    group: row.group,
                    topic: row.topic,
                    partition: row.partition,
                });
            }
        }
        self.last = Some((row.group.clone(), row.topic.clone(), row.partition));
        Ok(Some(row))
    }
}

fn compare(old: Row, new: Row) -> PartitionDiff {
    let change = match new.offset.cmp(&old.offset) {
        Ordering::Equal => Change::Unchanged { offset: old.offset },
        ord => Change::Changed {
            old: old.offset,
            new: new.offset,
            delta: new.offset.saturating_sub(old.offset),
            direction: if ord == Ordering::Greater {
                Direction::Forward
            } else {
                Direction::Backward
            },
        },
    };
    PartitionDiff {
        log_start_past_old: new.log_start.filter(|s| *s > old.offset),
        topic_recreated: match (old.topic_id, new.topic_id) {
            (Some(o), Some(n)) if o != n => Some(TopicIds { old: o, new: n }),
            _ => None,
        },
        group: new.group,
        topic: new.topic,
        partition: new.partition,
        change,
    }
}

/// Merges two row streams, each sorted by (group, topic, partition) with each key once, and
/// hands every partition's difference to `emit` in key order. Returns the counts.
pub fn diff_rows(
    old: impl Iterator<Item = Row>,
    new: impl Iterator<Item = Row>,
    mut emit: impl FnMut(PartitionDiff),
) -> Result<PartitionCounts, Unsorted> {
    let mut old = Checked::new("old", old);
    let mut new = Checked::new("new", new);
    let mut counts = PartitionCounts::default();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(o), Some(n)) => o.key().cmp(&n.key()),
        };
        let d = match order {
            Ordering::Less => {
                let o = old.next()?.expect("peeked");
                PartitionDiff {
                    change: Change::Removed { old: o.offset },
                    group: o.group,
                    topic: o.topic,
                    partition: o.partition,
                    log_start_past_old: None,
                    topic_recreated: None,
                }
            }
            Ordering::Greater => {
                let n = new.next()?.expect("peeked");
                PartitionDiff {
                    change: Change::Added { new: n.offset },
                    group: n.group,
                    topic: n.topic,
                    partition: n.partition,
                    log_start_past_old: None,
                    topic_recreated: None,
                }
            }
            Ordering::Equal => {
                let o = old.next()?.expect("peeked");
                let n = new.next()?.expect("peeked");
                compare(o, n)
            }
        };
        counts.count(&d);
        emit(d);
    }
    Ok(counts)
}

/// What to compare: the same filters as `restore`. Empty lists select everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub groups: Vec<String>,
    pub connectors: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
}

impl Filter {
    /// The groups to compare, given the connectors' sink groups on both sides; `None` for all.
    pub fn group_set(&self, connectors: &[&ConnectorSnapshot]) -> Option<BTreeSet<String>> {
        if self.groups.is_empty() && self.connectors.is_empty() {
            return None;
        }
        let mut set: BTreeSet<String> = self.groups.iter().cloned().collect();
        set.extend(
            connectors
                .iter()
                .filter(|c| self.connectors.contains(&c.name))
                .filter_map(|c| c.group_id.clone()),
        );
        Some(set)
    }

    pub fn wants_partition(&self, topic: &str, partition: i32) -> bool {
        (self.topics.is_empty() || self.topics.iter().any(|t| t == topic))
            && (self.partitions.is_empty() || self.partitions.contains(&partition))
    }

    /// Connectors are compared when none of the filters narrows to groups or topics only.
    pub fn wants_connector(&self, name: &str) -> bool {
        if !self.connectors.is_empty() {
            return self.connectors.iter().any(|c| c == name);
        }
        self.groups.is_empty() && self.topics.is_empty() && self.partitions.is_empty()
    }
}

/// The rows of a snapshot's groups that the filter selects, in key order if the groups and
/// partitions are (as a normalized snapshot's are).
pub fn snapshot_rows<'a>(
    groups: &'a [GroupSnapshot],
    wanted: Option<&'a BTreeSet<String>>,
    filter: &'a Filter,
) -> impl Iterator<Item = Row> + 'a {
    group_rows(groups.iter().cloned(), wanted, filter)
}

/// [`snapshot_rows`] over groups as they are read.
pub fn group_rows<'a>(
    groups: impl Iterator<Item = GroupSnapshot> + 'a,
    wanted: Option<&'a BTreeSet<String>>,
    filter: &'a Filter,
) -> impl Iterator<Item = Row> + 'a {
    groups
        .filter(move |g| wanted.is_none_or(|w| w.contains(&g.group_id)))
        .flat_map(move |g| {
            let group = g.group_id;
            g.partitions
                .into_iter()
                .filter(move |p| filter.wants_partition(&p.topic, p.partition))
                .map(move |p| Row {
                    group: group.clone(),
                    topic: p.topic,
                    partition: p.partition,
                    offset: p.offset,
                    log_start: p.log_start_offset,
                    topic_id: p.topic_id,
                })
        })
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
