//! The expiry guard: finds the Empty groups whose committed offsets the broker is about to
//! expire (`offsets.retention.minutes`), snapshots them, and says how to bring each one back.
//!
//! - [`rule`]: when a group's offsets expire, from its records in `__consumer_offsets` (pure).
//! - [`read`]: the brokers' retention (DescribeConfigs) and the records of the candidate groups.
//!
//! Commit times are not in OffsetFetch answers; they are in the commit records of
//! `__consumer_offsets`, so the guard reads the partitions of that topic that hold the candidate
//! groups (a group's records all land in one partition), from the log start to the log end seen
//! when it starts. The topic is compacted, so that is about one record per live offset and group.

pub mod read;
pub mod rule;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;

use crate::connect::ConnectClient;
use crate::error::Result;
use crate::kafka::{GroupListing, GroupState, GroupType, KafkaClient};
use crate::snapshot::{self, CaptureOptions, Selection};
use crate::store::Store;

pub use rule::Basis;

/// The tag every snapshot of the guard carries.
pub const TAG: &str = "expiry-guard";

/// What the guard checks, and whether it snapshots what it finds.
#[derive(Debug, Clone)]
pub struct ExpiryOptions {
    /// Groups whose first offset expires within this margin from now are reported.
    pub margin: Duration,
    /// The groups to check (the `snapshot` selection; a connector stands for its sink group).
    pub selection: Selection,
    /// Take a snapshot of the groups near expiry (none is taken when there are none).
    pub snapshot: bool,
    /// Tags of that snapshot, besides `expiry-guard=true`.
    pub tags: BTreeMap<String, String>,
}

/// One group near expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpiringGroup {
    pub group: String,
    pub state: GroupState,
    pub group_type: GroupType,
    /// Partitions with a committed offset.
    pub partitions: usize,
    /// The newest commit time of its offsets.
    pub newest_commit: DateTime<Utc>,
    /// When the broker removes its first offset (see [`rule`]).
    pub expires_at: DateTime<Utc>,
    /// What `expires_at` is counted from.
    pub basis: Basis,
    /// The command that brings the group's offsets back after they expired.
    pub restore_hint: String,
}

/// What one run of the guard found and did.
#[derive(Debug, Clone, Serialize)]
pub struct ExpiryReport {
    /// `offsets.retention.minutes` as the brokers report it (in JSON: `retention_seconds`).
    #[serde(rename = "retention_seconds", serialize_with = "seconds")]
    pub retention: Duration,
    /// The margin used (in JSON: `margin_seconds`).
    #[serde(rename = "margin_seconds", serialize_with = "seconds")]
    pub margin: Duration,
    pub checked_at: DateTime<Utc>,
    /// Empty groups of the selection that were checked.
    pub checked: usize,
    /// The groups near expiry, the first to expire first.
    pub groups: Vec<ExpiringGroup>,
    /// The snapshot of those groups, when one was taken.
    pub snapshot_id: Option<String>,
    pub warnings: Vec<String>,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

fn time(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Checks the selected groups, snapshots those near expiry (unless `opts.snapshot` is off or
/// there are none), and reports them.
pub async fn guard(
    kafka: &KafkaClient,
    store: &Store,
    connect: &[ConnectClient],
    opts: &ExpiryOptions,
) -> Result<ExpiryReport> {
    let pattern = snapshot::capture::validate(&opts.selection, connect.len())?;
    let checked_at = Utc::now();
    let mut warnings = Vec::new();
    let (retention, mut w) =
        read::retention_of(&kafka.broker_config(read::RETENTION_CONFIG).await?)?;
    warnings.append(&mut w);

    let wanted = snapshot::capture::selected_groups(
        kafka,
        connect,
        &opts.selection,
        pattern.as_ref(),
        &mut warnings,
    )
    .await?;
    let candidates: BTreeMap<String, GroupListing> = kafka
        .list_groups()
        .await?
        .into_iter()
        .filter(|g| wanted.contains(&g.group_id))
        .filter(|g| g.state == GroupState::Empty && g.group_type != GroupType::Share)
        .map(|g| (g.group_id.clone(), g))
        .collect();
    let live = committed_partitions(kafka, &candidates, &mut warnings).await;
    let ids: BTreeSet<String> = live.keys().cloned().collect();
    let facts = read::log_facts(kafka, &ids, &mut warnings).await?;

    let clock = Clock {
        retention_ms: i64::try_from(retention.as_millis()).unwrap_or(i64::MAX),
        margin_ms: i64::try_from(opts.margin.as_millis()).unwrap_or(i64::MAX),
        checked_at,
    };
    let archive = Archive::read(store).await?;
    let mut groups: Vec<ExpiringGroup> = live
        .iter()
        .filter_map(|(g, partitions)| {
            let f = facts.get(g).cloned().unwrap_or_default();
            expiring_group(
                &candidates[g],
                partitions,
                &f,
                &clock,
                &archive,
                &mut warnings,
            )
        })
        .collect();
    groups.sort_by(|a, b| (a.expires_at, &a.group).cmp(&(b.expires_at, &b.group)));

    let snapshot_id = if opts.snapshot && !groups.is_empty() {
        Some(snapshot_expiring(kafka, store, connect, opts, &groups, &mut warnings).await?)
    } else {
        None
    };
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(ExpiryReport {
        retention,
        margin: opts.margin,
        checked_at,
        checked: candidates.len(),
        groups,
        snapshot_id,
        warnings,
    })
}

/// The partitions each candidate still has committed offsets on. A group with none has expired
/// already (or never committed), and is left out.
async fn committed_partitions(
    kafka: &KafkaClient,
    candidates: &BTreeMap<String, GroupListing>,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, Vec<(String, i32)>> {
    let mut live = BTreeMap::new();
    for (g, r) in kafka
        .group_offsets_each(candidates.keys().cloned().collect())
        .await
    {
        match r {
            Ok(offsets) if !offsets.is_empty() => {
                live.insert(
                    g,
                    offsets
                        .into_iter()
                        .map(|o| (o.topic, o.partition))
                        .collect(),
                );
            }
            Ok(_) => {}
            Err(e) => warnings.push(format!("group {g}: committed offsets not read: {e}")),
        }
    }
    live
}

/// The retention, the margin and the instant of the check.
struct Clock {
    retention_ms: i64,
    margin_ms: i64,
    checked_at: DateTime<Utc>,
}

/// A group's expiry, when it falls within the margin.
fn expiring_group(
    listed: &GroupListing,
    partitions: &[(String, i32)],
    f: &rule::LogFacts,
    clock: &Clock,
    archive: &Archive,
    warnings: &mut Vec<String>,
) -> Option<ExpiringGroup> {
    let g = &listed.group_id;
    let mut offsets = Vec::new();
    let mut unknown = 0;
    for tp in partitions {
        match f.commits.get(tp) {
            Some(c) => offsets.push(*c),
            None => unknown += 1,
        }
    }
    if unknown > 0 {
        warnings.push(format!(
            "group {g}: {unknown} of its {} committed offsets have no commit record in {}; they are left out of its expiry time",
            partitions.len(),
            read::OFFSETS_TOPIC
        ));
    }
    let protocol = f
        .protocol_type
        .clone()
        .or_else(|| listed.protocol_type.clone());
    let classic_since = (listed.group_type == GroupType::Classic
        && rule::counts_from_empty(protocol.as_deref()))
    .then_some(f.state_since)
    .flatten();
    let e = rule::expiry(&offsets, classic_since, clock.retention_ms)?;
    if !rule::near_expiry(
        e.expires_at,
        clock.margin_ms,
        clock.checked_at.timestamp_millis(),
    ) {
        return None;
    }
    Some(ExpiringGroup {
        group: g.clone(),
        state: listed.state.clone(),
        group_type: listed.group_type,
        partitions: partitions.len(),
        newest_commit: time(e.newest_commit),
        expires_at: time(e.expires_at),
        basis: e.basis,
        restore_hint: restore_hint(g, archive.covers(g, e.newest_commit, clock.checked_at)),
    })
}

/// Snapshots the groups near expiry, tagged `expiry-guard=true`; returns the snapshot's id.
async fn snapshot_expiring(
    kafka: &KafkaClient,
    store: &Store,
    connect: &[ConnectClient],
    opts: &ExpiryOptions,
    groups: &[ExpiringGroup],
    warnings: &mut Vec<String>,
) -> Result<String> {
    let mut tags = opts.tags.clone();
    tags.insert(TAG.into(), "true".into());
    let capture = CaptureOptions {
        selection: Selection {
            groups: groups.iter().map(|g| g.group.clone()).collect(),
            topics: opts.selection.topics.clone(),
            // A group that expires between the check and the capture is a warning.
            allow_missing: true,
            ..Default::default()
        },
        tags,
        allow_empty: true,
        ..Default::default()
    };
    let (manifest, mut w) = snapshot::take(store, kafka, connect, &capture).await?;
    warnings.append(&mut w);
    Ok(manifest.meta.id)
}

/// How far the store's commit-log archive reaches, per partition of `__consumer_offsets`.
struct Archive {
    partitions: Option<i32>,
    heads: BTreeMap<i32, crate::log::archive::Head>,
}

impl Archive {
    async fn read(store: &Store) -> Result<Archive> {
        use crate::log::archive;
        let heads = archive::heads(store).await?;
        let partitions = if heads.is_empty() {
            None
        } else {
            archive::partition_count(store, crate::log::segment::Lane::Offsets).await?
        };
        Ok(Archive { partitions, heads })
    }

    /// The instant at which the archive holds `group`'s offsets as they are now: when its
    /// partition's archive was last known complete, if that is after the group's newest commit
    /// (capped at `now`); `None` without such an archive.
    fn covers(&self, group: &str, newest_commit: i64, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let p = crate::wire::offsets_partition(group, usize::try_from(self.partitions?).ok()?)?;
        let head = self.heads.get(&i32::try_from(p).ok()?)?;
        (head.checked_at.timestamp_millis() >= newest_commit).then(|| head.checked_at.min(now))
    }
}

/// How to bring a group's offsets back once the broker expired them: from the commit-log
/// archive at an instant it covers, or else from the newest snapshot holding the group (the
/// guard's own).
pub fn restore_hint(group: &str, archived_at: Option<DateTime<Utc>>) -> String {
    let group = shell_word(group);
    match archived_at {
        Some(at) => format!(
            "offset-vault restore --group {group} --at {} --execute",
            at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        ),
        None => format!("offset-vault restore --group {group} --latest --execute"),
    }
}

/// A word as a POSIX shell reads it back: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:/@+=,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_restores_from_the_archive_when_there_is_one_and_quotes_odd_names() {
        let at = Utc.timestamp_millis_opt(1_700_000_000_123).unwrap();
        // (group, archived at, hint)
        let cases = [
            (
                "orders",
                None,
                "offset-vault restore --group orders --latest --execute",
            ),
            (
                "orders",
                Some(at),
                "offset-vault restore --group orders --at 2023-11-14T22:13:20.123Z --execute",
            ),
            (
                "a b",
                None,
                "offset-vault restore --group 'a b' --latest --execute",
            ),
            (
                "it's",
                None,
                r"offset-vault restore --group 'it'\''s' --latest --execute",
            ),
        ];
        for (group, archived, want) in cases {
            assert_eq!(restore_hint(group, archived), want);
        }
    }
}
