//! `offset-vault reset`: kafka-consumer-groups' `--reset-offsets` scenarios with restore's
//! safety around them: a plan (dry run) first; with `--execute`, connectors stopped, the plan
//! computed again and compared, a `pre-reset` snapshot, the commits, the read-back, the
//! connectors resumed. The flags are parsed here and the results printed; the decisions are
//! [`crate::commands::reset`]'s.

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use clap::Args;
use serde_json::json;

use super::output::print_json;
use super::restore::{json_on_failure, print_plan, Apply};
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::apply::{self, Execution};
use crate::commands::options::WhoArgs;
use crate::commands::reset::{self as command, Named, ResetFlags};
use crate::commands::restore::RunSettings;
use crate::config::parse_duration;
use crate::config::OutputFormat;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::KafkaClient;
use crate::restore::reset::{PreparedReset, ResetSpec};
use crate::restore::review::PlanFile;
use crate::restore::{OutOfRange, PlanOptions};
use crate::store::Store;

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
fn spec(args: &ResetArgs, now: chrono::DateTime<Utc>, connect_urls: usize) -> Result<ResetSpec> {
    let flags = ResetFlags {
        named: &named(&args.scenario),
        selection: args.who.to_selection(),
        topics: &args.topics,
        all_topics: args.all_topics,
        connect_urls,
    };
    command::spec(flags, now)
}

/// The plan options the flags give.
fn plan_flags(args: &ResetArgs) -> PlanOptions {
    PlanOptions {
        on_out_of_range: args.on_out_of_range,
        skip_missing: args.skip_missing,
        stop_connectors: args.stop_connectors,
        ..Default::default()
    }
}

/// How the execution runs.
fn run_settings(args: &ResetArgs) -> RunSettings {
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
    let from_plan = args.from_plan.as_deref();
    let approvals = args.require_approvals;
    apply::check_reviewed(reviewed.as_ref(), from_plan, &keys, approvals, facts)?;
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
    let base = command::base_options(plan_flags(args), reviewed.as_ref());
    let reviewed = reviewed.as_ref();
    let refuse_moved = args.refuse_moved;
    let prepared = command::plan(
        &kafka,
        &clients,
        &spec,
        &base,
        reviewed,
        refuse_moved,
        facts,
    )
    .await?;
    for w in &prepared.warnings {
        crate::alertln!("warning: {w}");
    }
    if let Some(path) = &args.plan_file {
        command::write_plan_file(path, &kafka, &spec, &prepared, &keys)?;
        crate::noteln!(
            "plan written to {}; apply exactly this reset with: offset-vault reset --from-plan {} --execute",
            path.display(),
            path.display()
        );
    }
    if let Some(value) = &args.mirror.rehearse_on {
        return rehearse(cli, args, &spec, &kafka, &prepared, value, facts, phase).await;
    }
    if !args.execute {
        return Ok(dry_run(cli.global.output, &spec, &prepared));
    }
    *phase = "execute";
    let store = store.expect("opened for --execute");
    execute(cli, args, &spec, &store, &kafka, &clients, &prepared, facts).await
}

/// Executes the planned reset and prints it.
#[allow(clippy::too_many_arguments)]
async fn execute(
    cli: &Cli,
    args: &ResetArgs,
    spec: &ResetSpec,
    store: &Store,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    prepared: &PreparedReset,
    facts: &mut Facts,
) -> Result<i32> {
    if cli.global.output == OutputFormat::Table {
        crate::outln!("{}", spec.label());
        print_plan(&prepared.plan, "reset");
    }
    let req = command::request(spec, prepared, run_settings(args));
    let run = Apply {
        run: Execution {
            store,
            kafka,
            clients,
            targets: &prepared.targets,
            req: &req,
            what: "reset",
        },
        watch: args.watch,
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
/// staging cluster and applied there; then the command for production.
#[allow(clippy::too_many_arguments)]
async fn rehearse(
    cli: &Cli,
    args: &ResetArgs,
    spec: &ResetSpec,
    production: &KafkaClient,
    prepared: &PreparedReset,
    value: &str,
    facts: &mut Facts,
    phase: &mut &'static str,
) -> Result<i32> {
    let staging = super::mirror::staging(&cli.global, value)?;
    facts
        .detail
        .insert("rehearsed_on".into(), json!(staging.name));
    let store = cli.global.open_store()?;
    let kafka = command::connect_staging(&staging, production, value).await?;
    for w in &prepared.warnings {
        crate::alertln!("warning: {w}");
    }
    if !prepared.targets.connectors.is_empty() {
        crate::alertln!(
            "warning: connectors are not rehearsed: only the groups' offsets are carried to {}",
            staging.name
        );
    }
    let req = command::request(spec, prepared, run_settings(args));
    let options = args.mirror.options();
    let rehearsal =
        command::rehearse(production, &kafka, &staging, spec, prepared, options, req).await?;
    *phase = "execute";
    let label = &rehearsal.label;
    if cli.global.output == OutputFormat::Table {
        crate::outln!("{label} on {}", staging.name);
        super::restore::print_ledger(&rehearsal.targets.ledger, "reset")?;
    }
    let run = Apply {
        run: Execution {
            store: &store,
            kafka: &kafka,
            clients: &staging.clients,
            targets: &rehearsal.targets,
            req: &rehearsal.req,
            what: "reset",
        },
        watch: args.watch,
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

/// Prints the plan of a dry run; returns its exit code.
fn dry_run(output: OutputFormat, spec: &ResetSpec, prepared: &PreparedReset) -> i32 {
    let plan = &prepared.plan;
    match output {
        OutputFormat::Json => print_json(&json!({
            "status": "dry-run",
            "exit_code": apply::plan_code(plan),
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
    apply::plan_code(plan)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;
    use crate::restore::targets::{Scenario, Scope};

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
