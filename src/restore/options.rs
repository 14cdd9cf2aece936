//! The options that shape a restore or reset plan. Below both the group plan ([`super::plan`])
//! and the connector plan ([`super::connector_plan`]), which both read them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// What to do with a target outside the live [log-start, log-end] range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OutOfRange {
    /// The plan fails (nothing is changed).
    #[default]
    Fail,
    /// Move the target to the nearest end of the live range, and say so in the plan.
    Clamp,
}

/// How deleted connectors are created again from the snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recreate {
    /// Config keys given on the command line (values replace the snapshot's; redacted secrets
    /// must be among them).
    pub supplied_keys: std::collections::BTreeSet<String>,
    /// Leave a recreated connector STOPPED after its offsets are set.
    pub leave_stopped: bool,
    /// The snapshot holds the connector secrets encrypted to this many recipients
    /// (`connectors.secrets.age`); redacted values left are those no identity supplied.
    pub encrypted_secrets: Option<usize>,
}

/// Options that shape a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    pub on_out_of_range: OutOfRange,
    /// Leave partitions of topics that no longer exist out instead of failing the plan.
    pub skip_missing: bool,
    /// Apply old offsets to a topic that was deleted and created again since the snapshot.
    pub allow_recreated_topics: bool,
    /// Create connectors of the snapshot that no longer exist (`--recreate-connectors`).
    pub recreate: Option<Recreate>,
    /// Connectors may be stopped (and resumed) by the restore.
    pub stop_connectors: bool,
    /// A sink connector's group is written through Kafka Connect
    /// (`PATCH /connectors/NAME/offsets`) instead of an offset commit (`reset`).
    pub sink_via_rest: bool,
    /// Source connectors whose every offset is removed (`DELETE /connectors/NAME/offsets`:
    /// `reset --to-earliest`), instead of being set to the snapshot's.
    pub reset_source_offsets: BTreeSet<String>,
}
