//! Restore: choose a snapshot, verify it, guard the cluster, plan against the live state, and
//! (with `execute`) stop connectors, take an undo snapshot, apply, verify, and resume.

mod apply;
pub mod approval;
pub mod at;
mod connector_plan;
mod connectors;
pub mod options;
pub mod outcome;
pub mod plan;
pub mod reset;
pub mod review;
mod secrets;
pub mod targets;
pub mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub use apply::execute;
pub use outcome::{Outcome, PartitionCheck, Phase, Status};
pub use plan::{OutOfRange, Plan, PlanOptions};

use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::KafkaClient;
pub use crate::snapshot::choose::{choose, Choice, Chosen, Eligible};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::repo::{self, Loaded};
use crate::store::Store;

/// Everything a restore is asked to do.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    pub choice: Choice,
    /// Which snapshots `Latest` and `Before` may pick (kinds, partial).
    pub eligible: Eligible,
    pub groups: Vec<String>,
    pub connectors: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub plan: PlanOptions,
    pub allow_other_cluster: bool,
    pub by_timestamp: bool,
    /// Take an undo snapshot before changing anything.
    pub undo: bool,
    /// Bound on waiting for connectors to stop and groups to empty.
    pub wait_timeout: Duration,
    /// After the read-back, wait this long and read again to catch offsets that move
    /// (zero: no second read).
    pub settle: Duration,
    /// How many groups' commits are in flight at once.
    pub commit_concurrency: usize,
    /// A reviewed plan to apply (`--from-plan`).
    pub reviewed: Option<review::PlanFile>,
    /// Config values that replace the snapshot's when a connector is created again
    /// (`--connector-config-override`; redacted secrets must be among them).
    pub connector_config: BTreeMap<String, String>,
    /// The kind and tags of the snapshot taken before the first change (`undo` for a restore,
    /// `pre-reset` for a reset).
    pub undo_kind: crate::snapshot::SnapshotKind,
    pub undo_tags: BTreeMap<String, String>,
    /// The targets were computed from the committed offsets (`reset --shift-by`,
    /// `--to-current`): an offset that moved after the plan was made makes its target stale,
    /// so it stops the execution instead of being reported.
    pub relative_targets: bool,
    /// The identity file that opens the snapshot's encrypted connector secrets
    /// (`--identity`), used when connectors are created again.
    pub identities: Option<crate::snapshot::secrets::Identities>,
}

/// A chosen and verified snapshot and the part of it to restore.
#[derive(Debug, Clone)]
pub struct Verified {
    pub chosen: Chosen,
    pub loaded: Loaded,
    pub groups: Vec<GroupSnapshot>,
    pub connectors: Vec<ConnectorSnapshot>,
}

/// A verified snapshot, the part of it to restore, and the plan against the live state.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub chosen: Chosen,
    pub loaded: Loaded,
    /// Why this snapshot was chosen, in words.
    pub chosen_because: String,
    pub targets: Targets,
}

/// What an execution applies: the target offsets (from a snapshot, or computed by `reset`), the
/// plan computed from them against the live state, and where each connector lives.
#[derive(Debug, Clone)]
pub struct Targets {
    /// Current offsets that moved since the reviewed plan (`--from-plan`).
    pub moved: Vec<review::Moved>,
    pub groups: Vec<GroupSnapshot>,
    pub connectors: Vec<ConnectorSnapshot>,
    pub plan: Plan,
    /// Where each connector of the plan lives now.
    pub connect_by_name: BTreeMap<String, ConnectClient>,
    /// The file format of the undo snapshot.
    pub undo_format: crate::snapshot::Format,
}

/// The groups and connectors of the snapshot that the request selects.
pub fn select(
    content: &crate::snapshot::SnapshotContent,
    req: &RestoreRequest,
) -> Result<(Vec<GroupSnapshot>, Vec<ConnectorSnapshot>)> {
    let everything = req.groups.is_empty() && req.connectors.is_empty();
    let mut connectors = Vec::new();
    for name in &req.connectors {
        let c = content
            .connectors
            .iter()
            .find(|c| &c.name == name)
            .ok_or_else(|| Error::NotFound {
                what: "connector in the snapshot",
                name: name.clone(),
                hint: String::new(),
            })?;
        connectors.push(c.clone());
    }
    if everything && req.topics.is_empty() {
        connectors = content.connectors.clone();
    }
    let mut wanted: BTreeSet<&str> = req.groups.iter().map(String::as_str).collect();
    wanted.extend(connectors.iter().filter_map(|c| c.group_id.as_deref()));
    for g in &req.groups {
        if !content.groups.iter().any(|s| &s.group_id == g) {
            return Err(Error::NotFound {
                what: "consumer group in the snapshot",
                name: g.clone(),
                hint: String::new(),
            });
        }
    }
    let groups: Vec<GroupSnapshot> = content
        .groups
        .iter()
        .filter(|g| everything || wanted.contains(g.group_id.as_str()))
        .map(|g| {
            let mut g = g.clone();
            g.partitions.retain(|p| {
                (req.topics.is_empty() || req.topics.contains(&p.topic))
                    && (req.partitions.is_empty() || req.partitions.contains(&p.partition))
            });
            g
        })
        .collect();
    if groups.iter().all(|g| g.partitions.is_empty()) && connectors.is_empty() {
        return Err(Error::usage(
            "the selection matches nothing in the snapshot: check --group, --connector, --topic and --partition against `offset-vault show`",
        ));
    }
    Ok((groups, connectors))
}

/// Chooses and verifies the snapshot and selects what to restore from it. Reads only the store:
/// a missing or corrupt snapshot fails before anything contacts the cluster.
pub async fn open(store: &Store, req: &RestoreRequest) -> Result<Verified> {
    let mut eligible = req.eligible.clone();
    eligible.groups = req.groups.clone();
    eligible.connectors = req.connectors.clone();
    let chosen = choose(store, &req.choice, &eligible).await?;
    let loaded = repo::load_verified(store, &chosen.manifest).await?;
    let (groups, mut connectors) = select(&loaded.content, req)?;
    secrets::unseal(store, &loaded, &mut connectors, req).await?;
    Ok(Verified {
        chosen,
        loaded,
        groups,
        connectors,
    })
}

/// Guards the cluster and plans against the live state. Changes nothing. With a reviewed plan
/// (`--from-plan`), the plan must be for this cluster and the fresh plan must match it.
pub async fn prepare(
    verified: Verified,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    req: &RestoreRequest,
) -> Result<Prepared> {
    let Verified {
        chosen,
        loaded,
        groups,
        connectors,
    } = verified;
    if loaded.manifest.meta.cluster_id != kafka.cluster_id() && !req.allow_other_cluster {
        return Err(Error::OtherCluster {
            id: loaded.manifest.meta.id.clone(),
            snapshot_cluster: loaded.manifest.meta.cluster_id.clone(),
            live_cluster: kafka.cluster_id().to_string(),
            bootstrap: kafka.bootstrap().to_string(),
        });
    }
    if let Some(file) = &req.reviewed {
        if file.body.cluster_id != kafka.cluster_id() {
            return Err(Error::OtherCluster {
                id: format!("plan for {}", file.body.snapshot_id),
                snapshot_cluster: file.body.cluster_id.clone(),
                live_cluster: kafka.cluster_id().to_string(),
                bootstrap: kafka.bootstrap().to_string(),
            });
        }
    }
    let (view, by_name) =
        crate::live::read(kafka, clients, &groups, &connectors, req.by_timestamp).await?;
    let mut options = req.plan.clone();
    if let Some(r) = options.recreate.as_mut() {
        r.encrypted_secrets = loaded
            .manifest
            .encrypted_secrets
            .as_ref()
            .map(|s| s.recipients.len());
    }
    let mut plan = plan::build(
        &loaded.manifest.meta.id,
        &groups,
        &connectors,
        &view,
        &options,
    );
    let mut moved = Vec::new();
    if let Some(file) = &req.reviewed {
        let cmp = review::compare(&file.body.plan, &plan);
        if !cmp.is_same() {
            return Err(Error::PlanChanged {
                changes: cmp.changes,
            });
        }
        moved = cmp.moved;
        // The reviewed targets are applied; the fresh plan shows the current values.
        plan.snapshot_id = file.body.plan.snapshot_id.clone();
    }
    Ok(Prepared {
        chosen_because: chosen.because.clone(),
        chosen,
        targets: Targets {
            groups,
            connectors,
            plan,
            moved,
            connect_by_name: by_name,
            undo_format: loaded.manifest.format,
        },
        loaded,
    })
}
