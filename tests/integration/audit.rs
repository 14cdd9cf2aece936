//! The audit trail against the real cluster and stores: one event per executed or refused change
//! whose counts are the command's own, a trail that cannot be written stopping a restore before
//! any change (checked with the real `kafka-consumer-groups`), the `audit` listing and its
//! filters, and events produced to and read back from a real Kafka topic.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use object_store::ObjectStore;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Headers;
use rdkafka::{Message, Offset, TopicPartitionList};
use serde_json::{json, Value};

use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_store, ov, snapshot};
use crate::support::{blocking, env, kcg, s3, schema, unique_name};

fn per_partition(n: usize, partitions: i32) -> Take {
    Take::PerPartition((0..partitions).map(|p| (p, n)).collect())
}

/// A topic with 20 records per partition, a group that committed `first` per partition, and a
/// snapshot of it in `store`; then the group moves on to `first + more`.
struct Moved {
    topic: String,
    group: String,
    id: String,
}

async fn snapshotted_then_moved(
    store: &str,
    prefix: &str,
    partitions: i32,
    first: usize,
    more: usize,
) -> Moved {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, partitions).await;
    for p in 0..partitions {
        kafka::produce(&topic, p, 20).await;
    }
    let group = unique_name(&format!("{prefix}-g"));
    kafka::consume_and_commit(&group, &topic, per_partition(first, partitions)).await;
    let id = snapshot(store, &["--group", &group]).await;
    if more > 0 {
        kafka::consume_and_commit(&group, &topic, per_partition(more, partitions)).await;
    }
    Moved { topic, group, id }
}

/// `audit --output json` (validated against its published schema), with `args` added.
async fn audit_events(store: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["audit", "--output", "json"];
    all.extend_from_slice(args);
    let doc = ov(store, &all).await.ok().json();
    schema::validate("audit", &doc);
    doc["events"].as_array().expect("events").clone()
}

/// Per group, what a restore's or reset's own JSON says it changed: partitions whose action is
/// reset or clamped, and the records to reprocess and skip of the partitions it commits.
fn counts_of(outcome: &Value) -> BTreeMap<String, (u64, i64, i64)> {
    let mut out = BTreeMap::new();
    for g in outcome["plan"]["groups"].as_array().expect("plan groups") {
        let parts = g["partitions"].as_array().expect("partitions");
        let commits = |p: &&Value| {
            matches!(
                p["action"].as_str(),
                Some("reset" | "no-change" | "clamped")
            )
        };
        out.insert(
            g["group_id"].as_str().unwrap().to_string(),
            (
                parts
                    .iter()
                    .filter(|p| matches!(p["action"].as_str(), Some("reset" | "clamped")))
                    .count() as u64,
                parts
                    .iter()
                    .filter(commits)
                    .map(|p| p["reprocess"].as_i64().unwrap())
                    .sum(),
                parts
                    .iter()
                    .filter(commits)
                    .map(|p| p["skip"].as_i64().unwrap())
                    .sum(),
            ),
        );
    }
    out
}

/// Per group, what an event says.
fn event_counts(event: &Value) -> BTreeMap<String, (u64, i64, i64)> {
    event["data"]["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            (
                g["group_id"].as_str().unwrap().to_string(),
                (
                    g["partitions_changed"].as_u64().unwrap(),
                    g["records_reprocessed"].as_i64().unwrap(),
                    g["records_skipped"].as_i64().unwrap(),
                ),
            )
        })
        .collect()
}

/// The one event of `events` whose short type is `t`.
fn only<'a>(events: &'a [Value], t: &str) -> &'a Value {
    let of_type: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == format!("dev.offset-vault.{t}"))
        .collect();
    assert_eq!(of_type.len(), 1, "one {t} event expected: {events:#?}");
    of_type[0]
}

/// Checks the CloudEvents attributes every event has.
fn assert_cloudevent(e: &Value) {
    assert_eq!(e["specversion"], "1.0");
    assert_eq!(e["datacontenttype"], "application/json");
    let id = e["id"].as_str().unwrap();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert!(e["source"].as_str().unwrap().starts_with("offset-vault://"));
    chrono::DateTime::parse_from_rfc3339(e["time"].as_str().unwrap()).expect("RFC 3339 time");
    assert!(!e["data"]["who"]["user"].as_str().unwrap().is_empty());
}

/// The relative paths of the files under `dir/sub` (recursively).
fn files_under(dir: &str, sub: &str) -> Vec<String> {
    let root = std::path::Path::new(dir);
    let mut out = Vec::new();
    let mut todo = vec![root.join(sub)];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_str().unwrap().to_string());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executed_restore_records_one_event_with_its_own_counts() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let m = snapshotted_then_moved(&store, "audit-rt", 3, 5, 6).await;
    let before = kcg::committed(&m.group, &m.topic).await;
    assert_eq!(before, BTreeMap::from([(0, 11), (1, 11), (2, 11)]));

    // A dry run records nothing, nor does bad input refused before anything is read.
    ov(&store, &["restore", &m.id]).await.ok();
    ov(&store, &["restore", &m.id, "--execute", "--partition", "0"])
        .await
        .expect_code(2);
    assert!(files_under(&store, "audit").is_empty());
    assert!(audit_events(&store, &[]).await.is_empty());

    let done = ov(&store, &["restore", &m.id, "--execute", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 5), (1, 5), (2, 5)])
    );
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = only(&events, "restore");
    assert_cloudevent(e);
    assert_eq!(e["subject"], m.id.as_str());
    assert_eq!(e["data"]["outcome"], "executed");
    assert_eq!(e["data"]["exit_code"], 0);
    assert_eq!(e["data"]["snapshot_ids"], json!([m.id]));
    assert_eq!(e["data"]["undo_snapshot"], done["undo_snapshot"]);
    let counts = event_counts(e);
    assert_eq!(
        counts,
        counts_of(&done),
        "the event's counts are the restore's own"
    );
    assert_eq!(counts[&m.group], (3, 18, 0), "{counts:?}");
    let command = e["data"]["command"].as_array().unwrap();
    assert!(command.iter().any(|w| w == "--execute"), "{command:?}");

    // Layout: the marker, and the event under its date folder, named by time and id.
    let id = e["id"].as_str().unwrap();
    let files = files_under(&store, "audit");
    let day = &e["time"].as_str().unwrap()[..10];
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        files.contains(&format!("audit/open/{id}.json")),
        "{files:?}"
    );
    let event_file = files
        .iter()
        .find(|f| f.starts_with(&format!("audit/date={day}/")))
        .expect("event file");
    assert!(
        event_file.ends_with(&format!("Z-{id}.json")),
        "{event_file}"
    );
    let stored: Value = serde_json::from_slice(
        &std::fs::read(std::path::Path::new(&store).join(event_file)).unwrap(),
    )
    .unwrap();
    assert_eq!(&stored, e, "the listing shows the event as stored");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blocked_restore_records_one_blocked_event_and_changes_nothing() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let m = snapshotted_then_moved(&store, "audit-blocked", 2, 2, 0).await;
    let member = ActiveConsumer::start(&m.group, &m.topic, per_partition(3, 2)).await;
    let before = kcg::committed(&m.group, &m.topic).await;
    assert_eq!(before, BTreeMap::from([(0, 5), (1, 5)]));

    ov(&store, &["restore", &m.id, "--execute"])
        .await
        .expect_code(6);
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        before,
        "nothing changed"
    );
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = only(&events, "restore");
    assert_eq!(e["data"]["outcome"], "blocked");
    assert_eq!(e["data"]["exit_code"], 6);
    assert_eq!(e["data"]["undo_snapshot"], Value::Null);
    assert!(
        e["data"]["message"].as_str().unwrap().contains("blocked"),
        "{e:#}"
    );
    drop(member);
}

#[tokio::test(flavor = "multi_thread")]
async fn import_and_prune_each_record_one_event() {
    if !env::require_kafka() {
        return;
    }
    let (dir, store) = local_store();
    let topic = unique_name("audit-imp");
    kafka::create_topic(&topic, 2).await;
    for p in 0..2 {
        kafka::produce(&topic, p, 10).await;
    }
    let group = unique_name("audit-imp-g");
    let csv = dir.path().join("offsets.csv");
    std::fs::write(&csv, format!("{topic},0,3\n{topic},1,4\n")).unwrap();
    let imported = ov(
        &store,
        &[
            "import",
            csv.to_str().unwrap(),
            "--group",
            &group,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let import_id = imported["id"].as_str().unwrap().to_string();
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = only(&events, "import");
    assert_eq!(e["subject"], import_id.as_str());
    assert_eq!(e["data"]["outcome"], "executed");
    assert_eq!(e["data"]["groups"][0]["group_id"], group.as_str());

    // Two more snapshots; keep the newest one of each kind: the older snapshot goes.
    kafka::consume_and_commit(&group, &topic, per_partition(1, 2)).await;
    let older = snapshot(&store, &["--group", &group]).await;
    let newer = snapshot(&store, &["--group", &group]).await;
    ov(&store, &["prune", "--keep-last", "1"]).await.ok();
    assert_eq!(
        audit_events(&store, &[]).await.len(),
        1,
        "a dry run records nothing"
    );
    ov(&store, &["prune", "--keep-last", "1", "--execute"])
        .await
        .ok();
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    let p = only(&events, "prune");
    assert_eq!(p["data"]["outcome"], "executed");
    assert_eq!(p["data"]["snapshot_ids"], json!([older]));
    assert_eq!(p["data"]["detail"]["deleted_snapshots"], 1);
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let ids: Vec<&str> = listed["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&newer.as_str()) && !ids.contains(&older.as_str()),
        "{ids:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_trail_stops_a_restore_before_any_change_unless_optional() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let m = snapshotted_then_moved(&store, "audit-ro", 2, 3, 4).await;
    let before = kcg::committed(&m.group, &m.topic).await;
    assert_eq!(before, BTreeMap::from([(0, 7), (1, 7)]));
    // A file where the audit folder should be: no marker can be written, whoever runs this
    // (permissions would not stop root).
    std::fs::write(std::path::Path::new(&store).join("audit"), b"not a folder").unwrap();

    let run = ov(&store, &["restore", &m.id, "--execute"])
        .await
        .expect_code(3);
    assert!(
        run.stderr.contains("audit trail cannot be written")
            && run.stderr.contains("Nothing was changed")
            && run.stderr.contains("--audit optional"),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        before,
        "kafka-consumer-groups sees the offsets unchanged"
    );
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    assert_eq!(
        listed["snapshots"].as_array().unwrap().len(),
        1,
        "no undo snapshot was taken"
    );
    // The JSON output says the same, as one document.
    let json_run = ov(&store, &["restore", &m.id, "--execute", "--output", "json"])
        .await
        .expect_code(3)
        .json();
    assert_eq!(json_run["status"], "not-applied");

    let run = ov(
        &store,
        &["--audit", "optional", "restore", &m.id, "--execute"],
    )
    .await
    .ok();
    assert!(run.stderr.contains("warning"), "{}", run.stderr);
    assert!(
        run.stderr.contains("could not be written"),
        "{}",
        run.stderr
    );
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 3), (1, 3)])
    );
    // The environment variable sets it too.
    let run = crate::support::ov::ov_raw_env(
        crate::support::ov::with_services(&store, "20s", &["restore", &m.id, "--execute"]),
        &[("OFFSET_VAULT_AUDIT", "optional")],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listing_filters_and_reads_only_the_folders_from_since() {
    if !env::require_kafka() {
        return;
    }
    let (dir, store) = local_store();
    let topic = unique_name("audit-list");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 10).await;
    let (g1, g2) = (unique_name("audit-list-a"), unique_name("audit-list-b"));
    for (g, n) in [(&g1, 2), (&g2, 3)] {
        let csv = dir.path().join(format!("{g}.csv"));
        std::fs::write(&csv, format!("{topic},0,{n}\n")).unwrap();
        ov(&store, &["import", csv.to_str().unwrap(), "--group", g])
            .await
            .ok();
    }
    let root = std::path::Path::new(&store);
    // An old day folder holding something unreadable, and a marker whose process never wrote
    // its event.
    let old = root.join("audit/date=2020-01-01");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(
        old.join("20200101T000000.000Z-00000000000000000000000000000001.json"),
        b"{not json",
    )
    .unwrap();
    let dead = "00000000000000000000000000000002";
    let opened = (chrono::Utc::now() - chrono::Duration::minutes(5))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    std::fs::write(
        root.join(format!("audit/open/{dead}.json")),
        serde_json::to_vec(&json!({
            "format_version": "1.0", "id": dead, "type": "dev.offset-vault.reset",
            "source": "offset-vault://elsewhere", "time": opened,
            "who": {"user": "ops", "host": "elsewhere", "key_id": null},
            "command": ["offset-vault", "reset", "--execute"],
        }))
        .unwrap(),
    )
    .unwrap();

    // Everything: the two imports and the unfinished reset; the old folder is read and its
    // object reported.
    let all = ov(&store, &["audit", "--output", "json"]).await.ok();
    assert!(
        all.stderr.contains("20200101T000000.000Z"),
        "{}",
        all.stderr
    );
    let events = all.json()["events"].as_array().unwrap().clone();
    assert_eq!(events.len(), 3, "{events:#?}");
    let unfinished = only(&events, "reset");
    assert_eq!(unfinished["id"], dead);
    assert_eq!(unfinished["data"]["outcome"], "unfinished");
    assert_eq!(unfinished["data"]["exit_code"], Value::Null);

    // --since a day ago: the old folder is not read at all.
    let recent = ov(&store, &["audit", "--since", "1d", "--output", "json"])
        .await
        .ok();
    assert!(!recent.stderr.contains("20200101"), "{}", recent.stderr);
    assert_eq!(recent.json()["events"].as_array().unwrap().len(), 3);

    let one = audit_events(&store, &["--since", "1d", "--group", &g1]).await;
    assert_eq!(one.len(), 1, "{one:#?}");
    assert_eq!(one[0]["data"]["groups"][0]["group_id"], g1.as_str());
    assert_eq!(audit_events(&store, &["--type", "import"]).await.len(), 2);
    assert_eq!(audit_events(&store, &["--type", "reset"]).await.len(), 1);
    assert!(audit_events(&store, &["--type", "prune"]).await.is_empty());
    assert!(audit_events(&store, &["--since", "2099-01-01"])
        .await
        .is_empty());
    assert!(audit_events(&store, &["--until", "2021-01-01"])
        .await
        .is_empty());
    // The table names the unfinished command.
    let table = ov(&store, &["audit"]).await.ok();
    assert!(table.stdout.contains("unfinished"), "{}", table.stdout);
    assert!(table.stdout.contains(&g2), "{}", table.stdout);
    ov(&store, &["audit", "--type", "restor"])
        .await
        .expect_code(2);
}

/// Reads `n` records of `topic` from the beginning: (key, content-type header, value).
async fn read_with_headers(topic: &str, n: usize) -> Vec<(String, String, Value)> {
    let topic = topic.to_string();
    blocking(move || {
        let consumer: BaseConsumer = kafka::kafka_config()
            .set("group.id", unique_name("audit-reader"))
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, 0, Offset::Beginning)
            .unwrap();
        consumer.assign(&tpl).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut out = Vec::new();
        while out.len() < n {
            assert!(
                Instant::now() < deadline,
                "read {} of {n}: {out:?}",
                out.len()
            );
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
                let header = m
                    .headers()
                    .and_then(|h| h.iter().find(|h| h.key == "content-type"))
                    .and_then(|h| h.value)
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_default();
                out.push((
                    String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned(),
                    header,
                    serde_json::from_slice(m.payload().unwrap_or_default()).unwrap(),
                ));
            }
        }
        out
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn events_are_produced_to_kafka_as_they_are_written_and_on_demand() {
    if !env::require_kafka() {
        return;
    }
    let (dir, store) = local_store();
    let data = unique_name("audit-kafka");
    kafka::create_topic(&data, 1).await;
    kafka::produce(&data, 0, 5).await;
    let live = unique_name("audit-live-topic");
    kafka::create_topic(&live, 1).await;
    let group = unique_name("audit-kafka-g");
    let csv = dir.path().join("o.csv");
    std::fs::write(&csv, format!("{data},0,2\n")).unwrap();
    // --audit-topic: the new event is produced as it is written.
    ov(
        &store,
        &[
            "--audit-topic",
            &live,
            "import",
            csv.to_str().unwrap(),
            "--group",
            &group,
        ],
    )
    .await
    .ok();
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1);
    let got = read_with_headers(&live, 1).await;
    assert_eq!(got[0].0, events[0]["id"].as_str().unwrap());
    assert_eq!(got[0].1, "application/cloudevents+json");
    assert_eq!(got[0].2, events[0], "the record is the event as stored");

    // audit --to-kafka: every listed event.
    ov(
        &store,
        &["import", csv.to_str().unwrap(), "--group", &group],
    )
    .await
    .ok();
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 2);
    let siem = unique_name("audit-siem-topic");
    kafka::create_topic(&siem, 1).await;
    let run = ov(&store, &["audit", "--to-kafka", &siem]).await.ok();
    assert!(run.stderr.contains("2 event(s) produced"), "{}", run.stderr);
    let got = read_with_headers(&siem, 2).await;
    let keys: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    let ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(keys, ids);
    for ((_, header, value), e) in got.iter().zip(&events) {
        assert_eq!(header, "application/cloudevents+json");
        assert_eq!(value, e);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executed_restore_on_s3_records_its_event_in_the_bucket() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let prefix = unique_name("audit-s3");
    let store = s3::s3_url(&prefix);
    let m = snapshotted_then_moved(&store, "audit-s3", 2, 4, 3).await;
    let done = ov(&store, &["restore", &m.id, "--execute", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 4), (1, 4)])
    );
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = only(&events, "restore");
    assert_eq!(e["data"]["outcome"], "executed");
    assert_eq!(event_counts(e), counts_of(&done));
    assert_eq!(event_counts(e)[&m.group], (2, 6, 0));
    let id = e["id"].as_str().unwrap().to_string();
    let client = s3::s3_store();
    let keys: Vec<String> = client
        .list(Some(&object_store::path::Path::from(format!(
            "{prefix}/audit"
        ))))
        .map_ok(|o| o.location.to_string())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(
        keys.contains(&format!("{prefix}/audit/open/{id}.json")),
        "{keys:?}"
    );
    assert!(
        keys.iter()
            .any(|k| k.starts_with(&format!("{prefix}/audit/date="))
                && k.ends_with(&format!("Z-{id}.json"))),
        "{keys:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_guard_and_a_refused_restore_each_record_one_event() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let m = snapshotted_then_moved(&store, "audit-reset", 2, 3, 2).await;

    // reset --execute: the counts are the reset's own.
    let done = ov(
        &store,
        &[
            "reset",
            "--group",
            &m.group,
            "--topic",
            &m.topic,
            "--to-earliest",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 0), (1, 0)])
    );
    let events = audit_events(&store, &["--type", "reset"]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e["data"]["outcome"], "executed");
    assert_eq!(event_counts(e), counts_of(&done));
    assert_eq!(event_counts(e)[&m.group], (2, 10, 0));
    assert_eq!(e["data"]["undo_snapshot"], done["pre_reset_snapshot"]);

    // guard: one event with the command's exit status and the snapshot it took.
    let guarded = ov(
        &store,
        &[
            "guard", "--group", &m.group, "--output", "json", "--", "sh", "-c", "exit 3",
        ],
    )
    .await
    .expect_code(3)
    .json();
    let events = audit_events(&store, &["--type", "guard"]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let g = &events[0];
    assert_eq!(g["data"]["exit_code"], 3);
    assert_eq!(g["data"]["outcome"], "failed");
    assert_eq!(g["subject"], guarded["snapshot_id"]);
    assert_eq!(
        g["data"]["detail"]["guarded_command"],
        json!(["sh", "-c", "exit 3"])
    );

    // A snapshot whose file no longer matches its manifest: refused (exit 5), one event.
    let data = crate::support::ov::local_files(&store, &m.id)
        .into_iter()
        .find(|f| !f.ends_with("manifest.json"))
        .unwrap();
    let mut bytes = std::fs::read(&data).unwrap();
    bytes.push(b' ');
    std::fs::write(&data, bytes).unwrap();
    ov(&store, &["restore", &m.id, "--execute"])
        .await
        .expect_code(5);
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 0), (1, 0)]),
        "nothing changed"
    );
    let events = audit_events(&store, &["--type", "restore"]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["data"]["outcome"], "refused");
    assert_eq!(events[0]["data"]["exit_code"], 5);
    assert_eq!(audit_events(&store, &[]).await.len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_from_a_reviewed_plan_names_the_plans_hash() {
    if !env::require_kafka() {
        return;
    }
    let (dir, store) = local_store();
    let m = snapshotted_then_moved(&store, "audit-plan", 1, 2, 3).await;
    let plan = dir.path().join("plan.json");
    let plan_path = plan.to_str().unwrap();
    ov(&store, &["restore", &m.id, "--plan-file", plan_path])
        .await
        .ok();
    assert!(
        files_under(&store, "audit").is_empty(),
        "writing a plan records nothing"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let sha = written["sha256"].as_str().expect("the plan's sha256");
    ov(&store, &["restore", "--from-plan", plan_path, "--execute"])
        .await
        .ok();
    assert_eq!(
        kcg::committed(&m.group, &m.topic).await,
        BTreeMap::from([(0, 2)])
    );
    let events = audit_events(&store, &[]).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e["subject"], sha);
    assert_eq!(e["data"]["plan_sha256"], sha);
    assert_eq!(e["data"]["snapshot_ids"], json!([m.id]));
    assert_eq!(e["data"]["outcome"], "executed");
    assert_eq!(event_counts(e)[&m.group], (1, 3, 0));
}
