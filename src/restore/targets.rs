//! Reset scenarios: kafka-consumer-groups' `--reset-offsets` options turned into target offsets.
//! Pure: the scenario, the partitions in scope and what the cluster says about each in, the
//! targets out. [`ResetSpec`] is what a reset is asked to do (a plan file records it). The plan, the safety checks and the apply are restore's (see `super::reset`).
//!
//! The targets are those of kafka-consumer-groups before it clamps: a target outside the log is
//! kept as it is, so the plan reports it (and refuses it unless `--on-out-of-range clamp`).

use std::collections::BTreeMap;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::kafka::{GroupType, TopicPartition, Watermarks};
use crate::snapshot::model::Selection;

/// Where the reset moves each partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "scenario", content = "value")]
pub enum Scenario {
    /// The log-start offset.
    ToEarliest,
    /// The log-end offset.
    ToLatest,
    /// The committed offset (the log-end offset where there is none).
    ToCurrent,
    /// This offset.
    ToOffset(i64),
    /// The committed offset plus this (negative: back).
    ShiftBy(i64),
    /// The first record whose timestamp is at or after this instant (the log-end offset where
    /// there is none). `--by-duration` becomes this, counted back from when it was planned.
    ToDatetime(DateTime<Utc>),
    /// The offsets of a kafka-consumer-groups CSV file, per (group, topic, partition).
    FromFile(BTreeMap<String, BTreeMap<TopicPartition, i64>>),
}

impl Scenario {
    /// The kafka-consumer-groups option it stands for.
    pub fn option(&self) -> &'static str {
        match self {
            Scenario::ToEarliest => "--to-earliest",
            Scenario::ToLatest => "--to-latest",
            Scenario::ToCurrent => "--to-current",
            Scenario::ToOffset(_) => "--to-offset",
            Scenario::ShiftBy(_) => "--shift-by",
            Scenario::ToDatetime(_) => "--to-datetime",
            Scenario::FromFile(_) => "--from-file",
        }
    }

    /// The scenario in words, for the plan's label and the pre-reset snapshot's tag.
    pub fn describe(&self) -> String {
        match self {
            Scenario::ToOffset(n) | Scenario::ShiftBy(n) => format!("{} {n}", self.option()),
            Scenario::ToDatetime(t) => format!(
                "{} {}",
                self.option(),
                t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            ),
            _ => self.option().to_string(),
        }
    }

    /// The targets follow the committed offsets: a commit after the plan makes them stale.
    pub fn is_relative(&self) -> bool {
        matches!(self, Scenario::ShiftBy(_) | Scenario::ToCurrent)
    }

    /// Needs the offset of each partition at the scenario's instant.
    pub fn instant(&self) -> Option<DateTime<Utc>> {
        match self {
            Scenario::ToDatetime(t) => Some(*t),
            _ => None,
        }
    }

    /// Refuses a scenario a group of this type cannot take, with the reason.
    pub fn check_group_type(&self, group: &str, t: GroupType) -> Result<()> {
        let ok = match t {
            // A share group has start offsets, not committed positions: what the broker can set
            // (kafka-share-groups' scenarios).
            GroupType::Share => matches!(
                self,
                Scenario::ToEarliest
                    | Scenario::ToLatest
                    | Scenario::ToDatetime(_)
                    | Scenario::ToOffset(_)
            ),
            _ => true,
        };
        if ok {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{} cannot be used on share group {group}: a share group's start offset can be set --to-earliest, --to-latest, --to-datetime/--by-duration or --to-offset; leave the group out or use one of those",
            self.option()
        )))
    }
}

/// What the cluster says about one partition in scope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionFacts {
    /// The group's committed offset (a share group's start offset), if it has one.
    pub current: Option<i64>,
    pub marks: Watermarks,
    /// With `--to-datetime`: the first offset whose record timestamp is at or after the
    /// instant (`None`: no such record).
    pub at_instant: Option<i64>,
}

/// The target of one partition, or why there is none.
pub fn target(
    scenario: &Scenario,
    group: &str,
    tp: &TopicPartition,
    f: &PartitionFacts,
) -> std::result::Result<i64, String> {
    let name = || format!("{group} {}[{}]", tp.0, tp.1);
    let end = || {
        f.marks.log_end.ok_or_else(|| {
            format!(
                "{}: its log-end offset could not be read; run the reset again",
                name()
            )
        })
    };
    match scenario {
        Scenario::ToEarliest => f.marks.log_start.ok_or_else(|| {
            format!(
                "{}: its log-start offset could not be read; run the reset again",
                name()
            )
        }),
        Scenario::ToLatest => end(),
        Scenario::ToCurrent => f.current.map_or_else(end, Ok),
        Scenario::ToOffset(n) => Ok(*n),
        Scenario::ShiftBy(n) => f.current.map(|c| c.saturating_add(*n)).ok_or_else(|| {
            format!(
                "{}: no committed offset to shift from; use --to-offset, --to-earliest or --to-datetime for it, or leave it out with --topic",
                name()
            )
        }),
        Scenario::ToDatetime(_) => f.at_instant.map_or_else(end, Ok),
        Scenario::FromFile(rows) => rows
            .get(group)
            .and_then(|r| r.get(tp))
            .copied()
            .ok_or_else(|| format!("{}: not in the file", name())),
    }
}

/// Which partitions of a group a reset touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every partition the group has a committed offset for (`--all-topics`).
    AllTopics,
    /// These topics: all their partitions, or the ones listed (`--topic T`, `--topic T:0,2`).
    Topics(Vec<(String, Option<Vec<i32>>)>),
    /// The partitions the `--from-file` file names for the group.
    File,
}

/// What a reset is asked to do. Serializable: a plan file records it, and `--from-plan` plans
/// again from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetSpec {
    pub selection: Selection,
    pub scope: Scope,
    pub scenario: Scenario,
    /// `--from-file` with a connector's own JSON (`GET /connectors/NAME/offsets`): the source
    /// offsets to set, for the one source connector selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_offsets: Option<Vec<Value>>,
}

impl ResetSpec {
    /// The label of the plan (where a restore names its snapshot).
    pub fn label(&self) -> String {
        format!("reset {}", self.scenario.describe())
    }
}

/// Parses `--topic T` or `--topic T:0,2` (kafka-consumer-groups' form).
pub fn parse_topic(text: &str) -> Result<(String, Option<Vec<i32>>)> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--topic {text}: {why}; expected TOPIC or TOPIC:PARTITION[,PARTITION...] (e.g. orders:0,2)"
        ))
    };
    let (topic, parts) = match text.rsplit_once(':') {
        None => (text, None),
        Some((t, p)) => (t, Some(p)),
    };
    if topic.trim().is_empty() {
        return Err(bad("the topic is empty"));
    }
    let Some(parts) = parts else {
        return Ok((topic.to_string(), None));
    };
    let mut list = Vec::new();
    for p in parts.split(',') {
        let n: i32 = p
            .trim()
            .parse()
            .map_err(|_| bad(&format!("{p:?} is not a partition number")))?;
        if n < 0 {
            return Err(bad("a partition number is never negative"));
        }
        if !list.contains(&n) {
            list.push(n);
        }
    }
    list.sort_unstable();
    Ok((topic.to_string(), Some(list)))
}

/// The partitions of one group in scope, sorted. `committed`: the partitions it has an offset
/// for; `counts`: the partition count of each topic named with `--topic` (a topic missing from
/// it does not exist).
pub fn scope_partitions(
    scope: &Scope,
    scenario: &Scenario,
    group: &str,
    committed: &[TopicPartition],
    counts: &BTreeMap<String, i32>,
) -> Result<Vec<TopicPartition>> {
    let mut out: Vec<TopicPartition> = match scope {
        Scope::AllTopics => committed.to_vec(),
        Scope::File => match scenario {
            Scenario::FromFile(rows) => rows
                .get(group)
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        Scope::Topics(topics) => {
            let mut out = Vec::new();
            for (topic, parts) in topics {
                match (parts, counts.get(topic)) {
                    (Some(parts), _) => out.extend(parts.iter().map(|p| (topic.clone(), *p))),
                    (None, Some(n)) => out.extend((0..*n).map(|p| (topic.clone(), p))),
                    (None, None) => {
                        return Err(Error::NotFound {
                            what: "topic",
                            name: topic.clone(),
                            hint: "; check the name with kafka-topics --list".into(),
                        })
                    }
                }
            }
            out
        }
    };
    out.sort();
    out.dedup();
    Ok(out)
}

/// Parses `--to-datetime` as kafka-consumer-groups does: `YYYY-MM-DDTHH:mm:SS.sss` with an
/// optional zone (`Z`, `+01:00`, `-0500`); without one, the local time zone. The milliseconds
/// may be left out.
pub fn parse_datetime(text: &str) -> Result<DateTime<Utc>> {
    let bad = || {
        Error::usage(format!(
            "--to-datetime {text}: expected YYYY-MM-DDTHH:mm:SS.sss with an optional zone (Z, +01:00), e.g. 2026-12-01T10:00:00.000Z"
        ))
    };
    if !text.contains('T') {
        return Err(bad());
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%z") {
        return Ok(t.with_timezone(&Utc));
    }
    let naive = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").map_err(|_| bad())?;
    Local
        .from_local_datetime(&naive)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(bad)
}

/// Parses `--by-duration` as kafka-consumer-groups does (ISO-8601 `PnDTnHnMnS`, e.g. `PT1H`,
/// `P1DT12H`, `PT0.5S`) into a duration back from now.
pub fn parse_iso_duration(text: &str) -> Result<chrono::Duration> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--by-duration {text}: {why}; expected ISO-8601 PnDTnHnMnS, e.g. PT30M, PT1H, P1DT12H"
        ))
    };
    let upper = text.trim().to_ascii_uppercase();
    let rest = upper
        .strip_prefix('P')
        .ok_or_else(|| bad("it must start with P"))?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut millis: i64 = 0;
    let mut any = false;
    let mut add = |number: &str, unit: char| -> Result<()> {
        let per: f64 = match unit {
            'D' => 86_400_000.0,
            'H' => 3_600_000.0,
            'M' => 60_000.0,
            'S' => 1000.0,
            _ => return Err(bad(&format!("unknown unit {unit}"))),
        };
        let n: f64 = number
            .parse()
            .map_err(|_| bad(&format!("{number:?} is not a number")))?;
        if !(n.is_finite() && n >= 0.0) || (unit != 'S' && number.contains('.')) {
            return Err(bad(
                "amounts are whole numbers, not negative (seconds may have a fraction)",
            ));
        }
        millis = millis.saturating_add((n * per).round() as i64);
        any = true;
        Ok(())
    };
    let mut walk = |part: &str, units: &[char]| -> Result<()> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
            } else if units.contains(&c) && !number.is_empty() {
                add(&number, c)?;
                number.clear();
            } else {
                return Err(bad(&format!("unexpected {c:?}")));
            }
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(bad("a number without its unit"))
        }
    };
    walk(days, &['D'])?;
    if let Some(t) = time {
        if t.is_empty() {
            return Err(bad("nothing after T"));
        }
        walk(t, &['H', 'M', 'S'])?;
    }
    if !any {
        return Err(bad("no amount"));
    }
    Ok(chrono::Duration::milliseconds(millis))
}

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;
