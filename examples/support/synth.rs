//! Synthesized snapshots for the benchmark programs: written with the library, as `snapshot` would
//! write them, without a cluster.

use chrono::{DateTime, SubsecRound, Utc};
use offset_vault::snapshot::manifest::{
    content_sha256, FileEntry, Format, Manifest, Summary, CONNECTORS_FILE,
};
use offset_vault::snapshot::model::{Selection, SnapshotContent, SnapshotMeta, FORMAT_VERSION};
use offset_vault::snapshot::{self, Captured};
use offset_vault::store::Store;

/// Writes `content` as a complete snapshot taken at `at`; returns its id.
pub async fn write(
    store: &Store,
    at: DateTime<Utc>,
    format: Format,
    mut content: SnapshotContent,
) -> String {
    content.normalize();
    let meta = SnapshotMeta {
        created_at: at.trunc_subsecs(3),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        cluster_id: "bench-cluster".into(),
        bootstrap_servers: "127.0.0.1:9092".into(),
        selection: Selection {
            all_groups: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut manifest = Manifest {
        format_version: FORMAT_VERSION.into(),
        meta,
        format,
        summary: Summary::of(&content),
        content_sha256: content_sha256(&content),
        files: [format.offsets_file(), CONNECTORS_FILE]
            .into_iter()
            .map(|name| FileEntry {
                name: name.into(),
                size: 0,
                sha256: String::new(),
            })
            .collect(),
    };
    manifest.assign_id();
    let captured = Captured {
        manifest,
        content,
        warnings: vec![],
    };
    snapshot::write(store, &captured)
        .await
        .expect("write")
        .meta
        .id
}
