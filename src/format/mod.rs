//! File formats of a snapshot: the offsets file (Parquet or JSON) and `connectors.json`.
//! Both offsets formats carry the same information and decode to the same content.

pub mod json;
pub mod parquet;

use crate::error::Result;
use crate::snapshot::manifest::Format;
use crate::snapshot::model::{GroupSnapshot, SnapshotMeta};

/// Encodes the groups of a snapshot in the given format.
pub fn encode_offsets(format: Format, meta: &SnapshotMeta, groups: &[GroupSnapshot]) -> Result<Vec<u8>> {
    match format {
        Format::Json => json::encode_offsets(meta, groups),
        Format::Parquet => parquet::encode_offsets(meta, groups),
    }
}

/// Decodes an offsets file; `path` names it in errors.
pub fn decode_offsets(
    format: Format,
    path: &str,
    bytes: bytes::Bytes,
) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    match format {
        Format::Json => json::decode_offsets(path, &bytes),
        Format::Parquet => parquet::decode_offsets(path, bytes),
    }
}
