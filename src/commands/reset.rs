//! `reset` as library calls: the scenario and scope named on the command line checked into a
//! [`ResetSpec`] (before any I/O), the reset planned against the cluster (or planned again from
//! a reviewed plan file and compared), the plan file written, and `--rehearse-on`'s targets
//! carried to a staging cluster. [`super::apply`] executes the plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::options::WhoArgs;
use super::restore::RunSettings;
use super::staging::Staging;
use crate::audit::Facts;
use crate::config::parse_duration;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::format::csv as csv_form;
use crate::kafka::KafkaClient;
use crate::mirror::MirrorOptions;
use crate::restore::ledger::{GroupSource, Planning};
use crate::restore::reset::{self, PreparedReset, ResetSpec};
use crate::restore::review::{self, PlanBody, PlanFile, PlanRequest};
use crate::restore::targets::{parse_datetime, parse_iso_duration, parse_topic, Scenario, Scope};
use crate::restore::OutOfRange;
use crate::restore::{Choice, Eligible, PlanOptions, RestoreRequest, Targets};
use crate::snapshot::model::Selection;
use crate::snapshot::SnapshotKind;
use clap::Args;
use std::time::Duration;

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

/// Where each partition goes: exactly one (kafka-consumer-groups' names).
#[derive(Debug, Args, Default)]
pub struct ScenarioArgs {
    /// To the log-start offset (the first record still in the log). A source connector: all its
    /// offsets are removed, so it starts again from the beginning of its source.
    #[arg(help_heading = "Scenario", long)]
    pub to_earliest: bool,
    /// To the log-end offset (skip everything not yet consumed).
    #[arg(help_heading = "Scenario", long)]
    pub to_latest: bool,
    /// To the committed offset (the log end where there is none).
    #[arg(help_heading = "Scenario", long)]
    pub to_current: bool,
    /// To this offset.
    #[arg(help_heading = "Scenario", long, value_name = "N")]
    pub to_offset: Option<i64>,
    /// By N records from the committed offset (negative: back, to reprocess; positive: skip).
    #[arg(
        help_heading = "Scenario",
        long,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub shift_by: Option<i64>,
    /// To the first record whose timestamp is at or after TIME: YYYY-MM-DDTHH:mm:SS.sss, with an
    /// optional zone (Z, +01:00; none: local time). Not the committed position at TIME.
    #[arg(help_heading = "Scenario", long, value_name = "TIME")]
    pub to_datetime: Option<String>,
    /// As --to-datetime, DURATION (ISO-8601 PnDTnHnMnS, e.g. PT1H) before now.
    #[arg(help_heading = "Scenario", long, value_name = "DURATION")]
    pub by_duration: Option<String>,
    /// To the offsets of a kafka-consumer-groups CSV file (topic,partition,offset with one
    /// --group, or group,topic,partition,offset); for one source connector, its own JSON
    /// partition/offset pairs as GET /connectors/NAME/offsets returns them.
    #[arg(help_heading = "Scenario", long, value_name = "FILE")]
    pub from_file: Option<PathBuf>,
}

/// Arguments of `reset`.
#[derive(Debug, Args)]
pub struct ResetArgs {
    #[command(flatten)]
    pub who: WhoArgs,
    /// A topic: all its partitions (TOPIC), or some (TOPIC:0,2); repeatable.
    #[arg(help_heading = "Scope", long = "topic", value_name = "TOPIC[:P,...]")]
    pub topics: Vec<String>,
    /// Every partition each group has a committed offset for.
    #[arg(help_heading = "Scope", long, conflicts_with = "topics")]
    pub all_topics: bool,
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Apply the plan. Without it, the plan is printed and nothing changes.
    #[arg(help_heading = "Safety", long)]
    pub execute: bool,
    /// What to do with a target outside the live [log-start, log-end] range (kafka-consumer-
    /// groups clamps without saying so; here that is a choice).
    #[arg(help_heading = "Safety", long, value_enum, default_value_t)]
    pub on_out_of_range: OutOfRange,
    /// Leave out partitions that do not exist (named with --topic T:P or in --from-file)
    /// instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub skip_missing: bool,
    /// Stop connectors whose offsets change (PUT /connectors/NAME/stop), and return them to
    /// their earlier state afterwards, also when the reset fails.
    #[arg(help_heading = "Safety", long)]
    pub stop_connectors: bool,
    /// Do not take the pre-reset snapshot before changing offsets.
    #[arg(help_heading = "Safety", long)]
    pub no_undo: bool,
    /// Also write the plan to FILE (versioned JSON with a checksum), to review and later apply
    /// with --from-plan FILE --execute.
    #[arg(help_heading = "Safety", long, value_name = "FILE")]
    pub plan_file: Option<PathBuf>,
    /// Apply the reset reviewed in FILE (written by --plan-file): it is planned again from the
    /// same request, and nothing is applied if a target differs.
    #[arg(help_heading = "Safety", long, value_name = "FILE", conflicts_with_all = ["groups", "group_pattern", "all_groups", "connectors", "all_connectors", "group_type", "topics", "all_topics", "to_earliest", "to_latest", "to_current", "to_offset", "shift_by", "to_datetime", "by_duration", "from_file", "on_out_of_range", "skip_missing", "stop_connectors", "plan_file", "topic_map", "replication_policy", "translate", "checkpoints_topic", "offset_syncs_topic", "rehearse_on"])]
    pub from_plan: Option<PathBuf>,
    /// With --from-plan: apply it only with N valid approvals (`offset-vault approve`) by
    /// trusted keys other than the plan author's; otherwise exit 17 and change nothing.
    #[arg(
        help_heading = "Safety",
        long,
        value_name = "N",
        requires = "from_plan",
        default_value_t = 0
    )]
    pub require_approvals: usize,
    /// With --from-plan: refuse (exit 11, nothing changed) when any committed offset moved since
    /// the plan was made, even where its target stays the same; the plan is applied only to the
    /// state that was reviewed.
    #[arg(help_heading = "Safety", long, requires = "from_plan")]
    pub refuse_moved: bool,
    /// Bound on waiting for a connector to stop and its group to empty.
    #[arg(help_heading = "Safety", long, default_value = "2m", value_parser = parse_duration)]
    pub wait_timeout: Duration,
    /// After the read-back, wait this long and read the offsets again to catch anything that
    /// still commits for the groups (0 turns it off).
    #[arg(help_heading = "Safety", long, default_value = "3s", value_parser = parse_duration)]
    pub settle: Duration,
    /// How many groups' offset commits are in flight at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub commit_concurrency: u16,
    /// After an executed reset, follow the connectors' and tasks' states, the groups' committed
    /// offsets and their lag for DURATION (e.g. 2m), and end with a verdict; a connector or task
    /// that fails meanwhile exits 16 (with the first lines of its trace).
    #[arg(help_heading = "Watch", long, value_name = "DURATION", value_parser = parse_duration, requires = "execute")]
    pub watch: Option<Duration>,
    /// Onto another cluster: only with --rehearse-on (a reset's targets are computed on the
    /// cluster itself, then carried to the staging cluster).
    #[command(flatten)]
    pub mirror: crate::commands::options::MirrorArgs,
}

/// The scenarios the flags name (exactly one must be).
fn named(args: &ScenarioArgs) -> Vec<Named> {
    let mut named = Vec::new();
    let flags = [
        (args.to_earliest, Named::ToEarliest),
        (args.to_latest, Named::ToLatest),
        (args.to_current, Named::ToCurrent),
    ];
    named.extend(flags.into_iter().filter(|(on, _)| *on).map(|(_, n)| n));
    named.extend(args.to_offset.map(Named::ToOffset));
    named.extend(args.shift_by.map(Named::ShiftBy));
    named.extend(args.to_datetime.clone().map(Named::ToDatetime));
    named.extend(args.by_duration.clone().map(Named::ByDuration));
    named.extend(args.from_file.clone().map(Named::FromFile));
    named
}

/// The reset the flags ask for, checked before any I/O; `--by-duration` is counted back from
/// `now`.
/// The spec, from the flags.
pub fn args_spec(
    args: &ResetArgs,
    now: chrono::DateTime<Utc>,
    connect_urls: usize,
) -> Result<ResetSpec> {
    let flags = ResetFlags {
        named: &named(&args.scenario),
        selection: args.who.to_selection(),
        topics: &args.topics,
        all_topics: args.all_topics,
        connect_urls,
    };
    spec(flags, now)
}

/// The plan options the flags give.
pub fn plan_flags(args: &ResetArgs) -> PlanOptions {
    PlanOptions {
        on_out_of_range: args.on_out_of_range,
        skip_missing: args.skip_missing,
        stop_connectors: args.stop_connectors,
        ..Default::default()
    }
}

/// How the execution runs.
pub fn run_settings(args: &ResetArgs) -> RunSettings {
    RunSettings {
        undo: !args.no_undo,
        wait_timeout: args.wait_timeout,
        settle: args.settle,
        commit_concurrency: args.commit_concurrency.into(),
        batch_partitions: usize::MAX,
        refuse_moved: args.refuse_moved,
        identities: None,
    }
}

/// `--topic-map`, `--replication-policy` and `--translate` only with `--rehearse-on`: a reset's
/// targets are computed on the cluster itself, then carried to the staging cluster.
pub fn check_mirror(args: &ResetArgs) -> Result<()> {
    if !args.mirror.options().is_empty() && args.mirror.rehearse_on.is_none() {
        return Err(Error::usage(
            "--topic-map, --replication-policy and --translate carry a reset's targets to a staging cluster: add --rehearse-on STAGING (a reset's targets are computed on the cluster itself)",
        ));
    }
    args.mirror.options().check()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::restore::targets::{Scenario, Scope};

    fn parse(line: &str) -> Result<ResetSpec> {
        let words = shell_split(line);
        #[derive(Parser)]
        enum Line {
            Reset(ResetArgs),
        }
        let Line::Reset(args) =
            Line::try_parse_from(std::iter::once("offset-vault".to_string()).chain(words))
                .map_err(|e| Error::usage(e.to_string()))?;
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-03T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        args_spec(&args, now, 1)
    }

    fn shell_split(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_become_a_reset_or_a_clear_refusal_before_any_io() {
        // (command line, Ok(label, scope) or the words of the refusal)
        type Want = std::result::Result<(&'static str, Scope), &'static str>;
        let cases: Vec<(&str, Want)> = vec![
            (
                "reset --group g --all-topics --to-earliest",
                Ok(("reset --to-earliest", Scope::AllTopics)),
            ),
            (
                "reset --group g --topic t:0,2 --shift-by -3",
                Ok((
                    "reset --shift-by -3",
                    Scope::Topics(vec![("t".into(), Some(vec![0, 2]))]),
                )),
            ),
            (
                "reset --group g --topic t --by-duration PT1H",
                Ok((
                    "reset --to-datetime 2026-12-03T11:00:00.000Z",
                    Scope::Topics(vec![("t".into(), None)]),
                )),
            ),
            (
                "reset --group g --topic t --to-datetime 2026-12-01T10:00:00.000+01:00",
                Ok((
                    "reset --to-datetime 2026-12-01T09:00:00.000Z",
                    Scope::Topics(vec![("t".into(), None)]),
                )),
            ),
            (
                "reset --connector c --to-latest",
                Ok(("reset --to-latest", Scope::AllTopics)),
            ),
            ("reset --group g --to-earliest", Err("say which partitions")),
            ("reset --group g --all-topics", Err("say where to reset to")),
            (
                "reset --group g --all-topics --to-earliest --to-latest",
                Err("2 scenarios given"),
            ),
            (
                "reset --group g --topic t --to-datetime yesterday",
                Err("YYYY-MM-DDTHH:mm:SS.sss"),
            ),
            (
                "reset --group g --topic t --by-duration 1h",
                Err("PnDTnHnMnS"),
            ),
            (
                "reset --group g --topic t:x --to-earliest",
                Err("not a partition number"),
            ),
            ("reset --all-topics --to-earliest", Err("nothing selected")),
            (
                "reset --group g --topic t --all-topics --to-earliest",
                Err("cannot be used with"),
            ),
        ];
        for (line, want) in cases {
            match (parse(line), want) {
                (Ok(s), Ok((label, scope))) => {
                    assert_eq!(s.label(), label, "{line}");
                    assert_eq!(s.scope, scope, "{line}");
                }
                (Err(e), Err(words)) => {
                    assert_eq!(e.exit_code(), crate::error::exit::USAGE, "{line}: {e}");
                    assert!(e.to_string().contains(words), "{line}: {e}");
                }
                (got, want) => panic!("{line}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn from_file_reads_csv_for_groups_and_json_for_one_source_connector() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let one = write("one.csv", "t,0,5\nt,1,7\n");
        let many = write("many.csv", "g1,t,0,5\ng2,t,1,7\n");
        let json = write(
            "src.json",
            r#"{"offsets":[{"partition":{"filename":"/x"},"offset":{"position":0}}]}"#,
        );
        let bad = write("bad.json", r#"{"offsets":[]}"#);

        let s = parse(&format!("reset --group g --from-file {one}")).unwrap();
        assert_eq!(s.scope, Scope::File);
        let Scenario::FromFile(rows) = &s.scenario else {
            panic!()
        };
        assert_eq!(rows["g"][&("t".to_string(), 1)], 7);

        let s = parse(&format!("reset --from-file {many}")).unwrap();
        assert_eq!(s.selection.groups, ["g1", "g2"]);

        let s = parse(&format!("reset --connector src --from-file {json}")).unwrap();
        assert_eq!(s.source_offsets.as_ref().map(Vec::len), Some(1));

        for (line, words) in [
            (format!("reset --from-file {one}"), "exactly one --group"),
            (
                format!("reset --group g --from-file {one} --all-topics"),
                "leave out --topic",
            ),
            (
                format!("reset --connector src --group g --from-file {json}"),
                "exactly one --connector",
            ),
            (
                format!("reset --connector src --from-file {bad}"),
                "non-empty list",
            ),
        ] {
            let e = parse(&line).unwrap_err();
            assert!(e.to_string().contains(words), "{line}: {e}");
        }
    }
}
