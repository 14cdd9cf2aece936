//! What scripts and people see: JSON documents against the published schemas, and progress
//! bars only on a terminal.

use std::process::Command;

use super::{args, config_file};
use crate::support::kafka::{self, Take};
use crate::support::ov::{local_files, local_store, ov, ov_raw};
use crate::support::schema::validate;
use crate::support::{env, unique_name};

#[tokio::test(flavor = "multi_thread")]
async fn json_output_matches_the_published_schemas() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("schema");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 5).await;
    let group = unique_name("schema-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3)])).await;
    let (_dir, store) = local_store();

    let snap = ov(
        &store,
        &[
            "snapshot", "--group", &group, "--tag", "k=v", "--output", "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("snapshot", &snap);
    let id = snap["id"].as_str().unwrap().to_string();
    validate(
        "show",
        &ov(&store, &["show", &id, "--output", "json"])
            .await
            .ok()
            .json(),
    );
    let guard = ov(
        &store,
        &[
            "guard", "--group", &group, "--output", "json", "--", "false",
        ],
    )
    .await
    .expect_code(1)
    .json();
    validate("guard", &guard);
    // An incomplete snapshot too: the guard's snapshot without its manifest.
    let broken = guard["snapshot_id"].as_str().unwrap();
    let manifest = local_files(&store, broken)
        .into_iter()
        .find(|f| f.ends_with("manifest.json"))
        .unwrap();
    std::fs::remove_file(manifest).unwrap();
    let list = ov(&store, &["list", "--output", "json"]).await.ok().json();
    validate("list", &list);
    assert_eq!(list["snapshots"].as_array().unwrap().len(), 2, "{list:#}");
    let verify = ov(&store, &["verify", "--all", "--output", "json"])
        .await
        .expect_code(5)
        .json();
    validate("verify", &verify);

    // The archive commands: diff (two snapshots, and against the live cluster), prune (plan and
    // execute; the policy keeps everything here), import.
    for other in [id.as_str(), "--live"] {
        let diff = ov(&store, &["diff", &id, other, "--all", "--output", "json"])
            .await
            .ok()
            .json();
        validate("diff", &diff);
    }
    for extra in [&[][..], &["--execute"][..]] {
        let mut prune = vec!["prune", "--keep-last", "100", "--output", "json"];
        prune.extend_from_slice(extra);
        validate("prune", &ov(&store, &prune).await.ok().json());
    }
    let csv = tempfile::tempdir().unwrap();
    std::fs::write(csv.path().join("g.csv"), format!("{topic},0,2\n")).unwrap();
    let imported = ov(
        &store,
        &[
            "import",
            csv.path().join("g.csv").to_str().unwrap(),
            "--group",
            &unique_name("schema-import"),
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("import", &imported);

    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(
        dir.path(),
        "c.toml",
        "current-context = \"a\"\n[contexts.a]\nbootstrap-server = \"k:9092\"\n",
        0o600,
    );
    let show = ov_raw(args(&[
        "--config", &cfg, "config", "show", "--output", "json",
    ]))
    .await
    .ok()
    .json();
    validate("config-show", &show);
    let contexts = ov_raw(args(&[
        "--config",
        &cfg,
        "config",
        "list-contexts",
        "--output",
        "json",
    ]))
    .await
    .ok()
    .json();
    validate("config-list-contexts", &contexts);

    // restore: a dry run, a failure before anything changed, and an executed restore.
    let plan = ov(&store, &["restore", &id, "--output", "json"])
        .await
        .ok()
        .json();
    validate("restore", &plan);
    assert_eq!(plan["status"], "dry-run");
    let refused = ov(
        &store,
        &[
            "restore",
            "--latest",
            "--group",
            "no-such-group",
            "--output",
            "json",
        ],
    )
    .await;
    assert_ne!(refused.code, 0);
    let refused = refused.json();
    validate("restore", &refused);
    assert_eq!(refused["status"], "not-applied");
    let executed = ov(
        &store,
        &[
            "restore",
            &id,
            "--execute",
            "--settle",
            "0s",
            "--output",
            "json",
        ],
    )
    .await
    .ok()
    .json();
    validate("restore", &executed);

    // reset: a dry run, a refusal before anything changed, and an executed reset.
    let reset = |extra: &'static [&'static str]| {
        let (store, group) = (store.clone(), group.clone());
        async move {
            let mut all = vec!["reset", "--group", group.as_str(), "--all-topics"];
            all.extend_from_slice(extra);
            all.extend(["--output", "json"]);
            ov(&store, &all).await
        }
    };
    let planned = reset(&["--to-earliest"]).await.ok().json();
    assert_eq!(planned["status"], "dry-run");
    validate("reset", &planned);
    let refused = reset(&["--to-offset", "99", "--execute"])
        .await
        .expect_code(7)
        .json();
    assert_eq!(refused["status"], "not-applied", "{refused:#}");
    validate("reset", &refused);
    let done = reset(&["--to-earliest", "--execute", "--settle", "0s"])
        .await
        .ok()
        .json();
    assert_eq!(done["status"], "applied", "{done:#}");
    validate("reset", &done);
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_only_on_a_terminal_and_colors_honour_no_color() {
    if !env::require_kafka() {
        return;
    }
    let topic = unique_name("progress");
    kafka::create_topic(&topic, 1).await;
    kafka::produce(&topic, 0, 3).await;
    let group = unique_name("progress-g");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2)])).await;
    let (_dir, store) = local_store();
    let missing = unique_name("no-such-group");

    // Not a terminal: no bar and no escape codes, warnings included.
    let run = ov(
        &store,
        &[
            "snapshot",
            "--group",
            &group,
            "--group",
            &missing,
            "--allow-missing",
        ],
    )
    .await
    .ok();
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    let verify = ov(&store, &["verify", "--all"]).await.ok();
    for out in [&run.stderr, &run.stdout, &verify.stderr, &verify.stdout] {
        assert!(
            !out.contains('\x1b'),
            "escape codes without a terminal: {out:?}"
        );
        assert!(!out.contains("committed offsets read"), "{out}");
    }

    // On a terminal (script(1) gives the command one): a bar, colored unless NO_COLOR.
    if Command::new("script").arg("--version").output().is_err() {
        assert!(
            !env::in_ci(),
            "script(1) is needed for the terminal half of this test"
        );
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let line = format!(
        "{} --bootstrap-server {} --store {store} snapshot --group {group}",
        bin.display(),
        env::bootstrap()
    );
    let on_tty = |no_color: bool| {
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .env_remove("NO_COLOR");
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let colored = on_tty(false);
    assert!(
        colored.contains("committed offsets read") && colored.contains("\x1b[32m"),
        "{colored:?}"
    );
    let plain = on_tty(true);
    assert!(plain.contains("committed offsets read"), "{plain:?}");
    assert!(
        !plain.contains("\x1b[3"),
        "colors despite NO_COLOR: {plain:?}"
    );
    // -q and --output json: no bar even on a terminal.
    let quiet = {
        let out = Command::new("script")
            .args(["-qec", &format!("{line} -q"), "/dev/null"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(!quiet.contains("committed offsets read"), "{quiet:?}");
}
