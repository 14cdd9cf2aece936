//! Retention: the policy with restic's rules ([`policy`], pure), the prune plan ([`plan`],
//! pure), and applying a plan to a store (here).
//!
//! Deleting a snapshot removes its manifest first and only then its data files. A prune that is
//! interrupted therefore leaves, at worst, snapshots without a manifest: incomplete, never
//! offered for restore, and removed by a later prune once older than the grace period. A
//! manifest whose deletion failed keeps its files. A group of which the policy keeps nothing is
//! refused whole (see [`plan::refusal`]) unless emptying it was allowed.

pub mod plan;
pub mod policy;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

pub use plan::{build, parse_group_by, refusal, GroupBy, LeftoverAction, PlannedGroup, PrunePlan};
pub use policy::{Count, Policy, Span};

use crate::error::Result;
use crate::snapshot::manifest::MANIFEST_FILE;
use crate::snapshot::repo::{self, DayRange, Listed};
use crate::store::Store;

/// What `prune` is asked to do.
#[derive(Debug, Clone)]
pub struct PruneOptions {
    pub policy: Policy,
    pub group_by: Vec<GroupBy>,
    /// Incomplete snapshots older than this are removed.
    pub incomplete_older_than: Duration,
    /// Let the policy remove every snapshot of a group (refused otherwise).
    pub allow_empty_group: bool,
}

/// A plan with the store listing it was computed from (to know each snapshot's files).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub plan: PrunePlan,
    files: BTreeMap<String, Vec<String>>,
}

/// Lists the store and plans. Changes nothing.
pub async fn prepare(store: &Store, opts: &PruneOptions, now: DateTime<Utc>) -> Result<Prepared> {
    let listed: Vec<Listed> = repo::list(store, DayRange::default()).await?;
    let plan = build(
        &listed,
        &opts.policy,
        &opts.group_by,
        opts.incomplete_older_than,
        opts.allow_empty_group,
        now,
    )?;
    let files = listed
        .into_iter()
        .map(|l| (l.id, l.files.into_iter().map(|f| f.key).collect()))
        .collect();
    Ok(Prepared { plan, files })
}

/// One snapshot that could not be deleted completely.
#[derive(Debug, Clone, Serialize)]
pub struct DeleteFailure {
    pub id: String,
    pub error: String,
}

/// What an executed prune did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Pruned {
    pub deleted: Vec<String>,
    pub failed: Vec<DeleteFailure>,
}

/// Deletes what the plan removes: per snapshot, the manifest first, then the other files.
pub async fn execute(store: &Store, prepared: &Prepared) -> Pruned {
    let mut out = Pruned::default();
    let ids = prepared.plan.to_delete();
    crate::progress::stage("snapshots deleted", ids.len() as u64);
    for id in ids {
        crate::progress::advance(1);
        let keys = prepared.files.get(id).cloned().unwrap_or_default();
        match delete_snapshot(store, &keys).await {
            Ok(()) => {
                tracing::info!("deleted snapshot {id}");
                out.deleted.push(id.to_string());
            }
            Err(e) => out.failed.push(DeleteFailure {
                id: id.to_string(),
                error: e.to_string(),
            }),
        }
    }
    crate::progress::finish();
    out
}

/// Deletes one snapshot's objects, the manifest first. Stops at the first failure, so no data
/// file goes while its manifest is still there.
async fn delete_snapshot(store: &Store, keys: &[String]) -> Result<()> {
    let is_manifest = |k: &String| k.rsplit('/').next() == Some(MANIFEST_FILE);
    for key in keys.iter().filter(|k| is_manifest(k)) {
        store.delete(key).await?;
    }
    // A prune killed here leaves a snapshot without manifest but with its files.
    crate::failpoint::hit("prune-after-manifest");
    for key in keys.iter().filter(|k| !is_manifest(k)) {
        store.delete(key).await?;
    }
    Ok(())
}
