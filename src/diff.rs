//! The difference between two sets of committed offsets (two snapshots, or a snapshot and the
//! cluster now), and between two views of the same connectors. Pure.
//!
//! Partitions are compared as two row streams sorted by (group, topic, partition), merged in one
//! pass: memory does not depend on the number of rows, and each difference is handed to the
//! caller as it is found.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::redact::{is_secret_key, REDACTED};

/// One committed offset on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The partition's log-start offset on this side, when known.
    pub log_start: Option<i64>,
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
}

impl PartitionDiff {
    /// Is this worth showing without `--all`?
    pub fn is_notable(&self) -> bool {
        !matches!(self.change, Change::Unchanged { .. }) || self.log_start_past_old.is_some()
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
}

impl PartitionCounts {
    /// Any added, removed or changed partition.
    pub fn differs(&self) -> bool {
        self.added + self.removed + self.changed > 0
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
    groups
        .iter()
        .filter(move |g| wanted.is_none_or(|w| w.contains(&g.group_id)))
        .flat_map(move |g| {
            g.partitions
                .iter()
                .filter(move |p| filter.wants_partition(&p.topic, p.partition))
                .map(move |p| Row {
                    group: g.group_id.clone(),
                    topic: p.topic.clone(),
                    partition: p.partition,
                    offset: p.offset,
                    log_start: p.log_start_offset,
                })
        })
}

/// One side's view of a connector.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorView {
    pub name: String,
    pub state: Option<String>,
    /// `None` when this side has no config (the live view reads only state and offsets).
    pub config: Option<BTreeMap<String, String>>,
    pub redacted_keys: Vec<String>,
    pub offsets: Option<Vec<Value>>,
}

impl From<&ConnectorSnapshot> for ConnectorView {
    fn from(c: &ConnectorSnapshot) -> Self {
        ConnectorView {
            name: c.name.clone(),
            state: Some(c.state.clone()),
            config: Some(c.config.clone()),
            redacted_keys: c.redacted_keys.clone(),
            offsets: c.offsets.clone(),
        }
    }
}

/// A config value in a diff: shown, or hidden because it is a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Shown(String),
    Hidden { secret: bool },
}

/// One config key that differs. A missing side is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyChange {
    pub key: String,
    pub old: Option<ConfigValue>,
    pub new: Option<ConfigValue>,
}

/// One source or sink partition whose connector offset differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OffsetChange {
    pub partition: Value,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// What differs for one connector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorDiff {
    pub name: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<(Option<String>, Option<String>)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<KeyChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<OffsetChange>,
    /// Secret keys redacted on a side, so their values could not be compared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
}

fn sha256(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Compares configs. Secret values (keys that look secret or were redacted) are compared by
/// SHA-256 and never returned; a value redacted on either side cannot be compared.
fn config_changes(
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    redacted: &BTreeSet<&str>,
) -> (Vec<KeyChange>, Vec<String>) {
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut changes = Vec::new();
    let mut not_compared = Vec::new();
    for key in keys {
        let secret = redacted.contains(key.as_str()) || is_secret_key(key);
        let (o, n) = (old.get(key), new.get(key));
        let redacted_side =
            o.map(String::as_str) == Some(REDACTED) || n.map(String::as_str) == Some(REDACTED);
        if secret && redacted_side && o.is_some() && n.is_some() {
            not_compared.push(key.clone());
            continue;
        }
        let same = match (o, n) {
            (Some(a), Some(b)) if secret => sha256(a) == sha256(b),
            (a, b) => a == b,
        };
        if !same {
            let show = |v: Option<&String>| {
                v.map(|v| {
                    if secret {
                        ConfigValue::Hidden { secret: true }
                    } else {
                        ConfigValue::Shown(v.clone())
                    }
                })
            };
            changes.push(KeyChange {
                key: key.clone(),
                old: show(o),
                new: show(n),
            });
        }
    }
    (changes, not_compared)
}

/// JSON with object keys sorted at every level, so equal values compare equal as text.
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let sorted: BTreeMap<&String, Value> =
                    m.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Connector offsets (`[{"partition": .., "offset": ..}]`) by canonical partition.
fn offsets_by_partition(entries: &[Value]) -> BTreeMap<String, (Value, Value)> {
    entries
        .iter()
        .map(|e| {
            let p = e.get("partition").cloned().unwrap_or(Value::Null);
            let o = e.get("offset").cloned().unwrap_or(Value::Null);
            (canonical(&p), (p, o))
        })
        .collect()
}

fn offset_changes(old: &[Value], new: &[Value]) -> Vec<OffsetChange> {
    let (old, new) = (offsets_by_partition(old), offsets_by_partition(new));
    let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (o, n) = (old.get(k), new.get(k));
            let same = match (o, n) {
                (Some(a), Some(b)) => canonical(&a.1) == canonical(&b.1),
                _ => false,
            };
            (!same).then(|| OffsetChange {
                partition: o.or(n).map(|x| x.0.clone()).unwrap_or(Value::Null),
                old: o.map(|x| x.1.clone()),
                new: n.map(|x| x.1.clone()),
            })
        })
        .collect()
}

/// Compares one connector on both sides; `None` when nothing comparable differs.
pub fn diff_connector(
    old: Option<&ConnectorView>,
    new: Option<&ConnectorView>,
) -> Option<ConnectorDiff> {
    let (o, n) = match (old, new) {
        (None, None) => return None,
        (Some(o), None) | (None, Some(o)) => {
            return Some(ConnectorDiff {
                name: o.name.clone(),
                change: if old.is_some() { "removed" } else { "added" },
                state: None,
                config: vec![],
                offsets: vec![],
                not_compared: vec![],
            })
        }
        (Some(o), Some(n)) => (o, n),
    };
    let redacted: BTreeSet<&str> = o
        .redacted_keys
        .iter()
        .chain(&n.redacted_keys)
        .map(String::as_str)
        .collect();
    let (config, not_compared) = match (&o.config, &n.config) {
        (Some(a), Some(b)) => config_changes(a, b, &redacted),
        _ => (vec![], vec![]),
    };
    let offsets = match (&o.offsets, &n.offsets) {
        (Some(a), Some(b)) => offset_changes(a, b),
        _ => vec![],
    };
    let state = (o.state.is_some() && n.state.is_some() && o.state != n.state)
        .then(|| (o.state.clone(), n.state.clone()));
    if config.is_empty() && offsets.is_empty() && state.is_none() && not_compared.is_empty() {
        return None;
    }
    let differs = !config.is_empty() || !offsets.is_empty() || state.is_some();
    Some(ConnectorDiff {
        name: o.name.clone(),
        change: if differs { "changed" } else { "unchanged" },
        state,
        config,
        offsets,
        not_compared,
    })
}

impl ConnectorDiff {
    /// Does this count as a difference for `--exit-code`?
    pub fn differs(&self) -> bool {
        self.change != "unchanged"
    }
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
