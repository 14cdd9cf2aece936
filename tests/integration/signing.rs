//! Signed snapshots, trusted keys and approvals against the real broker and S3 server: forged,
//! unsigned and edited snapshots are refused with nothing changed, the trusted one restores
//! exactly (checked with the real `kafka-consumer-groups`), and a plan is applied only with the
//! approvals it needs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use offset_vault::snapshot::Manifest;
use serde_json::Value;

use crate::support::kafka::{self, Take};
use crate::support::ov::{local_store, ov, ov_raw, Run};
use crate::support::{env, kcg, s3, unique_name};

/// Makes a key pair with `keygen` and returns (secret, public, key id).
async fn keygen(dir: &Path, name: &str) -> (String, String, String) {
    let prefix = dir.join(name);
    let run = ov_raw(vec![
        "keygen".into(),
        "--out".into(),
        prefix.display().to_string(),
        "--output".into(),
        "json".into(),
    ])
    .await
    .ok();
    let doc = run.json();
    (
        format!("{}.key", prefix.display()),
        format!("{}.pub", prefix.display()),
        doc["key_id"].as_str().unwrap().to_string(),
    )
}

fn both(n: i64) -> BTreeMap<i32, i64> {
    BTreeMap::from([(0, n), (1, n)])
}

async fn snapshot_id(store: &str, args: &[&str]) -> String {
    let mut all = vec!["snapshot", "--output", "json"];
    all.extend_from_slice(args);
    ov(store, &all).await.ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The folder of a snapshot in a local store.
fn folder(store: &str, id: &str) -> PathBuf {
    let day = format!("date={}-{}-{}", &id[..4], &id[4..6], &id[6..8]);
    Path::new(store).join("snapshots").join(day).join(id)
}

/// Writes a copy of a local snapshot whose manifest was edited (a tag changed) and then made
/// consistent again: a new id from the edited sealed fields, in its own folder, with the files
/// and the original signature copied. Returns the new id.
fn edited_copy(store: &str, id: &str, keep_signature: bool) -> String {
    let from = folder(store, id);
    let bytes = std::fs::read(from.join("manifest.json")).unwrap();
    let mut m = Manifest::from_bytes("m", &bytes).unwrap();
    let value = if keep_signature { "yes" } else { "also-yes" };
    m.meta.tags.insert("approved".into(), value.into());
    m.assign_id();
    assert_eq!(
        m.expected_id(),
        m.meta.id,
        "the edited manifest is consistent"
    );
    let to = folder(store, &m.meta.id);
    std::fs::create_dir_all(&to).unwrap();
    for f in &m.files {
        std::fs::copy(from.join(&f.name), to.join(&f.name)).unwrap();
    }
    // The connectors file names the snapshot id, and the offsets file (JSON format) carries the
    // snapshot's metadata: rewrite both, as a forger would, then every hash.
    let conn = std::fs::read_to_string(to.join("connectors.json")).unwrap();
    let conn = conn.replace(id, &m.meta.id);
    std::fs::write(to.join("connectors.json"), &conn).unwrap();
    let offsets = to.join("offsets.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&offsets).unwrap()).unwrap();
    doc["snapshot"]["id"] = m.meta.id.clone().into();
    doc["snapshot"]["tags"]["approved"] = value.into();
    std::fs::write(&offsets, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    for f in &mut m.files {
        let body = std::fs::read(to.join(&f.name)).unwrap();
        f.size = body.len() as u64;
        f.sha256 = offset_vault::snapshot::manifest::sha256_hex(&body);
    }
    std::fs::write(to.join("manifest.json"), m.to_bytes()).unwrap();
    if keep_signature {
        std::fs::copy(from.join("manifest.json.sig"), to.join("manifest.json.sig")).unwrap();
    }
    m.meta.id
}

fn refused(run: Run, what: &str, needle: &str) {
    let run = run.expect_code(5);
    assert!(
        run.stderr.contains(needle) || run.stdout.contains(needle),
        "{what}: expected {needle:?} in the output:\n{}\n{}",
        run.stdout,
        run.stderr
    );
}

/// The forged, unsigned and edited snapshots on a local store, and the choice of `--latest`.
#[tokio::test(flavor = "multi_thread")]
async fn forged_unsigned_and_edited_snapshots_are_refused_and_the_trusted_one_restores_exactly() {
    if !env::require_kafka() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (ci_key, ci_pub, ci_id) = keygen(keys.path(), "ci").await;
    let (mallory_key, _, mallory_id) = keygen(keys.path(), "mallory").await;
    let (topic, group) = kafka::group_at("ov-sign", 5).await;
    let (_dir, store) = local_store();

    // JSON format: its offsets file is text a forger can edit.
    let trusted = snapshot_id(
        &store,
        &[
            "--group",
            &group,
            "--signing-key",
            &ci_key,
            "--format",
            "json",
        ],
    )
    .await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 3)])).await;
    assert_eq!(kcg::committed(&group, &topic).await, both(8));
    let unsigned = snapshot_id(&store, &["--group", &group]).await;
    // A forger with write access to the bucket: a consistent snapshot with offsets of their
    // choosing (an import), signed with their own key.
    let csv = keys.path().join("forged.csv");
    std::fs::write(
        &csv,
        format!("{group},{topic},0,19\n{group},{topic},1,19\n"),
    )
    .unwrap();
    let forged = ov(
        &store,
        &[
            "import",
            csv.to_str().unwrap(),
            "--group",
            &group,
            "--signing-key",
            &mallory_key,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The trusted snapshot edited and every hash and the id recomputed, with and without the
    // original signature beside it.
    let edited_signed = edited_copy(&store, &trusted, true);
    let edited_unsigned = edited_copy(&store, &trusted, false);

    // Without trusted keys, everything verifies, and list shows who signed what.
    let listed = ov(&store, &["list", "--output", "json"]).await.ok().json();
    let sig_of = |id: &str| -> Value {
        listed["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["signature"]
            .clone()
    };
    assert_eq!(sig_of(&trusted)["status"], "unverified");
    assert_eq!(sig_of(&trusted)["key_id"], ci_id.as_str());
    assert_eq!(sig_of(&forged)["key_id"], mallory_id.as_str());
    assert_eq!(sig_of(&unsigned)["status"], "unsigned");
    ov(&store, &["verify", &unsigned]).await.ok();
    // The edited copies are consistent: without a trusted key, nothing tells them from the real
    // thing (the copied signature names a key nobody gave, so it cannot be checked).
    ov(&store, &["verify", &edited_unsigned]).await.ok();
    ov(&store, &["verify", &edited_signed]).await.ok();

    let t = ["--trusted-key", ci_pub.as_str()];
    let with_trust = |args: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        v.extend(t.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>| {
        let store = store.clone();
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            ov(&store, &refs).await
        }
    };
    for (id, needle) in [
        (&forged, mallory_id.as_str()),
        (&unsigned, "not signed"),
        (&edited_signed, "invalid"),
        (&edited_unsigned, "not signed"),
    ] {
        refused(
            run(with_trust(&["restore", id, "--group", &group, "--execute"])).await,
            "restore",
            needle,
        );
        refused(run(with_trust(&["show", id])).await, "show", needle);
        refused(run(with_trust(&["verify", id])).await, "verify", needle);
        refused(
            run(with_trust(&["diff", id, "--live", "--group", &group])).await,
            "diff",
            needle,
        );
        refused(run(with_trust(&["export", id])).await, "export", needle);
        assert_eq!(
            kcg::committed(&group, &topic).await,
            both(8),
            "a refused restore of {id} changed nothing"
        );
    }

    // verify --all tells corrupted from unsigned from untrusted.
    let all = run(with_trust(&["verify", "--all", "--output", "json"]))
        .await
        .expect_code(5)
        .json();
    assert_eq!(all["unsigned"], 2, "{all:#}");
    assert_eq!(all["untrusted"], 1, "{all:#}");
    assert_eq!(
        all["failed"], 1,
        "the edited snapshot with the old signature: {all:#}"
    );
    let status = |id: &str| {
        all["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["signature"]["status"]
            .clone()
    };
    assert_eq!(status(&trusted), "trusted");
    assert_eq!(status(&forged), "untrusted");
    assert_eq!(status(&edited_signed), "invalid");

    // --latest passes over the newer unsigned one, says so, and restores the trusted one.
    let done = run(with_trust(&[
        "restore",
        "--latest",
        "--group",
        &group,
        "--execute",
    ]))
    .await;
    let done = done.ok();
    assert!(done.stderr.contains(&trusted), "{}", done.stderr);
    assert!(done.stderr.contains("passed over"), "{}", done.stderr);
    assert!(done.stderr.contains(&unsigned), "{}", done.stderr);
    assert_eq!(kcg::committed(&group, &topic).await, both(5));
}

/// The same refusal and restore on the S3 server.
#[tokio::test(flavor = "multi_thread")]
async fn on_s3_an_unsigned_snapshot_is_refused_and_the_signed_one_restores() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (ci_key, ci_pub, ci_id) = keygen(keys.path(), "ci").await;
    let (topic, group) = kafka::group_at("ov-sign-s3", 4).await;
    let store = s3::s3_url(&unique_name("sign"));
    let signed = snapshot_id(&store, &["--group", &group, "--signing-key", &ci_key]).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 6), (1, 6)])).await;
    let unsigned = snapshot_id(&store, &["--group", &group]).await;
    let shown = ov(
        &store,
        &[
            "show",
            &signed,
            "--trusted-key",
            &ci_pub,
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    assert_eq!(shown["signature"]["status"], "trusted");
    assert_eq!(shown["signature"]["key_id"], ci_id.as_str());
    refused(
        ov(
            &store,
            &[
                "restore",
                &unsigned,
                "--group",
                &group,
                "--trusted-key",
                &ci_pub,
                "--execute",
            ],
        )
        .await,
        "restore",
        "not signed",
    );
    assert_eq!(kcg::committed(&group, &topic).await, both(10));
    ov(
        &store,
        &[
            "restore",
            "--latest",
            "--group",
            &group,
            "--trusted-key",
            &ci_pub,
            "--execute",
        ],
    )
    .await
    .ok();
    assert_eq!(kcg::committed(&group, &topic).await, both(4));
}

/// A plan needs two approvals by trusted keys other than its author's.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_is_applied_only_with_the_approvals_it_needs_and_only_as_approved() {
    if !env::require_kafka() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_pub, _) = keygen(keys.path(), "alice").await;
    let (bob_key, bob_pub, bob_id) = keygen(keys.path(), "bob").await;
    let (carol_key, carol_pub, _) = keygen(keys.path(), "carol").await;
    let (topic, group) = kafka::group_at("ov-approve", 3).await;
    let (_dir, store) = local_store();
    let id = snapshot_id(&store, &["--group", &group, "--signing-key", &alice_key]).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 9), (1, 9)])).await;
    let plan = keys.path().join("restore.plan");
    let plan_s = plan.to_str().unwrap();
    ov(
        &store,
        &[
            "restore",
            &id,
            "--group",
            &group,
            "--plan-file",
            plan_s,
            "--signing-key",
            &alice_key,
        ],
    )
    .await
    .ok();
    let trusted = format!("{alice_pub},{bob_pub},{carol_pub}");
    let apply = |store: String, trusted: String| async move {
        ov(
            &store,
            &[
                "restore",
                "--from-plan",
                plan_s,
                "--require-approvals",
                "2",
                "--trusted-key",
                &trusted,
                "--execute",
            ],
        )
        .await
    };

    // None, then one approval: refused with exit 17, nothing changed.
    let none = apply(store.clone(), trusted.clone()).await.expect_code(17);
    assert!(none.stderr.contains("0 of 2"), "{}", none.stderr);
    // The author cannot approve their own plan.
    let own = ov_raw(vec![
        "approve".into(),
        plan_s.into(),
        "--key".into(),
        alice_key.clone(),
    ])
    .await
    .expect_code(2);
    assert!(own.stderr.contains("someone else"), "{}", own.stderr);
    ov_raw(vec![
        "approve".into(),
        plan_s.into(),
        "--key".into(),
        bob_key.clone(),
        "--trusted-key".into(),
        alice_pub.clone(),
    ])
    .await
    .ok();
    let one = apply(store.clone(), trusted.clone()).await.expect_code(17);
    assert!(one.stderr.contains("1 of 2"), "{}", one.stderr);
    assert_eq!(kcg::committed(&group, &topic).await, both(12));

    // Two approvals, but the plan changed afterwards (a target edited and the checksum
    // recomputed): refused, nothing changed.
    let approved = std::fs::read(&plan).unwrap();
    // Carol approves with the store configured: her approval is in its audit trail.
    ov(&store, &["approve", plan_s, "--key", &carol_key])
        .await
        .ok();
    let good = std::fs::read(&plan).unwrap();
    let mut file = offset_vault::restore::review::PlanFile::from_bytes("p", &good).unwrap();
    assert_eq!(file.signatures.len(), 3, "author and two approvals");
    let target = &mut file.body.plan.groups[0].partitions[0].target;
    *target = Some(target.unwrap() + 1);
    let resealed = offset_vault::restore::review::PlanFile::seal(file.body.clone());
    file.sha256 = resealed.sha256;
    std::fs::write(&plan, file.to_bytes()).unwrap();
    let changed = apply(store.clone(), trusted.clone()).await;
    assert!(
        changed.code == 5 || changed.code == 17,
        "a changed plan is refused: {changed:?}"
    );
    assert_eq!(kcg::committed(&group, &topic).await, both(12));
    // An approval by a key that is not trusted does not count.
    std::fs::write(&plan, &approved).unwrap();
    let untrusted = apply(store.clone(), format!("{alice_pub},{carol_pub}"))
        .await
        .expect_code(17);
    assert!(untrusted.stderr.contains(&bob_id), "{}", untrusted.stderr);

    // With both approvals, it is applied.
    std::fs::write(&plan, &good).unwrap();
    apply(store.clone(), trusted.clone()).await.ok();
    assert_eq!(kcg::committed(&group, &topic).await, both(3));

    // The audit trail: every refused and the executed application, and Carol's approval.
    let events = ov(&store, &["audit", "--output", "json"]).await.ok().json();
    let events = events["events"].as_array().unwrap();
    let of = |t: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["type"] == format!("dev.offset-vault.{t}"))
            .collect()
    };
    let restores: Vec<(i64, String)> = of("restore")
        .iter()
        .map(|e| {
            (
                e["data"]["exit_code"].as_i64().unwrap(),
                e["data"]["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(restores.len(), 5, "{restores:?}");
    assert_eq!(restores[0], (17, "refused".to_string()));
    assert_eq!(restores[1], (17, "refused".to_string()));
    assert_eq!(restores[3], (17, "refused".to_string()));
    assert_eq!(restores[4], (0, "executed".to_string()));
    let executed = of("restore")[4];
    let approvers: Vec<&str> = executed["data"]["detail"]["approved_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(approvers.len(), 2, "{executed:#}");
    assert!(approvers.contains(&bob_id.as_str()), "{executed:#}");
    let approvals = of("approve");
    assert_eq!(
        approvals.len(),
        1,
        "only Carol's approval had a store: {events:#?}"
    );
    assert_eq!(approvals[0]["data"]["outcome"], "executed");
}

/// Segments of the commit-log archive, undo snapshots and apply records are signed too, and with
/// a trusted key `--at` accepts only signed segments.
#[tokio::test(flavor = "multi_thread")]
async fn signed_segments_serve_at_and_an_unsigned_one_is_refused() {
    if !env::require_kafka() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let (ci_key, ci_pub, ci_id) = keygen(keys.path(), "ci").await;
    let topic = unique_name("ov-sign-log");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 30).await;
    kafka::produce(&topic, 1, 10).await;
    let group = unique_name("ov-sign-log-g");
    let follower = unique_name("ov-sign-log-f");
    let (_dir, store) = local_store();
    let follow = |signed: bool| {
        let (store, follower, key) = (store.clone(), follower.clone(), ci_key.clone());
        async move {
            let mut args = vec!["follow", "--once", "--group-id", &follower];
            if signed {
                args.extend(["--signing-key", &key]);
            }
            ov(&store, &args).await.ok();
        }
    };
    follow(true).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 2)])).await;
    let id = snapshot_id(&store, &["--group", &group, "--signing-key", &ci_key]).await;
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 5)])).await; // 8
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let between = (chrono::Utc::now() - chrono::Duration::milliseconds(600))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 7)])).await; // 15
    follow(true).await;

    let trust = ["--trusted-key", ci_pub.as_str()];
    let mut args = vec![
        "show", "--at", &between, "--group", &group, "--output", "json",
    ];
    args.extend(trust);
    let doc = ov(&store, &args).await.ok().json();
    let parts: Vec<i64> = doc["groups"][0]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(parts, [8, 2], "{doc:#}");

    // A restore signed by the same key: its undo snapshot and apply record are signed.
    let mut args = vec![
        "restore",
        &id,
        "--group",
        &group,
        "--execute",
        "--signing-key",
        &ci_key,
    ];
    args.extend(trust);
    ov(&store, &args).await.ok();
    assert_eq!(
        kcg::committed(&group, &topic).await,
        BTreeMap::from([(0, 3), (1, 2)])
    );
    // Its audit event is signed by the key, and names it.
    let mut args = vec!["audit", "--type", "restore", "--output", "json"];
    args.extend(trust);
    let events = ov(&store, &args).await.ok().json();
    let events = events["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["data"]["who"]["key_id"], ci_id.as_str());
    let mut args = vec!["verify", "--all", "--output", "json"];
    args.extend(trust);
    let all = ov(&store, &args).await.ok().json();
    let snaps = all["snapshots"].as_array().unwrap();
    assert!(
        snaps.len() >= 2,
        "the snapshot and the undo snapshot: {all:#}"
    );
    assert!(
        snaps.iter().all(|s| s["signature"]["status"] == "trusted"),
        "every snapshot, the undo one included, is signed: {all:#}"
    );
    assert!(
        all["log"]["apply_records"].as_u64().unwrap() >= 1,
        "{all:#}"
    );
    assert_eq!(all["log"]["ok"], true, "{all:#}");

    // A follower without the key appends an unsigned segment: --at now needs it and is refused,
    // and verify names it.
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(1, 4)])).await;
    follow(false).await;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut args = vec!["show", "--at", &now, "--group", &group];
    args.extend(trust);
    refused(ov(&store, &args).await, "show --at", "not signed");
    let mut args = vec!["verify", "--all", "--output", "json"];
    args.extend(trust);
    let all = ov(&store, &args).await.expect_code(5).json();
    let kinds: Vec<&str> = all["log"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"unsigned"), "{all:#}");
    assert!(
        kinds.iter().all(|k| *k == "unsigned"),
        "only the unsigned segments: {all:#}"
    );
}

fn openssl(args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new("openssl")
        .args(args)
        .output()
        .expect("openssl runs (scripts/test-env installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// OpenSSL as the independent reference: it reads the keys `keygen` writes, a key OpenSSL made
/// signs snapshots, and OpenSSL verifies the detached signature of a manifest over the message
/// the book describes (docs/book, "Keys and signatures").
#[tokio::test(flavor = "multi_thread")]
async fn openssl_reads_the_keys_and_verifies_the_signatures() {
    if !env::require_kafka() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ci_key, ci_pub, _) = keygen(dir.path(), "ci").await;
    let derived = openssl(&["pkey", "-in", &ci_key, "-pubout"]);
    assert_eq!(
        String::from_utf8(derived.stdout).unwrap(),
        std::fs::read_to_string(&ci_pub).unwrap(),
        "OpenSSL derives the same public key from keygen's secret key"
    );
    // A key made by OpenSSL signs, and its public half (from OpenSSL) is trusted.
    let ossl_key = dir.path().join("ossl.key");
    let ossl_pub = dir.path().join("ossl.pub");
    let (k, p) = (ossl_key.to_str().unwrap(), ossl_pub.to_str().unwrap());
    openssl(&["genpkey", "-algorithm", "ed25519", "-out", k]);
    openssl(&["pkey", "-in", k, "-pubout", "-out", p]);
    let (_topic, group) = kafka::group_at("ov-sign-ossl", 2).await;
    let (_store_dir, store) = local_store();
    let id = snapshot_id(&store, &["--group", &group, "--signing-key", k]).await;
    let shown = ov(
        &store,
        &["show", &id, "--trusted-key", p, "--output", "json"],
    )
    .await
    .ok()
    .json();
    assert_eq!(shown["signature"]["status"], "trusted", "{shown:#}");

    // OpenSSL verifies the detached signature over
    // "offset-vault signature v1\n<purpose>\n<SHA-256 of the manifest>\n".
    let folder = folder(&store, &id);
    let manifest = std::fs::read(folder.join("manifest.json")).unwrap();
    let sig: Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json.sig")).unwrap()).unwrap();
    let digest = offset_vault::snapshot::manifest::sha256_hex(&manifest);
    assert_eq!(sig["sha256"], digest.as_str());
    let msg = dir.path().join("msg");
    std::fs::write(
        &msg,
        format!("offset-vault signature v1\nsnapshot-manifest\n{digest}\n"),
    )
    .unwrap();
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(sig["signature"].as_str().unwrap())
        .unwrap();
    let sig_file = dir.path().join("sig.bin");
    std::fs::write(&sig_file, &raw).unwrap();
    let verify = |message: &Path| {
        std::process::Command::new("openssl")
            .args(["pkeyutl", "-verify", "-pubin", "-inkey", p, "-rawin", "-in"])
            .arg(message)
            .arg("-sigfile")
            .arg(&sig_file)
            .output()
            .unwrap()
    };
    let ok = verify(&msg);
    assert!(
        ok.status.success(),
        "{}{}",
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr)
    );
    // And refuses it for another manifest's digest.
    let other = dir.path().join("other");
    std::fs::write(
        &other,
        format!(
            "offset-vault signature v1\nsnapshot-manifest\n{}\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    assert!(!verify(&other).status.success());
}
