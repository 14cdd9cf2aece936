//! Support for the integration tests, by concern:
//!
//! - [`env`]: settings from the `OV_*` variables, and the reachability checks that skip a test
//!   (or fail it under CI) when a service is missing;
//! - [`kafka`]: topics, producing, consuming and committing, group members, committed offsets;
//! - [`kcg`]: the real `kafka-consumer-groups` tool and parsers of its output;
//! - [`groups`]: `kafka-groups --list` (every group with its type) and what the group tools print
//!   alike (the `--reset-offsets` table);
//! - [`share`]: share groups with `kafka-share-groups` and `kafka-console-share-consumer`;
//! - [`streams`]: streams groups with the test Streams application and `kafka-streams-groups`;
//! - [`connect`]: the Kafka Connect REST API and FileStream connector configs;
//! - [`mirror`]: MirrorMaker 2 between the two clusters, either cluster's topics, records and
//!   offsets, and the second cluster's Connect;
//! - [`s3`]: clients and URLs for the S3 server;
//! - [`schema`]: the published JSON Schemas, to validate documents against;
//! - [`poll`]: [`poll::eventually`], the one way tests wait for something;
//! - [`services`]: stopping, killing and starting the real services for fault injection;
//! - [`ov`]: running the `offset-vault` binary;
//! - [`follower`]: a follower as a child process, and readers of what it archived;
//! - [`fresh`]: the brand-new cluster (kafka3), where no group has committed yet, for one test;
//! - [`tools`]: the checkers of what `deploy/` ships (promtool, helm, systemd-analyze).
//!
//! Helpers that block (consumers, metadata, the command-line tools) run on tokio's blocking pool,
//! so they can be awaited from `#[tokio::test(flavor = "multi_thread")]` tests.
#![allow(dead_code)]

pub mod connect;
pub mod env;
pub mod follower;
pub mod fresh;
pub mod groups;
pub mod kafka;
pub mod kcg;
pub mod mirror;
pub mod ov;
pub mod poll;
pub mod s3;
pub mod schema;
pub mod serve;
pub mod services;
pub mod share;
pub mod streams;
pub mod tools;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

// ---------------------------------------------------------------------------------------------
// Unique names

static NAME_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique to this run, valid as a topic, group or connector name:
/// `<prefix>-<unix millis>-<counter>-<random hex>`.
pub fn unique_name(prefix: &str) -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock before 1970")
        .as_millis();
    let counter = NAME_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(counter);
    hasher.write_u32(std::process::id());
    let random = hasher.finish() & 0xffff_ffff;
    let prefix: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{prefix}-{millis}-{counter}-{random:08x}")
}

// ---------------------------------------------------------------------------------------------
// Running blocking code from async tests

/// Runs blocking code on tokio's blocking pool; a panic inside is re-raised with its message.
pub async fn blocking<T, F>(f: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => value,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => panic!("blocking task failed: {error}"),
    }
}
