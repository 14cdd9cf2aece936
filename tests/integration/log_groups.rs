//! What the commit-log archive records of transactional offset commits, deleted groups and
//! deleted offsets, against the real broker: an aborted transaction's offsets are never archived
//! (the follower reads with read_committed) and a committed one's are, once; a group deleted with
//! the real `kafka-consumer-groups --delete` comes back with `restore --at` an instant before its
//! deletion, and an instant when it had no offsets is reported and left alone; a partition's
//! deleted offset (`--delete-offsets`) is back at an instant before the deletion and absent after
//! it.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

use crate::support::kafka::{self, kafka_config, Take};
use crate::support::kcg::{committed, kcg, kcg_group_state};
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::{blocking, env, unique_name};

fn text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Now, as `--at` takes it, with a pause on both sides so that no commit falls on the instant.
async fn instant() -> String {
    tokio::time::sleep(Duration::from_millis(400)).await;
    let at = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(400)).await;
    at
}

/// `follow --once` as `follower` into `store`.
async fn follow(store: &str, follower: &str) {
    ov(store, &["follow", "--once", "--group-id", follower])
        .await
        .ok();
}

/// `history GROUP --output json`: (kind, partition, offset) of each change on `topic` and each
/// change of the whole group (a group deletion, with no topic), in log order.
async fn history(
    store: &str,
    group: &str,
    topic: &str,
) -> (Vec<(String, Option<i64>, Option<i64>)>, Value) {
    let h = ov(store, &["history", group, "--output", "json"])
        .await
        .ok()
        .json();
    let changes = h["changes"]
        .as_array()
        .unwrap_or_else(|| panic!("no changes in {h:#}"))
        .iter()
        .filter(|c| c["topic"].is_null() || c["topic"] == topic)
        .map(|c| {
            (
                c["kind"].as_str().unwrap().to_string(),
                c["partition"].as_i64(),
                c["offset"].as_i64(),
            )
        })
        .collect();
    (changes, h)
}

/// A commit of `offset` on `partition`, as [`history`] lists it.
fn commit(partition: i64, offset: i64) -> (String, Option<i64>, Option<i64>) {
    ("commit".into(), Some(partition), Some(offset))
}

/// The dry run of `restore --at AT --group GROUP --output json`: the plan's targets of the
/// partitions it commits, and the whole document.
async fn planned(store: &str, at: &str, group: &str) -> (BTreeMap<i64, i64>, Value) {
    let doc = ov(
        store,
        &["restore", "--at", at, "--group", group, "--output", "json"],
    )
    .await
    .ok()
    .json();
    let targets = doc["plan"]["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("no groups in the plan: {doc:#}"))
        .iter()
        .filter(|g| g["group_id"] == group)
        .flat_map(|g| g["partitions"].as_array().unwrap().clone())
        .filter(|p| p["action"] == "reset" || p["action"] == "no-change")
        .map(|p| {
            (
                p["partition"].as_i64().unwrap(),
                p["target"].as_i64().unwrap(),
            )
        })
        .collect();
    (targets, doc)
}

/// `restore --at AT --group GROUP --execute`, which must succeed.
async fn restore_at(store: &str, at: &str, group: &str) {
    ov(
        store,
        &[
            "restore",
            "--at",
            at,
            "--group",
            group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
}

/// A transactional producer (its own `transactional.id`) that commits offsets for `group` in
/// transactions, each with one record produced to `out`.
struct Transactions {
    producer: BaseProducer,
    /// Only for the group's metadata that `send_offsets_to_transaction` needs; never joins.
    consumer: BaseConsumer,
    out: String,
}

const TXN_TIMEOUT: Duration = Duration::from_secs(30);

impl Transactions {
    async fn new(group: &str, out: &str) -> Transactions {
        let (group, out) = (group.to_string(), out.to_string());
        let id = unique_name("log-groups-txn");
        blocking(move || {
            let producer: BaseProducer = kafka_config()
                .set("transactional.id", &id)
                .set("transaction.timeout.ms", "60000")
                .create()
                .expect("transactional producer");
            producer
                .init_transactions(TXN_TIMEOUT)
                .unwrap_or_else(|e| panic!("init_transactions {id}: {e}"));
            let consumer: BaseConsumer = kafka_config()
                .set("group.id", &group)
                .set("enable.auto.commit", "false")
                .create()
                .expect("consumer for the group's metadata");
            Transactions {
                producer,
                consumer,
                out,
            }
        })
        .await
    }

    /// One transaction: a record to `out`, the offsets of `topic` for the group, then commit or
    /// abort. Returns the producer for the next one.
    async fn run(self, topic: &str, offsets: &[(i32, i64)], commit: bool) -> Transactions {
        self.begin(topic, offsets).await.end(commit).await
    }

    /// Begins a transaction and sends a record to `out` and the offsets of `topic` in it.
    async fn begin(self, topic: &str, offsets: &[(i32, i64)]) -> Transactions {
        let topic = topic.to_string();
        let offsets = offsets.to_vec();
        blocking(move || {
            let p = &self.producer;
            p.begin_transaction().expect("begin_transaction");
            let value = format!("{offsets:?}");
            p.send(
                BaseRecord::<(), String>::to(&self.out)
                    .partition(0)
                    .payload(&value),
            )
            .unwrap_or_else(|(e, _)| panic!("produce in the transaction: {e}"));
            p.flush(TXN_TIMEOUT)
                .expect("flush the transaction's record");
            let mut tpl = TopicPartitionList::new();
            for (partition, offset) in &offsets {
                tpl.add_partition_offset(&topic, *partition, Offset::Offset(*offset))
                    .expect("offset list");
            }
            let metadata = self
                .consumer
                .group_metadata()
                .expect("the group's metadata");
            p.send_offsets_to_transaction(&tpl, &metadata, TXN_TIMEOUT)
                .unwrap_or_else(|e| panic!("send_offsets_to_transaction {offsets:?}: {e}"));
            self
        })
        .await
    }

    /// Commits or aborts the open transaction.
    async fn end(self, commit: bool) -> Transactions {
        blocking(move || {
            let p = &self.producer;
            if commit {
                p.commit_transaction(TXN_TIMEOUT)
                    .unwrap_or_else(|e| panic!("commit_transaction: {e}"));
            } else {
                p.abort_transaction(TXN_TIMEOUT)
                    .unwrap_or_else(|e| panic!("abort_transaction: {e}"));
            }
            self
        })
        .await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_transactions_offsets_are_never_archived_and_a_committed_ones_are_once() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-txn");
    let out = unique_name("log-txn-out");
    kafka::create_topic(&topic, 2).await;
    kafka::create_topic(&out, 1).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-txn-g");
    let (_dir, store) = local_store();
    let follower = unique_name("log-txn-follower");
    // The follower runs before the base snapshot, as a service following the log would.
    follow(&store, &follower).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2), (1, 2)])).await;
    snapshot(&store, &["--group", &group]).await;

    let txns = Transactions::new(&group, &out).await;
    let txns = txns.run(&topic, &[(0, 11), (1, 13)], false).await;
    let after_abort = instant().await;
    let txns = txns.run(&topic, &[(0, 6), (1, 8)], true).await;
    drop(txns);
    let after_commit = instant().await;
    follow(&store, &follower).await;

    // history: the first commit and the committed transaction's, once each; the aborted
    // transaction's offsets nowhere.
    let (changes, h) = history(&store, &group, &topic).await;
    let mut sorted = changes.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [commit(0, 2), commit(0, 6), commit(1, 2), commit(1, 8)],
        "{h:#}"
    );
    let offsets: Vec<i64> = changes.iter().filter_map(|c| c.2).collect();
    assert!(
        !offsets.contains(&11) && !offsets.contains(&13),
        "{offsets:?}"
    );
    // The committed transaction's offsets are the group's, as the real tool shows them.
    assert_eq!(committed(&group, &topic).await, [(0, 6), (1, 8)].into());

    // restore --at: just after the commit, its offsets; between the abort and the commit, the
    // first commit's (the aborted offsets never held).
    let (targets, doc) = planned(&store, &after_commit, &group).await;
    assert_eq!(targets, [(0, 6), (1, 8)].into(), "{doc:#}");
    let (targets, doc) = planned(&store, &after_abort, &group).await;
    assert_eq!(targets, [(0, 2), (1, 2)].into(), "{doc:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transaction_open_while_the_base_was_taken_is_replayed_once_it_commits() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-txn-base");
    let out = unique_name("log-txn-base-out");
    kafka::create_topic(&topic, 1).await;
    kafka::create_topic(&out, 1).await;
    kafka::produce(&topic, 0, 20).await;
    let group = unique_name("log-txn-base-g");
    let (_dir, store) = local_store();
    let follower = unique_name("log-txn-base-follower");
    follow(&store, &follower).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2)])).await;
    // The offsets are sent in a transaction that is still open when the base is taken: the
    // base holds the offset before it.
    let txns = Transactions::new(&group, &out).await;
    let txns = txns.begin(&topic, &[(0, 9)]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let id = snapshot(&store, &["--group", &group]).await;
    let base = crate::support::ov::show(&store, &id).await;
    assert_eq!(base["groups"][0]["partitions"][0]["offset"], 2, "{base:#}");
    let txns = txns.end(true).await;
    drop(txns);
    let after_commit = instant().await;
    assert_eq!(committed(&group, &topic).await, [(0, 9)].into());
    follow(&store, &follower).await;

    // The transaction's offsets were sent before the base and committed after it.
    let (targets, doc) = planned(&store, &after_commit, &group).await;
    assert_eq!(targets, [(0, 9)].into(), "{doc:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_group_comes_back_with_restore_at_an_instant_before_its_deletion() {
    if !env::require_kafka() {
        return;
    }
    deleted_group_comes_back(&[]).await;
}

/// The same for a group of the consumer protocol (KIP-848), whose deletion writes the records of
/// that protocol.
#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_consumer_protocol_group_comes_back_with_restore_at() {
    if !env::require_kafka() {
        return;
    }
    deleted_group_comes_back(&[("group.protocol", "consumer")]).await;
}

/// Commits for a new group (its members configured with `extra`), deletes it with the real
/// tool, and restores it at instants before its first commit, before its deletion and after it.
async fn deleted_group_comes_back(extra: &[(&str, &str)]) {
    let topic = unique_name("log-del");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-del-g");
    let (_dir, store) = local_store();
    let follower = unique_name("log-del-follower");
    // The follower's first start takes a base snapshot (before the group exists).
    follow(&store, &follower).await;
    let before_first = instant().await;
    kafka::consume_and_commit_with(
        &group,
        &topic,
        Take::per_partition(&[(0, 3), (1, 4)]),
        extra,
    )
    .await;
    // The base of the instants below: a snapshot that holds the group.
    snapshot(&store, &["--group", &group]).await;
    kafka::consume_and_commit_with(&group, &topic, Take::per_partition(&[(0, 5)]), extra).await; // 8
    let before_deletion = instant().await;
    let deleted = kcg(&["--delete", "--group", &group]).await;
    assert!(
        deleted.success && deleted.stdout.contains("successful"),
        "{}{}",
        deleted.stdout,
        deleted.stderr
    );
    assert_eq!(kcg_group_state(&group).await, None);
    let after_deletion = instant().await;
    follow(&store, &follower).await;

    // history: both commits, then the deletion.
    let (changes, h) = history(&store, &group, &topic).await;
    let commits: Vec<_> = changes
        .iter()
        .filter(|c| c.0 == "commit")
        .cloned()
        .collect();
    let mut sorted = commits.clone();
    sorted.sort();
    assert_eq!(sorted, [commit(0, 3), commit(0, 8), commit(1, 4)], "{h:#}");
    assert_eq!(
        changes.last().map(|c| c.0.as_str()),
        Some("group-deleted"),
        "{h:#}"
    );

    // After the deletion the group had no offsets: reported, and not created again.
    let doc = ov(
        &store,
        &[
            "restore",
            "--at",
            &after_deletion,
            "--group",
            &group,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let because = doc["chosen_because"].as_str().unwrap_or_default();
    assert!(
        because.contains(&format!(
            "no committed offset at that instant for {group} (left as they are)"
        )),
        "{doc:#}"
    );
    assert_eq!(doc["plan"]["summary"]["changes"], 0, "{doc:#}");
    let run = ov(
        &store,
        &[
            "restore",
            "--at",
            &after_deletion,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert!(
        run.stderr
            .contains(&format!("no committed offset at that instant for {group}"))
            && run.stdout.contains("nothing was done"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(kcg_group_state(&group).await, None, "{}", run.stderr);

    // Before its first commit: the follower's base (every group) did not hold it, so it had no
    // offsets then; reported, and not created.
    let run = ov(
        &store,
        &[
            "restore",
            "--at",
            &before_first,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert!(
        run.stderr
            .contains(&format!("no committed offset at that instant for {group}"))
            && run.stdout.contains("nothing was done"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(kcg_group_state(&group).await, None);

    // Before the deletion: the group exists again with exactly the offsets it had then.
    let (targets, doc) = planned(&store, &before_deletion, &group).await;
    assert_eq!(targets, [(0, 8), (1, 4)].into(), "{doc:#}");
    restore_at(&store, &before_deletion, &group).await;
    assert_eq!(committed(&group, &topic).await, [(0, 8), (1, 4)].into());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_offset_is_back_before_its_deletion_and_absent_after_it() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-deloff");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-deloff-g");
    let (_dir, store) = local_store();
    let follower = unique_name("log-deloff-follower");
    follow(&store, &follower).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 4)])).await;
    snapshot(&store, &["--group", &group]).await;
    let before_deletion = instant().await;
    let deleted = kcg(&[
        "--delete-offsets",
        "--group",
        &group,
        "--topic",
        &format!("{topic}:1"),
    ])
    .await;
    assert!(deleted.success, "{}{}", deleted.stdout, deleted.stderr);
    assert_eq!(committed(&group, &topic).await, [(0, 3)].into());
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2)])).await; // 5
    let after_deletion = instant().await;
    follow(&store, &follower).await;

    // history: the first commit, the deletion of partition 1, the second commit.
    let (changes, h) = history(&store, &group, &topic).await;
    let deletion = ("deletion".to_string(), Some(1), None);
    let at = |c: &(String, Option<i64>, Option<i64>)| changes.iter().position(|x| x == c);
    assert_eq!(changes.len(), 4, "{h:#}");
    assert!(at(&commit(1, 4)) < at(&deletion), "{h:#}");
    assert!(at(&commit(0, 3)) < at(&deletion), "{h:#}");
    assert_eq!(at(&commit(0, 5)), Some(3), "{h:#}");

    // After the deletion: partition 1 has no target and is left without an offset.
    let (targets, doc) = planned(&store, &after_deletion, &group).await;
    assert_eq!(targets, [(0, 5)].into(), "{doc:#}");
    restore_at(&store, &after_deletion, &group).await;
    assert_eq!(committed(&group, &topic).await, [(0, 5)].into());

    // Before it: partition 1's offset is back.
    let (targets, doc) = planned(&store, &before_deletion, &group).await;
    assert_eq!(targets, [(0, 3), (1, 4)].into(), "{doc:#}");
    restore_at(&store, &before_deletion, &group).await;
    assert_eq!(committed(&group, &topic).await, [(0, 3), (1, 4)].into());
}

/// The groups and their offsets on `topic` in `show --at AT --output json` (every group when
/// `group` is `None`), and the document.
async fn shown_at(
    store: &str,
    at: &str,
    group: Option<&str>,
    topic: &str,
) -> (BTreeMap<String, BTreeMap<i64, i64>>, Value) {
    let mut args = vec!["show", "--at", at, "--output", "json"];
    if let Some(g) = group {
        args.extend(["--group", g]);
    }
    let doc = ov(store, &args).await.ok().json();
    let groups = doc["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("no groups: {doc:#}"))
        .iter()
        .filter_map(|g| {
            let offsets: BTreeMap<i64, i64> = g["partitions"]
                .as_array()?
                .iter()
                .filter(|p| p["topic"] == topic)
                .map(|p| {
                    (
                        p["partition"].as_i64().unwrap(),
                        p["offset"].as_i64().unwrap(),
                    )
                })
                .collect();
            (!offsets.is_empty()).then(|| (g["group_id"].as_str().unwrap().to_string(), offsets))
        })
        .collect();
    (groups, doc)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_born_after_an_all_groups_base_comes_back_at_its_first_commit() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-born");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-born-g");
    let (dir, store) = local_store();
    let follower = unique_name("log-born-follower");
    follow(&store, &follower).await;
    // The base: every group, taken before the group exists.
    let base = snapshot(&store, &["--all-groups"]).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 4)])).await;
    let between = instant().await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 5), (1, 2)])).await;
    assert_eq!(committed(&group, &topic).await, [(0, 8), (1, 6)].into());
    let second = instant().await;
    let deleted = kcg(&["--delete", "--group", &group]).await;
    assert!(deleted.success, "{}{}", deleted.stdout, deleted.stderr);
    follow(&store, &follower).await;

    // history, show --at (named, and found in the log with nothing named) and the restore's
    // plan agree: the first commit on every partition.
    let (changes, h) = history(&store, &group, &topic).await;
    let mut commits: Vec<_> = changes.into_iter().filter(|c| c.0 == "commit").collect();
    commits.sort();
    assert_eq!(
        commits,
        [commit(0, 3), commit(0, 8), commit(1, 4), commit(1, 6)],
        "{h:#}"
    );
    let first: BTreeMap<i64, i64> = [(0, 3), (1, 4)].into();
    let (named, doc) = shown_at(&store, &between, Some(&group), &topic).await;
    assert_eq!(named.get(&group), Some(&first), "{doc:#}");
    assert_eq!(doc["base"]["snapshot"], base.as_str(), "{doc:#}");
    assert_eq!(doc["sources"][0]["in_base"], false, "{doc:#}");
    let (everything, doc) = shown_at(&store, &between, None, &topic).await;
    assert_eq!(everything.get(&group), Some(&first), "{doc:#}");
    let (targets, doc) = planned(&store, &between, &group).await;
    assert_eq!(targets, first, "{doc:#}");
    assert!(
        doc["chosen_because"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("replayed from no offsets: {group}")),
        "{doc:#}"
    );
    // diff between the two instants: each partition from its first commit to its second.
    let diff = ov(
        &store,
        &[
            "diff", "--at", &between, "--at", &second, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(
        crate::log_at::changes(&diff),
        [
            (0, "changed".to_string(), Some(3), Some(8)),
            (1, "changed".to_string(), Some(4), Some(6)),
        ],
        "{diff:#}"
    );

    // Reviewed: the plan file of --at, applied by --from-plan at the same instant.
    let plan = dir.path().join("plan.json");
    let plan = plan.to_str().unwrap();
    ov(
        &store,
        &[
            "restore",
            "--at",
            &between,
            "--group",
            &group,
            "--plan-file",
            plan,
        ],
    )
    .await
    .ok();
    ov(
        &store,
        &[
            "restore",
            "--from-plan",
            plan,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    // The real tool sees the first commit again.
    assert_eq!(committed(&group, &topic).await, [(0, 3), (1, 4)].into());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transactional_group_born_after_the_base_is_replayed_from_its_committed_transactions() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-born-txn");
    let out = unique_name("log-born-txn-out");
    kafka::create_topic(&topic, 2).await;
    kafka::create_topic(&out, 1).await;
    kafka::produce(&topic, 0, 20).await;
    kafka::produce(&topic, 1, 20).await;
    let group = unique_name("log-born-txn-g");
    let (_dir, store) = local_store();
    let follower = unique_name("log-born-txn-follower");
    follow(&store, &follower).await;
    snapshot(
        &store,
        &["--group-pattern", "log-born-txn-g.*", "--allow-empty"],
    )
    .await;

    let txns = Transactions::new(&group, &out).await;
    let txns = txns.run(&topic, &[(0, 4), (1, 5)], true).await;
    let after_first = instant().await;
    let txns = txns.run(&topic, &[(0, 11), (1, 13)], false).await;
    let after_abort = instant().await;
    let txns = txns.run(&topic, &[(0, 7), (1, 9)], true).await;
    drop(txns);
    let after_second = instant().await;
    assert_eq!(committed(&group, &topic).await, [(0, 7), (1, 9)].into());
    follow(&store, &follower).await;

    for (at, want) in [
        (&after_first, [(0, 4), (1, 5)]),
        (&after_abort, [(0, 4), (1, 5)]),
        (&after_second, [(0, 7), (1, 9)]),
    ] {
        let (targets, doc) = planned(&store, at, &group).await;
        assert_eq!(targets, want.into(), "at {at}: {doc:#}");
    }
    restore_at(&store, &after_first, &group).await;
    assert_eq!(committed(&group, &topic).await, [(0, 4), (1, 5)].into());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instant_before_the_first_snapshot_is_served_from_the_log_start() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-start");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 20).await;
    let group = unique_name("log-start-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3)])).await;
    let between = instant().await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 6)])).await; // 9
                                                                                     // Only now does a follower start, on an empty store: it archives the log from offset 0 and
                                                                                     // takes its base snapshot after both commits.
    let (_dir, store) = local_store();
    follow(&store, &unique_name("log-start-follower")).await;

    let (targets, doc) = planned(&store, &between, &group).await;
    assert_eq!(targets, [(0, 3)].into(), "{doc:#}");
    let because = doc["chosen_because"].as_str().unwrap_or_default();
    assert!(
        because.contains("the base is the log from its start")
            && because.contains("compaction removed before the follower first read it"),
        "{doc:#}"
    );
    let (shown, doc) = shown_at(&store, &between, Some(&group), &topic).await;
    assert_eq!(shown.get(&group), Some(&[(0, 3)].into()), "{doc:#}");
    assert_eq!(doc["base"]["snapshot"], "log-start", "{doc:#}");
    restore_at(&store, &between, &group).await;
    assert_eq!(committed(&group, &topic).await, [(0, 3)].into());
}
