//! A restore planned and applied in batches of groups (`--batch-partitions`): every batch is
//! planned before the first offset changes, so a group that blocks in a late batch stops the
//! whole restore; applied in batches, every group is committed, read back and undone exactly.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_store, ov};
use crate::support::{env, kcg, unique_name};

/// Four groups on one single-partition topic, snapshotted at offset 10 and then moved to 50
/// (the last one by `last`, which may keep its consumer running); returns (topic, groups,
/// store, snapshot id).
async fn four_groups_moved_after_a_snapshot(
    prefix: &str,
    store: &str,
) -> (String, Vec<String>, String) {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 100).await;
    // g0 < g1 < g2 < g3 by id, the order of the batches.
    let groups: Vec<String> = (0..4)
        .map(|i| unique_name(&format!("{prefix}-g{i}")))
        .collect();
    for g in &groups {
        kafka::consume_and_commit(g, &topic, Take::per_partition(&[(0, 10)])).await;
    }
    let mut args = vec!["snapshot", "--output", "json"];
    for g in &groups {
        args.extend(["--group", g.as_str()]);
    }
    let id = ov(store, &args).await.ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    for g in &groups[..3] {
        kafka::consume_and_commit(g, &topic, Take::per_partition(&[(0, 40)])).await;
    }
    (topic, groups, id)
}

async fn committed_all(groups: &[String], topic: &str) -> Vec<BTreeMap<i32, i64>> {
    futures::future::join_all(groups.iter().map(|g| kcg::committed(g, topic))).await
}

fn group_ids(plan: &Value) -> Vec<String> {
    plan["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{plan:#}"))
        .iter()
        .map(|g| g["group_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_active_group_in_the_last_batch_stops_the_restore_before_any_change() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let (topic, groups, id) = four_groups_moved_after_a_snapshot("batch-active", &store).await;
    let member = ActiveConsumer::start(&groups[3], &topic, Take::per_partition(&[(0, 40)])).await;
    let before = committed_all(&groups, &topic).await;
    assert_eq!(before, vec![BTreeMap::from([(0, 50)]); 4]);

    // One partition per batch: four batches, the active group alone in the last one.
    let args = [
        "restore",
        &id,
        "--batch-partitions",
        "1",
        "--output",
        "json",
    ];
    let dry = ov(&store, &args).await.expect_code(6).json();
    assert_eq!(group_ids(&dry["plan"]), groups, "{dry:#}");
    assert_eq!(dry["plan"]["summary"]["changes"], 4, "{dry:#}");
    assert_eq!(dry["plan"]["blocked"], true, "{dry:#}");

    let mut execute = args.to_vec();
    execute.push("--execute");
    let run = ov(&store, &execute).await.expect_code(6);
    let out = run.json();
    assert_eq!(out["status"], "not-applied", "{out:#}");
    assert_eq!(out["undo_snapshot"], Value::Null, "{out:#}");
    assert!(
        out["errors"]
            .to_string()
            .contains(&format!("group {} is Stable", groups[3])),
        "{out:#}"
    );
    assert_eq!(
        committed_all(&groups, &topic).await,
        before,
        "nothing changed in any batch"
    );
    // Only the snapshot itself is listed: no undo snapshot was written.
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    assert_eq!(
        listed
            .as_array()
            .map(Vec::len)
            .or_else(|| listed["snapshots"].as_array().map(Vec::len)),
        Some(1),
        "{listed:#}"
    );
    drop(member);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_in_batches_commits_reads_back_and_undoes_every_group() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let (topic, groups, id) = four_groups_moved_after_a_snapshot("batch-apply", &store).await;
    kafka::consume_and_commit(&groups[3], &topic, Take::per_partition(&[(0, 40)])).await;
    let before = committed_all(&groups, &topic).await;
    assert_eq!(before, vec![BTreeMap::from([(0, 50)]); 4]);

    // A plan file made in batches of one partition is applied in batches of three.
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    let plan_path = plan_file.path().to_str().unwrap().to_string();
    ov(
        &store,
        &[
            "restore",
            &id,
            "--batch-partitions",
            "1",
            "--plan-file",
            &plan_path,
        ],
    )
    .await
    .ok();
    let done = ov(
        &store,
        &[
            "restore",
            "--from-plan",
            &plan_path,
            "--batch-partitions",
            "3",
            "--execute",
            "--settle",
            "1s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true, "{done:#}");
    assert_eq!(group_ids(&done["plan"]), groups, "{done:#}");
    let checks: Vec<(String, i64, bool)> = done["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{done:#}"))
        .iter()
        .map(|c| {
            (
                c["group_id"].as_str().unwrap().to_string(),
                c["actual"].as_i64().unwrap(),
                c["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, i64, bool)> = groups.iter().map(|g| (g.clone(), 10, true)).collect();
    assert_eq!(checks, want, "every partition of every batch is read back");
    assert_eq!(
        committed_all(&groups, &topic).await,
        vec![BTreeMap::from([(0, 10)]); 4],
        "kafka-consumer-groups sees the snapshot's offsets in every group"
    );

    // The undo snapshot holds every group; restored in batches of two, all are back at 50.
    let undo = done["undo_snapshot"].as_str().expect("undo id").to_string();
    let table = ov(
        &store,
        &[
            "restore",
            &undo,
            "--batch-partitions",
            "2",
            "--execute",
            "--settle",
            "0s",
        ],
    )
    .await
    .ok();
    for g in &groups {
        assert!(table.stdout.contains(g.as_str()), "{}", table.stdout);
    }
    assert_eq!(committed_all(&groups, &topic).await, before);
}

/// The `(group, change, old, new)` of every partition of a `diff --output json`.
fn changes(diff: &Value) -> Vec<(String, String, Value, Value)> {
    diff["partitions"]
        .as_array()
        .unwrap_or_else(|| panic!("{diff:#}"))
        .iter()
        .map(|p| {
            (
                p["group"].as_str().unwrap().to_string(),
                p["change"].as_str().unwrap().to_string(),
                p.get("old")
                    .or(p.get("offset"))
                    .cloned()
                    .unwrap_or(Value::Null),
                p.get("new")
                    .or(p.get("offset"))
                    .cloned()
                    .unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_live_in_batches_of_one_partition_finds_what_one_batch_finds() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let (topic, groups, id) = four_groups_moved_after_a_snapshot("batch-diff", &store).await;
    // A group the snapshot does not hold, named in the filter: compared with no rows.
    let extra = unique_name("batch-diff-extra");
    kafka::consume_and_commit(&extra, &topic, Take::per_partition(&[(0, 5)])).await;

    let diff = |batch: &'static str, filter: Vec<String>| {
        let store = store.clone();
        let id = id.clone();
        async move {
            let mut args: Vec<String> = ["diff", &id, "--live", "--all", "--output", "json"]
                .map(String::from)
                .to_vec();
            args.extend(["--batch-partitions".into(), batch.into()]);
            args.extend(filter);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ov(&store, &args).await.ok().json()
        }
    };
    let one_batch = diff("10000", vec![]).await;
    let batched = diff("1", vec![]).await;
    let expected: Vec<(String, String, Value, Value)> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            if i < 3 {
                (g.clone(), "changed".into(), 10.into(), 50.into())
            } else {
                (g.clone(), "unchanged".into(), 10.into(), 10.into())
            }
        })
        .collect();
    assert_eq!(changes(&batched), expected, "{batched:#}");
    assert_eq!(changes(&one_batch), expected, "{one_batch:#}");
    assert_eq!(batched["summary"], one_batch["summary"]);

    // Named groups, one of them not in the snapshot, in batches of one: the extra group's
    // commit is new; it sorts among the snapshot's groups by id.
    let named = vec![
        "--group".to_string(),
        groups[1].clone(),
        "--group".to_string(),
        extra.clone(),
    ];
    let filtered = diff("1", named).await;
    let mut want = vec![
        (groups[1].clone(), "changed".into(), 10.into(), 50.into()),
        (extra.clone(), "added".into(), Value::Null, 5.into()),
    ];
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(changes(&filtered), want, "{filtered:#}");
    // The live side agrees with kafka-consumer-groups.
    assert_eq!(
        kcg::committed(&extra, &topic).await,
        BTreeMap::from([(0, 5)])
    );
}
