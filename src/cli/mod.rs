//! The command line: its definition ([`args`]: the global flags and every command, most of them
//! with the library's own option types from [`crate::commands`]), the help printed after them
//! ([`help`]), the runs that call the library in order, and the printing of what it returns.
//! Decisions (what the flags mean, what is valid, what to change) are the library's.

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
