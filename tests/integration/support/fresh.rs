//! The brand-new cluster ("kafka3" in `scripts/test-env`, `OV_KAFKA3_BOOTSTRAP`): one KRaft node
//! whose storage is formatted anew on every start, so that it has no `__consumer_offsets` until a
//! group commits there (the broker creates the topic at the first group coordinator lookup).
//!
//! It is brand-new only until that first commit, so exactly one test uses it:
//! `log_new_cluster::a_follower_on_a_cluster_where_no_group_has_committed_waits_for_the_first_commit`.
//! Any other test that committed there, or looked up a group coordinator, would take its
//! brand-newness away from that test, or see that test's commits: a test that needs another such
//! cluster gets a service of its own.
//!
//! [`brand_new`] hands the cluster over brand-new whatever ran before: when an earlier run of the
//! test committed there (`scripts/test-env up` leaves a running service as it is), it starts the
//! service again through `scripts/test-env`, which formats it anew. The test therefore depends on
//! neither the order nor the number of runs.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::follower::{Follower, FOLLOW_LOG, OFFSETS};
use super::ov::{ov_raw, Run};
use super::poll::eventually;
use super::services::{start_service, stop_service, Service};
use super::{blocking, env};

/// A client configuration for the brand-new cluster. A consumer made from it without a
/// `group.id` looks up no coordinator, so it creates nothing.
pub fn config() -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", env::fresh_bootstrap());
    config
}

/// The partition count of the cluster's `__consumer_offsets`, or `None` while it does not exist.
pub async fn offsets_topic() -> Option<usize> {
    blocking(|| {
        let consumer: BaseConsumer = config().create().expect("consumer");
        let metadata = consumer
            .fetch_metadata(Some(OFFSETS), Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("metadata of {OFFSETS} on kafka3: {e}"));
        let t = metadata.topics().iter().find(|t| t.name() == OFFSETS)?;
        match t.error() {
            Some(RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) => None,
            None if t.partitions().is_empty() => None,
            None => Some(t.partitions().len()),
            Some(e) => panic!("metadata of {OFFSETS} on kafka3: {e:?}"),
        }
    })
    .await
}

/// Checks that the cluster answers (see [`env::unavailable`] for what happens when it does not)
/// and makes it brand-new if it no longer is: no `__consumer_offsets`.
pub async fn brand_new() -> bool {
    if !env::require_fresh_kafka() {
        return false;
    }
    if let Some(partitions) = offsets_topic().await {
        eprintln!(
            "kafka3 has a {OFFSETS} of {partitions} partition(s) (an earlier run committed there): starting it anew"
        );
        stop_service(Service::Kafka3).await;
        start_service(Service::Kafka3).await;
        assert_eq!(offsets_topic().await, None, "kafka3 after a new start");
    }
    true
}

/// Creates a topic on the cluster (replication factor 1) and waits until every partition has a
/// leader.
pub async fn create_topic(name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = config().create().expect("admin client");
    let results = admin
        .create_topics(
            [&NewTopic::new(name, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .unwrap_or_else(|e| panic!("create {name} on kafka3: {e}"));
    for result in results {
        result.unwrap_or_else(|(t, code)| panic!("create {t} on kafka3: {code}"));
    }
    eventually(
        &format!("{name} on kafka3 to show {partitions} partition(s) with leaders"),
        Duration::from_secs(30),
        || {
            let name = name.to_string();
            async move {
                blocking(move || {
                    let consumer: BaseConsumer = config().create().expect("consumer");
                    let metadata = consumer
                        .fetch_metadata(Some(&name), Duration::from_secs(5))
                        .map_err(|e| e.to_string())?;
                    let led = metadata.topics().iter().any(|t| {
                        t.name() == name
                            && t.error().is_none()
                            && t.partitions().len() == partitions as usize
                            && t.partitions().iter().all(|p| p.leader() >= 0)
                    });
                    led.then_some(()).ok_or_else(|| "not yet".to_string())
                })
                .await
            }
        },
    )
    .await
}

/// Commits `offsets` for `group` on `topic` without joining the group. On the brand-new
/// cluster the first commit's coordinator lookup has the broker create `__consumer_offsets`;
/// the commit is tried again until the new coordinator takes it.
pub async fn commit(group: &str, topic: &str, offsets: &BTreeMap<i32, i64>) {
    let (group, topic, offsets) = (group.to_string(), topic.to_string(), offsets.clone());
    blocking(move || {
        let consumer: BaseConsumer = config()
            .set("group.id", &group)
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        let mut tpl = TopicPartitionList::new();
        for (p, o) in &offsets {
            tpl.add_partition_offset(&topic, *p, Offset::Offset(*o))
                .expect("offset list");
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
            assert!(
                Instant::now() < deadline,
                "commit {offsets:?} for {group} on kafka3: {e}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    })
    .await
}

/// The arguments that point the binary at the cluster (no Kafka Connect) and `store`.
fn with_cluster(store: &str, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = vec![
        "--bootstrap-server".into(),
        env::fresh_bootstrap(),
        "--store".into(),
        store.into(),
        "--timeout".into(),
        "20s".into(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    all
}

/// Runs `offset-vault` against the cluster with `store`.
pub async fn ov(store: &str, args: &[&str]) -> Run {
    ov_raw(with_cluster(store, args)).await
}

/// Starts a continuous `follow --group-id GROUP ARGS` of the cluster into `store`, with the
/// follower's own lines logged (as [`Follower::start`] does on the main cluster).
pub fn follower(store: &str, group: &str, args: &[&str]) -> Follower {
    let mut all = vec!["follow", "--group-id", group];
    all.extend_from_slice(args);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_offset-vault"));
    cmd.args(with_cluster(store, &all))
        .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
        .env_remove("OFFSET_VAULT_CONNECT_URL")
        .env_remove("OFFSET_VAULT_STORE")
        .env("OFFSET_VAULT_LOG", FOLLOW_LOG);
    Follower::spawn(cmd, &[])
}
