//! `show`'s options: one snapshot by id, or the offsets at an instant (`--at`).

use clap::Args;

use super::options::NamesArgs;
use crate::diff::Filter;
use crate::error::{Error, Result};

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
    pub names: NamesArgs,
}

impl ShowArgs {
    /// The groups, connectors, topics and partitions of `--at` the flags narrow it to.
    pub fn filter(&self) -> Filter {
        Filter {
            groups: self.groups.clone(),
            connectors: self.connectors.clone(),
            topics: self.topics.clone(),
            partitions: self.partitions.clone(),
        }
    }

    /// What to show: a snapshot id, or the instant of `--at` (then without a topic map).
    pub fn target(&self) -> Result<Shown<'_>> {
        match (&self.id, &self.at) {
            (_, Some(_)) if self.names.topic_map()?.is_some() => Err(Error::usage(
                "--topic-map and --replication-policy show a snapshot's topics as another cluster names them: give a snapshot id, not --at",
            )),
            (_, Some(at)) => Ok(Shown::At(at)),
            (Some(id), None) => Ok(Shown::Snapshot(id)),
            (None, None) => Err(Error::usage("say what to show: a snapshot id, or --at TIME")),
        }
    }
}

/// What `show` shows.
pub enum Shown<'a> {
    /// A snapshot, by id or a unique prefix.
    Snapshot(&'a str),
    /// The offsets at the instant `--at` names.
    At(&'a str),
}
