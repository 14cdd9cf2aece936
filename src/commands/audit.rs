//! `audit`'s options: which events of the trail to list, and a topic to send them to.

use crate::audit::filter::Filter;
use crate::error::{Error, Result};
use crate::timeutil::parse_time;
use chrono::{DateTime, Utc};
use clap::Args;

/// Arguments of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only events at or after this time (RFC 3339, a date, or a duration like 24h); only the
    /// date folders from then on are read.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only events at or before this time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only events that name this consumer group (restore, reset, import).
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
    /// Only events of this type: restore, reset, prune, import, guard, approve, follow.gap
    /// (or the whole type, dev.offset-vault.restore).
    #[arg(long = "type", value_name = "TYPE")]
    pub event_type: Option<String>,
    /// Also produce every event listed to this Kafka topic (key: the event id, value: the event
    /// as stored, header content-type: application/cloudevents+json). Unfinished markers are
    /// not produced.
    #[arg(long, value_name = "TOPIC")]
    pub to_kafka: Option<String>,
}

impl AuditArgs {
    /// The events the flags select (`now` for durations such as `7d`), checked.
    pub fn filter(&self, now: DateTime<Utc>) -> Result<Filter> {
        let time = |t: &Option<String>| t.as_deref().map(|t| parse_time(t, now)).transpose();
        let filter = Filter {
            since: time(&self.since)?,
            until: time(&self.until)?,
            group: self.group.clone(),
            event_type: self
                .event_type
                .as_deref()
                .map(crate::audit::filter::parse_type)
                .transpose()?,
        };
        if let (Some(s), Some(u)) = (filter.since, filter.until) {
            if s > u {
                return Err(Error::usage("--since is after --until: nothing can match"));
            }
        }
        Ok(filter)
    }
}
