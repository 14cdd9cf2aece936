//! `follow`'s options: what the follower archives and how it holds records before it seals them,
//! checked into [`crate::log::follow::FollowOptions`] before anything is read.

use std::time::Duration;

use clap::Args;

use crate::config::{parse_duration, parse_size};
use crate::error::{Error, Result};
use crate::log::follow::FollowOptions;

/// Arguments of `follow`.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// Archive up to the end of the log as it is now, seal and exit.
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub follower: FollowerArgs,
    /// Archive only this group (repeatable). Default: every group but the follower's own.
    #[arg(help_heading = "Selection", long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Archive only groups whose whole id matches this regular expression.
    #[arg(help_heading = "Selection", long, value_name = "REGEX")]
    pub group_pattern: Option<String>,
    /// With --once: also write the run's metrics in Prometheus text format to PATH, atomically,
    /// for node_exporter's textfile collector (job="follow").
    #[arg(long, value_name = "PATH", requires = "once")]
    pub metrics_textfile: Option<std::path::PathBuf>,
}

/// How the follower runs (`follow`, and `serve`'s follower).
#[derive(Debug, Args, Clone)]
pub struct FollowerArgs {
    /// The follower's consumer group: followers with the same one split the partitions.
    #[arg(long, default_value = "offset-vault-follower", value_name = "GROUP")]
    pub group_id: String,
    /// The longest a commit waits in memory before it is sealed into the store.
    #[arg(long, default_value = "1m", value_name = "DURATION", value_parser = parse_duration)]
    pub segment_interval: Duration,
    /// Records held in memory (all partitions) before the largest buffer is sealed early.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub max_buffered: usize,
    /// The memory the held records may take (an estimate) before the largest buffer is sealed
    /// early; whichever of the two bounds is reached first applies.
    #[arg(long, default_value = "4MiB", value_name = "SIZE", value_parser = parse_size)]
    pub max_buffered_bytes: u64,
    /// Also archive Kafka Connect's offsets topic (the workers' `offset.storage.topic`).
    #[arg(long, value_name = "TOPIC", env = "OFFSET_VAULT_CONNECT_OFFSETS_TOPIC")]
    pub connect_offsets_topic: Option<String>,
}

impl FollowerArgs {
    /// The follower's options, checked (no I/O).
    pub fn options(
        &self,
        once: bool,
        groups: Vec<String>,
        group_pattern: Option<String>,
    ) -> Result<FollowOptions> {
        if self.max_buffered == 0 {
            return Err(Error::usage("--max-buffered must be at least 1"));
        }
        if self.max_buffered_bytes < 64 * 1024 {
            return Err(Error::usage(
                "--max-buffered-bytes must be at least 64KiB (e.g. 4MiB)",
            ));
        }
        if self.segment_interval.is_zero() {
            return Err(Error::usage(
                "--segment-interval must be more than 0 (e.g. 10s, 1m)",
            ));
        }
        Ok(FollowOptions {
            group: self.group_id.clone(),
            once,
            interval: self.segment_interval,
            max_buffered: self.max_buffered,
            max_buffered_bytes: usize::try_from(self.max_buffered_bytes).unwrap_or(usize::MAX),
            groups,
            group_pattern,
            connect_topic: self.connect_offsets_topic.clone(),
            progress: None,
            audit: None,
        })
    }
}
