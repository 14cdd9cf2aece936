//! `reset`: targets computed from the live state by a kafka-consumer-groups scenario
//! ([`super::targets`]), then restore's plan, safety checks and apply. Reads only; the apply is
//! [`super::execute`], with a `pre-reset` snapshot as its undo point.
//!
//! The selection is resolved as `snapshot` resolves it (groups, patterns, connectors and their
//! sink groups, group types); then the partitions in scope are read as a restore plan reads
//! them, and each gets its target.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::{self, Plan, PlanOptions};
use super::request::Targets;
pub use super::targets::ResetSpec;
use super::targets::{scope_partitions, target, PartitionFacts, Scenario, Scope};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, OffsetQuery, TopicPartition};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, PartitionOffset};
use crate::snapshot::{capture, CaptureOptions};

/// A planned reset: what execute applies, and what the plan should say besides.
#[derive(Debug, Clone)]
pub struct PreparedReset {
    /// The whole plan, in memory (a reset plans its groups in one batch).
    pub plan: Plan,
    pub targets: Targets,
    /// The options the plan was computed with; execute plans again with the same.
    pub options: PlanOptions,
    /// Things left out of the reset, and why (sinks whose offsets live elsewhere, ...).
    pub warnings: Vec<String>,
}

/// The options the plan is computed with: the user's, plus how a reset writes connectors.
pub fn plan_options(spec: &ResetSpec, base: &PlanOptions, sources: &[&str]) -> PlanOptions {
    let mut opts = base.clone();
    opts.sink_via_rest = true;
    opts.reset_source_offsets = match spec.scenario {
        Scenario::ToEarliest => sources.iter().map(|s| s.to_string()).collect(),
        _ => BTreeSet::new(),
    };
    opts
}

/// Checks the connectors against the scenario: a source connector's offsets are its own, so only
/// `--to-earliest` (Kafka Connect's offset reset) and `--from-file` with its JSON apply. Returns
/// the connectors with their targets (a source connector's from the file), and the names of the
/// source connectors.
fn connector_targets(
    spec: &ResetSpec,
    connectors: Vec<ConnectorSnapshot>,
) -> Result<(Vec<ConnectorSnapshot>, Vec<String>)> {
    let sources: Vec<String> = connectors
        .iter()
        .filter(|c| c.connector_type != "sink")
        .map(|c| c.name.clone())
        .collect();
    if spec.source_offsets.is_some() && sources.len() != 1 {
        return Err(Error::usage(format!(
            "--from-file with connector offsets (JSON) sets the offsets of one source connector; the selection has {} ({}): select exactly one with --connector",
            sources.len(),
            sources.join(", ")
        )));
    }
    let mut out = Vec::new();
    for mut c in connectors {
        if c.connector_type == "sink" {
            out.push(c);
            continue;
        }
        match (&spec.scenario, &spec.source_offsets) {
            (Scenario::ToEarliest, _) => {}
            (_, Some(offsets)) => c.offsets = Some(offsets.clone()),
            (other, None) => {
                return Err(Error::usage(format!(
                    "{} cannot be used on source connector {}: its offsets are defined by the connector, not by Kafka partitions. Use --to-earliest (Kafka Connect's offset reset: it starts again from the beginning of its source) or --from-file FILE.json with its own partition/offset pairs (the form GET /connectors/{}/offsets returns)",
                    other.option(),
                    c.name,
                    c.name
                )))
            }
        }
        out.push(c);
    }
    Ok((out, sources))
}

/// Sink connectors whose group has no committed offset keep their offsets elsewhere (in the
/// target system, as exactly-once sinks do), or have consumed nothing yet: they and their group
/// are left out of the reset, with a warning, unless the group is named with `--group`. Pure.
fn leave_out_uncommitted_sinks(
    connectors: Vec<ConnectorSnapshot>,
    groups: Vec<GroupSnapshot>,
    named: &[String],
    warnings: &mut Vec<String>,
) -> (Vec<ConnectorSnapshot>, Vec<GroupSnapshot>) {
    let committed = |group: &str| {
        named.iter().any(|n| n == group)
            || groups
                .iter()
                .any(|g| g.group_id == group && !g.partitions.is_empty())
    };
    let mut left_out: BTreeSet<String> = BTreeSet::new();
    let connectors = connectors
        .into_iter()
        .filter(|c| {
            let Some(group) = c.group_id.as_deref().filter(|_| c.connector_type == "sink") else {
                return true;
            };
            if committed(group) {
                return true;
            }
            warnings.push(format!(
                "connector {}: its group {group} has no committed offsets, so it is not reset: a sink that keeps its offsets in the target system (exactly-once sinks) must be reset there; to set offsets for the group anyway, name it with --group {group}",
                c.name
            ));
            left_out.insert(group.to_string());
            false
        })
        .collect();
    let groups = groups
        .into_iter()
        .filter(|g| !left_out.contains(&g.group_id))
        .collect();
    (connectors, groups)
}

/// A group as the plan reads it: its id, type and connector, and the partitions in scope.
fn scoped(g: &GroupSnapshot, partitions: Vec<TopicPartition>) -> GroupSnapshot {
    GroupSnapshot {
        partitions: partitions
            .into_iter()
            .map(|(topic, partition)| PartitionOffset::new(topic, partition, 0))
            .collect(),
        ..g.clone()
    }
}

/// Resolves the selection, reads the partitions in scope, computes every target and plans.
/// Changes nothing. A target that cannot be computed (no committed offset to shift from, a log
/// range that could not be read) fails here, before any plan is shown as applicable.
pub async fn prepare(
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    spec: &ResetSpec,
    base: &PlanOptions,
) -> Result<PreparedReset> {
    let captured = capture(
        kafka,
        clients,
        &CaptureOptions {
            selection: spec.selection.clone(),
            ..Default::default()
        },
    )
    .await?;
    crate::progress::finish();
    let mut warnings = captured.warnings.clone();
    let (connectors, sources) = connector_targets(spec, captured.connectors.clone())?;
    let mut found: Vec<GroupSnapshot> = Vec::new();
    for g in captured.groups.iter()? {
        found.push(g?);
    }
    let (connectors, found) =
        leave_out_uncommitted_sinks(connectors, found, &spec.selection.groups, &mut warnings);
    for g in &found {
        spec.scenario.check_group_type(&g.group_id, g.group_type)?;
    }

    let scope_groups = in_scope(kafka, spec, &found).await?;
    if scope_groups.is_empty() && connectors.iter().all(|c| c.connector_type == "sink") {
        // Nothing of a group to reset, and no source connector.
        return Err(nothing_in_scope(spec, &warnings));
    }

    let (view, by_name) =
        crate::live::read(kafka, clients, &scope_groups, &connectors, false).await?;
    let at_instant = match spec.scenario.instant() {
        Some(t) => offsets_at(kafka, &scope_groups, &view, t.timestamp_millis()).await?,
        None => BTreeMap::new(),
    };
    let Computed {
        groups: target_groups,
        problems,
        notes,
    } = compute_targets(&spec.scenario, &scope_groups, &view, &at_instant);
    if !problems.is_empty() {
        return Err(Error::NotApplicable(format!(
            "the reset's targets cannot be computed; nothing was changed:\n  - {}",
            problems.join("\n  - ")
        )));
    }
    let source_names: Vec<&str> = sources.iter().map(String::as_str).collect();
    let opts = plan_options(spec, base, &source_names);
    let mut plan = plan::build(&spec.label(), &target_groups, &connectors, &view, &opts);
    add_notes(&mut plan, &notes);
    let ledger = super::ledger::Ledger::single(&plan, &target_groups)?;
    Ok(PreparedReset {
        plan,
        targets: Targets {
            moved: Vec::new(),
            source: super::ledger::GroupSource::memory(target_groups, &BTreeSet::new()),
            connectors,
            ledger,
            connect_by_name: by_name,
            undo_format: Default::default(),
            mirror: None,
        },
        options: opts,
        warnings,
    })
}

/// The groups cut to the partitions the reset's scope names (`--topic`, `--all-topics`, a
/// file); groups with none left out.
async fn in_scope(
    kafka: &KafkaClient,
    spec: &ResetSpec,
    found: &[GroupSnapshot],
) -> Result<Vec<GroupSnapshot>> {
    let named: Vec<String> = match &spec.scope {
        Scope::Topics(t) => t.iter().map(|(name, _)| name.clone()).collect(),
        _ => Vec::new(),
    };
    let counts = if named.is_empty() {
        BTreeMap::new()
    } else {
        kafka.partition_counts(named).await?
    };
    let mut scope_groups = Vec::new();
    for g in found {
        let committed: Vec<TopicPartition> = g
            .partitions
            .iter()
            .map(|p| (p.topic.clone(), p.partition))
            .collect();
        let parts = scope_partitions(
            &spec.scope,
            &spec.scenario,
            &g.group_id,
            &committed,
            &counts,
        )?;
        if !parts.is_empty() {
            scope_groups.push(scoped(g, parts));
        }
    }
    Ok(scope_groups)
}

/// The error of a reset whose scope holds nothing of any selected group.
fn nothing_in_scope(spec: &ResetSpec, warnings: &[String]) -> Error {
    Error::usage(format!(
        "nothing to reset: no selected group has a partition in scope ({}){}",
        match &spec.scope {
            Scope::AllTopics => "--all-topics: the groups have no committed offsets".to_string(),
            Scope::Topics(_) => "--topic".to_string(),
            Scope::File => "the file names no partition of the selected groups".to_string(),
        },
        if warnings.is_empty() {
            String::new()
        } else {
            format!("; {}", warnings.join("; "))
        }
    ))
}

/// What ListOffsets by time answered for one partition (`--to-datetime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtInstant {
    /// The offset of the first record whose timestamp is at or after the instant.
    Offset(i64),
    /// No record at or after it (the broker answers offset -1): the target is the log end, where
    /// kafka-consumer-groups falls back too.
    AfterLastRecord,
}

impl AtInstant {
    fn offset(self) -> Option<i64> {
        match self {
            AtInstant::Offset(o) => Some(o),
            AtInstant::AfterLastRecord => None,
        }
    }
}

/// One partition's answer to ListOffsets by time (pure). An error, or no answer at all, is never
/// taken for "no record after the instant": the reset fails rather than guess the log end.
fn read_at_instant(
    tp: &TopicPartition,
    answer: Option<&std::result::Result<i64, String>>,
) -> Result<AtInstant> {
    match answer {
        Some(Ok(o)) if *o >= 0 => Ok(AtInstant::Offset(*o)),
        // -1: no record at or after that time.
        Some(Ok(_)) => Ok(AtInstant::AfterLastRecord),
        Some(Err(e)) => Err(Error::kafka(
            "ListOffsets by time",
            format!("{}[{}]: {e}", tp.0, tp.1),
        )),
        None => Err(Error::kafka(
            "ListOffsets by time",
            format!(
                "{}[{}]: the broker did not answer for it; run the reset again",
                tp.0, tp.1
            ),
        )),
    }
}

/// What ListOffsets by time says of each existing partition in scope at the instant (ms).
async fn offsets_at(
    kafka: &KafkaClient,
    groups: &[GroupSnapshot],
    view: &plan::LiveView,
    ms: i64,
) -> Result<BTreeMap<TopicPartition, AtInstant>> {
    let partitions: BTreeSet<TopicPartition> = groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(|p| (p.topic.clone(), p.partition)))
        .filter(|tp| view.watermarks.contains_key(tp))
        .collect();
    let answers = kafka
        .list_offsets_each(
            partitions
                .iter()
                .map(|tp| (tp.clone(), OffsetQuery::Timestamp(ms)))
                .collect(),
        )
        .await?;
    partitions
        .into_iter()
        .map(|tp| read_at_instant(&tp, answers.get(&tp)).map(|a| (tp, a)))
        .collect()
}

/// The note of a target that is the log end because no record is at or after the
/// `--to-datetime` instant (pure): kafka-consumer-groups sets the same offset, and says so only
/// in a warning apart from its table.
fn after_last_record_note(
    scenario: &Scenario,
    at: Option<AtInstant>,
    target: i64,
) -> Option<String> {
    let (Scenario::ToDatetime(t), Some(AtInstant::AfterLastRecord)) = (scenario, at) else {
        return None;
    };
    Some(format!(
        "no record at or after {}: target is the log end {target} (as kafka-consumer-groups)",
        t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    ))
}

/// Per (group, partition): a note the reset adds to the plan's row.
type Notes = BTreeMap<(String, TopicPartition), String>;

/// The targets of a reset, what keeps some from being computed, and the notes on others.
#[derive(Debug, Default)]
struct Computed {
    groups: Vec<GroupSnapshot>,
    problems: Vec<String>,
    notes: Notes,
}

/// Every partition's target (pure). A partition of a topic or partition that does not exist is
/// passed on with a placeholder for the plan to report; the others need their target.
fn compute_targets(
    scenario: &Scenario,
    groups: &[GroupSnapshot],
    view: &plan::LiveView,
    at_instant: &BTreeMap<TopicPartition, AtInstant>,
) -> Computed {
    let mut out = Computed::default();
    for g in groups {
        let live = view.groups.get(&g.group_id);
        let mut tg = g.clone();
        for p in tg.partitions.iter_mut() {
            let tp = (p.topic.clone(), p.partition);
            let exists = view.topics.get(&tp.0).is_some_and(|n| tp.1 < *n);
            if !exists {
                continue;
            }
            let at = at_instant.get(&tp).copied();
            let facts = PartitionFacts {
                current: live.and_then(|l| l.offsets.get(&tp).copied()),
                marks: view.watermarks.get(&tp).copied().unwrap_or_default(),
                at_instant: at.and_then(AtInstant::offset),
            };
            match target(scenario, &g.group_id, &tp, &facts) {
                Ok(t) => {
                    p.offset = t;
                    if let Some(note) = after_last_record_note(scenario, at, t) {
                        out.notes.insert((g.group_id.clone(), tp), note);
                    }
                }
                Err(why) => out.problems.push(why),
            }
        }
        out.groups.push(tg);
    }
    out
}

/// Puts the reset's notes on the plan's rows, before any note the plan has of its own there.
fn add_notes(plan: &mut Plan, notes: &Notes) {
    for g in plan.groups.iter_mut() {
        for p in g.partitions.iter_mut() {
            if p.action == plan::Action::NotInSnapshot {
                continue;
            }
            let key = (g.group_id.clone(), (p.topic.clone(), p.partition));
            if let Some(note) = notes.get(&key) {
                p.note = Some(match p.note.take() {
                    Some(own) => format!("{note}; {own}"),
                    None => note.clone(),
                });
            }
        }
    }
}

/// Records, for each partition's target, the record just before it on `kafka` (its timestamp
/// and fingerprint), as `snapshot --with-timestamps` does: what carries the targets to another
/// cluster (`--rehearse-on`). Returns the records that could not be read in time.
pub async fn stamp_last_records(
    kafka: &KafkaClient,
    groups: &mut [GroupSnapshot],
) -> Result<Vec<String>> {
    let positions: BTreeSet<(TopicPartition, i64)> = groups
        .iter()
        .flat_map(|g| g.partitions.iter())
        .filter(|p| p.offset > 0)
        .map(|p| ((p.topic.clone(), p.partition), p.offset))
        .collect();
    let (found, unread) = kafka.last_records(positions.into_iter().collect()).await?;
    for p in groups.iter_mut().flat_map(|g| g.partitions.iter_mut()) {
        let record = found.get(&((p.topic.clone(), p.partition), p.offset));
        p.last_record_timestamp = record
            .and_then(|r| r.timestamp)
            .and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_millis);
        p.last_record_digest = record.map(|r| r.digest.clone());
    }
    Ok(unread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::{GroupState, GroupType, Watermarks};
    use crate::live::LiveGroup;
    use crate::snapshot::model::Selection;

    fn group(id: &str, t: GroupType, parts: &[(&str, i32)]) -> GroupSnapshot {
        let base = GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: t,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: vec![],
        };
        scoped(
            &base,
            parts.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        )
    }

    #[test]
    fn targets_come_from_the_live_view_and_missing_partitions_are_left_to_the_plan() {
        let mut view = plan::LiveView::default();
        view.topics.insert("t".into(), 2);
        for p in 0..2 {
            view.watermarks.insert(
                ("t".into(), p),
                Watermarks {
                    log_start: Some(10 * p as i64),
                    log_end: Some(100),
                },
            );
        }
        view.groups.insert(
            "g".into(),
            LiveGroup {
                state: GroupState::Empty,
                members: vec![],
                offsets: [(("t".to_string(), 0), 40)].into(),
                share_lag: Default::default(),
            },
        );
        let groups = vec![group(
            "g",
            GroupType::Classic,
            &[("gone", 0), ("t", 0), ("t", 1)],
        )];
        let Computed {
            groups: out,
            problems,
            notes,
        } = compute_targets(&Scenario::ShiftBy(-5), &groups, &view, &BTreeMap::new());
        assert!(notes.is_empty(), "{notes:?}");
        // t[1] has no committed offset to shift from; `gone` is for the plan to report.
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("g t[1]"), "{problems:?}");
        assert_eq!(out[0].partitions[1].offset, 35);

        let Computed {
            groups: out,
            problems,
            ..
        } = compute_targets(&Scenario::ToEarliest, &groups, &view, &BTreeMap::new());
        assert!(problems.is_empty());
        let offsets: Vec<i64> = out[0].partitions.iter().map(|p| p.offset).collect();
        assert_eq!(offsets, [0, 0, 10]);
        let plan = plan::build("reset", &out, &[], &view, &PlanOptions::default());
        let actions: Vec<plan::Action> =
            plan.groups[0].partitions.iter().map(|p| p.action).collect();
        assert_eq!(
            actions,
            [
                plan::Action::TopicMissing,
                plan::Action::Reset,
                plan::Action::Reset
            ]
        );
    }

    /// `--to-datetime` past a partition's last record: the broker's -1 becomes the log end, as
    /// kafka-consumer-groups sets it, and the plan's row says so; a record after the instant, or
    /// another scenario, has no such note; an error or a missing answer is never the log end.
    #[test]
    fn a_to_datetime_target_past_the_last_record_is_the_log_end_with_a_note() {
        let t = chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let at = Scenario::ToDatetime(t);
        let words = "no record at or after 2026-12-01T10:00:00.000Z: target is the log end";
        type Answer = Option<std::result::Result<i64, String>>;
        // (scenario, ListOffsets-by-time answer, log end, Ok((target, note)) or the words of the
        // failure)
        type Want = std::result::Result<(i64, Option<String>), &'static str>;
        let cases: Vec<(&Scenario, Answer, Option<i64>, Want)> = vec![
            (&at, Some(Ok(7)), Some(20), Ok((7, None))),
            (&at, Some(Ok(0)), Some(20), Ok((0, None))),
            (
                &at,
                Some(Ok(-1)),
                Some(20),
                Ok((20, Some(format!("{words} 20 (as kafka-consumer-groups)")))),
            ),
            // An empty partition: its log end is where kafka-consumer-groups falls back to.
            (
                &at,
                Some(Ok(-1)),
                Some(0),
                Ok((0, Some(format!("{words} 0 (as kafka-consumer-groups)")))),
            ),
            (
                &at,
                Some(Ok(-1)),
                None,
                Err("log-end offset could not be read"),
            ),
            (
                &at,
                Some(Err("Broker: timed out".into())),
                Some(20),
                Err("timed out"),
            ),
            (&at, None, Some(20), Err("did not answer")),
            (&Scenario::ToLatest, Some(Ok(-1)), Some(20), Ok((20, None))),
        ];
        let tp: TopicPartition = ("t".into(), 0);
        for (scenario, answer, log_end, want) in cases {
            let mut view = plan::LiveView::default();
            view.topics.insert("t".into(), 1);
            view.watermarks.insert(
                tp.clone(),
                Watermarks {
                    log_start: Some(0),
                    log_end,
                },
            );
            let got = read_at_instant(&tp, answer.as_ref())
                .map_err(|e| e.to_string())
                .and_then(|a| {
                    let groups = [group("g", GroupType::Classic, &[("t", 0)])];
                    let c = compute_targets(scenario, &groups, &view, &[(tp.clone(), a)].into());
                    if let Some(why) = c.problems.first() {
                        return Err(why.clone());
                    }
                    let mut plan =
                        plan::build("reset", &c.groups, &[], &view, &PlanOptions::default());
                    add_notes(&mut plan, &c.notes);
                    let row = &plan.groups[0].partitions[0];
                    Ok((row.target.unwrap(), row.note.clone()))
                });
            match (&got, &want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{scenario:?} {answer:?}"),
                (Err(e), Err(words)) => assert!(e.contains(words), "{answer:?}: {e}"),
                _ => panic!("{scenario:?} {answer:?} {log_end:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_reset_note_goes_before_the_plans_own_and_not_on_rows_outside_the_reset() {
        let mut plan = plan::build(
            "reset",
            &[],
            &[],
            &plan::LiveView::default(),
            &PlanOptions::default(),
        );
        let row = |partition: i32, action: plan::Action, note: Option<&str>| plan::PartitionPlan {
            topic: "t".into(),
            partition,
            current: None,
            snapshot_offset: None,
            target: Some(5),
            log_start: Some(0),
            log_end: Some(5),
            reprocess: 0,
            skip: 0,
            action,
            note: note.map(String::from),
            leader_epoch: None,
            metadata: None,
            source_topic: None,
            translation: None,
        };
        plan.groups.push(plan::GroupPlan {
            group_id: "g".into(),
            group_type: GroupType::Classic,
            state: GroupState::Empty,
            members: vec![],
            connector: None,
            blocked: None,
            warnings: vec![],
            partitions: vec![
                row(0, plan::Action::Reset, None),
                row(1, plan::Action::Reset, Some("own")),
                row(2, plan::Action::NotInSnapshot, Some("outside")),
                row(3, plan::Action::Reset, None),
            ],
        });
        let notes: Notes = (0..3)
            .map(|p| (("g".to_string(), ("t".to_string(), p)), "past".to_string()))
            .collect();
        add_notes(&mut plan, &notes);
        let got: Vec<Option<&str>> = plan.groups[0]
            .partitions
            .iter()
            .map(|p| p.note.as_deref())
            .collect();
        assert_eq!(
            got,
            [Some("past"), Some("past; own"), Some("outside"), None]
        );
    }

    #[test]
    fn a_sink_whose_group_never_committed_is_left_out_with_its_group_unless_named() {
        let sink = |name: &str| ConnectorSnapshot {
            group_id: Some(format!("connect-{name}")),
            ..conn(name, "sink")
        };
        let committed = group("connect-a", GroupType::Classic, &[("t", 0)]);
        let empty = group("connect-b", GroupType::Classic, &[]);
        // (names given with --group, connectors kept, groups kept, warnings)
        type Names = &'static [&'static str];
        let cases: [(Names, Names, Names, usize); 2] = [
            (&[], &["a", "s"], &["connect-a"], 1),
            (
                &["connect-b"],
                &["a", "b", "s"],
                &["connect-a", "connect-b"],
                0,
            ),
        ];
        for (named, want_conns, want_groups, want_warnings) in cases {
            let named: Vec<String> = named.iter().map(|n| n.to_string()).collect();
            let mut warnings = Vec::new();
            let (conns, groups) = leave_out_uncommitted_sinks(
                vec![sink("a"), sink("b"), conn("s", "source")],
                vec![committed.clone(), empty.clone()],
                &named,
                &mut warnings,
            );
            let names: Vec<&str> = conns.iter().map(|c| c.name.as_str()).collect();
            let ids: Vec<&str> = groups.iter().map(|g| g.group_id.as_str()).collect();
            assert_eq!(
                (names.as_slice(), ids.as_slice(), warnings.len()),
                (want_conns, want_groups, want_warnings),
                "{named:?}"
            );
            if let Some(w) = warnings.first() {
                assert!(w.contains("--group connect-b"), "{w}");
            }
        }
    }

    fn conn(name: &str, t: &str) -> ConnectorSnapshot {
        ConnectorSnapshot {
            name: name.into(),
            connect_url: "http://c".into(),
            connector_type: t.into(),
            group_id: None,
            config: Default::default(),
            redacted_keys: vec![],
            state: "RUNNING".into(),
            tasks: vec![],
            offsets: None,
            offsets_unavailable: None,
        }
    }

    #[test]
    fn source_connectors_take_only_their_own_scenarios() {
        let spec = |scenario, source_offsets| ResetSpec {
            selection: Selection::default(),
            scope: Scope::AllTopics,
            scenario,
            source_offsets,
        };
        let file = Some(vec![
            serde_json::json!({"partition": {"f": "x"}, "offset": {"p": 1}}),
        ]);
        // (spec, connectors, Ok(source names) or the words of the refusal)
        type Want = std::result::Result<Vec<&'static str>, &'static str>;
        let cases: Vec<(ResetSpec, Vec<ConnectorSnapshot>, Want)> = vec![
            (
                spec(Scenario::ToEarliest, None),
                vec![conn("src", "source"), conn("snk", "sink")],
                Ok(vec!["src"]),
            ),
            (
                spec(Scenario::ShiftBy(1), None),
                vec![conn("snk", "sink")],
                Ok(vec![]),
            ),
            (
                spec(Scenario::ShiftBy(1), None),
                vec![conn("src", "source")],
                Err("cannot be used on source connector src"),
            ),
            (
                spec(Scenario::FromFile(BTreeMap::new()), file.clone()),
                vec![conn("src", "source")],
                Ok(vec!["src"]),
            ),
            (
                spec(Scenario::FromFile(BTreeMap::new()), file),
                vec![conn("a", "source"), conn("b", "source")],
                Err("select exactly one"),
            ),
        ];
        for (s, connectors, want) in cases {
            match (connector_targets(&s, connectors), want) {
                (Ok((out, sources)), Ok(names)) => {
                    assert_eq!(sources, names);
                    if s.source_offsets.is_some() {
                        assert_eq!(out[0].offsets, s.source_offsets);
                    }
                }
                (Err(e), Err(words)) => {
                    assert_eq!(e.exit_code(), crate::error::exit::USAGE);
                    assert!(e.to_string().contains(words), "{e}");
                }
                (got, want) => panic!("{s:?}: got {got:?}, want {want:?}"),
            }
        }
        let opts = plan_options(
            &spec(Scenario::ToEarliest, None),
            &PlanOptions::default(),
            &["src"],
        );
        assert!(opts.sink_via_rest && opts.reset_source_offsets.contains("src"));
        let opts = plan_options(
            &spec(Scenario::ToLatest, None),
            &PlanOptions::default(),
            &["src"],
        );
        assert!(opts.reset_source_offsets.is_empty());
    }
}
