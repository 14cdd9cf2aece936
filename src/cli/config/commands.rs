//! `offset-vault config show | list-contexts | use-context`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::ConfigCommand;
use crate::cli::{Cli, OutputFormat};
use crate::config::{existing, use_context, ConfigFile, Origin};
use crate::error::Result;

/// A value as `config show` prints it: secrets (by key or inline in a URL) redacted.
pub fn redacted(setting: &str, value: &str) -> String {
    let key = setting.strip_prefix("property ").unwrap_or(setting);
    let mut one = BTreeMap::from([(key.to_string(), value.to_string())]);
    crate::redact::redact_config(&mut one);
    one.into_values().next().unwrap_or_default()
}

/// Runs `offset-vault config ...`.
pub fn run(cli: &Cli, command: &ConfigCommand) -> Result<i32> {
    match command {
        ConfigCommand::Show => show(cli),
        ConfigCommand::ListContexts => {
            let (path, file) = read_existing(cli)?;
            let current = file.current_context.as_ref().map(|c| c.get_ref().as_str());
            if cli.global.output == OutputFormat::Json {
                crate::cli::output::print_json(&serde_json::json!({
                    "file": path,
                    "current_context": current,
                    "contexts": file.contexts.keys().collect::<Vec<_>>(),
                }));
                return Ok(0);
            }
            let mut t =
                crate::cli::output::table(&["CURRENT", "NAME", "BOOTSTRAP-SERVER", "STORE"]);
            for (name, c) in &file.contexts {
                t.add_row(vec![
                    if Some(name.as_str()) == current {
                        "*"
                    } else {
                        ""
                    }
                    .to_string(),
                    name.clone(),
                    c.bootstrap_server.clone().unwrap_or_default(),
                    c.store
                        .as_deref()
                        .map(|s| redacted("store", s))
                        .unwrap_or_default(),
                ]);
            }
            crate::outln!("{t}");
            Ok(0)
        }
        ConfigCommand::UseContext { name } => {
            let (path, file) = read_existing(cli)?;
            use_context(&path, &file, name)?;
            crate::noteln!("current context is now {name} ({})", path.display());
            Ok(0)
        }
    }
}

fn show(cli: &Cli) -> Result<i32> {
    let applied = &cli.global.applied;
    let settings: Vec<Origin> = applied
        .origins
        .iter()
        .map(|o| Origin {
            value: redacted(&o.setting, &o.value),
            ..o.clone()
        })
        .collect();
    if cli.global.output == OutputFormat::Json {
        crate::cli::output::print_json(&serde_json::json!({
            "file": applied.file,
            "context": applied.context.as_ref().map(|c| &c.0),
            "context_source": applied.context.as_ref().map(|c| &c.1),
            "settings": settings,
        }));
        return Ok(0);
    }
    let file = applied
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(none)".into());
    crate::outln!("file     {file}");
    match &applied.context {
        Some((name, how)) => crate::outln!("context  {name} (chosen by {how})"),
        None => crate::outln!("context  (none)"),
    }
    let mut t = crate::cli::output::table(&["SETTING", "VALUE", "SOURCE"]);
    for o in &settings {
        t.add_row(vec![
            o.setting.clone(),
            o.value.clone(),
            o.source.to_string(),
        ]);
    }
    crate::outln!("{t}");
    Ok(0)
}

/// The configuration file that `config list-contexts` and `use-context` work on.
fn read_existing(cli: &Cli) -> Result<(PathBuf, ConfigFile)> {
    let g = &cli.global;
    existing(g.applied.file.as_deref(), g.config.as_deref())
}
