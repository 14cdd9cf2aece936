//! Group requests over the direct connection: listing with types, committed offsets of many
//! groups per request (OffsetFetch v8+), share-group start offsets (read and set), share-group
//! descriptions, and group configs.

use std::collections::BTreeMap;

use bytes::{Buf, Bytes};
use futures::stream::{self, StreamExt};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kafka_protocol::messages::{
    alter_share_group_offsets_request as alter, describe_configs_request as dc,
    describe_share_group_offsets_request as dsgo, offset_commit_request as commit,
    AlterShareGroupOffsetsRequest, ApiKey, ConsumerGroupDescribeRequest, DescribeConfigsRequest,
    DescribeGroupsRequest, DescribeShareGroupOffsetsRequest, GroupId, ListGroupsRequest,
    OffsetCommitRequest, OffsetFetchRequest, ShareGroupDescribeRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::types::RDKafkaErrorCode;

use super::{broker_error, code, Cluster};
use crate::error::{Error, Result};
use crate::group_model::{GroupMember, GroupOffset, GroupState, GroupType, PartitionAnswer};

/// How many groups one OffsetFetch or DescribeShareGroupOffsets request names.
const GROUPS_PER_REQUEST: usize = 500;
/// How many requests run at once over all coordinators.
const CONCURRENCY: usize = 16;
/// Kafka's config resource type for groups.
const RESOURCE_GROUP: i8 = 32;

/// A group as ListGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub group_id: String,
    pub state: GroupState,
    pub group_type: GroupType,
    /// `consumer`, `connect`, `share`, `streams`, or empty for a group that only committed.
    pub protocol_type: String,
}

/// One share-partition's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareOffset {
    pub topic: String,
    pub partition: i32,
    /// The share-partition start offset.
    pub start_offset: i64,
    pub leader_epoch: Option<i32>,
    /// Records at or above the start offset not yet acknowledged, as the broker counts them
    /// (DescribeShareGroupOffsets v1+; `None` from older brokers).
    pub lag: Option<i64>,
}

/// A described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub state: GroupState,
    /// `consumer`, `connect`, `share`, ...; empty for a group that only ever committed offsets.
    pub protocol_type: String,
    pub members: Vec<GroupMember>,
}

/// A group-level error. A broker that does not (or not yet) coordinate the group answers with
/// the code NotCoordinator, which [`Cluster::per_coordinator`] takes as "ask again elsewhere".
fn group_error(api: &'static str, code: i16, group: &str, message: Option<&str>) -> Error {
    if matches!(
        code,
        code::NOT_COORDINATOR
            | code::COORDINATOR_LOAD_IN_PROGRESS
            | code::COORDINATOR_NOT_AVAILABLE
    ) {
        return Error::Kafka {
            op: api,
            detail: format!(
                "group {group}: coordinator moved ({})",
                super::code_name(code)
            ),
            code: Some(RDKafkaErrorCode::NotCoordinator),
        };
    }
    broker_error(api, code, &format!("group {group}"), message)
}

fn moved<T>(r: &Result<T>) -> bool {
    matches!(
        r,
        Err(Error::Kafka {
            code: Some(RDKafkaErrorCode::NotCoordinator),
            ..
        })
    )
}

/// A partition's answer to a commit: the offset asked for, or the broker's error.
fn answer(
    asked: &[GroupOffset],
    topic: &str,
    partition: i32,
    error_code: i16,
    message: Option<&StrBytes>,
) -> PartitionAnswer {
    let result = if error_code == code::NONE {
        Ok(asked
            .iter()
            .find(|o| o.topic == topic && o.partition == partition)
            .map_or(-1, |o| o.offset))
    } else {
        Err(match message {
            Some(m) => format!("{}: {m}", super::code_name(error_code)),
            None => super::code_name(error_code),
        })
    };
    PartitionAnswer {
        topic: topic.to_string(),
        partition,
        result,
    }
}

fn member(member_id: StrBytes, client_id: StrBytes, host: StrBytes) -> GroupMember {
    GroupMember {
        member_id: member_id.to_string(),
        client_id: client_id.to_string(),
        host: host.to_string(),
    }
}

fn described(state: &StrBytes, protocol_type: &str, members: Vec<GroupMember>) -> Described {
    Described {
        state: GroupState::from_name(state.as_str()),
        protocol_type: protocol_type.to_string(),
        members,
    }
}

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

impl Cluster {
    /// Every group of every broker, with its type and state (ListGroups v5 where available).
    pub async fn list_groups(&self) -> Result<Vec<Listed>> {
        self.list_groups_where(&|_| true).await
    }

    /// [`Self::list_groups`], keeping only the groups `keep` wants: the others are let go as
    /// each broker's answer is read, so a caller that wants a few groups of a large cluster
    /// does not hold every group's listing.
    pub async fn list_groups_where(
        &self,
        keep: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<Listed>> {
        let ids = self.broker_ids();
        let answers: Vec<Result<Vec<Listed>>> = stream::iter(ids)
            .map(|id| async move {
                let conn = self.broker(id).await?;
                let v = conn.require_version(ApiKey::ListGroups as i16, 0, 5, "listing groups")?;
                let resp = conn.call(&ListGroupsRequest::default(), v).await?;
                if resp.error_code != code::NONE {
                    return Err(broker_error(
                        "ListGroups",
                        resp.error_code,
                        &format!("broker {id}"),
                        None,
                    ));
                }
                Ok(resp
                    .groups
                    .into_iter()
                    .filter(|g| keep(g.group_id.as_str()))
                    .map(|g| {
                        let protocol_type = g.protocol_type.to_string();
                        let group_type = if v >= 5 {
                            GroupType::from_name(g.group_type.as_str())
                        } else {
                            GroupType::Classic
                        };
                        Listed {
                            group_id: g.group_id.0.to_string(),
                            state: if v >= 4 {
                                GroupState::from_name(g.group_state.as_str())
                            } else {
                                GroupState::Unknown(
                                    "the broker is too old to report group states".into(),
                                )
                            },
                            group_type,
                            protocol_type,
                        }
                    })
                    .collect())
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let mut all = Vec::new();
        for a in answers {
            all.extend(a?);
        }
        all.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        all.dedup_by(|a, b| a.group_id == b.group_id);
        Ok(all)
    }

    /// Runs `op` for batches of groups, one batch per coordinator per [`GROUPS_PER_REQUEST`]
    /// groups, a bounded number at a time. Each group's answer stands on its own: a batch that
    /// fails fails each of its groups with the reason, a group the answer leaves out is an error,
    /// and groups whose coordinator moved meanwhile are asked once more.
    async fn per_coordinator<T, F, Fut>(
        &self,
        groups: &[String],
        api: &'static str,
        op: F,
    ) -> BTreeMap<String, Result<T>>
    where
        F: Fn(i32, Vec<String>) -> Fut + Copy,
        Fut: std::future::Future<Output = Result<Vec<(String, Result<T>)>>>,
    {
        let mut out = BTreeMap::new();
        let mut wanted = groups.to_vec();
        for round in 0..2 {
            let (by, failed) = self.by_coordinator(&wanted).await;
            out.extend(failed.into_iter().map(|(g, e)| (g, Err(e))));
            let batches: Vec<(i32, Vec<String>)> = by
                .into_iter()
                .flat_map(|(node, gs)| {
                    gs.chunks(GROUPS_PER_REQUEST)
                        .map(|c| (node, c.to_vec()))
                        .collect::<Vec<_>>()
                })
                .collect();
            let answers: Vec<Vec<(String, Result<T>)>> = stream::iter(batches)
                .map(|(node, batch)| async move {
                    match op(node, batch.clone()).await {
                        Ok(mut answers) => {
                            for g in &batch {
                                if !answers.iter().any(|(id, _)| id == g) {
                                    let e = Error::kafka(
                                        api,
                                        format!("group {g}: not in the broker's answer"),
                                    );
                                    answers.push((g.clone(), Err(e)));
                                }
                            }
                            answers
                        }
                        Err(e) => {
                            let access = matches!(e, Error::AccessDenied { .. });
                            let text = e.to_string();
                            batch
                                .iter()
                                .map(|g| {
                                    let e = if access {
                                        broker_error(
                                            api,
                                            code::GROUP_AUTHORIZATION_FAILED,
                                            &format!("group {g}"),
                                            Some(&text),
                                        )
                                    } else {
                                        Error::kafka(api, format!("group {g}: {text}"))
                                    };
                                    (g.clone(), Err(e))
                                })
                                .collect()
                        }
                    }
                })
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
            wanted.clear();
            for (g, r) in answers.into_iter().flatten() {
                if moved(&r) {
                    self.forget_coordinators(std::slice::from_ref(&g));
                    if round == 0 {
                        wanted.push(g);
                        continue;
                    }
                }
                out.insert(g, r);
            }
            if wanted.is_empty() {
                break;
            }
        }
        out
    }

    /// Committed offsets of many groups: one OffsetFetch (v8+) per coordinator per
    /// [`GROUPS_PER_REQUEST`] groups. Each group's answer stands on its own.
    pub async fn offset_fetch(
        &self,
        groups: &[String],
    ) -> BTreeMap<String, Result<Vec<GroupOffset>>> {
        self.per_coordinator(groups, "OffsetFetch", |node, batch| {
            self.offset_fetch_batch(node, batch)
        })
        .await
    }

    async fn offset_fetch_batch(
        &self,
        node: i32,
        batch: Vec<String>,
    ) -> Result<Vec<(String, Result<Vec<GroupOffset>>)>> {
        let conn = self.broker(node).await?;
        let v = conn.require_version(
            ApiKey::OffsetFetch as i16,
            8,
            9,
            "reading many groups' offsets at once",
        )?;
        let req = OffsetFetchRequest::default().with_groups(
            batch
                .iter()
                .map(|g| {
                    OffsetFetchRequestGroup::default()
                        .with_group_id(GroupId(sb(g)))
                        .with_member_epoch(-1)
                        .with_topics(None)
                })
                .collect(),
        );
        let t0 = std::time::Instant::now();
        let resp = match conn.call(&req, v).await {
            Ok(r) => r,
            Err(e) => {
                self.drop_conn(conn.addr()).await;
                return Err(e);
            }
        };
        tracing::debug!(
            "OffsetFetch of {} group(s): {:?}",
            batch.len(),
            t0.elapsed()
        );
        let mut out = Vec::new();
        for g in resp.groups {
            let id = g.group_id.0.to_string();
            if g.error_code != code::NONE {
                out.push((
                    id.clone(),
                    Err(group_error("OffsetFetch", g.error_code, &id, None)),
                ));
                continue;
            }
            let mut offsets = Vec::new();
            let mut error = None;
            for t in g.topics {
                for p in t.partitions {
                    if p.error_code != code::NONE {
                        let what =
                            format!("group {id} on {}[{}]", t.name.0.as_str(), p.partition_index);
                        error.get_or_insert(broker_error("OffsetFetch", p.error_code, &what, None));
                        continue;
                    }
                    if p.committed_offset < 0 {
                        continue;
                    }
                    offsets.push(GroupOffset {
                        topic: t.name.0.to_string(),
                        partition: p.partition_index,
                        offset: p.committed_offset,
                        leader_epoch: (p.committed_leader_epoch >= 0)
                            .then_some(p.committed_leader_epoch),
                        metadata: p.metadata.map(|m| m.to_string()),
                        lag: None,
                    });
                }
            }
            offsets.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            out.push((id, error.map_or(Ok(offsets), Err)));
        }
        Ok(out)
    }

    /// Share-partition start offsets (and lag) of share groups, per coordinator in batches.
    pub async fn share_offsets(
        &self,
        groups: &[String],
    ) -> BTreeMap<String, Result<Vec<ShareOffset>>> {
        self.per_coordinator(
            groups,
            "DescribeShareGroupOffsets",
            |node, batch| async move { self.share_offsets_batch(node, &batch).await },
        )
        .await
    }

    async fn share_offsets_batch(
        &self,
        node: i32,
        batch: &[String],
    ) -> Result<Vec<(String, Result<Vec<ShareOffset>>)>> {
        let conn = self.broker(node).await?;
        let v = conn.require_version(
            ApiKey::DescribeShareGroupOffsets as i16,
            0,
            1,
            "reading share-group offsets (Kafka 4.1 or later with share groups enabled)",
        )?;
        let req = DescribeShareGroupOffsetsRequest::default().with_groups(
            batch
                .iter()
                .map(|g| {
                    dsgo::DescribeShareGroupOffsetsRequestGroup::default()
                        .with_group_id(GroupId(sb(g)))
                        .with_topics(None)
                })
                .collect(),
        );
        let started = std::time::Instant::now();
        let body = conn.call_raw(&req, v).await?;
        tracing::debug!(
            "DescribeShareGroupOffsets of {} group(s): {:?}",
            batch.len(),
            started.elapsed()
        );
        let groups = decode_share_offsets(body, v).map_err(|e| {
            Error::kafka(
                "DescribeShareGroupOffsets",
                format!("broker {}: cannot decode the answer: {e}", conn.addr()),
            )
        })?;
        let mut out = Vec::new();
        for g in groups {
            if g.error_code != code::NONE {
                let e = broker_error(
                    "DescribeShareGroupOffsets",
                    g.error_code,
                    &format!("share group {}", g.group_id),
                    g.error_message.as_deref(),
                );
                out.push((g.group_id, Err(e)));
                continue;
            }
            let mut offsets = Vec::new();
            let mut error = None;
            for (topic, p) in g.partitions {
                if p.error_code != code::NONE {
                    let what = format!("share group {} on {topic}[{}]", g.group_id, p.partition);
                    error.get_or_insert(broker_error(
                        "DescribeShareGroupOffsets",
                        p.error_code,
                        &what,
                        p.error_message.as_deref(),
                    ));
                    continue;
                }
                // A share-partition not yet initialized has no start offset.
                if p.start_offset < 0 {
                    continue;
                }
                offsets.push(ShareOffset {
                    topic,
                    partition: p.partition,
                    start_offset: p.start_offset,
                    leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                    lag: p.lag.filter(|l| *l >= 0),
                });
            }
            offsets.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
            out.push((g.group_id, error.map_or(Ok(offsets), Err)));
        }
        Ok(out)
    }

    /// Commits offsets for a group that has no active members (an admin commit: generation -1,
    /// no member id), with leader epochs and metadata. The coordinator comes from the cache the
    /// reads filled; a coordinator that moved is looked up again once.
    pub async fn commit_offsets(
        &self,
        group: &str,
        offsets: &[GroupOffset],
    ) -> Result<Vec<PartitionAnswer>> {
        let mut last = None;
        for _ in 0..2 {
            let node = match self.coordinators(&[group.to_string()]).await.remove(group) {
                Some(r) => r?,
                None => {
                    return Err(Error::kafka(
                        "FindCoordinator",
                        format!("no coordinator for group {group}"),
                    ))
                }
            };
            let conn = self.broker(node).await?;
            let v =
                conn.require_version(ApiKey::OffsetCommit as i16, 2, 9, "committing offsets")?;
            let mut topics: BTreeMap<&str, Vec<commit::OffsetCommitRequestPartition>> =
                BTreeMap::new();
            for o in offsets {
                topics.entry(&o.topic).or_default().push(
                    commit::OffsetCommitRequestPartition::default()
                        .with_partition_index(o.partition)
                        .with_committed_offset(o.offset)
                        .with_committed_leader_epoch(o.leader_epoch.unwrap_or(-1))
                        .with_committed_metadata(Some(sb(o.metadata.as_deref().unwrap_or("")))),
                );
            }
            let req = OffsetCommitRequest::default()
                .with_group_id(GroupId(sb(group)))
                .with_generation_id_or_member_epoch(-1)
                .with_member_id(sb(""))
                .with_retention_time_ms(-1)
                .with_topics(
                    topics
                        .into_iter()
                        .map(|(t, ps)| {
                            commit::OffsetCommitRequestTopic::default()
                                .with_name(TopicName(sb(t)))
                                .with_partitions(ps)
                        })
                        .collect(),
                );
            let resp = conn.call(&req, v).await?;
            let mut answers = Vec::new();
            let mut moved = false;
            for t in resp.topics {
                for p in t.partitions {
                    moved |= matches!(
                        p.error_code,
                        code::NOT_COORDINATOR
                            | code::COORDINATOR_NOT_AVAILABLE
                            | code::COORDINATOR_LOAD_IN_PROGRESS
                    );
                    answers.push(answer(
                        offsets,
                        t.name.0.as_str(),
                        p.partition_index,
                        p.error_code,
                        None,
                    ));
                }
            }
            if !moved {
                return Ok(answers);
            }
            self.forget_coordinators(&[group.to_string()]);
            last = Some(answers);
        }
        Ok(last.unwrap_or_default())
    }

    /// Sets a share group's start offsets. The broker refuses a group with active members.
    pub async fn alter_share_offsets(
        &self,
        group: &str,
        offsets: &[GroupOffset],
    ) -> Result<Vec<PartitionAnswer>> {
        let node = match self.coordinators(&[group.to_string()]).await.remove(group) {
            Some(r) => r?,
            None => {
                return Err(Error::kafka(
                    "FindCoordinator",
                    format!("no coordinator for share group {group}"),
                ))
            }
        };
        let conn = self.broker(node).await?;
        let v = conn.require_version(
            ApiKey::AlterShareGroupOffsets as i16,
            0,
            0,
            "setting share-group offsets (Kafka 4.1 or later with share groups enabled)",
        )?;
        let mut topics: BTreeMap<&str, Vec<alter::AlterShareGroupOffsetsRequestPartition>> =
            BTreeMap::new();
        for o in offsets {
            topics.entry(&o.topic).or_default().push(
                alter::AlterShareGroupOffsetsRequestPartition::default()
                    .with_partition_index(o.partition)
                    .with_start_offset(o.offset),
            );
        }
        let req = AlterShareGroupOffsetsRequest::default()
            .with_group_id(GroupId(sb(group)))
            .with_topics(
                topics
                    .into_iter()
                    .map(|(t, ps)| {
                        alter::AlterShareGroupOffsetsRequestTopic::default()
                            .with_topic_name(TopicName(sb(t)))
                            .with_partitions(ps)
                    })
                    .collect(),
            );
        let resp = conn.call(&req, v).await?;
        if resp.error_code != code::NONE {
            let msg = resp.error_message.map(|m| m.to_string());
            return Err(broker_error(
                "AlterShareGroupOffsets",
                resp.error_code,
                &format!("share group {group}"),
                msg.as_deref(),
            ));
        }
        let mut answers = Vec::new();
        for t in resp.responses {
            for p in t.partitions {
                answers.push(answer(
                    offsets,
                    t.topic_name.0.as_str(),
                    p.partition_index,
                    p.error_code,
                    p.error_message.as_ref(),
                ));
            }
        }
        Ok(answers)
    }

    /// State, members and protocol type of groups, per coordinator in batches: classic groups
    /// with DescribeGroups, consumer groups with ConsumerGroupDescribe, share groups with
    /// ShareGroupDescribe.
    pub async fn describe(
        &self,
        groups: &[String],
        group_type: GroupType,
    ) -> BTreeMap<String, Result<Described>> {
        self.per_coordinator(groups, "describe groups", |node, batch| async move {
            let conn = self.broker(node).await?;
            let ids: Vec<GroupId> = batch.iter().map(|g| GroupId(sb(g))).collect();
            // Each describe answer has its own generated type, of the same shape.
            macro_rules! rows {
                ($groups:expr, |$d:ident| $protocol:expr) => {
                    $groups
                        .into_iter()
                        .map(|$d| {
                            let members = $d
                                .members
                                .into_iter()
                                .map(|m| member(m.member_id, m.client_id, m.client_host))
                                .collect();
                            let d = described(&$d.group_state, $protocol, members);
                            (
                                $d.group_id.0.to_string(),
                                $d.error_code,
                                $d.error_message,
                                d,
                            )
                        })
                        .collect()
                };
            }
            let described: Vec<(String, i16, Option<StrBytes>, Described)> = match group_type {
                GroupType::Share => {
                    let key = ApiKey::ShareGroupDescribe as i16;
                    let v = conn.require_version(key, 1, 1, "describing share groups")?;
                    let req = ShareGroupDescribeRequest::default().with_group_ids(ids);
                    rows!(conn.call(&req, v).await?.groups, |d| "share")
                }
                GroupType::Consumer => {
                    let key = ApiKey::ConsumerGroupDescribe as i16;
                    let v = conn.require_version(key, 0, 1, "describing consumer groups")?;
                    let req = ConsumerGroupDescribeRequest::default().with_group_ids(ids);
                    rows!(conn.call(&req, v).await?.groups, |d| "consumer")
                }
                _ => {
                    let key = ApiKey::DescribeGroups as i16;
                    let v = conn.require_version(key, 0, 5, "describing groups")?;
                    let req = DescribeGroupsRequest::default().with_groups(ids);
                    rows!(conn.call(&req, v).await?.groups, |d| d
                        .protocol_type
                        .as_str())
                }
            };
            Ok(described
                .into_iter()
                .map(|(id, code, message, d)| {
                    let r = match code {
                        code::NONE => Ok(d),
                        code::GROUP_ID_NOT_FOUND => Ok(Described {
                            state: GroupState::NotFound,
                            protocol_type: String::new(),
                            members: Vec::new(),
                        }),
                        c => Err(group_error("describe groups", c, &id, message.as_deref())),
                    };
                    (id, r)
                })
                .collect())
        })
        .await
    }

    /// The configs of groups (DescribeConfigs on GROUP resources, Kafka 4.0+), name to value;
    /// sensitive values come back empty from the broker and are left out.
    pub async fn group_configs(
        &self,
        groups: &[String],
    ) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
        if groups.is_empty() {
            return Ok(BTreeMap::new());
        }
        let conn = self.any().await?;
        let v = conn.require_version(
            ApiKey::DescribeConfigs as i16,
            1,
            4,
            "reading group configs",
        )?;
        let mut out = BTreeMap::new();
        for chunk in groups.chunks(GROUPS_PER_REQUEST) {
            let req = DescribeConfigsRequest::default().with_resources(
                chunk
                    .iter()
                    .map(|g| {
                        dc::DescribeConfigsResource::default()
                            .with_resource_type(RESOURCE_GROUP)
                            .with_resource_name(sb(g))
                            .with_configuration_keys(None)
                    })
                    .collect(),
            );
            let resp = conn.call(&req, v).await?;
            for r in resp.results {
                let name = r.resource_name.to_string();
                if r.error_code != code::NONE {
                    let msg = r.error_message.map(|m| m.to_string());
                    return Err(broker_error(
                        "DescribeConfigs",
                        r.error_code,
                        &format!("group {name}"),
                        msg.as_deref(),
                    ));
                }
                let configs = r
                    .configs
                    .into_iter()
                    .filter(|c| !c.is_sensitive)
                    .filter_map(|c| c.value.map(|v| (c.name.to_string(), v.to_string())))
                    .collect();
                out.insert(name, configs);
            }
        }
        Ok(out)
    }
}

/// One partition of a DescribeShareGroupOffsets answer.
#[derive(Debug, PartialEq, Eq)]
struct SharePartitionAnswer {
    partition: i32,
    start_offset: i64,
    leader_epoch: i32,
    lag: Option<i64>,
    error_code: i16,
    error_message: Option<String>,
}

/// One group of a DescribeShareGroupOffsets answer.
#[derive(Debug, PartialEq, Eq)]
struct ShareGroupAnswer {
    group_id: String,
    partitions: Vec<(String, SharePartitionAnswer)>,
    error_code: i16,
    error_message: Option<String>,
}

/// A reader of Kafka's flexible-version encoding, for the one answer whose newest version the
/// protocol crate does not decode (DescribeShareGroupOffsets v1 added the lag).
struct Reader(Bytes);

impl Reader {
    fn need(&self, n: usize) -> std::result::Result<(), String> {
        if self.0.remaining() < n {
            return Err(format!(
                "answer ends early ({} bytes left, {n} needed)",
                self.0.remaining()
            ));
        }
        Ok(())
    }
    fn i16(&mut self) -> std::result::Result<i16, String> {
        self.need(2)?;
        Ok(self.0.get_i16())
    }
    fn i32(&mut self) -> std::result::Result<i32, String> {
        self.need(4)?;
        Ok(self.0.get_i32())
    }
    fn i64(&mut self) -> std::result::Result<i64, String> {
        self.need(8)?;
        Ok(self.0.get_i64())
    }
    fn uvarint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            self.need(1)?;
            let b = self.0.get_u8();
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint longer than 5 bytes".into())
    }
    /// A compact array's length (`None` for a null array).
    fn len(&mut self) -> std::result::Result<Option<usize>, String> {
        Ok(match self.uvarint()? {
            0 => None,
            n => Some(n as usize - 1),
        })
    }
    fn string(&mut self) -> std::result::Result<Option<String>, String> {
        let Some(n) = self.len()? else {
            return Ok(None);
        };
        self.need(n)?;
        let raw = self.0.split_to(n);
        String::from_utf8(raw.to_vec())
            .map(Some)
            .map_err(|_| "a string is not UTF-8".into())
    }
    fn skip(&mut self, n: usize) -> std::result::Result<(), String> {
        self.need(n)?;
        self.0.advance(n);
        Ok(())
    }
    fn tagged(&mut self) -> std::result::Result<(), String> {
        let n = self.uvarint()?;
        for _ in 0..n {
            self.uvarint()?;
            let size = self.uvarint()? as usize;
            self.skip(size)?;
        }
        Ok(())
    }
}

fn decode_share_offsets(
    body: Bytes,
    version: i16,
) -> std::result::Result<Vec<ShareGroupAnswer>, String> {
    let mut r = Reader(body);
    r.i32()?; // throttle time
    let mut groups = Vec::new();
    for _ in 0..r.len()?.unwrap_or(0) {
        let group_id = r.string()?.unwrap_or_default();
        let mut partitions = Vec::new();
        for _ in 0..r.len()?.unwrap_or(0) {
            let topic = r.string()?.unwrap_or_default();
            r.skip(16)?; // topic id
            for _ in 0..r.len()?.unwrap_or(0) {
                let partition = r.i32()?;
                let start_offset = r.i64()?;
                let leader_epoch = r.i32()?;
                let lag = if version >= 1 { Some(r.i64()?) } else { None };
                let error_code = r.i16()?;
                let error_message = r.string()?;
                r.tagged()?;
                partitions.push((
                    topic.clone(),
                    SharePartitionAnswer {
                        partition,
                        start_offset,
                        leader_epoch,
                        lag,
                        error_code,
                        error_message,
                    },
                ));
            }
            r.tagged()?;
        }
        let error_code = r.i16()?;
        let error_message = r.string()?;
        r.tagged()?;
        groups.push(ShareGroupAnswer {
            group_id,
            partitions,
            error_code,
            error_message,
        });
    }
    r.tagged()?;
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;

    fn compact(buf: &mut Vec<u8>, s: Option<&str>) {
        match s {
            None => buf.put_u8(0),
            Some(s) => {
                buf.put_u8(s.len() as u8 + 1);
                buf.put_slice(s.as_bytes());
            }
        }
    }

    /// An answer laid out by hand from the message schema, in both versions.
    fn answer(version: i16) -> Vec<u8> {
        let mut b = Vec::new();
        b.put_i32(0); // throttle
        b.put_u8(2); // one group
        compact(&mut b, Some("sg"));
        b.put_u8(2); // one topic
        compact(&mut b, Some("t"));
        b.put_slice(&[7u8; 16]);
        b.put_u8(3); // two partitions
        for (p, start, lag) in [(0, 15i64, 3i64), (1, -1, 0)] {
            b.put_i32(p);
            b.put_i64(start);
            b.put_i32(0);
            if version >= 1 {
                b.put_i64(lag);
            }
            b.put_i16(0);
            compact(&mut b, None);
            b.put_u8(0);
        }
        b.put_u8(0); // topic tags
        b.put_i16(0);
        compact(&mut b, None);
        b.put_u8(0); // group tags
        b.put_u8(0); // top-level tags
        b
    }

    #[test]
    fn share_offsets_decode_in_both_versions() {
        for version in [0, 1] {
            let groups = decode_share_offsets(Bytes::from(answer(version)), version).unwrap();
            assert_eq!(groups.len(), 1);
            assert_eq!(groups[0].group_id, "sg");
            let (topic, p0) = &groups[0].partitions[0];
            assert_eq!(topic, "t");
            assert_eq!(p0.start_offset, 15);
            assert_eq!(p0.lag, (version >= 1).then_some(3));
            assert_eq!(groups[0].partitions[1].1.start_offset, -1);
        }
    }

    #[test]
    fn a_short_answer_is_an_error_not_a_panic() {
        let full = answer(1);
        for cut in 0..full.len() {
            assert!(
                decode_share_offsets(Bytes::from(full[..cut].to_vec()), 1).is_err(),
                "cut at {cut}"
            );
        }
    }
}
