//! Seeds and clears the benchmark groups of `scripts/bench compare|latency|rows`: many groups,
//! each with a committed offset on every partition of a set of topics, committed fast.
//!
//! ```text
//! bench_seed seed    --prefix P --groups G --partitions N [--records R] [--offset O]
//! bench_seed commit  --prefix P --groups G --partitions N --offset O
//! bench_seed cleanup --prefix P
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
        "usage: bench_seed seed|commit|cleanup --prefix P [--groups G --partitions N] \
         [--topic-partitions T] [--records R] [--offset O] [--jobs J]"
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
