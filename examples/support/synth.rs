//! Synthesized snapshots for the benchmark programs: written with the library, as `snapshot` would
//! write them, without a cluster.

use chrono::{DateTime, SubsecRound, Utc};
use offset_vault::snapshot::manifest::Format;
use offset_vault::snapshot::model::{Selection, SnapshotContent, SnapshotMeta};
use offset_vault::snapshot::{self, Captured};
use offset_vault::store::Store;

/// Writes `content` as a complete snapshot taken at `at`; returns its id.
pub async fn write(
    store: &Store,
    at: DateTime<Utc>,
    format: Format,
    content: SnapshotContent,
) -> String {
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
    let captured = Captured::from_content(meta, format, content, vec![]).expect("spill");
    snapshot::write(store, &captured)
        .await
        .expect("write")
        .meta
        .id
}
