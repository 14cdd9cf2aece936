//! `offset-vault history GROUP`: a group's archived changes.

use chrono::Utc;
use comfy_table::Cell;

use super::output::{print_json, right, table};
use super::Cli;
use crate::commands::history::HistoryArgs;
use crate::config::OutputFormat;
use crate::error::{Error, Result};
use crate::log::applied::AppliedBy;
use crate::log::history::{history, Change, History, HistoryFilter};
use crate::log::plot::{self as history_plot, PlotTarget};
use crate::timeutil::parse_time;

fn millis(t: &str) -> Result<i64> {
    Ok(parse_time(t, Utc::now())?.timestamp_millis())
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn kind_text(c: &Change) -> String {
    serde_json::to_value(c.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// What the table's NOTE column says: a flagged rewind, or the execution that made a restore.
fn note(c: &Change) -> String {
    if c.flagged {
        return "not explained by a restore or reset of offset-vault".into();
    }
    let Some(by) = &c.by else {
        return String::new();
    };
    let undo = by
        .undo_snapshot
        .as_ref()
        .map(|u| format!("; undo: {u}"))
        .unwrap_or_default();
    match by.command {
        // A reset's label says what it did: `reset --to-offset 1`.
        AppliedBy::Reset => format!("{}{undo}", by.snapshot),
        AppliedBy::Restore => format!("restore of {}{undo}", by.snapshot),
    }
}

pub async fn cmd_history(cli: &Cli, args: &HistoryArgs) -> Result<i32> {
    let filter = HistoryFilter {
        topic: args.topic.clone(),
        partition: args.partition,
        since: args.since.as_deref().map(millis).transpose()?,
        until: args.until.as_deref().map(millis).transpose()?,
    };
    let plot = args.plot.as_deref().map(PlotTarget::parse).transpose()?;
    let store = cli.global.open_existing_store()?;
    let h = history(&store, &args.group, &filter).await?;
    for d in &h.discontinuities {
        crate::alertln!("warning: the archive of the group's partition is not continuous: {d:?}");
    }
    let flagged = h.changes.iter().filter(|c| c.flagged).count();
    if flagged > 0 {
        crate::alertln!(
            "warning: {flagged} rewind(s) that no restore or reset of offset-vault explains (flagged): the group will process those records again"
        );
    }
    if let Some(target) = &plot {
        history_plot::write(&h, target)?;
        crate::noteln!("plot written to {}", target.path.display());
    }
    if args.csv {
        return print_csv(&h);
    }
    match cli.global.output {
        OutputFormat::Json => {
            print_json(&serde_json::to_value(&h).map_err(|e| Error::Internal(e.to_string()))?)
        }
        OutputFormat::Table => print_table(&h),
    }
    Ok(crate::error::exit::OK)
}

fn print_csv(h: &History) -> Result<i32> {
    let mut w = csv::Writer::from_writer(crate::console::QuietStdout);
    let fail = |e: csv::Error| Error::Internal(format!("write CSV: {e}"));
    w.write_record([
        "at",
        "kind",
        "topic",
        "partition",
        "offset",
        "previous",
        "delta",
        "flagged",
        "by",
        "record",
        "undo_snapshot",
    ])
    .map_err(fail)?;
    for c in &h.changes {
        let by = c.by.as_ref();
        w.write_record([
            crate::timeutil::millis_text(c.at),
            kind_text(c),
            opt(c.topic.as_ref()),
            opt(c.partition),
            opt(c.offset),
            opt(c.previous),
            opt(c.delta),
            c.flagged.to_string(),
            opt(by.map(|b| b.command.as_str())),
            opt(by.map(|b| &b.record)),
            opt(by.and_then(|b| b.undo_snapshot.as_ref())),
        ])
        .map_err(fail)?;
    }
    w.flush()
        .map_err(|e| Error::Internal(format!("write CSV: {e}")))?;
    Ok(crate::error::exit::OK)
}

fn print_table(h: &History) {
    let mut t = table(&[
        "AT (UTC)",
        "KIND",
        "TOPIC",
        "PARTITION",
        "OFFSET",
        "PREVIOUS",
        "DELTA",
        "NOTE",
    ]);
    for c in &h.changes {
        t.add_row(vec![
            Cell::new(crate::timeutil::millis_text(c.at)),
            Cell::new(if c.flagged {
                format!("{} !", kind_text(c))
            } else {
                kind_text(c)
            }),
            Cell::new(opt(c.topic.as_ref())),
            Cell::new(opt(c.partition)),
            Cell::new(opt(c.offset)),
            Cell::new(opt(c.previous)),
            Cell::new(opt(c.delta)),
            Cell::new(note(c)),
        ]);
    }
    right(&mut t, &[3, 4, 5, 6]);
    crate::outln!("{t}");
    crate::noteln!(
        "{} change(s) of group {} from {} segment(s) of __consumer_offsets[{}]",
        h.changes.len(),
        h.group,
        h.segments,
        h.source_partition
    );
}
