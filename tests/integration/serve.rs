//! `offset-vault serve`: two instances on one store run each slot once (also after the lease
//! holder is killed mid-run), the metrics read by Prometheus's own parser move forward, and
//! SIGTERM leaves no half-listed snapshot and no gap in the commit-log archive.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::support::follower::{assert_contiguous, commit, topic_with, verified};
use crate::support::ov::{local_store, ov};
use crate::support::poll::eventually;
use crate::support::serve::{self, free_port, leases, listed, scrape, value};
use crate::support::{env, unique_name};

const EVERY: i64 = 5;

/// The 5 s slot an instant falls in, as a lease names it.
fn slot_name(t: DateTime<Utc>) -> String {
    let s = t.timestamp() - t.timestamp().rem_euclid(EVERY);
    DateTime::from_timestamp(s, 0)
        .unwrap()
        .format("%Y%m%dT%H%M%SZ.json")
        .to_string()
}

/// A group with committed offsets, for a quick snapshot of one group.
pub(crate) async fn group_with_offsets(prefix: &str) -> String {
    let topic = topic_with(&format!("{prefix}-t"), 4).await;
    let group = unique_name(&format!("{prefix}-g"));
    commit(&group, &topic, 2).await;
    group
}

/// Every complete snapshot by the lease slot it fell in; panics if a slot holds two.
pub(crate) async fn snapshots_by_slot(store: &str) -> BTreeMap<String, String> {
    let mut by_slot = BTreeMap::new();
    for (id, created, complete) in listed(store).await {
        if !complete {
            continue;
        }
        let slot = slot_name(created.expect("a complete snapshot has a creation time"));
        if let Some(other) = by_slot.insert(slot.clone(), id.clone()) {
            panic!("slot {slot} was run twice: snapshots {other} and {id}");
        }
    }
    by_slot
}

/// The slots the instances' logs say each ran a snapshot in (as a lease names them), with the
/// snapshot's id; panics if two runs name one slot, or if the store's complete snapshots are not
/// exactly those the logs name. Attributed by the slot the instance leased, not by the
/// snapshot's creation time: a run that starts late in a loaded machine stays in its slot.
pub(crate) async fn slots_run(store: &str, logs: &[&str]) -> BTreeMap<String, String> {
    let mut by_slot = BTreeMap::new();
    for line in logs.iter().flat_map(|l| l.lines()) {
        let Some((_, rest)) = line.split_once(" slot ") else {
            continue;
        };
        let Some((when, rest)) = rest.split_once(": snapshot ") else {
            continue;
        };
        let id = rest.split(':').next().unwrap().trim().to_string();
        let at = chrono::NaiveDateTime::parse_from_str(
            when.trim_end_matches(" UTC"),
            "%Y-%m-%d %H:%M:%S",
        )
        .unwrap_or_else(|e| panic!("{when}: {e} in {line}"))
        .and_utc();
        let slot = slot_name(at);
        if let Some(other) = by_slot.insert(slot.clone(), id.clone()) {
            panic!("slot {slot} was run twice: snapshots {other} and {id}");
        }
    }
    let stored: BTreeSet<String> = listed(store)
        .await
        .into_iter()
        .filter(|(_, _, complete)| *complete)
        .map(|(id, _, _)| id)
        .collect();
    let named: BTreeSet<String> = by_slot.values().cloned().collect();
    assert_eq!(
        stored, named,
        "the store's snapshots and those the logs name"
    );
    by_slot
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_take_each_slot_once() {
    if !env::require_kafka() {
        return;
    }
    let group = group_with_offsets("serve-twice").await;
    let (_dir, store) = local_store();
    let args = [
        "--snapshot-every",
        "5s",
        "--group",
        &group,
        "--listen",
        "none",
    ];
    let a = serve::start(&store, &args, &[]);
    let b = serve::start(&store, &args, &[]);
    tokio::time::sleep(Duration::from_secs(31)).await;
    let (a, b) = (serve::stop(a).await, serve::stop(b).await);

    let by_slot = slots_run(&store, &[&a.stderr, &b.stderr]).await;
    let held = leases(&store, "snapshot");
    // 31 s hold six or seven 5 s slots (five when the instances were slow to start).
    assert!(
        (5..=8).contains(&held.len()),
        "{} leases: {held:?}\n{}\n{}",
        held.len(),
        a.stderr,
        b.stderr
    );
    let lease_slots: BTreeSet<&String> = held.iter().map(|(slot, _)| slot).collect();
    let snapshot_slots: BTreeSet<&String> = by_slot.keys().collect();
    assert_eq!(
        lease_slots, snapshot_slots,
        "one snapshot per leased slot, none without a lease\nA:\n{}\nB:\n{}",
        a.stderr, b.stderr
    );
    let holders: BTreeSet<&str> = held
        .iter()
        .map(|(_, l)| l["holder"].as_str().unwrap())
        .collect();
    assert!(holders.len() <= 2, "{holders:?}");
    // For every slot one instance did not run, it says the other held it (the first slot may
    // have gone before the second instance was up).
    let taken_by = |log: &str| log.lines().filter(|l| l.contains(": taken by ")).count();
    let seen = taken_by(&a.stderr) + taken_by(&b.stderr);
    assert!(
        (held.len() - 1..=held.len()).contains(&seen),
        "{seen} slots seen taken elsewhere, {} leases\nA:\n{}\nB:\n{}",
        held.len(),
        a.stderr,
        b.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_the_lease_holder_loses_its_slot_and_the_next_is_taken_once() {
    if !env::require_kafka() {
        return;
    }
    let group = group_with_offsets("serve-kill").await;
    let (_dir, store) = local_store();
    let args = [
        "--snapshot-every",
        "5s",
        "--group",
        &group,
        "--listen",
        "none",
    ];
    // Each snapshot waits 3 s before its manifest: a kill lands mid-run.
    let slow = [("FAILPOINTS", "snapshot-before-manifest=sleep(3000)")];
    let a = serve::start(&store, &args, &slow);
    let b = serve::start(&store, &args, &slow);
    // The first lease taken after both have started.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before: BTreeSet<String> = leases(&store, "snapshot")
        .into_iter()
        .map(|l| l.0)
        .collect();
    let (slot, lease) = eventually("a new lease", Duration::from_secs(15), || {
        let before = before.clone();
        let store = store.clone();
        async move {
            leases(&store, "snapshot")
                .into_iter()
                .find(|(s, _)| !before.contains(s))
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pid = lease["pid"].as_u64().unwrap() as u32;
    let (victim, survivor) = if a.child.id() == pid {
        (a, b)
    } else {
        assert_eq!(b.child.id(), pid, "the lease names one of the two: {lease}");
        (b, a)
    };
    let killed = victim.kill().await;
    assert!(killed.status.code().is_none(), "killed by a signal");
    let mut survivor = survivor;
    // The survivor runs the next slots (once each).
    let next = eventually(
        "the survivor's next two snapshots",
        Duration::from_secs(25),
        || {
            let store = store.clone();
            let slot = slot.clone();
            async move {
                let done: Vec<String> = snapshots_by_slot(&store)
                    .await
                    .into_keys()
                    .filter(|s| *s > slot)
                    .collect();
                (done.len() >= 2).then_some(done)
            }
        },
    )
    .await;
    assert!(survivor.alive());
    let out = serve::stop(survivor).await;
    let by_slot = snapshots_by_slot(&store).await;
    assert!(
        !by_slot.contains_key(&slot),
        "the killed holder's slot {slot} is lost, not run again: {by_slot:?}"
    );
    for s in &next {
        let holder = leases(&store, "snapshot")
            .into_iter()
            .find(|(name, _)| name == s)
            .map(|(_, l)| l["pid"].as_u64().unwrap() as u32);
        assert_ne!(
            holder,
            Some(pid),
            "slot {s} after the kill:\n{}",
            out.stderr
        );
    }
    // What the killed run left is an incomplete snapshot, listed as incomplete only.
    let incomplete = listed(&store).await.into_iter().filter(|l| !l.2).count();
    assert!(incomplete <= 1, "{incomplete} incomplete snapshots");
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_parse_and_last_success_moves_forward() {
    if !env::require_kafka() || !env::require_python() {
        return;
    }
    let group = group_with_offsets("serve-metrics").await;
    let (_dir, store) = local_store();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut s = serve::start(
        &store,
        &[
            "--snapshot-every",
            "5s",
            "--group",
            &group,
            "--listen",
            &listen,
        ],
        &[],
    );
    let job = [("job", "snapshot")];
    let first = eventually(
        "a first success in /metrics",
        Duration::from_secs(20),
        || async {
            let (samples, _) = match serve::get(port, "/metrics").await {
                Some(_) => scrape(port).await,
                None => return None,
            };
            value(
                &samples,
                "offset_vault_job_last_success_timestamp_seconds",
                &job,
            )
            .map(|v| (v, samples))
        },
    )
    .await;
    let (t1, samples) = first;
    let now = Utc::now().timestamp() as f64;
    assert!((now - 30.0..=now + 1.0).contains(&t1), "{t1} vs now {now}");
    assert_eq!(
        value(&samples, "offset_vault_job_interval_seconds", &job),
        Some(5.0)
    );
    assert_eq!(
        value(&samples, "offset_vault_snapshot_groups", &job),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, "offset_vault_snapshot_rows", &job),
        Some(1.0)
    );
    assert!(
        value(
            &samples,
            "offset_vault_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ) == Some(1.0)
    );
    assert_eq!(
        value(
            &samples,
            "offset_vault_job_last_failure_timestamp_seconds",
            &job
        ),
        None
    );
    let runs = |samples: &[serve::Sample]| {
        value(
            samples,
            "offset_vault_job_runs_total",
            &[("job", "snapshot"), ("outcome", "success")],
        )
    };
    let r1 = runs(&samples).unwrap();
    let (t2, samples2) = eventually("a later success", Duration::from_secs(15), || async {
        let (samples, _) = scrape(port).await;
        let t = value(
            &samples,
            "offset_vault_job_last_success_timestamp_seconds",
            &job,
        )?;
        (t > t1).then_some((t, samples))
    })
    .await;
    let slot = |t: f64| (t as i64).div_euclid(EVERY);
    assert!(slot(t2) > slot(t1), "a later slot's run: {t1} then {t2}");
    assert!(runs(&samples2).unwrap() > r1);
    let count = value(&samples2, "offset_vault_job_duration_seconds_count", &job).unwrap();
    assert_eq!(count, runs(&samples2).unwrap(), "one duration per run");
    let (_, ctype) = scrape(port).await;
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    assert_eq!(serve::get(port, "/healthz").await.map(|r| r.0), Some(200));
    let (code, body) = serve::get(port, "/readyz").await.unwrap();
    assert_eq!((code, body.trim()), (200, "ready"));
    let (samples, _) = scrape(port).await;
    assert_eq!(value(&samples, "offset_vault_ready", &[]), Some(1.0));
    assert!(s.alive());
    serve::stop(s).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_snapshot_leaves_no_half_listed_snapshot() {
    if !env::require_kafka() {
        return;
    }
    let group = group_with_offsets("serve-term").await;
    let (dir, store) = local_store();
    let textfile = dir.path().join("serve.prom");
    let s = serve::start(
        &store,
        &[
            "--snapshot-every",
            "1h",
            "--group",
            &group,
            "--listen",
            "none",
            "--metrics-textfile",
            textfile.to_str().unwrap(),
        ],
        &[("FAILPOINTS", "snapshot-before-manifest=sleep(4000)")],
    );
    // The current hour's slot runs at once; stop it while it waits before its manifest.
    eventually("the slot's lease", Duration::from_secs(15), || async {
        (!leases(&store, "snapshot").is_empty()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let out = serve::stop(s).await;
    assert!(out.stderr.contains("SIGTERM: stopping"), "{}", out.stderr);
    let all = listed(&store).await;
    assert_eq!(all.len(), 1, "{all:?}\n{}", out.stderr);
    assert!(
        all[0].2,
        "the running snapshot finished before the exit: {all:?}"
    );
    ov(&store, &["verify", "--all"]).await.ok();
    let text = std::fs::read_to_string(&textfile).expect("the textfile");
    assert!(
        text.contains("offset_vault_job_runs_total{job=\"snapshot\",outcome=\"success\"} 1"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_follow_seals_with_no_gap() {
    if !env::require_kafka() || !env::require_python() {
        return;
    }
    let topic = topic_with("serve-follow", 20).await;
    let group = unique_name("serve-follow-g");
    let (dir, store) = local_store();
    let follower = unique_name("serve-follow-f");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let textfile = dir.path().join("follow.prom");
    let s = serve::start(
        &store,
        &[
            "--follow",
            "--group-id",
            &follower,
            "--segment-interval",
            "1h",
            "--listen",
            &listen,
            "--metrics-textfile",
            textfile.to_str().unwrap(),
        ],
        &[],
    );
    commit(&group, &topic, 2).await;
    commit(&group, &topic, 3).await;
    // With hour-long segments nothing is sealed before the stop: what was read is held, and the
    // metrics say how far behind the archive is.
    let offsets = [("topic", "__consumer_offsets")];
    eventually(
        "the follower's lag in /metrics",
        Duration::from_secs(30),
        || async {
            serve::get(port, "/metrics").await?;
            let (samples, _) = scrape(port).await;
            let records = value(&samples, "offset_vault_follower_lag_records", &offsets)?;
            let seconds = value(&samples, "offset_vault_follower_lag_seconds", &offsets)?;
            (records > 0.0 && seconds > 0.0).then_some(())
        },
    )
    .await;
    serve::stop(s).await;
    verified(&store).await;
    assert_contiguous(&store);
    let (changes, _) = crate::support::follower::history(&store, &group).await;
    let offsets: Vec<Option<i64>> = changes.iter().map(|c| c.2).collect();
    assert_eq!(offsets, [Some(2), Some(5)], "{changes:?}");
    // SIGTERM sealed the held records: the last textfile counts those segments.
    let text = std::fs::read_to_string(&textfile).expect("the textfile");
    let sealed: f64 = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "offset_vault_follower_segments_written_total{topic=\"__consumer_offsets\"} ",
            )
        })
        .unwrap_or_else(|| panic!("no segments counted:\n{text}"))
        .parse()
        .unwrap();
    assert!(sealed >= 1.0, "{text}");
    assert!(
        text.contains("offset_vault_job_runs_total{job=\"follow\",outcome=\"success\"} 1"),
        "{text}"
    );
}

/// Jobs from the configuration file beside the flags' prune job; SIGHUP applies a changed file
/// and keeps the jobs when the file is bad.
#[tokio::test(flavor = "multi_thread")]
async fn file_jobs_run_and_sighup_reloads_them() {
    if !env::require_kafka() {
        return;
    }
    let group = group_with_offsets("serve-reload").await;
    let (dir, store) = local_store();
    let config = dir.path().join("config.toml");
    let textfile = dir.path().join("serve.prom");
    let write = |text: &str| std::fs::write(&config, text).expect("write the config");
    write(&format!(
        "[serve.jobs.snap]\nkind = \"snapshot\"\nevery = \"2s\"\ngroups = [\"{group}\"]\ntags = {{ by = \"serve\" }}\n\
         [serve.jobs.check]\nkind = \"verify\"\ncron = \"*/3 * * * * *\"\n"
    ));
    let mut s = serve::start(
        &store,
        &[
            "--config",
            config.to_str().unwrap(),
            "--prune-every",
            "3s",
            "--keep-last",
            "2",
            "--listen",
            "none",
            "--metrics-textfile",
            textfile.to_str().unwrap(),
        ],
        &[],
    );
    let ran = |job: &str| {
        let text = std::fs::read_to_string(&textfile).unwrap_or_default();
        text.contains(&format!(
            "offset_vault_job_runs_total{{job=\"{job}\",outcome=\"success\"}}"
        ))
    };
    eventually(
        "snap, check and prune to succeed",
        Duration::from_secs(20),
        || async { (ran("snap") && ran("check") && ran("prune")).then_some(()) },
    )
    .await;
    write(&format!(
        "[serve.jobs.snap]\nkind = \"snapshot\"\nevery = \"3s\"\ngroups = [\"{group}\"]\n\
         [serve.jobs.more]\nkind = \"verify\"\nevery = \"5s\"\n"
    ));
    // SAFETY: kill(2) on the pid of a child not yet reaped.
    let hup = || unsafe { libc::kill(s.child.id() as libc::pid_t, libc::SIGHUP) };
    assert_eq!(hup(), 0);
    s.wait_for("the reload", Duration::from_secs(10), |log| {
        log.contains("reload: added more, changed snap, removed check")
            .then_some(())
    })
    .await;
    write("[serve.jobs.x]\nkind = \"nope\"\nevery = \"1s\"\n");
    let hup = || unsafe { libc::kill(s.child.id() as libc::pid_t, libc::SIGHUP) };
    assert_eq!(hup(), 0);
    s.wait_for("the refused reload", Duration::from_secs(10), |log| {
        log.contains("reload failed, the jobs stay as they were: [serve.jobs.x]: kind = \"nope\"")
            .then_some(())
    })
    .await;
    eventually(
        "the reloaded job to run",
        Duration::from_secs(15),
        || async { ran("more").then_some(()) },
    )
    .await;
    let out = serve::stop(s).await;
    let complete: Vec<_> = listed(&store).await.into_iter().filter(|l| l.2).collect();
    assert!(
        (1..=4).contains(&complete.len()),
        "prune --keep-last 2 every 3 s bounds the snapshots: {complete:?}\n{}",
        out.stderr
    );
    ov(&store, &["verify", "--all"]).await.ok();
}

/// `snapshot`, `prune` and `follow --once` with `--metrics-textfile`: the file parses with
/// Prometheus's own parser and holds the run, its outcome and the command's figures.
#[tokio::test(flavor = "multi_thread")]
async fn one_shot_commands_write_a_textfile() {
    use crate::support::serve::parse_textfile;
    if !env::require_kafka() || !env::require_python() {
        return;
    }
    let group = group_with_offsets("serve-oneshot").await;
    let (dir, store) = local_store();
    let file = dir.path().join("offset_vault.prom");
    let path = file.to_str().unwrap();
    let before = Utc::now().timestamp() as f64;
    ov(
        &store,
        &["snapshot", "--group", &group, "--metrics-textfile", path],
    )
    .await
    .ok();
    let s = parse_textfile(&file).await;
    let job = [("job", "snapshot")];
    let t = value(&s, "offset_vault_job_last_success_timestamp_seconds", &job).unwrap();
    assert!(t >= before, "{t} {before}");
    assert_eq!(
        value(
            &s,
            "offset_vault_job_runs_total",
            &[("job", "snapshot"), ("outcome", "success")]
        ),
        Some(1.0)
    );
    assert_eq!(value(&s, "offset_vault_snapshot_groups", &job), Some(1.0));
    assert_eq!(value(&s, "offset_vault_snapshot_rows", &job), Some(1.0));
    assert_eq!(
        value(&s, "offset_vault_job_duration_seconds_count", &job),
        Some(1.0)
    );

    // A failed snapshot (a group that does not exist) is recorded as a failure.
    let missing = unique_name("serve-oneshot-missing");
    ov(
        &store,
        &["snapshot", "--group", &missing, "--metrics-textfile", path],
    )
    .await
    .expect_code(4);
    let s = parse_textfile(&file).await;
    assert!(value(&s, "offset_vault_job_last_failure_timestamp_seconds", &job).is_some());
    assert_eq!(
        value(&s, "offset_vault_job_last_success_timestamp_seconds", &job),
        None
    );
    assert_eq!(
        value(&s, "offset_vault_job_failures_total", &job),
        Some(1.0)
    );

    ov(
        &store,
        &[
            "prune",
            "--keep-last",
            "5",
            "--execute",
            "--metrics-textfile",
            path,
        ],
    )
    .await
    .ok();
    let s = parse_textfile(&file).await;
    assert_eq!(
        value(
            &s,
            "offset_vault_job_runs_total",
            &[("job", "prune"), ("outcome", "success")]
        ),
        Some(1.0)
    );

    let follower = unique_name("serve-oneshot-f");
    ov(
        &store,
        &[
            "follow",
            "--once",
            "--group-id",
            &follower,
            "--metrics-textfile",
            path,
        ],
    )
    .await
    .ok();
    let s = parse_textfile(&file).await;
    assert_eq!(
        value(
            &s,
            "offset_vault_job_runs_total",
            &[("job", "follow"), ("outcome", "success")]
        ),
        Some(1.0)
    );
    let sealed = value(
        &s,
        "offset_vault_follower_segments_written_total",
        &[("topic", "__consumer_offsets")],
    )
    .unwrap();
    assert!(sealed >= 1.0, "a first run archives the log: {sealed}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    // --metrics-textfile on follow needs --once.
    ov(&store, &["follow", "--metrics-textfile", path])
        .await
        .expect_code(2);
}

/// The expiry guard as a job of the configuration file: its run sets
/// offset_vault_groups_near_expiry and snapshots the group; `expiring --metrics-textfile` writes
/// the same gauge for a CronJob. The main cluster keeps offsets for the default 7 days, so a
/// margin of 7 days puts every Empty group within it, and one of 0 s none.
#[tokio::test(flavor = "multi_thread")]
async fn the_expiry_guard_job_and_the_one_shot_command_report_groups_near_expiry_in_metrics() {
    if !env::require_kafka() {
        return;
    }
    let group = group_with_offsets("serve-expiry").await;
    let (dir, store) = local_store();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[serve.jobs.guard]\nkind = \"expiry-guard\"\nevery = \"2s\"\ngroups = [\"{group}\"]\nexpiry-margin = \"7d\"\ntags = [\"by=serve\"]\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let s = serve::start(
        &store,
        &["--config", config.to_str().unwrap(), "--listen", &listen],
        &[],
    );
    let job = [("job", "guard"), ("outcome", "success")];
    let samples = eventually(
        "a run of the guard in /metrics",
        Duration::from_secs(30),
        || async {
            serve::get(port, "/metrics").await?;
            let (samples, _) = scrape(port).await;
            value(&samples, "offset_vault_job_runs_total", &job).map(|_| samples)
        },
    )
    .await;
    assert_eq!(
        value(&samples, "offset_vault_groups_near_expiry", &[]),
        Some(1.0)
    );
    serve::stop(s).await;
    let snapshots = ov(
        &store,
        &["list", "--tag", "expiry-guard=true", "--output", "json"],
    )
    .await
    .ok()
    .json();
    let first = &snapshots["snapshots"][0];
    assert_eq!(
        first["summary"]["group_ids"][0],
        group.as_str(),
        "{snapshots:#}"
    );
    assert_eq!(first["tags"]["by"], "serve", "{snapshots:#}");

    // The one-shot command, for a CronJob and node_exporter.
    let textfile = dir.path().join("expiring.prom");
    for (margin, near) in [("7d", 1.0), ("0s", 0.0)] {
        ov(
            &store,
            &[
                "expiring",
                "--group",
                &group,
                "--expiry-margin",
                margin,
                "--no-snapshot",
                "--metrics-textfile",
                textfile.to_str().unwrap(),
            ],
        )
        .await
        .ok();
        let samples = serve::parse_textfile(&textfile).await;
        assert_eq!(
            value(&samples, "offset_vault_groups_near_expiry", &[]),
            Some(near),
            "margin {margin}"
        );
        assert_eq!(
            value(
                &samples,
                "offset_vault_job_runs_total",
                &[("job", "expiring"), ("outcome", "success")]
            ),
            Some(1.0)
        );
    }
}

/// `serve` with arguments of its own (no test broker, Connect or store from the environment).
fn serve_alone(args: &[&str], env: &[(&str, &str)]) -> crate::support::follower::Follower {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    serve::start_with(&all, env)
}

/// Waits until `/metrics` counts a failure of `cause` for the snapshot job and for the readiness
/// check; the samples then.
async fn failures_counted(port: u16, cause: &'static str, within: Duration) -> Vec<serve::Sample> {
    eventually("failures by cause in /metrics", within, || async {
        let (samples, _) = scrape(port).await;
        let counted = |job: &str| {
            value(
                &samples,
                "offset_vault_failures_by_cause_total",
                &[("job", job), ("cause", cause)],
            )
            .is_some_and(|v| v >= 1.0)
        };
        (counted("snapshot") && counted("readyz")).then_some(samples)
    })
    .await
}

/// The first `/readyz` answer once the HTTP server is up, and how long that request took.
async fn first_readyz(port: u16) -> (u16, String, Duration) {
    eventually("the HTTP server up", Duration::from_secs(20), || async {
        let asked = std::time::Instant::now();
        serve::get(port, "/readyz")
            .await
            .map(|(code, body)| (code, body, asked.elapsed()))
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_broker_is_named_at_once_in_readyz_the_log_and_the_metrics() {
    if !env::require_python() {
        return;
    }
    // A port nobody listens on: every connection is refused.
    let closed = free_port();
    let bootstrap = format!("127.0.0.1:{closed}");
    let (_dir, store) = local_store();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut s = serve_alone(
        &[
            "--bootstrap-server",
            &bootstrap,
            "--store",
            &store,
            "--timeout",
            "15s",
            "--snapshot-every",
            "5s",
            "--all-groups",
            "--listen",
            &listen,
        ],
        &[],
    );
    // Not ready from the first answer on, and that answer does not wait for a check (the
    // connection's timeout is 15 s).
    let (code, body, took) = first_readyz(port).await;
    assert_eq!(code, 503, "{body}");
    assert!(took < Duration::from_secs(3), "/readyz took {took:?}");
    // The refused connection is named long before the 15 s timeout ends the wait, in /readyz
    // and in the log of the slot that waits.
    let named = format!("not ready: Kafka: no answer yet from {bootstrap}: ");
    let body = eventually(
        "/readyz naming the refusal",
        Duration::from_secs(5),
        || async {
            let (code, body) = serve::get(port, "/readyz").await?;
            (code == 503 && body.contains(&named)).then_some(body)
        },
    )
    .await;
    assert!(body.contains("Connection refused"), "{body}");
    let log = s
        .wait_for(
            "the slot naming the refusal",
            Duration::from_secs(6),
            |err| {
                err.lines()
                    .find(|l| l.contains("job snapshot slot") && l.contains("Connection refused"))
                    .map(str::to_string)
            },
        )
        .await;
    assert!(log.contains("Kafka"), "{log}");
    // Once a try has failed (after the timeout), each failure is counted by its cause.
    let samples = failures_counted(port, "kafka_unreachable", Duration::from_secs(40)).await;
    assert_eq!(value(&samples, "offset_vault_ready", &[]), Some(0.0));
    assert!(
        !samples
            .iter()
            .any(|x| x.name == "offset_vault_failures_by_cause_total"
                && x.labels.get("cause").map(String::as_str) == Some("store")),
        "the store answered: {samples:?}"
    );
    let (code, _) = serve::get(port, "/healthz").await.unwrap();
    assert_eq!(code, 200, "the loop turns while Kafka is away");
    assert!(s.alive());
    serve::stop(s).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_store_is_named_in_readyz_and_counted_as_the_store() {
    if !env::require_kafka() || !env::require_python() {
        return;
    }
    let closed = free_port();
    let endpoint = format!("http://127.0.0.1:{closed}");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let bootstrap = env::bootstrap();
    let mut s = serve_alone(
        &[
            "--bootstrap-server",
            &bootstrap,
            "--store",
            "s3://offset-vault-nowhere/serve",
            "--timeout",
            "8s",
            "--snapshot-every",
            "5s",
            "--all-groups",
            "--listen",
            &listen,
        ],
        &[
            ("AWS_ENDPOINT", endpoint.as_str()),
            ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ],
    );
    let (code, body, _) = first_readyz(port).await;
    assert_eq!(code, 503, "{body}");
    let body = eventually(
        "/readyz naming the store",
        Duration::from_secs(20),
        || async {
            let (code, body) = serve::get(port, "/readyz").await?;
            (code == 503 && body.contains("the store:")).then_some(body)
        },
    )
    .await;
    assert!(!body.contains("Kafka:"), "Kafka answers: {body}");
    failures_counted(port, "store", Duration::from_secs(30)).await;
    let log = s.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains("job snapshot slot") && l.contains(&endpoint)),
        "{log}"
    );
    assert!(s.alive());
    serve::stop(s).await;
}
