//! offset-vault: back up Kafka consumer-group offsets, with the Kafka Connect connectors that own
//! them, as checksummed, immutable snapshots, and restore them as a safe, verified offset reset.
//!
//! The library is the engine; the `offset-vault` binary is a thin command line over [`cli`].
//!
//! - [`kafka`]: group, offset and partition reads and commits (rdkafka, plus the admin calls it
//!   lacks, in one small FFI module).
//! - [`settings`], [`group_model`]: what both Kafka clients share: connection settings and
//!   client properties, and the group data they report.
//! - [`connect`]: the Kafka Connect REST API.
//! - [`model`]: the data model of snapshots (groups, partitions, connectors, metadata) and the
//!   format version, below both [`format`] and [`snapshot`].
//! - [`snapshot`]: the data model, ids, manifests, redaction, capture, and snapshot storage.
//! - [`format`]: JSON and Parquet encodings.
//! - [`store`]: `object_store` backends picked by URL, create-only writes.
//! - [`restore`]: snapshot choice, the plan (pure), and its verified application.
//! - [`schema`]: the JSON documents `--output json` prints: their types, and the JSON Schemas
//!   generated from them (`docs/schema/`).
//! - [`commands`]: the commands as library calls, typed options in and typed results out, which
//!   [`cli`] calls and prints.
//! - [`config`]: the global flags, the configuration file and its contexts, and how a context
//!   fills the flags left unset.
//! - [`diff`]: the difference between two snapshots, or a snapshot and the cluster (pure).
//! - [`guard`]: what moved while `guard`'s command ran, summed up in bounded memory (pure).
//! - [`retention`]: `prune`'s policy with restic's rules (pure), and deleting what it removes.
//! - [`expiry`]: the expiry guard: Empty groups whose offsets the broker is about to expire.
//! - [`sign`]: Ed25519 keys, detached signatures and the verdict on an object's signer.
//! - [`log`]: the records of `__consumer_offsets`, decoded (pure); the base of the commit-log
//!   archive.
//! - [`mirror`]: restoring onto a MirrorMaker 2 replica: topic names on the replica (rules and
//!   replication policies) and MirrorMaker's checkpoint and offset-sync records, decoded (pure).
//! - [`audit`]: the audit trail: one CloudEvents event in the store for every change made or
//!   refused.
//! - [`console`], [`progress`]: lines for people on stdout and stderr (`-q`, a closed stdout),
//!   and progress bars on long work.

pub mod audit;
pub mod cli;
pub mod commands;
pub mod config;
pub mod connect;
pub mod console;
pub mod diff;
pub mod error;
pub mod expiry;
pub mod failpoint;
pub mod format;
pub mod group_model;
pub mod guard;
pub mod kafka;
pub mod live;
pub mod log;
pub mod mcp;
pub mod mirror;
pub mod model;
pub mod progress;
pub mod redact;
pub mod restore;
pub mod retention;
pub mod schema;
pub mod serve;
pub mod settings;
pub mod sign;
pub mod snapshot;
pub mod spool;
pub mod store;
pub mod timeutil;
pub mod wire;

#[cfg(test)]
mod hostile_tests;

pub use error::{Error, Result};
