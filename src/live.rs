//! The cluster as it is now, read for a restore plan or a diff: each selected group's state,
//! members and committed offsets, the partitions' log ranges, where each connector lives and its
//! offsets, and (for `--by-timestamp`) targets translated by record time.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{
    GroupListing, GroupState, GroupType, KafkaClient, OffsetQuery, TopicPartition, Watermarks,
};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, Member};

/// A group as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGroup {
    /// Known, not found, or unknown with the reason.
    pub state: GroupState,
    pub members: Vec<Member>,
    pub offsets: BTreeMap<TopicPartition, i64>,
    /// Share groups: the broker's lag per partition (records at or above the start offset not
    /// yet acknowledged).
    pub share_lag: BTreeMap<TopicPartition, i64>,
}

/// The live state the plan is computed against.
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    pub groups: BTreeMap<String, LiveGroup>,
    /// Partition count per existing topic.
    pub topics: BTreeMap<String, i32>,
    pub watermarks: BTreeMap<TopicPartition, Watermarks>,
    /// The id of each topic of the plan that exists (a recreated topic has a new one).
    pub topic_ids: BTreeMap<String, String>,
    /// Targets are translated by time (`--by-timestamp`).
    pub by_timestamp: bool,
    /// Per (group, partition): the target translated by time, with a note.
    pub translated: BTreeMap<(String, TopicPartition), (i64, String)>,
    /// `None` for a connector that does not exist now.
    pub connectors: BTreeMap<String, Option<LiveConnector>>,
}

/// A connector as it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveConnector {
    pub connect_url: String,
    pub state: String,
    pub offsets: Option<Vec<Value>>,
}

/// Finds where a connector lives now: the given Connect URLs first, else the snapshot's.
async fn live_connector(
    c: &ConnectorSnapshot,
    clients: &[ConnectClient],
    timeout: Duration,
) -> Result<Option<(ConnectClient, LiveConnector)>> {
    let fallback;
    let candidates: &[ConnectClient] = if clients.is_empty() {
        fallback = [ConnectClient::new(&c.connect_url, timeout)?];
        &fallback
    } else {
        clients
    };
    for client in candidates {
        if let Some((_, status)) = client.connector(&c.name).await? {
            let offsets = match client.offsets(&c.name).await? {
                crate::connect::OffsetsAnswer::Offsets(o) => Some(o),
                crate::connect::OffsetsAnswer::Unsupported(_) => None,
            };
            let live = LiveConnector {
                connect_url: client.url().to_string(),
                state: status.connector.state,
                offsets,
            };
            return Ok(Some((client.clone(), live)));
        }
    }
    Ok(None)
}

/// Reads everything the plan depends on.
pub async fn read(
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    groups: &[GroupSnapshot],
    connectors: &[ConnectorSnapshot],
    by_timestamp: bool,
) -> Result<(LiveView, BTreeMap<String, ConnectClient>)> {
    read_listed(kafka, clients, groups, connectors, by_timestamp, None).await
}

/// [`read`], the groups' types taken from `listing` (the cluster's groups as
/// [`KafkaClient::group_types_where`] lists them) when it is given, instead of a listing of
/// the cluster made for these groups: a plan of many batches lists the cluster once.
pub async fn read_listed(
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    groups: &[GroupSnapshot],
    connectors: &[ConnectorSnapshot],
    by_timestamp: bool,
    listing: Option<&BTreeMap<String, GroupListing>>,
) -> Result<(LiveView, BTreeMap<String, ConnectClient>)> {
    require_wire_for_shares(kafka, groups).await?;
    let ids: Vec<String> = groups.iter().map(|g| g.group_id.clone()).collect();
    let read_groups = async {
        match listing {
            Some(listing) => {
                kafka
                    .read_groups_typed(ids, &listed_of(listing, groups))
                    .await
            }
            None => kafka.read_groups(ids).await,
        }
    };
    let ((described, offsets), topics) =
        futures::try_join!(read_groups, kafka.partition_counts(topic_names(groups)))?;
    let mut offsets = first_error(offsets)?;
    let mut view = LiveView {
        topics,
        ..Default::default()
    };
    for d in described {
        let committed = offsets.remove(&d.group_id).unwrap_or_default();
        let members = d.members.iter().map(Member::from).collect();
        view.groups
            .insert(d.group_id.clone(), live_group(d.state, members, committed));
    }
    fill_partitions(kafka, groups, &mut view).await?;
    if by_timestamp {
        view.translated = translate_by_time(kafka, groups, &view).await?;
        view.by_timestamp = true;
    }
    let mut clients_by_name = BTreeMap::new();
    for c in connectors {
        let found = live_connector(c, clients, kafka.settings().timeout).await?;
        if let Some((client, _)) = &found {
            clients_by_name.insert(c.name.clone(), client.clone());
        }
        view.connectors
            .insert(c.name.clone(), found.map(|(_, l)| l));
    }
    Ok((view, clients_by_name))
}

/// The committed offsets of groups now, and their partitions' log ranges and topic ids, for a
/// comparison: the groups are not described (their state is not read) and not listed. Each
/// group's type is the one `groups` records (share groups are asked for their start offsets);
/// only groups of unknown type (not in the snapshot) are looked up in the cluster's listing.
pub async fn read_offsets(kafka: &KafkaClient, groups: &[GroupSnapshot]) -> Result<LiveView> {
    require_wire_for_shares(kafka, groups).await?;
    let unknown: Vec<String> = groups
        .iter()
        .filter(|g| g.group_type == GroupType::Unknown)
        .map(|g| g.group_id.clone())
        .collect();
    let mut types = kafka.group_types(&unknown).await?;
    for g in groups.iter().filter(|g| g.group_type == GroupType::Share) {
        types.insert(
            g.group_id.clone(),
            crate::kafka::GroupListing {
                group_id: g.group_id.clone(),
                state: GroupState::Unknown("not read".into()),
                group_type: GroupType::Share,
                is_simple: false,
                protocol_type: None,
            },
        );
    }
    let ids: Vec<String> = groups.iter().map(|g| g.group_id.clone()).collect();
    let (offsets, topics) = futures::join!(
        kafka.offsets_listed(ids, &types),
        kafka.partition_counts(topic_names(groups))
    );
    let mut view = LiveView {
        topics: topics?,
        ..Default::default()
    };
    for (g, committed) in first_error(offsets)? {
        let state = GroupState::Unknown("not read".into());
        view.groups
            .insert(g, live_group(state, Vec::new(), committed));
    }
    fill_partitions(kafka, groups, &mut view).await?;
    Ok(view)
}

/// The listing of `groups` out of a listing of the cluster's groups: what
/// [`KafkaClient::group_types`] gives for them when the cluster lists `listing`. Pure.
pub fn listed_of(
    listing: &BTreeMap<String, GroupListing>,
    groups: &[GroupSnapshot],
) -> BTreeMap<String, GroupListing> {
    groups
        .iter()
        .filter_map(|g| listing.get_key_value(&g.group_id))
        .map(|(id, l)| (id.clone(), l.clone()))
        .collect()
}

async fn require_wire_for_shares(kafka: &KafkaClient, groups: &[GroupSnapshot]) -> Result<()> {
    if let Some(g) = groups.iter().find(|g| g.group_type == GroupType::Share) {
        kafka
            .require_wire(&format!("share group {}", g.group_id))
            .await?;
    }
    Ok(())
}

/// The topics of the groups' partitions.
fn topic_names(groups: &[GroupSnapshot]) -> Vec<String> {
    let names: BTreeSet<String> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| p.topic.clone()))
        .collect();
    names.into_iter().collect()
}

/// The groups' committed offsets; the first group whose offsets could not be read fails the
/// whole view.
fn first_error(
    offsets: BTreeMap<String, Result<Vec<crate::kafka::GroupOffset>>>,
) -> Result<BTreeMap<String, Vec<crate::kafka::GroupOffset>>> {
    offsets
        .into_iter()
        .map(|(g, r)| r.map(|o| (g, o)))
        .collect()
}

fn live_group(
    state: GroupState,
    members: Vec<Member>,
    committed: Vec<crate::kafka::GroupOffset>,
) -> LiveGroup {
    LiveGroup {
        state,
        members,
        share_lag: committed
            .iter()
            .filter_map(|c| c.lag.map(|l| ((c.topic.clone(), c.partition), l)))
            .collect(),
        offsets: committed
            .into_iter()
            .map(|c| ((c.topic, c.partition), c.offset))
            .collect(),
    }
}

/// The log ranges and topic ids of the groups' partitions whose topics exist now.
async fn fill_partitions(
    kafka: &KafkaClient,
    groups: &[GroupSnapshot],
    view: &mut LiveView,
) -> Result<()> {
    let partitions: BTreeSet<TopicPartition> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| (p.topic.clone(), p.partition)))
        .filter(|(t, p)| view.topics.get(t).is_some_and(|n| p < n))
        .collect();
    let names: BTreeSet<String> = partitions.iter().map(|(t, _)| t.clone()).collect();
    let (marks, ids) = futures::try_join!(
        kafka.watermarks(&partitions),
        kafka.topic_ids(names.into_iter().collect())
    )?;
    view.watermarks = marks;
    view.topic_ids = ids;
    Ok(())
}

/// For each partition with a recorded last-record timestamp `ts`: the first offset at or after
/// `ts` (`x`) and the first after it (`y`). If exactly one record carries `ts` (`y == x + 1`), the
/// group had consumed it, and `y` is the exact position. If several do, which of them were
/// consumed is unknown, and `x` is used: those records are processed again, none is skipped.
async fn translate_by_time(
    kafka: &KafkaClient,
    groups: &[GroupSnapshot],
    view: &LiveView,
) -> Result<BTreeMap<(String, TopicPartition), (i64, String)>> {
    // Distinct (partition, time) pairs; a batched request holds each partition once, so several
    // times for one partition are looked up in rounds.
    let mut pending: BTreeMap<TopicPartition, BTreeSet<i64>> = BTreeMap::new();
    for p in groups.iter().flat_map(|g| &g.partitions) {
        let tp = (p.topic.clone(), p.partition);
        if let (Some(ts), true) = (p.last_record_timestamp, view.watermarks.contains_key(&tp)) {
            pending.entry(tp).or_default().insert(ts.timestamp_millis());
        }
    }
    let stamped = groups
        .iter()
        .flat_map(|g| &g.partitions)
        .any(|p| p.last_record_timestamp.is_some());
    if !stamped {
        return Err(Error::usage(
            "--by-timestamp: the snapshot has no record timestamps for the selected partitions; take snapshots with --with-timestamps",
        ));
    }
    // Partitions whose topic does not exist here are not looked up: the plan reports them
    // missing, by name.
    let found = spans_at_times(kafka, pending, &view.watermarks).await?;
    let mut out = BTreeMap::new();
    for g in groups {
        for p in &g.partitions {
            let Some(ts) = p.last_record_timestamp else {
                continue;
            };
            let tp = (p.topic.clone(), p.partition);
            let Some(&(x, y)) = found.get(&(tp.clone(), ts.timestamp_millis())) else {
                continue;
            };
            let end = view.watermarks.get(&tp).and_then(|w| w.log_end);
            let (target, note) = by_time_target(ts, x, y, end);
            out.insert((g.group_id.clone(), tp), (target, note));
        }
    }
    Ok(out)
}

/// The target of one partition by the time of its last consumed record `ts` (pure), from the
/// first offset at or after `ts` (`x`) and the first after it (`y`), and the plan row's note.
/// With no record at or after `ts` both are the log end: the target is the log end, where
/// `kafka-consumer-groups --to-datetime` lands too, and the note says so rather than "exact".
fn by_time_target(ts: DateTime<Utc>, x: i64, y: i64, end: Option<i64>) -> (i64, String) {
    let when = ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    if y == x && end.is_some_and(|end| x >= end) {
        return (
            x,
            format!(
                "by time: no record at or after {when} (the last consumed record's time): target is the log end {x}, as kafka-consumer-groups sets it"
            ),
        );
    }
    let (target, how) = if y == x {
        (
            x,
            "no record has that time; target is the first later record",
        )
    } else if y == x + 1 {
        (y, "exact")
    } else {
        (
            x,
            "several records share that time; they are processed again",
        )
    };
    (
        target,
        format!("by time: last record at {when} -> offset {target} ({how})"),
    )
}

/// For each (partition, time in ms): the first offset whose record is at or after that time, and
/// the first after it (ListOffsets at T and T+1); the records between share the time. Where no
/// record is at or after it, the log end. A batched request holds each partition once, so
/// several times of one partition are looked up in rounds.
pub(crate) async fn spans_at_times(
    kafka: &KafkaClient,
    mut pending: BTreeMap<TopicPartition, BTreeSet<i64>>,
    watermarks: &BTreeMap<TopicPartition, Watermarks>,
) -> Result<BTreeMap<(TopicPartition, i64), (i64, i64)>> {
    let mut found = BTreeMap::new();
    loop {
        let round: Vec<(TopicPartition, i64)> = pending
            .iter_mut()
            .filter_map(|(tp, times)| times.pop_first().map(|ms| (tp.clone(), ms)))
            .collect();
        if round.is_empty() {
            break;
        }
        let query = |delta: i64| {
            round
                .iter()
                .map(|(tp, ms)| (tp.clone(), OffsetQuery::Timestamp(ms + delta)))
                .collect::<Vec<_>>()
        };
        let (at, after) = futures::try_join!(
            kafka.list_offsets_each(query(0)),
            kafka.list_offsets_each(query(1))
        )?;
        for (tp, ms) in round {
            let end = watermarks.get(&tp).and_then(|w| w.log_end).unwrap_or(0);
            // -1: no record at or after that time.
            let resolve = |r: Option<&std::result::Result<i64, String>>| {
                match r {
                Some(Ok(o)) if *o >= 0 => Ok(*o),
                Some(Ok(_)) => Ok(end),
                // No answer is never taken for "no record after it".
                None => Err(Error::kafka(
                    "ListOffsets by time",
                    format!(
                        "{}[{}]: the broker did not answer for it; nothing was changed, run the command again",
                        tp.0, tp.1
                    ),
                )),
                Some(Err(e)) => Err(Error::kafka(
                    "ListOffsets",
                    format!("{}[{}]: {e}", tp.0, tp.1),
                )),
            }
            };
            let x = resolve(at.get(&tp))?;
            let y = resolve(after.get(&tp))?;
            found.insert((tp, ms), (x, y));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{by_time_target, listed_of};
    use crate::kafka::{GroupListing, GroupState, GroupType};
    use crate::snapshot::model::GroupSnapshot;
    use chrono::{DateTime, Utc};
    use std::collections::BTreeMap;

    fn group(id: &str) -> GroupSnapshot {
        GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: GroupType::Classic,
            members: Vec::new(),
            connector: None,
            configs: Default::default(),
            partitions: Vec::new(),
        }
    }

    fn listed(id: &str, group_type: GroupType, state: GroupState) -> GroupListing {
        GroupListing {
            group_id: id.into(),
            state,
            group_type,
            is_simple: false,
            protocol_type: Some("consumer".into()),
        }
    }

    #[test]
    fn a_batch_takes_its_own_groups_out_of_the_listing_of_the_cluster() {
        let cluster: BTreeMap<String, GroupListing> = [
            listed("a", GroupType::Classic, GroupState::Empty),
            listed("b", GroupType::Consumer, GroupState::Stable),
            listed("c", GroupType::Streams, GroupState::Empty),
            listed("share", GroupType::Share, GroupState::Empty),
        ]
        .into_iter()
        .map(|l| (l.group_id.clone(), l))
        .collect();
        // (case, the batch's groups, the groups whose listing it gets)
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("no group", &[], &[]),
            (
                "every group listed",
                &["a", "b", "c", "share"],
                &["a", "b", "c", "share"],
            ),
            ("a few of the cluster's", &["c", "a"], &["a", "c"]),
            ("a group the cluster does not list", &["gone", "b"], &["b"]),
            ("only unlisted groups", &["gone", "new"], &[]),
            ("a group twice", &["b", "b"], &["b"]),
        ];
        for (case, batch, want) in cases {
            let groups: Vec<GroupSnapshot> = batch.iter().map(|g| group(g)).collect();
            let got = listed_of(&cluster, &groups);
            let ids: Vec<&str> = got.keys().map(String::as_str).collect();
            assert_eq!(ids, *want, "{case}");
            for (id, l) in &got {
                assert_eq!(l, &cluster[id], "{case}: {id} as the cluster lists it");
            }
        }
    }

    #[test]
    fn the_target_by_time_and_its_note() {
        let ts: DateTime<Utc> = "2026-01-02T03:04:05.678Z".parse().unwrap();
        // (x, y, log end) -> (target, words the note holds)
        let cases: &[(i64, i64, Option<i64>, i64, &str)] = &[
            (4, 5, Some(10), 5, "-> offset 5 (exact)"),
            (
                4,
                7,
                Some(10),
                4,
                "-> offset 4 (several records share that time",
            ),
            (6, 6, Some(10), 6, "-> offset 6 (no record has that time"),
            (
                10,
                10,
                Some(10),
                10,
                "no record at or after 2026-01-02T03:04:05.678Z",
            ),
            (10, 10, Some(10), 10, "target is the log end 10"),
            (9, 10, Some(10), 10, "-> offset 10 (exact)"),
            (0, 0, Some(0), 0, "target is the log end 0"),
        ];
        for &(x, y, end, target, words) in cases {
            let (t, note) = by_time_target(ts, x, y, end);
            assert_eq!(t, target, "{x} {y} {end:?}: {note}");
            assert!(note.contains(words), "{x} {y} {end:?}: {note}");
        }
    }
}
