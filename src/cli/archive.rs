//! `diff`, `prune`, `export` and `import`: the archive's life cycle. The arguments are here; each
//! command's work is in its own file (`diff.rs`, `prune.rs`, `csv.rs`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{parse_duration, Cli};
use crate::error::Result;
use crate::snapshot::Format;

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Snapshot ids (or unique prefixes): the old side, then the new side.
    #[arg(value_name = "SNAPSHOT", num_args = 0..=2)]
    pub ids: Vec<String>,
    /// The newest complete snapshot holding the selected groups and connectors (the old side
    /// with --live, else the new side).
    #[arg(long)]
    pub latest: bool,
    /// The newest complete snapshot created at or before TIME (RFC 3339, a date, or a duration
    /// such as 2h meaning two hours ago); the old side.
    #[arg(long, value_name = "TIME")]
    pub before: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, or a
    /// duration such as 15m ago): the newest snapshot before TIME plus every commit the
    /// commit-log archive (`follow`) holds up to TIME. A side after the ids and --before, before
    /// --latest and --live (twice: two instants). Connectors are not compared with such a side.
    #[arg(long, value_name = "TIME")]
    pub at: Vec<String>,
    /// Compare with the committed offsets in the cluster now (the new side).
    #[arg(long)]
    pub live: bool,
    /// Only this group (repeatable).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Only this connector and its sink group (repeatable).
    #[arg(long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Only partitions of this topic (repeatable).
    #[arg(long = "topic", value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Only this partition number (repeatable; needs --topic).
    #[arg(long = "partition", value_name = "N")]
    pub partitions: Vec<i32>,
    /// Also list the partitions that did not change.
    #[arg(long)]
    pub all: bool,
    /// Exit with 1 when there are differences and 0 when there are none.
    #[arg(long)]
    pub exit_code: bool,
    /// Compare with a cluster other than the one the snapshot was taken on.
    #[arg(long)]
    pub allow_other_cluster: bool,
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
    pub incomplete_older_than: Duration,
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
    pub keep_log: Option<Duration>,
    /// With --keep-log: how much of the log before the window's base is kept too. `--at`
    /// replays that much before its base snapshot, so that the offsets of a transaction open
    /// while the snapshot was taken are not lost; the default is Kafka's default
    /// transaction.max.timeout.ms. Lower it only for a cluster whose transactions time out
    /// sooner (or that has none).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = parse_duration, requires = "keep_log")]
    pub keep_log_margin: Duration,
}

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "at", conflicts_with = "at")]
    pub id: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, or a
    /// duration such as 15m ago): the newest snapshot before TIME plus every commit the
    /// commit-log archive (`follow`) holds up to TIME. Refused (exit 7) when the archive does not
    /// cover TIME; a group with no committed offset at TIME is named on stderr and not written.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Only this group (repeatable). Default: every group of the snapshot except share groups
    /// (whose start offsets are not consumer offsets); name a share group to export it (not
    /// with --at: the commit log does not hold a share group's positions).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The CSV file, as `kafka-consumer-groups --reset-offsets ... --export` writes it.
    pub file: PathBuf,
    /// The group of a `topic,partition,offset` file; for a `group,topic,partition,offset`
    /// file, import only this group (repeatable).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// A label KEY=VALUE stored in the manifest (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// File format of the offsets in the snapshot.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub async fn cmd_diff(cli: &Cli, args: &DiffArgs) -> Result<i32> {
    super::diff::run(cli, args).await
}

pub async fn cmd_prune(cli: &Cli, args: &PruneArgs) -> Result<i32> {
    super::prune::run(cli, args).await
}

pub async fn cmd_export(cli: &Cli, args: &ExportArgs) -> Result<i32> {
    super::csv::export(cli, args).await
}

pub async fn cmd_import(cli: &Cli, args: &ImportArgs) -> Result<i32> {
    // Bad input is refused before the trail is opened: a refused import writes nothing.
    super::csv::check_import(args)?;
    let trail = super::audit::begin(cli, crate::audit::EventType::Import, true, true).await?;
    let mut facts = crate::audit::Facts::default();
    let result = super::csv::import(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    result
}

pub(super) const DIFF_EXAMPLES: &str = "\
Examples:
  # What moved between two snapshots (ids or unique prefixes; the first is the old side)
  offset-vault diff 20261201T0930 20261201T1030

  # What moved since the newest snapshot, for one connector; 1 if anything did
  offset-vault diff --latest --live --connector orders-sink --exit-code

  # Since an hour ago, every partition listed, as JSON
  offset-vault diff --before 1h --latest --all --output json

  # The offsets exactly as they were at an instant against now; or two instants
  offset-vault diff --at 2026-12-03T10:03:17.250Z --live --group billing
  offset-vault diff --at 2h --at 1h --group billing

With --exit-code: 0 when there are no differences, 1 when there are (other exit codes: offset-vault --help).";

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

pub(super) const EXPORT_EXAMPLES: &str = "\
Examples:
  # One group: topic,partition,offset, as kafka-consumer-groups --from-file reads it
  offset-vault export 20261201T0930 --group billing --file billing.csv
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --from-file billing.csv --execute

  # Several groups: group,topic,partition,offset, on standard output
  offset-vault export 20261201T0930 > offsets.csv

  # The offsets exactly as they were at an instant (snapshot + commit-log archive)
  offset-vault export --at 2026-12-03T10:03:17.250Z --group billing --file billing.csv";

pub(super) const IMPORT_EXAMPLES: &str = "\
Examples:
  # A file exported by kafka-consumer-groups for one group
  kafka-consumer-groups --bootstrap-server kafka:9092 --group billing --all-topics \\
      --reset-offsets --to-current --export --dry-run > billing.csv
  offset-vault import billing.csv --group billing --tag source=runbook

  # Several groups in one file, with a tag; restore it later by its id (restore ID --execute):
  # --latest never picks an import
  offset-vault import all-groups.csv --tag source=runbook";
