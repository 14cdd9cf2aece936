//! `diff`, `prune`, `export` and `import`: the archive's life cycle.

use clap::Args;

use super::Cli;
use crate::error::{Error, Result};

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Arguments of `prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

fn not_yet(name: &str) -> Result<i32> {
    Err(Error::usage(format!(
        "`offset-vault {name}` is not implemented yet in this version"
    )))
}

pub async fn cmd_diff(_cli: &Cli, _args: &DiffArgs) -> Result<i32> {
    not_yet("diff")
}

pub async fn cmd_prune(_cli: &Cli, _args: &PruneArgs) -> Result<i32> {
    not_yet("prune")
}

pub async fn cmd_export(_cli: &Cli, _args: &ExportArgs) -> Result<i32> {
    not_yet("export")
}

pub async fn cmd_import(_cli: &Cli, _args: &ImportArgs) -> Result<i32> {
    not_yet("import")
}
