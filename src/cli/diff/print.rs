//! Printing a diff: JSON written as the rows come, or an aligned table measured in a first
//! pass over the rows and printed in a second. Results to stdout, the sides' labels to stderr.

use std::io::Write;

use serde_json::{json, Value};

use crate::diff::{
    diff_rows, Change, ConnectorDiff, PartitionCounts, PartitionDiff, Row, Unsorted,
};
use crate::error::{Error, Result};

/// Makes the rows of one side (0: old, 1: new), each time anew.
pub(super) type Rows<'a> = dyn Fn(u8) -> Box<dyn Iterator<Item = Row> + 'a> + 'a;

fn unsorted(e: Unsorted) -> Error {
    Error::Internal(e.to_string())
}

fn io(e: std::io::Error) -> Error {
    Error::Internal(format!("write to stdout: {e}"))
}

/// Writes the diff as one JSON document; returns the counts.
pub(super) fn json(
    old: &Value,
    new: &Value,
    rows: &Rows<'_>,
    shown: &dyn Fn(&PartitionDiff) -> bool,
    connectors: &[ConnectorDiff],
) -> Result<PartitionCounts> {
    let mut out = std::io::BufWriter::new(crate::console::QuietStdout);
    write!(
        out,
        "{{\"schema_version\":{},\"old\":{old},\"new\":{new},\"partitions\":[",
        crate::schema::SCHEMA_VERSION
    )
    .map_err(io)?;
    let mut first = true;
    let mut failed = None;
    let counts = diff_rows(rows(0), rows(1), |d| {
        if shown(&d) && failed.is_none() {
            let sep = if first { "\n" } else { ",\n" };
            first = false;
            let text = serde_json::to_string(&d).unwrap_or_default();
            if let Err(e) = write!(out, "{sep}{text}") {
                failed = Some(e);
            }
        }
    })
    .map_err(unsorted)?;
    failed.map_or(Ok(()), |e| Err(io(e)))?;
    writeln!(
        out,
        "\n],\"connectors\":{},\"summary\":{}}}",
        serde_json::to_string(connectors).unwrap_or_default(),
        summary_json(&counts, connectors)
    )
    .map_err(io)?;
    out.flush().map_err(io)?;
    Ok(counts)
}

/// Prints the diff as a table with a summary line; returns the counts.
pub(super) fn table(
    old: &Value,
    new: &Value,
    rows: &Rows<'_>,
    shown: &dyn Fn(&PartitionDiff) -> bool,
    connectors: &[ConnectorDiff],
) -> Result<PartitionCounts> {
    crate::noteln!("old: {}", side_text(old));
    crate::noteln!("new: {}", side_text(new));
    let mut widths = HEADERS.map(str::len);
    let mut listed = 0u64;
    let counts = diff_rows(rows(0), rows(1), |d| {
        if shown(&d) {
            listed += 1;
            for (w, cell) in widths.iter_mut().zip(cells(&d)) {
                *w = (*w).max(cell.chars().count());
            }
        }
    })
    .map_err(unsorted)?;
    if listed > 0 {
        let mut out = std::io::BufWriter::new(crate::console::QuietStdout);
        writeln!(out, "{}", line(&widths, &HEADERS.map(String::from))).map_err(io)?;
        let mut failed = None;
        diff_rows(rows(0), rows(1), |d| {
            if shown(&d) && failed.is_none() {
                if let Err(e) = writeln!(out, "{}", line(&widths, &cells(&d))) {
                    failed = Some(e);
                }
            }
        })
        .map_err(unsorted)?;
        failed.map_or(Ok(()), |e| Err(io(e)))?;
        out.flush().map_err(io)?;
    }
    print_connectors(connectors);
    crate::outln!("{}", summary_text(&counts, connectors));
    Ok(counts)
}

fn side_text(label: &Value) -> String {
    if let Some(at) = label.get("at") {
        return format!(
            "the committed offsets at {} (snapshot {} plus {} archived record(s) from {} segment(s))",
            at.as_str().unwrap_or_default(),
            label["snapshot"].as_str().unwrap_or_default(),
            label["records"],
            label["segments"]
        );
    }
    match (label.get("snapshot"), label.get("live")) {
        (Some(id), _) => format!(
            "snapshot {} (kind {}, created {})",
            id.as_str().unwrap_or_default(),
            label["kind"].as_str().unwrap_or_default(),
            label["created_at"].as_str().unwrap_or_default()
        ),
        (None, Some(b)) => format!(
            "the committed offsets now on {} (cluster {})",
            b.as_str().unwrap_or_default(),
            label["cluster_id"].as_str().unwrap_or_default()
        ),
        _ => label.to_string(),
    }
}

fn cells(d: &PartitionDiff) -> [String; 7] {
    let (old, new, delta, what) = match d.change {
        Change::Added { new } => (String::new(), new.to_string(), String::new(), "added"),
        Change::Removed { old } => (old.to_string(), String::new(), String::new(), "removed"),
        Change::Unchanged { offset } => (
            offset.to_string(),
            offset.to_string(),
            "0".to_string(),
            "unchanged",
        ),
        Change::Changed {
            old,
            new,
            delta,
            direction,
        } => (
            old.to_string(),
            new.to_string(),
            format!("{delta:+}"),
            match direction {
                crate::diff::Direction::Forward => "forward",
                crate::diff::Direction::Backward => "backward",
            },
        ),
    };
    let mut note = what.to_string();
    if let Some(s) = d.log_start_past_old {
        note.push_str(&format!("; log start now {s}: the old offset is gone"));
    }
    if let Some(ids) = &d.topic_recreated {
        note.push_str(&format!(
            "; topic recreated (id {} -> {}): the old offset is of the old topic",
            ids.old, ids.new
        ));
    }

    [
        d.group.clone(),
        d.topic.clone(),
        d.partition.to_string(),
        old,
        new,
        delta,
        note,
    ]
}

const HEADERS: [&str; 7] = [
    "GROUP",
    "TOPIC",
    "PARTITION",
    "OLD",
    "NEW",
    "DELTA",
    "CHANGE",
];

/// One aligned line: text columns left, numbers right.
fn line(widths: &[usize; 7], c: &[String; 7]) -> String {
    format!(
        "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {:>w5$}  {}",
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        c[6],
        w0 = widths[0],
        w1 = widths[1],
        w2 = widths[2],
        w3 = widths[3],
        w4 = widths[4],
        w5 = widths[5],
    )
}

fn print_connectors(diffs: &[ConnectorDiff]) {
    for c in diffs {
        crate::outln!("connector {}: {}", c.name, c.change);
        if let Some((o, n)) = &c.state {
            crate::outln!(
                "  state: {} -> {}",
                o.as_deref().unwrap_or("-"),
                n.as_deref().unwrap_or("-")
            );
        }
        let value = |v: &Option<crate::diff::ConfigValue>| match v {
            None => "(absent)".to_string(),
            Some(crate::diff::ConfigValue::Shown(s)) => format!("{s:?}"),
            Some(crate::diff::ConfigValue::Hidden { .. }) => "(secret)".to_string(),
        };
        for k in &c.config {
            crate::outln!("  config {}: {} -> {}", k.key, value(&k.old), value(&k.new));
        }
        for k in &c.not_compared {
            crate::outln!("  config {k}: redacted, not compared (take snapshots with --include-secrets to compare)");
        }
        let json = |v: &Option<Value>| {
            v.as_ref()
                .map(Value::to_string)
                .unwrap_or_else(|| "(absent)".into())
        };
        for o in &c.offsets {
            crate::outln!(
                "  offset {}: {} -> {}",
                o.partition,
                json(&o.old),
                json(&o.new)
            );
        }
    }
}

fn summary_json(counts: &PartitionCounts, connectors: &[ConnectorDiff]) -> Value {
    json!({
        "partitions": counts,
        "connectors_changed": connectors.iter().filter(|c| c.differs()).count(),
        "differs": counts.differs() || connectors.iter().any(ConnectorDiff::differs),
    })
}

fn summary_text(counts: &PartitionCounts, connectors: &[ConnectorDiff]) -> String {
    let mut s = format!(
        "{} partition(s) changed ({} record(s) forward, {} back), {} added, {} removed, {} unchanged; {} connector(s) changed",
        counts.changed,
        counts.forward_records,
        counts.backward_records,
        counts.added,
        counts.removed,
        counts.unchanged,
        connectors.iter().filter(|c| c.differs()).count()
    );
    if counts.topic_recreated > 0 {
        s.push_str(&format!(
            "; {} partition(s) of topics deleted and created again",
            counts.topic_recreated
        ));
    }
    if counts.log_start_past_old > 0 {
        s.push_str(&format!(
            "; {} partition(s) whose old offset is now before the log start (it cannot be restored)",
            counts.log_start_past_old
        ));
    }
    s
}
