//! Connector secrets at rest: `snapshot --encrypt-to` keeps the full configs only encrypted with
//! age, in local and S3 stores; `restore --recreate-connectors --identity FILE` creates a deleted
//! connector again with its secret (read back through the Connect REST API), a wrong identity or
//! a changed file is refused with nothing created, and without an identity the plan says where
//! the secrets are.

use std::path::{Path, PathBuf};
use std::time::Duration;

use age::secrecy::ExposeSecret;
use futures::TryStreamExt;
use object_store::ObjectStore;
use serde_json::Value;

use crate::support::connect::{self, ConnectorCleanup};
use crate::support::ov::{local_files, local_store, ov, ov_raw_env, with_services};
use crate::support::{env, kafka, s3, schema, unique_name};

const SECRETS_FILE: &str = "connectors.secrets.age";

/// An age key pair: the identity file as `age-keygen` writes it, and the public key.
struct Key {
    file: PathBuf,
    public: String,
}

fn key(dir: &Path, name: &str) -> Key {
    let id = age::x25519::Identity::generate();
    let public = id.to_public().to_string();
    let file = dir.join(name);
    std::fs::write(
        &file,
        format!(
            "# created: 2026-12-01T00:00:00Z\n# public key: {public}\n{}\n",
            id.to_string().expose_secret()
        ),
    )
    .unwrap();
    Key { file, public }
}

/// A running FileStreamSink whose config holds `db.password = secret` (the sink ignores it),
/// with 3 records committed: its name, topic and cleanup.
async fn sink_with_secret(secret: &str, dir: &Path) -> (String, String, ConnectorCleanup) {
    let topic = unique_name("age-sink");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 3).await;
    let name = unique_name("age-sink-conn");
    let cleanup = ConnectorCleanup::new(&name);
    let mut config = connect::file_sink(&topic, &dir.join("sink.txt"));
    config["db.password"] = Value::String(secret.to_string());
    connect::create_connector(&name, config).await;
    connect::wait_connector_running(&name, Duration::from_secs(60)).await;
    kafka::wait_committed(&format!("connect-{name}"), &topic, [(0, 3)].into()).await;
    (name, topic, cleanup)
}

/// `GET /connectors/NAME/config`.
async fn live_config(name: &str) -> Option<Value> {
    let (status, value) = connect::connect_request(
        reqwest::Method::GET,
        &format!("/connectors/{name}/config"),
        None,
    )
    .await;
    match status {
        reqwest::StatusCode::OK => Some(value),
        reqwest::StatusCode::NOT_FOUND => None,
        other => panic!("config of {name}: {other} {value}"),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The restore steps shared by both stores, from a snapshot `id` of connector `name` (reading
/// `topic`, 3 records committed) taken with `--encrypt-to` the `right` key: the sink reads 3
/// more records, then is deleted; the restore creates it again and sets its group back to 3.
async fn restore_with_and_without_identity(
    store: &str,
    id: &str,
    (name, topic): (&str, &str),
    secret: &str,
    right: &Key,
    wrong: &Key,
) {
    let group = format!("connect-{name}");
    kafka::produce(topic, 0, 3).await;
    kafka::wait_committed(&group, topic, [(0, 6)].into()).await;
    connect::delete_connector(name).await;
    let recreate = |extra: &[&str]| -> Vec<String> {
        [
            "restore",
            id,
            "--connector",
            name,
            "--recreate-connectors",
            "--output",
            "json",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let run = |args: Vec<String>, env: Vec<(&'static str, String)>| async move {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        ov_raw_env(with_services(store, "20s", &refs), &env).await
    };

    // Without an identity: refused as for a redacted snapshot, and the plan says where the
    // secret is.
    let refused = run(recreate(&["--execute"]), vec![]).await.expect_code(7);
    let text = refused.stdout.clone() + &refused.stderr;
    assert!(text.contains("db.password"), "{text}");
    assert!(
        text.contains("encrypted") && text.contains("--identity"),
        "{text}"
    );
    assert!(live_config(name).await.is_none(), "nothing was created");

    // The wrong identity: a usage error naming the file; nothing created.
    let wrong_path = wrong.file.to_str().unwrap();
    let refused = run(recreate(&["--identity", wrong_path, "--execute"]), vec![])
        .await
        .expect_code(2);
    let text = refused.stdout.clone() + &refused.stderr;
    assert!(text.contains(SECRETS_FILE), "{text}");
    assert!(text.contains(wrong_path), "{text}");
    assert!(text.contains("Nothing was changed"), "{text}");
    assert!(!text.contains(secret), "{text}");
    assert!(live_config(name).await.is_none(), "nothing was created");

    // An identity file that cannot be read: a usage error naming it.
    let refused = run(
        recreate(&["--identity", "/nonexistent/id.txt", "--execute"]),
        vec![],
    )
    .await
    .expect_code(2);
    assert!(
        (refused.stdout.clone() + &refused.stderr).contains("/nonexistent/id.txt"),
        "{refused:?}"
    );

    // The right identity (through its variable): created again with its secret, resumed.
    let identity = right.file.to_str().unwrap().to_string();
    let done = run(
        recreate(&["--execute"]),
        vec![("OFFSET_VAULT_IDENTITY", identity)],
    )
    .await
    .ok()
    .json();
    assert_eq!(done["status"], "applied", "{done:#}");
    assert_eq!(done["verified"], true, "{done:#}");
    let c = &done["connectors"][0];
    assert_eq!(c["name"], name, "{done:#}");
    assert_eq!(c["recreated"], true, "{done:#}");
    assert!(
        !done.to_string().contains(secret),
        "the output holds no secret"
    );
    let config = live_config(name).await.expect("the connector exists again");
    assert_eq!(config["db.password"], secret, "{config:#}");
    connect::wait_connector_running(name, Duration::from_secs(60)).await;
    // Its group was set back to the snapshot's offset, and the sink reads on from there.
    kafka::wait_committed(&group, topic, [(0, 6)].into()).await;
    assert_eq!(
        done["plan"]["groups"][0]["partitions"][0]["target"], 3,
        "{done:#}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn encrypted_secrets_in_a_local_store_recreate_a_connector_only_with_its_identity() {
    if !(env::require_kafka() && env::require_connect()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secret = unique_name("pw-Zq7");
    let (name, topic, cleanup) = sink_with_secret(&secret, dir.path()).await;
    let (right, wrong) = (key(dir.path(), "right.txt"), key(dir.path(), "wrong.txt"));
    let (_store_dir, store) = local_store();

    // A malformed recipient is refused before anything is read.
    let bad = ov(
        &store,
        &["snapshot", "--connector", &name, "--encrypt-to", "age1nope"],
    )
    .await
    .expect_code(2);
    assert!(bad.stderr.contains("age1nope"), "{}", bad.stderr);
    assert!(!Path::new(&store).exists(), "nothing was written");

    // --include-secrets with --encrypt-to keeps no clear copy either.
    let taken = ov(
        &store,
        &[
            "snapshot",
            "--connector",
            &name,
            "--encrypt-to",
            &right.public,
            "--include-secrets",
            "--output",
            "json",
        ],
    )
    .await
    .ok();
    assert!(!taken.stderr.contains("in clear"), "{}", taken.stderr);
    let taken = taken.json();
    assert_eq!(
        taken["encrypted_secrets"]["file"], SECRETS_FILE,
        "{taken:#}"
    );
    let id = taken["id"].as_str().unwrap().to_string();
    let files = local_files(&store, &id);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&SECRETS_FILE.to_string()), "{names:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert!(
            !contains(&bytes, secret.as_bytes()),
            "{} holds the secret",
            f.display()
        );
    }

    // show, verify, export and diff work without the identity; show names the recipients.
    let shown = ov(&store, &["show", &id, "--output", "json"])
        .await
        .ok()
        .json();
    schema::validate("show", &shown);
    assert_eq!(
        shown["manifest"]["encrypted_secrets"]["recipients"][0],
        right.public.as_str()
    );
    assert_eq!(
        shown["connectors"][0]["config"]["db.password"],
        "<redacted>"
    );
    let table = ov(&store, &["show", &id]).await.ok();
    assert!(
        table.stdout.contains("stored encrypted"),
        "{}",
        table.stdout
    );
    ov(&store, &["verify", "--all"]).await.ok();
    ov(&store, &["export", &id]).await.ok();
    ov(&store, &["diff", &id, &id]).await.ok();

    // A changed encrypted file fails verification and the restore, identity or not.
    let sealed = files.iter().find(|f| f.ends_with(SECRETS_FILE)).unwrap();
    let good = std::fs::read(sealed).unwrap();
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    std::fs::write(sealed, &bad).unwrap();
    let failed = ov(&store, &["verify", &id]).await.expect_code(5);
    assert!(
        (failed.stdout.clone() + &failed.stderr).contains(SECRETS_FILE),
        "{failed:?}"
    );
    let right_path = right.file.to_str().unwrap();
    ov(
        &store,
        &[
            "restore",
            &id,
            "--connector",
            &name,
            "--recreate-connectors",
            "--identity",
            right_path,
            "--execute",
        ],
    )
    .await
    .expect_code(5);
    std::fs::write(sealed, &good).unwrap();

    restore_with_and_without_identity(&store, &id, (&name, &topic), &secret, &right, &wrong).await;
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn encrypted_secrets_in_an_s3_store_never_reach_it_in_clear() {
    if !(env::require_kafka() && env::require_connect() && env::require_s3()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let secret = unique_name("pw-Xk3");
    let (name, topic, cleanup) = sink_with_secret(&secret, dir.path()).await;
    let (right, wrong) = (key(dir.path(), "right.txt"), key(dir.path(), "wrong.txt"));
    let other = key(dir.path(), "other.txt");
    let prefix = unique_name("age-s3");
    let store = s3::s3_url(&prefix);

    // Recipients from the variable and from a file: either key opens the secrets.
    let recipients = dir.path().join("recipients.txt");
    std::fs::write(&recipients, format!("# team\n{}\n", other.public)).unwrap();
    let args = with_services(
        &store,
        "20s",
        &[
            "snapshot",
            "--connector",
            &name,
            "--encrypt-to-file",
            recipients.to_str().unwrap(),
            "--output",
            "json",
        ],
    );
    let taken = ov_raw_env(args, &[("OFFSET_VAULT_ENCRYPT_TO", &right.public)])
        .await
        .ok()
        .json();
    schema::validate("snapshot", &taken);
    assert_eq!(
        taken["encrypted_secrets"]["recipients"],
        serde_json::json!([right.public, other.public]),
        "the variable's key, then the file's: {taken:#}"
    );
    let id = taken["id"].as_str().unwrap().to_string();
    let files: Vec<&str> = taken["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(files.contains(&SECRETS_FILE), "{taken:#}");

    let s3 = s3::s3_store();
    let objects: Vec<_> = s3
        .list(Some(&object_store::path::Path::from(prefix.as_str())))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        objects.len(),
        4,
        "offsets, connectors, secrets, manifest: {objects:?}"
    );
    for o in &objects {
        let bytes = object_store::ObjectStoreExt::get(&s3, &o.location)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert!(
            !contains(&bytes, secret.as_bytes()),
            "{} holds the secret",
            o.location
        );
    }
    let shown = ov(&store, &["show", &id, "--output", "json"])
        .await
        .ok()
        .json();
    let listed = &shown["manifest"]["encrypted_secrets"]["recipients"];
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");

    restore_with_and_without_identity(&store, &id, (&name, &topic), &secret, &right, &wrong).await;
    cleanup.delete().await;
}
