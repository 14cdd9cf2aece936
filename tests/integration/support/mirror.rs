//! MirrorMaker 2 between the test environment's two clusters (`mm2` in `scripts/test-env`): the
//! primary (the main cluster, alias `primary`) is replicated onto the replica (the second cluster,
//! `kafka2`), topics matching `mm2\..*` as `primary.<name>`, checkpoints of the groups matching
//! `mm2.*` in `primary.checkpoints.internal` on the replica. The replica has a Connect worker of
//! its own (`connect2`).
//!
//! Helpers for either cluster: topics, records with keys, values, headers and timestamps (to
//! produce, to copy by hand, to read back), commits without joining a group, committed offsets as
//! the real `kafka-consumer-groups` reports them, MirrorMaker 2's checkpoints as Kafka's own
//! `CheckpointFormatter` prints them, the replica's Connect, and `offset-vault` pointed at either
//! cluster.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::{BorrowedMessage, Header, Headers, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};

use super::kcg::{parse_kcg_describe, run_kafka_tool};
use super::ov::{ov_raw, Run};
use super::poll::eventually;
use super::{blocking, env, unique_name};

/// The primary's alias in MirrorMaker 2's configuration (`fixtures/test-env/mm2.properties.in`).
pub const SOURCE_ALIAS: &str = "primary";

/// `--replication-policy` for the environment's MirrorMaker 2 (DefaultReplicationPolicy).
pub const REPLICATION_POLICY: &str = "default:primary";

/// MirrorMaker 2's checkpoints topic on the replica.
pub const CHECKPOINTS_TOPIC: &str = "primary.checkpoints.internal";

/// One of the environment's two clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cluster {
    /// The main cluster (`OV_BOOTSTRAP`), which MirrorMaker 2 replicates.
    Primary,
    /// The second cluster (`OV_KAFKA2_BOOTSTRAP`), MirrorMaker 2's target.
    Replica,
}

impl Cluster {
    /// Its PLAINTEXT bootstrap server.
    pub fn bootstrap(self) -> String {
        match self {
            Cluster::Primary => env::bootstrap(),
            Cluster::Replica => env::other_bootstrap(),
        }
    }

    /// The URL of its Kafka Connect worker.
    pub fn connect_url(self) -> String {
        match self {
            Cluster::Primary => env::connect_url(),
            Cluster::Replica => env::other_connect_url(),
        }
    }

    /// A client configuration for it.
    pub fn config(self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", self.bootstrap());
        config
    }
}

// ---------------------------------------------------------------------------------------------
// Names

/// A topic name unique to this run that MirrorMaker 2 replicates (`mm2.<prefix>-...`).
pub fn mirrored_topic(prefix: &str) -> String {
    unique_name(&format!("mm2.{prefix}"))
}

/// A group name unique to this run that MirrorMaker 2 checkpoints (`mm2-<prefix>-...`).
pub fn mirrored_group(prefix: &str) -> String {
    unique_name(&format!("mm2-{prefix}"))
}

/// The name MirrorMaker 2 gives the primary's `topic` on the replica.
pub fn replica_topic(topic: &str) -> String {
    format!("{SOURCE_ALIAS}.{topic}")
}

/// Milliseconds since the epoch, `ago` before now, rounded down to a whole second: a base for
/// explicit record timestamps that the brokers accept (not in the future) and keep (far from
/// retention).
pub fn timestamp_base(ago: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock before 1970")
        .as_millis() as i64;
    (now - ago.as_millis() as i64) / 1000 * 1000
}

// ---------------------------------------------------------------------------------------------
// Reachability

/// Checks that both clusters answer and that MirrorMaker 2 runs: its heartbeats (one a second,
/// into `heartbeats` on the replica) advance. See [`env::unavailable`] for what happens when not.
pub async fn require_mirror_maker() -> bool {
    if !(env::require_kafka() && env::require_other_kafka()) {
        return false;
    }
    match blocking(heartbeats_advance).await {
        Ok(()) => true,
        Err(detail) => env::unavailable("MirrorMaker 2", &detail),
    }
}

fn heartbeats_advance() -> Result<(), String> {
    let consumer: BaseConsumer = Cluster::Replica
        .config()
        .create()
        .expect("cannot create a Kafka consumer");
    let end = || {
        consumer
            .fetch_watermarks("heartbeats", 0, Duration::from_secs(5))
            .map(|(_, high)| high)
            .map_err(|e| format!("no heartbeats topic on the second cluster ({e})"))
    };
    let first = end()?;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if end()? > first {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "its heartbeats on the second cluster stayed at offset {first} for 15 s"
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Topics

/// Creates a topic on `cluster` (replication factor 1) and waits until every partition has a
/// leader.
pub async fn create_topic(cluster: Cluster, name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = cluster.config().create().expect("admin client");
    let results = admin
        .create_topics(
            [&NewTopic::new(name, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .unwrap_or_else(|e| panic!("create {name} on {cluster:?}: {e}"));
    for result in results {
        result.unwrap_or_else(|(t, code)| panic!("create {t} on {cluster:?}: {code}"));
    }
    eventually(
        &format!("{name} on {cluster:?} to show {partitions} partitions with leaders"),
        Duration::from_secs(30),
        || {
            let name = name.to_string();
            async move {
                let marks = watermarks(cluster, &name).await?;
                if marks.len() == partitions as usize {
                    Ok(())
                } else {
                    Err(format!("{marks:?}"))
                }
            }
        },
    )
    .await
}

/// Log-start and log-end offsets of every partition of `topic` on `cluster`; `Err` (with what
/// was seen) while the topic does not exist or a partition has no leader.
pub async fn watermarks(
    cluster: Cluster,
    topic: &str,
) -> Result<BTreeMap<i32, (i64, i64)>, String> {
    let topic = topic.to_string();
    blocking(move || {
        let consumer: BaseConsumer = cluster.config().create().expect("consumer");
        let metadata = consumer
            .fetch_metadata(Some(&topic), Duration::from_secs(5))
            .map_err(|e| format!("metadata: {e}"))?;
        let t = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .ok_or_else(|| "not in the metadata".to_string())?;
        if let Some(error) = t.error() {
            return Err(format!("metadata error {error:?}"));
        }
        if t.partitions().is_empty() || t.partitions().iter().any(|p| p.leader() < 0) {
            return Err(format!(
                "{} partitions, not all with leaders",
                t.partitions().len()
            ));
        }
        let mut marks = BTreeMap::new();
        for p in t.partitions() {
            let m = consumer
                .fetch_watermarks(&topic, p.id(), Duration::from_secs(5))
                .map_err(|e| format!("watermarks of partition {}: {e}", p.id()))?;
            marks.insert(p.id(), m);
        }
        Ok(marks)
    })
    .await
}

/// Log-end offsets of every partition of `topic` on `cluster` (the topic must exist).
pub async fn end_offsets(cluster: Cluster, topic: &str) -> BTreeMap<i32, i64> {
    watermarks(cluster, topic)
        .await
        .unwrap_or_else(|e| panic!("{topic} on {cluster:?}: {e}"))
        .into_iter()
        .map(|(p, (_, high))| (p, high))
        .collect()
}

/// Waits until MirrorMaker 2 has copied every record of the primary's `topic` to the replica:
/// the replica topic's log-end offsets are the primary's (MirrorMaker 2 starts a new topic at its
/// first record, so offsets match one to one).
pub async fn wait_replicated(topic: &str) {
    let want = end_offsets(Cluster::Primary, topic).await;
    let replica = replica_topic(topic);
    let (want, replica) = (&want, &replica);
    eventually(
        &format!("MirrorMaker 2 to copy {topic} ({want:?}) to {replica} on the replica"),
        Duration::from_secs(180),
        || async move {
            let marks = watermarks(Cluster::Replica, replica).await?;
            let ends: BTreeMap<i32, i64> = marks.iter().map(|(p, (_, h))| (*p, *h)).collect();
            if ends == *want {
                Ok(())
            } else {
                Err(format!("{ends:?}"))
            }
        },
    )
    .await
}

/// Deletes the records of `topic[partition]` before `offset` on `cluster` with the real
/// `kafka-delete-records`.
pub async fn delete_records(cluster: Cluster, topic: &str, partition: i32, offset: i64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("delete.json");
    let spec = json!({
        "version": 1,
        "partitions": [{ "topic": topic, "partition": partition, "offset": offset }],
    });
    std::fs::write(&file, spec.to_string()).expect("write the offsets file");
    let bootstrap = cluster.bootstrap();
    let file = file.to_str().expect("UTF-8 path").to_string();
    let out = run_kafka_tool(
        "kafka-delete-records",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--offset-json-file",
            &file,
        ],
    )
    .await;
    assert!(
        out.success && !out.stdout.contains("error"),
        "kafka-delete-records {topic}[{partition}] before {offset}:\n{}{}",
        out.stdout,
        out.stderr
    );
    let marks = watermarks(cluster, topic).await.expect("watermarks");
    assert_eq!(
        marks[&partition].0, offset,
        "log start of {topic}[{partition}] on {cluster:?} after kafka-delete-records"
    );
}

// ---------------------------------------------------------------------------------------------
// Records

/// One record: where it is (or is to go), its timestamp, key, value and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub partition: i32,
    /// Its offset once produced or read (-1 before).
    pub offset: i64,
    /// CreateTime, ms since the epoch.
    pub timestamp: i64,
    pub key: Option<String>,
    pub value: Option<String>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl Rec {
    /// A record for `partition` with this timestamp, key and value, and no headers.
    pub fn new(partition: i32, timestamp: i64, key: &str, value: &str) -> Rec {
        Rec {
            partition,
            offset: -1,
            timestamp,
            key: Some(key.to_string()),
            value: Some(value.to_string()),
            headers: Vec::new(),
        }
    }

    /// The same record with one more header.
    pub fn with_header(mut self, key: &str, value: &str) -> Rec {
        self.headers
            .push((key.to_string(), Some(value.as_bytes().to_vec())));
        self
    }

    /// What a consumer sees of it, without where it is: timestamp, key, value, headers.
    pub fn content(&self) -> Content<'_> {
        Content {
            timestamp: self.timestamp,
            key: self.key.as_deref(),
            value: self.value.as_deref(),
            headers: &self.headers,
        }
    }

    fn of(message: &BorrowedMessage<'_>) -> Rec {
        let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        Rec {
            partition: message.partition(),
            offset: message.offset(),
            timestamp: message
                .timestamp()
                .to_millis()
                .expect("a record with a timestamp"),
            key: text(message.key()),
            value: text(message.payload()),
            headers: message
                .headers()
                .map(|headers| {
                    headers
                        .iter()
                        .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// A record's content, as [`Rec::content`] gives it: what must be the same on both clusters.
#[derive(Debug, PartialEq, Eq)]
pub struct Content<'a> {
    pub timestamp: i64,
    pub key: Option<&'a str>,
    pub value: Option<&'a str>,
    pub headers: &'a [(String, Option<Vec<u8>>)],
}

/// Produces `records` to `topic` on `cluster`, in order (an idempotent producer: each partition
/// gets them in the order given), with their timestamps, keys, values and headers. Returns them
/// with the offsets the broker gave them.
pub async fn produce(cluster: Cluster, topic: &str, records: &[Rec]) -> Vec<Rec> {
    let producer: FutureProducer = cluster
        .config()
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create()
        .expect("cannot create a Kafka producer");
    let mut pending = Vec::with_capacity(records.len());
    for record in records {
        let mut headers = OwnedHeaders::new_with_capacity(record.headers.len());
        for (key, value) in &record.headers {
            headers = headers.insert(Header {
                key: key.as_str(),
                value: value.as_deref(),
            });
        }
        let mut future_record = FutureRecord::<str, str>::to(topic)
            .partition(record.partition)
            .timestamp(record.timestamp)
            .headers(headers);
        if let Some(key) = record.key.as_deref() {
            future_record = future_record.key(key);
        }
        if let Some(value) = record.value.as_deref() {
            future_record = future_record.payload(value);
        }
        let future = producer
            .send_result(future_record)
            .unwrap_or_else(|(e, _)| panic!("enqueue a record for {topic} on {cluster:?}: {e}"));
        pending.push((record.clone(), future));
    }
    let mut delivered = Vec::with_capacity(pending.len());
    for (mut record, future) in pending {
        let delivery = future
            .await
            .expect("producer dropped a delivery report")
            .unwrap_or_else(|(e, _)| panic!("deliver {record:?} to {topic} on {cluster:?}: {e}"));
        assert_eq!(delivery.partition, record.partition);
        record.offset = delivery.offset;
        delivered.push(record);
    }
    delivered
}

/// Every record of `topic[partition]` on `cluster`, from its log start to its log end.
pub async fn read_partition(cluster: Cluster, topic: &str, partition: i32) -> Vec<Rec> {
    let marks = watermarks(cluster, topic)
        .await
        .unwrap_or_else(|e| panic!("{topic} on {cluster:?}: {e}"));
    let (low, high) = marks[&partition];
    let topic = topic.to_string();
    blocking(move || {
        let mut records = Vec::new();
        if low == high {
            return records;
        }
        // librdkafka wants a group id even for assign(); it is never used to join or commit.
        let consumer: BaseConsumer = cluster
            .config()
            .set("group.id", unique_name("ov-test-reader"))
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .create()
            .expect("cannot create a Kafka consumer");
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, partition, Offset::Offset(low))
            .expect("partition list");
        consumer.assign(&tpl).expect("assign");
        let deadline = Instant::now() + Duration::from_secs(60);
        while records.last().is_none_or(|r: &Rec| r.offset < high - 1) {
            assert!(
                Instant::now() < deadline,
                "read only {} records of {topic}[{partition}] on {cluster:?} ({low}..{high}) within 60 s",
                records.len()
            );
            match consumer.poll(Duration::from_millis(100)) {
                None => {}
                Some(Err(e)) => eprintln!("reading {topic} on {cluster:?}: {e} (retrying)"),
                Some(Ok(message)) => records.push(Rec::of(&message)),
            }
        }
        records
    })
    .await
}

/// Joins `group` on `cluster` as a consumer of `topic` (auto.offset.reset=error: it starts where
/// the group's committed offsets say, and a partition without one is an error, not a silent start
/// somewhere) and returns the first record it gets from each of the `partitions` partitions.
/// Commits nothing.
pub async fn first_records_from_committed(
    cluster: Cluster,
    group: &str,
    topic: &str,
    partitions: i32,
) -> BTreeMap<i32, Rec> {
    let (group, topic) = (group.to_string(), topic.to_string());
    blocking(move || {
        let consumer: BaseConsumer = cluster
            .config()
            .set("group.id", &group)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "error")
            .set("enable.partition.eof", "false")
            .create()
            .expect("cannot create a Kafka consumer");
        consumer
            .subscribe(&[&topic])
            .unwrap_or_else(|e| panic!("subscribe {group} to {topic}: {e}"));
        let mut first: BTreeMap<i32, Rec> = BTreeMap::new();
        let mut errors: Vec<String> = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while first.len() < partitions as usize {
            assert!(
                Instant::now() < deadline,
                "{group} on {cluster:?} got records from only {:?} of {partitions} partitions of \
                 {topic} within 60 s; errors: {errors:?}",
                first.keys().collect::<Vec<_>>()
            );
            match consumer.poll(Duration::from_millis(100)) {
                None => {}
                Some(Err(e)) => errors.push(e.to_string()),
                Some(Ok(message)) => {
                    first
                        .entry(message.partition())
                        .or_insert_with(|| Rec::of(&message));
                }
            }
        }
        first
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Committed offsets

/// Commits `offsets` for `group` on `topic` on `cluster` without joining the group (an Empty
/// group with these offsets; on the replica they expire a minute later).
pub async fn commit(cluster: Cluster, group: &str, topic: &str, offsets: &BTreeMap<i32, i64>) {
    let (group, topic, offsets) = (group.to_string(), topic.to_string(), offsets.clone());
    blocking(move || {
        let consumer: BaseConsumer = cluster
            .config()
            .set("group.id", &group)
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        let mut tpl = TopicPartitionList::new();
        for (p, o) in &offsets {
            tpl.add_partition_offset(&topic, *p, Offset::Offset(*o))
                .expect("offset list");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
            assert!(
                Instant::now() < deadline,
                "commit {offsets:?} for {group} on {cluster:?}: {e}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    })
    .await
}

/// The offsets `group` has committed on `topic` on `cluster`, as the real
/// `kafka-consumer-groups --describe` reports them; empty when the tool says the group does not
/// exist. A describe that fails (a coordinator still loading, or deleting an expired group) is
/// asked again for up to 15 s.
pub async fn committed(cluster: Cluster, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let bootstrap = cluster.bootstrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let out = run_kafka_tool(
            "kafka-consumer-groups",
            &[
                "--bootstrap-server",
                &bootstrap,
                "--describe",
                "--group",
                group,
            ],
        )
        .await;
        let text = format!("{}{}", out.stdout, out.stderr);
        if text.contains("does not exist") || text.contains("not found") {
            return BTreeMap::new();
        }
        if out.success && !out.stdout.contains("Error:") {
            return parse_kcg_describe(&out.stdout)
                .into_iter()
                .filter(|r| r.topic == topic)
                .filter_map(|r| Some((r.partition, r.current_offset?)))
                .collect();
        }
        assert!(
            Instant::now() < deadline,
            "kafka-consumer-groups --describe --group {group} on {cluster:?}:\n{text}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// MirrorMaker 2's checkpoints

/// One checkpoint as Kafka's `CheckpointFormatter` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub group: String,
    /// The topic as it is called on the replica.
    pub topic: String,
    pub partition: i32,
    pub upstream: i64,
    pub downstream: i64,
}

/// Parses `Checkpoint{consumerGroupId=g, topicPartition=t-0, upstreamOffset=4,
/// downstreamOffset=1, metadata=}` lines; other lines are skipped.
pub fn parse_checkpoints(stdout: &str) -> Vec<Checkpoint> {
    stdout
        .lines()
        .filter_map(|line| {
            let inner = line.trim().strip_prefix("Checkpoint{")?.strip_suffix('}')?;
            let mut fields = BTreeMap::new();
            for part in inner.split(", ") {
                let (k, v) = part.split_once('=')?;
                fields.insert(k, v);
            }
            let (topic, partition) = fields.get("topicPartition")?.rsplit_once('-')?;
            Some(Checkpoint {
                group: fields.get("consumerGroupId")?.to_string(),
                topic: topic.to_string(),
                partition: partition.parse().ok()?,
                upstream: fields.get("upstreamOffset")?.parse().ok()?,
                downstream: fields.get("downstreamOffset")?.parse().ok()?,
            })
        })
        .collect()
}

/// The newest checkpoint MirrorMaker 2 wrote for each partition of `replica_topic` for `group`,
/// read from the whole checkpoints topic with the real `kafka-console-consumer` and Kafka's
/// `CheckpointFormatter`.
pub async fn checkpoints(group: &str, replica_topic: &str) -> BTreeMap<i32, Checkpoint> {
    let bootstrap = Cluster::Replica.bootstrap();
    let out = run_kafka_tool(
        "kafka-console-consumer",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            CHECKPOINTS_TOPIC,
            "--from-beginning",
            "--timeout-ms",
            "5000",
            "--formatter",
            "org.apache.kafka.connect.mirror.formatters.CheckpointFormatter",
        ],
    )
    .await;
    parse_checkpoints(&out.stdout)
        .into_iter()
        .filter(|c| c.group == group && c.topic == replica_topic)
        .map(|c| (c.partition, c))
        .collect()
}

/// Waits until MirrorMaker 2's newest checkpoint of `group` on every partition of
/// `replica_topic` translates exactly the offsets `upstream` the group committed on the primary,
/// and returns them.
pub async fn wait_checkpoints(
    group: &str,
    replica_topic: &str,
    upstream: &BTreeMap<i32, i64>,
) -> BTreeMap<i32, Checkpoint> {
    eventually(
        &format!("MirrorMaker 2 to checkpoint {group} at {upstream:?} on {replica_topic}"),
        Duration::from_secs(180),
        || async move {
            let found = checkpoints(group, replica_topic).await;
            let seen: BTreeMap<i32, i64> = found.iter().map(|(p, c)| (*p, c.upstream)).collect();
            if seen == *upstream {
                Ok(found)
            } else {
                Err(format!("upstream offsets checkpointed: {seen:?}"))
            }
        },
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// offset-vault against either cluster

/// Runs `offset-vault` against `cluster` (its bootstrap server and its Connect), with `store`.
pub async fn ov_on(cluster: Cluster, store: &str, args: &[&str]) -> Run {
    let mut all: Vec<String> = vec![
        "--bootstrap-server".into(),
        cluster.bootstrap(),
        "--connect-url".into(),
        cluster.connect_url(),
        "--store".into(),
        store.into(),
        "--timeout".into(),
        "20s".into(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    ov_raw(all).await
}

/// The plan's partition rows (`plan.groups[].partitions[]`) on `topic`, by partition.
pub fn plan_rows(doc: &Value, topic: &str) -> BTreeMap<i32, Value> {
    let groups = doc["plan"]["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("no plan.groups in:\n{doc:#}"));
    let rows: BTreeMap<i32, Value> = groups
        .iter()
        .flat_map(|g| g["partitions"].as_array().cloned().unwrap_or_default())
        .filter(|row| row["topic"] == topic)
        .map(|row| (row["partition"].as_i64().expect("partition") as i32, row))
        .collect();
    assert!(!rows.is_empty(), "no plan row on {topic} in:\n{doc:#}");
    rows
}

/// The text of a run, stdout and stderr, for messages that may be on either.
pub fn all_output(run: &Run) -> String {
    format!("{}\n{}", run.stdout, run.stderr)
}

// ---------------------------------------------------------------------------------------------
// The replica's Kafka Connect

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("build HTTP client")
}

/// A request to the replica's Connect REST API: the status and the JSON body (`Null` when
/// empty). Retries while the worker answers 409 (rebalance in progress).
pub async fn other_connect(
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (reqwest::StatusCode, Value) {
    super::connect::connect_request_at(&env::other_connect_url(), method, path, body).await
}

/// Waits until the connector and all its tasks (at least one) are RUNNING on the replica's
/// Connect; panics on FAILED.
pub async fn wait_other_connector_running(name: &str, timeout: Duration) -> Value {
    eventually(
        &format!("connector {name} to be RUNNING with all tasks on the replica's Connect"),
        timeout,
        || async move {
            let (status, value) = other_connect(
                reqwest::Method::GET,
                &format!("/connectors/{name}/status"),
                None,
            )
            .await;
            if status != reqwest::StatusCode::OK {
                return Err(format!("{status} {value}"));
            }
            let tasks = value["tasks"].as_array().cloned().unwrap_or_default();
            let failed = value["connector"]["state"] == "FAILED"
                || tasks.iter().any(|t| t["state"] == "FAILED");
            assert!(!failed, "connector {name} failed on the replica: {value:#}");
            if value["connector"]["state"] == "RUNNING"
                && !tasks.is_empty()
                && tasks.iter().all(|t| t["state"] == "RUNNING")
            {
                Ok(value)
            } else {
                Err(format!("{value:#}"))
            }
        },
    )
    .await
}

/// Deletes a connector of the replica's Connect when dropped, so that no test leaves one running.
pub struct OtherConnectorCleanup {
    name: String,
}

impl OtherConnectorCleanup {
    pub fn new(name: &str) -> OtherConnectorCleanup {
        OtherConnectorCleanup {
            name: name.to_string(),
        }
    }
}

impl Drop for OtherConnectorCleanup {
    fn drop(&mut self) {
        let url = format!("{}/connectors/{}", env::other_connect_url(), self.name);
        // Drop cannot await: delete from a separate thread with its own small runtime.
        let _ = std::thread::spawn(move || {
            if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                runtime.block_on(async {
                    let _ = http().delete(url).send().await;
                });
            }
        })
        .join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_lines_are_parsed_and_others_skipped() {
        let out = "\
Checkpoint{consumerGroupId=mm2-orders-app, topicPartition=primary.mm2.orders-0, upstreamOffset=30, downstreamOffset=1, metadata=}
Processed a total of 1 messages
Checkpoint{consumerGroupId=mm2-g-1, topicPartition=primary.mm2.a-b-12, upstreamOffset=58, downstreamOffset=58, metadata=ov}
";
        assert_eq!(
            parse_checkpoints(out),
            vec![
                Checkpoint {
                    group: "mm2-orders-app".into(),
                    topic: "primary.mm2.orders".into(),
                    partition: 0,
                    upstream: 30,
                    downstream: 1,
                },
                Checkpoint {
                    group: "mm2-g-1".into(),
                    topic: "primary.mm2.a-b".into(),
                    partition: 12,
                    upstream: 58,
                    downstream: 58,
                },
            ]
        );
    }

    #[test]
    fn replica_names_follow_the_default_replication_policy() {
        let topic = mirrored_topic("orders");
        assert!(topic.starts_with("mm2.orders-"), "{topic}");
        assert_eq!(replica_topic(&topic), format!("primary.{topic}"));
        assert!(mirrored_group("g").starts_with("mm2-g-"));
    }
}
