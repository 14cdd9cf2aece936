//! `offset-vault export` and `import`: kafka-consumer-groups CSV out of and into the store.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use chrono::{SubsecRound, Utc};
use clap::Args;
use serde_json::json;

use super::output::print_json;
use super::{Cli, OutputFormat};
use crate::error::{exit, Error, Result};
use crate::format::csv::{self as csv_form, CsvOffset};
use crate::kafka::{GroupType, KafkaClient, TopicPartition};
use crate::snapshot::model::{
    GroupSnapshot, Member, PartitionOffset, Selection, SnapshotContent, SnapshotKind, SnapshotMeta,
};
use crate::snapshot::repo;
use crate::snapshot::{self, Captured, Format};

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "at", conflicts_with = "at")]
    pub id: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, or a
    /// duration such as 15m ago): the newest snapshot before TIME plus every commit the
    /// commit-log archive (`follow`) holds up to TIME. Refused (exit 7) when the archive does not
    /// cover TIME; a group with no committed offset at TIME is named on stderr and not written.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Only this group (repeatable). Default: every group of the snapshot except share groups
    /// (whose start offsets are not consumer offsets); name a share group to export it (not
    /// with --at: the commit log does not hold a share group's positions).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
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

pub async fn cmd_import(cli: &Cli, args: &ImportArgs) -> Result<i32> {
    // Bad input is refused before the trail is opened: a refused import writes nothing.
    super::csv::check_import(args)?;
    let trail = super::audit::begin(cli, crate::audit::EventType::Import, true, true).await?;
    let mut facts = crate::audit::Facts::default();
    let result = super::csv::import(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    result
}

pub(super) const EXPORT_EXAMPLES: &str = "\
Examples:
  # One group: topic,partition,offset, as kafka-consumer-groups --from-file reads it
  offset-vault export 20261201T0930 --group billing --file billing.csv
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --from-file billing.csv --execute

  # Several groups: group,topic,partition,offset, on standard output
  offset-vault export 20261201T0930 > offsets.csv

  # The offsets exactly as they were at an instant (snapshot + commit-log archive)
  offset-vault export --at 2026-12-03T10:03:17.250Z --group billing --file billing.csv";

pub(super) const IMPORT_EXAMPLES: &str = "\
Examples:
  # A file exported by kafka-consumer-groups for one group
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --to-current --export --dry-run > billing.csv
  offset-vault import billing.csv --group billing --tag source=runbook

  # Several groups in one file, with a tag; restore it later by its id (restore ID --execute):
  # --latest never picks an import
  offset-vault import all-groups.csv --tag source=runbook";

pub async fn export(cli: &Cli, args: &ExportArgs) -> Result<i32> {
    let id = match (&args.id, &args.at) {
        (_, Some(at)) => return export_at(cli, args, at).await,
        (Some(id), None) => id,
        (None, None) => {
            return Err(Error::usage(
                "say what to export: a snapshot id, or --at TIME",
            ))
        }
    };
    let store = cli.global.open_existing_store()?;
    let manifest = repo::resolve(&store, id).await?;
    let opened = repo::open_verified(&store, &manifest).await?;
    for g in &args.groups {
        if !manifest.summary.group_ids.contains(g) {
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
    let wanted = |g: &GroupSnapshot| {
        (args.groups.is_empty() || args.groups.contains(&g.group_id)) && !g.partitions.is_empty()
    };
    let left_out =
        |g: &GroupSnapshot| g.group_type == GroupType::Share && !args.groups.contains(&g.group_id);
    // A first pass counts the groups (the CSV form depends on it); a second writes the rows.
    let (mut share, mut groups) = (Vec::new(), 0usize);
    opened.for_each_group(&mut |g| {
        if wanted(&g) {
            if left_out(&g) {
                share.push(g.group_id);
            } else {
                groups += 1;
            }
        }
        Ok(())
    })?;
    if !share.is_empty() {
        crate::noteln!(
            "note: left out share group(s) {}: their share-partition start offsets are not consumer offsets for kafka-consumer-groups --from-file; name one with --group to export it anyway",
            share.join(", ")
        );
    }
    if groups == 0 {
        return Err(Error::usage(format!(
            "snapshot {} has no committed offsets for the selected groups: nothing to export",
            manifest.meta.id
        )));
    }
    let mut stream = opened.groups();
    let error = stream.error_slot();
    let mut rows = csv_rows(stream.by_ref().filter(|g| wanted(g) && !left_out(g)));
    let stream_error = || error.lock().expect("not poisoned").take();
    let from = format!("snapshot {}", manifest.meta.id);
    write_csv(args, &mut rows, groups, &from, stream_error)
}

/// `export --at TIME`: the offsets at an instant, the groups with none then named on stderr.
async fn export_at(cli: &Cli, args: &ExportArgs, text: &str) -> Result<i32> {
    let filter = crate::diff::Filter {
        groups: args.groups.clone(),
        ..Default::default()
    };
    let req = super::at::request(text, filter, "export", Utc::now())?;
    let store = cli.global.open_existing_store()?;
    let read = crate::log::at::read(&store, &req).await?;
    crate::noteln!("{}", read.instant.describe());
    for note in super::at::notes(&read) {
        crate::noteln!("{note}");
    }
    let present: Vec<GroupSnapshot> = read.instant.present().cloned().collect();
    if present.is_empty() {
        return Err(Error::usage(format!(
            "no committed offsets at {} for the selected groups: nothing to export",
            crate::log::at::millis(req.at)
        )));
    }
    let groups = present.len();
    let mut rows = csv_rows(present.into_iter());
    let from = format!(
        "{} (snapshot {} and the commit log)",
        crate::log::at::millis(req.at),
        read.instant.base_id
    );
    write_csv(args, &mut rows, groups, &from, || None)
}

/// The CSV rows of groups, in their order.
fn csv_rows(
    groups: impl Iterator<Item = GroupSnapshot>,
) -> impl Iterator<Item = Result<CsvOffset>> {
    groups.flat_map(|g| {
        let group = g.group_id;
        g.partitions.into_iter().map(move |p| {
            Ok(CsvOffset {
                group: Some(group.clone()),
                topic: p.topic,
                partition: p.partition,
                offset: p.offset,
                line: 0,
            })
        })
    })
}

/// Writes the rows of `groups` groups to `--file` or stdout, in the one-group form when there
/// is one; `stream_error` is the error that ended the rows early, if one did.
fn write_csv(
    args: &ExportArgs,
    rows: &mut dyn Iterator<Item = Result<CsvOffset>>,
    groups: usize,
    from: &str,
    stream_error: impl Fn() -> Option<Error>,
) -> Result<i32> {
    match &args.file {
        Some(path) => {
            // Written next to the target and renamed over it once complete: a failed export
            // leaves the file as it was.
            let target =
                |e: &dyn std::fmt::Display| Error::usage(format!("--file {}: {e}", path.display()));
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            let tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| target(&e))?;
            let written =
                csv_form::encode_to(std::io::BufWriter::new(tmp.as_file()), rows, groups > 1)?;
            if let Some(e) = stream_error() {
                return Err(e);
            }
            tmp.persist(path).map_err(|e| target(&e.error))?;
            crate::noteln!(
                "{written} offset(s) of {groups} group(s) from {from} written to {}",
                path.display()
            );
        }
        None => {
            let out = std::io::BufWriter::new(crate::console::QuietStdout);
            csv_form::encode_to(out, rows, groups > 1)?;
            if let Some(e) = stream_error() {
                return Err(e);
            }
        }
    }
    Ok(exit::OK)
}

/// What `import` reads from its arguments: the file's name, its rows by group, the tags.
pub(super) type CheckedImport = (
    String,
    BTreeMap<String, Vec<CsvOffset>>,
    BTreeMap<String, String>,
);

/// The file, its groups and the tags of `import`, checked (no connection, no store).
pub(super) fn check_import(args: &ImportArgs) -> Result<CheckedImport> {
    let bytes = std::fs::read(&args.file).map_err(|source| Error::ReadFile {
        path: args.file.clone(),
        source,
    })?;
    let name = args.file.display().to_string();
    let file = csv_form::decode(&name, &bytes)?;
    let by_group = csv_form::by_group(&file, &args.groups)?;
    let tags = super::parse_tags(&args.tags)?;
    Ok((name, by_group, tags))
}

pub async fn import(cli: &Cli, args: &ImportArgs, facts: &mut crate::audit::Facts) -> Result<i32> {
    // The file, the groups and the tags are checked before connecting to anything.
    let (name, by_group, tags) = check_import(args)?;
    let settings = cli.global.kafka_settings()?;
    let store = cli.global.open_store()?;
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
            imported_group(group_id, rows, found, &marks)
        })
        .collect();
    warnings.extend(past_log_end(&groups));
    crate::progress::finish();
    let captured = build(&kafka, &args.format, groups, brokers, tags)?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let manifest = snapshot::write(&store, &captured).await?;
    import_facts(facts, &manifest);
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

/// One imported group: its rows, with the live log range of each partition, and what the
/// coordinator says of the group now.
fn imported_group(
    group_id: String,
    rows: Vec<CsvOffset>,
    described: Option<&crate::kafka::GroupDescription>,
    marks: &BTreeMap<TopicPartition, crate::kafka::Watermarks>,
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
fn import_facts(facts: &mut crate::audit::Facts, manifest: &crate::snapshot::Manifest) {
    facts.subject = Some(manifest.meta.id.clone());
    facts.snapshot_ids.push(manifest.meta.id.clone());
    facts.groups = manifest
        .summary
        .group_ids
        .iter()
        .map(|g| crate::audit::GroupChange {
            group_id: g.clone(),
            partitions_changed: 0,
            records_reprocessed: 0,
            records_skipped: 0,
        })
        .collect();
    facts
        .detail
        .insert("partitions".into(), json!(manifest.summary.partitions));
}

/// The snapshot of an import, with its id assigned.
fn build(
    kafka: &KafkaClient,
    format: &crate::snapshot::Format,
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
