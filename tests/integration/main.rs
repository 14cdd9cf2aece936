//! Integration tests against real services: Apache Kafka, Kafka Connect and an S3 server, as
//! started by `scripts/test-env up`. Settings come from the `OV_*` environment variables (see
//! `support/env.rs`). When a service is unreachable a test prints "SKIPPED" and returns, except
//! under CI (`CI` set), where it fails.

mod archive;
mod audit;
mod deploy;
mod environment;
mod expiry;
mod group_types;
mod group_types_env;
mod image;
mod log;
mod log_at;
mod log_connect;
mod log_follow;
mod log_groups;
mod log_history;
mod log_new_cluster;
mod log_other_cluster;
mod log_retention;
mod mcp;
mod mirror;
mod reset;
mod restore;
mod restore_batches;
mod secrets;
mod serve;
mod serve_s3;
mod signing;
mod snapshot;
mod support;
mod trust;
mod ux;
mod verify;
mod watch;
