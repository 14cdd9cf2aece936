//! Restore: choose a snapshot, verify it, guard the cluster, plan against the live state, and
//! (with `execute`) stop connectors, take an undo snapshot, apply, verify, and resume.

mod apply;
pub mod approval;
pub mod at;
mod connector_plan;
mod connectors;
pub mod ledger;
pub mod options;
pub mod outcome;
pub mod plan;
mod plan_stream;
mod prepare;
mod request;
pub mod reset;
pub mod review;
mod secrets;
pub mod targets;
pub mod watch;

pub use crate::snapshot::choose::{choose, Choice, Chosen, Eligible};
pub use apply::execute;
pub use outcome::{Outcome, PartitionCheck, Phase, Status};
pub use plan::{OutOfRange, Plan, PlanOptions};
pub use prepare::{open, prepare, select, Prepared, Verified};
pub use request::{RestoreRequest, Targets};
