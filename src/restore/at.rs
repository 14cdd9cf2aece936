//! `restore --at TIME`: the committed offsets of the selected groups exactly as they were at an
//! instant, from the newest snapshot before it plus every record the commit-log archive holds
//! between the two. The result replaces the snapshot's targets; the plan, the safety checks and
//! the apply are restore's, unchanged.
//!
//! The archive must cover the whole interval for the group's partition of `__consumer_offsets`:
//! its segments continuous, the first one holding records from before the snapshot, the last one
//! sealed at or after the instant. Anything less is a gap, and a restore into a gap is refused.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::Verified;
use crate::error::{Error, Result};
use crate::log::follow::SegmentManifest;
use crate::log::history::{manifests, read_segment};
use crate::log::replay::{state_at, Key, Position, State, Timed};
use crate::log::segment::{discontinuities, SegmentMeta};
use crate::snapshot::model::{GroupSnapshot, PartitionOffset};
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

/// The snapshot's positions of one group, as the replay's base.
fn base_of(g: &GroupSnapshot) -> State {
    g.partitions
        .iter()
        .map(|p| {
            (
                (g.group_id.clone(), p.topic.clone(), p.partition),
                Position {
                    offset: p.offset,
                    leader_epoch: p.leader_epoch,
                    metadata: p.metadata.clone().unwrap_or_default(),
                    topic_id: p.topic_id.clone(),
                    committed_at: None,
                },
            )
        })
        .collect()
}

/// The group with the positions it had at the instant. Partitions with no offset then are left
/// out; the rest keep what the snapshot knew of them (log range, lag) where it knew them. Pure.
pub fn at_instant(g: &GroupSnapshot, state: &State) -> GroupSnapshot {
    let known: BTreeMap<(String, i32), &PartitionOffset> = g
        .partitions
        .iter()
        .map(|p| ((p.topic.clone(), p.partition), p))
        .collect();
    let partitions = state
        .iter()
        .filter(|((group, _, _), _)| group == &g.group_id)
        .map(|((_, topic, partition), pos)| {
            let before = known.get(&(topic.clone(), *partition));
            PartitionOffset {
                topic: topic.clone(),
                partition: *partition,
                offset: pos.offset,
                leader_epoch: pos.leader_epoch,
                metadata: Some(pos.metadata.clone()).filter(|m| !m.is_empty()),
                log_start_offset: before.and_then(|p| p.log_start_offset),
                log_end_offset: before.and_then(|p| p.log_end_offset),
                lag: None,
                last_record_timestamp: None,
                topic_id: pos
                    .topic_id
                    .clone()
                    .or_else(|| before.and_then(|p| p.topic_id.clone())),
            }
        })
        .collect();
    GroupSnapshot {
        partitions,
        ..g.clone()
    }
}

/// Replaces the verified snapshot's group targets with the positions at `at`. Returns one line
/// saying where they came from.
pub async fn apply(store: &Store, verified: &mut Verified, at: DateTime<Utc>) -> Result<String> {
    let from = verified.loaded.manifest.meta.created_at;
    let all: Vec<(String, SegmentManifest)> = manifests(store).await?;
    let Some(count) = all.first().map(|(_, m)| m.meta.partitions) else {
        return Err(Error::NotApplicable(format!(
            "--at needs the commit-log archive, and {} has none: run offset-vault follow --once (regularly), then restore again; nothing was changed",
            store.url()
        )));
    };
    let metas: Vec<SegmentMeta> = all.iter().map(|(_, m)| m.meta.clone()).collect();
    let mut used = 0usize;
    let mut records = 0usize;
    let mut absent = Vec::new();
    for g in verified.groups.iter_mut() {
        let partition =
            crate::wire::offsets_partition(&g.group_id, count as usize).unwrap_or(0) as i32;
        if let Some(why) = coverage_problem(partition, &metas, from, at) {
            return Err(Error::NotApplicable(format!(
                "--at {at}: group {}: {why}; nothing was changed",
                g.group_id
            )));
        }
        let mut mine: Vec<&(String, SegmentManifest)> = all
            .iter()
            .filter(|(_, m)| m.meta.partition == partition)
            .collect();
        mine.sort_by_key(|(_, m)| m.meta.start);
        let mut timed = Vec::new();
        for (key, m) in mine {
            // Only segments that can hold records after the snapshot and up to the instant.
            let after_base = m
                .meta
                .last_timestamp
                .is_none_or(|t| t > from.timestamp_millis());
            if !after_base {
                continue;
            }
            used += 1;
            for row in read_segment(store, key, m).await? {
                timed.push(Timed::new(row.record, row.timestamp));
            }
        }
        let later: Vec<&Timed> = timed
            .iter()
            .filter(|t| t.at > from.timestamp_millis())
            .collect();
        records += later
            .iter()
            .filter(|t| t.at <= at.timestamp_millis())
            .count();
        let state = state_at(base_of(g), later, at.timestamp_millis());
        let group_keys: Vec<&Key> = state
            .keys()
            .filter(|(gr, _, _)| gr == &g.group_id)
            .collect();
        if group_keys.is_empty() {
            absent.push(g.group_id.clone());
        }
        *g = at_instant(g, &state);
    }
    let absent = if absent.is_empty() {
        String::new()
    } else {
        format!(
            "; no committed offset at that instant for {} (left as they are)",
            absent.join(", ")
        )
    };
    Ok(format!(
        "at {}: snapshot {} plus {records} archived record(s) after it from {used} segment(s){absent}",
        at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        verified.loaded.manifest.meta.id
    ))
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

    #[test]
    fn the_group_gets_the_positions_of_the_instant_and_keeps_what_the_snapshot_knew() {
        let p = |partition, offset, log_end| PartitionOffset {
            topic: "t".into(),
            partition,
            offset,
            leader_epoch: None,
            metadata: None,
            log_start_offset: Some(0),
            log_end_offset: Some(log_end),
            lag: None,
            last_record_timestamp: None,
            topic_id: Some("id".into()),
        };
        let g = GroupSnapshot {
            group_id: "g".into(),
            state: crate::kafka::GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: crate::kafka::GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: vec![p(0, 5, 50), p(1, 6, 60)],
        };
        let mut state = base_of(&g);
        // At the instant: partition 0 moved to 9, partition 1 was deleted, partition 2 is new.
        let pos = |offset| Position {
            offset,
            leader_epoch: Some(1),
            metadata: String::new(),
            topic_id: None,
            committed_at: Some(1),
        };
        state.insert(("g".into(), "t".into(), 0), pos(9));
        state.remove(&("g".into(), "t".into(), 1));
        state.insert(("g".into(), "t".into(), 2), pos(3));
        state.insert(("other".into(), "t".into(), 0), pos(77));
        let out = at_instant(&g, &state);
        let got: Vec<(i32, i64, Option<i64>, Option<&str>)> = out
            .partitions
            .iter()
            .map(|p| {
                (
                    p.partition,
                    p.offset,
                    p.log_end_offset,
                    p.topic_id.as_deref(),
                )
            })
            .collect();
        assert_eq!(got, [(0, 9, Some(50), Some("id")), (2, 3, None, None)]);
        assert_eq!(out.partitions[0].leader_epoch, Some(1));
    }
}
