//! The restores and resets of this tool, as `history` sees them: which offsets an execution
//! committed for a group and in what time window. With them, a commit that offset-vault made
//! is told apart from anybody else's, and only a rewind that none of them explains is flagged.
//! Pure; the records these are read from are [`crate::log::applies`]'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How far apart the clock of the host that ran the restore and the broker's may be (ms). The
/// window of an execution is measured on the first; a commit's time is the broker's.
pub const CLOCK_SKEW_MS: i64 = 30_000;

/// Which command made the commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppliedBy {
    Restore,
    Reset,
}

impl AppliedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            AppliedBy::Restore => "restore",
            AppliedBy::Reset => "reset",
        }
    }
}

/// The execution a change was made by, as listed with the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedRef {
    pub command: AppliedBy,
    /// The id of the execution's record in the store.
    pub record: String,
    /// The snapshot it restored (for a reset: the reset's label).
    pub snapshot: String,
    /// The undo (or pre-reset) snapshot that puts the offsets back as they were before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undo_snapshot: Option<String>,
}

/// One execution of `restore` or `reset` for one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub by: AppliedRef,
    /// The window of its commits (ms, the executing host's clock): from just before the first
    /// commit was sent to just after the last one was answered.
    pub from: i64,
    pub to: i64,
    /// The offset it committed, by (topic, partition).
    pub offsets: BTreeMap<(String, i32), i64>,
}

impl Applied {
    /// How far `at` is outside the window (0 inside it), or `None` past the clock tolerance.
    fn distance(&self, at: i64) -> Option<i64> {
        let d = (self.from - at).max(at - self.to).max(0);
        (d <= CLOCK_SKEW_MS).then_some(d)
    }
}

/// A commit of the group: where it is in the rows, its partition, offset and time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed<'a> {
    pub index: usize,
    pub topic: &'a str,
    pub partition: i32,
    pub offset: i64,
    pub at: i64,
}

/// Which commits the executions made: for every execution and partition, the commit of the
/// same offset nearest to its window (within [`CLOCK_SKEW_MS`]; the earlier one on a tie).
/// Each execution explains at most one commit per partition, and each commit is explained
/// by at most one execution (the first in `applied` that claims it). Pure.
pub fn explain<'a>(
    commits: &[Committed<'_>],
    applied: &'a [Applied],
) -> BTreeMap<usize, &'a Applied> {
    let mut out: BTreeMap<usize, &'a Applied> = BTreeMap::new();
    for a in applied {
        for ((topic, partition), offset) in &a.offsets {
            let nearest = commits
                .iter()
                .filter(|c| c.topic == topic && c.partition == *partition && c.offset == *offset)
                .filter(|c| !out.contains_key(&c.index))
                .filter_map(|c| a.distance(c.at).map(|d| (d, c.index)))
                .min();
            if let Some((_, index)) = nearest {
                out.insert(index, a);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(from: i64, to: i64, offsets: &[(i32, i64)]) -> Applied {
        Applied {
            by: AppliedRef {
                command: AppliedBy::Restore,
                record: format!("r{from}"),
                snapshot: "s".into(),
                undo_snapshot: None,
            },
            from,
            to,
            offsets: offsets
                .iter()
                .map(|(p, o)| (("t".into(), *p), *o))
                .collect(),
        }
    }

    fn commit(index: usize, partition: i32, offset: i64, at: i64) -> Committed<'static> {
        Committed {
            index,
            topic: "t",
            partition,
            offset,
            at,
        }
    }

    #[test]
    fn an_execution_explains_the_commit_of_its_offset_nearest_its_window() {
        let far = CLOCK_SKEW_MS + 1;
        // (commits, executions, the commits explained: index -> the execution's start)
        type Case = (Vec<Committed<'static>>, Vec<Applied>, Vec<(usize, i64)>);
        let cases: Vec<Case> = vec![
            // Inside the window, the same offset.
            (
                vec![commit(0, 0, 5, 100)],
                vec![applied(90, 110, &[(0, 5)])],
                vec![(0, 90)],
            ),
            // Another offset, or another partition: not the execution's.
            (
                vec![commit(0, 0, 6, 100)],
                vec![applied(90, 110, &[(0, 5)])],
                vec![],
            ),
            (
                vec![commit(0, 1, 5, 100)],
                vec![applied(90, 110, &[(0, 5)])],
                vec![],
            ),
            // Outside the window but within the clock tolerance, on either side.
            (
                vec![
                    commit(0, 0, 5, 90 - CLOCK_SKEW_MS),
                    commit(1, 1, 7, 110 + CLOCK_SKEW_MS),
                ],
                vec![applied(90, 110, &[(0, 5), (1, 7)])],
                vec![(0, 90), (1, 90)],
            ),
            // Past it: a commit by someone else.
            (
                vec![commit(0, 0, 5, 90 - far), commit(1, 0, 5, 110 + far)],
                vec![applied(90, 110, &[(0, 5)])],
                vec![],
            ),
            // Two commits of the offset: the one in the window, not the earlier one nearby.
            (
                vec![commit(0, 0, 5, 80), commit(1, 0, 5, 100)],
                vec![applied(90, 110, &[(0, 5)])],
                vec![(1, 90)],
            ),
            // Two executions of the same offset: one commit each.
            (
                vec![commit(0, 0, 5, 100), commit(1, 0, 5, 200)],
                vec![applied(90, 110, &[(0, 5)]), applied(190, 210, &[(0, 5)])],
                vec![(0, 90), (1, 190)],
            ),
            // One commit, two executions that could claim it: the first keeps it.
            (
                vec![commit(0, 0, 5, 100)],
                vec![applied(90, 110, &[(0, 5)]), applied(95, 120, &[(0, 5)])],
                vec![(0, 90)],
            ),
        ];
        for (commits, executions, want) in cases {
            let got: Vec<(usize, i64)> = explain(&commits, &executions)
                .into_iter()
                .map(|(i, a)| (i, a.from))
                .collect();
            assert_eq!(got, want, "{commits:?} {executions:?}");
        }
    }
}
