//! `history`'s options: one group's archived changes, narrowed by topic, partition and time.

use clap::Args;

/// Arguments of `history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The consumer group.
    pub group: String,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this partition.
    #[arg(long, value_name = "N")]
    pub partition: Option<i32>,
    /// Only changes at or after TIME (RFC 3339, a date, or a duration such as 2h ago).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only changes at or before TIME.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// CSV on stdout (at,kind,topic,partition,offset,previous,delta,flagged,by,record,undo_snapshot),
    /// with a header.
    #[arg(long, conflicts_with = "output")]
    pub csv: bool,
    /// Also draw the offsets over time into FILE: SVG or PNG, by its extension.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,
}
