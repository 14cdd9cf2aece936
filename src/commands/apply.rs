//! What `restore` and `reset` share around their plans: the checks on a reviewed plan file, the
//! exit code of a dry run, the execution, and `--watch` after it.

use std::path::Path;
use std::time::Duration;

use crate::audit::Facts;
use crate::connect::ConnectClient;
use crate::error::{exit, Result};
use crate::kafka::KafkaClient;
use crate::restore::review::PlanFile;
use crate::restore::watch::{self, WatchReport};
use crate::restore::{self, Outcome, Plan, RestoreRequest, Status, Targets};
use crate::store::Store;

/// Checks a reviewed plan's author and approvals before it is applied (`--from-plan`, with
/// `--require-approvals`), and records in the audit facts the plan's hash and whose approvals
/// counted. Nothing has changed when this fails.
pub fn check_reviewed(
    reviewed: Option<&PlanFile>,
    path: Option<&Path>,
    keys: &crate::sign::Keys,
    required: usize,
    facts: &mut Facts,
) -> Result<()> {
    if let (Some(f), Some(path)) = (reviewed, path) {
        let trust =
            crate::restore::approval::require(f, &path.display().to_string(), keys, required)?;
        facts
            .detail
            .insert("approved_by".into(), serde_json::json!(trust.counted));
        if let Some(author) = trust.author.key_id() {
            facts.detail.insert("plan_author".into(), author.into());
        }
    }
    facts.plan_sha256 = reviewed.map(|f| f.sha256.clone());
    Ok(())
}

/// The exit code a dry run reports for a plan.
pub fn plan_code(plan: &Plan) -> i32 {
    if !plan.applicable {
        exit::NOT_APPLICABLE
    } else if plan.blocked && plan.summary.changes > 0 {
        exit::BLOCKED
    } else {
        exit::OK
    }
}

/// A planned restore or reset, ready to execute.
pub struct Execution<'a> {
    pub store: &'a Store,
    pub kafka: &'a KafkaClient,
    pub clients: &'a [ConnectClient],
    pub targets: &'a Targets,
    pub req: &'a RestoreRequest,
    /// `restore` or `reset`.
    pub what: &'static str,
}

impl Execution<'_> {
    /// The undo snapshot, the commits, the read-back and the settle; what happened goes into
    /// the audit `facts` too. `notify` hears each step as it happens.
    pub async fn execute(&self, facts: &mut Facts, notify: &(dyn Fn(&str) + Sync)) -> Outcome {
        // The per-group counts are read again from the outcome below (`audit_into`): not held
        // through the execution.
        facts.groups = Vec::new();
        crate::progress::stage(
            &format!(
                "{}: {} snapshot, commits, read-back, settle",
                self.what, self.req.undo_kind
            ),
            0,
        );
        let outcome = restore::execute(
            self.store,
            self.kafka,
            self.clients,
            self.targets,
            self.req,
            notify,
        )
        .await;
        crate::progress::finish();
        outcome.audit_into(facts);
        outcome
    }

    /// `--watch`: after an applied outcome, follows the plan's connectors and groups for
    /// `duration`. None when there is nothing to watch (the offsets were not applied, or the
    /// plan could not be read again), with a line saying why.
    pub async fn watch(&self, outcome: &Outcome, duration: Duration) -> Option<WatchReport> {
        if outcome.status != Status::Applied {
            crate::noteln!("--watch: nothing to watch, the offsets were not applied");
            return None;
        }
        crate::noteln!(
            "watching the connectors and groups for {}",
            humantime::format_duration(duration)
        );
        let notify = |line: &str| crate::noteln!("watch: {line}");
        let whole = match &outcome.ledger {
            Some(ledger) => match ledger.whole() {
                Ok(plan) => plan,
                Err(e) => {
                    crate::alertln!(
                        "--watch: the plan could not be read again ({e}); nothing is watched"
                    );
                    return None;
                }
            },
            None => outcome.plan.clone(),
        };
        let options = watch::WatchOptions::new(duration);
        let connect = &self.targets.connect_by_name;
        Some(watch::watch(self.kafka, connect, &whole, &options, &notify).await)
    }
}

/// The exit code with a watch's verdict folded in: a failure found before the watch stands.
pub fn with_watch(code: i32, report: Option<&WatchReport>) -> i32 {
    match report {
        Some(report) if code == exit::OK => report.exit_code(),
        _ => code,
    }
}
