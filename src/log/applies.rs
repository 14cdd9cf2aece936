//! The record of an executed restore or reset: the offsets it committed, for which groups, and
//! the window of its commits. Written once the commits are done (whether all of them succeeded
//! or not), create-only, as `applies/date=YYYY-MM-DD/<id>.json`, with a `format_version` and
//! the SHA-256 of its body; the id is the window's start and the start of that checksum, so it
//! sorts by time and is bound to the content. `history` reads these records to mark the
//! commits this tool made as `restore` and to flag only the rewinds nobody explains.
//!
//! The undo (or pre-reset) snapshot is not enough for that: it is taken before the commits, so
//! it says neither which offsets were committed nor when the commits ended, and `--no-undo`
//! leaves none.

use std::collections::BTreeMap;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use super::applied::AppliedBy;
use super::applied::{Applied, AppliedRef};
use crate::error::{Error, Result};
use crate::sign::Purpose;
use crate::snapshot::manifest::{date_folder, sha256_hex};
use crate::store::Store;

/// The `kind` of an apply record.
pub const RECORD_KIND: &str = "offset-vault-apply";
/// Its format (`MAJOR.MINOR`; a reader accepts any minor version of the major it knows).
pub const RECORD_FORMAT_VERSION: &str = "1.0";
/// Where the records are in the store.
pub const APPLIES: &str = "applies";

/// One offset an execution committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedOffset {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// Everything the checksum covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordBody {
    pub kind: String,
    pub format_version: String,
    pub command: AppliedBy,
    pub tool_version: String,
    /// The Kafka cluster the offsets were committed to.
    pub cluster_id: String,
    /// The snapshot restored (for a reset: the reset's label).
    pub snapshot_id: String,
    /// The undo (restore) or pre-reset (reset) snapshot, unless `--no-undo`.
    pub undo_snapshot: Option<String>,
    /// Just before the first commit was sent, and just after the last was answered (the
    /// executing host's clock).
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// Every offset the execution committed (or tried to: a partition that failed is in the
    /// read-back of its outcome, and no commit of it appears in the log).
    pub offsets: Vec<AppliedOffset>,
}

/// An apply record: the body and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyRecord {
    #[serde(flatten)]
    pub body: RecordBody,
    /// SHA-256 of the compact JSON of the body.
    pub sha256: String,
}

fn body_digest(body: &RecordBody) -> String {
    sha256_hex(&serde_json::to_vec(body).expect("a record body always serializes"))
}

impl ApplyRecord {
    /// Seals a body with its checksum.
    pub fn seal(body: RecordBody) -> Self {
        let sha256 = body_digest(&body);
        ApplyRecord { body, sha256 }
    }

    /// The record's id: the window's start and the first 16 hex digits of the checksum.
    pub fn id(&self) -> String {
        format!(
            "{}-{}",
            self.body.started_at.format("%Y%m%dT%H%M%S%.3fZ"),
            &self.sha256[..16]
        )
    }

    /// Its key in the store.
    pub fn key(&self) -> String {
        format!(
            "{APPLIES}/{}/{}.json",
            date_folder(self.body.started_at),
            self.id()
        )
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a record always serializes");
        out.push(b'\n');
        out
    }

    /// Reads and checks a record: kind, version and checksum, before anything of it is used.
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Self> {
        #[derive(Deserialize)]
        struct Head {
            kind: Option<String>,
            format_version: Option<String>,
        }
        let decode = |detail: String| Error::Decode {
            path: path.to_string(),
            detail,
        };
        let head: Head = serde_json::from_slice(bytes)
            .map_err(|e| decode(format!("not a restore or reset record: {e}")))?;
        if head.kind.as_deref() != Some(RECORD_KIND) {
            return Err(decode(format!(
                "not a restore or reset record: kind is {:?}, expected {RECORD_KIND:?}",
                head.kind.unwrap_or_default()
            )));
        }
        let version = head.format_version.unwrap_or_default();
        crate::snapshot::manifest::check_format_version(path, &version)?;
        let record: ApplyRecord =
            serde_json::from_slice(bytes).map_err(|e| decode(e.to_string()))?;
        let actual = body_digest(&record.body);
        if actual != record.sha256 {
            return Err(Error::Integrity {
                id: format!("record {path}"),
                problems: vec![format!(
                    "its content has SHA-256 {actual}, but the record says {}: it was changed after it was written; move it out of the store to list the history without it",
                    record.sha256
                )],
            });
        }
        Ok(record)
    }

    /// What the record says about one group, for `history` ([`crate::log::history::changes`]);
    /// `None` when it committed nothing for the group.
    pub fn applied_to(&self, group: &str) -> Option<Applied> {
        let offsets: BTreeMap<(String, i32), i64> = self
            .body
            .offsets
            .iter()
            .filter(|o| o.group_id == group)
            .map(|o| ((o.topic.clone(), o.partition), o.offset))
            .collect();
        (!offsets.is_empty()).then(|| Applied {
            by: AppliedRef {
                command: self.body.command,
                record: self.id(),
                snapshot: self.body.snapshot_id.clone(),
                undo_snapshot: self.body.undo_snapshot.clone(),
            },
            from: self.body.started_at.timestamp_millis(),
            to: self.body.finished_at.timestamp_millis(),
            offsets,
        })
    }
}

/// Writes a record (create-only) and returns its id.
pub async fn write(store: &Store, record: &ApplyRecord) -> Result<String> {
    store
        .put_new_signed(
            &record.key(),
            Bytes::from(record.to_bytes()),
            Purpose::ApplyRecord,
        )
        .await?;
    Ok(record.id())
}

/// Every record in the store, each checked, oldest first.
pub async fn read_all(store: &Store) -> Result<Vec<ApplyRecord>> {
    let mut keys: Vec<String> = store
        .list(APPLIES)
        .await?
        .into_iter()
        .map(|o| o.key)
        .filter(|k| k.ends_with(".json"))
        .collect();
    keys.sort();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let bytes = store.get(&key).await?;
        if store.keys().enforcing() {
            let verdict = store.judge(&key, &bytes, Purpose::ApplyRecord).await?;
            if let Some(why) = verdict.refusal() {
                return Err(Error::Integrity {
                    id: key,
                    problems: vec![format!("apply record: {why}")],
                });
            }
        }
        out.push(ApplyRecord::from_bytes(&key, &bytes)?);
    }
    Ok(out)
}

/// The executions that committed offsets of `group` on cluster `cluster_id`, oldest first.
pub async fn applied(store: &Store, group: &str, cluster_id: &str) -> Result<Vec<Applied>> {
    Ok(read_all(store)
        .await?
        .iter()
        .filter(|r| r.body.cluster_id == cluster_id)
        .filter_map(|r| r.applied_to(group))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> RecordBody {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        RecordBody {
            kind: RECORD_KIND.into(),
            format_version: RECORD_FORMAT_VERSION.into(),
            command: AppliedBy::Reset,
            tool_version: "0.1.0".into(),
            cluster_id: "c1".into(),
            snapshot_id: "reset-to-earliest".into(),
            undo_snapshot: Some("20261201T100000.000Z-0123456789abcdef".into()),
            started_at: at("2026-12-01T10:00:00.250Z"),
            finished_at: at("2026-12-01T10:00:01Z"),
            offsets: vec![
                AppliedOffset {
                    group_id: "g".into(),
                    topic: "t".into(),
                    partition: 0,
                    offset: 5,
                },
                AppliedOffset {
                    group_id: "other".into(),
                    topic: "t".into(),
                    partition: 0,
                    offset: 9,
                },
            ],
        }
    }

    #[test]
    fn a_record_round_trips_and_refuses_changes_and_other_majors() {
        let r = ApplyRecord::seal(body());
        assert!(r.id().starts_with("20261201T100000.250Z-"), "{}", r.id());
        assert!(r
            .key()
            .starts_with("applies/date=2026-12-01/20261201T100000.250Z-"));
        let bytes = r.to_bytes();
        assert_eq!(ApplyRecord::from_bytes("k", &bytes).unwrap(), r);

        let text = String::from_utf8(bytes).unwrap();
        // (the change, the error's start)
        let cases = [
            (
                text.replace("\"offset\": 5", "\"offset\": 4"),
                "record k failed",
            ),
            (
                text.replace("\"1.0\"", "\"2.0\""),
                "k: unsupported format_version 2.0",
            ),
            (
                text.replace(RECORD_KIND, "offset-vault-plan"),
                "k: cannot decode",
            ),
        ];
        for (changed, want) in cases {
            let e = ApplyRecord::from_bytes("k", changed.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    #[test]
    fn a_record_says_what_it_committed_for_one_group() {
        let r = ApplyRecord::seal(body());
        let a = r.applied_to("g").unwrap();
        assert_eq!(a.offsets, [(("t".to_string(), 0), 5)].into());
        assert_eq!((a.from, a.to), (1_796_119_200_250, 1_796_119_201_000));
        assert_eq!(a.by.command, AppliedBy::Reset);
        assert_eq!(a.by.record, r.id());
        assert_eq!(r.applied_to("nobody"), None);
    }
}
