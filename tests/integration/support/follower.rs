//! A follower (`offset-vault follow`) running as a child process for the fault tests of the
//! commit-log archive, and readers of what it archived: its log lines about its partitions, the
//! index chains, `history` and `verify --all`. Shared by the integration tests (`log_follow`)
//! and the fault-injection binary (`tests/faults`, for the broker restart).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use super::kafka::{self, Take};
use super::ov::{ov, with_services};
use super::services::Service;
use super::{blocking, env, s3, unique_name};

pub const OFFSETS: &str = "__consumer_offsets";

/// Where the follower's own lines about its partitions are logged (debug: the ends it reads to).
pub const FOLLOW_LOG: &str = "warn,librdkafka=off,offset_vault::log::follow=debug";

// ---------------------------------------------------------------------------------------------
// A follower running in the background

/// `offset-vault follow` as a child process, its stderr collected as it comes.
pub struct Follower {
    pub child: Child,
    pub stderr: Arc<Mutex<String>>,
    pub stdout: Arc<Mutex<String>>,
    pub readers: Vec<std::thread::JoinHandle<()>>,
}

pub fn collect(
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
pub struct Exited {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Follower {
    /// Starts `follow --group-id GROUP ARGS` against `store`, with `env` set too.
    pub fn start(store: &str, group: &str, args: &[&str], env: &[(&str, &str)]) -> Follower {
        let mut all = vec!["follow", "--group-id", group];
        all.extend_from_slice(args);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_offset-vault"));
        cmd.args(with_services(store, "20s", &all))
            .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
            .env_remove("OFFSET_VAULT_CONNECT_URL")
            .env_remove("OFFSET_VAULT_STORE")
            .env("OFFSET_VAULT_LOG", FOLLOW_LOG);
        Follower::spawn(cmd, env)
    }

    /// Starts `cmd` (the binary with its arguments) with the S3 environment and `env`, its
    /// output collected.
    pub fn spawn(mut cmd: Command, env: &[(&str, &str)]) -> Follower {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in s3::s3_env() {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start offset-vault");
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

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("child status").is_none()
    }

    /// Waits until `check` finds what it wants in the follower's stderr; fails at once when the
    /// follower exited.
    pub async fn wait_for<T>(
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
    pub async fn read_past(&mut self, partition: i32, end: i64) {
        self.wait_for(
            &format!("the follower to read {OFFSETS}[{partition}] to {end}"),
            Duration::from_secs(40),
            |s| read_to(s, partition).filter(|n| *n >= end),
        )
        .await;
    }

    /// Waits until the follower reads from offsets of `partition` (its line on assignment).
    pub async fn reading(&mut self, partition: i32) -> i64 {
        self.wait_for(
            &format!("the follower to read {OFFSETS}[{partition}]"),
            Duration::from_secs(40),
            |s| assignments(s).get(&partition).copied(),
        )
        .await
    }

    pub async fn wait_exit(mut self, timeout: Duration) -> Exited {
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
    pub async fn terminate(self) -> Exited {
        // SAFETY: kill(2) on the pid of a child not yet reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(rc, 0, "SIGTERM to the follower");
        self.wait_exit(Duration::from_secs(60)).await
    }

    /// SIGKILL, as a crash, and its exit.
    pub async fn kill(mut self) -> Exited {
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
pub fn read_to(stderr: &str, partition: i32) -> Option<i64> {
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
pub fn assignments(stderr: &str) -> BTreeMap<i32, i64> {
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

pub fn bracketed(s: &str) -> Option<i32> {
    let open = s.find('[')?;
    let close = s[open..].find(']')? + open;
    s[open + 1..close].parse().ok()
}

// ---------------------------------------------------------------------------------------------
// The archive and the log

/// The `__consumer_offsets` partition of a group, as the broker maps it (`Utils.abs` of Java's
/// `String.hashCode`, modulo the partition count).
pub async fn offsets_partition(group: &str) -> i32 {
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
pub async fn log_end(partition: i32) -> i64 {
    kafka::watermarks(OFFSETS).await[&partition].1
}

/// One index manifest of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub partition: i32,
    pub start: i64,
    pub next: i64,
    pub gap: Option<String>,
    pub file: String,
}

/// Every index manifest of a local store, by partition, in log order.
pub fn chains(store: &str) -> BTreeMap<i32, Vec<Entry>> {
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

pub fn chain(store: &str, partition: i32) -> Vec<Entry> {
    chains(store).remove(&partition).unwrap_or_default()
}

/// Every partition's chain starts at the log start (0: nothing moves it on this broker) and is
/// contiguous: each entry starts where the one before it ends, none is empty, and none overlaps
/// another; every data file a manifest names is there. Returns the chains.
pub fn assert_contiguous(store: &str) -> BTreeMap<i32, Vec<Entry>> {
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
pub fn orphans(store: &str) -> Vec<PathBuf> {
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
pub async fn verified(store: &str) -> Vec<(String, Option<i64>, String)> {
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
pub async fn history(store: &str, group: &str) -> (Vec<(String, i64, Option<i64>, String)>, Value) {
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
pub fn commits(topic: &str, offsets: &[i64]) -> Vec<(String, i64, Option<i64>, String)> {
    offsets
        .iter()
        .map(|o| (topic.to_string(), 0, Some(*o), "commit".to_string()))
        .collect()
}

/// Waits until `history` lists exactly these commits of `group` (the running followers sealed
/// them); fails at once, with what they logged, when one of them exited.
pub async fn archived(
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
pub async fn commit(group: &str, topic: &str, n: usize) {
    kafka::consume_and_commit(group, topic, Take::per_partition(&[(0, n)])).await;
}

/// A topic of one partition with `n` records.
pub async fn topic_with(prefix: &str, n: usize) -> String {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, n).await;
    topic
}

pub fn text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Starts the broker again when the test ends, also when it fails.
pub struct Revive(pub Service);

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
