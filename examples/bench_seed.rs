//! Seeds and clears the benchmark groups of `scripts/bench compare|latency|rows`: many groups,
//! each with a committed offset on every partition of a set of topics, committed fast.
//!
//! ```text
//! bench_seed seed    --prefix P --groups G --partitions N [--records R] [--offset O]
//! bench_seed commit  --prefix P --groups G --partitions N --offset O
//! bench_seed cleanup --prefix P
//! bench_seed replica --prefix P --partitions N --target HOST:PORT --truth FILE \
//!                    [--first-partition F] [--records R] [--base-ms MS]
//! ```
//!
//! `--first F` starts at group F instead of 0 (to add groups to those already seeded), and
//! `--wire` commits through the library's own protocol client (one connection, `--jobs` requests
//! in flight) instead of one librdkafka consumer per group: what makes 100,000 groups quick.
//!
//! Groups are `P-g00000`, `P-g00001`, ...; a group's N partitions are spread over topics `P-t000`,
//! `P-t001`, ... of `--topic-partitions` (default 100) partitions each. `seed` creates the topics,
//! writes R records to every partition (so that offsets up to R are in range), and commits offset
//! O on every partition for every group: one OffsetCommit per group with all its partitions,
//! `--jobs` (default 64) groups at a time. `commit` commits again (to move the offsets between
//! restore runs). `cleanup` deletes the groups and topics whose names start with P.
//!
//! `replica` (for `scripts/bench translate`) makes a source cluster (`OV_BOOTSTRAP`) and a
//! replica of it (`--target`) that began, lost and kept records as a MirrorMaker 2 replica
//! might: see [`replica`] for the shape. It creates the topics of partitions F..N (F a multiple
//! of `--topic-partitions`) on both and writes their records, commits one offset per partition
//! of all N for the group `P-n{N}` on the source, and writes FILE: per partition of the N, the
//! committed offset, the exact position on the target (the offset after the copy of the last
//! consumed record) and what the bound of a translation by time depends on.
//! On success one JSON line goes to standard output: what was done and how long it took.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

struct Layout {
    prefix: String,
    first: usize,
    groups: usize,
    partitions: usize,
    topic_partitions: usize,
}

impl Layout {
    fn group(&self, g: usize) -> String {
        format!("{}-g{g:05}", self.prefix)
    }
    /// The topics and how many partitions each has: `partitions` in all.
    fn topics(&self) -> Vec<(String, usize)> {
        let count = self.partitions.div_ceil(self.topic_partitions);
        (0..count)
            .map(|t| {
                let n = self
                    .topic_partitions
                    .min(self.partitions - t * self.topic_partitions);
                (format!("{}-t{t:03}", self.prefix), n)
            })
            .collect()
    }
    fn offsets(&self, offset: i64) -> TopicPartitionList {
        let mut tpl = TopicPartitionList::new();
        for (topic, n) in self.topics() {
            for p in 0..n as i32 {
                tpl.add_partition_offset(&topic, p, Offset::Offset(offset))
                    .expect("a valid offset");
            }
        }
        tpl
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: bench_seed seed|commit|cleanup|replica --prefix P [--groups G --partitions N] \
         [--topic-partitions T] [--records R] [--offset O] [--jobs J] \
         [--target B --truth FILE --first-partition F --base-ms MS]"
    );
    std::process::exit(2)
}

fn value<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    let at = args.iter().position(|a| a == name)?;
    let raw = args.get(at + 1).unwrap_or_else(|| usage());
    Some(raw.parse().unwrap_or_else(|_| {
        eprintln!("bench_seed: {name}: cannot read {raw:?}");
        std::process::exit(2)
    }))
}

fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bootstrap = std::env::var("OV_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:19092".into());
    let command = args.first().cloned().unwrap_or_else(|| usage());
    let layout = Layout {
        prefix: value(&args, "--prefix").unwrap_or_else(|| usage()),
        first: value(&args, "--first").unwrap_or(0),
        groups: value(&args, "--groups").unwrap_or(0),
        partitions: value(&args, "--partitions").unwrap_or(0),
        topic_partitions: value(&args, "--topic-partitions").unwrap_or(100),
    };
    let offset: i64 = value(&args, "--offset").unwrap_or(0);
    let jobs: usize = value(&args, "--jobs").unwrap_or(64);
    let wire = args.iter().any(|a| a == "--wire");
    let start = Instant::now();
    match command.as_str() {
        "seed" => {
            create_topics(&bootstrap, &layout).await;
            let records: usize = value(&args, "--records").unwrap_or(0);
            produce(&bootstrap, &layout, records);
            if wire {
                commit_wire(&bootstrap, &layout, offset, jobs).await;
            } else {
                commit_all(&bootstrap, &layout, offset, jobs);
            }
            wait_for_log_offsets(&bootstrap, &layout);
        }
        "commit" if wire => commit_wire(&bootstrap, &layout, offset, jobs).await,
        "commit" => commit_all(&bootstrap, &layout, offset, jobs),
        "cleanup" => cleanup(&bootstrap, &layout.prefix).await,
        "replica" => {
            let target: String = value(&args, "--target").unwrap_or_else(|| usage());
            let truth: String = value(&args, "--truth").unwrap_or_else(|| usage());
            let first: usize = value(&args, "--first-partition").unwrap_or(0);
            let records: usize = value(&args, "--records").unwrap_or(12);
            let base: i64 = value(&args, "--base-ms").unwrap_or_else(|| {
                // An hour ago, to the second: well inside the brokers' retention.
                (chrono::Utc::now().timestamp() - 3600) * 1000
            });
            replica(&bootstrap, &target, &layout, first, records, base, &truth).await;
        }
        _ => usage(),
    }
    println!(
        "{{\"command\":\"{command}\",\"prefix\":\"{}\",\"groups\":{},\"partitions\":{},\
         \"offset\":{offset},\"seconds\":{:.3}}}",
        layout.prefix,
        layout.groups,
        layout.partitions,
        start.elapsed().as_secs_f64()
    );
}

async fn create_topics(bootstrap: &str, layout: &Layout) {
    let admin: AdminClient<DefaultClientContext> = config(bootstrap).create().unwrap();
    let topics = layout.topics();
    let new: Vec<NewTopic> = topics
        .iter()
        .map(|(name, n)| NewTopic::new(name, *n as i32, TopicReplication::Fixed(1)))
        .collect();
    // A KRaft controller refuses a request that would add more than 10,000 records (one per
    // partition and topic): 10,000 partitions or more are created a few topics at a time.
    for chunk in new.chunks(50) {
        let created = admin
            .create_topics(chunk, &AdminOptions::new())
            .await
            .expect("create topics");
        for result in created {
            if let Err((topic, e)) = result {
                panic!("create topic {topic}: {e}");
            }
        }
    }
}

/// Writes `records` small records to every partition, so that offsets up to `records` exist.
fn produce(bootstrap: &str, layout: &Layout, records: usize) {
    if records == 0 {
        return;
    }
    let producer: ThreadedProducer<DefaultProducerContext> =
        config(bootstrap).set("linger.ms", "5").create().unwrap();
    for (topic, n) in layout.topics() {
        for p in 0..n as i32 {
            for i in 0..records {
                let payload = format!("record {i}");
                let mut record = BaseRecord::<(), str>::to(&topic)
                    .partition(p)
                    .payload(&payload);
                // The queue is bounded: when full, wait for deliveries and send again.
                while let Err((e, back)) = producer.send(record) {
                    assert!(
                        matches!(
                            e.rdkafka_error_code(),
                            Some(rdkafka::types::RDKafkaErrorCode::QueueFull)
                        ),
                        "produce to {topic}/{p}: {e}"
                    );
                    record = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }
    producer
        .flush(Duration::from_secs(60))
        .expect("all records delivered within 60 s");
}

/// Commits `offset` on every partition for every group, `jobs` groups at a time.
fn commit_all(bootstrap: &str, layout: &Layout, offset: i64, jobs: usize) {
    let tpl = layout.offsets(offset);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let g = layout.first + next.fetch_add(1, Ordering::Relaxed);
                if g >= layout.first + layout.groups {
                    return;
                }
                commit_group(bootstrap, &layout.group(g), &tpl);
            });
        }
    });
}

/// Commits `offset` on every partition for every group through the library's protocol client,
/// `jobs` groups in flight; retries a group whose commit fails while new topics settle.
async fn commit_wire(bootstrap: &str, layout: &Layout, offset: i64, jobs: usize) {
    use futures::stream::{self, StreamExt};
    use offset_vault::group_model::GroupOffset;
    use offset_vault::kafka::KafkaClient;
    use offset_vault::settings::{ClientProperties, KafkaSettings};

    let client = KafkaClient::connect(KafkaSettings {
        bootstrap: bootstrap.to_string(),
        properties: ClientProperties::new(),
        timeout: Duration::from_secs(60),
        direct: true,
    })
    .await
    .expect("connect");
    let wire = client
        .require_wire("seeding")
        .await
        .expect("protocol client");
    let offsets: Vec<GroupOffset> = layout
        .topics()
        .into_iter()
        .flat_map(|(topic, n)| {
            (0..n as i32).map(move |p| GroupOffset {
                topic: topic.clone(),
                partition: p,
                offset,
                leader_epoch: None,
                metadata: None,
                lag: None,
            })
        })
        .collect();
    let offsets = &offsets;
    let wire = &wire;
    stream::iter(layout.first..layout.first + layout.groups)
        .map(|g| async move {
            let group = layout.group(g);
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let failed = match wire.commit_offsets(&group, offsets).await {
                    Ok(answers) => answers.into_iter().find_map(|a| {
                        a.result
                            .err()
                            .map(|e| format!("{}[{}]: {e}", a.topic, a.partition))
                    }),
                    Err(e) => Some(e.to_string()),
                };
                match failed {
                    None => return,
                    Some(e) => {
                        assert!(Instant::now() < deadline, "commit for group {group}: {e}");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        })
        .buffer_unordered(jobs.max(1))
        .collect::<Vec<()>>()
        .await;
}

/// Waits until every seeded partition answers a log-offset lookup, so that the measured commands
/// do not meet a broker still settling the new partitions.
fn wait_for_log_offsets(bootstrap: &str, layout: &Layout) {
    let consumer: BaseConsumer = config(bootstrap).create().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    for (topic, partitions) in layout.topics() {
        for p in 0..partitions as i32 {
            while let Err(e) = consumer.fetch_watermarks(&topic, p, Duration::from_secs(10)) {
                assert!(
                    Instant::now() < deadline,
                    "log offsets of {topic}[{p}]: {e}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

fn commit_group(bootstrap: &str, group: &str, tpl: &TopicPartitionList) {
    let consumer: BaseConsumer = config(bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    // Retry while new topics' metadata settles.
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Err(e) = consumer.commit(tpl, CommitMode::Sync) {
        assert!(Instant::now() < deadline, "commit for group {group}: {e}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Deletes the groups and topics whose names start with `prefix`.
async fn cleanup(bootstrap: &str, prefix: &str) {
    let consumer: BaseConsumer = config(bootstrap).create().unwrap();
    let timeout = Duration::from_secs(60);
    let groups: Vec<String> = consumer
        .fetch_group_list(None, timeout)
        .expect("list groups")
        .groups()
        .iter()
        .map(|g| g.name().to_string())
        .filter(|g| g.starts_with(prefix))
        .collect();
    let topics: Vec<String> = consumer
        .fetch_metadata(None, timeout)
        .expect("metadata")
        .topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|t| t.starts_with(prefix))
        .collect();
    let admin: AdminClient<DefaultClientContext> = config(bootstrap).create().unwrap();
    let options = AdminOptions::new().operation_timeout(Some(timeout));
    for chunk in groups.chunks(500) {
        let names: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for result in admin
            .delete_groups(&names, &options)
            .await
            .expect("delete groups")
        {
            if let Err((group, e)) = result {
                eprintln!("bench_seed: delete group {group}: {e}");
            }
        }
    }
    if !topics.is_empty() {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        for result in admin
            .delete_topics(&names, &options)
            .await
            .expect("delete topics")
        {
            if let Err((topic, e)) = result {
                eprintln!("bench_seed: delete topic {topic}: {e}");
            }
        }
    }
    eprintln!(
        "bench_seed: deleted {} groups and {} topics starting with {prefix}",
        groups.len(),
        topics.len()
    );
}

/// One partition of `replica`: `q` is its index over all the layout's partitions.
struct ReplicaPartition {
    q: usize,
    records: usize,
}

/// A record: timestamp, key, value.
type Record = (i64, String, String);

impl ReplicaPartition {
    /// Records sharing a timestamp: 1, 2 or 3 (2 where records repeat).
    fn run(&self) -> usize {
        if self.repeats() {
            2
        } else {
            1 + self.q % 3
        }
    }
    /// Every fifth partition writes each record twice in a row (same timestamp, key, value):
    /// identical records, which a fingerprint cannot tell apart.
    fn repeats(&self) -> bool {
        self.q.is_multiple_of(5)
    }
    /// The group's offset on the source: the last consumed record is at `committed - 1`.
    fn committed(&self) -> i64 {
        (self.records / 2 + self.q % 4) as i64
    }
    fn source(&self, base: i64) -> Vec<Record> {
        (0..self.records)
            .map(|i| {
                let content = if self.repeats() { i & !1 } else { i };
                (
                    base + 10 * (i / self.run()) as i64,
                    format!("k{}-{content}", self.q),
                    format!("value {content} of partition {}", self.q),
                )
            })
            .collect()
    }
    /// The replica's records, and for each source record its offset there (None: not copied).
    /// By `q % 3`: the replica began later (the first 1 to 4 records never copied); it had 1 to
    /// 5 older records of its own first; or it lost one record, two before the last consumed.
    fn target(&self, base: i64) -> (Vec<Record>, Vec<Option<i64>>) {
        let source = self.source(base);
        let mut out = Vec::new();
        let mut at = Vec::new();
        let (skip_first, own, lost) = match self.q % 3 {
            0 => (1 + self.q % 4, 0, None),
            1 => (0, 1 + self.q % 5, None),
            _ => (0, 0, Some(self.committed() as usize - 3)),
        };
        for j in 0..own {
            out.push((
                base - 60_000 - j as i64,
                format!("own-{j}"),
                "the replica's own record".to_string(),
            ));
        }
        for (i, r) in source.into_iter().enumerate() {
            if i < skip_first || Some(i) == lost {
                at.push(None);
            } else {
                at.push(Some(out.len() as i64));
                out.push(r);
            }
        }
        (out, at)
    }
    /// The exact position on the target (after the copy of the last consumed record), the
    /// records there with its timestamp, and how many of those before it are identical to it.
    fn truth(&self, base: i64) -> (i64, i64, i64) {
        let (target, at) = self.target(base);
        let last = self.committed() as usize - 1;
        let copy = at[last].expect("the last consumed record is always copied") as usize;
        let (ts, key, value) = &target[copy];
        let same_time = target.iter().filter(|r| r.0 == *ts).count() as i64;
        let identical_before = target[..copy]
            .iter()
            .filter(|r| r.0 == *ts && &r.1 == key && &r.2 == value)
            .count() as i64;
        (copy as i64 + 1, same_time, identical_before)
    }
}

/// The source and replica of `scripts/bench translate` (see the module's documentation).
async fn replica(
    source: &str,
    target: &str,
    layout: &Layout,
    first: usize,
    records: usize,
    base: i64,
    truth: &str,
) {
    use std::io::Write;

    assert!(records >= 8, "--records: at least 8");
    assert!(
        first.is_multiple_of(layout.topic_partitions),
        "--first-partition must be a multiple of --topic-partitions"
    );
    let all = layout.topics();
    let skip_topics = first / layout.topic_partitions;
    let created: Vec<(String, usize)> = all.iter().skip(skip_topics).cloned().collect();
    for bootstrap in [source, target] {
        create_topics_named(bootstrap, &created).await;
        wait_for_topics(bootstrap, &created);
    }
    // Both clusters written at once, each by its own producer, in offset order.
    std::thread::scope(|scope| {
        for (bootstrap, is_target) in [(source, false), (target, true)] {
            let created = &created;
            scope.spawn(move || {
                let producer: ThreadedProducer<Delivered> = config(bootstrap)
                    .set("linger.ms", "20")
                    .set("enable.idempotence", "true")
                    .create_with_context(Delivered::default())
                    .unwrap();
                for (t, (topic, n)) in created.iter().enumerate() {
                    for p in 0..*n {
                        let part = ReplicaPartition {
                            q: (skip_topics + t) * layout.topic_partitions + p,
                            records,
                        };
                        let rs = if is_target {
                            part.target(base).0
                        } else {
                            part.source(base)
                        };
                        for (ts, key, value) in &rs {
                            send(&producer, topic, p as i32, *ts, key, value);
                        }
                    }
                }
                producer
                    .flush(Duration::from_secs(300))
                    .expect("all records delivered within 300 s");
                let failed = producer.context().failed.load(Ordering::Relaxed);
                assert_eq!(failed, 0, "{failed} records not delivered to {bootstrap}");
            });
        }
    });
    // The group's offsets on the source, a few thousand partitions per OffsetCommit (one of all
    // 10,000 is larger than the broker's 1 MiB batch limit for __consumer_offsets).
    let group = format!("{}-n{}", layout.prefix, layout.partitions);
    let mut offsets = Vec::new();
    let mut lines = vec!["topic,partition,committed,exact,same_time,identical_before".to_string()];
    for (t, (topic, n)) in all.iter().enumerate() {
        for p in 0..*n {
            let part = ReplicaPartition {
                q: t * layout.topic_partitions + p,
                records,
            };
            offsets.push((topic.clone(), p as i32, part.committed()));
            let (exact, same_time, identical) = part.truth(base);
            lines.push(format!(
                "{topic},{p},{},{exact},{same_time},{identical}",
                part.committed()
            ));
        }
    }
    commit_chunks(source, &group, &offsets).await;
    // A cluster creates __consumer_offsets when a group first asks for its coordinator: a
    // commit of another group on the target has it ready before the measured commands.
    let (topic, partition, offset) = &offsets[0];
    let mut one = TopicPartitionList::new();
    one.add_partition_offset(topic, *partition, Offset::Offset(*offset))
        .expect("a valid offset");
    commit_group(target, &format!("{}-warmup", layout.prefix), &one);
    let mut f = std::fs::File::create(truth).expect("create the truth file");
    writeln!(f, "{}", lines.join("\n")).expect("write the truth file");
}

/// Counts the records whose delivery failed (the default context drops the reports).
#[derive(Default)]
struct Delivered {
    failed: AtomicUsize,
}

impl rdkafka::ClientContext for Delivered {}

impl rdkafka::producer::ProducerContext for Delivered {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &rdkafka::message::DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            if self.failed.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!("bench_seed: a record was not delivered: {e}");
            }
        }
    }
}

/// Waits until the metadata of `bootstrap` shows every partition of `topics` with a leader: a
/// record for a partition not seen in time is dropped by the producer.
fn wait_for_topics(bootstrap: &str, topics: &[(String, usize)]) {
    let consumer: BaseConsumer = config(bootstrap).create().unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let metadata = consumer
            .fetch_metadata(None, Duration::from_secs(30))
            .expect("metadata");
        let ready: std::collections::HashMap<&str, usize> = metadata
            .topics()
            .iter()
            .map(|t| {
                let led = t.partitions().iter().filter(|p| p.leader() >= 0).count();
                (t.name(), led)
            })
            .collect();
        if topics
            .iter()
            .all(|(name, n)| ready.get(name.as_str()) == Some(n))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the new topics on {bootstrap} have no leaders after 300 s"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn send(
    producer: &ThreadedProducer<Delivered>,
    topic: &str,
    partition: i32,
    ts: i64,
    key: &str,
    value: &str,
) {
    let mut record = BaseRecord::to(topic)
        .partition(partition)
        .timestamp(ts)
        .key(key)
        .payload(value);
    while let Err((e, back)) = producer.send(record) {
        assert!(
            matches!(
                e.rdkafka_error_code(),
                Some(rdkafka::types::RDKafkaErrorCode::QueueFull)
            ),
            "produce to {topic}/{partition}: {e}"
        );
        record = back;
        std::thread::sleep(Duration::from_millis(5));
    }
}

async fn create_topics_named(bootstrap: &str, topics: &[(String, usize)]) {
    let admin: AdminClient<DefaultClientContext> = config(bootstrap).create().unwrap();
    let new: Vec<NewTopic> = topics
        .iter()
        .map(|(name, n)| NewTopic::new(name, *n as i32, TopicReplication::Fixed(1)))
        .collect();
    // At most 10,000 records per request to a KRaft controller (see create_topics).
    let per = (5000 / topics.first().map_or(1, |t| t.1.max(1))).max(1);
    for chunk in new.chunks(per) {
        for result in admin
            .create_topics(chunk, &AdminOptions::new())
            .await
            .expect("create topics")
        {
            if let Err((topic, e)) = result {
                panic!("create topic {topic} on {bootstrap}: {e}");
            }
        }
    }
}

/// Commits `offsets` for `group` in requests of 2,000 partitions, through the protocol client;
/// retries while new topics settle.
async fn commit_chunks(bootstrap: &str, group: &str, offsets: &[(String, i32, i64)]) {
    use offset_vault::group_model::GroupOffset;
    use offset_vault::kafka::KafkaClient;
    use offset_vault::settings::{ClientProperties, KafkaSettings};

    let client = KafkaClient::connect(KafkaSettings {
        bootstrap: bootstrap.to_string(),
        properties: ClientProperties::new(),
        timeout: Duration::from_secs(60),
        direct: true,
    })
    .await
    .expect("connect");
    let wire = client
        .require_wire("seeding")
        .await
        .expect("protocol client");
    for chunk in offsets.chunks(2000) {
        let chunk: Vec<GroupOffset> = chunk
            .iter()
            .map(|(topic, partition, offset)| GroupOffset {
                topic: topic.clone(),
                partition: *partition,
                offset: *offset,
                leader_epoch: None,
                metadata: None,
                lag: None,
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let failed = match wire.commit_offsets(group, &chunk).await {
                Ok(answers) => answers.into_iter().find_map(|a| {
                    a.result
                        .err()
                        .map(|e| format!("{}[{}]: {e}", a.topic, a.partition))
                }),
                Err(e) => Some(e.to_string()),
            };
            match failed {
                None => break,
                Some(e) => {
                    assert!(Instant::now() < deadline, "commit for group {group}: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }
}
