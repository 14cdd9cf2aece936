//! Error type of the library, and the exit code each kind of error maps to.

use std::path::PathBuf;

/// Exit codes, documented in `--help` and README. Stable: scripts rely on them.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// Unexpected internal or I/O error.
    pub const FAILURE: i32 = 1;
    /// Usage error: bad arguments, bad configuration, nothing selected.
    pub const USAGE: i32 = 2;
    /// A service (Kafka, Kafka Connect, the store) could not be reached or refused the request.
    pub const UNREACHABLE: i32 = 3;
    /// A named group, connector or snapshot does not exist.
    pub const NOT_FOUND: i32 = 4;
    /// Integrity failure: checksum, size, id or format mismatch in a snapshot.
    pub const INTEGRITY: i32 = 5;
    /// A restore plan is blocked: an active group, or a connector that could not be stopped.
    pub const BLOCKED: i32 = 6;
    /// A restore plan cannot be applied as it stands: out-of-range targets or missing partitions.
    pub const NOT_APPLICABLE: i32 = 7;
    /// A restore was applied but reading the offsets back did not match the plan.
    pub const VERIFY_FAILED: i32 = 8;
    /// The snapshot was taken on another Kafka cluster.
    pub const OTHER_CLUSTER: i32 = 9;
}

/// Every error the library reports. Messages say what went wrong and what to do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),

    #[error("cannot reach Kafka at {bootstrap}: {detail}. Check --bootstrap-server and the client properties (security.protocol, SASL), or raise --timeout")]
    KafkaUnreachable { bootstrap: String, detail: String },

    #[error("Kafka request {op} failed: {detail}")]
    Kafka { op: &'static str, detail: String },

    #[error("cannot reach Kafka Connect at {url}: {detail}. Check --connect-url and that the worker's REST listener is up")]
    ConnectUnreachable { url: String, detail: String },

    #[error("Kafka Connect at {url} answered {status} to {method} {path}: {message}")]
    Connect {
        url: String,
        method: &'static str,
        path: String,
        status: u16,
        message: String,
    },

    #[error("store {url}: {detail}")]
    Store { url: String, detail: String },

    #[error("{what} not found: {name}{hint}")]
    NotFound {
        what: &'static str,
        name: String,
        hint: String,
    },

    #[error("snapshot {id} failed verification:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Integrity { id: String, problems: Vec<String> },

    #[error("{path}: unsupported format_version {found} (this offset-vault reads major version {supported}); upgrade offset-vault to read it")]
    UnsupportedFormat {
        path: String,
        found: String,
        supported: u32,
    },

    #[error("{path}: cannot decode: {detail}")]
    Decode { path: String, detail: String },

    #[error("{0}")]
    Blocked(String),

    #[error("{0}")]
    NotApplicable(String),

    #[error("{0}")]
    VerifyFailed(String),

    #[error("snapshot {id} was taken on Kafka cluster {snapshot_cluster}, but {bootstrap} belongs to cluster {live_cluster}. Pass --allow-other-cluster if restoring onto another cluster is intended")]
    OtherCluster {
        id: String,
        snapshot_cluster: String,
        live_cluster: String,
        bootstrap: String,
    },

    #[error("cannot read {path}: {source}")]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// The documented process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::ReadFile { .. } => exit::USAGE,
            Error::KafkaUnreachable { .. }
            | Error::Kafka { .. }
            | Error::ConnectUnreachable { .. }
            | Error::Connect { .. }
            | Error::Store { .. } => exit::UNREACHABLE,
            Error::NotFound { .. } => exit::NOT_FOUND,
            Error::Integrity { .. } | Error::UnsupportedFormat { .. } | Error::Decode { .. } => {
                exit::INTEGRITY
            }
            Error::Blocked(_) => exit::BLOCKED,
            Error::NotApplicable(_) => exit::NOT_APPLICABLE,
            Error::VerifyFailed(_) => exit::VERIFY_FAILED,
            Error::OtherCluster { .. } => exit::OTHER_CLUSTER,
            Error::Internal(_) => exit::FAILURE,
        }
    }

    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub(crate) fn kafka(op: &'static str, detail: impl std::fmt::Display) -> Self {
        Error::Kafka {
            op,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn store(url: &str, detail: impl std::fmt::Display) -> Self {
        Error::Store {
            url: url.to_string(),
            detail: detail.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
