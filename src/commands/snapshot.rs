//! `snapshot`'s options: what to capture and how to store it, checked into the capture's
//! options before anything is read.

use std::path::PathBuf;

use clap::Args;

use super::options::SelectArgs;
use crate::config::parse_tags;
use crate::error::Result;
use crate::snapshot::Format;

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

impl SnapshotArgs {
    /// Says how connector secrets are kept: a warning when in clear (`--include-secrets`), a
    /// note when only encrypted (`--encrypt-to`).
    pub fn log_secrets(&self, opts: &crate::snapshot::CaptureOptions) {
        match (&opts.encrypt_to, self.include_secrets) {
            (None, true) => tracing::warn!(
                "--include-secrets: connector configs are stored with their secrets in clear"
            ),
            (Some(r), _) => tracing::info!(
                "connector secrets are stored only encrypted, to {} recipient(s), in {}",
                r.keys().len(),
                crate::snapshot::secrets::SECRETS_FILE
            ),
            (None, false) => {}
        }
    }
}
