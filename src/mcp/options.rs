//! How the server runs: the options `offset-vault mcp` is started with.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::runner::Runner;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub runner: Runner,
    /// Where the planning tools write plan files (`<sha256>.json`), for review and approval.
    pub plan_dir: PathBuf,
    /// Offer `apply_plan`.
    pub allow_apply: bool,
    /// Approvals (`offset-vault approve`) an applied plan must carry.
    pub require_approvals: usize,
    /// Streamable HTTP on this address instead of stdio.
    pub listen: Option<SocketAddr>,
}
