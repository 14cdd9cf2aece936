//! `offset-vault export` and `import`: kafka-consumer-groups CSV out of and into the store.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{SubsecRound, Utc};
use serde_json::json;

use super::archive::{ExportArgs, ImportArgs};
use super::commands::open_store;
use super::output::print_json;
use super::{Cli, OutputFormat};
use crate::error::{exit, Error, Result};
use crate::format::csv::{self as csv_form, CsvOffset};
use crate::kafka::{KafkaClient, TopicPartition};
use crate::snapshot::manifest::{content_sha256, FileEntry, Manifest, Summary, CONNECTORS_FILE};
use crate::snapshot::model::{
    GroupSnapshot, Member, PartitionOffset, Selection, SnapshotContent, SnapshotKind, SnapshotMeta,
    FORMAT_VERSION,
};
use crate::snapshot::repo;
use crate::snapshot::{self, Captured};
use crate::store::Store;

pub async fn export(cli: &Cli, args: &ExportArgs) -> Result<i32> {
    let store = open_store(cli)?;
    let manifest = repo::resolve(&store, &args.id).await?;
    let loaded = repo::load_verified(&store, &manifest).await?;
    let mut content = loaded.content;
    content.normalize();
    for g in &args.groups {
        if !content.groups.iter().any(|s| &s.group_id == g) {
            return Err(Error::NotFound {
                what: "consumer group in the snapshot",
                name: g.clone(),
                hint: format!(
                    "; `offset-vault show {}` lists its groups",
                    manifest.meta.id
                ),
            });
        }
    }
    // kafka-consumer-groups --from-file commits consumer offsets; a share group's start offsets
    // in the same file would be taken for those. They are exported only when named.
    let (share, groups): (Vec<&GroupSnapshot>, Vec<&GroupSnapshot>) = content
        .groups
        .iter()
        .filter(|g| args.groups.is_empty() || args.groups.contains(&g.group_id))
        .filter(|g| !g.partitions.is_empty())
        .partition(|g| {
            g.group_type == crate::kafka::GroupType::Share && !args.groups.contains(&g.group_id)
        });
    if !share.is_empty() {
        crate::noteln!(
            "note: left out share group(s) {}: their share-partition start offsets are not consumer offsets for kafka-consumer-groups --from-file; name one with --group to export it anyway",
            share.iter().map(|g| g.group_id.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    if groups.is_empty() {
        return Err(Error::usage(format!(
            "snapshot {} has no committed offsets for the selected groups: nothing to export",
            manifest.meta.id
        )));
    }
    let rows: Vec<CsvOffset> = groups
        .iter()
        .flat_map(|g| {
            g.partitions.iter().map(|p| CsvOffset {
                group: Some(g.group_id.clone()),
                topic: p.topic.clone(),
                partition: p.partition,
                offset: p.offset,
                line: 0,
            })
        })
        .collect();
    let bytes = csv_form::encode(&rows, groups.len() > 1)?;
    match &args.file {
        Some(path) => {
            std::fs::write(path, &bytes)
                .map_err(|e| Error::usage(format!("--file {}: {e}", path.display())))?;
            crate::noteln!(
                "{} offset(s) of {} group(s) from snapshot {} written to {}",
                rows.len(),
                groups.len(),
                manifest.meta.id,
                path.display()
            );
        }
        None => {
            use std::io::Write;
            let mut out = crate::cli::output::QuietStdout;
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Error::Internal(format!("write to stdout: {e}")))?;
        }
    }
    Ok(exit::OK)
}

pub async fn import(cli: &Cli, args: &ImportArgs) -> Result<i32> {
    // The file, the groups and the tags are checked before connecting to anything.
    let bytes = std::fs::read(&args.file).map_err(|source| Error::ReadFile {
        path: args.file.clone(),
        source,
    })?;
    let name = args.file.display().to_string();
    let file = csv_form::decode(&name, &bytes)?;
    let by_group = csv_form::by_group(&file, &args.groups)?;
    let tags = super::parse_tags(&args.tags)?;
    let settings = cli.global.kafka_settings()?;
    let store = Store::open(cli.global.store_url()?, cli.global.timeout)?;
    crate::progress::stage("import: reading the live log ranges", 0);
    let kafka = KafkaClient::connect(settings).await?;

    let ids: Vec<String> = by_group.keys().cloned().collect();
    let partitions: BTreeSet<TopicPartition> = by_group
        .values()
        .flatten()
        .map(|r| (r.topic.clone(), r.partition))
        .collect();
    let (described, (brokers, topics)) =
        futures::try_join!(kafka.describe_groups(ids.clone()), kafka.metadata())?;
    let existing: BTreeSet<TopicPartition> = partitions
        .iter()
        .filter(|(t, p)| topics.get(t).is_some_and(|n| p < n))
        .cloned()
        .collect();
    let marks = kafka.watermarks(&existing).await?;
    let mut warnings: Vec<String> = partitions
        .difference(&existing)
        .map(|(t, p)| format!("{t} partition {p} does not exist on {}", kafka.bootstrap()))
        .collect();

    let described: BTreeMap<String, _> = described
        .into_iter()
        .map(|d| (d.group_id.clone(), d))
        .collect();
    let groups: Vec<GroupSnapshot> = by_group
        .into_iter()
        .map(|(group_id, rows)| {
            let found = described.get(&group_id);
            let desc = found.filter(|d| d.error.is_none());
            GroupSnapshot {
                state: found.map(|d| d.state.clone()).unwrap_or_else(|| {
                    crate::kafka::GroupState::Unknown("the coordinator did not describe it".into())
                }),
                protocol_type: match desc {
                    Some(d) if d.is_simple => String::new(),
                    _ => "consumer".into(),
                },
                group_type: desc
                    .map(|d| d.group_type)
                    .unwrap_or(crate::kafka::GroupType::Unknown),
                members: desc
                    .map(|d| d.members.iter().map(Member::from).collect())
                    .unwrap_or_default(),
                connector: None,
                configs: Default::default(),
                partitions: rows
                    .into_iter()
                    .map(|r| {
                        let w = marks.get(&(r.topic.clone(), r.partition));
                        let log_end = w.and_then(|w| w.log_end);
                        PartitionOffset {
                            topic: r.topic,
                            partition: r.partition,
                            offset: r.offset,
                            leader_epoch: None,
                            metadata: None,
                            log_start_offset: w.and_then(|w| w.log_start),
                            log_end_offset: log_end,
                            lag: log_end.map(|e| (e - r.offset).max(0)),
                            last_record_timestamp: None,
                            topic_id: None,
                        }
                    })
                    .collect(),
                group_id,
            }
        })
        .collect();
    for g in &groups {
        for p in &g.partitions {
            if let Some(e) = p.log_end_offset {
                if p.offset > e {
                    warnings.push(format!(
                        "group {} {} partition {}: offset {} is past the log end {e}",
                        g.group_id, p.topic, p.partition, p.offset
                    ));
                }
            }
        }
    }
    crate::progress::finish();
    let captured = build(&kafka, &args.format, groups, brokers, tags);
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let manifest = snapshot::write(&store, &captured).await?;
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "id": manifest.meta.id,
            "kind": manifest.meta.kind,
            "store": store.url(),
            "created_at": manifest.meta.created_at,
            "cluster_id": manifest.meta.cluster_id,
            "summary": manifest.summary,
            "warnings": warnings,
        })),
        OutputFormat::Table => {
            crate::noteln!(
                "imported {} offset(s) of {} group(s) from {name} as snapshot (kind import) in {}",
                manifest.summary.partitions,
                manifest.summary.groups,
                store.url()
            );
            crate::outln!("{}", manifest.meta.id);
        }
    }
    Ok(exit::OK)
}

/// The snapshot of an import, with its id assigned.
fn build(
    kafka: &KafkaClient,
    format: &crate::snapshot::Format,
    groups: Vec<GroupSnapshot>,
    brokers: Vec<String>,
    tags: BTreeMap<String, String>,
) -> Captured {
    let mut content = SnapshotContent {
        groups,
        connectors: vec![],
    };
    content.normalize();
    let meta = SnapshotMeta {
        id: String::new(),
        created_at: Utc::now().trunc_subsecs(3),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        cluster_id: kafka.cluster_id().to_string(),
        bootstrap_servers: kafka.bootstrap().to_string(),
        brokers,
        selection: Selection {
            groups: content.groups.iter().map(|g| g.group_id.clone()).collect(),
            ..Default::default()
        },
        tags,
        kind: SnapshotKind::Import,
        undo_of: None,
        partial: vec![],
    };
    let mut manifest = Manifest {
        format_version: FORMAT_VERSION.into(),
        meta,
        format: *format,
        summary: Summary::of(&content),
        content_sha256: content_sha256(&content),
        files: [format.offsets_file(), CONNECTORS_FILE]
            .into_iter()
            .map(|name| FileEntry {
                name: name.into(),
                size: 0,
                sha256: String::new(),
            })
            .collect(),
    };
    manifest.assign_id();
    Captured {
        manifest,
        content,
        warnings: vec![],
    }
}
