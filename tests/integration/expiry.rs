//! The expiry guard (`expiring`) against the second cluster of the test environment, whose
//! broker expires idle groups' offsets after a minute (offsets.retention.minutes=1, checked every
//! 5 s): an Empty group is reported and snapshotted before the broker expires it, and restored
//! from that snapshot (or the commit-log archive) after; a group with members, and a group outside
//! the margin, are not. One test on the main cluster selects a stopped sink connector's group.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

use crate::log_other_cluster::{
    other_commit, other_committed, other_config, other_kcg, other_topic, ov_other,
};
use crate::support::ov::local_store;
use crate::support::poll::eventually;
use crate::support::{env, schema, unique_name};

/// `expiring ARGS --output json` on the second cluster, checked against its published schema.
async fn expiring(store: &str, args: &[&str]) -> Value {
    let mut all = vec!["expiring", "--output", "json"];
    all.extend_from_slice(args);
    let doc = ov_other(store, None, &all).await.ok().json();
    schema::validate("expiring", &doc);
    doc
}

/// The names of the groups a report lists.
fn reported(doc: &Value) -> Vec<String> {
    doc["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc:#}"))
        .iter()
        .map(|g| g["group"].as_str().unwrap().to_string())
        .collect()
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .unwrap_or_else(|| panic!("a time: {v}"))
        .parse()
        .unwrap_or_else(|e| panic!("{v}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_group_is_snapshotted_before_the_broker_expires_it_and_restored_after() {
    if !env::require_other_kafka() {
        return;
    }
    let topic = unique_name("guard-expiry");
    other_topic(&topic, &[(0, 10), (1, 10)]).await;
    let group = unique_name("guard-expiry-g");
    let offsets: BTreeMap<i32, i64> = [(0, 4), (1, 7)].into();
    let before_commit = Utc::now();
    other_commit(&group, &topic, &offsets).await;
    let after_commit = Utc::now();
    let committed_at = Instant::now();
    assert_eq!(other_committed(&group, &topic).await, Some(offsets.clone()));
    let (_dir, store) = local_store();

    // A minute of retention: with no margin the group is not near expiry yet.
    let doc = expiring(&store, &["--group", &group, "--expiry-margin", "0s"]).await;
    assert_eq!(doc["retention_seconds"], 60, "{doc:#}");
    assert_eq!(doc["checked"], 1, "{doc:#}");
    assert_eq!(reported(&doc), Vec::<String>::new(), "{doc:#}");
    assert!(doc["snapshot_id"].is_null(), "{doc:#}");

    // With 59 s of margin it is, from a second after the commit.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let doc = expiring(
        &store,
        &[
            "--group",
            &group,
            "--expiry-margin",
            "59s",
            "--tag",
            "run=1",
        ],
    )
    .await;
    assert_eq!(reported(&doc), vec![group.clone()], "{doc:#}");
    let g = &doc["groups"][0];
    assert_eq!(g["state"], "Empty", "{doc:#}");
    assert_eq!(g["partitions"], 2, "{doc:#}");
    // A group that only committed: each offset expires a minute after its own commit.
    assert_eq!(g["basis"], "commit-time", "{doc:#}");
    let newest = time(&g["newest_commit"]);
    assert!(
        newest >= before_commit - chrono::Duration::seconds(1)
            && newest <= after_commit + chrono::Duration::seconds(1),
        "newest commit {newest} outside [{before_commit}, {after_commit}]"
    );
    assert_eq!(
        time(&g["expires_at"]) - newest,
        chrono::Duration::seconds(60),
        "{doc:#}"
    );
    assert_eq!(
        g["restore_hint"],
        format!("offset-vault restore --group {group} --latest --execute")
    );
    let id = doc["snapshot_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{doc:#}"))
        .to_string();
    assert!(
        committed_at.elapsed() < Duration::from_secs(50),
        "the guard ran {:?} after the commit, too late to prove it came before the expiry",
        committed_at.elapsed()
    );

    // The snapshot holds the group's offsets and carries the guard's tag and the user's.
    let listed = ov_other(
        &store,
        None,
        &["list", "--tag", "expiry-guard=true", "--output", "json"],
    )
    .await
    .ok()
    .json();
    let snaps = listed["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 1, "{listed:#}");
    assert_eq!(snaps[0]["id"], id.as_str());
    assert_eq!(snaps[0]["tags"]["run"], "1", "{listed:#}");
    let shown = ov_other(&store, None, &["show", &id, "--output", "json"])
        .await
        .ok()
        .json();
    let held: BTreeMap<i32, i64> = shown["groups"][0]["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("{shown:#}"))
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap() as i32,
                p["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shown["groups"][0]["group_id"], group.as_str());
    assert_eq!(held, offsets, "{shown:#}");

    // The broker expires the offsets about a minute after the commit.
    eventually(
        &format!("the second cluster to expire the offsets of {group}"),
        Duration::from_secs(150),
        || async {
            match other_committed(&group, &topic).await {
                None => Ok(()),
                Some(o) if o.is_empty() => Ok(()),
                Some(o) => Err(format!("still committed: {o:?}")),
            }
        },
    )
    .await;
    assert!(
        committed_at.elapsed() >= Duration::from_secs(55),
        "expired only {:?} after the commit, before offsets.retention.minutes=1",
        committed_at.elapsed()
    );
    // Expired groups are not listed: nothing is left to lose.
    let doc = expiring(&store, &["--group", &group, "--expiry-margin", "1h"]).await;
    assert_eq!(reported(&doc), Vec::<String>::new(), "{doc:#}");

    // The hint brings the offsets back, as kafka-consumer-groups sees them.
    ov_other(
        &store,
        None,
        &[
            "restore",
            "--group",
            &group,
            "--latest",
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert_eq!(other_committed(&group, &topic).await, Some(offsets));
}

/// A consumer of `topic` in `group` on the second cluster, polling on its own thread until
/// dropped; it commits `offsets` once it has its partitions.
struct Member {
    stop: Arc<AtomicBool>,
    committed: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Member {
    fn join(group: &str, topic: &str, offsets: BTreeMap<i32, i64>) -> Member {
        let (stop, committed) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (s, c) = (stop.clone(), Arc::clone(&committed));
        let (group, topic) = (group.to_string(), topic.to_string());
        let thread = std::thread::spawn(move || {
            let consumer: BaseConsumer = other_config()
                .set("group.id", &group)
                .set("enable.auto.commit", "false")
                .set("auto.offset.reset", "earliest")
                .create()
                .expect("consumer");
            consumer.subscribe(&[&topic]).expect("subscribe");
            while !s.load(Ordering::SeqCst) {
                let _ = consumer.poll(Duration::from_millis(100));
                let assigned = consumer.assignment().map_or(0, |a| a.count());
                if assigned == offsets.len() && !c.load(Ordering::SeqCst) {
                    let mut tpl = TopicPartitionList::new();
                    for (p, o) in &offsets {
                        tpl.add_partition_offset(&topic, *p, Offset::Offset(*o))
                            .expect("offset list");
                    }
                    if consumer.commit(&tpl, CommitMode::Sync).is_ok() {
                        c.store(true, Ordering::SeqCst);
                    }
                }
            }
            consumer.unsubscribe();
        });
        Member {
            stop,
            committed,
            thread: Some(thread),
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn groups_with_members_and_groups_outside_the_margin_are_not_reported() {
    if !env::require_other_kafka() {
        return;
    }
    let prefix = unique_name("guard-members");
    let topic = format!("{prefix}-t");
    other_topic(&topic, &[(0, 5), (1, 5)]).await;
    let offsets: BTreeMap<i32, i64> = [(0, 1), (1, 2)].into();
    let (active, idle) = (format!("{prefix}-active"), format!("{prefix}-idle"));
    let member = Member::join(&active, &topic, offsets.clone());
    other_commit(&idle, &topic, &offsets).await;
    let committed_at = Instant::now();
    let committed = member.committed.clone();
    eventually(
        &format!("{active} to have a member and committed offsets"),
        Duration::from_secs(60),
        || {
            let committed = committed.clone();
            let active = active.clone();
            async move {
                if !committed.load(Ordering::SeqCst) {
                    return Err("no commit yet".to_string());
                }
                let out = other_kcg(&["--describe", "--group", &active, "--state"]).await;
                if out.stdout.contains("Stable") {
                    Ok(())
                } else {
                    Err(format!("{}{}", out.stdout, out.stderr))
                }
            }
        },
    )
    .await;
    let (_dir, store) = local_store();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pattern = format!("{prefix}-.*");

    // The idle group is within 59 s of its expiry; the active one, which committed at about
    // the same time, is never reported while it has members.
    let doc = expiring(
        &store,
        &[
            "--group-pattern",
            &pattern,
            "--expiry-margin",
            "59s",
            "--no-snapshot",
        ],
    )
    .await;
    assert_eq!(reported(&doc), vec![idle.clone()], "{doc:#}");
    assert_eq!(
        doc["checked"], 1,
        "only the Empty group is checked: {doc:#}"
    );
    assert!(doc["snapshot_id"].is_null(), "--no-snapshot: {doc:#}");
    // The same through librdkafka alone (no direct protocol connection).
    let doc = expiring(
        &store,
        &[
            "--group-pattern",
            &pattern,
            "--expiry-margin",
            "59s",
            "--no-snapshot",
            "--librdkafka-only",
        ],
    )
    .await;
    assert_eq!(reported(&doc), vec![idle.clone()], "{doc:#}");
    assert_eq!(doc["checked"], 1, "{doc:#}");
    // Without a margin, nobody is near expiry yet: the idle group has about a minute left.
    let doc = expiring(
        &store,
        &["--group-pattern", &pattern, "--expiry-margin", "0s"],
    )
    .await;
    assert_eq!(reported(&doc), Vec::<String>::new(), "{doc:#}");
    assert!(doc["snapshot_id"].is_null(), "nothing to snapshot: {doc:#}");
    assert!(
        committed_at.elapsed() < Duration::from_secs(50),
        "the checks ran {:?} after the commit, when the idle group may have expired",
        committed_at.elapsed()
    );
    // The table form says the same, and lists no snapshot.
    let run = ov_other(
        &store,
        None,
        &[
            "expiring",
            "--group-pattern",
            &pattern,
            "--expiry-margin",
            "59s",
        ],
    )
    .await
    .ok();
    assert!(run.stdout.contains(&idle), "{}", run.stdout);
    assert!(!run.stdout.contains(&active), "{}", run.stdout);
    drop(member);
}

/// The broker counts a classic group's retention from when it became Empty, not from its newest
/// commit: a commit made while it is Empty does not put its expiry off. The guard reads that
/// instant from the group's metadata record and reports the time the broker keeps to.
#[tokio::test(flavor = "multi_thread")]
async fn a_classic_group_expires_counted_from_when_it_became_empty_as_the_guard_says() {
    if !env::require_other_kafka() {
        return;
    }
    let topic = unique_name("guard-classic");
    other_topic(&topic, &[(0, 10), (1, 10)]).await;
    let group = unique_name("guard-classic-g");
    let member = Member::join(&group, &topic, [(0, 2), (1, 3)].into());
    let committed = member.committed.clone();
    eventually(
        &format!("{group}'s member to commit"),
        Duration::from_secs(60),
        || {
            let committed = committed.clone();
            async move { committed.load(Ordering::SeqCst).then_some(()) }
        },
    )
    .await;
    let left_at = Utc::now();
    drop(member);
    eventually(
        &format!("{group} to be Empty after its member left"),
        Duration::from_secs(60),
        || async {
            let out = other_kcg(&["--describe", "--group", &group, "--state"]).await;
            out.stdout
                .contains("Empty")
                .then_some(())
                .ok_or(format!("{}{}", out.stdout, out.stderr))
        },
    )
    .await;
    let empty_by = Utc::now();

    // 20 s later, a commit while Empty (as `restore` or kafka-consumer-groups would make it).
    tokio::time::sleep(Duration::from_secs(20)).await;
    let offsets: BTreeMap<i32, i64> = [(0, 5), (1, 6)].into();
    let recommitted_at = Utc::now();
    other_commit(&group, &topic, &offsets).await;
    let (_dir, store) = local_store();
    let doc = expiring(
        &store,
        &["--group", &group, "--expiry-margin", "1h", "--no-snapshot"],
    )
    .await;
    assert_eq!(reported(&doc), vec![group.clone()], "{doc:#}");
    let g = &doc["groups"][0];
    assert_eq!(g["basis"], "empty-since", "{doc:#}");
    assert_eq!(g["group_type"], "classic", "{doc:#}");
    assert!(time(&g["newest_commit"]) >= recommitted_at - chrono::Duration::seconds(1));
    let expires_at = time(&g["expires_at"]);
    let minute = chrono::Duration::seconds(60);
    let slack = chrono::Duration::seconds(1);
    assert!(
        expires_at >= left_at + minute - slack && expires_at <= empty_by + minute + slack,
        "expires at {expires_at}: not a minute after the group became Empty (between {left_at} and {empty_by})"
    );

    // The broker agrees: the offsets go a minute after the group became Empty (checked every
    // 5 s), well before a minute after the newest commit.
    eventually(
        &format!("the second cluster to expire the offsets of {group}"),
        Duration::from_secs(150),
        || async {
            match other_committed(&group, &topic).await {
                None => Ok(()),
                Some(o) if o.is_empty() => Ok(()),
                Some(o) => Err(format!("still committed: {o:?}")),
            }
        },
    )
    .await;
    let gone_by = Utc::now();
    assert!(
        gone_by < recommitted_at + minute - chrono::Duration::seconds(5),
        "expired only at {gone_by}, not before a minute after the newest commit ({recommitted_at}): the broker counted from the commit"
    );
    assert!(
        gone_by >= expires_at - slack,
        "expired at {gone_by}, before the {expires_at} the guard reported"
    );
}

/// With a commit-log archive that covers the group's newest commit, the hint restores the
/// offsets as they were at an instant the archive holds, and that brings them back.
#[tokio::test(flavor = "multi_thread")]
async fn with_a_commit_log_archive_the_hint_restores_the_group_at_an_instant() {
    if !env::require_other_kafka() {
        return;
    }
    let topic = unique_name("guard-at");
    other_topic(&topic, &[(0, 10), (1, 10)]).await;
    let group = unique_name("guard-at-g");
    let offsets: BTreeMap<i32, i64> = [(0, 3), (1, 9)].into();
    other_commit(&group, &topic, &offsets).await;
    let committed_at = Instant::now();
    let (_dir, store) = local_store();
    let follower = unique_name("guard-at-follower");
    ov_other(
        &store,
        None,
        &[
            "follow",
            "--once",
            "--group-id",
            &follower,
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    // Within 59 s of its expiry from a second after the commit.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let doc = expiring(&store, &["--group", &group, "--expiry-margin", "59s"]).await;
    assert_eq!(reported(&doc), vec![group.clone()], "{doc:#}");
    let hint = doc["groups"][0]["restore_hint"]
        .as_str()
        .unwrap()
        .to_string();
    let words: Vec<&str> = hint.split(' ').collect();
    assert_eq!(
        words[..5],
        ["offset-vault", "restore", "--group", group.as_str(), "--at"],
        "{hint}"
    );
    assert_eq!(words[6..], ["--execute"], "{hint}");
    let at = time(&Value::from(words[5]));
    assert!(
        at >= time(&doc["groups"][0]["newest_commit"]) && at <= time(&doc["checked_at"]),
        "{hint}: not between the newest commit and the check: {doc:#}"
    );
    assert!(
        committed_at.elapsed() < Duration::from_secs(50),
        "the guard ran {:?} after the commit",
        committed_at.elapsed()
    );
    eventually(
        &format!("the second cluster to expire the offsets of {group}"),
        Duration::from_secs(150),
        || async {
            match other_committed(&group, &topic).await {
                None => Ok(()),
                Some(o) if o.is_empty() => Ok(()),
                Some(o) => Err(format!("still committed: {o:?}")),
            }
        },
    )
    .await;
    // The hint's command, as printed (with --settle 0s, as the other restores here).
    let mut args: Vec<&str> = words[1..].to_vec();
    args.extend(["--settle", "0s"]);
    ov_other(&store, None, &args).await.ok();
    assert_eq!(other_committed(&group, &topic).await, Some(offsets));
}

/// A group born after an `--all-groups` base and expired by the broker comes back exactly with
/// `restore --at`: the base does not hold it, so it is replayed from no offsets, its commits as
/// the archive holds them up to the instant.
#[tokio::test(flavor = "multi_thread")]
async fn a_group_born_after_the_base_and_expired_comes_back_at_an_instant() {
    if !env::require_other_kafka() {
        return;
    }
    let topic = unique_name("expired-born");
    other_topic(&topic, &[(0, 10), (1, 10)]).await;
    let (_dir, store) = local_store();
    let follower = unique_name("expired-born-follower");
    let follow = || async {
        ov_other(&store, None, &["follow", "--once", "--group-id", &follower])
            .await
            .ok();
    };
    follow().await;
    // The base: every group of the cluster, taken before the group exists.
    let base = ov_other(
        &store,
        None,
        &["snapshot", "--all-groups", "--output", "json"],
    )
    .await
    .ok()
    .json();
    let base = base["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{base:#}"))
        .to_string();
    let group = unique_name("expired-born-g");
    let first: BTreeMap<i32, i64> = [(0, 2), (1, 7)].into();
    other_commit(&group, &topic, &first).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let between = Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    tokio::time::sleep(Duration::from_millis(400)).await;
    other_commit(&group, &topic, &[(0, 9), (1, 8)].into()).await;
    follow().await;
    eventually(
        &format!("the second cluster to expire the offsets of {group}"),
        Duration::from_secs(150),
        || async {
            match other_committed(&group, &topic).await {
                None => Ok(()),
                Some(o) if o.is_empty() => Ok(()),
                Some(o) => Err(format!("still committed: {o:?}")),
            }
        },
    )
    .await;
    // The expiry is in the log too; the archive holds it after the commits.
    follow().await;
    let plan = ov_other(
        &store,
        None,
        &[
            "restore", "--at", &between, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(plan["snapshot"], base.as_str(), "{plan:#}");
    assert!(
        plan["chosen_because"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("replayed from no offsets: {group}")),
        "{plan:#}"
    );
    ov_other(
        &store,
        None,
        &[
            "restore",
            "--at",
            &between,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    // The real tool sees the first commit on every partition.
    assert_eq!(other_committed(&group, &topic).await, Some(first));
}

/// `--connector` selects a sink connector's group: reported once the connector is stopped and
/// its group Empty, counted from then with the main cluster's retention (Kafka's default, 7 days).
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_sink_connectors_group_is_found_by_the_connector_name() {
    use crate::support::connect::{connect_request, running_file_sink};
    use crate::support::kcg::kcg_group_state;
    use crate::support::ov::ov;
    if !env::require_kafka() || !env::require_connect() {
        return;
    }
    let sink = running_file_sink("guard-sink", 3).await;
    let (_dir, store) = local_store();
    let args = |margin: &'static str| {
        [
            "expiring",
            "--connector",
            sink.name.as_str(),
            "--expiry-margin",
            margin,
            "--no-snapshot",
            "--output",
            "json",
        ]
    };
    // Running: its group has members and is not even checked.
    let doc = ov(&store, &args("8d")).await.ok().json();
    schema::validate("expiring", &doc);
    assert_eq!(doc["checked"], 0, "{doc:#}");

    let stopping_at = Utc::now();
    let (status, body) = connect_request(
        reqwest::Method::PUT,
        &format!("/connectors/{}/stop", sink.name),
        None,
    )
    .await;
    assert!(status.is_success(), "stop {}: {status} {body}", sink.name);
    eventually(
        &format!("{} to be Empty once its connector stopped", sink.group),
        Duration::from_secs(60),
        || async {
            match kcg_group_state(&sink.group).await.as_deref() {
                Some("Empty") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    let empty_by = Utc::now();
    let doc = ov(&store, &args("8d")).await.ok().json();
    schema::validate("expiring", &doc);
    assert_eq!(reported(&doc), vec![sink.group.clone()], "{doc:#}");
    assert_eq!(doc["retention_seconds"], 7 * 24 * 3600, "{doc:#}");
    let g = &doc["groups"][0];
    assert_eq!(g["basis"], "empty-since", "{doc:#}");
    assert_eq!(g["partitions"], 1, "{doc:#}");
    let week = chrono::Duration::days(7);
    let expires_at = time(&g["expires_at"]);
    assert!(
        expires_at >= stopping_at + week - chrono::Duration::seconds(1)
            && expires_at <= empty_by + week + chrono::Duration::seconds(1),
        "expires at {expires_at}, not 7 days after the group became Empty ({stopping_at} .. {empty_by})"
    );
    // A day ahead it is not near expiry.
    let doc = ov(&store, &args("1d")).await.ok().json();
    assert_eq!(reported(&doc), Vec::<String>::new(), "{doc:#}");
    assert_eq!(doc["checked"], 1, "{doc:#}");
    sink.cleanup.delete().await;
}
