//! The commit-log archive against the second cluster of the test environment (`kafka2` in
//! `scripts/test-env`), whose broker expires idle groups' offsets after a minute and checks ACLs:
//! a group that the broker expired is brought back by `restore --at` from the archive, and a
//! follower that ACLs refuse exits 10 naming the ACLs it needs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::ClientConfig;
use serde_json::Value;

use crate::support::kcg::{parse_kcg_describe, run_kafka_tool, ToolOutput};
use crate::support::ov::{local_store, ov_raw, Run};
use crate::support::poll::eventually;
use crate::support::{blocking, env, unique_name};

/// A client of the second cluster's PLAINTEXT listener (a super user there).
pub(crate) fn other_config() -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", env::other_bootstrap());
    config
}

/// Creates `topic` on the second cluster and produces `records` records to each partition.
pub(crate) async fn other_topic(topic: &str, records: &[(i32, usize)]) {
    let admin: AdminClient<DefaultClientContext> = other_config().create().expect("admin client");
    let partitions = records.len() as i32;
    let results = admin
        .create_topics(
            [&NewTopic::new(
                topic,
                partitions,
                TopicReplication::Fixed(1),
            )],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .unwrap_or_else(|e| panic!("create {topic} on the second cluster: {e}"));
    for r in results {
        r.unwrap_or_else(|(t, code)| panic!("create {t} on the second cluster: {code}"));
    }
    let (topic, records) = (topic.to_string(), records.to_vec());
    blocking(move || {
        let producer: ThreadedProducer<DefaultProducerContext> = other_config()
            .set("acks", "all")
            .set("message.timeout.ms", "30000")
            .create()
            .expect("producer");
        for (partition, n) in records {
            for i in 0..n {
                let value = format!("{topic}-{partition}-{i}");
                let mut record = BaseRecord::<(), String>::to(&topic)
                    .partition(partition)
                    .payload(&value);
                // The metadata of a new topic may lag: retry while the queue is full or the
                // partition is not known yet.
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    match producer.send(record) {
                        Ok(()) => break,
                        Err((e, r)) => {
                            assert!(Instant::now() < deadline, "produce to {topic}: {e}");
                            record = r;
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            }
        }
        producer
            .flush(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("flush to {topic}: {e}"));
    })
    .await
}

/// Commits `offsets` for `group` on the second cluster without joining it: the group has no
/// members, and its offsets expire `offsets.retention.minutes` after this commit.
pub(crate) async fn other_commit(group: &str, topic: &str, offsets: &BTreeMap<i32, i64>) {
    crate::support::mirror::commit(
        crate::support::mirror::Cluster::Replica,
        group,
        topic,
        offsets,
    )
    .await;
}

/// The real kafka-consumer-groups against the second cluster.
pub(crate) async fn other_kcg(args: &[&str]) -> ToolOutput {
    let bootstrap = env::other_bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-consumer-groups", &all).await
}

/// The group's committed offsets on `topic` as kafka-consumer-groups --describe shows them on
/// the second cluster; `None` when the tool says the group does not exist.
///
/// While the coordinator deletes an expired group, or right after a commit creates it again,
/// the tool can fail once with `GroupIdNotFoundException: ... is not a consumer group`: a
/// failed describe is asked again for up to 15 s before it fails the test.
pub(crate) async fn other_committed(group: &str, topic: &str) -> Option<BTreeMap<i32, i64>> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let out = other_kcg(&["--describe", "--group", group]).await;
        let text = format!("{}{}", out.stdout, out.stderr);
        if text.contains("does not exist") || text.contains("not found") {
            return None;
        }
        if out.success && !out.stdout.contains("Error:") {
            return Some(
                parse_kcg_describe(&out.stdout)
                    .into_iter()
                    .filter(|r| r.topic == topic)
                    .filter_map(|r| Some((r.partition, r.current_offset?)))
                    .collect(),
            );
        }
        assert!(
            Instant::now() < deadline,
            "kafka-consumer-groups --describe --group {group} on the second cluster:\n{text}"
        );
        eprintln!("kafka-consumer-groups --describe --group {group} failed; asking again:\n{text}");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `offset-vault` against the second cluster, as its super user (PLAINTEXT) or with these
/// client settings (`-X`) on the SASL listener.
pub(crate) async fn ov_other(store: &str, settings: Option<&[String]>, args: &[&str]) -> Run {
    let bootstrap = match settings {
        Some(_) => env::other_sasl_bootstrap(),
        None => env::other_bootstrap(),
    };
    let mut all: Vec<String> = vec![
        "--bootstrap-server".into(),
        bootstrap,
        "--store".into(),
        store.into(),
        "--timeout".into(),
        "20s".into(),
    ];
    for s in settings.unwrap_or_default() {
        all.push("-X".into());
        all.push(s.clone());
    }
    all.extend(args.iter().map(|a| a.to_string()));
    ov_raw(all).await
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_the_broker_expired_is_restored_from_the_archive_with_exactly_its_offsets() {
    if !env::require_other_kafka() {
        return;
    }
    let topic = unique_name("other-expiry");
    other_topic(&topic, &[(0, 10), (1, 10)]).await;
    let group = unique_name("other-expiry-g");
    let offsets: BTreeMap<i32, i64> = [(0, 4), (1, 7)].into();
    other_commit(&group, &topic, &offsets).await;
    let committed_at = Instant::now();
    assert_eq!(other_committed(&group, &topic).await, Some(offsets.clone()));

    // The first run archives the log from its start and takes the base snapshot.
    let (_dir, store) = local_store();
    let follower = unique_name("other-expiry-follower");
    let follow = [
        "follow",
        "--once",
        "--group-id",
        &follower,
        "--output",
        "json",
    ];
    let first = ov_other(&store, None, &follow).await.ok().json();
    assert!(first["base_snapshot"].is_string(), "{first:#}");
    let h = ov_other(&store, None, &["history", &group, "--output", "json"])
        .await
        .ok()
        .json();
    let kinds = |h: &Value| -> Vec<(String, Option<i64>, Option<i64>)> {
        h["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["kind"].as_str().unwrap().to_string(),
                    c["partition"].as_i64(),
                    c["offset"].as_i64(),
                )
            })
            .collect()
    };
    assert_eq!(kinds(&h), kinds_of_commits(), "{h:#}");
    let before_expiry = chrono::Utc::now();
    assert!(
        committed_at.elapsed() < Duration::from_secs(50),
        "the first follow took until the offsets may have expired ({:?} after the commit)",
        committed_at.elapsed()
    );

    // offsets.retention.minutes=1, checked every 5 s: gone within about 65 s of the commit.
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

    // The second run archives the expiry's tombstones; history lists them after the commits.
    ov_other(&store, None, &follow).await.ok();
    let h = ov_other(&store, None, &["history", &group, "--output", "json"])
        .await
        .ok()
        .json();
    let seen = kinds(&h);
    let mut deleted: Vec<i64> = seen
        .iter()
        .filter(|(k, _, _)| k == "deletion")
        .map(|(_, p, o)| {
            assert_eq!(*o, None, "{h:#}");
            p.expect("a deletion names its partition")
        })
        .collect();
    deleted.sort();
    assert_eq!(deleted, vec![0, 1], "{h:#}");
    assert_eq!(&seen[..2], &kinds_of_commits(), "{h:#}");
    let expired_at: Vec<i64> = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "deletion")
        .map(|c| c["at"].as_i64().unwrap())
        .collect();
    assert!(
        expired_at
            .iter()
            .all(|at| *at > before_expiry.timestamp_millis()),
        "tombstones at {expired_at:?}, before {before_expiry}: {h:#}"
    );

    // Back to the instant before the expiry: the group exists again with exactly its offsets.
    let at = rfc3339(before_expiry);
    let plan = ov_other(
        &store,
        None,
        &[
            "restore", "--at", &at, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    let targets: BTreeMap<i64, i64> = plan["plan"]["groups"][0]["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("{plan:#}"))
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap(),
                p["target"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(targets, [(0, 4), (1, 7)].into(), "{plan:#}");
    ov_other(
        &store,
        None,
        &[
            "restore",
            "--at",
            &at,
            "--group",
            &group,
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    assert_eq!(other_committed(&group, &topic).await, Some(offsets));
}

/// (kind, partition, offset) of the group's two commits, as history lists them.
fn kinds_of_commits() -> Vec<(String, Option<i64>, Option<i64>)> {
    vec![
        ("commit".to_string(), Some(0), Some(4)),
        ("commit".to_string(), Some(1), Some(7)),
    ]
}

/// One refusal: what is refused, the ACLs (permission, operation, resource type, resource name)
/// that refuse it, and the words stderr must hold.
type Case<'a> = (&'a str, Vec<[&'a str; 4]>, &'a [&'a str]);

/// ACLs added with the real kafka-acls (through the super user's PLAINTEXT listener) and
/// removed again when dropped, also when the test fails.
struct Acls {
    added: Vec<Vec<String>>,
}

impl Acls {
    fn new() -> Acls {
        Acls { added: Vec::new() }
    }

    /// `kafka-acls --add ARGS` (in force once the broker has the new metadata, a moment later).
    async fn add(&mut self, args: &[&str]) {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let out = acls_tool("--add", &args).await;
        assert!(
            out.success,
            "kafka-acls --add {args:?}:\n{}{}",
            out.stdout, out.stderr
        );
        self.added.push(args);
    }

    /// Removes every ACL added so far.
    async fn clear(&mut self) {
        for args in std::mem::take(&mut self.added) {
            let mut args = args;
            args.push("--force".into());
            let out = acls_tool("--remove", &args).await;
            assert!(
                out.success,
                "kafka-acls --remove {args:?}:\n{}{}",
                out.stdout, out.stderr
            );
        }
    }
}

impl Drop for Acls {
    fn drop(&mut self) {
        for args in std::mem::take(&mut self.added) {
            let _ = std::process::Command::new(env::kafka_tools_dir().join("kafka-acls"))
                .args([
                    "--bootstrap-server",
                    &env::other_bootstrap(),
                    "--remove",
                    "--force",
                ])
                .args(&args)
                .stdin(std::process::Stdio::null())
                .output();
        }
    }
}

async fn acls_tool(action: &str, args: &[String]) -> ToolOutput {
    let bootstrap = env::other_bootstrap();
    let mut all: Vec<&str> = vec!["--bootstrap-server", &bootstrap, action];
    all.extend(args.iter().map(String::as_str));
    run_kafka_tool("kafka-acls", &all).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_refused_by_acls_exits_10_naming_the_acls_it_needs() {
    if !env::require_other_kafka() {
        return;
    }
    // __consumer_offsets exists once a group has committed.
    let topic = unique_name("other-acl");
    other_topic(&topic, &[(0, 5)]).await;
    let group = unique_name("other-acl-g");
    other_commit(&group, &topic, &[(0, 3)].into()).await;

    let user = env::other_user();
    let principal = format!("User:{user}");
    let settings = env::other_sasl_settings(&user, &env::other_password());
    let follower = unique_name("other-acl-follower");
    let follow = ["follow", "--once", "--group-id", &follower];

    // With no ACL on its resources the user may follow (allow.everyone.if.no.acl.found).
    let (_dir, store) = local_store();
    ov_other(&store, Some(&settings), &follow).await.ok();

    // (what is refused, the ACLs, words stderr must hold). A resource with any ACL is closed to
    // the principals that none allows, so a denied Read alone also refuses Describe; with Describe
    // allowed, only Read is refused.
    let topic_words = [
        "__consumer_offsets",
        "DESCRIBE and READ on the topic __consumer_offsets",
        "READ on the follower's group",
        "kafka-acls",
    ];
    let group_words = [
        follower.as_str(),
        "READ on the follower's group",
        "kafka-acls",
    ];
    let cases: [Case; 3] = [
        (
            "Describe on the topic",
            vec![[
                "--deny-principal",
                "Describe",
                "--topic",
                "__consumer_offsets",
            ]],
            &topic_words,
        ),
        (
            "Read on the topic",
            vec![
                [
                    "--allow-principal",
                    "Describe",
                    "--topic",
                    "__consumer_offsets",
                ],
                ["--deny-principal", "Read", "--topic", "__consumer_offsets"],
            ],
            &topic_words,
        ),
        (
            "Describe and Read on the group",
            vec![["--deny-principal", "Read", "--group", &follower]],
            &group_words,
        ),
    ];
    let mut acls = Acls::new();
    for (what, list, words) in cases {
        for [permission, operation, kind, resource] in list {
            acls.add(&[
                permission,
                &principal,
                "--operation",
                operation,
                kind,
                resource,
            ])
            .await;
        }
        let (_dir, store) = local_store();
        let denied = eventually(
            &format!("the follower to be refused {what}"),
            Duration::from_secs(30),
            || async {
                let run = ov_other(&store, Some(&settings), &follow).await;
                if run.code == 0 {
                    Err("exit 0 (the new ACLs not in force yet)".to_string())
                } else {
                    Ok(run)
                }
            },
        )
        .await;
        assert_eq!(
            denied.code, 10,
            "{what}: exit code {}, stderr:\n{}",
            denied.code, denied.stderr
        );
        for w in ["refused access"].iter().chain(words) {
            assert!(
                denied.stderr.contains(w),
                "{what}: {w:?} not in:\n{}",
                denied.stderr
            );
        }
        acls.clear().await;
    }

    // Describe on the group allowed and only Read refused: the follower reads and archives, but
    // cannot commit its group's position. That is a warning naming the ACL, not a failure: the
    // archive, not the group, is where the next run starts.
    acls.add(&[
        "--allow-principal",
        &principal,
        "--operation",
        "Describe",
        "--group",
        &follower,
    ])
    .await;
    acls.add(&[
        "--deny-principal",
        &principal,
        "--operation",
        "Read",
        "--group",
        &follower,
    ])
    .await;
    let (_dir, store) = local_store();
    let warned = eventually(
        "the follower to be refused the commit of its position",
        Duration::from_secs(30),
        || async {
            let run = ov_other(&store, Some(&settings), &follow).await.ok();
            if run.stderr.contains("GroupAuthorizationFailed") {
                Ok(run)
            } else {
                Err(format!("no refused commit in:\n{}", run.stderr))
            }
        },
    )
    .await;
    for w in [
        "committing the follower's position",
        "refused access",
        follower.as_str(),
        "READ on the follower's group",
    ] {
        assert!(
            warned.stderr.contains(w),
            "{w:?} not in:\n{}",
            warned.stderr
        );
    }
    assert!(warned.stdout.contains("segment(s)"), "{}", warned.stdout);
    acls.clear().await;

    // Without the ACLs the same user follows again.
    let (_dir, store) = local_store();
    eventually(
        "the follower to be let in once the ACLs are removed",
        Duration::from_secs(30),
        || async {
            let run = ov_other(&store, Some(&settings), &follow).await;
            if run.code == 0 {
                Ok(())
            } else {
                Err(format!("exit {}: {}", run.code, run.stderr))
            }
        },
    )
    .await;
}
