//! `diff` as library calls: the two sides named on the command line, each read and verified (a
//! snapshot, the offsets at an instant, or the cluster now), their partition rows as streams to
//! merge, the connectors compared, and the exit code of `--exit-code`.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::at;
use crate::connect::ConnectClient;
use crate::diff::live::{self, Live};
use crate::diff::{group_rows, ConnectorDiff, Filter, PartitionCounts, Row};
use crate::error::{exit, Error, Result};
use crate::kafka::KafkaClient;
use crate::log::at::{AtRequest, ReadAt};
use crate::mirror::TopicMap;
use crate::snapshot::choose::{choose, Choice, Eligible};
use crate::snapshot::model::ConnectorSnapshot;
use crate::snapshot::repo::{self, ErrorSlot, Opened};
use crate::timeutil::parse_time;
use clap::Args;

/// One side of the comparison, as asked for.
pub enum Side {
    Snapshot(Choice),
    /// The committed offsets at an instant (`--at`).
    At(AtRequest),
    Live,
}

/// The sides as the command line names them: snapshot ids, `--before`, `--at` (in the order
/// given), `--latest`, `--live`.
pub struct SideFlags<'a> {
    pub ids: &'a [String],
    pub before: Option<&'a str>,
    pub at: &'a [String],
    pub latest: bool,
    pub live: bool,
}

/// The sides in order: ids, then `--before`, `--at` (in the order given), `--latest`, `--live`;
/// exactly two, the first of them a snapshot or an instant.
pub fn sides(flags: SideFlags<'_>, filter: &Filter, now: DateTime<Utc>) -> Result<(Side, Side)> {
    let mut sides: Vec<Side> = flags
        .ids
        .iter()
        .map(|id| Side::Snapshot(Choice::Id(id.clone())))
        .collect();
    if let Some(t) = flags.before {
        sides.push(Side::Snapshot(Choice::Before(parse_time(t, now)?)));
    }
    for t in flags.at {
        sides.push(Side::At(at::request(t, filter.clone(), "diff", now)?));
    }
    if flags.latest {
        sides.push(Side::Snapshot(Choice::Latest));
    }
    if flags.live {
        sides.push(Side::Live);
    }
    if !filter.partitions.is_empty() && filter.topics.is_empty() {
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
pub struct Read {
    pub label: Value,
    pub cluster_id: String,
    pub opened: Option<Opened>,
    pub at: Option<ReadAt>,
    /// A snapshot's connectors; an instant's base's, which only name the sink groups of
    /// `--connector` (they are not compared).
    pub connectors: Vec<ConnectorSnapshot>,
    /// `--topic-map`, `--replication-policy`: the topics as the live cluster names them.
    pub rename: Option<Arc<TopicMap>>,
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
pub fn rows<'a>(
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

/// Reads and verifies one side: a snapshot, or the offsets at an instant (`--at`). The live side
/// is read apart ([`read_live`]).
pub async fn load(store: &crate::store::Store, eligible: &Eligible, side: Side) -> Result<Read> {
    match side {
        Side::Snapshot(choice) => {
            let chosen = choose(store, &choice, eligible).await?;
            Ok(from_opened(
                repo::open_verified(store, &chosen.manifest).await?,
            ))
        }
        Side::At(req) => {
            let read = crate::log::at::read(store, &req).await?;
            for note in read.instant.notes() {
                crate::noteln!("{note}");
            }
            Ok(from_instant(read))
        }
        Side::Live => Err(Error::Internal("the live side is read apart".into())),
    }
}

/// The connectors' differences. An instant has none to compare: the commit log holds group
/// commits, not a connector's config, state or source offsets.
pub fn compare_connectors(
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
///
/// `clients` gives the Connect clients once the cluster is reached; `batch` bounds the
/// partitions read at a time.
pub async fn read_live(
    settings: crate::kafka::KafkaSettings,
    clients: impl FnOnce() -> Result<Vec<ConnectClient>>,
    allow_other_cluster: bool,
    batch: usize,
    filter: &Filter,
    old: &Read,
) -> Result<(Read, Live)> {
    let kafka = KafkaClient::connect(settings).await?;
    if kafka.cluster_id() != old.cluster_id && !allow_other_cluster {
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
    let clients = clients()?;
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

/// Both sides read: the rows to merge, and the connectors compared.
pub struct Compared {
    pub old: Read,
    pub new: Read,
    /// The cluster now, when it is the new side.
    pub live: Option<Live>,
    pub filter: Filter,
    /// The groups the filter selects, with the sink groups of the selected connectors.
    wanted: Option<BTreeSet<String>>,
    pub connectors: Vec<ConnectorDiff>,
}

impl Compared {
    /// Compares the connectors of the two sides and sets up the rows' merge. Two snapshots of
    /// different clusters are compared, with a warning: their offsets are not comparable.
    pub fn new(old: Read, new: Read, live: Option<Live>, filter: Filter) -> Self {
        if new.cluster_id != old.cluster_id && live.is_none() {
            tracing::warn!(
                "the snapshots are of different Kafka clusters ({} and {}): offsets are not comparable",
                old.cluster_id,
                new.cluster_id
            );
        }
        let all: Vec<&ConnectorSnapshot> = old.connectors.iter().chain(&new.connectors).collect();
        let wanted = filter.group_set(&all);
        let connectors = compare_connectors(&old, &new, live.as_ref(), &filter);
        Compared {
            old,
            new,
            live,
            filter,
            wanted,
            connectors,
        }
    }

    /// The rows of the old side (`which` 0) or the new one, read anew each time; a read error
    /// is kept in `errors` for [`Compared::check`].
    pub fn rows<'a>(
        &'a self,
        which: u8,
        errors: &std::cell::RefCell<Vec<ErrorSlot>>,
    ) -> Box<dyn Iterator<Item = Row> + 'a> {
        let wanted = self.wanted.as_ref();
        match (which, &self.live) {
            (0, _) => rows(&self.old, wanted, &self.filter, errors),
            (_, Some(l)) => Box::new(l.rows()),
            (_, None) => rows(&self.new, wanted, &self.filter, errors),
        }
    }

    /// The first error that ended a side's rows early, if one did.
    pub fn check(&self, errors: &std::cell::RefCell<Vec<ErrorSlot>>) -> Result<()> {
        if let Some(l) = &self.live {
            errors.borrow_mut().push(l.error_slot());
        }
        for slot in errors.borrow().iter() {
            if let Some(e) = slot.lock().expect("not poisoned").take() {
                return Err(e);
            }
        }
        Ok(())
    }
}

/// `--exit-code`: 1 when the partitions or the connectors differ, else 0; without it, 0.
pub fn exit_code(asked: bool, counts: &PartitionCounts, connectors: &[ConnectorDiff]) -> i32 {
    let differs = counts.differs() || connectors.iter().any(ConnectorDiff::differs);
    if asked && differs {
        exit::FAILURE
    } else {
        exit::OK
    }
}

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

/// The two sides the flags name.
pub fn args_sides(args: &DiffArgs, filter: &Filter, now: DateTime<Utc>) -> Result<(Side, Side)> {
    let flags = SideFlags {
        ids: &args.ids,
        before: args.before.as_deref(),
        at: &args.at,
        latest: args.latest,
        live: args.live,
    };
    sides(flags, filter, now)
}

impl DiffArgs {
    /// The groups, connectors, topics and partitions the flags narrow it to.
    pub fn filter(&self) -> Filter {
        Filter {
            groups: self.groups.clone(),
            connectors: self.connectors.clone(),
            topics: self.topics.clone(),
            partitions: self.partitions.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn args(line: &str) -> DiffArgs {
        #[derive(Parser)]
        enum Line {
            Diff(DiffArgs),
        }
        let Line::Diff(a) =
            Line::try_parse_from(format!("offset-vault diff {line}").split_whitespace())
                .unwrap_or_else(|e| panic!("{line}: {e}"));
        a
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
            let got = args_sides(&a, &filter, now)
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
