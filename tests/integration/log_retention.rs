//! `prune --keep-log` and `verify --all` on the commit-log archive, on a local store and on S3,
//! with real commits archived by three `follow --once` runs: exactly the prefix of each chain
//! that the kept window does not need goes (index manifest and data file), `restore --at` inside
//! the window still plans and one before it is refused, the window's base follows the snapshot
//! policy, and verify finds a corrupted data file, a deleted one, an orphan, an unrecorded gap
//! and a damaged apply record made by hand in a copy of the store.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov};
use crate::support::schema::validate;
use crate::support::{env, s3, unique_name};

/// A store's objects, read and changed behind the tool's back.
#[derive(Clone)]
struct Files(Arc<dyn ObjectStore>);

impl Files {
    fn local(root: &str) -> Self {
        std::fs::create_dir_all(root).unwrap();
        Files(Arc::new(LocalFileSystem::new_with_prefix(root).unwrap()))
    }

    fn s3(prefix: &str) -> Self {
        Files(Arc::new(PrefixStore::new(s3::s3_store(), prefix)))
    }

    async fn keys(&self, prefix: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .0
            .list(Some(&ObjectPath::from(prefix)))
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .unwrap();
        out.sort();
        out
    }

    async fn get(&self, key: &str) -> Vec<u8> {
        let got = self.0.get(&ObjectPath::from(key)).await.unwrap();
        got.bytes().await.unwrap().to_vec()
    }

    async fn put(&self, key: &str, bytes: Vec<u8>) {
        self.0
            .put(&ObjectPath::from(key), PutPayload::from(bytes))
            .await
            .unwrap();
    }

    async fn delete(&self, key: &str) {
        self.0.delete(&ObjectPath::from(key)).await.unwrap();
    }

    async fn copy_to(&self, other: &Files) {
        for key in self.keys("").await {
            other.put(&key, self.get(&key).await).await;
        }
    }

    /// The data files (`log/date=...`): a listing's prefix is whole path segments.
    async fn data_files(&self) -> Vec<String> {
        let mut out = self.keys("log").await;
        out.retain(|k| k.starts_with("log/date="));
        out
    }

    /// The index manifests of one partition, in chain order.
    async fn chain(&self, partition: i64) -> Vec<String> {
        self.keys(&format!("log/index/partition={partition:02}"))
            .await
    }

    async fn manifest(&self, key: &str) -> Value {
        serde_json::from_slice(&self.get(key).await).unwrap()
    }
}

fn text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

async fn follow(store: &str, follower: &str) {
    ov(store, &["follow", "--once", "--group-id", follower])
        .await
        .ok();
}

/// Takes a snapshot of `group`; returns its id and creation time.
async fn snapshot(store: &str, group: &str, extra: &[&str]) -> (String, DateTime<Utc>) {
    let mut args = vec!["snapshot", "--group", group, "--output", "json"];
    args.extend_from_slice(extra);
    let doc = ov(store, &args).await.ok().json();
    (
        doc["id"].as_str().unwrap().to_string(),
        doc["created_at"].as_str().unwrap().parse().unwrap(),
    )
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The manifests a prune plan removes (every partition), and those of one partition.
fn planned(doc: &Value, partition: Option<i64>) -> Vec<String> {
    doc["log"]["chains"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| partition.is_none_or(|p| c["partition"] == p))
        .flat_map(|c| c["remove"].as_array().unwrap().clone())
        .map(|s| s["manifest"].as_str().unwrap().to_string())
        .collect()
}

fn kinds(findings: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Everything but the stores' own objects is shared by the local and the S3 round.
async fn log_round(store: &str, files: Files, copy: (String, Files)) {
    let topic = unique_name("log-keep");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 30).await;
    let group = unique_name("log-keep-g");
    let follower = unique_name("log-keep-follower");
    let take = |n| Take::per_partition(&[(0, n)]);

    follow(store, &follower).await; // F1
    kafka::consume_and_commit(&group, &topic, take(3)).await;
    let (s1, _) = snapshot(store, &group, &["--tag", "keep=yes"]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let history = ov(store, &["history", &group, "--output", "json"])
        .await
        .ok()
        .json();
    let p = history["source_partition"].as_i64().unwrap();
    let after_f1 = files.chain(p).await;
    follow(store, &follower).await; // F2
    let after_f2 = files.chain(p).await;
    assert!(after_f2.len() > after_f1.len(), "{after_f1:?} {after_f2:?}");
    kafka::consume_and_commit(&group, &topic, take(5)).await; // 8
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (s2, s2_at) = snapshot(store, &group, &[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    kafka::consume_and_commit(&group, &topic, take(7)).await; // 15
    tokio::time::sleep(Duration::from_millis(300)).await;
    let inside = text(Utc::now());
    tokio::time::sleep(Duration::from_millis(300)).await;
    follow(store, &follower).await; // F3
    let after_f3 = files.chain(p).await;
    assert!(after_f3.len() > after_f2.len(), "{after_f2:?} {after_f3:?}");

    // A copy of the whole archive for the damage done to it below.
    files.copy_to(&copy.1).await;

    // The window starts just after s2: s2 is its base.
    let keep = format!("{}ms", (Utc::now() - s2_at).num_milliseconds());
    let index_before = files.keys("log/index").await;
    let data_before: BTreeSet<String> = files.data_files().await.into_iter().collect();
    assert!(
        data_before.len() >= index_before.len() / 2,
        "{data_before:?}"
    );

    // Without --keep-log nothing of the log is planned, and --help says so.
    let plain = ov(store, &["prune", "--keep-last", "5", "--output", "json"])
        .await
        .ok()
        .json();
    validate("prune", &plain);
    assert!(plain["log"].is_null(), "{plain:#}");
    let help = ov(store, &["prune", "--help"]).await.ok().stdout;
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("--keep-log") && help.contains("never removes a log segment"),
        "{help}"
    );

    // The base snapshot the first follow took holds every group then: as long as the policy
    // keeps it, a `--group` restore of one of those groups may start from it, and so little
    // goes (a prefix of what F1 archived).
    let all = ov(
        store,
        &[
            "prune",
            "--keep-last",
            "5",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    let base_id = all["log"]["window"]["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(base_id != s1 && base_id != s2, "{all:#}");
    assert!(after_f1.starts_with(&planned(&all, Some(p))), "{all:#}");

    // With one policy group, the follower's snapshot is the oldest and goes.
    // The policy keeps only s1 (tagged): the base moves back to s1, and only what is older
    // than s1 goes from the group's partition (what F1 archived; F2's segment leads).
    let tagged = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-tag",
            "keep=yes",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("prune", &tagged);
    assert_eq!(
        tagged["log"]["window"]["snapshot"],
        s1.as_str(),
        "{tagged:#}"
    );
    assert_eq!(planned(&tagged, Some(p)), after_f1, "{tagged:#}");

    // By default the 15 minutes before the base are kept too (--at replays them): all of this
    // test's records are younger, so nothing of the group's partition goes but what the first
    // follow archived from before this test whose every record is older than the window (other
    // tests' commits, when the suite has run for more than 15 minutes).
    let margin = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("prune", &margin);
    let w = &margin["log"]["window"];
    let (base, from): (DateTime<Utc>, DateTime<Utc>) = (
        w["base"].as_str().unwrap().parse().unwrap(),
        w["keep_from"].as_str().unwrap().parse().unwrap(),
    );
    assert_eq!(
        (base, base - from),
        (s2_at, chrono::Duration::minutes(15)),
        "{margin:#}"
    );
    for key in planned(&margin, Some(p)) {
        assert!(
            after_f1.contains(&key),
            "{key} is not the first follow's: {margin:#}"
        );
        let last = files.manifest(&key).await["last_timestamp"].as_i64();
        assert!(
            last.is_some_and(|t| t < from.timestamp_millis()),
            "{key} holds records inside the kept window ({last:?}): {margin:#}"
        );
    }

    // With no margin (a cluster without transactions): s2 is the base; every entry of the partition before F3 goes, nothing
    // changes yet.
    let dry = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("prune", &dry);
    assert_eq!(dry["executed"], false);
    assert_eq!(dry["log"]["window"]["snapshot"], s2.as_str(), "{dry:#}");
    let base: DateTime<Utc> = dry["log"]["window"]["base"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(base, s2_at);
    assert_eq!(planned(&dry, Some(p)), after_f2, "{dry:#}");
    assert_eq!(files.keys("log/index").await, index_before);
    let table = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
        ],
    )
    .await
    .ok()
    .stdout;
    let first: Value = files.manifest(&after_f2[0]).await;
    let range = format!("{}..{}", first["start"], first["next"]);
    assert!(
        table.contains("commit-log archive: keep") && table.contains(&range),
        "{range}: {table}"
    );

    // Executed: exactly those manifests and their data files are gone.
    let done = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("prune", &done);
    let removed = planned(&dry, None);
    assert!(!removed.is_empty());
    assert_eq!(strs(&done["log_deleted"]["segments"]), removed, "{done:#}");
    let gone: BTreeSet<&String> = removed.iter().collect();
    let want_index: Vec<String> = index_before
        .iter()
        .filter(|k| !gone.contains(k))
        .cloned()
        .collect();
    assert_eq!(files.keys("log/index").await, want_index);
    let mut gone_files = BTreeSet::new();
    for c in dry["log"]["chains"].as_array().unwrap() {
        for s in c["remove"].as_array().unwrap() {
            if s["gap"] == false {
                gone_files.insert(s["file"].as_str().unwrap().to_string());
            }
        }
        // Only a prefix of each chain, never its last entry.
        let entries = c["entries"].as_u64().unwrap() as usize;
        assert!(
            c["remove"].as_array().unwrap().len() < entries.max(1),
            "{c:#}"
        );
    }
    let want_data: BTreeSet<String> = data_before.difference(&gone_files).cloned().collect();
    let data_after: BTreeSet<String> = files.data_files().await.into_iter().collect();
    assert_eq!(data_after, want_data);
    assert_eq!(files.chain(p).await, after_f3[after_f2.len()..]);

    // Inside the window: still reconstructed. Before it: refused, with why.
    // The dry run reads the group's live offsets: a coordinator that moves (the shared broker's
    // tests restart it) answers exit 3 for a moment, and is asked again.
    let plan = crate::support::poll::eventually(
        "a restore --at dry run that reaches the group's coordinator",
        Duration::from_secs(60),
        || async {
            let run = ov(
                store,
                &[
                    "restore", "--at", &inside, "--group", &group, "--output", "json",
                ],
            )
            .await;
            if run.code == 3 {
                return None;
            }
            Some(run.ok().json())
        },
    )
    .await;
    assert_eq!(
        plan["plan"]["groups"][0]["partitions"][0]["target"], 15,
        "{plan:#}"
    );
    let refused = ov(store, &["restore", "--at", &before, "--group", &group])
        .await
        .expect_code(7);
    assert!(
        refused.stderr.contains("begins after the snapshot")
            && refused.stderr.contains("nothing was changed"),
        "{}",
        refused.stderr
    );

    // The pruned archive verifies; pruning again removes nothing more.
    let verified = ov(store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    validate("verify", &verified);
    assert_eq!(verified["log"]["ok"], true, "{verified:#}");
    assert_eq!(verified["log"]["problems"], serde_json::json!([]));
    let again = ov(
        store,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(planned(&again, Some(p)), Vec::<String>::new(), "{again:#}");

    // In the copy: a corrupted data file, a deleted one, a middle manifest deleted (an
    // unrecorded gap; its data file is then an orphan), an orphan and a bad apply record.
    let (copy_url, copy) = copy;
    let last: Value = copy.manifest(after_f3.last().unwrap()).await;
    let corrupted = last["file"].as_str().unwrap().to_string();
    let mut bytes = copy.get(&corrupted).await;
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    copy.put(&corrupted, bytes).await;
    let mut other = None;
    for k in copy.keys("log/index").await {
        let file = copy.manifest(&k).await["file"]
            .as_str()
            .unwrap()
            .to_string();
        if !k.contains(&format!("partition={p:02}/")) && !file.is_empty() {
            other = Some((k, file));
            break;
        }
    }
    let (other, other_file) = other.expect("another partition has a segment");
    copy.delete(&other_file).await;
    let middle = after_f2.last().unwrap().clone();
    let middle_file = copy.manifest(&middle).await["file"]
        .as_str()
        .unwrap()
        .to_string();
    copy.delete(&middle).await;
    let first: Value = copy.manifest(&after_f1[0]).await;
    let first_file = first["file"].as_str().unwrap().to_string();
    let orphan = format!("{}-deadbeef.parquet", &first_file[..first_file.len() - 17]);
    copy.put(&orphan, copy.get(&first_file).await).await;
    let bad_record = "applies/date=2026-01-01/20260101T000000.000Z-0123456789abcdef.json";
    copy.put(bad_record, b"{not json".to_vec()).await;

    let found = ov(&copy_url, &["verify", "--all", "--output", "json"])
        .await
        .expect_code(5)
        .json();
    validate("verify", &found);
    let log = &found["log"];
    assert_eq!(log["ok"], false);
    let problems = kinds(&log["problems"]);
    assert!(
        problems.contains(&("checksum".into(), corrupted.clone())),
        "{problems:?}"
    );
    assert!(
        problems.contains(&("missing-data".into(), other.clone())),
        "{problems:?}"
    );
    assert!(
        problems.contains(&("bad-apply-record".into(), bad_record.to_string())),
        "{problems:?}"
    );
    let gaps: Vec<&(String, String)> = problems
        .iter()
        .filter(|(k, _)| k == "unrecorded-gap")
        .collect();
    assert_eq!(gaps.len(), 1, "{problems:?}");
    // The gap begins where the deleted manifest began.
    assert_eq!(gaps[0].1, middle, "{gaps:?}");
    let notes = kinds(&log["notes"]);
    assert!(
        notes.contains(&("orphan".into(), orphan.clone())),
        "{notes:?}"
    );
    assert!(
        notes.contains(&("orphan".into(), middle_file.clone())),
        "{notes:?}"
    );
    let table = ov(&copy_url, &["verify", "--all"]).await.expect_code(5);
    assert!(
        table.stdout.contains("FAILED  log checksum")
            && table.stdout.contains("NOTE    log orphan")
            && table.stdout.contains("harmless"),
        "{}",
        table.stdout
    );

    // prune leaves the broken chain whole and removes the orphans before its end.
    let cleaned = ov(
        &copy_url,
        &[
            "prune",
            "--group-by",
            "",
            "--keep-last",
            "2",
            "--keep-log",
            &keep,
            "--keep-log-margin",
            "0s",
            "--incomplete-older-than",
            "1ms",
            "--execute",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("prune", &cleaned);
    assert_eq!(
        planned(&cleaned, Some(p)),
        Vec::<String>::new(),
        "{cleaned:#}"
    );
    let orphans = strs(&cleaned["log_deleted"]["orphans"]);
    assert!(
        orphans.contains(&orphan) && orphans.contains(&middle_file),
        "{cleaned:#}"
    );
    let left: BTreeSet<String> = copy.data_files().await.into_iter().collect();
    assert!(!left.contains(&orphan) && !left.contains(&middle_file));
    let after = ov(&copy_url, &["verify", "--all", "--output", "json"])
        .await
        .expect_code(5)
        .json();
    assert!(
        !kinds(&after["log"]["notes"])
            .iter()
            .any(|(k, _)| k == "orphan"),
        "{after:#}"
    );
    assert!(
        kinds(&after["log"]["problems"])
            .iter()
            .any(|(k, _)| k == "unrecorded-gap"),
        "{after:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_log_on_a_local_store_removes_exactly_the_unneeded_prefix_and_verify_finds_damage() {
    if !env::require_kafka() {
        return;
    }
    let (_dir, store) = local_store();
    let (_copy_dir, copy) = local_store();
    log_round(
        &store,
        Files::local(&store),
        (copy.clone(), Files::local(&copy)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_log_on_s3_removes_exactly_the_unneeded_prefix_and_verify_finds_damage() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let prefix = unique_name("log-keep");
    let copy = unique_name("log-keep-copy");
    log_round(
        &s3::s3_url(&prefix),
        Files::s3(&prefix),
        (s3::s3_url(&copy), Files::s3(&copy)),
    )
    .await;
}

/// A prune stopped between a segment's index manifest and its data file (the failpoint panics
/// there) leaves an orphan: verify calls it harmless and passes, and the next prune removes it
/// with the rest of what the plan removes.
#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_log_prune_leaves_a_harmless_orphan_that_the_next_prune_removes() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("log-keep-kill");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 10).await;
    let group = unique_name("log-keep-kill-g");
    let follower = unique_name("log-keep-kill-follower");
    let (_dir, store) = local_store();
    let files = Files::local(&store);
    // Three rounds of commit-then-follow put two segments that end before the snapshot on the
    // group's own partition (whatever else the log holds), and the last follow a third one
    // that stays: at least two removable segments, however quiet the rest of the cluster is.
    follow(&store, &follower).await;
    for n in [2, 3, 4] {
        kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, n)])).await;
        if n < 4 {
            follow(&store, &follower).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, s_at) = snapshot(&store, &group, &[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    follow(&store, &follower).await;
    let keep = format!("{}ms", (Utc::now() - s_at).num_milliseconds());
    let args = [
        "prune",
        "--group-by",
        "",
        "--keep-last",
        "1",
        "--keep-log",
        &keep,
        "--keep-log-margin",
        "0s",
        "--incomplete-older-than",
        "1ms",
        "--output",
        "json",
    ];
    let plan = ov(&store, &args).await.ok().json();
    let removed = planned(&plan, None);
    assert!(removed.len() >= 2, "{plan:#}");
    let first = &plan["log"]["chains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| !c["remove"].as_array().unwrap().is_empty())
        .unwrap()["remove"][0];
    let (manifest, file) = (
        first["manifest"].as_str().unwrap().to_string(),
        first["file"].as_str().unwrap().to_string(),
    );

    let mut execute: Vec<&str> = args.to_vec();
    execute.push("--execute");
    let all = crate::support::ov::with_services(&store, "10s", &execute);
    let killed =
        crate::support::ov::ov_raw_env(all, &[("FAILPOINTS", "prune-log-after-manifest=panic")])
            .await;
    assert_ne!(killed.code, 0, "{}", killed.stderr);
    let index: BTreeSet<String> = files.keys("log/index").await.into_iter().collect();
    let data: BTreeSet<String> = files.data_files().await.into_iter().collect();
    assert!(
        !index.contains(&manifest) && data.contains(&file),
        "{manifest} {file}: {}\n{}",
        killed.stdout,
        killed.stderr
    );
    // Only the first segment's manifest went.
    assert!(removed[1..].iter().all(|k| index.contains(k)));

    let verified = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(verified["log"]["ok"], true, "{verified:#}");
    let notes = kinds(&verified["log"]["notes"]);
    assert_eq!(
        notes,
        [("orphan".to_string(), file.clone())],
        "{verified:#}"
    );
    assert!(verified["log"]["notes"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("harmless"));

    let done = ov(&store, &execute).await.ok().json();
    assert_eq!(
        strs(&done["log_deleted"]["orphans"]),
        std::slice::from_ref(&file),
        "{done:#}"
    );
    assert_eq!(
        strs(&done["log_deleted"]["segments"]),
        removed[1..].to_vec(),
        "{done:#}"
    );
    assert!(!files.data_files().await.contains(&file));
    let verified = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(
        verified["log"]["notes"],
        serde_json::json!([]),
        "{verified:#}"
    );
}
