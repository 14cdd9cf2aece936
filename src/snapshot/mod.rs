//! Snapshots: the data model, ids and manifests, capture, and storage in a store.

pub mod capture;
pub mod choose;
pub mod manifest;
pub mod repo;
pub mod secrets;
pub mod spill;
mod take;

/// The data model, kept below both the snapshot files' encodings ([`crate::format`]) and this
/// module, which reads and writes them.
pub use crate::model;

pub use capture::{capture, CaptureOptions, Captured};
pub use manifest::{Format, Manifest};
pub use model::{
    ConnectorSnapshot, GroupSnapshot, PartitionOffset, Selection, SnapshotContent, SnapshotKind,
    SnapshotMeta,
};
pub use take::{take, write};
