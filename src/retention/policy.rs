//! The retention policy, with the rules of restic's `forget`: which snapshots of one group of
//! snapshots to keep, and why. Pure: snapshots, a policy and the current time in; one decision
//! per snapshot out.
//!
//! The rules, as restic applies them:
//! - Snapshots are taken newest first.
//! - `--keep-last N` keeps the N newest. `--keep-{hourly,daily,weekly,monthly,yearly} N` walk the
//!   snapshots newest first and keep the first (newest) snapshot of each period, until N periods
//!   were kept: periods without a snapshot are not counted. Weeks are ISO weeks of the ISO
//!   week-year (2027-01-01 is in week 53 of 2026). `unlimited` counts every period.
//! - When a count is not used up, the oldest snapshot is kept as well ("oldest" in the reasons),
//!   so the history kept is as long as it can be.
//! - `--keep-within D` keeps every snapshot taken less than D before the newest snapshot (not
//!   before now); `--keep-within-{hourly,...} D` keep the newest snapshot of each period within
//!   D of the newest snapshot. Durations are restic's `1y2m3d4h`; months and years are calendar
//!   steps that overflow the way Go's `AddDate` does (one month before March 31 is March 3, or 2
//!   in a leap year).
//! - The newest snapshot is the newest one not in the future.
//! - `--keep-tag K=V[,K=V]` keeps every snapshot carrying all of those tags; tags are not counted.
//! - A snapshot is kept when any rule keeps it; all the rules that did are listed.
//!
//! All periods are in UTC.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Timelike, Utc};
use serde::Serialize;

use crate::error::{Error, Result};

/// How many periods a `--keep-*` count keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Count {
    /// The rule is not used.
    #[default]
    Off,
    /// Up to this many periods.
    Upto(u32),
    /// Every period.
    Unlimited,
}

impl Count {
    /// Parses `N` (0 turns the rule off) or `unlimited` (also `-1`, as restic accepts).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text.trim() {
            "unlimited" | "-1" => Ok(Count::Unlimited),
            t => match t.parse::<u32>() {
                Ok(0) => Ok(Count::Off),
                Ok(n) => Ok(Count::Upto(n)),
                Err(_) => Err(format!(
                    "{text}: expected a count (a whole number) or `unlimited`"
                )),
            },
        }
    }

    fn is_on(self) -> bool {
        self != Count::Off
    }
}

/// A restic duration: years, months, days and hours (`1y2m3d4h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub years: i32,
    pub months: i32,
    pub days: i32,
    pub hours: i32,
}

impl Span {
    /// Parses `6y5m234d37h`: each part a number and a unit (y, m, d, h), any subset, in any
    /// order. `m` is months, not minutes.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "{text}: {why} (expected e.g. 2d, 36h, 1y6m: y=years, m=months, d=days, h=hours)"
            )
        };
        let mut span = Span::default();
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(bad("empty duration"));
        }
        while !rest.is_empty() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return Err(bad("a number must come before each unit"));
            }
            let n: i32 = rest[..digits]
                .parse()
                .map_err(|_| bad("number too large"))?;
            let unit = rest[digits..]
                .chars()
                .next()
                .ok_or_else(|| bad("no unit after the number"))?;
            match unit {
                'y' => span.years = n,
                'm' => span.months = n,
                'd' => span.days = n,
                'h' => span.hours = n,
                _ => return Err(bad(&format!("unknown unit {unit:?}"))),
            }
            rest = &rest[digits + unit.len_utf8()..];
        }
        Ok(span)
    }

    pub fn is_zero(&self) -> bool {
        *self == Span::default()
    }

    /// The time this span before `t`, with calendar steps normalized as Go's `AddDate` does.
    pub fn before(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let months = i64::from(t.year()) * 12 + i64::from(t.month0())
            - i64::from(self.years) * 12
            - i64::from(self.months);
        let year = i32::try_from(months.div_euclid(12)).ok()?;
        let month = u32::try_from(months.rem_euclid(12)).ok()? + 1;
        let first = NaiveDate::from_ymd_opt(year, month, 1)?;
        let date = first.checked_add_signed(Duration::days(
            i64::from(t.day()) - 1 - i64::from(self.days),
        ))?;
        date.and_time(t.time())
            .and_utc()
            .checked_sub_signed(Duration::hours(i64::from(self.hours)))
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, unit) in [
            (self.years, 'y'),
            (self.months, 'm'),
            (self.days, 'd'),
            (self.hours, 'h'),
        ] {
            if n != 0 {
                write!(f, "{n}{unit}")?;
            }
        }
        Ok(())
    }
}

/// The periods snapshots are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Period {
    /// Every snapshot is its own period (`--keep-last`).
    Each,
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl Period {
    /// A number that is equal for two times exactly when they fall in the same period.
    fn bucket(self, t: DateTime<Utc>, nr: usize) -> i64 {
        let (y, m, d, h) = (
            i64::from(t.year()),
            i64::from(t.month()),
            i64::from(t.day()),
            i64::from(t.hour()),
        );
        match self {
            Period::Each => nr as i64,
            Period::Hour => ((y * 100 + m) * 100 + d) * 100 + h,
            Period::Day => (y * 100 + m) * 100 + d,
            Period::Week => {
                let w = t.iso_week();
                i64::from(w.year()) * 100 + i64::from(w.week())
            }
            Period::Month => y * 100 + m,
            Period::Year => y,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Period::Each => "last",
            Period::Hour => "hourly",
            Period::Day => "daily",
            Period::Week => "weekly",
            Period::Month => "monthly",
            Period::Year => "yearly",
        }
    }
}

/// A retention policy. A snapshot is kept when any rule keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    pub last: Count,
    pub hourly: Count,
    pub daily: Count,
    pub weekly: Count,
    pub monthly: Count,
    pub yearly: Count,
    pub within: Span,
    pub within_hourly: Span,
    pub within_daily: Span,
    pub within_weekly: Span,
    pub within_monthly: Span,
    pub within_yearly: Span,
    /// Keep snapshots that carry every tag of any one of these sets.
    pub tags: Vec<BTreeMap<String, String>>,
}

/// The option names a policy is set from, as on the command line (without `--`).
pub const OPTIONS: &[&str] = &[
    "keep-last",
    "keep-hourly",
    "keep-daily",
    "keep-weekly",
    "keep-monthly",
    "keep-yearly",
    "keep-within",
    "keep-within-hourly",
    "keep-within-daily",
    "keep-within-weekly",
    "keep-within-monthly",
    "keep-within-yearly",
    "keep-tag",
];

/// Parses `K=V[,K=V...]`: a snapshot matches when it has all of them.
pub fn parse_tag_set(text: &str) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut set = BTreeMap::new();
    for part in text.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("{text}: expected KEY=VALUE[,KEY=VALUE...]"))?;
        if k.trim().is_empty() {
            return Err(format!("{text}: a key is empty"));
        }
        set.insert(k.trim().to_string(), v.to_string());
    }
    Ok(set)
}

impl Policy {
    /// Sets one option (a name from [`OPTIONS`]) from its text value.
    pub fn set(&mut self, option: &str, value: &str) -> Result<()> {
        let usage = |e: String| Error::usage(format!("--{option} {e}"));
        let count = |v: &str| Count::parse(v).map_err(usage);
        let span = |v: &str| Span::parse(v).map_err(usage);
        match option {
            "keep-last" => self.last = count(value)?,
            "keep-hourly" => self.hourly = count(value)?,
            "keep-daily" => self.daily = count(value)?,
            "keep-weekly" => self.weekly = count(value)?,
            "keep-monthly" => self.monthly = count(value)?,
            "keep-yearly" => self.yearly = count(value)?,
            "keep-within" => self.within = span(value)?,
            "keep-within-hourly" => self.within_hourly = span(value)?,
            "keep-within-daily" => self.within_daily = span(value)?,
            "keep-within-weekly" => self.within_weekly = span(value)?,
            "keep-within-monthly" => self.within_monthly = span(value)?,
            "keep-within-yearly" => self.within_yearly = span(value)?,
            "keep-tag" => self.tags.push(parse_tag_set(value).map_err(usage)?),
            other => {
                return Err(Error::Internal(format!("unknown policy option {other}")));
            }
        }
        Ok(())
    }

    /// True when no rule is set: such a policy would remove everything and is refused.
    pub fn is_empty(&self) -> bool {
        *self == Policy::default()
    }

    fn counts(&self) -> [(Period, Count); 6] {
        [
            (Period::Each, self.last),
            (Period::Hour, self.hourly),
            (Period::Day, self.daily),
            (Period::Week, self.weekly),
            (Period::Month, self.monthly),
            (Period::Year, self.yearly),
        ]
    }

    fn within_periods(&self) -> [(Period, Span); 5] {
        [
            (Period::Hour, self.within_hourly),
            (Period::Day, self.within_daily),
            (Period::Week, self.within_weekly),
            (Period::Month, self.within_monthly),
            (Period::Year, self.within_yearly),
        ]
    }

    /// The policy in words, for the dry-run header.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (period, count) in self.counts() {
            match count {
                Count::Off => {}
                Count::Upto(n) => parts.push(format!("{n} {}", period.name())),
                Count::Unlimited => parts.push(format!("all {}", period.name())),
            }
        }
        if !self.within.is_zero() {
            parts.push(format!("all within {} of the newest", self.within));
        }
        for (period, span) in self.within_periods() {
            if !span.is_zero() {
                parts.push(format!("{} within {span}", period.name()));
            }
        }
        for set in &self.tags {
            parts.push(format!("tagged {}", tag_text(set)));
        }
        format!("keep {}", parts.join(", "))
    }
}

fn tag_text(set: &BTreeMap<String, String>) -> String {
    set.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A snapshot as the policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub time: DateTime<Utc>,
    pub tags: BTreeMap<String, String>,
}

/// What the policy decided for one snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub id: String,
    pub time: DateTime<Utc>,
    pub keep: bool,
    /// The rules that kept it (empty when removed).
    pub reasons: Vec<String>,
}

/// A `--keep-within-<period>` rule while the snapshots are walked.
struct WithinRule {
    period: Period,
    span: Span,
    /// Snapshots after this time are within; `None`: all are.
    cutoff: Option<DateTime<Utc>>,
    /// The period of the last snapshot this rule kept.
    last: Option<i64>,
}

/// Applies the policy to one group of snapshots. Returns a decision for each, newest first
/// (equal times: greater id first). An empty policy keeps nothing; callers refuse it before.
pub fn apply(snapshots: &[Candidate], policy: &Policy, now: DateTime<Utc>) -> Vec<Decision> {
    let mut list: Vec<&Candidate> = snapshots.iter().collect();
    list.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| b.id.cmp(&a.id)));
    // The newest snapshot that is not in the future.
    let latest = list.iter().map(|c| c.time).filter(|t| *t < now).max();
    let cutoff = |span: Span| -> Option<DateTime<Utc>> {
        // With no snapshot in the past, every snapshot is within any span.
        latest.and_then(|l| span.before(l))
    };
    let within_all = (!policy.within.is_zero()).then(|| cutoff(policy.within));
    let mut counts: Vec<(Period, Count, Option<i64>)> = policy
        .counts()
        .into_iter()
        .filter(|(_, c)| c.is_on())
        .map(|(p, c)| (p, c, None))
        .collect();
    let mut within: Vec<WithinRule> = policy
        .within_periods()
        .into_iter()
        .filter(|(_, s)| !s.is_zero())
        .map(|(period, span)| WithinRule {
            period,
            span,
            cutoff: cutoff(span),
            last: None,
        })
        .collect();
    let last_nr = list.len().saturating_sub(1);
    let mut out = Vec::with_capacity(list.len());
    for (nr, cur) in list.into_iter().enumerate() {
        let mut reasons = Vec::new();
        for set in &policy.tags {
            if set.iter().all(|(k, v)| cur.tags.get(k) == Some(v)) {
                reasons.push(format!("tag {}", tag_text(set)));
            }
        }
        if let Some(t) = within_all {
            if t.is_none_or(|t| cur.time > t) {
                reasons.push(format!("within {}", policy.within));
            }
        }
        for (period, count, last) in counts.iter_mut() {
            if *count == Count::Upto(0) {
                continue;
            }
            let val = period.bucket(cur.time, nr);
            let new_period = *last != Some(val);
            if new_period || nr == last_nr {
                *last = Some(val);
                if let Count::Upto(n) = count {
                    *n -= 1;
                }
                reasons.push(if new_period {
                    period.name().to_string()
                } else {
                    format!("{} (oldest)", period.name())
                });
            }
        }
        for rule in within.iter_mut() {
            if rule.cutoff.is_none_or(|t| cur.time > t) {
                let val = rule.period.bucket(cur.time, nr);
                if rule.last != Some(val) {
                    rule.last = Some(val);
                    reasons.push(format!("{} within {}", rule.period.name(), rule.span));
                }
            }
        }
        out.push(Decision {
            id: cur.id.clone(),
            time: cur.time,
            keep: !reasons.is_empty(),
            reasons,
        });
    }
    out
}

/// Why a group must not be pruned as decided, if it must not: the policy keeps none of its
/// snapshots, and emptying a group was not allowed. Pure.
pub fn refusal(decisions: &[Decision], allow_empty_group: bool) -> Option<String> {
    if allow_empty_group || decisions.is_empty() || decisions.iter().any(|d| d.keep) {
        return None;
    }
    Some(format!(
        "the policy keeps none of the {} snapshot(s) of this group: refusing to delete the last snapshot of a group. Check the --keep-* options (a mistyped --keep-tag keeps nothing); pass --allow-empty-group if emptying it is intended",
        decisions.len()
    ))
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
