//! `offset-vault restore`: plan (dry run) or execute, and print what happened.

use chrono::Utc;
use comfy_table::{Cell, Color};
use serde_json::json;

use super::commands::open_store;
use super::output::{print_json, right, table};
use super::{Cli, OutputFormat, RestoreArgs};
use crate::error::{exit, Error, Result};
use crate::kafka::KafkaClient;
use crate::restore::plan::{Action, Plan};
use crate::restore::{self, Choice, Outcome, PlanOptions, RestoreRequest};
use crate::timeutil::parse_time;

fn request(args: &RestoreArgs) -> Result<RestoreRequest> {
    let choice = match (&args.id, args.latest, &args.before) {
        (Some(id), _, _) => Choice::Id(id.clone()),
        (None, true, _) => Choice::Latest,
        (None, false, Some(t)) => Choice::Before(parse_time(t, Utc::now())?),
        (None, false, None) => {
            return Err(Error::usage(
                "say which snapshot: an id, --latest, or --before TIME",
            ))
        }
    };
    if !args.partitions.is_empty() && args.topics.is_empty() {
        return Err(Error::usage("--partition needs --topic"));
    }
    Ok(RestoreRequest {
        choice,
        eligible: Default::default(),
        groups: args.groups.clone(),
        connectors: args.connectors.clone(),
        topics: args.topics.clone(),
        partitions: args.partitions.clone(),
        plan: PlanOptions {
            on_out_of_range: args.on_out_of_range,
            skip_missing: args.skip_missing,
            stop_connectors: args.stop_connectors,
        },
        allow_other_cluster: args.allow_other_cluster,
        by_timestamp: args.by_timestamp,
        undo: !args.no_undo,
        wait_timeout: args.wait_timeout,
    })
}

/// The exit code a dry run reports for a plan.
fn plan_code(plan: &Plan) -> i32 {
    if !plan.applicable {
        exit::NOT_APPLICABLE
    } else if plan.blocked {
        exit::BLOCKED
    } else {
        exit::OK
    }
}

pub async fn cmd_restore(cli: &Cli, args: &RestoreArgs) -> Result<i32> {
    let req = request(args)?;
    let settings = cli.global.kafka_settings()?;
    let clients = cli.global.connect_clients()?;
    let store = open_store(cli)?;
    let kafka = KafkaClient::connect(settings).await?;

    let prepared = restore::prepare(&store, &kafka, &clients, &req).await?;
    eprintln!(
        "using snapshot {} ({}), verified",
        prepared.loaded.manifest.meta.id, prepared.chosen_because
    );
    if let Some(path) = &args.plan_file {
        let text = serde_json::to_string_pretty(&prepared.plan)
            .map_err(|e| Error::Internal(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::usage(format!("--plan-file {}: {e}", path.display())))?;
    }
    if !args.execute {
        match cli.global.output {
            OutputFormat::Json => print_json(&json!({
                "snapshot": prepared.loaded.manifest.meta.id,
                "chosen_because": prepared.chosen_because,
                "executed": false,
                "plan": prepared.plan,
            })),
            OutputFormat::Table => {
                print_plan(&prepared.plan);
                eprintln!("dry run: nothing was changed; add --execute to apply this plan");
            }
        }
        return Ok(plan_code(&prepared.plan));
    }

    if cli.global.output == OutputFormat::Table {
        print_plan(&prepared.plan);
    }
    let outcome = restore::execute(&store, &kafka, &clients, &prepared, &req).await?;
    let failed =
        outcome.checks.iter().filter(|c| !c.ok).count() + outcome.connector_mismatches.len();
    let undo_command = outcome.undo_snapshot.as_ref().map(|id| {
        let stop = if outcome.plan.connectors.is_empty() {
            ""
        } else {
            " --stop-connectors"
        };
        format!(
            "offset-vault --store {} restore {id}{stop} --execute",
            store.url()
        )
    });
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "snapshot": prepared.loaded.manifest.meta.id,
            "chosen_because": prepared.chosen_because,
            "executed": true,
            "undo_snapshot": outcome.undo_snapshot,
            "undo_command": undo_command,
            "plan": outcome.plan,
            "verified": failed == 0,
            "checks": outcome.checks,
            "connector_mismatches": outcome.connector_mismatches,
            "resumed": outcome.resumed,
        })),
        OutputFormat::Table => print_outcome(&outcome, undo_command.as_deref()),
    }
    if failed > 0 {
        return Err(Error::VerifyFailed(format!(
            "{failed} offset(s) read back differ from the plan (listed above)"
        )));
    }
    Ok(exit::OK)
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

fn action_cell(action: Action) -> Cell {
    let text = serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let cell = Cell::new(text);
    if action.fails() {
        cell.fg(Color::Red)
    } else {
        cell
    }
}

pub fn print_plan(plan: &Plan) {
    let mut t = table(&[
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT",
        "TARGET",
        "SNAPSHOT",
        "LOG-START",
        "LOG-END",
        "REPROCESS",
        "SKIP",
        "ACTION",
        "NOTE",
    ]);
    for g in &plan.groups {
        for p in &g.partitions {
            t.add_row(vec![
                Cell::new(&g.group_id),
                Cell::new(&p.topic),
                Cell::new(p.partition),
                Cell::new(opt(p.current)),
                Cell::new(opt(p.target)),
                Cell::new(opt(p.snapshot_offset)),
                Cell::new(opt(p.log_start)),
                Cell::new(opt(p.log_end)),
                Cell::new(p.reprocess),
                Cell::new(p.skip),
                action_cell(p.action),
                Cell::new(p.note.clone().unwrap_or_default()),
            ]);
        }
    }
    right(&mut t, &[2, 3, 4, 5, 6, 7, 8, 9]);
    println!("{t}");
    if !plan.connectors.is_empty() {
        let mut c = table(&[
            "CONNECTOR",
            "TYPE",
            "STATE NOW",
            "OFFSETS VIA",
            "DURING RESTORE",
            "CHANGES",
        ]);
        for conn in &plan.connectors {
            let changes = if conn.method == "rest" {
                let n = conn.offsets.iter().filter(|o| o.changes).count();
                format!("{n} of {} source partition(s)", conn.offsets.len())
            } else {
                format!("group {}", conn.group_id.clone().unwrap_or_default())
            };
            c.add_row(vec![
                conn.name.clone(),
                conn.connector_type.clone(),
                conn.state.clone().unwrap_or_else(|| "missing".into()),
                if conn.method == "rest" {
                    "PATCH /offsets".into()
                } else {
                    "Kafka commit".into()
                },
                if conn.stop_and_resume {
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
        println!("{c}");
    }
    let s = &plan.summary;
    println!(
        "{} group(s), {} partition(s): {} to change, {} record(s) to reprocess, {} to skip; {} failing, {} blocked; {} connector(s)",
        s.groups, s.partitions, s.changes, s.reprocess, s.skip, s.failing, s.blocked, s.connectors
    );
    for p in &plan.problems {
        println!("  ! {p}");
    }
}

fn print_outcome(outcome: &Outcome, undo_command: Option<&str>) {
    if let Some(cmd) = undo_command {
        println!(
            "undo snapshot {}; to undo this restore:",
            outcome.undo_snapshot.as_deref().unwrap_or_default()
        );
        println!("  {cmd}");
    }
    let mut t = table(&[
        "GROUP",
        "TOPIC",
        "PARTITION",
        "TARGET",
        "READ BACK",
        "RESULT",
    ]);
    for c in &outcome.checks {
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
    }
    right(&mut t, &[2, 3, 4]);
    println!("{t}");
    for m in &outcome.connector_mismatches {
        println!("  ! {m}");
    }
    for r in &outcome.resumed {
        println!("connector {r}");
    }
}
