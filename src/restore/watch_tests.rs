use super::*;
use crate::kafka::GroupState;
use crate::restore::plan::{Action, ConnectorPlan, GroupPlan, PartitionPlan, PlanSummary};

type Parts<'a> = &'a [(&'a str, i32, i64)];

fn map(parts: Parts) -> BTreeMap<TopicPartition, i64> {
    parts
        .iter()
        .map(|(t, p, o)| ((t.to_string(), *p), *o))
        .collect()
}

fn partition(topic: &str, partition: i32, target: i64, action: Action) -> PartitionPlan {
    PartitionPlan {
        topic: topic.into(),
        partition,
        current: Some(target + 5),
        snapshot_offset: Some(target),
        target: Some(target),
        log_start: Some(0),
        log_end: Some(100),
        reprocess: 5,
        skip: 0,
        action,
        note: None,
        leader_epoch: None,
        metadata: None,
        source_topic: None,
        translation: None,
    }
}

fn group(id: &str, connector: Option<&str>, parts: Vec<PartitionPlan>) -> GroupPlan {
    GroupPlan {
        group_id: id.into(),
        group_type: Default::default(),
        state: GroupState::Empty,
        members: vec![],
        connector: connector.map(String::from),
        blocked: None,
        warnings: vec![],
        partitions: parts,
    }
}

fn connector(name: &str, state: Option<&str>, group_id: Option<&str>) -> ConnectorPlan {
    ConnectorPlan {
        name: name.into(),
        connect_url: "http://connect:8083".into(),
        connector_type: "sink".into(),
        state: state.map(String::from),
        stop_and_resume: true,
        method: "rest-sink".into(),
        group_id: group_id.map(String::from),
        offsets: vec![],
        not_in_snapshot: vec![],
        recreate: false,
        reset_all: false,
        blocked: None,
        problem: None,
        notes: Vec::new(),
    }
}

fn plan(groups: Vec<GroupPlan>, connectors: Vec<ConnectorPlan>) -> Plan {
    Plan {
        snapshot_id: "S".into(),
        groups,
        connectors,
        summary: PlanSummary::default(),
        applicable: true,
        blocked: false,
        problems: vec![],
    }
}

/// A sink `sink` with group `connect-sink` reset to offset 10 of `t`[0].
fn sink_plan(state_before: &str) -> Plan {
    plan(
        vec![group(
            "connect-sink",
            Some("sink"),
            vec![partition("t", 0, 10, Action::Reset)],
        )],
        vec![connector("sink", Some(state_before), Some("connect-sink"))],
    )
}

/// A plain group `g` reset to offset 10 of `t`[0], and no connector.
fn group_plan() -> Plan {
    plan(
        vec![group("g", None, vec![partition("t", 0, 10, Action::Reset)])],
        vec![],
    )
}

fn status(state: &str, tasks: &[&str]) -> Seen {
    Seen {
        state: RunState::parse(state),
        worker_id: Some("w1:8083".into()),
        trace: None,
        tasks: tasks
            .iter()
            .enumerate()
            .map(|(i, s)| TaskSeen {
                id: i as i32,
                state: RunState::parse(s),
                worker_id: Some("w1:8083".into()),
                trace: (*s == "FAILED").then(|| {
                    "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler\n\tat a.b(C.java:1)".to_string()
                }),
            })
            .collect(),
    }
}

fn poll(
    connectors: Vec<(&str, Result<Seen, &str>)>,
    groups: Vec<(&str, Result<Parts, &str>)>,
    log_end: Result<Parts, &str>,
) -> Poll {
    Poll {
        connectors: connectors
            .into_iter()
            .map(|(n, r)| (n.to_string(), r.map_err(String::from)))
            .collect(),
        groups: groups
            .into_iter()
            .map(|(g, r)| (g.to_string(), r.map(map).map_err(String::from)))
            .collect(),
        log_end: log_end.map(map).map_err(String::from),
    }
}

/// A read of the sink: its state and tasks, its committed offset on `t`[0], log-end 20.
fn sink_read(state: &str, tasks: &[&str], committed: i64) -> Poll {
    poll(
        vec![("sink", Ok(status(state, tasks)))],
        vec![("connect-sink", Ok(&[("t", 0, committed)]))],
        Ok(&[("t", 0, 20)]),
    )
}

fn group_read(committed: i64, log_end: i64) -> Poll {
    poll(
        vec![],
        vec![("g", Ok(&[("t", 0, committed)]))],
        Ok(&[("t", 0, log_end)]),
    )
}

fn unreadable() -> Poll {
    poll(
        vec![("sink", Err("cannot reach Kafka Connect"))],
        vec![("connect-sink", Err("cannot reach Kafka"))],
        Err("cannot reach Kafka"),
    )
}

fn run(plan: &Plan, polls: Vec<Poll>) -> (WatchReport, Vec<String>) {
    let mut tracker = Tracker::new(plan);
    let mut events = Vec::new();
    for p in polls {
        events.extend(tracker.observe(p));
        if tracker.failed() {
            break;
        }
    }
    (tracker.finish(Duration::from_secs(30)), events)
}

#[test]
fn verdict_follows_the_sequence_of_reads() {
    struct Case {
        name: &'static str,
        plan: Plan,
        polls: Vec<Poll>,
        verdict: Verdict,
        /// A problem line containing this, or no problem at all when empty.
        problem: &'static str,
    }
    let cases = vec![
        Case {
            name: "sink running and consuming",
            plan: sink_plan("RUNNING"),
            polls: vec![
                sink_read("RUNNING", &["RUNNING"], 10),
                sink_read("RUNNING", &["RUNNING"], 15),
            ],
            verdict: Verdict::Healthy,
            problem: "",
        },
        Case {
            name: "caught up from the start: nothing to consume",
            plan: group_plan(),
            polls: vec![group_read(10, 10), group_read(10, 10)],
            verdict: Verdict::Healthy,
            problem: "",
        },
        Case {
            name: "a task fails on the second read",
            plan: sink_plan("RUNNING"),
            polls: vec![
                sink_read("RUNNING", &["RUNNING"], 10),
                sink_read("RUNNING", &["FAILED"], 10),
                sink_read("RUNNING", &["RUNNING"], 20),
            ],
            verdict: Verdict::ConnectorFailed,
            problem: "task 0 FAILED on w1:8083: org.apache.kafka.connect.errors.ConnectException",
        },
        Case {
            name: "the connector itself fails",
            plan: sink_plan("RUNNING"),
            polls: vec![sink_read("FAILED", &[], 10)],
            verdict: Verdict::ConnectorFailed,
            problem: "connector sink FAILED",
        },
        Case {
            name: "running with lag, offsets never move",
            plan: sink_plan("RUNNING"),
            polls: vec![
                sink_read("RUNNING", &["RUNNING"], 10),
                sink_read("RUNNING", &["RUNNING"], 10),
            ],
            verdict: Verdict::NotMoving,
            problem: "offset.flush.interval.ms",
        },
        Case {
            name: "paused before and after: not moving is expected",
            plan: sink_plan("PAUSED"),
            polls: vec![sink_read("PAUSED", &["PAUSED"], 10)],
            verdict: Verdict::Healthy,
            problem: "",
        },
        Case {
            name: "stopped before and after, no tasks",
            plan: sink_plan("STOPPED"),
            polls: vec![sink_read("STOPPED", &[], 10)],
            verdict: Verdict::Healthy,
            problem: "",
        },
        Case {
            name: "running before, unassigned at the end",
            plan: sink_plan("RUNNING"),
            polls: vec![sink_read("UNASSIGNED", &[], 10)],
            verdict: Verdict::NotMoving,
            problem: "is UNASSIGNED at the end of the watch (it was RUNNING before)",
        },
        Case {
            name: "a task still restarting at the end",
            plan: sink_plan("RUNNING"),
            polls: vec![
                sink_read("RUNNING", &["RUNNING"], 12),
                sink_read("RUNNING", &["RESTARTING"], 14),
            ],
            verdict: Verdict::NotMoving,
            problem: "task 0 is RESTARTING",
        },
        Case {
            name: "plain group with lag whose consumers never commit",
            plan: group_plan(),
            polls: vec![group_read(10, 50), group_read(10, 60)],
            verdict: Verdict::NotMoving,
            problem: "check that its consumers are running",
        },
        Case {
            name: "moved once, then caught up: healthy",
            plan: group_plan(),
            polls: vec![group_read(10, 50), group_read(50, 50)],
            verdict: Verdict::Healthy,
            problem: "",
        },
        Case {
            name: "nothing readable",
            plan: sink_plan("RUNNING"),
            polls: vec![unreadable(), unreadable()],
            verdict: Verdict::Unknown,
            problem: "nothing could be read",
        },
        Case {
            name: "connector unreadable at the end, group consuming",
            plan: sink_plan("RUNNING"),
            polls: vec![
                sink_read("RUNNING", &["RUNNING"], 15),
                poll(
                    vec![("sink", Err("HTTP 500"))],
                    vec![("connect-sink", Ok(&[("t", 0, 18)]))],
                    Ok(&[("t", 0, 20)]),
                ),
            ],
            verdict: Verdict::Healthy,
            problem: "connector sink: cannot read its status: HTTP 500",
        },
        Case {
            name: "lag unknown: no judgement on the offsets",
            plan: group_plan(),
            polls: vec![poll(
                vec![],
                vec![("g", Ok(&[("t", 0, 10)]))],
                Err("timed out"),
            )],
            verdict: Verdict::Healthy,
            problem: "the lag is not known",
        },
    ];
    for case in cases {
        let (report, _) = run(&case.plan, case.polls);
        assert_eq!(report.verdict, case.verdict, "{}", case.name);
        if case.problem.is_empty() {
            assert!(
                report.problems.is_empty(),
                "{}: {:?}",
                case.name,
                report.problems
            );
        } else {
            assert!(
                report.problems.iter().any(|p| p.contains(case.problem)),
                "{}: {:?}",
                case.name,
                report.problems
            );
        }
    }
}

#[test]
fn a_failure_outranks_everything_then_nothing_read() {
    #[rustfmt::skip]
    let cases = [
        (true, true, true, Verdict::ConnectorFailed),
        (true, false, false, Verdict::ConnectorFailed),
        (false, false, true, Verdict::Unknown),
        (false, true, true, Verdict::NotMoving),
        (false, true, false, Verdict::Healthy),
    ];
    for (failed, read, stalled, want) in cases {
        assert_eq!(
            verdict(failed, read, stalled),
            want,
            "{failed} {read} {stalled}"
        );
    }
    let empty = Tracker::new(&plan(vec![], vec![])).finish(Duration::ZERO);
    assert_eq!((empty.verdict, empty.polls), (Verdict::Healthy, 0));
}

#[test]
fn a_failure_ends_the_watch_early() {
    let mut tracker = Tracker::new(&sink_plan("RUNNING"));
    tracker.observe(sink_read("RUNNING", &["RUNNING"], 10));
    assert!(!tracker.failed());
    tracker.observe(sink_read("RUNNING", &["RUNNING", "FAILED"], 10));
    assert!(tracker.failed());
}

#[test]
fn exit_code_is_16_only_for_a_failure() {
    for (verdict, code) in [
        (Verdict::Healthy, 0),
        (Verdict::NotMoving, 0),
        (Verdict::Unknown, 0),
        (Verdict::ConnectorFailed, 16),
    ] {
        let report = WatchReport {
            verdict,
            duration_s: 1.0,
            polls: 1,
            connectors: vec![],
            groups: vec![],
            problems: vec![],
        };
        assert_eq!(report.exit_code(), code, "{verdict}");
    }
}

#[test]
fn events_tell_changes_failures_and_moves_once() {
    let (_, events) = run(
        &sink_plan("RUNNING"),
        vec![
            sink_read("RUNNING", &["UNASSIGNED"], 10),
            sink_read("RUNNING", &["RUNNING"], 10),
            sink_read("RUNNING", &["RUNNING"], 12),
            sink_read("RUNNING", &["RUNNING"], 14),
            unreadable(),
            unreadable(),
            sink_read("RUNNING", &["FAILED"], 14),
        ],
    );
    assert_eq!(
        events,
        vec![
            "connector sink task 0: UNASSIGNED -> RUNNING",
            "group connect-sink: offsets moving forward from the targets (1 of 1 partition(s), 2 record(s) consumed)",
            "cannot read the partitions' log-end offsets: cannot reach Kafka",
            "connector sink: cannot read its status: cannot reach Kafka Connect",
            "group connect-sink: cannot read its committed offsets: cannot reach Kafka",
            "connector sink task 0 FAILED on w1:8083: org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler",
        ]
    );
}

#[test]
fn a_task_failed_at_the_first_read_is_told() {
    let (_, events) = run(
        &sink_plan("RUNNING"),
        vec![sink_read("RUNNING", &["RUNNING", "FAILED"], 10)],
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].starts_with("connector sink task 1 FAILED"));
}

#[test]
fn only_committed_targets_and_existing_connectors_are_watched() {
    let p = plan(
        vec![
            group(
                "g",
                None,
                vec![
                    partition("t", 0, 10, Action::Reset),
                    partition("t", 1, 10, Action::NotInSnapshot),
                    partition("t", 2, 10, Action::OutOfRange),
                    partition("u", 0, 3, Action::NoChange),
                ],
            ),
            group("nothing", None, vec![partition("t", 0, 1, Action::Skipped)]),
        ],
        vec![
            connector("gone", None, None),
            connector("live", Some("RUNNING"), Some("g")),
        ],
    );
    let tracker = Tracker::new(&p);
    assert_eq!(tracker.groups.keys().collect::<Vec<_>>(), vec!["g"]);
    assert_eq!(
        tracker.groups["g"].targets,
        map(&[("t", 0, 10), ("u", 0, 3)])
    );
    assert_eq!(tracker.groups["g"].connector.as_deref(), Some("live"));
    assert_eq!(tracker.connectors.keys().collect::<Vec<_>>(), vec!["live"]);
    assert!(Tracker::new(&plan(vec![], vec![])).is_empty());
}

#[test]
fn progress_against_the_targets() {
    let targets = map(&[("t", 0, 10), ("t", 1, 10), ("t", 2, 10)]);
    #[rustfmt::skip]
    let cases: Vec<(&str, Parts, Option<Parts>, Progress)> = vec![
        ("nothing committed yet", &[], Some(&[("t", 0, 10), ("t", 1, 12), ("t", 2, 10)]),
         Progress { moved: 0, consumed: 0, behind: 0, lag: Some(2) }),
        ("one moved", &[("t", 0, 15), ("t", 1, 10), ("t", 2, 10)],
         Some(&[("t", 0, 20), ("t", 1, 10), ("t", 2, 10)]),
         Progress { moved: 1, consumed: 5, behind: 0, lag: Some(5) }),
        ("one moved back", &[("t", 0, 4), ("t", 1, 11), ("t", 2, 10)],
         Some(&[("t", 0, 20), ("t", 1, 11), ("t", 2, 10)]),
         Progress { moved: 1, consumed: 1, behind: 1, lag: Some(16) }),
        ("log-end unreadable", &[("t", 0, 11)], None,
         Progress { moved: 1, consumed: 1, behind: 0, lag: None }),
        ("one log-end missing", &[("t", 0, 11)], Some(&[("t", 0, 11), ("t", 1, 10)]),
         Progress { moved: 1, consumed: 1, behind: 0, lag: None }),
        ("log-end below committed (truncated)", &[("t", 0, 30), ("t", 1, 10), ("t", 2, 10)],
         Some(&[("t", 0, 20), ("t", 1, 10), ("t", 2, 10)]),
         Progress { moved: 1, consumed: 20, behind: 0, lag: Some(0) }),
    ];
    for (name, committed, log_end, want) in cases {
        let log_end = log_end.map(map);
        assert_eq!(
            progress(&targets, &map(committed), log_end.as_ref()),
            want,
            "{name}"
        );
    }
}

/// Lines kept, the `Caused by:` lines, lines omitted; `None` for no trace.
type TraceShape<'a> = Option<(usize, Vec<&'a str>, usize)>;

#[test]
fn traces_keep_the_first_lines_and_the_root_causes() {
    let long: String = (0..30)
        .map(|i| format!("\tat frame{i}(X.java:{i})\n"))
        .collect();
    let with_causes = format!(
        "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded\n{long}Caused by: org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed\n\tat y\nCaused by: org.apache.kafka.common.errors.SerializationException: Unrecognized token 'poison'\n\t... 17 more\n"
    );
    #[rustfmt::skip]
    let cases: Vec<(&str, &str, usize, TraceShape)> = vec![
        ("empty", "", 10, None),
        ("blank lines only", " \n\t\n", 10, None),
        ("short, kept whole", "E: boom\n\tat a\n\n\tat b  \n", 10, Some((3, vec![], 0))),
        ("long without causes", &long, 10, Some((10, vec![], 20))),
        ("causes below the first lines", &with_causes, 10, Some((10, vec![
            "Caused by: org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed",
            "Caused by: org.apache.kafka.common.errors.SerializationException: Unrecognized token 'poison'",
        ], 23))),
    ];
    for (name, text, max, want) in cases {
        let got = trim_trace(text, max).map(|t| (t.lines.len(), t.caused_by, t.omitted));
        let want = want.map(|(n, c, o)| (n, c.into_iter().map(String::from).collect(), o));
        assert_eq!(got, want, "{name}");
    }
    let t = trim_trace("E: boom\n\tat a  \n", 10).unwrap();
    assert_eq!(t.lines, vec!["E: boom", "\tat a"]);
    let many: String = (0..8).map(|i| format!("x\nCaused by: c{i}\n")).collect();
    let t = trim_trace(&many, 1).unwrap();
    assert_eq!(t.caused_by.len(), CAUSE_LINES);
    assert_eq!(
        t.caused_by.last().map(String::as_str),
        Some("Caused by: c7")
    );
}

#[test]
fn settled_states() {
    let running = RunState::Running;
    let paused = RunState::Paused;
    #[rustfmt::skip]
    let cases: Vec<(Option<&RunState>, Seen, usize)> = vec![
        (Some(&running), status("RUNNING", &["RUNNING", "RUNNING"]), 0),
        (Some(&paused), status("PAUSED", &["PAUSED"]), 0),
        (Some(&paused), status("RUNNING", &["RUNNING"]), 0),
        (Some(&running), status("PAUSED", &["PAUSED"]), 1),
        (Some(&running), status("RUNNING", &["UNASSIGNED", "RUNNING"]), 1),
        (None, status("UNASSIGNED", &["UNASSIGNED"]), 1),
        (Some(&running), status("RUNNING", &[]), 0),
    ];
    for (before, seen, problems) in cases {
        assert_eq!(
            settled("c", before, &seen).len(),
            problems,
            "{before:?} {seen:?}"
        );
    }
}

#[test]
fn states_parse_and_serialize_as_connect_names() {
    for name in [
        "RUNNING",
        "PAUSED",
        "STOPPED",
        "FAILED",
        "UNASSIGNED",
        "RESTARTING",
        "NEW",
    ] {
        assert_eq!(RunState::parse(name).name(), name);
    }
    assert_eq!(RunState::parse("NEW"), RunState::Other("NEW".into()));
}

#[test]
fn report_serializes_with_stable_names() {
    let mut tracker = Tracker::new(&sink_plan("RUNNING"));
    tracker.observe(sink_read("RUNNING", &["FAILED"], 12));
    let report = tracker.finish(Duration::from_millis(2500));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["verdict"], "connector-failed");
    assert_eq!(json["duration_s"], 2.5);
    assert_eq!(json["connectors"][0]["state"], "RUNNING");
    assert_eq!(json["connectors"][0]["state_before"], "RUNNING");
    let task = &json["connectors"][0]["tasks"][0];
    assert_eq!(task["state"], "FAILED");
    assert_eq!(
        task["trace"]["lines"][0],
        "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"
    );
    let group = &json["groups"][0];
    assert_eq!(group["group_id"], "connect-sink");
    assert_eq!(group["moved_forward"], 1);
    assert_eq!(group["consumed"], 2);
    assert_eq!(group["lag"], 8);
    assert!(group.get("behind_target").is_none());
    assert_eq!(report.exit_code(), 16);
}

#[test]
fn status_answers_become_states() {
    let answer: ConnectorStatus = serde_json::from_value(serde_json::json!({
        "name": "sink",
        "connector": {"state": "RUNNING", "worker_id": "w1:8083"},
        "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w1:8083", "trace": "E: boom\n\tat a"}],
        "type": "sink"
    }))
    .unwrap();
    let s = seen(&answer);
    assert_eq!(s.state, RunState::Running);
    assert_eq!(s.tasks[0].state, RunState::Failed);
    assert_eq!(s.tasks[0].worker_id.as_deref(), Some("w1:8083"));
}
