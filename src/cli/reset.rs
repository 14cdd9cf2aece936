//! `offset-vault reset`: kafka-consumer-groups' `--reset-offsets` scenarios with restore's
//! safety around them: a plan (dry run) first; with `--execute`, connectors stopped, the plan
//! computed again and compared, a `pre-reset` snapshot, the commits, the read-back, the
//! connectors resumed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use clap::Args;
use serde_json::{json, Value};

use super::output::print_json;
use super::restore::{json_on_failure, plan_code, print_plan, Apply};
use super::{parse_duration, Cli, OutputFormat, WhoArgs};
use crate::audit::{EventType, Facts};
use crate::error::{Error, Result};
use crate::format::csv as csv_form;
use crate::kafka::KafkaClient;
use crate::restore::reset::{self, PreparedReset, ResetSpec};
use crate::restore::review::{self, PlanBody, PlanFile, PlanRequest};
use crate::restore::targets::{parse_datetime, parse_iso_duration, parse_topic, Scenario, Scope};
use crate::restore::{Choice, Eligible, OutOfRange, PlanOptions, RestoreRequest};
use crate::snapshot::SnapshotKind;

pub(super) const EXAMPLES: &str = "\
Examples:
  # Reprocess: a sink connector from the first record it can still read (a dry run: the plan)
  offset-vault reset --connector orders-sink --all-topics --to-earliest

  # ... and do it: stop it, snapshot, reset, read back, resume it
  offset-vault reset --connector orders-sink --all-topics --to-earliest --stop-connectors --execute

  # Skip a record a sink task keeps failing on (one partition)
  offset-vault reset --connector orders-sink --topic orders:3 --shift-by 1 --stop-connectors --execute

  # Roll a consumer group back to a time (first record at or after it)
  offset-vault reset --group billing --topic invoices --to-datetime 2026-12-01T10:00:00.000Z --execute

  # A source connector starts again from the beginning of its source (DELETE .../offsets)
  offset-vault reset --connector files-source --to-earliest --stop-connectors --execute

  # Rehearse a reset on staging: targets computed on production (only read), carried to
  # staging's copies of the topics and applied there; prints the command for production
  offset-vault -b prod:9092 reset --group billing --topic invoices --to-datetime 2026-12-01T10:00:00Z \\
      --rehearse-on staging --replication-policy default:prod

The scenarios are kafka-consumer-groups --reset-offsets' (same names and value formats), but a
target outside the log is refused (exit 7) unless --on-out-of-range clamp. --to-datetime means the
first record whose timestamp is at or after TIME; it is not the committed position at TIME (that
is what offset-vault restore --at TIME puts back, from the commit-log archive of follow). Before the first change a
snapshot of kind pre-reset is written; its id is printed, and restoring it undoes the reset.";

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
    pub mirror: super::mirror::MirrorArgs,
}

/// The scenario the flags name, checked before any I/O; `--by-duration` is counted back from
/// `now`. Also the source-connector offsets of a JSON `--from-file`.
fn scenario(
    args: &ScenarioArgs,
    groups: &[String],
    now: chrono::DateTime<Utc>,
) -> Result<(Scenario, Option<Vec<Value>>)> {
    let mut given: Vec<(Scenario, Option<Vec<Value>>)> = Vec::new();
    let mut push = |s: Scenario| given.push((s, None));
    if args.to_earliest {
        push(Scenario::ToEarliest);
    }
    if args.to_latest {
        push(Scenario::ToLatest);
    }
    if args.to_current {
        push(Scenario::ToCurrent);
    }
    if let Some(n) = args.to_offset {
        push(Scenario::ToOffset(n));
    }
    if let Some(n) = args.shift_by {
        push(Scenario::ShiftBy(n));
    }
    if let Some(t) = &args.to_datetime {
        push(Scenario::ToDatetime(parse_datetime(t)?));
    }
    if let Some(d) = &args.by_duration {
        push(Scenario::ToDatetime(now - parse_iso_duration(d)?));
    }
    if let Some(path) = &args.from_file {
        given.push(read_file(path, groups)?);
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
fn read_file(path: &PathBuf, groups: &[String]) -> Result<(Scenario, Option<Vec<Value>>)> {
    let bytes = std::fs::read(path).map_err(|source| Error::ReadFile {
        path: path.clone(),
        source,
    })?;
    let name = path.display().to_string();
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'[')) {
        let doc: Value = serde_json::from_slice(&bytes).map_err(|e| {
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
        return Ok((Scenario::FromFile(BTreeMap::new()), Some(list)));
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

/// The reset the flags ask for, checked before any I/O.
fn spec(args: &ResetArgs, now: chrono::DateTime<Utc>, connect_urls: usize) -> Result<ResetSpec> {
    let (scenario, source_offsets) = scenario(&args.scenario, &args.who.groups, now)?;
    let mut selection = args.who.to_selection();
    if let Scenario::FromFile(rows) = &scenario {
        if selection.is_empty() {
            // A several-groups file names its groups.
            selection.groups = rows.keys().cloned().collect();
        }
    }
    let file = matches!(scenario, Scenario::FromFile(_));
    let scope = match (file, args.all_topics, args.topics.is_empty()) {
        (true, false, true) => Scope::File,
        (true, _, _) => {
            return Err(Error::usage(
                "--from-file names its partitions: leave out --topic and --all-topics",
            ))
        }
        (false, true, _) => Scope::AllTopics,
        (false, false, false) => Scope::Topics(
            args.topics
                .iter()
                .map(|t| parse_topic(t))
                .collect::<Result<_>>()?,
        ),
        (false, false, true) if !args.who.connectors.is_empty() || args.who.all_connectors => {
            // Connectors only: their sink groups' every committed partition, as a source
            // connector has no topics to name.
            if args.who.groups.is_empty()
                && args.who.group_pattern.is_none()
                && !args.who.all_groups
            {
                Scope::AllTopics
            } else {
                return Err(scope_missing());
            }
        }
        (false, false, true) => return Err(scope_missing()),
    };
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
    crate::snapshot::capture::validate(&selection, connect_urls)?;
    Ok(ResetSpec {
        selection,
        scope,
        scenario,
        source_offsets,
    })
}

fn scope_missing() -> Error {
    Error::usage(
        "say which partitions: --all-topics (every partition each group has a committed offset for) or --topic TOPIC[:P,...] (repeatable)",
    )
}

/// The user's plan options, from the flags or the reviewed plan file.
fn base_options(args: &ResetArgs, reviewed: Option<&PlanFile>) -> PlanOptions {
    match reviewed {
        Some(f) => PlanOptions {
            on_out_of_range: f.body.request.on_out_of_range,
            skip_missing: f.body.request.skip_missing,
            stop_connectors: f.body.request.stop_connectors,
            ..Default::default()
        },
        None => PlanOptions {
            on_out_of_range: args.on_out_of_range,
            skip_missing: args.skip_missing,
            stop_connectors: args.stop_connectors,
            ..Default::default()
        },
    }
}

/// What execute is asked to do: restore's request, with a pre-reset snapshot as the undo point.
fn request(args: &ResetArgs, spec: &ResetSpec, prepared: &PreparedReset) -> RestoreRequest {
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
        undo: !args.no_undo,
        wait_timeout: args.wait_timeout,
        settle: args.settle,
        commit_concurrency: args.commit_concurrency.into(),
        // A reset computes its targets from the live state in one pass: one batch.
        batch_partitions: usize::MAX,
        reviewed_groups: None,
        reviewed: None,
        connector_config: BTreeMap::new(),
        undo_kind: SnapshotKind::PreReset,
        undo_tags: [("reset".to_string(), spec.scenario.describe())].into(),
        relative_targets: spec.scenario.is_relative(),
        refuse_moved: args.refuse_moved,
        identities: None,
    }
}

/// Runs `reset`. With `--output json`, every outcome, failures before the apply included, is
/// one JSON document on stdout.
pub async fn cmd_reset(cli: &Cli, args: &ResetArgs) -> Result<i32> {
    let mut phase = "validate";
    // Bad input is refused before the trail is opened: it changes nothing and records nothing.
    let checked = match &args.from_plan {
        Some(p) => PlanFile::read(p, true).map(|_| ()),
        None => cli
            .global
            .connect_clients()
            .and_then(|c| spec(args, Utc::now(), c.len()).map(|_| ())),
    };
    if let Err(e) = checked {
        return json_on_failure(cli, phase, Err(e));
    }
    let trail = match super::audit::begin(cli, EventType::Reset, args.execute, true).await {
        Ok(t) => t,
        Err(e) => return json_on_failure(cli, phase, Err(e)),
    };
    let mut facts = Facts::default();
    let result = run(cli, args, &mut phase, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    json_on_failure(cli, phase, result)
}

async fn run(
    cli: &Cli,
    args: &ResetArgs,
    phase: &mut &'static str,
    facts: &mut Facts,
) -> Result<i32> {
    let reviewed = args
        .from_plan
        .as_deref()
        .map(|p| PlanFile::read(p, true))
        .transpose()?;
    let keys = cli.global.keys()?;
    super::sign::check_plan(
        reviewed.as_ref(),
        args.from_plan.as_deref(),
        &keys,
        args.require_approvals,
        facts,
    )?;
    facts.subject = facts.plan_sha256.clone();
    if !args.mirror.options().is_empty() && args.mirror.rehearse_on.is_none() {
        return Err(Error::usage(
            "--topic-map, --replication-policy and --translate carry a reset's targets to a staging cluster: add --rehearse-on STAGING (a reset's targets are computed on the cluster itself)",
        ));
    }
    args.mirror.options().check()?;
    let spec = match &reviewed {
        Some(f) => f.body.reset.clone().expect("checked by read_plan_file"),
        None => spec(args, Utc::now(), cli.global.connect_clients()?.len())?,
    };
    let settings = cli.global.kafka_settings()?;
    let clients = cli.global.connect_clients()?;
    // Only an executed reset writes (its pre-reset snapshot); a local store is created as
    // `snapshot` creates it.
    let store = args.execute.then(|| cli.global.open_store()).transpose()?;
    *phase = "plan";
    let kafka = KafkaClient::connect(settings).await?;
    if let Some(f) = &reviewed {
        same_cluster(f, &kafka)?;
    }
    crate::progress::stage("planning the reset", 0);
    let base = base_options(args, reviewed.as_ref());
    let mut prepared = reset::prepare(&kafka, &clients, &spec, &base).await?;
    facts.groups = prepared.plan.group_changes();
    facts
        .detail
        .insert("scenario".into(), json!(spec.scenario.describe()));
    crate::progress::finish();
    if let Some(f) = &reviewed {
        prepared.targets.moved = as_reviewed(f, &spec, &prepared, args.refuse_moved)?;
    }
    for w in &prepared.warnings {
        crate::alertln!("warning: {w}");
    }
    if let Some(path) = &args.plan_file {
        write_plan_file(path, &kafka, &spec, &prepared, &keys)?;
    }
    if let Some(value) = &args.mirror.rehearse_on {
        return rehearse(cli, args, &spec, &kafka, prepared, value, facts, phase).await;
    }
    let plan = &prepared.plan;
    if !args.execute {
        return Ok(dry_run(cli.global.output, &spec, &prepared));
    }

    *phase = "execute";
    if cli.global.output == OutputFormat::Table {
        crate::outln!("{}", spec.label());
        print_plan(plan, "reset");
    }
    let req = request(args, &spec, &prepared);
    let store = store.expect("opened for --execute");
    let run = Apply {
        store: &store,
        kafka: &kafka,
        clients: &clients,
        targets: &prepared.targets,
        req: &req,
        watch: args.watch,
        what: "reset",
        output: cli.global.output,
    };
    run.go(facts, |outcome| {
        vec![
            ("reset", json!(spec.label())),
            ("scenario", json!(spec.scenario.describe())),
            ("pre_reset_snapshot", json!(outcome.undo_snapshot)),
            ("warnings", json!(prepared.warnings)),
            ("verified", json!(outcome.verified())),
        ]
    })
    .await
}

/// `--rehearse-on`: the reset's targets, computed on production (only read), carried to the
/// staging cluster (topics mapped, offsets translated by the records before them) and applied
/// there; then the command for production.
#[allow(clippy::too_many_arguments)]
async fn rehearse(
    cli: &Cli,
    args: &ResetArgs,
    spec: &ResetSpec,
    production: &KafkaClient,
    prepared: PreparedReset,
    value: &str,
    facts: &mut Facts,
    phase: &mut &'static str,
) -> Result<i32> {
    let staging = super::mirror::staging(&cli.global, value)?;
    facts
        .detail
        .insert("rehearsed_on".into(), json!(staging.name));
    let store = cli.global.open_store()?;
    let kafka = KafkaClient::connect(staging.settings.clone()).await?;
    if kafka.cluster_id() == production.cluster_id() {
        return Err(Error::usage(format!(
            "--rehearse-on {value} reaches cluster {}, the production cluster itself: give the staging cluster",
            kafka.cluster_id()
        )));
    }
    for w in &prepared.warnings {
        crate::alertln!("warning: {w}");
    }
    if !prepared.targets.connectors.is_empty() {
        crate::alertln!(
            "warning: connectors are not rehearsed: only the groups' offsets are carried to {}",
            staging.name
        );
    }
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
    let options = args.mirror.options();
    let mirror = std::sync::Arc::new(options.mirror(true, false)?.ok_or_else(|| {
        Error::Internal("a rehearsal always carries offsets to another cluster".into())
    })?);
    crate::progress::stage("planning the rehearsal", 0);
    let label = format!("{} (rehearsal)", spec.label());
    let planning = crate::restore::ledger::Planning {
        kafka: &kafka,
        clients: &staging.clients,
        connectors: &[],
        snapshot_id: &label,
        options: &prepared.options,
        by_timestamp: false,
        batch_partitions: usize::MAX,
        mirror: Some(&mirror),
    };
    let source = crate::restore::ledger::GroupSource::memory(groups, &Default::default());
    let planned = planning.plan(&source).await?;
    crate::progress::finish();
    let targets = crate::restore::Targets {
        moved: Vec::new(),
        source,
        connectors: Vec::new(),
        ledger: planned.ledger,
        connect_by_name: planned.connect_by_name,
        undo_format: Default::default(),
        mirror: Some(mirror),
    };
    let mut req = request(args, spec, &prepared);
    req.connectors = Vec::new();
    req.relative_targets = false;
    req.allow_other_cluster = true;
    req.mirror = options;
    req.undo_tags.insert("rehearsal".into(), "true".into());
    *phase = "execute";
    if cli.global.output == OutputFormat::Table {
        crate::outln!("{label} on {}", staging.name);
        super::restore::print_ledger(&targets.ledger, "reset")?;
    }
    let run = Apply {
        store: &store,
        kafka: &kafka,
        clients: &staging.clients,
        targets: &targets,
        req: &req,
        watch: args.watch,
        what: "reset",
        output: cli.global.output,
    };
    let code = run
        .go(facts, |outcome| {
            vec![
                ("reset", json!(label)),
                ("scenario", json!(spec.scenario.describe())),
                ("pre_reset_snapshot", json!(outcome.undo_snapshot)),
                ("warnings", json!(prepared.warnings)),
                ("verified", json!(outcome.verified())),
                (
                    "rehearsal",
                    super::mirror::rehearsal_json(&staging, &kafka, None),
                ),
            ]
        })
        .await?;
    super::mirror::print_rehearsal(cli.global.output, &staging, &kafka, code, None);
    Ok(code)
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

/// Prints the plan of a dry run; returns its exit code.
fn dry_run(output: OutputFormat, spec: &ResetSpec, prepared: &PreparedReset) -> i32 {
    let plan = &prepared.plan;
    match output {
        OutputFormat::Json => print_json(&json!({
            "status": "dry-run",
            "exit_code": plan_code(plan),
            "reset": spec.label(),
            "scenario": spec.scenario.describe(),
            "executed": false,
            "warnings": prepared.warnings,
            "moved": prepared.targets.moved,
            "plan": plan,
        })),
        OutputFormat::Table => {
            crate::outln!("{}", spec.label());
            print_plan(plan, "reset");
            crate::noteln!("dry run: nothing was changed; add --execute to apply this plan");
        }
    }
    plan_code(plan)
}

fn write_plan_file(
    path: &std::path::Path,
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
    file.write(path, keys)?;
    crate::noteln!(
        "plan written to {}; apply exactly this reset with: offset-vault reset --from-plan {} --execute",
        path.display(),
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;

    fn parse(line: &str) -> Result<ResetSpec> {
        let words = shell_split(line);
        let cli = Cli::try_parse_from(std::iter::once("offset-vault".to_string()).chain(words))
            .map_err(|e| Error::usage(e.to_string()))?;
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-03T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        match cli.command {
            Command::Reset(a) => spec(&a, now, 1),
            other => panic!("{other:?}"),
        }
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
