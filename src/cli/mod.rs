//! The command line: argument types (clap), validation into library options, and printing.

mod args;
mod at;
mod audit;
mod commands;
mod completions;
pub mod config;
mod csv;
mod diff;
mod expiring;
mod follow;
mod guard;
mod help;
mod log;
mod mcp;
mod mirror;
pub mod output;
mod prune;
mod reset;
mod restore;
mod serve;
mod sign;

pub use crate::config::{GlobalArgs, OutputFormat};
pub use args::{Cli, Command};
pub use commands::run;
