//! What `prune` decides once the policy has made its plan: the exit code of a plan with
//! refused groups, what the audit event of an executed prune says, and when the deletions
//! that failed make it an error.

use serde_json::json;

use crate::audit::{AuditOutcome, Facts};
use crate::error::{exit, Error};
use crate::retention::{PrunePlan, Pruned};

/// Exit 15 when the policy refused a group (it would keep none of its snapshots), else 0; a
/// scheduled dry run is caught by it before anything is executed.
pub fn refused_code(plan: &PrunePlan) -> i32 {
    match plan.refused().next() {
        Some(_) => exit::PRUNE_REFUSED,
        None => exit::OK,
    }
}

/// What the audit event of an executed prune records: the snapshots deleted, the counts, and
/// `partial` when something was deleted but not all (a refused group, a failed deletion).
pub fn audit_facts(facts: &mut Facts, plan: &PrunePlan, pruned: &Pruned) {
    facts.snapshot_ids = pruned.deleted.clone();
    let refused = plan.refused().count();
    let failed = pruned.failed.len() + pruned.log_failures().len();
    facts
        .detail
        .insert("deleted_snapshots".into(), json!(pruned.deleted.len()));
    facts
        .detail
        .insert("failed_deletions".into(), json!(failed));
    facts.detail.insert("refused_groups".into(), json!(refused));
    if let Some(l) = &pruned.log {
        facts
            .detail
            .insert("deleted_log_segments".into(), json!(l.segments.len()));
    }
    if !pruned.deleted.is_empty() && (refused > 0 || failed > 0) {
        facts.outcome = Some(AuditOutcome::Partial);
    }
}

/// The error of an executed prune whose deletions failed in part (they are listed by then);
/// None when every deletion succeeded.
pub fn failure(pruned: &Pruned, store_url: &str) -> Option<Error> {
    let failed = pruned.log_failures();
    if !failed.is_empty() {
        return Some(Error::store(
            store_url,
            format!(
                "{} object(s) of the commit-log archive could not be deleted (listed above); each chain was cut only from its start, and a later prune goes on",
                failed.len()
            ),
        ));
    }
    if !pruned.failed.is_empty() {
        return Some(Error::store(
            store_url,
            format!(
                "{} snapshot(s) could not be deleted completely (listed above); what is left of them is incomplete or untouched, and a later prune removes it",
                pruned.failed.len()
            ),
        ));
    }
    None
}
