//! Benchmark: `verify`, `show` and `diff` of large snapshots and `prune` of a large archive, wall
//! time and peak memory of the release binary. Run with `scripts/bench archive`, which builds the
//! release binary and passes its path in `OV_BENCH_BINARY`; results are kept in
//! `benches/RESULTS.md`.
//!
//! The snapshots are synthesized with the library and written to local stores; no cluster is
//! needed. `verify`, `show`, `diff`: two snapshots of each size in `OV_BENCH_ROWS` (rows,
//! separated by spaces; default 1,000,000 and 3,000,000; 1000 partitions per group, so the groups
//! grow with the rows, or `OV_BENCH_GROUPS` groups of rows / groups partitions) where every tenth
//! offset moved. `prune`: `OV_BENCH_SNAPSHOTS` small snapshots, one every 15 minutes up to now,
//! under a 48 hourly / 30 daily / 8 weekly policy.

use std::process::Command;
use std::time::Instant;

use chrono::{Duration, Utc};
use offset_vault::snapshot::manifest::Format;
use offset_vault::snapshot::model::{GroupSnapshot, PartitionOffset, SnapshotContent};
use offset_vault::store::Store;

#[path = "support/synth.rs"]
mod synth;
use synth::write;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A snapshot of `rows` committed offsets; offsets of every tenth row are moved by `moved`.
fn content(rows: usize, moved: i64) -> SnapshotContent {
    // 1000 partitions per group, or OV_BENCH_GROUPS groups of rows / OV_BENCH_GROUPS partitions.
    let per_group = match env_usize("OV_BENCH_GROUPS", 0) {
        0 => 1000,
        groups => rows.div_ceil(groups),
    };
    let groups = rows.div_ceil(per_group);
    let groups = (0..groups)
        .map(|g| GroupSnapshot {
            group_id: format!("group-{g:06}"),
            state: offset_vault::kafka::GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: offset_vault::kafka::GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: (0..per_group.min(rows - g * per_group))
                .map(|i| {
                    let offset = 1_000_000 + (g * per_group + i) as i64;
                    PartitionOffset {
                        leader_epoch: Some(0),
                        log_start_offset: Some(0),
                        log_end_offset: Some(offset + 5000),
                        lag: Some(5000),
                        ..PartitionOffset::new(
                            format!("topic-{:03}", i / 20),
                            (i % 20) as i32,
                            if i % 10 == 0 { offset + moved } else { offset },
                        )
                    }
                })
                .collect(),
        })
        .collect();
    SnapshotContent {
        groups,
        connectors: vec![],
    }
}

/// Runs the binary under `/usr/bin/time`; returns (wall seconds, max RSS MiB, stdout).
fn measure(binary: &str, store: &std::path::Path, args: &[&str]) -> (f64, f64, String) {
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M", binary, "-q", "--store"])
        .arg(store)
        .args(args)
        .output()
        .expect("run offset-vault under /usr/bin/time");
    let wall = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {stderr}"
    );
    let kb: f64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("max RSS from /usr/bin/time");
    (
        wall,
        kb / 1024.0,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn row(what: &str, runs: &mut [(f64, f64, String)]) {
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rss = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    println!(
        "| {what} | {} | {:.2} s | {:.2} s | {rss:.1} MiB |",
        runs.len(),
        runs[0].0,
        runs[runs.len() / 2].0
    );
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::var("OV_BENCH_ROWS")
        .unwrap_or_else(|_| "1000000 3000000".into())
        .split_whitespace()
        .map(|n| {
            n.parse()
                .expect("OV_BENCH_ROWS: row counts separated by spaces")
        })
        .collect();
    let snapshots = env_usize("OV_BENCH_SNAPSHOTS", 3000);
    let runs = env_usize("OV_BENCH_RUNS", 3);
    let binary = std::env::var("OV_BENCH_BINARY")
        .expect("OV_BENCH_BINARY: the offset-vault binary to measure (scripts/bench sets it)");
    println!("| command | runs | min wall | median wall | max RSS |");
    println!("|---|---|---|---|---|");

    let now = Utc::now();
    for rows in sizes {
        measure_diff(&binary, rows, runs, now).await;
    }
    prune(&binary, snapshots, runs, now).await;
}

/// `verify`, `show` and `diff` of two snapshots of `rows` rows.
async fn measure_diff(binary: &str, rows: usize, runs: usize, now: chrono::DateTime<Utc>) {
    let timeout = std::time::Duration::from_secs(60);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), timeout).unwrap();
    let setup = Instant::now();
    let a = write(
        &store,
        now - Duration::hours(1),
        Format::Parquet,
        content(rows, 0),
    )
    .await;
    let b = write(&store, now, Format::Parquet, content(rows, 250)).await;
    eprintln!(
        "setup: two {rows}-row snapshots written in {:.1?}",
        setup.elapsed()
    );
    // For scale: loading and verifying one of the two snapshots, which `diff` does twice.
    let mut r: Vec<_> = (0..runs)
        .map(|_| measure(binary, dir.path(), &["verify", &a]))
        .collect();
    row(&format!("`verify A` ({rows} rows)"), &mut r);
    for (label, output) in [("table", "table"), ("json", "json")] {
        let mut r: Vec<_> = (0..runs)
            .map(|_| measure(binary, dir.path(), &["--output", output, "show", &a]))
            .collect();
        row(&format!("`show A` ({rows} rows, {label})"), &mut r);
    }
    for (label, output) in [("table", "table"), ("json", "json")] {
        let mut r: Vec<_> = (0..runs)
            .map(|_| measure(binary, dir.path(), &["--output", output, "diff", &a, &b]))
            .collect();
        if output == "json" {
            let v: serde_json::Value = serde_json::from_str(&r[0].2).expect("diff JSON");
            assert_eq!(v["summary"]["partitions"]["changed"], rows.div_ceil(10));
        }
        row(
            &format!(
                "`diff A B` ({rows} rows each, {} changed, {label})",
                rows.div_ceil(10)
            ),
            &mut r,
        );
    }
}

/// `prune` over an archive of `snapshots` small snapshots.
async fn prune(binary: &str, snapshots: usize, runs: usize, now: chrono::DateTime<Utc>) {
    let timeout = std::time::Duration::from_secs(60);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().to_str().unwrap(), timeout).unwrap();
    let setup = Instant::now();
    for i in 0..snapshots {
        let at = now - Duration::minutes(15 * i as i64);
        write(&store, at, Format::Json, content(4, i as i64)).await;
    }
    eprintln!(
        "setup: {snapshots} snapshots written in {:.1?}",
        setup.elapsed()
    );
    let policy = [
        "--keep-hourly",
        "48",
        "--keep-daily",
        "30",
        "--keep-weekly",
        "8",
    ];
    let dry: Vec<&str> = [&["--output", "json", "prune"][..], &policy].concat();
    let mut r: Vec<_> = (0..runs)
        .map(|_| measure(binary, dir.path(), &dry))
        .collect();
    let plan: serde_json::Value = serde_json::from_str(&r[0].2).expect("prune JSON");
    let keep = plan["plan"]["summary"]["keep"].as_u64().unwrap();
    row(
        &format!("`prune` dry run ({snapshots} snapshots, {keep} kept)"),
        &mut r,
    );
    let exec: Vec<&str> = [&dry[..], &["--execute"]].concat();
    let mut r = vec![measure(binary, dir.path(), &exec)];
    row(
        &format!("`prune --execute` ({} deleted)", snapshots as u64 - keep),
        &mut r,
    );
    let mut r = vec![measure(binary, dir.path(), &dry)];
    let after: serde_json::Value = serde_json::from_str(&r[0].2).unwrap();
    assert_eq!(after["plan"]["summary"]["remove"], 0);
    assert_eq!(after["plan"]["summary"]["keep"], keep);
    row(&format!("`prune` dry run after ({keep} snapshots)"), &mut r);
}
