//! The commit log of `__consumer_offsets`: decoding its records ([`record`]), replaying them
//! onto a base to an instant ([`replay`]), and the segments that archive them as Parquet, with
//! the rules for gaps and overlaps ([`segment`]); all pure. The follower builds on these, and
//! so does the reconstruction of the offsets at an instant that every `--at` reads ([`at`]).
//! A group's archived history is drawn as SVG or PNG by [`plot`].

pub mod applied;
pub mod applies;
pub mod archive;
pub mod at;
pub mod base;
mod bins;
pub mod coverage;
pub mod follow;
pub mod history;
pub mod instant;
pub mod plot;
mod plot_text;
pub mod progress;
pub mod record;
pub mod replay;
pub mod segment;
pub mod verify;

/// Records for the tests of this module's parts.
#[cfg(test)]
pub(crate) mod testing {
    use super::record::{CommitValue, GroupKind, LogRecord};

    /// A version-4 commit of `group` on topic `t`, written at `at`.
    pub fn commit(group: &str, partition: i32, offset: i64, at: i64) -> LogRecord {
        LogRecord::OffsetCommit {
            group: group.into(),
            topic: "t".into(),
            partition,
            value: Some(CommitValue {
                version: 4,
                offset,
                leader_epoch: None,
                metadata: String::new(),
                commit_timestamp: at,
                expire_timestamp: None,
                topic_id: None,
            }),
        }
    }

    /// The tombstone of `group`'s offset on `t[partition]`.
    pub fn tombstone(group: &str, partition: i32) -> LogRecord {
        LogRecord::OffsetCommit {
            group: group.into(),
            topic: "t".into(),
            partition,
            value: None,
        }
    }

    /// The tombstone of a classic group's metadata: the group was deleted.
    pub fn group_deleted(group: &str) -> LogRecord {
        LogRecord::GroupMetadata {
            group: group.into(),
            kind: GroupKind::Classic {
                protocol_type: None,
            },
            deleted: true,
        }
    }
}
