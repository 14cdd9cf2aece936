//! `reset` on the group types that take fewer scenarios, and reviewed plans: a share group reset
//! as the real `kafka-share-groups` would reset it (and refused the scenarios it cannot take), an
//! empty streams group reset with the plan saying what is not reset, and a plan file applied
//! exactly, or refused when the reset would now plan otherwise, when a committed offset it was
//! computed from moved, when it is handed to `restore`, or when it was edited.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{fixture, planned};
use crate::group_types::share_group_with_progress;
use crate::support::groups::{assert_tool_ok, parse_new_offsets};
use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov, Run};
use crate::support::streams::{self, AppMode};
use crate::support::{env, kcg, share, unique_name};

/// Everything a run printed, for checking its words.
fn said(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

/// How many snapshots the store lists (an executed reset writes its pre-reset one first).
async fn snapshot_count(store: &str) -> usize {
    let listed = ov(store, &["list", "--output", "json"]).await.ok().json();
    listed["snapshots"]
        .as_array()
        .unwrap_or_else(|| panic!("no snapshots in {listed:#}"))
        .len()
}

/// A tool's `--reset-offsets ... --dry-run` table as partition -> new offset.
fn new_offsets(stdout: &str) -> BTreeMap<i32, i64> {
    parse_new_offsets(stdout)
        .into_iter()
        .map(|r| (r.partition, r.offset))
        .collect()
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_share_group_is_reset_to_earliest_as_kafka_share_groups_would_and_refuses_shift_by() {
    if !env::require_kafka() {
        return;
    }
    let (topic, group) = share_group_with_progress("reset-share").await;
    let (_dir, store) = local_store();
    let before = share::start_offsets(&group, &topic).await;
    assert_eq!(before.get(&0), Some(&4), "{before:?}");

    // A share group has start offsets, not committed positions: nothing to shift from.
    let refused = ov(
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--topic",
            &topic,
            "--shift-by",
            "1",
            "--execute",
        ],
    )
    .await
    .expect_code(2);
    let text = said(&refused);
    assert!(
        text.contains(&format!("--shift-by cannot be used on share group {group}"))
            && text
                .contains("--to-earliest, --to-latest, --to-datetime/--by-duration or --to-offset"),
        "{text}"
    );
    assert_eq!(share::start_offsets(&group, &topic).await, before);
    assert_eq!(snapshot_count(&store).await, 0, "no pre-reset snapshot");

    // The dry run plans what kafka-share-groups would set.
    let doc = ov(
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(doc["status"], "dry-run", "{doc:#}");
    let ksg_args = [
        "--reset-offsets",
        "--to-earliest",
        "--dry-run",
        "--group",
        group.as_str(),
        "--topic",
        topic.as_str(),
    ];
    let theirs = share::ksg(&ksg_args).await;
    assert_tool_ok(
        &format!("kafka-share-groups {}", ksg_args.join(" ")),
        &theirs,
    );
    let want = new_offsets(&theirs.stdout);
    assert_eq!(want, BTreeMap::from([(0, 0), (1, 0)]), "{}", theirs.stdout);
    assert_eq!(planned(&doc), want, "{doc:#}");
    assert_eq!(
        share::start_offsets(&group, &topic).await,
        before,
        "a dry run changes nothing"
    );

    // Executed, the tool shows the planned start offsets.
    let done = super::applied(
        &store,
        &[
            "reset",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
        ],
    )
    .await;
    assert_eq!(planned(&done), want, "{done:#}");
    assert_eq!(share::start_offsets(&group, &topic).await, want);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_streams_group_is_reset_and_the_plan_warns_that_state_stores_are_not() {
    if !env::require_kafka() {
        return;
    }
    let input = unique_name("reset-streams-in");
    let output = unique_name("reset-streams-out");
    kafka::create_topic(&input, 3).await;
    kafka::create_topic(&output, 1).await;
    for (partition, n) in [(0, 3), (1, 4), (2, 5)] {
        kafka::produce(&input, partition, n).await;
    }
    let app_id = unique_name("reset-streams-app");
    let run = streams::run_app(
        &app_id,
        &input,
        &output,
        12,
        Duration::from_secs(90),
        AppMode::PassThrough,
    )
    .await
    .ok();
    assert_eq!(run.processed, Some(12), "{}", run.stderr);
    assert_eq!(
        streams::group_state(&app_id).await.as_deref(),
        Some("Empty")
    );
    let committed = BTreeMap::from([(0, 3), (1, 4), (2, 5)]);
    assert_eq!(streams::committed(&app_id, &input).await, committed);

    let (_dir, store) = local_store();
    let args = [
        "reset",
        "--group",
        &app_id,
        "--topic",
        &input,
        "--to-earliest",
        "--output",
        "json",
    ];
    let doc = ov(&store, &args).await.ok().json();
    assert_eq!(doc["status"], "dry-run", "{doc:#}");
    let group = &doc["plan"]["groups"][0];
    assert_eq!(group["group_id"], app_id.as_str(), "{doc:#}");
    let warnings = group["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings: {doc:#}"));
    assert!(
        warnings.iter().any(|w| w.as_str().is_some_and(|w| w
            .contains(&format!("streams group {app_id}"))
            && w.contains("state stores"))),
        "{doc:#}"
    );
    let want = BTreeMap::from([(0, 0), (1, 0), (2, 0)]);
    assert_eq!(planned(&doc), want, "{doc:#}");
    assert_eq!(streams::committed(&app_id, &input).await, committed);

    let mut execute = args.to_vec();
    execute.push("--execute");
    let done = ov(&store, &execute).await.ok().json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true, "{done:#}");
    assert_eq!(
        streams::committed(&app_id, &input).await,
        want,
        "kafka-streams-groups shows the reset's offsets"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reviewed_plan_file_is_applied_exactly_or_refused_when_it_no_longer_holds() {
    if !env::require_kafka() {
        return;
    }
    let f = fixture("reset-plan").await;
    let (dir, store) = local_store();
    let original = BTreeMap::from([(0, 5), (1, 10), (2, 15)]);

    // Reviewed, then applied: exactly the file's targets.
    let to_offset = dir.path().join("to-offset.json");
    let reviewed = ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--all-topics",
            "--to-offset",
            "3",
            "--plan-file",
            &path_arg(&to_offset),
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    assert_eq!(reviewed.json()["status"], "dry-run");
    let three = BTreeMap::from([(0, 3), (1, 3), (2, 3)]);
    assert_eq!(planned(&reviewed.json()), three);
    assert_eq!(kcg::committed(&f.group, &f.topic).await, original);
    let done = super::applied(&store, &["reset", "--from-plan", &path_arg(&to_offset)]).await;
    assert_eq!(planned(&done), three, "{done:#}");
    assert_eq!(kcg::committed(&f.group, &f.topic).await, three);
    assert_eq!(snapshot_count(&store).await, 1, "its pre-reset snapshot");

    // A --to-latest plan, then more records: the reset would now go further than reviewed.
    let to_latest = dir.path().join("to-latest.json");
    ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--all-topics",
            "--to-latest",
            "--plan-file",
            &path_arg(&to_latest),
        ],
    )
    .await
    .ok();
    kafka::produce(&f.topic, 1, 5).await;
    let refused = ov(
        &store,
        &["reset", "--from-plan", &path_arg(&to_latest), "--execute"],
    )
    .await
    .expect_code(11);
    let text = said(&refused);
    assert!(
        text.contains("the plan changed since it was reviewed")
            && text.contains(&format!(
                "{} {}[1]: target was 20, is now 25",
                f.group, f.topic
            )),
        "{text}"
    );
    assert_eq!(kcg::committed(&f.group, &f.topic).await, three);
    assert_eq!(snapshot_count(&store).await, 1, "no new pre-reset snapshot");

    // A reset's plan is not a restore's.
    let wrong_command = ov(
        &store,
        &["restore", "--from-plan", &path_arg(&to_offset), "--execute"],
    )
    .await
    .expect_code(2);
    let text = said(&wrong_command);
    assert!(
        text.contains("is the plan of a reset, not of a restore")
            && text.contains(&format!(
                "offset-vault reset --from-plan {}",
                path_arg(&to_offset)
            )),
        "{text}"
    );
    assert_eq!(kcg::committed(&f.group, &f.topic).await, three);

    // A plan edited by hand (one target changed) fails its checksum.
    let edited = dir.path().join("edited.json");
    ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--all-topics",
            "--to-offset",
            "6",
            "--plan-file",
            &path_arg(&edited),
        ],
    )
    .await
    .ok();
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&edited).unwrap()).unwrap();
    let partitions = doc["plan"]["groups"][0]["partitions"]
        .as_array_mut()
        .unwrap_or_else(|| panic!("no partitions in the plan file"));
    let p1 = partitions
        .iter_mut()
        .find(|p| p["partition"] == 1)
        .expect("partition 1 in the plan file");
    assert_eq!(p1["target"], 6, "{p1:#}");
    p1["target"] = 7.into();
    std::fs::write(&edited, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let tampered = ov(
        &store,
        &["reset", "--from-plan", &path_arg(&edited), "--execute"],
    )
    .await
    .expect_code(5);
    let text = said(&tampered);
    assert!(
        text.contains("it was changed after it was written"),
        "{text}"
    );
    assert_eq!(kcg::committed(&f.group, &f.topic).await, three);
    assert_eq!(snapshot_count(&store).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shift_by_plan_is_refused_when_the_committed_offset_it_shifts_from_moved() {
    if !env::require_kafka() {
        return;
    }
    let f = fixture("reset-plan-shift").await;
    let (dir, store) = local_store();
    let plan = dir.path().join("shift.json");
    let reviewed = ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--all-topics",
            "--shift-by",
            "-1",
            "--plan-file",
            &path_arg(&plan),
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(
        planned(&reviewed),
        BTreeMap::from([(0, 4), (1, 9), (2, 14)]),
        "{reviewed:#}"
    );

    // The group goes on consuming after the review: partition 1 moves from 10 to 12.
    let moved = kafka::consume_and_commit(&f.group, &f.topic, Take::per_partition(&[(1, 2)])).await;
    assert_eq!(moved, BTreeMap::from([(1, 12)]));
    let now = BTreeMap::from([(0, 5), (1, 12), (2, 15)]);
    assert_eq!(kcg::committed(&f.group, &f.topic).await, now);

    let refused = ov(
        &store,
        &["reset", "--from-plan", &path_arg(&plan), "--execute"],
    )
    .await
    .expect_code(11);
    let text = said(&refused);
    assert!(
        text.contains(&format!(
            "{} {}[1]: the committed offset moved from 10 to 12 after the plan was made",
            f.group, f.topic
        )),
        "{text}"
    );
    assert_eq!(kcg::committed(&f.group, &f.topic).await, now);
    assert_eq!(snapshot_count(&store).await, 0, "no pre-reset snapshot");
}

/// `--refuse-moved`: a `--to-offset` plan (absolute targets, which a moved offset leaves as
/// they were) is refused when the group committed after the review, and applied without it.
#[tokio::test(flavor = "multi_thread")]
async fn refuse_moved_refuses_an_absolute_plan_whose_group_committed_since_the_review() {
    if !env::require_kafka() {
        return;
    }
    let f = fixture("reset-plan-moved").await;
    let (dir, store) = local_store();
    let plan = dir.path().join("to-offset.json");
    ov(
        &store,
        &[
            "reset",
            "--group",
            &f.group,
            "--all-topics",
            "--to-offset",
            "3",
            "--plan-file",
            &path_arg(&plan),
        ],
    )
    .await
    .ok();
    let moved = kafka::consume_and_commit(&f.group, &f.topic, Take::per_partition(&[(2, 1)])).await;
    assert_eq!(moved, BTreeMap::from([(2, 16)]));
    let now = BTreeMap::from([(0, 5), (1, 10), (2, 16)]);
    assert_eq!(kcg::committed(&f.group, &f.topic).await, now);

    let refused = ov(
        &store,
        &[
            "reset",
            "--from-plan",
            &path_arg(&plan),
            "--execute",
            "--refuse-moved",
        ],
    )
    .await
    .expect_code(11);
    let text = said(&refused);
    assert!(
        text.contains(&format!(
            "{} {}[2]: the committed offset moved from 15 to 16 after the plan was made (--refuse-moved)",
            f.group, f.topic
        )),
        "{text}"
    );
    assert_eq!(kcg::committed(&f.group, &f.topic).await, now);
    assert_eq!(snapshot_count(&store).await, 0, "no pre-reset snapshot");

    // Without it the moved offset is reported and the reviewed targets are applied.
    let done = super::applied(&store, &["reset", "--from-plan", &path_arg(&plan)]).await;
    let three = BTreeMap::from([(0, 3), (1, 3), (2, 3)]);
    assert_eq!(planned(&done), three, "{done:#}");
    assert_eq!(kcg::committed(&f.group, &f.topic).await, three);
}
