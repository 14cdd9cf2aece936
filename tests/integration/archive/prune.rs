//! `prune` on a local store and on S3, with real snapshots: exactly the kept ones stay, they
//! verify, and incomplete leftovers (from an interrupted or killed prune) go after their grace
//! period.

use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::group_on_topic;
use crate::support::ov::{local_files, local_store, ov, snapshot};
use crate::support::{env, s3, unique_name};

/// Snapshots of one group, oldest first, with a pause so their ids differ in time.
async fn snapshots(store: &str, group: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(snapshot(store, &["--group", group]).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ids
}

fn listed_ids(run: &crate::support::ov::Run) -> Vec<(String, bool)> {
    run.json()["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["complete"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// The prune checks shared by the local and the S3 store. `remove_manifest` deletes one
/// snapshot's manifest by hand, as an interrupted prune or snapshot would leave it.
async fn prune_round(store: &str, group: &str, remove_manifest: impl AsyncFnOnce(&str)) {
    let ids = snapshots(store, group, 5).await;

    // No policy: refused, nothing deleted.
    let refused = ov(store, &["prune", "--execute"]).await.expect_code(2);
    assert!(refused.stderr.contains("--keep-"), "{}", refused.stderr);

    // The dry run lists all five, keeps the two newest, and deletes nothing.
    let plan = ov(store, &["prune", "--keep-last", "2", "--output", "json"])
        .await
        .ok()
        .json();
    let decisions = plan["plan"]["groups"][0]["decisions"]
        .as_array()
        .unwrap()
        .clone();
    let kept: Vec<&str> = decisions
        .iter()
        .filter(|d| d["keep"] == true)
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(kept, [ids[4].as_str(), ids[3].as_str()], "{plan:#}");
    assert_eq!(decisions.len(), 5);
    assert_eq!(decisions[0]["reasons"][0], "last");
    let listed = ov(store, &["list", "--output", "json"]).await.ok();
    assert_eq!(listed_ids(&listed).len(), 5);

    // An interrupted deletion: the oldest snapshot has lost its manifest.
    remove_manifest(&ids[0]).await;
    let verify = ov(store, &["verify", "--all"]).await.expect_code(5);
    assert!(verify.stdout.contains("no manifest"), "{}", verify.stdout);
    let refused = ov(store, &["show", &ids[0]]).await;
    assert_ne!(refused.code, 0, "an incomplete snapshot must not be shown");
    ov(store, &["restore", &ids[0]]).await.expect_code(5);

    // Young leftovers are kept (they may be a snapshot being written) ...
    let plan = ov(store, &["prune", "--keep-last", "2", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(plan["plan"]["leftovers"][0]["id"], ids[0].as_str());
    assert_eq!(plan["plan"]["leftovers"][0]["action"], "keep-young");

    // ... and removed past the grace period, with the policy's removals.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let done = ov(
        store,
        &[
            "prune",
            "--keep-last",
            "2",
            "--incomplete-older-than",
            "1s",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let mut deleted: Vec<&str> = done["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    deleted.sort();
    assert_eq!(deleted, [ids[0].as_str(), &ids[1], &ids[2]], "{done:#}");

    let listed = ov(store, &["list", "--output", "json"]).await.ok();
    assert_eq!(
        listed_ids(&listed),
        vec![(ids[4].clone(), true), (ids[3].clone(), true)]
    );
    let verify = ov(store, &["verify", "--all"]).await.ok();
    assert!(
        verify.stderr.contains("2 snapshot(s) verified, 0 failed"),
        "{}",
        verify.stderr
    );

    // Pruning again with the same policy changes nothing.
    let again = ov(
        store,
        &["prune", "--keep-last", "2", "--execute", "--output", "json"],
    )
    .await
    .ok()
    .json();
    assert_eq!(again["deleted"].as_array().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_on_a_local_store_keeps_exactly_the_policy_and_cleans_leftovers() {
    if !env::require_kafka() {
        return;
    }
    let (_topic, group) = group_on_topic("ov-prune", &[3]).await;
    let (_dir, store) = local_store();
    let store_for_files = store.clone();
    prune_round(&store, &group, async move |id: &str| {
        let manifest = local_files(&store_for_files, id)
            .into_iter()
            .find(|f| f.ends_with("manifest.json"))
            .expect("a manifest");
        std::fs::remove_file(manifest).unwrap();
    })
    .await;
    // Deleted snapshots leave no folders behind.
    let days = std::fs::read_dir(std::path::Path::new(&store).join("snapshots")).unwrap();
    let folders: usize = days
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum();
    assert_eq!(folders, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_on_s3_keeps_exactly_the_policy_and_cleans_leftovers() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let (_topic, group) = group_on_topic("ov-prune-s3", &[3]).await;
    let prefix = unique_name("prune");
    let store = s3::s3_url(&prefix);
    let s3 = s3::s3_store();
    let p = prefix.clone();
    prune_round(&store, &group, async move |id: &str| {
        let s3 = s3::s3_store();
        let objects: Vec<_> = s3
            .list(Some(&ObjectPath::from(format!("{p}/snapshots"))))
            .try_collect()
            .await
            .unwrap();
        let manifest = objects
            .iter()
            .find(|o| {
                o.location.as_ref().contains(id) && o.location.as_ref().ends_with("manifest.json")
            })
            .expect("a manifest");
        s3.delete(&manifest.location).await.unwrap();
    })
    .await;
    let left: Vec<_> = s3
        .list(Some(&ObjectPath::from(format!("{prefix}/snapshots"))))
        .try_collect()
        .await
        .unwrap();
    // Two snapshots of three files each, nothing else.
    assert_eq!(left.len(), 6, "{left:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_prune_leaves_only_complete_or_incomplete_snapshots() {
    if !env::require_kafka() {
        return;
    }
    let (_topic, group) = group_on_topic("ov-prune-kill", &[2]).await;
    let (_dir, store) = local_store();
    let ids = snapshots(&store, &group, 24).await;

    // Kill a prune that deletes all but one as soon as its first manifest is gone (wherever the
    // kill lands, the invariant below must hold).
    let manifests = |store: &str| -> usize {
        ids.iter()
            .filter(|id| {
                local_files(store, id)
                    .iter()
                    .any(|f| f.ends_with("manifest.json"))
            })
            .count()
    };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("offset-vault"))
        .args(["--store", &store, "prune", "--keep-last", "1", "--execute"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while manifests(&store) == ids.len() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    eprintln!(
        "killed prune: {} of {} manifests left",
        manifests(&store),
        ids.len()
    );

    // Every snapshot still there either verifies or has no manifest at all.
    let verify = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .json();
    for s in verify["snapshots"].as_array().unwrap() {
        let problems: Vec<&str> = s["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert!(
            problems.is_empty() || problems == ["incomplete: no manifest"],
            "{} verifies wrongly: {problems:?}",
            s["id"]
        );
    }
    // The restart finishes the job, leftovers included.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ov(
        &store,
        &[
            "prune",
            "--keep-last",
            "1",
            "--incomplete-older-than",
            "1s",
            "--execute",
        ],
    )
    .await
    .ok();
    let listed = ov(&store, &["list", "--output", "json"]).await.ok();
    assert_eq!(listed_ids(&listed), vec![(ids[23].clone(), true)]);
    ov(&store, &["verify", "--all"]).await.ok();
}

/// Ids of the snapshots `list` shows, sorted.
async fn listed_sorted(store: &str) -> Vec<String> {
    let listed = ov(store, &["list", "--output", "json"]).await.ok();
    let mut ids: Vec<String> = listed_ids(&listed).into_iter().map(|(id, _)| id).collect();
    ids.sort();
    ids
}

/// A policy that keeps nothing of a group never empties it: that group is refused (exit 15, in
/// the dry run too), the others are pruned, and only `--allow-empty-group` empties it.
async fn refusal_round(store: &str, group_a: &str, group_b: &str) {
    let a_prod = snapshot(store, &["--group", group_a, "--tag", "env=prod"]).await;
    let a_plain = snapshot(store, &["--group", group_a]).await;
    let b = snapshots(store, group_b, 2).await;
    let mut all = vec![a_prod.clone(), a_plain.clone(), b[0].clone(), b[1].clone()];
    all.sort();

    // A mistyped tag keeps nothing anywhere: both groups are refused, nothing is deleted.
    for execute in [false, true] {
        let mut args = vec!["prune", "--keep-tag", "env=prd"];
        if execute {
            args.push("--execute");
        }
        let run = ov(store, &args).await.expect_code(15);
        assert_eq!(
            run.stderr.matches("prune refused for group").count(),
            2,
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("--allow-empty-group"), "{}", run.stderr);
        assert_eq!(listed_sorted(store).await, all, "execute {execute}");
    }

    // The right tag keeps one of group a: a is pruned, b (nothing tagged) is refused and whole.
    let run = ov(
        store,
        &[
            "prune",
            "--keep-tag",
            "env=prod",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .expect_code(15);
    let doc = run.json();
    assert_eq!(doc["deleted"], serde_json::json!([a_plain]), "{doc:#}");
    assert_eq!(doc["plan"]["summary"]["refused_groups"], 1, "{doc:#}");
    let refused: Vec<&serde_json::Value> = doc["plan"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["refused"].is_string())
        .collect();
    assert_eq!(refused.len(), 1, "{doc:#}");
    assert!(
        refused[0]["key"]["selection"]
            .as_str()
            .unwrap()
            .contains(group_b),
        "{doc:#}"
    );
    assert!(run.stderr.contains(group_b), "{}", run.stderr);
    let mut left = vec![a_prod.clone(), b[0].clone(), b[1].clone()];
    left.sort();
    assert_eq!(listed_sorted(store).await, left);

    // Emptying a group on purpose: named, and then done.
    ov(
        store,
        &[
            "prune",
            "--keep-tag",
            "env=prod",
            "--allow-empty-group",
            "--execute",
        ],
    )
    .await
    .ok();
    assert_eq!(listed_sorted(store).await, vec![a_prod]);
    ov(store, &["verify", "--all"]).await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_refuses_to_empty_a_group_on_a_local_store() {
    if !env::require_kafka() {
        return;
    }
    let (_t, a) = group_on_topic("ov-prune-refuse-a", &[2]).await;
    let (_t, b) = group_on_topic("ov-prune-refuse-b", &[2]).await;
    let (_dir, store) = local_store();
    refusal_round(&store, &a, &b).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_refuses_to_empty_a_group_on_s3() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let (_t, a) = group_on_topic("ov-prune-refuse-s3a", &[2]).await;
    let (_t, b) = group_on_topic("ov-prune-refuse-s3b", &[2]).await;
    refusal_round(&s3::s3_url(&unique_name("prune-refuse")), &a, &b).await;
}
