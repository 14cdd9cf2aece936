//! Table-driven tests of plan files and of comparing a reviewed plan with a fresh one.

use super::*;
use crate::kafka::GroupState;
use crate::restore::plan::tests::part;
use crate::restore::plan::{
    ConnectorPlan, GroupPlan, PartitionPlan, PlanSummary, SourceOffsetPlan,
};
use serde_json::json;

fn plan(parts: Vec<PartitionPlan>) -> Plan {
    Plan {
        snapshot_id: "S".into(),
        groups: vec![GroupPlan {
            group_id: "g".into(),
            group_type: Default::default(),
            state: GroupState::Empty,
            members: vec![],
            connector: None,
            blocked: None,
            warnings: vec![],
            partitions: parts,
        }],
        connectors: vec![],
        summary: PlanSummary::default(),
        applicable: true,
        blocked: false,
        problems: vec![],
    }
}

fn source(target: i64) -> ConnectorPlan {
    ConnectorPlan {
        name: "src".into(),
        connect_url: "http://c".into(),
        connector_type: "source".into(),
        state: Some("RUNNING".into()),
        stop_and_resume: true,
        method: "rest".into(),
        group_id: None,
        offsets: vec![SourceOffsetPlan {
            partition: json!({"filename": "f"}),
            current: Some(json!({"position": 9})),
            target: json!({"position": target}),
            changes: true,
        }],
        not_in_snapshot: vec![],
        recreate: false,
        reset_all: false,
        blocked: None,
        problem: None,
        notes: Vec::new(),
    }
}

#[test]
fn comparing_plans() {
    use Action::*;
    let base = plan(vec![part(0, 50, 30, Reset), part(1, 40, 40, NoChange)]);
    // (name, fresh plan, stops the restore?, moved partitions)
    let cases: Vec<(&str, Plan, bool, usize)> = vec![
        ("identical", base.clone(), false, 0),
        (
            "a connector committed while stopping: current moved, target the same",
            plan(vec![part(0, 55, 30, Reset), part(1, 41, 40, Reset)]),
            false,
            2,
        ),
        (
            "a target changed",
            plan(vec![part(0, 50, 31, Reset), part(1, 40, 40, NoChange)]),
            true,
            0,
        ),
        (
            "a partition disappeared",
            plan(vec![part(0, 50, 30, Reset)]),
            true,
            0,
        ),
        (
            "a partition appeared",
            plan(vec![
                part(0, 50, 30, Reset),
                part(1, 40, 40, NoChange),
                part(2, 1, 1, NoChange),
            ]),
            true,
            0,
        ),
        (
            "a range check changed (now out of range)",
            plan(vec![part(0, 50, 30, OutOfRange), part(1, 40, 40, NoChange)]),
            true,
            0,
        ),
        (
            "now clamped",
            plan(vec![part(0, 50, 30, Clamped), part(1, 40, 40, NoChange)]),
            true,
            0,
        ),
        (
            "a partition the snapshot lacks appeared: left alone, not a change",
            plan(vec![
                part(0, 50, 30, Reset),
                part(1, 40, 40, NoChange),
                part(7, 3, 3, NotInSnapshot),
            ]),
            false,
            0,
        ),
    ];
    for (name, fresh, stops, moved) in cases {
        let c = compare(&base, &fresh);
        assert_eq!(!c.is_same(), stops, "{name}: {:?}", c.changes);
        assert_eq!(c.moved.len(), moved, "{name}: {:?}", c.moved);
    }
}

#[test]
fn comparing_connector_targets() {
    let mut a = plan(vec![]);
    a.connectors.push(source(5));
    let mut same = plan(vec![]);
    same.connectors.push(source(5));
    let mut other = plan(vec![]);
    other.connectors.push(source(6));
    assert!(compare(&a, &same).is_same());
    assert!(!compare(&a, &other).is_same());
    assert!(!compare(&a, &plan(vec![])).is_same());
    let mut other_snapshot = same.clone();
    other_snapshot.snapshot_id = "T".into();
    assert!(!compare(&a, &other_snapshot).is_same());
}

/// A sealed plan file, for the tests of other modules.
pub(crate) fn sealed_plan() -> PlanFile {
    PlanFile::seal(body())
}

fn body() -> PlanBody {
    PlanBody {
        kind: PLAN_KIND.into(),
        format_version: PLAN_FORMAT_VERSION.into(),
        created_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        tool_version: "0.1.0".into(),
        cluster_id: "c1".into(),
        bootstrap_servers: "k:9092".into(),
        snapshot_id: "S".into(),
        request: PlanRequest::default(),
        plan: plan(vec![part(0, 50, 30, Action::Reset)]),
        reset: None,
    }
}

#[test]
fn plan_files_round_trip_and_refuse_edits() {
    let file = PlanFile::seal(body());
    let bytes = file.to_bytes();
    assert_eq!(PlanFile::from_bytes("p.json", &bytes).unwrap(), file);

    let text = String::from_utf8(bytes).unwrap();
    // (what was done to the file, the error variant expected)
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "a target edited by hand",
            text.replacen("\"target\": 30", "\"target\": 3", 1),
            "Integrity",
        ),
        (
            "the cluster edited",
            text.replace("\"c1\"", "\"c2\""),
            "Integrity",
        ),
        (
            "another kind of file",
            text.replace(PLAN_KIND, "something-else"),
            "Decode",
        ),
        (
            "a newer major version",
            text.replace(
                &format!("\"format_version\": \"{PLAN_FORMAT_VERSION}\""),
                "\"format_version\": \"2.0\"",
            ),
            "UnsupportedFormat",
        ),
        ("not JSON", "{ nope".into(), "Decode"),
        ("empty", String::new(), "Decode"),
    ];
    for (what, bytes, want) in cases {
        let err = PlanFile::from_bytes("p.json", bytes.as_bytes()).unwrap_err();
        let got = match err {
            Error::Integrity { .. } => "Integrity",
            Error::Decode { .. } => "Decode",
            Error::UnsupportedFormat { .. } => "UnsupportedFormat",
            _ => "other",
        };
        assert_eq!(got, want, "{what}: {err}");
    }
}

/// Planning again keeps the reviewed plan's notes that it does not make itself (a reset's), and
/// a row's own note when that is new.
#[test]
fn a_fresh_plan_keeps_the_reviewed_notes_it_does_not_make() {
    // (reviewed note, fresh note) -> the fresh row's note after carrying
    let cases: &[(Option<&str>, Option<&str>, Option<&str>)] = &[
        (Some("reset"), None, Some("reset")),
        (Some("reset; own"), Some("own"), Some("reset; own")),
        (Some("own"), Some("own"), Some("own")),
        (Some("old own"), Some("new own"), Some("new own")),
        (None, Some("own"), Some("own")),
        (None, None, None),
    ];
    for &(old, now, want) in cases {
        let mut reviewed = plan(vec![part(0, 5, 3, Action::Reset)]);
        reviewed.groups[0].partitions[0].note = old.map(String::from);
        let mut fresh = plan(vec![part(0, 5, 3, Action::Reset)]);
        fresh.groups[0].partitions[0].note = now.map(String::from);
        carry_notes(&reviewed, &mut fresh);
        assert_eq!(
            fresh.groups[0].partitions[0].note.as_deref(),
            want,
            "{old:?} {now:?}"
        );
    }
    // A row of another partition takes nothing.
    let mut reviewed = plan(vec![part(0, 5, 3, Action::Reset)]);
    reviewed.groups[0].partitions[0].note = Some("reset".into());
    let mut fresh = plan(vec![part(1, 5, 3, Action::Reset)]);
    carry_notes(&reviewed, &mut fresh);
    assert_eq!(fresh.groups[0].partitions[0].note, None);
}
