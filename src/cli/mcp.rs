//! `offset-vault mcp`: parses the server's options and starts [`crate::mcp`].

use super::Cli;
use crate::error::{Error, Result};
use crate::mcp::options::McpArgs;
use crate::mcp::{Options, Runner};

pub async fn cmd_mcp(cli: &Cli, args: &McpArgs) -> Result<i32> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Internal(format!("cannot find this program's path: {e}")))?;
    let (global, env) = crate::mcp::options::child_flags(&cli.global);
    let plan_dir = match &args.plan_dir {
        Some(d) => d.clone(),
        None => crate::mcp::options::default_plan_dir()?,
    };
    if let Some(addr) = args.listen {
        if !addr.ip().is_loopback() {
            tracing::warn!(
                "--listen {addr} is not a loopback address: any client that reaches it can read offsets{}",
                if args.allow_apply { " and apply plans" } else { "" }
            );
        }
    }
    crate::mcp::serve(Options {
        runner: Runner { exe, global, env },
        plan_dir,
        allow_apply: args.allow_apply,
        require_approvals: args.require_approvals,
        listen: args.listen,
    })
    .await
}
