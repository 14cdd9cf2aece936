//! Which events `audit` lists: by time, group and type. Pure.

use chrono::{DateTime, NaiveDate, Utc};

use super::event::{Event, EventType, AUDIT, TYPE_PREFIX};
use crate::error::{Error, Result};

/// The filters of `audit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Events at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Events at or before this time.
    pub until: Option<DateTime<Utc>>,
    /// Events that name this group among their groups.
    pub group: Option<String>,
    /// Events of this type (its short name, e.g. `restore`; `follow` takes `follow.gap` too).
    pub event_type: Option<String>,
}

/// Checks a `--type` value: a short name (`restore`, `follow.gap`, `follow`) or a whole type
/// (`dev.offset-vault.restore`); returns the short name.
pub fn parse_type(text: &str) -> Result<String> {
    let t = text.trim();
    let short = t.strip_prefix(TYPE_PREFIX).unwrap_or(t);
    let known = EventType::ALL
        .iter()
        .any(|e| e.short() == short || e.short().starts_with(&format!("{short}.")));
    if known {
        return Ok(short.to_string());
    }
    let names: Vec<&str> = EventType::ALL.iter().map(|e| e.short()).collect();
    Err(Error::usage(format!(
        "--type {text}: not an event type; expected one of {}",
        names.join(", ")
    )))
}

impl Filter {
    /// Is `t` inside the time window?
    pub fn in_time(&self, t: DateTime<Utc>) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t <= u)
    }

    /// Does the type match?
    pub fn type_matches(&self, event: &Event) -> bool {
        let Some(want) = &self.event_type else {
            return true;
        };
        let short = event.short_type();
        short == want || short.starts_with(&format!("{want}."))
    }

    /// Does the event pass every filter? An event without groups never matches `--group`.
    pub fn matches(&self, event: &Event) -> bool {
        self.in_time(event.time)
            && self.type_matches(event)
            && self.group.as_ref().is_none_or(|g| {
                event.data.groups.iter().any(|c| &c.group_id == g)
                    || event
                        .data
                        .detail
                        .get("group")
                        .and_then(|v| v.as_str())
                        .is_some_and(|d| d == g)
            })
    }

    /// Does the date folder `name` (`date=YYYY-MM-DD`) hold events at or after `since` (the
    /// folders to read)? Folders with other names are not event folders.
    pub fn folder_needed(&self, name: &str) -> bool {
        self.folder_from(name, self.since.map(|s| s.date_naive()))
            && folder_day(name).is_some_and(|d| self.until.is_none_or(|u| d <= u.date_naive()))
    }

    /// Is the date folder `name` on or after `from`?
    pub fn folder_from(&self, name: &str, from: Option<NaiveDate>) -> bool {
        folder_day(name).is_some_and(|d| from.is_none_or(|f| d >= f))
    }
}

/// The day of a folder `date=YYYY-MM-DD`.
pub fn folder_day(name: &str) -> Option<NaiveDate> {
    let name = name
        .strip_prefix(AUDIT)
        .map_or(name, |n| n.trim_start_matches('/'));
    name.strip_prefix("date=")
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
}
