//! Reading the trail back: the events a filter selects, oldest first, and the markers that never
//! got an event (listed as `unfinished`). Only the date folders from `--since` on are read.

use std::collections::BTreeSet;

use chrono::Duration;

use super::event::{self, Event, Marker, AUDIT, OPEN};
use super::filter::{folder_day, Filter};
use crate::error::Result;
use crate::store::Store;

/// How far a marker's write time (the store's clock) may lie from its own time (the writer's
/// clock) before the listing would miss it: the window is widened by this much.
const CLOCK_SLACK_HOURS: i64 = 1;

/// What `audit` lists.
#[derive(Debug, Default)]
pub struct Listing {
    /// The events and unfinished markers, oldest first.
    pub events: Vec<Event>,
    /// Objects that could not be read or decoded, one line each.
    pub problems: Vec<String>,
}

/// Lists the trail's events that pass `filter`, and the unfinished markers in its time window
/// (not with a group filter: a marker names no groups).
pub async fn list(store: &Store, filter: &Filter) -> Result<Listing> {
    let mut out = Listing::default();
    // An event is written after its marker: folders from a little before --since hold every
    // event whose marker could be in the window.
    let from = filter
        .since
        .map(|s| (s - Duration::hours(CLOCK_SLACK_HOURS)).date_naive());
    let mut folders: Vec<String> = store
        .folders(AUDIT)
        .await?
        .into_iter()
        .filter(|f| filter.folder_from(f, from))
        .collect();
    folders.sort();
    let mut finished = BTreeSet::new();
    for folder in folders {
        let in_window = filter.folder_needed(&folder);
        let day = folder_day(&folder);
        for object in store.list(&format!("{AUDIT}/{folder}")).await? {
            let Some((time, id)) = event::parse_event_key(&object.key) else {
                continue;
            };
            finished.insert(id);
            if !in_window || !filter.in_time(time) || day != Some(time.date_naive()) {
                continue;
            }
            match read_event(store, &object.key).await {
                Ok(e) if filter.matches(&e) => out.events.push(e),
                Ok(_) => {}
                Err(e) => out.problems.push(format!("{}: {e}", object.key)),
            }
        }
    }
    if filter.group.is_none() {
        let earliest = filter.since.map(|s| s - Duration::hours(CLOCK_SLACK_HOURS));
        for (object, modified) in store.list_modified(OPEN).await? {
            let Some(id) = event::parse_marker_key(&object.key) else {
                continue;
            };
            if finished.contains(&id) || earliest.is_some_and(|e| modified < e) {
                continue;
            }
            match read_marker(store, &object.key).await {
                Ok(m) => {
                    let e = m.unfinished();
                    if filter.in_time(e.time) && filter.type_matches(&e) {
                        out.events.push(e);
                    }
                }
                Err(e) => out.problems.push(format!("{}: {e}", object.key)),
            }
        }
    }
    out.events
        .sort_by(|a, b| (a.time, &a.id).cmp(&(b.time, &b.id)));
    Ok(out)
}

/// Reads one event; with trusted keys configured, one that no trusted key signed is refused (it
/// is reported as a problem, not listed).
async fn read_event(store: &Store, key: &str) -> Result<Event> {
    let bytes = store.get(key).await?;
    if store.keys().enforcing() {
        let verdict = store
            .judge(key, &bytes, crate::sign::Purpose::AuditEvent)
            .await?;
        if let Some(why) = verdict.refusal() {
            return Err(crate::error::Error::Integrity {
                id: key.to_string(),
                problems: vec![format!("audit event: {why}")],
            });
        }
    }
    Event::from_slice(key, &bytes)
}

async fn read_marker(store: &Store, key: &str) -> Result<Marker> {
    let bytes = store.get(key).await?;
    serde_json::from_slice(&bytes).map_err(|e| crate::error::Error::Decode {
        path: key.to_string(),
        detail: format!("not an audit marker: {e}"),
    })
}
