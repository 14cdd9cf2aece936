//! `list` as a library call: the snapshots in the store, newest first, that a filter keeps.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::error::Result;
use crate::snapshot::repo::{self, DayRange, Listed};
use crate::store::Store;
use crate::timeutil::parse_time;
use clap::Args;

/// Which snapshots `list` shows.
#[derive(Debug, Default)]
pub struct ListFilter {
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
    /// Only snapshots that hold this group.
    pub group: Option<String>,
    /// Only snapshots that hold this connector.
    pub connector: Option<String>,
    /// Only snapshots with all these tags.
    pub tags: BTreeMap<String, String>,
    /// Leave out incomplete snapshots (no manifest).
    pub complete_only: bool,
}

impl ListFilter {
    /// An incomplete snapshot (no manifest) is kept only when nothing filters on what a
    /// manifest says; a complete one when it matches every condition.
    pub fn keeps(&self, l: &Listed) -> bool {
        let filtering = self.group.is_some() || self.connector.is_some() || !self.tags.is_empty();
        let Some(m) = &l.manifest else {
            return !self.complete_only
                && !filtering
                && self.since.is_none()
                && self.until.is_none();
        };
        let t = m.meta.created_at;
        self.since.is_none_or(|s| t >= s)
            && self.until.is_none_or(|u| t <= u)
            && self
                .group
                .as_ref()
                .is_none_or(|g| m.summary.group_ids.contains(g))
            && self
                .connector
                .as_ref()
                .is_none_or(|c| m.summary.connector_names.contains(c))
            && self.tags.iter().all(|(k, v)| m.meta.tags.get(k) == Some(v))
    }
}

/// The snapshots the filter keeps; only the date folders between `since` and `until` are read.
pub async fn list(store: &Store, filter: &ListFilter) -> Result<Vec<Listed>> {
    let days = DayRange {
        from: filter.since.map(|t| t.date_naive()),
        to: filter.until.map(|t| t.date_naive()),
    };
    let all = repo::list(store, days).await?;
    Ok(all.into_iter().filter(|l| filter.keeps(l)).collect())
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only snapshots that contain this group.
    #[arg(help_heading = "Selection", long)]
    pub group: Option<String>,
    /// Only snapshots that contain this connector.
    #[arg(help_heading = "Selection", long)]
    pub connector: Option<String>,
    /// Only snapshots with this tag KEY=VALUE (repeatable: all must match).
    #[arg(help_heading = "Selection", long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only snapshots created at or after this time (RFC 3339, a date, or a duration like 24h).
    #[arg(help_heading = "Selection", long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only snapshots created at or before this time.
    #[arg(help_heading = "Selection", long, value_name = "TIME")]
    pub until: Option<String>,
    /// Leave out incomplete snapshots (no manifest).
    #[arg(help_heading = "Selection", long)]
    pub complete_only: bool,
}

impl ListArgs {
    /// The filter the flags give (`now` for durations such as `24h`), checked.
    pub fn filter(&self, now: DateTime<Utc>) -> Result<ListFilter> {
        let time = |t: &Option<String>| t.as_deref().map(|t| parse_time(t, now)).transpose();
        Ok(ListFilter {
            since: time(&self.since)?,
            until: time(&self.until)?,
            group: self.group.clone(),
            connector: self.connector.clone(),
            tags: crate::config::parse_tags(&self.tags)?,
            complete_only: self.complete_only,
        })
    }
}
