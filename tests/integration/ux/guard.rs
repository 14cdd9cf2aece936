//! `guard` against the real services: the snapshot first, the status and what moved recorded,
//! the rollback printed (when offsets moved) and never run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::args;
use crate::support::kafka::{self, Take};
use crate::support::kcg;
use crate::support::ov::{local_files, local_store, ov, ov_raw, Run};
use crate::support::{env, unique_name};

/// A topic of 3 partitions with 60 records each, and a group that committed 10, 20 and 30.
async fn group_at_10_20_30(prefix: &str) -> (String, String) {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 3).await;
    for p in 0..3 {
        kafka::produce(&topic, p, 60).await;
    }
    let group = unique_name(&format!("{prefix}-g"));
    kafka::consume_and_commit(
        &group,
        &topic,
        Take::per_partition(&[(0, 10), (1, 20), (2, 30)]),
    )
    .await;
    (topic, group)
}

/// Writes a `kafka-consumer-groups --from-file` CSV (topic,partition,offset) and returns its path.
fn offsets_file(dir: &Path, name: &str, topic: &str, offsets: &[(i32, i64)]) -> PathBuf {
    let path = dir.join(name);
    let text: String = offsets
        .iter()
        .map(|(p, o)| format!("{topic},{p},{o}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// A shell command that moves `group`'s offsets to those of `file` with the real
/// `kafka-consumer-groups --reset-offsets --execute` (its table to stderr, so that guard's JSON
/// stays alone on stdout), then exits with `code`; 99 if the tool failed.
fn reset_then_exit(group: &str, file: &Path, code: i32) -> String {
    format!(
        "'{}' --bootstrap-server '{}' --group '{group}' --reset-offsets --from-file '{}' --execute >&2 || exit 99; exit {code}",
        env::kafka_tools_dir().join("kafka-consumer-groups").display(),
        env::bootstrap(),
        file.display()
    )
}

/// Resets `group` with the real tool, outside guard.
async fn reset_with_kcg(group: &str, file: &Path) {
    let out = kcg::kcg(&[
        "--group",
        group,
        "--reset-offsets",
        "--from-file",
        file.to_str().unwrap(),
        "--execute",
    ])
    .await;
    assert!(
        out.success && !out.stdout.contains("Error"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}

/// The record `guard` wrote next to snapshot `id`, by file name.
fn record(store: &str, id: &str, name: &str) -> Value {
    let files = local_files(store, id);
    let file = files
        .iter()
        .find(|f| f.ends_with(name))
        .unwrap_or_else(|| panic!("no {name} in {files:?}"));
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// The dry-run rollback line guard printed for `id`, after checking the `--execute` one follows.
fn rollback_line(run: &Run, id: &str) -> String {
    let dry = run
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("offset-vault ")
                && l.contains(&format!("restore {id}"))
                && !l.ends_with("--execute")
        })
        .unwrap_or_else(|| panic!("no rollback line in:\n{}", run.stderr))
        .to_string();
    assert!(
        run.stderr.contains(&format!("{dry} --execute")),
        "{}",
        run.stderr
    );
    dry
}

/// The moved partitions of a comparison as (partition, old, new, delta).
fn moved(comparison: &Value) -> Vec<(i64, Value, Value, Value)> {
    comparison["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["partition"].as_i64().unwrap(),
                p["old"].clone(),
                p["new"].clone(),
                p["delta"].clone(),
            )
        })
        .collect()
}

/// The 10,20,30 -> 55,5,30 reset as a comparison reports it.
fn reset_moves() -> Vec<(i64, Value, Value, Value)> {
    vec![
        (0, 10.into(), 55.into(), 45.into()),
        (1, 20.into(), 5.into(), (-15).into()),
    ]
}

/// The reset of issue 17: a failing command that moved two partitions (10,20,30 -> 55,5,30)
/// with the real kafka-consumer-groups. guard lists them with their old and new offsets, as the
/// tool itself reports them, and prints the rollback; never "not touched".
#[tokio::test(flavor = "multi_thread")]
async fn guard_reports_the_offsets_a_failing_command_moved_and_prints_the_rollback() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = group_at_10_20_30("guard-moved").await;
    let (dir, store) = local_store();
    let moved_to = offsets_file(dir.path(), "moved.csv", &topic, &[(0, 55), (1, 5), (2, 30)]);
    let back = offsets_file(dir.path(), "back.csv", &topic, &[(0, 10), (1, 20), (2, 30)]);
    let script = reset_then_exit(&group, &moved_to, 3);

    let failed = ov(
        &store,
        &["guard", "--group", &group, "--", "sh", "-c", &script],
    )
    .await
    .expect_code(3);
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 55), (1, 5), (2, 30)]),
        "the command moved the offsets"
    );
    assert!(!failed.stderr.contains("not touched"), "{}", failed.stderr);
    for line in [
        "offsets moved since the snapshot: 2 partition(s) of 1 group(s) moved (15 record(s) to be processed again, moved backward; 45 record(s) skipped, moved forward)".to_string(),
        format!("{group} {topic}[0]: 10 -> 55 (+45, skipped)"),
        format!("{group} {topic}[1]: 20 -> 5 (-15, processed again)"),
    ] {
        assert!(failed.stderr.contains(&line), "{line}\nnot in:\n{}", failed.stderr);
    }
    assert!(
        !failed.stderr.contains(&format!("{topic}[2]")),
        "{}",
        failed.stderr
    );
    let id = failed
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("snapshot ")?.split_whitespace().next())
        .unwrap()
        .to_string();
    let dry = rollback_line(&failed, &id);
    let recorded = record(&store, &id, "guard-exit-3.json");
    assert_eq!(recorded["format_version"], "1.1");
    assert_eq!(recorded["exit_code"], 3);
    assert_eq!(recorded["snapshot_id"], id.as_str());
    assert_eq!(recorded["comparison"]["checked"], true);
    assert_eq!(moved(&recorded["comparison"]), reset_moves());

    // The printed dry run works as printed, and plans the way back to 10, 20, 30.
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let line = dry.replacen("offset-vault", bin.to_str().unwrap(), 1);
    let out = Command::new("sh").args(["-c", &line]).output().unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The same with --output json: the comparison is part of guard's document, and its new
    // offsets are those the real tool describes.
    reset_with_kcg(&group, &back).await;
    let run = ov(
        &store,
        &[
            "guard", "--group", &group, "--output", "json", "--", "sh", "-c", &script,
        ],
    )
    .await
    .expect_code(3);
    let json = run.json();
    let c = &json["comparison"];
    assert_eq!(c["checked"], true, "{json:#}");
    assert!(c["error"].is_null(), "{json:#}");
    assert_eq!(moved(c), reset_moves(), "{json:#}");
    assert_eq!(
        (
            &c["partitions_compared"],
            &c["partitions_moved"],
            &c["groups_moved"],
            &c["partitions_not_listed"]
        ),
        (&3.into(), &2.into(), &1.into(), &0.into()),
        "{json:#}"
    );
    assert_eq!(
        (&c["records_reprocessed"], &c["records_skipped"]),
        (&15.into(), &45.into())
    );
    assert_eq!(c["groups"], serde_json::json!([group]));
    let described = kcg::committed(&group, &topic).await;
    for p in c["partitions"].as_array().unwrap() {
        assert_eq!(p["topic"], topic.as_str());
        let partition = p["partition"].as_i64().unwrap() as i32;
        assert_eq!(p["new"].as_i64(), described.get(&partition).copied(), "{p}");
    }
    assert_eq!(
        json["rollback"].as_array().map(Vec::len),
        Some(2),
        "{json:#}"
    );
    let id2 = json["snapshot_id"].as_str().unwrap();
    assert_eq!(record(&store, id2, "guard-exit-3.json")["comparison"], *c);
}

/// A failing command that moves nothing: guard says it checked and nothing moved, and prints no
/// rollback; the snapshot stays, the status is recorded with the comparison.
#[tokio::test(flavor = "multi_thread")]
async fn guard_says_nothing_moved_when_a_failing_command_moved_nothing() {
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

    // The snapshot is taken first, its id reaches the command, the status is recorded.
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
    let want = format!(
        "the command failed (exit code 3); checked 2 partition(s) of 1 group(s) against the snapshot: nothing moved, so there is nothing to roll back; snapshot {id} stays as the rollback point"
    );
    assert!(failed.stderr.contains(&want), "{}", failed.stderr);
    assert!(!failed.stderr.contains("--execute"), "{}", failed.stderr);
    let recorded = record(&store, &id, "guard-exit-3.json");
    assert_eq!(recorded["exit_code"], 3);
    assert_eq!(recorded["snapshot_id"], id.as_str());
    assert_eq!(recorded["format_version"], "1.1");
    let c = &recorded["comparison"];
    assert_eq!(
        (&c["checked"], &c["partitions_moved"]),
        (&true.into(), &0.into())
    );
    assert_eq!(c["partitions_compared"], 2);

    // Nothing was restored; the group's offsets are what it committed.
    assert_eq!(
        kafka::committed_offsets(&group, &topic).await,
        BTreeMap::from([(0, 4), (1, 6)])
    );

    // The sidecar does not disturb list, show or verify.
    ov(&store, &["verify", "--all"]).await.ok();
    ov(&store, &["show", &id]).await.ok();
    let listed = ov(&store, &["list", "--tag", "deploy=7", "--output", "json"])
        .await
        .ok();
    assert!(listed.stdout.contains(&id));

    // With --output json: checked, nothing moved, no rollback.
    let json = ov(
        &store,
        &[
            "guard", "--group", &group, "--output", "json", "--", "false",
        ],
    )
    .await
    .expect_code(1)
    .json();
    assert_eq!(json["comparison"]["checked"], true, "{json:#}");
    assert_eq!(json["comparison"]["partitions_moved"], 0, "{json:#}");
    assert!(json["rollback"].is_null(), "{json:#}");

    // A succeeding command: exit 0, recorded, no rollback.
    let ok = ov(&store, &["guard", "--group", &group, "--", "true"])
        .await
        .ok();
    assert!(!ok.stderr.contains("--execute"), "{}", ok.stderr);
    assert!(ok.stderr.contains("nothing moved"), "{}", ok.stderr);
    let json = ov(
        &store,
        &["guard", "--group", &group, "--output", "json", "--", "true"],
    )
    .await
    .ok()
    .json();
    let id2 = json["snapshot_id"].as_str().unwrap();
    assert_eq!(
        record(&store, id2, "guard-exit-0.json")["comparison"]["partitions_moved"],
        0
    );
    assert_eq!(json["exit_code"], 0);
    assert!(json["rollback"].is_null());
}

/// A command that succeeds after moving offsets: guard's summary line says what moved, and the
/// record carries it; no rollback is printed.
#[tokio::test(flavor = "multi_thread")]
async fn guard_summarizes_what_a_succeeding_command_moved() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = group_at_10_20_30("guard-ok").await;
    let (dir, store) = local_store();
    let moved_to = offsets_file(dir.path(), "moved.csv", &topic, &[(0, 55), (1, 5), (2, 30)]);
    let run = ov(
        &store,
        &[
            "guard",
            "--group",
            &group,
            "--",
            "sh",
            "-c",
            &reset_then_exit(&group, &moved_to, 0),
        ],
    )
    .await
    .ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 55), (1, 5), (2, 30)])
    );
    let summary = run
        .stderr
        .lines()
        .find(|l| l.starts_with("the command succeeded;"))
        .unwrap_or_else(|| panic!("no summary in:\n{}", run.stderr));
    assert!(
        summary.contains("offsets moved since the snapshot: 2 partition(s) of 1 group(s) moved (15 record(s) to be processed again, moved backward; 45 record(s) skipped, moved forward)"),
        "{summary}"
    );
    // (The command's own line holds `--execute`: the rollback's words are looked for.)
    assert!(!run.stderr.contains("To roll back"), "{}", run.stderr);
    let id = summary
        .split("snapshot ")
        .last()
        .and_then(|s| s.split_whitespace().next())
        .unwrap();
    let recorded = record(&store, id, "guard-exit-0.json");
    assert_eq!(recorded["comparison"]["partitions_moved"], 2);
    assert_eq!(moved(&recorded["comparison"]), reset_moves());
}

/// When the comparison cannot be made (here: the command removed the snapshot's offsets file),
/// guard says so plainly, assumes offsets may have moved, and prints the rollback.
#[tokio::test(flavor = "multi_thread")]
async fn guard_says_when_it_could_not_check_and_prints_the_rollback() {
    if !env::require_kafka() {
        return;
    }
    let (_topic, group) = group_at_10_20_30("guard-unchecked").await;
    let (_dir, store) = local_store();
    let script = format!("rm '{store}'/snapshots/*/\"$OFFSET_VAULT_SNAPSHOT\"/offsets.*; exit 3");
    let failed = ov(
        &store,
        &["guard", "--group", &group, "--", "sh", "-c", &script],
    )
    .await
    .expect_code(3);
    assert!(
        failed
            .stderr
            .contains("the command failed (exit code 3); could not check whether offsets moved: "),
        "{}",
        failed.stderr
    );
    assert!(
        failed.stderr.contains("; assume they may have."),
        "{}",
        failed.stderr
    );
    assert!(!failed.stderr.contains("not touched"), "{}", failed.stderr);
    assert!(
        !failed.stderr.contains("nothing moved"),
        "{}",
        failed.stderr
    );
    let id = failed
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("snapshot ")?.split_whitespace().next())
        .unwrap()
        .to_string();
    rollback_line(&failed, &id);
    let c = &record(&store, &id, "guard-exit-3.json")["comparison"];
    assert_eq!(c["checked"], false, "{c:#}");
    assert!(c["error"].as_str().is_some_and(|e| !e.is_empty()), "{c:#}");
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
