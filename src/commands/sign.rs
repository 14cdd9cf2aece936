//! The options of `keygen` (a key pair) and `approve` (a plan file and the approver's key).

use std::path::PathBuf;

use clap::Args;

/// Arguments of `keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Write the secret key to PREFIX.key (owner-only, never overwritten) and the public key to
    /// PREFIX.pub.
    #[arg(long, value_name = "PREFIX")]
    pub out: PathBuf,
}

/// Arguments of `approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The plan file (written by restore or reset --plan-file).
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    /// The approver's Ed25519 secret key (a PEM file from `keygen`, or the PEM text itself).
    #[arg(
        long,
        value_name = "FILE",
        env = "OFFSET_VAULT_APPROVER_KEY",
        hide_env_values = true
    )]
    pub key: String,
}
