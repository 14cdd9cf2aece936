//! The restore plan: a pure function from the snapshot's targets and the live state to what would
//! change, per partition, with the reasons a plan cannot be applied. Printing it is the dry run.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::kafka::TopicPartition;
use crate::kafka::{GroupState, GroupType};
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot, Member};

use super::connector_plan::plan_connector;
pub use super::connector_plan::{ConnectorPlan, SourceOffsetPlan};
pub use super::options::{OutOfRange, PlanOptions, Recreate};
pub use crate::live::{LiveConnector, LiveGroup, LiveView};
use crate::mirror::{Carried, Decision};

/// The per-partition action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Commit the target offset.
    Reset,
    /// The current offset already equals the target; it is committed again, unchanged.
    NoChange,
    /// The target was out of range and is clamped into it (`--on-out-of-range clamp`).
    Clamped,
    /// The target is out of range: the plan fails.
    OutOfRange,
    /// The topic no longer exists: the plan fails unless `--skip-missing`.
    TopicMissing,
    /// The partition no longer exists: the plan fails unless `--skip-missing`.
    PartitionMissing,
    /// Missing, and left out because of `--skip-missing`.
    Skipped,
    /// The group has an offset here now that the snapshot lacks; it is left as it is.
    NotInSnapshot,
    /// The partition's live log range could not be read, so the target cannot be checked: the
    /// plan fails (an unknown range is never taken for a valid one).
    RangeUnknown,
    /// The topic was deleted and created again since the snapshot (its id differs): the old
    /// offset points at other records, so the plan fails unless translated by time or allowed.
    Recreated,
    /// Restoring onto another cluster: no method could translate the offset (`--translate`),
    /// or the last consumed record is not on this cluster. The plan fails.
    Untranslated,
}

impl Action {
    /// Does this partition get an offset commit?
    pub fn commits(self) -> bool {
        matches!(self, Action::Reset | Action::NoChange | Action::Clamped)
    }

    /// Does this partition make the plan not applicable?
    pub fn fails(self) -> bool {
        matches!(
            self,
            Action::OutOfRange
                | Action::TopicMissing
                | Action::PartitionMissing
                | Action::RangeUnknown
                | Action::Recreated
                | Action::Untranslated
        )
    }
}

impl Plan {
    /// Per group: partitions whose offset changes, and the records reprocessed and skipped (the
    /// sums the plan reports for the partitions it commits), as the audit trail records them.
    pub fn group_changes(&self) -> Vec<crate::audit::GroupChange> {
        self.groups.iter().map(group_change).collect()
    }
}

/// One group's partitions whose offset changes, and the records it reprocesses and skips.
pub fn group_change(g: &GroupPlan) -> crate::audit::GroupChange {
    let commits = g.partitions.iter().filter(|p| p.action.commits());
    crate::audit::GroupChange {
        group_id: g.group_id.clone(),
        partitions_changed: g
            .partitions
            .iter()
            .filter(|p| matches!(p.action, Action::Reset | Action::Clamped))
            .count() as u64,
        records_reprocessed: commits.clone().map(|p| p.reprocess).sum(),
        records_skipped: commits.map(|p| p.skip).sum(),
    }
}

/// One partition of one group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionPlan {
    pub topic: String,
    pub partition: i32,
    /// The group's committed offset now.
    pub current: Option<i64>,
    /// The offset in the snapshot.
    pub snapshot_offset: Option<i64>,
    /// The offset that will be committed.
    pub target: Option<i64>,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    /// Records that will be processed again (moving back).
    pub reprocess: i64,
    /// Records that will be skipped (moving forward).
    pub skip: i64,
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Carried over from the snapshot when the target is the snapshot offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader_epoch: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    /// The topic's name in the snapshot, when this cluster names it otherwise (`--topic-map`,
    /// `--replication-policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_topic: Option<String>,
    /// How the snapshot's offset was carried to this cluster (another cluster only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<crate::mirror::Translation>,
}

/// One group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupPlan {
    pub group_id: String,
    /// The group's type in the snapshot.
    #[serde(default)]
    pub group_type: GroupType,
    /// The group's state now.
    pub state: GroupState,
    pub members: Vec<Member>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    /// Why the group's offsets cannot be changed now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// What this restore cannot bring back for this group (share and streams groups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub partitions: Vec<PartitionPlan>,
}

/// Totals for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub groups: usize,
    pub partitions: usize,
    pub changes: usize,
    pub reprocess: i64,
    pub skip: i64,
    pub failing: usize,
    pub blocked: usize,
    pub connectors: usize,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub snapshot_id: String,
    pub groups: Vec<GroupPlan>,
    pub connectors: Vec<ConnectorPlan>,
    pub summary: PlanSummary,
    /// No partition fails and no connector has a problem.
    pub applicable: bool,
    /// Some group or connector blocks the restore as things stand.
    pub blocked: bool,
    /// The reasons, one line each.
    pub problems: Vec<String>,
}

/// The note of a partition the group has an offset for but the targets do not name.
const OUTSIDE_TARGETS: &str =
    "no target for it (not in the snapshot, or outside the reset); left as it is";

fn plan_partition(
    group: &str,
    target_in: &crate::snapshot::model::PartitionOffset,
    live: &LiveView,
    carried: &Carried,
    current: Option<i64>,
    opts: &PlanOptions,
) -> PartitionPlan {
    let tp = (target_in.topic.clone(), target_in.partition);
    let marks = live.watermarks.get(&tp).copied().unwrap_or_default();
    let mut p = PartitionPlan {
        topic: tp.0.clone(),
        partition: tp.1,
        current,
        snapshot_offset: Some(target_in.offset),
        target: Some(target_in.offset),
        log_start: marks.log_start,
        log_end: marks.log_end,
        reprocess: 0,
        skip: 0,
        action: Action::Reset,
        note: None,
        leader_epoch: target_in.leader_epoch,
        metadata: target_in.metadata.clone(),
        source_topic: None,
        translation: None,
    };
    let decision = carried.decisions.get(&(group.to_string(), tp.clone()));
    if let Some((source, decision)) = decision {
        p.source_topic = (source != &tp.0).then(|| source.clone());
        p.translation = Some(decision.translation().clone());
    }
    if let Some((action, why)) = missing(live, &tp) {
        p.target = None;
        p.leader_epoch = None;
        p.action = if opts.skip_missing {
            Action::Skipped
        } else {
            action
        };
        let missing_here = match action {
            Action::TopicMissing => format!("topic {} does not exist on this cluster", tp.0),
            _ => format!("{}[{}] does not exist on this cluster", tp.0, tp.1),
        };
        p.note = Some(match (&p.source_topic, decision.is_some()) {
            (Some(source), _) => format!(
                "{missing_here} (the snapshot's {source}, mapped); check --topic-map and --replication-policy"
            ),
            (None, true) => format!(
                "{missing_here}; if a replicator renamed it, pass --replication-policy or --topic-map"
            ),
            (None, false) => why.to_string(),
        });
        return p;
    }
    if !retarget(&mut p, group, target_in, live, carried, opts) {
        return p;
    }
    if marks.log_start.is_none() || marks.log_end.is_none() {
        p.action = Action::RangeUnknown;
        p.note = Some(
            "the partition's log range could not be read, so the target cannot be checked; run the command again"
                .into(),
        );
        return p;
    }
    let Some(target) = fit_to_range(&mut p, target_in.offset, marks, opts.on_out_of_range) else {
        return p;
    };
    if let Some(cur) = current {
        p.reprocess = (cur - target).max(0);
        p.skip = (target - cur).max(0);
        if cur == target && p.action == Action::Reset {
            p.action = Action::NoChange;
        }
    }
    p
}

/// Why a partition of the snapshot has no live counterpart, if it has none.
fn missing(live: &LiveView, tp: &TopicPartition) -> Option<(Action, &'static str)> {
    match live.topics.get(&tp.0) {
        None => Some((Action::TopicMissing, "topic no longer exists")),
        Some(&n) if tp.1 >= n => Some((Action::PartitionMissing, "partition no longer exists")),
        _ => None,
    }
}

/// Applies what can change a partition's target before its range is checked: a topic recreated
/// since the snapshot (refused unless allowed or translated by time), and a translation by
/// record timestamp. Returns false when the partition's plan is final (refused).
fn retarget(
    p: &mut PartitionPlan,
    group: &str,
    target_in: &crate::snapshot::model::PartitionOffset,
    live: &LiveView,
    carried: &Carried,
    opts: &PlanOptions,
) -> bool {
    let topic = &target_in.topic;
    if let Some((_, decision)) = carried
        .decisions
        .get(&(group.to_string(), (topic.clone(), target_in.partition)))
    {
        // Another cluster: the old epoch belongs to the other log.
        p.leader_epoch = None;
        return match decision {
            Decision::Target {
                offset,
                translation,
            } => {
                p.target = Some(*offset);
                p.note = Some(translation.basis.clone());
                true
            }
            Decision::Refused {
                why,
                clamp_to: Some(to),
                ..
            } if opts.on_out_of_range == OutOfRange::Clamp => {
                p.target = Some(*to);
                p.action = Action::Clamped;
                p.note = Some(format!("{why} (clamped to {to})"));
                true
            }
            Decision::Refused { why, .. } => {
                p.target = None;
                p.action = Action::Untranslated;
                p.note = Some(why.clone());
                false
            }
            Decision::BeforeStart { start, why, .. } => {
                if opts.on_out_of_range == OutOfRange::Clamp {
                    p.target = Some(*start);
                    p.action = Action::Clamped;
                    p.note = Some(format!("{why}; clamped to {start}"));
                    true
                } else {
                    p.target = None;
                    p.action = Action::OutOfRange;
                    p.note = Some(format!(
                        "{why}; pass --on-out-of-range clamp to use {start}"
                    ));
                    false
                }
            }
        };
    }
    let translated = live
        .translated
        .get(&(group.to_string(), (topic.clone(), target_in.partition)));
    let recreated = match (&target_in.topic_id, live.topic_ids.get(topic)) {
        (Some(was), Some(now)) if was != now => Some(format!(
            "topic {topic} was deleted and created again since the snapshot (id {was}, now {now})"
        )),
        _ => None,
    };
    if let (Some(why), None) = (&recreated, translated) {
        if !opts.allow_recreated_topics {
            p.target = None;
            p.leader_epoch = None;
            p.action = Action::Recreated;
            p.note = Some(format!(
                "{why}: its old offsets point at other records; restore by time with --by-timestamp (snapshots taken with --with-timestamps) or pass --allow-recreated-topics"
            ));
            return false;
        }
        p.leader_epoch = None;
        p.note = Some(format!(
            "{why}; the old offset is used as it is (--allow-recreated-topics)"
        ));
    }
    if let Some((translated, note)) = translated {
        p.target = Some(*translated);
        p.note = Some(note.clone());
        // The epoch belongs to the old offset on the old log.
        p.leader_epoch = None;
    } else if live.by_timestamp {
        p.note = Some("no record timestamp in the snapshot: its offset is used as it is".into());
    }
    true
}

/// Checks the target against the live [log-start, log-end] range: out of range, the plan fails
/// there or clamps it, as asked. Returns the target to commit, or `None` when the partition's
/// plan fails.
fn fit_to_range(
    p: &mut PartitionPlan,
    snapshot_offset: i64,
    marks: crate::kafka::Watermarks,
    on_out_of_range: OutOfRange,
) -> Option<i64> {
    let target = p.target.unwrap_or(snapshot_offset);
    let below = marks.log_start.filter(|s| target < *s);
    let above = marks.log_end.filter(|e| target > *e);
    let Some(bound) = below.or(above) else {
        return Some(target);
    };
    let side = if below.is_some() {
        "before log-start"
    } else {
        "after log-end"
    };
    match on_out_of_range {
        OutOfRange::Fail => {
            p.action = Action::OutOfRange;
            p.note = Some(format!(
                "target {target} is {side} {bound}; pass --on-out-of-range clamp to use {bound}"
            ));
            None
        }
        OutOfRange::Clamp => {
            p.note = Some(format!("target {target} was {side}; clamped to {bound}"));
            p.target = Some(bound);
            p.leader_epoch = None;
            p.action = Action::Clamped;
            Some(bound)
        }
    }
}

/// A share group keeps acknowledgement state above its start offset, which setting the start
/// offset wipes: every record at or above the new start offset is delivered again, except the
/// ones never yet delivered. So what a change re-delivers is the records from the target to
/// log-end less the broker's current lag (an upper bound when moving forward). Partitions left
/// as they are keep their acknowledgements.
fn share_redelivery(partitions: &mut [PartitionPlan], lag: &BTreeMap<TopicPartition, i64>) {
    for p in partitions.iter_mut() {
        let changes = matches!(p.action, Action::Reset | Action::Clamped);
        let (Some(target), Some(end)) = (p.target, p.log_end) else {
            continue;
        };
        if !changes {
            continue;
        }
        let undelivered = lag
            .get(&(p.topic.clone(), p.partition))
            .copied()
            .unwrap_or(0);
        p.reprocess = ((end - target) - undelivered).max(0);
    }
}

/// What a restore of this group cannot bring back, said in the plan.
fn group_warnings(g: &GroupSnapshot, partitions: &[PartitionPlan]) -> Vec<String> {
    match g.group_type {
        GroupType::Share => {
            let acked_then: i64 = g
                .partitions
                .iter()
                .filter_map(|p| Some((p.log_end_offset? - p.offset - p.lag?).max(0)))
                .sum();
            let again: i64 = partitions.iter().map(|p| p.reprocess).sum();
            vec![format!(
                "share group {}: only the share-partition start offsets are restored, not the acknowledged, in-flight or delivery-count state of records above them; {again} record(s) at or above the new start offsets that were already acknowledged will be delivered again{}",
                g.group_id,
                if acked_then > 0 {
                    format!(", and the {acked_then} record(s) acknowledged above the start offsets when the snapshot was taken are not acknowledged after the restore")
                } else {
                    String::new()
                }
            )]
        }
        GroupType::Streams => vec![format!(
            "streams group {}: only the committed offsets of its input topics are restored; its state stores and changelog and repartition topics are not in the snapshot, so a stateful Streams application needs its own state reset (the application reset tool, or kafka-streams-groups --reset-offsets with its internal-topic options), which offset-vault does not do",
            g.group_id
        )],
        _ => Vec::new(),
    }
}

fn describe_members(members: &[Member]) -> String {
    let shown: Vec<String> = members
        .iter()
        .take(5)
        .map(|m| format!("{} on {}", m.client_id, m.host.trim_start_matches('/')))
        .collect();
    let more = members.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Builds the plan for the (already filtered) snapshot groups and connectors, on the snapshot's
/// own cluster.
pub fn build(
    snapshot_id: &str,
    groups: &[GroupSnapshot],
    connectors: &[ConnectorSnapshot],
    live: &LiveView,
    opts: &PlanOptions,
) -> Plan {
    build_carried(
        snapshot_id,
        groups,
        connectors,
        live,
        &Carried::default(),
        opts,
    )
}

/// Builds the plan for the (already filtered) snapshot groups and connectors, carried onto the
/// cluster `live` was read from as `carried` says (empty: the snapshot's own cluster).
pub fn build_carried(
    snapshot_id: &str,
    groups: &[GroupSnapshot],
    connectors: &[ConnectorSnapshot],
    live: &LiveView,
    carried: &Carried,
    opts: &PlanOptions,
) -> Plan {
    let connector_plans: Vec<ConnectorPlan> = connectors
        .iter()
        .map(|c| plan_connector(c, live, carried, opts))
        .collect();
    let mut problems = Vec::new();
    let group_plans: Vec<GroupPlan> = groups
        .iter()
        .map(|g| {
            let plan = plan_group(g, live, carried, opts, &connector_plans);
            problems.extend(group_problems(&plan));
            plan
        })
        .collect();
    for c in &connector_plans {
        problems.extend(
            c.problem
                .iter()
                .map(|p| format!("connector {}: {p}", c.name)),
        );
        problems.extend(c.blocked.iter().cloned());
    }
    let summary = summarize(&group_plans, &connector_plans);
    Plan {
        snapshot_id: snapshot_id.to_string(),
        applicable: summary.failing == 0 && connector_plans.iter().all(|c| c.problem.is_none()),
        blocked: summary.blocked > 0,
        groups: group_plans,
        connectors: connector_plans,
        summary,
        problems,
    }
}

/// One group's plan: its partitions, and whether its state blocks the change.
fn plan_group(
    g: &GroupSnapshot,
    live: &LiveView,
    carried: &Carried,
    opts: &PlanOptions,
    connector_plans: &[ConnectorPlan],
) -> GroupPlan {
    let lg = live
        .groups
        .get(&g.group_id)
        .cloned()
        .unwrap_or_else(|| LiveGroup {
            state: GroupState::Unknown("the coordinator did not describe it".into()),
            members: Vec::new(),
            offsets: BTreeMap::new(),
            share_lag: BTreeMap::new(),
        });
    let partitions = group_partitions(g, &lg, live, carried, opts);
    GroupPlan {
        group_id: g.group_id.clone(),
        group_type: g.group_type,
        warnings: group_warnings(g, &partitions),
        blocked: group_blocked(g, &lg, connector_plans),
        state: lg.state,
        members: lg.members,
        connector: g.connector.clone(),
        partitions,
    }
}

/// The plan of every partition of a group: the snapshot's, then those the group has an offset
/// for that the snapshot does not name (left as they are), in (topic, partition) order.
fn group_partitions(
    g: &GroupSnapshot,
    lg: &LiveGroup,
    live: &LiveView,
    carried: &Carried,
    opts: &PlanOptions,
) -> Vec<PartitionPlan> {
    let mut partitions: Vec<PartitionPlan> = g
        .partitions
        .iter()
        .map(|t| {
            let current = lg.offsets.get(&(t.topic.clone(), t.partition)).copied();
            plan_partition(&g.group_id, t, live, carried, current, opts)
        })
        .collect();
    let in_snapshot: BTreeSet<TopicPartition> = g
        .partitions
        .iter()
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    for ((topic, partition), offset) in &lg.offsets {
        if !in_snapshot.contains(&(topic.clone(), *partition)) {
            partitions.push(PartitionPlan {
                topic: topic.clone(),
                partition: *partition,
                current: Some(*offset),
                snapshot_offset: None,
                target: None,
                log_start: None,
                log_end: None,
                reprocess: 0,
                skip: 0,
                action: Action::NotInSnapshot,
                note: Some(OUTSIDE_TARGETS.into()),
                leader_epoch: None,
                metadata: None,
                source_topic: None,
                translation: None,
            });
        }
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    if g.group_type == GroupType::Share {
        share_redelivery(&mut partitions, &lg.share_lag);
    }
    partitions
}

/// Why a group's state blocks the change, if it does. A group that must be Empty but is not is
/// fine when a connector of the plan that will be stopped owns it.
fn group_blocked(
    g: &GroupSnapshot,
    lg: &LiveGroup,
    connector_plans: &[ConnectorPlan],
) -> Option<String> {
    let state = &lg.state;
    // Connectors whose restore stops them (or that are stopped already) own their group's safety.
    let handled = |c: &str| {
        connector_plans
            .iter()
            .any(|p| p.name == c && p.problem.is_none() && p.blocked.is_none())
    };
    let why = match state.may_change() {
        Ok(()) => return None,
        Err(why) => why,
    };
    // Stopping a connector cannot make an unknown state known.
    if state.is_uncertain() {
        return Some(format!(
            "group {}: {why}; nothing can be changed until its state is known (check the cluster and run the command again)",
            g.group_id
        ));
    }
    if g.connector.as_deref().is_some_and(handled) {
        return None;
    }
    let who = describe_members(&lg.members);
    let in_plan = |c: &str| connector_plans.iter().any(|p| p.name == c);
    Some(match &g.connector {
        Some(c) => format!(
            "group {} is {state} with {} member(s) ({who}); it belongs to connector {c}: {} to stop it while its offsets change, or stop it first (PUT /connectors/{c}/stop)",
            g.group_id,
            lg.members.len(),
            if in_plan(c) {
                "pass --stop-connectors".to_string()
            } else {
                format!("add --connector {c} --stop-connectors")
            }
        ),
        None => format!(
            "group {} is {state} with {} member(s) ({who}); stop those consumers and wait until the group is Empty, then run the command again",
            g.group_id,
            lg.members.len()
        ),
    })
}

/// The plan's problems from one group: each failing partition, then the block.
fn group_problems(g: &GroupPlan) -> Vec<String> {
    g.partitions
        .iter()
        .filter(|p| p.action.fails())
        .map(|p| {
            format!(
                "{} {}[{}]: {}",
                g.group_id,
                p.topic,
                p.partition,
                p.note.clone().unwrap_or_default()
            )
        })
        .chain(g.blocked.clone())
        .collect()
}

/// The totals of a plan.
fn summarize(group_plans: &[GroupPlan], connector_plans: &[ConnectorPlan]) -> PlanSummary {
    let all_parts = group_plans.iter().flat_map(|g| &g.partitions);
    let committed = all_parts.clone().filter(|p| p.action.commits());
    PlanSummary {
        groups: group_plans.len(),
        partitions: all_parts.clone().count(),
        changes: all_parts
            .clone()
            .filter(|p| matches!(p.action, Action::Reset | Action::Clamped))
            .count(),
        reprocess: committed.clone().map(|p| p.reprocess).sum(),
        skip: committed.map(|p| p.skip).sum(),
        failing: all_parts.filter(|p| p.action.fails()).count(),
        blocked: group_plans.iter().filter(|g| g.blocked.is_some()).count()
            + connector_plans
                .iter()
                .filter(|c| c.blocked.is_some())
                .count(),
        connectors: connector_plans.len(),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
pub(crate) mod tests;
