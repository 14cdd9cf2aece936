//! `offset-vault serve`: its flags, the jobs of the configuration file's `[serve]` section, and
//! the plan handed to [`crate::serve`]. Everything is checked before any I/O.

use std::path::PathBuf;
use std::sync::Arc;

use super::Cli;
use crate::commands::serve::{self as command, ServeArgs};
use crate::error::{exit, Result};
use crate::serve::jobs::Shared;
use crate::store::Store;

pub async fn cmd_serve(cli: &Cli, args: &ServeArgs) -> Result<i32> {
    let file: Option<PathBuf> = cli
        .global
        .applied
        .file
        .clone()
        .or_else(|| cli.global.config.clone());
    let section = command::read_section(file.as_deref())?;
    let connect = cli.global.connect_clients()?;
    let settings = cli.global.kafka_settings()?;
    let store_url = cli.global.store_url()?.to_string();
    let textfile = args
        .snapshot
        .metrics_textfile
        .clone()
        .or_else(|| section.metrics_textfile.clone());
    // Everything is checked once before any I/O; only whether a follower runs for an existing
    // archive is left to the store.
    command::plan(args, &section, connect.len(), true)?;
    let follow_archive = !args.follow
        && !args.no_follow
        && match Store::open_existing(&store_url, cli.global.timeout) {
            Ok(store) => command::has_archive(&store).await,
            Err(_) => false,
        };
    let first = command::plan(args, &section, connect.len(), follow_archive)?;
    if follow_archive && first.follow.is_some() {
        tracing::info!(
            "the store holds a commit-log archive: the follower is on (--no-follow turns it off)"
        );
    }
    let mut shared = Shared::new(
        settings,
        connect.clone(),
        store_url,
        cli.global.timeout,
        textfile,
    );
    shared.keys = cli.global.keys()?;
    let shared = Arc::new(shared);
    crate::noteln!(
        "serving {} job(s){}{}; instance {}",
        first.jobs.len(),
        if first.follow.is_some() {
            " and the follower"
        } else {
            ""
        },
        first
            .listen
            .map(|a| format!("; metrics on http://{a}/metrics"))
            .unwrap_or_default(),
        shared.holder
    );
    let reload: crate::serve::Reloader = {
        let n = connect.len();
        let file = file.clone();
        let args = args.clone();
        Box::new(move || {
            let section = command::read_section(file.as_deref())?;
            command::plan(&args, &section, n, follow_archive)
        })
    };
    crate::serve::run(first, shared, Some(reload)).await?;
    Ok(exit::OK)
}
