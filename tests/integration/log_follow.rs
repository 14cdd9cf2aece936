//! The continuous follower (`offset-vault follow`) under faults, against the real broker: a
//! SIGTERM seals what it holds and exits 0, a SIGKILL mid-segment (and one between a segment's
//! data file and its index entry) loses and duplicates nothing once it runs again, two followers
//! of one group split the partitions without writing a range twice, a broker restart under it
//! loses nothing (it goes on, or stops saying why and its next run completes the chain), and a
//! position the log no longer holds is recorded as a gap that `restore --at` refuses. Each test
//! reads what the archive holds: `history`, the index manifests and `verify --all`.
//!
//! The broker restart stops the broker the whole suite shares; the tests of this file wait for
//! it, the others must ride it out (see `support/services.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov, ov_raw_env, with_services};
use crate::support::poll::eventually;
use crate::support::services::{start_service, stop_service, Service};
use crate::support::{blocking, env, kcg, s3, unique_name};

const OFFSETS: &str = "__consumer_offsets";

/// The broker restart stops the broker every test here uses: it runs alone, the others together.
static BROKER: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Where the follower's own lines about its partitions are logged (debug: the ends it reads to).
const FOLLOW_LOG: &str = "warn,librdkafka=off,offset_vault::log::follow=debug";

// ---------------------------------------------------------------------------------------------
// A follower running in the background

/// `offset-vault follow` as a child process, its stderr collected as it comes.
struct Follower {
    child: Child,
    stderr: Arc<Mutex<String>>,
    stdout: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

fn collect(
    pipe: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut all = into.lock().unwrap();
            all.push_str(&line);
            all.push('\n');
        }
    })
}

/// What a stopped follower left.
#[derive(Debug)]
struct Exited {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Follower {
    /// Starts `follow --group-id GROUP ARGS` against `store`, with `env` set too.
    fn start(store: &str, group: &str, args: &[&str], env: &[(&str, &str)]) -> Follower {
        let mut all = vec!["follow", "--group-id", group];
        all.extend_from_slice(args);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_offset-vault"));
        cmd.args(with_services(store, "20s", &all))
            .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
            .env_remove("OFFSET_VAULT_CONNECT_URL")
            .env_remove("OFFSET_VAULT_STORE")
            .env("OFFSET_VAULT_LOG", FOLLOW_LOG)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in s3::s3_env() {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start offset-vault follow");
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let readers = vec![
            collect(child.stdout.take().unwrap(), Arc::clone(&stdout)),
            collect(child.stderr.take().unwrap(), Arc::clone(&stderr)),
        ];
        Follower {
            child,
            stderr,
            stdout,
            readers,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().expect("child status").is_none()
    }

    /// Waits until `check` finds what it wants in the follower's stderr; fails at once when the
    /// follower exited.
    async fn wait_for<T>(
        &mut self,
        what: &str,
        timeout: Duration,
        check: impl Fn(&str) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.stderr();
            if let Some(v) = check(&seen) {
                return v;
            }
            assert!(
                self.alive(),
                "the follower exited while waiting for {what}:\n{seen}"
            );
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting for {what}; the follower's stderr:\n{seen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the follower has read `__consumer_offsets[partition]` to `end` or past it.
    async fn read_past(&mut self, partition: i32, end: i64) {
        self.wait_for(
            &format!("the follower to read {OFFSETS}[{partition}] to {end}"),
            Duration::from_secs(40),
            |s| read_to(s, partition).filter(|n| *n >= end),
        )
        .await;
    }

    /// Waits until the follower reads from offsets of `partition` (its line on assignment).
    async fn reading(&mut self, partition: i32) -> i64 {
        self.wait_for(
            &format!("the follower to read {OFFSETS}[{partition}]"),
            Duration::from_secs(40),
            |s| assignments(s).get(&partition).copied(),
        )
        .await
    }

    async fn wait_exit(mut self, timeout: Duration) -> Exited {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the follower did not exit within {timeout:?}:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        for r in self.readers.drain(..) {
            let _ = blocking(move || r.join()).await;
        }
        Exited {
            status,
            stdout: self.stdout.lock().unwrap().clone(),
            stderr: self.stderr(),
        }
    }

    /// SIGTERM, as a service manager stops it, and its exit.
    async fn terminate(self) -> Exited {
        // SAFETY: kill(2) on the pid of a child not yet reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(rc, 0, "SIGTERM to the follower");
        self.wait_exit(Duration::from_secs(60)).await
    }

    /// SIGKILL, as a crash, and its exit.
    async fn kill(mut self) -> Exited {
        self.child.kill().expect("SIGKILL the follower");
        self.wait_exit(Duration::from_secs(30)).await
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        // A test that failed leaves no follower behind.
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The furthest end of `partition` the follower logged having read to.
fn read_to(stderr: &str, partition: i32) -> Option<i64> {
    let marker = format!("{OFFSETS}[{partition}] read to its end at ");
    stderr
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find(&marker)? + marker.len()..];
            rest.split_whitespace().next()?.parse::<i64>().ok()
        })
        .max()
}

/// The partitions the follower reads now (and the offset it started each from), replaying its
/// lines on assignment and revocation in order.
fn assignments(stderr: &str) -> BTreeMap<i32, i64> {
    let mut now = BTreeMap::new();
    for l in stderr.lines() {
        if let Some(i) = l.find(&format!("reading {OFFSETS}[")) {
            if l[..i].ends_with("no longer ") {
                if let Some(p) = bracketed(&l[i..]) {
                    now.remove(&p);
                }
                continue;
            }
            let rest = &l[i..];
            let (Some(p), Some(from)) = (
                bracketed(rest),
                rest.split("from offset ")
                    .nth(1)
                    .and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok()),
            ) else {
                continue;
            };
            now.insert(p, from);
        }
    }
    now
}

fn bracketed(s: &str) -> Option<i32> {
    let open = s.find('[')?;
    let close = s[open..].find(']')? + open;
    s[open + 1..close].parse().ok()
}

// ---------------------------------------------------------------------------------------------
// The archive and the log

/// The `__consumer_offsets` partition of a group, as the broker maps it (`Utils.abs` of Java's
/// `String.hashCode`, modulo the partition count).
async fn offsets_partition(group: &str) -> i32 {
    let count = kafka::partition_count(OFFSETS).await as i64;
    let hash = group
        .encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
    let abs = if hash == i32::MIN {
        0
    } else {
        i64::from(hash).abs()
    };
    (abs % count) as i32
}

/// The log end of `__consumer_offsets[partition]` now.
async fn log_end(partition: i32) -> i64 {
    kafka::watermarks(OFFSETS).await[&partition].1
}

/// One index manifest of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    partition: i32,
    start: i64,
    next: i64,
    gap: Option<String>,
    file: String,
}

/// Every index manifest of a local store, by partition, in log order.
fn chains(store: &str) -> BTreeMap<i32, Vec<Entry>> {
    let mut out: BTreeMap<i32, Vec<Entry>> = BTreeMap::new();
    let index = Path::new(store).join("log/index");
    let Ok(dirs) = std::fs::read_dir(&index) else {
        return out;
    };
    for dir in dirs {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = f.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let e = Entry {
                partition: m["partition"].as_i64().unwrap() as i32,
                start: m["start"].as_i64().unwrap(),
                next: m["next"].as_i64().unwrap(),
                gap: m["gap"].as_str().map(String::from),
                file: m["file"].as_str().unwrap().to_string(),
            };
            assert_eq!(
                path.file_name().unwrap().to_str().unwrap(),
                format!("{:020}.json", e.start),
                "{m:#}"
            );
            out.entry(e.partition).or_default().push(e);
        }
    }
    for chain in out.values_mut() {
        chain.sort_by_key(|e| e.start);
    }
    out
}

fn chain(store: &str, partition: i32) -> Vec<Entry> {
    chains(store).remove(&partition).unwrap_or_default()
}

/// Every partition's chain starts at the log start (0: nothing moves it on this broker) and is
/// contiguous: each entry starts where the one before it ends, none is empty, and none overlaps
/// another; every data file a manifest names is there. Returns the chains.
fn assert_contiguous(store: &str) -> BTreeMap<i32, Vec<Entry>> {
    let all = chains(store);
    assert!(!all.is_empty(), "no index manifest in {store}");
    for (p, chain) in &all {
        assert_eq!(chain[0].start, 0, "{OFFSETS}[{p}] starts late: {chain:#?}");
        for pair in chain.windows(2) {
            assert_eq!(
                pair[1].start, pair[0].next,
                "{OFFSETS}[{p}] is not contiguous: {chain:#?}"
            );
        }
        for e in chain {
            assert!(e.next > e.start, "an empty entry: {e:?}");
            match &e.gap {
                Some(_) => assert!(e.file.is_empty(), "{e:?}"),
                None => assert!(
                    Path::new(store).join(&e.file).is_file(),
                    "{e:?}: its data file is missing"
                ),
            }
        }
    }
    all
}

/// The data files of a local store that no manifest names (a writer stopped between the two
/// writes).
fn orphans(store: &str) -> Vec<PathBuf> {
    let named: BTreeSet<PathBuf> = chains(store)
        .values()
        .flatten()
        .filter(|e| e.gap.is_none())
        .map(|e| Path::new(store).join(&e.file))
        .collect();
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(store).join("log")];
    while let Some(dir) = dirs.pop() {
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") && !named.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// `verify --all` over the store: it must pass, and its notes about the commit-log archive are
/// returned as (kind, partition, key).
async fn verified(store: &str) -> Vec<(String, Option<i64>, String)> {
    let v = ov(store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(
        (&v["log"]["ok"], &v["log"]["problems"]),
        (&serde_json::json!(true), &serde_json::json!([])),
        "{v:#}"
    );
    assert!(v["log"]["manifests"].as_u64().unwrap() > 0, "{v:#}");
    v["log"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["kind"].as_str().unwrap().to_string(),
                n["partition"].as_i64(),
                n["key"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// (topic, partition, offset, kind) of each change of `group` the archive holds, in log order.
async fn history(store: &str, group: &str) -> (Vec<(String, i64, Option<i64>, String)>, Value) {
    let h = ov(store, &["history", group, "--output", "json"])
        .await
        .ok()
        .json();
    let changes = h["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap().to_string(),
                c["partition"].as_i64().unwrap(),
                c["offset"].as_i64(),
                c["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (changes, h)
}

/// The commits `group` made on partition 0 of `topic`, as `history` lists them.
fn commits(topic: &str, offsets: &[i64]) -> Vec<(String, i64, Option<i64>, String)> {
    offsets
        .iter()
        .map(|o| (topic.to_string(), 0, Some(*o), "commit".to_string()))
        .collect()
}

/// Waits until `history` lists exactly these commits of `group` (the running followers sealed
/// them); fails at once, with what they logged, when one of them exited.
async fn archived(
    store: &str,
    group: &str,
    want: &[(String, i64, Option<i64>, String)],
    followers: &mut [&mut Follower],
) {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let run = ov(store, &["history", group, "--output", "json"]).await;
        let seen = if run.code == 0 {
            let (got, _) = history(store, group).await;
            if got == want {
                return;
            }
            format!("{got:?}")
        } else {
            format!("history exited {}: {}", run.code, run.stderr)
        };
        let logs: Vec<String> = followers.iter().map(|f| f.stderr()).collect();
        for (f, log) in followers.iter_mut().zip(&logs) {
            assert!(
                f.alive(),
                "a follower exited before {group}'s commits were archived:\n{log}"
            );
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the archive to hold the commits of {group}; last seen: {seen}\nthe followers logged:\n{}",
            logs.join("\n----\n")
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A group's commit of `n` more records of `topic[0]`.
async fn commit(group: &str, topic: &str, n: usize) {
    kafka::consume_and_commit(group, topic, Take::per_partition(&[(0, n)])).await;
}

/// A topic of one partition with `n` records.
async fn topic_with(prefix: &str, n: usize) -> String {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, n).await;
    topic
}

fn text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Starts the broker again when the test ends, also when it fails.
struct Revive(Service);

impl Drop for Revive {
    fn drop(&mut self) {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/test-env");
        let _ = Command::new(script)
            .args(["start", self.0.name()])
            .env("OV_TEST_ENV_DIR", env::test_env_dir())
            .stdin(Stdio::null())
            .status();
    }
}

// ---------------------------------------------------------------------------------------------
// The tests

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_seals_the_commits_the_follower_holds_and_exits_0() {
    if !env::require_kafka() {
        return;
    }
    let _broker = BROKER.read().await;
    let topic = topic_with("follow-term", 30).await;
    let group = unique_name("follow-term-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-term-f");
    // An hour: nothing is sealed on time, only by the SIGTERM.
    let mut f = Follower::start(&store, &follower, &["--segment-interval", "1h"], &[]);
    assert_eq!(
        f.reading(p).await,
        0,
        "a first run reads from the log start"
    );
    f.read_past(p, log_end(p).await).await;

    for n in [2, 3, 4] {
        commit(&group, &topic, n).await;
    }
    let end = log_end(p).await;
    f.read_past(p, end).await;
    assert_eq!(chain(&store, p), vec![], "sealed before the SIGTERM");

    let exited = f.terminate().await;
    assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    assert!(!exited.stderr.contains("error:"), "{}", exited.stderr);
    assert!(
        exited.stdout.contains("segment(s)") && exited.stdout.contains("record(s) archived"),
        "{exited:#?}"
    );

    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
    assert_eq!(h["source_partition"], p, "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    // One segment of everything read, sealed at the stop; the group's position and the head
    // are where it ends.
    let all = assert_contiguous(&store);
    let mine = &all[&p];
    assert_eq!(mine.len(), 1, "{mine:#?}");
    assert!(mine[0].gap.is_none() && mine[0].next >= end, "{mine:#?}");
    assert_eq!(
        kafka::committed_offsets(&follower, OFFSETS).await.get(&p),
        Some(&mine[0].next)
    );
    let head: Value = serde_json::from_slice(
        &std::fs::read(Path::new(&store).join(format!("log/heads/partition={p:02}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(head["next"], mine[0].next, "{head:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_killed_mid_segment_and_between_its_two_writes_resumes_with_nothing_lost_or_twice(
) {
    if !env::require_kafka() {
        return;
    }
    let _broker = BROKER.read().await;
    let topic = topic_with("follow-kill", 40).await;
    let group = unique_name("follow-kill-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-kill-f");

    commit(&group, &topic, 2).await;
    ov(&store, &["follow", "--once", "--group-id", &follower])
        .await
        .ok();
    let archived_to = chain(&store, p).last().expect("a segment").next;

    // Continuous, holding two more commits unsealed when it is killed.
    let mut f = Follower::start(&store, &follower, &["--segment-interval", "1h"], &[]);
    assert_eq!(
        f.reading(p).await,
        archived_to,
        "starts where the archive ends"
    );
    commit(&group, &topic, 3).await;
    commit(&group, &topic, 4).await;
    f.read_past(p, log_end(p).await).await;
    assert_eq!(chain(&store, p).last().unwrap().next, archived_to);
    let killed = f.kill().await;
    assert_eq!(killed.status.signal(), Some(libc::SIGKILL), "{killed:#?}");
    assert_eq!(
        chain(&store, p).last().unwrap().next,
        archived_to,
        "nothing was sealed"
    );

    commit(&group, &topic, 5).await;
    // Killed again, this time between a segment's data file and its index entry.
    let rendezvous = tempfile::tempdir().unwrap();
    let point = "follow-before-segment-manifest";
    let failpoints = format!(
        "{point}={}",
        format_args!("return({})", rendezvous.path().display())
    );
    let f = Follower::start(
        &store,
        &follower,
        &["--once"],
        &[("FAILPOINTS", &failpoints)],
    );
    let reached = rendezvous.path().join(format!("{point}.reached"));
    eventually(
        "the follower to stop before an index entry",
        Duration::from_secs(60),
        || async { reached.exists().then_some(()) },
    )
    .await;
    let before = orphans(&store);
    assert_eq!(before.len(), 1, "{before:?}");
    f.kill().await;

    let again = ov(
        &store,
        &[
            "follow",
            "--once",
            "--group-id",
            &follower,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(again["gaps"], serde_json::json!([]), "{again:#}");
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9, 14]), "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    let all = assert_contiguous(&store);
    assert!(all[&p].len() >= 2, "{:#?}", all[&p]);
    // The killed run's data file is never read: it is still the only one no manifest names,
    // and verify notes it (and nothing else) without failing.
    assert_eq!(orphans(&store), before);
    let orphan = before[0]
        .strip_prefix(&store)
        .unwrap()
        .to_str()
        .unwrap()
        .trim_start_matches('/')
        .to_string();
    let notes = verified(&store).await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].0.as_str(), &notes[0].2),
        ("orphan", &orphan),
        "{notes:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_followers_of_one_group_split_the_partitions_and_archive_each_range_once() {
    if !env::require_kafka() {
        return;
    }
    let _broker = BROKER.read().await;
    let topic = topic_with("follow-two", 40).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-two-f");
    let partitions = kafka::partition_count(OFFSETS).await as i32;
    let interval = ["--segment-interval", "2s"];
    let mut a = Follower::start(&store, &follower, &interval, &[]);
    a.wait_for(
        "the first follower to read every partition",
        Duration::from_secs(40),
        |s| (assignments(s).len() == partitions as usize).then_some(()),
    )
    .await;
    let mut b = Follower::start(&store, &follower, &interval, &[]);
    let (mine_a, mine_b) = eventually(
        "the two followers to split the partitions",
        Duration::from_secs(60),
        || {
            let (sa, sb) = (a.stderr(), b.stderr());
            async move {
                let (pa, pb): (BTreeSet<i32>, BTreeSet<i32>) = (
                    assignments(&sa).into_keys().collect(),
                    assignments(&sb).into_keys().collect(),
                );
                let union: BTreeSet<i32> = pa.union(&pb).copied().collect();
                if !pa.is_empty()
                    && !pb.is_empty()
                    && pa.is_disjoint(&pb)
                    && union.len() == partitions as usize
                {
                    Ok((pa, pb))
                } else {
                    Err(format!("{pa:?} and {pb:?}"))
                }
            }
        },
    )
    .await;
    assert!(a.alive() && b.alive());

    // A group whose commits each follower archives.
    let mut groups = Vec::new();
    for mine in [&mine_a, &mine_b] {
        loop {
            let g = unique_name("follow-two-g");
            if mine.contains(&offsets_partition(&g).await) {
                groups.push(g);
                break;
            }
        }
    }
    for n in [2, 3, 4] {
        for g in &groups {
            commit(g, &topic, n).await;
        }
    }
    for g in &groups {
        archived(
            &store,
            g,
            &commits(&topic, &[2, 5, 9]),
            &mut [&mut a, &mut b],
        )
        .await;
    }
    assert!(a.alive() && b.alive(), "{}\n{}", a.stderr(), b.stderr());

    for f in [a, b] {
        let exited = f.terminate().await;
        assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    }
    for g in &groups {
        let (got, h) = history(&store, g).await;
        assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
        assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    }
    let all = assert_contiguous(&store);
    assert_eq!(all.len(), partitions as usize, "{all:#?}");
    assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
    // A follower that lost a race withdrew its data file: nothing is left over.
    assert_eq!(verified(&store).await, vec![]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follower_rides_out_a_broker_restart_and_archives_what_came_after() {
    if !env::require_kafka() {
        return;
    }
    let _broker = BROKER.write().await;
    let topic = topic_with("follow-restart", 40).await;
    let group = unique_name("follow-restart-g");
    let p = offsets_partition(&group).await;
    let (_dir, store) = local_store();
    let follower = unique_name("follow-restart-f");
    // A member the restarted coordinator no longer knows is replaced only once its session
    // times out (45 s by default): the shortest the broker allows keeps the wait short.
    let mut f = Follower::start(
        &store,
        &follower,
        &["--segment-interval", "2s", "-X", "session.timeout.ms=6000"],
        &[],
    );
    f.reading(p).await;
    commit(&group, &topic, 2).await;
    archived(&store, &group, &commits(&topic, &[2]), &mut [&mut f]).await;

    let revive = Revive(Service::Kafka);
    stop_service(Service::Kafka).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        f.alive(),
        "the follower exited with the broker away:\n{}",
        f.stderr()
    );
    start_service(Service::Kafka).await;
    drop(revive);
    // The group coordinator serves the group again once it has loaded the offsets topic.
    eventually(
        "the restarted broker to serve the group's offsets",
        Duration::from_secs(90),
        || async { (kcg::committed(&group, &topic).await == [(0, 2)].into()).then_some(()) },
    )
    .await;

    commit(&group, &topic, 3).await;
    commit(&group, &topic, 4).await;
    let want = commits(&topic, &[2, 5, 9]);
    // The follower goes on and archives them. When the rebalance after the restart could not
    // learn where the log starts, it stops instead (a follower that read nothing would stall
    // unseen): with a message saying so, and a run after it completes the chain.
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut stopped = None;
    loop {
        if history(&store, &group).await.0 == want {
            break;
        }
        if !f.alive() {
            stopped = Some(f.stderr());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the commits after the restart were not archived:\n{}",
            f.stderr()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    if let Some(log) = stopped {
        let exited = f.wait_exit(Duration::from_secs(5)).await;
        assert_ne!(exited.status.code(), Some(0), "{log}");
        assert!(
            log.contains("deciding where to read the commit log")
                && log.contains("run it again: it starts where the archive ends"),
            "{log}"
        );
        eprintln!("the follower stopped after the broker restart; running it again:\n{log}");
        ov(&store, &["follow", "--once", "--group-id", &follower])
            .await
            .ok();
        let (got, h) = history(&store, &group).await;
        assert_eq!(got, want, "{h:#}");
        let all = assert_contiguous(&store);
        assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
        assert_eq!(verified(&store).await, vec![]);
        return;
    }
    assert!(f.alive(), "{}", f.stderr());
    let exited = f.terminate().await;
    assert_eq!(exited.status.code(), Some(0), "{exited:#?}");
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 5, 9]), "{h:#}");
    assert_eq!(h["discontinuities"], serde_json::json!([]), "{h:#}");
    let all = assert_contiguous(&store);
    assert!(all.values().flatten().all(|e| e.gap.is_none()), "{all:#?}");
    assert_eq!(verified(&store).await, vec![]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_position_the_log_no_longer_holds_is_a_recorded_gap_that_restore_at_refuses() {
    if !env::require_kafka() {
        return;
    }
    let _broker = BROKER.read().await;
    let topic = topic_with("follow-gap", 40).await;
    let group = unique_name("follow-gap-g");
    let p = offsets_partition(&group).await;

    // The broker refuses DeleteRecords on its internal topics (INVALID_TOPIC_EXCEPTION), even
    // a request that deletes nothing, and retention never runs on a compacted topic: the test
    // moves the log start the follower sees with a failpoint instead. If a broker ever takes
    // the request, delete the records here.
    let refused = {
        use rdkafka::admin::{AdminClient, AdminOptions};
        let admin: AdminClient<rdkafka::client::DefaultClientContext> =
            kafka::kafka_config().create().expect("admin client");
        let mut tpl = rdkafka::TopicPartitionList::new();
        tpl.add_partition_offset(OFFSETS, p, rdkafka::Offset::Offset(0))
            .unwrap();
        match admin.delete_records(&tpl, &AdminOptions::new()).await {
            Err(e) => format!("{e}"),
            Ok(r) => r
                .elements()
                .iter()
                .filter_map(|e| e.error().err().map(|e| e.to_string()))
                .collect::<Vec<_>>()
                .join("; "),
        }
    };
    assert!(
        refused.to_lowercase().contains("invalid topic"),
        "DeleteRecords on {OFFSETS} was not refused ({refused:?})"
    );

    let (_dir, store) = local_store();
    let follower = unique_name("follow-gap-f");
    commit(&group, &topic, 2).await;
    let first = ov(
        &store,
        &[
            "follow",
            "--once",
            "--group-id",
            &follower,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(first["gaps"], serde_json::json!([]), "{first:#}");
    let s0 = first["base_snapshot"]
        .as_str()
        .expect("a base snapshot")
        .to_string();
    let archived_to = chain(&store, p).last().unwrap().next;

    // 5 is committed, and then the log "no longer holds" anything before its end: lost.
    commit(&group, &topic, 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let in_gap = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log_start = log_end(p).await;
    assert!(log_start > archived_to);
    commit(&group, &topic, 4).await; // 9, after the new log start

    let failpoints = format!("follow-log-start=return({p}:{log_start})");
    let second = ov_raw_env(
        with_services(
            &store,
            "20s",
            &[
                "follow",
                "--once",
                "--group-id",
                &follower,
                "--output",
                "json",
            ],
        ),
        &[("FAILPOINTS", &failpoints)],
    )
    .await
    .ok()
    .json();
    let gap_line =
        format!("{OFFSETS}[{p}] offsets {archived_to} to {log_start}: the log no longer held");
    assert_eq!(second["gaps"].as_array().unwrap().len(), 1, "{second:#}");
    assert!(
        second["gaps"][0].as_str().unwrap().starts_with(&gap_line),
        "{second:#}"
    );
    assert!(
        second["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with(&gap_line)),
        "{second:#}"
    );
    let s1 = second["base_snapshot"]
        .as_str()
        .expect("a base snapshot after the gap")
        .to_string();
    assert_ne!(s1, s0);

    // The chain: what was archived, the gap (no data file), what came after.
    let all = assert_contiguous(&store);
    let mine = &all[&p];
    let gaps: Vec<&Entry> = mine.iter().filter(|e| e.gap.is_some()).collect();
    assert_eq!(gaps.len(), 1, "{mine:#?}");
    assert_eq!(
        (gaps[0].start, gaps[0].next),
        (archived_to, log_start),
        "{mine:#?}"
    );
    assert!(
        gaps[0].gap.as_deref().unwrap().contains("no longer held"),
        "{mine:#?}"
    );
    assert!(
        all.iter()
            .all(|(q, c)| *q == p || c.iter().all(|e| e.gap.is_none())),
        "{all:#?}"
    );
    let notes = verified(&store).await;
    assert_eq!(
        notes,
        vec![(
            "recorded-gap".to_string(),
            Some(i64::from(p)),
            format!("log/index/partition={p:02}/{archived_to:020}.json")
        )],
        "{notes:?}"
    );
    let (got, h) = history(&store, &group).await;
    assert_eq!(got, commits(&topic, &[2, 9]), "{h:#}");
    let listed = serde_json::to_string(&h["discontinuities"]).unwrap();
    assert!(
        listed.contains(&format!("\"from\":{archived_to}"))
            && listed.contains(&format!("\"to\":{log_start}")),
        "{h:#}"
    );

    // An instant inside the gap needs the lost commit: refused, naming the gap. Dry run.
    let refused = ov(&store, &["restore", "--at", &in_gap, "--group", &group])
        .await
        .expect_code(7);
    assert!(
        refused.stderr.contains(&format!(
            "recorded gap at offsets {archived_to} to {log_start}"
        )),
        "{}",
        refused.stderr
    );
    // Just after the base snapshot taken with the gap: accepted, 9.
    let shown = crate::support::ov::show(&store, &s1).await;
    let created: DateTime<Utc> = shown["manifest"]["created_at"]
        .as_str()
        .unwrap_or_else(|| panic!("no created_at: {shown:#}"))
        .parse()
        .unwrap();
    let after = text(created + chrono::Duration::milliseconds(1));
    let plan = ov(
        &store,
        &[
            "restore", "--at", &after, "--group", &group, "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    let target = &plan["plan"]["groups"][0]["partitions"][0];
    assert_eq!(
        (target["topic"].as_str(), target["target"].as_i64()),
        (Some(topic.as_str()), Some(9)),
        "{plan:#}"
    );
}
