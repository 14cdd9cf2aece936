//! Helpers for the integration tests: connection settings, reachability checks, and small clients
//! for Kafka, the `kafka-consumer-groups` tool, the Kafka Connect REST API and the S3 server.
//!
//! Every setting comes from an environment variable and defaults to the local environment that
//! `scripts/test-env up` starts (see `scripts/test-env env`).
//!
//! Kafka helpers that block (consumers, metadata, the command-line tool) run on tokio's blocking
//! pool, so they can be awaited from `#[tokio::test(flavor = "multi_thread")]` tests.
#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::{ClientOptions, RetryConfig};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Settings

fn env_or(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => value,
        _ => default.to_string(),
    }
}

/// Kafka bootstrap servers (`OV_BOOTSTRAP`).
pub fn bootstrap() -> String {
    env_or("OV_BOOTSTRAP", "127.0.0.1:19092")
}

/// Base URL of the Kafka Connect REST API, without a trailing slash (`OV_CONNECT_URL`).
pub fn connect_url() -> String {
    env_or("OV_CONNECT_URL", "http://127.0.0.1:18083")
        .trim_end_matches('/')
        .to_string()
}

/// S3 endpoint (`OV_S3_ENDPOINT`).
pub fn s3_endpoint() -> String {
    env_or("OV_S3_ENDPOINT", "http://127.0.0.1:19000")
}

/// S3 bucket (`OV_S3_BUCKET`).
pub fn s3_bucket() -> String {
    env_or("OV_S3_BUCKET", "offset-vault-test")
}

/// S3 access key id (`OV_S3_ACCESS_KEY`).
pub fn s3_access_key() -> String {
    env_or("OV_S3_ACCESS_KEY", "ovtestaccess")
}

/// S3 secret access key (`OV_S3_SECRET_KEY`).
pub fn s3_secret_key() -> String {
    env_or("OV_S3_SECRET_KEY", "ovtestsecret-0123456789")
}

/// S3 region (`OV_S3_REGION`).
pub fn s3_region() -> String {
    env_or("OV_S3_REGION", "us-east-1")
}

/// The cache directory of `scripts/test-env` (`OV_CACHE_DIR`, default `~/.cache/offset-vault`).
pub fn cache_dir() -> PathBuf {
    match std::env::var("OV_CACHE_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env_or("HOME", "/root")).join(".cache/offset-vault"),
    }
}

/// Python interpreter with pyarrow (`OV_PYTHON`, default: the venv that `scripts/test-env` makes).
pub fn python() -> PathBuf {
    match std::env::var("OV_PYTHON") {
        Ok(path) if !path.is_empty() => PathBuf::from(path),
        _ => cache_dir().join("venv/bin/python"),
    }
}

/// Directory with the Kafka tool wrappers (`OV_KAFKA_TOOLS_DIR`, default: the repository's `scripts/`).
pub fn kafka_tools_dir() -> PathBuf {
    match std::env::var("OV_KAFKA_TOOLS_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts"),
    }
}

/// True when running under CI (the `CI` variable is set): missing services are then a failure,
/// never a skip.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

// ---------------------------------------------------------------------------------------------
// Names

static NAME_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique to this run, valid as a topic, group or connector name:
/// `<prefix>-<unix millis>-<counter>-<random hex>`.
pub fn unique_name(prefix: &str) -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock before 1970")
        .as_millis();
    let counter = NAME_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(counter);
    hasher.write_u32(std::process::id());
    let random = hasher.finish() & 0xffff_ffff;
    let prefix: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{prefix}-{millis}-{counter}-{random:08x}")
}

// ---------------------------------------------------------------------------------------------
// Reachability

/// Host and port of a `host:port` or `scheme://host:port/...` address.
fn host_port(address: &str, default_port: u16) -> String {
    let rest = address.split_once("://").map_or(address, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    if authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:{default_port}")
    }
}

fn reachable(host_port: &str) -> bool {
    let Ok(addresses) = host_port.to_socket_addrs() else {
        return false;
    };
    addresses
        .into_iter()
        .any(|address| TcpStream::connect_timeout(&address, Duration::from_secs(2)).is_ok())
}

/// Under CI: panics. Elsewhere: prints a loud SKIPPED line and returns false.
fn unavailable(what: &str, detail: &str) -> bool {
    let message = format!(
        "{what} is not available ({detail}); start the test environment with `scripts/test-env up`"
    );
    if in_ci() {
        panic!("{message} (CI is set, so this is a failure, not a skip)");
    }
    eprintln!();
    eprintln!("**********************************************************************");
    eprintln!("SKIPPED: {message}");
    eprintln!("**********************************************************************");
    false
}

fn require_tcp(what: &str, address: &str, default_port: u16) -> bool {
    let target = host_port(address, default_port);
    if reachable(&target) {
        true
    } else {
        unavailable(what, &format!("nothing answers at {target}"))
    }
}

/// Checks that the Kafka broker answers. See [`unavailable`] for what happens when it does not.
pub fn require_kafka() -> bool {
    let servers = bootstrap();
    let first = servers
        .split(',')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    require_tcp("Kafka", &first, 9092)
}

/// Checks that the Kafka Connect REST API answers.
pub fn require_connect() -> bool {
    require_tcp("Kafka Connect", &connect_url(), 80)
}

/// Checks that the S3 server answers.
pub fn require_s3() -> bool {
    require_tcp("The S3 server", &s3_endpoint(), 80)
}

/// Checks that the Python interpreter exists and imports pyarrow.
pub fn require_python() -> bool {
    let python = python();
    let ok = Command::new(&python)
        .args(["-c", "import pyarrow"])
        .output()
        .is_ok_and(|out| out.status.success());
    if ok {
        true
    } else {
        unavailable(
            "Python with pyarrow",
            &format!("{} cannot import pyarrow", python.display()),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Running blocking code from async tests

/// Runs blocking code on tokio's blocking pool; a panic inside is re-raised with its message.
pub async fn blocking<T, F>(f: F) -> T
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => value,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => panic!("blocking task failed: {error}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Kafka

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
    let name = name.to_string();
    blocking(move || {
        let consumer = metadata_consumer();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(metadata) = consumer.fetch_metadata(Some(&name), Duration::from_secs(5)) {
                let ready = metadata.topics().iter().any(|t| {
                    t.name() == name
                        && t.error().is_none()
                        && t.partitions().len() == partitions as usize
                        && t.partitions()
                            .iter()
                            .all(|p| p.error().is_none() && p.leader() >= 0)
                });
                if ready {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "topic {name} did not show {partitions} partitions with leaders within 30s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
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

// ---------------------------------------------------------------------------------------------
// kafka-consumer-groups (the reference tool)

/// Output of one run of a Kafka tool.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a tool from [`kafka_tools_dir`] (e.g. `kafka-consumer-groups`) with the given arguments.
pub async fn run_kafka_tool(tool: &str, args: &[&str]) -> ToolOutput {
    let program = kafka_tools_dir().join(tool);
    let args: Vec<String> = args.iter().map(|a| (*a).to_string()).collect();
    blocking(move || {
        let output = Command::new(&program)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        ToolOutput {
            success: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    })
    .await
}

/// Runs `kafka-consumer-groups --bootstrap-server <OV_BOOTSTRAP> ARGS...`.
pub async fn kcg(args: &[&str]) -> ToolOutput {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-consumer-groups", &all).await
}

/// One partition row of `kafka-consumer-groups --describe --group G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KcgRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// `None` where the tool prints `-` (no committed offset).
    pub current_offset: Option<i64>,
    pub log_end: Option<i64>,
    pub lag: Option<i64>,
    pub consumer_id: Option<String>,
    pub host: Option<String>,
    pub client_id: Option<String>,
}

fn dash_none(value: &str) -> Option<String> {
    (value != "-").then(|| value.to_string())
}

fn dash_i64(value: &str, what: &str) -> Option<i64> {
    (value != "-").then(|| {
        value
            .parse()
            .unwrap_or_else(|e| panic!("kafka-consumer-groups {what} {value:?}: {e}"))
    })
}

/// Parses the partition table of `kafka-consumer-groups --describe [--offsets] [--verbose]`.
/// Columns are found by their header names, so optional columns (e.g. LEADER-EPOCH) do not matter.
/// Lines that are not part of a table (blank lines, "Consumer group 'g' has no active members.")
/// are skipped.
pub fn parse_kcg_describe(stdout: &str) -> Vec<KcgRow> {
    let mut rows = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            header = None;
            continue;
        }
        if fields[0] == "GROUP" && fields.contains(&"PARTITION") {
            header = Some(fields);
            continue;
        }
        let Some(columns) = header.as_ref() else {
            continue;
        };
        if fields.len() != columns.len() {
            continue;
        }
        let get = |name: &str| {
            columns
                .iter()
                .position(|c| *c == name)
                .map(|i| fields[i])
                .unwrap_or("-")
        };
        rows.push(KcgRow {
            group: get("GROUP").to_string(),
            topic: get("TOPIC").to_string(),
            partition: get("PARTITION")
                .parse()
                .unwrap_or_else(|e| panic!("kafka-consumer-groups partition in {line:?}: {e}")),
            current_offset: dash_i64(get("CURRENT-OFFSET"), "CURRENT-OFFSET"),
            log_end: dash_i64(get("LOG-END-OFFSET"), "LOG-END-OFFSET"),
            lag: dash_i64(get("LAG"), "LAG"),
            consumer_id: dash_none(get("CONSUMER-ID")),
            host: dash_none(get("HOST")),
            client_id: dash_none(get("CLIENT-ID")),
        });
    }
    rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    rows
}

/// `kafka-consumer-groups --describe --group G`, parsed. Panics if the tool reports an error
/// (it prints "Error: ..." and still exits 0 for a group that does not exist).
pub async fn kcg_describe(group: &str) -> Vec<KcgRow> {
    let out = kcg(&["--describe", "--group", group]).await;
    assert!(
        out.success && !out.stdout.contains("Error:"),
        "kafka-consumer-groups --describe --group {group} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    parse_kcg_describe(&out.stdout)
}

/// The STATE column of `kafka-consumer-groups --describe --group G --state` (e.g. "Empty",
/// "Stable"), or `None` when the tool says the group does not exist.
pub async fn kcg_group_state(group: &str) -> Option<String> {
    let out = kcg(&["--describe", "--group", group, "--state"]).await;
    if out.stdout.contains("does not exist") || out.stdout.contains("not found") {
        return None;
    }
    assert!(
        out.success && !out.stdout.contains("Error:"),
        "kafka-consumer-groups --describe --state --group {group} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    parse_kcg_state(&out.stdout, group)
}

/// Parses `--describe --state` output. The COORDINATOR (ID) column holds spaces, so the STATE
/// value is located by the header's column position (the tool pads columns to align).
pub fn parse_kcg_state(stdout: &str, group: &str) -> Option<String> {
    let mut state_column: Option<usize> = None;
    for line in stdout.lines() {
        if line.starts_with("GROUP") {
            state_column = line.find(" STATE").map(|i| i + 1);
            continue;
        }
        if let Some(column) = state_column {
            if line.split_whitespace().next() == Some(group) && line.len() > column {
                return line[column..].split_whitespace().next().map(str::to_string);
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Kafka Connect REST API

const FILE_SINK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const FILE_SOURCE_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const STRING_CONVERTER: &str = "org.apache.kafka.connect.storage.StringConverter";

fn http() -> reqwest::Client {
    // A new client per call: tests run on separate runtimes, and pooled connections must not
    // outlive the runtime that opened them.
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("build HTTP client")
}

/// Sends a request to the Connect REST API and returns the status and the JSON body
/// (`Value::Null` when empty). Retries while the worker answers 409 (rebalance in progress).
pub async fn connect_request(
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (reqwest::StatusCode, Value) {
    let url = format!("{}{path}", connect_url());
    let client = http();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut request = client.request(method.clone(), &url);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = response.status();
        let text = response
            .text()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}"));
        let value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if status == reqwest::StatusCode::CONFLICT && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        return (status, value);
    }
}

/// Creates a connector (`POST /connectors`). Panics unless the worker answers 201.
pub async fn create_connector(name: &str, config: Value) -> Value {
    let body = json!({ "name": name, "config": config });
    let (status, value) = connect_request(reqwest::Method::POST, "/connectors", Some(&body)).await;
    assert_eq!(
        status,
        reqwest::StatusCode::CREATED,
        "create connector {name}: {value}"
    );
    value
}

/// `GET /connectors/{name}/status`, or `None` if the connector does not exist.
pub async fn connector_status(name: &str) -> Option<Value> {
    let (status, value) = connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/status"),
        None,
    )
    .await;
    match status {
        reqwest::StatusCode::OK => Some(value),
        reqwest::StatusCode::NOT_FOUND => None,
        other => panic!("status of connector {name}: {other} {value}"),
    }
}

/// Waits until the connector and all its tasks (at least one) are RUNNING; panics with the last
/// status (including any task trace) on FAILED or timeout. Returns the status.
pub async fn wait_connector_running(name: &str, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    let mut last = Value::Null;
    while Instant::now() < deadline {
        if let Some(status) = connector_status(name).await {
            let connector_state = status["connector"]["state"].as_str().unwrap_or_default();
            let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
            let failed = connector_state == "FAILED"
                || tasks.iter().any(|t| t["state"].as_str() == Some("FAILED"));
            assert!(!failed, "connector {name} failed: {status:#}");
            let running = connector_state == "RUNNING"
                && !tasks.is_empty()
                && tasks.iter().all(|t| t["state"].as_str() == Some("RUNNING"));
            if running {
                return status;
            }
            last = status;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("connector {name} not RUNNING with all tasks within {timeout:?}; last status: {last:#}");
}

/// Deletes a connector (`DELETE /connectors/{name}`) and waits until the worker no longer lists
/// it. A connector that does not exist is fine.
pub async fn delete_connector(name: &str) {
    let (status, value) = connect_request(
        reqwest::Method::DELETE,
        &format!("/connectors/{name}"),
        None,
    )
    .await;
    assert!(
        status.is_success() || status == reqwest::StatusCode::NOT_FOUND,
        "delete connector {name}: {status} {value}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while connector_status(name).await.is_some() {
        assert!(
            Instant::now() < deadline,
            "connector {name} still listed 30s after DELETE"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `GET /connectors/{name}/offsets`: `{"offsets": [{"partition": {..}, "offset": {..}}, ..]}`.
pub async fn connector_offsets(name: &str) -> Value {
    let (status, value) = connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/offsets"),
        None,
    )
    .await;
    assert_eq!(
        status,
        reqwest::StatusCode::OK,
        "offsets of connector {name}: {value}"
    );
    value
}

/// Config of a FileStreamSink connector writing the records of `topic` to `out_path`, one value
/// per line. Keys and values are plain strings (StringConverter).
pub fn file_sink(topic: &str, out_path: &Path) -> Value {
    json!({
        "connector.class": FILE_SINK_CLASS,
        "tasks.max": "1",
        "topics": topic,
        "file": out_path.to_str().expect("UTF-8 path"),
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    })
}

/// Config of a FileStreamSource connector sending each line of `in_path` to `topic` as a string
/// value.
pub fn file_source(in_path: &Path, topic: &str) -> Value {
    json!({
        "connector.class": FILE_SOURCE_CLASS,
        "tasks.max": "1",
        "file": in_path.to_str().expect("UTF-8 path"),
        "topic": topic,
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
    })
}

/// Deletes a connector when dropped, so a failing test leaves no connector running.
/// Call [`ConnectorCleanup::delete`] at the end of a passing test.
pub struct ConnectorCleanup {
    name: Option<String>,
}

impl ConnectorCleanup {
    pub fn new(name: &str) -> ConnectorCleanup {
        ConnectorCleanup {
            name: Some(name.to_string()),
        }
    }

    /// Deletes the connector now (and waits until it is gone).
    pub async fn delete(mut self) {
        if let Some(name) = self.name.take() {
            delete_connector(&name).await;
        }
    }
}

impl Drop for ConnectorCleanup {
    fn drop(&mut self) {
        let Some(name) = self.name.take() else {
            return;
        };
        // Drop cannot await: delete from a separate thread with its own small runtime.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    let url = format!("{}/connectors/{name}", connect_url());
                    let _ = http().delete(url).send().await;
                });
            }
        })
        .join();
    }
}

// ---------------------------------------------------------------------------------------------
// S3

/// An S3 client for the test bucket with the configured credentials.
pub fn s3_store() -> AmazonS3 {
    s3_store_with_secret(&s3_secret_key())
}

/// An S3 client for the test bucket with the configured access key and the given secret.
pub fn s3_store_with_secret(secret: &str) -> AmazonS3 {
    AmazonS3Builder::new()
        // Client options first: with_client_options replaces all of them, allow_http included.
        .with_client_options(ClientOptions::new().with_timeout(Duration::from_secs(30)))
        .with_endpoint(s3_endpoint())
        .with_allow_http(true)
        .with_access_key_id(s3_access_key())
        .with_secret_access_key(secret)
        .with_region(s3_region())
        .with_bucket_name(s3_bucket())
        .with_virtual_hosted_style_request(false)
        .with_retry(RetryConfig {
            max_retries: 1,
            retry_timeout: Duration::from_secs(10),
            ..RetryConfig::default()
        })
        .build()
        .expect("build the S3 client")
}

/// `s3://<bucket>/<prefix>`, a store URL for the command-line tool.
pub fn s3_url(prefix: &str) -> String {
    format!("s3://{}/{}", s3_bucket(), prefix.trim_start_matches('/'))
}

/// Environment variables that point an `object_store` S3 client configured from the environment
/// (`AmazonS3Builder::from_env`) at the test server.
pub fn s3_env() -> Vec<(String, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID".into(), s3_access_key()),
        ("AWS_SECRET_ACCESS_KEY".into(), s3_secret_key()),
        ("AWS_REGION".into(), s3_region()),
        ("AWS_DEFAULT_REGION".into(), s3_region()),
        ("AWS_ENDPOINT".into(), s3_endpoint()),
        ("AWS_ENDPOINT_URL".into(), s3_endpoint()),
        ("AWS_ALLOW_HTTP".into(), "true".into()),
        ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST".into(), "false".into()),
    ]
}
