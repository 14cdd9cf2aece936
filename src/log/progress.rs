//! What a running follower reports while it runs, for `serve`'s metrics: per topic, the
//! segments sealed, the rewinds seen, and how far the archive is behind the log.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// One topic's figures.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LaneProgress {
    /// Segments sealed since the follower's first start (never goes down).
    pub segments: u64,
    /// Commits that moved an offset backwards, since the first start.
    pub rewinds: u64,
    /// Records between the archive's end and the log end, at the last check.
    pub lag_records: i64,
    /// Age of the oldest record held and not yet sealed (0 when nothing is held).
    pub lag_seconds: f64,
}

/// Shared between a follower and whoever reads its progress.
#[derive(Debug, Default)]
pub struct FollowProgress {
    lanes: Mutex<BTreeMap<String, LaneProgress>>,
}

impl FollowProgress {
    fn with(&self, topic: &str, f: impl FnOnce(&mut LaneProgress)) {
        if let Ok(mut lanes) = self.lanes.lock() {
            f(lanes.entry(topic.to_string()).or_default());
        }
    }

    pub fn sealed(&self, topic: &str) {
        self.with(topic, |l| l.segments += 1);
    }

    pub fn rewound(&self, topic: &str) {
        self.with(topic, |l| l.rewinds += 1);
    }

    pub fn lag(&self, topic: &str, records: i64, seconds: f64) {
        self.with(topic, |l| {
            l.lag_records = records;
            l.lag_seconds = seconds;
        });
    }

    /// Every topic's figures now.
    pub fn now(&self) -> BTreeMap<String, LaneProgress> {
        self.lanes.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// The lag of one partition's buffer (pure): records not archived yet between `start` (the
/// archive's end) and `log_end`, none when everything read is sealed and the end was reached
/// (transaction markers past the last record are never archived).
pub fn partition_lag(start: i64, log_end: i64, held: u64, at_end: bool) -> i64 {
    if held == 0 && at_end {
        0
    } else {
        (log_end - start).max(held as i64).max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_of_a_partition() {
        // (archive end, log end, records held, at the end, lag)
        let cases = [
            (100, 100, 0, true, 0),
            (100, 103, 0, true, 0),
            (100, 150, 0, false, 50),
            (100, 150, 20, false, 50),
            (100, 120, 20, true, 20),
            (100, 90, 0, false, 0),
        ];
        for (start, end, held, at_end, want) in cases {
            assert_eq!(
                partition_lag(start, end, held, at_end),
                want,
                "{start} {end} {held} {at_end}"
            );
        }
        let p = FollowProgress::default();
        p.sealed("t");
        p.sealed("t");
        p.rewound("t");
        p.lag("t", 5, 1.5);
        assert_eq!(
            p.now()["t"],
            LaneProgress {
                segments: 2,
                rewinds: 1,
                lag_records: 5,
                lag_seconds: 1.5
            }
        );
    }
}
