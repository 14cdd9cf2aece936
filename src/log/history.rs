//! A group's history from the commit-log archive: every archived change of its committed
//! offsets, per partition, in the order the coordinator wrote them. Reading the archive (the
//! segments of the group's partition of `__consumer_offsets`, each verified against its
//! manifest) is here; turning rows into changes is pure ([`changes`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::follow::SegmentManifest;
use super::record::LogRecord;
use super::segment::{self, discontinuities, Discontinuity, Row};
use crate::error::{Error, Result};
use crate::snapshot::manifest::sha256_hex;
use crate::store::Store;

/// What happened to a partition's committed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Committed at or past the previous offset (or the first commit seen).
    Commit,
    /// Committed below the previous offset: records will be processed again.
    Rewind,
    /// The offset was deleted or expired (a tombstone).
    Deletion,
    /// The group was deleted: all its offsets are gone.
    GroupDeleted,
}

/// One change of one partition (for a group deletion: of the whole group, with no partition).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// When it was written (ms): the commit time, or a tombstone's record time.
    pub at: i64,
    pub kind: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// The offset committed; `None` for a deletion.
    pub offset: Option<i64>,
    /// The offset before this change, when there was one.
    pub previous: Option<i64>,
    /// `offset - previous`, when both exist.
    pub delta: Option<i64>,
    /// Where the record is in the source log (partition, offset).
    pub source: (i32, i64),
}

/// Which changes to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryFilter {
    pub topic: Option<String>,
    pub partition: Option<i32>,
    /// Only changes at or after / at or before these instants (ms).
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// The changes of `group` in rows of its source partition, in log order. Pure.
pub fn changes(group: &str, source_partition: i32, rows: &[Row], f: &HistoryFilter) -> Vec<Change> {
    let mut last: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut out = Vec::new();
    for row in rows {
        let change = match &row.record {
            LogRecord::OffsetCommit {
                group: g,
                topic,
                partition,
                value,
            } if g == group => {
                let key = (topic.clone(), *partition);
                let previous = last.get(&key).copied();
                let (kind, offset, at) = match value {
                    Some(v) => {
                        last.insert(key, v.offset);
                        let rewind = previous.is_some_and(|p| v.offset < p);
                        let kind = if rewind {
                            ChangeKind::Rewind
                        } else {
                            ChangeKind::Commit
                        };
                        (kind, Some(v.offset), v.commit_timestamp)
                    }
                    None => {
                        last.remove(&key);
                        (ChangeKind::Deletion, None, row.timestamp)
                    }
                };
                Change {
                    at,
                    kind,
                    topic: Some(topic.clone()),
                    partition: Some(*partition),
                    delta: offset.zip(previous).map(|(o, p)| o - p),
                    offset,
                    previous,
                    source: (source_partition, row.source_offset),
                }
            }
            LogRecord::GroupMetadata {
                group: g,
                deleted: true,
                ..
            } if g == group => {
                last.clear();
                Change {
                    at: row.timestamp,
                    kind: ChangeKind::GroupDeleted,
                    topic: None,
                    partition: None,
                    offset: None,
                    previous: None,
                    delta: None,
                    source: (source_partition, row.source_offset),
                }
            }
            _ => continue,
        };
        let wanted = f
            .topic
            .as_ref()
            .is_none_or(|t| change.topic.as_ref() == Some(t))
            && f.partition.is_none_or(|p| change.partition == Some(p))
            && f.since.is_none_or(|s| change.at >= s)
            && f.until.is_none_or(|u| change.at <= u);
        // A group deletion concerns every partition; it is listed unless a time excludes it.
        let group_wide = change.kind == ChangeKind::GroupDeleted
            && f.since.is_none_or(|s| change.at >= s)
            && f.until.is_none_or(|u| change.at <= u);
        if wanted || group_wide {
            out.push(change);
        }
    }
    out
}

/// A group's history, with the gaps in the archive of its partition.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub group: String,
    /// The partition of `__consumer_offsets` that holds the group's records.
    pub source_partition: i32,
    pub segments: usize,
    pub changes: Vec<Change>,
    /// Ranges of the source partition that no segment covers (or two do).
    pub discontinuities: Vec<Discontinuity>,
}

/// Every segment manifest of the archive, by key.
pub async fn manifests(store: &Store) -> Result<Vec<(String, SegmentManifest)>> {
    let mut out = Vec::new();
    for o in store.list("log").await? {
        if !o.key.ends_with(".json") {
            continue;
        }
        let bytes = store.get(&o.key).await?;
        let m: SegmentManifest = serde_json::from_slice(&bytes).map_err(|e| Error::Decode {
            path: o.key.clone(),
            detail: format!("not a segment manifest: {e}"),
        })?;
        out.push((o.key, m));
    }
    Ok(out)
}

/// Reads one segment and checks it against its manifest before decoding it.
pub async fn read_segment(
    store: &Store,
    manifest_key: &str,
    m: &SegmentManifest,
) -> Result<Vec<Row>> {
    let key = manifest_key.trim_end_matches(".json").to_string() + ".parquet";
    let bytes = store.get(&key).await?;
    let sha = sha256_hex(&bytes);
    if bytes.len() as u64 != m.size || sha != m.sha256 {
        return Err(Error::Integrity {
            id: key,
            problems: vec![format!(
                "{} bytes with SHA-256 {sha}, but the manifest says {} bytes with {}",
                bytes.len(),
                m.size,
                m.sha256
            )],
        });
    }
    let (meta, rows) = segment::decode(&key, bytes)?;
    if meta != m.meta {
        return Err(Error::Integrity {
            id: key,
            problems: vec!["the file's description differs from its manifest".into()],
        });
    }
    Ok(rows)
}

/// The history of `group` from the archive in `store`.
pub async fn history(store: &Store, group: &str, f: &HistoryFilter) -> Result<History> {
    let all = manifests(store).await?;
    let Some(count) = all.first().map(|(_, m)| m.meta.partitions) else {
        return Err(Error::NotFound {
            what: "commit-log archive",
            name: store.url().to_string(),
            hint: "; run offset-vault follow first".into(),
        });
    };
    let source_partition =
        crate::wire::offsets_partition(group, count as usize).unwrap_or(0) as i32;
    let mut mine: Vec<(String, SegmentManifest)> = all
        .into_iter()
        .filter(|(_, m)| m.meta.partition == source_partition)
        .collect();
    mine.sort_by_key(|(_, m)| m.meta.start);
    let metas: Vec<_> = mine.iter().map(|(_, m)| m.meta.clone()).collect();
    let mut rows = Vec::new();
    for (key, m) in &mine {
        rows.extend(read_segment(store, key, m).await?);
    }
    Ok(History {
        group: group.to_string(),
        source_partition,
        segments: mine.len(),
        changes: changes(group, source_partition, &rows, f),
        discontinuities: discontinuities(&metas),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::testing;

    fn row(at: i64, record: LogRecord) -> Row {
        Row {
            source_offset: at,
            timestamp: at,
            record,
        }
    }

    fn commit(group: &str, partition: i32, offset: i64, at: i64) -> Row {
        row(at, testing::commit(group, partition, offset, at))
    }

    fn tombstone(group: &str, partition: i32, at: i64) -> Row {
        row(at, testing::tombstone(group, partition))
    }

    #[test]
    fn commits_rewinds_deletions_and_group_deletions_in_log_order() {
        let rows = vec![
            commit("g", 0, 10, 1),
            commit("other", 0, 99, 2),
            commit("g", 0, 15, 3),
            commit("g", 0, 12, 4),
            tombstone("g", 0, 5),
            commit("g", 1, 3, 6),
            row(7, testing::group_deleted("g")),
            commit("g", 1, 1, 8),
        ];
        let all = changes("g", 4, &rows, &HistoryFilter::default());
        let seen: Vec<(i64, ChangeKind, Option<i64>, Option<i64>)> = all
            .iter()
            .map(|c| (c.at, c.kind, c.offset, c.delta))
            .collect();
        assert_eq!(
            seen,
            [
                (1, ChangeKind::Commit, Some(10), None),
                (3, ChangeKind::Commit, Some(15), Some(5)),
                (4, ChangeKind::Rewind, Some(12), Some(-3)),
                (5, ChangeKind::Deletion, None, None),
                (6, ChangeKind::Commit, Some(3), None),
                (7, ChangeKind::GroupDeleted, None, None),
                // After the group's deletion, a commit is a first commit again.
                (8, ChangeKind::Commit, Some(1), None),
            ]
        );
        assert_eq!(all[0].source, (4, 1));

        // (filter, instants listed)
        let cases = [
            (
                HistoryFilter {
                    partition: Some(1),
                    ..Default::default()
                },
                vec![6, 7, 8],
            ),
            (
                HistoryFilter {
                    since: Some(4),
                    until: Some(6),
                    ..Default::default()
                },
                vec![4, 5, 6],
            ),
            (
                HistoryFilter {
                    topic: Some("nope".into()),
                    ..Default::default()
                },
                vec![7],
            ),
        ];
        for (f, want) in cases {
            let got: Vec<i64> = changes("g", 4, &rows, &f).iter().map(|c| c.at).collect();
            assert_eq!(got, want, "{f:?}");
        }
    }
}
