//! `expiring`'s options: which groups to check, how far ahead, and the snapshot's tags, checked
//! into [`crate::expiry::ExpiryOptions`] before anything is read.

use std::time::Duration;

use clap::Args;

use super::options::SelectArgs;
use crate::config::parse_duration;
use crate::error::Result;
use crate::expiry::{self, ExpiryOptions};

#[derive(Debug, Args)]
pub struct ExpiringArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Report (and snapshot) groups whose first offset expires within this time from now.
    #[arg(help_heading = "Expiry", long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub expiry_margin: Duration,
    /// Only report: take no snapshot of the groups found.
    #[arg(help_heading = "Expiry", long)]
    pub no_snapshot: bool,
    /// A label KEY=VALUE on the snapshot, besides expiry-guard=true (repeatable).
    #[arg(help_heading = "Expiry", long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Also write the run's metrics (job="expiring", offset_vault_groups_near_expiry) in
    /// Prometheus text format to PATH, atomically, for node_exporter's textfile collector.
    #[arg(long, value_name = "PATH")]
    pub metrics_textfile: Option<std::path::PathBuf>,
}

/// The guard's options from the flags, checked before any I/O. No selection means every group.
pub fn options(args: &ExpiringArgs, connect_urls: usize) -> Result<ExpiryOptions> {
    let mut selection = args.select.to_selection();
    if selection.is_empty() {
        selection.all_groups = true;
    }
    crate::snapshot::capture::validate(&selection, connect_urls)?;
    let tags = crate::config::parse_tags(&args.tags)?;
    if tags.contains_key(expiry::TAG) {
        return Err(crate::Error::usage(format!(
            "--tag {}: the guard sets this tag itself",
            expiry::TAG
        )));
    }
    Ok(ExpiryOptions {
        margin: args.expiry_margin,
        selection,
        snapshot: !args.no_snapshot,
        tags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_selection_means_every_group_and_the_guards_tag_is_its_own() {
        use clap::Parser;
        let parse = |args: &[&str]| {
            let mut all = vec!["offset-vault", "expiring"];
            all.extend_from_slice(args);
            #[derive(Parser)]
            enum Line {
                Expiring(ExpiringArgs),
            }
            let Line::Expiring(a) = Line::try_parse_from(all).unwrap();
            a
        };
        let o = options(&parse(&[]), 0).unwrap();
        assert!(o.selection.all_groups);
        assert_eq!(o.margin, Duration::from_secs(86_400));
        assert!(o.snapshot);
        let o = options(
            &parse(&["--group", "g", "--expiry-margin", "59s", "--no-snapshot"]),
            0,
        )
        .unwrap();
        assert!(!o.selection.all_groups);
        assert_eq!(o.selection.groups, ["g"]);
        assert_eq!(o.margin, Duration::from_secs(59));
        assert!(!o.snapshot);
        assert!(options(&parse(&["--tag", "expiry-guard=x"]), 0).is_err());
        assert!(options(&parse(&["--connector", "c"]), 0).is_err());
        assert!(options(&parse(&["--group-pattern", "("]), 0).is_err());
    }
}
