//! A JSON document whose largest arrays are written element by element as their writers produce
//! them (a restore's groups and checks), so that a document with millions of elements is never
//! held in memory; the rest is written as `serde_json` pretty-prints it.

use std::io::Write;

use serde_json::Value;

use crate::error::{Error, Result};

/// Writes one element of a spliced array.
pub type Emit<'e> = dyn FnMut(&Value) -> Result<()> + 'e;

/// An array of a JSON document written element by element by its writer (each element one
/// JSON value), at the path of keys `path`.
pub struct Splice<'a> {
    pub path: &'a [&'a str],
    pub write: &'a mut dyn FnMut(&mut Emit<'_>) -> Result<()>,
}

/// A failed write to standard output.
pub fn io_err(e: std::io::Error) -> Error {
    Error::Internal(format!("writing to stdout: {e}"))
}

/// Writes `value` at `depth` (the path of keys to it in `path`), with the arrays `splices`
/// name written by their writers.
pub fn write_spliced(
    out: &mut dyn Write,
    value: &Value,
    path: &mut Vec<String>,
    splices: &mut [Splice<'_>],
    depth: usize,
) -> Result<()> {
    let pad = |n: usize| "  ".repeat(n);
    if let Some(s) = splices.iter_mut().find(|s| s.path.iter().eq(path.iter())) {
        out.write_all(b"[").map_err(io_err)?;
        let mut first = true;
        (s.write)(&mut |element: &Value| {
            let sep = if first { "\n" } else { ",\n" };
            first = false;
            write!(out, "{sep}{}", pad(depth + 1)).map_err(io_err)?;
            serde_json::to_writer(&mut *out, element)
                .map_err(|e| Error::Internal(format!("writing to stdout: {e}")))
        })?;
        let end = if first {
            "]".to_string()
        } else {
            format!("\n{}]", pad(depth))
        };
        return out.write_all(end.as_bytes()).map_err(io_err);
    }
    let inside = |s: &Splice<'_>| {
        s.path.len() > path.len() && s.path.iter().zip(path.iter()).all(|(a, b)| a == b)
    };
    match value {
        Value::Object(map) if splices.iter().any(inside) => {
            out.write_all(b"{").map_err(io_err)?;
            for (i, (k, v)) in map.iter().enumerate() {
                let key = serde_json::to_string(k).map_err(|e| Error::Internal(e.to_string()))?;
                write!(
                    out,
                    "{}\n{}{key}: ",
                    if i == 0 { "" } else { "," },
                    pad(depth + 1)
                )
                .map_err(io_err)?;
                path.push(k.clone());
                write_spliced(out, v, path, splices, depth + 1)?;
                path.pop();
            }
            write!(out, "\n{}}}", pad(depth)).map_err(io_err)
        }
        other => {
            let text =
                serde_json::to_string_pretty(other).map_err(|e| Error::Internal(e.to_string()))?;
            // Indent the nested lines to the depth they are written at.
            out.write_all(text.replace('\n', &format!("\n{}", pad(depth))).as_bytes())
                .map_err(io_err)
        }
    }
}
