//! The base of an instant (`--at TIME`): the newest snapshot at or before it that holds, or
//! would have captured, what is asked for; or, before the first such snapshot, the log itself
//! from its start. Also the groups and connectors the base lacks because they were created
//! after it: a group is then replayed from an empty state, and a connector's config (which the
//! commit log does not hold) is taken from the oldest later snapshot that has it.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::archive::Lane;
use crate::error::{Error, Result};
use crate::kafka::GroupType;
use crate::log::record::{GroupKind, LogRecord};
use crate::log::replay::Timed;
use crate::snapshot::choose::{choose, Choice, Chosen, Eligible};
use crate::snapshot::manifest::{Manifest, Summary};
use crate::snapshot::model::{
    ConnectorSnapshot, GroupSnapshot, GroupState, Selection, SnapshotMeta, FORMAT_VERSION,
};
use crate::snapshot::repo::{self, DayRange};
use crate::store::Store;

/// The id of the base "the log from its start", used before the first snapshot.
pub const LOG_START: &str = "log-start";

/// Whether a base is the log from its start rather than a snapshot.
pub fn is_log_start(meta: &SnapshotMeta) -> bool {
    meta.id == LOG_START
}

/// The base that stands for the log from its start: no groups, no connectors, created at the
/// epoch, selecting everything (a group absent from it had committed nothing, since nothing was
/// before offset 0). Its cluster is the archive's. `None` when the store has no archive.
pub async fn log_start_manifest(store: &Store) -> Result<Option<Manifest>> {
    let Some(first) = super::archive::first_manifest(store, Lane::Offsets).await? else {
        return Ok(None);
    };
    Ok(Some(Manifest {
        format_version: FORMAT_VERSION.into(),
        meta: SnapshotMeta {
            id: LOG_START.into(),
            created_at: DateTime::UNIX_EPOCH,
            cluster_id: first.meta.cluster_id,
            selection: Selection {
                all_groups: true,
                all_connectors: true,
                ..Default::default()
            },
            ..Default::default()
        },
        format: Default::default(),
        summary: Summary::default(),
        content_sha256: String::new(),
        files: Vec::new(),
        encrypted_secrets: None,
    }))
}

/// Chooses the base of `at`: the newest complete snapshot at or before it that holds or selects
/// the wanted groups and connectors; when there is none, the log from its start (whether the
/// archive really begins there is checked per partition by the reconstruction). When the store
/// has no archive either, the error names the earliest instant a snapshot could serve.
pub async fn choose_base(store: &Store, at: DateTime<Utc>, eligible: &Eligible) -> Result<Chosen> {
    let eligible = Eligible {
        covering: true,
        ..eligible.clone()
    };
    match choose(store, &Choice::Before(at), &eligible).await {
        Err(Error::NotFound {
            what: "snapshot",
            name,
            hint,
        }) => match log_start_manifest(store).await? {
            Some(manifest) => Ok(Chosen {
                manifest,
                because: format!(
                    "no {} created at or before {}: the base is the log from its start (offset 0 of __consumer_offsets)",
                    eligible.describe(),
                    super::instant::millis(at)
                ),
                passed_over: Vec::new(),
            }),
            None => Err(Error::NotFound {
                what: "snapshot",
                name,
                hint: format!("{hint}{}", earliest_hint(store, &eligible).await),
            }),
        },
        other => other,
    }
}

/// When the oldest eligible snapshot was taken: the earliest instant `--at` can serve from a
/// snapshot. Read only to word an error.
pub async fn earliest(store: &Store, eligible: &Eligible) -> Option<(DateTime<Utc>, String)> {
    let listed = repo::list(store, DayRange::default()).await.ok()?;
    listed
        .into_iter()
        .filter_map(|l| l.manifest)
        .filter(|m| eligible.accepts(m))
        .map(|m| (m.meta.created_at, m.meta.id))
        .min()
}

/// The earliest instant in words, for an error's hint.
pub async fn earliest_hint(store: &Store, eligible: &Eligible) -> String {
    match earliest(store, eligible).await {
        Some((t, id)) => format!(
            "; the earliest instant that can be served is {} (snapshot {id})",
            super::instant::millis(t)
        ),
        None => "; no snapshot holds it yet: take one (offset-vault snapshot) and keep offset-vault follow running".into(),
    }
}

/// An empty group as the base of a group that did not exist when the base was taken: no
/// offsets, state `NotFound`. Its type is what its records in the log say (`records`), a
/// classic group when they say nothing. Pure.
pub fn newcomer(group: &str, records: &[&Timed], connector: Option<String>) -> GroupSnapshot {
    let kind = records.iter().rev().find_map(|t| match &t.record {
        LogRecord::GroupMetadata {
            group: g,
            kind,
            deleted: false,
        } if g == group => Some(kind.clone()),
        _ => None,
    });
    let (group_type, protocol_type) = match kind {
        Some(GroupKind::Consumer) => (GroupType::Consumer, "consumer".to_string()),
        Some(GroupKind::Streams) => (GroupType::Streams, "streams".to_string()),
        Some(GroupKind::Share) => (GroupType::Share, "share".to_string()),
        Some(GroupKind::Classic { protocol_type }) => {
            (GroupType::Classic, protocol_type.unwrap_or_default())
        }
        None => (GroupType::Classic, String::new()),
    };
    GroupSnapshot {
        group_id: group.to_string(),
        state: GroupState::NotFound,
        protocol_type,
        group_type,
        members: Vec::new(),
        connector,
        configs: Default::default(),
        partitions: Vec::new(),
    }
}

/// The groups whose offsets `records` move, that the base's selection covers and that are not
/// among `known`: the groups born after the base. Pure.
pub fn discovered(
    records: &[&Timed],
    selection: &Selection,
    known: &BTreeSet<&str>,
) -> Vec<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    for t in records {
        if let LogRecord::OffsetCommit { group, .. } = &t.record {
            if !known.contains(group.as_str()) && selection.covers_group(group) {
                out.insert(group.clone());
            }
        }
    }
    out.into_iter().collect()
}

/// The named connectors the base does not hold (created after it), from the oldest complete
/// snapshot taken after the base that has each: their config, type and group. A source
/// connector's offsets are cleared: the archive of Connect's offsets topic gives them, replayed
/// from nothing. Refused when the base would not have captured one (it is then not a connector
/// created after the base), or when no later snapshot has it. Returns each with the id of the
/// snapshot it came from.
pub async fn connectors_from_later(
    store: &Store,
    base: &SnapshotMeta,
    names: &[String],
    have: &[ConnectorSnapshot],
) -> Result<Vec<(ConnectorSnapshot, String)>> {
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !have.iter().any(|c| &c.name == *n))
        .collect();
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let mut listed: Vec<Manifest> = repo::list(store, DayRange::default())
        .await?
        .into_iter()
        .filter_map(|l| l.manifest)
        .filter(|m| m.meta.created_at > base.created_at && !m.meta.is_partial())
        .collect();
    listed.sort_by_key(|m| m.meta.created_at);
    let mut out = Vec::new();
    for name in missing {
        if !base.selection.covers_connector(name) {
            return Err(Error::NotFound {
                what: "connector in the snapshot",
                name: name.clone(),
                hint: format!(
                    " {}: its selection would not have captured it; name a snapshot that holds it",
                    base.id
                ),
            });
        }
        let Some(m) = listed
            .iter()
            .find(|m| m.summary.connector_names.contains(name))
        else {
            return Err(Error::NotFound {
                what: "connector in a snapshot",
                name: name.clone(),
                hint: format!(
                    ": it is not in the base {} (created after it), and the commit log does not hold a connector's config; take a snapshot now (offset-vault snapshot --connector {name}), then try again",
                    base.id
                ),
            });
        };
        let opened = repo::open_verified(store, m).await?;
        let mut c = opened
            .connectors
            .into_iter()
            .find(|c| &c.name == name)
            .ok_or_else(|| {
                Error::Internal(format!("snapshot {} lists {name} but lacks it", m.meta.id))
            })?;
        if c.connector_type == "source" {
            c.offsets = Some(Vec::new());
            c.offsets_unavailable = None;
        }
        out.push((c, m.meta.id.clone()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::testing::commit;

    fn metadata(group: &str, kind: GroupKind) -> LogRecord {
        LogRecord::GroupMetadata {
            group: group.into(),
            kind,
            deleted: false,
        }
    }

    #[test]
    fn a_newcomer_takes_its_type_from_its_records() {
        let records = [
            Timed::new(commit("g", 0, 5, 10), 10),
            Timed::new(metadata("g", GroupKind::Consumer), 11),
            Timed::new(metadata("other", GroupKind::Streams), 12),
        ];
        let refs: Vec<&Timed> = records.iter().collect();
        let g = newcomer("g", &refs, None);
        assert_eq!(g.group_type, GroupType::Consumer);
        assert_eq!(g.state, GroupState::NotFound);
        assert!(g.partitions.is_empty());
        let simple = newcomer("simple", &refs, Some("sink".into()));
        assert_eq!(simple.group_type, GroupType::Classic);
        assert_eq!(simple.protocol_type, "");
        assert_eq!(simple.connector.as_deref(), Some("sink"));
    }

    #[test]
    fn only_covered_unknown_groups_are_discovered() {
        let records = [
            Timed::new(commit("known", 0, 5, 10), 10),
            Timed::new(commit("pay-new", 0, 5, 11), 11),
            Timed::new(commit("other-new", 0, 5, 12), 12),
            Timed::new(commit("pay-new", 1, 6, 13), 13),
        ];
        let refs: Vec<&Timed> = records.iter().collect();
        let known: BTreeSet<&str> = ["known"].into();
        let all = Selection {
            all_groups: true,
            ..Default::default()
        };
        assert_eq!(discovered(&refs, &all, &known), ["other-new", "pay-new"]);
        let pattern = Selection {
            group_pattern: Some("pay-.*".into()),
            ..Default::default()
        };
        assert_eq!(discovered(&refs, &pattern, &known), ["pay-new"]);
        let named = Selection {
            groups: vec!["known".into()],
            ..Default::default()
        };
        assert!(discovered(&refs, &named, &known).is_empty());
    }
}
