//! When a job runs (pure): its schedule, the slot an instant falls in, the next slot, what to do
//! when a slot comes while the last run is still going, and the retries within a slot.
//!
//! An interval's slots are multiples of the interval since the Unix epoch, so every replica
//! agrees on them whatever its start time; a cron expression's slots are its instants (UTC).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use croner::parser::{CronParser, Seconds};
use croner::Cron;

use crate::error::{Error, Result};

/// The shortest interval a job may have.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// When a job is due.
#[derive(Debug, Clone)]
pub enum Schedule {
    /// Every `Duration`, on multiples of it since the epoch.
    Every(Duration),
    /// At the instants of a cron expression (5 fields, or 6 with seconds first), in UTC.
    Cron { expr: String, cron: Box<Cron> },
}

impl PartialEq for Schedule {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Schedule::Every(a), Schedule::Every(b)) => a == b,
            (Schedule::Cron { expr: a, .. }, Schedule::Cron { expr: b, .. }) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Every(d) => write!(f, "every {}", humantime::format_duration(*d)),
            Schedule::Cron { expr, .. } => write!(f, "cron \"{expr}\""),
        }
    }
}

impl Schedule {
    /// An interval of whole seconds, at least [`MIN_INTERVAL`]; `what` names it in errors.
    pub fn every(d: Duration, what: &str) -> Result<Self> {
        if d < MIN_INTERVAL || d.subsec_nanos() != 0 {
            return Err(Error::usage(format!(
                "{what} {}: the interval must be whole seconds, at least 1s (e.g. 30s, 5m, 1h)",
                humantime::format_duration(d)
            )));
        }
        Ok(Schedule::Every(d))
    }

    /// A cron expression: 5 fields (minute hour day month weekday) or 6 (seconds first).
    pub fn cron(expr: &str, what: &str) -> Result<Self> {
        let cron = CronParser::builder()
            .seconds(Seconds::Optional)
            .build()
            .parse(expr.trim())
            .map_err(|e| {
                Error::usage(format!(
                    "{what} \"{expr}\": {e} (expected 5 fields, minute hour day month weekday, or 6 with seconds first, e.g. \"0 */5 * * * *\")"
                ))
            })?;
        // An expression that never matches (30 February) would leave the job idle forever.
        let probe = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::days(365 * 56);
        if cron.find_next_occurrence(&probe, false).is_err() {
            return Err(Error::usage(format!(
                "{what} \"{expr}\": the expression has no instant"
            )));
        }
        Ok(Schedule::Cron {
            expr: expr.trim().to_string(),
            cron: Box::new(cron),
        })
    }

    /// The slot `t` falls in: the latest slot start at or before `t`.
    pub fn slot_of(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Schedule::Every(d) => {
                let step = d.as_millis() as i64;
                let ms = t.timestamp_millis();
                DateTime::from_timestamp_millis(ms - ms.rem_euclid(step)).unwrap_or(t)
            }
            Schedule::Cron { cron, .. } => cron
                .find_previous_occurrence(&t, true)
                .unwrap_or(DateTime::<Utc>::UNIX_EPOCH),
        }
    }

    /// The first slot start strictly after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Schedule::Every(d) => self.slot_of(t) + TimeDelta::from_std(*d).unwrap_or_default(),
            Schedule::Cron { cron, .. } => cron
                .find_next_occurrence(&t, false)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        }
    }

    /// The length of the slot starting at `slot` (for cron, up to its next instant).
    pub fn slot_length(&self, slot: DateTime<Utc>) -> Duration {
        (self.next_after(slot) - slot).to_std().unwrap_or_default()
    }

    /// The job's interval as the metric `offset_vault_job_interval_seconds` gives it: for cron,
    /// the time between its next two instants after `now`.
    pub fn interval_seconds(&self, now: DateTime<Utc>) -> f64 {
        match self {
            Schedule::Every(d) => d.as_secs_f64(),
            Schedule::Cron { .. } => {
                let next = self.next_after(now);
                self.slot_length(next).as_secs_f64()
            }
        }
    }
}

/// A slot as it is written in a lease's key: `YYYYMMDDTHHMMSSZ`.
pub fn slot_key(slot: DateTime<Utc>) -> String {
    slot.format("%Y%m%dT%H%M%SZ").to_string()
}

/// What a job does at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Run this slot (after taking its lease).
    Run(DateTime<Utc>),
    /// The slot came while the last run is still going: it is skipped and counted.
    Skip(DateTime<Utc>),
    /// Nothing to do until this instant.
    WaitUntil(DateTime<Utc>),
}

/// The step of a job at `now`: `handled` is the last slot it ran or skipped (none at start:
/// the slot going on now is run), `running` whether its last run is still going.
pub fn step(
    schedule: &Schedule,
    handled: Option<DateTime<Utc>>,
    running: bool,
    now: DateTime<Utc>,
) -> Step {
    let slot = schedule.slot_of(now);
    if handled.is_some_and(|h| h >= slot) {
        return Step::WaitUntil(schedule.next_after(now));
    }
    if running {
        Step::Skip(slot)
    } else {
        Step::Run(slot)
    }
}

/// The waits before the retries of a failed run in a slot of length `slot`: at most
/// `tries - 1` of them, starting at a tenth of the slot (at most 30 s) and doubling, all within
/// the first half of the slot so that a retry never runs into the next slot.
pub fn retry_waits(slot: Duration, tries: u32) -> Vec<Duration> {
    let budget = slot / 2;
    let mut wait = (slot / 10).min(Duration::from_secs(30));
    let mut spent = Duration::ZERO;
    let mut out = Vec::new();
    for _ in 1..tries {
        if spent + wait > budget || wait.is_zero() {
            break;
        }
        spent += wait;
        out.push(wait);
        wait *= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn every(s: &str) -> Schedule {
        Schedule::every(humantime::parse_duration(s).unwrap(), "--every").unwrap()
    }

    fn cron(e: &str) -> Schedule {
        Schedule::cron(e, "cron").unwrap()
    }

    #[test]
    fn slots_of_intervals_and_cron_expressions() {
        // (schedule, instant, its slot, the next slot)
        let cases = [
            (
                every("5s"),
                "2026-12-04T10:00:07.300Z",
                "2026-12-04T10:00:05Z",
                "2026-12-04T10:00:10Z",
            ),
            (
                every("5s"),
                "2026-12-04T10:00:05Z",
                "2026-12-04T10:00:05Z",
                "2026-12-04T10:00:10Z",
            ),
            (
                every("5m"),
                "2026-12-04T10:04:59.999Z",
                "2026-12-04T10:00:00Z",
                "2026-12-04T10:05:00Z",
            ),
            (
                every("1h"),
                "2026-12-04T10:30:00Z",
                "2026-12-04T10:00:00Z",
                "2026-12-04T11:00:00Z",
            ),
            // 7 s does not divide a minute: slots still count from the epoch.
            (
                every("7s"),
                "1970-01-01T00:00:15Z",
                "1970-01-01T00:00:14Z",
                "1970-01-01T00:00:21Z",
            ),
            (
                every("1d"),
                "2026-12-04T23:59:59Z",
                "2026-12-04T00:00:00Z",
                "2026-12-05T00:00:00Z",
            ),
            (
                cron("0 */5 * * * *"),
                "2026-12-04T10:07:00Z",
                "2026-12-04T10:05:00Z",
                "2026-12-04T10:10:00Z",
            ),
            (
                cron("*/5 * * * *"),
                "2026-12-04T10:05:00Z",
                "2026-12-04T10:05:00Z",
                "2026-12-04T10:10:00Z",
            ),
            (
                cron("30 2 * * *"),
                "2026-12-04T01:00:00Z",
                "2026-12-03T02:30:00Z",
                "2026-12-04T02:30:00Z",
            ),
            (
                cron("0 0 * * MON"),
                "2026-12-04T12:00:00Z",
                "2026-11-30T00:00:00Z",
                "2026-12-07T00:00:00Z",
            ),
        ];
        for (s, at, slot, next) in cases {
            assert_eq!(s.slot_of(t(at)), t(slot), "{s} at {at}");
            assert_eq!(s.next_after(t(at)), t(next), "{s} after {at}");
        }
    }

    #[test]
    fn interval_of_the_metric() {
        let now = t("2026-12-04T10:07:00Z");
        assert_eq!(every("5m").interval_seconds(now), 300.0);
        assert_eq!(cron("0 */5 * * * *").interval_seconds(now), 300.0);
        assert_eq!(cron("0 3 * * *").interval_seconds(now), 86_400.0);
    }

    #[test]
    fn bad_schedules_are_usage_errors_naming_the_setting() {
        let cases: [(Result<Schedule>, &str); 5] = [
            (
                Schedule::every(Duration::ZERO, "--snapshot-every"),
                "--snapshot-every 0s",
            ),
            (
                Schedule::every(Duration::from_millis(1500), "--snapshot-every"),
                "whole seconds",
            ),
            (
                Schedule::cron("61 * * * *", "jobs.a.cron"),
                "jobs.a.cron \"61 * * * *\"",
            ),
            (
                Schedule::cron("every minute", "jobs.a.cron"),
                "expected 5 fields",
            ),
            (Schedule::cron("0 0 30 2 *", "jobs.a.cron"), "no instant"),
        ];
        for (got, words) in cases {
            let e = got.unwrap_err();
            assert_eq!(e.exit_code(), crate::error::exit::USAGE);
            assert!(e.to_string().contains(words), "{e}");
        }
    }

    #[test]
    fn steps_run_skip_or_wait() {
        let s = every("5s");
        let now = t("2026-12-04T10:00:07Z");
        let slot = t("2026-12-04T10:00:05Z");
        let next = t("2026-12-04T10:00:10Z");
        // (last slot handled, a run still going, the step)
        let cases = [
            (None, false, Step::Run(slot)),
            (None, true, Step::Skip(slot)),
            (Some(t("2026-12-04T10:00:00Z")), false, Step::Run(slot)),
            (Some(t("2026-12-04T10:00:00Z")), true, Step::Skip(slot)),
            (Some(slot), false, Step::WaitUntil(next)),
            (Some(slot), true, Step::WaitUntil(next)),
            // Slots missed while the process was stopped are not run late: only the current.
            (Some(t("2026-12-04T09:00:00Z")), false, Step::Run(slot)),
        ];
        for (handled, running, want) in cases {
            assert_eq!(
                step(&s, handled, running, now),
                want,
                "{handled:?} {running}"
            );
        }
    }

    #[test]
    fn retries_stay_in_the_first_half_of_the_slot() {
        let cases = [
            (Duration::from_secs(5), 3, vec![500, 1000]),
            (Duration::from_secs(60), 3, vec![6000, 12000]),
            (Duration::from_secs(3600), 3, vec![30000, 60000]),
            (Duration::from_secs(3600), 1, vec![]),
            (Duration::from_secs(2), 5, vec![200, 400]),
        ];
        for (slot, tries, want) in cases {
            let got: Vec<u128> = retry_waits(slot, tries)
                .iter()
                .map(|d| d.as_millis())
                .collect();
            assert_eq!(got, want, "{slot:?} {tries}");
            assert!(retry_waits(slot, tries).iter().sum::<Duration>() <= slot / 2);
        }
    }
}
