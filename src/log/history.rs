//! A group's history from the commit-log archive: every archived change of its committed
//! offsets, per partition, in the order the coordinator wrote them. Reading the archive (the
//! segments of the group's partition of `__consumer_offsets`, each verified against its
//! manifest) is here; turning rows into changes is pure ([`changes`]).
//!
//! A commit that a restore or reset of this tool made (the same group, partition and offset as
//! its record, in the window of its commits) is of kind [`ChangeKind::Restore`]; a backward
//! move that none explains is a [`ChangeKind::Rewind`], flagged. A tombstone is a
//! [`ChangeKind::Deletion`]: the log writes the same record when an offset is deleted and when
//! it expires (`offsets.retention.minutes`), so the two cannot be told apart from it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::applied::{explain, Applied, AppliedRef, Committed};
use super::follow::SegmentManifest;
use super::record::LogRecord;
use super::segment::{discontinuities, Discontinuity, Row};
use crate::error::{Error, Result};
use crate::store::Store;

/// What happened to a partition's committed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Committed at or past the previous offset (or the first commit seen).
    Commit,
    /// Committed below the previous offset, and no restore or reset of this tool explains it:
    /// records will be processed again. Always flagged.
    Rewind,
    /// Committed by a restore or reset of this tool (backwards or not).
    Restore,
    /// The offset was deleted or expired (a tombstone; the log does not say which).
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
    /// A backward move that no restore or reset of this tool explains.
    pub flagged: bool,
    /// The restore or reset that made it (kind `restore`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<AppliedRef>,
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

/// The group's commits in `rows` (not its tombstones), with their row's index.
fn commits_of<'a>(group: &str, rows: &'a [Row]) -> Vec<Committed<'a>> {
    rows.iter()
        .enumerate()
        .filter_map(|(index, row)| match &row.record {
            LogRecord::OffsetCommit {
                group: g,
                topic,
                partition,
                value: Some(v),
            } if g == group => Some(Committed {
                index,
                topic,
                partition: *partition,
                offset: v.offset,
                at: v.commit_timestamp,
            }),
            _ => None,
        })
        .collect()
}

/// The changes of `group` in rows of its source partition, in log order, with the executions
/// of restore and reset that may explain some of its commits ([`explain`]). Pure.
pub fn changes(
    group: &str,
    source_partition: i32,
    rows: &[Row],
    applied: &[Applied],
    f: &HistoryFilter,
) -> Vec<Change> {
    let explained = explain(&commits_of(group, rows), applied);
    let mut last: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut out = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let by = explained.get(&index).map(|a| a.by.clone());
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
                        let kind = match (&by, rewind) {
                            (Some(_), _) => ChangeKind::Restore,
                            (None, true) => ChangeKind::Rewind,
                            (None, false) => ChangeKind::Commit,
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
                    flagged: kind == ChangeKind::Rewind,
                    by,
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
                    flagged: false,
                    by: None,
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

pub use super::archive::{manifests, read_segment};

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
    // Restores and resets of the archive's cluster explain some of the group's commits.
    let cluster_id = all
        .first()
        .map(|(_, m)| m.meta.cluster_id.clone())
        .unwrap_or_default();
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
    let applied = crate::log::applies::applied(store, group, &cluster_id).await?;
    Ok(History {
        group: group.to_string(),
        source_partition,
        segments: mine.len(),
        changes: changes(group, source_partition, &rows, &applied, f),
        discontinuities: discontinuities(&metas)
            .into_iter()
            .chain(
                metas
                    .iter()
                    .filter(|m| m.gap.is_some())
                    .map(|m| Discontinuity::Gap {
                        partition: m.partition,
                        from: m.start,
                        to: m.next,
                    }),
            )
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::applied::AppliedBy;
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
        let all = changes("g", 4, &rows, &[], &HistoryFilter::default());
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
            let got: Vec<i64> = changes("g", 4, &rows, &[], &f)
                .iter()
                .map(|c| c.at)
                .collect();
            assert_eq!(got, want, "{f:?}");
        }
    }

    fn applied(command: AppliedBy, from: i64, to: i64, offsets: &[(i32, i64)]) -> Applied {
        Applied {
            by: AppliedRef {
                command,
                record: format!("{}-{from}", command.as_str()),
                snapshot: "s".into(),
                undo_snapshot: Some("u".into()),
            },
            from,
            to,
            offsets: offsets
                .iter()
                .map(|(p, o)| (("t".into(), *p), *o))
                .collect(),
        }
    }

    #[test]
    fn commits_a_restore_or_reset_made_are_restores_and_only_other_rewinds_are_flagged() {
        let rows = vec![
            commit("g", 0, 10, 1_000),
            commit("g", 1, 20, 1_000),
            // A restore back to 4 and 20 (unchanged), inside its window.
            commit("g", 0, 4, 2_000),
            commit("g", 1, 20, 2_001),
            commit("g", 0, 12, 3_000),
            // A rewind by hand, to the offset the restore set, long after it.
            commit("g", 0, 4, 200_000),
            // A reset forward, then a rewind by hand in its window but to another offset.
            commit("g", 1, 30, 300_000),
            commit("g", 1, 25, 300_010),
            // Another group's commit of the same offset in the window: not the group's.
            commit("other", 0, 4, 2_000),
        ];
        let executions = [
            applied(AppliedBy::Restore, 1_990, 2_010, &[(0, 4), (1, 20)]),
            applied(AppliedBy::Reset, 299_990, 300_020, &[(1, 30)]),
        ];
        // (at, partition, kind, flagged, the command that made it)
        type Seen = (i64, Option<i32>, ChangeKind, bool, Option<AppliedBy>);
        let want: Vec<Seen> = vec![
            (1_000, Some(0), ChangeKind::Commit, false, None),
            (1_000, Some(1), ChangeKind::Commit, false, None),
            (
                2_000,
                Some(0),
                ChangeKind::Restore,
                false,
                Some(AppliedBy::Restore),
            ),
            (
                2_001,
                Some(1),
                ChangeKind::Restore,
                false,
                Some(AppliedBy::Restore),
            ),
            (3_000, Some(0), ChangeKind::Commit, false, None),
            (200_000, Some(0), ChangeKind::Rewind, true, None),
            (
                300_000,
                Some(1),
                ChangeKind::Restore,
                false,
                Some(AppliedBy::Reset),
            ),
            (300_010, Some(1), ChangeKind::Rewind, true, None),
        ];
        // (executions known, what is listed): without the records every backward move is a
        // flagged rewind, as before.
        let without: Vec<Seen> = want
            .iter()
            .map(|&(at, p, kind, _, _)| {
                let kind = match (at, kind) {
                    (2_000, _) => ChangeKind::Rewind,
                    (_, ChangeKind::Restore) => ChangeKind::Commit,
                    (_, k) => k,
                };
                (at, p, kind, kind == ChangeKind::Rewind, None)
            })
            .collect();
        for (known, want) in [(&executions[..], want), (&[][..], without)] {
            let got: Vec<Seen> = changes("g", 0, &rows, known, &HistoryFilter::default())
                .iter()
                .map(|c| {
                    let by = c.by.as_ref().map(|b| b.command);
                    (c.at, c.partition, c.kind, c.flagged, by)
                })
                .collect();
            assert_eq!(got, want, "{} execution(s)", known.len());
        }
        let restored = &changes("g", 0, &rows, &executions, &HistoryFilter::default())[2];
        assert_eq!(
            (
                restored.previous,
                restored.delta,
                restored.by.as_ref().map(|b| b.record.as_str())
            ),
            (Some(10), Some(-6), Some("restore-1990"))
        );
    }
}
