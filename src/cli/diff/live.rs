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
use crate::live::LiveView;
use crate::redact::redact_config;
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::repo::Opened;

/// A live connector's config, and the keys a snapshot would redact. The values stay as they
/// are: secret ones are compared by hash with a snapshot taken with `--include-secrets`, and
/// never printed.
type LiveConfig = (BTreeMap<String, String>, Vec<String>);

/// The cluster now, for the groups and connectors of a snapshot that a filter selects.
pub(crate) struct Live {
    view: LiveView,
    /// The compared groups, sorted.
    groups: BTreeSet<String>,
    configs: BTreeMap<String, LiveConfig>,
}

impl Live {
    /// Reads the committed offsets of the groups of `snapshot` that `filter` selects (a group
    /// named in the filter but absent from the snapshot is read too, and compared with no
    /// rows), and the offsets, state and config of its connectors that `filter` selects.
    pub(crate) async fn read(
        kafka: &KafkaClient,
        clients: &[ConnectClient],
        snapshot: &Opened,
        filter: &Filter,
    ) -> Result<Live> {
        let old_connectors: Vec<&ConnectorSnapshot> = snapshot.connectors.iter().collect();
        let wanted = filter.group_set(&old_connectors);
        let mut groups: Vec<GroupSnapshot> = Vec::new();
        snapshot.for_each_group(&mut |g| {
            if wanted.as_ref().is_none_or(|w| w.contains(&g.group_id)) {
                groups.push(g);
            }
            Ok(())
        })?;
        Self::read_groups(
            kafka,
            clients,
            groups,
            wanted.as_ref(),
            &snapshot.connectors,
            filter,
        )
        .await
    }

    /// As [`Live::read`], for groups already chosen (those of `wanted`, or all) and the
    /// connectors that `filter` selects among `connectors` (none: no connector is read).
    pub(crate) async fn read_groups(
        kafka: &KafkaClient,
        clients: &[ConnectClient],
        mut groups: Vec<GroupSnapshot>,
        wanted: Option<&BTreeSet<String>>,
        connectors: &[ConnectorSnapshot],
        filter: &Filter,
    ) -> Result<Live> {
        for g in wanted.into_iter().flatten() {
            if !groups.iter().any(|s| &s.group_id == g) {
                groups.push(placeholder(g));
            }
        }
        let connectors: Vec<ConnectorSnapshot> = connectors
            .iter()
            .filter(|c| filter.wants_connector(&c.name))
            .cloned()
            .collect();
        let (view, by_name) =
            crate::live::read(kafka, clients, &groups, &connectors, false).await?;
        let configs = live_configs(&by_name).await?;
        Ok(Live {
            view,
            groups: groups.into_iter().map(|g| g.group_id).collect(),
            configs,
        })
    }

    /// The number of groups compared.
    pub(crate) fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// The number of connectors compared (found live or not).
    pub(crate) fn connector_count(&self) -> usize {
        self.view.connectors.len()
    }

    /// The live rows of the compared groups, sorted like a snapshot's.
    pub(crate) fn rows<'a>(&'a self, filter: &'a Filter) -> impl Iterator<Item = Row> + 'a {
        let view = &self.view;
        self.groups.iter().flat_map(move |g| {
            view.groups
                .get(g)
                .into_iter()
                .flat_map(|lg| lg.offsets.iter())
                .filter(move |((t, p), _)| filter.wants_partition(t, *p))
                .map(move |((t, p), o)| Row {
                    group: g.clone(),
                    topic: t.clone(),
                    partition: *p,
                    offset: *o,
                    log_start: view
                        .watermarks
                        .get(&(t.clone(), *p))
                        .and_then(|w| w.log_start),
                    topic_id: view.topic_ids.get(t).cloned(),
                })
        })
    }

    /// The connectors found live, as a side of a connector comparison.
    pub(crate) fn connector_views(&self) -> BTreeMap<String, ConnectorView> {
        let mut news = BTreeMap::new();
        for (name, l) in &self.view.connectors {
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

/// Compares `snapshot` with the cluster now: hands every partition's difference to `emit` in
/// (group, topic, partition) order, and returns the counts and the connectors that differ.
pub(crate) fn compare(
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
    let counts =
        diff_rows(old, live.rows(filter), emit).map_err(|e| Error::Internal(e.to_string()))?;
    if let Some(e) = slot.lock().expect("not poisoned").take() {
        return Err(e);
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
pub(crate) fn snapshot_views(
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
pub(crate) fn compare_connectors(
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
