//! `serve`'s options: its flags and the jobs of the configuration file's `[serve]` section,
//! checked into the [`Plan`] that [`crate::serve`] runs. Everything is checked before any I/O
//! but whether the store already holds a commit-log archive.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::prune::PolicyArgs;
use super::snapshot::SnapshotArgs;
use crate::commands::follow::FollowerArgs;
use crate::config::parse_duration;
use crate::config::serve::{parse_as, parse_section, string_key, ServeSection};
use crate::error::{Error, Result};
use crate::serve::jobs::{FollowJob, Job, Work};
use crate::serve::schedule::Schedule;
use crate::serve::Plan;
use crate::store::Store;

/// Where `serve` listens when neither `--listen` nor the file's `[serve] listen` says.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9464";

/// Arguments of `serve`.
#[derive(Debug, Args, Clone)]
pub struct ServeArgs {
    /// Where /metrics, /healthz and /readyz are served, HOST:PORT; `none`: no HTTP server
    /// [default: the file's [serve] listen, else 127.0.0.1:9464].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Job "snapshot": a snapshot of the selection below every DURATION (e.g. 5m, 1h).
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", value_parser = parse_duration)]
    pub snapshot_every: Option<Duration>,
    #[command(flatten)]
    pub snapshot: SnapshotArgs,
    /// Job "prune": `prune --execute` with the --keep-* policy below every DURATION; old
    /// leases (7 days) go too.
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", value_parser = parse_duration)]
    pub prune_every: Option<Duration>,
    #[command(flatten, next_help_heading = "Prune job")]
    pub policy: PolicyArgs,
    /// Job "verify": re-hash the snapshots created within --verify-within every DURATION.
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", value_parser = parse_duration)]
    pub verify_every: Option<Duration>,
    /// How far back the verify job looks.
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub verify_within: Duration,
    /// Job "follow": the commit-log follower, continuously (sealed on stop). On without this
    /// flag when the store already holds a commit-log archive.
    #[arg(help_heading = "Jobs", long)]
    pub follow: bool,
    /// No follower, even when the store holds a commit-log archive.
    #[arg(help_heading = "Jobs", long, conflicts_with = "follow")]
    pub no_follow: bool,
    #[command(flatten, next_help_heading = "Follower")]
    pub follower: FollowerArgs,
    /// Job "expiry-guard": every DURATION, report and snapshot (tagged expiry-guard=true) every
    /// Empty group whose offsets the broker expires within --expiry-margin (as `expiring`).
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", value_parser = parse_duration)]
    pub expiry_every: Option<Duration>,
    /// How far ahead the expiry guard looks.
    #[arg(help_heading = "Jobs", long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration, requires = "expiry_every")]
    pub expiry_margin: Duration,
}

/// `[serve.jobs.NAME]` of kind verify.
#[derive(Debug, Args)]
struct VerifyKeys {
    #[arg(long, default_value = "1d", value_parser = parse_duration)]
    within: Duration,
}

/// `[serve.follow]`.
#[derive(Debug, Args)]
struct FollowKeys {
    #[arg(long, default_value = "true", action = clap::ArgAction::Set)]
    enabled: bool,
    #[command(flatten)]
    follower: FollowerArgs,
}

fn schedule_of(where_: &str, table: &toml::Table) -> Result<Schedule> {
    let every = string_key(where_, table, "every")?;
    let cron = string_key(where_, table, "cron")?;
    match (every, cron) {
        (Some(e), None) => {
            let d = parse_duration(&e)
                .map_err(|m| Error::usage(format!("{where_}: every = \"{e}\": {m}")))?;
            Schedule::every(d, &format!("{where_}: every ="))
        }
        (None, Some(c)) => Schedule::cron(&c, &format!("{where_}: cron =")),
        _ => Err(Error::usage(format!(
            "{where_}: give exactly one of `every` (e.g. \"5m\") and `cron` (e.g. \"0 */5 * * * *\")"
        ))),
    }
}

/// The jobs of a `[serve]` section. `connect`: the number of Connect URLs.
pub fn file_jobs(section: &ServeSection, connect: usize) -> Result<Vec<Job>> {
    let mut out = Vec::new();
    for (name, table) in &section.jobs {
        let where_ = format!("[serve.jobs.{name}]");
        crate::serve::jobs::check_name(name).map_err(|e| Error::usage(format!("{where_}: {e}")))?;
        let kind = string_key(&where_, table, "kind")?.ok_or_else(|| {
            Error::usage(format!(
                "{where_}: no `kind`; expected one of snapshot, prune, verify, expiry-guard"
            ))
        })?;
        let skip = ["kind", "every", "cron", "store"];
        let in_job = |e: Error| match e {
            Error::Usage(m) if !m.starts_with('[') => Error::usage(format!("{where_}: {m}")),
            other => other,
        };
        let work = match kind.as_str() {
            "snapshot" => {
                let a: SnapshotArgs = parse_as(&where_, table, &skip, &["metrics-textfile"])?;
                Work::Snapshot(a.capture_options(connect).map_err(in_job)?)
            }
            "prune" => {
                let a: PolicyArgs = parse_as(&where_, table, &skip, &[])?;
                Work::Prune(crate::commands::prune::options(&a).map_err(in_job)?)
            }
            "verify" => {
                let a: VerifyKeys = parse_as(&where_, table, &skip, &[])?;
                Work::Verify { within: a.within }
            }
            "expiry-guard" => {
                let a: super::expiring::ExpiringArgs =
                    parse_as(&where_, table, &skip, &["metrics-textfile"])?;
                Work::Expiry(super::expiring::options(&a, connect).map_err(in_job)?)
            }
            other => {
                return Err(Error::usage(format!(
                    "{where_}: kind = \"{other}\": expected one of snapshot, prune, verify, expiry-guard"
                )))
            }
        };
        out.push(Job {
            name: name.clone(),
            schedule: schedule_of(&where_, table)?,
            store: string_key(&where_, table, "store")?,
            work,
        });
    }
    Ok(out)
}

/// The follower of a `[serve.follow]` table, if it is enabled.
fn file_follower(section: &ServeSection) -> Result<Option<(FollowerArgs, Option<String>)>> {
    let Some(table) = &section.follow else {
        return Ok(None);
    };
    let where_ = "[serve.follow]";
    let keys: FollowKeys = parse_as(where_, table, &["store"], &[])?;
    Ok(keys
        .enabled
        .then(|| string_key(where_, table, "store"))
        .transpose()?
        .map(|store| (keys.follower, store)))
}

/// What the flags ask for, checked.
fn flag_jobs(args: &ServeArgs, connect: usize) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    let s = &args.snapshot.select;
    let selected = !s.who.groups.is_empty()
        || s.who.group_pattern.is_some()
        || s.who.all_groups
        || !s.who.connectors.is_empty()
        || s.who.all_connectors;
    match (args.snapshot_every, selected) {
        (Some(every), _) => jobs.push(Job {
            name: "snapshot".into(),
            schedule: Schedule::every(every, "--snapshot-every")?,
            store: None,
            work: Work::Snapshot(args.snapshot.capture_options(connect)?),
        }),
        (None, true) => {
            return Err(Error::usage(
                "a selection (--group, --all-groups, --connector, ...) is for the snapshot job: add --snapshot-every DURATION",
            ))
        }
        (None, false) => {}
    }
    let p = &args.policy;
    let policy_given = [
        &p.keep_last,
        &p.keep_hourly,
        &p.keep_daily,
        &p.keep_weekly,
        &p.keep_monthly,
        &p.keep_yearly,
        &p.keep_within,
    ]
    .iter()
    .any(|v| v.is_some())
        || !p.keep_tags.is_empty()
        || p.keep_log.is_some();
    match (args.prune_every, policy_given) {
        (Some(every), _) => jobs.push(Job {
            name: "prune".into(),
            schedule: Schedule::every(every, "--prune-every")?,
            store: None,
            work: Work::Prune(crate::commands::prune::options(p)?),
        }),
        (None, true) => {
            return Err(Error::usage(
                "--keep-* options are for the prune job: add --prune-every DURATION",
            ))
        }
        (None, false) => {}
    }
    if let Some(every) = args.expiry_every {
        jobs.push(Job {
            name: "expiry-guard".into(),
            schedule: Schedule::every(every, "--expiry-every")?,
            store: None,
            work: Work::Expiry(crate::expiry::ExpiryOptions {
                margin: args.expiry_margin,
                selection: crate::snapshot::Selection {
                    all_groups: true,
                    ..Default::default()
                },
                snapshot: true,
                tags: Default::default(),
            }),
        });
    }
    if let Some(every) = args.verify_every {
        jobs.push(Job {
            name: "verify".into(),
            schedule: Schedule::every(every, "--verify-every")?,
            store: None,
            work: Work::Verify {
                within: args.verify_within,
            },
        });
    }
    Ok(jobs)
}

fn listen_of(text: &str) -> Result<Option<SocketAddr>> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|e| {
        Error::usage(format!(
            "--listen {text}: {e} (expected HOST:PORT such as 127.0.0.1:9464, or none)"
        ))
    })
}

/// The configuration file's `[serve]` section, read again (at start and on SIGHUP).
pub fn read_section(path: Option<&Path>) -> Result<ServeSection> {
    let Some(path) = path else {
        return Ok(ServeSection::default());
    };
    let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(parse_section(path, &text)?.unwrap_or_default())
}

/// Everything to run: the flags' jobs, then the file's.
pub fn plan(
    args: &ServeArgs,
    section: &ServeSection,
    connect: usize,
    follow_archive: bool,
) -> Result<Plan> {
    let mut jobs = flag_jobs(args, connect)?;
    jobs.extend(file_jobs(section, connect)?);
    let listen = listen_of(
        args.listen
            .as_deref()
            .or(section.listen.as_deref())
            .unwrap_or(DEFAULT_LISTEN),
    )?;
    let from_file = file_follower(section)?;
    let follower = if args.no_follow {
        None
    } else if let Some((f, store)) = from_file.filter(|_| !args.follow) {
        Some((f, store))
    } else if args.follow || follow_archive {
        Some((args.follower.clone(), None))
    } else {
        None
    };
    let follow = follower
        .map(|(f, store)| -> Result<FollowJob> {
            Ok(FollowJob {
                opts: f.options(false, Vec::new(), None)?,
                store,
            })
        })
        .transpose()?;
    let plan = Plan {
        listen,
        jobs,
        follow,
    };
    plan.check()?;
    Ok(plan)
}

/// Whether the store holds a commit-log archive (then the follower is on by default).
pub async fn has_archive(store: &Store) -> bool {
    store
        .folders("log/index/")
        .await
        .map(|f| !f.is_empty())
        .unwrap_or(false)
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
