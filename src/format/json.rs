//! JSON encodings: `offsets.json` and `connectors.json`. Offsets are JSON integers, read back as
//! exact 64-bit values.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::snapshot::manifest::check_format_version;
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, SnapshotMeta, FORMAT_VERSION};

#[derive(Serialize, Deserialize)]
struct OffsetsDoc {
    format_version: String,
    snapshot: SnapshotMeta,
    groups: Vec<GroupSnapshot>,
}

#[derive(Serialize, Deserialize)]
struct ConnectorsDoc {
    format_version: String,
    snapshot_id: String,
    connectors: Vec<ConnectorSnapshot>,
}

#[derive(Deserialize)]
struct VersionOnly {
    format_version: String,
}

fn to_pretty<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::Internal(format!("encode JSON: {e}")))?;
    out.push(b'\n');
    Ok(out)
}

fn decode<T: for<'de> Deserialize<'de>>(path: &str, bytes: &[u8]) -> Result<T> {
    let v: VersionOnly = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        path: path.to_string(),
        detail: e.to_string(),
    })?;
    check_format_version(path, &v.format_version)?;
    serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        path: path.to_string(),
        detail: e.to_string(),
    })
}

pub fn encode_offsets(meta: &SnapshotMeta, groups: &[GroupSnapshot]) -> Result<Vec<u8>> {
    to_pretty(&OffsetsDoc {
        format_version: FORMAT_VERSION.into(),
        snapshot: meta.clone(),
        groups: groups.to_vec(),
    })
}

pub fn decode_offsets(path: &str, bytes: &[u8]) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    let doc: OffsetsDoc = decode(path, bytes)?;
    Ok((doc.snapshot, doc.groups))
}

pub fn encode_connectors(snapshot_id: &str, connectors: &[ConnectorSnapshot]) -> Result<Vec<u8>> {
    to_pretty(&ConnectorsDoc {
        format_version: FORMAT_VERSION.into(),
        snapshot_id: snapshot_id.to_string(),
        connectors: connectors.to_vec(),
    })
}

/// Returns the snapshot id recorded in the file and the connectors.
pub fn decode_connectors(path: &str, bytes: &[u8]) -> Result<(String, Vec<ConnectorSnapshot>)> {
    let doc: ConnectorsDoc = decode(path, bytes)?;
    Ok((doc.snapshot_id, doc.connectors))
}
