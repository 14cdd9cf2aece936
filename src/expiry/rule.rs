//! When a group's committed offsets expire, from what `__consumer_offsets` says of it (pure).
//!
//! The broker's group coordinator (Kafka 4's `OffsetMetadataManager.expireOffsets` with each
//! group's `offsetExpirationCondition`) removes a committed offset when
//! - it was committed with an explicit expire timestamp (offset commit value version 1, written
//!   by clients of Kafka 2.0 and older) and that time has passed; otherwise
//! - `offsets.retention.minutes` have passed since its base time, where the base time is, for an
//!   Empty classic group with a protocol type (a consumer group of the classic protocol), the
//!   instant the group became Empty (`currentStateTimestamp` of its metadata record, the same for
//!   all its offsets), and for every other group (a "simple" group that only ever committed
//!   offsets, a consumer group of KIP-848, a streams group) each offset's own commit time.
//!
//! So a group starts losing offsets at the earliest of those per-offset instants; that is the
//! group's `expires_at` here. It is never later than the broker's, so the guard errs early: for a
//! classic group whose metadata record has no state timestamp (value versions 0 and 1) the commit
//! time is used, as the broker does.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::log::record::{CommitValue, GroupKind, LogRecord};

/// What the log says of one group: its live commits (newest per partition) and, for a classic
/// group, its protocol type and the instant it entered its current state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFacts {
    /// (topic, partition) to the newest commit's (commit time, explicit expire time), ms.
    pub commits: BTreeMap<(String, i32), (i64, Option<i64>)>,
    /// From the newest classic metadata record: the protocol type ("" for a simple group).
    pub protocol_type: Option<String>,
    /// From the newest classic metadata record: `currentStateTimestamp` (ms).
    pub state_since: Option<i64>,
}

impl LogFacts {
    /// Applies one record of the group, in log order. `state_since` is the decoded
    /// `currentStateTimestamp` of a classic metadata record (see
    /// [`crate::log::record::classic_state_timestamp`]).
    pub fn apply(&mut self, record: &LogRecord, state_since: Option<i64>) {
        match record {
            LogRecord::OffsetCommit {
                topic,
                partition,
                value,
                ..
            } => {
                let key = (topic.clone(), *partition);
                match value {
                    Some(CommitValue {
                        commit_timestamp,
                        expire_timestamp,
                        ..
                    }) => {
                        self.commits
                            .insert(key, (*commit_timestamp, *expire_timestamp));
                    }
                    None => {
                        self.commits.remove(&key);
                    }
                }
            }
            LogRecord::GroupMetadata { deleted: true, .. } => *self = LogFacts::default(),
            LogRecord::GroupMetadata {
                kind: GroupKind::Classic { protocol_type },
                ..
            } => {
                self.protocol_type = protocol_type.clone();
                self.state_since = state_since;
            }
            _ => {}
        }
    }
}

/// What a group's `expires_at` is counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The instant the classic group became Empty (its metadata record's state timestamp).
    EmptySince,
    /// The commit time of the offset that expires first.
    CommitTime,
    /// An offset's explicit expire timestamp (commit value version 1).
    ExpireTimestamp,
}

/// When a group's first offset expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    /// The newest commit time of the group's live offsets (ms).
    pub newest_commit: i64,
    /// When the first of its offsets expires (ms).
    pub expires_at: i64,
    pub basis: Basis,
}

/// When the first of `offsets` (commit time, explicit expire time) expires, for an Empty group;
/// `classic_since` is the instant an Empty classic group with a protocol type became Empty
/// (`None` for every other group, or when the record does not say). `None` without offsets.
pub fn expiry(
    offsets: &[(i64, Option<i64>)],
    classic_since: Option<i64>,
    retention_ms: i64,
) -> Option<Expiry> {
    let newest_commit = offsets.iter().map(|(c, _)| *c).max()?;
    offsets
        .iter()
        .map(|&(commit, expire)| match (expire, classic_since) {
            (Some(at), _) => (at, Basis::ExpireTimestamp),
            (None, Some(since)) => (since.saturating_add(retention_ms), Basis::EmptySince),
            (None, None) => (commit.saturating_add(retention_ms), Basis::CommitTime),
        })
        .min_by_key(|(at, _)| *at)
        .map(|(expires_at, basis)| Expiry {
            newest_commit,
            expires_at,
            basis,
        })
}

/// The guard's rule: a group is near expiry when its first offset expires within `margin` of
/// `now` (or already should have).
pub fn near_expiry(expires_at: i64, margin_ms: i64, now: i64) -> bool {
    expires_at.saturating_sub(margin_ms) <= now
}

/// Whether the broker counts an Empty group's offsets from when it became Empty: a classic group
/// with a protocol type (a simple group, with none, counts from each commit).
pub fn counts_from_empty(protocol_type: Option<&str>) -> bool {
    protocol_type.is_some_and(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::testing;

    const MIN: i64 = 60_000;

    #[test]
    fn the_first_offset_to_go_decides_when_the_group_expires() {
        let r = 10 * MIN;
        // (offsets, became Empty at, newest, expires at, basis)
        type Offsets = Vec<(i64, Option<i64>)>;
        let cases: Vec<(Offsets, Option<i64>, i64, i64, Basis)> = vec![
            // Each offset from its own commit: the oldest goes first.
            (
                vec![(100, None), (500, None)],
                None,
                500,
                100 + r,
                Basis::CommitTime,
            ),
            // A classic group: all from when it became Empty, before or after the commits.
            (
                vec![(100, None), (500, None)],
                Some(700),
                500,
                700 + r,
                Basis::EmptySince,
            ),
            (
                vec![(100, None), (500, None)],
                Some(50),
                500,
                50 + r,
                Basis::EmptySince,
            ),
            // An explicit expire timestamp wins when it comes first, and only then.
            (
                vec![(100, Some(200)), (500, None)],
                None,
                500,
                200,
                Basis::ExpireTimestamp,
            ),
            (
                vec![(100, Some(100 + 2 * r)), (500, None)],
                None,
                500,
                500 + r,
                Basis::CommitTime,
            ),
        ];
        for (offsets, since, newest, at, basis) in cases {
            let e = expiry(&offsets, since, r).unwrap();
            assert_eq!(
                (e.newest_commit, e.expires_at, e.basis),
                (newest, at, basis),
                "{offsets:?} {since:?}"
            );
        }
        assert_eq!(expiry(&[], Some(1), r), None);
    }

    #[test]
    fn a_group_is_near_expiry_within_the_margin_and_after() {
        // (expires at, margin, now, near)
        let cases = [
            (1000, 0, 999, false),
            (1000, 0, 1000, true),
            (1000, 0, 5000, true),
            (1000, 100, 899, false),
            (1000, 100, 900, true),
            (i64::MAX, 100, 0, false),
            (0, i64::MAX, i64::MIN + 1, true),
            (0, i64::MAX, i64::MIN, false),
        ];
        for (at, margin, now, want) in cases {
            assert_eq!(near_expiry(at, margin, now), want, "{at} {margin} {now}");
        }
    }

    #[test]
    fn only_classic_groups_with_a_protocol_count_from_when_they_became_empty() {
        assert!(counts_from_empty(Some("consumer")));
        assert!(counts_from_empty(Some("connect")));
        assert!(!counts_from_empty(Some("")));
        assert!(!counts_from_empty(None));
    }

    #[test]
    fn the_log_leaves_the_newest_commit_of_each_live_offset_and_the_groups_state_time() {
        let classic = |protocol: &str| LogRecord::GroupMetadata {
            group: "g".into(),
            kind: GroupKind::Classic {
                protocol_type: Some(protocol.into()),
            },
            deleted: false,
        };
        let mut f = LogFacts::default();
        f.apply(&testing::commit("g", 0, 5, 100), None);
        f.apply(&testing::commit("g", 1, 5, 110), None);
        f.apply(&testing::commit("g", 0, 9, 120), None);
        f.apply(&classic("consumer"), Some(130));
        f.apply(&testing::tombstone("g", 1), None);
        assert_eq!(
            f,
            LogFacts {
                commits: BTreeMap::from([(("t".into(), 0), (120, None))]),
                protocol_type: Some("consumer".into()),
                state_since: Some(130),
            }
        );
        // A deleted group starts over; a later commit is all that is known of it then.
        f.apply(&testing::group_deleted("g"), None);
        f.apply(&testing::commit("g", 2, 1, 200), None);
        assert_eq!(
            f,
            LogFacts {
                commits: BTreeMap::from([(("t".into(), 2), (200, None))]),
                ..Default::default()
            }
        );
        // Records of no interest change nothing.
        f.apply(&LogRecord::Ignored { record_type: 5 }, None);
        assert_eq!(f.commits.len(), 1);
    }
}
