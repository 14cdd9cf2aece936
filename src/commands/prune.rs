//! What `prune` decides once the policy has made its plan: the exit code of a plan with
//! refused groups, what the audit event of an executed prune says, and when the deletions
//! that failed make it an error.

use serde_json::json;

use crate::audit::{AuditOutcome, Facts};
use crate::config::parse_duration;
use crate::error::Result;
use crate::error::{exit, Error};
use crate::retention::{parse_group_by, Policy, PruneOptions};
use crate::retention::{PrunePlan, Pruned};
use chrono::Duration;
use clap::Args;
use std::path::PathBuf;

/// Exit 15 when the policy refused a group (it would keep none of its snapshots), else 0; a
/// scheduled dry run is caught by it before anything is executed.
pub fn refused_code(plan: &PrunePlan) -> i32 {
    match plan.refused().next() {
        Some(_) => exit::PRUNE_REFUSED,
        None => exit::OK,
    }
}

/// What the audit event of an executed prune records: the snapshots deleted, the counts, and
/// `partial` when something was deleted but not all (a refused group, a failed deletion).
pub fn audit_facts(facts: &mut Facts, plan: &PrunePlan, pruned: &Pruned) {
    facts.snapshot_ids = pruned.deleted.clone();
    let refused = plan.refused().count();
    let failed = pruned.failed.len() + pruned.log_failures().len();
    facts
        .detail
        .insert("deleted_snapshots".into(), json!(pruned.deleted.len()));
    facts
        .detail
        .insert("failed_deletions".into(), json!(failed));
    facts.detail.insert("refused_groups".into(), json!(refused));
    if let Some(l) = &pruned.log {
        facts
            .detail
            .insert("deleted_log_segments".into(), json!(l.segments.len()));
    }
    if !pruned.deleted.is_empty() && (refused > 0 || failed > 0) {
        facts.outcome = Some(AuditOutcome::Partial);
    }
}

/// The error of an executed prune whose deletions failed in part (they are listed by then);
/// None when every deletion succeeded.
pub fn failure(pruned: &Pruned, store_url: &str) -> Option<Error> {
    let failed = pruned.log_failures();
    if !failed.is_empty() {
        return Some(Error::store(
            store_url,
            format!(
                "{} object(s) of the commit-log archive could not be deleted (listed above); each chain was cut only from its start, and a later prune goes on",
                failed.len()
            ),
        ));
    }
    if !pruned.failed.is_empty() {
        return Some(Error::store(
            store_url,
            format!(
                "{} snapshot(s) could not be deleted completely (listed above); what is left of them is incomplete or untouched, and a later prune removes it",
                pruned.failed.len()
            ),
        ));
    }
    None
}

/// Arguments of `prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Delete. Without it, the plan is printed and nothing changes.
    #[arg(long)]
    pub execute: bool,
    /// Also write the run's metrics in Prometheus text format to PATH, atomically, for
    /// node_exporter's textfile collector (job="prune").
    #[arg(long, value_name = "PATH")]
    pub metrics_textfile: Option<PathBuf>,
}

/// The retention policy of `prune` (and of `serve --prune-every`).
#[derive(Debug, Args, Clone)]
pub struct PolicyArgs {
    /// Keep the N newest snapshots.
    #[arg(long, value_name = "N")]
    pub keep_last: Option<String>,
    /// Keep the newest snapshot of each of the N newest hours that have one (`unlimited`: all).
    #[arg(long, value_name = "N")]
    pub keep_hourly: Option<String>,
    /// Keep the newest snapshot of each of the N newest days that have one.
    #[arg(long, value_name = "N")]
    pub keep_daily: Option<String>,
    /// Keep the newest snapshot of each of the N newest ISO weeks that have one.
    #[arg(long, value_name = "N")]
    pub keep_weekly: Option<String>,
    /// Keep the newest snapshot of each of the N newest months that have one.
    #[arg(long, value_name = "N")]
    pub keep_monthly: Option<String>,
    /// Keep the newest snapshot of each of the N newest years that have one.
    #[arg(long, value_name = "N")]
    pub keep_yearly: Option<String>,
    /// Keep every snapshot taken within DURATION of the newest one (e.g. 2d, 36h, 1y6m: y, m =
    /// months, d, h).
    #[arg(long, value_name = "DURATION")]
    pub keep_within: Option<String>,
    /// Keep the newest snapshot of each hour within DURATION of the newest snapshot.
    #[arg(long, value_name = "DURATION")]
    pub keep_within_hourly: Option<String>,
    /// Keep the newest snapshot of each day within DURATION of the newest snapshot.
    #[arg(long, value_name = "DURATION")]
    pub keep_within_daily: Option<String>,
    /// Keep the newest snapshot of each ISO week within DURATION of the newest snapshot.
    #[arg(long, value_name = "DURATION")]
    pub keep_within_weekly: Option<String>,
    /// Keep the newest snapshot of each month within DURATION of the newest snapshot.
    #[arg(long, value_name = "DURATION")]
    pub keep_within_monthly: Option<String>,
    /// Keep the newest snapshot of each year within DURATION of the newest snapshot.
    #[arg(long, value_name = "DURATION")]
    pub keep_within_yearly: Option<String>,
    /// Keep every snapshot with these tags (KEY=VALUE, several joined by commas must all match;
    /// repeatable: any of them).
    #[arg(long = "keep-tag", value_name = "K=V[,K=V]")]
    pub keep_tags: Vec<String>,
    /// The policy applies to each group of snapshots separately; groups are made by these
    /// fields (comma-separated: cluster, kind, selection, tags; '' for one group).
    #[arg(long, value_name = "FIELDS", default_value = "cluster,kind,selection")]
    pub group_by: String,
    /// Also remove incomplete snapshots (no manifest) older than this.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub incomplete_older_than: std::time::Duration,
    /// Let the policy remove every snapshot of a group. Without it such a group is refused
    /// (nothing of it deleted, exit 15).
    #[arg(long)]
    pub allow_empty_group: bool,
    /// Also prune the commit-log archive (`follow`), keeping every instant of the last DURATION
    /// reconstructable for `--at` (e.g. 30d, 12h). A segment goes only when every record in it
    /// is older than the window's base (the newest kept snapshot at or before now - DURATION
    /// that holds a group, for each group) less --keep-log-margin, and only from the start of
    /// its partition's chain (never its last entry);
    /// orphan data files older than --incomplete-older-than and apply records older than the
    /// kept log go too. Without --keep-log, prune never removes a log segment. With only
    /// --keep-log (no --keep-*), every complete snapshot is kept.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub keep_log: Option<std::time::Duration>,
    /// With --keep-log: how much of the log before the window's base is kept too. `--at`
    /// replays that much before its base snapshot, so that the offsets of a transaction open
    /// while the snapshot was taken are not lost; the default is Kafka's default
    /// transaction.max.timeout.ms. Lower it only for a cluster whose transactions time out
    /// sooner (or that has none).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = parse_duration, requires = "keep_log")]
    pub keep_log_margin: std::time::Duration,
}

/// The policy and options from the flags, checked before any I/O.
pub fn options(args: &PolicyArgs) -> Result<PruneOptions> {
    let mut policy = Policy::default();
    let flags = [
        ("keep-last", &args.keep_last),
        ("keep-hourly", &args.keep_hourly),
        ("keep-daily", &args.keep_daily),
        ("keep-weekly", &args.keep_weekly),
        ("keep-monthly", &args.keep_monthly),
        ("keep-yearly", &args.keep_yearly),
        ("keep-within", &args.keep_within),
        ("keep-within-hourly", &args.keep_within_hourly),
        ("keep-within-daily", &args.keep_within_daily),
        ("keep-within-weekly", &args.keep_within_weekly),
        ("keep-within-monthly", &args.keep_within_monthly),
        ("keep-within-yearly", &args.keep_within_yearly),
    ];
    for (name, value) in flags {
        if let Some(v) = value {
            policy.set(name, v)?;
        }
    }
    for t in &args.keep_tags {
        policy.set("keep-tag", t)?;
    }
    let keep_log = match args.keep_log {
        None => None,
        Some(d) if d.is_zero() => {
            return Err(Error::usage(
                "--keep-log 0: the window must be longer than nothing (e.g. --keep-log 30d)",
            ))
        }
        Some(d) => Some(crate::retention::KeepLog {
            text: humantime::format_duration(d).to_string(),
            window: Duration::from_std(d).map_err(|_| Error::usage("--keep-log: too large"))?,
            margin: Duration::from_std(args.keep_log_margin)
                .map_err(|_| Error::usage("--keep-log-margin: too large"))?,
        }),
    };
    if policy.is_empty() {
        if keep_log.is_none() {
            return Err(Error::usage(
                "no retention policy: pass at least one --keep-* option (e.g. --keep-daily 7 --keep-weekly 4) or --keep-log; prune never removes everything by default",
            ));
        }
        // Only the log is pruned: every complete snapshot stays.
        policy.set("keep-last", "unlimited")?;
    }
    let incomplete_older_than = Duration::from_std(args.incomplete_older_than)
        .map_err(|_| Error::usage("--incomplete-older-than: too large"))?;
    Ok(PruneOptions {
        policy,
        group_by: parse_group_by(&args.group_by)?,
        incomplete_older_than,
        allow_empty_group: args.allow_empty_group,
        keep_log,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::error::exit;

    fn parse(line: &str) -> Result<PruneOptions> {
        #[derive(Parser)]
        enum Line {
            Prune(PruneArgs),
        }
        let Line::Prune(args) =
            Line::try_parse_from(format!("offset-vault prune {line}").split_whitespace())
                .map_err(|e| Error::usage(e.to_string()))?;
        options(&args.policy)
    }

    #[test]
    fn flags_become_a_policy_or_a_clear_refusal() {
        // (command line, Ok(policy in words) or the words of the refusal)
        let cases = [
            ("--keep-daily 7", Ok("keep 7 daily")),
            (
                "--keep-last 3 --keep-weekly unlimited --keep-within 1y2m",
                Ok("keep 3 last, all weekly, all within 1y2m of the newest"),
            ),
            (
                "--keep-within-daily 10d --keep-tag release=yes",
                Ok("keep daily within 10d, tagged release=yes"),
            ),
            ("", Err("no retention policy")),
            ("--execute", Err("no retention policy")),
            ("--keep-daily 0", Err("no retention policy")),
            ("--keep-daily many", Err("--keep-daily many")),
            ("--keep-within 2w", Err("unknown unit 'w'")),
            ("--keep-tag release", Err("--keep-tag release")),
            ("--keep-last 1 --group-by host", Err("--group-by host")),
            ("--keep-log 7d", Ok("keep all last")),
            ("--keep-log 0s", Err("--keep-log 0")),
            ("--keep-log soon", Err("soon")),
        ];
        for (line, want) in cases {
            match (parse(line), want) {
                (Ok(o), Ok(words)) => assert_eq!(o.policy.describe(), words, "{line}"),
                (Err(e), Err(words)) => {
                    assert_eq!(e.exit_code(), exit::USAGE, "{line}");
                    assert!(e.to_string().contains(words), "{line}: {e}");
                }
                (got, want) => panic!("{line}: got {got:?}, want {want:?}"),
            }
        }
        let o = parse("--keep-last 1").unwrap();
        assert!(o.keep_log.is_none());
        let o = parse("--keep-daily 7 --keep-log 36h").unwrap();
        let k = o.keep_log.unwrap();
        assert_eq!(
            (k.text.as_str(), k.window, k.margin),
            (
                "1day 12h",
                Duration::hours(36),
                Duration::milliseconds(crate::log::at::BEFORE_BASE_MS)
            )
        );
        let o = parse("--keep-log 1d --keep-log-margin 0s").unwrap();
        assert_eq!(o.keep_log.unwrap().margin, Duration::zero());
        assert!(parse("--keep-last 1 --keep-log-margin 1m").is_err());
        let o = parse("--keep-last 1").unwrap();
        assert_eq!(o.incomplete_older_than, Duration::days(1));
        assert_eq!(
            o.group_by,
            [
                crate::retention::GroupBy::Cluster,
                crate::retention::GroupBy::Kind,
                crate::retention::GroupBy::Selection
            ]
        );
    }
}
