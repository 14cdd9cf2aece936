//! Table-driven tests of the plan computation.

use super::*;
use crate::kafka::Watermarks;
use crate::snapshot::model::{GroupType, PartitionOffset};
use serde_json::json;

fn target(topic: &str, partition: i32, offset: i64) -> PartitionOffset {
    PartitionOffset {
        leader_epoch: Some(3),
        metadata: Some("m".into()),
        ..PartitionOffset::new(topic, partition, offset)
    }
}

fn group(id: &str, parts: Vec<PartitionOffset>) -> GroupSnapshot {
    GroupSnapshot {
        group_id: id.into(),
        state: GroupState::Empty,
        protocol_type: "consumer".into(),
        group_type: GroupType::Classic,
        members: vec![],
        connector: None,
        configs: Default::default(),
        partitions: parts,
    }
}

/// A live view with topic `t` of 2 partitions, range [10, 100] each, and group `g` at `current`.
fn live(state: &str, current: &[(i32, i64)]) -> LiveView {
    let mut v = LiveView::default();
    v.topics.insert("t".into(), 2);
    for p in 0..2 {
        v.watermarks.insert(
            ("t".into(), p),
            Watermarks {
                log_start: Some(10),
                log_end: Some(100),
            },
        );
    }
    v.groups.insert(
        "g".into(),
        LiveGroup {
            share_lag: Default::default(),
            state: GroupState::from_name(state),
            members: if state == "Stable" {
                vec![Member {
                    member_id: "m1".into(),
                    client_id: "billing".into(),
                    host: "/10.0.0.7".into(),
                }]
            } else {
                vec![]
            },
            offsets: current
                .iter()
                .map(|(p, o)| (("t".into(), *p), *o))
                .collect(),
        },
    );
    v
}

struct Case {
    name: &'static str,
    current: Option<i64>,
    target: i64,
    policy: OutOfRange,
    action: Action,
    committed: Option<i64>,
    reprocess: i64,
    skip: i64,
}

#[test]
fn partition_cases() {
    let cases = [
        Case {
            name: "no current offset",
            current: None,
            target: 40,
            policy: OutOfRange::Fail,
            action: Action::Reset,
            committed: Some(40),
            reprocess: 0,
            skip: 0,
        },
        Case {
            name: "moved back",
            current: Some(70),
            target: 40,
            policy: OutOfRange::Fail,
            action: Action::Reset,
            committed: Some(40),
            reprocess: 30,
            skip: 0,
        },
        Case {
            name: "moved forward",
            current: Some(20),
            target: 40,
            policy: OutOfRange::Fail,
            action: Action::Reset,
            committed: Some(40),
            reprocess: 0,
            skip: 20,
        },
        Case {
            name: "unchanged",
            current: Some(40),
            target: 40,
            policy: OutOfRange::Fail,
            action: Action::NoChange,
            committed: Some(40),
            reprocess: 0,
            skip: 0,
        },
        Case {
            name: "at log end is in range",
            current: Some(40),
            target: 100,
            policy: OutOfRange::Fail,
            action: Action::Reset,
            committed: Some(100),
            reprocess: 0,
            skip: 60,
        },
        Case {
            name: "below log start fails",
            current: Some(40),
            target: 5,
            policy: OutOfRange::Fail,
            action: Action::OutOfRange,
            committed: Some(5),
            reprocess: 0,
            skip: 0,
        },
        Case {
            name: "below log start clamps",
            current: Some(40),
            target: 5,
            policy: OutOfRange::Clamp,
            action: Action::Clamped,
            committed: Some(10),
            reprocess: 30,
            skip: 0,
        },
        Case {
            name: "after log end clamps",
            current: Some(40),
            target: 150,
            policy: OutOfRange::Clamp,
            action: Action::Clamped,
            committed: Some(100),
            reprocess: 0,
            skip: 60,
        },
    ];
    for c in cases {
        let current: Vec<(i32, i64)> = c.current.map(|o| (0, o)).into_iter().collect();
        let plan = build(
            "id",
            &[group("g", vec![target("t", 0, c.target)])],
            &[],
            &live("Empty", &current),
            &PlanOptions {
                on_out_of_range: c.policy,
                ..Default::default()
            },
        );
        let p = &plan.groups[0].partitions[0];
        assert_eq!(p.action, c.action, "{}", c.name);
        assert_eq!(p.target, c.committed, "{}", c.name);
        assert_eq!((p.reprocess, p.skip), (c.reprocess, c.skip), "{}", c.name);
        assert_eq!(plan.applicable, !c.action.fails(), "{}", c.name);
        assert_eq!(plan.problems.is_empty(), !c.action.fails(), "{}", c.name);
        // The leader epoch only travels with the snapshot's own offset.
        let expect_epoch = if c.action == Action::Clamped {
            None
        } else {
            Some(3)
        };
        assert_eq!(p.leader_epoch, expect_epoch, "{}", c.name);
    }
}

#[test]
fn missing_topics_and_partitions_fail_unless_skipped() {
    let snap = [group(
        "g",
        vec![target("t", 5, 40), target("gone", 0, 1), target("t", 1, 50)],
    )];
    let plan = build(
        "id",
        &snap,
        &[],
        &live("Empty", &[]),
        &PlanOptions::default(),
    );
    let actions: Vec<Action> = plan.groups[0].partitions.iter().map(|p| p.action).collect();
    assert_eq!(
        actions,
        vec![
            Action::TopicMissing,
            Action::Reset,
            Action::PartitionMissing
        ]
    );
    assert!(!plan.applicable);
    assert_eq!(plan.summary.failing, 2);
    let skipping = PlanOptions {
        skip_missing: true,
        ..Default::default()
    };
    let plan = build("id", &snap, &[], &live("Empty", &[]), &skipping);
    assert!(plan.applicable);
    assert_eq!(plan.summary.changes, 1);
}

#[test]
fn partitions_the_snapshot_lacks_are_listed_and_kept() {
    let plan = build(
        "id",
        &[group("g", vec![target("t", 0, 40)])],
        &[],
        &live("Empty", &[(0, 60), (1, 77)]),
        &PlanOptions::default(),
    );
    let kept = &plan.groups[0].partitions[1];
    assert_eq!(kept.action, Action::NotInSnapshot);
    assert_eq!((kept.current, kept.target), (Some(77), None));
    assert!(plan.applicable);
    assert_eq!(plan.summary.reprocess, 20);
}

#[test]
fn active_group_blocks_and_names_its_members() {
    let plan = build(
        "id",
        &[group("g", vec![target("t", 0, 40)])],
        &[],
        &live("Stable", &[(0, 60)]),
        &PlanOptions::default(),
    );
    assert!(plan.applicable, "the targets are fine");
    assert!(plan.blocked);
    let why = plan.groups[0].blocked.as_deref().unwrap();
    assert!(why.contains("billing on 10.0.0.7"), "{why}");
}

#[test]
fn time_translation_replaces_the_target() {
    let mut view = live("Empty", &[(0, 60)]);
    view.by_timestamp = true;
    view.translated
        .insert(("g".into(), ("t".into(), 0)), (33, "by time".into()));
    let snap = [group("g", vec![target("t", 0, 40), target("t", 1, 50)])];
    let plan = build("id", &snap, &[], &view, &PlanOptions::default());
    let p = &plan.groups[0].partitions[0];
    assert_eq!(
        (p.snapshot_offset, p.target, p.leader_epoch),
        (Some(40), Some(33), None)
    );
    // A partition without a recorded timestamp keeps its offset, and the plan says so.
    let q = &plan.groups[0].partitions[1];
    assert_eq!(q.target, Some(50));
    assert!(
        q.note.as_deref().unwrap().contains("no record timestamp"),
        "{q:?}"
    );
}

fn connector(kind: &str, offsets: Option<Vec<serde_json::Value>>) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: "c".into(),
        connect_url: "http://w:8083".into(),
        connector_type: kind.into(),
        group_id: (kind == "sink").then(|| "connect-c".into()),
        config: Default::default(),
        redacted_keys: vec![],
        state: "RUNNING".into(),
        tasks: vec![],
        offsets,
        offsets_unavailable: None,
    }
}

#[test]
fn connectors_need_stopping_and_offsets() {
    let target = json!({"partition": {"filename": "/in"}, "offset": {"position": 10}});
    let other = json!({"partition": {"filename": "/other"}, "offset": {"position": 3}});
    let mut view = LiveView::default();
    view.connectors.insert(
        "c".into(),
        Some(LiveConnector {
            connect_url: "http://w:8083".into(),
            state: "RUNNING".into(),
            offsets: Some(vec![
                json!({"partition": {"filename": "/in"}, "offset": {"position": 99}}),
                other.clone(),
            ]),
        }),
    );
    let src = [connector("source", Some(vec![target.clone()]))];
    let plan = build("id", &[], &src, &view, &PlanOptions::default());
    assert!(plan.blocked && plan.applicable);
    assert!(plan.connectors[0]
        .blocked
        .as_deref()
        .unwrap()
        .contains("--stop-connectors"));
    let stopping = PlanOptions {
        stop_connectors: true,
        ..Default::default()
    };
    let plan = build("id", &[], &src, &view, &stopping);
    assert!(!plan.blocked && plan.applicable);
    let c = &plan.connectors[0];
    assert!(c.stop_and_resume);
    assert_eq!(c.offsets[0].current, Some(json!({"position": 99})));
    assert!(c.offsets[0].changes);
    assert_eq!(c.not_in_snapshot, vec![other["partition"].clone()]);

    // No offsets in the snapshot, or no connector now: not applicable.
    let plan = build("id", &[], &[connector("source", None)], &view, &stopping);
    assert!(!plan.applicable);
    view.connectors.insert("c".into(), None);
    let plan = build("id", &[], &src, &view, &stopping);
    assert!(!plan.applicable);
    assert!(
        plan.problems[0].contains("does not exist"),
        "{:?}",
        plan.problems
    );
}

#[test]
fn a_stopped_sink_connector_unblocks_its_active_looking_group() {
    let mut view = live("Stable", &[(0, 60)]);
    view.connectors.insert(
        "c".into(),
        Some(LiveConnector {
            connect_url: "u".into(),
            state: "RUNNING".into(),
            offsets: None,
        }),
    );
    let mut g = group("g", vec![target("t", 0, 40)]);
    g.connector = Some("c".into());
    let blocked = build(
        "id",
        std::slice::from_ref(&g),
        &[],
        &view,
        &PlanOptions::default(),
    );
    assert!(blocked.groups[0]
        .blocked
        .as_deref()
        .unwrap()
        .contains("--connector c --stop-connectors"));
    let stopping = PlanOptions {
        stop_connectors: true,
        ..Default::default()
    };
    let plan = build("id", &[g], &[connector("sink", None)], &view, &stopping);
    assert!(!plan.blocked, "{:?}", plan.problems);
    assert_eq!(plan.connectors[0].method, "group");
}

#[test]
fn only_a_group_known_to_be_safe_may_change() {
    // (live state, blocked?, what the reason must say)
    let cases = [
        (GroupState::Empty, false, ""),
        (GroupState::Dead, false, ""),
        (GroupState::NotFound, false, ""),
        (GroupState::Stable, true, "is Stable"),
        (GroupState::Reconciling, true, "is Reconciling"),
        (
            GroupState::Unknown("describing the group failed: timed out".into()),
            true,
            "state is unknown (describing the group failed: timed out)",
        ),
        (
            GroupState::Unrecognized("Shrinking".into()),
            true,
            "not one this version knows",
        ),
    ];
    for (state, blocked, why) in cases {
        let mut view = live("Empty", &[(0, 60)]);
        view.groups.get_mut("g").unwrap().state = state.clone();
        let plan = build(
            "id",
            &[group("g", vec![target("t", 0, 40)])],
            &[],
            &view,
            &PlanOptions::default(),
        );
        assert_eq!(plan.blocked, blocked, "{state:?}");
        let reason = plan.groups[0].blocked.clone().unwrap_or_default();
        assert!(reason.contains(why), "{state:?}: {reason}");
    }
}

#[test]
fn a_group_the_coordinator_did_not_describe_is_unknown_and_blocks() {
    let mut view = live("Empty", &[(0, 60)]);
    view.groups.clear();
    let plan = build(
        "id",
        &[group("g", vec![target("t", 0, 40)])],
        &[],
        &view,
        &PlanOptions::default(),
    );
    assert!(plan.blocked);
    assert!(matches!(plan.groups[0].state, GroupState::Unknown(_)));
}

#[test]
fn an_unknown_log_range_fails_the_plan() {
    let mut view = live("Empty", &[(0, 60)]);
    view.watermarks.insert(
        ("t".into(), 0),
        Watermarks {
            log_start: Some(10),
            log_end: None,
        },
    );
    let plan = build(
        "id",
        &[group("g", vec![target("t", 0, 40)])],
        &[],
        &view,
        &PlanOptions {
            on_out_of_range: OutOfRange::Clamp,
            ..Default::default()
        },
    );
    assert_eq!(plan.groups[0].partitions[0].action, Action::RangeUnknown);
    assert!(!plan.applicable);
}

#[test]
fn a_recreated_topic_fails_unless_translated_or_allowed() {
    let mut old = target("t", 0, 40);
    old.topic_id = Some("old-id".into());
    let snap = [group("g", vec![old])];
    // (live topic id, translated by time?, allowed?, expected action)
    let cases = [
        (Some("old-id"), false, false, Action::Reset),
        (None, false, false, Action::Reset),
        (Some("new-id"), false, false, Action::Recreated),
        (Some("new-id"), true, false, Action::Reset),
        (Some("new-id"), false, true, Action::Reset),
    ];
    for (live_id, by_time, allow, want) in cases {
        let mut view = live("Empty", &[(0, 60)]);
        if let Some(id) = live_id {
            view.topic_ids.insert("t".into(), id.into());
        }
        if by_time {
            view.by_timestamp = true;
            view.translated
                .insert(("g".into(), ("t".into(), 0)), (33, "by time".into()));
        }
        let opts = PlanOptions {
            allow_recreated_topics: allow,
            ..Default::default()
        };
        let plan = build("id", &snap, &[], &view, &opts);
        let p = &plan.groups[0].partitions[0];
        assert_eq!(
            p.action, want,
            "{live_id:?} {by_time} {allow}: {:?}",
            p.note
        );
        assert_eq!(plan.applicable, want != Action::Recreated);
        if live_id == Some("new-id") {
            assert!(
                p.note
                    .as_deref()
                    .unwrap_or_default()
                    .contains("created again")
                    || by_time
            );
            assert_eq!(
                p.leader_epoch, None,
                "the old epoch means nothing on a new topic"
            );
        }
    }
}

#[test]
fn a_deleted_connector_is_recreated_only_with_every_redacted_secret() {
    let mut snap = connector(
        "source",
        Some(vec![json!({"partition": {"f": 1}, "offset": {"p": 7}})]),
    );
    snap.redacted_keys = vec!["db.password".into()];
    let view = live("Empty", &[]); // the connector does not exist now
    let supplied = |keys: &[&str]| PlanOptions {
        recreate: Some(Recreate {
            supplied_keys: keys.iter().map(|k| k.to_string()).collect(),
            leave_stopped: false,
            ..Default::default()
        }),
        ..Default::default()
    };
    // (options, recreated?, words in the problem)
    let cases = [
        (PlanOptions::default(), false, "--recreate-connectors"),
        (supplied(&[]), false, "db.password"),
        (supplied(&["other"]), false, "db.password"),
        (supplied(&["db.password"]), true, ""),
        // The snapshot holds the secret encrypted: the problem says how to use it.
        (
            PlanOptions {
                recreate: Some(Recreate {
                    encrypted_secrets: Some(2),
                    ..Default::default()
                }),
                ..Default::default()
            },
            false,
            "db.password; the snapshot holds them encrypted (connectors.secrets.age, to 2 recipient(s)): pass --identity FILE",
        ),
    ];
    for (opts, recreated, words) in cases {
        let plan = build("id", &[], std::slice::from_ref(&snap), &view, &opts);
        let c = &plan.connectors[0];
        assert_eq!(c.recreate, recreated, "{opts:?}");
        assert_eq!(plan.applicable, recreated, "{opts:?}");
        let problem = c.problem.clone().unwrap_or_default();
        assert!(problem.contains(words), "{opts:?}: {problem}");
        if recreated {
            assert_eq!(c.offsets.len(), 1);
            assert!(c.offsets[0].changes && c.offsets[0].current.is_none());
        }
    }
}

#[test]
fn a_share_group_plan_counts_redelivery_from_log_end_and_the_brokers_lag() {
    // Snapshot: start 40 on both partitions, log-end 100, lag 10 (50 acknowledged above 40).
    let mut parts = vec![target("t", 0, 40), target("t", 1, 40)];
    for p in &mut parts {
        p.log_end_offset = Some(100);
        p.lag = Some(10);
    }
    let mut g = group("g", parts);
    g.group_type = GroupType::Share;
    // Now: partition 0 moved to 90 with 4 not yet acknowledged; partition 1 unchanged at 40.
    let mut v = live("Empty", &[(0, 90), (1, 40)]);
    let lg = v.groups.get_mut("g").unwrap();
    lg.share_lag = [(("t".to_string(), 0), 4), (("t".to_string(), 1), 10)].into();
    let plan = build("S", &[g.clone()], &[], &v, &PlanOptions::default());
    let gp = &plan.groups[0];
    assert_eq!(gp.group_type, GroupType::Share);
    // (100 - 40) - 4: everything from 40 up is delivered again except the 4 never acknowledged.
    assert_eq!(gp.partitions[0].reprocess, 56);
    // Unchanged: not written, so its acknowledgements stay and nothing is delivered again.
    assert_eq!(gp.partitions[1].action, Action::NoChange);
    assert_eq!(gp.partitions[1].reprocess, 0);
    assert_eq!(plan.summary.reprocess, 56);
    let w = gp.warnings.join(" ");
    assert!(w.contains("56 record(s)"), "{w}");
    assert!(
        w.contains("the 100 record(s) acknowledged above the start offsets"),
        "{w}"
    );

    // A classic group with the same numbers counts only the move back, and has no warning.
    g.group_type = GroupType::Classic;
    let plan = build("S", &[g.clone()], &[], &v, &PlanOptions::default());
    assert_eq!(plan.groups[0].partitions[0].reprocess, 50);
    assert!(plan.groups[0].warnings.is_empty());

    // A streams group: offsets as for consumers, and a warning about its state.
    g.group_type = GroupType::Streams;
    let plan = build("S", &[g], &[], &v, &PlanOptions::default());
    assert_eq!(plan.groups[0].partitions[0].reprocess, 50);
    assert!(plan.groups[0].warnings[0].contains("state stores"));
}

/// A partition of topic `t` planned from `current` to `target` (log 0 to 100), for the tests of
/// plans and of their review.
pub(crate) fn part(partition: i32, current: i64, target: i64, action: Action) -> PartitionPlan {
    PartitionPlan {
        topic: "t".into(),
        partition,
        current: Some(current),
        snapshot_offset: Some(target),
        target: Some(target),
        log_start: Some(0),
        log_end: Some(100),
        reprocess: (current - target).max(0),
        skip: (target - current).max(0),
        action,
        note: None,
        leader_epoch: None,
        metadata: None,
        source_topic: None,
        translation: None,
    }
}

/// What an audit event records of each group: the plan's own sums.
#[test]
fn group_changes_are_the_plans_own_sums() {
    let group = |id: &str, partitions| GroupPlan {
        group_id: id.into(),
        group_type: Default::default(),
        state: GroupState::Empty,
        members: vec![],
        connector: None,
        blocked: None,
        warnings: vec![],
        partitions,
    };
    let plan = Plan {
        snapshot_id: "S".into(),
        groups: vec![
            group(
                "a",
                vec![
                    part(0, 11, 5, Action::Reset),
                    part(0, 2, 9, Action::Reset),
                    part(0, 4, 4, Action::NoChange),
                    part(0, 50, 40, Action::Clamped),
                ],
            ),
            group("b", vec![part(0, 1, 1, Action::NoChange)]),
        ],
        connectors: vec![],
        summary: PlanSummary::default(),
        applicable: true,
        blocked: false,
        problems: vec![],
    };
    let got = plan.group_changes();
    assert_eq!(
        got,
        vec![
            crate::audit::GroupChange {
                group_id: "a".into(),
                partitions_changed: 3,
                records_reprocessed: 16,
                records_skipped: 7
            },
            crate::audit::GroupChange {
                group_id: "b".into(),
                partitions_changed: 0,
                records_reprocessed: 0,
                records_skipped: 0
            },
        ]
    );
}
