//! The commit-log archive's layout in the store, and the writes that keep it exact when several
//! followers (or a follower and its own restarted self) race.
//!
//! - `log/date=YYYY-MM-DD/partition=NN/<start>-<next>-<sha8>.parquet`: the segments, for DuckDB
//!   and Spark with Hive partitioning. The name carries the first eight hex digits of the file's
//!   SHA-256, so two writers of the same range never collide on the data file.
//! - `log/index/partition=NN/<start>.json`: one manifest per segment, keyed by the first source
//!   offset it covers and written create-only after the segment. This is the archive's commit
//!   point and its fence: of two followers that read the same partition from the same position,
//!   exactly one creates the manifest; the other withdraws its data file and moves on from where
//!   the winner ended. A gap the follower could not read (the log no longer held its position)
//!   is an index entry too, with no data file, so the chain of a partition is always continuous
//!   and a restore into a gap is refused by looking at the chain.
//! - `log/heads/partition=NN.json`: the last time a follower saw the partition's log end with the
//!   archive complete up to `next` (overwritten on every pass, also when nothing was new): how
//!   `--at` tells "no commit since" from "not archived yet".
//!
//! A data file that no manifest names is an orphan (a writer stopped between the two writes, or
//! lost the race and could not withdraw it); it is never read.

use std::collections::BTreeMap;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use super::segment::Lane;
use super::segment::{self, Row, SegmentMeta};
use crate::error::{Error, Result};
use crate::sign::Purpose;
use crate::snapshot::manifest::sha256_hex;
use crate::store::Store;

/// Where the segment manifests are.
pub const INDEX_PREFIX: &str = "log/index";
/// Where the partitions' heads are.
pub const HEADS_PREFIX: &str = "log/heads";

/// A segment's manifest: its description, and the data file's key, size and checksum. A gap has
/// no data file (`file` empty) and says why in `meta.gap`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentManifest {
    #[serde(flatten)]
    pub meta: SegmentMeta,
    /// The data file's key in the store.
    pub file: String,
    pub size: u64,
    pub sha256: String,
}

impl SegmentManifest {
    /// The index key of the segment of `partition` that starts at `start`.
    pub fn index_key(partition: i32, start: i64) -> String {
        Self::index_key_in(Lane::Offsets, partition, start)
    }

    /// [`Self::index_key`] in `lane`.
    pub fn index_key_in(lane: Lane, partition: i32, start: i64) -> String {
        format!(
            "{}/partition={partition:02}/{start:020}.json",
            index_prefix(lane)
        )
    }

    /// This manifest's own index key.
    pub fn key(&self) -> String {
        Self::index_key_in(
            Lane::of_topic(&self.meta.topic),
            self.meta.partition,
            self.meta.start,
        )
    }

    pub fn is_gap(&self) -> bool {
        self.meta.gap.is_some()
    }
}

/// How far a partition's archive is known to be complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub partition: i32,
    /// The archive holds every record of the partition before this offset.
    pub next: i64,
    /// When a follower last saw the log end at `next` (nothing after it then).
    pub checked_at: DateTime<Utc>,
}

impl Head {
    pub fn key(partition: i32) -> String {
        Self::key_in(Lane::Offsets, partition)
    }

    pub fn key_in(lane: Lane, partition: i32) -> String {
        format!("{}/partition={partition:02}.json", heads_prefix(lane))
    }
}

/// Where a lane's segment manifests are.
pub fn index_prefix(lane: Lane) -> String {
    match lane {
        Lane::Offsets => INDEX_PREFIX.to_string(),
        Lane::Connect => format!("{}/index", lane.root()),
    }
}

/// Where a lane's heads are.
pub fn heads_prefix(lane: Lane) -> String {
    match lane {
        Lane::Offsets => HEADS_PREFIX.to_string(),
        Lane::Connect => format!("{}/heads", lane.root()),
    }
}

fn decode_json<T: serde::de::DeserializeOwned>(key: &str, bytes: &[u8], what: &str) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        path: key.to_string(),
        detail: format!("not a {what}: {e}"),
    })
}

fn encode_json<T: Serialize>(value: &T) -> Result<Bytes> {
    serde_json::to_vec_pretty(value)
        .map(Bytes::from)
        .map_err(|e| Error::Internal(e.to_string()))
}

/// Fails with an integrity error when trusted keys are configured and no trusted key signed the
/// index manifest `key` (read as `bytes`).
pub async fn require_trusted(store: &Store, key: &str, bytes: &[u8]) -> Result<()> {
    if !store.keys().enforcing() {
        return Ok(());
    }
    let verdict = store.judge(key, bytes, Purpose::LogSegment).await?;
    match verdict.refusal() {
        None => Ok(()),
        Some(why) => Err(Error::Integrity {
            id: key.to_string(),
            problems: vec![format!("commit-log segment manifest: {why}")],
        }),
    }
}

async fn manifests_under(store: &Store, prefix: &str) -> Result<Vec<(String, SegmentManifest)>> {
    let mut out = Vec::new();
    for o in store.list(prefix).await? {
        if !o.key.ends_with(".json") {
            continue;
        }
        let bytes = store.get(&o.key).await?;
        require_trusted(store, &o.key, &bytes).await?;
        let m: SegmentManifest = decode_json(&o.key, &bytes, "segment manifest")?;
        out.push((o.key, m));
    }
    out.sort_by_key(|(_, m)| (m.meta.partition, m.meta.start));
    Ok(out)
}

/// Every segment manifest of the archive, by partition and start.
pub async fn manifests(store: &Store) -> Result<Vec<(String, SegmentManifest)>> {
    manifests_in(store, Lane::Offsets).await
}

/// Every segment manifest of `lane`, by partition and start.
pub async fn manifests_in(store: &Store, lane: Lane) -> Result<Vec<(String, SegmentManifest)>> {
    manifests_under(store, &format!("{}/", index_prefix(lane))).await
}

/// The segment manifests of one source partition, in log order.
pub async fn manifests_of(
    store: &Store,
    lane: Lane,
    partition: i32,
) -> Result<Vec<(String, SegmentManifest)>> {
    manifests_under(
        store,
        &format!("{}/partition={partition:02}/", index_prefix(lane)),
    )
    .await
}

/// One segment manifest of `lane` (the first listed), for what every segment of it shares:
/// the cluster and the source topic's partition count. `None` when the lane has no archive.
pub async fn first_manifest(store: &Store, lane: Lane) -> Result<Option<SegmentManifest>> {
    let listed = store.list(&format!("{}/", index_prefix(lane))).await?;
    let Some(first) = listed.iter().find(|o| o.key.ends_with(".json")) else {
        return Ok(None);
    };
    let bytes = store.get(&first.key).await?;
    require_trusted(store, &first.key, &bytes).await?;
    Ok(Some(decode_json(&first.key, &bytes, "segment manifest")?))
}

/// How many partitions the source topic of `lane` has, as its archive says (from one index
/// entry); `None` when the lane has no archive. Reads one manifest, whatever the archive's size.
pub async fn partition_count(store: &Store, lane: Lane) -> Result<Option<i32>> {
    Ok(first_manifest(store, lane)
        .await?
        .map(|m| m.meta.partitions))
}

/// The heads of every partition that has one.
pub async fn heads(store: &Store) -> Result<BTreeMap<i32, Head>> {
    heads_in(store, Lane::Offsets).await
}

/// The heads of every partition of `lane` that has one.
pub async fn heads_in(store: &Store, lane: Lane) -> Result<BTreeMap<i32, Head>> {
    let mut out = BTreeMap::new();
    for o in store.list(&format!("{}/", heads_prefix(lane))).await? {
        let bytes = store.get(&o.key).await?;
        let h: Head = decode_json(&o.key, &bytes, "partition head")?;
        out.insert(h.partition, h);
    }
    Ok(out)
}

/// Records that the archive of `head.partition` is complete up to `head.next` now.
pub async fn write_head(store: &Store, lane: Lane, head: &Head) -> Result<()> {
    store
        .put(&Head::key_in(lane, head.partition), encode_json(head)?)
        .await
}

/// Reads one segment and checks it against its manifest before decoding it. A gap has no rows.
pub async fn read_segment(
    store: &Store,
    manifest_key: &str,
    m: &SegmentManifest,
) -> Result<Vec<Row>> {
    if m.is_gap() {
        return Ok(Vec::new());
    }
    let key = &m.file;
    let bytes = store.get(key).await?;
    let sha = sha256_hex(&bytes);
    if bytes.len() as u64 != m.size || sha != m.sha256 {
        return Err(Error::Integrity {
            id: key.clone(),
            problems: vec![format!(
                "{} bytes with SHA-256 {sha}, but the manifest {manifest_key} says {} bytes with {}",
                bytes.len(),
                m.size,
                m.sha256
            )],
        });
    }
    let (meta, rows) = segment::decode(key, bytes)?;
    if meta != m.meta {
        return Err(Error::Integrity {
            id: key.clone(),
            problems: vec![format!(
                "the file's description differs from its manifest {manifest_key}"
            )],
        });
    }
    Ok(rows)
}

/// What became of a segment a follower sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// This follower's segment is the archive's.
    Written(SegmentManifest),
    /// Another follower had already archived the range from the same start; this follower's
    /// data file was withdrawn. Go on from the winner's `next`.
    Lost(SegmentManifest),
}

/// Writes a sealed segment: the data file, then (create-only) its index manifest.
pub async fn publish(store: &Store, meta: &SegmentMeta, rows: &[Row]) -> Result<Published> {
    let bytes = segment::encode(meta, rows)?;
    let sha256 = sha256_hex(&bytes);
    let file = format!(
        "{}-{}.parquet",
        meta.key().trim_end_matches(".parquet"),
        &sha256[..8]
    );
    let manifest = SegmentManifest {
        meta: meta.clone(),
        file: file.clone(),
        size: bytes.len() as u64,
        sha256,
    };
    let index = manifest.key();
    // Identical bytes at the same key are the same segment: a retry of a run that died.
    if !store.exists(&file).await? {
        store.put_new(&file, Bytes::from(bytes)).await?;
    }
    crate::failpoint::hit("follow-before-segment-manifest");
    match store
        .put_new_signed(&index, encode_json(&manifest)?, Purpose::LogSegment)
        .await
    {
        Ok(()) => Ok(Published::Written(manifest)),
        Err(e) => {
            if !store.exists(&index).await? {
                return Err(e);
            }
            let bytes = store.get(&index).await?;
            let winner: SegmentManifest = decode_json(&index, &bytes, "segment manifest")?;
            if winner.file != file {
                store.delete(&file).await?;
            }
            Ok(Published::Lost(winner))
        }
    }
}

/// Records that the source offsets `[from, to)` of `partition` were not archived (`why`): an
/// index entry with no data file. Lost to another follower's entry like a segment.
pub async fn publish_gap(
    store: &Store,
    template: &SegmentMeta,
    from: i64,
    to: i64,
    why: &str,
) -> Result<Published> {
    let manifest = SegmentManifest {
        meta: SegmentMeta {
            start: from,
            next: to,
            rows: 0,
            ignored: 0,
            unknown: 0,
            first_timestamp: None,
            last_timestamp: None,
            sealed_at: Utc::now(),
            gap: Some(why.to_string()),
            ..template.clone()
        },
        file: String::new(),
        size: 0,
        sha256: String::new(),
    };
    let index = manifest.key();
    match store
        .put_new_signed(&index, encode_json(&manifest)?, Purpose::LogSegment)
        .await
    {
        Ok(()) => Ok(Published::Written(manifest)),
        Err(e) => {
            if !store.exists(&index).await? {
                return Err(e);
            }
            let bytes = store.get(&index).await?;
            Ok(Published::Lost(decode_json(
                &index,
                &bytes,
                "segment manifest",
            )?))
        }
    }
}

/// Where the archive of `partition` ends: the `next` of its last index entry.
pub async fn chain_end(store: &Store, lane: Lane, partition: i32) -> Result<Option<i64>> {
    Ok(manifests_of(store, lane, partition)
        .await?
        .iter()
        .map(|(_, m)| m.meta.next)
        .max())
}
