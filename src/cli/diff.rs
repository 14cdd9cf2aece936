//! `offset-vault diff`: two snapshots, or a snapshot and the cluster now.
//!
//! The partition rows are printed as the merge finds them (see `print`), so the output itself
//! holds no rows in memory.

mod print;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use clap::Args;
use serde_json::{json, Value};

use super::{Cli, OutputFormat};
use crate::diff::live::{self, Live};
use crate::diff::{group_rows, ConnectorDiff, Filter, PartitionDiff, Row};
use crate::error::{exit, Error, Result};
use crate::kafka::KafkaClient;
use crate::log::at::{AtRequest, ReadAt};
use crate::mirror::TopicMap;
use crate::snapshot::choose::{choose, Choice, Eligible};
use crate::snapshot::model::ConnectorSnapshot;
use crate::snapshot::repo::{self, ErrorSlot, Opened};
use crate::timeutil::parse_time;
use std::sync::Arc;

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
    pub names: super::mirror::NamesArgs,
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

/// One side of the comparison, as asked for.
enum Side {
    Snapshot(Choice),
    /// The committed offsets at an instant (`--at`).
    At(AtRequest),
    Live,
}

/// The sides in order: ids, then `--before`, `--at` (in the order given), `--latest`, `--live`;
/// exactly two.
fn sides(args: &DiffArgs, filter: &Filter, now: DateTime<Utc>) -> Result<(Side, Side)> {
    let mut sides: Vec<Side> = args
        .ids
        .iter()
        .map(|id| Side::Snapshot(Choice::Id(id.clone())))
        .collect();
    if let Some(t) = &args.before {
        sides.push(Side::Snapshot(Choice::Before(parse_time(t, now)?)));
    }
    for t in &args.at {
        sides.push(Side::At(super::at::request(
            t,
            filter.clone(),
            "diff",
            now,
        )?));
    }
    if args.latest {
        sides.push(Side::Snapshot(Choice::Latest));
    }
    if args.live {
        sides.push(Side::Live);
    }
    if !args.partitions.is_empty() && args.topics.is_empty() {
        return Err(Error::usage("--partition needs --topic"));
    }
    let n = sides.len();
    let mut it = sides.into_iter();
    match (it.next(), it.next()) {
        (Some(a @ (Side::Snapshot(_) | Side::At(_))), Some(b)) if n == 2 => Ok((a, b)),
        _ => Err(Error::usage(format!(
            "diff compares two things, {n} given: pass two of snapshot ids, --before TIME, --at TIME and --latest, or one of them and --live"
        ))),
    }
}

/// A side once read: its label, its connectors, and (for a snapshot) the verified snapshot,
/// whose groups are read from its local offsets file as the comparison needs them, or (for an
/// instant) the groups at the instant.
struct Read {
    label: Value,
    cluster_id: String,
    opened: Option<Opened>,
    at: Option<ReadAt>,
    /// A snapshot's connectors; an instant's base's, which only name the sink groups of
    /// `--connector` (they are not compared).
    connectors: Vec<ConnectorSnapshot>,
    /// `--topic-map`, `--replication-policy`: the topics as the live cluster names them.
    rename: Option<Arc<TopicMap>>,
}

fn from_opened(opened: Opened) -> Read {
    let m = &opened.manifest;
    Read {
        label: json!({"snapshot": m.meta.id, "created_at": m.meta.created_at, "kind": m.meta.kind}),
        cluster_id: m.meta.cluster_id.clone(),
        connectors: opened.connectors.clone(),
        opened: Some(opened),
        at: None,
        rename: None,
    }
}

fn from_instant(read: ReadAt) -> Read {
    let i = &read.instant;
    let sources: Vec<&crate::log::at::Source> = i.groups.iter().map(|g| &g.source).collect();
    let m = &read.chosen.manifest.meta;
    Read {
        label: json!({
            "at": i.at,
            "snapshot": m.id,
            "created_at": m.created_at,
            "kind": m.kind,
            "segments": i.segments,
            "records": i.records(),
            "sources": sources,
            "absent": i.absent(),
            "left_out": i.left_out,
        }),
        cluster_id: m.cluster_id.clone(),
        connectors: read.connectors.clone(),
        opened: None,
        at: Some(read),
        rename: None,
    }
}

/// The rows of a snapshot side, read anew each time; a read error is kept in `errors`.
fn opened_rows<'a>(
    read: &'a Read,
    wanted: Option<&'a BTreeSet<String>>,
    filter: &'a Filter,
    errors: &std::cell::RefCell<Vec<ErrorSlot>>,
) -> Box<dyn Iterator<Item = Row> + 'a> {
    let rename = read.rename.clone();
    let renamed = move |g: crate::snapshot::GroupSnapshot| match &rename {
        Some(map) => crate::mirror::rename_group(map, g),
        None => g,
    };
    if let Some(at) = &read.at {
        return Box::new(group_rows(
            at.instant.present().cloned().map(renamed),
            wanted,
            filter,
        ));
    }
    let Some(opened) = &read.opened else {
        return Box::new(std::iter::empty());
    };
    let stream = opened.groups();
    errors.borrow_mut().push(stream.error_slot());
    Box::new(group_rows(stream.map(renamed), wanted, filter))
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
    let mut old = load(&store, &eligible, old_side).await?;
    old.rename = args.names.topic_map()?.map(Arc::new);
    if old.rename.is_some() && !matches!(new_side, Side::Live) {
        return Err(Error::usage(
            "--topic-map and --replication-policy compare a snapshot with another cluster: add --live",
        ));
    }

    let old_connectors: Vec<&ConnectorSnapshot> = old.connectors.iter().collect();
    let (new, live) = match new_side {
        Side::Live => {
            let settings = kafka_settings.expect("read for --live");
            let (read, live) = read_live(cli, settings, args, &filter, &old).await?;
            (read, Some(live))
        }
        side => (load(&store, &eligible, side).await?, None),
    };
    if new.cluster_id != old.cluster_id && live.is_none() {
        tracing::warn!(
            "the snapshots are of different Kafka clusters ({} and {}): offsets are not comparable",
            old.cluster_id,
            new.cluster_id
        );
    }

    let mut all_connectors = old_connectors.clone();
    all_connectors.extend(new.connectors.iter());
    let wanted = filter.group_set(&all_connectors);
    let errors = std::cell::RefCell::new(Vec::new());
    let rows = |which: u8| -> Box<dyn Iterator<Item = Row> + '_> {
        match (which, &live) {
            (0, _) => opened_rows(&old, wanted.as_ref(), &filter, &errors),
            (_, Some(l)) => Box::new(l.rows()),
            (_, None) => opened_rows(&new, wanted.as_ref(), &filter, &errors),
        }
    };
    let connector_diffs = compare_connectors(&old, &new, live.as_ref(), &filter);

    crate::progress::finish();
    let shown = |d: &PartitionDiff| args.all || d.is_notable();
    let counts = match cli.global.output {
        OutputFormat::Json => print::json(&old.label, &new.label, &rows, &shown, &connector_diffs)?,
        OutputFormat::Table => {
            print::table(&old.label, &new.label, &rows, &shown, &connector_diffs)?
        }
    };
    if let Some(l) = &live {
        errors.borrow_mut().push(l.error_slot());
    }
    for slot in errors.borrow().iter() {
        if let Some(e) = slot.lock().expect("not poisoned").take() {
            return Err(e);
        }
    }
    let differs = counts.differs() || connector_diffs.iter().any(ConnectorDiff::differs);
    Ok(if args.exit_code && differs {
        exit::FAILURE
    } else {
        exit::OK
    })
}

/// Reads and verifies one side: a snapshot, or the offsets at an instant (`--at`). The live side
/// is read apart ([`read_live`]).
async fn load(store: &crate::store::Store, eligible: &Eligible, side: Side) -> Result<Read> {
    match side {
        Side::Snapshot(choice) => {
            let chosen = choose(store, &choice, eligible).await?;
            Ok(from_opened(
                repo::open_verified(store, &chosen.manifest).await?,
            ))
        }
        Side::At(req) => {
            let read = crate::log::at::read(store, &req).await?;
            for note in super::at::notes(&read) {
                crate::noteln!("{note}");
            }
            Ok(from_instant(read))
        }
        Side::Live => Err(Error::Internal("the live side is read apart".into())),
    }
}

/// The connectors' differences. An instant has none to compare: the commit log holds group
/// commits, not a connector's config, state or source offsets.
fn compare_connectors(
    old: &Read,
    new: &Read,
    live: Option<&Live>,
    filter: &Filter,
) -> Vec<ConnectorDiff> {
    if old.at.is_some() || new.at.is_some() {
        let asked = old.connectors.iter().chain(&new.connectors);
        if asked.clone().any(|c| filter.wants_connector(&c.name)) {
            crate::noteln!(
                "note: connectors are not compared with an --at side (the commit log holds group commits only); their sink groups are"
            );
        }
        return Vec::new();
    }
    let news = match live {
        Some(l) => l.connector_views(),
        None => live::snapshot_views(&new.connectors, filter),
    };
    live::compare_connectors(&old.connectors, news, filter)
}

/// The cluster now, for the groups and connectors of the old side that the filter selects,
/// refused when it is another cluster than the snapshot's unless `--allow-other-cluster`.
async fn read_live(
    cli: &Cli,
    settings: crate::kafka::KafkaSettings,
    args: &DiffArgs,
    filter: &Filter,
    old: &Read,
) -> Result<(Read, Live)> {
    let kafka = KafkaClient::connect(settings).await?;
    if kafka.cluster_id() != old.cluster_id && !args.allow_other_cluster {
        return Err(Error::OtherCluster {
            id: old.label["snapshot"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            snapshot_cluster: old.cluster_id.clone(),
            live_cluster: kafka.cluster_id().to_string(),
            bootstrap: kafka.bootstrap().to_string(),
        });
    }
    let clients = cli.global.connect_clients()?;
    let batch = usize::try_from(args.batch_partitions).unwrap_or(usize::MAX);
    let live = match (&old.opened, &old.at) {
        (Some(opened), _) => {
            Live::read(
                &kafka,
                &clients,
                opened,
                filter,
                batch,
                old.rename.as_deref(),
            )
            .await?
        }
        (None, Some(at)) => {
            let refs: Vec<&ConnectorSnapshot> = at.connectors.iter().collect();
            let wanted = filter.group_set(&refs);
            let mut groups: Vec<crate::snapshot::GroupSnapshot> = at
                .instant
                .groups
                .iter()
                .map(|g| match &old.rename {
                    Some(map) => crate::mirror::rename_group(map, g.snapshot.clone()),
                    None => g.snapshot.clone(),
                })
                .collect();
            groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
            Live::read_groups(
                &kafka,
                &clients,
                groups.into_iter(),
                wanted.as_ref(),
                &[],
                filter,
                batch,
            )
            .await?
        }
        (None, None) => return Err(Error::Internal("the old side is never live".into())),
    };
    let read = Read {
        label: json!({"live": kafka.bootstrap(), "cluster_id": kafka.cluster_id(), "read_at": Utc::now()}),
        cluster_id: kafka.cluster_id().to_string(),
        opened: None,
        at: None,
        connectors: vec![],
        rename: None,
    };
    Ok((read, live))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Command;

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
