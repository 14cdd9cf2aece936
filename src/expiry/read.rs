//! What the expiry guard reads from Kafka: the brokers' `offsets.retention.minutes`, and the
//! records of `__consumer_offsets` that say when each candidate group's offsets were committed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::rule::LogFacts;
use crate::error::{Error, Result};
use crate::kafka::tail::TailEvent;
use crate::kafka::KafkaClient;
use crate::log::record::{classic_state_timestamp, decode, LogRecord};

/// The broker config that bounds how long an idle group's offsets are kept.
pub const RETENTION_CONFIG: &str = "offsets.retention.minutes";
/// Kafka's default for it (7 days), when a broker reports no value.
pub const DEFAULT_RETENTION_MINUTES: u64 = 10080;
/// The topic the group coordinator writes commits to.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";
/// The group id the log reader's consumer carries (it only assigns partitions: it never joins
/// this group nor commits for it).
const READER_GROUP: &str = "offset-vault-expiry-guard";

/// The retention the guard uses, from each broker's value (`None`: not reported, Kafka's
/// default). With brokers that disagree, the shortest (the group coordinator of any group may be
/// any broker), with a warning.
pub fn retention_of(values: &BTreeMap<i32, Option<String>>) -> Result<(Duration, Vec<String>)> {
    let mut minutes = BTreeMap::new();
    for (id, v) in values {
        let m = match v.as_deref().map(str::trim) {
            None | Some("") => DEFAULT_RETENTION_MINUTES,
            Some(text) => text.parse::<u64>().map_err(|_| {
                Error::kafka(
                    "DescribeConfigs",
                    format!(
                        "broker {id} reports {RETENTION_CONFIG}={text}, not a number of minutes"
                    ),
                )
            })?,
        };
        minutes.insert(*id, m);
    }
    let shortest = *minutes
        .values()
        .min()
        .ok_or_else(|| Error::kafka("DescribeConfigs", "no broker answered"))?;
    let mut warnings = Vec::new();
    if minutes.values().any(|m| *m != shortest) {
        let each: Vec<String> = minutes.iter().map(|(id, m)| format!("{id}: {m}")).collect();
        warnings.push(format!(
            "the brokers disagree on {RETENTION_CONFIG} ({}); the shortest, {shortest}, is used",
            each.join(", ")
        ));
    }
    Ok((Duration::from_secs(shortest * 60), warnings))
}

/// Reads the partitions of `__consumer_offsets` that hold `groups` from their log start up to
/// the log end seen at the start (read_committed), and returns what they say of each group.
/// `warnings` gets the records that could not be decoded.
pub async fn log_facts(
    kafka: &KafkaClient,
    groups: &BTreeSet<String>,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, LogFacts>> {
    if groups.is_empty() {
        return Ok(BTreeMap::new());
    }
    let count = kafka
        .partition_counts(vec![OFFSETS_TOPIC.to_string()])
        .await?
        .get(OFFSETS_TOPIC)
        .copied()
        .unwrap_or(0);
    if count <= 0 {
        return Err(Error::NotFound {
            what: "topic",
            name: OFFSETS_TOPIC.into(),
            hint: "; the expiry guard reads the groups' commit times there (the principal needs DESCRIBE and READ on it)".into(),
        });
    }
    let partitions: BTreeSet<i32> = groups
        .iter()
        .filter_map(|g| crate::wire::offsets_partition(g, count as usize))
        .map(|p| p as i32)
        .collect();
    let (kafka, groups) = (kafka.clone(), groups.clone());
    let (facts, mut found) =
        tokio::task::spawn_blocking(move || read(&kafka, &partitions, &groups))
            .await
            .map_err(|e| Error::Internal(format!("reading {OFFSETS_TOPIC}: {e}")))?
            .map_err(|e| match e {
                // The reader only assigns partitions: it needs the topic, not a group.
                Error::AccessDenied { detail, .. } => Error::AccessDenied {
                    service: "Kafka",
                    resource: format!("topic {OFFSETS_TOPIC}"),
                    detail,
                    advice: "Grant the principal DESCRIBE and READ on the topic __consumer_offsets (kafka-acls --topic __consumer_offsets --operation Describe --operation Read): the expiry guard reads the groups' commit times there",
                },
                other => other,
            })?;
    warnings.append(&mut found);
    Ok(facts)
}

/// The blocking read of [`log_facts`].
fn read(
    kafka: &KafkaClient,
    partitions: &BTreeSet<i32>,
    groups: &BTreeSet<String>,
) -> Result<(BTreeMap<String, LogFacts>, Vec<String>)> {
    let tail = kafka.tail(OFFSETS_TOPIC, READER_GROUP, false, Box::new(|_| Vec::new()))?;
    // The end of each partition, as it is now: commits written after it are newer than the
    // start of this check and do not change whether a group was near expiry then.
    let mut ends = BTreeMap::new();
    let mut starts = Vec::new();
    for p in partitions {
        let (low, high) = tail.watermarks(*p)?;
        if high > low {
            ends.insert(*p, high);
            starts.push((*p, low));
        }
    }
    tail.assign(&starts)?;
    let stall = kafka.settings().timeout.max(Duration::from_secs(5));
    let mut last_progress = Instant::now();
    let mut facts: BTreeMap<String, LogFacts> = BTreeMap::new();
    let mut warnings = Vec::new();
    while !ends.is_empty() {
        let event = tail.poll(Duration::from_millis(200))?;
        match event {
            None if last_progress.elapsed() > stall => {
                let left: Vec<String> = ends
                    .iter()
                    .map(|(p, end)| format!("{OFFSETS_TOPIC}[{p}] up to {end}"))
                    .collect();
                return Err(Error::Timeout {
                    service: "Kafka",
                    op: format!("reading {OFFSETS_TOPIC}"),
                    after: stall,
                    detail: format!("no record came for {}", left.join(", ")),
                });
            }
            None => {}
            Some(TailEvent::End(p)) => {
                ends.remove(&p);
            }
            Some(TailEvent::Record(p, r)) => {
                last_progress = Instant::now();
                let Some(&end) = ends.get(&p) else { continue };
                if r.offset >= end {
                    ends.remove(&p);
                    continue;
                }
                if r.offset + 1 >= end {
                    ends.remove(&p);
                }
                let Some(key) = r.key.as_deref() else {
                    continue;
                };
                match decode(key, r.value.as_deref()) {
                    Ok(record) => apply(
                        &mut facts,
                        groups,
                        &record,
                        r.value.as_deref(),
                        &mut warnings,
                        p,
                        r.offset,
                    ),
                    Err(e) => {
                        warnings.push(format!("{OFFSETS_TOPIC}[{p}]@{}: {e}; skipped", r.offset))
                    }
                }
            }
        }
    }
    tail.close();
    Ok((facts, warnings))
}

/// Applies one decoded record to the facts of its group, if the group is a candidate.
fn apply(
    facts: &mut BTreeMap<String, LogFacts>,
    groups: &BTreeSet<String>,
    record: &LogRecord,
    value: Option<&[u8]>,
    warnings: &mut Vec<String>,
    partition: i32,
    offset: i64,
) {
    let group = match record {
        LogRecord::OffsetCommit { group, .. } | LogRecord::GroupMetadata { group, .. } => group,
        _ => return,
    };
    if !groups.contains(group) {
        return;
    }
    let since = match (record, value) {
        (LogRecord::GroupMetadata { kind: crate::log::record::GroupKind::Classic { .. }, .. }, Some(v)) => {
            classic_state_timestamp(v).unwrap_or_else(|e| {
                warnings.push(format!("{OFFSETS_TOPIC}[{partition}]@{offset}: {e}; the state time of group {group} is not known"));
                None
            })
        }
        _ => None,
    };
    facts.entry(group.clone()).or_default().apply(record, since);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::record::GroupKind;
    use crate::log::testing;

    #[test]
    fn records_of_candidate_groups_are_applied_with_the_state_time_of_their_metadata() {
        let groups: BTreeSet<String> = ["g".to_string()].into();
        let classic = |group: &str| LogRecord::GroupMetadata {
            group: group.into(),
            kind: GroupKind::Classic {
                protocol_type: Some("consumer".into()),
            },
            deleted: false,
        };
        // A version-3 classic metadata value: protocol type "consumer", generation 1, protocol
        // "range", no leader, state since 0x1000 ms, no members.
        let mut value = vec![0, 3, 0, 8];
        value.extend(b"consumer");
        value.extend([0, 0, 0, 1, 0, 5]);
        value.extend(b"range");
        value.extend([0xff, 0xff]);
        value.extend(0x1000i64.to_be_bytes());
        value.extend([0, 0, 0, 0]);
        let (mut facts, mut warnings) = (BTreeMap::new(), Vec::new());
        apply(
            &mut facts,
            &groups,
            &testing::commit("g", 0, 5, 100),
            None,
            &mut warnings,
            0,
            1,
        );
        apply(
            &mut facts,
            &groups,
            &testing::commit("other", 0, 5, 100),
            None,
            &mut warnings,
            0,
            2,
        );
        apply(
            &mut facts,
            &groups,
            &classic("g"),
            Some(&value),
            &mut warnings,
            0,
            3,
        );
        apply(
            &mut facts,
            &groups,
            &classic("other"),
            Some(&value),
            &mut warnings,
            0,
            4,
        );
        assert_eq!(facts.keys().collect::<Vec<_>>(), ["g"]);
        assert_eq!(facts["g"].state_since, Some(0x1000));
        assert_eq!(facts["g"].commits.len(), 1);
        assert!(warnings.is_empty(), "{warnings:?}");
        // A metadata value that cannot be read leaves the state time unknown, with a warning.
        apply(
            &mut facts,
            &groups,
            &classic("g"),
            Some(&[0, 9]),
            &mut warnings,
            7,
            5,
        );
        assert_eq!(facts["g"].state_since, None);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("__consumer_offsets[7]@5"),
            "{warnings:?}"
        );
    }

    #[test]
    fn the_retention_is_the_shortest_any_broker_reports_or_kafkas_default() {
        let values = |v: &[(i32, Option<&str>)]| -> BTreeMap<i32, Option<String>> {
            v.iter().map(|(id, s)| (*id, s.map(String::from))).collect()
        };
        // (values, minutes, warned)
        let cases = [
            (values(&[(1, Some("1"))]), 1, false),
            (values(&[(1, None)]), DEFAULT_RETENTION_MINUTES, false),
            (values(&[(1, Some("1440")), (2, Some("1440"))]), 1440, false),
            (
                values(&[(1, Some("1440")), (2, Some("60")), (3, None)]),
                60,
                true,
            ),
        ];
        for (v, minutes, warned) in cases {
            let (d, w) = retention_of(&v).unwrap();
            assert_eq!(d, Duration::from_secs(minutes * 60), "{v:?}");
            assert_eq!(!w.is_empty(), warned, "{v:?} {w:?}");
        }
        assert!(retention_of(&values(&[(1, Some("soon"))])).is_err());
        assert!(retention_of(&BTreeMap::new()).is_err());
    }
}
