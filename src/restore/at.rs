//! `restore --at TIME`: the committed offsets of the selected groups exactly as they were at an
//! instant, from the newest snapshot before it plus every record the commit-log archive holds
//! between the two (the reconstruction `show`, `diff` and `export --at` share, in
//! [`crate::log::at`]). The result replaces the snapshot's targets; the plan, the safety checks
//! and the apply are restore's, unchanged.
//!
//! The archive must cover the whole interval for the group's partition of `__consumer_offsets`:
//! its segments continuous, the first one holding records from before the snapshot (or starting
//! at the log's offset 0), the last one sealed at or after the instant. Anything less is a gap, and a restore into a gap is refused.

use chrono::{DateTime, Utc};

use super::prepare::Verified;
use super::request::RestoreRequest;
use crate::diff::Filter;
use crate::error::{Error, Result};
use crate::log::at::{reconstruct_each, AtRequest};
use crate::spool::Spool;
use crate::store::Store;

/// Replaces the verified snapshot's group targets with the positions at `at` (the shared
/// reconstruction of `--at`, [`crate::log::at`]). Returns one line saying where they came from.
/// A group with no committed offset at the instant keeps no target (its offsets are left as
/// they are); a share group is left out (its positions are not in the commit log).
pub async fn apply(
    store: &Store,
    verified: &mut Verified,
    req: &RestoreRequest,
    at: DateTime<Utc>,
) -> Result<String> {
    let at_req = AtRequest {
        at,
        filter: Filter {
            groups: req.groups.clone(),
            connectors: req.connectors.clone(),
            topics: req.topics.clone(),
            partitions: req.partitions.clone(),
        },
        command: "restore",
    };
    // The groups of the selected connectors are planned first, with their connectors (those
    // created after the base too).
    let front: std::collections::BTreeSet<String> = verified
        .source
        .front
        .iter()
        .map(|g| g.group_id.clone())
        .chain(
            verified
                .connectors
                .iter()
                .filter_map(|c| c.group_id.clone()),
        )
        .collect();
    let source = std::mem::replace(
        &mut verified.source,
        super::ledger::GroupSource::memory(Vec::new(), &front),
    );
    let meta = &verified.manifest.meta;
    let beyond = crate::log::at::beyond(&req.groups, &req.connectors, &verified.connectors);
    // The groups at the instant go to a spool as they come (those of the selected connectors
    // stay in memory, planned first): what is held is one source partition's records, not
    // every group of the base and of the instant.
    let mut front_groups = Vec::new();
    let mut rest = Spool::new()?;
    let instant = reconstruct_each(
        store,
        meta,
        &mut source.each(),
        beyond,
        &verified.connectors,
        &at_req,
        true,
        &mut |g| {
            if front.contains(&g.snapshot.group_id) {
                front_groups.push(g.snapshot);
                Ok(())
            } else {
                rest.push(&g.snapshot)
            }
        },
    )
    .await
    .map_err(|e| crate::log::at::log_start_refusal(e, meta))
    .map_err(|e| match e {
        Error::NotApplicable(why) => Error::NotApplicable(format!("{why}; nothing was changed")),
        other => other,
    })?;
    drop(source);
    if instant.groups == 0 && verified.connectors.is_empty() {
        return Err(Error::usage(format!(
            "the selection matches nothing at {}: no selected group had a committed offset then (check --group, --connector, --topic and --partition against `offset-vault show --at`)",
            crate::log::at::millis(at)
        )));
    }
    let mut line = instant.describe();
    for note in verified.notes.iter().chain(&instant.caveats) {
        line.push_str(&format!("; {note}"));
    }
    for u in &instant.undiscovered {
        line.push_str(&format!(
            "; groups created after the base in {u} could not be looked for and are left as they are"
        ));
    }
    let absent = &instant.absent;
    if !absent.is_empty() {
        line.push_str(&format!(
            "; no committed offset at that instant for {} (left as they are)",
            absent.join(", ")
        ));
    }
    if !instant.left_out.is_empty() {
        line.push_str(&format!(
            "; share group(s) {} left out (their positions are not in the commit log)",
            instant.left_out.join(", ")
        ));
    }
    if !instant.sources_as_snapshot.is_empty() {
        line.push_str(&format!(
            "; the offsets of source connector(s) {} are the snapshot's (the store holds no archive of Connect's offsets topic: run offset-vault follow --connect-offsets-topic TOPIC)",
            instant.sources_as_snapshot.join(", ")
        ));
    }
    for c in &instant.connectors {
        line.push_str(&format!(
            "; source connector {}: {} archived record(s) of Connect's offsets topic replayed",
            c.name, c.records
        ));
        if let Some(v) = verified.connectors.iter_mut().find(|v| v.name == c.name) {
            v.offsets = Some(c.offsets.clone());
            v.offsets_unavailable = None;
        }
    }
    rest.seal()?;
    verified.source = super::ledger::GroupSource {
        front: front_groups,
        rest: super::ledger::Rest::Spooled(rest),
    };
    Ok(line)
}
