//! Kafka Connect REST API client: connector listing, status, offsets (KIP-875), stop/resume.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// One Connect cluster's REST endpoint.
#[derive(Debug, Clone)]
pub struct ConnectClient {
    base: String,
    http: reqwest::Client,
}

/// `GET /` of a worker.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct WorkerInfo {
    pub version: String,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub kafka_cluster_id: Option<String>,
}

/// `GET /connectors/{name}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ConnectorInfo {
    pub name: String,
    pub config: BTreeMap<String, String>,
    #[serde(rename = "type", default)]
    pub connector_type: Option<String>,
}

/// State of a connector or task as reported by `GET /connectors/{name}/status`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct StateEntry {
    pub state: String,
    #[serde(default)]
    pub worker_id: Option<String>,
    /// The stack trace of a FAILED connector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct TaskStatus {
    pub id: i32,
    pub state: String,
    #[serde(default)]
    pub worker_id: Option<String>,
    /// The stack trace of a FAILED task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ConnectorStatus {
    pub connector: StateEntry,
    #[serde(default)]
    pub tasks: Vec<TaskStatus>,
    #[serde(rename = "type", default)]
    pub connector_type: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Expanded {
    info: ConnectorInfo,
    status: ConnectorStatus,
}

/// What a worker says about a connector's offsets.
#[derive(Debug, Clone, PartialEq)]
pub enum OffsetsAnswer {
    /// The list of `{"partition": .., "offset": ..}` entries.
    Offsets(Vec<Value>),
    /// The worker has no offsets endpoint (Kafka Connect before 3.6) or refused; the reason.
    Unsupported(String),
}

#[derive(Debug, Deserialize, Serialize)]
struct OffsetsBody {
    offsets: Vec<Value>,
}

impl ConnectClient {
    /// Validates the URL and builds a client with the given request timeout.
    pub fn new(url: &str, timeout: Duration) -> Result<Self> {
        let parsed = url::Url::parse(url).map_err(|e| {
            Error::usage(format!(
                "--connect-url {url}: {e}; expected e.g. http://connect:8083"
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::usage(format!(
                "--connect-url {url}: the scheme must be http or https"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("offset-vault/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Internal(format!("HTTP client: {e}")))?;
        Ok(ConnectClient {
            base: url.trim_end_matches('/').to_string(),
            http,
        })
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, String)> {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|e| Error::ConnectUnreachable {
            url: self.base.clone(),
            detail: describe_reqwest(&e),
        })?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| Error::ConnectUnreachable {
            url: self.base.clone(),
            detail: describe_reqwest(&e),
        })?;
        Ok((status, text))
    }

    fn failure(&self, method: &'static str, path: &str, status: StatusCode, text: &str) -> Error {
        let message = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
            .unwrap_or_else(|| text.chars().take(300).collect());
        Error::Connect {
            url: self.base.clone(),
            method,
            path: path.to_string(),
            status: status.as_u16(),
            message,
        }
    }

    async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let (status, text) = self.send(Method::GET, path, None).await?;
        if !status.is_success() {
            return Err(self.failure("GET", path, status, &text));
        }
        serde_json::from_str(&text).map_err(|e| Error::Connect {
            url: self.base.clone(),
            method: "GET",
            path: path.to_string(),
            status: status.as_u16(),
            message: format!("unexpected answer: {e}"),
        })
    }

    pub async fn worker_info(&self) -> Result<WorkerInfo> {
        self.get_json("/").await
    }

    /// Every connector with its info and status, in one request.
    pub async fn list_expanded(
        &self,
    ) -> Result<BTreeMap<String, (ConnectorInfo, ConnectorStatus)>> {
        let all: BTreeMap<String, Expanded> = self
            .get_json("/connectors?expand=info&expand=status")
            .await?;
        Ok(all
            .into_iter()
            .map(|(k, v)| (k, (v.info, v.status)))
            .collect())
    }

    /// Info and status of one connector; `None` if the worker does not know it.
    pub async fn connector(&self, name: &str) -> Result<Option<(ConnectorInfo, ConnectorStatus)>> {
        let path = format!("/connectors/{}", encode(name));
        let (status, text) = self.send(Method::GET, &path, None).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.failure("GET", &path, status, &text));
        }
        let info: ConnectorInfo = serde_json::from_str(&text)
            .map_err(|e| self.failure("GET", &path, status, &e.to_string()))?;
        let st = self.status(name).await?;
        Ok(Some((info, st)))
    }

    pub async fn status(&self, name: &str) -> Result<ConnectorStatus> {
        self.get_json(&format!("/connectors/{}/status", encode(name)))
            .await
    }

    /// The connector's offsets (KIP-875). Older workers have no such endpoint.
    pub async fn offsets(&self, name: &str) -> Result<OffsetsAnswer> {
        let path = format!("/connectors/{}/offsets", encode(name));
        let (status, text) = self.send(Method::GET, &path, None).await?;
        if status.is_success() {
            let body: OffsetsBody = serde_json::from_str(&text)
                .map_err(|e| self.failure("GET", &path, status, &e.to_string()))?;
            return Ok(OffsetsAnswer::Offsets(body.offsets));
        }
        match status {
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => {
                Ok(OffsetsAnswer::Unsupported(format!(
                    "the worker has no offsets endpoint (HTTP {}); Kafka Connect 3.6 or newer is needed",
                    status.as_u16()
                )))
            }
            _ => Err(self.failure("GET", &path, status, &text)),
        }
    }

    async fn put_state(&self, name: &str, action: &'static str) -> Result<()> {
        let path = format!("/connectors/{}/{action}", encode(name));
        let (status, text) = self.send(Method::PUT, &path, None).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(self.failure("PUT", &path, status, &text))
        }
    }

    /// `POST /connectors` with `initial_state: STOPPED` (KIP-980, Kafka Connect 3.7+): the
    /// connector exists with its config but runs no task until resumed. Older workers ignore the
    /// initial state and would start it, so they are refused before anything is created.
    pub async fn create_stopped(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<()> {
        let version = self.worker_info().await?.version;
        if !version_at_least(&version, 3, 7) {
            return Err(Error::usage(format!(
                "Kafka Connect {version} at {} cannot create a connector in the STOPPED state (that needs 3.7 or newer); create {name} by hand, stop it, and restore again",
                self.base
            )));
        }
        let body = serde_json::json!({
            "name": name,
            "config": config,
            "initial_state": "STOPPED",
        });
        let (status, text) = self.send(Method::POST, "/connectors", Some(&body)).await?;
        if status.is_success() {
            Ok(())
        } else {
            Err(self.failure("POST", "/connectors", status, &text))
        }
    }

    /// `PUT /connectors/{name}/stop` (Kafka Connect 3.5+): tasks shut down, config kept.
    pub async fn stop(&self, name: &str) -> Result<()> {
        self.put_state(name, "stop").await
    }

    pub async fn pause(&self, name: &str) -> Result<()> {
        self.put_state(name, "pause").await
    }

    pub async fn resume(&self, name: &str) -> Result<()> {
        self.put_state(name, "resume").await
    }

    /// `PATCH /connectors/{name}/offsets`: the connector must be STOPPED.
    pub async fn alter_offsets(&self, name: &str, offsets: &[Value]) -> Result<String> {
        let path = format!("/connectors/{}/offsets", encode(name));
        let body = serde_json::json!({ "offsets": offsets });
        let (status, text) = self.send(Method::PATCH, &path, Some(&body)).await?;
        if status.is_success() {
            Ok(serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
                .unwrap_or_default())
        } else {
            Err(self.failure("PATCH", &path, status, &text))
        }
    }

    /// `DELETE /connectors/{name}/offsets` (KIP-875): every offset of the connector is removed;
    /// a source connector then starts again from the beginning of its source, a sink
    /// connector's group has no committed offset. The connector must be STOPPED.
    pub async fn reset_offsets(&self, name: &str) -> Result<String> {
        let path = format!("/connectors/{}/offsets", encode(name));
        let (status, text) = self.send(Method::DELETE, &path, None).await?;
        if status.is_success() {
            Ok(serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
                .unwrap_or_default())
        } else {
            Err(self.failure("DELETE", &path, status, &text))
        }
    }
}

/// Is a version such as `4.3.1` or `3.7.0-SNAPSHOT` at least `major.minor`?
fn version_at_least(version: &str, major: u32, minor: u32) -> bool {
    let mut parts = version
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

fn encode(name: &str) -> String {
    url::form_urlencoded::byte_serialize(name.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

fn describe_reqwest(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The consumer group a sink connector uses: `consumer.override.group.id` when set, otherwise
/// `connect-<name>`.
pub fn sink_group_id(name: &str, config: &BTreeMap<String, String>) -> String {
    config
        .get("consumer.override.group.id")
        .filter(|g| !g.is_empty())
        .cloned()
        .unwrap_or_else(|| format!("connect-{name}"))
}

#[cfg(test)]
mod tests {

    #[test]
    fn versions_compare_by_major_and_minor() {
        for (v, want) in [
            ("3.7.0", true),
            ("4.3.1", true),
            ("3.6.2", false),
            ("3.10.0", true),
            ("2.8", false),
            ("", false),
        ] {
            assert_eq!(version_at_least(v, 3, 7), want, "{v}");
        }
    }

    use super::*;

    #[test]
    fn sink_group_follows_override() {
        let mut config = BTreeMap::new();
        assert_eq!(sink_group_id("orders", &config), "connect-orders");
        config.insert("consumer.override.group.id".into(), "custom".into());
        assert_eq!(sink_group_id("orders", &config), "custom");
    }

    #[test]
    fn names_are_path_encoded() {
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn rejects_bad_urls_before_any_request() {
        assert!(ConnectClient::new("localhost:8083", Duration::from_secs(1)).is_err());
        assert!(ConnectClient::new("ftp://x", Duration::from_secs(1)).is_err());
        assert!(ConnectClient::new("http://x:8083/", Duration::from_secs(1)).is_ok());
    }
}
