//! Stopping the connectors a restore touches, waiting for their groups to empty, and returning
//! them to the state they had, with the command to do it by hand when that fails.

use std::time::{Duration, Instant};

use super::outcome::{ConnectorOutcome, Outcome};
use super::{Prepared, RestoreRequest};
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
        });
    }
}

/// Stops the connectors of the plan; `stopped` lists each one as soon as a stop was asked for.
pub(super) async fn stop_connectors(
    kafka: &KafkaClient,
    prepared: &Prepared,
    req: &RestoreRequest,
    stopped: &mut Vec<Stopped>,
) -> Result<()> {
    for c in prepared
        .plan
        .connectors
        .iter()
        .filter(|c| c.stop_and_resume)
    {
        let client = prepared.connect_by_name.get(&c.name).ok_or_else(|| {
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
    Ok(())
}
