//! The audit trail: every change this tool makes, or refuses to make, appends one CloudEvents 1.0
//! event (structured JSON) to the store under `audit/`.
//!
//! # Layout (create-only objects)
//! - `audit/open/<id>.json`: the "opened" marker, written before the command changes anything.
//!   It proves the trail is writable before the change; a marker with no event shows a process
//!   that ended partway (`audit` lists it as `unfinished`).
//! - `audit/date=YYYY-MM-DD/<YYYYMMDDTHHMMSS.mmmZ>-<id>.json`: the event, written once at the
//!   end whatever the outcome, by [`write_event`] (the one function that writes events).
//!
//! # API
//! ```no_run
//! # async fn f(store: offset_vault::store::Store) -> offset_vault::Result<i32> {
//! use offset_vault::audit::{Auditor, EventType, Facts, Mode};
//! let auditor = Auditor::new(store, Mode::Required, vec!["offset-vault".into(), "approve".into()])
//!     .with_key_id(Some("ed25519:ab12...".into()));
//! // Before any change: writes the marker; with Mode::Required an unwritable trail is an error
//! // that says nothing changed.
//! let trail = auditor.begin(EventType::Approve).await?;
//! let mut facts = Facts::default();
//! facts.subject = Some("plan sha256".into());
//! let result: offset_vault::Result<i32> = Ok(0); // ... the command's work, filling `facts` ...
//! trail.finish(facts, &result).await; // never fails: a failed write is a warning naming the id
//! result
//! # }
//! ```
//! Events with no marker (a gap found by `follow`) go through [`Auditor::record`].
//! With a Kafka sink ([`Auditor::with_sink`]) each event written is also produced to a topic.

pub mod event;
pub mod filter;
pub mod list;
pub mod redact;
pub mod sink;
pub mod who;

use std::collections::BTreeMap;

use bytes::Bytes;
use chrono::Utc;
use serde_json::Value;

pub use event::{AuditOutcome, Event, EventData, EventType, GroupChange, Marker, Who};
pub use filter::Filter;
pub use sink::KafkaSink;

use crate::error::{Error, Result};
use crate::store::Store;

/// Whether a command must be able to write its trail before it changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Mode {
    /// The command fails before any change when the "opened" marker cannot be written.
    #[default]
    Required,
    /// A trail that cannot be written is a warning; the command goes on.
    Optional,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Required => "required",
            Mode::Optional => "optional",
        }
    }
}

/// Writes an event to the store, create-only, at [`Event::key`]; returns the key. Every event is
/// written here.
pub async fn write_event(store: &Store, event: &Event) -> Result<String> {
    let key = event.key();
    store
        .put_new_signed(
            &key,
            Bytes::from(event.to_bytes()?),
            crate::sign::Purpose::AuditEvent,
        )
        .await?;
    Ok(key)
}

/// What a command learned while it ran, for its event.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The snapshot id, or the plan's hash.
    pub subject: Option<String>,
    pub snapshot_ids: Vec<String>,
    pub plan_sha256: Option<String>,
    pub undo_snapshot: Option<String>,
    pub groups: Vec<GroupChange>,
    /// The outcome when the command knows it better than its exit code says.
    pub outcome: Option<AuditOutcome>,
    /// The first error, when the command reported it in its output rather than as an error.
    pub message: Option<String>,
    pub detail: BTreeMap<String, Value>,
}

/// Writes a run's events: who runs it, from which command line, into which store (and topic).
#[derive(Debug, Clone)]
pub struct Auditor {
    store: Store,
    mode: Mode,
    who: Who,
    command: Vec<String>,
    sink: Option<KafkaSink>,
}

impl Auditor {
    /// An auditor for `store`; `command` is the command line as given (it is redacted here).
    pub fn new(store: Store, mode: Mode, command: Vec<String>) -> Self {
        Auditor {
            store,
            mode,
            who: Who {
                user: who::user(),
                host: who::host(),
                key_id: None,
                via: None,
            },
            command: redact::redact_args(&command),
            sink: None,
        }
    }

    /// The id of the key that signs the events, recorded in `data.who.key_id`.
    pub fn with_key_id(mut self, key_id: Option<String>) -> Self {
        self.who.key_id = key_id;
        self
    }

    /// Where the command came from (`mcp`), recorded in `data.who.via`.
    pub fn with_via(mut self, via: Option<String>) -> Self {
        self.who.via = via;
        self
    }

    /// Also produce every event written to a Kafka topic.
    pub fn with_sink(mut self, sink: Option<KafkaSink>) -> Self {
        self.sink = sink;
        self
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Writes the "opened" marker of a new event of type `t`. `Mode::Required`: an unwritable
    /// trail is an error (exit code of the store's error: 3, or 10 for access) that says nothing
    /// changed; `Mode::Optional`: a warning.
    pub async fn begin(&self, t: EventType) -> Result<Trail> {
        let id = event::new_id()?;
        let marker = Marker {
            format_version: event::DATA_FORMAT_VERSION.into(),
            id: id.clone(),
            event_type: t.type_name(),
            source: event::source_of(&self.who.host),
            time: event::to_millis(Utc::now()),
            who: self.who.clone(),
            command: self.command.clone(),
        };
        let key = event::marker_key(&id);
        let body = serde_json::to_vec_pretty(&marker)
            .map_err(|e| Error::Internal(format!("encode an audit marker: {e}")))?;
        if let Err(e) = self.store.put_new(&key, Bytes::from(body)).await {
            match self.mode {
                Mode::Required => return Err(unwritable(self.store.url(), &key, e)),
                Mode::Optional => crate::alertln!(
                    "warning: the audit trail cannot be written ({e}); going on without it (--audit optional)"
                ),
            }
        }
        Ok(Trail {
            auditor: self.clone(),
            id,
            event_type: t,
        })
    }

    /// The event of type `t` with id `id` for a command that ended with `result`.
    pub fn event(&self, t: EventType, id: &str, facts: Facts, result: &Result<i32>) -> Event {
        let (code, message) = match result {
            Ok(code) => (*code, facts.message.clone()),
            Err(e) => (e.exit_code(), Some(e.to_string())),
        };
        let outcome = match (result, facts.outcome) {
            (Ok(_), Some(o)) => o,
            (Err(_), Some(AuditOutcome::Partial)) => AuditOutcome::Partial,
            _ => AuditOutcome::of_code(code),
        };
        let mut event = self.bare(t, id, facts);
        event.data.outcome = outcome;
        event.data.exit_code = Some(code);
        event.data.message = message;
        event
    }

    /// An event with the facts, `executed` and no exit code (a fact recorded by a running
    /// process, such as a gap found by `follow`).
    pub fn bare(&self, t: EventType, id: &str, facts: Facts) -> Event {
        Event {
            specversion: event::SPEC_VERSION.into(),
            id: id.to_string(),
            source: event::source_of(&self.who.host),
            event_type: t.type_name(),
            time: event::to_millis(Utc::now()),
            subject: facts.subject,
            datacontenttype: event::DATA_CONTENT_TYPE.into(),
            data: EventData {
                format_version: event::DATA_FORMAT_VERSION.into(),
                who: self.who.clone(),
                command: self.command.clone(),
                snapshot_ids: facts.snapshot_ids,
                plan_sha256: facts.plan_sha256,
                undo_snapshot: facts.undo_snapshot,
                outcome: facts.outcome.unwrap_or(AuditOutcome::Executed),
                exit_code: None,
                message: facts.message,
                groups: facts.groups,
                detail: facts.detail,
            },
        }
    }

    /// Writes an event to the store ([`write_event`]), then to the Kafka topic if there is one
    /// (a produce that fails is a warning: the store's copy is the record).
    pub async fn record(&self, event: &Event) -> Result<()> {
        write_event(&self.store, event).await?;
        if let Some(sink) = &self.sink {
            if let Err(e) = sink.send(event).await {
                crate::alertln!(
                    "warning: audit event {} is in the store but was not produced to {}: {e}",
                    event.id,
                    sink.topic()
                );
            }
        }
        Ok(())
    }
}

/// The error of a required trail that cannot be written: the store's error (its exit code kept)
/// with what it means and how to go on.
fn unwritable(url: &str, key: &str, e: Error) -> Error {
    const ADVICE: &str = "Nothing was changed. Let this user write under audit/ in the store (file permissions, bucket policy), or pass --audit optional to go on without an audit record";
    match e {
        Error::AccessDenied {
            service,
            resource,
            detail,
            ..
        } => Error::AccessDenied {
            service,
            resource,
            detail: format!("the audit trail cannot be written ({detail})"),
            advice: ADVICE,
        },
        other => Error::Store {
            url: url.to_string(),
            detail: format!("the audit trail cannot be written ({key}: {other}). {ADVICE}"),
            source: None,
        },
    }
}

/// A command's place in the trail, between its marker and its event.
#[derive(Debug)]
pub struct Trail {
    auditor: Auditor,
    id: String,
    event_type: EventType,
}

impl Trail {
    /// The id of the marker and of the event to come.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes the event for `result` (the command's own result, returned unchanged by the
    /// caller). Never fails: an event that cannot be written is a warning naming its id.
    pub async fn finish(self, facts: Facts, result: &Result<i32>) {
        let event = self.auditor.event(self.event_type, &self.id, facts, result);
        if let Err(e) = self.auditor.record(&event).await {
            crate::alertln!(
                "warning: audit event {} ({}, {}) could not be written: {e}; its marker audit/open/{}.json stays without an event",
                event.id,
                event.event_type,
                event.data.outcome.name(),
                event.id
            );
        }
    }
}

#[cfg(test)]
mod tests;
