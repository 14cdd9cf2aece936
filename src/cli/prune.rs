//! `offset-vault prune`: the plan (a dry run) or, with `--execute`, the deletions; with
//! `--keep-log`, of the commit-log archive too.

use chrono::Utc;
use serde_json::json;

use super::output::print_json;
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::prune as command;
use crate::commands::prune::PruneArgs;
use crate::config::OutputFormat;
use crate::error::Result;
use crate::retention::log::{LogPlan, OrphanAction};
use crate::retention::{self, LeftoverAction, PlannedGroup, PrunePlan};
use crate::serve::metrics::{one_shot_textfile, Outcome};

pub async fn run(cli: &Cli, args: &PruneArgs) -> Result<i32> {
    let started = std::time::Instant::now();
    // Bad input is refused before the trail is opened.
    command::options(&args.policy)?;
    let trail = super::audit::begin(cli, EventType::Prune, args.execute, false).await?;
    let mut facts = Facts::default();
    let result = execute_or_plan(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    let outcome = Outcome::of(&result);
    one_shot_textfile(
        args.metrics_textfile.as_deref(),
        "prune",
        outcome,
        started.elapsed(),
        |_| {},
    )?;
    result
}

async fn execute_or_plan(cli: &Cli, args: &PruneArgs, facts: &mut Facts) -> Result<i32> {
    let opts = command::options(&args.policy)?;
    let store = cli.global.open_existing_store()?;
    let prepared = retention::prepare(&store, &opts, Utc::now()).await?;
    let plan = &prepared.plan;
    if !args.execute {
        match cli.global.output {
            OutputFormat::Json => print_json(&json!({
                "store": store.url(),
                "executed": false,
                "plan": plan,
                "log": prepared.log,
                "connect_log": prepared.connect_log,
            })),
            OutputFormat::Table => {
                print_plan(plan);
                print_log_plans(&prepared);
                crate::noteln!(
                    "dry run: nothing was deleted; add --execute to delete what is marked remove"
                );
            }
        }
        return Ok(report_refused(plan, false));
    }
    if cli.global.output == OutputFormat::Table {
        print_plan(plan);
        print_log_plans(&prepared);
    }
    let pruned = retention::execute(&store, &prepared).await;
    command::audit_facts(facts, plan, &pruned);
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "store": store.url(),
            "executed": true,
            "plan": plan,
            "deleted": pruned.deleted,
            "failed": pruned.failed,
            "log": prepared.log,
            "log_deleted": pruned.log,
            "connect_log": prepared.connect_log,
            "connect_log_deleted": pruned.connect_log,
        })),
        OutputFormat::Table => print_pruned(&pruned, store.url()),
    }
    if let Some(e) = command::failure(&pruned, store.url()) {
        return Err(e);
    }
    Ok(report_refused(plan, true))
}

/// What an executed prune deleted, and what it could not.
fn print_pruned(pruned: &retention::Pruned, store: &str) {
    crate::outln!("deleted {} snapshot(s) from {store}", pruned.deleted.len());
    for f in &pruned.failed {
        crate::outln!("  ! {}: {}", f.id, f.error);
    }
    if let Some(l) = &pruned.log {
        crate::outln!(
            "deleted {} log segment(s), {} orphan data file(s), {} apply record(s)",
            l.segments.len(),
            l.orphans.len(),
            l.apply_records.len()
        );
    }
    if let Some(l) = &pruned.connect_log {
        crate::outln!(
            "deleted {} segment(s) and {} orphan data file(s) of Connect's offsets topic",
            l.segments.len(),
            l.orphans.len(),
        );
    }
    for f in pruned.log_failures() {
        crate::outln!("  ! {}: {}", f.id, f.error);
    }
}

/// Names each refused group on stderr; exit 15 if there is one.
fn report_refused(plan: &PrunePlan, executed: bool) -> i32 {
    for g in plan.refused() {
        let done = if executed {
            "none of its snapshots was deleted"
        } else {
            "none of its snapshots would be deleted"
        };
        crate::alertln!(
            "error: prune refused for group {}: {}; {done}",
            group_label(g),
            g.refused.as_deref().unwrap_or_default()
        );
    }
    command::refused_code(plan)
}

fn group_label(g: &PlannedGroup) -> String {
    if g.key.is_empty() {
        return "(all snapshots)".to_string();
    }
    g.key
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_plan(plan: &PrunePlan) {
    crate::outln!("policy: {}", plan.policy);
    for g in &plan.groups {
        if g.key.is_empty() {
            crate::outln!("\nall snapshots (no grouping)");
        } else {
            crate::outln!("\ngroup {}", group_label(g));
        }
        if g.refused.is_some() {
            crate::outln!("REFUSED: the policy keeps none of these; all are kept");
        }
        let mut t = super::output::table(&["ID", "CREATED (UTC)", "ACTION", "KEPT BY"]);
        for d in &g.decisions {
            let (action, why) = match (d.keep, &g.refused) {
                (true, _) => ("keep", d.reasons.join(", ")),
                (false, None) => ("remove", String::new()),
                (false, Some(_)) => ("keep", "refused: group would be empty".to_string()),
            };
            t.add_row(vec![
                d.id.clone(),
                d.time.format("%Y-%m-%d %H:%M:%S").to_string(),
                action.to_string(),
                why,
            ]);
        }
        crate::outln!("{t}");
    }
    if !plan.leftovers.is_empty() {
        crate::outln!("\nincomplete or unreadable");
        let mut t = super::output::table(&["ID", "ACTION", "WHY"]);
        for l in &plan.leftovers {
            t.add_row(vec![
                l.id.clone(),
                match l.action {
                    LeftoverAction::Remove => "remove",
                    LeftoverAction::KeepYoung => "keep",
                    LeftoverAction::LeaveAlone => "leave alone",
                }
                .to_string(),
                l.why.clone(),
            ]);
        }
        crate::outln!("{t}");
    }
    let s = &plan.summary;
    crate::outln!(
        "{} group(s): keep {}, remove {}; incomplete: remove {}, keep {} (grace period); {} unreadable left alone",
        s.groups, s.keep, s.remove, s.incomplete_remove, s.incomplete_keep, s.left_alone
    );
    if s.refused_groups > 0 {
        crate::outln!(
            "refused: {} group(s) of which the policy keeps nothing ({} snapshot(s) kept whole)",
            s.refused_groups,
            s.refused_snapshots
        );
    }
}

fn day(t: Option<chrono::DateTime<Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".to_string())
}

/// The archive's parts of the plan: the commit log's, and Connect's offsets topic's if any.
fn print_log_plans(prepared: &crate::retention::Prepared) {
    let Some(plan) = &prepared.log else {
        crate::outln!("\ncommit-log archive: not pruned (pass --keep-log DURATION to bound it)");
        return;
    };
    print_log_plan("commit-log archive", plan);
    if let Some(plan) = &prepared.connect_log {
        print_log_plan("archive of Connect's offsets topic", plan);
    }
}

/// One lane's part of the plan: the window, each segment removed, orphans, apply records.
fn print_log_plan(title: &str, plan: &LogPlan) {
    let w = &plan.window;
    crate::outln!(
        "\n{title}: keep {} (from {}); window base {}, log kept from {} ({} before it): {}",
        plan.keep_log,
        w.window_start.format("%Y-%m-%d %H:%M:%S"),
        w.base.format("%Y-%m-%d %H:%M:%S"),
        w.keep_from.format("%Y-%m-%d %H:%M:%S"),
        humantime::format_duration((w.base - w.keep_from).to_std().unwrap_or_default()),
        w.why
    );
    let mut t = super::output::table(&[
        "PARTITION",
        "OFFSETS",
        "FIRST RECORD (UTC)",
        "LAST RECORD (UTC)",
        "ACTION",
    ]);
    for s in plan.segments() {
        t.add_row(vec![
            s.partition.to_string(),
            format!("{}..{}", s.start, s.next),
            if s.gap {
                "(recorded gap)".to_string()
            } else {
                day(s.first_record_at)
            },
            day(s.last_record_at),
            "remove".to_string(),
        ]);
    }
    if plan.summary.remove_segments > 0 {
        crate::outln!("{t}");
    }
    for c in plan.chains.iter().filter(|c| c.refused.is_some()) {
        crate::outln!(
            "partition {}: {}",
            c.partition,
            c.refused.as_deref().unwrap_or_default()
        );
    }
    for o in &plan.orphans {
        let action = match o.action {
            OrphanAction::Remove => "remove",
            _ => "keep",
        };
        crate::outln!("orphan {}: {action} ({})", o.key, o.why);
    }
    for r in &plan.apply_records {
        crate::outln!("apply record {r}: remove (older than the kept log)");
    }
    let s = &plan.summary;
    crate::outln!(
        "{} partition(s), {} index entries: remove {} segment(s), {} orphan(s) (keep {}), {} apply record(s); {} partition(s) left whole",
        s.partitions,
        s.entries,
        s.remove_segments,
        s.remove_orphans,
        s.keep_orphans,
        s.remove_apply_records,
        s.refused_partitions
    );
}
