//! What an executed restore did, built from the phase it reached: printed as a table or as one
//! JSON document on every path, failures included, and mapped to one exit code.

use serde::Serialize;

use super::plan::Plan;
use super::review::Moved;
use crate::error::exit;

/// The phases of an executed restore, in order. The outcome records the last one completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The snapshot was chosen, verified and planned against the cluster; nothing was changed.
    Planned,
    /// Connectors were stopped and their groups emptied.
    ConnectorsStopped,
    /// The plan was computed again and matches the reviewed one.
    Reviewed,
    /// The undo snapshot was written.
    UndoWritten,
    /// Offsets were committed (or some of them: see the errors).
    Applied,
    /// Offsets were read back.
    ReadBack,
    /// Offsets were read again after the settle time.
    Settled,
}

/// How the restore ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Every offset was applied and read back as planned.
    Applied,
    /// Nothing needed to change; nothing was done (no undo snapshot).
    NothingToChange,
    /// Stopped before any offset changed.
    NotApplied,
    /// Stopped after some offsets may have changed.
    PartiallyApplied,
}

/// What happened to a connector the restore stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConnectorOutcome {
    pub name: String,
    pub connect_url: String,
    /// The state it had and is returned to.
    pub state_before: String,
    pub stopped: bool,
    /// Returned to `state_before`.
    pub resumed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_error: Option<String>,
    /// The command that returns it to its state, when that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    /// Created again from the snapshot by this restore (`--recreate-connectors`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recreated: bool,
    /// Why it was left as it is, when on purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One partition read back after the apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PartitionCheck {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub target: i64,
    pub actual: Option<i64>,
    pub ok: bool,
}

/// A partition whose offset moved after it was read back correctly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub target: i64,
    pub after_settle: Option<i64>,
}

/// One thing that went wrong, with its exit code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub exit_code: i32,
    pub message: String,
}

/// Everything an executed restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub status: Status,
    /// The last phase completed.
    pub phase: Phase,
    /// The plan as applied.
    pub plan: Plan,
    /// Current offsets that moved between the review and the apply (allowed).
    pub moved: Vec<Moved>,
    pub undo_snapshot: Option<String>,
    /// The command that restores the undo snapshot.
    pub undo_command: Option<String>,
    /// The partitions read back with another offset than their target (all of them, in order,
    /// are in the JSON output).
    pub checks: Vec<PartitionCheck>,
    /// A restore that stopped partway: the groups whose commits the broker acknowledged, those
    /// whose commit got no answer (they may have changed), and how many were not attempted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed_groups: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unconfirmed_groups: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub groups_not_attempted: usize,
    /// The plan's groups, batch by batch (`plan` holds its totals).
    #[serde(skip)]
    pub ledger: Option<super::ledger::Ledger>,
    /// Every partition read back, in order.
    #[serde(skip)]
    pub all_checks: Option<crate::spool::Spool<PartitionCheck>>,
    /// Connector offsets that differ after the apply, one line each.
    pub connector_mismatches: Vec<String>,
    pub drift: Vec<Drift>,
    pub connectors: Vec<ConnectorOutcome>,
    pub errors: Vec<Problem>,
}

impl Outcome {
    pub fn new(plan: Plan) -> Self {
        Outcome {
            status: Status::NotApplied,
            phase: Phase::Planned,
            plan,
            moved: Vec::new(),
            undo_snapshot: None,
            undo_command: None,
            checks: Vec::new(),
            changed_groups: Vec::new(),
            unconfirmed_groups: Vec::new(),
            groups_not_attempted: 0,
            ledger: None,
            all_checks: None,
            connector_mismatches: Vec::new(),
            drift: Vec::new(),
            connectors: Vec::new(),
            errors: Vec::new(),
        }
    }

    pub fn fail(&mut self, exit_code: i32, message: impl Into<String>) {
        self.errors.push(Problem {
            exit_code,
            message: message.into(),
        });
    }

    pub fn verified(&self) -> bool {
        self.phase >= Phase::ReadBack
            && self.checks.iter().all(|c| c.ok)
            && self.connector_mismatches.is_empty()
    }

    /// One exit code for the whole outcome. A restore that stopped partway outranks everything
    /// (offsets may be half changed); then a connector left stopped; then the first error before
    /// any change; then a read-back difference; then drift.
    pub fn exit_code(&self) -> i32 {
        if self.status == Status::PartiallyApplied {
            return exit::PARTIALLY_APPLIED;
        }
        if self.connectors.iter().any(|c| c.resume_error.is_some()) {
            return exit::RESUME_FAILED;
        }
        if let Some(first) = self.errors.first() {
            return first.exit_code;
        }
        if self.phase >= Phase::ReadBack && !self.verified() {
            return exit::VERIFY_FAILED;
        }
        if !self.drift.is_empty() {
            return exit::DRIFT;
        }
        exit::OK
    }
}

impl Outcome {
    /// What the audit event of an executed restore or reset says: the plan as applied (per
    /// group), the undo snapshot, and how it ended.
    pub fn audit_into(&self, facts: &mut crate::audit::Facts) {
        use crate::audit::AuditOutcome;
        facts.groups = match &self.ledger {
            Some(ledger) => ledger.group_changes().unwrap_or_else(|e| {
                tracing::warn!("the plan's per-group counts could not be read again: {e}");
                Vec::new()
            }),
            None => self.plan.group_changes(),
        };
        facts.undo_snapshot = self.undo_snapshot.clone();
        facts.message = self.errors.first().map(|e| e.message.clone());
        facts.outcome = Some(match self.status {
            Status::Applied | Status::NothingToChange => AuditOutcome::Executed,
            Status::PartiallyApplied => AuditOutcome::Partial,
            Status::NotApplied => match self.errors.first() {
                Some(e) => AuditOutcome::of_code(e.exit_code),
                None => AuditOutcome::Failed,
            },
        });
        if facts.outcome == Some(AuditOutcome::Executed) && self.status != Status::Applied {
            facts
                .detail
                .insert("nothing_to_change".into(), serde_json::Value::Bool(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::plan::PlanSummary;

    fn outcome() -> Outcome {
        Outcome::new(Plan {
            snapshot_id: "S".into(),
            groups: vec![],
            connectors: vec![],
            summary: PlanSummary::default(),
            applicable: true,
            blocked: false,
            problems: vec![],
        })
    }

    fn check(ok: bool) -> PartitionCheck {
        PartitionCheck {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 0,
            target: 1,
            actual: Some(if ok { 1 } else { 2 }),
            ok,
        }
    }

    fn connector(resume_error: Option<&str>) -> ConnectorOutcome {
        ConnectorOutcome {
            name: "c".into(),
            connect_url: "http://c".into(),
            state_before: "RUNNING".into(),
            stopped: true,
            resumed: resume_error.is_none(),
            resume_error: resume_error.map(String::from),
            resume_command: None,
            recreated: false,
            note: None,
        }
    }

    #[test]
    fn exit_codes_by_outcome() {
        let drift = Drift {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 0,
            target: 1,
            after_settle: Some(5),
        };
        // (name, how the outcome is shaped, expected exit code)
        type Shape = fn(&mut Outcome, &Drift);
        let cases: Vec<(&str, Shape, i32)> = vec![
            (
                "applied and verified",
                |o, _| {
                    o.status = Status::Applied;
                    o.phase = Phase::Settled;
                    o.checks.push(check(true));
                },
                exit::OK,
            ),
            (
                "nothing to change",
                |o, _| o.status = Status::NothingToChange,
                exit::OK,
            ),
            (
                "read back differs",
                |o, _| {
                    o.status = Status::Applied;
                    o.phase = Phase::ReadBack;
                    o.checks.push(check(false));
                },
                exit::VERIFY_FAILED,
            ),
            (
                "drift after settle",
                |o, d| {
                    o.status = Status::Applied;
                    o.phase = Phase::Settled;
                    o.checks.push(check(true));
                    o.drift.push(d.clone());
                },
                exit::DRIFT,
            ),
            (
                "blocked before changes",
                |o, _| o.fail(exit::BLOCKED, "x"),
                exit::BLOCKED,
            ),
            (
                "plan changed, connector not resumed",
                |o, _| {
                    o.fail(exit::PLAN_CHANGED, "x");
                    o.connectors.push(connector(Some("down")));
                },
                exit::RESUME_FAILED,
            ),
            (
                "partially applied and connector not resumed",
                |o, _| {
                    o.status = Status::PartiallyApplied;
                    o.fail(exit::UNREACHABLE, "x");
                    o.connectors.push(connector(Some("down")));
                },
                exit::PARTIALLY_APPLIED,
            ),
            (
                "applied, verified, connector not resumed",
                |o, _| {
                    o.status = Status::Applied;
                    o.phase = Phase::Settled;
                    o.connectors.push(connector(Some("down")));
                },
                exit::RESUME_FAILED,
            ),
            (
                "applied, connector resumed",
                |o, _| {
                    o.status = Status::Applied;
                    o.phase = Phase::Settled;
                    o.connectors.push(connector(None));
                },
                exit::OK,
            ),
        ];
        for (name, shape, want) in cases {
            let mut o = outcome();
            shape(&mut o, &drift);
            assert_eq!(o.exit_code(), want, "{name}");
        }
    }
}
