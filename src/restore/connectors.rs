//! Stopping the connectors a restore touches, waiting for their groups to empty, and returning
//! them to the state they had, with the command to do it by hand when that fails.

use std::time::{Duration, Instant};

use super::outcome::{ConnectorOutcome, Outcome};
use super::request::{RestoreRequest, Targets};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::KafkaClient;

/// A connector the restore asked to stop: its client, name, and the state to return it to.
pub(super) type Stopped = (ConnectClient, String, String);

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
                "connector {name} did not stop within {} s (state {}, {} task(s))",
                timeout.as_secs(),
                st.connector.state,
                st.tasks.len()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until a group is known to be safe to change (Empty, Dead or not found).
async fn wait_group_empty(kafka: &KafkaClient, group: &str, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let d = kafka.describe_groups(vec![group.to_string()]).await?;
        let why = match d.first() {
            Some(d) => match d.state.may_change() {
                Ok(()) => return Ok(()),
                Err(why) => why,
            },
            None => "the coordinator did not describe it".to_string(),
        };
        if Instant::now() > deadline {
            return Err(Error::Blocked(format!(
                "group {group} cannot be changed {} s after its connector stopped: {why}",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The REST call that returns a connector to `state`, as a command a person can run.
fn resume_command(url: &str, name: &str, state: &str) -> String {
    let action = if state == "PAUSED" { "pause" } else { "resume" };
    format!(
        "curl -X PUT {}/connectors/{name}/{action}",
        url.trim_end_matches('/')
    )
}

/// Returns stopped connectors to the state they had, a few tries each.
pub(super) async fn resume_all(stopped: &[Stopped], out: &mut Outcome) {
    for (client, name, state) in stopped {
        let mut last = None;
        for attempt in 0..3 {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let result = match state.as_str() {
                "PAUSED" => client.pause(name).await,
                _ => client.resume(name).await,
            };
            match result {
                Ok(()) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(e.to_string()),
            }
        }
        let failed = last.is_some();
        out.connectors.push(ConnectorOutcome {
            name: name.clone(),
            connect_url: client.url().to_string(),
            state_before: state.clone(),
            stopped: true,
            resumed: !failed,
            resume_command: failed.then(|| resume_command(client.url(), name, state)),
            resume_error: last,
            recreated: false,
            note: None,
        });
    }
}

/// Stops the connectors of the plan; `stopped` lists each one as soon as a stop was asked for.
pub(super) async fn stop_connectors(
    kafka: &KafkaClient,
    prepared: &Targets,
    req: &RestoreRequest,
    stopped: &mut Vec<Stopped>,
) -> Result<()> {
    for c in prepared
        .plan()
        .connectors
        .iter()
        .filter(|c| c.stop_and_resume)
    {
        let client = prepared.connect_by_name.get(&c.name).ok_or_else(|| {
            Error::Internal(format!("no Connect client for connector {}", c.name))
        })?;
        // A worker that cannot be asked for the connector's status has not been asked to stop it
        // either: the restore is blocked, and the connector is left as it is.
        if let Err(e) = client.status(&c.name).await {
            return Err(Error::Blocked(format!(
                "connector {} could not be stopped: {e}; it was not stopped",
                c.name
            )));
        }
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
    Ok(())
}

/// Creates the plan's deleted connectors again from the snapshot, STOPPED, and waits until the
/// worker reports them. `created` lists each one as soon as it exists.
pub(super) async fn recreate_connectors(
    prepared: &Targets,
    req: &RestoreRequest,
    all_clients: &[ConnectClient],
    kafka: &KafkaClient,
    created: &mut Vec<(ConnectClient, String)>,
) -> Result<()> {
    for c in prepared.plan().connectors.iter().filter(|c| c.recreate) {
        let snap = prepared
            .connectors
            .iter()
            .find(|s| s.name == c.name)
            .ok_or_else(|| Error::Internal(format!("connector {} not in the snapshot", c.name)))?;
        let client = match all_clients.iter().find(|cl| cl.url() == snap.connect_url) {
            Some(cl) => cl.clone(),
            None => match all_clients.first() {
                Some(cl) => cl.clone(),
                None => ConnectClient::new(&snap.connect_url, kafka.settings().timeout)?,
            },
        };
        let mut config = snap.config.clone();
        config.extend(req.connector_config.clone());
        tracing::info!("creating connector {} again, STOPPED", c.name);
        client.create_stopped(&c.name, &config).await?;
        created.push((client.clone(), c.name.clone()));
        let deadline = Instant::now() + req.wait_timeout;
        loop {
            match client.status(&c.name).await {
                Ok(st) if st.connector.state == "STOPPED" => break,
                _ if Instant::now() > deadline => {
                    return Err(Error::Blocked(format!(
                        "connector {} was created again but is not STOPPED after {} s",
                        c.name,
                        req.wait_timeout.as_secs()
                    )))
                }
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }
    Ok(())
}

/// After the restore: a recreated connector is resumed when its offsets were set (unless it is
/// to stay stopped), and left STOPPED otherwise, with the command that resumes it.
pub(super) async fn finish_recreated(
    created: &[(ConnectClient, String)],
    leave_stopped: bool,
    applied: bool,
    out: &mut Outcome,
) {
    if applied && !leave_stopped {
        let to_resume: Vec<Stopped> = created
            .iter()
            .map(|(cl, name)| (cl.clone(), name.clone(), "RUNNING".to_string()))
            .collect();
        let before = out.connectors.len();
        resume_all(&to_resume, out).await;
        for c in &mut out.connectors[before..] {
            c.recreated = true;
        }
        return;
    }
    for (client, name) in created {
        out.connectors.push(ConnectorOutcome {
            name: name.clone(),
            connect_url: client.url().to_string(),
            state_before: "STOPPED".into(),
            stopped: true,
            resumed: false,
            resume_error: None,
            resume_command: Some(resume_command(client.url(), name, "RUNNING")),
            recreated: true,
            note: Some(if applied {
                "created again and left STOPPED (--leave-stopped)".into()
            } else {
                "created again, but its offsets were not all set: left STOPPED".into()
            }),
        });
    }
}
