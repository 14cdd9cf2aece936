//! `audit`'s options: which events of the trail to list, and a topic to send them to.

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
