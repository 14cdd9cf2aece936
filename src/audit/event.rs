//! The audit event: a CloudEvents 1.0 event in structured JSON mode, its data, and where it lives
//! in the store. Pure: building, encoding, decoding and naming, no I/O.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{exit, Error, Result};

/// The CloudEvents version the events follow.
pub const SPEC_VERSION: &str = "1.0";
/// The content type of `data`.
pub const DATA_CONTENT_TYPE: &str = "application/json";
/// The content type of a whole event in structured mode (the Kafka header of `--audit-topic`).
pub const CLOUDEVENTS_JSON: &str = "application/cloudevents+json";
/// The version of [`EventData`]'s shape.
pub const DATA_FORMAT_VERSION: &str = "1.1";
/// The store folder of the trail.
pub const AUDIT: &str = "audit";
/// The folder of the "opened" markers.
pub const OPEN: &str = "audit/open";
/// The prefix of every event type.
pub const TYPE_PREFIX: &str = "dev.offset-vault.";

/// What an event records: the command that changed (or refused to change) something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventType {
    Restore,
    Reset,
    Prune,
    Import,
    Guard,
    Approve,
    /// A gap recorded in the commit-log archive by `follow`.
    FollowGap,
}

impl EventType {
    pub const ALL: [EventType; 7] = [
        EventType::Restore,
        EventType::Reset,
        EventType::Prune,
        EventType::Import,
        EventType::Guard,
        EventType::Approve,
        EventType::FollowGap,
    ];

    /// The short name: `restore`, `follow.gap`.
    pub fn short(self) -> &'static str {
        match self {
            EventType::Restore => "restore",
            EventType::Reset => "reset",
            EventType::Prune => "prune",
            EventType::Import => "import",
            EventType::Guard => "guard",
            EventType::Approve => "approve",
            EventType::FollowGap => "follow.gap",
        }
    }

    /// The CloudEvents `type`: `dev.offset-vault.restore`.
    pub fn type_name(self) -> String {
        format!("{TYPE_PREFIX}{}", self.short())
    }
}

/// How the command ended, as the trail records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuditOutcome {
    /// The change was made (a restore or reset that found nothing to change included; its exit
    /// code tells a read-back difference or drift).
    Executed,
    /// Some of the change was made, then the command stopped.
    Partial,
    /// Refused because something is in use: an active group, a connector that could not be
    /// stopped (exit 6). Nothing was changed.
    Blocked,
    /// Refused by a check: integrity (5), plan not applicable (7), another cluster (9), the plan
    /// changed since review (11), a prune group the policy would empty (15). Nothing was changed.
    Refused,
    /// An error ended the command (its exit code says which).
    Failed,
    /// Listed only: an opened marker with no event; the process ended before writing its
    /// outcome, possibly partway through a change.
    Unfinished,
}

impl AuditOutcome {
    /// The outcome a command's exit code implies when nothing more is known: refusals by their
    /// codes, anything else non-zero as a failure.
    pub fn of_code(code: i32) -> AuditOutcome {
        match code {
            exit::OK => AuditOutcome::Executed,
            exit::BLOCKED => AuditOutcome::Blocked,
            exit::INTEGRITY
            | exit::NOT_APPLICABLE
            | exit::OTHER_CLUSTER
            | exit::PLAN_CHANGED
            | exit::PRUNE_REFUSED
            | exit::APPROVAL => AuditOutcome::Refused,
            exit::PARTIALLY_APPLIED => AuditOutcome::Partial,
            _ => AuditOutcome::Failed,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AuditOutcome::Executed => "executed",
            AuditOutcome::Partial => "partial",
            AuditOutcome::Blocked => "blocked",
            AuditOutcome::Refused => "refused",
            AuditOutcome::Failed => "failed",
            AuditOutcome::Unfinished => "unfinished",
        }
    }
}

/// Who ran the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Who {
    /// The operating-system user ($USER, $LOGNAME, or the name of the process's uid).
    pub user: String,
    pub host: String,
    /// The id of the key that signed the event, when one did.
    pub key_id: Option<String>,
    /// Where the command came from when not a person's command line: `mcp` for a tool call of
    /// `offset-vault mcp` (format 1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// What one group's offsets did (or, for a refusal, would have done): the numbers of the plan
/// the command printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GroupChange {
    pub group_id: String,
    /// Partitions whose committed offset changes (plan actions `reset` and `clamped`).
    pub partitions_changed: u64,
    /// Records consumed again: the sum of (previous committed - target) where the target is
    /// lower.
    pub records_reprocessed: i64,
    /// Records passed over: the sum of (target - previous committed) where the target is higher.
    pub records_skipped: i64,
}

/// The event's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EventData {
    /// [`DATA_FORMAT_VERSION`].
    pub format_version: String,
    pub who: Who,
    /// The command line, secrets redacted (`***`).
    pub command: Vec<String>,
    /// The snapshots the command read or wrote (restored, imported, deleted, guarded).
    pub snapshot_ids: Vec<String>,
    /// SHA-256 of the plan file applied (`--from-plan`).
    pub plan_sha256: Option<String>,
    /// The snapshot taken before the first change (undo, pre-reset).
    pub undo_snapshot: Option<String>,
    pub outcome: AuditOutcome,
    /// The process's exit code (`null` only for an unfinished command).
    pub exit_code: Option<i32>,
    /// The error that ended the command, if one did.
    pub message: Option<String>,
    /// Per group: partitions changed, records reprocessed and skipped.
    pub groups: Vec<GroupChange>,
    /// What else the command reports (prune: counts deleted; guard: the command run; follow: the
    /// gap's partition and offsets).
    pub detail: BTreeMap<String, Value>,
}

/// One audit event, as stored (CloudEvents 1.0, structured JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Event {
    /// Always `1.0`.
    pub specversion: String,
    /// 128 random bits in hex.
    pub id: String,
    /// `offset-vault://HOST`.
    pub source: String,
    /// `dev.offset-vault.restore`, `.reset`, `.prune`, `.import`, `.guard`, `.approve`,
    /// `.follow.gap`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When the command ended (RFC 3339, milliseconds).
    pub time: DateTime<Utc>,
    /// The snapshot id, or the plan's hash, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Always `application/json`.
    pub datacontenttype: String,
    pub data: EventData,
}

/// The marker a command writes before it changes anything (`audit/open/<id>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub format_version: String,
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub source: String,
    pub time: DateTime<Utc>,
    pub who: Who,
    pub command: Vec<String>,
}

/// A new event id: 128 random bits as 32 hex digits.
pub fn new_id() -> Result<String> {
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw)
        .map_err(|e| Error::Internal(format!("no random bytes for an event id: {e}")))?;
    Ok(hex::encode(raw))
}

/// Is this a well-formed event id?
pub fn is_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `t` cut to milliseconds (the precision of the keys and of `time`).
pub fn to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}

/// `audit/date=YYYY-MM-DD`.
pub fn day_folder(t: DateTime<Utc>) -> String {
    format!("{AUDIT}/date={}", t.format("%Y-%m-%d"))
}

/// `audit/date=YYYY-MM-DD/<YYYYMMDDTHHMMSS.mmmZ>-<id>.json`: sorted by time within a day.
pub fn event_key(time: DateTime<Utc>, id: &str) -> String {
    format!(
        "{}/{}-{id}.json",
        day_folder(time),
        time.format("%Y%m%dT%H%M%S%.3fZ")
    )
}

/// `audit/open/<id>.json`.
pub fn marker_key(id: &str) -> String {
    format!("{OPEN}/{id}.json")
}

/// The time and id an event key names; `None` for any other key.
pub fn parse_event_key(key: &str) -> Option<(DateTime<Utc>, String)> {
    let rest = key.strip_prefix(AUDIT)?.strip_prefix("/date=")?;
    let (day, file) = rest.split_once('/')?;
    let stem = file.strip_suffix(".json")?;
    let (stamp, id) = stem.split_once('-')?;
    if !is_id(id) {
        return None;
    }
    let time = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%S%.3fZ")
        .ok()?
        .and_utc();
    (time.format("%Y-%m-%d").to_string() == day).then(|| (time, id.to_string()))
}

/// The id a marker key names.
pub fn parse_marker_key(key: &str) -> Option<String> {
    let id = key
        .strip_prefix(OPEN)?
        .strip_prefix('/')?
        .strip_suffix(".json")?;
    is_id(id).then(|| id.to_string())
}

/// `offset-vault://HOST`.
pub fn source_of(host: &str) -> String {
    format!("offset-vault://{host}")
}

impl Event {
    /// The event's JSON as stored (and as produced to Kafka).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::Internal(format!("encode an audit event: {e}")))?;
        out.push(b'\n');
        Ok(out)
    }

    /// Decodes a stored event; `key` names it in errors.
    pub fn from_slice(key: &str, bytes: &[u8]) -> Result<Event> {
        let event: Event = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
            path: key.to_string(),
            detail: format!("not an audit event: {e}"),
        })?;
        if event.specversion != SPEC_VERSION {
            return Err(Error::Decode {
                path: key.to_string(),
                detail: format!(
                    "specversion {} (this offset-vault writes {SPEC_VERSION})",
                    event.specversion
                ),
            });
        }
        Ok(event)
    }

    /// Where the event is stored.
    pub fn key(&self) -> String {
        event_key(self.time, &self.id)
    }

    /// The time as written: RFC 3339 with milliseconds.
    pub fn time_text(&self) -> String {
        self.time.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// The short type (`restore`), or the whole type when it is not one of ours.
    pub fn short_type(&self) -> &str {
        self.event_type
            .strip_prefix(TYPE_PREFIX)
            .unwrap_or(&self.event_type)
    }
}

impl Marker {
    /// What the listing shows for a marker with no event: the event it promised, unfinished.
    pub fn unfinished(&self) -> Event {
        Event {
            specversion: SPEC_VERSION.into(),
            id: self.id.clone(),
            source: self.source.clone(),
            event_type: self.event_type.clone(),
            time: self.time,
            subject: None,
            datacontenttype: DATA_CONTENT_TYPE.into(),
            data: EventData {
                format_version: DATA_FORMAT_VERSION.into(),
                who: self.who.clone(),
                command: self.command.clone(),
                snapshot_ids: Vec::new(),
                plan_sha256: None,
                undo_snapshot: None,
                outcome: AuditOutcome::Unfinished,
                exit_code: None,
                message: Some(
                    "opened, but no outcome was written: the process ended before it finished (check what it changed)"
                        .into(),
                ),
                groups: Vec::new(),
                detail: BTreeMap::new(),
            },
        }
    }
}
