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

use clap::{Parser, Subcommand};

use crate::commands::list::ListArgs;
use crate::commands::restore::RestoreArgs;
use crate::commands::show::ShowArgs;
use crate::commands::snapshot::SnapshotArgs;
use crate::commands::verify::VerifyArgs;
pub use crate::config::{GlobalArgs, OutputFormat};
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
    Diff(crate::commands::diff::DiffArgs),
    /// Reset offsets with kafka-consumer-groups' scenarios (--to-earliest, --shift-by, ...):
    /// a plan first, connectors stopped and resumed, a snapshot before the first change.
    #[command(after_long_help = reset::EXAMPLES)]
    Reset(crate::commands::reset::ResetArgs),
    /// Plan, and with --execute apply, a verified offset reset back to a snapshot.
    #[command(after_long_help = RESTORE_EXAMPLES)]
    Restore(RestoreArgs),
    /// Archive every commit of __consumer_offsets as sealed segments, continuously (or up to
    /// the end of the log with --once).
    #[command(after_long_help = follow::EXAMPLES)]
    Follow(crate::commands::follow::FollowArgs),
    /// Empty groups whose offsets the broker expires soon (offsets.retention.minutes): list
    /// them and snapshot them, tagged expiry-guard=true.
    #[command(after_long_help = expiring::EXAMPLES)]
    Expiring(crate::commands::expiring::ExpiringArgs),
    /// A group's archived offset changes (from `follow`), per partition.
    #[command(after_long_help = log::HISTORY_EXAMPLES)]
    History(crate::commands::history::HistoryArgs),
    /// Delete old snapshots by a retention policy (restic's --keep-* rules); a dry run unless
    /// --execute.
    #[command(after_long_help = prune::PRUNE_EXAMPLES)]
    Prune(crate::commands::prune::PruneArgs),
    /// Write a snapshot's offsets, or those at an instant (--at), as kafka-consumer-groups
    /// --from-file CSV.
    #[command(after_long_help = csv::EXPORT_EXAMPLES)]
    Export(crate::commands::export::ExportArgs),
    /// Store kafka-consumer-groups CSV as a snapshot of kind import.
    #[command(after_long_help = csv::IMPORT_EXAMPLES)]
    Import(crate::commands::import::ImportArgs),
    /// Take a snapshot, run a command, then report which offsets moved and record it; print the
    /// rollback if it failed and offsets moved.
    #[command(after_long_help = GUARD_EXAMPLES)]
    Guard(crate::commands::guard::GuardArgs),
    /// Run as a service: the follower, scheduled snapshots, prune and verify, with Prometheus
    /// metrics and health checks over HTTP; each scheduled run at most once per slot across
    /// replicas.
    #[command(after_long_help = serve::EXAMPLES)]
    Serve(Box<crate::commands::serve::ServeArgs>),
    /// Approve a plan file with your key (a second pair of eyes; see restore
    /// --require-approvals).
    #[command(after_long_help = sign::APPROVE_EXAMPLES)]
    Approve(crate::commands::sign::ApproveArgs),
    /// Make an Ed25519 key pair for --signing-key and --trusted-key.
    #[command(after_long_help = sign::KEYGEN_EXAMPLES)]
    Keygen(crate::commands::sign::KeygenArgs),
    /// List the audit trail: one event for every change made or refused (restore, reset,
    /// prune, import, guard, follow's gaps), and commands that never wrote their outcome.
    #[command(after_long_help = audit::EXAMPLES)]
    Audit(crate::commands::audit::AuditArgs),
    /// Show the effective settings, list the contexts, or switch the current context.
    #[command(subcommand, after_long_help = config::EXAMPLES)]
    Config(config::ConfigCommand),
    /// Serve the Model Context Protocol (stdio, or streamable HTTP with --listen) for AI
    /// assistants: read-only and planning tools, and with --allow-apply one tool that applies a
    /// reviewed plan by its hash.
    #[command(after_long_help = mcp::EXAMPLES)]
    Mcp(crate::mcp::options::McpArgs),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
