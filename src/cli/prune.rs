//! `offset-vault prune`: the plan (a dry run) or, with `--execute`, the deletions; with
//! `--keep-log`, of the commit-log archive too.

use std::path::PathBuf;

use chrono::{Duration, Utc};
use clap::Args;
use serde_json::json;

use super::output::print_json;
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::prune as command;
use crate::config::parse_duration;
use crate::config::OutputFormat;
use crate::error::{Error, Result};
use crate::retention::log::{LogPlan, OrphanAction};
use crate::retention::{
    self, parse_group_by, LeftoverAction, PlannedGroup, Policy, PruneOptions, PrunePlan,
};
use crate::serve::metrics::{one_shot_textfile, Outcome};

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

pub(super) const PRUNE_EXAMPLES: &str = "\
Examples:
  # What a policy would delete (a dry run)
  offset-vault prune --keep-hourly 48 --keep-daily 30 --keep-monthly 12

  # Delete; keep every snapshot of the last two days and those tagged release=yes
  offset-vault prune --keep-within 2d --keep-daily 14 --keep-tag release=yes --execute

  # One policy over all snapshots of a cluster, whatever they selected
  offset-vault prune --keep-last 100 --group-by cluster --execute

The rules are those of restic forget: counts are of periods that hold a snapshot, counted
from the newest; weeks are ISO weeks; --keep-within is measured from the newest snapshot;
an unused count also keeps the oldest snapshot. Incomplete snapshots (no manifest) older than
--incomplete-older-than are removed too. With no --keep-* option, prune refuses (exit 2).
A group of which the policy would keep nothing (a mistyped --keep-tag, say) is refused: none
of its snapshots is deleted, the other groups are pruned, and prune exits 15, in the dry run
too. --allow-empty-group lets such a group be emptied.";

/// The policy and options from the flags, checked before any I/O.
pub(super) fn options(args: &PolicyArgs) -> Result<PruneOptions> {
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

pub async fn run(cli: &Cli, args: &PruneArgs) -> Result<i32> {
    let started = std::time::Instant::now();
    // Bad input is refused before the trail is opened.
    options(&args.policy)?;
    let trail = super::audit::begin(cli, EventType::Prune, args.execute, false).await?;
    let mut facts = Facts::default();
    let result = execute_or_plan(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    let outcome = Outcome::of(&result);
    one_shot_textfile(
        args.metrics_textfile.as_deref(),
        "prune",
        outcome,
        started.elapsed(),
        |_| {},
    )?;
    result
}

async fn execute_or_plan(cli: &Cli, args: &PruneArgs, facts: &mut Facts) -> Result<i32> {
    let opts = options(&args.policy)?;
    let store = cli.global.open_existing_store()?;
    let prepared = retention::prepare(&store, &opts, Utc::now()).await?;
    let plan = &prepared.plan;
    if !args.execute {
        match cli.global.output {
            OutputFormat::Json => print_json(&json!({
                "store": store.url(),
                "executed": false,
                "plan": plan,
                "log": prepared.log,
                "connect_log": prepared.connect_log,
            })),
            OutputFormat::Table => {
                print_plan(plan);
                print_log_plans(&prepared);
                crate::noteln!(
                    "dry run: nothing was deleted; add --execute to delete what is marked remove"
                );
            }
        }
        return Ok(report_refused(plan, false));
    }
    if cli.global.output == OutputFormat::Table {
        print_plan(plan);
        print_log_plans(&prepared);
    }
    let pruned = retention::execute(&store, &prepared).await;
    command::audit_facts(facts, plan, &pruned);
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "store": store.url(),
            "executed": true,
            "plan": plan,
            "deleted": pruned.deleted,
            "failed": pruned.failed,
            "log": prepared.log,
            "log_deleted": pruned.log,
            "connect_log": prepared.connect_log,
            "connect_log_deleted": pruned.connect_log,
        })),
        OutputFormat::Table => print_pruned(&pruned, store.url()),
    }
    if let Some(e) = command::failure(&pruned, store.url()) {
        return Err(e);
    }
    Ok(report_refused(plan, true))
}

/// What an executed prune deleted, and what it could not.
fn print_pruned(pruned: &retention::Pruned, store: &str) {
    crate::outln!("deleted {} snapshot(s) from {store}", pruned.deleted.len());
    for f in &pruned.failed {
        crate::outln!("  ! {}: {}", f.id, f.error);
    }
    if let Some(l) = &pruned.log {
        crate::outln!(
            "deleted {} log segment(s), {} orphan data file(s), {} apply record(s)",
            l.segments.len(),
            l.orphans.len(),
            l.apply_records.len()
        );
    }
    if let Some(l) = &pruned.connect_log {
        crate::outln!(
            "deleted {} segment(s) and {} orphan data file(s) of Connect's offsets topic",
            l.segments.len(),
            l.orphans.len(),
        );
    }
    for f in pruned.log_failures() {
        crate::outln!("  ! {}: {}", f.id, f.error);
    }
}

/// Names each refused group on stderr; exit 15 if there is one.
fn report_refused(plan: &PrunePlan, executed: bool) -> i32 {
    for g in plan.refused() {
        let done = if executed {
            "none of its snapshots was deleted"
        } else {
            "none of its snapshots would be deleted"
        };
        crate::alertln!(
            "error: prune refused for group {}: {}; {done}",
            group_label(g),
            g.refused.as_deref().unwrap_or_default()
        );
    }
    command::refused_code(plan)
}

fn group_label(g: &PlannedGroup) -> String {
    if g.key.is_empty() {
        return "(all snapshots)".to_string();
    }
    g.key
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_plan(plan: &PrunePlan) {
    crate::outln!("policy: {}", plan.policy);
    for g in &plan.groups {
        if g.key.is_empty() {
            crate::outln!("\nall snapshots (no grouping)");
        } else {
            crate::outln!("\ngroup {}", group_label(g));
        }
        if g.refused.is_some() {
            crate::outln!("REFUSED: the policy keeps none of these; all are kept");
        }
        let mut t = super::output::table(&["ID", "CREATED (UTC)", "ACTION", "KEPT BY"]);
        for d in &g.decisions {
            let (action, why) = match (d.keep, &g.refused) {
                (true, _) => ("keep", d.reasons.join(", ")),
                (false, None) => ("remove", String::new()),
                (false, Some(_)) => ("keep", "refused: group would be empty".to_string()),
            };
            t.add_row(vec![
                d.id.clone(),
                d.time.format("%Y-%m-%d %H:%M:%S").to_string(),
                action.to_string(),
                why,
            ]);
        }
        crate::outln!("{t}");
    }
    if !plan.leftovers.is_empty() {
        crate::outln!("\nincomplete or unreadable");
        let mut t = super::output::table(&["ID", "ACTION", "WHY"]);
        for l in &plan.leftovers {
            t.add_row(vec![
                l.id.clone(),
                match l.action {
                    LeftoverAction::Remove => "remove",
                    LeftoverAction::KeepYoung => "keep",
                    LeftoverAction::LeaveAlone => "leave alone",
                }
                .to_string(),
                l.why.clone(),
            ]);
        }
        crate::outln!("{t}");
    }
    let s = &plan.summary;
    crate::outln!(
        "{} group(s): keep {}, remove {}; incomplete: remove {}, keep {} (grace period); {} unreadable left alone",
        s.groups, s.keep, s.remove, s.incomplete_remove, s.incomplete_keep, s.left_alone
    );
    if s.refused_groups > 0 {
        crate::outln!(
            "refused: {} group(s) of which the policy keeps nothing ({} snapshot(s) kept whole)",
            s.refused_groups,
            s.refused_snapshots
        );
    }
}

fn day(t: Option<chrono::DateTime<Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".to_string())
}

/// The archive's parts of the plan: the commit log's, and Connect's offsets topic's if any.
fn print_log_plans(prepared: &crate::retention::Prepared) {
    let Some(plan) = &prepared.log else {
        crate::outln!("\ncommit-log archive: not pruned (pass --keep-log DURATION to bound it)");
        return;
    };
    print_log_plan("commit-log archive", plan);
    if let Some(plan) = &prepared.connect_log {
        print_log_plan("archive of Connect's offsets topic", plan);
    }
}

/// One lane's part of the plan: the window, each segment removed, orphans, apply records.
fn print_log_plan(title: &str, plan: &LogPlan) {
    let w = &plan.window;
    crate::outln!(
        "\n{title}: keep {} (from {}); window base {}, log kept from {} ({} before it): {}",
        plan.keep_log,
        w.window_start.format("%Y-%m-%d %H:%M:%S"),
        w.base.format("%Y-%m-%d %H:%M:%S"),
        w.keep_from.format("%Y-%m-%d %H:%M:%S"),
        humantime::format_duration((w.base - w.keep_from).to_std().unwrap_or_default()),
        w.why
    );
    let mut t = super::output::table(&[
        "PARTITION",
        "OFFSETS",
        "FIRST RECORD (UTC)",
        "LAST RECORD (UTC)",
        "ACTION",
    ]);
    for s in plan.segments() {
        t.add_row(vec![
            s.partition.to_string(),
            format!("{}..{}", s.start, s.next),
            if s.gap {
                "(recorded gap)".to_string()
            } else {
                day(s.first_record_at)
            },
            day(s.last_record_at),
            "remove".to_string(),
        ]);
    }
    if plan.summary.remove_segments > 0 {
        crate::outln!("{t}");
    }
    for c in plan.chains.iter().filter(|c| c.refused.is_some()) {
        crate::outln!(
            "partition {}: {}",
            c.partition,
            c.refused.as_deref().unwrap_or_default()
        );
    }
    for o in &plan.orphans {
        let action = match o.action {
            OrphanAction::Remove => "remove",
            _ => "keep",
        };
        crate::outln!("orphan {}: {action} ({})", o.key, o.why);
    }
    for r in &plan.apply_records {
        crate::outln!("apply record {r}: remove (older than the kept log)");
    }
    let s = &plan.summary;
    crate::outln!(
        "{} partition(s), {} index entries: remove {} segment(s), {} orphan(s) (keep {}), {} apply record(s); {} partition(s) left whole",
        s.partitions,
        s.entries,
        s.remove_segments,
        s.remove_orphans,
        s.keep_orphans,
        s.remove_apply_records,
        s.refused_partitions
    );
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;
    use crate::error::exit;

    fn parse(line: &str) -> Result<PruneOptions> {
        let cli = Cli::try_parse_from(format!("offset-vault prune {line}").split_whitespace())
            .map_err(|e| Error::usage(e.to_string()))?;
        match cli.command {
            Command::Prune(a) => options(&a.policy),
            other => panic!("{other:?}"),
        }
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
