//! Running the `offset-vault` binary against the test environment.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use super::{blocking, env, s3};

/// The result of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Panics with the whole output unless the exit code is `code`.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit code {code}, got {}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    pub fn ok(self) -> Run {
        self.expect_code(0)
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs `offset-vault` with the test cluster's bootstrap server and Connect URL, the given store,
/// the S3 credentials in the environment, and `args`.
pub async fn ov(store: &str, args: &[&str]) -> Run {
    ov_raw(with_services(store, "20s", args)).await
}

/// The arguments that point the binary at the test services and `store`, with a request
/// `timeout`, followed by `args`.
pub fn with_services(store: &str, timeout: &str, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = vec![
        "--bootstrap-server".into(),
        env::bootstrap(),
        "--connect-url".into(),
        env::connect_url(),
        "--store".into(),
        store.into(),
        "--timeout".into(),
        timeout.into(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    all
}

/// Runs `offset-vault` with exactly these arguments (plus the S3 environment).
pub async fn ov_raw(args: Vec<String>) -> Run {
    ov_raw_env(args, &[]).await
}

/// [`ov_raw`] with extra environment variables, set after the S3 ones.
pub async fn ov_raw_env(args: Vec<String>, env: &[(&str, &str)]) -> Run {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    blocking(move || {
        let mut cmd = assert_cmd::Command::cargo_bin("offset-vault").expect("binary built");
        cmd.args(&args)
            .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
            .env_remove("OFFSET_VAULT_CONNECT_URL")
            .env_remove("OFFSET_VAULT_STORE")
            .timeout(Duration::from_secs(180));
        for (k, v) in s3::s3_env().into_iter().chain(env) {
            cmd.env(k, v);
        }
        Run::from(cmd.output().expect("run offset-vault"))
    })
    .await
}

/// A fresh local store directory.
pub fn local_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = dir
        .path()
        .join("vault")
        .to_str()
        .expect("UTF-8")
        .to_string();
    (dir, url)
}

/// Takes a snapshot and returns its id (from the JSON summary).
pub async fn snapshot(store: &str, args: &[&str]) -> String {
    let mut all = vec!["snapshot", "--output", "json"];
    all.extend_from_slice(args);
    let run = ov(store, &all).await.ok();
    run.json()["id"]
        .as_str()
        .expect("id in summary")
        .to_string()
}

/// `show ID --output json`.
pub async fn show(store: &str, id: &str) -> Value {
    ov(store, &["show", id, "--output", "json"])
        .await
        .ok()
        .json()
}

/// The files of a snapshot in a local store.
pub fn local_files(store: &str, id: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(store).join("snapshots");
    let mut out = Vec::new();
    for day in std::fs::read_dir(&root).expect("snapshots dir") {
        let dir = day.expect("entry").path().join(id);
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir).expect("snapshot dir") {
                out.push(f.expect("entry").path());
            }
        }
    }
    out.sort();
    out
}
