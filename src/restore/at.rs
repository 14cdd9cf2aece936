//! `restore --at TIME`: the committed offsets of the selected groups exactly as they were at an
//! instant, from the newest snapshot before it plus every record the commit-log archive holds
//! between the two (the reconstruction `show`, `diff` and `export --at` share, in
//! [`crate::log::at`]). The result replaces the snapshot's targets; the plan, the safety checks
//! and the apply are restore's, unchanged.
//!
//! The archive must cover the whole interval for the group's partition of `__consumer_offsets`:
//! its segments continuous, the first one holding records from before the snapshot, the last one
//! sealed at or after the instant. Anything less is a gap, and a restore into a gap is refused.

use chrono::{DateTime, Utc};

use super::{RestoreRequest, Verified};
use crate::diff::Filter;
use crate::error::{Error, Result};
use crate::log::at::{reconstruct, AtRequest};
use crate::log::segment::{discontinuities, SegmentMeta};
use crate::store::Store;

/// Why the archive of one partition does not cover `(from, to]`, if it does not. Pure.
pub fn coverage_problem(
    partition: i32,
    segments: &[SegmentMeta],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<String> {
    let mut mine: Vec<&SegmentMeta> = segments
        .iter()
        .filter(|s| s.partition == partition)
        .collect();
    mine.sort_by_key(|s| s.start);
    let (Some(first), Some(last)) = (mine.first(), mine.last()) else {
        return Some(format!(
            "the commit-log archive has no segment of __consumer_offsets[{partition}]; run offset-vault follow --once"
        ));
    };
    let owned: Vec<SegmentMeta> = mine.iter().map(|s| (*s).clone()).collect();
    if let Some(d) = discontinuities(&owned).first() {
        return Some(format!(
            "the commit-log archive of __consumer_offsets[{partition}] is not continuous ({d:?}): a restore into a gap is refused"
        ));
    }
    if first
        .first_timestamp
        .is_some_and(|t| t > from.timestamp_millis())
    {
        return Some(format!(
            "the commit-log archive of __consumer_offsets[{partition}] begins after the snapshot of {from}: what was committed in between is not archived"
        ));
    }
    if last.sealed_at < to {
        return Some(format!(
            "the commit-log archive of __consumer_offsets[{partition}] ends at {}, before {to}: run offset-vault follow --once, then restore again",
            last.sealed_at
        ));
    }
    None
}

/// Replaces the verified snapshot's group targets with the positions at `at` (the shared
/// reconstruction of `--at`, [`crate::log::at`]). Returns one line saying where they came from.
/// A group with no committed offset at the instant keeps no target (its offsets are left as
/// they are); a share group is left out (its positions are not in the commit log).
pub async fn apply(
    store: &Store,
    verified: &mut Verified,
    req: &RestoreRequest,
    at: DateTime<Utc>,
) -> Result<String> {
    let at_req = AtRequest {
        at,
        filter: Filter {
            groups: req.groups.clone(),
            connectors: req.connectors.clone(),
            topics: req.topics.clone(),
            partitions: req.partitions.clone(),
        },
        command: "restore",
    };
    let groups = std::mem::take(&mut verified.groups);
    let instant = reconstruct(store, &verified.loaded.manifest.meta, groups, &at_req)
        .await
        .map_err(|e| match e {
            Error::NotApplicable(why) => {
                Error::NotApplicable(format!("{why}; nothing was changed"))
            }
            other => other,
        })?;
    let mut line = instant.describe();
    let absent = instant.absent();
    if !absent.is_empty() {
        line.push_str(&format!(
            "; no committed offset at that instant for {} (left as they are)",
            absent.join(", ")
        ));
    }
    if !instant.left_out.is_empty() {
        line.push_str(&format!(
            "; share group(s) {} left out (their positions are not in the commit log)",
            instant.left_out.join(", ")
        ));
    }
    let sources: Vec<&str> = verified
        .connectors
        .iter()
        .filter(|c| c.connector_type == "source")
        .map(|c| c.name.as_str())
        .collect();
    if !sources.is_empty() {
        line.push_str(&format!(
            "; the offsets of source connector(s) {} are the snapshot's (the commit log holds group commits only)",
            sources.join(", ")
        ));
    }
    verified.groups = instant.groups.into_iter().map(|g| g.snapshot).collect();
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(partition: i32, start: i64, next: i64, first: i64, sealed: i64) -> SegmentMeta {
        SegmentMeta {
            format_version: "1.0".into(),
            cluster_id: "c".into(),
            topic: "__consumer_offsets".into(),
            partitions: 50,
            partition,
            start,
            next,
            rows: 1,
            ignored: 0,
            unknown: 0,
            first_timestamp: Some(first),
            last_timestamp: Some(first),
            sealed_at: DateTime::from_timestamp_millis(sealed).unwrap(),
        }
    }

    #[test]
    fn the_archive_must_cover_the_interval_without_a_gap() {
        let t = |ms| DateTime::from_timestamp_millis(ms).unwrap();
        let good = vec![seg(3, 0, 10, 100, 500), seg(3, 10, 20, 600, 900)];
        // (segments, from, to, Ok or the words of the refusal)
        let cases: Vec<(Vec<SegmentMeta>, i64, i64, Option<&str>)> = vec![
            (good.clone(), 200, 800, None),
            (good.clone(), 200, 900, None),
            (
                good.clone(),
                200,
                950,
                Some("run offset-vault follow --once, then restore"),
            ),
            (good.clone(), 50, 800, Some("begins after the snapshot")),
            (
                vec![seg(3, 0, 10, 100, 500), seg(3, 12, 20, 600, 900)],
                200,
                800,
                Some("not continuous"),
            ),
            (
                vec![seg(4, 0, 10, 100, 500)],
                200,
                300,
                Some("no segment of __consumer_offsets[3]"),
            ),
        ];
        for (segments, from, to, want) in cases {
            let got = coverage_problem(3, &segments, t(from), t(to));
            match (got, want) {
                (None, None) => {}
                (Some(why), Some(words)) => assert!(why.contains(words), "{why}"),
                (got, want) => panic!("{from} {to}: got {got:?}, want {want:?}"),
            }
        }
    }
}
