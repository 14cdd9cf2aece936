//! Benchmark: how long a snapshot of many groups takes, and how much memory it needs, against the
//! local test environment (`scripts/test-env up`). Run with `scripts/bench`, which builds the
//! release binary and passes its path in `OV_BENCH_BINARY`; results are kept in
//! `benches/RESULTS.md`. (An example, not a bench target, so that `cargo test --all-targets`
//! builds it but does not run it.)
//!
//! Setup: one topic with `OV_BENCH_PARTITIONS` partitions and `OV_BENCH_GROUPS` empty groups, each
//! with a committed offset on every partition. Measured: `offset-vault snapshot --group-pattern`
//! over all of them (the binary, as a deploy hook runs it), in Parquet and JSON, to a local store.

use std::process::Command;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c
}

#[tokio::main]
async fn main() {
    let bootstrap = std::env::var("OV_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:19092".into());
    let groups = env_usize("OV_BENCH_GROUPS", 200);
    let partitions = env_usize("OV_BENCH_PARTITIONS", 24) as i32;
    let runs = env_usize("OV_BENCH_RUNS", 5);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let prefix = format!("bench-{stamp}");
    let topic = format!("{prefix}-topic");

    let admin: AdminClient<DefaultClientContext> = config(&bootstrap).create().unwrap();
    let results = admin
        .create_topics(
            [&NewTopic::new(
                &topic,
                partitions,
                TopicReplication::Fixed(1),
            )],
            &AdminOptions::new(),
        )
        .await
        .expect("create topic");
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");

    let setup = Instant::now();
    for g in 0..groups {
        let consumer: BaseConsumer = config(&bootstrap)
            .set("group.id", format!("{prefix}-group-{g:05}"))
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        for p in 0..partitions {
            tpl.add_partition_offset(&topic, p, Offset::Offset(0))
                .unwrap();
        }
        // Retry while the new topic's metadata settles.
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
            assert!(Instant::now() < deadline, "commit for group {g}: {e}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    eprintln!(
        "setup: {groups} groups x {partitions} partitions committed in {:.1?}",
        setup.elapsed()
    );

    let binary = std::env::var("OV_BENCH_BINARY")
        .expect("OV_BENCH_BINARY: the offset-vault binary to measure (scripts/bench sets it)");
    let binary = binary.as_str();
    println!("| format | groups | partitions (rows) | runs | min wall | median wall | max RSS |");
    println!("|---|---|---|---|---|---|---|");
    for format in ["parquet", "json"] {
        let store = tempfile::tempdir().unwrap();
        let mut times = Vec::new();
        let mut rss_kb = 0u64;
        for _ in 0..runs {
            let start = Instant::now();
            let out = Command::new("/usr/bin/time")
                .args(["-f", "%M", binary, "-q", "-b", &bootstrap, "--store"])
                .arg(store.path())
                .args(["snapshot", "--group-pattern", &format!("{prefix}-group-.*")])
                .args(["--format", format])
                .output()
                .expect("run offset-vault under /usr/bin/time");
            times.push(start.elapsed());
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            let kb: u64 = stderr
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
                .expect("max RSS from /usr/bin/time");
            rss_kb = rss_kb.max(kb);
        }
        times.sort();
        println!(
            "| {format} | {groups} | {} | {runs} | {:.0} ms | {:.0} ms | {:.1} MiB |",
            groups * partitions as usize,
            times[0].as_secs_f64() * 1000.0,
            times[times.len() / 2].as_secs_f64() * 1000.0,
            rss_kb as f64 / 1024.0
        );
    }
    let _ = admin.delete_topics(&[&topic], &AdminOptions::new()).await;
}
