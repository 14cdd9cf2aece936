//! The cluster now, read for the groups and connectors of a snapshot, and compared with it: what
//! `diff SNAPSHOT --live` prints, and what `guard` checks once its command has ended.
//!
//! The snapshot's rows are streamed from its local offsets file and merged with the live rows by
//! [`diff_rows`], so the comparison holds no snapshot rows beyond the group being read.

use std::collections::{BTreeMap, BTreeSet};

use crate::connect::ConnectClient;
use crate::diff::{
    diff_connector, diff_rows, group_rows, ConnectorDiff, ConnectorView, Filter, PartitionCounts,
    PartitionDiff, Row,
};
use crate::error::{Error, Result};
use crate::kafka::KafkaClient;
use crate::redact::redact_config;
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::repo::{ErrorSlot, Opened};
use crate::spool::Spool;

/// A live connector's config, and the keys a snapshot would redact. The values stay as they
/// are: secret ones are compared by hash with a snapshot taken with `--include-secrets`, and
/// never printed.
type LiveConfig = (BTreeMap<String, String>, Vec<String>);

/// The cluster now, for the groups and connectors of a snapshot that a filter selects. The
/// groups' live rows are kept in a spool file, so memory holds one batch of groups at a time.
pub struct Live {
    connectors: BTreeMap<String, Option<crate::live::LiveConnector>>,
    configs: BTreeMap<String, LiveConfig>,
    group_count: usize,
    /// The live rows the filter selects, in (group, topic, partition) order.
    rows: Spool<Row>,
    /// A read error of the spool, which ends [`Live::rows`] early.
    error: ErrorSlot,
}

impl Live {
    /// Reads the committed offsets of the groups of `snapshot` that `filter` selects (a group
    /// named in the filter but absent from the snapshot is read too, and compared with no
    /// rows), and the offsets, state and config of its connectors that `filter` selects. The
    /// groups are read in batches of whole groups of at most `batch` partitions (a larger group
    /// is a batch of its own).
    pub async fn read(
        kafka: &KafkaClient,
        clients: &[ConnectClient],
        snapshot: &Opened,
        filter: &Filter,
        batch: usize,
        rename: Option<&crate::mirror::TopicMap>,
    ) -> Result<Live> {
        let old_connectors: Vec<&ConnectorSnapshot> = snapshot.connectors.iter().collect();
        let wanted = filter.group_set(&old_connectors);
        let stream = snapshot.groups();
        let slot = stream.error_slot();
        let live = Self::read_groups(
            kafka,
            clients,
            stream.map(|g| match rename {
                Some(map) => crate::mirror::rename_group(map, g),
                None => g,
            }),
            wanted.as_ref(),
            &snapshot.connectors,
            filter,
            batch,
        )
        .await?;
        if let Some(e) = slot.lock().expect("not poisoned").take() {
            return Err(e);
        }
        Ok(live)
    }

    /// As [`Live::read`], for groups given in id order (those of `wanted` among them, or all)
    /// and the connectors that `filter` selects among `connectors` (none: no connector is read).
    pub async fn read_groups(
        kafka: &KafkaClient,
        clients: &[ConnectClient],
        groups: impl Iterator<Item = GroupSnapshot>,
        wanted: Option<&BTreeSet<String>>,
        connectors: &[ConnectorSnapshot],
        filter: &Filter,
        batch: usize,
    ) -> Result<Live> {
        let mut batches = Batches {
            kafka,
            filter,
            budget: batch,
            rows: Spool::new()?,
            batch: Vec::new(),
            partitions: 0,
            groups: 0,
        };
        // The groups the filter names, merged in id order with those of the snapshot: one
        // absent from it is compared with no rows.
        let mut named = wanted
            .map(|w| w.iter().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .peekable();
        for g in groups {
            if wanted.is_some_and(|w| !w.contains(&g.group_id)) {
                continue;
            }
            while let Some(n) = named.next_if(|n| **n < g.group_id) {
                batches.add(placeholder(n)).await?;
            }
            named.next_if(|n| **n == g.group_id);
            batches.add(g).await?;
        }
        for n in named {
            batches.add(placeholder(n)).await?;
        }
        let (group_count, mut rows) = batches.finish().await?;
        rows.seal()?;
        let connectors: Vec<ConnectorSnapshot> = connectors
            .iter()
            .filter(|c| filter.wants_connector(&c.name))
            .cloned()
            .collect();
        let (view, by_name) = crate::live::read(kafka, clients, &[], &connectors, false).await?;
        let configs = live_configs(&by_name).await?;
        Ok(Live {
            connectors: view.connectors,
            configs,
            group_count,
            rows,
            error: ErrorSlot::default(),
        })
    }

    /// The number of groups compared.
    pub fn group_count(&self) -> usize {
        self.group_count
    }

    /// The number of connectors compared (found live or not).
    pub fn connector_count(&self) -> usize {
        self.connectors.len()
    }

    /// Where a read error of [`Live::rows`] is kept.
    pub fn error_slot(&self) -> ErrorSlot {
        self.error.clone()
    }

    /// The live rows of the compared groups, sorted like a snapshot's. A read error ends them
    /// early and is kept in [`Live::error_slot`].
    pub fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        let keep = |e: Error| *self.error.lock().expect("not poisoned") = Some(e);
        let items = self.rows.reader().map_err(keep).ok();
        items
            .into_iter()
            .flatten()
            .map_while(move |r| r.map_err(keep).ok())
    }

    /// The connectors found live, as a side of a connector comparison.
    pub fn connector_views(&self) -> BTreeMap<String, ConnectorView> {
        let mut news = BTreeMap::new();
        for (name, l) in &self.connectors {
            if let Some(l) = l {
                let config = self.configs.get(name);
                news.insert(
                    name.clone(),
                    ConnectorView {
                        name: name.clone(),
                        state: Some(l.state.clone()),
                        config: config.map(|c| c.0.clone()),
                        redacted_keys: config.map(|c| c.1.clone()).unwrap_or_default(),
                        offsets: l.offsets.clone(),
                    },
                );
            }
        }
        news
    }
}

/// The groups being read from the cluster, a batch at a time, into the spool of live rows.
struct Batches<'a> {
    kafka: &'a KafkaClient,
    filter: &'a Filter,
    /// Partitions per batch.
    budget: usize,
    rows: Spool<Row>,
    batch: Vec<GroupSnapshot>,
    /// Partitions in the batch.
    partitions: usize,
    /// Groups read so far.
    groups: usize,
}

impl Batches<'_> {
    /// Adds a group; reads the batch once it is full.
    async fn add(&mut self, g: GroupSnapshot) -> Result<()> {
        let size = g.partitions.len().max(1);
        if !self.batch.is_empty() && self.partitions + size > self.budget {
            self.read().await?;
        }
        self.partitions += size;
        self.batch.push(g);
        if self.partitions >= self.budget {
            self.read().await?;
        }
        Ok(())
    }

    /// Reads the batch's groups now and spools their rows.
    async fn read(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.partitions = 0;
        if batch.is_empty() {
            return Ok(());
        }
        // Only the committed offsets are compared: the groups are not described, and their
        // types are the snapshot's.
        let view = crate::live::read_offsets(self.kafka, &batch).await?;
        for g in &batch {
            let Some(lg) = view.groups.get(&g.group_id) else {
                continue;
            };
            for ((t, p), o) in &lg.offsets {
                if !self.filter.wants_partition(t, *p) {
                    continue;
                }
                self.rows.push(&Row {
                    group: g.group_id.clone(),
                    topic: t.clone(),
                    partition: *p,
                    offset: *o,
                    log_start: view
                        .watermarks
                        .get(&(t.clone(), *p))
                        .and_then(|w| w.log_start),
                    topic_id: view.topic_ids.get(t).cloned(),
                })?;
            }
        }
        self.groups += batch.len();
        Ok(())
    }

    /// Reads the last batch: the number of groups read, and their rows.
    async fn finish(mut self) -> Result<(usize, Spool<Row>)> {
        self.read().await?;
        Ok((self.groups, self.rows))
    }
}

/// Compares `snapshot` with the cluster now: hands every partition's difference to `emit` in
/// (group, topic, partition) order, and returns the counts and the connectors that differ.
pub fn compare(
    snapshot: &Opened,
    live: &Live,
    filter: &Filter,
    emit: impl FnMut(PartitionDiff),
) -> Result<(PartitionCounts, Vec<ConnectorDiff>)> {
    let old_connectors: Vec<&ConnectorSnapshot> = snapshot.connectors.iter().collect();
    let wanted = filter.group_set(&old_connectors);
    let stream = snapshot.groups();
    let slot = stream.error_slot();
    let old = group_rows(stream, wanted.as_ref(), filter);
    let counts = diff_rows(old, live.rows(), emit).map_err(|e| Error::Internal(e.to_string()))?;
    for slot in [slot, live.error_slot()] {
        if let Some(e) = slot.lock().expect("not poisoned").take() {
            return Err(e);
        }
    }
    let connectors = compare_connectors(&snapshot.connectors, live.connector_views(), filter);
    Ok((counts, connectors))
}

/// A group named in the filter but absent from the snapshot: compared with no rows.
fn placeholder(group: &str) -> GroupSnapshot {
    GroupSnapshot {
        group_id: group.to_string(),
        state: crate::kafka::GroupState::Unknown("not in the snapshot".into()),
        protocol_type: String::new(),
        group_type: crate::kafka::GroupType::Unknown,
        members: vec![],
        connector: None,
        configs: Default::default(),
        partitions: vec![],
    }
}

/// The current config of each connector found live.
async fn live_configs(
    clients: &BTreeMap<String, ConnectClient>,
) -> Result<BTreeMap<String, LiveConfig>> {
    let mut out = BTreeMap::new();
    for (name, client) in clients {
        if let Some((info, _)) = client.connector(name).await? {
            let mut copy = info.config.clone();
            let redacted = redact_config(&mut copy);
            out.insert(name.clone(), (info.config, redacted));
        }
    }
    Ok(out)
}

/// The connectors of a snapshot that `filter` selects, as a side of a connector comparison.
pub fn snapshot_views(
    connectors: &[ConnectorSnapshot],
    filter: &Filter,
) -> BTreeMap<String, ConnectorView> {
    connectors
        .iter()
        .filter(|c| filter.wants_connector(&c.name))
        .map(|c| (c.name.clone(), c.into()))
        .collect()
}

/// Compares the old side's connectors that `filter` selects with the new side's views; only
/// the connectors that differ are returned, by name.
pub fn compare_connectors(
    old: &[ConnectorSnapshot],
    news: BTreeMap<String, ConnectorView>,
    filter: &Filter,
) -> Vec<ConnectorDiff> {
    let olds = snapshot_views(old, filter);
    let names: BTreeSet<&String> = olds.keys().chain(news.keys()).collect();
    names
        .into_iter()
        .filter_map(|n| diff_connector(olds.get(n), news.get(n)))
        .collect()
}
