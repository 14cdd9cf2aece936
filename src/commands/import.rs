//! `import`: kafka-consumer-groups CSV stored as a snapshot of kind `import`, each partition with
//! its live log range and each group with what the coordinator says of it now.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{SubsecRound, Utc};

use crate::audit::{Facts, GroupChange};
use crate::error::{Error, Result};
use crate::format::csv::{self as csv_form, CsvOffset};
use crate::kafka::{GroupDescription, KafkaClient, KafkaSettings, TopicPartition, Watermarks};
use crate::snapshot::model::{
    GroupSnapshot, Member, PartitionOffset, Selection, SnapshotContent, SnapshotKind, SnapshotMeta,
};
use crate::snapshot::{self, Captured, Format, Manifest};
use crate::store::Store;
use clap::Args;
use std::path::PathBuf;

/// The file of an import, checked: its name, its rows by group, and the tags to store.
pub struct ImportFile {
    pub name: String,
    pub by_group: BTreeMap<String, Vec<CsvOffset>>,
    pub tags: BTreeMap<String, String>,
}

/// Reads and checks a CSV file (no connection, no store): its name and its rows by group.
/// `groups`: the group of a `topic,partition,offset` file, or the groups to keep of a
/// `group,topic,partition,offset` one.
pub fn read(path: &Path, groups: &[String]) -> Result<(String, BTreeMap<String, Vec<CsvOffset>>)> {
    let bytes = std::fs::read(path).map_err(|source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.display().to_string();
    let file = csv_form::decode(&name, &bytes)?;
    let by_group = csv_form::by_group(&file, groups)?;
    Ok((name, by_group))
}

/// An import written to the store.
pub struct Imported {
    pub manifest: Manifest,
    /// Partitions that do not exist, offsets past their log end.
    pub warnings: Vec<String>,
}

/// Reads the live log ranges and the groups from the cluster, and writes the snapshot; what
/// its audit event says goes into `facts`.
pub async fn import(
    store: &Store,
    settings: KafkaSettings,
    file: ImportFile,
    format: Format,
    facts: &mut Facts,
) -> Result<Imported> {
    crate::progress::stage("import: reading the live log ranges", 0);
    let kafka = KafkaClient::connect(settings).await?;
    let by_group = file.by_group;
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
            imported_group(group_id, rows, found, &marks)
        })
        .collect();
    warnings.extend(past_log_end(&groups));
    crate::progress::finish();
    let captured = build(&kafka, &format, groups, brokers, file.tags)?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let manifest = snapshot::write(store, &captured).await?;
    import_facts(facts, &manifest);
    Ok(Imported { manifest, warnings })
}

/// One imported group: its rows, with the live log range of each partition, and what the
/// coordinator says of the group now.
fn imported_group(
    group_id: String,
    rows: Vec<CsvOffset>,
    described: Option<&GroupDescription>,
    marks: &BTreeMap<TopicPartition, Watermarks>,
) -> GroupSnapshot {
    let desc = described.filter(|d| d.error.is_none());
    GroupSnapshot {
        state: described.map(|d| d.state.clone()).unwrap_or_else(|| {
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
                    log_start_offset: w.and_then(|w| w.log_start),
                    log_end_offset: log_end,
                    lag: log_end.map(|e| (e - r.offset).max(0)),
                    ..PartitionOffset::new(r.topic, r.partition, r.offset)
                }
            })
            .collect(),
        group_id,
    }
}

/// A warning for every imported offset past its partition's log end.
fn past_log_end(groups: &[GroupSnapshot]) -> Vec<String> {
    let mut warnings = Vec::new();
    for g in groups {
        for p in &g.partitions {
            if let Some(e) = p.log_end_offset.filter(|e| p.offset > *e) {
                warnings.push(format!(
                    "group {} {} partition {}: offset {} is past the log end {e}",
                    g.group_id, p.topic, p.partition, p.offset
                ));
            }
        }
    }
    warnings
}

/// What the audit event of an import says: the snapshot written and its groups (an import
/// changes no offset).
fn import_facts(facts: &mut Facts, manifest: &Manifest) {
    facts.subject = Some(manifest.meta.id.clone());
    facts.snapshot_ids.push(manifest.meta.id.clone());
    facts.groups = manifest
        .summary
        .group_ids
        .iter()
        .map(|g| GroupChange {
            group_id: g.clone(),
            partitions_changed: 0,
            records_reprocessed: 0,
            records_skipped: 0,
        })
        .collect();
    facts
        .detail
        .insert("partitions".into(), manifest.summary.partitions.into());
}

/// The snapshot of an import, with its id assigned.
fn build(
    kafka: &KafkaClient,
    format: &Format,
    groups: Vec<GroupSnapshot>,
    brokers: Vec<String>,
    tags: BTreeMap<String, String>,
) -> Result<Captured> {
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
    Captured::from_content(meta, *format, content, vec![])
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The CSV file, as `kafka-consumer-groups --reset-offsets ... --export` writes it.
    pub file: PathBuf,
    /// The group of a `topic,partition,offset` file; for a `group,topic,partition,offset`
    /// file, import only this group (repeatable).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// A label KEY=VALUE stored in the manifest (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// File format of the offsets in the snapshot.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The file, its groups and the tags of `import`, checked (no connection, no store).
pub fn check_import(args: &ImportArgs) -> Result<ImportFile> {
    let (name, by_group) = read(&args.file, &args.groups)?;
    let tags = crate::config::parse_tags(&args.tags)?;
    Ok(ImportFile {
        name,
        by_group,
        tags,
    })
}
