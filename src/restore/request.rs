//! What a restore is asked to do ([`RestoreRequest`]) and what an execution applies
//! ([`Targets`]: the plan and where its groups and connectors come from), shared by restore's
//! steps and by `reset`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::ledger::{GroupSource, Ledger};
use super::plan::{self, Plan, PlanOptions};
use super::review;
use crate::connect::ConnectClient;
use crate::snapshot::choose::{Choice, Eligible};
use crate::snapshot::model::ConnectorSnapshot;

/// Everything a restore is asked to do.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    pub choice: Choice,
    /// `--at TIME`: the targets are the offsets at this instant, replayed from the commit-log
    /// archive onto the base `choice` picks (then `Choice::Before` of the same instant).
    pub at: Option<chrono::DateTime<chrono::Utc>>,
    /// Which snapshots `Latest` and `Before` may pick (kinds, partial).
    pub eligible: Eligible,
    pub groups: Vec<String>,
    pub connectors: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub plan: PlanOptions,
    pub allow_other_cluster: bool,
    pub by_timestamp: bool,
    /// How offsets are carried onto another cluster (`--topic-map`, `--translate`, ...).
    pub mirror: crate::mirror::MirrorOptions,
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
    /// The reviewed plan's groups, read from the file into a spool (its `body.plan.groups` is
    /// then empty); `None` when they are in `reviewed` itself.
    pub reviewed_groups: Option<crate::spool::Spool<plan::GroupPlan>>,
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
    /// `--refuse-moved`: a committed offset that moved since the reviewed plan was made stops
    /// the execution, even where its target stays the same (the plan is applied only to the
    /// state it was made from).
    pub refuse_moved: bool,
    /// The identity file that opens the snapshot's encrypted connector secrets
    /// (`--identity`), used when connectors are created again.
    pub identities: Option<crate::snapshot::secrets::Identities>,
    /// Plan and apply at most this many partitions at a time (whole groups).
    pub batch_partitions: usize,
}

/// What an execution applies: the target offsets (from a snapshot, or computed by `reset`), the
/// plan computed from them against the live state, and where each connector lives.
#[derive(Debug, Clone)]
pub struct Targets {
    /// Current offsets that moved since the reviewed plan (`--from-plan`).
    pub moved: Vec<review::Moved>,
    /// The groups whose offsets are put back, in the plan's batches.
    pub source: GroupSource,
    pub connectors: Vec<ConnectorSnapshot>,
    /// The plan, batch by batch.
    pub ledger: Ledger,
    /// Where each connector of the plan lives now.
    pub connect_by_name: BTreeMap<String, ConnectClient>,
    /// The file format of the undo snapshot.
    pub undo_format: crate::snapshot::Format,
    /// How the snapshot's offsets are carried onto this cluster, when they are.
    pub mirror: Option<Arc<crate::mirror::Mirror>>,
}

impl Targets {
    /// The plan's totals, connectors and problems (its groups are in [`Targets::ledger`]).
    pub fn plan(&self) -> &Plan {
        &self.ledger.head
    }
}
