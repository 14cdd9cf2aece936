//! Integration tests against real services: Apache Kafka, Kafka Connect and an S3 server, as
//! started by `scripts/test-env up`. Settings come from the `OV_*` environment variables (see
//! `util.rs`). When a service is unreachable a test prints "SKIPPED" and returns, except under CI
//! (`CI` set), where it fails.

mod environment;
mod ov;
mod restore;
mod snapshot;
mod trust;
mod util;
mod ux;
mod verify;
