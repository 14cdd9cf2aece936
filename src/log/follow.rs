//! `follow --once`: archives the records of `__consumer_offsets` from the follower group's
//! positions to the end of the log as sealed segments, and only then commits the new positions.
//! A run killed before the commit is repeated by the next from the same positions; the segments
//! it had written are refused as existing (create-only keys), so nothing is written twice.

use bytes::Bytes;
use chrono::Utc;
use serde::Serialize;

use super::record::{decode, LogRecord};
use super::segment::{self, Row, SegmentMeta, SEGMENT_FORMAT_VERSION};
use crate::error::Result;
use crate::kafka::{KafkaClient, PartitionRead};
use crate::snapshot::manifest::sha256_hex;
use crate::store::Store;

/// The topic the follower archives.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// A segment's manifest, written beside it after it: the description and the file's checksum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SegmentManifest {
    #[serde(flatten)]
    pub meta: SegmentMeta,
    pub file: String,
    pub size: u64,
    pub sha256: String,
}

impl SegmentManifest {
    /// The manifest's key: the segment's, with `.json` for `.parquet`.
    pub fn key_of(segment_key: &str) -> String {
        format!("{}.json", segment_key.trim_end_matches(".parquet"))
    }
}

/// What one run archived.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Followed {
    pub segments: Vec<String>,
    pub records: u64,
    pub ignored: u64,
    pub unknown: u64,
    /// Records that could not be decoded (counted with `unknown`), one line each.
    pub warnings: Vec<String>,
}

/// The rows of one partition's read, with the counts of records not stored. Pure.
pub fn rows_of(read: &PartitionRead, warnings: &mut Vec<String>) -> (Vec<Row>, u64, u64) {
    let (mut ignored, mut unknown) = (0, 0);
    let mut rows = Vec::new();
    for r in &read.records {
        let Some(key) = &r.key else {
            unknown += 1;
            continue;
        };
        match decode(key, r.value.as_deref()) {
            Ok(LogRecord::Ignored { .. }) => ignored += 1,
            Ok(LogRecord::Unknown { record_type }) => {
                unknown += 1;
                warnings.push(format!(
                    "{OFFSETS_TOPIC}[{}]@{}: record type {record_type} is not known; skipped",
                    read.partition, r.offset
                ));
            }
            Ok(record) => rows.push(Row {
                source_offset: r.offset,
                timestamp: r.timestamp,
                record,
            }),
            Err(e) => {
                unknown += 1;
                warnings.push(format!(
                    "{OFFSETS_TOPIC}[{}]@{}: {e}; skipped",
                    read.partition, r.offset
                ));
            }
        }
    }
    (rows, ignored, unknown)
}

/// Archives everything from the follower group's positions to the log end, then commits the
/// positions past it.
pub async fn follow_once(kafka: &KafkaClient, store: &Store, group: &str) -> Result<Followed> {
    let (partitions, reads) = kafka.read_to_end(OFFSETS_TOPIC, group).await?;
    let mut out = Followed::default();
    let mut positions = Vec::new();
    for read in reads.iter().filter(|r| r.next > r.start) {
        let (rows, ignored, unknown) = rows_of(read, &mut out.warnings);
        let meta = SegmentMeta {
            format_version: SEGMENT_FORMAT_VERSION.into(),
            cluster_id: kafka.cluster_id().to_string(),
            topic: OFFSETS_TOPIC.into(),
            partitions,
            partition: read.partition,
            start: read.start,
            next: read.next,
            rows: rows.len() as u64,
            ignored,
            unknown,
            first_timestamp: read.records.first().map(|r| r.timestamp),
            last_timestamp: read.records.last().map(|r| r.timestamp),
            sealed_at: Utc::now(),
        };
        let bytes = segment::encode(&meta, &rows)?;
        let key = meta.key();
        let manifest = SegmentManifest {
            file: key.rsplit('/').next().unwrap_or_default().to_string(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
            meta,
        };
        store.put_new(&key, Bytes::from(bytes)).await?;
        crate::failpoint::hit("follow-before-segment-manifest");
        let body = serde_json::to_vec_pretty(&manifest)
            .map_err(|e| crate::Error::Internal(e.to_string()))?;
        store
            .put_new(&SegmentManifest::key_of(&key), Bytes::from(body))
            .await?;
        out.records += manifest.meta.rows;
        out.ignored += ignored;
        out.unknown += unknown;
        out.segments.push(key);
        positions.push((read.partition, read.next));
    }
    // Every segment is durable: only now does the follower's position move.
    if !positions.is_empty() {
        kafka
            .commit_positions(OFFSETS_TOPIC, group, &positions)
            .await?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::RawRecord;

    #[test]
    fn records_become_rows_and_the_others_are_counted_with_a_warning_for_the_unknown() {
        let commit_key = {
            let mut k = 1i16.to_be_bytes().to_vec();
            for s in ["g", "t"] {
                k.extend((s.len() as i16).to_be_bytes());
                k.extend(s.as_bytes());
            }
            k.extend(0i32.to_be_bytes());
            k
        };
        let raw = |offset, key: Option<Vec<u8>>, value: Option<Vec<u8>>| RawRecord {
            offset,
            timestamp: 1000 + offset,
            key,
            value,
        };
        let read = PartitionRead {
            partition: 4,
            start: 10,
            next: 16,
            records: vec![
                raw(10, Some(commit_key.clone()), None),
                raw(11, Some(5i16.to_be_bytes().to_vec()), Some(vec![1])),
                raw(12, Some(99i16.to_be_bytes().to_vec()), None),
                raw(13, Some(vec![0]), None),
                raw(14, None, Some(vec![1])),
                raw(15, Some(commit_key), None),
            ],
        };
        let mut warnings = Vec::new();
        let (rows, ignored, unknown) = rows_of(&read, &mut warnings);
        let offsets: Vec<i64> = rows.iter().map(|r| r.source_offset).collect();
        assert_eq!(offsets, [10, 15]);
        assert_eq!((ignored, unknown), (1, 3));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("__consumer_offsets[4]@12") && warnings[0].contains("type 99")
        );
        assert!(warnings[1].contains("@13"), "{warnings:?}");
        assert_eq!(
            SegmentManifest::key_of("log/date=x/partition=04/a-b.parquet"),
            "log/date=x/partition=04/a-b.json"
        );
    }
}
