//! The snapshot data model: what one snapshot holds, independent of the file format.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

pub use crate::group_model::{GroupState, GroupType};

/// Version of the snapshot file formats (`MAJOR.MINOR`). A reader accepts any minor version of
/// the major version it knows: minor versions only add optional fields.
pub const FORMAT_VERSION: &str = "1.4";
/// The major version this build reads and writes.
pub const FORMAT_MAJOR: u32 = 1;

/// Why a snapshot exists. Choosing "the latest" or "the newest before T" considers only
/// [`SnapshotKind::Snapshot`] unless asked otherwise, so a retried restore never picks its own
/// undo point.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotKind {
    /// Taken on purpose by `offset-vault snapshot`.
    #[default]
    Snapshot,
    /// Taken by a restore just before it changed anything.
    Undo,
    /// Made from a kafka-consumer-groups CSV file by `offset-vault import`.
    Import,
    /// Taken by `offset-vault reset` just before it changed anything: restoring it undoes the
    /// reset.
    #[serde(rename = "pre-reset")]
    PreReset,
}

impl SnapshotKind {
    pub fn is_snapshot(&self) -> bool {
        *self == SnapshotKind::Snapshot
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotKind::Snapshot => "snapshot",
            SnapshotKind::Undo => "undo",
            SnapshotKind::Import => "import",
            SnapshotKind::PreReset => "pre-reset",
        }
    }
}

impl std::fmt::Display for SnapshotKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was asked for when the snapshot was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_pattern: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_groups: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connectors: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_connectors: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// With `all_groups` or `group_pattern`: only groups of these types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_types: Vec<GroupType>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_missing: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_timestamps: bool,
}

impl Selection {
    /// True when nothing at all would be captured.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
            && self.group_pattern.is_none()
            && !self.all_groups
            && self.connectors.is_empty()
            && !self.all_connectors
    }

    /// Whether a snapshot taken with this selection would have captured `group` had it
    /// existed then: every group (`--all-groups`), or one its pattern or names match, with no
    /// topic or type filter (those leave out groups the log cannot tell apart). A covered group
    /// absent from the snapshot had no committed offset when it was taken. Pure.
    pub fn covers_group(&self, group: &str) -> bool {
        let filtered = !self.topics.is_empty() || !self.group_types.is_empty();
        let pattern = self.group_pattern.as_deref().is_some_and(|p| {
            regex::Regex::new(&format!("^(?:{p})$")).is_ok_and(|r| r.is_match(group))
        });
        !filtered && (self.all_groups || pattern || self.groups.iter().any(|g| g == group))
    }

    /// Whether a snapshot taken with this selection would have captured connector `name` had
    /// it existed then. Pure.
    pub fn covers_connector(&self, name: &str) -> bool {
        self.topics.is_empty() && (self.all_connectors || self.connectors.iter().any(|c| c == name))
    }
}

#[cfg(test)]
mod selection_tests {
    use super::*;

    #[test]
    fn a_selection_covers_what_it_would_have_captured() {
        let all = Selection {
            all_groups: true,
            ..Default::default()
        };
        let pattern = Selection {
            group_pattern: Some("pay-.*".into()),
            ..Default::default()
        };
        let named = Selection {
            groups: vec!["orders".into()],
            connectors: vec!["sink".into()],
            ..Default::default()
        };
        let topics = Selection {
            topics: vec!["t".into()],
            ..all.clone()
        };
        let types = Selection {
            group_types: vec![GroupType::Classic],
            ..all.clone()
        };
        let bad = Selection {
            group_pattern: Some("(".into()),
            ..Default::default()
        };
        // (selection, group, covered?)
        let cases = [
            (&all, "anything", true),
            (&pattern, "pay-eu", true),
            (&pattern, "xpay-eu", false),
            (&named, "orders", true),
            (&named, "other", false),
            (&topics, "anything", false),
            (&types, "anything", false),
            (&bad, "(", false),
        ];
        for (i, (s, g, want)) in cases.iter().enumerate() {
            assert_eq!(s.covers_group(g), *want, "case {i}: {g} by {s:?}");
        }
        let connectors = Selection {
            all_connectors: true,
            ..Default::default()
        };
        assert!(connectors.covers_connector("any"));
        assert!(named.covers_connector("sink"));
        assert!(!named.covers_connector("source"));
        assert!(!all.covers_connector("sink"));
    }
}

/// A member of a group at capture time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub member_id: String,
    pub client_id: String,
    pub host: String,
}

impl From<&crate::group_model::GroupMember> for Member {
    fn from(m: &crate::group_model::GroupMember) -> Self {
        Member {
            member_id: m.member_id.clone(),
            client_id: m.client_id.clone(),
            host: m.host.clone(),
        }
    }
}

/// One consumer group's committed offsets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSnapshot {
    pub group_id: String,
    /// Coordinator state at capture time: Empty, Stable, PreparingRebalance, Dead, ...
    pub state: GroupState,
    /// `consumer` for groups whose members use the consumer protocol, empty for "simple" groups
    /// that only ever committed offsets.
    pub protocol_type: String,
    /// `classic`, `consumer` (KIP-848), `share` (KIP-932) or `streams` (KIP-1071). For a share
    /// group, each partition's `offset` is its share-partition start offset and `lag` the
    /// broker's count of records at or above it not yet acknowledged.
    pub group_type: GroupType,
    #[serde(default)]
    pub members: Vec<Member>,
    /// The connector this group belongs to, when it was selected through a connector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    /// The group's configs (share and streams groups: `share.auto.offset.reset`, ...), as
    /// DescribeConfigs reported them. Absent before format 1.2.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub configs: BTreeMap<String, String>,
    pub partitions: Vec<PartitionOffset>,
}

/// One committed offset with the partition's state at capture time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_epoch: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_start_offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_end_offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<i64>,
    /// Timestamp of the record at `offset - 1` (the last one consumed), with `--with-timestamps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_record_timestamp: Option<DateTime<Utc>>,
    /// Fingerprint of that record (hex SHA-256 of its key, value and headers), with
    /// `--with-timestamps`: it finds the record again on another cluster. Absent before format
    /// 1.4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_record_digest: Option<String>,
    /// The topic's id at capture time: a topic deleted and created again under the same name has
    /// another id. Absent in format 1.0 snapshots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
}

impl PartitionOffset {
    /// A committed offset with nothing else known yet: no leader epoch, metadata, log range,
    /// last record or topic id.
    pub fn new(topic: impl Into<String>, partition: i32, offset: i64) -> Self {
        PartitionOffset {
            topic: topic.into(),
            partition,
            offset,
            leader_epoch: None,
            metadata: None,
            log_start_offset: None,
            log_end_offset: None,
            lag: None,
            last_record_timestamp: None,
            last_record_digest: None,
            topic_id: None,
        }
    }
}

/// A task of a connector at capture time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskState {
    pub id: i32,
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
}

/// One Kafka Connect connector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorSnapshot {
    pub name: String,
    /// The REST URL of the Connect cluster it was read from.
    pub connect_url: String,
    /// `sink`, `source`, or `unknown`.
    pub connector_type: String,
    /// The consumer group of a sink connector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Configuration, with secret-looking values redacted unless `--include-secrets`.
    pub config: BTreeMap<String, String>,
    /// Keys whose values were redacted.
    #[serde(default)]
    pub redacted_keys: Vec<String>,
    pub state: String,
    #[serde(default)]
    pub tasks: Vec<TaskState>,
    /// The entries of `GET /connectors/{name}/offsets`, when the worker supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets: Option<Vec<Value>>,
    /// Why `offsets` is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offsets_unavailable: Option<String>,
}

/// The captured data, the part every format must carry exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotContent {
    pub groups: Vec<GroupSnapshot>,
    pub connectors: Vec<ConnectorSnapshot>,
}

impl SnapshotContent {
    /// Puts groups, partitions and connectors in a fixed order, so the same data always encodes
    /// to the same bytes.
    pub fn normalize(&mut self) {
        self.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        for g in &mut self.groups {
            g.partitions
                .sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        }
        self.connectors
            .sort_by(|a, b| (&a.connect_url, &a.name).cmp(&(&b.connect_url, &b.name)));
    }

    pub fn partition_count(&self) -> usize {
        self.groups.iter().map(|g| g.partitions.len()).sum()
    }
}

/// Snapshot metadata: identity, time, origin, selection and tags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMeta {
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub tool_version: String,
    pub cluster_id: String,
    pub bootstrap_servers: String,
    #[serde(default)]
    pub brokers: Vec<String>,
    #[serde(default)]
    pub selection: Selection,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Why the snapshot exists. Absent (and so `snapshot`) in format 1.0 files; not written when
    /// it is `snapshot`, so the sealed bytes of 1.0 manifests stay the same.
    #[serde(default, skip_serializing_if = "SnapshotKind::is_snapshot")]
    pub kind: SnapshotKind,
    /// For an undo snapshot: the id of the snapshot the restore was restoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_of: Option<String>,
    /// Set when the snapshot was written with `--allow-partial` although some part could not be
    /// read: one reason per missing part. Restoring a partial snapshot needs `--allow-partial`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<String>,
}

impl SnapshotMeta {
    pub fn is_partial(&self) -> bool {
        !self.partial.is_empty()
    }
}
/// The format of the offsets file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One row per (group, topic, partition), typed columns; read by DuckDB, Spark, pandas.
    #[default]
    Parquet,
    /// The same information as one JSON document.
    Json,
}

impl Format {
    pub fn offsets_file(self) -> &'static str {
        match self {
            Format::Parquet => "offsets.parquet",
            Format::Json => "offsets.json",
        }
    }
}

/// Accepts `MAJOR.MINOR` with the major version this build knows.
pub fn check_format_version(path: &str, found: &str) -> Result<()> {
    let major = found.split('.').next().and_then(|m| m.parse::<u32>().ok());
    if major == Some(FORMAT_MAJOR) {
        Ok(())
    } else {
        Err(Error::UnsupportedFormat {
            path: path.to_string(),
            found: found.to_string(),
            supported: format!("major version {FORMAT_MAJOR}"),
        })
    }
}
