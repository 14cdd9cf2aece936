//! The command line's definition: the global flags, every command with its options (most of
//! them the library's, see [`crate::commands`]), and the help printed after them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::help::*;
use crate::commands::list::ListArgs;
use crate::commands::restore::RestoreArgs;
use crate::commands::show::ShowArgs;
use crate::commands::snapshot::SnapshotArgs;
use crate::commands::verify::VerifyArgs;
use crate::config::GlobalArgs;

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
    #[command(after_long_help = DIFF_EXAMPLES)]
    Diff(crate::commands::diff::DiffArgs),
    /// Reset offsets with kafka-consumer-groups' scenarios (--to-earliest, --shift-by, ...):
    /// a plan first, connectors stopped and resumed, a snapshot before the first change.
    #[command(after_long_help = RESET_EXAMPLES)]
    Reset(crate::commands::reset::ResetArgs),
    /// Plan, and with --execute apply, a verified offset reset back to a snapshot.
    #[command(after_long_help = RESTORE_EXAMPLES)]
    Restore(RestoreArgs),
    /// Archive every commit of __consumer_offsets as sealed segments, continuously (or up to
    /// the end of the log with --once).
    #[command(after_long_help = FOLLOW_EXAMPLES)]
    Follow(crate::commands::follow::FollowArgs),
    /// Empty groups whose offsets the broker expires soon (offsets.retention.minutes): list
    /// them and snapshot them, tagged expiry-guard=true.
    #[command(after_long_help = EXPIRING_EXAMPLES)]
    Expiring(crate::commands::expiring::ExpiringArgs),
    /// A group's archived offset changes (from `follow`), per partition.
    #[command(after_long_help = HISTORY_EXAMPLES)]
    History(crate::commands::history::HistoryArgs),
    /// Delete old snapshots by a retention policy (restic's --keep-* rules); a dry run unless
    /// --execute.
    #[command(after_long_help = PRUNE_EXAMPLES)]
    Prune(crate::commands::prune::PruneArgs),
    /// Write a snapshot's offsets, or those at an instant (--at), as kafka-consumer-groups
    /// --from-file CSV.
    #[command(after_long_help = EXPORT_EXAMPLES)]
    Export(crate::commands::export::ExportArgs),
    /// Store kafka-consumer-groups CSV as a snapshot of kind import.
    #[command(after_long_help = IMPORT_EXAMPLES)]
    Import(crate::commands::import::ImportArgs),
    /// Take a snapshot, run a command, then report which offsets moved and record it; print the
    /// rollback if it failed and offsets moved.
    #[command(after_long_help = GUARD_EXAMPLES)]
    Guard(crate::commands::guard::GuardArgs),
    /// Run as a service: the follower, scheduled snapshots, prune and verify, with Prometheus
    /// metrics and health checks over HTTP; each scheduled run at most once per slot across
    /// replicas.
    #[command(after_long_help = SERVE_EXAMPLES)]
    Serve(Box<crate::commands::serve::ServeArgs>),
    /// Approve a plan file with your key (a second pair of eyes; see restore
    /// --require-approvals).
    #[command(after_long_help = APPROVE_EXAMPLES)]
    Approve(crate::commands::sign::ApproveArgs),
    /// Make an Ed25519 key pair for --signing-key and --trusted-key.
    #[command(after_long_help = KEYGEN_EXAMPLES)]
    Keygen(crate::commands::sign::KeygenArgs),
    /// List the audit trail: one event for every change made or refused (restore, reset,
    /// prune, import, guard, follow's gaps), and commands that never wrote their outcome.
    #[command(after_long_help = AUDIT_EXAMPLES)]
    Audit(crate::commands::audit::AuditArgs),
    /// Show the effective settings, list the contexts, or switch the current context.
    #[command(subcommand, after_long_help = CONFIG_EXAMPLES)]
    Config(ConfigCommand),
    /// Serve the Model Context Protocol (stdio, or streamable HTTP with --listen) for AI
    /// assistants: read-only and planning tools, and with --allow-apply one tool that applies a
    /// reviewed plan by its hash.
    #[command(after_long_help = MCP_EXAMPLES)]
    Mcp(crate::mcp::options::McpArgs),
    /// Print a shell completion script.
    #[command(after_long_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a directory.
    #[command(after_long_help = MAN_EXAMPLES)]
    Man(ManArgs),
}

impl Command {
    /// False for the commands that must work while the configuration names a context that does
    /// not exist (to list the contexts and switch to one), and for those that need no settings.
    pub fn needs_context(&self) -> bool {
        !matches!(
            self,
            Command::Config(ConfigCommand::ListContexts | ConfigCommand::UseContext { .. })
                | Command::Completions(_)
                | Command::Man(_)
        )
    }
}

/// `offset-vault config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective settings and where each came from (secrets redacted).
    #[command(
        after_long_help = "Examples:\n  offset-vault config show\n  offset-vault --context staging config show --output json"
    )]
    Show,
    /// List the contexts of the configuration file; `*` marks the current one.
    #[command(after_long_help = "Examples:\n  offset-vault config list-contexts")]
    ListContexts,
    /// Make NAME the current context (rewrites `current-context`, keeps the rest of the file).
    #[command(after_long_help = "Examples:\n  offset-vault config use-context prod")]
    UseContext {
        /// A context defined in the configuration file.
        name: String,
    },
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write offset-vault.1 and one offset-vault-COMMAND.1 per command into DIR, instead of the
    /// main page on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
