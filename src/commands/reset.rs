//! `reset` as library calls: the scenario and scope named on the command line checked into a
//! [`ResetSpec`] (before any I/O), the reset planned against the cluster (or planned again from
//! a reviewed plan file and compared), the plan file written, and `--rehearse-on`'s targets
//! carried to a staging cluster. [`super::apply`] executes the plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::restore::RunSettings;
use super::staging::Staging;
use crate::audit::Facts;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::format::csv as csv_form;
use crate::kafka::KafkaClient;
use crate::mirror::MirrorOptions;
use crate::restore::ledger::{GroupSource, Planning};
use crate::restore::reset::{self, PreparedReset, ResetSpec};
use crate::restore::review::{self, PlanBody, PlanFile, PlanRequest};
use crate::restore::targets::{parse_datetime, parse_iso_duration, parse_topic, Scenario, Scope};
use crate::restore::{Choice, Eligible, PlanOptions, RestoreRequest, Targets};
use crate::snapshot::model::Selection;
use crate::snapshot::SnapshotKind;

/// A scenario as the command line names it, before it is checked: a time still to be parsed,
/// a duration still to be counted back from now, a file still to be read.
#[derive(Debug, Clone)]
pub enum Named {
    ToEarliest,
    ToLatest,
    ToCurrent,
    ToOffset(i64),
    ShiftBy(i64),
    ToDatetime(String),
    ByDuration(String),
    FromFile(PathBuf),
}

/// The scenario and the source-connector offsets of a JSON `--from-file`.
type Checked = (Scenario, Option<Vec<Value>>);

/// The one scenario named, checked; `--by-duration` is counted back from `now`. `groups` are
/// the `--group`s, for a CSV file without a group column.
fn scenario(named: &[Named], groups: &[String], now: DateTime<Utc>) -> Result<Checked> {
    let mut given: Vec<Checked> = Vec::new();
    for n in named {
        let one = match n {
            Named::ToEarliest => Scenario::ToEarliest,
            Named::ToLatest => Scenario::ToLatest,
            Named::ToCurrent => Scenario::ToCurrent,
            Named::ToOffset(n) => Scenario::ToOffset(*n),
            Named::ShiftBy(n) => Scenario::ShiftBy(*n),
            Named::ToDatetime(t) => Scenario::ToDatetime(parse_datetime(t)?),
            Named::ByDuration(d) => Scenario::ToDatetime(now - parse_iso_duration(d)?),
            Named::FromFile(path) => {
                given.push(read_file(path, groups)?);
                continue;
            }
        };
        given.push((one, None));
    }
    let n = given.len();
    let mut it = given.into_iter();
    match (it.next(), n) {
        (Some(one), 1) => Ok(one),
        (_, 0) => Err(Error::usage(
            "say where to reset to: --to-earliest, --to-latest, --to-current, --to-offset N, --shift-by N, --to-datetime TIME, --by-duration DURATION or --from-file FILE (or --from-plan FILE)",
        )),
        _ => Err(Error::usage(format!(
            "{n} scenarios given: pass exactly one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file"
        ))),
    }
}

/// Reads `--from-file`: kafka-consumer-groups CSV, or a connector's JSON offsets (a document
/// that starts with `{` or `[`).
fn read_file(path: &PathBuf, groups: &[String]) -> Result<Checked> {
    let bytes = std::fs::read(path).map_err(|source| Error::ReadFile {
        path: path.clone(),
        source,
    })?;
    let name = path.display().to_string();
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        return read_connector_offsets(&name, &bytes);
    }
    let file = csv_form::decode(&name, &bytes).map_err(|e| {
        Error::usage(
            e.to_string()
                .replace("nothing was imported", "nothing was changed"),
        )
    })?;
    let rows = csv_form::by_group(&file, groups)?
        .into_iter()
        .map(|(g, rows)| {
            let offsets = rows
                .into_iter()
                .map(|r| ((r.topic, r.partition), r.offset))
                .collect();
            (g, offsets)
        })
        .collect();
    Ok((Scenario::FromFile(rows), None))
}

/// A source connector's offsets, in the form `GET /connectors/NAME/offsets` returns.
fn read_connector_offsets(name: &str, bytes: &[u8]) -> Result<Checked> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::usage(format!("--from-file {name}: not JSON ({e}); expected the form GET /connectors/NAME/offsets returns: {{\"offsets\": [{{\"partition\": {{...}}, \"offset\": {{...}}}}]}}"))
    })?;
    let list = match &doc {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("offsets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if list.is_empty()
        || list
            .iter()
            .any(|e| !e["partition"].is_object() || e.get("offset").is_none())
    {
        return Err(Error::usage(format!(
            "--from-file {name}: expected a non-empty list of {{\"partition\": {{...}}, \"offset\": {{...}}}} entries (the form GET /connectors/NAME/offsets returns); nothing was changed"
        )));
    }
    Ok((Scenario::FromFile(BTreeMap::new()), Some(list)))
}

/// What the command line asks a reset to do, before it is checked.
pub struct ResetFlags<'a> {
    pub named: &'a [Named],
    pub selection: Selection,
    /// `--topic`: `TOPIC` or `TOPIC:P,...`.
    pub topics: &'a [String],
    pub all_topics: bool,
    /// How many Connect clusters are configured (a connector selection needs one).
    pub connect_urls: usize,
}

/// The reset the flags ask for, checked before any I/O; `--by-duration` is counted back from
/// `now`.
pub fn spec(flags: ResetFlags<'_>, now: DateTime<Utc>) -> Result<ResetSpec> {
    let mut selection = flags.selection;
    let (scenario, source_offsets) = scenario(flags.named, &selection.groups, now)?;
    let file = matches!(scenario, Scenario::FromFile(_));
    let scope = scope(&selection, file, flags.topics, flags.all_topics)?;
    if let Scenario::FromFile(rows) = &scenario {
        if selection.is_empty() {
            // A several-groups file names its groups.
            selection.groups = rows.keys().cloned().collect();
        }
    }
    if source_offsets.is_some()
        && !(selection.connectors.len() == 1
            && selection.groups.is_empty()
            && selection.group_pattern.is_none()
            && !selection.all_groups
            && !selection.all_connectors)
    {
        return Err(Error::usage(
            "--from-file with connector offsets (JSON) is for one source connector: select it with exactly one --connector NAME and nothing else",
        ));
    }
    crate::snapshot::capture::validate(&selection, flags.connect_urls)?;
    Ok(ResetSpec {
        selection,
        scope,
        scenario,
        source_offsets,
    })
}

/// Which partitions: a file names its own; otherwise `--all-topics` or `--topic`, and for
/// connectors alone every partition their sink groups have committed.
fn scope(selection: &Selection, file: bool, topics: &[String], all_topics: bool) -> Result<Scope> {
    match (file, all_topics, topics.is_empty()) {
        (true, false, true) => Ok(Scope::File),
        (true, _, _) => Err(Error::usage(
            "--from-file names its partitions: leave out --topic and --all-topics",
        )),
        (false, true, _) => Ok(Scope::AllTopics),
        (false, false, false) => Ok(Scope::Topics(
            topics
                .iter()
                .map(|t| parse_topic(t))
                .collect::<Result<_>>()?,
        )),
        (false, false, true) if !selection.connectors.is_empty() || selection.all_connectors => {
            // Connectors only: their sink groups' every committed partition, as a source
            // connector has no topics to name.
            if selection.groups.is_empty()
                && selection.group_pattern.is_none()
                && !selection.all_groups
            {
                Ok(Scope::AllTopics)
            } else {
                Err(scope_missing())
            }
        }
        (false, false, true) => Err(scope_missing()),
    }
}

fn scope_missing() -> Error {
    Error::usage(
        "say which partitions: --all-topics (every partition each group has a committed offset for) or --topic TOPIC[:P,...] (repeatable)",
    )
}

/// The user's plan options: the reviewed plan file's when there is one, else the flags'.
pub fn base_options(flags: PlanOptions, reviewed: Option<&PlanFile>) -> PlanOptions {
    match reviewed {
        Some(f) => PlanOptions {
            on_out_of_range: f.body.request.on_out_of_range,
            skip_missing: f.body.request.skip_missing,
            stop_connectors: f.body.request.stop_connectors,
            ..Default::default()
        },
        None => flags,
    }
}

/// What execute is asked to do: restore's request, with a pre-reset snapshot as the undo point.
/// A reset computes its targets from the live state in one pass: one batch, whatever
/// `run.batch_partitions` says.
pub fn request(spec: &ResetSpec, prepared: &PreparedReset, run: RunSettings) -> RestoreRequest {
    RestoreRequest {
        choice: Choice::Id(spec.label()),
        at: None,
        eligible: Eligible::default(),
        groups: spec.selection.groups.clone(),
        connectors: spec.selection.connectors.clone(),
        topics: Vec::new(),
        partitions: Vec::new(),
        plan: prepared.options.clone(),
        allow_other_cluster: false,
        by_timestamp: false,
        mirror: Default::default(),
        undo: run.undo,
        wait_timeout: run.wait_timeout,
        settle: run.settle,
        commit_concurrency: run.commit_concurrency,
        batch_partitions: usize::MAX,
        reviewed_groups: None,
        reviewed: None,
        connector_config: BTreeMap::new(),
        undo_kind: SnapshotKind::PreReset,
        undo_tags: [("reset".to_string(), spec.scenario.describe())].into(),
        relative_targets: spec.scenario.is_relative(),
        refuse_moved: run.refuse_moved,
        identities: None,
    }
}

/// Plans the reset on `kafka`; with a reviewed plan file, refuses it when it was made for
/// another cluster or when the plan made now differs from it.
pub async fn plan(
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    spec: &ResetSpec,
    base: &PlanOptions,
    reviewed: Option<&PlanFile>,
    refuse_moved: bool,
    facts: &mut Facts,
) -> Result<PreparedReset> {
    if let Some(f) = reviewed {
        same_cluster(f, kafka)?;
    }
    crate::progress::stage("planning the reset", 0);
    let mut prepared = reset::prepare(kafka, clients, spec, base).await?;
    facts.groups = prepared.plan.group_changes();
    facts
        .detail
        .insert("scenario".into(), spec.scenario.describe().into());
    crate::progress::finish();
    if let Some(f) = reviewed {
        prepared.targets.moved = as_reviewed(f, spec, &prepared, refuse_moved)?;
    }
    Ok(prepared)
}

/// Refuses a reviewed plan made for another cluster.
fn same_cluster(f: &PlanFile, kafka: &KafkaClient) -> Result<()> {
    if f.body.cluster_id == kafka.cluster_id() {
        return Ok(());
    }
    Err(Error::OtherCluster {
        id: format!("reset plan {}", f.body.snapshot_id),
        snapshot_cluster: f.body.cluster_id.clone(),
        live_cluster: kafka.cluster_id().to_string(),
        bootstrap: kafka.bootstrap().to_string(),
    })
}

/// Compares the plan made now with the reviewed one: any change of a target refuses it (a
/// relative scenario's targets also when a current offset moved). Returns the partitions
/// whose current offset moved.
fn as_reviewed(
    f: &PlanFile,
    spec: &ResetSpec,
    prepared: &PreparedReset,
    refuse_moved: bool,
) -> Result<Vec<review::Moved>> {
    let mut cmp = review::compare(&f.body.plan, &prepared.plan);
    if spec.scenario.is_relative() {
        cmp.changes
            .extend(review::stale_relative_targets(&cmp.moved));
    } else if refuse_moved {
        cmp.changes.extend(review::moved_since_review(&cmp.moved));
    }
    if !cmp.is_same() {
        return Err(Error::PlanChanged {
            changes: cmp.changes,
        });
    }
    Ok(cmp.moved)
}

/// Writes `--plan-file`: the plan, the reset it was made for, and (with a signing key) the
/// author's signature.
pub fn write_plan_file(
    path: &Path,
    kafka: &KafkaClient,
    spec: &ResetSpec,
    prepared: &PreparedReset,
    keys: &crate::sign::Keys,
) -> Result<()> {
    let o = &prepared.options;
    let request = PlanRequest {
        groups: spec.selection.groups.clone(),
        connectors: spec.selection.connectors.clone(),
        on_out_of_range: o.on_out_of_range,
        skip_missing: o.skip_missing,
        stop_connectors: o.stop_connectors,
        ..Default::default()
    };
    let file = PlanFile::seal(PlanBody::made_now(
        kafka.cluster_id(),
        kafka.bootstrap(),
        request,
        prepared.plan.clone(),
        Some(spec.clone()),
    ));
    file.write(path, keys)
}

/// Connects to the staging cluster of `--rehearse-on`, and refuses it when it is the
/// production cluster itself.
pub async fn connect_staging(
    staging: &Staging,
    production: &KafkaClient,
    value: &str,
) -> Result<KafkaClient> {
    let kafka = KafkaClient::connect(staging.settings.clone()).await?;
    if kafka.cluster_id() == production.cluster_id() {
        return Err(Error::usage(format!(
            "--rehearse-on {value} reaches cluster {}, the production cluster itself: give the staging cluster",
            kafka.cluster_id()
        )));
    }
    Ok(kafka)
}

/// A reset's targets carried to the staging cluster, planned there, and the request that
/// applies them.
pub struct Rehearsal {
    /// The plan's label: the reset's, marked as a rehearsal.
    pub label: String,
    pub targets: Targets,
    pub req: RestoreRequest,
}

/// The reset's targets, computed on production (only read), carried to the staging cluster
/// `kafka` (topics mapped, offsets translated by the records before them) and planned there.
/// `req` is the reset's own request; only its groups are rehearsed.
pub async fn rehearse(
    production: &KafkaClient,
    kafka: &KafkaClient,
    staging: &Staging,
    spec: &ResetSpec,
    prepared: &PreparedReset,
    options: MirrorOptions,
    mut req: RestoreRequest,
) -> Result<Rehearsal> {
    let mut groups = prepared.targets.source.clone().load()?;
    // Production's log starts, as the plan read them: a target there is the beginning.
    let starts: BTreeMap<(&str, &str, i32), i64> = prepared
        .plan
        .groups
        .iter()
        .flat_map(|g| {
            g.partitions.iter().filter_map(move |p| {
                p.log_start
                    .map(|s| ((g.group_id.as_str(), p.topic.as_str(), p.partition), s))
            })
        })
        .collect();
    for g in groups.iter_mut() {
        for p in g.partitions.iter_mut() {
            p.log_start_offset = starts
                .get(&(g.group_id.as_str(), p.topic.as_str(), p.partition))
                .copied();
        }
    }
    for unread in reset::stamp_last_records(production, &mut groups).await? {
        crate::alertln!("warning: the record before the target {unread} was not read: that partition is translated without it");
    }
    let mirror = Arc::new(options.mirror(true, false)?.ok_or_else(|| {
        Error::Internal("a rehearsal always carries offsets to another cluster".into())
    })?);
    crate::progress::stage("planning the rehearsal", 0);
    let label = format!("{} (rehearsal)", spec.label());
    let planning = Planning {
        kafka,
        clients: &staging.clients,
        connectors: &[],
        snapshot_id: &label,
        options: &prepared.options,
        by_timestamp: false,
        batch_partitions: usize::MAX,
        mirror: Some(&mirror),
    };
    let source = GroupSource::memory(groups, &Default::default());
    let planned = planning.plan(&source).await?;
    crate::progress::finish();
    let targets = Targets {
        moved: Vec::new(),
        source,
        connectors: Vec::new(),
        ledger: planned.ledger,
        connect_by_name: planned.connect_by_name,
        undo_format: Default::default(),
        mirror: Some(mirror),
    };
    req.connectors = Vec::new();
    req.relative_targets = false;
    req.allow_other_cluster = true;
    req.mirror = options;
    req.undo_tags.insert("rehearsal".into(), "true".into());
    Ok(Rehearsal {
        label,
        targets,
        req,
    })
}
