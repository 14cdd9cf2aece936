//! `offset-vault mcp`: the Model Context Protocol server. An agent reads snapshots, the commit
//! log and the live cluster, and plans restores and resets, freely: none of that changes
//! offsets. The one tool that changes them, `apply_plan`, exists only when the server was
//! started with `--allow-apply`, takes nothing but the hash of a plan file that the planning
//! tools wrote (never offsets), asks the person to confirm where the client can ask, and
//! applies the plan with `--from-plan`: planned again against the live cluster and refused
//! unless it is still the plan that was reviewed, on the same cluster, with the approvals the
//! server requires.
//!
//! Every tool runs the command line's own command ([`runner`]), so what a tool returns is what
//! `--output json` prints, and the audit trail records the change as the command line would,
//! marked `via: mcp`.

pub mod options;
pub mod plans;
pub mod runner;
mod tools;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::error::{Error, Result};

pub use options::Options;
pub use runner::{Ran, Runner};
pub use tools::Vault;

/// Serves until the client closes stdio (or, with `listen`, until SIGINT/SIGTERM).
pub async fn serve(opts: Options) -> Result<i32> {
    std::fs::create_dir_all(&opts.plan_dir).map_err(|e| {
        Error::usage(format!(
            "--plan-dir {}: cannot create it: {e}",
            opts.plan_dir.display()
        ))
    })?;
    let opts = Arc::new(opts);
    match opts.listen {
        None => serve_stdio(opts).await,
        Some(addr) => serve_http(opts, addr).await,
    }
}

async fn serve_stdio(opts: Arc<Options>) -> Result<i32> {
    use rmcp::ServiceExt;
    tracing::info!(
        "MCP server on stdio; plan files in {}; apply_plan {}",
        opts.plan_dir.display(),
        if opts.allow_apply {
            "offered"
        } else {
            "not offered (no --allow-apply)"
        }
    );
    let service = Vault::new(opts)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Internal(format!("MCP session did not start: {e}")))?;
    service
        .waiting()
        .await
        .map_err(|e| Error::Internal(format!("MCP session ended with an error: {e}")))?;
    Ok(0)
}

async fn serve_http(opts: Arc<Options>, addr: SocketAddr) -> Result<i32> {
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    };
    let ct = tokio_util::sync::CancellationToken::new();
    let made = opts.clone();
    let service = StreamableHttpService::new(
        move || Ok(Vault::new(made.clone())),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::usage(format!("--listen {addr}: cannot bind: {e}")))?;
    let bound = listener.local_addr().unwrap_or(addr);
    crate::alertln!("MCP server on http://{bound}/mcp");
    let stop = ct.clone();
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            stop.cancel();
        })
        .await
        .map_err(|e| Error::Internal(format!("MCP HTTP server: {e}")))?;
    Ok(0)
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
