//! Connection settings and reachability checks.
//!
//! Every setting comes from an environment variable and defaults to the local environment that
//! `scripts/test-env up` starts (see `scripts/test-env env`). A test that needs a service calls
//! `require_*` first: when the service does not answer, the test prints a loud SKIPPED line and
//! returns, except under CI (`CI` set), where it fails.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn env_or(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => value,
        _ => default.to_string(),
    }
}

/// Kafka bootstrap servers (`OV_BOOTSTRAP`).
pub fn bootstrap() -> String {
    env_or("OV_BOOTSTRAP", "127.0.0.1:19092")
}

/// Bootstrap of the SASL_PLAINTEXT listener with SASL/PLAIN (`OV_SASL_BOOTSTRAP`).
pub fn sasl_bootstrap() -> String {
    env_or("OV_SASL_BOOTSTRAP", "127.0.0.1:19094")
}

/// Bootstrap of the SASL_PLAINTEXT listener with SCRAM-SHA-256 and SCRAM-SHA-512
/// (`OV_SCRAM_BOOTSTRAP`).
pub fn scram_bootstrap() -> String {
    env_or("OV_SCRAM_BOOTSTRAP", "127.0.0.1:19095")
}

/// The SCRAM user, with credentials for both mechanisms (`OV_SCRAM_USER`).
pub fn scram_user() -> String {
    env_or("OV_SCRAM_USER", "ov-scram")
}

/// The SCRAM user's password (`OV_SCRAM_PASSWORD`).
pub fn scram_password() -> String {
    env_or("OV_SCRAM_PASSWORD", "ov-scram-secret")
}

/// Bootstrap of the TLS listener, server certificate only (`OV_TLS_BOOTSTRAP`).
pub fn tls_bootstrap() -> String {
    env_or("OV_TLS_BOOTSTRAP", "127.0.0.1:19096")
}

/// PEM file with the CA certificate that signed the TLS listener's certificate (`OV_TLS_CA_FILE`,
/// default: `tls/ca.pem` in [`test_env_dir`]).
pub fn tls_ca_file() -> PathBuf {
    match std::env::var("OV_TLS_CA_FILE") {
        Ok(path) if !path.is_empty() => PathBuf::from(path),
        _ => test_env_dir().join("tls/ca.pem"),
    }
}

fn env_port(name: &str, default: u16) -> u16 {
    let value = env_or(name, &default.to_string());
    value
        .parse()
        .unwrap_or_else(|e| panic!("{name}={value:?} is not a port: {e}"))
}

/// The port the PROXIED listener binds (`OV_PROXIED_LISTEN_PORT`): a delay proxy forwards to it.
pub fn proxied_listen_port() -> u16 {
    env_port("OV_PROXIED_LISTEN_PORT", 19098)
}

/// The port the broker advertises for the PROXIED listener (`OV_PROXIED_ADVERTISED_PORT`), where
/// the delay proxy listens.
pub fn proxied_advertised_port() -> u16 {
    env_port("OV_PROXIED_ADVERTISED_PORT", 19099)
}

/// Bootstrap of the second cluster's PLAINTEXT listener (`OV_KAFKA2_BOOTSTRAP`): its principal,
/// User:ANONYMOUS, is a super user there, so ACLs never apply to it.
pub fn other_bootstrap() -> String {
    env_or("OV_KAFKA2_BOOTSTRAP", "127.0.0.1:19192")
}

/// Bootstrap of the second cluster's SASL_PLAINTEXT listener with SASL/PLAIN
/// (`OV_KAFKA2_SASL_BOOTSTRAP`), for [`other_user`] and [`other_admin_user`].
pub fn other_sasl_bootstrap() -> String {
    env_or("OV_KAFKA2_SASL_BOOTSTRAP", "127.0.0.1:19194")
}

/// The second cluster's SASL/PLAIN user that is not a super user: ACLs apply to it
/// (`OV_KAFKA2_USER`).
pub fn other_user() -> String {
    env_or("OV_KAFKA2_USER", "ov-user")
}

/// [`other_user`]'s password (`OV_KAFKA2_PASSWORD`).
pub fn other_password() -> String {
    env_or("OV_KAFKA2_PASSWORD", "ov-user-secret")
}

/// The second cluster's SASL/PLAIN super user (`OV_KAFKA2_ADMIN_USER`).
pub fn other_admin_user() -> String {
    env_or("OV_KAFKA2_ADMIN_USER", "ov-admin")
}

/// [`other_admin_user`]'s password (`OV_KAFKA2_ADMIN_PASSWORD`).
pub fn other_admin_password() -> String {
    env_or("OV_KAFKA2_ADMIN_PASSWORD", "ov-admin-secret")
}

/// The client settings (`-X` values, librdkafka names) of `user` with `password` on
/// [`other_sasl_bootstrap`].
pub fn other_sasl_settings(user: &str, password: &str) -> Vec<String> {
    vec![
        "security.protocol=SASL_PLAINTEXT".into(),
        "sasl.mechanism=PLAIN".into(),
        format!("sasl.username={user}"),
        format!("sasl.password={password}"),
    ]
}

/// Bootstrap of the brand-new cluster ("kafka3" in `scripts/test-env`, formatted anew on every
/// start) (`OV_KAFKA3_BOOTSTRAP`). Only one test uses it: see `support/fresh.rs`.
pub fn fresh_bootstrap() -> String {
    env_or("OV_KAFKA3_BOOTSTRAP", "127.0.0.1:19292")
}

/// Base URL of the Kafka Connect REST API, without a trailing slash (`OV_CONNECT_URL`).
pub fn connect_url() -> String {
    env_or("OV_CONNECT_URL", "http://127.0.0.1:18083")
        .trim_end_matches('/')
        .to_string()
}

/// Base URL of the second cluster's Kafka Connect REST API ("connect2" in `scripts/test-env`),
/// without a trailing slash (`OV_CONNECT2_URL`).
pub fn other_connect_url() -> String {
    env_or("OV_CONNECT2_URL", "http://127.0.0.1:18183")
        .trim_end_matches('/')
        .to_string()
}

/// S3 endpoint (`OV_S3_ENDPOINT`).
pub fn s3_endpoint() -> String {
    env_or("OV_S3_ENDPOINT", "http://127.0.0.1:19000")
}

/// S3 bucket (`OV_S3_BUCKET`).
pub fn s3_bucket() -> String {
    env_or("OV_S3_BUCKET", "offset-vault-test")
}

/// S3 access key id (`OV_S3_ACCESS_KEY`).
pub fn s3_access_key() -> String {
    env_or("OV_S3_ACCESS_KEY", "ovtestaccess")
}

/// S3 secret access key (`OV_S3_SECRET_KEY`).
pub fn s3_secret_key() -> String {
    env_or("OV_S3_SECRET_KEY", "ovtestsecret-0123456789")
}

/// S3 region (`OV_S3_REGION`).
pub fn s3_region() -> String {
    env_or("OV_S3_REGION", "us-east-1")
}

/// The cache directory of `scripts/test-env` (`OV_CACHE_DIR`, default `~/.cache/offset-vault`).
pub fn cache_dir() -> PathBuf {
    match std::env::var("OV_CACHE_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env_or("HOME", "/root")).join(".cache/offset-vault"),
    }
}

/// Python interpreter with pyarrow (`OV_PYTHON`, default: the venv that `scripts/test-env` makes).
pub fn python() -> PathBuf {
    match std::env::var("OV_PYTHON") {
        Ok(path) if !path.is_empty() => PathBuf::from(path),
        _ => cache_dir().join("venv/bin/python"),
    }
}

/// Directory with the Kafka tool wrappers (`OV_KAFKA_TOOLS_DIR`, default: the repository's `scripts/`).
pub fn kafka_tools_dir() -> PathBuf {
    match std::env::var("OV_KAFKA_TOOLS_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts"),
    }
}

/// The scratch directory of `scripts/test-env`, with its pid files (`OV_TEST_ENV_DIR`, default:
/// the repository's `target/test-env`).
pub fn test_env_dir() -> PathBuf {
    match std::env::var("OV_TEST_ENV_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-env"),
    }
}

/// True when running under CI (the `CI` variable is set): missing services are then a failure,
/// never a skip.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

// ---------------------------------------------------------------------------------------------
// Reachability

/// Host and port of a `host:port` or `scheme://host:port/...` address.
fn host_port(address: &str, default_port: u16) -> String {
    let rest = address.split_once("://").map_or(address, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:{default_port}")
    }
}

fn reachable(host_port: &str) -> bool {
    let Ok(addresses) = host_port.to_socket_addrs() else {
        return false;
    };
    addresses
        .into_iter()
        .any(|address| TcpStream::connect_timeout(&address, Duration::from_secs(2)).is_ok())
}

/// Under CI: panics. Elsewhere: prints a loud SKIPPED line and returns false.
pub fn unavailable(what: &str, detail: &str) -> bool {
    let message = format!(
        "{what} is not available ({detail}); start the test environment with `scripts/test-env up`"
    );
    if in_ci() {
        panic!("{message} (CI is set, so this is a failure, not a skip)");
    }
    eprintln!();
    eprintln!("**********************************************************************");
    eprintln!("SKIPPED: {message}");
    eprintln!("**********************************************************************");
    false
}

fn require_tcp(what: &str, address: &str, default_port: u16) -> bool {
    let target = host_port(address, default_port);
    if reachable(&target) {
        true
    } else {
        unavailable(what, &format!("nothing answers at {target}"))
    }
}

/// Checks that the Kafka broker answers. See [`unavailable`] for what happens when it does not.
pub fn require_kafka() -> bool {
    let servers = bootstrap();
    let first = servers
        .split(',')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    require_tcp("Kafka", &first, 9092)
}

/// Checks that the broker's SCRAM listener answers.
pub fn require_scram() -> bool {
    require_tcp("Kafka's SCRAM listener", &scram_bootstrap(), 9092)
}

/// Checks that the broker's TLS listener answers and its CA certificate is there.
pub fn require_tls() -> bool {
    if !require_tcp("Kafka's TLS listener", &tls_bootstrap(), 9093) {
        return false;
    }
    let ca = tls_ca_file();
    ca.is_file()
        || unavailable(
            "The test CA certificate",
            &format!("{} does not exist", ca.display()),
        )
}

/// Checks that the second Kafka cluster answers, on its PLAINTEXT and its SASL listener.
pub fn require_other_kafka() -> bool {
    require_tcp("The second Kafka cluster", &other_bootstrap(), 9092)
        && require_tcp(
            "The second Kafka cluster's SASL listener",
            &other_sasl_bootstrap(),
            9092,
        )
}

/// Checks that the brand-new cluster answers (whether it is still brand-new is
/// `fresh::brand_new`'s business).
pub fn require_fresh_kafka() -> bool {
    require_tcp(
        "The brand-new Kafka cluster (kafka3)",
        &fresh_bootstrap(),
        9092,
    )
}

/// Checks that the Kafka Connect REST API answers.
pub fn require_connect() -> bool {
    require_tcp("Kafka Connect", &connect_url(), 80)
}

/// Checks that the second cluster's Kafka Connect REST API answers.
pub fn require_other_connect() -> bool {
    require_tcp(
        "The second cluster's Kafka Connect",
        &other_connect_url(),
        80,
    )
}

/// Checks that the S3 server answers.
pub fn require_s3() -> bool {
    require_tcp("The S3 server", &s3_endpoint(), 80)
}

/// Checks that the Python interpreter exists and imports pyarrow.
pub fn require_python() -> bool {
    python_imports("pyarrow", "Python with pyarrow")
}

/// Checks that the Python interpreter imports the official MCP SDK's stdio client.
pub fn require_mcp_sdk() -> bool {
    python_imports("mcp.client.stdio", "The MCP Python SDK")
}

/// Whether the interpreter imports `module`; otherwise [`unavailable`] says that `what` is
/// missing (scripts/test-env up installs it).
fn python_imports(module: &str, what: &str) -> bool {
    let python = python();
    let ok = Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|out| out.status.success());
    ok || unavailable(
        what,
        &format!(
            "{} cannot import {module} (scripts/test-env up installs it)",
            python.display()
        ),
    )
}

/// Kafka Connect's offsets topic in the test environment (the worker's `offset.storage.topic`).
pub fn connect_offsets_topic() -> String {
    std::env::var("OV_CONNECT_OFFSETS_TOPIC")
        .unwrap_or_else(|_| "offset-vault-test-connect-offsets".to_string())
}
