//! Restore: choose a snapshot, verify it, guard the cluster, plan against the live state, and
//! (with `execute`) stop connectors, take an undo snapshot, apply, verify, and resume.

mod apply;
mod connector_plan;
pub mod plan;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use apply::{execute, Outcome, PartitionCheck};
pub use plan::{OutOfRange, Plan, PlanOptions};

use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, OffsetQuery, TopicPartition};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, Member};
use crate::snapshot::repo::{self, Loaded};
use crate::snapshot::Manifest;
use crate::store::Store;
use plan::{LiveConnector, LiveGroup, LiveView};

/// Which snapshot to restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// An id or a unique prefix of one.
    Id(String),
    /// The newest complete snapshot (that holds the selected groups/connectors).
    Latest,
    /// The newest complete snapshot created at or before this time.
    Before(DateTime<Utc>),
}

/// Everything a restore is asked to do.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    pub choice: Choice,
    pub groups: Vec<String>,
    pub connectors: Vec<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub plan: PlanOptions,
    pub allow_other_cluster: bool,
    pub by_timestamp: bool,
    /// Take an undo snapshot before changing anything.
    pub undo: bool,
    /// Bound on waiting for connectors to stop and groups to empty.
    pub wait_timeout: Duration,
}

/// A verified snapshot, the part of it to restore, and the plan against the live state.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub loaded: Loaded,
    /// Why this snapshot was chosen, in words.
    pub chosen_because: String,
    pub groups: Vec<GroupSnapshot>,
    pub connectors: Vec<ConnectorSnapshot>,
    pub plan: Plan,
    /// Where each connector of the plan lives now.
    pub connect_by_name: BTreeMap<String, ConnectClient>,
}

/// Chooses the snapshot: by id, the latest, or the newest before a time, among complete
/// snapshots that hold the selected groups and connectors.
pub async fn choose(store: &Store, req: &RestoreRequest) -> Result<(Manifest, String)> {
    let holds = |m: &Manifest| {
        req.groups.iter().all(|g| m.summary.group_ids.contains(g))
            && req
                .connectors
                .iter()
                .all(|c| m.summary.connector_names.contains(c))
    };
    let what = if req.groups.is_empty() && req.connectors.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = req
            .groups
            .iter()
            .chain(&req.connectors)
            .map(String::as_str)
            .collect();
        format!(" holding {}", names.join(", "))
    };
    let (found, because) = match &req.choice {
        Choice::Id(id) => {
            return Ok((repo::resolve(store, id).await?, format!("given by id {id}")))
        }
        Choice::Latest => (
            repo::newest_before(store, None, holds).await?,
            format!("newest complete snapshot{what}"),
        ),
        Choice::Before(t) => (
            repo::newest_before(store, Some(*t), holds).await?,
            format!(
                "newest complete snapshot{what} created at or before {}",
                t.to_rfc3339()
            ),
        ),
    };
    match found {
        Some(m) => Ok((m, because)),
        None => Err(Error::NotFound {
            what: "snapshot",
            name: format!("(the {because})"),
            hint: format!(
                " in {}; `offset-vault list` shows what is there",
                store.url()
            ),
        }),
    }
}

/// The groups and connectors of the snapshot that the request selects.
pub fn select(
    content: &crate::snapshot::SnapshotContent,
    req: &RestoreRequest,
) -> Result<(Vec<GroupSnapshot>, Vec<ConnectorSnapshot>)> {
    let everything = req.groups.is_empty() && req.connectors.is_empty();
    let mut connectors = Vec::new();
    for name in &req.connectors {
        let c = content
            .connectors
            .iter()
            .find(|c| &c.name == name)
            .ok_or_else(|| Error::NotFound {
                what: "connector in the snapshot",
                name: name.clone(),
                hint: String::new(),
            })?;
        connectors.push(c.clone());
    }
    if everything && req.topics.is_empty() {
        connectors = content.connectors.clone();
    }
    let mut wanted: BTreeSet<&str> = req.groups.iter().map(String::as_str).collect();
    wanted.extend(connectors.iter().filter_map(|c| c.group_id.as_deref()));
    for g in &req.groups {
        if !content.groups.iter().any(|s| &s.group_id == g) {
            return Err(Error::NotFound {
                what: "consumer group in the snapshot",
                name: g.clone(),
                hint: String::new(),
            });
        }
    }
    let groups: Vec<GroupSnapshot> = content
        .groups
        .iter()
        .filter(|g| everything || wanted.contains(g.group_id.as_str()))
        .map(|g| {
            let mut g = g.clone();
            g.partitions.retain(|p| {
                (req.topics.is_empty() || req.topics.contains(&p.topic))
                    && (req.partitions.is_empty() || req.partitions.contains(&p.partition))
            });
            g
        })
        .collect();
    if groups.iter().all(|g| g.partitions.is_empty()) && connectors.is_empty() {
        return Err(Error::usage(
            "the selection matches nothing in the snapshot: check --group, --connector, --topic and --partition against `offset-vault show`",
        ));
    }
    Ok((groups, connectors))
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
pub(crate) async fn live_view(
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    groups: &[GroupSnapshot],
    connectors: &[ConnectorSnapshot],
    by_timestamp: bool,
) -> Result<(LiveView, BTreeMap<String, ConnectClient>)> {
    let ids: Vec<String> = groups.iter().map(|g| g.group_id.clone()).collect();
    let (described, offsets, (_, topics)) = futures::try_join!(
        kafka.describe_groups(ids.clone()),
        kafka.group_offsets(ids),
        kafka.metadata()
    )?;
    let mut view = LiveView {
        topics,
        ..Default::default()
    };
    for d in described {
        let committed = offsets.get(&d.group_id).cloned().unwrap_or_default();
        view.groups.insert(
            d.group_id.clone(),
            LiveGroup {
                state: if d.error.is_some() {
                    String::new()
                } else {
                    d.state
                },
                members: d
                    .members
                    .into_iter()
                    .map(|m| Member {
                        member_id: m.member_id,
                        client_id: m.client_id,
                        host: m.host,
                    })
                    .collect(),
                offsets: committed
                    .into_iter()
                    .map(|c| ((c.topic, c.partition), c.offset))
                    .collect(),
            },
        );
    }
    let partitions: BTreeSet<TopicPartition> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| (p.topic.clone(), p.partition)))
        .filter(|(t, p)| view.topics.get(t).is_some_and(|n| p < n))
        .collect();
    view.watermarks = kafka.watermarks(&partitions).await?;
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
    if pending.is_empty() {
        return Err(Error::usage(
            "--by-timestamp: the snapshot has no record timestamps for the selected partitions; take snapshots with --with-timestamps",
        ));
    }
    let mut found: BTreeMap<(TopicPartition, i64), (i64, i64)> = BTreeMap::new();
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
            let end = view
                .watermarks
                .get(&tp)
                .and_then(|w| w.log_end)
                .unwrap_or(0);
            // -1: no record at or after that time, so everything up to log-end was consumed.
            let resolve = |r: Option<&std::result::Result<i64, String>>| match r {
                Some(Ok(o)) if *o >= 0 => Ok(*o),
                Some(Ok(_)) | None => Ok(end),
                Some(Err(e)) => Err(Error::kafka(
                    "ListOffsets",
                    format!("{}[{}]: {e}", tp.0, tp.1),
                )),
            };
            let x = resolve(at.get(&tp))?;
            let y = resolve(after.get(&tp))?;
            found.insert((tp, ms), (x, y));
        }
    }
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
            let (target, how) = if y <= x + 1 {
                (y, "exact")
            } else {
                (
                    x,
                    "several records share that time; they are processed again",
                )
            };
            let note = format!(
                "by time: last record at {} -> offset {target} ({how})",
                ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            );
            out.insert((g.group_id.clone(), tp), (target, note));
        }
    }
    Ok(out)
}

/// Chooses, verifies, guards and plans. Changes nothing.
pub async fn prepare(
    store: &Store,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    req: &RestoreRequest,
) -> Result<Prepared> {
    let (manifest, chosen_because) = choose(store, req).await?;
    let loaded = repo::load_verified(store, &manifest).await?;
    if loaded.manifest.meta.cluster_id != kafka.cluster_id() && !req.allow_other_cluster {
        return Err(Error::OtherCluster {
            id: loaded.manifest.meta.id.clone(),
            snapshot_cluster: loaded.manifest.meta.cluster_id.clone(),
            live_cluster: kafka.cluster_id().to_string(),
            bootstrap: kafka.bootstrap().to_string(),
        });
    }
    let (groups, connectors) = select(&loaded.content, req)?;
    let (view, by_name) = live_view(kafka, clients, &groups, &connectors, req.by_timestamp).await?;
    let plan = plan::build(
        &loaded.manifest.meta.id,
        &groups,
        &connectors,
        &view,
        &req.plan,
    );
    Ok(Prepared {
        loaded,
        chosen_because,
        groups,
        connectors,
        plan,
        connect_by_name: by_name,
    })
}
