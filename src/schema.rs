//! The JSON documents that `--output json` prints: every one is an object with a
//! `schema_version`, and its JSON Schema is generated from the types below and kept under
//! `docs/schema/` (a test regenerates and compares them, and validates real output against them).
//!
//! The types mirror the documents the commands print; `deny_unknown_fields` makes the schemas
//! closed, so a field added to or dropped from a document without its type fails the tests.
//! Nested snapshot content (manifest, groups, connectors, file entries, summaries) is described
//! as open objects: its own `format_version` governs it.
//!
//! `schema_version` changes when a document changes incompatibly (a field removed, renamed or
//! retyped); added fields keep it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// The version of every JSON document's shape.
pub const SCHEMA_VERSION: u32 = 1;

/// `value` with `schema_version` first, when it is an object that has none.
pub fn versioned(value: &Value) -> Value {
    match value {
        Value::Object(fields) if !fields.contains_key("schema_version") => {
            let mut out = Map::with_capacity(fields.len() + 1);
            out.insert("schema_version".into(), SCHEMA_VERSION.into());
            out.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// An object whose inner shape is versioned on its own (snapshot content).
type Open = BTreeMap<String, Value>;

/// `snapshot --output json`: the snapshot written.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotDoc {
    pub schema_version: u32,
    /// The new snapshot's id.
    pub id: String,
    /// The store URL it was written to.
    pub store: String,
    pub created_at: DateTime<Utc>,
    pub cluster_id: String,
    /// `parquet` or `json`.
    pub format: String,
    pub summary: Open,
    pub files: Vec<Open>,
    pub tags: BTreeMap<String, String>,
    pub warnings: Vec<String>,
    /// With `--encrypt-to`: the file that holds the connector secrets, encrypted, and its
    /// recipients (`{"file": ..., "recipients": ["age1..."]}`); null otherwise.
    pub encrypted_secrets: Option<Open>,
}

/// `list --output json`: the snapshots, newest first.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDoc {
    pub schema_version: u32,
    pub snapshots: Vec<Listed>,
}

/// One snapshot in `list`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Listed {
    Complete(ListedComplete),
    Incomplete(ListedIncomplete),
}

/// A snapshot with a readable manifest.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListedComplete {
    pub id: String,
    /// Always true here.
    pub complete: bool,
    /// `snapshot`, `undo` or `import`.
    pub kind: String,
    /// For an undo snapshot: the snapshot its restore restored.
    pub undo_of: Option<String>,
    /// Why the snapshot is partial; empty when it is complete.
    pub partial: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub cluster_id: String,
    pub format: String,
    pub summary: Open,
    pub tags: BTreeMap<String, String>,
    /// Who signed the manifest: `unsigned`, `unverified` (signed; no trusted key given to check
    /// it), `trusted`, `untrusted` or `invalid`.
    pub signature: crate::sign::Verdict,
}

/// A snapshot folder without a (readable) manifest: never used for a restore.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListedIncomplete {
    pub id: String,
    /// Always false here.
    pub complete: bool,
    pub problem: Option<String>,
    /// The keys of the files found.
    pub files: Vec<String>,
}

/// `show --output json`: one verified snapshot, or (`show --at TIME`) the committed offsets at
/// an instant.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ShowDoc {
    Snapshot(ShowSnapshotDoc),
    At(ShowAtDoc),
}

/// `show ID --output json`: one verified snapshot.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowSnapshotDoc {
    pub schema_version: u32,
    pub manifest: Open,
    /// Who signed the manifest (see `list`).
    pub signature: crate::sign::Verdict,
    pub groups: Vec<Open>,
    pub connectors: Vec<Open>,
}

/// `show --at TIME --output json`: the newest snapshot before TIME plus the commit-log archive
/// up to TIME.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowAtDoc {
    pub schema_version: u32,
    /// The instant.
    pub at: DateTime<Utc>,
    pub base: ShowAtBase,
    /// Segments of `__consumer_offsets` read, over all groups.
    pub segments: u64,
    /// Archived records replayed onto the base, over all groups.
    pub records: u64,
    /// The groups that had a committed offset at the instant, in a snapshot's group form: the
    /// partitions are those of the instant; state, members and configs are the base's.
    pub groups: Vec<Open>,
    /// Where each selected group's offsets came from, the absent ones too.
    pub sources: Vec<AtSource>,
    /// Selected groups with no committed offset at the instant (not yet committed, or deleted).
    pub absent: Vec<String>,
    /// Share groups of the base left out: their positions are not in the commit log.
    pub left_out: Vec<String>,
    /// Partitions of `__consumer_offsets` whose archive does not cover the interval, with the
    /// reason: groups created after the base there could not be looked for.
    pub undiscovered: Vec<String>,
    /// What the answer cannot rule out, in words.
    pub caveats: Vec<String>,
}

/// The base snapshot of an instant.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowAtBase {
    /// The base snapshot's id, or `log-start` when the base is the log from its start (no
    /// snapshot precedes the instant).
    pub snapshot: String,
    pub created_at: DateTime<Utc>,
    pub kind: String,
    pub cluster_id: String,
    /// Why it was chosen, in words.
    pub because: String,
}

/// Where one group's offsets at an instant came from.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtSource {
    pub group_id: String,
    /// The partition of `__consumer_offsets` that holds the group's records.
    pub source_partition: i32,
    /// Segments of that partition read.
    pub segments: u64,
    /// The group's records after the base and up to the instant that can move a position
    /// (commits, deletions, the group's deletion), replayed.
    pub records: u64,
    /// When the last of them belongs (commit time; a deletion's record time); `null` when the
    /// base's offsets held at the instant.
    pub last_record_at: Option<DateTime<Utc>>,
    /// The group had a committed offset at the instant.
    pub committed: bool,
    /// The group is in the base; when not, it was created after the base and its offsets were
    /// replayed from none.
    pub in_base: bool,
}

/// `keygen --output json`: the key pair written.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeygenDoc {
    pub schema_version: u32,
    /// The id `list`, `show` and signatures name the key by.
    pub key_id: String,
    /// The secret key's file (mode 0600).
    pub secret_key: String,
    pub public_key: String,
}

/// `approve --output json`: the approval added to a plan file.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveDoc {
    pub schema_version: u32,
    /// The plan file.
    pub plan: String,
    /// The plan's checksum: what every signature in it signs.
    pub sha256: String,
    /// `restore` or `reset`.
    pub kind: String,
    pub snapshot_id: String,
    pub cluster_id: String,
    /// The author's signature as the configured keys judge it.
    pub author: crate::sign::Verdict,
    /// The key id of the approval just added.
    pub approved_by: String,
    /// The key ids of every approval in the file now.
    pub approvals: Vec<String>,
}

/// `verify --output json`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyDoc {
    pub schema_version: u32,
    pub verified: u64,
    /// Snapshots whose content or signature is broken (corrupted or changed).
    pub failed: u64,
    /// Intact snapshots with no signature.
    pub unsigned: u64,
    /// Intact snapshots signed by a key that is not trusted.
    pub untrusted: u64,
    pub snapshots: Vec<Verified>,
    /// With `--all`: the commit-log archive and the apply records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<VerifiedLog>,
}

/// The commit-log archive and the apply records, as `verify --all` found them.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifiedLog {
    pub partitions: u64,
    /// Index entries (segments and recorded gaps).
    pub manifests: u64,
    /// Data files re-hashed against their manifests.
    pub segments_checked: u64,
    pub apply_records: u64,
    /// No problem (notes do not count).
    pub ok: bool,
    /// Kinds: checksum, content, missing-data, bad-manifest, overlap, unrecorded-gap,
    /// bad-apply-record, bad-signature; with trusted keys: unsigned, untrusted.
    pub problems: Vec<LogFinding>,
    /// Kinds: orphan (harmless, never read; prune removes it), recorded-gap.
    pub notes: Vec<LogFinding>,
}

/// One finding of `verify --all` in the archive.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogFinding {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    pub key: String,
    pub detail: String,
}

/// One verified snapshot.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verified {
    pub id: String,
    /// No problem, a valid signature if any, and a trusted one when trusted keys are given.
    pub ok: bool,
    pub problems: Vec<String>,
    pub signature: crate::sign::Verdict,
}

/// `guard --output json`: the snapshot and how the command ended.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardDoc {
    pub schema_version: u32,
    pub snapshot_id: String,
    pub store: String,
    pub command: Vec<String>,
    /// The command's exit code (128 + N when signal N ended it).
    pub exit_code: i32,
    pub signal: Option<i32>,
    /// Whether the status record was written next to the snapshot.
    pub recorded: bool,
    /// The snapshot's offsets compared with the cluster's once the command had ended.
    pub comparison: GuardComparison,
    /// When the command failed and offsets moved (or could not be checked): the restore dry run,
    /// then the command that applies it.
    pub rollback: Option<Vec<String>>,
}

/// What moved between `guard`'s snapshot and the cluster after its command.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardComparison {
    /// The offsets were compared; when false, `error` says why, and they may have moved.
    pub checked: bool,
    pub error: Option<String>,
    pub groups_compared: u64,
    pub connectors_compared: u64,
    pub partitions_compared: u64,
    /// Partitions whose committed offset changed, appeared or was deleted.
    pub partitions_moved: u64,
    pub groups_moved: u64,
    /// Records to be processed again (partitions moved backward).
    pub records_reprocessed: i64,
    /// Records skipped or consumed (partitions moved forward).
    pub records_skipped: i64,
    /// The first 100 moved groups.
    pub groups: Vec<String>,
    /// The first 100 moved partitions.
    pub partitions: Vec<GuardMovedPartition>,
    /// Moved partitions left out of `partitions`.
    pub partitions_not_listed: u64,
    /// Connectors whose offsets moved, or that are gone.
    pub connectors: Vec<GuardMovedConnector>,
}

/// One moved partition: `old` is `null` when the snapshot had no offset, `new` when it was
/// deleted; `delta` is `new - old`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardMovedPartition {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub old: Option<i64>,
    pub new: Option<i64>,
    pub delta: Option<i64>,
    pub topic_recreated: bool,
}

/// One connector whose offsets moved.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardMovedConnector {
    pub name: String,
    /// `changed` or `removed`.
    pub change: String,
    pub offsets_moved: u64,
}

/// `config show --output json`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigShowDoc {
    pub schema_version: u32,
    pub file: Option<String>,
    pub context: Option<String>,
    pub context_source: Option<SourceDoc>,
    pub settings: Vec<SettingDoc>,
}

/// One effective setting; secrets are redacted.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingDoc {
    pub setting: String,
    pub value: String,
    pub source: SourceDoc,
}

/// Where a setting came from.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SourceDoc {
    Flag,
    Env { variable: String },
    Context { name: String },
    Default,
}

/// `config list-contexts --output json`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigContextsDoc {
    pub schema_version: u32,
    pub file: String,
    pub current_context: Option<String>,
    pub contexts: Vec<String>,
}

/// `restore --output json`: a dry run, an outcome, or a failure before the apply. Only the
/// fields every restore document has are fixed here; the plan and the outcome are described by
/// the restore's own types and versioned with the plan file's `format_version`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RestoreDoc {
    pub schema_version: u32,
    pub status: RestoreStatus,
    /// The process exit code this outcome maps to (see `--help`).
    pub exit_code: i32,
    #[serde(flatten)]
    pub rest: BTreeMap<String, Value>,
}

/// `reset --output json`: as a restore's document, with `reset` (the scenario in words),
/// `pre_reset_snapshot` and `warnings`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResetDoc {
    pub schema_version: u32,
    pub status: RestoreStatus,
    /// The process exit code this outcome maps to (see `--help`).
    pub exit_code: i32,
    #[serde(flatten)]
    pub rest: BTreeMap<String, Value>,
}

/// What a restore did.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreStatus {
    /// Without --execute: the plan only.
    DryRun,
    /// Every offset was applied and read back as planned.
    Applied,
    /// Nothing needed to change.
    NothingToChange,
    /// Stopped before any offset changed.
    NotApplied,
    /// Stopped after some offsets may have changed; the undo snapshot restores them.
    PartiallyApplied,
}

/// `diff --output json`: the two sides, the partitions shown, the connectors, and totals.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffDoc {
    pub schema_version: u32,
    /// The old side: a snapshot (`snapshot`, `created_at`, `kind`), or the committed offsets
    /// at an instant (`at`, its base `snapshot`, `created_at`, `kind`, `segments`, `records`,
    /// `sources`, `absent`, `left_out`, as `show --at` has them).
    pub old: Open,
    /// The new side: a snapshot, an instant, or the live cluster (`live`, `cluster_id`,
    /// `read_at`).
    pub new: Open,
    /// One entry per partition listed (changed, added, removed; unchanged with --all).
    pub partitions: Vec<Open>,
    /// One entry per connector compared (none when a side is an instant: the commit log holds
    /// no connector config, state or source offsets).
    pub connectors: Vec<Open>,
    pub summary: DiffSummary,
}

/// The totals of a diff.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffSummary {
    /// Partitions counted by what happened to them, and records moved.
    pub partitions: Open,
    pub connectors_changed: u64,
    /// Anything differs (what `--exit-code` reports).
    pub differs: bool,
}

/// `prune --output json`: the plan, and with --execute what was deleted.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PruneDoc {
    pub schema_version: u32,
    pub store: String,
    pub executed: bool,
    /// Every snapshot with keep or remove and the rules that kept it.
    pub plan: Open,
    /// With --execute: the snapshots deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<Vec<Value>>,
    /// With --execute: the snapshots that could not be deleted completely.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<Value>>,
    /// The commit-log archive's plan with --keep-log (`null` without it): the window and its
    /// base, each partition's segments to remove, orphan data files, apply records.
    #[serde(default)]
    pub log: Option<Open>,
    /// With --execute and --keep-log: what was deleted of the archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_deleted: Option<Open>,
    /// The plan of the archive of Connect's offsets topic with --keep-log, when the store
    /// holds one (`null` otherwise); the same form as `log`.
    #[serde(default)]
    pub connect_log: Option<Open>,
    /// With --execute: what was deleted of that archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_log_deleted: Option<Open>,
}

/// `import --output json`: the snapshot of kind import written.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportDoc {
    pub schema_version: u32,
    pub id: String,
    /// Always `import`.
    pub kind: String,
    pub store: String,
    pub created_at: DateTime<Utc>,
    pub cluster_id: String,
    pub summary: Open,
    pub warnings: Vec<String>,
}

/// `expiring --output json`: the Empty groups near offset expiry, and the snapshot of them.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpiringDoc {
    pub schema_version: u32,
    pub store: String,
    /// The brokers' `offsets.retention.minutes`, in seconds (the shortest if they disagree).
    pub retention_seconds: u64,
    pub margin_seconds: u64,
    pub checked_at: DateTime<Utc>,
    /// Empty groups of the selection checked.
    pub checked: u64,
    /// The groups near expiry, the first to expire first.
    pub groups: Vec<ExpiringGroupDoc>,
    /// The snapshot of those groups (tagged `expiry-guard=true`); `null` when none was taken.
    pub snapshot_id: Option<String>,
    pub warnings: Vec<String>,
}

/// One group near expiry.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpiringGroupDoc {
    pub group: String,
    pub state: String,
    pub group_type: String,
    /// Partitions with a committed offset.
    pub partitions: u64,
    /// The newest commit time of its offsets.
    pub newest_commit: DateTime<Utc>,
    /// When the broker removes its first offset.
    pub expires_at: DateTime<Utc>,
    /// What `expires_at` counts from: `empty-since`, `commit-time` or `expire-timestamp`.
    pub basis: String,
    /// The command that brings its offsets back after they expired.
    pub restore_hint: String,
}

/// `audit --output json`: the events listed, oldest first, each as stored (CloudEvents 1.0,
/// structured JSON); an opened marker without its event appears with outcome `unfinished`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditDoc {
    pub schema_version: u32,
    /// The store URL read.
    pub store: String,
    pub events: Vec<crate::audit::Event>,
}

/// Every schema, by file name under `docs/schema/`.
pub fn schemas() -> Vec<(&'static str, Value)> {
    fn one<T: JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialize")
    }
    vec![
        ("snapshot.schema.json", one::<SnapshotDoc>()),
        ("list.schema.json", one::<ListDoc>()),
        ("show.schema.json", one::<ShowDoc>()),
        ("verify.schema.json", one::<VerifyDoc>()),
        ("keygen.schema.json", one::<KeygenDoc>()),
        ("approve.schema.json", one::<ApproveDoc>()),
        ("restore.schema.json", one::<RestoreDoc>()),
        ("reset.schema.json", one::<ResetDoc>()),
        ("diff.schema.json", one::<DiffDoc>()),
        ("prune.schema.json", one::<PruneDoc>()),
        ("import.schema.json", one::<ImportDoc>()),
        ("guard.schema.json", one::<GuardDoc>()),
        ("expiring.schema.json", one::<ExpiringDoc>()),
        ("audit.schema.json", one::<AuditDoc>()),
        ("config-show.schema.json", one::<ConfigShowDoc>()),
        (
            "config-list-contexts.schema.json",
            one::<ConfigContextsDoc>(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_get_schema_version_first_and_other_values_stay() {
        let v = versioned(&json!({"id": "x"}));
        assert_eq!(
            v.as_object().unwrap().keys().next().unwrap(),
            "schema_version"
        );
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(
            versioned(&json!({"schema_version": 7}))["schema_version"],
            7
        );
        assert_eq!(versioned(&json!([1])), json!([1]));
    }

    /// The schemas under docs/schema/ are the ones the types generate. To update them after
    /// changing a type: `OV_WRITE_SCHEMAS=1 cargo test --lib schema`.
    #[test]
    fn published_schemas_match_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
        let write = std::env::var_os("OV_WRITE_SCHEMAS").is_some();
        for (name, schema) in schemas() {
            let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            let path = dir.join(name);
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            let published = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                published == text,
                "{} is not what the types generate; run OV_WRITE_SCHEMAS=1 cargo test --lib schema",
                path.display()
            );
        }
    }
}
