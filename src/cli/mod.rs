//! The command line: argument types (clap), validation into library options, and printing.

mod at;
mod audit;
mod commands;
mod completions;
pub mod config;
mod csv;
mod diff;
mod expiring;
mod follow;
mod guard;
mod log;
mod mcp;
mod mirror;
pub mod output;
mod prune;
mod reset;
mod restore;
mod serve;
mod sign;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{ClientProperties, KafkaSettings};
use crate::sign::{Keys, PublicKey, SecretKey};
use crate::snapshot::{Format, Selection};
use crate::store::Store;

pub use commands::run;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (for restore without --execute: the plan can be applied)
  1  unexpected error; for diff --exit-code: there are differences
  2  usage error: bad arguments or configuration, nothing selected
  3  Kafka, Kafka Connect or the store could not be reached or refused a request
  4  a named group, connector, snapshot or store directory does not exist
  5  integrity failure: a snapshot's or plan file's checksum, size, id or format does not match
  6  restore or reset blocked: an active group, or a connector that could not be stopped
  7  restore or reset plan not applicable: targets out of range, or partitions missing;
     also an --at TIME (restore, show, diff, export) that the commit-log archive does not cover
  8  restore applied, but the offsets read back differ from the plan
  9  the snapshot was taken on another Kafka cluster
 10  authentication or authorization failed (SASL, ACLs, HTTP 401/403, store credentials)
 11  the plan changed since it was reviewed (--from-plan, or after stopping connectors); nothing changed
 12  the restore (or reset) stopped partway: some offsets may have changed; the undo snapshot restores them
 13  a connector stopped by the restore could not be returned to its state (the command is printed)
 14  restore applied and verified, but offsets moved again during --settle
 15  prune refused a group whose every snapshot the policy would remove (nothing of it deleted)
 16  reset or restore applied and verified, but a connector or task failed during --watch
 17  --from-plan with --require-approvals: too few valid approvals by trusted keys; nothing changed
130  restore or reset interrupted (Ctrl-C) before anything changed; connectors were resumed";

/// Back up Kafka consumer-group and Kafka Connect offsets as checksummed snapshots, and restore
/// them as a safe, verified offset reset.
#[derive(Debug, Parser)]
#[command(name = "offset-vault", version, after_long_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// Human-readable tables.
    #[default]
    Table,
    /// JSON on stdout, for scripts.
    Json,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Kafka bootstrap servers (HOST:PORT[,HOST:PORT...]).
    #[arg(
        help_heading = "Connection",
        short = 'b',
        long,
        global = true,
        env = "OFFSET_VAULT_BOOTSTRAP_SERVER"
    )]
    pub bootstrap_server: Option<String>,

    /// Kafka Connect REST URL; repeat (or separate with commas) for several Connect clusters.
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_CONNECT_URL",
        value_delimiter = ','
    )]
    pub connect_url: Vec<String>,

    /// Kafka client properties file, as for Kafka's own tools (security.protocol, sasl.*, ssl.*).
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_COMMAND_CONFIG",
        value_name = "FILE"
    )]
    pub command_config: Option<PathBuf>,

    /// librdkafka property KEY=VALUE (repeatable); overrides --command-config.
    #[arg(
        help_heading = "Connection",
        short = 'X',
        global = true,
        value_name = "KEY=VALUE"
    )]
    pub property: Vec<String>,

    /// Where snapshots live: a directory, file:///path, or s3://bucket/prefix (s3a:// too;
    /// credentials and endpoint from AWS_* variables).
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_STORE",
        value_name = "URL"
    )]
    pub store: Option<String>,

    /// Output format.
    #[arg(
        help_heading = "Output",
        long,
        global = true,
        value_enum,
        default_value_t,
        env = "OFFSET_VAULT_OUTPUT"
    )]
    pub output: OutputFormat,

    /// Bound on each request to Kafka, Kafka Connect or the store (e.g. 10s, 1m).
    #[arg(help_heading = "Connection", long, global = true, default_value = "30s", env = "OFFSET_VAULT_TIMEOUT", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Talk to Kafka through librdkafka only: no direct protocol connection. Offsets are then
    /// read one group per request, and share groups and group configs cannot be read.
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_LIBRDKAFKA_ONLY"
    )]
    pub librdkafka_only: bool,

    /// More logging on stderr (-v info, -vv debug, -vvv with librdkafka's own logs).
    #[arg(help_heading = "Output", short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only errors on stderr.
    #[arg(help_heading = "Output", short, long, global = true)]
    pub quiet: bool,

    /// Sign every snapshot, commit-log segment, plan file and audit event written with this
    /// Ed25519 secret key (a PEM file from `keygen`, or the PEM text itself).
    #[arg(
        help_heading = "Signing",
        long,
        global = true,
        env = "OFFSET_VAULT_SIGNING_KEY",
        value_name = "FILE",
        hide_env_values = true
    )]
    pub signing_key: Option<String>,

    /// Accept only snapshots, segments and plan files signed by this public key (repeatable, or
    /// comma-separated): verify, show, diff, export and restore refuse anything else (exit 5).
    #[arg(
        help_heading = "Signing",
        long,
        global = true,
        env = "OFFSET_VAULT_TRUSTED_KEYS",
        value_delimiter = ',',
        value_name = "FILE"
    )]
    pub trusted_key: Vec<String>,

    /// Configuration file with named contexts [default: $XDG_CONFIG_HOME/offset-vault/config.toml].
    #[arg(help_heading = "Connection", long, global = true, env = config::ENV_CONFIG, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The context of the configuration file to use [default: its current-context].
    #[arg(help_heading = "Connection", long, global = true, env = config::ENV_CONTEXT, value_name = "NAME")]
    pub context: Option<String>,

    /// Whether a command that changes offsets or snapshots (restore and reset --execute, prune
    /// --execute, import, guard) must first record itself in the store's audit trail:
    /// `required` fails before any change when audit/ cannot be written; `optional` warns and
    /// goes on.
    #[arg(
        help_heading = "Audit",
        long = "audit",
        global = true,
        value_enum,
        default_value_t,
        env = "OFFSET_VAULT_AUDIT",
        value_name = "MODE"
    )]
    pub audit: crate::audit::Mode,

    /// Also produce each audit event written to this Kafka topic (key: the event id; header
    /// content-type: application/cloudevents+json). A failed produce is a warning: the store
    /// holds the record.
    #[arg(
        help_heading = "Audit",
        long,
        global = true,
        env = "OFFSET_VAULT_AUDIT_TOPIC",
        value_name = "TOPIC"
    )]
    pub audit_topic: Option<String>,

    /// Where the command came from, recorded in its audit events (`mcp` for the commands the
    /// MCP server runs).
    #[arg(long, global = true, hide = true, value_name = "ORIGIN")]
    pub via: Option<String>,

    /// What the configuration file added, and where each setting came from.
    #[arg(skip)]
    pub applied: config::Applied,
}

pub(crate) fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{e} (expected e.g. 30s, 2m)"))
}

/// A size in bytes: a number with an optional unit (`16MiB`, `512KiB`, `1GB`, `4096`).
pub(crate) fn parse_size(s: &str) -> std::result::Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("{e} (expected e.g. 16MiB, 512KiB)"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Capture the committed offsets of groups and connectors into a new snapshot.
    #[command(after_long_help = SNAPSHOT_EXAMPLES)]
    Snapshot(SnapshotArgs),
    /// List the snapshots in the store, newest first.
    #[command(after_long_help = LIST_EXAMPLES)]
    List(ListArgs),
    /// Show the content of one snapshot (verified first), or the offsets at an instant (--at).
    #[command(after_long_help = SHOW_EXAMPLES)]
    Show(ShowArgs),
    /// Re-hash every file of one or all snapshots against their manifests and ids.
    #[command(after_long_help = VERIFY_EXAMPLES)]
    Verify(VerifyArgs),
    /// Compare two snapshots, or a snapshot with the committed offsets now.
    #[command(after_long_help = diff::DIFF_EXAMPLES)]
    Diff(diff::DiffArgs),
    /// Reset offsets with kafka-consumer-groups' scenarios (--to-earliest, --shift-by, ...):
    /// a plan first, connectors stopped and resumed, a snapshot before the first change.
    #[command(after_long_help = reset::EXAMPLES)]
    Reset(reset::ResetArgs),
    /// Plan, and with --execute apply, a verified offset reset back to a snapshot.
    #[command(after_long_help = RESTORE_EXAMPLES)]
    Restore(RestoreArgs),
    /// Archive every commit of __consumer_offsets as sealed segments, continuously (or up to
    /// the end of the log with --once).
    #[command(after_long_help = follow::EXAMPLES)]
    Follow(follow::FollowArgs),
    /// Empty groups whose offsets the broker expires soon (offsets.retention.minutes): list
    /// them and snapshot them, tagged expiry-guard=true.
    #[command(after_long_help = expiring::EXAMPLES)]
    Expiring(expiring::ExpiringArgs),
    /// A group's archived offset changes (from `follow`), per partition.
    #[command(after_long_help = log::HISTORY_EXAMPLES)]
    History(log::HistoryArgs),
    /// Delete old snapshots by a retention policy (restic's --keep-* rules); a dry run unless
    /// --execute.
    #[command(after_long_help = prune::PRUNE_EXAMPLES)]
    Prune(prune::PruneArgs),
    /// Write a snapshot's offsets, or those at an instant (--at), as kafka-consumer-groups
    /// --from-file CSV.
    #[command(after_long_help = csv::EXPORT_EXAMPLES)]
    Export(csv::ExportArgs),
    /// Store kafka-consumer-groups CSV as a snapshot of kind import.
    #[command(after_long_help = csv::IMPORT_EXAMPLES)]
    Import(csv::ImportArgs),
    /// Take a snapshot, run a command, then report which offsets moved and record it; print the
    /// rollback if it failed and offsets moved.
    #[command(after_long_help = GUARD_EXAMPLES)]
    Guard(guard::GuardArgs),
    /// Run as a service: the follower, scheduled snapshots, prune and verify, with Prometheus
    /// metrics and health checks over HTTP; each scheduled run at most once per slot across
    /// replicas.
    #[command(after_long_help = serve::EXAMPLES)]
    Serve(Box<serve::ServeArgs>),
    /// Approve a plan file with your key (a second pair of eyes; see restore
    /// --require-approvals).
    #[command(after_long_help = sign::APPROVE_EXAMPLES)]
    Approve(sign::ApproveArgs),
    /// Make an Ed25519 key pair for --signing-key and --trusted-key.
    #[command(after_long_help = sign::KEYGEN_EXAMPLES)]
    Keygen(sign::KeygenArgs),
    /// List the audit trail: one event for every change made or refused (restore, reset,
    /// prune, import, guard, follow's gaps), and commands that never wrote their outcome.
    #[command(after_long_help = audit::EXAMPLES)]
    Audit(audit::AuditArgs),
    /// Show the effective settings, list the contexts, or switch the current context.
    #[command(subcommand, after_long_help = config::EXAMPLES)]
    Config(config::ConfigCommand),
    /// Serve the Model Context Protocol (stdio, or streamable HTTP with --listen) for AI
    /// assistants: read-only and planning tools, and with --allow-apply one tool that applies a
    /// reviewed plan by its hash.
    #[command(after_long_help = mcp::EXAMPLES)]
    Mcp(mcp::McpArgs),
    /// Print a shell completion script.
    #[command(after_long_help = COMPLETIONS_EXAMPLES)]
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write one page per command into a directory.
    #[command(after_long_help = MAN_EXAMPLES)]
    Man(completions::ManArgs),
}

impl Command {
    /// False for the commands that must work while the configuration names a context that does
    /// not exist (to list the contexts and switch to one), and for those that need no settings.
    pub fn needs_context(&self) -> bool {
        !matches!(
            self,
            Command::Config(
                config::ConfigCommand::ListContexts | config::ConfigCommand::UseContext { .. }
            ) | Command::Completions(_)
                | Command::Man(_)
        )
    }
}

const GUARD_EXAMPLES: &str = "\
Examples:
  # Snapshot the connector, run the deploy, and record its exit status and what moved
  offset-vault guard --connector orders-sink --tag deploy=1234 -- ./deploy.sh orders-sink

  # The command sees the snapshot id in OFFSET_VAULT_SNAPSHOT
  offset-vault guard --group billing -- sh -c 'echo \"rollback point: $OFFSET_VAULT_SNAPSHOT\"'";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  offset-vault completions bash > /etc/bash_completion.d/offset-vault
  offset-vault completions zsh > \"${fpath[1]}/_offset-vault\"
  offset-vault completions fish > ~/.config/fish/completions/offset-vault.fish";

const MAN_EXAMPLES: &str = "\
Examples:
  offset-vault man | man -l -
  offset-vault man --dir /usr/local/share/man/man1";

const SNAPSHOT_EXAMPLES: &str = "\
Examples:
  # Before a deploy: the connector, its sink group, and a tag to find it again
  offset-vault -b kafka:9092 --connect-url http://connect:8083 --store s3://backups/offsets \\
      snapshot --connector orders-sink --tag deploy=1234

  # Every group and connector, for a cron job; JSON summary for the log
  offset-vault snapshot --all-groups --all-connectors --output json

  # Groups by pattern, one topic only, with last-record timestamps, as JSON files
  offset-vault snapshot --group-pattern 'billing-.*' --topic invoices --with-timestamps --format json

  # Keep the connectors' secrets too, only encrypted to an age key (age-keygen -y KEY_FILE)
  offset-vault snapshot --all-connectors --encrypt-to age1...";

const LIST_EXAMPLES: &str = "\
Examples:
  offset-vault --store ./vault list
  offset-vault list --group connect-orders-sink --since 24h
  offset-vault list --tag deploy=1234 --output json";

const SHOW_EXAMPLES: &str = "\
Examples:
  offset-vault show 20261201T0930          # a unique prefix of the id is enough
  offset-vault show 20261201T093005.042Z-3f9a1c0b7d2e4a55 --output json

  # A group's offsets exactly as they were at an instant (snapshot + commit-log archive)
  offset-vault show --at 2026-12-03T10:03:17.250Z --group billing
  offset-vault show --at 15m --connector orders-sink --output json";

const VERIFY_EXAMPLES: &str = "\
Examples:
  offset-vault verify 20261201T0930
  offset-vault verify --all               # every snapshot, incomplete ones included";

const RESTORE_EXAMPLES: &str = "\
Examples:
  # The plan only (a dry run): what would change, per partition
  offset-vault restore --connector orders-sink --before 2026-12-01T10:00:00Z

  # Apply it: stop the connector, take an undo snapshot, reset, verify, resume
  offset-vault restore --connector orders-sink --before 2026-12-01T10:00:00Z \\
      --stop-connectors --execute

  # One group, one topic, from a given snapshot; clamp targets the log no longer holds
  offset-vault restore 20261201T0930 --group billing --topic invoices \\
      --on-out-of-range clamp --execute

  # Onto a recreated topic: translate offsets by record time
  offset-vault restore --latest --group billing --by-timestamp

  # Fail over to a MirrorMaker 2 replica (snapshots taken with --with-timestamps)
  offset-vault -b replica:9092 restore --latest --group billing --allow-other-cluster \\
      --replication-policy default:primary --execute

  # Rehearse on staging first: staging is changed, production only read
  offset-vault -b prod:9092 restore --latest --group billing --rehearse-on staging:9092 \\
      --replication-policy identity

  # A deleted connector, created again with the secrets kept encrypted (snapshot --encrypt-to)
  offset-vault restore --latest --connector orders-sink --recreate-connectors \\
      --identity vault-identity.txt --execute";

/// Which groups and connectors.
#[derive(Debug, Args, Clone, Default)]
pub struct WhoArgs {
    /// A consumer group (repeatable).
    #[arg(help_heading = "Selection", long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Consumer groups whose whole id matches this regular expression.
    #[arg(help_heading = "Selection", long, value_name = "REGEX")]
    pub group_pattern: Option<String>,
    /// Every consumer group of the cluster.
    #[arg(help_heading = "Selection", long)]
    pub all_groups: bool,
    /// A Kafka Connect connector (repeatable); a sink connector's consumer group comes with it.
    #[arg(help_heading = "Selection", long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Every connector of every --connect-url.
    #[arg(help_heading = "Selection", long)]
    pub all_connectors: bool,
    /// With --all-groups or --group-pattern, only groups of these types (classic, consumer,
    /// share, streams; comma-separated). Default: every type. Kafka Connect's worker groups
    /// are left out of --all-groups and patterns; name one with --group to capture it.
    #[arg(
        help_heading = "Selection",
        long,
        value_name = "TYPES",
        value_delimiter = ','
    )]
    pub group_type: Vec<String>,
}

/// Which groups and connectors to capture, and of which topics.
#[derive(Debug, Args, Clone, Default)]
pub struct SelectArgs {
    #[command(flatten)]
    pub who: WhoArgs,
    /// Only these topics (repeatable).
    #[arg(help_heading = "Selection", long = "topic", value_name = "TOPIC")]
    pub topics: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// A label KEY=VALUE stored in the manifest (repeatable).
    #[arg(help_heading = "Snapshot", long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// File format of the offsets.
    #[arg(help_heading = "Snapshot", long, value_enum, default_value_t)]
    pub format: Format,
    /// Keep connector config values that look like secrets, in clear (they are redacted by
    /// default). With --encrypt-to the secrets are kept only encrypted, never in clear.
    #[arg(help_heading = "Snapshot", long)]
    pub include_secrets: bool,
    /// Also keep the full connector configs, secrets included, encrypted with age to this X25519
    /// recipient (age1..., repeatable or comma-separated), in connectors.secrets.age beside the
    /// redacted connectors.json; `restore --recreate-connectors --identity FILE` uses them.
    /// Secrets are then never written in clear (also with --include-secrets). Context key:
    /// encrypt-to.
    #[arg(
        help_heading = "Snapshot",
        long = "encrypt-to",
        value_name = "RECIPIENT",
        env = "OFFSET_VAULT_ENCRYPT_TO",
        value_delimiter = ','
    )]
    pub encrypt_to: Vec<String>,
    /// Like --encrypt-to, with the recipients read from FILE: one age1... key a line, `#`
    /// comments and blank lines skipped (as `age-keygen -y` prints them).
    #[arg(
        help_heading = "Snapshot",
        long = "encrypt-to-file",
        value_name = "FILE"
    )]
    pub encrypt_to_file: Vec<PathBuf>,
    /// Also record the timestamp of each group's last consumed record (one extra read per
    /// partition), so a restore can be translated by time onto another cluster.
    #[arg(help_heading = "Snapshot", long)]
    pub with_timestamps: bool,
    /// Skip named groups or connectors that do not exist instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub allow_missing: bool,
    /// When some part cannot be read (a connector's or group's offsets, a partition's log
    /// range), store the snapshot marked partial with the reasons instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub allow_partial: bool,
    /// Store an empty snapshot when the selection matches nothing, instead of failing (exit 2).
    #[arg(help_heading = "Safety", long)]
    pub allow_empty: bool,
    /// Also write the metrics in Prometheus text format to PATH, atomically, for node_exporter's
    /// textfile collector (job="snapshot"; with serve, after every run).
    #[arg(help_heading = "Output", long, value_name = "PATH")]
    pub metrics_textfile: Option<PathBuf>,
}

impl SnapshotArgs {
    /// The capture options, checked (no I/O). `connect` is the number of Connect URLs.
    pub fn capture_options(&self, connect: usize) -> Result<crate::snapshot::CaptureOptions> {
        let mut selection = self.select.to_selection();
        selection.allow_missing = self.allow_missing;
        selection.with_timestamps = self.with_timestamps;
        crate::snapshot::capture::validate(&selection, connect)?;
        Ok(crate::snapshot::CaptureOptions {
            selection,
            tags: parse_tags(&self.tags)?,
            format: self.format,
            include_secrets: self.include_secrets,
            encrypt_to: self.recipients()?,
            allow_partial: self.allow_partial,
            allow_empty: self.allow_empty,
            ..Default::default()
        })
    }
}

impl SnapshotArgs {
    /// The recipients of --encrypt-to and --encrypt-to-file, checked (a malformed one is a
    /// usage error before anything is read); `None` when neither is given.
    pub fn recipients(&self) -> Result<Option<crate::snapshot::secrets::Recipients>> {
        use crate::snapshot::secrets::Recipients;
        let given: Vec<&String> = self
            .encrypt_to
            .iter()
            .filter(|v| !v.trim().is_empty())
            .collect();
        if given.is_empty() && self.encrypt_to_file.is_empty() {
            return Ok(None);
        }
        let mut keys = Vec::new();
        if !given.is_empty() {
            keys.extend(Recipients::parse(&given, "--encrypt-to")?.keys());
        }
        for path in &self.encrypt_to_file {
            let lines = Recipients::read_file(path)?;
            let from = format!("--encrypt-to-file {}", path.display());
            keys.extend(Recipients::parse(&lines, &from)?.keys());
        }
        Recipients::parse(&keys, "--encrypt-to").map(Some)
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only snapshots that contain this group.
    #[arg(help_heading = "Selection", long)]
    pub group: Option<String>,
    /// Only snapshots that contain this connector.
    #[arg(help_heading = "Selection", long)]
    pub connector: Option<String>,
    /// Only snapshots with this tag KEY=VALUE (repeatable: all must match).
    #[arg(help_heading = "Selection", long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only snapshots created at or after this time (RFC 3339, a date, or a duration like 24h).
    #[arg(help_heading = "Selection", long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only snapshots created at or before this time.
    #[arg(help_heading = "Selection", long, value_name = "TIME")]
    pub until: Option<String>,
    /// Leave out incomplete snapshots (no manifest).
    #[arg(help_heading = "Selection", long)]
    pub complete_only: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "at", conflicts_with = "at")]
    pub id: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, e.g.
    /// 2026-12-03T10:03:17.250Z, or a duration such as 15m ago): the newest snapshot before TIME
    /// plus every commit the commit-log archive (`follow`) holds up to TIME, with where each
    /// group's offsets came from. A group created after that snapshot, which it would have
    /// captured (--all-groups, a matching pattern), is replayed from no offsets; before the first
    /// snapshot the base is the log itself, when the archive begins at its start (offset 0).
    /// Refused (exit 7) when the archive does not cover TIME (a gap is named with its bounds).
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// With --at: only this group (repeatable). Default: every group of the base snapshot.
    #[arg(
        help_heading = "Selection",
        long = "group",
        value_name = "GROUP",
        requires = "at"
    )]
    pub groups: Vec<String>,
    /// With --at: this connector's sink group (repeatable).
    #[arg(
        help_heading = "Selection",
        long = "connector",
        value_name = "NAME",
        requires = "at"
    )]
    pub connectors: Vec<String>,
    /// With --at: only partitions of this topic (repeatable).
    #[arg(
        help_heading = "Selection",
        long = "topic",
        value_name = "TOPIC",
        requires = "at"
    )]
    pub topics: Vec<String>,
    /// With --at: only this partition number (repeatable; needs --topic).
    #[arg(
        help_heading = "Selection",
        long = "partition",
        value_name = "N",
        requires = "topics"
    )]
    pub partitions: Vec<i32>,
    #[command(flatten)]
    pub names: mirror::NamesArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Verify every snapshot in the store, and the commit-log archive and the apply records
    /// (orphan data files and recorded gaps are reported as notes, not failures).
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Snapshot id, or a unique prefix of one (any kind: this is how an undo snapshot is
    /// restored).
    #[arg(required_unless_present_any = ["latest", "before", "at", "from_plan"], conflicts_with_all = ["latest", "before"])]
    pub id: Option<String>,
    /// Use the newest complete snapshot-kind snapshot that holds the selected groups and
    /// connectors (undo and pre-reset snapshots only with --include-undo, --include-pre-reset).
    #[arg(help_heading = "Snapshot", long, conflicts_with = "before")]
    pub latest: bool,
    /// Use the newest complete snapshot-kind snapshot created at or before TIME (RFC 3339, a
    /// date, or a duration such as 2h meaning two hours ago): the committed positions the groups
    /// had then. (`reset --to-datetime TIME` is another thing: the first record whose timestamp
    /// is at or after TIME.)
    #[arg(help_heading = "Snapshot", long, value_name = "TIME")]
    pub before: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, e.g.
    /// 2026-12-03T10:03:17.250Z, or a duration such as 15m ago): the newest snapshot before TIME
    /// plus every commit the commit-log archive (`follow`) holds up to TIME. A group or
    /// connector created after that snapshot, which it would have captured (--all-groups,
    /// --all-connectors, a matching pattern), is replayed from no offsets (a connector's config
    /// comes from the oldest later snapshot that has it); before the first snapshot the base is
    /// the log itself, when the archive begins at its start (offset 0). Refused (exit 7) when
    /// the archive does not cover TIME; a gap is named with its bounds. With --plan-file, the
    /// reviewed plan is replayed at the same instant by --from-plan. (`reset --to-datetime TIME`
    /// is another thing: the first record whose timestamp is at or after TIME.)
    #[arg(help_heading = "Snapshot", long, value_name = "TIME", conflicts_with_all = ["id", "latest", "before"])]
    pub at: Option<String>,
    /// Let --latest and --before choose undo snapshots (written by earlier restores) too.
    #[arg(help_heading = "Snapshot", long)]
    pub include_undo: bool,
    /// Let --latest and --before choose pre-reset snapshots (written by `reset` before it
    /// changed anything) too.
    #[arg(help_heading = "Snapshot", long)]
    pub include_pre_reset: bool,
    /// Accept a snapshot marked partial (written with snapshot --allow-partial).
    #[arg(help_heading = "Snapshot", long)]
    pub allow_partial: bool,
    /// Apply exactly the plan in FILE (written by --plan-file): its checksum, snapshot and
    /// cluster are checked, and nothing is applied if the plan computed now differs.
    #[arg(help_heading = "Snapshot", long, value_name = "FILE", conflicts_with_all = ["id", "latest", "before", "at", "include_undo", "include_pre_reset", "allow_partial", "groups", "connectors", "topics", "partitions", "on_out_of_range", "skip_missing", "allow_recreated_topics", "recreate_connectors", "connector_config_overrides", "stop_connectors", "allow_other_cluster", "by_timestamp", "plan_file", "topic_map", "replication_policy", "translate", "checkpoints_topic", "offset_syncs_topic", "rehearse_on"])]
    pub from_plan: Option<PathBuf>,
    /// With --from-plan: refuse (exit 11, nothing changed) when any committed offset moved since
    /// the plan was made, even where its target stays the same; the plan is applied only to the
    /// state that was reviewed.
    #[arg(help_heading = "Snapshot", long, requires = "from_plan")]
    pub refuse_moved: bool,
    /// With --from-plan: apply it only with N valid approvals (`offset-vault approve`) by
    /// trusted keys other than the plan author's; otherwise exit 17 and change nothing.
    #[arg(
        help_heading = "Snapshot",
        long,
        value_name = "N",
        requires = "from_plan",
        default_value_t = 0
    )]
    pub require_approvals: usize,
    /// Restore only this group (repeatable). Default: everything in the snapshot.
    #[arg(help_heading = "Selection", long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Restore this connector (repeatable): its sink group, or its source offsets.
    #[arg(help_heading = "Selection", long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Only partitions of this topic (repeatable).
    #[arg(help_heading = "Selection", long = "topic", value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Only this partition number (repeatable).
    #[arg(help_heading = "Selection", long = "partition", value_name = "N")]
    pub partitions: Vec<i32>,
    /// Apply the plan. Without it, the plan is printed and nothing changes.
    #[arg(help_heading = "Safety", long)]
    pub execute: bool,
    /// What to do with a target outside the live [log-start, log-end] range.
    #[arg(help_heading = "Safety", long, value_enum, default_value_t)]
    pub on_out_of_range: crate::restore::OutOfRange,
    /// Leave out partitions whose topic or partition no longer exists instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub skip_missing: bool,
    /// Apply the snapshot's offsets to a topic that was deleted and created again since (its
    /// id differs), as they are. Without it such partitions fail the plan; --by-timestamp
    /// translates them instead.
    #[arg(help_heading = "Safety", long)]
    pub allow_recreated_topics: bool,
    /// Stop connectors whose offsets change (PUT /connectors/NAME/stop), and return them to
    /// their earlier state afterwards, also when the restore fails.
    #[arg(help_heading = "Safety", long)]
    pub stop_connectors: bool,
    /// Create connectors of the snapshot that no longer exist: from the snapshot's config,
    /// STOPPED (Kafka Connect 3.7+), then set their offsets and resume them.
    #[arg(help_heading = "Safety", long)]
    pub recreate_connectors: bool,
    /// With --recreate-connectors: leave the recreated connectors STOPPED.
    #[arg(help_heading = "Safety", long, requires = "recreate_connectors")]
    pub leave_stopped: bool,
    /// A config value for a recreated connector, KEY=VALUE (repeatable): needed for every value
    /// that was redacted in the snapshot; replaces the snapshot's value.
    #[arg(
        help_heading = "Safety",
        long = "connector-config-override",
        value_name = "KEY=VALUE"
    )]
    pub connector_config_overrides: Vec<String>,
    /// With --recreate-connectors: an age identity file (AGE-SECRET-KEY-1... lines, as
    /// `age-keygen -o FILE` writes them) that opens the snapshot's encrypted connector secrets
    /// (snapshot --encrypt-to), so connectors are created again with their secrets. The
    /// decrypted configs must match the snapshot's redacted ones; a key that is not a recipient,
    /// or a changed file, stops the restore before anything changes. Context key: identity.
    #[arg(
        help_heading = "Safety",
        long,
        value_name = "FILE",
        env = "OFFSET_VAULT_IDENTITY"
    )]
    pub identity: Option<PathBuf>,
    /// Restore even though the snapshot was taken on another Kafka cluster: topics are mapped
    /// (--topic-map, --replication-policy) and offsets translated (--translate, default auto).
    #[arg(help_heading = "Safety", long)]
    pub allow_other_cluster: bool,
    /// Translate targets by the recorded last-record timestamps (snapshots taken with
    /// --with-timestamps), for a recreated topic; onto another cluster it is --translate
    /// timestamp.
    #[arg(help_heading = "Safety", long)]
    pub by_timestamp: bool,
    #[command(flatten)]
    pub mirror: mirror::MirrorArgs,
    /// Do not take an undo snapshot before changing offsets.
    #[arg(help_heading = "Safety", long)]
    pub no_undo: bool,
    /// Also write the plan to FILE (versioned JSON with a checksum), to review and later apply
    /// with --from-plan FILE --execute.
    #[arg(help_heading = "Safety", long, value_name = "FILE")]
    pub plan_file: Option<PathBuf>,
    /// Bound on waiting for a connector to stop and its group to empty.
    #[arg(help_heading = "Safety", long, default_value = "2m", value_parser = parse_duration)]
    pub wait_timeout: Duration,
    /// After the read-back, wait this long and read the offsets again to catch anything that
    /// still commits for the groups (0 turns it off).
    #[arg(help_heading = "Safety", long, default_value = "3s", value_parser = parse_duration)]
    pub settle: Duration,
    /// How many groups' offset commits are in flight at once (each commit carries one group).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub commit_concurrency: u16,
    /// Plan, apply and read back at most this many partitions at a time (whole groups; a larger
    /// group is a batch of its own). Memory grows with it, not with the snapshot. Every batch
    /// is planned and checked before the first offset changes.
    #[arg(long, value_name = "PARTITIONS", default_value_t = crate::restore::ledger::DEFAULT_BATCH_PARTITIONS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_partitions: u64,
    /// After an executed restore, follow the connectors' and tasks' states, the groups'
    /// committed offsets and their lag for DURATION (e.g. 2m), and end with a verdict; a
    /// connector or task that fails meanwhile exits 16 (with the first lines of its trace).
    #[arg(help_heading = "Watch", long, value_name = "DURATION", value_parser = parse_duration, requires = "execute")]
    pub watch: Option<Duration>,
}

/// Clients of the Connect REST URLs given (blank ones left out).
pub fn connect_clients(urls: &[String], timeout: Duration) -> Result<Vec<ConnectClient>> {
    urls.iter()
        .filter(|u| !u.trim().is_empty())
        .map(|u| ConnectClient::new(u.trim(), timeout))
        .collect()
}

/// Parses repeatable `KEY=VALUE` tags.
pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for t in tags {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| Error::usage(format!("--tag {t}: expected KEY=VALUE")))?;
        if k.trim().is_empty() {
            return Err(Error::usage(format!("--tag {t}: the key is empty")));
        }
        if out.insert(k.trim().to_string(), v.to_string()).is_some() {
            return Err(Error::usage(format!("--tag {k} is given twice")));
        }
    }
    Ok(out)
}

impl WhoArgs {
    /// The selection, for every topic.
    pub fn to_selection(&self) -> Selection {
        Selection {
            groups: self.groups.clone(),
            group_pattern: self.group_pattern.clone(),
            all_groups: self.all_groups,
            connectors: self.connectors.clone(),
            all_connectors: self.all_connectors,
            group_types: self
                .group_type
                .iter()
                .map(|t| crate::kafka::GroupType::from_name(t.trim()))
                .collect(),
            ..Default::default()
        }
    }
}

impl SelectArgs {
    pub fn to_selection(&self) -> Selection {
        Selection {
            topics: self.topics.clone(),
            ..self.who.to_selection()
        }
    }
}

impl GlobalArgs {
    /// Kafka settings from the flags, the properties file and `-X`.
    pub fn kafka_settings(&self) -> Result<KafkaSettings> {
        // Lowest first: a context's command-config file, the context's properties, a file from a
        // flag or the environment, -X on the command line (see config::Applied).
        let file = match &self.command_config {
            Some(path) => ClientProperties::from_java_file(path)?,
            None => ClientProperties::new(),
        };
        let mut properties = ClientProperties::new();
        if self.applied.command_config_from_context {
            properties = file;
            properties.apply_overrides(&self.applied.properties)?;
        } else {
            properties.apply_overrides(&self.applied.properties)?;
            for (k, v) in file.iter() {
                properties.set(k, v);
            }
        }
        properties.apply_overrides(&self.property)?;
        let bootstrap = self
            .bootstrap_server
            .clone()
            .or_else(|| properties.get("bootstrap.servers").map(String::from))
            .ok_or_else(|| {
                Error::usage(
                    "no Kafka bootstrap servers: pass --bootstrap-server HOST:PORT or set OFFSET_VAULT_BOOTSTRAP_SERVER",
                )
            })?;
        Ok(KafkaSettings {
            bootstrap,
            properties,
            timeout: self.timeout,
            direct: !self.librdkafka_only,
        })
    }

    pub fn connect_clients(&self) -> Result<Vec<ConnectClient>> {
        connect_clients(&self.connect_url, self.timeout)
    }

    /// The signing key and the trusted keys, read from their files.
    pub fn keys(&self) -> Result<Arc<Keys>> {
        let signer = match &self.signing_key {
            Some(v) => {
                let (source, text) = crate::sign::key_text("--signing-key", v)?;
                Some(SecretKey::from_pem(&source, &text)?)
            }
            None => None,
        };
        let trusted = self
            .trusted_key
            .iter()
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                let (source, text) = crate::sign::key_text("--trusted-key", v)?;
                PublicKey::from_pem(&source, &text)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Keys::new(signer, trusted)))
    }

    /// Opens the store to read and write (a local directory is created), with the keys.
    pub fn open_store(&self) -> Result<Store> {
        Ok(Store::open(self.store_url()?, self.timeout)?.with_keys(self.keys()?))
    }

    /// Opens an existing store (a missing local directory is an error), with the keys.
    pub fn open_existing_store(&self) -> Result<Store> {
        Ok(Store::open_existing(self.store_url()?, self.timeout)?.with_keys(self.keys()?))
    }

    pub fn store_url(&self) -> Result<&str> {
        self.store.as_deref().ok_or_else(|| {
            Error::usage(
                "no store: pass --store URL (a directory, file:///path or s3://bucket/prefix) or set OFFSET_VAULT_STORE",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn tags_parse_and_reject_bad_input() {
        let t = parse_tags(&["deploy=1234".into(), "who=a=b".into()]).unwrap();
        assert_eq!(t["deploy"], "1234");
        assert_eq!(t["who"], "a=b");
        assert!(parse_tags(&["novalue".into()]).is_err());
        assert!(parse_tags(&["=x".into()]).is_err());
        assert!(parse_tags(&["a=1".into(), "a=2".into()]).is_err());
    }
}
