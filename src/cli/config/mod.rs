//! `offset-vault config ...`, and the configuration file applied to the parsed command line:
//! clap says where each flag came from, [`crate::config`] reads the file and merges the chosen
//! context into what the flags left unset.

use std::path::Path;

use clap::ArgMatches;

pub use super::args::ConfigCommand;
use super::{Cli, Command};
use crate::config::{Applied, Context, Origin, Source};
use crate::error::Result;

pub mod commands;

/// Reads the configuration file (if any) and fills in what neither a flag nor a variable gave.
/// `strict`: a missing context is an error (`config list-contexts` and `use-context` pass false,
/// so a bad `current-context` can be fixed with them).
pub fn apply(cli: &mut Cli, matches: &ArgMatches, strict: bool) -> Result<()> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut loaded = crate::config::apply(&mut cli.global, &cmd, matches, strict)?;
    let name = loaded.name.clone().unwrap_or_default();
    secrets_keys(
        &mut cli.command,
        &loaded.context,
        &name,
        loaded.base.as_deref(),
        &mut loaded.applied,
    );
    cli.global.applied = loaded.applied;
    Ok(())
}

/// The context's `encrypt-to` and `identity`: they fill the command's flags when neither the
/// flag nor its variable gave a value, and `config show` lists them.
fn secrets_keys(
    command: &mut Command,
    ctx: &Context,
    name: &str,
    base: Option<&Path>,
    applied: &mut Applied,
) {
    let from_env = |var: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                (
                    v,
                    Source::Env {
                        variable: var.into(),
                    },
                )
            })
    };
    let context = || Source::Context { name: name.into() };
    if let Some(r) = &ctx.encrypt_to {
        let keys = r.to_vec();
        let snapshot = match command {
            Command::Snapshot(a) => Some(a),
            Command::Serve(a) => Some(&mut a.snapshot),
            _ => None,
        };
        if let Some(a) = snapshot {
            if a.encrypt_to.iter().all(|v| v.trim().is_empty()) && a.encrypt_to_file.is_empty() {
                a.encrypt_to = keys.clone();
            }
        }
        let (value, source) =
            from_env("OFFSET_VAULT_ENCRYPT_TO").unwrap_or_else(|| (keys.join(","), context()));
        applied.origins.push(Origin {
            setting: "encrypt-to".into(),
            value,
            source,
        });
    }
    if let Some(p) = &ctx.identity {
        let p = match base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p.clone(),
        };
        if let Command::Restore(a) = command {
            if a.identity.is_none() {
                a.identity = Some(p.clone());
            }
        }
        let (value, source) = from_env("OFFSET_VAULT_IDENTITY")
            .unwrap_or_else(|| (p.display().to_string(), context()));
        applied.origins.push(Origin {
            setting: "identity".into(),
            value,
            source,
        });
    }
}

#[cfg(test)]
mod tests;
