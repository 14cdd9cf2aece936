//! Replaying the commit log to an instant. Pure: a base (the committed offsets at some time, as
//! a snapshot holds them) and the decoded records after it, in log order, in; the committed
//! offsets at the instant out.
//!
//! A group's records all live in one partition of `__consumer_offsets`, in the order the
//! coordinator wrote them, so replaying one group is replaying one partition's records in
//! offset order. An offset commit sets its partition's position; an offset tombstone (deletion
//! or expiry) removes it; a group's metadata tombstone (the group was deleted) removes all of
//! the group's positions. A record belongs to the instant it was written: a commit's
//! `commitTimestamp`, a tombstone's record timestamp.

use std::collections::BTreeMap;

use super::record::{CommitValue, LogRecord};

/// (group, topic, partition).
pub type Key = (String, String, i32);

/// A committed position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub offset: i64,
    pub leader_epoch: Option<i32>,
    pub metadata: String,
    pub topic_id: Option<String>,
    /// When it was committed (ms since the epoch); `None` when it comes from the base.
    pub committed_at: Option<i64>,
}

impl From<&CommitValue> for Position {
    fn from(v: &CommitValue) -> Self {
        Position {
            offset: v.offset,
            leader_epoch: v.leader_epoch,
            metadata: v.metadata.clone(),
            topic_id: v.topic_id.clone(),
            committed_at: Some(v.commit_timestamp),
        }
    }
}

/// One decoded record with the time it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed {
    /// The commit time of a commit, the record timestamp of a tombstone (ms).
    pub at: i64,
    pub record: LogRecord,
}

impl Timed {
    /// A decoded record and its record timestamp (ms): a commit belongs to its commit time.
    pub fn new(record: LogRecord, record_timestamp: i64) -> Self {
        let at = match &record {
            LogRecord::OffsetCommit { value: Some(v), .. } => v.commit_timestamp,
            _ => record_timestamp,
        };
        Timed { at, record }
    }
}

/// The positions at an instant.
pub type State = BTreeMap<Key, Position>;

/// Applies one record to the positions.
pub fn apply(state: &mut State, record: &LogRecord) {
    match record {
        LogRecord::OffsetCommit {
            group,
            topic,
            partition,
            value,
        } => {
            let key = (group.clone(), topic.clone(), *partition);
            match value {
                Some(v) => {
                    state.insert(key, v.into());
                }
                None => {
                    state.remove(&key);
                }
            }
        }
        LogRecord::GroupMetadata {
            group,
            deleted: true,
            ..
        } => state.retain(|(g, _, _), _| g != group),
        LogRecord::GroupMetadata { .. }
        | LogRecord::SourceOffset { .. }
        | LogRecord::Ignored { .. }
        | LogRecord::Unknown { .. } => {}
    }
}

/// The positions at `at` (ms): the base, then every record in log order that belongs to an
/// instant at or before `at`. The records must all come after the base.
pub fn state_at<'a>(base: State, records: impl IntoIterator<Item = &'a Timed>, at: i64) -> State {
    let mut state = base;
    for r in records.into_iter().filter(|r| r.at <= at) {
        apply(&mut state, &r.record);
    }
    state
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::testing;
    use super::*;

    fn commit(group: &str, partition: i32, offset: i64, at: i64) -> Timed {
        Timed::new(testing::commit(group, partition, offset, at), at)
    }

    fn tombstone(group: &str, partition: i32, at: i64) -> Timed {
        Timed::new(testing::tombstone(group, partition), at)
    }

    fn group_deleted(group: &str, at: i64) -> Timed {
        Timed::new(testing::group_deleted(group), at)
    }

    fn offsets(state: &State) -> Vec<(String, i32, i64)> {
        state
            .iter()
            .map(|((g, _, p), pos)| (g.clone(), *p, pos.offset))
            .collect()
    }

    #[test]
    fn commits_deletions_and_group_deletions_at_their_instants() {
        let log = [
            commit("a", 0, 10, 100),
            commit("b", 0, 5, 110),
            commit("a", 0, 20, 200),
            tombstone("a", 0, 300),
            commit("a", 1, 7, 310),
            group_deleted("b", 400),
        ];
        // (instant, positions then)
        type Positions = Vec<(&'static str, i32, i64)>;
        let cases: [(i64, Positions); 7] = [
            (99, vec![]),
            (100, vec![("a", 0, 10)]),
            (199, vec![("a", 0, 10), ("b", 0, 5)]),
            (200, vec![("a", 0, 20), ("b", 0, 5)]),
            (305, vec![("b", 0, 5)]),
            (310, vec![("a", 1, 7), ("b", 0, 5)]),
            (400, vec![("a", 1, 7)]),
        ];
        for (at, want) in cases {
            let want: Vec<(String, i32, i64)> =
                want.into_iter().map(|(g, p, o)| (g.into(), p, o)).collect();
            assert_eq!(offsets(&state_at(State::new(), &log, at)), want, "at {at}");
        }
        let s = state_at(State::new(), &log, 200);
        assert_eq!(s[&("a".into(), "t".into(), 0)].committed_at, Some(200));
    }

    /// One step of a random history: (which group, which partition, what, time advance).
    fn step() -> impl Strategy<Value = (u8, u8, u8, i64)> {
        (0..3u8, 0..3u8, 0..10u8, 0..3i64)
    }

    fn history(steps: &[(u8, u8, u8, i64)]) -> Vec<Timed> {
        let mut t = 1000;
        steps
            .iter()
            .enumerate()
            .map(|(i, (g, p, what, dt))| {
                t += dt;
                let group = format!("g{g}");
                match what {
                    0 => tombstone(&group, i32::from(*p), t),
                    1 => group_deleted(&group, t),
                    _ => commit(&group, i32::from(*p), i as i64, t),
                }
            })
            .collect()
    }

    /// The straightforward model: walk the whole history from nothing, keep the latest value.
    fn model(log: &[Timed], at: i64) -> BTreeMap<(String, i32), i64> {
        let mut m: BTreeMap<(String, i32), i64> = BTreeMap::new();
        for r in log.iter().filter(|r| r.at <= at) {
            match &r.record {
                LogRecord::OffsetCommit {
                    group,
                    partition,
                    value: Some(v),
                    ..
                } => {
                    m.insert((group.clone(), *partition), v.offset);
                }
                LogRecord::OffsetCommit {
                    group, partition, ..
                } => {
                    m.remove(&(group.clone(), *partition));
                }
                LogRecord::GroupMetadata { group, .. } => m.retain(|(g, _), _| g != group),
                _ => {}
            }
        }
        m
    }

    proptest! {
        /// A base taken at any instant plus the records after it gives, at every later instant,
        /// what replaying the whole history from nothing gives.
        #[test]
        fn base_plus_later_records_equals_the_whole_history(
            steps in proptest::collection::vec(step(), 0..60),
            cut in 0usize..60,
        ) {
            let log = history(&steps);
            let cut = cut.min(log.len());
            let base_at = log.get(cut.wrapping_sub(1)).map_or(0, |r| r.at);
            // The base holds what the records up to the cut left; the rest come after it.
            let (before, after) = log.split_at(cut);
            let base = state_at(State::new(), before, i64::MAX);
            let end = log.last().map_or(1000, |r| r.at) + 1;
            for at in base_at..=end {
                let got: BTreeMap<(String, i32), i64> = state_at(base.clone(), after, at)
                    .into_iter()
                    .map(|((g, _, p), pos)| ((g, p), pos.offset))
                    .collect();
                prop_assert_eq!(got, model(&log, at), "at {}", at);
            }
        }
    }
}
