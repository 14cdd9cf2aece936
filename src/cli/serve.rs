//! `offset-vault serve`: its flags, the jobs of the configuration file's `[serve]` section, and
//! the plan handed to [`crate::serve`]. Everything is checked before any I/O.

use std::path::PathBuf;
use std::sync::Arc;

use super::Cli;
use crate::commands::serve::{self as command, ServeArgs};
use crate::error::{exit, Result};
use crate::serve::jobs::Shared;
use crate::store::Store;

pub(super) const EXAMPLES: &str = "\
Examples:
  # Every group and connector every 5 minutes, prune hourly, verify the last day's snapshots
  offset-vault --store s3://backups/offsets serve \\
      --snapshot-every 5m --all-groups --all-connectors \\
      --prune-every 1h --keep-hourly 48 --keep-daily 30 \\
      --verify-every 6h --listen 0.0.0.0:9464

  # The commit-log follower and a snapshot every hour; metrics also to a textfile
  offset-vault serve --follow --snapshot-every 1h --all-groups \\
      --metrics-textfile /var/lib/node_exporter/textfile/offset_vault.prom

  # Jobs from the configuration file's [serve] section (kill -HUP reloads them)
  offset-vault --config /etc/offset-vault/config.toml serve

A configuration file's [serve] section (beside the contexts):
  [serve]
  listen = \"0.0.0.0:9464\"
  [serve.jobs.hourly-all]            # the job's name
  kind = \"snapshot\"                  # snapshot | prune | verify | expiry-guard
  every = \"1h\"                       # or: cron = \"0 */5 * * * *\" (UTC; exactly one)
  all-groups = true                  # the kind's flags without dashes; lists: groups, tags, ...
  tags = { env = \"prod\" }
  [serve.jobs.retention]
  kind = \"prune\"
  cron = \"0 30 * * * *\"
  keep-hourly = 48
  keep-daily = 30
  [serve.follow]
  enabled = true
  segment-interval = \"1m\"

Each scheduled run takes a lease in the store first (serve/leases/JOB/SLOT.json, create-only):
any number of replicas run each slot once. A run still going when its next slot comes skips
that slot (counted). A failed run is tried again within its slot (3 tries). SIGTERM or SIGINT:
no new runs, running ones finish, the follower seals, exit 0. SIGHUP reloads the file.
Metrics: GET /metrics (Prometheus text); /healthz; /readyz (Kafka and the store answer).";

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
