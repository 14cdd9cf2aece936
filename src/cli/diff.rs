//! `offset-vault diff`: two snapshots, or a snapshot and the cluster now; the sides are read and
//! compared by [`crate::commands::diff`].
//!
//! The partition rows are printed as the merge finds them (see `print`), so the output itself
//! holds no rows in memory.

mod print;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use clap::Args;

use super::Cli;
use crate::commands::diff::{self as command, Compared, Side, SideFlags};
use crate::config::OutputFormat;
use crate::diff::{Filter, PartitionDiff};
use crate::error::{Error, Result};
use crate::snapshot::choose::Eligible;

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
    /// With --live: read the cluster for at most this many of the snapshot's partitions at a
    /// time (whole groups). Memory grows with it, not with the snapshot.
    #[arg(long, value_name = "PARTITIONS", default_value_t = crate::restore::ledger::DEFAULT_BATCH_PARTITIONS as u64, value_parser = clap::value_parser!(u64).range(1..), requires = "live")]
    pub batch_partitions: u64,
    /// With --live: the snapshot's topics under the names this cluster gives them.
    #[command(flatten)]
    pub names: crate::commands::options::NamesArgs,
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

/// The two sides the flags name.
fn sides(args: &DiffArgs, filter: &Filter, now: DateTime<Utc>) -> Result<(Side, Side)> {
    let flags = SideFlags {
        ids: &args.ids,
        before: args.before.as_deref(),
        at: &args.at,
        latest: args.latest,
        live: args.live,
    };
    command::sides(flags, filter, now)
}

pub async fn run(cli: &Cli, args: &DiffArgs) -> Result<i32> {
    let now = Utc::now();
    let filter = Filter {
        groups: args.groups.clone(),
        connectors: args.connectors.clone(),
        topics: args.topics.clone(),
        partitions: args.partitions.clone(),
    };
    let (old_side, new_side) = sides(args, &filter, now)?;
    let eligible = Eligible {
        groups: args.groups.clone(),
        connectors: args.connectors.clone(),
        ..Default::default()
    };
    let kafka_settings = matches!(new_side, Side::Live)
        .then(|| cli.global.kafka_settings())
        .transpose()?;
    let store = cli.global.open_existing_store()?;
    crate::progress::stage("diff: reading and verifying the two sides", 0);
    let mut old = command::load(&store, &eligible, old_side).await?;
    old.rename = args.names.topic_map()?.map(Arc::new);
    if old.rename.is_some() && !matches!(new_side, Side::Live) {
        return Err(Error::usage(
            "--topic-map and --replication-policy compare a snapshot with another cluster: add --live",
        ));
    }
    let (new, live) = match new_side {
        Side::Live => {
            let settings = kafka_settings.expect("read for --live");
            let clients = || cli.global.connect_clients();
            let batch = usize::try_from(args.batch_partitions).unwrap_or(usize::MAX);
            let other = args.allow_other_cluster;
            let (read, live) =
                command::read_live(settings, clients, other, batch, &filter, &old).await?;
            (read, Some(live))
        }
        side => (command::load(&store, &eligible, side).await?, None),
    };
    let compared = Compared::new(old, new, live, filter);
    crate::progress::finish();
    let errors = std::cell::RefCell::new(Vec::new());
    let rows = |which: u8| compared.rows(which, &errors);
    let shown = |d: &PartitionDiff| args.all || d.is_notable();
    let (old, new, connectors) = (
        &compared.old.label,
        &compared.new.label,
        &compared.connectors,
    );
    let counts = match cli.global.output {
        OutputFormat::Json => print::json(old, new, &rows, &shown, connectors)?,
        OutputFormat::Table => print::table(old, new, &rows, &shown, connectors)?,
    };
    compared.check(&errors)?;
    Ok(command::exit_code(args.exit_code, &counts, connectors))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;
    use crate::snapshot::choose::Choice;

    fn args(line: &str) -> DiffArgs {
        let cli = Cli::try_parse_from(format!("offset-vault diff {line}").split_whitespace())
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        match cli.command {
            Command::Diff(a) => a,
            other => panic!("{other:?}"),
        }
    }

    fn describe(side: &Side) -> String {
        match side {
            Side::Snapshot(Choice::Id(id)) => id.clone(),
            Side::Snapshot(Choice::Latest) => "latest".into(),
            Side::Snapshot(Choice::Before(t)) => format!("before {}", t.to_rfc3339()),
            Side::At(req) => format!("at {}", t_text(req.at)),
            Side::Live => "live".into(),
        }
    }

    fn t_text(t: DateTime<Utc>) -> String {
        crate::log::at::millis(t)
    }

    #[test]
    fn the_two_sides_come_from_ids_before_at_latest_and_live_in_that_order() {
        let now = DateTime::parse_from_rfc3339("2027-01-10T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // (command line, old side, new side) or the words of the refusal
        type Want = Result<(&'static str, &'static str), &'static str>;
        let cases: [(&str, Want); 16] = [
            ("a b", Ok(("a", "b"))),
            ("a --live", Ok(("a", "live"))),
            ("--latest --live", Ok(("latest", "live"))),
            ("a --latest", Ok(("a", "latest"))),
            (
                "--before 2h --latest",
                Ok(("before 2027-01-10T10:00:00+00:00", "latest")),
            ),
            ("--live", Err("1 given")),
            ("a", Err("1 given")),
            ("a b --live", Err("3 given")),
            ("a b --partition 1", Err("--partition needs --topic")),
            (
                "--at 2h --live",
                Ok(("at 2027-01-10T10:00:00.000Z", "live")),
            ),
            (
                "--at 2h --latest",
                Ok(("at 2027-01-10T10:00:00.000Z", "latest")),
            ),
            (
                "--at 2h --at 1h",
                Ok(("at 2027-01-10T10:00:00.000Z", "at 2027-01-10T11:00:00.000Z")),
            ),
            ("a --at 1h", Ok(("a", "at 2027-01-10T11:00:00.000Z"))),
            (
                "--before 3h --at 1h",
                Ok((
                    "before 2027-01-10T09:00:00+00:00",
                    "at 2027-01-10T11:00:00.000Z",
                )),
            ),
            ("--at 1h", Err("1 given")),
            ("--at 2h --at 1h --live", Err("3 given")),
        ];
        for (line, want) in cases {
            let a = args(line);
            let filter = Filter {
                partitions: a.partitions.clone(),
                topics: a.topics.clone(),
                ..Default::default()
            };
            let got = sides(&a, &filter, now)
                .map(|(o, n)| (describe(&o), describe(&n)))
                .map_err(|e| e.to_string());
            match (got, want) {
                (Ok((o, n)), Ok((wo, wn))) => {
                    assert_eq!((o.as_str(), n.as_str()), (wo, wn), "{line}")
                }
                (Err(e), Err(words)) => assert!(e.contains(words), "{line}: {e}"),
                (got, want) => panic!("{line}: got {got:?}, want {want:?}"),
            }
        }
    }
}
