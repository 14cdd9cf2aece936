//! Benchmark: how `restore --before T` and `restore --latest` scale with the size of the archive.
//! Run with `scripts/bench choice` (which starts the local test environment, builds the release
//! binary and passes its path in `OV_BENCH_BINARY`).
//!
//! Setup, in the local S3 server's data directory (s3s-fs serves a directory as a bucket):
//! `OV_BENCH_SNAPSHOTS` snapshot folders spread evenly over `OV_BENCH_DAYS` days up to now, each
//! with a manifest (a copy of a real one: only its folder name and presence matter unless it is
//! chosen), and three real snapshots, written with the library, at the times asked for. Measured
//! through the S3 API: the number of store calls (LIST of a day, LIST of the day folders, GET) that
//! the choice makes, counted from the binary's debug log, and the wall time; the chosen id must be
//! the real snapshot's.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use chrono::{DateTime, Duration, Utc};
use offset_vault::kafka::{GroupState, GroupType};
use offset_vault::snapshot::manifest::Format;
use offset_vault::snapshot::model::{GroupSnapshot, PartitionOffset, SnapshotContent};
use offset_vault::store::Store;

#[path = "support/synth.rs"]
mod synth;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} must be set (scripts/bench sets it)"))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn tiny(group: &str) -> SnapshotContent {
    SnapshotContent {
        groups: vec![GroupSnapshot {
            group_id: group.into(),
            state: GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: vec![PartitionOffset {
                log_start_offset: Some(0),
                log_end_offset: Some(0),
                lag: Some(0),
                ..PartitionOffset::new("bench-choice", 0, 0)
            }],
        }],
        connectors: vec![],
    }
}

/// Writes `count` manifest-only snapshot folders spread over `days` days before `now`.
fn fill(root: &Path, now: DateTime<Utc>, count: usize, days: usize, manifest: &[u8]) {
    let span = Duration::days(days as i64).num_milliseconds();
    for i in 0..count {
        let at = now - Duration::milliseconds(span * (i as i64 + 1) / count as i64 - 1);
        let id = format!(
            "{}-{:016x}",
            at.format("%Y%m%dT%H%M%S%.3fZ"),
            0xbe00_0000_0000_0000u64 + i as u64
        );
        let dir = root
            .join("snapshots")
            .join(format!("date={}", at.format("%Y-%m-%d")))
            .join(&id);
        std::fs::create_dir_all(&dir).expect("create a snapshot folder");
        std::fs::write(dir.join("manifest.json"), manifest).expect("write a manifest");
    }
}

struct Run {
    wall: f64,
    lists: usize,
    gets: usize,
    chosen: Option<String>,
}

fn restore(binary: &str, store: &str, args: &[&str]) -> Run {
    let start = Instant::now();
    let out = Command::new(binary)
        .args(["-b", &env("OV_BOOTSTRAP"), "--store", store, "restore"])
        .args(args)
        .args(["--allow-other-cluster", "--output", "json"])
        .env("OFFSET_VAULT_LOG", "offset_vault::store::calls=debug")
        .env("AWS_ACCESS_KEY_ID", env("OV_S3_ACCESS_KEY"))
        .env("AWS_SECRET_ACCESS_KEY", env("OV_S3_SECRET_KEY"))
        .env("AWS_REGION", env("OV_S3_REGION"))
        .env("AWS_ENDPOINT_URL", env("OV_S3_ENDPOINT"))
        .output()
        .expect("run offset-vault");
    let wall = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Only the calls up to the announcement of the choice belong to the choice.
    let choice = stderr.split("using snapshot").next().unwrap_or_default();
    let count = |word: &str| {
        choice
            .lines()
            .filter(|l| l.contains(" DEBUG ") && l.contains(word))
            .count()
    };
    let chosen = stderr
        .split("using snapshot ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string);
    Run {
        wall,
        lists: count("LIST"),
        gets: count("GET "),
        chosen,
    }
}

#[tokio::main]
async fn main() {
    let binary = env("OV_BENCH_BINARY");
    let snapshots = env_usize("OV_BENCH_SNAPSHOTS", 100_000);
    let days = env_usize("OV_BENCH_DAYS", 365);
    let bucket_dir = Path::new(&env("OV_S3_DATA_DIR")).join(env("OV_S3_BUCKET"));
    let prefix = format!("bench-choice-{}", std::process::id());
    let root = bucket_dir.join(&prefix);
    let store_url = format!("s3://{}/{prefix}", env("OV_S3_BUCKET"));
    let local = Store::open(root.to_str().unwrap(), std::time::Duration::from_secs(60)).unwrap();

    let now = Utc::now();
    // Real snapshots: an hour ago, and at noon 30 and 180 days ago (a "before" in the middle).
    let times = [
        now - Duration::hours(1),
        (now - Duration::days(30))
            .date_naive()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc(),
        (now - Duration::days(180))
            .date_naive()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc(),
    ];
    let mut real = Vec::new();
    for (i, at) in times.iter().enumerate() {
        real.push(
            synth::write(
                &local,
                *at,
                Format::Json,
                tiny(&format!("bench-choice-{i}")),
            )
            .await,
        );
    }
    let manifest_of = |id: &str| {
        let day = &id[..8];
        let folder = format!("date={}-{}-{}", &day[..4], &day[4..6], &day[6..8]);
        std::fs::read(
            root.join("snapshots")
                .join(folder)
                .join(id)
                .join("manifest.json"),
        )
        .expect("real manifest")
    };
    let setup = Instant::now();
    // The fillers end a minute before the newest real snapshot, so that one is the latest.
    fill(
        &root,
        times[0] - Duration::minutes(1),
        snapshots,
        days,
        &manifest_of(&real[0]),
    );
    eprintln!(
        "setup: {snapshots} snapshot folders over {days} days written in {:.1?}",
        setup.elapsed()
    );

    println!("| choice | archive | store calls until chosen and verified (LIST / GET) | wall | chose the right one |");
    println!("|---|---|---|---|---|");
    let cases = [
        ("`restore --latest`", vec!["--latest".to_string()], &real[0]),
        (
            "`restore --before` 30 days ago, noon",
            vec!["--before".into(), times[1].to_rfc3339()],
            &real[1],
        ),
        (
            "`restore --before` 180 days ago, noon",
            vec!["--before".into(), times[2].to_rfc3339()],
            &real[2],
        ),
    ];
    for (what, args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = restore(&binary, &store_url, &args);
        println!(
            "| {what} | {} snapshots, {days} days | {} / {} | {:.2} s | {} |",
            snapshots + real.len(),
            r.lists,
            r.gets,
            r.wall,
            if r.chosen.as_deref() == Some(want.as_str()) {
                "yes"
            } else {
                "NO"
            }
        );
        assert_eq!(
            r.chosen.as_deref(),
            Some(want.as_str()),
            "{what}: wrong snapshot chosen"
        );
    }
    if std::env::var("OV_BENCH_KEEP").is_err() {
        std::fs::remove_dir_all(&root).ok();
    }
}
