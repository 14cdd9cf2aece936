//! `guard` against the real services: the snapshot first, the status recorded, the rollback
//! printed and never run.

use std::process::Command;

use super::args;
use crate::support::kafka::{self, Take};
use crate::support::ov::{local_files, local_store, ov, ov_raw};
use crate::support::{env, unique_name};

#[tokio::test(flavor = "multi_thread")]
async fn guard_records_the_status_and_prints_the_rollback() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("guard");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    kafka::produce(&topic, 1, 10).await;
    let group = unique_name("guard-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 4), (1, 6)])).await;
    let (dir, store) = local_store();
    let marker = dir.path().join("seen-id");

    // A failing command: the snapshot is taken first, its id reaches the command, the status is
    // recorded, and the rollback is printed, never run.
    let script = format!(
        "echo \"$OFFSET_VAULT_SNAPSHOT\" > {}; exit 3",
        marker.display()
    );
    let failed = ov(
        &store,
        &[
            "guard", "--group", &group, "--tag", "deploy=7", "--", "sh", "-c", &script,
        ],
    )
    .await
    .expect_code(3);
    let id = std::fs::read_to_string(&marker).unwrap().trim().to_string();
    assert!(!id.is_empty());
    let files = local_files(&store, &id);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.contains(&"guard-exit-3.json".to_string()),
        "{names:?}"
    );
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            files
                .iter()
                .find(|f| f.ends_with("guard-exit-3.json"))
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(record["exit_code"], 3);
    assert_eq!(record["snapshot_id"], id.as_str());
    let dry = failed
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("offset-vault ")
                && l.contains(&format!("restore {id}"))
                && !l.ends_with("--execute")
        })
        .unwrap_or_else(|| panic!("no rollback line in:\n{}", failed.stderr))
        .to_string();
    assert!(
        failed.stderr.contains(&format!("{dry} --execute")),
        "{}",
        failed.stderr
    );

    // Nothing was restored; the group's offsets are what it committed.
    assert_eq!(
        kafka::committed_offsets(&group, &topic).await,
        std::collections::BTreeMap::from([(0, 4), (1, 6)])
    );

    // The sidecar does not disturb list, show or verify.
    ov(&store, &["verify", "--all"]).await.ok();
    ov(&store, &["show", &id]).await.ok();
    let listed = ov(&store, &["list", "--tag", "deploy=7", "--output", "json"])
        .await
        .ok();
    assert!(listed.stdout.contains(&id));

    // The printed dry run works as printed.
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let line = dry.replacen("offset-vault", bin.to_str().unwrap(), 1);
    let out = Command::new("sh").args(["-c", &line]).output().unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A succeeding command: exit 0, recorded, no rollback.
    let ok = ov(&store, &["guard", "--group", &group, "--", "true"])
        .await
        .ok();
    assert!(!ok.stderr.contains("--execute"), "{}", ok.stderr);
    let json = ov(
        &store,
        &["guard", "--group", &group, "--output", "json", "--", "true"],
    )
    .await
    .ok()
    .json();
    let id2 = json["snapshot_id"].as_str().unwrap();
    assert!(local_files(&store, id2)
        .iter()
        .any(|f| f.ends_with("guard-exit-0.json")));
    assert_eq!(json["exit_code"], 0);
    assert!(json["rollback"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn guard_runs_nothing_when_the_snapshot_fails() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let (_s, store) = local_store();
    let run = ov_raw(args(&[
        "--bootstrap-server",
        "127.0.0.1:1",
        "--store",
        &store,
        "--timeout",
        "3s",
        "guard",
        "--group",
        "g",
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        !marker.exists(),
        "the command ran although no snapshot was taken"
    );
}
