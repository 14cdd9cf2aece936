//! The prune plan: the snapshots of a store, grouped, each group run through the policy, and
//! incomplete leftovers past their grace period. Pure: a listing in, a plan out.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::policy::{apply, refusal, Candidate, Decision, Policy};
use crate::error::{Error, Result};
use crate::snapshot::manifest::{parse_id, Manifest, MANIFEST_FILE};
use crate::snapshot::repo::Listed;

/// What snapshots are grouped by before the policy applies to each group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// The Kafka cluster id.
    Cluster,
    /// The snapshot kind (snapshot, undo, import).
    Kind,
    /// What was selected (groups, pattern, connectors, topics).
    Selection,
    /// The tags.
    Tags,
}

/// Parses `--group-by`: a comma-separated list of `cluster`, `kind`, `selection`, `tags`, or
/// an empty string for one group holding every snapshot.
pub fn parse_group_by(text: &str) -> Result<Vec<GroupBy>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let g = match part {
            "cluster" => GroupBy::Cluster,
            "kind" => GroupBy::Kind,
            "selection" => GroupBy::Selection,
            "tags" => GroupBy::Tags,
            other => {
                return Err(Error::usage(format!(
                    "--group-by {text}: unknown field {other:?}; use a comma-separated list of cluster, kind, selection, tags (or '' for no grouping)"
                )))
            }
        };
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out.sort();
    Ok(out)
}

/// The value of each grouping field for one manifest.
fn group_key(m: &Manifest, by: &[GroupBy]) -> BTreeMap<String, String> {
    by.iter()
        .map(|g| match g {
            GroupBy::Cluster => ("cluster".to_string(), m.meta.cluster_id.clone()),
            GroupBy::Kind => ("kind".to_string(), m.meta.kind.to_string()),
            GroupBy::Selection => (
                "selection".to_string(),
                serde_json::to_string(&m.meta.selection).unwrap_or_default(),
            ),
            GroupBy::Tags => (
                "tags".to_string(),
                m.meta
                    .tags
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        })
        .collect()
}

/// One group of snapshots and what the policy decided for each, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedGroup {
    pub key: BTreeMap<String, String>,
    pub decisions: Vec<Decision>,
    /// Why nothing of this group is deleted although the policy removes snapshots of it: the
    /// policy keeps none of them (restic's "refusing to delete last snapshot of snapshot
    /// group"). `None` when the group is pruned as decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl PlannedGroup {
    /// The snapshots that will be deleted: none of a refused group.
    fn removed(&self) -> impl Iterator<Item = &Decision> {
        self.decisions
            .iter()
            .filter(|d| !d.keep && self.refused.is_none())
    }
}

/// What happens to a snapshot folder without a readable manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftoverAction {
    /// Incomplete (no manifest) and older than the grace period: removed.
    Remove,
    /// Incomplete but younger than the grace period: it may be a snapshot being written.
    KeepYoung,
    /// A manifest that cannot be read (damaged, or from a newer version): never touched.
    LeaveAlone,
}

/// A snapshot folder without a readable manifest.
#[derive(Debug, Clone, Serialize)]
pub struct Leftover {
    pub id: String,
    /// The time in the id, when the id is one.
    pub time: Option<DateTime<Utc>>,
    pub action: LeftoverAction,
    pub why: String,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneSummary {
    pub groups: usize,
    pub keep: usize,
    pub remove: usize,
    pub incomplete_remove: usize,
    pub incomplete_keep: usize,
    pub left_alone: usize,
    /// Groups of which the policy keeps nothing, left whole.
    pub refused_groups: usize,
    /// Snapshots of refused groups (kept, although the policy would remove them).
    pub refused_snapshots: usize,
}

/// Everything `prune` would do.
#[derive(Debug, Clone, Serialize)]
pub struct PrunePlan {
    pub policy: String,
    pub group_by: Vec<GroupBy>,
    pub groups: Vec<PlannedGroup>,
    pub leftovers: Vec<Leftover>,
    pub summary: PruneSummary,
}

impl PrunePlan {
    /// Ids of the snapshots to delete: complete ones the policy removes, then incomplete ones.
    pub fn to_delete(&self) -> Vec<&str> {
        let complete = self
            .groups
            .iter()
            .flat_map(PlannedGroup::removed)
            .map(|d| d.id.as_str());
        let leftovers = self
            .leftovers
            .iter()
            .filter(|l| l.action == LeftoverAction::Remove)
            .map(|l| l.id.as_str());
        complete.chain(leftovers).collect()
    }

    /// The groups refused because the policy keeps none of their snapshots.
    pub fn refused(&self) -> impl Iterator<Item = &PlannedGroup> {
        self.groups.iter().filter(|g| g.refused.is_some())
    }
}

fn leftover(l: &Listed, grace: Duration, now: DateTime<Utc>) -> Leftover {
    let time = parse_id(&l.id).map(|(t, _)| t);
    let has_manifest = l
        .files
        .iter()
        .any(|f| f.key.rsplit('/').next() == Some(MANIFEST_FILE));
    let problem = l.problem.clone().unwrap_or_default();
    let (action, why) = match time {
        _ if has_manifest => (
            LeftoverAction::LeaveAlone,
            format!("{problem}; left alone (check it with `offset-vault verify`)"),
        ),
        None => (
            LeftoverAction::LeaveAlone,
            "no manifest and the folder name is not a snapshot id; left alone".to_string(),
        ),
        Some(t) if now - t > grace => (
            LeftoverAction::Remove,
            "incomplete (no manifest), older than the grace period".to_string(),
        ),
        Some(_) => (
            LeftoverAction::KeepYoung,
            "incomplete (no manifest), within the grace period: it may still be being written"
                .to_string(),
        ),
    };
    Leftover {
        id: l.id.clone(),
        time,
        action,
        why,
    }
}

/// Builds the plan. `grace` is how old an incomplete snapshot must be to be removed; a group of
/// which the policy keeps nothing is refused unless `allow_empty_group`.
pub fn build(
    listed: &[Listed],
    policy: &Policy,
    group_by: &[GroupBy],
    grace: Duration,
    allow_empty_group: bool,
    now: DateTime<Utc>,
) -> Result<PrunePlan> {
    if policy.is_empty() {
        return Err(Error::usage(
            "no retention policy: pass at least one --keep-* option (e.g. --keep-daily 7); prune never removes everything by default",
        ));
    }
    let mut grouped: BTreeMap<BTreeMap<String, String>, Vec<Candidate>> = BTreeMap::new();
    let mut leftovers = Vec::new();
    for l in listed {
        match &l.manifest {
            Some(m) => grouped
                .entry(group_key(m, group_by))
                .or_default()
                .push(Candidate {
                    id: m.meta.id.clone(),
                    time: m.meta.created_at,
                    tags: m.meta.tags.clone(),
                }),
            None => leftovers.push(leftover(l, grace, now)),
        }
    }
    let groups: Vec<PlannedGroup> = grouped
        .into_iter()
        .map(|(key, candidates)| {
            let decisions = apply(&candidates, policy, now);
            PlannedGroup {
                key,
                refused: refusal(&decisions, allow_empty_group),
                decisions,
            }
        })
        .collect();
    leftovers.sort_by(|a, b| b.id.cmp(&a.id));
    let removed = groups.iter().flat_map(PlannedGroup::removed).count();
    let all = groups.iter().map(|g| g.decisions.len()).sum::<usize>();
    let refused: Vec<&PlannedGroup> = groups.iter().filter(|g| g.refused.is_some()).collect();
    let count = |a: LeftoverAction| leftovers.iter().filter(|l| l.action == a).count();
    let summary = PruneSummary {
        groups: groups.len(),
        keep: all - removed,
        remove: removed,
        incomplete_remove: count(LeftoverAction::Remove),
        incomplete_keep: count(LeftoverAction::KeepYoung),
        left_alone: count(LeftoverAction::LeaveAlone),
        refused_groups: refused.len(),
        refused_snapshots: refused.iter().map(|g| g.decisions.len()).sum(),
    };
    Ok(PrunePlan {
        policy: policy.describe(),
        group_by: group_by.to_vec(),
        groups,
        leftovers,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::manifest::{Format, Summary};
    use crate::snapshot::model::{Selection, SnapshotKind, SnapshotMeta, FORMAT_VERSION};
    use crate::store::Object;
    use chrono::TimeZone;

    fn at(day: u32, hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2027, 1, day, hour, 0, 0).unwrap()
    }

    fn complete(time: DateTime<Utc>, kind: SnapshotKind, groups: &[&str]) -> Listed {
        let mut m = Manifest {
            format_version: FORMAT_VERSION.into(),
            meta: SnapshotMeta {
                created_at: time,
                cluster_id: "c1".into(),
                kind,
                selection: Selection {
                    groups: groups.iter().map(|g| g.to_string()).collect(),
                    ..Default::default()
                },
                ..Default::default()
            },
            format: Format::Json,
            summary: Summary::default(),
            content_sha256: String::new(),
            files: vec![],
            encrypted_secrets: None,
        };
        m.assign_id();
        Listed {
            id: m.meta.id.clone(),
            folder: "date=2027-01-01".into(),
            manifest: Some(m),
            problem: None,
            signature: crate::sign::Verdict::Unsigned,
            files: vec![],
        }
    }

    fn incomplete(id: &str, with_manifest: bool) -> Listed {
        let mut files = vec![Object {
            key: format!("snapshots/date=2027-01-01/{id}/offsets.json"),
            size: 1,
        }];
        if with_manifest {
            files.push(Object {
                key: format!("snapshots/date=2027-01-01/{id}/{MANIFEST_FILE}"),
                size: 1,
            });
        }
        Listed {
            id: id.into(),
            folder: "date=2027-01-01".into(),
            manifest: None,
            signature: crate::sign::Verdict::Unsigned,
            problem: Some(if with_manifest {
                "unreadable manifest: bad".into()
            } else {
                "incomplete: no manifest".into()
            }),
            files,
        }
    }

    #[test]
    fn groups_do_not_compete_and_leftovers_follow_the_grace_period() {
        use SnapshotKind::*;
        let listed = vec![
            complete(at(10, 12), Snapshot, &["a"]),
            complete(at(10, 11), Snapshot, &["a"]),
            complete(at(10, 10), Snapshot, &["b"]),
            complete(at(10, 9), Undo, &["a"]),
            complete(at(10, 8), Undo, &["a"]),
            incomplete("20270108T000000.000Z-0123456789abcdef", false),
            incomplete("20270110T115900.000Z-0123456789abcdef", false),
            incomplete("20270101T000000.000Z-fedcba9876543210", true),
            incomplete("not-an-id", false),
        ];
        let policy = Policy {
            daily: super::super::policy::Count::Upto(1),
            ..Default::default()
        };
        let now = at(10, 12);
        let by = parse_group_by("cluster,kind,selection").unwrap();
        let plan = build(&listed, &policy, &by, Duration::days(1), false, now).unwrap();
        // (group a snapshots, group b, group a undo): one daily each.
        assert_eq!(plan.summary.groups, 3);
        assert_eq!(plan.summary.keep, 3);
        assert_eq!(plan.summary.remove, 2);
        let removed: Vec<&str> = plan.to_delete();
        assert_eq!(removed.len(), 3);
        assert!(removed.contains(&listed[1].id.as_str()));
        assert!(removed.contains(&listed[4].id.as_str()));
        assert!(removed.contains(&"20270108T000000.000Z-0123456789abcdef"));
        let action = |id: &str| plan.leftovers.iter().find(|l| l.id == id).unwrap().action;
        assert_eq!(
            action("20270110T115900.000Z-0123456789abcdef"),
            LeftoverAction::KeepYoung
        );
        assert_eq!(
            action("20270101T000000.000Z-fedcba9876543210"),
            LeftoverAction::LeaveAlone
        );
        assert_eq!(action("not-an-id"), LeftoverAction::LeaveAlone);

        // No grouping: the five compete for one daily slot.
        let plan = build(&listed, &policy, &[], Duration::days(1), false, now).unwrap();
        assert_eq!((plan.summary.groups, plan.summary.keep), (1, 1));
    }

    #[test]
    fn a_group_the_policy_would_empty_is_refused_and_the_others_are_pruned() {
        use SnapshotKind::*;
        let tagged = |mut l: Listed, k: &str, v: &str| {
            let m = l.manifest.as_mut().unwrap();
            m.meta.tags.insert(k.into(), v.into());
            m.assign_id();
            l.id = m.meta.id.clone();
            l
        };
        let listed = vec![
            tagged(complete(at(10, 12), Snapshot, &["a"]), "env", "prod"),
            complete(at(10, 11), Snapshot, &["a"]),
            complete(at(10, 10), Snapshot, &["b"]),
            complete(at(10, 9), Snapshot, &["b"]),
        ];
        let mut policy = Policy::default();
        policy.set("keep-tag", "env=prod").unwrap();
        let by = parse_group_by("cluster,kind,selection").unwrap();
        let now = at(10, 12);
        // (allow_empty_group, refused groups, deleted ids)
        let cases = [
            (false, 1, vec![listed[1].id.as_str()]),
            (
                true,
                0,
                vec![
                    listed[1].id.as_str(),
                    listed[2].id.as_str(),
                    listed[3].id.as_str(),
                ],
            ),
        ];
        for (allow, refused_groups, deleted) in cases {
            let plan = build(&listed, &policy, &by, Duration::days(1), allow, now).unwrap();
            let mut got = plan.to_delete();
            got.sort();
            let mut want = deleted.clone();
            want.sort();
            assert_eq!(got, want, "allow {allow}");
            assert_eq!(plan.summary.refused_groups, refused_groups, "allow {allow}");
            assert_eq!(plan.summary.remove, deleted.len(), "allow {allow}");
            assert_eq!(plan.summary.keep, 4 - deleted.len(), "allow {allow}");
        }
        let plan = build(&listed, &policy, &by, Duration::days(1), false, now).unwrap();
        let refused: Vec<&PlannedGroup> = plan.refused().collect();
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].key["selection"].contains("\"b\""),
            "{:?}",
            refused[0].key
        );
        let why = refused[0].refused.as_deref().unwrap();
        assert!(
            why.contains("--allow-empty-group") && why.contains("2 snapshot(s)"),
            "{why}"
        );
        assert_eq!(plan.summary.refused_snapshots, 2);
    }

    #[test]
    fn an_empty_policy_is_refused() {
        let err = build(
            &[],
            &Policy::default(),
            &[],
            Duration::days(1),
            false,
            at(1, 0),
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        assert!(err.to_string().contains("--keep-"), "{err}");
    }

    #[test]
    fn group_by_parses_known_fields_only() {
        let cases: [(&str, Option<Vec<GroupBy>>); 5] = [
            ("", Some(vec![])),
            ("kind", Some(vec![GroupBy::Kind])),
            (
                "selection, cluster,cluster",
                Some(vec![GroupBy::Cluster, GroupBy::Selection]),
            ),
            ("tags,kind", Some(vec![GroupBy::Kind, GroupBy::Tags])),
            ("host", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_group_by(text).ok(), want, "{text:?}");
        }
    }
}
