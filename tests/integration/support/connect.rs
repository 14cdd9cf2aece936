//! The Kafka Connect REST API: creating, watching and deleting connectors, their offsets, and
//! configs of the FileStream connectors.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::env::connect_url;
use super::poll::eventually;

const FILE_SINK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const FILE_SOURCE_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const STRING_CONVERTER: &str = "org.apache.kafka.connect.storage.StringConverter";

fn http() -> reqwest::Client {
    // A new client per call: tests run on separate runtimes, and pooled connections must not
    // outlive the runtime that opened them.
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("build HTTP client")
}

/// Sends a request to the Connect REST API and returns the status and the JSON body
/// (`Value::Null` when empty). Retries while the worker answers 409 (rebalance in progress).
pub async fn connect_request(
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (reqwest::StatusCode, Value) {
    connect_request_at(&connect_url(), method, path, body).await
}

/// As [`connect_request`], to the Connect REST API at `base` (another worker than the main one).
pub async fn connect_request_at(
    base: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (reqwest::StatusCode, Value) {
    let url = format!("{base}{path}");
    let client = http();
    let (method, url, client) = (&method, &url, &client);
    eventually(
        &format!("{method} {url} to answer something else than 409 (rebalance)"),
        Duration::from_secs(60),
        || async move {
            let mut request = client.request(method.clone(), url);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
            let status = response.status();
            let text = response
                .text()
                .await
                .unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}"));
            let value = if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            if status == reqwest::StatusCode::CONFLICT {
                Err(format!("{status} {value}"))
            } else {
                Ok((status, value))
            }
        },
    )
    .await
}

/// Creates a connector (`POST /connectors`). Panics unless the worker answers 201.
pub async fn create_connector(name: &str, config: Value) -> Value {
    let body = json!({ "name": name, "config": config });
    let (status, value) = connect_request(reqwest::Method::POST, "/connectors", Some(&body)).await;
    assert_eq!(
        status,
        reqwest::StatusCode::CREATED,
        "create connector {name}: {value}"
    );
    value
}

/// `GET /connectors/{name}/status`, or `None` if the connector does not exist.
pub async fn connector_status(name: &str) -> Option<Value> {
    let (status, value) = connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/status"),
        None,
    )
    .await;
    match status {
        reqwest::StatusCode::OK => Some(value),
        reqwest::StatusCode::NOT_FOUND => None,
        other => panic!("status of connector {name}: {other} {value}"),
    }
}

/// Waits until the connector and all its tasks (at least one) are RUNNING; panics with the last
/// status (including any task trace) on FAILED or timeout. Returns the status.
pub async fn wait_connector_running(name: &str, timeout: Duration) -> Value {
    eventually(
        &format!("connector {name} to be RUNNING with all tasks"),
        timeout,
        || async move {
            let Some(status) = connector_status(name).await else {
                return Err("no status: the worker does not know the connector (yet)".to_string());
            };
            let connector_state = status["connector"]["state"].as_str().unwrap_or_default();
            let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
            let failed = connector_state == "FAILED"
                || tasks.iter().any(|t| t["state"].as_str() == Some("FAILED"));
            assert!(!failed, "connector {name} failed: {status:#}");
            let running = connector_state == "RUNNING"
                && !tasks.is_empty()
                && tasks.iter().all(|t| t["state"].as_str() == Some("RUNNING"));
            if running {
                Ok(status)
            } else {
                Err(format!("{status:#}"))
            }
        },
    )
    .await
}

/// Deletes a connector (`DELETE /connectors/{name}`) and waits until the worker no longer lists
/// it. A connector that does not exist is fine.
pub async fn delete_connector(name: &str) {
    let (status, value) = connect_request(
        reqwest::Method::DELETE,
        &format!("/connectors/{name}"),
        None,
    )
    .await;
    assert!(
        status.is_success() || status == reqwest::StatusCode::NOT_FOUND,
        "delete connector {name}: {status} {value}"
    );
    eventually(
        &format!("connector {name} to be gone after DELETE"),
        Duration::from_secs(30),
        || async move {
            match connector_status(name).await {
                None => Ok(()),
                Some(status) => Err(format!("still listed: {status}")),
            }
        },
    )
    .await
}

/// `GET /connectors/{name}/offsets`: `{"offsets": [{"partition": {..}, "offset": {..}}, ..]}`.
pub async fn connector_offsets(name: &str) -> Value {
    let (status, value) = connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/offsets"),
        None,
    )
    .await;
    assert_eq!(
        status,
        reqwest::StatusCode::OK,
        "offsets of connector {name}: {value}"
    );
    value
}

/// Config of a FileStreamSink connector writing the records of `topic` to `out_path`, one value
/// per line. Keys and values are plain strings (StringConverter).
pub fn file_sink(topic: &str, out_path: &Path) -> Value {
    json!({
        "connector.class": FILE_SINK_CLASS,
        "tasks.max": "1",
        "topics": topic,
        "file": out_path.to_str().expect("UTF-8 path"),
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    })
}

/// Config of a FileStreamSource connector sending each line of `in_path` to `topic` as a string
/// value.
pub fn file_source(in_path: &Path, topic: &str) -> Value {
    json!({
        "connector.class": FILE_SOURCE_CLASS,
        "tasks.max": "1",
        "file": in_path.to_str().expect("UTF-8 path"),
        "topic": topic,
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    })
}

/// A FileStreamSink whose values go through the JSON converter: a record that is not JSON
/// fails its task (the default `errors.tolerance=none`), the closest real thing to a sink that
/// cannot process a "poison" record.
pub fn json_file_sink(topic: &str, out_path: &Path) -> Value {
    let mut config = file_sink(topic, out_path);
    config["value.converter"] = json!("org.apache.kafka.connect.json.JsonConverter");
    config["value.converter.schemas.enable"] = json!("false");
    config
}

/// Waits until a task of the connector is FAILED; returns the status (with the task's trace).
pub async fn wait_task_failed(name: &str) -> Value {
    eventually(
        &format!("a task of connector {name} to be FAILED"),
        Duration::from_secs(60),
        || async move {
            let status = connector_status(name)
                .await
                .ok_or_else(|| "the worker does not know the connector (yet)".to_string())?;
            let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
            if tasks.iter().any(|t| t["state"] == "FAILED") {
                Ok(status)
            } else {
                Err(format!("{status:#}"))
            }
        },
    )
    .await
}

/// The lines a FileStreamSink wrote so far.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Waits until the file at `path` has `n` lines.
pub async fn wait_lines(path: &Path, n: usize, timeout: Duration) {
    eventually(&format!("{n} lines written"), timeout, || async move {
        let got = lines(path).len();
        if got == n {
            Ok(())
        } else {
            Err(format!("{got} lines"))
        }
    })
    .await
}

/// A running FileStreamSink on a topic of its own that has written and committed its first
/// records.
pub struct RunningSink {
    pub name: String,
    pub topic: String,
    pub group: String,
    pub out: std::path::PathBuf,
    pub cleanup: ConnectorCleanup,
    _dir: tempfile::TempDir,
}

/// Creates a one-partition topic with `records` records and a FileStreamSink reading it, and
/// waits until the sink has written and committed all of them.
pub async fn running_file_sink(prefix: &str, records: usize) -> RunningSink {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sink.txt");
    let topic = super::unique_name(prefix);
    super::kafka::create_topic(&topic, 1).await;
    super::kafka::produce(&topic, 0, records).await;
    let name = super::unique_name(&format!("{prefix}-conn"));
    let cleanup = ConnectorCleanup::new(&name);
    create_connector(&name, file_sink(&topic, &out)).await;
    wait_connector_running(&name, Duration::from_secs(60)).await;
    let group = format!("connect-{name}");
    super::kafka::wait_committed(&group, &topic, [(0, records as i64)].into()).await;
    wait_lines(&out, records, Duration::from_secs(30)).await;
    RunningSink {
        name,
        topic,
        group,
        out,
        cleanup,
        _dir: dir,
    }
}

/// Deletes a connector when dropped, so a failing test leaves no connector running.
/// Call [`ConnectorCleanup::delete`] at the end of a passing test.
pub struct ConnectorCleanup {
    name: Option<String>,
}

impl ConnectorCleanup {
    pub fn new(name: &str) -> ConnectorCleanup {
        ConnectorCleanup {
            name: Some(name.to_string()),
        }
    }

    /// Deletes the connector now (and waits until it is gone).
    pub async fn delete(mut self) {
        if let Some(name) = self.name.take() {
            delete_connector(&name).await;
        }
    }
}

impl Drop for ConnectorCleanup {
    fn drop(&mut self) {
        let Some(name) = self.name.take() else {
            return;
        };
        // Drop cannot await: delete from a separate thread with its own small runtime.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    let url = format!("{}/connectors/{name}", connect_url());
                    let _ = http().delete(url).send().await;
                });
            }
        })
        .join();
    }
}
