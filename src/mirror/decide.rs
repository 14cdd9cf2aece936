//! Choosing a partition's offset on the target cluster from what was found there: pure, so
//! every case is a table row in the tests.
//!
//! The snapshot holds, per partition, the group's offset `U` on the source cluster and, with
//! `--with-timestamps`, the timestamp and fingerprint of the last record the group consumed
//! (the record at `U - 1`). On the target, that record is looked for in three ways:
//! - **identity**: the record at `U - 1` on the target is that record (same fingerprint): the
//!   replicator kept offsets, and `U` is the answer.
//! - **timestamp**: the records on the target with that timestamp are read, and the one with
//!   that fingerprint is the last consumed record; the answer is the next offset. Without a
//!   fingerprint, one record at that time is taken to be it, and of several the first is used
//!   (the others are processed again, none skipped).
//! - **checkpoints**: MirrorMaker 2's own translation, from its checkpoint of the group when it
//!   is at `U`, else from its offset syncs (conservative by design).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `--translate`: how offsets are carried to another cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Identity if confirmed, else timestamp and record match, else checkpoints, else refused.
    #[default]
    Auto,
    Identity,
    Timestamp,
    Checkpoints,
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Method::Auto),
            "identity" => Ok(Method::Identity),
            "timestamp" => Ok(Method::Timestamp),
            "checkpoints" => Ok(Method::Checkpoints),
            other => Err(Error::usage(format!(
                "--translate {other:?}: expected auto, identity, timestamp or checkpoints"
            ))),
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Auto => "auto",
            Method::Identity => "identity",
            Method::Timestamp => "timestamp",
            Method::Checkpoints => "checkpoints",
        })
    }
}

/// The method a partition's target came from, as the plan shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Used {
    Identity,
    Timestamp,
    Checkpoints,
    /// Not translated: the group had consumed nothing (offset 0), or the partition is refused.
    None,
}

/// How a partition's offset was carried to the target cluster, shown in the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Translation {
    pub method: Used,
    /// What the target is based on, in words.
    pub basis: String,
    /// Records on the target with the last consumed record's timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_time: Option<i64>,
    /// MirrorMaker 2's translation of the snapshot's offset (its checkpoint or offset syncs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<i64>,
    /// Target minus checkpoint: the records MirrorMaker 2's answer would process again (negative:
    /// skip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_repeats: Option<i64>,
}

/// What the record at `U - 1` on the target showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityCheck {
    /// Same fingerprint (and timestamp).
    Confirmed,
    /// Another record is there (or none: the target's log does not hold that offset).
    Differs(String),
    /// Nothing to compare with: the snapshot has no fingerprint, or the record was not read.
    Unchecked(String),
}

/// What the target holds at the last consumed record's timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByTime {
    /// The record was found by its fingerprint at this offset; `same_time` records share its
    /// timestamp; `identical` of them carry the same bytes (the first is taken).
    Matched {
        offset: i64,
        same_time: i64,
        identical: i64,
    },
    /// No fingerprint to match: `same_time` records at that time starting at `first`.
    Unmatched { first: i64, same_time: i64 },
    /// The last consumed record is not on the target (a gap, or not replicated yet); `next` is
    /// the first record after its time.
    Missing { next: i64, why: String },
    /// The last consumed record is older than the target's first record: the target's log
    /// starts after it (retention, or a replica started later), so the target is before
    /// log-start `start`.
    BeforeStart { start: i64, why: String },
    /// Not looked up, and why.
    NotLooked(String),
}

/// MirrorMaker 2's answer for the partition, and what it is based on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorAnswer {
    pub offset: i64,
    pub basis: String,
}

/// Everything found about one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The group's offset on the source cluster.
    pub source_offset: i64,
    pub identity: IdentityCheck,
    pub by_time: ByTime,
    pub checkpoint: Option<MirrorAnswer>,
    /// The source partition's log start when the snapshot was taken (or the targets computed).
    pub source_log_start: Option<i64>,
    /// The target partition's log start now.
    pub target_log_start: Option<i64>,
}

/// A partition's outcome: its target, or why it has none (with the offset it may be clamped
/// to, on request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Target {
        offset: i64,
        translation: Translation,
    },
    Refused {
        why: String,
        clamp_to: Option<i64>,
        translation: Translation,
    },
    /// The target is before this cluster's log start `start`: out of range, clamped to it only
    /// on request.
    BeforeStart {
        start: i64,
        why: String,
        translation: Translation,
    },
}

impl Decision {
    pub fn translation(&self) -> &Translation {
        match self {
            Decision::Target { translation, .. }
            | Decision::Refused { translation, .. }
            | Decision::BeforeStart { translation, .. } => translation,
        }
    }
}

/// Chooses the partition's target by `method` from the facts.
pub fn decide(method: Method, f: &Facts) -> Decision {
    let checkpoint = f.checkpoint.as_ref().map(|c| c.offset);
    let translation = |method: Used, basis: String, target: Option<i64>| Translation {
        method,
        basis,
        same_time: match f.by_time {
            ByTime::Matched { same_time, .. } | ByTime::Unmatched { same_time, .. } => {
                Some(same_time)
            }
            _ => None,
        },
        checkpoint,
        checkpoint_repeats: target.zip(checkpoint).map(|(t, c)| t - c),
    };
    let target = |method: Used, offset: i64, basis: String| Decision::Target {
        offset,
        translation: translation(method, basis, Some(offset)),
    };
    let refused = |why: String, clamp_to: Option<i64>| Decision::Refused {
        translation: translation(Used::None, why.clone(), None),
        why,
        clamp_to,
    };
    let u = f.source_offset;
    let identity = || match &f.identity {
        IdentityCheck::Confirmed => Some(target(
            Used::Identity,
            u,
            format!(
                "the record at offset {} is the last one consumed (same fingerprint)",
                u - 1
            ),
        )),
        _ => None,
    };
    let by_time = || {
        match &f.by_time {
        ByTime::Matched {
            offset,
            same_time,
            identical,
        } => {
            let mut basis = format!(
                "last consumed record found by timestamp and fingerprint at offset {offset}"
            );
            if *same_time > 1 {
                basis.push_str(&format!(" ({same_time} records share that time)"));
            }
            if *identical > 1 {
                basis.push_str(&format!(
                    "; {identical} identical records there, the first is taken: the rest are processed again"
                ));
            }
            Some(target(Used::Timestamp, offset + 1, basis))
        }
        ByTime::Unmatched { first, same_time } if *same_time == 1 => Some(target(
            Used::Timestamp,
            first + 1,
            format!("the one record at that time, offset {first} (no fingerprint to confirm it)"),
        )),
        ByTime::Unmatched { first, same_time } => Some(target(
            Used::Timestamp,
            *first,
            format!(
                "{same_time} records share that time and the snapshot has no fingerprint to tell them apart: the first, offset {first}, is used, so they are processed again"
            ),
        )),
        _ => None,
    }
    };
    let before_start = || match &f.by_time {
        ByTime::BeforeStart { start, why } => Some(Decision::BeforeStart {
            start: *start,
            why: why.clone(),
            translation: translation(Used::Timestamp, why.clone(), None),
        }),
        _ => None,
    };
    let mirror = || {
        f.checkpoint
            .as_ref()
            .map(|c| target(Used::Checkpoints, c.offset, c.basis.clone()))
    };
    let gap = || {
        match &f.by_time {
        ByTime::Missing { next, why } => Some(refused(
            format!("{why}; pass --on-out-of-range clamp to start at offset {next}, the first record after that time"),
            Some(*next),
        )),
        _ => None,
    }
    };
    let start = f.target_log_start.unwrap_or(0);
    // Nothing before the offset on the source: it is the beginning, on the target too.
    let beginning = |why: &str| {
        target(
            Used::None,
            start,
            format!("{why}: the beginning here, this cluster's log start {start}"),
        )
    };
    if u == 0 {
        return beginning("offset 0, nothing before it on the source");
    }
    let at_source_start = f.source_log_start == Some(u);
    let source_start =
        || at_source_start.then(|| beginning(&format!("offset {u} was the source's log start")));
    let decided = match method {
        Method::Identity => match &f.identity {
            IdentityCheck::Confirmed => identity(),
            IdentityCheck::Differs(what) => Some(refused(
                format!("--translate identity: {what}; the replicator did not keep offsets here, use --translate timestamp"),
                None,
            )),
            IdentityCheck::Unchecked(why) => Some(target(
                Used::Identity,
                u,
                format!("the same offset, not confirmed: {why}"),
            )),
        },
        Method::Timestamp => by_time()
            .or_else(before_start)
            .or_else(gap)
            .or_else(source_start)
            .or_else(|| match &f.by_time {
            ByTime::NotLooked(why) => Some(refused(format!("--translate timestamp: {why}"), None)),
            _ => None,
        }),
        Method::Checkpoints => mirror().or_else(|| {
            Some(refused(
                "--translate checkpoints: MirrorMaker 2 has no checkpoint or offset sync for this partition"
                    .into(),
                None,
            ))
        }),
        Method::Auto => identity()
            .or_else(by_time)
            .or_else(before_start)
            .or_else(mirror)
            .or_else(source_start)
            .or_else(gap),
    };
    decided.unwrap_or_else(|| {
        let identity = match &f.identity {
            IdentityCheck::Confirmed => "confirmed".to_string(),
            IdentityCheck::Differs(w) | IdentityCheck::Unchecked(w) => w.clone(),
        };
        let time = match &f.by_time {
            ByTime::NotLooked(w)
            | ByTime::Missing { why: w, .. }
            | ByTime::BeforeStart { why: w, .. } => w.clone(),
            _ => "found".into(),
        };
        refused(
            format!(
                "no method could translate it: identity: {identity}; timestamp: {time}; checkpoints: none from MirrorMaker 2"
            ),
            None,
        )
    })
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
