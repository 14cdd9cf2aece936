//! The difference between two views of one connector: config keys (secrets by hash), offsets
//! per source or sink partition, and state. Pure.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::redact::{is_secret_key, REDACTED};
use crate::snapshot::model::ConnectorSnapshot;

/// One side's view of a connector.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorView {
    pub name: String,
    pub state: Option<String>,
    /// `None` when this side's config is not known.
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

/// What happened to a connector between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorChange {
    /// Only on the new side.
    Added,
    /// Only on the old side.
    Removed,
    /// Its config, offsets or state differ.
    Changed,
    /// Nothing comparable differs, but some secret values could not be compared.
    Unchanged,
}

impl std::fmt::Display for ConnectorChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ConnectorChange::Added => "added",
            ConnectorChange::Removed => "removed",
            ConnectorChange::Changed => "changed",
            ConnectorChange::Unchanged => "unchanged",
        })
    }
}

/// What differs for one connector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectorDiff {
    pub name: String,
    pub change: ConnectorChange,
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
                change: if old.is_some() {
                    ConnectorChange::Removed
                } else {
                    ConnectorChange::Added
                },
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
        change: if differs {
            ConnectorChange::Changed
        } else {
            ConnectorChange::Unchanged
        },
        state,
        config,
        offsets,
        not_compared,
    })
}

impl ConnectorDiff {
    /// Does this count as a difference for `--exit-code`?
    pub fn differs(&self) -> bool {
        self.change != ConnectorChange::Unchanged
    }
}
