//! The steps of a restore before anything changes: choose and verify the snapshot and select
//! what to restore from it ([`open`], store only), then guard the cluster and plan against its
//! live state ([`prepare`]). [`super::execute`] applies what they give.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::ledger::{self, GroupSource, Pick, Planned, Planning, Rest};
use super::plan;
use super::request::{RestoreRequest, Targets};
use super::review;
use super::secrets;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::KafkaClient;
use crate::snapshot::choose::{choose, Choice, Chosen};
use crate::snapshot::manifest::Manifest;
use crate::snapshot::model::{ConnectorSnapshot, GroupSnapshot};
use crate::snapshot::repo::{self, Opened};
use crate::store::Store;

/// A chosen and verified snapshot and the part of it to restore.
#[derive(Debug, Clone)]
pub struct Verified {
    pub chosen: Chosen,
    pub manifest: Manifest,
    /// The selected groups, read again from the verified snapshot batch by batch.
    pub source: GroupSource,
    pub connectors: Vec<ConnectorSnapshot>,
    /// What the choice of the base left to say (`--at`: connectors taken from a later
    /// snapshot, because the base predates them).
    pub notes: Vec<String>,
}

/// A verified snapshot, the part of it to restore, and the plan against the live state.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub chosen: Chosen,
    pub manifest: Manifest,
    /// Why this snapshot was chosen, in words.
    pub chosen_because: String,
    pub targets: Targets,
}

/// The connectors of the snapshot that the request selects, and which of its groups it does.
pub fn select(
    connectors: &[ConnectorSnapshot],
    req: &RestoreRequest,
) -> Result<(Vec<ConnectorSnapshot>, Pick)> {
    let everything = req.groups.is_empty() && req.connectors.is_empty();
    let mut selected = Vec::new();
    for name in &req.connectors {
        let c = connectors
            .iter()
            .find(|c| &c.name == name)
            .ok_or_else(|| Error::NotFound {
                what: "connector in the snapshot",
                name: name.clone(),
                hint: String::new(),
            })?;
        selected.push(c.clone());
    }
    if everything && req.topics.is_empty() {
        selected = connectors.to_vec();
    }
    let mut wanted: BTreeSet<String> = req.groups.iter().cloned().collect();
    wanted.extend(selected.iter().filter_map(|c| c.group_id.clone()));
    let pick = Pick {
        everything,
        wanted,
        topics: req.topics.clone(),
        partitions: req.partitions.clone(),
    };
    Ok((selected, pick))
}

/// Reads the snapshot's groups once: checks that every requested group is in it and that the
/// selection matches something, and keeps the groups of the selected connectors (they are
/// planned first, with their connectors). Holds one group at a time besides those.
fn survey(
    opened: &Opened,
    req: &RestoreRequest,
    connectors: &[ConnectorSnapshot],
    pick: &Pick,
) -> Result<Vec<GroupSnapshot>> {
    let front_ids: BTreeSet<&str> = connectors
        .iter()
        .filter_map(|c| c.group_id.as_deref())
        .collect();
    // With --at, a group the base lacks but would have captured was created after it: the
    // commit log gives it.
    let selection = &opened.manifest.meta.selection;
    let mut missing: BTreeSet<&str> = req
        .groups
        .iter()
        .map(String::as_str)
        .filter(|g| req.at.is_none() || !selection.covers_group(g))
        .collect();
    let mut front = Vec::new();
    let mut partitions = 0usize;
    opened.for_each_group(&mut |g| {
        missing.remove(g.group_id.as_str());
        if let Some(g) = pick.cut(g) {
            partitions += g.partitions.len();
            if front_ids.contains(g.group_id.as_str()) {
                front.push(g);
            }
        }
        Ok(())
    })?;
    if let Some(g) = missing.into_iter().next() {
        return Err(Error::NotFound {
            what: "consumer group in the snapshot",
            name: g.to_string(),
            hint: String::new(),
        });
    }
    if partitions == 0 && connectors.is_empty() && req.at.is_none() {
        return Err(Error::usage(
            "the selection matches nothing in the snapshot: check --group, --connector, --topic and --partition against `offset-vault show`",
        ));
    }
    Ok(front)
}

/// Chooses and verifies the snapshot and selects what to restore from it. Reads only the store:
/// a missing or corrupt snapshot fails before anything contacts the cluster.
pub async fn open(store: &Store, req: &RestoreRequest) -> Result<Verified> {
    let mut eligible = req.eligible.clone();
    eligible.groups = req.groups.clone();
    eligible.connectors = req.connectors.clone();
    let chosen = match (req.at, &req.choice) {
        (Some(at), Choice::Before(_)) => {
            crate::log::base::choose_base(store, at, &eligible).await?
        }
        // A reviewed `--at` plan names its base; "the log from its start" is no snapshot.
        (Some(_), Choice::Id(id)) if id == crate::log::base::LOG_START => {
            let manifest = crate::log::base::log_start_manifest(store)
                .await?
                .ok_or_else(|| Error::NotFound {
                    what: "commit-log archive",
                    name: store.url().to_string(),
                    hint: ": the reviewed plan's base is the log from its start".into(),
                })?;
            Chosen {
                manifest,
                because: "given by the reviewed plan (the log from its start)".into(),
                passed_over: Vec::new(),
            }
        }
        _ => choose(store, &req.choice, &eligible).await?,
    };
    let meta = &chosen.manifest.meta;
    if crate::log::base::is_log_start(meta) {
        // Before the first snapshot: no group and no connector in the base.
        let later = crate::log::base::connectors_from_later(store, meta, &req.connectors, &[]);
        let (connectors, notes) = later_connectors(later.await?);
        let manifest = chosen.manifest.clone();
        return Ok(Verified {
            chosen,
            manifest,
            source: GroupSource::memory(Vec::new(), &BTreeSet::new()),
            connectors,
            notes,
        });
    }
    let opened = repo::open_verified(store, &chosen.manifest).await?;
    let mut known = opened.connectors.clone();
    let mut notes = Vec::new();
    if req.at.is_some() {
        let later =
            crate::log::base::connectors_from_later(store, meta, &req.connectors, &known).await?;
        let (more, said) = later_connectors(later);
        known.extend(more);
        notes = said;
    }
    let (mut connectors, pick) = select(&known, req)?;
    let front = survey(&opened, req, &connectors, &pick)?;
    secrets::unseal(
        store,
        &opened.manifest,
        &opened.connectors,
        &mut connectors,
        req,
    )
    .await?;
    let manifest = opened.manifest.clone();
    Ok(Verified {
        chosen,
        manifest,
        source: GroupSource {
            front,
            rest: Rest::Snapshot {
                opened: Arc::new(opened),
                pick,
            },
        },
        connectors,
        notes,
    })
}

/// The connectors taken from later snapshots for `--at`, and a note on each.
fn later_connectors(
    later: Vec<(ConnectorSnapshot, String)>,
) -> (Vec<ConnectorSnapshot>, Vec<String>) {
    later
        .into_iter()
        .map(|(c, from)| {
            let note = format!(
                "connector {} is not in the base (created after it): its config and group are snapshot {from}'s",
                c.name
            );
            (c, note)
        })
        .unzip()
}

/// Guards the cluster and plans against the live state, batch by batch. Changes nothing. With a
/// reviewed plan (`--from-plan`), the plan must be for this cluster and the fresh plan must
/// match it.
pub async fn prepare(
    verified: Verified,
    kafka: &KafkaClient,
    clients: &[ConnectClient],
    req: &RestoreRequest,
) -> Result<Prepared> {
    let Verified {
        chosen,
        manifest,
        source,
        connectors,
        notes: _,
    } = verified;
    if manifest.meta.cluster_id != kafka.cluster_id() && !req.allow_other_cluster {
        return Err(Error::OtherCluster {
            id: manifest.meta.id.clone(),
            snapshot_cluster: manifest.meta.cluster_id.clone(),
            live_cluster: kafka.cluster_id().to_string(),
            bootstrap: kafka.bootstrap().to_string(),
        });
    }
    if let Some(file) = &req.reviewed {
        if file.body.cluster_id != kafka.cluster_id() {
            return Err(Error::OtherCluster {
                id: format!("plan for {}", file.body.snapshot_id),
                snapshot_cluster: file.body.cluster_id.clone(),
                live_cluster: kafka.cluster_id().to_string(),
                bootstrap: kafka.bootstrap().to_string(),
            });
        }
    }
    let mut options = req.plan.clone();
    if let Some(r) = options.recreate.as_mut() {
        r.encrypted_secrets = manifest
            .encrypted_secrets
            .as_ref()
            .map(|s| s.recipients.len());
    }
    let other_cluster = manifest.meta.cluster_id != kafka.cluster_id();
    let mut connectors = connectors;
    let mirror = match req.mirror.mirror(other_cluster, req.by_timestamp)? {
        Some(mut m) => {
            m.carry_connectors(&mut connectors)?;
            Some(Arc::new(m))
        }
        None => None,
    };
    let planning = Planning {
        kafka,
        clients,
        connectors: &connectors,
        snapshot_id: &manifest.meta.id,
        options: &options,
        by_timestamp: req.by_timestamp && mirror.is_none(),
        batch_partitions: req.batch_partitions,
        mirror: mirror.as_deref(),
    };
    let Planned {
        mut ledger,
        connect_by_name,
    } = planning.plan(&source).await?;
    let mut moved = Vec::new();
    if let Some(file) = &req.reviewed {
        let mut groups: Box<dyn Iterator<Item = Result<plan::GroupPlan>>> =
            match &req.reviewed_groups {
                Some(spool) => Box::new(spool.reader()?),
                None => Box::new(file.body.plan.groups.iter().cloned().map(Ok)),
            };
        let mut cmp = ledger::compare_reviewed(&file.body.plan, &mut groups, &ledger)?;
        if req.refuse_moved {
            cmp.changes.extend(review::moved_since_review(&cmp.moved));
        }
        if !cmp.is_same() {
            return Err(Error::PlanChanged {
                changes: cmp.changes,
            });
        }
        moved = cmp.moved;
        // The reviewed targets are applied; the fresh plan shows the current values.
        ledger.head.snapshot_id = file.body.plan.snapshot_id.clone();
    }
    Ok(Prepared {
        chosen_because: chosen.because.clone(),
        chosen,
        targets: Targets {
            source,
            connectors,
            ledger,
            moved,
            connect_by_name,
            undo_format: manifest.format,
            mirror,
        },
        manifest,
    })
}
