//! Kafka: topics, producing, consuming and committing as a group member, a member that stays in
//! its group, committed offsets and reading records back.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use super::env::bootstrap;
use super::poll::eventually;
use super::{blocking, unique_name};

/// A client configuration for the test cluster.
pub fn kafka_config() -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap());
    config
}

fn admin() -> AdminClient<DefaultClientContext> {
    kafka_config()
        .create()
        .expect("cannot create a Kafka admin client")
}

fn metadata_consumer() -> BaseConsumer {
    kafka_config()
        .create()
        .expect("cannot create a Kafka consumer")
}

/// Creates a topic with replication factor 1 and waits until the metadata shows all its partitions.
pub async fn create_topic(name: &str, partitions: i32) {
    let admin = admin();
    let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin
        .create_topics([&topic], &options)
        .await
        .unwrap_or_else(|e| panic!("create topic {name}: {e}"));
    for result in results {
        if let Err((topic, code)) = result {
            panic!("create topic {topic}: {code}");
        }
    }
    eventually(
        &format!("topic {name} to show {partitions} partitions with leaders"),
        Duration::from_secs(30),
        || {
            let name = name.to_string();
            async move { blocking(move || topic_ready(&name, partitions)).await }
        },
    )
    .await
}

/// `Ok` when the metadata shows `partitions` partitions of `name`, each with a leader.
fn topic_ready(name: &str, partitions: i32) -> Result<(), String> {
    let metadata = metadata_consumer()
        .fetch_metadata(Some(name), Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let ready = metadata.topics().iter().any(|t| {
        t.name() == name
            && t.error().is_none()
            && t.partitions().len() == partitions as usize
            && t.partitions()
                .iter()
                .all(|p| p.error().is_none() && p.leader() >= 0)
    });
    if ready {
        Ok(())
    } else {
        Err(format!(
            "{:?}",
            metadata
                .topics()
                .iter()
                .map(|t| (t.name(), t.error(), t.partitions().len()))
                .collect::<Vec<_>>()
        ))
    }
}

/// Number of partitions of a topic, from the cluster metadata.
pub async fn partition_count(topic: &str) -> usize {
    let topic = topic.to_string();
    blocking(move || {
        let metadata = metadata_consumer()
            .fetch_metadata(Some(&topic), Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("metadata of {topic}: {e}"));
        let t = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .unwrap_or_else(|| panic!("topic {topic} not in metadata"));
        assert!(t.error().is_none(), "metadata of {topic}: {:?}", t.error());
        t.partitions().len()
    })
    .await
}

/// One record delivered by [`produce`] or [`produce_keyed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub value: String,
}

fn producer() -> FutureProducer {
    kafka_config()
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create()
        .expect("cannot create a Kafka producer")
}

async fn send_all(
    topic: &str,
    records: Vec<(Option<i32>, Option<String>, String)>,
) -> Vec<Delivered> {
    let producer = producer();
    let mut pending = Vec::with_capacity(records.len());
    for (partition, key, value) in records {
        let mut record = FutureRecord::<String, String>::to(topic).payload(&value);
        if let Some(partition) = partition {
            record = record.partition(partition);
        }
        if let Some(key) = key.as_ref() {
            record = record.key(key);
        }
        let future = producer
            .send_result(record)
            .unwrap_or_else(|(e, _)| panic!("enqueue a record for {topic}: {e}"));
        pending.push((key, value, future));
    }
    let mut delivered = Vec::with_capacity(pending.len());
    for (key, value, future) in pending {
        let delivery = future
            .await
            .expect("producer dropped a delivery report")
            .unwrap_or_else(|(e, _)| panic!("deliver {value:?} to {topic}: {e}"));
        delivered.push(Delivered {
            partition: delivery.partition,
            offset: delivery.offset,
            key,
            value,
        });
    }
    delivered
}

/// The value [`produce`] writes as record `index` of a partition.
pub fn record_value(topic: &str, partition: i32, index: usize) -> String {
    format!("{topic}-{partition}-{index}")
}

/// Produces `n` records without keys to one partition, values `"<topic>-<partition>-<i>"` for
/// i in 0..n, and returns once every record is acknowledged by the broker.
pub async fn produce(topic: &str, partition: i32, n: usize) -> Vec<Delivered> {
    let records = (0..n)
        .map(|i| (Some(partition), None, record_value(topic, partition, i)))
        .collect();
    send_all(topic, records).await
}

/// Produces keyed records, partitioned by the producer's default partitioner, and returns once
/// every record is acknowledged.
pub async fn produce_keyed(topic: &str, records: &[(&str, &str)]) -> Vec<Delivered> {
    let records = records
        .iter()
        .map(|(key, value)| (None, Some((*key).to_string()), (*value).to_string()))
        .collect();
    send_all(topic, records).await
}

/// Low and high watermarks (log-start and log-end offsets) of every partition of a topic.
pub async fn watermarks(topic: &str) -> BTreeMap<i32, (i64, i64)> {
    let partitions = partition_count(topic).await;
    let topic = topic.to_string();
    blocking(move || {
        let consumer = metadata_consumer();
        (0..partitions as i32)
            .map(|p| {
                let marks = consumer
                    .fetch_watermarks(&topic, p, Duration::from_secs(10))
                    .unwrap_or_else(|e| panic!("watermarks of {topic}/{p}: {e}"));
                (p, marks)
            })
            .collect()
    })
    .await
}

/// How many messages to consume before committing.
#[derive(Debug, Clone)]
pub enum Take {
    /// Exactly this many messages in total, from whichever partitions deliver them.
    Total(usize),
    /// Exactly this many messages from each listed partition (0 = commit nothing there).
    PerPartition(BTreeMap<i32, usize>),
}

impl Take {
    pub fn per_partition(counts: &[(i32, usize)]) -> Take {
        Take::PerPartition(counts.iter().copied().collect())
    }

    fn wanted(&self, partition: i32, taken: &BTreeMap<i32, usize>, total: usize) -> bool {
        let have = taken.get(&partition).copied().unwrap_or(0);
        match self {
            Take::Total(n) => total < *n,
            Take::PerPartition(counts) => have < counts.get(&partition).copied().unwrap_or(0),
        }
    }

    fn done(&self, taken: &BTreeMap<i32, usize>, total: usize) -> bool {
        match self {
            Take::Total(n) => total >= *n,
            Take::PerPartition(counts) => counts
                .iter()
                .all(|(p, n)| taken.get(p).copied().unwrap_or(0) >= *n),
        }
    }
}

fn group_consumer(group: &str, extra: &[(String, String)]) -> BaseConsumer {
    let mut config = kafka_config();
    config
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("enable.partition.eof", "false");
    for (key, value) in extra {
        config.set(key, value);
    }
    config.create().expect("cannot create a Kafka consumer")
}

/// Subscribes, consumes what `take` asks for (never committing anything else) and commits it
/// synchronously. Returns the consumer, still a member of the group, and the committed offsets.
fn consume_then_commit(
    group: &str,
    topic: &str,
    take: &Take,
    extra: &[(String, String)],
) -> (BaseConsumer, BTreeMap<i32, i64>) {
    let consumer = group_consumer(group, extra);
    consumer
        .subscribe(&[topic])
        .unwrap_or_else(|e| panic!("subscribe {group} to {topic}: {e}"));
    let mut taken: BTreeMap<i32, usize> = BTreeMap::new();
    let mut next_offsets: BTreeMap<i32, i64> = BTreeMap::new();
    let mut total = 0usize;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !take.done(&taken, total) {
        assert!(
            Instant::now() < deadline,
            "group {group} consumed only {taken:?} from {topic} within 60s, wanted {take:?}"
        );
        match consumer.poll(Duration::from_millis(100)) {
            None => {}
            Some(Err(e)) => eprintln!("consumer {group}: {e} (retrying)"),
            Some(Ok(message)) => {
                let partition = message.partition();
                if take.wanted(partition, &taken, total) {
                    *taken.entry(partition).or_default() += 1;
                    next_offsets.insert(partition, message.offset() + 1);
                    total += 1;
                }
            }
        }
    }
    if !next_offsets.is_empty() {
        let mut tpl = TopicPartitionList::new();
        for (partition, offset) in &next_offsets {
            tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                .expect("build offset list");
        }
        consumer
            .commit(&tpl, CommitMode::Sync)
            .unwrap_or_else(|e| panic!("commit {group} {next_offsets:?}: {e}"));
    }
    (consumer, next_offsets)
}

/// Consumes messages from `topic` as member of `group` (enable.auto.commit=false, starting at the
/// earliest offset), commits exactly what `take` asks for synchronously, and leaves the group:
/// the result is an EMPTY group with committed offsets. Returns the committed offsets.
pub async fn consume_and_commit(group: &str, topic: &str, take: Take) -> BTreeMap<i32, i64> {
    consume_and_commit_with(group, topic, take, &[]).await
}

/// [`consume_and_commit`] with extra consumer properties (e.g. `group.protocol=consumer`).
pub async fn consume_and_commit_with(
    group: &str,
    topic: &str,
    take: Take,
    extra: &[(&str, &str)],
) -> BTreeMap<i32, i64> {
    let (group, topic) = (group.to_string(), topic.to_string());
    let extra = owned_pairs(extra);
    blocking(move || {
        let (consumer, committed) = consume_then_commit(&group, &topic, &take, &extra);
        // Dropping the consumer closes it: it leaves the group, which becomes Empty.
        drop(consumer);
        committed
    })
    .await
}

fn owned_pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// A group member that stays in its group (group state Stable) until dropped.
///
/// It consumes and commits like [`consume_and_commit`], then keeps polling on its own thread
/// (committing nothing more). Dropping it closes the consumer, so it leaves the group.
pub struct ActiveConsumer {
    group: String,
    committed: BTreeMap<i32, i64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ActiveConsumer {
    /// Starts the member and returns once its offsets are committed.
    pub async fn start(group: &str, topic: &str, take: Take) -> ActiveConsumer {
        Self::start_with(group, topic, take, &[]).await
    }

    /// [`ActiveConsumer::start`] with extra consumer properties.
    pub async fn start_with(
        group: &str,
        topic: &str,
        take: Take,
        extra: &[(&str, &str)],
    ) -> ActiveConsumer {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel::<BTreeMap<i32, i64>>();
        let thread = {
            let (group, topic, stop) = (group.to_string(), topic.to_string(), stop.clone());
            let extra = owned_pairs(extra);
            std::thread::Builder::new()
                .name(format!("active-{group}"))
                .spawn(move || {
                    let (consumer, committed) = consume_then_commit(&group, &topic, &take, &extra);
                    let _ = tx.send(committed);
                    while !stop.load(Ordering::Relaxed) {
                        // Keep polling so that the member heartbeats and stays in the group.
                        let _ = consumer.poll(Duration::from_millis(100));
                    }
                })
                .expect("spawn the consumer thread")
        };
        let group_name = group.to_string();
        let committed = blocking(move || {
            rx.recv_timeout(Duration::from_secs(90)).unwrap_or_else(|_| {
                panic!("active consumer of {group_name} failed before committing (see its panic above)")
            })
        })
        .await;
        ActiveConsumer {
            group: group.to_string(),
            committed,
            stop,
            thread: Some(thread),
        }
    }

    /// The group this member belongs to.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The offsets it committed.
    pub fn committed(&self) -> &BTreeMap<i32, i64> {
        &self.committed
    }
}

impl Drop for ActiveConsumer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Committed offsets of `group` on every partition of `topic` that has one, read through the
/// Kafka protocol (OffsetFetch) without joining the group.
pub async fn committed_offsets(group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let partitions = partition_count(topic).await;
    let (group, topic) = (group.to_string(), topic.to_string());
    blocking(move || {
        let consumer = group_consumer(&group, &[]);
        let mut tpl = TopicPartitionList::new();
        for partition in 0..partitions as i32 {
            tpl.add_partition(&topic, partition);
        }
        let committed = consumer
            .committed_offsets(tpl, Duration::from_secs(15))
            .unwrap_or_else(|e| panic!("committed offsets of {group} on {topic}: {e}"));
        committed
            .elements()
            .iter()
            .filter_map(|element| match element.offset() {
                Offset::Offset(offset) => Some((element.partition(), offset)),
                _ => None,
            })
            .collect()
    })
    .await
}

/// One record read by [`read_records`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub value: Option<String>,
}

/// Reads `n` records from all partitions of `topic` from the beginning, without a group (nothing
/// is committed). Panics if fewer arrive within `timeout`. Sorted by partition and offset.
pub async fn read_records(topic: &str, n: usize, timeout: Duration) -> Vec<Record> {
    let partitions = partition_count(topic).await;
    let topic = topic.to_string();
    blocking(move || {
        // librdkafka wants a group id even for assign(); it is never used to join or commit.
        let consumer: BaseConsumer = kafka_config()
            .set("group.id", unique_name("ov-test-reader"))
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .create()
            .expect("cannot create a Kafka consumer");
        let mut tpl = TopicPartitionList::new();
        for partition in 0..partitions as i32 {
            tpl.add_partition_offset(&topic, partition, Offset::Beginning)
                .expect("build partition list");
        }
        consumer.assign(&tpl).expect("assign partitions");
        let deadline = Instant::now() + timeout;
        let mut records = Vec::new();
        while records.len() < n {
            assert!(
                Instant::now() < deadline,
                "read only {} of {n} records from {topic} within {timeout:?}: {records:?}",
                records.len()
            );
            match consumer.poll(Duration::from_millis(100)) {
                None => {}
                Some(Err(e)) => eprintln!("reading {topic}: {e} (retrying)"),
                Some(Ok(message)) => records.push(Record {
                    partition: message.partition(),
                    offset: message.offset(),
                    key: message
                        .key()
                        .map(|k| String::from_utf8_lossy(k).into_owned()),
                    value: message
                        .payload()
                        .map(|v| String::from_utf8_lossy(v).into_owned()),
                }),
            }
        }
        records.sort_by_key(|r| (r.partition, r.offset));
        records
    })
    .await
}

/// Deletes a topic (a large one, so that later tests do not carry it).
pub async fn delete_topic(topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    let admin: AdminClient<rdkafka::client::DefaultClientContext> =
        kafka_config().create().expect("admin client");
    admin
        .delete_topics(&[topic], &AdminOptions::new())
        .await
        .expect("delete topic");
}

/// Deletes a topic and creates it again under the same name (it gets a new topic id), waiting
/// until the new one exists.
pub async fn recreate_topic(topic: &str, partitions: i32) {
    use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
    let admin = || -> rdkafka::admin::AdminClient<rdkafka::client::DefaultClientContext> {
        kafka_config().create().expect("admin client")
    };
    admin()
        .delete_topics(&[topic], &AdminOptions::new())
        .await
        .expect("delete topic");
    super::poll::eventually(
        &format!("topic {topic} to be created again after its deletion"),
        std::time::Duration::from_secs(60),
        || async {
            let result = admin()
                .create_topics(
                    [&NewTopic::new(
                        topic,
                        partitions,
                        TopicReplication::Fixed(1),
                    )],
                    &AdminOptions::new(),
                )
                .await
                .expect("create topic");
            if result.iter().all(|r| r.is_ok()) {
                Ok(())
            } else {
                Err(format!("{result:?}"))
            }
        },
    )
    .await;
    partition_count(topic).await;
}

/// Produces one record per timestamp (ms since the epoch) to one partition, in order, values
/// `"t<i>"`, and returns once each is acknowledged.
pub async fn produce_at(topic: &str, partition: i32, timestamps: &[i64]) {
    let producer = producer();
    for (i, ts) in timestamps.iter().enumerate() {
        let value = format!("t{i}");
        producer
            .send(
                FutureRecord::<(), String>::to(topic)
                    .partition(partition)
                    .payload(&value)
                    .timestamp(*ts),
                Duration::from_secs(30),
            )
            .await
            .unwrap_or_else(|(e, _)| panic!("produce to {topic}[{partition}]: {e}"));
    }
}

/// Deletes the records of `topic[partition]` before `offset`, moving its log-start offset.
pub async fn delete_records_before(topic: &str, partition: i32, offset: i64) {
    let admin: AdminClient<DefaultClientContext> = kafka_config().create().expect("admin client");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, partition, Offset::Offset(offset))
        .expect("partition offset");
    admin
        .delete_records(&tpl, &AdminOptions::new())
        .await
        .expect("delete records");
}

/// Waits until `group` has exactly `want` committed on `topic`.
pub async fn wait_committed(group: &str, topic: &str, want: BTreeMap<i32, i64>) {
    let want = &want;
    eventually(
        &format!("{group} to commit {want:?} on {topic}"),
        Duration::from_secs(90),
        || async move {
            let got = committed_offsets(group, topic).await;
            if got == *want {
                Ok(())
            } else {
                Err(format!("{got:?}"))
            }
        },
    )
    .await
}

/// A topic of 2 partitions with 20 records each, and a group that committed `first` on both;
/// returns (topic, group).
pub async fn group_at(prefix: &str, first: usize) -> (String, String) {
    let topic = super::unique_name(prefix);
    create_topic(&topic, 2).await;
    for p in 0..2 {
        produce(&topic, p, 20).await;
    }
    let group = super::unique_name(&format!("{prefix}-g"));
    consume_and_commit(
        &group,
        &topic,
        Take::per_partition(&[(0, first), (1, first)]),
    )
    .await;
    (topic, group)
}
