//! Retention: the policy with restic's rules ([`policy`], pure), the prune plan ([`plan`],
//! pure), and applying a plan to a store (here).
//!
//! Deleting a snapshot removes its manifest first and only then its data files. A prune that is
//! interrupted therefore leaves, at worst, snapshots without a manifest: incomplete, never
//! offered for restore, and removed by a later prune once older than the grace period. A
//! manifest whose deletion failed keeps its files. A group of which the policy keeps nothing is
//! refused whole (see [`policy::refusal`]) unless emptying it was allowed.
//!
//! With `--keep-log`, the commit-log archive is pruned too ([`log`]): segments the kept window
//! does not need, the index manifest first and then the data file (an interruption leaves an
//! orphan data file, which `verify` calls harmless and the next prune removes), old orphans,
//! and the apply records that can explain no kept commit. Without it, no segment is touched.

pub mod log;
pub mod plan;
pub mod policy;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

pub use plan::{build, parse_group_by, GroupBy, LeftoverAction, PlannedGroup, PrunePlan};
pub use policy::{refusal, Count, Policy, Span};

use crate::error::Result;
use crate::log::applies::{ApplyRecord, APPLIES};
use crate::log::archive::Lane;
use crate::snapshot::manifest::MANIFEST_FILE;
use crate::snapshot::model::SnapshotKind;
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
    /// `--keep-log`: the window of the commit-log archive that must stay reconstructable.
    /// `None`: the archive is not touched.
    pub keep_log: Option<KeepLog>,
}

/// How much of the commit-log archive `prune` keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeepLog {
    /// The flag's text, for the plan.
    pub text: String,
    /// Every instant of the last `window` stays reconstructable.
    pub window: Duration,
    /// And this much of the log before the window's base (`--keep-log-margin`; `--at` replays
    /// [`crate::log::at::BEFORE_BASE_MS`] before its base).
    pub margin: Duration,
}

/// A plan with the store listing it was computed from (to know each snapshot's files).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub plan: PrunePlan,
    files: BTreeMap<String, Vec<String>>,
    /// The archive's plan, with `--keep-log`.
    pub log: Option<log::LogPlan>,
    /// The plan of the archive of Connect's offsets topic, with `--keep-log` when the store
    /// holds one: the same window, its base taken per source connector.
    pub connect_log: Option<log::LogPlan>,
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
    let (mut log, mut connect_log) = (None, None);
    if let Some(keep) = &opts.keep_log {
        let lane = |lane, kept: &[log::BaseCandidate]| {
            let window = log::window_base(kept, now - keep.window, keep.margin);
            prepare_log(
                store,
                lane,
                &keep.text,
                window,
                opts.incomplete_older_than,
                now,
            )
        };
        log = Some(lane(Lane::Offsets, &kept_bases(&plan, &listed, Lane::Offsets)).await?);
        if !crate::log::archive::manifests_in(store, Lane::Connect)
            .await?
            .is_empty()
        {
            let kept = kept_bases(&plan, &listed, Lane::Connect);
            connect_log = Some(lane(Lane::Connect, &kept).await?);
        }
    }
    let files = listed
        .into_iter()
        .map(|l| (l.id, l.files.into_iter().map(|f| f.key).collect()))
        .collect();
    Ok(Prepared {
        plan,
        files,
        log,
        connect_log,
    })
}

/// The complete snapshot-kind snapshots the plan keeps (those of a refused group included):
/// the bases `--at` may start from after the prune. For the commit log a base is taken per
/// group; for Connect's offsets topic per connector (`--at` starts a source connector from the
/// newest snapshot that holds it).
fn kept_bases(plan: &PrunePlan, listed: &[Listed], lane: Lane) -> Vec<log::BaseCandidate> {
    let deleted: std::collections::BTreeSet<&str> = plan.to_delete().into_iter().collect();
    listed
        .iter()
        .filter_map(|l| l.manifest.as_ref())
        .filter(|m| {
            m.meta.kind == SnapshotKind::Snapshot
                && !m.meta.is_partial()
                && !deleted.contains(m.meta.id.as_str())
        })
        .map(|m| log::BaseCandidate {
            id: m.meta.id.clone(),
            created_at: m.meta.created_at,
            group_ids: match lane {
                Lane::Offsets => m.summary.group_ids.clone(),
                Lane::Connect => m.summary.connector_names.clone(),
            },
            holds: match lane {
                Lane::Offsets => "group",
                Lane::Connect => "connector",
            },
        })
        .collect()
}

/// Lists one lane of the archive (manifests, data files, and for the commit log the apply
/// records) and plans its prune. An unreadable manifest stops the prune of the lane: a chain is
/// never cut where it cannot be read.
async fn prepare_log(
    store: &Store,
    lane: Lane,
    text: &str,
    window: log::WindowBase,
    grace: Duration,
    now: DateTime<Utc>,
) -> Result<log::LogPlan> {
    let manifests = crate::log::archive::manifests_in(store, lane).await?;
    let named: std::collections::BTreeSet<&str> =
        manifests.iter().map(|(_, m)| m.file.as_str()).collect();
    let data_prefix = match lane {
        Lane::Offsets => crate::log::verify::DATA_PREFIX,
        Lane::Connect => crate::log::verify::CONNECT_DATA_PREFIX,
    };
    let mut orphans = Vec::new();
    for o in store.list(lane.root()).await? {
        if !o.key.starts_with(data_prefix) || named.contains(o.key.as_str()) {
            continue;
        }
        let sealed = match store.get(&o.key).await {
            Ok(bytes) => crate::log::segment::decode(&o.key, bytes)
                .ok()
                .map(|(m, _)| m.sealed_at),
            Err(_) => None,
        };
        orphans.push((o.key, sealed));
    }
    let mut records = Vec::new();
    // Apply records explain commits of the commit log only.
    let applies = match lane {
        Lane::Offsets => store.list(APPLIES).await?,
        Lane::Connect => Vec::new(),
    };
    for o in applies {
        let bytes = store.get(&o.key).await?;
        let finished_at = ApplyRecord::from_bytes(&o.key, &bytes)
            .ok()
            .map(|r| r.body.finished_at);
        records.push(log::RecordTime {
            key: o.key,
            finished_at,
        });
    }
    Ok(log::build(
        text, window, &manifests, &orphans, &records, grace, now,
    ))
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
    /// With `--keep-log`: what was deleted of the archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<LogPruned>,
    /// And of the archive of Connect's offsets topic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_log: Option<LogPruned>,
}

impl Pruned {
    /// What could not be deleted of either lane of the archive.
    pub fn log_failures(&self) -> Vec<&DeleteFailure> {
        [&self.log, &self.connect_log]
            .into_iter()
            .flatten()
            .flat_map(|l| &l.failed)
            .collect()
    }
}

/// What an executed prune deleted of the commit-log archive.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogPruned {
    /// Index manifests of the segments deleted (with their data files).
    pub segments: Vec<String>,
    pub orphans: Vec<String>,
    pub apply_records: Vec<String>,
    /// Keys that could not be deleted; a segment's chain stops there.
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
    if let Some(plan) = &prepared.log {
        out.log = Some(execute_log(store, plan).await);
    }
    if let Some(plan) = &prepared.connect_log {
        out.connect_log = Some(execute_log(store, plan).await);
    }
    out
}

/// Deletes what the archive's plan removes: per chain, oldest first, each segment's index
/// manifest and then its data file; a failure stops that chain, so it is only ever shortened
/// from its start. Then the old orphans and apply records.
async fn execute_log(store: &Store, plan: &log::LogPlan) -> LogPruned {
    let mut out = LogPruned::default();
    let fail = |key: &str, e: crate::error::Error| DeleteFailure {
        id: key.to_string(),
        error: e.to_string(),
    };
    crate::progress::stage("log segments deleted", plan.summary.remove_segments as u64);
    for chain in &plan.chains {
        for s in &chain.remove {
            crate::progress::advance(1);
            if let Err(e) = store.delete(&s.manifest).await {
                out.failed.push(fail(&s.manifest, e));
                break;
            }
            // A prune killed here leaves the data file as an orphan: never read, removed later.
            crate::failpoint::hit("prune-log-after-manifest");
            // The manifest's signature, if it was signed; nothing reads it once the manifest
            // is gone.
            let sig = format!("{}{}", s.manifest, crate::sign::SIG_SUFFIX);
            if let Err(e) = store.delete(&sig).await {
                out.failed.push(fail(&sig, e));
            }
            if !s.file.is_empty() {
                if let Err(e) = store.delete(&s.file).await {
                    out.failed.push(fail(&s.file, e));
                }
            }
            out.segments.push(s.manifest.clone());
        }
    }
    crate::progress::finish();
    for o in plan
        .orphans
        .iter()
        .filter(|o| o.action == log::OrphanAction::Remove)
    {
        match store.delete(&o.key).await {
            Ok(()) => out.orphans.push(o.key.clone()),
            Err(e) => out.failed.push(fail(&o.key, e)),
        }
    }
    for key in &plan.apply_records {
        match store.delete(key).await {
            Ok(()) => out.apply_records.push(key.clone()),
            Err(e) => out.failed.push(fail(key, e)),
        }
        let sig = format!("{key}{}", crate::sign::SIG_SUFFIX);
        if let Err(e) = store.delete(&sig).await {
            out.failed.push(fail(&sig, e));
        }
    }
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
