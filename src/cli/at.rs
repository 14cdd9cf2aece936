//! `--at TIME` on the read commands: the offsets at an instant as `crate::log::at` reconstructs
//! them, parsed here from the arguments and printed (`show --at`, `export --at`; `diff` takes
//! them as a side).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Cli;
use crate::commands::show::ShowArgs;
use crate::config::OutputFormat;
use crate::error::{exit, Error, Result};
use crate::log::at::{self, millis, ReadAt, Source};
use crate::snapshot::model::GroupSnapshot;

/// The notes for stderr about what `--at` cannot say: groups absent at the instant, share groups
/// left out, and source connectors whose offsets are the base's (Connect's offsets topic is not
/// archived).
pub(super) fn notes(read: &ReadAt) -> Vec<String> {
    read.instant.notes()
}

/// `show --output json` with `--at`.
#[derive(Serialize)]
struct ShowAtDoc<'a> {
    schema_version: u32,
    at: DateTime<Utc>,
    base: Base<'a>,
    /// Segments read and records replayed, over all groups.
    segments: usize,
    records: usize,
    /// The groups that had a committed offset at the instant.
    groups: Vec<&'a GroupSnapshot>,
    /// Where each selected group's offsets came from (the absent ones too).
    sources: Vec<&'a Source>,
    /// Selected groups with no committed offset at the instant.
    absent: Vec<&'a str>,
    /// Partitions whose groups created after the base could not be looked for.
    undiscovered: &'a [String],
    caveats: &'a [String],
    /// Share groups of the base left out: their positions are not in the commit log.
    left_out: &'a [String],
}

/// The base snapshot of an instant, for JSON.
#[derive(Serialize)]
pub(super) struct Base<'a> {
    snapshot: &'a str,
    created_at: DateTime<Utc>,
    kind: String,
    cluster_id: &'a str,
    because: &'a str,
}

pub(super) fn base(read: &ReadAt) -> Base<'_> {
    let m = &read.chosen.manifest.meta;
    Base {
        snapshot: &m.id,
        created_at: m.created_at,
        kind: m.kind.to_string(),
        cluster_id: &m.cluster_id,
        because: &read.chosen.because,
    }
}

/// `show --at TIME`.
pub(super) async fn show(cli: &Cli, args: &ShowArgs, text: &str) -> Result<i32> {
    let filter = args.filter();
    let req = crate::commands::at::request(text, filter, "show", Utc::now())?;
    let store = cli.global.open_existing_store()?;
    let read = at::read(&store, &req).await?;
    for note in notes(&read) {
        crate::noteln!("{note}");
    }
    let i = &read.instant;
    match cli.global.output {
        OutputFormat::Json => {
            let doc = ShowAtDoc {
                schema_version: crate::schema::SCHEMA_VERSION,
                at: i.at,
                base: base(&read),
                segments: i.segments,
                records: i.records(),
                groups: i.present().collect(),
                sources: i.groups.iter().map(|g| &g.source).collect(),
                absent: i.absent(),
                left_out: &i.left_out,
                undiscovered: &i.undiscovered,
                caveats: &i.caveats,
            };
            let text = serde_json::to_string_pretty(&doc)
                .map_err(|e| Error::Internal(format!("encode JSON: {e}")))?;
            crate::outln!("{text}");
        }
        OutputFormat::Table => print_show(&read),
    }
    Ok(exit::OK)
}

/// Lines of cells, each column as wide as its widest cell; the columns in `right` are aligned
/// right (numbers).
fn aligned(rows: &[Vec<String>], right: std::ops::Range<usize>) -> Vec<String> {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        widths.resize(widths.len().max(row.len()), 0);
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(n, (cell, w))| {
                    let pad = " ".repeat(w.saturating_sub(cell.chars().count()));
                    if right.contains(&n) {
                        format!("{pad}{cell}")
                    } else {
                        format!("{cell}{pad}")
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

fn print_show(read: &ReadAt) {
    let i = &read.instant;
    let m = &read.chosen.manifest;
    crate::outln!("at         {}", millis(i.at));
    crate::outln!(
        "base       snapshot {} (kind {}, created {})",
        m.meta.id,
        m.meta.kind,
        millis(m.meta.created_at)
    );
    crate::outln!(
        "cluster    {} ({})",
        m.meta.cluster_id,
        m.meta.bootstrap_servers
    );
    crate::outln!(
        "replayed   {} archived record(s) of __consumer_offsets after the snapshot, from {} segment(s)",
        i.records(),
        i.segments
    );
    crate::outln!(
        "verified   all {} file(s) of the snapshot and every segment read match their manifests",
        m.files.len()
    );
    crate::outln!();
    let mut rows = vec![["GROUP", "TYPE", "TOPIC", "PARTITION", "OFFSET"]
        .map(String::from)
        .to_vec()];
    for g in i.present() {
        for p in &g.partitions {
            rows.push(vec![
                g.group_id.clone(),
                g.group_type.to_string(),
                p.topic.clone(),
                p.partition.to_string(),
                p.offset.to_string(),
            ]);
        }
    }
    for line in aligned(&rows, 3..5) {
        crate::outln!("{line}");
    }
    crate::outln!();
    let mut rows = vec![["GROUP", "FROM", "SEGMENTS", "RECORDS", "LAST RECORD"]
        .map(String::from)
        .to_vec()];
    for s in i.groups.iter().map(|g| &g.source) {
        rows.push(vec![
            s.group_id.clone(),
            format!("__consumer_offsets[{}]", s.source_partition),
            s.segments.to_string(),
            s.records.to_string(),
            match (s.last_record_at, s.committed) {
                (Some(t), true) => millis(t),
                (Some(t), false) => format!("{} (no offset left)", millis(t)),
                (None, true) => "- (the snapshot's offsets)".into(),
                (None, false) => "- (no offset)".into(),
            },
        ]);
    }
    for line in aligned(&rows, 2..4) {
        crate::outln!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell_and_numbers_align_right() {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let rows = vec![
            row(&["GROUP", "OFFSET", "LAST"]),
            row(&["a-long-group", "7", "-"]),
        ];
        assert_eq!(
            aligned(&rows, 1..2),
            ["GROUP         OFFSET  LAST", "a-long-group       7  -"]
        );
    }
}
