//! `offset-vault reset`: kafka-consumer-groups' `--reset-offsets` scenarios with restore's
//! safety around them: a plan (dry run) first; with `--execute`, connectors stopped, the plan
//! computed again and compared, a `pre-reset` snapshot, the commits, the read-back, the
//! connectors resumed. The flags are parsed here and the results printed; the decisions are
//! [`crate::commands::reset`]'s.

use chrono::Utc;
use serde_json::json;

use super::output::print_json;
use super::restore::{json_on_failure, print_plan, Apply};
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::apply::{self, Execution};
use crate::commands::reset::ResetArgs;
use crate::commands::reset::{self as command};
use crate::config::OutputFormat;
use crate::connect::ConnectClient;
use crate::error::Result;
use crate::kafka::KafkaClient;
use crate::restore::reset::{PreparedReset, ResetSpec};
use crate::restore::review::PlanFile;
use crate::store::Store;

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
            .and_then(|c| command::args_spec(args, Utc::now(), c.len()).map(|_| ())),
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
    command::check_mirror(args)?;
    let spec = match &reviewed {
        Some(f) => f.body.reset.clone().expect("checked by read_plan_file"),
        None => command::args_spec(args, Utc::now(), cli.global.connect_clients()?.len())?,
    };
    let settings = cli.global.kafka_settings()?;
    let clients = cli.global.connect_clients()?;
    // Only an executed reset writes (its pre-reset snapshot); a local store is created as
    // `snapshot` creates it.
    let store = args.execute.then(|| cli.global.open_store()).transpose()?;
    *phase = "plan";
    let kafka = KafkaClient::connect(settings).await?;
    let base = command::base_options(command::plan_flags(args), reviewed.as_ref());
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
    let req = command::request(spec, prepared, command::run_settings(args));
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
    let staging = crate::commands::staging::resolve(&cli.global, value)?;
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
    let req = command::request(spec, prepared, command::run_settings(args));
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
