//! Reading a topic's records from a group's positions to the end, and committing the positions:
//! what the commit-log follower needs of Kafka. Records come with their offsets, timestamps and
//! raw key and value bytes; nothing is decoded here.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::{blocking, client_config, KafkaClient};
use crate::error::{Error, Result};

/// One record as it is in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    pub offset: i64,
    /// The record's timestamp (ms).
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// One partition read from `start` up to (not including) `next`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRead {
    pub partition: i32,
    pub start: i64,
    pub next: i64,
    pub records: Vec<RawRecord>,
}

impl KafkaClient {
    /// Reads every partition of `topic` from `group`'s committed position (the log start where
    /// it has none) to the end of the log as it is when the read starts, with `read_committed`
    /// (records of aborted transactions never appear). Commits nothing. Also returns the
    /// topic's partition count.
    pub async fn read_to_end(&self, topic: &str, group: &str) -> Result<(i32, Vec<PartitionRead>)> {
        let (settings, topic, group) =
            (self.settings.clone(), topic.to_string(), group.to_string());
        blocking(move || {
            let consumer: BaseConsumer = client_config(&settings)
                .set("group.id", &group)
                .set("isolation.level", "read_committed")
                .set("enable.partition.eof", "true")
                .set("auto.offset.reset", "earliest")
                .create()
                .map_err(|e| Error::kafka("consumer", e))?;
            let timeout = settings.timeout;
            let metadata = consumer
                .fetch_metadata(Some(&topic), timeout)
                .map_err(|e| read_error(&topic, &group, e))?;
            let count = metadata
                .topics()
                .iter()
                .find(|t| t.name() == topic)
                .map_or(0, |t| t.partitions().len()) as i32;
            if count == 0 {
                return Err(Error::NotFound {
                    what: "topic",
                    name: topic,
                    hint: "; the principal needs DESCRIBE on it".into(),
                });
            }
            let mut all = TopicPartitionList::new();
            for p in 0..count {
                all.add_partition(&topic, p);
            }
            let committed = consumer
                .committed_offsets(all, timeout)
                .map_err(|e| read_error(&topic, &group, e))?;
            let mut reads: BTreeMap<i32, PartitionRead> = BTreeMap::new();
            let mut ends: BTreeMap<i32, i64> = BTreeMap::new();
            let mut assign = TopicPartitionList::new();
            for p in 0..count {
                let (low, high) = consumer
                    .fetch_watermarks(&topic, p, timeout)
                    .map_err(|e| read_error(&topic, &group, e))?;
                let start = match committed.find_partition(&topic, p).map(|e| e.offset()) {
                    Some(Offset::Offset(n)) if n >= low => n,
                    _ => low,
                };
                reads.insert(
                    p,
                    PartitionRead {
                        partition: p,
                        start,
                        next: start,
                        records: Vec::new(),
                    },
                );
                if start < high {
                    ends.insert(p, high);
                    assign
                        .add_partition_offset(&topic, p, Offset::Offset(start))
                        .map_err(|e| Error::kafka("assign", e))?;
                }
            }
            consumer
                .assign(&assign)
                .map_err(|e| Error::kafka("assign", e))?;
            // Read until every assigned partition reports its end (with read_committed, the
            // last stable offset) or has passed the end seen at the start.
            let mut last_progress = Instant::now();
            while !ends.is_empty() {
                match consumer.poll(Duration::from_millis(200)) {
                    None => {}
                    Some(Err(KafkaError::PartitionEOF(p))) => {
                        ends.remove(&p);
                    }
                    Some(Err(e)) => return Err(read_error(&topic, &group, e)),
                    Some(Ok(m)) => {
                        last_progress = Instant::now();
                        let p = m.partition();
                        if let Some(read) = reads.get_mut(&p) {
                            read.records.push(RawRecord {
                                offset: m.offset(),
                                timestamp: m.timestamp().to_millis().unwrap_or(-1),
                                key: m.key().map(<[u8]>::to_vec),
                                value: m.payload().map(<[u8]>::to_vec),
                            });
                        }
                        if ends.get(&p).is_some_and(|end| m.offset() + 1 >= *end) {
                            ends.remove(&p);
                        }
                    }
                }
                if last_progress.elapsed() > timeout {
                    return Err(Error::Timeout {
                        service: "Kafka",
                        op: format!("reading {topic}"),
                        after: timeout,
                        detail: format!(
                            "no record and no end of partition for partitions {:?}",
                            ends.keys().collect::<Vec<_>>()
                        ),
                    });
                }
            }
            // Where each partition's next read starts: past transaction markers too.
            let positions = consumer
                .position()
                .map_err(|e| Error::kafka("position", e))?;
            for read in reads.values_mut() {
                let after_last = read.records.last().map_or(read.start, |r| r.offset + 1);
                read.next = match positions
                    .find_partition(&topic, read.partition)
                    .map(|e| e.offset())
                {
                    Some(Offset::Offset(n)) if n >= after_last => n,
                    _ => after_last,
                };
            }
            Ok((count, reads.into_values().collect()))
        })
        .await
    }

    /// Commits `group`'s positions on `topic` (partition, next offset to read).
    pub async fn commit_positions(
        &self,
        topic: &str,
        group: &str,
        positions: &[(i32, i64)],
    ) -> Result<()> {
        let (settings, topic, group) =
            (self.settings.clone(), topic.to_string(), group.to_string());
        let positions = positions.to_vec();
        blocking(move || {
            let consumer: BaseConsumer = client_config(&settings)
                .set("group.id", &group)
                .create()
                .map_err(|e| Error::kafka("consumer", e))?;
            let mut tpl = TopicPartitionList::new();
            for (p, next) in positions {
                tpl.add_partition_offset(&topic, p, Offset::Offset(next))
                    .map_err(|e| Error::kafka("commit", e))?;
            }
            consumer
                .commit(&tpl, CommitMode::Sync)
                .map_err(|e| read_error(&topic, &group, e))
        })
        .await
    }
}

/// A read or commit that failed; an authorization failure names the ACLs it needs.
fn read_error(topic: &str, group: &str, e: KafkaError) -> Error {
    match e.rdkafka_error_code() {
        Some(code) if crate::error::is_access_code(code) => Error::AccessDenied {
            service: "Kafka",
            resource: format!("topic {topic} and group {group}"),
            detail: e.to_string(),
            advice: "Grant the principal DESCRIBE and READ on the topic __consumer_offsets and READ on the follower's group (kafka-acls --topic __consumer_offsets --group ...)",
        },
        _ => Error::kafka("reading the commit log", e),
    }
}
