//! Following a topic from positions the caller decides, in a group or alone, and committing the
//! positions: what the commit-log follower needs of Kafka. Records come with their offsets,
//! timestamps and raw key and value bytes; nothing is decoded here.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

use super::{client_config, KafkaClient};
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

/// One partition read from `start` up to (not including) `next` (for tests and tools that read
/// a range at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRead {
    pub partition: i32,
    pub start: i64,
    pub next: i64,
    pub records: Vec<RawRecord>,
}

/// A read or commit that failed; an authorization failure names the ACLs it needs.
fn read_error(topic: &str, group: &str, e: KafkaError) -> Error {
    match e.rdkafka_error_code() {
        Some(code) if crate::error::is_access_code(code) => access_denied(topic, group, e),
        Some(code @ RDKafkaErrorCode::AutoOffsetReset) => Error::Kafka {
            op: "reading the commit log",
            detail: format!("{e}: the log of {topic} no longer holds the follower's position (retention or a deletion passed it); run the follower again: it records the offsets it can no longer read as a gap, takes a base snapshot and goes on"),
            code: Some(code),
        },
        _ => Error::kafka("reading the commit log", e),
    }
}

fn access_denied(topic: &str, group: &str, detail: impl std::fmt::Display) -> Error {
    Error::AccessDenied {
        service: "Kafka",
        resource: format!("topic {topic} and group {group}"),
        detail: detail.to_string(),
        advice: "Grant the principal DESCRIBE and READ on the topic __consumer_offsets and READ on the follower's group (kafka-acls --topic __consumer_offsets --group ...)",
    }
}

/// Whether a consumer error reported by a poll is one librdkafka recovers from by itself
/// (reconnecting, finding the new leader): every error but a denied access and a position the
/// log no longer holds (a fatal error is a different kind of error).
fn transient(code: rdkafka::types::RDKafkaErrorCode) -> bool {
    !crate::error::is_access_code(code) && code != rdkafka::types::RDKafkaErrorCode::AutoOffsetReset
}

/// What one poll of a [`Tail`] brought.
#[derive(Debug)]
pub enum TailEvent {
    Record(i32, RawRecord),
    /// The partition's log end (with read_committed, its last stable offset) was reached.
    End(i32),
}

/// Decides where each newly assigned partition starts reading, inside the rebalance (before any
/// record of it is fetched), from the partitions and the group's committed positions of them.
pub type Starter = Box<dyn Fn(&[(i32, Option<i64>)]) -> Vec<(i32, i64)> + Send + Sync>;

/// The rebalance context of a following consumer: assigned partitions start where the
/// [`Starter`] says; assignments and revocations are queued for the caller.
pub struct TailContext {
    topic: String,
    group: String,
    starter: Starter,
    changes: std::sync::Mutex<Vec<Assignment>>,
}

/// A change of the partitions a following consumer reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assignment {
    /// Partitions now read, from these offsets.
    Assigned(Vec<(i32, i64)>),
    /// Partitions no longer read.
    Revoked(Vec<i32>),
}

impl rdkafka::ClientContext for TailContext {
    fn error(&self, error: KafkaError, reason: &str) {
        // librdkafka also reports each partition end here; the poll hands it over as an event.
        if error.rdkafka_error_code() != Some(RDKafkaErrorCode::PartitionEOF) {
            tracing::error!("librdkafka: {error}: {reason}");
        }
    }
}

impl rdkafka::consumer::ConsumerContext for TailContext {
    fn commit_callback(
        &self,
        result: rdkafka::error::KafkaResult<()>,
        offsets: &TopicPartitionList,
    ) {
        if let Err(e) = result {
            let positions: Vec<String> = offsets
                .elements()
                .iter()
                .map(|e| match e.offset() {
                    Offset::Offset(n) => format!("{}[{}]@{n}", e.topic(), e.partition()),
                    other => format!("{}[{}]@{other:?}", e.topic(), e.partition()),
                })
                .collect();
            tracing::warn!(
                "committing the follower's position {}: {} (the segments are archived; only the group's record of progress lags)",
                positions.join(", "),
                read_error(&self.topic, &self.group, e)
            );
        }
    }

    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: rdkafka::types::RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        use rdkafka::types::RDKafkaRespErr::*;
        let partitions: Vec<i32> = tpl
            .elements_for_topic(&self.topic)
            .iter()
            .map(|e| e.partition())
            .collect();
        match err {
            RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                let committed: BTreeMap<i32, i64> = consumer
                    .committed_offsets(tpl.clone(), Duration::from_secs(30))
                    .map(|c| {
                        c.elements_for_topic(&self.topic)
                            .iter()
                            .filter_map(|e| match e.offset() {
                                Offset::Offset(n) => Some((e.partition(), n)),
                                _ => None,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let asked: Vec<(i32, Option<i64>)> = partitions
                    .iter()
                    .map(|p| (*p, committed.get(p).copied()))
                    .collect();
                let starts = (self.starter)(&asked);
                for (p, start) in &starts {
                    let _ = tpl.set_partition_offset(&self.topic, *p, Offset::Offset(*start));
                }
                if let Err(e) = consumer.assign(tpl) {
                    tracing::warn!("assigning {:?} of {}: {e}", partitions, self.topic);
                }
                self.push(Assignment::Assigned(starts));
            }
            RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => {
                if let Err(e) = consumer.unassign() {
                    tracing::warn!("unassigning {}: {e}", self.topic);
                }
                self.push(Assignment::Revoked(partitions));
            }
            other => {
                tracing::warn!("rebalance of the follower group failed: {other:?}");
                let _ = consumer.unassign();
                self.push(Assignment::Revoked(partitions));
            }
        }
    }
}

impl TailContext {
    fn push(&self, a: Assignment) {
        if let Ok(mut changes) = self.changes.lock() {
            changes.push(a);
        }
    }
}

/// A consumer following a topic with read_committed, in the group's protocol (`subscribe`) or
/// on every partition by itself. Blocking: use it from a blocking thread.
pub struct Tail {
    consumer: BaseConsumer<TailContext>,
    topic: String,
    group: String,
    timeout: Duration,
}

/// The tail's prefetch bounds, unless given with -X: the consumer's queue (KiB of record
/// payload; librdkafka's own overhead per record comes on top, several times the payload of a
/// small commit record) and one fetch's response (bytes). Measured with `scripts/bench log`:
/// with the defaults (64 MiB, 50 MiB) the queue was most of the follower's memory.
const TAIL_PREFETCH: &[(&str, &str)] = &[
    ("queued.max.messages.kbytes", "4096"),
    ("fetch.max.bytes", "2097152"),
];

/// Whether a topic is there, as the metadata says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// The broker does not know the topic (UNKNOWN_TOPIC_OR_PARTITION, or no partitions).
    Absent,
    /// The topic exists with this many partitions, not all of them with a leader yet (it was
    /// just created, or a broker is away).
    Starting(i32),
    /// The topic exists with this many partitions, each with a leader.
    Ready(i32),
}

/// One topic in a metadata answer: its error, and each partition's leader and error (`None`:
/// the topic is not in the answer).
type TopicAnswer<'a> = Option<(
    Option<RDKafkaErrorCode>,
    &'a [(i32, Option<RDKafkaErrorCode>)],
)>;

/// What one topic's metadata says, from its [`TopicAnswer`]. An error that is not about existence, an authorization
/// failure above all, is handed back. Pure.
///
/// A principal without DESCRIBE on a topic is told TOPIC_AUTHORIZATION_FAILED whether the topic
/// exists or not (the broker does not say which), and UNKNOWN_TOPIC_OR_PARTITION only when it
/// may describe the topic: the two never stand for each other.
fn presence(topic: TopicAnswer<'_>) -> std::result::Result<Presence, RDKafkaErrorCode> {
    let Some((error, partitions)) = topic else {
        return Ok(Presence::Absent);
    };
    let count = partitions.len() as i32;
    match error {
        Some(RDKafkaErrorCode::UnknownTopicOrPartition) => Ok(Presence::Absent),
        Some(RDKafkaErrorCode::LeaderNotAvailable) if count > 0 => Ok(Presence::Starting(count)),
        Some(RDKafkaErrorCode::LeaderNotAvailable) => Ok(Presence::Absent),
        Some(code) => Err(code),
        None if count == 0 => Ok(Presence::Absent),
        None if partitions
            .iter()
            .all(|(leader, error)| *leader >= 0 && error.is_none()) =>
        {
            Ok(Presence::Ready(count))
        }
        None => Ok(Presence::Starting(count)),
    }
}

impl KafkaClient {
    /// Whether `topic` exists: `None` when the broker does not know it, else its partition
    /// count and whether every partition has a leader. Read from the metadata of the client's
    /// own consumer, which has no group and never asks the broker to create a topic: a group
    /// coordinator lookup (any consumer with a `group.id` makes one, [`Self::tail`]'s too) has
    /// the broker create `__consumer_offsets`. A topic the principal may not describe is an
    /// error naming the ACLs the follower in `group` needs. Blocking.
    pub fn topic_partitions(&self, topic: &str, group: &str) -> Result<Option<(i32, bool)>> {
        let metadata = self
            .inner
            .fetch_metadata(Some(topic), self.settings.timeout)
            .map_err(|e| read_error(topic, group, e))?;
        let found = metadata.topics().iter().find(|t| t.name() == topic);
        let partitions: Vec<(i32, Option<RDKafkaErrorCode>)> = found
            .map(|t| {
                t.partitions()
                    .iter()
                    .map(|p| (p.leader(), p.error().map(RDKafkaErrorCode::from)))
                    .collect()
            })
            .unwrap_or_default();
        let answer = found.map(|t| (t.error().map(RDKafkaErrorCode::from), partitions.as_slice()));
        let presence = presence(answer).map_err(|code| {
            if crate::error::is_access_code(code) {
                access_denied(topic, group, format!("metadata of {topic}: {code}"))
            } else {
                Error::Kafka {
                    op: "Metadata",
                    detail: format!("the metadata of {topic} answered {code}"),
                    code: Some(code),
                }
            }
        })?;
        Ok(match presence {
            Presence::Absent => None,
            Presence::Starting(n) => Some((n, false)),
            Presence::Ready(n) => Some((n, true)),
        })
    }

    /// A consumer of `topic` in `group`. With `subscribe`, partitions are split among the
    /// group's members by Kafka; otherwise the caller assigns them ([`Tail::assign`]).
    pub fn tail(
        &self,
        topic: &str,
        group: &str,
        subscribe: bool,
        starter: Starter,
    ) -> Result<Tail> {
        let context = TailContext {
            topic: topic.to_string(),
            group: group.to_string(),
            starter,
            changes: Default::default(),
        };
        let mut config = client_config(&self.settings);
        // A bounded prefetch (see TAIL_PREFETCH); properties given with -X win.
        for (key, value) in TAIL_PREFETCH {
            if self.settings.properties.get(key).is_none() {
                config.set(*key, *value);
            }
        }
        let consumer: BaseConsumer<TailContext> = config
            .set("group.id", group)
            .set("isolation.level", "read_committed")
            .set("enable.partition.eof", "true")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            // Every read starts at an offset the follower chose; one the log no longer holds
            // is an error, never a silent jump to the log start (a gap in a segment).
            .set("auto.offset.reset", "error")
            .create_with_context(context)
            .map_err(|e| Error::kafka("consumer", e))?;
        if subscribe {
            consumer
                .subscribe(&[topic])
                .map_err(|e| read_error(topic, group, e))?;
        }
        Ok(Tail {
            consumer,
            topic: topic.to_string(),
            group: group.to_string(),
            timeout: self.settings.timeout,
        })
    }
}

impl Tail {
    /// Reads these partitions from these offsets (without the group's protocol).
    pub fn assign(&self, starts: &[(i32, i64)]) -> Result<()> {
        let mut tpl = TopicPartitionList::new();
        for (p, start) in starts {
            tpl.add_partition_offset(&self.topic, *p, Offset::Offset(*start))
                .map_err(|e| Error::kafka("assign", e))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| Error::kafka("assign", e))
    }

    /// The partitions' log start and end offsets.
    pub fn watermarks(&self, partition: i32) -> Result<(i64, i64)> {
        self.consumer
            .fetch_watermarks(&self.topic, partition, self.timeout)
            .map_err(|e| read_error(&self.topic, &self.group, e))
    }

    /// The group's committed positions of these partitions.
    pub fn committed(&self, partitions: &[i32]) -> Result<BTreeMap<i32, i64>> {
        let mut tpl = TopicPartitionList::new();
        for p in partitions {
            tpl.add_partition(&self.topic, *p);
        }
        let committed = self
            .consumer
            .committed_offsets(tpl, self.timeout)
            .map_err(|e| {
                self.queued_access_error()
                    .unwrap_or_else(|| read_error(&self.topic, &self.group, e))
            })?;
        Ok(committed
            .elements_for_topic(&self.topic)
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(n) => Some((e.partition(), n)),
                _ => None,
            })
            .collect())
    }

    /// An authorization failure that librdkafka queued for the consumer while a call only timed
    /// out: a refused FindCoordinator (no DESCRIBE on the group) is reported on the consumer's
    /// queue, and the call waiting for the coordinator never hears of it. Looked for only while
    /// nothing is assigned, so that no record is taken from the queue.
    fn queued_access_error(&self) -> Option<Error> {
        let assigned = self.consumer.assignment().map_or(1, |a| a.count());
        if assigned > 0 {
            return None;
        }
        while let Some(event) = self.consumer.poll(Duration::ZERO) {
            if let Err(e) = event {
                if e.rdkafka_error_code()
                    .is_some_and(crate::error::is_access_code)
                {
                    return Some(access_denied(&self.topic, &self.group, e));
                }
            }
        }
        None
    }

    /// One poll: a record, a partition's end, or nothing within `wait`. An error the consumer
    /// recovers from by itself (the broker away or restarting, a leader moving) is logged and
    /// is nothing; a fatal one, a denied access or a lost position ends the read.
    pub fn poll(&self, wait: Duration) -> Result<Option<TailEvent>> {
        match self.consumer.poll(wait) {
            None => Ok(None),
            Some(Err(KafkaError::PartitionEOF(p))) => Ok(Some(TailEvent::End(p))),
            Some(Err(KafkaError::MessageConsumption(code))) if transient(code) => {
                tracing::warn!(
                    "reading {}: {code} (the consumer retries; nothing is skipped)",
                    self.topic
                );
                Ok(None)
            }
            Some(Err(e)) => Err(read_error(&self.topic, &self.group, e)),
            Some(Ok(m)) => Ok(Some(TailEvent::Record(
                m.partition(),
                RawRecord {
                    offset: m.offset(),
                    timestamp: m.timestamp().to_millis().unwrap_or(-1),
                    key: m.key().map(<[u8]>::to_vec),
                    value: m.payload().map(<[u8]>::to_vec),
                },
            ))),
        }
    }

    /// The assignments and revocations since the last call.
    pub fn assignments(&self) -> Vec<Assignment> {
        self.consumer
            .context()
            .changes
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }

    /// Where the next read of `partition` starts (past transaction markers too), if known.
    pub fn position(&self, partition: i32) -> Option<i64> {
        let positions = self.consumer.position().ok()?;
        match positions.find_partition(&self.topic, partition)?.offset() {
            Offset::Offset(n) => Some(n),
            _ => None,
        }
    }

    /// Moves the read of `partition` to `offset`.
    pub fn seek(&self, partition: i32, offset: i64) -> Result<()> {
        self.consumer
            .seek(&self.topic, partition, Offset::Offset(offset), self.timeout)
            .map_err(|e| Error::kafka("seek", e))
    }

    /// Commits the group's positions (partition, next offset to read). With `wait`, until the
    /// broker answers; without, in the background: a commit waits for the group coordinator
    /// for as long as the broker is away, which would hold a running follower's reads up, and
    /// the archive, not the group, is where a follower resumes. A background commit that fails
    /// is logged by the commit callback; one still in flight is finished by the close.
    pub fn commit(&self, positions: &[(i32, i64)], wait: bool) -> Result<()> {
        let mut tpl = TopicPartitionList::new();
        for (p, next) in positions {
            tpl.add_partition_offset(&self.topic, *p, Offset::Offset(*next))
                .map_err(|e| Error::kafka("commit", e))?;
        }
        let mode = if wait {
            CommitMode::Sync
        } else {
            CommitMode::Async
        };
        self.consumer
            .commit(&tpl, mode)
            .map_err(|e| read_error(&self.topic, &self.group, e))
    }

    /// Leaves the group (a clean handover of its partitions to the other followers).
    pub fn close(self) {
        self.consumer.unsubscribe();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_topic_is_absent_and_a_refused_one_is_an_error() {
        use RDKafkaErrorCode as C;
        let led = [(1, None), (1, None)];
        let leaderless = [(1, None), (-1, Some(C::LeaderNotAvailable))];
        // (the topic's error and partitions, or not in the answer; what it says)
        let cases: [(TopicAnswer, _); 9] = [
            (None, Ok(Presence::Absent)),
            (
                Some((Some(C::UnknownTopicOrPartition), &[])),
                Ok(Presence::Absent),
            ),
            (Some((None, &[])), Ok(Presence::Absent)),
            (
                Some((Some(C::LeaderNotAvailable), &[])),
                Ok(Presence::Absent),
            ),
            (
                Some((Some(C::LeaderNotAvailable), &leaderless)),
                Ok(Presence::Starting(2)),
            ),
            (Some((None, &leaderless)), Ok(Presence::Starting(2))),
            (Some((None, &led)), Ok(Presence::Ready(2))),
            (
                Some((Some(C::TopicAuthorizationFailed), &[])),
                Err(C::TopicAuthorizationFailed),
            ),
            (Some((Some(C::InvalidTopic), &[])), Err(C::InvalidTopic)),
        ];
        for (answer, want) in cases {
            assert_eq!(presence(answer), want, "{answer:?}");
        }
    }
}
