//! `offset-vault restore`: the flags checked into a request, the library's plan (a dry run) or
//! execution ([`crate::commands::restore`], [`crate::commands::apply`]), and what happened,
//! printed.

use std::time::Duration;

use comfy_table::{Cell, Color};
use serde_json::json;

use super::output::{print_json, print_json_spliced, right, table};
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::apply::{self, Execution};
use crate::commands::restore::RestoreArgs;
use crate::commands::restore::{self as command, Place, Planned};
use crate::commands::staging::Staging;
use crate::config::OutputFormat;
use crate::error::{Error, Result};
use crate::format::spliced::{Emit, Splice};
use crate::restore::ledger::Ledger;
use crate::restore::plan::{Action, Plan};
use crate::restore::watch;
use crate::restore::{self, Outcome, RestoreRequest, Status};
use crate::snapshot::SnapshotKind;

/// Runs a restore. With `--output json`, every outcome, failures before the apply included,
/// is one JSON document on stdout.
pub async fn cmd_restore(cli: &Cli, args: &RestoreArgs) -> Result<i32> {
    let mut phase = "validate";
    // Bad input is refused before the trail is opened: it changes nothing and records nothing.
    // A plan file is read (and its checksum checked) once, here.
    let req =
        match command::read_plan_file(args).and_then(|reviewed| command::request(args, reviewed)) {
            Ok(req) => req,
            Err(e) => return json_on_failure(cli, phase, Err(e)),
        };
    let trail = match super::audit::begin(cli, EventType::Restore, args.execute, false).await {
        Ok(t) => t,
        Err(e) => return json_on_failure(cli, phase, Err(e)),
    };
    let mut facts = Facts::default();
    let result = run(cli, args, req, &mut phase, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    json_on_failure(cli, phase, result)
}

fn print_watch(report: &watch::WatchReport) {
    crate::outln!(
        "watched {:.0} s ({} read(s)): {}",
        report.duration_s,
        report.polls,
        report.verdict
    );
    for c in &report.connectors {
        let state = c.state.as_ref().map(|s| s.name().to_string());
        crate::outln!(
            "  connector {}: {}",
            c.name,
            state.as_deref().unwrap_or("unknown")
        );
        for t in &c.tasks {
            crate::outln!("    task {}: {}", t.id, t.state.name());
            for line in t
                .trace
                .iter()
                .flat_map(|tr| tr.lines.iter().chain(&tr.caused_by))
            {
                crate::outln!("      {line}");
            }
        }
    }
    for g in &report.groups {
        crate::outln!(
            "  group {}: {} of {} partition(s) moved forward, {} record(s) consumed, lag {}",
            g.group_id,
            g.moved_forward,
            g.partitions,
            g.consumed,
            g.lag
                .map(|l| l.to_string())
                .unwrap_or_else(|| "unknown".into())
        );
    }
    for p in &report.problems {
        crate::outln!("  ! {p}");
    }
}

/// With `--output json`, an error before the apply is still one JSON document on stdout.
pub(super) fn json_on_failure(cli: &Cli, phase: &str, result: Result<i32>) -> Result<i32> {
    match result {
        Err(e) if cli.global.output == OutputFormat::Json => {
            crate::alertln!("error: {e}");
            print_json(&json!({
                "status": "not-applied",
                "phase": phase,
                "exit_code": e.exit_code(),
                "errors": [{"exit_code": e.exit_code(), "message": e.to_string()}],
            }));
            Ok(e.exit_code())
        }
        other => other,
    }
}

async fn run(
    cli: &Cli,
    args: &RestoreArgs,
    req: RestoreRequest,
    phase: &mut &'static str,
    facts: &mut Facts,
) -> Result<i32> {
    // Validate everything that needs no I/O, then the store, then the snapshot, and only then
    // the cluster.
    let keys = cli.global.keys()?;
    let from_plan = args.from_plan.as_deref();
    let approvals = args.require_approvals;
    apply::check_reviewed(req.reviewed.as_ref(), from_plan, &keys, approvals, facts)?;
    let rehearse_on = args.mirror.rehearse_on.as_deref();
    let (staging, settings, clients) = crate::commands::staging::target(&cli.global, rehearse_on)?;
    if let Some(s) = &staging {
        facts.detail.insert("rehearsed_on".into(), json!(s.name));
    }
    let store = cli.global.open_existing_store()?;
    let place = Place {
        store: &store,
        settings,
        clients: &clients,
        rehearsal: staging.is_some(),
    };
    let planned = command::plan(place, &req, args.at.is_some(), phase, facts).await?;
    if let Some(path) = &args.plan_file {
        planned.write_plan_file(path, &req, &keys)?;
        crate::noteln!(
            "plan written to {}; apply exactly this plan with: offset-vault restore --from-plan {} --execute",
            path.display(),
            path.display()
        );
    }
    crate::progress::finish();
    if !args.execute && staging.is_none() {
        return dry_run(cli.global.output, &planned.prepared);
    }
    *phase = "execute";
    let run = Execution {
        store: &store,
        kafka: &planned.kafka,
        clients: &clients,
        targets: &planned.prepared.targets,
        req: &req,
        what: "restore",
    };
    execute(cli, args, run, &planned, staging.as_ref(), facts).await
}

/// Executes the planned restore (on the staging cluster, for a rehearsal) and prints it.
async fn execute(
    cli: &Cli,
    args: &RestoreArgs,
    run: Execution<'_>,
    planned: &Planned,
    staging: Option<&Staging>,
    facts: &mut Facts,
) -> Result<i32> {
    let (kafka, prepared) = (&planned.kafka, &planned.prepared);
    if cli.global.output == OutputFormat::Table {
        print_ledger(&prepared.targets.ledger, "restore")?;
    }
    let id = prepared.manifest.meta.id.as_str();
    let apply = Apply {
        run,
        watch: args.watch,
        output: cli.global.output,
    };
    let code = apply
        .go(facts, |outcome| {
            let mut fields = vec![
                ("snapshot", json!(id)),
                ("chosen_because", json!(prepared.chosen_because)),
                ("verified", json!(outcome.verified())),
            ];
            if let Some(s) = staging {
                let rehearsal = super::mirror::rehearsal_json(s, kafka, Some(id));
                fields.push(("rehearsal", rehearsal));
            }
            fields
        })
        .await?;
    if let Some(s) = staging {
        super::mirror::print_rehearsal(cli.global.output, s, kafka, code, Some(id));
    }
    Ok(code)
}

/// Prints the plan of a dry run; returns its exit code.
fn dry_run(output: OutputFormat, prepared: &restore::Prepared) -> Result<i32> {
    let ledger = &prepared.targets.ledger;
    let plan = &ledger.head;
    match output {
        OutputFormat::Json => {
            let doc = json!({
                "status": "dry-run",
                "exit_code": apply::plan_code(plan),
                "snapshot": prepared.manifest.meta.id,
                "kind": prepared.manifest.meta.kind,
                "chosen_because": prepared.chosen_because,
                "executed": false,
                "moved": prepared.targets.moved,
                "plan": plan,
            });
            print_json_spliced(
                &doc,
                &mut [Splice {
                    path: &["plan", "groups"],
                    write: &mut |emit| emit_groups(ledger, emit),
                }],
            )?;
        }
        OutputFormat::Table => {
            print_ledger(ledger, "restore")?;
            crate::noteln!("dry run: nothing was changed; add --execute to apply this plan");
        }
    }
    Ok(apply::plan_code(plan))
}

/// Hands every group of the plan to `emit`, batch by batch.
pub(super) fn emit_groups(ledger: &Ledger, emit: &mut Emit<'_>) -> Result<()> {
    for batch in ledger.batches()? {
        for g in batch?.groups {
            emit(&serde_json::to_value(&g).map_err(|e| Error::Internal(e.to_string()))?)?;
        }
    }
    Ok(())
}

/// Prints a plan held batch by batch: each batch's groups, then the totals once.
pub fn print_ledger(ledger: &Ledger, what: &str) -> Result<()> {
    let mut warnings = Vec::new();
    for batch in ledger.batches()? {
        let batch = batch?;
        print_plan_groups(&batch, what);
        warnings.extend(batch.groups.into_iter().flat_map(|g| g.warnings));
    }
    print_plan_tail(&ledger.head, what, &warnings);
    Ok(())
}

/// Executing a planned restore or reset, watching it (`--watch`), and reporting the outcome:
/// a table, or one JSON document with the fields the command adds.
pub(super) struct Apply<'a> {
    pub run: Execution<'a>,
    pub watch: Option<Duration>,
    pub output: OutputFormat,
}

impl Apply<'_> {
    pub(super) async fn go(
        &self,
        facts: &mut Facts,
        fields: impl FnOnce(&Outcome) -> Vec<(&'static str, serde_json::Value)>,
    ) -> Result<i32> {
        let notify = |line: &str| crate::alertln!("{line}");
        let outcome = self.run.execute(facts, &notify).await;
        let table = self.output == OutputFormat::Table;
        if table {
            print_outcome(&outcome, self.run.what, self.run.req.undo_kind);
        }
        let watched = match self.watch {
            Some(duration) => self.run.watch(&outcome, duration).await,
            None => None,
        };
        if let (true, Some(report)) = (table, &watched) {
            print_watch(report);
        }
        let code = apply::with_watch(outcome.exit_code(), watched.as_ref());
        if self.output == OutputFormat::Json {
            let mut doc =
                serde_json::to_value(&outcome).map_err(|e| Error::Internal(e.to_string()))?;
            if let Some(map) = doc.as_object_mut() {
                map.insert("exit_code".into(), json!(code));
                if let Some(w) = &watched {
                    map.insert("watch".into(), json!(w));
                }
                map.insert("executed".into(), json!(true));
                for (k, v) in fields(&outcome) {
                    map.insert(k.into(), v);
                }
            }
            print_outcome_json(&doc, &outcome)?;
        }
        for e in &outcome.errors {
            crate::alertln!("error: {}", e.message);
        }
        Ok(code)
    }
}

/// The JSON document of an outcome: its plan's groups and every partition read back are
/// written from their spools.
fn print_outcome_json(doc: &serde_json::Value, outcome: &Outcome) -> Result<()> {
    let mut groups = |emit: &mut Emit<'_>| match &outcome.ledger {
        Some(ledger) => emit_groups(ledger, emit),
        None => Ok(()),
    };
    let mut checks = |emit: &mut Emit<'_>| {
        let Some(all) = &outcome.all_checks else {
            for c in &outcome.checks {
                emit(&json!(c))?;
            }
            return Ok(());
        };
        for c in all.reader()? {
            emit(&json!(c?))?;
        }
        Ok(())
    };
    let mut splices = vec![Splice {
        path: &["checks"],
        write: &mut checks,
    }];
    if outcome.ledger.is_some() {
        splices.push(Splice {
            path: &["plan", "groups"],
            write: &mut groups,
        });
    }
    print_json_spliced(doc, &mut splices)
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// `: a, b, c` (all of them: an operator needs every name to check).
fn list(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(": {}", names.join(", "))
    }
}

fn action_cell(action: Action, what: &str) -> Cell {
    let text = match (action, what) {
        // A reset's targets come from its scope, not from a snapshot.
        (Action::NotInSnapshot, "reset") => "not-in-scope".to_string(),
        _ => serde_json::to_value(action)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
    };
    let cell = Cell::new(text);
    if action.fails() {
        cell.fg(Color::Red)
    } else {
        cell
    }
}

/// Prints a plan; `what` is the command (`restore`, or `reset`, whose targets are not a
/// snapshot's offsets but the ones its scenario asked for).
pub fn print_plan(plan: &Plan, what: &str) {
    print_plan_groups(plan, what);
    let warnings: Vec<String> = plan
        .groups
        .iter()
        .flat_map(|g| g.warnings.iter().cloned())
        .collect();
    print_plan_tail(plan, what, &warnings);
}

/// The table of a plan's groups and partitions.
fn print_plan_groups(plan: &Plan, what: &str) {
    let mut t = table(&[
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT",
        "TARGET",
        if what == "reset" {
            "REQUESTED"
        } else {
            "SNAPSHOT"
        },
        "LOG-START",
        "LOG-END",
        "REPROCESS",
        "SKIP",
        "ACTION",
        "NOTE",
    ]);
    for g in &plan.groups {
        for p in &g.partitions {
            let topic = match &p.source_topic {
                Some(source) => format!("{} <- {source}", p.topic),
                None => p.topic.clone(),
            };
            t.add_row(vec![
                Cell::new(&g.group_id),
                Cell::new(topic),
                Cell::new(p.partition),
                Cell::new(opt(p.current)),
                Cell::new(opt(p.target)),
                Cell::new(opt(p.snapshot_offset)),
                Cell::new(opt(p.log_start)),
                Cell::new(opt(p.log_end)),
                Cell::new(p.reprocess),
                Cell::new(p.skip),
                action_cell(p.action, what),
                Cell::new(partition_note(p)),
            ]);
        }
    }
    right(&mut t, &[2, 3, 4, 5, 6, 7, 8, 9]);
    crate::outln!("{t}");
}

/// A partition's note; onto another cluster, with the method that translated its offset and
/// MirrorMaker 2's checkpoint beside it.
fn partition_note(p: &crate::restore::plan::PartitionPlan) -> String {
    let note = p.note.clone().unwrap_or_default();
    let Some(t) = p
        .translation
        .as_ref()
        .filter(|t| t.method != crate::mirror::Used::None || !p.action.fails())
    else {
        return note;
    };
    let method = serde_json::to_value(t.method)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mut out = format!("[{method}] {note}");
    if let (Some(c), Some(r)) = (t.checkpoint, t.checkpoint_repeats) {
        if t.method != crate::mirror::Used::Checkpoints {
            out.push_str(&format!(
                "; MirrorMaker 2 checkpoint {c} ({} record(s) {})",
                r.abs(),
                if r >= 0 { "processed again" } else { "skipped" }
            ));
        }
    }
    out
}

/// The connectors, the totals, the problems and the groups' warnings of a plan.
fn print_plan_tail(plan: &Plan, what: &str, warnings: &[String]) {
    if !plan.connectors.is_empty() {
        let during = format!("DURING {}", what.to_uppercase());
        let mut c = table(&[
            "CONNECTOR",
            "TYPE",
            "STATE NOW",
            "OFFSETS VIA",
            during.as_str(),
            "CHANGES",
        ]);
        for conn in &plan.connectors {
            let changes = if conn.method == "rest" {
                let n = conn.offsets.iter().filter(|o| o.changes).count();
                format!("{n} of {} source partition(s)", conn.offsets.len())
            } else {
                format!("group {}", conn.group_id.clone().unwrap_or_default())
            };
            let via = match (conn.method.as_str(), conn.reset_all) {
                (_, true) => "DELETE /offsets",
                ("rest", false) | ("rest-sink", false) => "PATCH /offsets",
                _ => "Kafka commit",
            };
            c.add_row(vec![
                conn.name.clone(),
                conn.connector_type.clone(),
                conn.state.clone().unwrap_or_else(|| "missing".into()),
                via.into(),
                if conn.recreate {
                    "create again STOPPED, set offsets, resume".into()
                } else if conn.stop_and_resume {
                    format!(
                        "stop, then back to {}",
                        conn.state.clone().unwrap_or_default()
                    )
                } else {
                    "-".into()
                },
                changes,
            ]);
        }
        crate::outln!("{c}");
        for conn in &plan.connectors {
            for note in &conn.notes {
                crate::outln!("connector {}: {note}", conn.name);
            }
        }
    }
    let s = &plan.summary;
    crate::outln!(
        "{} group(s), {} partition(s): {} to change, {} record(s) to reprocess, {} to skip; {} failing, {} blocked; {} connector(s)",
        s.groups, s.partitions, s.changes, s.reprocess, s.skip, s.failing, s.blocked, s.connectors
    );
    for p in &plan.problems {
        crate::outln!("  ! {p}");
    }
    for w in warnings {
        crate::outln!("  note: {w}");
    }
}

/// The read-back table, 10,000 rows per table.
fn print_checks(outcome: &Outcome) -> Result<()> {
    let all: Box<dyn Iterator<Item = Result<restore::PartitionCheck>>> = match &outcome.all_checks {
        Some(spool) => Box::new(spool.reader()?),
        None => Box::new(outcome.checks.iter().cloned().map(Ok)),
    };
    let new_table = || {
        table(&[
            "GROUP",
            "TOPIC",
            "PARTITION",
            "TARGET",
            "READ BACK",
            "RESULT",
        ])
    };
    let mut t = new_table();
    let mut rows = 0;
    let flush = |t: &mut comfy_table::Table| {
        right(t, &[2, 3, 4]);
        crate::outln!("{t}");
    };
    for c in all {
        let c = c?;
        t.add_row(vec![
            Cell::new(&c.group_id),
            Cell::new(&c.topic),
            Cell::new(c.partition),
            Cell::new(c.target),
            Cell::new(opt(c.actual)),
            if c.ok {
                Cell::new("ok")
            } else {
                Cell::new("DIFFERS").fg(Color::Red)
            },
        ]);
        rows += 1;
        if rows % 10_000 == 0 {
            flush(&mut t);
            t = new_table();
        }
    }
    if rows % 10_000 != 0 {
        flush(&mut t);
    }
    Ok(())
}

/// Prints what an executed restore (or reset: `what`, with its undo point of kind `kind`) did.
fn print_outcome(outcome: &Outcome, what: &str, kind: SnapshotKind) {
    if outcome.status == Status::NothingToChange {
        crate::outln!(
            "nothing to change: every offset already equals its target; nothing was done (no {kind} snapshot)"
        );
        return;
    }
    if let (Some(id), Some(cmd)) = (&outcome.undo_snapshot, &outcome.undo_command) {
        crate::outln!("{kind} snapshot {id}; to undo this {what}:");
        crate::outln!("  {cmd}");
    }
    if outcome.status == Status::PartiallyApplied {
        print_partial(outcome);
    }
    for m in &outcome.moved {
        crate::outln!(
            "  moved since review: {} {}[{}] {} -> {} (target unchanged)",
            m.group_id,
            m.topic,
            m.partition,
            opt(m.reviewed),
            opt(m.now)
        );
    }
    if let Err(e) = print_checks(outcome) {
        crate::alertln!("the read-back could not be printed: {e}");
    }
    for m in &outcome.connector_mismatches {
        crate::outln!("  ! {m}");
    }
    for d in &outcome.drift {
        crate::outln!(
            "  ! {} {}[{}] moved to {} after it was read back as {}",
            d.group_id,
            d.topic,
            d.partition,
            opt(d.after_settle),
            d.target
        );
    }
    if !outcome.drift.is_empty() {
        crate::outln!(
            "  something still commits for these groups although they have no members: typically a consumer that uses assign() instead of subscribe(), or a tool committing offsets; stop it, then restore again"
        );
    }
    print_connectors(outcome);
}

/// What became of each connector the restore stopped or created again.
fn print_connectors(outcome: &Outcome) {
    for c in &outcome.connectors {
        if let Some(note) = &c.note {
            crate::outln!(
                "connector {}: {note}; resume it with:\n  {}",
                c.name,
                c.resume_command.clone().unwrap_or_default()
            );
            continue;
        }
        match &c.resume_error {
            None if c.recreated => crate::outln!(
                "connector {}: created again from the snapshot, offsets set, RUNNING",
                c.name
            ),
            None => crate::outln!("connector {}: back to {}", c.name, c.state_before),
            Some(e) => crate::outln!(
                "connector {}: NOT returned to {} ({e}); it is left stopped; return it with:\n  {}",
                c.name,
                c.state_before,
                c.resume_command.clone().unwrap_or_default()
            ),
        }
    }
}

/// Which groups a restore that stopped partway changed, may have changed, or left alone.
fn print_partial(outcome: &Outcome) {
    crate::outln!(
        "changed (commit acknowledged): {} group(s){}",
        outcome.changed_groups.len(),
        list(&outcome.changed_groups)
    );
    if !outcome.unconfirmed_groups.is_empty() {
        crate::outln!(
            "no answer to the commit (may have changed): {} group(s){}",
            outcome.unconfirmed_groups.len(),
            list(&outcome.unconfirmed_groups)
        );
    }
    if outcome.groups_not_attempted > 0 {
        crate::outln!(
            "not attempted (unchanged): {} group(s)",
            outcome.groups_not_attempted
        );
    }
}
