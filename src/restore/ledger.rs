//! A restore's plan, batch by batch. The groups to restore are read from the snapshot one at a
//! time and planned in batches of whole groups (at most `--batch-partitions` partitions, a
//! larger group alone); each batch's plan goes to a spool on the local disk and only the totals
//! stay in memory. Every later pass (the dry run's output, the review after connectors stop,
//! the apply, the read-back) walks the same batches again.
//!
//! The groups of the connectors being restored come first, in batch 0 with the connectors
//! themselves, so that a connector and its group are always planned, stopped and applied
//! together.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::plan::{self, Plan, PlanOptions, PlanSummary};
use super::review::{self, Moved};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{GroupListing, KafkaClient};
use crate::mirror::Carried;
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::repo::Opened;
use crate::spool::Spool;

/// The default of `--batch-partitions`.
pub const DEFAULT_BATCH_PARTITIONS: usize = 10_000;

/// How many problem lines the plan keeps; the rest are counted.
const MAX_PROBLEMS: usize = 200;

/// Which groups, topics and partitions of a snapshot a restore selects.
#[derive(Debug, Clone, Default)]
pub struct Pick {
    pub everything: bool,
    pub wanted: BTreeSet<String>,
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
}

impl Pick {
    /// The group cut to the selected partitions, or `None` when the group is not selected.
    pub fn cut(&self, mut g: GroupSnapshot) -> Option<GroupSnapshot> {
        if !self.everything && !self.wanted.contains(&g.group_id) {
            return None;
        }
        g.partitions.retain(|p| {
            (self.topics.is_empty() || self.topics.contains(&p.topic))
                && (self.partitions.is_empty() || self.partitions.contains(&p.partition))
        });
        Some(g)
    }
}

/// The groups a restore puts back, and where they come from.
#[derive(Debug, Clone)]
pub struct GroupSource {
    /// The groups of the restored connectors (planned in batch 0).
    pub front: Vec<GroupSnapshot>,
    pub rest: Rest,
}

/// The groups after the front ones.
#[derive(Debug, Clone)]
pub enum Rest {
    /// In memory (`reset`).
    Memory(Vec<GroupSnapshot>),
    /// In a spool of the temporary directory, in order (`--at`: the groups at the instant).
    Spooled(Spool<GroupSnapshot>),
    /// Read again from the verified snapshot on the local disk, one group at a time.
    Snapshot { opened: Arc<Opened>, pick: Pick },
}

impl GroupSource {
    /// Groups in memory, those of `front_ids` put first.
    pub fn memory(groups: Vec<GroupSnapshot>, front_ids: &BTreeSet<String>) -> Self {
        let (front, rest) = groups
            .into_iter()
            .partition(|g| front_ids.contains(&g.group_id));
        GroupSource {
            front,
            rest: Rest::Memory(rest),
        }
    }

    /// Every group in memory, in the batches' order.
    pub fn load(self) -> Result<Vec<GroupSnapshot>> {
        let mut all = self.front;
        match self.rest {
            Rest::Memory(g) => all.extend(g),
            Rest::Spooled(spool) => {
                for g in spool.reader()? {
                    all.push(g?);
                }
            }
            Rest::Snapshot { opened, pick } => {
                let front: BTreeSet<String> = all.iter().map(|g| g.group_id.clone()).collect();
                opened.for_each_group(&mut |g| {
                    if !front.contains(&g.group_id) {
                        all.extend(pick.cut(g));
                    }
                    Ok(())
                })?;
            }
        }
        Ok(all)
    }

    /// Every group, one at a time, in the batches' order: the front groups, then the others
    /// (for `--at`, which rewrites them).
    pub fn each(&self) -> impl Iterator<Item = Result<GroupSnapshot>> + Send + '_ {
        let mut walk = self.walk();
        let mut front = true;
        std::iter::from_fn(move || loop {
            match walk.next_group(front) {
                Ok(None) if front => front = false,
                next => return next.transpose(),
            }
        })
    }

    /// Walks the groups in the batches' order: the front groups, then the others.
    pub fn walk(&self) -> Walk<'_> {
        let front_ids = self.front.iter().map(|g| g.group_id.clone()).collect();
        let rest = match &self.rest {
            Rest::Memory(g) => RestWalk::Memory(g.iter()),
            Rest::Spooled(spool) => RestWalk::Spooled(spool.reader()),
            Rest::Snapshot { opened, pick } => {
                let stream = opened.groups();
                let slot = stream.error_slot();
                RestWalk::Snapshot {
                    stream,
                    slot,
                    pick,
                    front_ids,
                }
            }
        };
        Walk {
            front: self.front.iter(),
            rest,
        }
    }
}

/// See [`GroupSource::walk`].
pub struct Walk<'a> {
    front: std::slice::Iter<'a, GroupSnapshot>,
    rest: RestWalk<'a>,
}

enum RestWalk<'a> {
    Memory(std::slice::Iter<'a, GroupSnapshot>),
    /// The spool's reader, or why it could not be opened (the first read says it).
    Spooled(Result<crate::spool::SpoolIter<GroupSnapshot>>),
    Snapshot {
        stream: crate::snapshot::repo::GroupStream<'a>,
        slot: crate::snapshot::repo::ErrorSlot,
        pick: &'a Pick,
        front_ids: BTreeSet<String>,
    },
}

impl Walk<'_> {
    /// The next group of the front (`front` true) or of the rest; `None` at the end of it.
    fn next_group(&mut self, front: bool) -> Result<Option<GroupSnapshot>> {
        if front {
            return Ok(self.front.next().cloned());
        }
        match &mut self.rest {
            RestWalk::Memory(it) => Ok(it.next().cloned()),
            RestWalk::Spooled(Ok(it)) => it.next().transpose(),
            RestWalk::Spooled(Err(e)) => Err(Error::Internal(e.to_string())),
            RestWalk::Snapshot {
                stream,
                slot,
                pick,
                front_ids,
            } => loop {
                let Some(g) = stream.next() else {
                    return match slot.lock().expect("not poisoned").take() {
                        Some(e) => Err(e),
                        None => Ok(None),
                    };
                };
                if front_ids.contains(&g.group_id) {
                    continue;
                }
                if let Some(g) = pick.cut(g) {
                    return Ok(Some(g));
                }
            },
        }
    }

    /// The next batch of the first pass: batch 0 is the front (when `with_front`); the others
    /// are whole groups up to `budget` partitions. `None` when every group was handed out.
    fn next_by_budget(
        &mut self,
        first: bool,
        with_front: bool,
        budget: usize,
    ) -> Result<Option<Vec<GroupSnapshot>>> {
        if first && with_front {
            let mut batch = Vec::new();
            while let Some(g) = self.next_group(true)? {
                batch.push(g);
            }
            return Ok(Some(batch));
        }
        let mut batch = Vec::new();
        let mut partitions = 0;
        while partitions < budget.max(1) {
            let Some(g) = self.next_group(false)? else {
                break;
            };
            partitions += g.partitions.len().max(1);
            batch.push(g);
        }
        Ok((!batch.is_empty()).then_some(batch))
    }

    /// The next batch of a later pass: the same groups as the first pass put in it.
    fn next_sized(
        &mut self,
        index: usize,
        with_front: bool,
        size: usize,
    ) -> Result<Vec<GroupSnapshot>> {
        let front = index == 0 && with_front;
        let mut batch = Vec::with_capacity(size.min(1024));
        for _ in 0..size {
            match self.next_group(front)? {
                Some(g) => batch.push(g),
                None => {
                    return Err(Error::Internal(
                        "the snapshot's groups ended before the plan's batches did".into(),
                    ))
                }
            }
        }
        Ok(batch)
    }
}

/// The plan of a restore: its totals in memory, its groups batch by batch in a spool.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// The whole plan without its groups: snapshot, connectors, summary, applicability, block,
    /// problems (the first [`MAX_PROBLEMS`], then a count).
    pub head: Plan,
    /// One plan per batch, with the batch's groups (and, in batch 0, the connectors).
    batches: Spool<Plan>,
    /// How many groups each batch holds.
    sizes: Vec<usize>,
    /// Batch 0 holds the connectors and their groups.
    with_front: bool,
    /// Every group of the plan, in the batches' order; shared by the clones of the ledger (the
    /// outcome keeps one) and by a review that found the same groups.
    pub group_ids: std::sync::Arc<Vec<String>>,
    /// Some target carries the record timestamp (the undo snapshot keeps them too).
    pub with_timestamps: bool,
    /// Problems left out of `head.problems`.
    problems_left_out: usize,
}

impl Ledger {
    fn new(snapshot_id: &str, with_front: bool) -> Result<Self> {
        Ok(Ledger {
            head: Plan {
                snapshot_id: snapshot_id.to_string(),
                groups: Vec::new(),
                connectors: Vec::new(),
                summary: PlanSummary::default(),
                applicable: true,
                blocked: false,
                problems: Vec::new(),
            },
            batches: Spool::new()?,
            sizes: Vec::new(),
            with_front,
            group_ids: Default::default(),
            with_timestamps: false,
            problems_left_out: 0,
        })
    }

    /// A plan made whole in memory (`reset`), as one batch.
    pub fn single(plan: &Plan, groups: &[GroupSnapshot]) -> Result<Self> {
        let mut ledger = Ledger::new(&plan.snapshot_id, false)?;
        ledger.with_timestamps = has_timestamps(groups);
        ledger.add(plan.clone())?;
        ledger.seal()?;
        Ok(ledger)
    }

    /// Adds the plan of the next batch.
    fn add(&mut self, batch: Plan) -> Result<()> {
        let h = &mut self.head;
        let s = &batch.summary;
        h.summary.groups += s.groups;
        h.summary.partitions += s.partitions;
        h.summary.changes += s.changes;
        h.summary.reprocess += s.reprocess;
        h.summary.skip += s.skip;
        h.summary.failing += s.failing;
        h.summary.blocked += s.blocked;
        h.summary.connectors += s.connectors;
        h.applicable &= batch.applicable;
        h.blocked |= batch.blocked;
        h.connectors.extend(batch.connectors.iter().cloned());
        for p in &batch.problems {
            if h.problems.len() < MAX_PROBLEMS {
                h.problems.push(p.clone());
            } else {
                self.problems_left_out += 1;
            }
        }
        std::sync::Arc::make_mut(&mut self.group_ids)
            .extend(batch.groups.iter().map(|g| g.group_id.clone()));
        self.sizes.push(batch.groups.len());
        self.batches.push(&batch)
    }

    fn seal(&mut self) -> Result<()> {
        if self.problems_left_out > 0 {
            self.head.problems.push(format!(
                "... and {} more problem(s) like the above",
                self.problems_left_out
            ));
        }
        self.batches.seal()
    }

    /// The number of batches.
    pub fn batch_count(&self) -> usize {
        self.sizes.len()
    }

    /// The batches' plans, in order, one at a time.
    pub fn batches(&self) -> Result<impl Iterator<Item = Result<Plan>>> {
        self.batches.reader()
    }

    /// Every group's plan, in order, one at a time.
    pub fn groups(&self) -> Result<impl Iterator<Item = Result<plan::GroupPlan>>> {
        Ok(self.batches()?.flat_map(|batch| match batch {
            Ok(b) => b.groups.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }))
    }

    /// The whole plan in memory (`--watch`).
    pub fn whole(&self) -> Result<Plan> {
        let mut plan = self.head.clone();
        for batch in self.batches()? {
            plan.groups.extend(batch?.groups);
        }
        Ok(plan)
    }

    /// The audit trail's per-group counts, batch by batch.
    pub fn group_changes(&self) -> Result<Vec<crate::audit::GroupChange>> {
        let mut all = Vec::new();
        for batch in self.batches()? {
            all.extend(batch?.group_changes());
        }
        Ok(all)
    }
}

fn has_timestamps(groups: &[GroupSnapshot]) -> bool {
    groups.iter().any(|g| {
        g.partitions
            .iter()
            .any(|p| p.last_record_timestamp.is_some())
    })
}

/// What planning needs besides the groups.
pub struct Planning<'a> {
    pub kafka: &'a KafkaClient,
    pub clients: &'a [ConnectClient],
    pub connectors: &'a [ConnectorSnapshot],
    pub snapshot_id: &'a str,
    pub options: &'a PlanOptions,
    pub by_timestamp: bool,
    pub batch_partitions: usize,
    /// Onto another cluster: how topics are named and offsets translated there.
    pub mirror: Option<&'a crate::mirror::Mirror>,
}

/// A plan made batch by batch, and where each connector of it lives.
pub struct Planned {
    pub ledger: Ledger,
    pub connect_by_name: BTreeMap<String, ConnectClient>,
}

impl Planning<'_> {
    /// Plans one batch against the live state; batch 0 also plans the connectors. The groups'
    /// types come from `listing` when it is given (the cluster listed once for the pass), else
    /// from a listing of the cluster made for this batch.
    async fn batch(
        &self,
        index: usize,
        groups: &[GroupSnapshot],
        listing: Option<&BTreeMap<String, GroupListing>>,
    ) -> Result<(Plan, BTreeMap<String, ConnectClient>)> {
        let connectors = if index == 0 { self.connectors } else { &[] };
        // Onto another cluster: the cluster is read under its own names, and each partition is
        // translated from what was read.
        let renamed = self.mirror.map(|m| m.rename(groups)).transpose()?;
        let groups = renamed.as_ref().map_or(groups, |r| &r.groups[..]);
        let (view, by_name) = crate::live::read_listed(
            self.kafka,
            self.clients,
            groups,
            connectors,
            self.by_timestamp,
            listing,
        )
        .await?;
        let mut carried = Carried::default();
        if let (Some(m), Some(r)) = (self.mirror, &renamed) {
            carried.decisions = m.translate(self.kafka, r, &view).await?;
        }
        if let Some(m) = self.mirror.filter(|_| index == 0) {
            carried.connector_notes = m.connector_notes.clone();
        }
        let plan = plan::build_carried(
            self.snapshot_id,
            groups,
            connectors,
            &view,
            &carried,
            self.options,
        );
        Ok((plan, by_name))
    }

    /// The first pass: plans every batch and spools it. Changes nothing.
    ///
    /// The cluster's groups are listed once, before the first batch, for every batch's types:
    /// one listing per batch would read every group of the cluster as many times as there are
    /// batches, a time that grows with the square of the groups restored. The passes that
    /// precede changes ([`Self::again`]) list the cluster for each batch, just before it.
    pub async fn plan(&self, source: &GroupSource) -> Result<Planned> {
        let with_front = !self.connectors.is_empty();
        let mut ledger = Ledger::new(self.snapshot_id, with_front)?;
        let mut connect_by_name = BTreeMap::new();
        let mut walk = source.walk();
        let mut index = 0;
        let mut listing = None;
        while let Some(groups) =
            walk.next_by_budget(index == 0, with_front, self.batch_partitions)?
        {
            ledger.with_timestamps |= has_timestamps(&groups);
            if listing.is_none() && !groups.is_empty() {
                listing = Some(self.kafka.group_types_where(&|_| true).await?);
            }
            let (plan, by_name) = self.batch(index, &groups, listing.as_ref()).await?;
            if index == 0 {
                connect_by_name = by_name;
            }
            crate::progress::advance(plan.summary.partitions as u64);
            ledger.add(plan)?;
            index += 1;
        }
        if index == 0 {
            // No group at all: the connectors alone are one batch.
            let (plan, by_name) = self.batch(0, &[], None).await?;
            connect_by_name = by_name;
            ledger.add(plan)?;
        }
        ledger.seal()?;
        Ok(Planned {
            ledger,
            connect_by_name,
        })
    }

    /// A later pass: plans the batches of `reviewed` again, in order, against the live state now
    /// and compares each with the reviewed one. Returns the fresh plan, the offsets that moved
    /// (allowed) and the differences (not allowed); stops at the first batch that differs.
    pub async fn again(
        &self,
        source: &GroupSource,
        reviewed: &Ledger,
        relative_targets: bool,
        refuse_moved: bool,
    ) -> Result<Again> {
        let mut fresh = Ledger::new(self.snapshot_id, reviewed.with_front)?;
        fresh.with_timestamps = reviewed.with_timestamps;
        let mut moved = Vec::new();
        let mut walk = source.walk();
        for (index, old) in reviewed.batches()?.enumerate() {
            let old = old?;
            let groups = walk.next_sized(index, reviewed.with_front, reviewed.sizes[index])?;
            let (plan, _) = self.batch(index, &groups, None).await?;
            let mut cmp = review::compare(&old, &plan);
            if relative_targets {
                cmp.changes
                    .extend(review::stale_relative_targets(&cmp.moved));
            } else if refuse_moved {
                cmp.changes.extend(review::moved_since_review(&cmp.moved));
            }
            moved.extend(cmp.moved);
            if !cmp.changes.is_empty() {
                return Ok(Again {
                    fresh: None,
                    moved,
                    changes: cmp.changes,
                });
            }
            let mut plan = plan;
            review::carry_notes(&old, &mut plan);
            fresh.add(plan)?;
        }
        fresh.seal()?;
        if fresh.group_ids == reviewed.group_ids {
            fresh.group_ids = reviewed.group_ids.clone();
        }
        Ok(Again {
            fresh: Some(fresh),
            moved,
            changes: Vec::new(),
        })
    }
}

/// See [`Planning::again`].
pub struct Again {
    /// The plan now, when it is the same as the reviewed one.
    pub fresh: Option<Ledger>,
    pub moved: Vec<Moved>,
    pub changes: Vec<String>,
}

/// Compares a reviewed plan (`--from-plan`: its totals and connectors, and its groups in the
/// file's order) with a plan made now, batch by batch. Both list the groups in the same order
/// (the connectors' first, then by id), so they are compared in step; a group that is in one
/// and not at the same place in the other is a change.
pub fn compare_reviewed(
    reviewed: &Plan,
    reviewed_groups: &mut dyn Iterator<Item = Result<plan::GroupPlan>>,
    now: &Ledger,
) -> Result<review::Comparison> {
    let mut out = review::Comparison::default();
    for (index, batch) in now.batches()?.enumerate() {
        let batch = batch?;
        let mut slice = Plan {
            groups: Vec::with_capacity(batch.groups.len()),
            connectors: if index == 0 {
                reviewed.connectors.clone()
            } else {
                Vec::new()
            },
            ..reviewed.clone_head()
        };
        for g in &batch.groups {
            match reviewed_groups.next().transpose()? {
                Some(r) if r.group_id == g.group_id => slice.groups.push(r),
                Some(r) => {
                    out.changes.push(format!(
                        "the reviewed plan has group {} where the plan now has {}: the plans list other groups",
                        r.group_id, g.group_id
                    ));
                    return Ok(out);
                }
                None => out
                    .changes
                    .push(format!("group {}: new in the plan", g.group_id)),
            }
        }
        let cmp = review::compare(&slice, &batch);
        out.changes.extend(cmp.changes);
        out.moved.extend(cmp.moved);
    }
    for g in reviewed_groups {
        let g = g?;
        for p in g
            .partitions
            .iter()
            .filter(|p| p.action != plan::Action::NotInSnapshot)
        {
            out.changes.push(format!(
                "{} {}[{}]: no longer in the plan",
                g.group_id, p.topic, p.partition
            ));
        }
    }
    Ok(out)
}

impl Plan {
    /// The plan without its groups and connectors.
    pub fn clone_head(&self) -> Plan {
        Plan {
            snapshot_id: self.snapshot_id.clone(),
            groups: Vec::new(),
            connectors: Vec::new(),
            summary: self.summary.clone(),
            applicable: self.applicable,
            blocked: self.blocked,
            problems: self.problems.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::{GroupState, GroupType};
    use crate::snapshot::model::PartitionOffset;

    fn group(id: &str, partitions: i32) -> GroupSnapshot {
        GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: String::new(),
            group_type: GroupType::Classic,
            members: Vec::new(),
            connector: None,
            configs: BTreeMap::new(),
            partitions: (0..partitions)
                .map(|p| PartitionOffset::new("t", p, 1))
                .collect(),
        }
    }

    fn ids(batch: &[GroupSnapshot]) -> Vec<&str> {
        batch.iter().map(|g| g.group_id.as_str()).collect()
    }

    #[test]
    fn batches_hold_whole_groups_up_to_the_budget_and_the_front_first() {
        let groups = vec![
            group("a", 2),
            group("b", 2),
            group("big", 9),
            group("c", 1),
            group("conn-group", 3),
            group("d", 4),
        ];
        let front: BTreeSet<String> = ["conn-group".to_string()].into();
        // (case, with a connector in the plan, budget, expected batches)
        let cases: Vec<(&str, bool, usize, Vec<Vec<&str>>)> = vec![
            (
                "connector's group first, then whole groups up to 4 partitions",
                true,
                4,
                vec![
                    vec!["conn-group"],
                    vec!["a", "b"],
                    vec!["big"],
                    vec!["c", "d"],
                ],
            ),
            (
                "a budget of one partition: one group per batch",
                true,
                1,
                vec![
                    vec!["conn-group"],
                    vec!["a"],
                    vec!["b"],
                    vec!["big"],
                    vec!["c"],
                    vec!["d"],
                ],
            ),
            (
                "everything fits in one batch after the front",
                true,
                100,
                vec![vec!["conn-group"], vec!["a", "b", "big", "c", "d"]],
            ),
        ];
        // The same groups in memory, and their rest in a spool (as `--at` leaves them).
        let memory = GroupSource::memory(groups.clone(), &front);
        let mut spool = Spool::new().unwrap();
        let Rest::Memory(rest) = &memory.rest else {
            unreachable!()
        };
        for g in rest {
            spool.push(g).unwrap();
        }
        spool.seal().unwrap();
        let spooled = GroupSource {
            front: memory.front.clone(),
            rest: Rest::Spooled(spool),
        };
        let all: Vec<String> = groups.iter().map(|g| g.group_id.clone()).collect();
        for source in [&memory, &spooled] {
            let each: Vec<String> = source.each().map(|g| g.unwrap().group_id).collect();
            let mut want = vec!["conn-group".to_string()];
            want.extend(all.iter().filter(|g| *g != "conn-group").cloned());
            assert_eq!(each, want, "the front first, then the rest in order");
            let loaded: Vec<String> = source
                .clone()
                .load()
                .unwrap()
                .into_iter()
                .map(|g| g.group_id)
                .collect();
            assert_eq!(loaded, want);
        }
        for ((case, with_front, budget, want), source) in cases
            .into_iter()
            .flat_map(|c| [(c.clone(), &memory), (c, &spooled)])
        {
            let mut walk = source.walk();
            let mut got: Vec<Vec<String>> = Vec::new();
            let mut first = true;
            while let Some(b) = walk.next_by_budget(first, with_front, budget).unwrap() {
                got.push(ids(&b).into_iter().map(String::from).collect());
                first = false;
            }
            assert_eq!(got, want, "{case}");
            // A later pass cut by the sizes of the first gives the same batches.
            let mut again = source.walk();
            for (i, batch) in want.iter().enumerate() {
                let b = again.next_sized(i, with_front, batch.len()).unwrap();
                assert_eq!(&ids(&b), batch, "{case}: pass two, batch {i}");
            }
            assert!(
                again.next_sized(want.len(), with_front, 1).is_err(),
                "{case}"
            );
        }
    }
}
