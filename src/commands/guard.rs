//! `guard [selection] -- COMMAND ARGS...` as a library call: a change wrapped in a snapshot.
//!
//! Takes a snapshot (and runs nothing if it cannot), runs the command with the snapshot id in
//! `OFFSET_VAULT_SNAPSHOT`, then compares the committed offsets (and connector offsets) of the
//! snapshot's groups and connectors with the cluster now, as `diff SNAPSHOT --live` does, and
//! records how the command ended and what moved in a create-only record next to the snapshot
//! (`guard-exit-N.json`; the snapshot itself is sealed and never changes). It never restores by
//! itself; the command line prints the rollback when one may be needed.

use std::process::ExitStatus;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::options::SelectArgs;
use crate::audit::{AuditOutcome, Facts};
use crate::config::GlobalArgs;
use crate::connect::ConnectClient;
use crate::diff::live::{self, Live};
use crate::diff::Filter;
use crate::error::{Error, Result};
use crate::guard::{Collector, Comparison};
use crate::kafka::{KafkaClient, KafkaSettings};
use crate::snapshot::manifest::{date_folder, Manifest};
use crate::snapshot::repo::{self, is_sidecar, SNAPSHOTS};
use crate::snapshot::Format;
use crate::snapshot::{self, CaptureOptions};
use crate::store::Store;
use clap::Args;

/// The variable that carries the snapshot id to the command.
pub const ENV_SNAPSHOT: &str = "OFFSET_VAULT_SNAPSHOT";

/// The version of [`GuardRecord`]: 1.1 added `comparison`.
pub const RECORD_FORMAT_VERSION: &str = "1.1";

/// How the command ended and what moved, as recorded next to the snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct GuardRecord {
    /// [`RECORD_FORMAT_VERSION`].
    pub format_version: String,
    pub snapshot_id: String,
    pub command: Vec<String>,
    /// The exit code, or 128 + the signal number when a signal ended the command.
    pub exit_code: i32,
    /// The signal that ended the command, if one did.
    pub signal: Option<i32>,
    /// Why the command could not be started, if it could not.
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    /// The snapshot's offsets compared with the cluster's once the command had ended.
    pub comparison: Comparison,
}

/// The record's file name: `guard-exit-0.json`, `guard-signal-15.json`.
pub fn record_name(exit_code: i32, signal: Option<i32>) -> String {
    let name = match signal {
        Some(s) => format!("guard-signal-{s}.json"),
        None => format!("guard-exit-{exit_code}.json"),
    };
    debug_assert!(is_sidecar(&name));
    name
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A guarded run: the snapshot taken before it, how the command ended and what moved, and
/// whether that record was written next to the snapshot.
pub struct Guarded {
    pub manifest: Manifest,
    pub record: GuardRecord,
    pub recorded: bool,
}

/// Takes the snapshot `capture` asks for, runs `command` with its id in [`ENV_SNAPSHOT`],
/// compares the snapshot with the cluster once it has ended, and records it; what the audit
/// event says goes into `facts`. Fails only before the command runs (the snapshot could not be
/// taken) or when the store cannot be written at all.
pub async fn guard(
    store: &Store,
    settings: KafkaSettings,
    connect: &[ConnectClient],
    capture: &CaptureOptions,
    command: &[String],
    facts: &mut Facts,
) -> Result<Guarded> {
    let kafka = KafkaClient::connect(settings).await?;
    let (manifest, _) = snapshot::take(store, &kafka, connect, capture).await?;
    let id = manifest.meta.id.clone();
    facts.subject = Some(id.clone());
    facts.snapshot_ids.push(id.clone());
    facts.detail.insert(
        "guarded_command".into(),
        serde_json::json!(crate::audit::redact::redact_args(command)),
    );
    crate::noteln!(
        "snapshot {id} taken ({} group(s), {} connector(s)); running: {}",
        manifest.summary.groups,
        manifest.summary.connectors,
        command
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let started_at = Utc::now();
    let (exit_code, signal, error) = run_command(command, &id).await;
    if let Some(e) = &error {
        crate::alertln!("error: {e}");
    }
    let finished_at = Utc::now();
    facts.outcome = Some(if exit_code == 0 {
        AuditOutcome::Executed
    } else {
        AuditOutcome::Failed
    });
    if let Some(sig) = signal {
        facts.detail.insert("signal".into(), serde_json::json!(sig));
    }
    facts.message = error.clone();
    let comparison = compare_with_snapshot(store, &manifest, &kafka, connect).await;
    let record = GuardRecord {
        format_version: RECORD_FORMAT_VERSION.into(),
        snapshot_id: id,
        command: command.to_vec(),
        exit_code,
        signal,
        error,
        started_at,
        finished_at,
        comparison,
    };
    let recorded = record_with_snapshot(store, &manifest, &record).await?;
    Ok(Guarded {
        manifest,
        record,
        recorded,
    })
}

/// Exit code and signal of a finished command (128 + N for signal N, as shells report it).
fn status_code(status: ExitStatus) -> (i32, Option<i32>) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (128 + sig, Some(sig));
        }
    }
    (status.code().unwrap_or(1), None)
}

/// Runs the command with the snapshot id in its environment; never fails: a command that cannot
/// be started is reported as exit code 127 (not found) or 126 (not executable), as shells do.
async fn run_command(command: &[String], id: &str) -> (i32, Option<i32>, Option<String>) {
    // While the command runs, Ctrl-C and SIGTERM reach it (same process group); this process
    // stays to record how it ended.
    #[cfg(unix)]
    let _held = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    let (program, args) = command.split_first().expect("clap requires a command");
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).env(ENV_SNAPSHOT, id);
    let joined = tokio::task::spawn_blocking(move || cmd.status()).await;
    match joined {
        Ok(Ok(status)) => {
            let (code, signal) = status_code(status);
            (code, signal, None)
        }
        Ok(Err(e)) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            (code, None, Some(format!("cannot run {program}: {e}")))
        }
        Err(e) => (1, None, Some(format!("cannot wait for {program}: {e}"))),
    }
}

/// Compares the snapshot with the cluster now: its groups' committed offsets and its
/// connectors' offsets. A comparison that cannot be made says why; it is never an error.
async fn compare_with_snapshot(
    store: &Store,
    manifest: &Manifest,
    kafka: &KafkaClient,
    connect: &[ConnectClient],
) -> Comparison {
    let compared = async {
        let opened = repo::open_verified(store, manifest).await?;
        // The snapshot holds the selection: all of it is compared.
        let filter = Filter::default();
        let now = Live::read(
            kafka,
            connect,
            &opened,
            &filter,
            crate::restore::ledger::DEFAULT_BATCH_PARTITIONS,
            None,
        )
        .await?;
        let mut collector = Collector::default();
        let (counts, connectors) = live::compare(&opened, &now, &filter, |d| collector.add(d))?;
        let compared = (now.group_count() as u64, now.connector_count() as u64);
        Ok::<_, Error>(collector.finish(&counts, compared, &connectors))
    };
    compared.await.unwrap_or_else(Comparison::failed)
}

/// Writes how the command ended next to the snapshot (create-only); a failure is a warning, as
/// the snapshot itself is sealed and the rollback point. Returns whether it was written.
async fn record_with_snapshot(
    store: &crate::store::Store,
    manifest: &crate::snapshot::Manifest,
    record: &GuardRecord,
) -> Result<bool> {
    let key = format!(
        "{SNAPSHOTS}/{}/{}/{}",
        date_folder(manifest.meta.created_at),
        manifest.meta.id,
        record_name(record.exit_code, record.signal)
    );
    let body = serde_json::to_vec_pretty(record).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(match store.put_new(&key, Bytes::from(body)).await {
        Ok(()) => true,
        Err(e) => {
            crate::alertln!(
                "warning: the command's status was not recorded with the snapshot: {e}"
            );
            false
        }
    })
}

/// Arguments of `guard`.
#[derive(Debug, Args)]
pub struct GuardArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// A label KEY=VALUE stored in the snapshot's manifest (repeatable).
    #[arg(help_heading = "Snapshot", long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// File format of the offsets.
    #[arg(help_heading = "Snapshot", long, value_enum, default_value_t)]
    pub format: Format,
    /// Skip named groups or connectors that do not exist instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub allow_missing: bool,
    /// The command to run and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The restore commands that roll back to `id`: the dry run, then the one that applies it.
/// Connection settings are spelled out so the lines work where they are pasted; `-X` values are
/// left out because they may be secrets.
pub fn rollback_commands(g: &GlobalArgs, id: &str, has_connectors: bool) -> [String; 2] {
    let mut words = vec!["offset-vault".to_string()];
    if let Some((name, _)) = &g.applied.context {
        words.extend(["--context".into(), name.clone()]);
    }
    if let Some(b) = &g.bootstrap_server {
        words.extend(["--bootstrap-server".into(), b.clone()]);
    }
    if !g.connect_url.is_empty() {
        words.extend(["--connect-url".into(), g.connect_url.join(",")]);
    }
    if let Some(c) = &g.command_config {
        words.extend(["--command-config".into(), c.display().to_string()]);
    }
    if let Some(s) = &g.store {
        words.extend(["--store".into(), s.clone()]);
    }
    words.extend(["restore".into(), id.to_string()]);
    if has_connectors {
        words.push("--stop-connectors".into());
    }
    let dry: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
    let dry = dry.join(" ");
    let apply = format!("{dry} --execute");
    [dry, apply]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_names_are_sidecars_and_others_are_not() {
        assert_eq!(record_name(0, None), "guard-exit-0.json");
        assert_eq!(record_name(143, Some(15)), "guard-signal-15.json");
        for (name, sidecar) in [
            ("guard-exit-0.json", true),
            ("guard-exit-3.json", true),
            ("guard-signal-9.json", true),
            ("guard-.json", false),
            ("guard-exit-0.txt", false),
            ("offsets.parquet", false),
            ("manifest.json", false),
            ("connectors.json", false),
        ] {
            assert_eq!(is_sidecar(name), sidecar, "{name}");
        }
    }

    #[test]
    fn words_are_quoted_only_when_needed() {
        let cases = [
            ("s3://bucket/offsets", "s3://bucket/offsets"),
            ("k1:9092,k2:9092", "k1:9092,k2:9092"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
            ("$HOME", "'$HOME'"),
        ];
        for (word, want) in cases {
            assert_eq!(shell_quote(word), want);
        }
    }
}
