//! Error type of the library, and the exit code each kind of error maps to.

use std::path::PathBuf;

/// Exit codes, documented in `--help` and the book (docs/book, "Exit codes"). Stable: scripts rely on them.
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
    /// Authentication or authorization failed (SASL, ACLs, HTTP 401/403, store credentials).
    pub const ACCESS_DENIED: i32 = 10;
    /// The plan changed since it was reviewed (plan file, or after connectors stopped); nothing
    /// was changed.
    pub const PLAN_CHANGED: i32 = 11;
    /// A restore stopped partway: some offsets may have changed; the undo snapshot restores them.
    pub const PARTIALLY_APPLIED: i32 = 12;
    /// A connector stopped by the restore could not be returned to its earlier state.
    pub const RESUME_FAILED: i32 = 13;
    /// The restore was applied and verified, but offsets moved again during the settle time.
    pub const DRIFT: i32 = 14;
    /// `prune` refused a group: its policy would remove every snapshot of it. Nothing of that
    /// group was deleted (other groups were pruned as planned).
    pub const PRUNE_REFUSED: i32 = 15;
    /// A reset or restore was applied and verified, but a connector or task failed while
    /// `--watch` followed it.
    pub const WATCH_FAILED: i32 = 16;
    /// A plan file applied with --require-approvals lacks valid approvals; nothing was changed.
    pub const APPROVAL: i32 = 17;
    /// Interrupted (Ctrl-C) before anything changed; connectors were resumed.
    pub const INTERRUPTED: i32 = 130;
}

/// Every error the library reports. Messages say what went wrong and what to do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),

    #[error("cannot reach Kafka at {bootstrap}: {detail}. Check --bootstrap-server and the client properties (security.protocol, SASL), or raise --timeout")]
    KafkaUnreachable { bootstrap: String, detail: String },

    #[error("Kafka request {op} failed: {detail}{}", code.map(|c| format!(" ({c:?})")).unwrap_or_default())]
    Kafka {
        op: &'static str,
        detail: String,
        /// librdkafka's or the broker's error code, when there is one.
        code: Option<rdkafka::types::RDKafkaErrorCode>,
    },

    #[error("{service} {op} timed out after {} s: {detail}. Raise --timeout if the service is slow, or check that it is up", after.as_secs_f32())]
    Timeout {
        service: &'static str,
        op: String,
        after: std::time::Duration,
        detail: String,
    },

    #[error("{service} refused access to {resource}: {detail}. {advice}")]
    AccessDenied {
        service: &'static str,
        resource: String,
        detail: String,
        advice: &'static str,
    },

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
    Store {
        url: String,
        detail: String,
        #[source]
        source: Option<object_store::Error>,
    },

    #[error("{what} not found: {name}{hint}")]
    NotFound {
        what: &'static str,
        name: String,
        hint: String,
    },

    #[error("snapshot {id} failed verification:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Integrity { id: String, problems: Vec<String> },

    #[error("{path}: unsupported format_version {found} (this offset-vault reads {supported}); upgrade offset-vault to read it")]
    UnsupportedFormat {
        path: String,
        found: String,
        /// The versions read, as a phrase: "major version 1".
        supported: String,
    },

    #[error("{path}: cannot decode: {detail}")]
    Decode { path: String, detail: String },

    #[error("snapshot not written: {part} could not be read: {detail}. Nothing was stored (no manifest). Fix the cause and take the snapshot again, or pass --allow-partial to store it marked partial")]
    Incomplete {
        part: String,
        detail: String,
        /// The exit code of the underlying error.
        exit_code: i32,
        /// The underlying error's [`Error::cause`].
        cause: &'static str,
    },

    #[error("{0}")]
    Blocked(String),

    #[error("the plan changed since it was reviewed; nothing was changed:\n{}", changes.iter().map(|c| format!("  - {c}")).collect::<Vec<_>>().join("\n"))]
    PlanChanged { changes: Vec<String> },

    #[error("{0}")]
    NotApplicable(String),

    #[error("plan file {path} lacks the approvals it needs; nothing was changed:\n{}\nHave it approved with `offset-vault approve {path} --key KEY`", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Approval { path: String, problems: Vec<String> },

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
            Error::Connect {
                status: 401 | 403, ..
            } => exit::ACCESS_DENIED,
            Error::Kafka { code: Some(c), .. } if is_access_code(*c) => exit::ACCESS_DENIED,
            Error::KafkaUnreachable { .. }
            | Error::Kafka { .. }
            | Error::Timeout { .. }
            | Error::ConnectUnreachable { .. }
            | Error::Connect { .. }
            | Error::Store { .. } => exit::UNREACHABLE,
            Error::AccessDenied { .. } => exit::ACCESS_DENIED,
            Error::PlanChanged { .. } => exit::PLAN_CHANGED,
            Error::Incomplete { exit_code, .. } => *exit_code,
            Error::NotFound { .. } => exit::NOT_FOUND,
            Error::Integrity { .. } | Error::UnsupportedFormat { .. } | Error::Decode { .. } => {
                exit::INTEGRITY
            }
            Error::Blocked(_) => exit::BLOCKED,
            Error::NotApplicable(_) => exit::NOT_APPLICABLE,
            Error::Approval { .. } => exit::APPROVAL,
            Error::VerifyFailed(_) => exit::VERIFY_FAILED,
            Error::OtherCluster { .. } => exit::OTHER_CLUSTER,
            Error::Internal(_) => exit::FAILURE,
        }
    }

    /// What failed, as the `cause` label of `serve`'s failure metric: `kafka_unreachable`,
    /// `kafka`, `connect`, `store`, `access_denied`, `timeout`, `integrity`, `usage` or `other`.
    pub fn cause(&self) -> &'static str {
        match self {
            Error::KafkaUnreachable { .. } => "kafka_unreachable",
            Error::Kafka { code: Some(c), .. } if is_access_code(*c) => "access_denied",
            Error::Connect {
                status: 401 | 403, ..
            } => "access_denied",
            Error::Kafka { .. } | Error::OtherCluster { .. } => "kafka",
            Error::ConnectUnreachable { .. } | Error::Connect { .. } => "connect",
            Error::Store { .. } => "store",
            Error::AccessDenied { .. } => "access_denied",
            Error::Timeout { .. } => "timeout",
            Error::Integrity { .. }
            | Error::UnsupportedFormat { .. }
            | Error::Decode { .. }
            | Error::VerifyFailed(_) => "integrity",
            Error::Usage(_) | Error::ReadFile { .. } => "usage",
            Error::Incomplete { cause, .. } => cause,
            Error::NotFound { .. }
            | Error::Blocked(_)
            | Error::PlanChanged { .. }
            | Error::NotApplicable(_)
            | Error::Approval { .. }
            | Error::Internal(_) => "other",
        }
    }

    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub(crate) fn kafka(op: &'static str, detail: impl std::fmt::Display) -> Self {
        Error::Kafka {
            op,
            detail: detail.to_string(),
            code: None,
        }
    }

    /// A Kafka error with its code: authentication and authorization codes become
    /// [`Error::AccessDenied`] naming `resource`, timeouts [`Error::Timeout`].
    pub(crate) fn kafka_code(
        op: &'static str,
        code: rdkafka::types::RDKafkaErrorCode,
        resource: &str,
        detail: impl std::fmt::Display,
        timeout: std::time::Duration,
    ) -> Self {
        use rdkafka::types::RDKafkaErrorCode as C;
        let detail = detail.to_string();
        if is_access_code(code) {
            return Error::AccessDenied {
                service: "Kafka",
                resource: resource.to_string(),
                detail: format!("{op}: {detail} ({code:?})"),
                advice: access_advice(code),
            };
        }
        if matches!(code, C::OperationTimedOut | C::RequestTimedOut) {
            return Error::Timeout {
                service: "Kafka",
                op: op.to_string(),
                after: timeout,
                detail,
            };
        }
        Error::Kafka {
            op,
            detail,
            code: Some(code),
        }
    }

    pub(crate) fn store(url: &str, detail: impl std::fmt::Display) -> Self {
        Error::Store {
            url: url.to_string(),
            detail: detail.to_string(),
            source: None,
        }
    }
}

/// Kafka error codes that mean "who you are" or "what you may do" was refused.
pub fn is_access_code(code: rdkafka::types::RDKafkaErrorCode) -> bool {
    use rdkafka::types::RDKafkaErrorCode as C;
    matches!(
        code,
        C::Authentication
            | C::SaslAuthenticationFailed
            | C::TopicAuthorizationFailed
            | C::GroupAuthorizationFailed
            | C::ClusterAuthorizationFailed
            | C::TransactionalIdAuthorizationFailed
            | C::DelegationTokenAuthorizationFailed
            | C::IllegalSASLState
            | C::UnsupportedSASLMechanism
    )
}

fn access_advice(code: rdkafka::types::RDKafkaErrorCode) -> &'static str {
    use rdkafka::types::RDKafkaErrorCode as C;
    match code {
        C::TopicAuthorizationFailed => "Grant the principal Describe on the topic (and Read to commit offsets), or leave the topic out",
        C::GroupAuthorizationFailed => "Grant the principal Describe and Read on the group (kafka-acls --group), or leave the group out",
        C::ClusterAuthorizationFailed => "Grant the principal Describe on the cluster",
        _ => "Check the SASL mechanism, username and password (sasl.* in --command-config or -X)",
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::types::RDKafkaErrorCode as C;
    use std::time::Duration;

    #[test]
    fn kafka_codes_map_to_kinds_and_exit_codes() {
        let t = Duration::from_secs(30);
        // (code, expected exit code, expected words in the message)
        let cases = [
            (
                C::SaslAuthenticationFailed,
                exit::ACCESS_DENIED,
                "refused access to k:9092",
            ),
            (C::Authentication, exit::ACCESS_DENIED, "SASL mechanism"),
            (
                C::GroupAuthorizationFailed,
                exit::ACCESS_DENIED,
                "on the group",
            ),
            (
                C::TopicAuthorizationFailed,
                exit::ACCESS_DENIED,
                "on the topic",
            ),
            (
                C::ClusterAuthorizationFailed,
                exit::ACCESS_DENIED,
                "on the cluster",
            ),
            (
                C::OperationTimedOut,
                exit::UNREACHABLE,
                "timed out after 30 s",
            ),
            (C::RequestTimedOut, exit::UNREACHABLE, "timed out"),
            (
                C::BrokerTransportFailure,
                exit::UNREACHABLE,
                "BrokerTransportFailure",
            ),
        ];
        for (code, want, words) in cases {
            let e = Error::kafka_code("OffsetFetch", code, "k:9092", "detail", t);
            assert_eq!(e.exit_code(), want, "{code:?}: {e}");
            assert!(e.to_string().contains(words), "{code:?}: {e}");
        }
    }

    #[test]
    fn causes_name_what_failed() {
        use rdkafka::types::RDKafkaErrorCode as C;
        let t = std::time::Duration::from_secs(30);
        let code = |c| Error::kafka_code("OffsetFetch", c, "k:9092", "detail", t);
        let unreachable = Error::KafkaUnreachable {
            bootstrap: "k:9092".into(),
            detail: "refused".into(),
        };
        let cases = [
            (unreachable, "kafka_unreachable"),
            (code(C::GroupAuthorizationFailed), "access_denied"),
            (code(C::UnknownTopicOrPartition), "kafka"),
            (code(C::OperationTimedOut), "timeout"),
            (
                Error::ConnectUnreachable {
                    url: "http://c:8083".into(),
                    detail: "refused".into(),
                },
                "connect",
            ),
            (
                Error::Connect {
                    url: "http://c:8083".into(),
                    method: "GET",
                    path: "/connectors".into(),
                    status: 403,
                    message: "no".into(),
                },
                "access_denied",
            ),
            (Error::store("s3://b", "refused"), "store"),
            (
                Error::Incomplete {
                    part: "connector c".into(),
                    detail: "refused".into(),
                    exit_code: exit::UNREACHABLE,
                    cause: "connect",
                },
                "connect",
            ),
            (Error::usage("bad flag"), "usage"),
            (Error::Internal("?".into()), "other"),
        ];
        for (e, want) in cases {
            assert_eq!(e.cause(), want, "{e}");
        }
    }

    #[test]
    fn connect_401_and_403_are_access_denied() {
        for (status, want) in [
            (401, exit::ACCESS_DENIED),
            (403, exit::ACCESS_DENIED),
            (500, exit::UNREACHABLE),
        ] {
            let e = Error::Connect {
                url: "http://c".into(),
                method: "GET",
                path: "/connectors".into(),
                status,
                message: "m".into(),
            };
            assert_eq!(e.exit_code(), want);
        }
    }
}
