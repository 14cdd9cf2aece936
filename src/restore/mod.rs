//! Restore: choose a snapshot, verify it, guard the cluster, plan against the live state, and
//! (with `execute`) stop connectors, take an undo snapshot, apply, verify, and resume.

mod apply;
mod connector_plan;
pub mod plan;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;


pub use apply::{execute, Outcome, PartitionCheck};
pub use plan::{OutOfRange, Plan, PlanOptions};

use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, OffsetQuery, TopicPartition};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, Member};
use crate::snapshot::repo::{self, Loaded};
pub use crate::snapshot::choose::{choose, Choice, Chosen, Eligible};
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
}

/// A verified snapshot, the part of it to restore, and the plan against the live state.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub loaded: Loaded,
    /// Why this snapshot was chosen, in words.
    pub chosen_because: String,
    pub groups: Vec<GroupSnapshot>,
    pub connectors: Vec<ConnectorSnapshot>,
    pub plan: Plan,
    /// Where each connector of the plan lives now.
    pub connect_by_name: BTreeMap<String, ConnectClient>,
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

/// Chooses, verifies, guards and plans. Changes nothing.
pub async fn prepare(
    store: &Store,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    req: &RestoreRequest,
) -> Result<Prepared> {
    let mut eligible = req.eligible.clone();
    eligible.groups = req.groups.clone();
    eligible.connectors = req.connectors.clone();
    let chosen = choose(store, &req.choice, &eligible).await?;
    let chosen_because = chosen.because;
    let loaded = repo::load_verified(store, &chosen.manifest).await?;
    if loaded.manifest.meta.cluster_id != kafka.cluster_id() && !req.allow_other_cluster {
        return Err(Error::OtherCluster {
            id: loaded.manifest.meta.id.clone(),
            snapshot_cluster: loaded.manifest.meta.cluster_id.clone(),
            live_cluster: kafka.cluster_id().to_string(),
            bootstrap: kafka.bootstrap().to_string(),
        });
    }
    let (groups, connectors) = select(&loaded.content, req)?;
    let (view, by_name) = crate::live::read(kafka, clients, &groups, &connectors, req.by_timestamp).await?;
    let plan = plan::build(
        &loaded.manifest.meta.id,
        &groups,
        &connectors,
        &view,
        &req.plan,
    );
    Ok(Prepared {
        loaded,
        chosen_because,
        groups,
        connectors,
        plan,
        connect_by_name: by_name,
    })
}
