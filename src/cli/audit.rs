//! `offset-vault audit`: list the audit trail; and the hooks the changing commands call at the
//! start and end of their execute path ([`begin`], [`finish`]).

use chrono::Utc;
use comfy_table::Cell;
use serde_json::json;

use super::output::{print_json, table};
use super::Cli;
use crate::audit::{self, Auditor, EventType, Facts, KafkaSink, Trail};
use crate::commands::audit::AuditArgs;
use crate::config::OutputFormat;
use crate::error::{exit, Error, Result};
use crate::store::Store;

/// The auditor of this run over `store`: the command line, `--audit`, and `--audit-topic`.
pub(super) fn auditor(cli: &Cli, store: Store) -> Result<Auditor> {
    let g = &cli.global;
    let sink = match g.audit_topic.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(topic) => Some(KafkaSink::new(&g.kafka_settings()?, topic)?),
        None => None,
    };
    let command: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // Events are signed by the store's signing key (audit::write_event); its id names who.
    let key_id = store.keys().signer().map(|k| k.id().to_string());
    Ok(Auditor::new(store, g.audit, command)
        .with_key_id(key_id)
        .with_via(g.via.clone())
        .with_sink(sink))
}

/// Starts the trail of a command that is about to change something (`changes`: false for a
/// dry run, which records nothing). Writes the opened marker; with `--audit required` a trail
/// that cannot be written fails the command here, before any change. `create`: the command
/// creates a missing local store (as `snapshot` does), else it must exist.
pub(super) async fn begin(
    cli: &Cli,
    t: EventType,
    changes: bool,
    create: bool,
) -> Result<Option<Trail>> {
    if !changes {
        return Ok(None);
    }
    let store = if create {
        cli.global.open_store()?
    } else {
        cli.global.open_existing_store()?
    };
    let trail = auditor(cli, store)?.begin(t).await?;
    tracing::debug!("audit: opened {} ({})", trail.id(), t.short());
    Ok(Some(trail))
}

/// Ends the trail with the command's result (which the caller returns unchanged).
pub(super) async fn finish(trail: Option<Trail>, facts: Facts, result: &Result<i32>) {
    if let Some(trail) = trail {
        trail.finish(facts, result).await;
    }
}

/// Runs `offset-vault audit`.
pub async fn cmd_audit(cli: &Cli, args: &AuditArgs) -> Result<i32> {
    let filter = args.filter(Utc::now())?;
    let sink = match &args.to_kafka {
        Some(topic) => Some(KafkaSink::new(&cli.global.kafka_settings()?, topic)?),
        None => None,
    };
    let store = cli.global.open_existing_store()?;
    let listing = audit::list::list(&store, &filter).await?;
    for p in &listing.problems {
        crate::alertln!("warning: {p}");
    }
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "store": store.url(),
            "events": listing.events,
        })),
        OutputFormat::Table => print_table(&listing.events),
    }
    if let Some(sink) = sink {
        let mut sent = 0;
        for e in listing
            .events
            .iter()
            .filter(|e| e.data.outcome != audit::AuditOutcome::Unfinished)
        {
            sink.send(e).await.map_err(|err| {
                Error::kafka(
                    "audit --to-kafka",
                    format!("{err}; {sent} event(s) were produced before it"),
                )
            })?;
            sent += 1;
        }
        crate::noteln!("{sent} event(s) produced to {}", sink.topic());
    }
    Ok(exit::OK)
}

fn print_table(events: &[audit::Event]) {
    let mut t = table(&[
        "TIME", "TYPE", "OUTCOME", "EXIT", "WHO", "GROUPS", "SUBJECT",
    ]);
    for e in events {
        let groups = e
            .data
            .groups
            .iter()
            .map(|g| format!("{} ({} partition(s))", g.group_id, g.partitions_changed))
            .collect::<Vec<_>>()
            .join(", ");
        t.add_row(vec![
            Cell::new(e.time_text()),
            Cell::new(e.short_type()),
            Cell::new(e.data.outcome.name()),
            Cell::new(
                e.data
                    .exit_code
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::new(format!("{}@{}", e.data.who.user, e.data.who.host)),
            Cell::new(groups),
            Cell::new(e.subject.clone().unwrap_or_default()),
        ]);
    }
    crate::outln!("{t}");
    crate::noteln!("{} event(s)", events.len());
}
