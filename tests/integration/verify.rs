//! `verify` and failure handling: tampered snapshots, incomplete snapshots, unreachable services,
//! bad selections. Exit codes are the documented ones.

use std::path::{Path, PathBuf};

use crate::support::kafka::{self, Take};
use crate::support::ov::{local_files, local_store, ov, ov_raw, snapshot};
use crate::support::{env, unique_name};

const INTEGRITY: i32 = 5;

/// A real snapshot in a local store: a group with offsets on two partitions.
async fn real_snapshot(format: &str) -> (tempfile::TempDir, String, String) {
    let topic = unique_name("verify");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 3).await;
    kafka::produce(&topic, 1, 3).await;
    let group = unique_name("verify-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2), (1, 1)])).await;
    let (dir, store) = local_store();
    let id = snapshot(
        &store,
        &["--group", &group, "--format", format, "--tag", "deploy=1"],
    )
    .await;
    (dir, store, id)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the store in which `damage` is applied to the file with the given name.
fn damaged_copy(
    store: &str,
    id: &str,
    name: &str,
    damage: impl Fn(&Path),
) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("vault");
    copy_dir(Path::new(store), &copy);
    let copy = copy.to_str().unwrap().to_string();
    let file: PathBuf = local_files(&copy, id)
        .into_iter()
        .find(|f| f.file_name().unwrap() == name)
        .unwrap_or_else(|| panic!("{name} not in snapshot"));
    damage(&file);
    (dir, copy)
}

fn flip_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    std::fs::write(path, bytes).unwrap();
}

fn truncate(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() - 7]).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_catches_flipped_bytes_truncation_and_edited_manifests() {
    if !env::require_kafka() {
        return;
    }
    for format in ["parquet", "json"] {
        let (_dir, store, id) = real_snapshot(format).await;
        let ok = ov(&store, &["verify", &id]).await.ok();
        assert!(
            ok.stdout.contains(&format!("OK      {id}")),
            "{}",
            ok.stdout
        );

        let offsets = format!("offsets.{format}");
        for name in [offsets.as_str(), "connectors.json"] {
            for (what, damage) in [("flipped", flip_byte as fn(&Path)), ("truncated", truncate)] {
                let (_d, copy) = damaged_copy(&store, &id, name, damage);
                let run = ov(&copy, &["verify", &id]).await.expect_code(INTEGRITY);
                assert!(
                    run.stdout.contains(&format!("{name}: SHA-256")),
                    "{format} {what} {name}: {}",
                    run.stdout
                );
                if what == "truncated" {
                    assert!(
                        run.stdout.contains(&format!("{name}: size")),
                        "{}",
                        run.stdout
                    );
                }
                // show and restore read only verified snapshots.
                let shown = ov(&copy, &["show", &id]).await.expect_code(INTEGRITY);
                assert!(
                    shown.stderr.contains("failed verification"),
                    "{}",
                    shown.stderr
                );
            }
        }

        // An edited tag keeps the JSON valid and the files intact; the id gives it away.
        let (_d, copy) = damaged_copy(&store, &id, "manifest.json", |f| {
            let text = std::fs::read_to_string(f).unwrap();
            assert!(text.contains("\"deploy\": \"1\""));
            std::fs::write(f, text.replace("\"deploy\": \"1\"", "\"deploy\": \"2\"")).unwrap();
        });
        let run = ov(&copy, &["verify", &id]).await.expect_code(INTEGRITY);
        assert!(
            run.stdout.contains("does not match the id"),
            "{}",
            run.stdout
        );

        // An edited file hash in the manifest no longer matches the file.
        let (_d, copy) = damaged_copy(&store, &id, "manifest.json", |f| {
            let mut m: serde_json::Value =
                serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            m["files"][0]["sha256"] = "0".repeat(64).into();
            std::fs::write(f, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
        });
        let run = ov(&copy, &["verify", &id]).await.expect_code(INTEGRITY);
        assert!(run.stdout.contains("manifest says 0000"), "{}", run.stdout);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn snapshot_without_manifest_is_listed_incomplete_and_never_used() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store, id) = real_snapshot("parquet").await;
    let manifest = local_files(&store, &id)
        .into_iter()
        .find(|f| f.ends_with("manifest.json"))
        .unwrap();
    std::fs::remove_file(manifest).unwrap();

    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let listed = &listed["snapshots"];
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["complete"], false);
    assert!(listed[0]["problem"]
        .as_str()
        .unwrap()
        .contains("no manifest"));
    let complete = ov(&store, &["list", "--complete-only", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(complete["snapshots"].as_array().map(Vec::len), Some(0));

    let shown = ov(&store, &["show", &id[..12]])
        .await
        .expect_code(INTEGRITY);
    assert!(shown.stderr.contains("incomplete"), "{}", shown.stderr);
    let all = ov(&store, &["verify", "--all"])
        .await
        .expect_code(INTEGRITY);
    assert!(
        all.stdout.contains(&format!("FAILED  {id}")),
        "{}",
        all.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_broker_fails_fast_and_writes_nothing() {
    let (_dir, store) = local_store();
    let started = std::time::Instant::now();
    let run = ov_raw(
        [
            "--bootstrap-server",
            "127.0.0.1:1",
            "--store",
            &store,
            "--timeout",
            "3s",
            "snapshot",
            "--group",
            "any",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .expect_code(3);
    assert!(
        run.stderr.contains("cannot reach Kafka at 127.0.0.1:1"),
        "{}",
        run.stderr
    );
    // Bounded by --timeout; generous margin for process start-up on a loaded machine.
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
    let anything = walk(Path::new(&store));
    assert!(
        !anything.iter().any(|f| f.ends_with("manifest.json")),
        "no snapshot may be written: {anything:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_selections_are_refused_before_any_io() {
    let (_dir, store) = local_store();
    // Nothing selected: usage error, even with an unreachable broker.
    let run = ov_raw(
        ["-b", "127.0.0.1:1", "--store", &store, "snapshot"]
            .map(String::from)
            .to_vec(),
    )
    .await
    .expect_code(2);
    assert!(run.stderr.contains("nothing selected"), "{}", run.stderr);
    // A connector without a Connect URL.
    let run = ov_raw(
        [
            "-b",
            "127.0.0.1:1",
            "--store",
            &store,
            "snapshot",
            "--connector",
            "x",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .expect_code(2);
    assert!(run.stderr.contains("--connect-url"), "{}", run.stderr);
    // A bad regex, a bad tag.
    ov_raw(
        [
            "-b",
            "127.0.0.1:1",
            "--store",
            &store,
            "snapshot",
            "--group-pattern",
            "(",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .expect_code(2);
    ov_raw(
        [
            "-b",
            "127.0.0.1:1",
            "--store",
            &store,
            "snapshot",
            "--group",
            "g",
            "--tag",
            "x",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .expect_code(2);
    // A mistyped local store is not taken for an empty one.
    let missing = format!("{store}-typo");
    let run = ov_raw(["--store", &missing, "list"].map(String::from).to_vec())
        .await
        .expect_code(4);
    assert!(
        run.stderr.contains("store directory not found"),
        "{}",
        run.stderr
    );
    assert!(!std::path::Path::new(&missing).exists());
    // prune without a retention policy removes nothing and says which options are missing.
    let run = ov_raw(["prune".to_string()].to_vec()).await.expect_code(2);
    assert!(run.stderr.contains("--keep-"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_group_is_an_error_unless_allowed() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("missing");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 2).await;
    let group = unique_name("missing-real");
    kafka::consume_and_commit(&group, &topic, Take::Total(2)).await;
    let ghost = unique_name("missing-ghost");
    let (_dir, store) = local_store();

    let run = ov(&store, &["snapshot", "--group", &group, "--group", &ghost])
        .await
        .expect_code(4);
    assert!(
        run.stderr
            .contains(&format!("consumer group not found: {ghost}")),
        "{}",
        run.stderr
    );
    assert!(walk(Path::new(&store)).is_empty(), "nothing written");

    let run = ov(
        &store,
        &[
            "snapshot",
            "--group",
            &group,
            "--group",
            &ghost,
            "--allow-missing",
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    let summary = run.json();
    assert_eq!(summary["summary"]["groups"], 1);
    assert!(summary["warnings"][0].as_str().unwrap().contains(&ghost));
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_connect_and_store_are_named() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let run = ov_raw(
        [
            "-b",
            &env::bootstrap(),
            "--connect-url",
            "http://127.0.0.1:1",
            "--store",
            &store,
            "--timeout",
            "3s",
            "snapshot",
            "--connector",
            "x",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .expect_code(3);
    assert!(
        run.stderr
            .contains("cannot reach Kafka Connect at http://127.0.0.1:1"),
        "{}",
        run.stderr
    );

    let topic = unique_name("nostore");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 1).await;
    let group = unique_name("nostore-g");
    kafka::consume_and_commit(&group, &topic, Take::Total(1)).await;
    let mut args: Vec<String> = [
        "-b",
        &env::bootstrap(),
        "--store",
        "s3://bucket/x",
        "--timeout",
        "3s",
        "snapshot",
        "--group",
        &group,
    ]
    .map(String::from)
    .to_vec();
    args.insert(0, "-q".into());
    let run = crate::support::ov::ov_raw_env(args, &[("AWS_ENDPOINT_URL", "http://127.0.0.1:1")])
        .await
        .expect_code(3);
    assert!(run.stderr.contains("store s3://bucket/x"), "{}", run.stderr);
}
