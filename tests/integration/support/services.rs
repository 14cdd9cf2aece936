//! Stopping, killing and starting the real services, for fault injection.
//!
//! Each call runs `scripts/test-env stop|kill|start NAME`, which finds the service by the pid it
//! recorded when it started it (so only services of that environment are touched). The scratch
//! directory with the pid files is `OV_TEST_ENV_DIR`, the repository's `target/test-env` by
//! default. Other tests share these services: a test that stops one must start it again, and a
//! test that uses them must tolerate a service that is briefly away.

use std::path::PathBuf;
use std::process::Command;

use super::blocking;
use super::env::test_env_dir;

/// A service that `scripts/test-env` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// The Kafka broker (KRaft, single node).
    Kafka,
    /// The Kafka Connect worker.
    Connect,
    /// The S3 server.
    S3,
    /// The second Kafka cluster (KRaft, single node; see `scripts/test-env`).
    Kafka2,
    /// The brand-new cluster (KRaft, single node, formatted anew on every start; see
    /// `support/fresh.rs`).
    Kafka3,
}

impl Service {
    /// The name `scripts/test-env` knows the service by.
    pub fn name(self) -> &'static str {
        match self {
            Service::Kafka => "kafka",
            Service::Connect => "connect",
            Service::S3 => "s3",
            Service::Kafka2 => "kafka2",
            Service::Kafka3 => "kafka3",
        }
    }
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/test-env")
}

/// Runs `scripts/test-env COMMAND NAME` and returns its stdout; panics with all of its output
/// when it fails.
async fn test_env(command: &'static str, service: Service) -> String {
    let dir = test_env_dir();
    blocking(move || {
        let output = Command::new(script())
            .args([command, service.name()])
            .env("OV_TEST_ENV_DIR", &dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script().display()));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "scripts/test-env {command} {} failed ({}), with OV_TEST_ENV_DIR={}:\n{stdout}\n{}",
            service.name(),
            output.status,
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    })
    .await
}

/// Kills the service at once (SIGKILL), as a crash would, and returns when its process is gone.
pub async fn kill_service(service: Service) {
    test_env("kill", service).await;
}

/// Stops the service cleanly (SIGTERM, then SIGKILL after the script's stop timeout).
pub async fn stop_service(service: Service) {
    test_env("stop", service).await;
}

/// Starts the service and returns once it is ready, as `scripts/test-env up` waits for it.
pub async fn start_service(service: Service) {
    test_env("start", service).await;
}

/// The pid of the running service, or `None` when it is not running.
pub async fn service_pid(service: Service) -> Option<u32> {
    let dir = test_env_dir();
    blocking(move || {
        let output = Command::new(script())
            .args(["pid", service.name()])
            .env("OV_TEST_ENV_DIR", &dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script().display()));
        if !output.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Some(
            text.trim().parse().unwrap_or_else(|e| {
                panic!("scripts/test-env pid {}: {text:?}: {e}", service.name())
            }),
        )
    })
    .await
}
