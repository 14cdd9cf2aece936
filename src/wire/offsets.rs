//! Partition offsets over the direct connection: earliest, latest, or the first offset at or
//! after a time, for many partitions at once. One Metadata request for the topics gives each
//! partition's leader; then one ListOffsets request goes to each leader, all at once.
//!
//! The answers have the shape and meaning of librdkafka's `rd_kafka_ListOffsets` (which this
//! replaces when the direct path is on): READ_UNCOMMITTED (so "latest" is the high watermark),
//! no leader-epoch fencing, `-1` for a time with no record at or after it, and an error per
//! partition otherwise: the broker's code by name, or why no leader could be asked.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{
    ApiKey, BrokerId, ListOffsetsRequest, ListOffsetsResponse, MetadataRequest, MetadataResponse,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::{code, code_name, Cluster};
use crate::error::{Error, Result};
use crate::group_model::{OffsetQuery, PartitionAnswer};

/// One lookup: topic, partition, and what to look up.
pub type Query = (String, i32, OffsetQuery);

/// The replica id of a client that is not a broker: the broker answers within the high
/// watermark, as it does for consumers.
const CONSUMER_REPLICA_ID: i32 = -1;
/// READ_UNCOMMITTED, librdkafka's default for ListOffsets (the option is never set here).
const READ_UNCOMMITTED: i8 = 0;

/// Said of a partition its leader gave no answer for. [`crate::kafka`] waits it out as a
/// leadership change, as it does librdkafka's answer without an offset.
const NO_ANSWER: &str = "the partition leader did not answer";

/// Where each partition is led, as one Metadata answer says: per topic, either the topic's error
/// code or each partition's leader (or the code saying why it has none).
type Leaders =
    BTreeMap<String, std::result::Result<BTreeMap<i32, std::result::Result<i32, i16>>, i16>>;

/// An error code as a partition's answer: the name Kafka gives it, and the number.
fn code_text(error_code: i16) -> String {
    format!("{} ({error_code})", code_name(error_code))
}

/// The timestamp field that asks for `query` (ListOffsets' special values for the ends).
fn spec(query: OffsetQuery) -> i64 {
    match query {
        OffsetQuery::Earliest => -2,
        OffsetQuery::Latest => -1,
        OffsetQuery::Timestamp(ms) => ms,
    }
}

/// The leaders a Metadata answer shows. A partition with no leader carries the code the broker
/// gave it, or LEADER_NOT_AVAILABLE when it gave none; a partition with a leader is asked even
/// when the answer names another problem (a replica that is down does not stop its leader).
fn leaders(resp: &MetadataResponse) -> Leaders {
    resp.topics
        .iter()
        .filter_map(|t| {
            let name = t.name.as_ref()?.0.to_string();
            if t.error_code != code::NONE {
                return Some((name, Err(t.error_code)));
            }
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let leader = match p.leader_id.0 {
                        id if id >= 0 => Ok(id),
                        _ if p.error_code != code::NONE => Err(p.error_code),
                        _ => Err(code::LEADER_NOT_AVAILABLE),
                    };
                    (p.partition_index, leader)
                })
                .collect();
            Some((name, Ok(partitions)))
        })
        .collect()
}

/// The queries grouped by the broker that leads their partition, and the answers of those that
/// have no leader to ask (a topic or partition that does not exist, a leader not elected yet).
fn by_leader(
    queries: &[Query],
    leaders: &Leaders,
) -> (BTreeMap<i32, Vec<Query>>, Vec<PartitionAnswer>) {
    let mut by = BTreeMap::<i32, Vec<Query>>::new();
    let mut unasked = Vec::new();
    for q in queries {
        let (topic, partition, _) = q;
        let leader = match leaders.get(topic) {
            None => Err(code::UNKNOWN_TOPIC_OR_PARTITION),
            Some(Err(c)) => Err(*c),
            Some(Ok(partitions)) => partitions
                .get(partition)
                .copied()
                .unwrap_or(Err(code::UNKNOWN_TOPIC_OR_PARTITION)),
        };
        match leader {
            Ok(id) => by.entry(id).or_default().push(q.clone()),
            Err(c) => unasked.push(PartitionAnswer {
                topic: topic.clone(),
                partition: *partition,
                result: Err(code_text(c)),
            }),
        }
    }
    (by, unasked)
}

/// One ListOffsets request for queries that share a leader. `timeout_ms` is only sent from v10,
/// where it bounds reads from tiered storage.
fn request(queries: &[Query], timeout_ms: i32) -> ListOffsetsRequest {
    let mut topics = BTreeMap::<&str, Vec<ListOffsetsPartition>>::new();
    for (topic, partition, query) in queries {
        topics.entry(topic).or_default().push(
            ListOffsetsPartition::default()
                .with_partition_index(*partition)
                .with_current_leader_epoch(-1)
                .with_timestamp(spec(*query)),
        );
    }
    ListOffsetsRequest::default()
        .with_replica_id(BrokerId(CONSUMER_REPLICA_ID))
        .with_isolation_level(READ_UNCOMMITTED)
        .with_timeout_ms(timeout_ms)
        .with_topics(
            topics
                .into_iter()
                .map(|(t, partitions)| {
                    ListOffsetsTopic::default()
                        .with_name(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(partitions)
                })
                .collect(),
        )
}

/// Each asked partition's answer from one ListOffsets response: the offset (`-1` for a time with
/// no record at or after it), the broker's error, or that the broker left the partition out.
fn answers(asked: &[Query], resp: &ListOffsetsResponse) -> Vec<PartitionAnswer> {
    let mut given = HashMap::new();
    for t in &resp.topics {
        for p in &t.partitions {
            given.insert((t.name.0.as_str(), p.partition_index), p);
        }
    }
    asked
        .iter()
        .map(|(topic, partition, _)| {
            let result = match given.get(&(topic.as_str(), *partition)) {
                Some(p) if p.error_code == code::NONE => Ok(p.offset),
                Some(p) => Err(code_text(p.error_code)),
                None => Err(format!("no offset in the answer ({NO_ANSWER})")),
            };
            PartitionAnswer {
                topic: topic.clone(),
                partition: *partition,
                result,
            }
        })
        .collect()
}

/// The same answer for every query (a leader that could not be asked).
fn all_failed(asked: &[Query], why: &str) -> Vec<PartitionAnswer> {
    asked
        .iter()
        .map(|(topic, partition, _)| PartitionAnswer {
            topic: topic.clone(),
            partition: *partition,
            result: Err(why.to_string()),
        })
        .collect()
}

/// The first partition asked for twice, if any: one request holds each partition once (the
/// broker refuses duplicates), as librdkafka requires.
fn duplicate(queries: &[Query]) -> Option<(&str, i32)> {
    let mut seen = BTreeSet::new();
    queries
        .iter()
        .map(|(t, p, _)| (t.as_str(), *p))
        .find(|tp| !seen.insert(*tp))
}

impl Cluster {
    /// Looks up offsets of many partitions: one Metadata request for their topics, then one
    /// ListOffsets request per leader, at once. Every query gets an answer; the outer error is
    /// only a Metadata request that failed twice (or a partition asked for twice).
    pub async fn list_offsets(&self, queries: &[Query]) -> Result<Vec<PartitionAnswer>> {
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        if let Some((t, p)) = duplicate(queries) {
            return Err(Error::Internal(format!(
                "ListOffsets: {t}[{p}] asked for twice in one request"
            )));
        }
        let topics: BTreeSet<&str> = queries.iter().map(|(t, ..)| t.as_str()).collect();
        let metadata = self.topic_metadata(&topics).await?;
        let addrs: BTreeMap<i32, String> = metadata
            .brokers
            .iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host.as_str(), b.port)))
            .collect();
        let (by, mut out) = by_leader(queries, &leaders(&metadata));
        let asked = by.into_iter().map(|(id, qs)| {
            // A broker that joined after the connection was made is in this answer only.
            let addr = addrs.get(&id).or_else(|| self.brokers.get(&id)).cloned();
            async move { self.list_offsets_at(id, addr, &qs).await }
        });
        for answers in futures::future::join_all(asked).await {
            out.extend(answers);
        }
        Ok(out)
    }

    /// The metadata of the topics (never creating them), asked again once on a new connection
    /// when the first one fails.
    async fn topic_metadata(&self, topics: &BTreeSet<&str>) -> Result<MetadataResponse> {
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default()
                            .with_name(Some(TopicName(StrBytes::from_string(t.to_string()))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(false);
        let mut tries = 0;
        loop {
            tries += 1;
            let conn = self.any().await?;
            let v = conn.require_version(ApiKey::Metadata as i16, 1, 12, "listing offsets")?;
            match conn.call(&req, v).await {
                Ok(resp) => return Ok(resp),
                Err(e) if tries >= 2 => return Err(e),
                Err(e) => {
                    tracing::debug!("Metadata for ListOffsets: {e}; asking again");
                    self.drop_conn(conn.addr()).await;
                }
            }
        }
    }

    /// One ListOffsets request to the leader `id` (at `addr`) for its partitions. A leader that
    /// cannot be reached, or gives no answer, fails each of its partitions with [`NO_ANSWER`]
    /// (its connection is dropped, so the next lookup opens a new one).
    async fn list_offsets_at(
        &self,
        id: i32,
        addr: Option<String>,
        queries: &[Query],
    ) -> Vec<PartitionAnswer> {
        let Some(addr) = addr else {
            return all_failed(
                queries,
                &format!("{NO_ANSWER}: broker {id} is not in the cluster metadata"),
            );
        };
        let conn = match self.conn_to(&addr).await {
            Ok(c) => c,
            Err(e) => return all_failed(queries, &format!("{NO_ANSWER}: broker {id}: {e}")),
        };
        let v = match conn.require_version(ApiKey::ListOffsets as i16, 1, 10, "listing offsets") {
            Ok(v) => v,
            Err(e) => return all_failed(queries, &e.to_string()),
        };
        let timeout_ms = i32::try_from(self.config.timeout.as_millis()).unwrap_or(i32::MAX);
        match conn.call(&request(queries, timeout_ms), v).await {
            Ok(resp) => answers(queries, &resp),
            Err(e) => {
                self.drop_conn(&addr).await;
                all_failed(queries, &format!("{NO_ANSWER}: broker {id}: {e}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::list_offsets_response::{
        ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
    };
    use kafka_protocol::messages::metadata_response::{
        MetadataResponsePartition, MetadataResponseTopic,
    };

    use super::*;

    fn name(t: &str) -> TopicName {
        TopicName(StrBytes::from_string(t.to_string()))
    }

    fn q(t: &str, p: i32, query: OffsetQuery) -> Query {
        (t.to_string(), p, query)
    }

    fn answer(t: &str, p: i32, result: std::result::Result<i64, &str>) -> PartitionAnswer {
        PartitionAnswer {
            topic: t.to_string(),
            partition: p,
            result: result.map_err(str::to_string),
        }
    }

    /// Topic `a`: partition 0 led by 1, partition 1 by 2, partition 2 without a leader (no
    /// code), partition 3 without one (LEADER_NOT_AVAILABLE), partition 4 led by 1 with a
    /// replica down. Topic `gone` does not exist; topic `secret` may not be described.
    fn metadata() -> MetadataResponse {
        let p = |index: i32, leader: i32, error_code: i16| {
            MetadataResponsePartition::default()
                .with_partition_index(index)
                .with_leader_id(BrokerId(leader))
                .with_error_code(error_code)
        };
        MetadataResponse::default().with_topics(vec![
            MetadataResponseTopic::default()
                .with_name(Some(name("a")))
                .with_partitions(vec![
                    p(0, 1, 0),
                    p(1, 2, 0),
                    p(2, -1, 0),
                    p(3, -1, 5),
                    p(4, 1, 9),
                ]),
            MetadataResponseTopic::default()
                .with_name(Some(name("gone")))
                .with_error_code(3),
            MetadataResponseTopic::default()
                .with_name(Some(name("secret")))
                .with_error_code(29),
        ])
    }

    #[test]
    fn queries_go_to_their_leaders_and_the_rest_are_answered_with_why() {
        let queries = vec![
            q("a", 0, OffsetQuery::Earliest),
            q("a", 1, OffsetQuery::Latest),
            q("a", 2, OffsetQuery::Latest),
            q("a", 3, OffsetQuery::Latest),
            q("a", 4, OffsetQuery::Timestamp(1_000)),
            q("a", 9, OffsetQuery::Latest),
            q("gone", 0, OffsetQuery::Latest),
            q("secret", 0, OffsetQuery::Latest),
            q("never-asked-about", 0, OffsetQuery::Latest),
        ];
        let (by, unasked) = by_leader(&queries, &leaders(&metadata()));
        assert_eq!(
            by,
            BTreeMap::from([
                (
                    1,
                    vec![
                        q("a", 0, OffsetQuery::Earliest),
                        q("a", 4, OffsetQuery::Timestamp(1_000))
                    ]
                ),
                (2, vec![q("a", 1, OffsetQuery::Latest)]),
            ])
        );
        assert_eq!(
            unasked,
            vec![
                answer("a", 2, Err("LeaderNotAvailable (5)")),
                answer("a", 3, Err("LeaderNotAvailable (5)")),
                answer("a", 9, Err("UnknownTopicOrPartition (3)")),
                answer("gone", 0, Err("UnknownTopicOrPartition (3)")),
                answer("secret", 0, Err("TopicAuthorizationFailed (29)")),
                answer("never-asked-about", 0, Err("UnknownTopicOrPartition (3)")),
            ]
        );
    }

    #[test]
    fn a_request_asks_as_a_consumer_reading_uncommitted_with_the_special_timestamps() {
        let req = request(
            &[
                q("b", 1, OffsetQuery::Latest),
                q("a", 0, OffsetQuery::Earliest),
                q("b", 0, OffsetQuery::Timestamp(1_764_500_000_000)),
            ],
            20_000,
        );
        assert_eq!(req.replica_id, BrokerId(-1));
        assert_eq!(req.isolation_level, 0);
        assert_eq!(req.timeout_ms, 20_000);
        let asked: Vec<(String, i32, i64, i32)> = req
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(|p| {
                    (
                        t.name.0.to_string(),
                        p.partition_index,
                        p.timestamp,
                        p.current_leader_epoch,
                    )
                })
            })
            .collect();
        assert_eq!(
            asked,
            vec![
                ("a".into(), 0, -2, -1),
                ("b".into(), 1, -1, -1),
                ("b".into(), 0, 1_764_500_000_000, -1),
            ]
        );
    }

    #[test]
    fn every_asked_partition_gets_its_offset_its_error_or_no_answer() {
        let p = |index: i32, error_code: i16, offset: i64| {
            ListOffsetsPartitionResponse::default()
                .with_partition_index(index)
                .with_error_code(error_code)
                .with_offset(offset)
        };
        let resp = ListOffsetsResponse::default().with_topics(vec![
            ListOffsetsTopicResponse::default()
                .with_name(name("a"))
                .with_partitions(vec![p(0, 0, 13), p(1, 0, -1), p(2, 6, -1), p(3, 78, -1)]),
            ListOffsetsTopicResponse::default()
                .with_name(name("b"))
                .with_partitions(vec![p(0, 0, 0)]),
        ]);
        let asked = [
            q("a", 0, OffsetQuery::Latest),
            q("a", 1, OffsetQuery::Timestamp(5)),
            q("a", 2, OffsetQuery::Earliest),
            q("a", 3, OffsetQuery::Latest),
            q("a", 4, OffsetQuery::Latest),
            q("b", 0, OffsetQuery::Earliest),
        ];
        assert_eq!(
            answers(&asked, &resp),
            vec![
                answer("a", 0, Ok(13)),
                // No record at or after the time: -1, as librdkafka answers it.
                answer("a", 1, Ok(-1)),
                answer("a", 2, Err("NotLeaderOrFollower (6)")),
                answer("a", 3, Err("OffsetNotAvailable (78)")),
                answer(
                    "a",
                    4,
                    Err("no offset in the answer (the partition leader did not answer)")
                ),
                answer("b", 0, Ok(0)),
            ]
        );
    }

    #[test]
    fn a_partition_asked_for_twice_is_found() {
        assert_eq!(
            duplicate(&[
                q("a", 0, OffsetQuery::Latest),
                q("a", 1, OffsetQuery::Latest),
                q("a", 0, OffsetQuery::Earliest),
            ]),
            Some(("a", 0))
        );
        assert_eq!(
            duplicate(&[
                q("a", 0, OffsetQuery::Latest),
                q("b", 0, OffsetQuery::Latest)
            ]),
            None
        );
    }
}
