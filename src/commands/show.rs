//! `show`'s options: one snapshot by id, or the offsets at an instant (`--at`).

use clap::Args;

use super::options::NamesArgs;

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
