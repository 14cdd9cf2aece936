//! The manifest (written last, lists every file with size and SHA-256) and snapshot ids.
//!
//! An id is `YYYYMMDDTHHMMSS.mmmZ-<16 hex>`: the creation time, so ids sort by time, and the start
//! of the SHA-256 of the manifest's sealed fields (everything but the id and the per-file sizes and
//! hashes, which are only known after the files are written). The sealed fields include the SHA-256
//! of the snapshot content, so the id is bound to both the manifest and the data: editing a tag,
//! the selection or an offset is detected.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::model::{ConnectorSnapshot, GroupSnapshot, SnapshotContent, SnapshotMeta};
use crate::error::{Error, Result};
pub use crate::model::{check_format_version, Format};

pub const MANIFEST_FILE: &str = "manifest.json";
pub const CONNECTORS_FILE: &str = "connectors.json";

/// A file of the snapshot, with the size and SHA-256 it was written with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// Counts for listings, so `list` needs to read only manifests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub groups: usize,
    pub partitions: usize,
    pub connectors: usize,
    /// Sum of the lag of every captured partition where it was known.
    pub total_lag: i64,
    /// How many groups were in each state.
    pub group_states: BTreeMap<String, usize>,
    /// The captured group ids, so listings can filter by group without reading the data.
    #[serde(default)]
    pub group_ids: Vec<String>,
    /// The captured connector names.
    #[serde(default)]
    pub connector_names: Vec<String>,
}

impl Summary {
    pub fn of(content: &SnapshotContent) -> Self {
        let mut b = SummaryBuilder::default();
        for g in &content.groups {
            b.add_group(g);
        }
        b.finish(&content.connectors)
    }
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: String,
    #[serde(flatten)]
    pub meta: SnapshotMeta,
    pub format: Format,
    pub summary: Summary,
    /// SHA-256 of the canonical encoding of the snapshot content (see [`content_sha256`]).
    pub content_sha256: String,
    pub files: Vec<FileEntry>,
    /// Set when the snapshot holds the full connector configs encrypted (`--encrypt-to`, format
    /// 1.3): the file and its recipients. Absent otherwise, so older manifests keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_secrets: Option<super::secrets::EncryptedSecrets>,
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Bytes written into a SHA-256.
struct HashWrite(Sha256);

impl std::io::Write for HashWrite {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// SHA-256 of the canonical (normalized, compact JSON) encoding of the content. Every format
/// decodes back to the same content, so the digest does not depend on the format.
pub fn content_sha256(content: &SnapshotContent) -> String {
    let mut h = ContentHasher::new();
    if content.groups.is_sorted_by(|a, b| a.group_id <= b.group_id) {
        for g in &content.groups {
            h.add_group(g);
        }
    } else {
        let mut sorted: Vec<&GroupSnapshot> = content.groups.iter().collect();
        sorted.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        for g in sorted {
            h.add_group(g);
        }
    }
    h.finish(&content.connectors)
}

/// Whether a group's partitions and members are in their normalized order.
pub fn is_normalized(g: &GroupSnapshot) -> bool {
    g.partitions
        .is_sorted_by(|a, b| (&a.topic, a.partition) <= (&b.topic, b.partition))
        && g.members.is_sorted_by(|a, b| a.member_id <= b.member_id)
}

/// Puts one group's partitions and members in their normalized order.
pub fn normalize_group(g: &mut GroupSnapshot) {
    g.partitions
        .sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
}

struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.update(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`content_sha256`] computed one group at a time, groups in id order: the compact JSON of
/// `SnapshotContent` is `{"groups":[g1,g2,...],"connectors":[...]}`, so it is hashed as it
/// would be written, without holding the groups.
pub struct ContentHasher {
    h: HashWriter,
    groups: usize,
}

impl Default for ContentHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentHasher {
    pub fn new() -> Self {
        let mut h = HashWriter(Sha256::new());
        h.0.update(b"{\"groups\":[");
        ContentHasher { h, groups: 0 }
    }

    /// Adds the next group; partitions and members are normalized first when they are not.
    pub fn add_group(&mut self, g: &GroupSnapshot) {
        if self.groups > 0 {
            self.h.0.update(b",");
        }
        self.groups += 1;
        if is_normalized(g) {
            serde_json::to_writer(&mut self.h, g).expect("a group always serializes");
        } else {
            let mut g = g.clone();
            normalize_group(&mut g);
            serde_json::to_writer(&mut self.h, &g).expect("a group always serializes");
        }
    }

    /// Adds the next group, already normalized and encoded as compact JSON.
    pub fn add_encoded(&mut self, group_json: &[u8]) {
        if self.groups > 0 {
            self.h.0.update(b",");
        }
        self.groups += 1;
        self.h.0.update(group_json);
    }

    /// Adds the connectors (normalized here) and returns the lower-case hex digest.
    pub fn finish(mut self, connectors: &[ConnectorSnapshot]) -> String {
        self.h.0.update(b"],\"connectors\":");
        if connectors.is_sorted_by(|a, b| (&a.connect_url, &a.name) <= (&b.connect_url, &b.name)) {
            serde_json::to_writer(&mut self.h, connectors).expect("connectors always serialize");
        } else {
            let mut c = connectors.to_vec();
            c.sort_by(|a, b| (&a.connect_url, &a.name).cmp(&(&b.connect_url, &b.name)));
            serde_json::to_writer(&mut self.h, &c).expect("connectors always serialize");
        }
        self.h.0.update(b"}");
        hex::encode(self.h.0.finalize())
    }
}

/// [`Summary::of`] built one group at a time.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    summary: Summary,
}

impl SummaryBuilder {
    pub fn add_group(&mut self, g: &GroupSnapshot) {
        let s = &mut self.summary;
        s.groups += 1;
        s.partitions += g.partitions.len();
        s.total_lag += g.partitions.iter().filter_map(|p| p.lag).sum::<i64>();
        *s.group_states.entry(g.state.to_string()).or_insert(0) += 1;
        s.group_ids.push(g.group_id.clone());
    }

    pub fn finish(mut self, connectors: &[ConnectorSnapshot]) -> Summary {
        self.summary.connectors = connectors.len();
        self.summary.connector_names = connectors.iter().map(|c| c.name.clone()).collect();
        self.summary
    }
}

impl Manifest {
    /// The digest over the sealed fields: the manifest with the id blanked and only the names of
    /// the files kept.
    pub fn seal_digest(&self) -> String {
        self.clone().sealed_digest()
    }

    /// [`Self::seal_digest`] of this manifest, computed in place: the unsealed fields are
    /// blanked for the hash and put back, and the JSON goes straight into the hash. A manifest
    /// naming many groups (its selection and summary: an undo snapshot names every group it
    /// covers) is neither copied nor encoded into a buffer.
    fn sealed_digest(&mut self) -> String {
        let id = std::mem::take(&mut self.meta.id);
        let files: Vec<(u64, String)> = self
            .files
            .iter_mut()
            .map(|f| (std::mem::take(&mut f.size), std::mem::take(&mut f.sha256)))
            .collect();
        let mut hash = HashWrite(Sha256::new());
        serde_json::to_writer(&mut hash, &*self).expect("manifest always serializes");
        self.meta.id = id;
        for (f, (size, sha256)) in self.files.iter_mut().zip(files) {
            f.size = size;
            f.sha256 = sha256;
        }
        hex::encode(hash.0.finalize())
    }

    /// Computes and sets the id from the creation time and the seal digest.
    pub fn assign_id(&mut self) {
        let digest = self.sealed_digest();
        self.meta.id = make_id(self.meta.created_at, &digest);
    }

    /// The id this manifest's content implies; differs from `meta.id` if anything sealed changed.
    pub fn expected_id(&self) -> String {
        make_id(self.meta.created_at, &self.seal_digest())
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("manifest always serializes");
        out.push(b'\n');
        out
    }

    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Self> {
        #[derive(Deserialize)]
        struct Version {
            format_version: String,
        }
        let v: Version = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
            path: path.to_string(),
            detail: format!("not a manifest: {e}"),
        })?;
        check_format_version(path, &v.format_version)?;
        serde_json::from_slice(bytes).map_err(|e| Error::Decode {
            path: path.to_string(),
            detail: e.to_string(),
        })
    }

    pub fn file(&self, name: &str) -> Option<&FileEntry> {
        self.files.iter().find(|f| f.name == name)
    }
}

const ID_TIME_FORMAT: &str = "%Y%m%dT%H%M%S%.3fZ";
const ID_DIGEST_LEN: usize = 16;

fn make_id(created_at: DateTime<Utc>, digest: &str) -> String {
    format!(
        "{}-{}",
        created_at.format(ID_TIME_FORMAT),
        &digest[..ID_DIGEST_LEN]
    )
}

/// Splits a full id into its time and digest part; `None` if it is not an id.
pub fn parse_id(id: &str) -> Option<(DateTime<Utc>, &str)> {
    let (time, digest) = id.split_once('-')?;
    if digest.len() != ID_DIGEST_LEN || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let t = NaiveDateTime::parse_from_str(time, ID_TIME_FORMAT).ok()?;
    Some((t.and_utc(), digest))
}

/// The date folder (`date=YYYY-MM-DD`) a snapshot with this creation time lives in.
pub fn date_folder(created_at: DateTime<Utc>) -> String {
    format!("date={}", created_at.format("%Y-%m-%d"))
}

/// The date folder implied by an id or id prefix, when the prefix contains the whole date.
pub fn date_folder_of_prefix(prefix: &str) -> Option<String> {
    let d = prefix.get(..8)?;
    if !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!("date={}-{}-{}", &d[..4], &d[4..6], &d[6..8]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Selection, SnapshotMeta, FORMAT_VERSION};
    use chrono::TimeZone;

    pub(crate) fn manifest() -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION.into(),
            meta: SnapshotMeta {
                id: String::new(),
                created_at: Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 5).unwrap()
                    + chrono::Duration::milliseconds(42),
                tool_version: "0.1.0".into(),
                cluster_id: "abc".into(),
                bootstrap_servers: "k:9092".into(),
                brokers: vec!["1@k:9092".into()],
                selection: Selection {
                    groups: vec!["g".into()],
                    ..Default::default()
                },
                tags: BTreeMap::from([("deploy".into(), "1234".into())]),
                ..Default::default()
            },
            format: Format::Parquet,
            summary: Summary::default(),
            content_sha256: sha256_hex(b"content"),
            files: vec![FileEntry {
                name: "offsets.parquet".into(),
                size: 0,
                sha256: String::new(),
            }],
            encrypted_secrets: None,
        }
    }

    #[test]
    fn id_sorts_by_time_and_parses_back() {
        let mut m = manifest();
        m.assign_id();
        assert!(
            m.meta.id.starts_with("20261201T093005.042Z-"),
            "{}",
            m.meta.id
        );
        let (t, digest) = parse_id(&m.meta.id).unwrap();
        assert_eq!(t, m.meta.created_at);
        assert_eq!(digest.len(), 16);
        let mut later = manifest();
        later.meta.created_at += chrono::Duration::milliseconds(1);
        later.assign_id();
        assert!(later.meta.id > m.meta.id);
    }

    #[test]
    fn the_seal_digest_is_that_of_the_manifest_encoded_with_its_unsealed_fields_blank() {
        let mut m = manifest();
        m.meta.id = "20261201T093005.042Z-0123456789abcdef".into();
        m.files[0].size = 12_345;
        m.files[0].sha256 = "ab".repeat(32);
        let before = m.clone();
        let mut blank = m.clone();
        blank.meta.id = String::new();
        for f in &mut blank.files {
            f.size = 0;
            f.sha256 = String::new();
        }
        let want = sha256_hex(&serde_json::to_vec(&blank).unwrap());
        assert_eq!(m.seal_digest(), want);
        assert_eq!(m, before, "seal_digest changes nothing");
        m.assign_id();
        assert_eq!(m.meta.id, make_id(m.meta.created_at, &want));
        assert_eq!(
            m.files, before.files,
            "the files keep their sizes and hashes"
        );
        assert_eq!(m.expected_id(), m.meta.id);
    }

    #[test]
    fn id_binds_sealed_fields_but_not_file_hashes() {
        let mut m = manifest();
        m.assign_id();
        let id = m.meta.id.clone();
        m.files[0].size = 99;
        m.files[0].sha256 = "ff".into();
        assert_eq!(
            m.expected_id(),
            id,
            "file hashes are filled in after the id"
        );
        m.meta.tags.insert("deploy".into(), "9999".into());
        assert_ne!(m.expected_id(), id, "an edited tag must change the id");
        let mut m2 = manifest();
        m2.content_sha256 = sha256_hex(b"other");
        assert_ne!(m2.expected_id(), id, "other content must change the id");
    }

    #[test]
    fn manifest_round_trips_and_checks_version() {
        let mut m = manifest();
        m.assign_id();
        let back = Manifest::from_bytes("m", &m.to_bytes()).unwrap();
        assert_eq!(back, m);
        let text = String::from_utf8(m.to_bytes()).unwrap().replace(
            &format!("\"format_version\": \"{FORMAT_VERSION}\""),
            "\"format_version\": \"2.0\"",
        );
        let err = Manifest::from_bytes("m", text.as_bytes()).unwrap_err();
        assert!(matches!(err, Error::UnsupportedFormat { .. }), "{err}");
        check_format_version("x", "1.7").unwrap();
    }

    #[test]
    fn a_snapshot_kind_manifest_serializes_as_format_1_0_did() {
        // Format 1.0 had no kind, undo_of or partial; leaving them out when they hold their
        // defaults keeps the sealed bytes, and so the ids, of 1.0 snapshots the same.
        let mut m = manifest();
        m.format_version = "1.0".into();
        m.assign_id();
        let text = String::from_utf8(m.to_bytes()).unwrap();
        for absent in [
            "\"kind\"",
            "\"undo_of\"",
            "\"partial\"",
            "\"encrypted_secrets\"",
        ] {
            assert!(!text.contains(absent), "{absent} in {text}");
        }
        let back = Manifest::from_bytes("m", text.as_bytes()).unwrap();
        assert_eq!(back.meta.kind, crate::snapshot::SnapshotKind::Snapshot);
        assert_eq!(back.expected_id(), m.meta.id);
        // An undo snapshot names its kind and source, and both are sealed into the id.
        let mut undo = manifest();
        undo.meta.kind = crate::snapshot::SnapshotKind::Undo;
        undo.meta.undo_of = Some("X".into());
        undo.assign_id();
        let text = String::from_utf8(undo.to_bytes()).unwrap();
        assert!(text.contains("\"kind\": \"undo\""), "{text}");
        let mut forged = Manifest::from_bytes("m", text.as_bytes()).unwrap();
        forged.meta.kind = crate::snapshot::SnapshotKind::Snapshot;
        assert_ne!(
            forged.expected_id(),
            undo.meta.id,
            "changing the kind changes the id"
        );
    }

    #[test]
    fn date_folders() {
        assert_eq!(
            date_folder_of_prefix("20261201T09"),
            Some("date=2026-12-01".into())
        );
        assert_eq!(date_folder_of_prefix("2026"), None);
        assert_eq!(date_folder(manifest().meta.created_at), "date=2026-12-01");
        assert!(parse_id("20261201T093005.042Z-zz").is_none());
    }
}
