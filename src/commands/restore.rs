//! `restore` as library calls: the request a reviewed plan file makes, the snapshot chosen and
//! verified (and replayed to an instant with `--at`), the plan made against the cluster, and
//! the plan file written. [`super::apply`] executes the plan.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::Utc;

use crate::audit::Facts;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, KafkaSettings};
use crate::restore::plan::{GroupPlan, Recreate};
use crate::restore::review::{PlanBody, PlanFile, PlanRequest};
use crate::restore::{self, Choice, Eligible, PlanOptions, Prepared, RestoreRequest};
use crate::snapshot::secrets::Identities;
use crate::snapshot::SnapshotKind;
use crate::spool::Spool;
use crate::store::Store;

/// A plan file read as a stream: the file without its groups, and the groups.
pub type Reviewed = (PlanFile, Spool<GroupPlan>);

/// How an execution runs: from the command line, also when the plan comes from a file.
pub struct RunSettings {
    /// Take an undo snapshot before the first change.
    pub undo: bool,
    pub wait_timeout: Duration,
    pub settle: Duration,
    pub commit_concurrency: usize,
    pub batch_partitions: usize,
    pub refuse_moved: bool,
    pub identities: Option<Identities>,
}

/// The request of `--from-plan`: the one the plan was made with; only the execution settings
/// come from the command line.
pub fn reviewed_request((file, groups): Reviewed, run: RunSettings) -> RestoreRequest {
    let r = file.body.request.clone();
    RestoreRequest {
        choice: Choice::Id(file.body.snapshot_id.clone()),
        at: r.at,
        eligible: Eligible {
            include_partial: r.allow_partial,
            ..Default::default()
        },
        groups: r.groups,
        connectors: r.connectors,
        topics: r.topics,
        partitions: r.partitions,
        plan: PlanOptions {
            on_out_of_range: r.on_out_of_range,
            skip_missing: r.skip_missing,
            allow_recreated_topics: r.allow_recreated_topics,
            stop_connectors: r.stop_connectors,
            // A plan file holds no secrets: a connector with redacted config is refused.
            recreate: r.recreate_connectors.then(|| Recreate {
                supplied_keys: Default::default(),
                leave_stopped: r.leave_stopped,
                ..Default::default()
            }),
            ..Default::default()
        },
        allow_other_cluster: r.allow_other_cluster,
        by_timestamp: r.by_timestamp,
        mirror: r.mirror,
        undo: run.undo,
        wait_timeout: run.wait_timeout,
        settle: run.settle,
        commit_concurrency: run.commit_concurrency,
        batch_partitions: run.batch_partitions,
        reviewed: Some(file),
        reviewed_groups: Some(groups),
        connector_config: Default::default(),
        undo_kind: SnapshotKind::Undo,
        undo_tags: BTreeMap::new(),
        relative_targets: false,
        refuse_moved: run.refuse_moved,
        identities: run.identities,
    }
}

/// The request options as a plan file records them.
pub fn plan_request(req: &RestoreRequest) -> PlanRequest {
    PlanRequest {
        groups: req.groups.clone(),
        connectors: req.connectors.clone(),
        topics: req.topics.clone(),
        partitions: req.partitions.clone(),
        on_out_of_range: req.plan.on_out_of_range,
        skip_missing: req.plan.skip_missing,
        allow_recreated_topics: req.plan.allow_recreated_topics,
        recreate_connectors: req.plan.recreate.is_some(),
        leave_stopped: req.plan.recreate.as_ref().is_some_and(|r| r.leave_stopped),
        stop_connectors: req.plan.stop_connectors,
        by_timestamp: req.by_timestamp,
        allow_other_cluster: req.allow_other_cluster,
        allow_partial: req.eligible.include_partial,
        mirror: req.mirror.clone(),
        at: req.at,
    }
}

/// Where a restore is planned: the store its snapshot comes from, and the cluster (with its
/// Connect clusters) whose offsets it changes.
pub struct Place<'a> {
    pub store: &'a Store,
    pub settings: KafkaSettings,
    pub clients: &'a [ConnectClient],
    /// `--rehearse-on`: the cluster is a staging cluster, never the one the snapshot was taken on.
    pub rehearsal: bool,
}

/// A restore planned against the cluster.
pub struct Planned {
    pub kafka: KafkaClient,
    pub prepared: Prepared,
}

/// Chooses and verifies the snapshot (`--at`: replays the archive onto it), then plans the
/// restore against the cluster. `at_given`: `--at` was on the command line, so a missing
/// snapshot is the archive's missing base. `phase` follows the step reached, for the error
/// document of `--output json`.
pub async fn plan(
    place: Place<'_>,
    req: &RestoreRequest,
    at_given: bool,
    phase: &mut &'static str,
    facts: &mut Facts,
) -> Result<Planned> {
    *phase = "choose";
    let store = place.store;
    let mut verified = restore::open(store, req).await.map_err(|e| {
        if at_given {
            crate::log::at::no_base(e)
        } else {
            e
        }
    })?;
    crate::noteln!("{}, verified", verified.chosen.announce(Utc::now()));
    let snapshot_id = verified.chosen.manifest.meta.id.clone();
    facts.subject = facts.plan_sha256.clone().or(Some(snapshot_id.clone()));
    facts.snapshot_ids.push(snapshot_id);
    if let Some(at) = req.at {
        let because = restore::at::apply(store, &mut verified, req, at).await?;
        crate::noteln!("{because}");
        verified.chosen.because = format!("{}; {because}", verified.chosen.because);
    }
    *phase = "plan";
    let kafka = KafkaClient::connect(place.settings).await?;
    crate::progress::stage("planning the restore", 0);
    if place.rehearsal && verified.manifest.meta.cluster_id == kafka.cluster_id() {
        return Err(Error::usage(format!(
            "--rehearse-on reaches cluster {}, the cluster the snapshot was taken on: a rehearsal is for a staging cluster",
            kafka.cluster_id()
        )));
    }
    let prepared = restore::prepare(verified, &kafka, place.clients, req).await?;
    facts.groups = prepared.targets.ledger.group_changes()?;
    if !prepared.targets.moved.is_empty() {
        crate::noteln!(
            "{} partition(s) moved since the plan was reviewed; the targets are unchanged",
            prepared.targets.moved.len()
        );
    }
    Ok(Planned { kafka, prepared })
}

impl Planned {
    /// Writes `--plan-file`: the plan, the request it was made with, and (with a signing key)
    /// the author's signature.
    pub fn write_plan_file(
        &self,
        path: &Path,
        req: &RestoreRequest,
        keys: &crate::sign::Keys,
    ) -> Result<()> {
        let ledger = &self.prepared.targets.ledger;
        let body = PlanBody::made_now(
            self.kafka.cluster_id(),
            self.kafka.bootstrap(),
            plan_request(req),
            ledger.head.clone(),
            None,
        );
        PlanFile::write_streamed(path, body, &mut ledger.groups()?, Vec::new(), keys.signer())?;
        Ok(())
    }
}
