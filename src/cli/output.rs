//! Printing: tables for people, JSON for scripts. Results go to stdout, everything else to stderr.

use std::io::Write;

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, Table};
use serde_json::{json, Value};

use crate::format::spliced::{io_err, write_spliced, Splice};
use crate::snapshot::model::GroupSnapshot;
use crate::snapshot::repo::{Listed, Opened};

/// Prints a JSON document; an object gets `schema_version` first (see [`crate::schema`]).
pub fn print_json(value: &Value) {
    let value = crate::schema::versioned(value);
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(&value).expect("JSON values always serialize")
    );
}

pub(super) fn table(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(headers.iter().map(Cell::new));
    t
}

pub(super) fn right(table: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(col) = table.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

fn tags_text(tags: &std::collections::BTreeMap<String, String>, sep: &str) -> String {
    let parts: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(sep)
}

pub fn list_json(listed: &[Listed]) -> Value {
    let snapshots = Value::Array(
        listed
            .iter()
            .map(|l| match &l.manifest {
                Some(m) => json!({
                    "id": l.id,
                    "complete": true,
                    "kind": m.meta.kind,
                    "undo_of": m.meta.undo_of,
                    "partial": m.meta.partial,
                    "created_at": m.meta.created_at,
                    "cluster_id": m.meta.cluster_id,
                    "format": m.format,
                    "summary": m.summary,
                    "tags": m.meta.tags,
                    "signature": l.signature,
                }),
                None => json!({
                    "id": l.id,
                    "complete": false,
                    "problem": l.problem,
                    "files": l.files.iter().map(|f| &f.key).collect::<Vec<_>>(),
                }),
            })
            .collect(),
    );
    json!({ "snapshots": snapshots })
}

pub fn print_list(listed: &[Listed]) {
    let mut t = table(&[
        "ID",
        "KIND",
        "CREATED (UTC)",
        "GROUPS",
        "PARTITIONS",
        "CONNECTORS",
        "TAGS",
        "SIGNED",
        "STATUS",
    ]);
    for l in listed {
        match &l.manifest {
            Some(m) => {
                t.add_row(vec![
                    l.id.clone(),
                    m.meta.kind.to_string(),
                    m.meta.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                    m.summary.groups.to_string(),
                    m.summary.partitions.to_string(),
                    m.summary.connectors.to_string(),
                    tags_text(&m.meta.tags, ","),
                    l.signature.describe(),
                    if m.meta.is_partial() {
                        "partial".into()
                    } else {
                        "complete".into()
                    },
                ]);
            }
            None => {
                t.add_row(vec![
                    l.id.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    l.problem.clone().unwrap_or_else(|| "incomplete".into()),
                ]);
            }
        }
    }
    right(&mut t, &[3, 4, 5]);
    crate::outln!("{t}");
    crate::noteln!("{} snapshot(s)", listed.len());
}

/// The columns of `show`'s partition table; the last five are numbers, aligned right.
const SHOW_HEADERS: [&str; 9] = [
    "GROUP",
    "TYPE",
    "STATE",
    "TOPIC",
    "PARTITION",
    "OFFSET",
    "LOG-START",
    "LOG-END",
    "LAG",
];

/// The cells of one group's rows in `show`'s table.
fn show_rows(g: &GroupSnapshot) -> Vec<[String; 9]> {
    let head = [
        g.group_id.clone(),
        g.group_type.to_string(),
        g.state.to_string(),
    ];
    if g.partitions.is_empty() {
        let [a, b, c] = head;
        return vec![[
            a,
            b,
            c,
            "(no committed offsets)".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]];
    }
    g.partitions
        .iter()
        .map(|p| {
            let [a, b, c] = head.clone();
            [
                a,
                b,
                c,
                p.topic.clone(),
                p.partition.to_string(),
                p.offset.to_string(),
                opt(p.log_start_offset),
                opt(p.log_end_offset),
                opt(p.lag),
            ]
        })
        .collect()
}

fn show_line(widths: &[usize; 9], cells: &[String; 9]) -> String {
    let mut line = String::new();
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        let pad = w.saturating_sub(cell.chars().count());
        if i >= 4 {
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(cell);
        } else {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    line.trim_end().to_string()
}

/// Prints a verified snapshot: its header, then one line per partition, read from the offsets
/// file twice (once to measure the columns, once to print), so no step holds all rows.
/// A verdict for people: `trusted, key 1a2b...`.
pub fn signature_text(v: &crate::sign::Verdict) -> String {
    use crate::sign::Verdict;
    match v {
        Verdict::Unsigned => "unsigned".into(),
        Verdict::Unverified { key_id } => {
            format!("signed by key {key_id} (not checked: no --trusted-key given)")
        }
        Verdict::Trusted { key_id } => format!("signed by trusted key {key_id}"),
        Verdict::Untrusted { key_id } => format!("signed by key {key_id}, NOT TRUSTED"),
        Verdict::Invalid { .. } => format!("INVALID: {}", v.refusal().unwrap_or_default()),
    }
}

pub fn print_snapshot(
    opened: &Opened,
    map: Option<&crate::mirror::TopicMap>,
) -> crate::error::Result<()> {
    let m = &opened.manifest;
    crate::outln!("snapshot   {}", m.meta.id);
    crate::outln!("created    {}", m.meta.created_at.to_rfc3339());
    crate::outln!(
        "cluster    {} ({})",
        m.meta.cluster_id,
        m.meta.bootstrap_servers
    );
    crate::outln!("tool       offset-vault {}", m.meta.tool_version);
    crate::outln!("signature  {}", signature_text(&opened.signature));
    crate::outln!(
        "kind       {}{}",
        m.meta.kind,
        m.meta
            .undo_of
            .as_ref()
            .map(|s| format!(" (undo point of a restore of {s})"))
            .unwrap_or_default()
    );
    for reason in &m.meta.partial {
        crate::outln!("PARTIAL    {reason}");
    }
    if !m.meta.tags.is_empty() {
        crate::outln!("tags       {}", tags_text(&m.meta.tags, ", "));
    }
    crate::outln!(
        "verified   all {} file(s) match the manifest",
        m.files.len()
    );
    if let Some(s) = &m.encrypted_secrets {
        crate::outln!(
            "secrets    connector configs with their secrets are stored encrypted in {} (age, {} recipient(s): {}); restore --recreate-connectors --identity FILE uses them",
            s.file,
            s.recipients.len(),
            s.recipients.join(", ")
        );
    }

    print_group_rows(opened, map)?;
    print_snapshot_connectors(opened);
    Ok(())
}

/// The partition rows of a snapshot, aligned: measured in a first pass over its groups,
/// written in a second.
fn print_group_rows(
    opened: &Opened,
    map: Option<&crate::mirror::TopicMap>,
) -> crate::error::Result<()> {
    let mut widths = SHOW_HEADERS.map(str::len);
    opened.for_each_group(&mut |g| {
        let g = shown_names(map, g);
        for row in show_rows(&g) {
            for (w, cell) in widths.iter_mut().zip(&row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        Ok(())
    })?;
    let io = |e: std::io::Error| crate::error::Error::Internal(format!("write to stdout: {e}"));
    let mut out = std::io::BufWriter::new(crate::console::QuietStdout);
    writeln!(out).map_err(io)?;
    writeln!(
        out,
        "{}",
        show_line(&widths, &SHOW_HEADERS.map(String::from))
    )
    .map_err(io)?;
    opened.for_each_group(&mut |g| {
        let g = shown_names(map, g);
        for row in show_rows(&g) {
            writeln!(out, "{}", show_line(&widths, &row)).map_err(io)?;
        }
        Ok(())
    })?;
    out.flush().map_err(io)
}

/// The connectors of a snapshot, as a table.
fn print_snapshot_connectors(opened: &Opened) {
    if !opened.connectors.is_empty() {
        let mut c = table(&[
            "CONNECTOR",
            "TYPE",
            "STATE",
            "TASKS",
            "GROUP",
            "OFFSETS",
            "REDACTED",
        ]);
        for conn in &opened.connectors {
            let tasks: Vec<String> = conn
                .tasks
                .iter()
                .map(|t| format!("{}:{}", t.id, t.state))
                .collect();
            c.add_row(vec![
                conn.name.clone(),
                conn.connector_type.clone(),
                conn.state.clone(),
                tasks.join(" "),
                opt(conn.group_id.as_ref()),
                match &conn.offsets {
                    Some(o) => {
                        format!("{} entr{}", o.len(), if o.len() == 1 { "y" } else { "ies" })
                    }
                    None => "unavailable".into(),
                },
                conn.redacted_keys.len().to_string(),
            ]);
        }
        crate::outln!("\n{c}");
    }
}

/// Prints `value` as one JSON document like [`print_json`], except that the arrays named by
/// `splices` are written by their writers, one element at a time, so that a document with
/// millions of elements is never held in memory. An error of a writer ends the document early
/// and is returned.
pub(super) fn print_json_spliced(
    value: &Value,
    splices: &mut [Splice<'_>],
) -> crate::error::Result<()> {
    let value = crate::schema::versioned(value);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, crate::console::QuietStdout);
    let mut path = Vec::new();
    write_spliced(&mut out, &value, &mut path, splices, 0)
        .and_then(|()| out.write_all(b"\n").map_err(io_err))
        .and_then(|()| out.flush().map_err(io_err))
}

/// A group as `show` prints it with `--topic-map`/`--replication-policy`: each topic another
/// cluster names otherwise as `NAME (snapshot: OLD)`.
pub(super) fn shown_names(
    map: Option<&crate::mirror::TopicMap>,
    mut g: crate::snapshot::GroupSnapshot,
) -> crate::snapshot::GroupSnapshot {
    if let Some(map) = map {
        for p in g.partitions.iter_mut() {
            if let Some(name) = mapped(map, &p.topic) {
                p.topic = format!("{name} (snapshot: {})", p.topic);
            }
        }
    }
    g
}

/// The name another cluster gives `topic`, when it differs.
pub(super) fn mapped(map: &crate::mirror::TopicMap, topic: &str) -> Option<String> {
    match map.map(topic) {
        Ok(crate::mirror::Mapping::Replicated { topic: name, .. }) if name != topic => Some(name),
        _ => None,
    }
}
