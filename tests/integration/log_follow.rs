//! The continuous follower (`offset-vault follow`) under faults, against the real broker: a
//! SIGTERM seals what it holds and exits 0, a SIGKILL mid-segment (and one between a segment's
//! data file and its index entry) loses and duplicates nothing once it runs again, two followers
//! of one group split the partitions without writing a range twice, a broker restart under it
//! loses nothing (it goes on, or stops saying why and its next run completes the chain), and a
//! position the log no longer holds is recorded as a gap that `restore --at` refuses. Each test
//! reads what the archive holds: `history`, the index manifests and `verify --all`.
//!
//! The broker restart stops the broker the whole suite shares, so it runs in the fault-injection
//! binary (`tests/faults`), alone.

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::support::kafka::{self};
use crate::support::ov::{local_store, ov, ov_raw_env, with_services};
use crate::support::poll::eventually;
use crate::support::{env, unique_name};

use crate::support::follower::*;

// ---------------------------------------------------------------------------------------------
// The tests

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_seals_the_commits_the_follower_holds_and_exits_0() {
    if !env::require_kafka() {
        return;
    }
    let topic = topic_with("follow-term", 30).await;
    let group = unique_name("follow-term-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-term-f");
    // An hour, and a memory bound far above what the shared broker's commit log holds:
    // nothing is sealed on time or early, only by the SIGTERM.
    let mut f = Follower::start(
        &store,
        &follower,
        &["--segment-interval", "1h", "--max-buffered-bytes", "1GiB"],
        &[],
    );
    assert_eq!(
        f.reading(p).await,
        0,
        "a first run reads from the log start"
    );
    f.read_past(p, log_end(p).await).await;

    for n in [2, 3, 4] {
        commit(&group, &topic, n).await;
    }
    let end = log_end(p).await;
    f.read_past(p, end).await;
    assert_eq!(chain(&store, p), vec![], "sealed before the SIGTERM");

    let exited = f.terminate().await;
    assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    assert!(!exited.stderr.contains("error:"), "{}", exited.stderr);
    assert!(
        exited.stdout.contains("segment(s)") && exited.stdout.contains("record(s) archived"),
        "{exited:#?}"
    );

    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
    assert_eq!(h["source_partition"], p, "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    // One segment of everything read, sealed at the stop; the group's position and the head
    // are where it ends.
    let all = assert_contiguous(&store);
    let mine = &all[&p];
    assert_eq!(mine.len(), 1, "{mine:#?}");
    assert!(mine[0].gap.is_none() && mine[0].next >= end, "{mine:#?}");
    assert_eq!(
        kafka::committed_offsets(&follower, OFFSETS).await.get(&p),
        Some(&mine[0].next)
    );
    let head: Value = serde_json::from_slice(
        &std::fs::read(Path::new(&store).join(format!("log/heads/partition={p:02}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(head["next"], mine[0].next, "{head:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_killed_mid_segment_and_between_its_two_writes_resumes_with_nothing_lost_or_twice(
) {
    if !env::require_kafka() {
        return;
    }
    let topic = topic_with("follow-kill", 40).await;
    let group = unique_name("follow-kill-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-kill-f");

    commit(&group, &topic, 2).await;
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let archived_to = chain(&store, p).last().expect("a segment").next;

    // Continuous, holding two more commits unsealed when it is killed.
    // An hour, and a memory bound far above what the shared broker's commit log holds:
    // nothing is sealed on time or early, only by the SIGTERM.
    let mut f = Follower::start(
        &store,
        &follower,
        &["--segment-interval", "1h", "--max-buffered-bytes", "1GiB"],
        &[],
    );
    assert_eq!(
        f.reading(p).await,
        archived_to,
        "starts where the archive ends"
    );
    commit(&group, &topic, 3).await;
    commit(&group, &topic, 4).await;
    f.read_past(p, log_end(p).await).await;
    assert_eq!(chain(&store, p).last().unwrap().next, archived_to);
    let killed = f.kill().await;
    assert_eq!(killed.status.signal(), Some(libc::SIGKILL), "{killed:#?}");
    assert_eq!(
        chain(&store, p).last().unwrap().next,
        archived_to,
        "nothing was sealed"
    );

    commit(&group, &topic, 5).await;
    // Killed again, this time between a segment's data file and its index entry.
    let rendezvous = tempfile::tempdir().unwrap();
    let point = "follow-before-segment-manifest";
    let failpoints = format!(
        "{point}={}",
        format_args!("return({})", rendezvous.path().display())
    );
    let f = Follower::start(
        &store,
        &follower,
        &["--once"],
        &[("FAILPOINTS", &failpoints)],
    );
    let reached = rendezvous.path().join(format!("{point}.reached"));
    eventually(
        "the follower to stop before an index entry",
        Duration::from_secs(60),
        || async { reached.exists().then_some(()) },
    )
    .await;
    let before = orphans(&store);
    assert_eq!(before.len(), 1, "{before:?}");
    f.kill().await;

    let again = ov(
        &store,
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
    .ok()
    .json();
    assert_eq!(again["gaps"], serde_json::json!([]), "{again:#}");
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9, 14]), "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    let all = assert_contiguous(&store);
    assert!(all[&p].len() >= 2, "{:#?}", all[&p]);
    // The killed run's data file is never read: it is still the only one no manifest names,
    // and verify notes it (and nothing else) without failing.
    assert_eq!(orphans(&store), before);
    let orphan = before[0]
        .strip_prefix(&store)
        .unwrap()
        .to_str()
        .unwrap()
        .trim_start_matches('/')
        .to_string();
    let notes = verified(&store).await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].0.as_str(), &notes[0].2),
        ("orphan", &orphan),
        "{notes:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_followers_of_one_group_split_the_partitions_and_archive_each_range_once() {
    if !env::require_kafka() {
        return;
    }
    let topic = topic_with("follow-two", 40).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-two-f");
    let partitions = kafka::partition_count(OFFSETS).await as i32;
    let interval = ["--segment-interval", "2s"];
    let mut a = Follower::start(&store, &follower, &interval, &[]);
    a.wait_for(
        "the first follower to read every partition",
        Duration::from_secs(40),
        |s| (assignments(s).len() == partitions as usize).then_some(()),
    )
    .await;
    let mut b = Follower::start(&store, &follower, &interval, &[]);
    let (mine_a, mine_b) = eventually(
        "the two followers to split the partitions",
        Duration::from_secs(60),
        || {
            let (sa, sb) = (a.stderr(), b.stderr());
            async move {
                let (pa, pb): (BTreeSet<i32>, BTreeSet<i32>) = (
                    assignments(&sa).into_keys().collect(),
                    assignments(&sb).into_keys().collect(),
                );
                let union: BTreeSet<i32> = pa.union(&pb).copied().collect();
                if !pa.is_empty()
                    && !pb.is_empty()
                    && pa.is_disjoint(&pb)
                    && union.len() == partitions as usize
                {
                    Ok((pa, pb))
                } else {
                    Err(format!("{pa:?} and {pb:?}"))
                }
            }
        },
    )
    .await;
    assert!(a.alive() && b.alive());

    // A group whose commits each follower archives.
    let mut groups = Vec::new();
    for mine in [&mine_a, &mine_b] {
        loop {
            let g = unique_name("follow-two-g");
            if mine.contains(&offsets_partition(&g).await) {
                groups.push(g);
                break;
            }
        }
    }
    for n in [2, 3, 4] {
        for g in &groups {
            commit(g, &topic, n).await;
        }
    }
    for g in &groups {
        archived(
            &store,
            g,
            &commits(&topic, &[2, 5, 9]),
            &mut [&mut a, &mut b],
        )
        .await;
    }
    assert!(a.alive() && b.alive(), "{}\n{}", a.stderr(), b.stderr());

    for f in [a, b] {
        let exited = f.terminate().await;
        assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    }
    for g in &groups {
        let (got, h) = history(&store, g).await;
        assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
        assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    }
    let all = assert_contiguous(&store);
    assert_eq!(all.len(), partitions as usize, "{all:#?}");
    assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
    // A follower that lost a race withdrew its data file: nothing is left over.
    assert_eq!(verified(&store).await, vec![]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_position_the_log_no_longer_holds_is_a_recorded_gap_that_restore_at_refuses() {
    if !env::require_kafka() {
        return;
    }
    let topic = topic_with("follow-gap", 40).await;
    let group = unique_name("follow-gap-g");
    let p = offsets_partition(&group).await;

    // The broker refuses DeleteRecords on its internal topics (INVALID_TOPIC_EXCEPTION), even
    // a request that deletes nothing, and retention never runs on a compacted topic: the test
    // moves the log start the follower sees with a failpoint instead. If a broker ever takes
    // the request, delete the records here.
    let refused = {
        use rdkafka::admin::{AdminClient, AdminOptions};
        let admin: AdminClient<rdkafka::client::DefaultClientContext> =
            kafka::kafka_config().create().expect("admin client");
        let mut tpl = rdkafka::TopicPartitionList::new();
        tpl.add_partition_offset(OFFSETS, p, rdkafka::Offset::Offset(0))
            .unwrap();
        match admin.delete_records(&tpl, &AdminOptions::new()).await {
            Err(e) => format!("{e}"),
            Ok(r) => r
                .elements()
                .iter()
                .filter_map(|e| e.error().err().map(|e| e.to_string()))
                .collect::<Vec<_>>()
                .join("; "),
        }
    };
    assert!(
        refused.to_lowercase().contains("invalid topic"),
        "DeleteRecords on {OFFSETS} was not refused ({refused:?})"
    );

    let (_dir, store) = local_store();
    let follower = unique_name("follow-gap-f");
    commit(&group, &topic, 2).await;
    let first = ov(
        &store,
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
    .ok()
    .json();
    assert_eq!(first["gaps"], serde_json::json!([]), "{first:#}");
    let s0 = first["base_snapshot"]
        .as_str()
        .expect("a base snapshot")
        .to_string();
    let archived_to = chain(&store, p).last().unwrap().next;

    // 5 is committed, and then the log "no longer holds" anything before its end: lost.
    commit(&group, &topic, 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let in_gap = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log_start = log_end(p).await;
    assert!(log_start > archived_to);
    commit(&group, &topic, 4).await; // 9, after the new log start

    let failpoints = format!("follow-log-start=return({p}:{log_start})");
    let second = ov_raw_env(
        with_services(
            &store,
            "20s",
            &[
                "follow",
                "--once",
                "--group-id",
                &follower,
                "--output",
                "json",
            ],
        ),
        &[("FAILPOINTS", &failpoints)],
    )
    .await
    .ok()
    .json();
    let gap_line =
        format!("{OFFSETS}[{p}] offsets {archived_to} to {log_start}: the log no longer held");
    assert_eq!(second["gaps"].as_array().unwrap().len(), 1, "{second:#}");
    assert!(
        second["gaps"][0].as_str().unwrap().starts_with(&gap_line),
        "{second:#}"
    );
    assert!(
        second["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(&gap_line)),
        "{second:#}"
    );
    let s1 = second["base_snapshot"]
        .as_str()
        .expect("a base snapshot after the gap")
        .to_string();
    assert_ne!(s1, s0);
    // The gap is an audit event too (the archive's first reads of partitions are none).
    let audit = ov(
        &store,
        &["audit", "--type", "follow.gap", "--output", "json"],
    )
    .await
    .ok()
    .json();
    let events = audit["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{audit:#}");
    let detail = &events[0]["data"]["detail"];
    assert_eq!(
        (
            &detail["partition"],
            &detail["from_offset"],
            &detail["to_offset"]
        ),
        (
            &serde_json::json!(p),
            &serde_json::json!(archived_to),
            &serde_json::json!(log_start)
        ),
        "{audit:#}"
    );
    assert_eq!(events[0]["subject"], format!("{OFFSETS}[{p}]"));

    // The chain: what was archived, the gap (no data file), what came after.
    let all = assert_contiguous(&store);
    let mine = &all[&p];
    let gaps: Vec<&Entry> = mine.iter().filter(|e| e.gap.is_some()).collect();
    assert_eq!(gaps.len(), 1, "{mine:#?}");
    assert_eq!(
        (gaps[0].start, gaps[0].next),
        (archived_to, log_start),
        "{mine:#?}"
    );
    assert!(
        gaps[0].gap.as_deref().unwrap().contains("no longer held"),
        "{mine:#?}"
    );
    assert!(
        all.iter()
            .all(|(q, c)| *q == p || c.iter().all(|e| e.gap.is_none())),
        "{all:#?}"
    );
    let notes = verified(&store).await;
    assert_eq!(
        notes,
        vec![(
            "recorded-gap".to_string(),
            Some(i64::from(p)),
            format!("log/index/partition={p:02}/{archived_to:020}.json")
        )],
        "{notes:?}"
    );
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 9]), "{h:#}");
    let listed = serde_json::to_string(&h["discontinuities"]).unwrap();
    assert!(
        listed.contains(&format!("\"from\":{archived_to}"))
            && listed.contains(&format!("\"to\":{log_start}")),
        "{h:#}"
    );

    // An instant inside the gap needs the lost commit: refused, naming the gap. Dry run.
    let refused = ov(&store, &["restore", "--at", &in_gap, "--group", &group])
        .await
        .expect_code(7);
    assert!(
        refused.stderr.contains(&format!(
            "offsets {archived_to} to {log_start} were not archived"
        )),
        "{}",
        refused.stderr
    );
    // Just after the base snapshot taken with the gap: accepted, 9.
    let shown = crate::support::ov::show(&store, &s1).await;
    let created: DateTime<Utc> = shown["manifest"]["created_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no created_at: {shown:#}"))
        .parse()
        .unwrap();
    let after = text(created + chrono::Duration::milliseconds(1));
    let plan = ov(
        &store,
        &[
            "restore", "--at", &after, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    let target = &plan["plan"]["groups"][0]["partitions"][0];
    assert_eq!(
        (target["topic"].as_str(), target["target"].as_i64()),
        (Some(topic.as_str()), Some(9)),
        "{plan:#}"
    );
}
