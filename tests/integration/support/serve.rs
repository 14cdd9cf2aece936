//! `offset-vault serve` as a child process, and readers of what it leaves: its metrics (parsed
//! by Prometheus's own Python client), its leases, the snapshots it listed.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::env;
use super::follower::{Exited, Follower};
use super::ov::{ov, with_services};

/// A free TCP port on 127.0.0.1 (bound, then released for the child to take).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local address").port()
}

/// Starts `serve ARGS` against `store` with `env` set too; the child is a [`Follower`] (the
/// same process handling: stderr collected, SIGTERM, SIGKILL, killed on drop).
pub fn start(store: &str, args: &[&str], env: &[(&str, &str)]) -> Follower {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    start_with(&with_services(store, "5s", &all), env)
}

/// Starts the binary with exactly `args` (no test broker, Connect or store added), `env` set,
/// the variables that would point it elsewhere removed.
pub fn start_with<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> Follower {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_offset-vault"));
    cmd.args(args)
        .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
        .env_remove("OFFSET_VAULT_CONNECT_URL")
        .env_remove("OFFSET_VAULT_STORE")
        .env_remove("OFFSET_VAULT_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("OFFSET_VAULT_LOG", "info,librdkafka=off");
    Follower::spawn(cmd, env)
}

/// One sample of a metric: its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A node_exporter textfile, parsed by Prometheus's own Python client.
pub async fn parse_textfile(path: &std::path::Path) -> Vec<Sample> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
out = []
for family in text_string_to_metric_families(text):
    for s in family.samples:
        out.append({"name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
"#;
    let path = path.to_path_buf();
    let out = super::blocking(move || {
        Command::new(env::python())
            .args(["-c", SCRIPT])
            .arg(&path)
            .output()
            .expect("run python")
    })
    .await;
    assert!(
        out.status.success(),
        "the Prometheus parser failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON from the parser");
    samples_of(&doc)
}

fn samples_of(doc: &Value) -> Vec<Sample> {
    doc.as_array()
        .unwrap()
        .iter()
        .map(|s| Sample {
            name: s["name"].as_str().unwrap().to_string(),
            labels: s["labels"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect(),
            value: s["value"].as_f64().unwrap(),
        })
        .collect()
}

/// GET `/metrics` of `port`, parsed by `prometheus_client.parser.text_string_to_metric_families`
/// (Prometheus's own Python client); also returns the Content-Type.
pub async fn scrape(port: u16) -> (Vec<Sample>, String) {
    const SCRIPT: &str = r#"
import json, sys, urllib.request
from prometheus_client.parser import text_string_to_metric_families
with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
    ctype = r.headers.get("Content-Type")
    text = r.read().decode()
out = []
for family in text_string_to_metric_families(text):
    for s in family.samples:
        out.append({"name": s.name, "labels": s.labels, "value": s.value, "type": family.type})
print(json.dumps({"content_type": ctype, "samples": out}))
"#;
    let url = format!("http://127.0.0.1:{port}/metrics");
    let out = super::blocking(move || {
        Command::new(env::python())
            .args(["-c", SCRIPT, &url])
            .output()
            .expect("run python")
    })
    .await;
    assert!(
        out.status.success(),
        "the Prometheus parser failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON from the parser");
    let samples = samples_of(&doc["samples"]);
    (
        samples,
        doc["content_type"].as_str().unwrap_or_default().to_string(),
    )
}

/// The value of the sample `name` with exactly these labels.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    samples
        .iter()
        .find(|s| s.name == name && s.labels == want)
        .map(|s| s.value)
}

/// GET `path` of `port`: status and body (no body on a refused connection).
pub async fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let url = format!("http://127.0.0.1:{port}{path}");
    let r = reqwest::Client::new()
        .get(url)
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.text().await.unwrap_or_default()))
}

/// A lease of the store: (job, slot file name, holder, pid).
pub fn leases(store: &str, job: &str) -> Vec<(String, Value)> {
    let dir = std::path::Path::new(store).join("serve/leases").join(job);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Value)> = entries
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let body = std::fs::read(e.path()).expect("read a lease");
            (
                name,
                serde_json::from_slice(&body).expect("a lease is JSON"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `list --output json`: (id, created_at, complete) of each snapshot.
pub async fn listed(store: &str) -> Vec<(String, Option<DateTime<Utc>>, bool)> {
    let v = ov(store, &["list", "--output", "json"]).await.ok().json();
    let items = v
        .as_array()
        .cloned()
        .or_else(|| v["snapshots"].as_array().cloned())
        .unwrap_or_else(|| panic!("list --output json: {v:#}"));
    items
        .iter()
        .map(|s| {
            let created = s["created_at"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
            let complete = s["complete"].as_bool().unwrap_or(created.is_some());
            (s["id"].as_str().unwrap().to_string(), created, complete)
        })
        .collect()
}

/// SIGTERM and the exit, which must be 0.
pub async fn stop(f: Follower) -> Exited {
    let out = f.terminate().await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "serve exited with {:?} on SIGTERM:\n{}",
        out.status,
        out.stderr
    );
    out
}
