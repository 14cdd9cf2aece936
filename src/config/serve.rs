//! The `[serve]` section of the configuration file: named jobs and the follower.
//!
//! ```toml
//! [serve]
//! listen = "0.0.0.0:9464"
//! [serve.jobs.hourly-all]          # the job's name
//! kind = "snapshot"                # snapshot | prune | verify
//! every = "5m"                     # or cron = "0 */5 * * * *" (exactly one of them)
//! store = "s3://other/prefix"      # optional; default the global store
//! all-groups = true                # the keys of the kind's flags, without the dashes
//! tags = { env = "prod" }
//! [serve.follow]
//! enabled = true
//! group-id = "offset-vault-follower"
//! ```
//!
//! A job's other keys are its kind's flags (`snapshot`'s selection, `prune`'s `--keep-*`,
//! `verify`'s `within`), parsed by the same clap definitions as the flags, so a key means
//! exactly what its flag means; lists may take the plural name (`groups`, `connectors`,
//! `topics`, `tags`, `keep-tags`, `group-types`). Unknown keys are refused with their name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};
use serde::Deserialize;

use crate::error::{Error, Result};

/// The `[serve]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServeSection {
    pub listen: Option<String>,
    pub metrics_textfile: Option<PathBuf>,
    #[serde(default)]
    pub jobs: BTreeMap<String, toml::Table>,
    pub follow: Option<toml::Table>,
}

/// The file as `serve` reads it: only its `[serve]` table (the contexts are read elsewhere).
#[derive(Debug, Default, Deserialize)]
struct Whole {
    serve: Option<ServeSection>,
}

/// The `[serve]` table of a configuration file's text (`None` when it has none).
pub fn parse_section(path: &Path, text: &str) -> Result<Option<ServeSection>> {
    let whole: Whole = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", super::file::line_of(text, s.start)))
            .unwrap_or_default();
        Error::usage(format!(
            "configuration file {}{at}: [serve]: {}",
            path.display(),
            e.message().trim()
        ))
    })?;
    Ok(whole.serve)
}

/// List keys that may take their plural name in the file.
const PLURALS: [(&str, &str); 6] = [
    ("groups", "group"),
    ("connectors", "connector"),
    ("topics", "topic"),
    ("tags", "tag"),
    ("keep-tags", "keep-tag"),
    ("group-types", "group-type"),
];

/// The flag a file key stands for.
fn flag_of(key: &str) -> &str {
    PLURALS
        .iter()
        .find(|(plural, _)| *plural == key)
        .map(|(_, flag)| *flag)
        .unwrap_or(key)
}

/// Parses `table` (less the keys in `skip`) as the flags of `A`: `where_` names the table in
/// errors; `refused` are flags of `A` that have no meaning in the file.
pub fn parse_as<A: Args + FromArgMatches>(
    where_: &str,
    table: &toml::Table,
    skip: &[&str],
    refused: &[&str],
) -> Result<A> {
    let cmd = A::augment_args(clap::Command::new("serve-job").no_binary_name(true));
    let mut argv: Vec<String> = Vec::new();
    for (key, value) in table.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
        let flag = flag_of(key);
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(flag) && !refused.contains(&flag))
            .ok_or_else(|| {
                let mut known: Vec<String> = cmd
                    .get_arguments()
                    .filter_map(|a| a.get_long())
                    .filter(|l| !refused.contains(l))
                    .map(|l| {
                        PLURALS
                            .iter()
                            .find(|(_, f)| *f == l)
                            .map(|(p, _)| p.to_string())
                            .unwrap_or_else(|| l.to_string())
                    })
                    .chain(skip.iter().map(|s| s.to_string()))
                    .collect();
                known.sort();
                Error::usage(format!(
                    "{where_}: unknown key `{key}`; known keys: {}",
                    known.join(", ")
                ))
            })?;
        let takes_value = arg.get_action().takes_values();
        let bad = |want: &str| Error::usage(format!("{where_}: key `{key}`: expected {want}"));
        match value {
            toml::Value::Boolean(b) if !takes_value => {
                if *b {
                    argv.push(format!("--{flag}"));
                }
            }
            _ if !takes_value => return Err(bad("true or false")),
            toml::Value::Boolean(b) => {
                argv.push(format!("--{flag}"));
                argv.push(b.to_string());
            }
            toml::Value::String(_) | toml::Value::Integer(_) | toml::Value::Float(_) => {
                argv.push(format!("--{flag}"));
                argv.push(scalar(value).ok_or_else(|| bad("a string or a number"))?);
            }
            toml::Value::Array(items) => {
                for item in items {
                    argv.push(format!("--{flag}"));
                    argv.push(scalar(item).ok_or_else(|| bad("a list of strings"))?);
                }
            }
            toml::Value::Table(pairs) if matches!(flag, "tag" | "keep-tag") => {
                for (k, v) in pairs {
                    argv.push(format!("--{flag}"));
                    argv.push(format!(
                        "{k}={}",
                        scalar(v).ok_or_else(|| bad("a table of strings"))?
                    ));
                }
            }
            _ => return Err(bad("a string, a number or a list")),
        }
    }
    let matches = cmd.try_get_matches_from(&argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        Error::usage(format!(
            "{where_}: {}",
            first.trim_start_matches("error: ").replace("'--", "'")
        ))
    })?;
    A::from_arg_matches(&matches).map_err(|e| Error::usage(format!("{where_}: {e}")))
}

fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// A string key of a table, if present.
pub fn string_key(where_: &str, table: &toml::Table, key: &str) -> Result<Option<String>> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::usage(format!(
            "{where_}: key `{key}`: expected a string"
        ))),
    }
}
