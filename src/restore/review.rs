//! Reviewed plans: the plan file (`--plan-file` writes it, `--from-plan` applies it) and the
//! comparison of a reviewed plan with one computed later.
//!
//! A plan file carries the snapshot id, the cluster it was made for, every target and the live
//! values they were computed from, and a SHA-256 over all of that. Applying it re-checks the
//! checksum, verifies the snapshot again, and recomputes the plan: if a target, the set of
//! partitions or a range check changed, nothing is applied. Current offsets that moved (a
//! consumer or connector committed in between) are allowed and reported.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::plan::{Action, Plan};
use crate::error::{Error, Result};
use crate::snapshot::manifest::sha256_hex;

/// The kind marker of a plan file.
pub const PLAN_KIND: &str = "offset-vault-restore-plan";
/// Version of the plan file format (`MAJOR.MINOR`); readers accept minor versions of major 1.
pub const PLAN_FORMAT_VERSION: &str = "1.2";

/// The request options a plan was made with; applying it uses the same ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRequest {
    pub groups: Vec<String>,
    pub connectors: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub on_out_of_range: super::options::OutOfRange,
    pub skip_missing: bool,
    #[serde(default)]
    pub allow_recreated_topics: bool,
    #[serde(default)]
    pub recreate_connectors: bool,
    #[serde(default)]
    pub leave_stopped: bool,
    pub stop_connectors: bool,
    pub by_timestamp: bool,
    pub allow_other_cluster: bool,
    pub allow_partial: bool,
    /// How offsets are carried onto another cluster (absent before they could be).
    #[serde(
        default,
        skip_serializing_if = "crate::mirror::MirrorOptions::is_empty"
    )]
    pub mirror: crate::mirror::MirrorOptions,
    /// `restore --at TIME` (format 1.2): the targets are the offsets at this instant, replayed
    /// onto the base `snapshot_id` names, and `--from-plan` replays them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
}

/// The body of a plan file: everything the checksum covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanBody {
    pub kind: String,
    pub format_version: String,
    pub created_at: DateTime<Utc>,
    pub tool_version: String,
    /// The Kafka cluster the plan was computed against.
    pub cluster_id: String,
    pub bootstrap_servers: String,
    pub snapshot_id: String,
    pub request: PlanRequest,
    pub plan: Plan,
    /// A reset's plan (format 1.1): what it was asked to do, so `reset --from-plan` can plan
    /// again from it. `None` for a restore's plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<super::targets::ResetSpec>,
}

impl PlanBody {
    /// The body of a plan made now on the cluster `cluster_id` (reached at `bootstrap`).
    pub fn made_now(
        cluster_id: &str,
        bootstrap: &str,
        request: PlanRequest,
        plan: Plan,
        reset: Option<super::targets::ResetSpec>,
    ) -> Self {
        PlanBody {
            kind: PLAN_KIND.into(),
            format_version: PLAN_FORMAT_VERSION.into(),
            created_at: Utc::now(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            cluster_id: cluster_id.into(),
            bootstrap_servers: bootstrap.into(),
            snapshot_id: plan.snapshot_id.clone(),
            request,
            plan,
            reset,
        }
    }
}

/// A plan file: the body and its SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    #[serde(flatten)]
    pub body: PlanBody,
    /// SHA-256 of the compact JSON of the body.
    pub sha256: String,
    /// The author's signature and the approvals, each over `sha256` (so over the body); not
    /// covered by the checksum, so approvals can be added to a sealed plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<crate::sign::Signature>,
}

impl PlanFile {
    /// Seals a body with its checksum.
    pub fn seal(body: PlanBody) -> Self {
        let sha256 = body_digest(&body);
        PlanFile {
            body,
            sha256,
            signatures: Vec::new(),
        }
    }

    /// Writes the plan file for `--plan-file`, signed by the author's key when one is set.
    pub fn write(mut self, path: &std::path::Path, keys: &crate::sign::Keys) -> Result<()> {
        if let Some(signer) = keys.signer() {
            self.signatures
                .push(signer.sign(crate::sign::Purpose::Plan, self.sha256.as_bytes()));
        }
        std::fs::write(path, self.to_bytes())
            .map_err(|e| Error::usage(format!("--plan-file {}: {e}", path.display())))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a plan file always serializes");
        out.push(b'\n');
        out
    }

    /// Reads and checks a plan file: kind, version, and checksum. Any problem is an error that
    /// says what to do; nothing of the file is used unless all of it holds.
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Self> {
        #[derive(Deserialize)]
        struct Head {
            kind: Option<String>,
            format_version: Option<String>,
        }
        let head: Head = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
            path: path.to_string(),
            detail: format!("not a plan file (write one with restore --plan-file): {e}"),
        })?;
        if head.kind.as_deref() != Some(PLAN_KIND) {
            return Err(Error::Decode {
                path: path.to_string(),
                detail: format!(
                    "not a plan file: kind is {:?}, expected {PLAN_KIND:?}",
                    head.kind.unwrap_or_default()
                ),
            });
        }
        let version = head.format_version.unwrap_or_default();
        if version.split('.').next() != Some("1") {
            return Err(Error::UnsupportedFormat {
                path: path.to_string(),
                found: version,
                supported: "major version 1".into(),
            });
        }
        let file: PlanFile = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
            path: path.to_string(),
            detail: e.to_string(),
        })?;
        let actual = body_digest(&file.body);
        file.check(path, &actual)?;
        Ok(file)
    }

    /// Checks the file's checksum against `actual` (the SHA-256 of its body as read) and that
    /// its plan is for the snapshot it names.
    pub(super) fn check(&self, path: &str, actual: &str) -> Result<()> {
        if actual != self.sha256 {
            return Err(Error::Integrity {
                id: format!("plan file {path}"),
                problems: vec![format!(
                    "its content has SHA-256 {actual}, but the file says {}: it was changed after it was written; make a new plan with --plan-file",
                    self.sha256
                )],
            });
        }
        if self.body.plan.snapshot_id != self.body.snapshot_id {
            return Err(Error::Integrity {
                id: format!("plan file {path}"),
                problems: vec!["its plan is for another snapshot than the file names".into()],
            });
        }
        Ok(())
    }

    /// A plan of the other command (`for_reset`: a reset is expected) is refused with the
    /// command that applies it.
    pub(super) fn check_command(&self, path: &std::path::Path, for_reset: bool) -> Result<()> {
        let (is, other) = if self.body.reset.is_some() {
            ("reset", "restore")
        } else {
            ("restore", "reset")
        };
        if self.body.reset.is_some() != for_reset {
            return Err(Error::usage(format!(
                "{} is the plan of a {is}, not of a {other}: apply it with offset-vault {is} --from-plan {} --execute",
                path.display(),
                path.display()
            )));
        }
        Ok(())
    }
}

impl PlanFile {
    /// Reads a plan file of either command from disk (checked as [`PlanFile::from_bytes`] does).
    pub fn read_any(path: &std::path::Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        PlanFile::from_bytes(&path.display().to_string(), &bytes)
    }

    /// Reads and checks a plan file from disk for `restore` (`for_reset` false) or `reset`: a
    /// plan of the other command is refused with the command that applies it.
    pub fn read(path: &std::path::Path, for_reset: bool) -> Result<Self> {
        let file = PlanFile::read_any(path)?;
        file.check_command(path, for_reset)?;
        Ok(file)
    }
}

fn body_digest(body: &PlanBody) -> String {
    sha256_hex(&serde_json::to_vec(body).expect("a plan body always serializes"))
}

/// A partition whose current offset moved between the review and now; allowed, and shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub reviewed: Option<i64>,
    pub now: Option<i64>,
}

/// The result of comparing a reviewed plan with a fresh one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// What changed in a way that stops the restore, one line each.
    pub changes: Vec<String>,
    /// Current offsets that moved.
    pub moved: Vec<Moved>,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.changes.is_empty()
    }
}

/// What a partition's action says for the comparison: a commit to the target (whether or not
/// the current offset already equals it), or the action itself.
fn class(a: Action) -> &'static str {
    match a {
        Action::Reset | Action::NoChange => "commit",
        Action::Clamped => "clamped",
        Action::OutOfRange => "out-of-range",
        Action::TopicMissing => "topic-missing",
        Action::PartitionMissing => "partition-missing",
        Action::Skipped => "skipped",
        Action::NotInSnapshot => "not-in-snapshot",
        Action::RangeUnknown => "range-unknown",
        Action::Recreated => "recreated",
        Action::Untranslated => "untranslated",
    }
}

type Key = (String, String, i32);

fn partitions(plan: &Plan) -> BTreeMap<Key, &super::plan::PartitionPlan> {
    plan.groups
        .iter()
        .flat_map(|g| {
            g.partitions
                .iter()
                .filter(|p| p.action != Action::NotInSnapshot)
                .map(move |p| ((g.group_id.clone(), p.topic.clone(), p.partition), p))
        })
        .collect()
}

/// Keeps on a fresh plan the notes of the reviewed one that planning again does not make (pure):
/// a reset's own notes (`--to-datetime` past the last record) stand before the plan's note of a
/// row or are the row's only note. Where the row's note is new, the fresh one stands.
pub fn carry_notes(reviewed: &Plan, fresh: &mut Plan) {
    let before = partitions(reviewed);
    for g in fresh.groups.iter_mut() {
        for p in g.partitions.iter_mut() {
            let key = (g.group_id.clone(), p.topic.clone(), p.partition);
            let Some(old) = before.get(&key).and_then(|r| r.note.as_deref()) else {
                continue;
            };
            let kept = match p.note.as_deref() {
                None => true,
                Some(now) => old != now && old.ends_with(&format!("; {now}")),
            };
            if kept && p.action != Action::NotInSnapshot {
                p.note = Some(old.to_string());
            }
        }
    }
}

fn show(key: &Key) -> String {
    format!("{} {}[{}]", key.0, key.1, key.2)
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "none".into())
}

/// Compares a reviewed plan with one computed now. Pure.
pub fn compare(reviewed: &Plan, now: &Plan) -> Comparison {
    let mut out = Comparison::default();
    if reviewed.snapshot_id != now.snapshot_id {
        out.changes.push(format!(
            "the plan was made from snapshot {}, now from {}",
            reviewed.snapshot_id, now.snapshot_id
        ));
    }
    let before = partitions(reviewed);
    let after = partitions(now);
    for (key, r) in &before {
        let Some(n) = after.get(key) else {
            out.changes
                .push(format!("{}: no longer in the plan", show(key)));
            continue;
        };
        if r.target != n.target {
            out.changes.push(format!(
                "{}: target was {}, is now {}",
                show(key),
                opt(r.target),
                opt(n.target)
            ));
        }
        if class(r.action) != class(n.action) {
            out.changes.push(format!(
                "{}: was {}, is now {}{}",
                show(key),
                class(r.action),
                class(n.action),
                n.note
                    .as_ref()
                    .map(|note| format!(" ({note})"))
                    .unwrap_or_default()
            ));
        }
        if r.current != n.current {
            out.moved.push(Moved {
                group_id: key.0.clone(),
                topic: key.1.clone(),
                partition: key.2,
                reviewed: r.current,
                now: n.current,
            });
        }
    }
    for key in after.keys().filter(|k| !before.contains_key(*k)) {
        out.changes.push(format!("{}: new in the plan", show(key)));
    }
    compare_connectors(reviewed, now, &mut out.changes);
    out
}

/// The moved offsets as changes, for targets computed from the committed offsets (`--shift-by`,
/// `--to-current`): a target relative to an offset that moved since is stale. Pure.
/// The partitions whose committed offset moved since the plan was made, as changes that stop
/// an execution with `--refuse-moved` (pure).
pub fn moved_since_review(moved: &[Moved]) -> Vec<String> {
    moved
        .iter()
        .map(|m| {
            format!(
                "{} {}[{}]: the committed offset moved from {} to {} after the plan was made (--refuse-moved); plan again and review the new plan",
                m.group_id,
                m.topic,
                m.partition,
                opt(m.reviewed),
                opt(m.now)
            )
        })
        .collect()
}

pub fn stale_relative_targets(moved: &[Moved]) -> Vec<String> {
    moved
        .iter()
        .map(|m| {
            format!(
                "{} {}[{}]: the committed offset moved from {} to {} after the plan was made, and the target was computed from it; plan again (the connector or consumer committed while it stopped)",
                m.group_id,
                m.topic,
                m.partition,
                opt(m.reviewed),
                opt(m.now)
            )
        })
        .collect()
}

fn compare_connectors(reviewed: &Plan, now: &Plan, changes: &mut Vec<String>) {
    let by_name = |p: &Plan| -> BTreeMap<String, super::plan::ConnectorPlan> {
        p.connectors
            .iter()
            .map(|c| (c.name.clone(), c.clone()))
            .collect()
    };
    let (before, after) = (by_name(reviewed), by_name(now));
    for (name, r) in &before {
        let Some(n) = after.get(name) else {
            changes.push(format!("connector {name}: no longer in the plan"));
            continue;
        };
        if r.method != n.method {
            changes.push(format!(
                "connector {name}: offsets were to be set via {}, now via {}",
                r.method, n.method
            ));
        }
        let targets = |c: &super::plan::ConnectorPlan| -> Vec<(String, String)> {
            let mut t: Vec<(String, String)> = c
                .offsets
                .iter()
                .map(|o| (o.partition.to_string(), o.target.to_string()))
                .collect();
            t.sort();
            t
        };
        if targets(r) != targets(n) {
            changes.push(format!("connector {name}: its target offsets changed"));
        }
    }
    for name in after.keys().filter(|k| !before.contains_key(*k)) {
        changes.push(format!("connector {name}: new in the plan"));
    }
}

#[cfg(test)]
#[path = "review_tests.rs"]
pub(crate) mod tests;
