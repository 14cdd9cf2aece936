//! Applying a plan: stop connectors, re-plan against the stopped state, take the undo snapshot,
//! commit group offsets, alter connector offsets, read everything back, resume connectors.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::plan::{self, Plan};
use super::{Prepared, RestoreRequest};
use crate::connect::{ConnectClient, OffsetsAnswer};
use crate::error::{Error, Result};
use crate::kafka::{GroupOffset, KafkaClient};
use crate::snapshot::{self, CaptureOptions, Selection, SnapshotKind};
use crate::store::Store;

/// One partition read back after the apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionCheck {
    pub group_id: String,
    pub topic: String,
    pub partition: i32,
    pub target: i64,
    pub actual: Option<i64>,
    pub ok: bool,
}

/// What an executed restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The plan as applied (computed after connectors were stopped).
    pub plan: Plan,
    pub undo_snapshot: Option<String>,
    pub checks: Vec<PartitionCheck>,
    /// Connector offsets that differ after the apply, one line each.
    pub connector_mismatches: Vec<String>,
    /// Connectors returned to their earlier state, and how.
    pub resumed: Vec<String>,
}

const POLL: Duration = Duration::from_millis(500);

/// Stops a connector and waits until it reports STOPPED with no tasks. Workers older than Kafka
/// Connect 3.5 have no stop endpoint: the connector is paused instead, and the caller's wait for
/// an empty group decides whether that was enough (a paused sink task stays in its group).
async fn stop_connector(client: &ConnectClient, name: &str, timeout: Duration) -> Result<()> {
    let paused = match client.stop(name).await {
        Ok(()) => false,
        Err(Error::Connect {
            status: 404 | 405, ..
        }) => {
            tracing::warn!("the worker has no stop endpoint (Kafka Connect < 3.5); pausing {name}");
            client.pause(name).await?;
            true
        }
        Err(e) => return Err(e),
    };
    let deadline = Instant::now() + timeout;
    loop {
        let st = client.status(name).await?;
        let done = if paused {
            st.connector.state == "PAUSED" && st.tasks.iter().all(|t| t.state == "PAUSED")
        } else {
            st.connector.state == "STOPPED" && st.tasks.is_empty()
        };
        if done {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(Error::Blocked(format!(
                "connector {name} did not stop within {} s (state {}, {} task(s)); nothing was changed",
                timeout.as_secs(),
                st.connector.state,
                st.tasks.len()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until a group has no members.
async fn wait_group_empty(kafka: &KafkaClient, group: &str, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let d = kafka.describe_groups(vec![group.to_string()]).await?;
        let state = d.first().map(|d| d.state.clone()).unwrap_or_default();
        if plan::is_inactive(&state) || d.first().is_some_and(|d| d.error.is_some()) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(Error::Blocked(format!(
                "group {group} is still {state} {} s after its connector stopped; nothing was changed",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Returns stopped connectors to the state they had.
async fn resume_all(stopped: &[(ConnectClient, String, String)]) -> (Vec<String>, Vec<String>) {
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for (client, name, state) in stopped {
        let result = match state.as_str() {
            "PAUSED" => client.pause(name).await,
            _ => client.resume(name).await,
        };
        match result {
            Ok(()) => done.push(format!("{name}: back to {state}")),
            Err(e) => failed.push(format!(
                "connector {name} could not be returned to {state}: {e}; do it by hand (PUT /connectors/{name}/resume)"
            )),
        }
    }
    (done, failed)
}

/// Executes a prepared restore. Connectors that it stops are returned to their earlier state
/// whether the apply succeeds or not.
pub async fn execute(
    store: &Store,
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Prepared,
    req: &RestoreRequest,
) -> Result<Outcome> {
    let clients = &prepared.connect_by_name;
    let first = &prepared.plan;
    if !first.applicable {
        return Err(Error::NotApplicable(format!(
            "the plan cannot be applied as it stands:\n  - {}",
            first.problems.join("\n  - ")
        )));
    }
    if first.blocked {
        return Err(Error::Blocked(format!(
            "the restore is blocked:\n  - {}",
            first.problems.join("\n  - ")
        )));
    }

    let mut stopped: Vec<(ConnectClient, String, String)> = Vec::new();
    let result = async {
        for c in first.connectors.iter().filter(|c| c.stop_and_resume) {
            let client = clients.get(&c.name).ok_or_else(|| {
                Error::Internal(format!("no Connect client for connector {}", c.name))
            })?;
            tracing::info!("stopping connector {}", c.name);
            stopped.push((
                client.clone(),
                c.name.clone(),
                c.state.clone().unwrap_or_default(),
            ));
            stop_connector(client, &c.name, req.wait_timeout).await?;
            if let Some(g) = &c.group_id {
                wait_group_empty(kafka, g, req.wait_timeout).await?;
            }
        }
        apply_stopped(store, kafka, all_clients, prepared, req).await
    }
    .await;
    let (resumed, resume_errors) = resume_all(&stopped).await;
    let mut outcome = result?;
    outcome.resumed = resumed;
    if !resume_errors.is_empty() {
        return Err(Error::Blocked(resume_errors.join("\n")));
    }
    Ok(outcome)
}

/// Everything after the connectors are stopped.
async fn apply_stopped(
    store: &Store,
    kafka: &KafkaClient,
    all_clients: &[ConnectClient],
    prepared: &Prepared,
    req: &RestoreRequest,
) -> Result<Outcome> {
    let clients = &prepared.connect_by_name;
    // Re-plan: stopping a sink connector commits its final offsets, and the state may have moved.
    let (view, _) = crate::live::read(
        kafka,
        all_clients,
        &prepared.groups,
        &prepared.connectors,
        req.by_timestamp,
    )
    .await?;
    let plan = plan::build(
        &prepared.plan.snapshot_id,
        &prepared.groups,
        &prepared.connectors,
        &view,
        &req.plan,
    );
    if !plan.applicable || plan.blocked {
        return Err(Error::Blocked(format!(
            "the live state changed while connectors were stopping; nothing was changed:\n  - {}",
            plan.problems.join("\n  - ")
        )));
    }

    let undo_snapshot = if req.undo {
        Some(take_undo(store, kafka, all_clients, prepared, &plan).await?)
    } else {
        tracing::warn!("--no-undo: no undo snapshot is taken; the current offsets are not saved");
        None
    };

    // Commit group offsets.
    let mut failures = Vec::new();
    for g in &plan.groups {
        let offsets: Vec<GroupOffset> = g
            .partitions
            .iter()
            .filter(|p| p.action.commits())
            .filter_map(|p| {
                Some(GroupOffset {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    offset: p.target?,
                    leader_epoch: p.leader_epoch,
                    metadata: p.metadata.clone(),
                })
            })
            .collect();
        if offsets.is_empty() {
            continue;
        }
        tracing::info!(
            "committing {} offset(s) for group {}",
            offsets.len(),
            g.group_id
        );
        match kafka.alter_group_offsets(g.group_id.clone(), offsets).await {
            Ok(answers) => failures.extend(answers.into_iter().filter_map(|a| {
                a.result
                    .err()
                    .map(|e| format!("{} {}[{}]: {e}", g.group_id, a.topic, a.partition))
            })),
            Err(e) => failures.push(format!("{}: {e}", g.group_id)),
        }
    }
    // Connector offsets through the REST API.
    for c in plan.connectors.iter().filter(|c| c.method == "rest") {
        let client = clients.get(&c.name).ok_or_else(|| {
            Error::Internal(format!("no Connect client for connector {}", c.name))
        })?;
        let body: Vec<Value> = c
            .offsets
            .iter()
            .map(|o| serde_json::json!({"partition": o.partition, "offset": o.target}))
            .collect();
        if let Err(e) = client.alter_offsets(&c.name, &body).await {
            failures.push(format!("connector {}: {e}", c.name));
        }
    }
    let undo_hint = undo_snapshot
        .as_ref()
        .map(|id| format!("; the undo snapshot {id} holds the offsets from before"))
        .unwrap_or_default();
    if !failures.is_empty() {
        return Err(Error::VerifyFailed(format!(
            "the apply failed for:\n  - {}\n(other partitions may have changed{undo_hint})",
            failures.join("\n  - ")
        )));
    }

    let (checks, connector_mismatches) = read_back(kafka, clients, &plan).await?;
    Ok(Outcome {
        plan,
        undo_snapshot,
        checks,
        connector_mismatches,
        resumed: Vec::new(),
    })
}

async fn take_undo(
    store: &Store,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    prepared: &Prepared,
    plan: &Plan,
) -> Result<String> {
    let selection = Selection {
        groups: plan.groups.iter().map(|g| g.group_id.clone()).collect(),
        connectors: plan.connectors.iter().map(|c| c.name.clone()).collect(),
        allow_missing: true,
        with_timestamps: prepared.groups.iter().any(|g| {
            g.partitions
                .iter()
                .any(|p| p.last_record_timestamp.is_some())
        }),
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
    let opts = CaptureOptions {
        selection,
        tags: [("undo-of".to_string(), plan.snapshot_id.clone())].into(),
        format: prepared.loaded.manifest.format,
        include_secrets: false,
        kind: SnapshotKind::Undo,
        undo_of: Some(plan.snapshot_id.clone()),
    };
    let captured = snapshot::capture(kafka, &connect, &opts).await?;
    let manifest = snapshot::write(store, &captured).await?;
    Ok(manifest.meta.id)
}

/// Reads every planned offset back and compares it with the plan.
async fn read_back(
    kafka: &KafkaClient,
    clients: &BTreeMap<String, ConnectClient>,
    plan: &Plan,
) -> Result<(Vec<PartitionCheck>, Vec<String>)> {
    let ids: Vec<String> = plan.groups.iter().map(|g| g.group_id.clone()).collect();
    let now = kafka.group_offsets(ids).await?;
    let mut checks = Vec::new();
    for g in &plan.groups {
        let actual: BTreeMap<(String, i32), i64> = now
            .get(&g.group_id)
            .into_iter()
            .flatten()
            .map(|c| ((c.topic.clone(), c.partition), c.offset))
            .collect();
        for p in g.partitions.iter().filter(|p| p.action.commits()) {
            let Some(target) = p.target else { continue };
            let got = actual.get(&(p.topic.clone(), p.partition)).copied();
            checks.push(PartitionCheck {
                group_id: g.group_id.clone(),
                topic: p.topic.clone(),
                partition: p.partition,
                target,
                actual: got,
                ok: got == Some(target),
            });
        }
    }
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
