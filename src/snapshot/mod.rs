//! Snapshots: the data model, ids and manifests, redaction, capture, and storage in a store.

pub mod capture;
pub mod choose;
pub mod manifest;
pub mod model;
pub mod redact;
pub mod repo;

pub use capture::{capture, CaptureOptions, Captured};
pub use manifest::{Format, Manifest};
pub use model::{
    ConnectorSnapshot, GroupSnapshot, PartitionOffset, Selection, SnapshotContent, SnapshotKind,
    SnapshotMeta,
};

use crate::error::Result;
use crate::format;
use crate::store::Store;

/// Captures a snapshot and writes it (manifest last); warnings are logged and returned.
pub async fn take(
    store: &Store,
    kafka: &crate::kafka::KafkaClient,
    connect: &[crate::connect::ConnectClient],
    opts: &CaptureOptions,
) -> Result<(Manifest, Vec<String>)> {
    let captured = capture(kafka, connect, opts).await?;
    crate::progress::finish();
    for w in &captured.warnings {
        tracing::warn!("{w}");
    }
    let manifest = write(store, &captured).await?;
    Ok((manifest, captured.warnings))
}

/// Encodes a captured snapshot and writes it to the store, manifest last.
pub async fn write(store: &Store, captured: &Captured) -> Result<Manifest> {
    let meta = &captured.manifest.meta;
    let offsets = format::encode_offsets(captured.manifest.format, meta, &captured.content.groups)?;
    let connectors = format::json::encode_connectors(&meta.id, &captured.content.connectors)?;
    repo::write(
        store,
        captured.manifest.clone(),
        vec![
            (captured.manifest.format.offsets_file().to_string(), offsets),
            (manifest::CONNECTORS_FILE.to_string(), connectors),
        ],
    )
    .await
}
