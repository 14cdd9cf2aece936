//! Benchmark data of the commit-log archive (`scripts/bench log`), written with the library's own
//! segment writer (`offset_vault::log::archive::publish`) into a local store, as `follow` writes
//! it, without a cluster:
//!
//! ```text
//! bench_log size  --store DIR [--groups 1000] [--minutes 30] [--interval-s 5]
//! bench_log synth --store DIR [--commits 10000000] [--hours 24] [--groups 2000]
//! ```
//!
//! `size`: a steady state of `--groups` consumer groups on four topics of 12 partitions (each
//! group reads one or two of them), every group committing all its partitions every
//! `--interval-s` seconds (the consumer's auto-commit interval) with offsets that grow at each
//! partition's own rate, for `--minutes`; one segment per partition of `__consumer_offsets` per
//! minute (the follower's default `--segment-interval`). Prints the data files' bytes per
//! archived commit.
//!
//! `synth`: `--commits` commits spread evenly over `--hours` hours, from `--groups` groups of 12
//! or 24 partitions each (same topics), one segment per partition and minute, the partitions'
//! heads, and one base snapshot of every group taken just after every group's first round. Prints a group, an
//! instant near the end and what was written, for `restore --at`/`show --at` to be timed on.
//!
//! Both print one JSON line on standard output.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use offset_vault::log::archive::{self, Head, Lane, Published};
use offset_vault::log::record::{CommitValue, LogRecord};
use offset_vault::log::segment::{Row, SegmentMeta, SEGMENT_FORMAT_VERSION};
use offset_vault::snapshot::manifest::Format;
use offset_vault::snapshot::model::{GroupSnapshot, PartitionOffset, SnapshotContent};
use offset_vault::store::Store;

#[path = "support/synth.rs"]
mod synth;

/// Partitions of `__consumer_offsets` (the broker's default).
const SOURCE_PARTITIONS: i32 = 50;
const TOPICS: usize = 4;
const TOPIC_PARTITIONS: i32 = 12;
const CLUSTER: &str = "bench-cluster";

fn usage() -> ! {
    eprintln!("usage: bench_log size|synth --store DIR [--groups G] [--minutes M] [--interval-s S] [--commits N] [--hours H]");
    std::process::exit(2)
}

fn value<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    let at = args.iter().position(|a| a == name)?;
    let raw = args.get(at + 1).unwrap_or_else(|| usage());
    Some(raw.parse().unwrap_or_else(|_| {
        eprintln!("bench_log: {name}: cannot read {raw:?}");
        std::process::exit(2)
    }))
}

/// The `__consumer_offsets` partition of a group, as the broker computes it (Java's
/// `String.hashCode`, made non-negative as Kafka's `Utils.abs` does).
fn source_partition(group: &str) -> i32 {
    let hash = group.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let abs = if hash == i32::MIN {
        0
    } else {
        hash.unsigned_abs()
    };
    (abs % SOURCE_PARTITIONS as u32) as i32
}

/// A small deterministic generator (xorshift), so that runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn topic(t: usize) -> String {
    format!("orders.events-{t}")
}

/// A consumer group: its name, the topics it reads, when (ms into the interval) it commits.
struct Group {
    name: String,
    source: i32,
    topics: Vec<usize>,
    phase_ms: i64,
    lag: i64,
}

fn groups(count: usize, interval_ms: i64, rng: &mut Rng) -> Vec<Group> {
    (0..count)
        .map(|g| {
            let name = format!("svc-{:04}-consumer", g);
            let first = g % TOPICS;
            let topics = if g % 3 == 0 {
                vec![first, (first + 1) % TOPICS]
            } else {
                vec![first]
            };
            Group {
                source: source_partition(&name),
                name,
                topics,
                phase_ms: rng.below(interval_ms as u64) as i64,
                lag: rng.below(200) as i64,
            }
        })
        .collect()
}

/// Messages per second into each partition of each topic.
fn rates(rng: &mut Rng) -> Vec<Vec<i64>> {
    (0..TOPICS)
        .map(|_| {
            (0..TOPIC_PARTITIONS)
                .map(|_| 20 + rng.below(2000) as i64)
                .collect()
        })
        .collect()
}

/// The committed offset of a group on a partition at `t` ms after the start.
fn offset_at(rates: &[Vec<i64>], t: usize, p: i32, ms: i64, lag: i64) -> i64 {
    (1_000_000 + rates[t][p as usize] * ms / 1000 - lag).max(0)
}

/// The commits of one round of one group at `ms` after `t0`, appended to its source partition.
fn commit_round(
    g: &Group,
    rates: &[Vec<i64>],
    t0: i64,
    ms: i64,
    next: &mut [i64],
    out: &mut Vec<Row>,
) {
    let ts = t0 + ms;
    for &t in &g.topics {
        for p in 0..TOPIC_PARTITIONS {
            let source_offset = next[g.source as usize];
            next[g.source as usize] += 1;
            out.push(Row {
                source_offset,
                timestamp: ts,
                record: LogRecord::OffsetCommit {
                    group: g.name.clone(),
                    topic: topic(t),
                    partition: p,
                    value: Some(CommitValue {
                        version: 3,
                        offset: offset_at(rates, t, p, ms, g.lag),
                        leader_epoch: Some(t as i32 + 1),
                        metadata: String::new(),
                        commit_timestamp: ts,
                        expire_timestamp: None,
                        topic_id: None,
                    }),
                },
            });
        }
    }
}

/// Seals the rows of each source partition that belong before `until` (ms) into one segment per
/// partition, as the follower does; returns (segments, data bytes, rows).
async fn seal(
    store: &Store,
    pending: &mut BTreeMap<i32, Vec<Row>>,
    starts: &mut [i64],
    next: &[i64],
    sealed_at: DateTime<Utc>,
) -> (usize, u64, u64) {
    let (mut segments, mut bytes, mut rows) = (0, 0, 0);
    for (p, buf) in pending.iter_mut() {
        if buf.is_empty() {
            continue;
        }
        let meta = SegmentMeta {
            format_version: SEGMENT_FORMAT_VERSION.into(),
            cluster_id: CLUSTER.into(),
            topic: "__consumer_offsets".into(),
            partitions: SOURCE_PARTITIONS,
            partition: *p,
            start: starts[*p as usize],
            next: next[*p as usize],
            rows: buf.len() as u64,
            ignored: 0,
            unknown: 0,
            first_timestamp: buf.first().map(|r| r.timestamp),
            last_timestamp: buf.last().map(|r| r.timestamp),
            sealed_at,
            gap: None,
        };
        match archive::publish(store, &meta, buf).await.expect("publish") {
            Published::Written(m) => bytes += m.size,
            Published::Lost(_) => panic!("another writer in the benchmark store"),
        }
        starts[*p as usize] = next[*p as usize];
        segments += 1;
        rows += buf.len() as u64;
        buf.clear();
    }
    (segments, bytes, rows)
}

fn dir_bytes(dir: &std::path::Path, under: &str) -> u64 {
    fn walk(p: &std::path::Path) -> u64 {
        std::fs::read_dir(p)
            .map(|d| {
                d.flatten()
                    .map(|e| {
                        let m = e.metadata().unwrap();
                        if m.is_dir() {
                            walk(&e.path())
                        } else {
                            m.len()
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    walk(&dir.join(under))
}

/// Commits of every group, every `interval_ms`, for `minutes`, sealed each minute.
async fn size(store_dir: &str, group_count: usize, minutes: i64, interval_ms: i64) {
    let store = Store::open(store_dir, Duration::from_secs(60)).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let groups = groups(group_count, interval_ms, &mut rng);
    let rates = rates(&mut rng);
    let t0 = Utc.with_ymd_and_hms(2026, 11, 2, 9, 0, 0).unwrap();
    let t0_ms = t0.timestamp_millis();
    let mut next = vec![0i64; SOURCE_PARTITIONS as usize];
    let mut starts = next.clone();
    let mut pending: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    let (mut segments, mut bytes, mut rows) = (0, 0, 0);
    let start = Instant::now();
    for minute in 0..minutes {
        // The commits of this minute in time order, each round's records together.
        let mut rounds: Vec<(i64, usize)> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let mut ms = g.phase_ms;
            while ms < 60_000 {
                rounds.push((minute * 60_000 + ms, i));
                ms += interval_ms;
            }
        }
        rounds.sort();
        for (ms, i) in rounds {
            let g = &groups[i];
            let buf = pending.entry(g.source).or_default();
            commit_round(g, &rates, t0_ms, ms, &mut next, buf);
        }
        let sealed_at = t0 + chrono::Duration::minutes(minute + 1);
        let (s, b, r) = seal(&store, &mut pending, &mut starts, &next, sealed_at).await;
        segments += s;
        bytes += b;
        rows += r;
    }
    let on_disk = dir_bytes(std::path::Path::new(store_dir), "log");
    println!(
        "{{\"command\":\"size\",\"groups\":{group_count},\"group_partitions\":{},\"interval_s\":{},\
         \"minutes\":{minutes},\"segments\":{segments},\"commits\":{rows},\"data_bytes\":{bytes},\
         \"bytes_per_commit\":{:.2},\"rows_per_segment\":{:.0},\"store_bytes_with_index\":{on_disk},\
         \"store_bytes_per_commit\":{:.2},\"seconds\":{:.1}}}",
        groups
            .iter()
            .map(|g| g.topics.len() * TOPIC_PARTITIONS as usize)
            .sum::<usize>(),
        interval_ms / 1000,
        bytes as f64 / rows as f64,
        rows as f64 / segments as f64,
        on_disk as f64 / rows as f64,
        start.elapsed().as_secs_f64()
    );
}

/// `commits` commits spread evenly over `hours`, one segment per partition and minute, a head
/// per partition and a base snapshot of every group.
async fn synth_archive(store_dir: &str, commits: u64, hours: i64, group_count: usize) {
    let store = Store::open(store_dir, Duration::from_secs(60)).unwrap();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let total_ms = hours * 3_600_000;
    // Every group reads one or two topics of 12 partitions: commits per round, and the interval
    // that makes `commits` in all.
    let probe = groups(group_count, 1, &mut Rng(1));
    let per_round: u64 = probe
        .iter()
        .map(|g| g.topics.len() as u64 * TOPIC_PARTITIONS as u64)
        .sum();
    let rounds_per_group = (commits / per_round).max(1);
    let interval_ms = (total_ms as u64 / rounds_per_group).max(1) as i64;
    let groups = groups(group_count, interval_ms, &mut rng);
    let rates = rates(&mut rng);
    let t0 = Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap();
    let t0_ms = t0.timestamp_millis();
    let mut next = vec![0i64; SOURCE_PARTITIONS as usize];
    let mut starts = next.clone();
    let mut pending: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    let (mut segments, mut bytes, mut rows) = (0, 0, 0);
    let start = Instant::now();
    let minutes = total_ms / 60_000;
    for minute in 0..minutes {
        let mut rounds: Vec<(i64, usize)> = Vec::new();
        let (from, to) = (minute * 60_000, (minute + 1) * 60_000);
        for (i, g) in groups.iter().enumerate() {
            // Rounds of this group in [from, to): phase + k * interval.
            let mut k = ((from - g.phase_ms).max(0) + interval_ms - 1) / interval_ms;
            loop {
                let ms = g.phase_ms + k * interval_ms;
                if ms >= to || ms >= total_ms {
                    break;
                }
                if ms >= from {
                    rounds.push((ms, i));
                }
                k += 1;
            }
        }
        rounds.sort();
        for (ms, i) in rounds {
            let g = &groups[i];
            let buf = pending.entry(g.source).or_default();
            commit_round(g, &rates, t0_ms, ms, &mut next, buf);
        }
        let sealed_at = t0 + chrono::Duration::minutes(minute + 1);
        let (s, b, r) = seal(&store, &mut pending, &mut starts, &next, sealed_at).await;
        segments += s;
        bytes += b;
        rows += r;
        if minute % 60 == 59 {
            eprintln!(
                "bench_log: synth: {} of {hours} hours, {rows} commits, {segments} segments, {:.0} s",
                (minute + 1) / 60,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let end = t0 + chrono::Duration::milliseconds(total_ms);
    for p in 0..SOURCE_PARTITIONS {
        archive::write_head(
            &store,
            Lane::Offsets,
            &Head {
                partition: p,
                next: next[p as usize],
                checked_at: end,
            },
        )
        .await
        .expect("head");
    }
    // The base: taken one second after every group's first round (so every partition's archive
    // begins before it), with the offsets of that round.
    let base_ms = groups.iter().map(|g| g.phase_ms).max().unwrap_or(0) + 1000;
    let content = SnapshotContent {
        groups: groups
            .iter()
            .map(|g| GroupSnapshot {
                group_id: g.name.clone(),
                state: offset_vault::kafka::GroupState::Stable,
                protocol_type: "consumer".into(),
                group_type: offset_vault::kafka::GroupType::Classic,
                members: vec![],
                connector: None,
                configs: Default::default(),
                partitions: g
                    .topics
                    .iter()
                    .flat_map(|&t| (0..TOPIC_PARTITIONS).map(move |p| (t, p)))
                    .map(|(t, p)| PartitionOffset {
                        leader_epoch: Some(t as i32 + 1),
                        log_start_offset: Some(0),
                        ..PartitionOffset::new(
                            topic(t),
                            p,
                            offset_at(&rates, t, p, g.phase_ms, g.lag),
                        )
                    })
                    .collect(),
            })
            .collect(),
        connectors: vec![],
    };
    let base = synth::write(
        &store,
        t0 + chrono::Duration::milliseconds(base_ms),
        Format::Parquet,
        content,
    )
    .await;
    // The group to restore, an instant ten minutes before the end, and what it must read.
    let group = &groups[0];
    let at = end - chrono::Duration::minutes(10);
    let mine = archive::manifests_of(&store, Lane::Offsets, group.source)
        .await
        .unwrap();
    let all = archive::manifests(&store).await.unwrap().len();
    println!(
        "{{\"command\":\"synth\",\"commits\":{rows},\"groups\":{group_count},\"interval_ms\":{interval_ms},\
         \"segments\":{segments},\"data_bytes\":{bytes},\"bytes_per_commit\":{:.2},\"base\":\"{base}\",\
         \"group\":\"{}\",\"source_partition\":{},\"at\":\"{}\",\"partition_segments\":{},\
         \"index_entries\":{all},\"seconds\":{:.1}}}",
        bytes as f64 / rows as f64,
        group.name,
        group.source,
        at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        mine.len(),
        start.elapsed().as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let store: String = value(&args, "--store").unwrap_or_else(|| usage());
    match args.first().map(String::as_str) {
        Some("size") => {
            size(
                &store,
                value(&args, "--groups").unwrap_or(1000),
                value(&args, "--minutes").unwrap_or(30),
                value::<i64>(&args, "--interval-s").unwrap_or(5) * 1000,
            )
            .await
        }
        Some("synth") => {
            synth_archive(
                &store,
                value(&args, "--commits").unwrap_or(10_000_000),
                value(&args, "--hours").unwrap_or(24),
                value(&args, "--groups").unwrap_or(2000),
            )
            .await
        }
        _ => usage(),
    }
}
