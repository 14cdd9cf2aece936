//! Whether the commit-log archive covers an interval of one partition: continuous, without a
//! recorded gap the interval needs, from before its start to after its end. Pure. Read by
//! `--at` (reconstruction in [`super::at`], and the restore's check of its targets).

use chrono::{DateTime, Utc};

use super::archive::Head;
use super::segment::{discontinuities, Discontinuity, SegmentMeta};

/// An instant of the archive (ms) as messages write it; `the start` when there is none.
fn instant(ms: Option<i64>) -> String {
    match ms.and_then(DateTime::from_timestamp_millis) {
        Some(t) => super::instant::millis(t),
        None => "its start".to_string(),
    }
}

/// Why the archive of one partition does not cover `(from, to]`, if it does not. Pure.
///
/// `head` is the partition's head, if a follower wrote one: the archive is complete to its end
/// as of `head.checked_at` when `head.next` is where the last entry ends. A recorded gap
/// refuses an interval that needs the records it lost: one whose base is older than the gap's
/// discovery and whose end is after the last record archived before it.
pub fn coverage_problem(
    partition: i32,
    segments: &[SegmentMeta],
    head: Option<&Head>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<String> {
    coverage_problem_of("__consumer_offsets", partition, segments, head, from, to)
}

/// [`coverage_problem`] for a partition of `topic` (`__consumer_offsets`, or Connect's
/// offsets topic). A partition with no segment is covered only when a follower saw it empty
/// from its start (its head at offset 0) at or after `to`.
pub fn coverage_problem_of(
    topic: &str,
    partition: i32,
    segments: &[SegmentMeta],
    head: Option<&Head>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<String> {
    let mut mine: Vec<&SegmentMeta> = segments
        .iter()
        .filter(|s| s.partition == partition)
        .collect();
    mine.sort_by_key(|s| s.start);
    let (Some(first), Some(last)) = (mine.first(), mine.last()) else {
        if head.is_some_and(|h| h.next == 0 && h.checked_at >= to) {
            return None;
        }
        return Some(format!(
            "the commit-log archive has no segment of {topic}[{partition}]; run offset-vault follow --once"
        ));
    };
    let owned: Vec<SegmentMeta> = mine.iter().map(|s| (*s).clone()).collect();
    if let Some(d) = discontinuities(&owned).first() {
        let (what, from_offset, to_offset) = match d {
            Discontinuity::Gap { from, to, .. } => ("are in no segment", *from, *to),
            Discontinuity::Overlap { from, to, .. } => ("are in two segments", *from, *to),
        };
        let before = mine
            .iter()
            .filter(|s| s.next <= from_offset || s.start < from_offset)
            .filter_map(|s| s.last_timestamp)
            .max();
        let after = mine
            .iter()
            .filter(|s| s.start >= to_offset)
            .filter_map(|s| s.first_timestamp)
            .min();
        return Some(format!(
            "the commit-log archive of {topic}[{partition}] is not continuous: offsets {from_offset} to {to_offset} {what}, between {} and {}; an instant is never guessed across it (offset-vault verify --all names the segments)",
            instant(before),
            instant(after)
        ));
    }
    let mut before_gap: Option<i64> = None;
    for (i, s) in mine.iter().enumerate() {
        if let Some(why) = &s.gap {
            let needed = before_gap.is_none_or(|t| to.timestamp_millis() > t);
            if from < s.sealed_at && needed {
                let after = mine[i + 1..].iter().find_map(|s| s.first_timestamp);
                return Some(format!(
                    "the commit-log archive of {topic}[{partition}] has a gap: offsets {} to {} were not archived ({why}, found {}), so what was committed between {} and {} is unknown; an instant in it is refused, never guessed: use one at or before {}, or one after {} with a base snapshot taken after it",
                    s.start,
                    s.next,
                    s.sealed_at,
                    instant(before_gap),
                    instant(after),
                    instant(before_gap),
                    instant(Some(s.sealed_at.timestamp_millis()))
                ));
            }
        } else if s.last_timestamp.is_some() {
            before_gap = s.last_timestamp;
        }
    }
    // A chain that starts at offset 0 holds the partition from its very beginning: nothing
    // was before it. One that starts later without a recorded gap lacks what came before.
    if first.gap.is_none()
        && first.start > 0
        && first
            .first_timestamp
            .is_some_and(|t| t > from.timestamp_millis())
    {
        return Some(format!(
            "the commit-log archive of {topic}[{partition}] begins after the snapshot of {from}: what was committed in between is not archived"
        ));
    }
    let complete_to = match head {
        Some(h) if h.next == last.next => h.checked_at.max(last.sealed_at),
        _ => last.sealed_at,
    };
    if complete_to < to {
        return Some(format!(
            "the commit-log archive of {topic}[{partition}] ends at {complete_to}, before {to}: run offset-vault follow --once (or wait for the running follower's next segment), then try again"
        ));
    }
    None
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
            gap: None,
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
            (good.clone(), 200, 950, Some("run offset-vault follow")),
            // From offset 0 the chain holds everything: nothing was committed before it.
            (good.clone(), 50, 800, None),
            (
                vec![seg(3, 5, 10, 100, 500)],
                50,
                400,
                Some("begins after the snapshot"),
            ),
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
            let got = coverage_problem(3, &segments, None, t(from), t(to));
            match (got, want) {
                (None, None) => {}
                (Some(why), Some(words)) => assert!(why.contains(words), "{why}"),
                (got, want) => panic!("{from} {to}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_head_extends_the_archive_and_a_recorded_gap_refuses_what_it_lost() {
        let t = |ms| DateTime::from_timestamp_millis(ms).unwrap();
        let good = vec![seg(3, 0, 10, 100, 500), seg(3, 10, 20, 600, 900)];
        let head = |next, checked| Head {
            partition: 3,
            next,
            checked_at: t(checked),
        };
        let gap = SegmentMeta {
            rows: 0,
            first_timestamp: None,
            last_timestamp: None,
            gap: Some("the log no longer held them".into()),
            ..seg(3, 20, 30, 0, 1000)
        };
        let gapped = vec![
            good[0].clone(),
            good[1].clone(),
            gap,
            seg(3, 30, 40, 1100, 1200),
        ];
        // (segments, head, from, to, Ok or the words of the refusal)
        type Case<'a> = (Vec<SegmentMeta>, Option<Head>, i64, i64, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (good.clone(), Some(head(20, 2000)), 200, 1500, None),
            (
                good.clone(),
                Some(head(20, 2000)),
                200,
                2500,
                Some("ends at"),
            ),
            // A head of another end says nothing of this chain.
            (
                good.clone(),
                Some(head(15, 2000)),
                200,
                1500,
                Some("ends at"),
            ),
            (
                gapped.clone(),
                None,
                200,
                1150,
                Some("offsets 20 to 30 were not archived (the log no longer held them, found 1970-01-01 00:00:01 UTC), so what was committed between 1970-01-01T00:00:00.600Z and 1970-01-01T00:00:01.100Z is unknown"),
            ),
            (gapped.clone(), None, 1050, 1150, None),
            (gapped.clone(), None, 200, 800, Some("has a gap")),
            // A partition that never held a record: covered by a head at 0 seen after `to`.
            (vec![], Some(head(0, 2000)), 200, 1500, None),
            (vec![], Some(head(0, 1000)), 200, 1500, Some("no segment")),
            (vec![], None, 200, 1500, Some("no segment")),
        ];
        for (segments, head, from, to, want) in cases {
            let got = coverage_problem(3, &segments, head.as_ref(), t(from), t(to));
            match (got, want) {
                (None, None) => {}
                (Some(why), Some(words)) => assert!(why.contains(words), "{why}"),
                (got, want) => panic!("{from} {to}: got {got:?}, want {want:?}"),
            }
        }
    }
}
