//! How the server runs: the options `offset-vault mcp` is started with.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::runner::Runner;
use crate::config::GlobalArgs;
use crate::error::{Error, Result};
use clap::Args;

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

/// Arguments of `mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP on this address (path /mcp) instead of stdio. Bind to loopback
    /// unless something in front of it authenticates clients.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,

    /// Offer the one tool that changes offsets, apply_plan (a plan's hash only). Without it the
    /// server only reads and plans.
    #[arg(long)]
    pub allow_apply: bool,

    /// Approvals (`offset-vault approve`, by --trusted-key holders) a plan must carry before
    /// apply_plan applies it.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "allow_apply")]
    pub require_approvals: usize,

    /// Where the planning tools write plan files, named by their hash [default:
    /// $XDG_STATE_HOME/offset-vault/plans, or ~/.local/state/offset-vault/plans].
    #[arg(long, value_name = "DIR")]
    pub plan_dir: Option<PathBuf>,
}

/// Where plan files go without --plan-dir: `$XDG_STATE_HOME/offset-vault/plans`, or
/// `~/.local/state/offset-vault/plans`.
pub fn default_plan_dir() -> Result<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .ok_or_else(|| Error::usage("neither XDG_STATE_HOME nor HOME is set: give --plan-dir"))?;
    Ok(state.join("offset-vault/plans"))
}

/// The global flags for every command the server runs, from the settings in effect (flags,
/// environment and the configuration's context, already merged), and the variables that carry
/// the secrets among them.
pub fn child_flags(g: &GlobalArgs) -> (Vec<String>, Vec<(String, String)>) {
    let mut flags = Vec::new();
    let mut env = Vec::new();
    let mut put = |flag: &str, value: String| {
        flags.push(flag.to_string());
        flags.push(value);
    };
    if let Some(v) = &g.config {
        put("--config", v.display().to_string());
    }
    if let Some(v) = &g.context {
        put("--context", v.clone());
    }
    if let Some(v) = &g.bootstrap_server {
        put("--bootstrap-server", v.clone());
    }
    if !g.connect_url.is_empty() {
        put("--connect-url", g.connect_url.join(","));
    }
    if let Some(v) = &g.command_config {
        put("--command-config", v.display().to_string());
    }
    for p in &g.property {
        put("-X", p.clone());
    }
    if let Some(v) = &g.store {
        put("--store", v.clone());
    }
    put(
        "--timeout",
        humantime::format_duration(g.timeout).to_string(),
    );
    if !g.trusted_key.is_empty() {
        put("--trusted-key", g.trusted_key.join(","));
    }
    put("--audit", g.audit.name().to_string());
    if let Some(v) = &g.audit_topic {
        put("--audit-topic", v.clone());
    }
    if g.librdkafka_only {
        flags.push("--librdkafka-only".into());
    }
    if let Some(key) = &g.signing_key {
        env.push(("OFFSET_VAULT_SIGNING_KEY".to_string(), key.clone()));
    }
    (flags, env)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{child_flags, McpArgs};
    use crate::config::GlobalArgs;
    use crate::mcp::Runner;

    /// The global flags and `mcp`'s, as the command line parses them.
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        global: GlobalArgs,
        #[command(subcommand)]
        command: Command,
    }

    #[derive(clap::Subcommand)]
    enum Command {
        #[allow(dead_code)]
        Mcp(McpArgs),
    }

    /// The commands the server runs get the settings it was started with, secrets in the
    /// environment and not on their command line.
    #[test]
    fn children_get_the_servers_settings_and_secrets_by_environment() {
        let cli = Line::try_parse_from([
            "offset-vault",
            "-b",
            "k:9092",
            "--connect-url",
            "http://c1,http://c2",
            "--store",
            "s3://b/p",
            "-X",
            "security.protocol=SSL",
            "--timeout",
            "10s",
            "--signing-key=-----BEGIN PRIVATE KEY-----",
            "--trusted-key",
            "a.pub",
            "mcp",
            "--allow-apply",
        ])
        .unwrap();
        let (flags, env) = child_flags(&cli.global);
        assert_eq!(
            flags,
            [
                "--bootstrap-server",
                "k:9092",
                "--connect-url",
                "http://c1,http://c2",
                "-X",
                "security.protocol=SSL",
                "--store",
                "s3://b/p",
                "--timeout",
                "10s",
                "--trusted-key",
                "a.pub",
                "--audit",
                "required",
            ]
        );
        assert!(
            !flags.iter().any(|f| f.contains("PRIVATE KEY")),
            "{flags:?}"
        );
        assert_eq!(
            env,
            [(
                "OFFSET_VAULT_SIGNING_KEY".to_string(),
                "-----BEGIN PRIVATE KEY-----".to_string()
            )]
        );
        // A tool that needs a store of its own replaces the server's, once.
        let runner = Runner {
            exe: "ov".into(),
            global: flags,
            env,
        }
        .with_store("/tmp/x");
        let stores: Vec<&String> = runner
            .global
            .iter()
            .skip_while(|f| *f != "--store")
            .take(2)
            .collect();
        assert_eq!(stores, ["--store", "/tmp/x"]);
        assert_eq!(runner.global.iter().filter(|f| *f == "--store").count(), 1);
    }
}
