//! Executing a reviewed plan, phase by phase: stop connectors, plan again and compare with the
//! reviewed plan, write the undo snapshot, commit, read back, wait for drift, and return the
//! connectors to their state on every path. Every step records what it did in the [`Outcome`];
//! nothing that goes wrong is dropped.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use serde_json::Value;

use super::connectors::{
    finish_recreated, recreate_connectors, resume_all, stop_connectors, Stopped,
};
use super::ledger::{Ledger, Planning};
use super::outcome::{Drift, Outcome, PartitionCheck, Phase, Status};
use super::plan::{self, Action, Plan};
use super::request::{RestoreRequest, Targets};
use crate::connect::{ConnectClient, OffsetsAnswer};
use crate::error::{exit, Error, Result};
use crate::kafka::{GroupOffset, GroupType, KafkaClient};
use crate::log::applies::{self as record, AppliedBy, AppliedOffset, ApplyRecord, RecordBody};
use crate::snapshot::{self, CaptureOptions, Selection, SnapshotKind};
use crate::spool::Spool;
use crate::store::Store;

/// The end of the message of every failure before any change.
const NOTHING_CHANGED: &str = "; nothing was changed";

/// Does the plan change anything at all?
fn changes_anything(plan: &Plan) -> bool {
    plan.summary.changes > 0
        || plan.connectors.iter().any(|c| c.recreate)
        || plan
            .connectors
            .iter()
            .any(|c| c.method == "rest" && c.offsets.iter().any(|o| o.changes))
}

/// Executes a prepared (and reviewed) restore. Connectors that it stops are returned to their
/// earlier state on every path. Never returns an error: the outcome says what happened.
pub async fn execute(
    store: &Store,
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Targets,
    req: &RestoreRequest,
    notify: &(dyn Fn(&str) + Sync),
) -> Outcome {
    let mut out = Outcome::new(prepared.plan().clone());
    out.ledger = Some(prepared.ledger.clone());
    out.moved = prepared.moved.clone();
    let first = prepared.plan();
    if !first.applicable {
        out.fail(
            exit::NOT_APPLICABLE,
            format!(
                "the plan cannot be applied as it stands; nothing was changed:\n  - {}",
                first.problems.join("\n  - ")
            ),
        );
        return out;
    }
    // A connector to be stopped may still move its offsets while it stops, so only a plan
    // without one can be judged "nothing to change" before anything is done.
    if !changes_anything(first) && !first.connectors.iter().any(|c| c.stop_and_resume) {
        out.status = Status::NothingToChange;
        return out;
    }
    if first.blocked {
        out.fail(
            exit::BLOCKED,
            format!(
                "the restore is blocked; nothing was changed:\n  - {}",
                first.problems.join("\n  - ")
            ),
        );
        return out;
    }
    let mut stopped = Vec::new();
    let mut created = Vec::new();
    // Ctrl-C (SIGINT) ends the run at its next step, and the connectors are still resumed.
    let interrupted = tokio::select! {
        () = async {
            if let Err(e) = recreate_connectors(prepared, req, all_clients, kafka, &mut created).await {
                out.fail(e.exit_code(), format!("creating a connector again failed: {e}; no offset was changed"));
                return;
            }
            run(store, kafka, all_clients, prepared, req, notify, &mut out, &mut stopped).await
        } => false,
        _ = tokio::signal::ctrl_c() => true,
    };
    if interrupted {
        let changed = out.phase >= Phase::UndoWritten;
        if changed {
            out.status = Status::PartiallyApplied;
        }
        out.fail(
            if changed {
                exit::PARTIALLY_APPLIED
            } else {
                exit::INTERRUPTED
            },
            format!(
                "interrupted (Ctrl-C) after phase {:?}; {}",
                out.phase,
                if changed {
                    "some offsets may have changed; the undo snapshot restores them"
                } else {
                    "nothing was changed"
                }
            ),
        );
    }
    resume_all(&stopped, &mut out).await;
    let leave_stopped = req.plan.recreate.as_ref().is_some_and(|r| r.leave_stopped);
    let applied = matches!(out.status, Status::Applied | Status::NothingToChange);
    finish_recreated(&created, leave_stopped, applied, &mut out).await;
    out
}

#[allow(clippy::too_many_arguments)]
async fn run(
    store: &Store,
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Targets,
    req: &RestoreRequest,
    notify: &(dyn Fn(&str) + Sync),
    out: &mut Outcome,
    stopped: &mut Vec<Stopped>,
) {
    let Some(fresh) = stop_and_review(kafka, all_clients, prepared, req, out, stopped).await else {
        return;
    };
    out.plan = fresh.head.clone();
    out.ledger = Some(fresh.clone());
    out.phase = Phase::Reviewed;
    if !changes_anything(&out.plan) {
        out.status = Status::NothingToChange;
        return;
    }
    if req.undo {
        if !write_undo(
            store,
            kafka,
            all_clients,
            prepared,
            req,
            notify,
            &fresh,
            out,
        )
        .await
        {
            return;
        }
        crate::failpoint::hit("restore-after-undo");
    } else {
        tracing::warn!("--no-undo: no undo snapshot is taken; the current offsets are not saved");
    }
    apply_and_check(store, kafka, prepared, req, &fresh, out).await;
}

/// Stops the connectors the plan stops, plans every batch again against the stopped state and
/// compares it with the reviewed plan. Returns the fresh plan when it is the same and
/// applicable; otherwise records why in `out` (nothing was changed) and returns `None`.
async fn stop_and_review(
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Targets,
    req: &RestoreRequest,
    out: &mut Outcome,
    stopped: &mut Vec<Stopped>,
) -> Option<Ledger> {
    crate::failpoint::hit("restore-before-stop");
    if let Err(e) = stop_connectors(kafka, prepared, req, stopped).await {
        out.fail(e.exit_code(), format!("{e}{NOTHING_CHANGED}"));
        return None;
    }
    if !stopped.is_empty() {
        out.phase = Phase::ConnectorsStopped;
        crate::failpoint::hit("restore-connectors-stopped");
    }
    let planning = Planning {
        kafka,
        clients: all_clients,
        connectors: &prepared.connectors,
        snapshot_id: &prepared.plan().snapshot_id,
        options: &req.plan,
        by_timestamp: req.by_timestamp && prepared.mirror.is_none(),
        batch_partitions: req.batch_partitions,
        mirror: prepared.mirror.as_deref(),
    };
    let again = match planning
        .again(
            &prepared.source,
            &prepared.ledger,
            req.relative_targets,
            req.refuse_moved,
        )
        .await
    {
        Ok(a) => a,
        Err(e) => {
            out.fail(
                e.exit_code(),
                format!("planning again failed: {e}{NOTHING_CHANGED}"),
            );
            return None;
        }
    };
    out.moved.extend(again.moved.iter().cloned());
    let Some(mut fresh) = again.fresh else {
        let e = Error::PlanChanged {
            changes: again.changes,
        };
        out.fail(e.exit_code(), e.to_string());
        return None;
    };
    if !fresh.head.applicable || fresh.head.blocked {
        out.fail(
            if fresh.head.applicable {
                exit::BLOCKED
            } else {
                exit::NOT_APPLICABLE
            },
            format!(
                "the live state changed since the plan was made{NOTHING_CHANGED}:\n  - {}",
                fresh.head.problems.join("\n  - ")
            ),
        );
        return None;
    }
    fresh.head.snapshot_id = prepared.plan().snapshot_id.clone();
    Some(fresh)
}

/// Takes the undo snapshot of what the plan changes, before any change. Returns false (with why
/// in `out`; nothing was changed) when it could not be written.
#[allow(clippy::too_many_arguments)]
async fn write_undo(
    store: &Store,
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Targets,
    req: &RestoreRequest,
    notify: &(dyn Fn(&str) + Sync),
    plan: &Ledger,
    out: &mut Outcome,
) -> bool {
    match take_undo(store, kafka, all_clients, prepared, req, plan).await {
        Ok(id) => {
            let stop = if out.plan.connectors.is_empty() {
                ""
            } else {
                " --stop-connectors"
            };
            // A rehearsal's undo point is of the staging cluster, not the one of the command line.
            let on = if req.undo_tags.contains_key("rehearsal") {
                format!(" -b {}", kafka.bootstrap())
            } else {
                String::new()
            };
            let cmd = format!(
                "offset-vault{on} --store {} restore {id}{stop} --execute",
                store.url()
            );
            notify(&format!(
                "{} snapshot {id} written; no offset has changed yet",
                req.undo_kind
            ));
            out.undo_snapshot = Some(id);
            out.undo_command = Some(cmd);
            out.phase = Phase::UndoWritten;
            true
        }
        Err(e) => {
            out.fail(
                e.exit_code(),
                format!("the undo snapshot could not be written: {e}{NOTHING_CHANGED} (pass --no-undo to restore without one)"),
            );
            false
        }
    }
}

/// What the batches of an apply did so far.
#[derive(Default)]
struct Progress {
    /// Commit and read-back failures, one line each.
    failures: Vec<String>,
    /// The read-back could not be done.
    unverified: Option<String>,
    batches_done: usize,
}

/// Commits the plan batch by batch, records each batch's commits, reads each batch back, and
/// (with `--settle`) watches that they stay. The first batch that fails ends the apply: the
/// outcome names exactly the groups whose commits were acknowledged.
async fn apply_and_check(
    store: &Store,
    kafka: &KafkaClient,
    prepared: &Targets,
    req: &RestoreRequest,
    plan: &Ledger,
    out: &mut Outcome,
) {
    let mut all_checks = match Spool::new() {
        Ok(s) => s,
        Err(e) => {
            out.fail(e.exit_code(), format!("{e}{NOTHING_CHANGED}"));
            return;
        }
    };
    let mut progress = Progress::default();
    let batches = match plan.batches() {
        Ok(b) => b,
        Err(e) => {
            out.fail(e.exit_code(), format!("{e}{NOTHING_CHANGED}"));
            return;
        }
    };
    out.status = Status::Applied;
    for (index, batch) in batches.enumerate() {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                progress.failures.push(e.to_string());
                break;
            }
        };
        if !progress.failures.is_empty() || progress.unverified.is_some() {
            out.groups_not_attempted += batch.groups.len();
            continue;
        }
        if index > 0 {
            crate::failpoint::hit("restore-between-batches");
        }
        apply_batch(
            store,
            kafka,
            prepared,
            req,
            &batch,
            out,
            &mut all_checks,
            &mut progress,
        )
        .await;
        out.phase = Phase::Applied;
    }
    if let Err(e) = all_checks.seal() {
        progress.unverified.get_or_insert(e.to_string());
    }
    out.all_checks = Some(all_checks);
    let what = if req.undo_kind == SnapshotKind::PreReset {
        "reset"
    } else {
        "restore"
    };
    finish_apply(out, progress, plan.batch_count(), what);
    if out.status == Status::Applied && out.verified() && !req.settle.is_zero() {
        settle(kafka, req.settle, plan, out).await;
    }
}

/// Commits one batch, writes its record, and reads it back into `all_checks`.
#[allow(clippy::too_many_arguments)]
async fn apply_batch(
    store: &Store,
    kafka: &KafkaClient,
    prepared: &Targets,
    req: &RestoreRequest,
    batch: &Plan,
    out: &mut Outcome,
    all_checks: &mut Spool<PartitionCheck>,
    progress: &mut Progress,
) {
    let started_at = chrono::Utc::now();
    let committed = commit(
        kafka,
        &prepared.connect_by_name,
        batch,
        req.commit_concurrency,
    )
    .await;
    out.changed_groups.extend(committed.acknowledged);
    out.unconfirmed_groups.extend(committed.unanswered);
    record_apply(store, kafka, req, out, batch, started_at).await;
    progress.failures.extend(committed.failures);
    match read_back(kafka, &prepared.connect_by_name, batch).await {
        Ok((checks, mismatches)) => {
            for c in checks {
                if let Err(e) = all_checks.push(&c) {
                    progress.unverified.get_or_insert(e.to_string());
                }
                if !c.ok {
                    out.checks.push(c);
                }
            }
            out.connector_mismatches.extend(mismatches);
            progress.batches_done += 1;
        }
        Err(e) => {
            progress.unverified = Some(e.to_string());
        }
    }
}

/// The outcome of the apply from what its batches did.
fn finish_apply(out: &mut Outcome, progress: Progress, batches: usize, what: &str) {
    let undo = match &out.undo_command {
        Some(cmd) => {
            format!("; once the cause is fixed, this restores the offsets from before: {cmd}")
        }
        None => "; no undo snapshot was taken (--no-undo)".into(),
    };
    let stopped_early = progress.batches_done < batches;
    if !progress.failures.is_empty() || (stopped_early && progress.unverified.is_some()) {
        out.status = Status::PartiallyApplied;
        let mut lines = progress.failures;
        if let Some(e) = &progress.unverified {
            lines.push(format!("the offsets could not be read back: {e}"));
        }
        out.fail(
            exit::PARTIALLY_APPLIED,
            format!(
                "the {} stopped partway (batch {} of {batches}); {} group(s) changed, {} without an answer (they may have changed), {} not attempted:\n  - {}\n(changed_groups and unconfirmed_groups name them; the read-back below shows where each partition read back stands{undo})",
                what,
                (progress.batches_done + 1).min(batches),
                out.changed_groups.len(),
                out.unconfirmed_groups.len(),
                out.groups_not_attempted,
                lines.join("\n  - ")
            ),
        );
        return;
    }
    if let Some(e) = progress.unverified {
        out.fail(
            exit::VERIFY_FAILED,
            format!("the offsets could not be read back: {e}; they were committed but are not verified (check with kafka-consumer-groups --describe)"),
        );
        return;
    }
    out.changed_groups.clear();
    out.unconfirmed_groups.clear();
    out.phase = Phase::ReadBack;
}

/// What the commits of a batch did.
#[derive(Default)]
struct Committed {
    /// What failed, one line each.
    failures: Vec<String>,
    /// Groups whose commit the broker answered with at least one partition committed.
    acknowledged: Vec<String>,
    /// Groups whose commit got no answer: they may or may not have changed.
    unanswered: Vec<String>,
}

/// Commits every group's targets and sets source connectors' offsets; returns what failed.
/// An offset commit carries one group, so up to `concurrency` groups' commits are in flight at
/// once; every group is attempted whatever happens to the others.
async fn commit(
    kafka: &KafkaClient,
    clients: &BTreeMap<String, ConnectClient>,
    plan: &Plan,
    concurrency: usize,
) -> Committed {
    // Groups of sink connectors written through Kafka Connect are left to the loop below.
    let via_connect = |g: &plan::GroupPlan| {
        plan.connectors
            .iter()
            .any(|c| c.method == "rest-sink" && g.connector.as_deref() == Some(c.name.as_str()))
    };
    let work: Vec<(&plan::GroupPlan, Vec<GroupOffset>)> = plan
        .groups
        .iter()
        .filter(|g| !via_connect(g))
        .map(|g| (g, group_targets(g)))
        .filter(|(_, offsets)| !offsets.is_empty())
        .collect();
    let answers: Vec<(String, std::result::Result<Vec<String>, String>, bool)> = stream::iter(work)
        .map(|(g, offsets)| async move {
            tracing::info!(
                "committing {} offset(s) for group {}",
                offsets.len(),
                g.group_id
            );
            let n = offsets.len();
            let answer = match kafka
                .alter_group_offsets(g.group_id.clone(), g.group_type, offsets)
                .await
            {
                Ok(answers) => {
                    let failed: Vec<String> = answers
                        .into_iter()
                        .filter_map(|a| {
                            a.result.err().map(|e| {
                                format!("{} {}[{}]: {e}", g.group_id, a.topic, a.partition)
                            })
                        })
                        .collect();
                    let some_committed = failed.len() < n;
                    (g.group_id.clone(), Ok(failed), some_committed)
                }
                Err(e) => (
                    g.group_id.clone(),
                    Err(format!("group {}: {e}", g.group_id)),
                    false,
                ),
            };
            crate::failpoint::hit("restore-after-group-commit");
            answer
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut done = Committed::default();
    for (group, answer, some_committed) in answers {
        match answer {
            Ok(failed) => {
                if some_committed {
                    done.acknowledged.push(group);
                }
                done.failures.extend(failed);
            }
            Err(line) => {
                done.unanswered.push(group);
                done.failures.push(line);
            }
        }
    }
    done.failures.sort();
    done.acknowledged.sort();
    done.unanswered.sort();
    for c in plan.connectors.iter().filter(|c| c.method != "group") {
        let Some(client) = clients.get(&c.name) else {
            done.failures
                .push(format!("connector {}: no Connect client", c.name));
            continue;
        };
        let body = connector_body(plan, c);
        if body.is_empty() && !c.reset_all {
            continue;
        }
        let result = if c.reset_all {
            client.reset_offsets(&c.name).await
        } else {
            client.alter_offsets(&c.name, &body).await
        };
        match result {
            Ok(message) => tracing::info!("connector {}: {message}", c.name),
            Err(e) => done.failures.push(format!("connector {}: {e}", c.name)),
        }
    }
    done
}

/// The `PATCH /connectors/NAME/offsets` body of a connector: its source partitions, or for a
/// sink connector written through Kafka Connect its group's targets in the sink form.
fn connector_body(plan: &Plan, c: &plan::ConnectorPlan) -> Vec<Value> {
    if c.method != "rest-sink" {
        return c
            .offsets
            .iter()
            .map(|o| serde_json::json!({"partition": o.partition, "offset": o.target}))
            .collect();
    }
    plan.groups
        .iter()
        .filter(|g| g.connector.as_deref() == Some(c.name.as_str()))
        .flat_map(group_targets)
        .map(|o| {
            serde_json::json!({
                "partition": {"kafka_topic": o.topic, "kafka_partition": o.partition},
                "offset": {"kafka_offset": o.offset},
            })
        })
        .collect()
}

/// The offsets a group's plan commits.
fn group_targets(g: &plan::GroupPlan) -> Vec<GroupOffset> {
    g.partitions
        .iter()
        .filter(|p| p.action.commits())
        // Writing a share group's start offset again wipes the acknowledgements above it,
        // so an unchanged share partition is left alone.
        .filter(|p| !(g.group_type == GroupType::Share && p.action == Action::NoChange))
        .filter_map(|p| {
            Some(GroupOffset {
                topic: p.topic.clone(),
                partition: p.partition,
                offset: p.target?,
                leader_epoch: p.leader_epoch,
                metadata: p.metadata.clone(),
                lag: None,
            })
        })
        .collect()
}

async fn take_undo(
    store: &Store,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    prepared: &Targets,
    req: &RestoreRequest,
    ledger: &Ledger,
) -> Result<String> {
    let plan = &ledger.head;
    let selection = Selection {
        groups: ledger.group_ids.to_vec(),
        connectors: plan.connectors.iter().map(|c| c.name.clone()).collect(),
        allow_missing: true,
        with_timestamps: ledger.with_timestamps,
        ..Default::default()
    };
    let connect: Vec<ConnectClient> = if clients.is_empty() {
        plan.connectors
            .iter()
            .map(|c| ConnectClient::new(&c.connect_url, kafka.settings().timeout))
            .collect::<Result<_>>()?
    } else {
        clients.to_vec()
    };
    let undo = req.undo_kind == SnapshotKind::Undo;
    let mut tags = req.undo_tags.clone();
    if undo {
        tags.insert("undo-of".to_string(), plan.snapshot_id.clone());
    }
    let opts = CaptureOptions {
        selection,
        tags,
        format: prepared.undo_format,
        include_secrets: false,
        encrypt_to: None,
        allow_partial: false,
        allow_empty: true,
        kind: req.undo_kind,
        undo_of: undo.then(|| plan.snapshot_id.clone()),
    };
    let (manifest, _) = snapshot::take(store, kafka, &connect, &opts).await?;
    Ok(manifest.meta.id)
}

/// Writes the record of the commits just made, so `history` knows them for this tool's. The
/// offsets are committed whatever happens here: a record that cannot be written is a warning.
async fn record_apply(
    store: &Store,
    kafka: &KafkaClient,
    req: &RestoreRequest,
    out: &Outcome,
    batch: &Plan,
    started_at: chrono::DateTime<chrono::Utc>,
) {
    let command = if req.undo_kind == SnapshotKind::PreReset {
        AppliedBy::Reset
    } else {
        AppliedBy::Restore
    };
    let record = ApplyRecord::seal(RecordBody {
        kind: record::RECORD_KIND.into(),
        format_version: record::RECORD_FORMAT_VERSION.into(),
        command,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        cluster_id: kafka.cluster_id().into(),
        snapshot_id: out.plan.snapshot_id.clone(),
        undo_snapshot: out.undo_snapshot.clone(),
        started_at,
        finished_at: chrono::Utc::now(),
        offsets: targets(batch)
            .map(|((group_id, topic, partition), offset)| AppliedOffset {
                group_id,
                topic,
                partition,
                offset,
            })
            .collect(),
    });
    match record::write(store, &record).await {
        Ok(id) => tracing::info!("record {id} of the {} written", command.as_str()),
        Err(e) => tracing::warn!(
            "the record of this {} could not be written ({e}); `history` will list its commits as anybody's",
            command.as_str()
        ),
    }
}

/// The committed offsets of the plan's groups now, by (group, topic, partition).
async fn group_offsets_now(
    kafka: &KafkaClient,
    plan: &Plan,
) -> Result<BTreeMap<(String, String, i32), i64>> {
    let ids: Vec<String> = plan.groups.iter().map(|g| g.group_id.clone()).collect();
    Ok(kafka
        .group_offsets(ids)
        .await?
        .into_iter()
        .flat_map(|(g, offsets)| {
            offsets
                .into_iter()
                .map(move |o| ((g.clone(), o.topic, o.partition), o.offset))
        })
        .collect())
}

/// The planned commits: (group, topic, partition) and target.
fn targets(plan: &Plan) -> impl Iterator<Item = ((String, String, i32), i64)> + '_ {
    plan.groups.iter().flat_map(|g| {
        g.partitions
            .iter()
            .filter(|p| p.action.commits())
            .filter_map(move |p| {
                Some((
                    (g.group_id.clone(), p.topic.clone(), p.partition),
                    p.target?,
                ))
            })
    })
}

/// Reads every planned offset back and compares it with the plan.
async fn read_back(
    kafka: &KafkaClient,
    clients: &BTreeMap<String, ConnectClient>,
    plan: &Plan,
) -> Result<(Vec<PartitionCheck>, Vec<String>)> {
    let now = group_offsets_now(kafka, plan).await?;
    let checks = targets(plan)
        .map(|(key, target)| {
            let actual = now.get(&key).copied();
            PartitionCheck {
                group_id: key.0,
                topic: key.1,
                partition: key.2,
                target,
                actual,
                ok: actual == Some(target),
            }
        })
        .collect();
    let mut mismatches = Vec::new();
    for c in plan.connectors.iter().filter(|c| c.method == "rest") {
        let Some(client) = clients.get(&c.name) else {
            continue;
        };
        let live = match client.offsets(&c.name).await? {
            OffsetsAnswer::Offsets(o) => o,
            OffsetsAnswer::Unsupported(why) => {
                mismatches.push(format!(
                    "connector {}: cannot read offsets back: {why}",
                    c.name
                ));
                continue;
            }
        };
        if c.reset_all {
            if !live.is_empty() {
                mismatches.push(format!(
                    "connector {}: its offsets were to be removed, but {} source partition(s) still have one",
                    c.name,
                    live.len()
                ));
            }
            continue;
        }
        for o in &c.offsets {
            let got = live
                .iter()
                .find(|l| l["partition"] == o.partition)
                .map(|l| l["offset"].clone());
            if got.as_ref() != Some(&o.target) {
                mismatches.push(format!(
                    "connector {} partition {}: expected {}, found {}",
                    c.name,
                    o.partition,
                    o.target,
                    got.map(|g| g.to_string())
                        .unwrap_or_else(|| "nothing".into())
                ));
            }
        }
    }
    Ok((checks, mismatches))
}

/// Waits, reads the offsets again, and records every partition that moved: something that is
/// not a group member (a consumer using assign()) may still be committing for the group.
async fn settle(kafka: &KafkaClient, wait: Duration, plan: &Ledger, out: &mut Outcome) {
    tokio::time::sleep(wait).await;
    match drift(kafka, plan).await {
        Ok(drift) => {
            out.drift = drift;
            out.phase = Phase::Settled;
        }
        Err(e) => tracing::warn!(
            "the offsets could not be read again after the settle time ({e}); drift was not checked"
        ),
    }
}

/// Every planned offset that differs from its target now, batch by batch.
async fn drift(kafka: &KafkaClient, plan: &Ledger) -> Result<Vec<Drift>> {
    let mut drift = Vec::new();
    for batch in plan.batches()? {
        let batch = batch?;
        let now = group_offsets_now(kafka, &batch).await?;
        drift.extend(targets(&batch).filter_map(|(key, target)| {
            let after = now.get(&key).copied();
            (after != Some(target)).then_some(Drift {
                group_id: key.0,
                topic: key.1,
                partition: key.2,
                target,
                after_settle: after,
            })
        }));
    }
    Ok(drift)
}
