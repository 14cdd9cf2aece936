//! The commands, as library calls: typed options in, typed results out.
//! `src/cli` turns the flags into these options, calls them in order and prints what they
//! return between the calls (the plan before it is applied, the outcome before it is watched).
//!
//! - [`restore`]: a snapshot chosen, verified and planned against the cluster.
//! - [`reset`]: kafka-consumer-groups' scenarios checked into a [`crate::restore::reset::ResetSpec`],
//!   planned, and rehearsed on a staging cluster.
//! - [`apply`]: what both share once planned: a reviewed plan's approvals, the plan file, the
//!   exit code of a dry run, the execution and `--watch`.
//! - [`staging`]: the staging cluster of `--rehearse-on`.
//! - [`guard`]: a command run between a snapshot and a comparison with it.
//! - [`prune`]: what an executed prune's deletions and refusals make of its outcome.
//! - [`list`]: the snapshots a filter keeps.
//! - [`verify`]: every file of one or all snapshots re-hashed, signatures judged, the archive
//!   checked.
//! - [`diff`]: the two sides of a comparison read and verified, their rows and connectors
//!   compared; [`at`]: the request of `--at TIME`.
//! - [`export`], [`import`]: kafka-consumer-groups CSV out of a snapshot, and into one.
//!
//! Each command's options are clap argument structs (`RestoreArgs`, `SnapshotArgs`, ...),
//! defined here beside the calls that take them, with [`options`] for the groups several
//! commands share; `src/cli` puts them together into the command line.

pub mod apply;
pub mod at;
pub mod audit;
pub mod diff;
pub mod expiring;
pub mod export;
pub mod follow;
pub mod guard;
pub mod history;
pub mod import;
pub mod list;
pub mod options;
pub mod prune;
pub mod reset;
pub mod restore;
pub mod serve;
pub mod show;
pub mod sign;
pub mod snapshot;
pub mod staging;
pub mod verify;
