//! Capturing a snapshot: resolve the selection to groups and connectors, read everything with a
//! bounded number of round trips, and build the content and manifest.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, SubsecRound, Utc};
use futures::stream::{self, StreamExt, TryStreamExt};
use regex::Regex;

use super::manifest::{FileEntry, Format, Manifest, CONNECTORS_FILE};
use super::model::{
    ConnectorSnapshot, GroupSnapshot, Member, PartitionOffset, Selection, SnapshotContent,
    SnapshotKind, SnapshotMeta, TaskState, FORMAT_VERSION,
};
use super::spill::{Spill, SpilledGroups};
use crate::connect::{sink_group_id, ConnectClient, ConnectorInfo, ConnectorStatus, OffsetsAnswer};
use crate::error::{Error, Result};
use crate::kafka::{
    GroupDescription, GroupListing, GroupState, GroupType, KafkaClient, TopicPartition, Watermarks,
};
use crate::redact::redact_config;

/// How many connector offset requests run at once.
const CONNECT_CONCURRENCY: usize = 8;

/// What to capture and how to label it.
#[derive(Debug, Clone, Default)]
pub struct CaptureOptions {
    pub selection: Selection,
    pub tags: BTreeMap<String, String>,
    pub format: Format,
    pub include_secrets: bool,
    /// Keep the full connector configs only encrypted to these recipients, in
    /// `connectors.secrets.age`, beside the usual redacted `connectors.json` (`--encrypt-to`).
    /// Secrets are then never written in clear, whatever `include_secrets` says.
    pub encrypt_to: Option<super::secrets::Recipients>,
    /// Write the snapshot marked partial, with the reasons, when some part cannot be read
    /// (instead of failing).
    pub allow_partial: bool,
    /// A selection that matches nothing writes an empty snapshot instead of failing.
    pub allow_empty: bool,
    /// Why the snapshot is taken.
    pub kind: SnapshotKind,
    /// For an undo snapshot: the snapshot the restore restores.
    pub undo_of: Option<String>,
}

/// A captured snapshot, ready to be written.
#[derive(Debug)]
pub struct Captured {
    /// The manifest with its id assigned; file sizes and hashes are filled in when written.
    pub manifest: Manifest,
    /// The groups, on the local disk until written.
    pub groups: SpilledGroups,
    pub connectors: Vec<ConnectorSnapshot>,
    /// Notes for the user (missing groups with `--allow-missing`, connectors without offsets).
    pub warnings: Vec<String>,
    /// `connectors.secrets.age`: the full connector configs, already encrypted (`--encrypt-to`);
    /// `connectors` are then redacted.
    pub encrypted_secrets: Option<Vec<u8>>,
}

/// Collects the parts that could not be read: each one fails the capture at once, unless
/// partial snapshots are allowed, when it is recorded as a reason instead.
struct Gaps {
    allow: bool,
    reasons: Vec<String>,
}

impl Gaps {
    fn add(&mut self, reason: String, error: Error) -> Result<()> {
        if self.allow {
            tracing::warn!("partial snapshot: {reason}");
            self.reasons.push(reason);
            Ok(())
        } else {
            Err(error)
        }
    }
}

/// The message for a part that could not be read, with the way out.
fn unreadable(what: String, error: &Error) -> Error {
    Error::Incomplete {
        part: what,
        detail: error.to_string(),
        exit_code: error.exit_code(),
        cause: error.cause(),
    }
}

/// Checks a selection before any I/O.
pub fn validate(selection: &Selection, connect_urls: usize) -> Result<Option<Regex>> {
    if selection.is_empty() {
        return Err(Error::usage(
            "nothing selected: pass --group G, --group-pattern REGEX, --all-groups, --connector NAME or --all-connectors",
        ));
    }
    if (selection.all_connectors || !selection.connectors.is_empty()) && connect_urls == 0 {
        return Err(Error::usage(
            "connectors were selected but no Kafka Connect URL is set: pass --connect-url http://HOST:8083 or set OFFSET_VAULT_CONNECT_URL",
        ));
    }
    if selection.group_types.contains(&GroupType::Unknown) {
        return Err(Error::usage(
            "--group-type takes classic, consumer, share, streams (comma-separated)",
        ));
    }
    selection
        .group_pattern
        .as_deref()
        .map(|p| {
            Regex::new(&format!("^(?:{p})$"))
                .map_err(|e| Error::usage(format!("--group-pattern {p}: {e}")))
        })
        .transpose()
}

/// A connector found on a Connect cluster.
struct FoundConnector {
    client: ConnectClient,
    info: ConnectorInfo,
    status: ConnectorStatus,
}

async fn find_connectors(
    selection: &Selection,
    clients: &[ConnectClient],
    warnings: &mut Vec<String>,
) -> Result<Vec<FoundConnector>> {
    if selection.connectors.is_empty() && !selection.all_connectors {
        return Ok(Vec::new());
    }
    let listings: Vec<_> = stream::iter(clients)
        .then(|c| async move { c.list_expanded().await.map(|l| (c.clone(), l)) })
        .try_collect()
        .await?;
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for (client, listing) in listings {
        for (name, (info, status)) in listing {
            if selection.all_connectors || selection.connectors.contains(&name) {
                seen.insert(name.clone());
                found.push(FoundConnector {
                    client: client.clone(),
                    info,
                    status,
                });
            }
        }
    }
    let urls: Vec<&str> = clients.iter().map(ConnectClient::url).collect();
    for name in &selection.connectors {
        if !seen.contains(name) {
            if !selection.allow_missing {
                return Err(Error::NotFound {
                    what: "connector",
                    name: name.clone(),
                    hint: format!(
                        " on Kafka Connect {}; check the name, or pass --allow-missing to snapshot without it",
                        urls.join(", ")
                    ),
                });
            }
            warnings.push(format!(
                "connector {name} not found on {}; skipped",
                urls.join(", ")
            ));
        }
    }
    Ok(found)
}

/// Reads one connector. The second value is set when its offsets could not be read: an error
/// answer, or a worker without the offsets endpoint for a source connector (whose offsets live
/// nowhere else). A sink connector's offsets are its group's, captured with the groups.
async fn snapshot_connector(
    found: FoundConnector,
    include_secrets: bool,
) -> (ConnectorSnapshot, Option<Error>) {
    let FoundConnector {
        client,
        info,
        status,
    } = found;
    let connector_type = info
        .connector_type
        .clone()
        .or(status.connector_type.clone())
        .unwrap_or_else(|| "unknown".into());
    let group_id = (connector_type == "sink").then(|| sink_group_id(&info.name, &info.config));
    let mut config = info.config;
    let redacted_keys = if include_secrets {
        Vec::new()
    } else {
        redact_config(&mut config)
    };
    let (offsets, offsets_unavailable, gap) = match client.offsets(&info.name).await {
        Ok(OffsetsAnswer::Offsets(o)) => (Some(o), None, None),
        Ok(OffsetsAnswer::Unsupported(why)) if connector_type == "sink" => (None, Some(why), None),
        Ok(OffsetsAnswer::Unsupported(why)) => {
            let gap = Error::Incomplete {
                part: format!("the offsets of source connector {}", info.name),
                detail: why.clone(),
                exit_code: crate::error::exit::UNREACHABLE,
                cause: "connect",
            };
            (None, Some(why), Some(gap))
        }
        Err(e) => {
            let gap = unreadable(format!("the offsets of connector {}", info.name), &e);
            (None, Some(e.to_string()), Some(gap))
        }
    };
    let snapshot = ConnectorSnapshot {
        name: info.name,
        connect_url: client.url().to_string(),
        connector_type,
        group_id,
        config,
        redacted_keys,
        state: status.connector.state,
        tasks: status
            .tasks
            .into_iter()
            .map(|t| TaskState {
                id: t.id,
                state: t.state,
                worker_id: t.worker_id,
            })
            .collect(),
        offsets,
        offsets_unavailable,
    };
    (snapshot, gap)
}

/// Connect workers must belong to the Kafka cluster we read groups from.
async fn check_connect_clusters(kafka: &KafkaClient, clients: &[ConnectClient]) -> Result<()> {
    for c in clients {
        let info = c.worker_info().await?;
        if let Some(id) = info.kafka_cluster_id.filter(|id| id != kafka.cluster_id()) {
            return Err(Error::usage(format!(
                "Kafka Connect at {} belongs to Kafka cluster {id}, but {} is cluster {}; point --connect-url and --bootstrap-server at the same cluster",
                c.url(),
                kafka.bootstrap(),
                kafka.cluster_id()
            )));
        }
    }
    Ok(())
}

/// Group ids to capture, each with the connector it belongs to (if any), and the cluster's group
/// listing when the selection needed one.
async fn select_groups(
    kafka: &KafkaClient,
    selection: &Selection,
    pattern: Option<&Regex>,
    connector_groups: &[(String, String)],
    warnings: &mut Vec<String>,
) -> Result<(BTreeMap<String, Option<String>>, Option<Vec<GroupListing>>)> {
    let mut groups: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut listed = None;
    if selection.all_groups || pattern.is_some() {
        let mut workers = Vec::new();
        let listing = kafka.list_groups().await?;
        for g in &listing {
            let type_ok =
                selection.group_types.is_empty() || selection.group_types.contains(&g.group_type);
            if !(type_ok
                && (selection.all_groups || pattern.is_some_and(|p| p.is_match(&g.group_id))))
            {
                continue;
            }
            // Kafka Connect's own worker groups coordinate workers; they hold no offsets.
            if g.protocol_type.as_deref() == Some("connect") {
                workers.push(g.group_id.clone());
                continue;
            }
            groups.insert(g.group_id.clone(), None);
        }
        listed = Some(listing);
        if !workers.is_empty() {
            warnings.push(format!(
                "left out {} Kafka Connect worker group(s) (protocol type connect, not consumer groups): {}; name one with --group to capture it anyway",
                workers.len(),
                workers.join(", ")
            ));
        }
    }
    for g in &selection.groups {
        groups.entry(g.clone()).or_insert(None);
    }
    for (g, connector) in connector_groups {
        groups.insert(g.clone(), Some(connector.clone()));
    }
    Ok((groups, listed))
}

/// The ids of the groups a selection names (the sink groups of its connectors included), for
/// a check that reads no connector offsets (the expiry guard).
pub async fn selected_groups(
    kafka: &KafkaClient,
    connect: &[ConnectClient],
    selection: &Selection,
    pattern: Option<&Regex>,
    warnings: &mut Vec<String>,
) -> Result<BTreeSet<String>> {
    if selection.all_connectors || !selection.connectors.is_empty() {
        check_connect_clusters(kafka, connect).await?;
    }
    let sinks: Vec<(String, String)> = find_connectors(selection, connect, warnings)
        .await?
        .into_iter()
        .filter(|f| {
            f.info
                .connector_type
                .as_deref()
                .or(f.status.connector_type.as_deref())
                == Some("sink")
        })
        .map(|f| (sink_group_id(&f.info.name, &f.info.config), f.info.name))
        .collect();
    let (groups, _) = select_groups(kafka, selection, pattern, &sinks, warnings).await?;
    Ok(groups.into_keys().collect())
}

fn truncate_to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    t.trunc_subsecs(3)
}

/// Captures a snapshot. Nothing is written here.
pub async fn capture(
    kafka: &KafkaClient,
    connect: &[ConnectClient],
    opts: &CaptureOptions,
) -> Result<Captured> {
    let selection = &opts.selection;
    let pattern = validate(selection, connect.len())?;
    let created_at = truncate_to_millis(Utc::now());
    let mut warnings = Vec::new();

    let connect_used = selection.all_connectors || !selection.connectors.is_empty();
    if connect_used {
        check_connect_clusters(kafka, connect).await?;
    }
    let found = find_connectors(selection, connect, &mut warnings).await?;
    let mut gaps = Gaps {
        allow: opts.allow_partial,
        reasons: Vec::new(),
    };
    // With --encrypt-to every value is read, and redacted below for connectors.json.
    let include_secrets = opts.include_secrets || opts.encrypt_to.is_some();
    let mut connectors = read_connectors(found, include_secrets, &mut gaps, &mut warnings).await?;

    let sinks: Vec<(String, String)> = connectors
        .iter()
        .filter_map(|c| Some((c.group_id.clone()?, c.name.clone())))
        .collect();
    let (wanted, listed) =
        select_groups(kafka, selection, pattern.as_ref(), &sinks, &mut warnings).await?;
    crate::progress::stage("groups: committed offsets read", wanted.len() as u64);
    let started = std::time::Instant::now();
    // The groups were listed to select them: the same listing gives their types.
    let types = async {
        match listed {
            Some(listing) => Ok(KafkaClient::listed_types(listing, &|g| {
                wanted.contains_key(g)
            })),
            // Looked up in the selected groups themselves: a copy of every id would be one
            // more list of them all (an undo snapshot names every group it covers).
            None if wanted.is_empty() => Ok(BTreeMap::new()),
            None => kafka.group_types_where(&|g| wanted.contains_key(g)).await,
        }
    };
    let (types, brokers) = futures::join!(types, kafka.brokers());
    let (types, brokers) = (types?, brokers?);

    let mut reading = BatchReading {
        kafka,
        selection,
        types: &types,
        topic_filter: selection.topics.iter().map(String::as_str).collect(),
        named: selection.groups.iter().map(String::as_str).collect(),
    };
    let spill = reading.read_all(&wanted, &mut gaps, &mut warnings).await?;
    tracing::debug!("groups read: {} in {:?}", wanted.len(), started.elapsed());
    if spill.groups() == 0 && connectors.is_empty() && !opts.allow_empty {
        return Err(Error::usage(format!(
            "the selection matched no group and no connector on {}{}; check the names and patterns, or pass --allow-empty to store an empty snapshot (e.g. for a periodic job on a cluster that has no groups yet)",
            kafka.bootstrap(),
            if warnings.is_empty() {
                String::new()
            } else {
                format!(" ({})", warnings.join("; "))
            }
        )));
    }

    connectors.sort_by(|a, b| (&a.connect_url, &a.name).cmp(&(&b.connect_url, &b.name)));
    let meta = SnapshotMeta {
        id: String::new(),
        created_at,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        cluster_id: kafka.cluster_id().to_string(),
        bootstrap_servers: kafka.bootstrap().to_string(),
        brokers,
        selection: selection.clone(),
        tags: opts.tags.clone(),
        kind: opts.kind,
        undo_of: opts.undo_of.clone(),
        partial: gaps.reasons,
    };
    match &opts.encrypt_to {
        None => seal(meta, opts.format, spill, connectors, warnings),
        Some(recipients) => {
            let full = connectors;
            let connectors = full.iter().map(super::secrets::redacted).collect();
            seal(meta, opts.format, spill, connectors, warnings)?
                .with_encrypted_secrets(recipients.clone(), full)
        }
    }
}

/// Reads the found connectors (configs, status, offsets), sorted by name. A connector whose
/// offsets could not be read is a gap (refused without --allow-partial).
async fn read_connectors(
    found: Vec<FoundConnector>,
    include_secrets: bool,
    gaps: &mut Gaps,
    warnings: &mut Vec<String>,
) -> Result<Vec<ConnectorSnapshot>> {
    let read: Vec<(ConnectorSnapshot, Option<Error>)> = stream::iter(found)
        .map(|f| snapshot_connector(f, include_secrets))
        .buffer_unordered(CONNECT_CONCURRENCY)
        .collect()
        .await;
    let mut connectors = Vec::new();
    for (c, gap) in read {
        match gap {
            Some(e) => gaps.add(
                format!("connector {}: offsets not captured: {e}", c.name),
                e,
            )?,
            None => {
                if let Some(why) = &c.offsets_unavailable {
                    warnings.push(format!("connector {}: offsets not captured: {why}", c.name));
                }
            }
        }
        connectors.push(c);
    }
    connectors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(connectors)
}

/// Rows a batch of groups is sized for.
const BATCH_ROWS: usize = 32 * 1024;
/// Groups in the first batch, before the rows per group are known.
const FIRST_BATCH_GROUPS: usize = 8;
/// Groups in a batch at most (each coordinator's share is split into requests of 500 groups).
const MAX_BATCH_GROUPS: usize = 4000;

/// Ends a capture: the manifest (summary, content digest, id) over the spilled groups.
pub fn seal(
    meta: SnapshotMeta,
    format: Format,
    spill: Spill,
    connectors: Vec<ConnectorSnapshot>,
    warnings: Vec<String>,
) -> Result<Captured> {
    let sealed = spill.seal(&connectors)?;
    let mut manifest = Manifest {
        format_version: FORMAT_VERSION.into(),
        meta,
        format,
        summary: sealed.summary,
        content_sha256: sealed.content_sha256,
        files: [format.offsets_file(), CONNECTORS_FILE]
            .into_iter()
            .map(|name| FileEntry {
                name: name.into(),
                size: 0,
                sha256: String::new(),
            })
            .collect(),
        encrypted_secrets: None,
    };
    manifest.assign_id();
    Ok(Captured {
        manifest,
        groups: sealed.groups,
        connectors,
        warnings,
        encrypted_secrets: None,
    })
}

impl Captured {
    /// Encrypts the full connectors to `recipients`, to be written in `connectors.secrets.age`:
    /// the manifest lists the file, and names the recipients and the SHA-256 of the ciphertext in
    /// its sealed fields, so the id binds the encrypted file too; the id is assigned again. `full`
    /// must be `self.connectors` before redaction. The plaintext is not kept.
    pub fn with_encrypted_secrets(
        mut self,
        recipients: super::secrets::Recipients,
        full: Vec<ConnectorSnapshot>,
    ) -> Result<Captured> {
        use super::secrets::{encrypt, mismatches, EncryptedSecrets, SECRETS_FILE};
        let problems = mismatches(&self.connectors, &full);
        if !problems.is_empty() {
            return Err(Error::Internal(format!(
                "the connectors to encrypt differ from connectors.json: {}",
                problems.join("; ")
            )));
        }
        let sealed = encrypt(&recipients, &self.manifest.content_sha256, &full)?;
        self.manifest.files.push(FileEntry {
            name: SECRETS_FILE.into(),
            size: 0,
            sha256: String::new(),
        });
        self.manifest.encrypted_secrets = Some(EncryptedSecrets {
            file: SECRETS_FILE.into(),
            recipients: recipients.keys(),
            sha256: super::manifest::sha256_hex(&sealed),
        });
        self.manifest.assign_id();
        self.encrypted_secrets = Some(sealed);
        Ok(self)
    }

    /// A snapshot of content already in memory (an import, a rewritten snapshot), with its id
    /// assigned from `meta` (whose id is ignored).
    pub fn from_content(
        meta: SnapshotMeta,
        format: Format,
        content: SnapshotContent,
        warnings: Vec<String>,
    ) -> Result<Captured> {
        let mut content = content;
        content.normalize();
        let mut spill = Spill::new()?;
        for g in content.groups {
            spill.push(g)?;
        }
        seal(meta, format, spill, content.connectors, warnings)
    }
}

/// What reading one batch of groups needs.
struct BatchReading<'a> {
    kafka: &'a KafkaClient,
    selection: &'a Selection,
    types: &'a BTreeMap<String, GroupListing>,
    topic_filter: BTreeSet<&'a str>,
    /// The groups the selection names (an undo snapshot names every group it covers).
    named: BTreeSet<&'a str>,
}

impl BatchReading<'_> {
    /// Reads every wanted group in batches sized so that a batch holds about BATCH_ROWS
    /// committed offsets; each batch goes to the spill before the next is read, so memory
    /// follows the batch, not the snapshot.
    async fn read_all(
        &mut self,
        wanted: &BTreeMap<String, Option<String>>,
        gaps: &mut Gaps,
        warnings: &mut Vec<String>,
    ) -> Result<Spill> {
        let mut spill = Spill::new()?;
        let mut cache = PartitionCache::default();
        let mut batch_size = FIRST_BATCH_GROUPS;
        let mut rest = wanted.iter().peekable();
        while rest.peek().is_some() {
            let batch: Vec<(&String, &Option<String>)> = rest.by_ref().take(batch_size).collect();
            for g in self.read(&batch, gaps, warnings, &mut cache).await? {
                spill.push(g)?;
            }
            // Size the next batch from the rows per group seen so far.
            let per_group = (spill.rows() / spill.groups().max(1)).max(1);
            batch_size = (BATCH_ROWS / per_group).clamp(1, MAX_BATCH_GROUPS);
        }
        Ok(spill)
    }

    /// Reads a batch of groups (id and owning connector), in id order.
    async fn read(
        &mut self,
        batch: &[(&String, &Option<String>)],
        gaps: &mut Gaps,
        warnings: &mut Vec<String>,
        cache: &mut PartitionCache,
    ) -> Result<Vec<GroupSnapshot>> {
        let kafka = self.kafka;
        let ids: Vec<String> = batch.iter().map(|(g, _)| (*g).clone()).collect();
        let (described, mut offsets) = kafka.read_groups_typed(ids, self.types).await?;
        crate::failpoint::hit("snapshot-after-describe");
        let described: BTreeMap<String, GroupDescription> = described
            .into_iter()
            .map(|d| (d.group_id.clone(), d))
            .collect();
        let mut groups = Vec::new();
        for &(group_id, connector) in batch {
            let committed = match offsets.remove(group_id) {
                Some(Ok(c)) => c,
                Some(Err(e)) => {
                    let part = format!("the committed offsets of group {group_id}");
                    gaps.add(format!("{part}: {e}"), unreadable(part.clone(), &e))?;
                    continue;
                }
                None => Vec::new(),
            };
            let desc = described.get(group_id);
            let g = self
                .one_group(group_id, connector, committed, desc, gaps, warnings)
                .await?;
            groups.extend(g);
        }
        add_group_configs(kafka, &mut groups, gaps).await?;
        for gap in
            fill_partition_state(kafka, &mut groups, self.selection.with_timestamps, cache).await?
        {
            let e = unreadable(gap.clone(), &Error::kafka("ListOffsets", "no answer"));
            gaps.add(gap, e)?;
        }
        Ok(groups)
    }

    /// One group of a batch from its committed offsets and description; `None` when it is left
    /// out (it does not exist, or has nothing on the selected topics and was not named).
    async fn one_group(
        &self,
        group_id: &String,
        connector: &Option<String>,
        committed: Vec<crate::kafka::GroupOffset>,
        desc: Option<&GroupDescription>,
        gaps: &mut Gaps,
        warnings: &mut Vec<String>,
    ) -> Result<Option<GroupSnapshot>> {
        let state = desc
            .map(|d| d.state.clone())
            .unwrap_or_else(|| GroupState::Unknown("the coordinator did not describe it".into()));
        if let GroupState::Unknown(why) = &state {
            let part = format!("the state of group {group_id}");
            let e = Error::kafka("DescribeConsumerGroups", format!("group {group_id}: {why}"));
            gaps.add(format!("{part}: {why}"), unreadable(part.clone(), &e))?;
        }
        let exists = !committed.is_empty() || state.is_known_live();
        if !exists
            && !matches!(state, GroupState::Unknown(_))
            && !self.missing_kept(group_id, connector, warnings).await?
        {
            return Ok(None);
        }
        let had_offsets = !committed.is_empty();
        let partitions: Vec<PartitionOffset> = committed
            .into_iter()
            .filter(|c| {
                self.topic_filter.is_empty() || self.topic_filter.contains(c.topic.as_str())
            })
            .map(|c| PartitionOffset {
                leader_epoch: c.leader_epoch,
                metadata: c.metadata.filter(|m| !m.is_empty()),
                lag: c.lag,
                ..PartitionOffset::new(c.topic, c.partition, c.offset)
            })
            .collect();
        // With --topic, groups found by pattern or --all-groups that have nothing on those
        // topics are left out; groups named or owned by a named connector stay, even if empty.
        let named = self.named.contains(group_id.as_str()) || connector.is_some();
        if had_offsets && partitions.is_empty() && !named {
            return Ok(None);
        }
        Ok(Some(GroupSnapshot {
            group_id: group_id.clone(),
            state,
            protocol_type: match desc {
                Some(d) if matches!(d.group_type, GroupType::Share | GroupType::Streams) => {
                    d.group_type.to_string()
                }
                Some(d) if d.is_simple => String::new(),
                _ => "consumer".into(),
            },
            group_type: desc.map(|d| d.group_type).unwrap_or(GroupType::Unknown),
            members: desc
                .map(|d| d.members.iter().map(Member::from).collect())
                .unwrap_or_default(),
            connector: connector.clone(),
            configs: Default::default(),
            partitions,
        }))
    }

    /// A group that does not exist (no members, no committed offsets): an error when it was
    /// named (unless --allow-missing), a warning otherwise. Returns whether it is kept (a
    /// connector's group with no offsets yet is).
    async fn missing_kept(
        &self,
        group_id: &String,
        connector: &Option<String>,
        warnings: &mut Vec<String>,
    ) -> Result<bool> {
        let named = self.named.contains(group_id.as_str());
        if named && !self.selection.allow_missing {
            let blind = if self.kafka.wire().await.is_none() {
                " (without the direct protocol path, share groups cannot be seen: see the note above, or drop --librdkafka-only)"
            } else {
                ""
            };
            return Err(Error::NotFound {
                what: "consumer group",
                name: group_id.clone(),
                hint: format!(
                    " on {} (no members and no committed offsets){blind}; check the name, or pass --allow-missing",
                    self.kafka.bootstrap()
                ),
            });
        }
        if named || connector.is_none() {
            warnings.push(format!("group {group_id} does not exist; skipped"));
            return Ok(false);
        }
        warnings.push(format!(
            "group {group_id} of connector {} has no committed offsets yet",
            connector.as_deref().unwrap_or_default()
        ));
        Ok(true)
    }
}

/// Adds the group configs of share and streams groups (the broker keeps them apart).
async fn add_group_configs(
    kafka: &KafkaClient,
    groups: &mut [GroupSnapshot],
    gaps: &mut Gaps,
) -> Result<()> {
    let typed: Vec<String> = groups
        .iter()
        .filter(|g| matches!(g.group_type, GroupType::Share | GroupType::Streams))
        .map(|g| g.group_id.clone())
        .collect();
    if typed.is_empty() {
        return Ok(());
    }
    match kafka.group_configs(&typed).await {
        Ok(mut configs) => {
            for g in groups.iter_mut() {
                if let Some(c) = configs.remove(&g.group_id) {
                    g.configs = c;
                }
            }
        }
        Err(e) => {
            let part = "the configs of share and streams groups".to_string();
            gaps.add(format!("{part}: {e}"), unreadable(part.clone(), &e))?;
        }
    }
    Ok(())
}

/// Log offsets and topic ids already read, so that batches of groups on the same topics ask
/// for them once. Holds one entry per partition of the cluster at most, not per row.
#[derive(Default)]
struct PartitionCache {
    marks: BTreeMap<TopicPartition, Watermarks>,
    topic_ids: BTreeMap<String, String>,
    /// Topics whose id was asked for (a topic may have none).
    asked: BTreeSet<String>,
}

/// Adds log-start/log-end offsets and lag (and last-record timestamps) to every partition.
/// Returns the parts that could not be read: partitions whose log range is unknown, and (with
/// timestamps) records that could not be read in time.
async fn fill_partition_state(
    kafka: &KafkaClient,
    groups: &mut [GroupSnapshot],
    with_timestamps: bool,
    cache: &mut PartitionCache,
) -> Result<Vec<String>> {
    let partitions: BTreeSet<TopicPartition> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| (p.topic.clone(), p.partition)))
        .filter(|tp| !cache.marks.contains_key(tp))
        .collect();
    let topics: Vec<String> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| &p.topic))
        .filter(|t| !cache.asked.contains(*t))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let started = std::time::Instant::now();
    let (marks, ids) = futures::join!(
        async {
            if partitions.is_empty() {
                Ok(BTreeMap::new())
            } else {
                kafka.watermarks(&partitions).await
            }
        },
        async {
            if topics.is_empty() {
                Ok(BTreeMap::new())
            } else {
                kafka.topic_ids(topics.clone()).await
            }
        }
    );
    tracing::debug!(
        "log offsets of {} partitions and topic ids: {:?}",
        partitions.len(),
        started.elapsed()
    );
    let marks = marks?;
    let ids = ids.map_err(|e| unreadable("the topic ids".into(), &e))?;
    cache.asked.extend(topics);
    cache.topic_ids.extend(ids);
    let mut gaps: Vec<String> = marks
        .iter()
        .filter(|(_, w)| w.log_start.is_none() || w.log_end.is_none())
        .map(|((t, p), _)| format!("the log range of {t}[{p}]"))
        .collect();
    cache.marks.extend(marks);
    let (marks, ids) = (&cache.marks, &cache.topic_ids);
    for g in groups.iter_mut() {
        // A share group's lag is the broker's count (acknowledged records above the start
        // offset are not lag); for the others it is log-end minus the committed offset.
        let broker_lag = g.group_type == GroupType::Share;
        for p in g.partitions.iter_mut() {
            if let Some(w) = marks.get(&(p.topic.clone(), p.partition)) {
                p.log_start_offset = w.log_start;
                p.log_end_offset = w.log_end;
                if !broker_lag || p.lag.is_none() {
                    p.lag = w.log_end.map(|end| (end - p.offset).max(0));
                }
            }
            p.topic_id = ids.get(&p.topic).cloned();
        }
    }
    if !with_timestamps {
        return Ok(gaps);
    }
    // The record before the committed offset must still be in the log to have a timestamp.
    let positions: BTreeSet<(TopicPartition, i64)> = groups
        .iter()
        .flat_map(|g| g.partitions.iter())
        .filter(|p| {
            p.log_start_offset.is_some_and(|s| p.offset > s)
                && p.log_end_offset.is_some_and(|e| p.offset <= e)
        })
        .map(|p| ((p.topic.clone(), p.partition), p.offset))
        .collect();
    let (records, unread) = kafka.last_records(positions.into_iter().collect()).await?;
    gaps.extend(
        unread
            .into_iter()
            .map(|u| format!("the last-record timestamp of {u}")),
    );
    for p in groups.iter_mut().flat_map(|g| g.partitions.iter_mut()) {
        let record = records.get(&((p.topic.clone(), p.partition), p.offset));
        p.last_record_timestamp = record
            .and_then(|r| r.timestamp)
            .and_then(DateTime::<Utc>::from_timestamp_millis);
        p.last_record_digest = record.map(|r| r.digest.clone());
    }
    Ok(gaps)
}
