//! Operator experience: shell completions and man pages, the configuration file with its
//! contexts, and `guard` against the real services.

mod recipes;

use std::path::Path;
use std::process::Command;

use crate::ov::{local_files, local_store, ov, ov_raw, ov_raw_env};
use crate::util::{self, unique_name, Take};

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Runs `script` with bash; returns (success, stdout, stderr).
fn bash(script: &str) -> (bool, String, String) {
    let out = Command::new("bash")
        .args(["-c", script])
        .output()
        .expect("bash runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_completion_parses_and_completes_commands() {
    let script = ov_raw(args(&["completions", "bash"])).await.ok().stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("offset-vault.bash");
    std::fs::write(&file, &script).unwrap();
    let (ok, _, err) = bash(&format!("bash -n {}", file.display()));
    assert!(ok, "bash -n: {err}");

    // Drive the completion function the way bash does on TAB.
    let complete = |words: &str| {
        let line = format!(
            "source {file}
             f=$(complete -p offset-vault | sed -E 's/.* -F ([^ ]+) .*/\\1/')
             COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}
             \"$f\" offset-vault \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file = file.display()
        );
        let (ok, out, err) = bash(&line);
        assert!(ok, "completion of {words}: {err}");
        out.lines().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(complete("offset-vault res"), ["restore"]);
    let guard = complete("offset-vault gu");
    assert_eq!(guard, ["guard"]);
    let flags = complete("offset-vault restore --exe");
    assert_eq!(flags, ["--execute"]);
    let shells = complete("offset-vault completions z");
    assert_eq!(shells, ["zsh"]);

    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = ov_raw(args(&["completions", shell])).await.ok().stdout;
        assert!(out.contains("restore") && out.contains("guard"), "{shell}");
    }
    if Command::new("zsh").arg("--version").output().is_ok() {
        let z = dir.path().join("_offset-vault");
        std::fs::write(&z, ov_raw(args(&["completions", "zsh"])).await.stdout).unwrap();
        let out = Command::new("zsh").arg("-n").arg(&z).output().unwrap();
        assert!(out.status.success(), "zsh -n");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn man_writes_a_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("man1");
    let run = ov_raw(args(&["man", "--dir", d.to_str().unwrap()]))
        .await
        .ok();
    let help = ov_raw(args(&["--help"])).await.ok().stdout;
    // Every command listed in --help has its page.
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 12, "{commands:?}");
    for c in &commands {
        let page = d.join(format!("offset-vault-{c}.1"));
        assert!(page.is_file(), "no page for {c}; written: {}", run.stdout);
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{c}");
    }
    assert!(d.join("offset-vault.1").is_file());
    assert!(d.join("offset-vault-config-use-context.1").is_file());
    let main = ov_raw(args(&["man"])).await.ok().stdout;
    assert!(main.contains(".TH") && main.contains("bootstrap"));
}

/// Writes `text` as a configuration file with `mode`.
fn config_file(dir: &Path, name: &str, text: &str, mode: u32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.to_str().unwrap().to_string()
}

/// The source of one setting in `config show --output json`.
fn source_of(show: &serde_json::Value, setting: &str) -> (String, String) {
    let s = show["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == setting)
        .unwrap_or_else(|| panic!("{setting} not in {show:#}"));
    (
        s["value"].as_str().unwrap().to_string(),
        s["source"]["kind"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn config_contexts_precedence_and_commands() {
    let dir = tempfile::tempdir().unwrap();
    let (_s1, store_a) = local_store();
    let (_s2, store_b) = local_store();
    std::fs::create_dir_all(&store_a).unwrap();
    std::fs::create_dir_all(&store_b).unwrap();
    let text = format!(
        "# kept by use-context\ncurrent-context = \"a\"\n\n[contexts.a]\nstore = \"{store_a}\"\nbootstrap-server = \"127.0.0.1:1\"\nproperties = {{ \"sasl.password\" = \"hunter2\" }}\n\n[contexts.b] # second\nstore = \"{store_b}\"\noutput = \"json\"\n"
    );
    let cfg = config_file(dir.path(), "a.toml", &text, 0o600);
    let run = |a: &[&str], env: &[(&str, &str)]| {
        let mut all = args(&["--config", &cfg]);
        all.extend(args(a));
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        async move {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            ov_raw_env(all, &env).await
        }
    };

    // The context alone is enough to run a command; its output setting applies.
    let listed = run(&["list"], &[]).await.ok();
    assert!(listed.stderr.contains("0 snapshot(s)"), "{}", listed.stderr);
    assert!(
        !listed.stderr.contains("readable by group"),
        "{}",
        listed.stderr
    );
    let json = run(&["--context", "b", "list"], &[]).await.ok();
    json.json();

    // Precedence: flag > environment > context > default, as `config show` reports it.
    let show = run(&["config", "show", "--output", "json"], &[])
        .await
        .ok()
        .json();
    assert_eq!(show["context"], "a");
    assert_eq!(
        source_of(&show, "store"),
        (store_a.clone(), "context".into())
    );
    assert_eq!(source_of(&show, "timeout").1, "default");
    assert_eq!(source_of(&show, "property sasl.password").0, "<redacted>");
    assert!(!show.to_string().contains("hunter2"));
    let env = [("OFFSET_VAULT_STORE", store_b.as_str())];
    let show = run(&["config", "show", "--output", "json"], &env)
        .await
        .ok()
        .json();
    assert_eq!(source_of(&show, "store"), (store_b.clone(), "env".into()));
    let show = run(
        &["--store", "/flag", "config", "show", "--output", "json"],
        &env,
    )
    .await
    .ok()
    .json();
    assert_eq!(source_of(&show, "store"), ("/flag".into(), "flag".into()));
    // (No --output flag here: the context's `output = "json"` applies.)
    let show = run(&["config", "show"], &[("OFFSET_VAULT_CONTEXT", "b")])
        .await
        .ok()
        .json();
    assert_eq!(show["context"], "b");
    assert_eq!(
        source_of(&show, "output"),
        ("json".into(), "context".into())
    );

    // use-context rewrites current-context and keeps the rest of the file, comments included.
    let listed = run(&["config", "list-contexts"], &[]).await.ok().stdout;
    assert!(
        listed.contains('*') && listed.contains(" a ") && listed.contains(" b "),
        "{listed}"
    );
    run(&["config", "use-context", "b"], &[]).await.ok();
    let after = std::fs::read_to_string(&cfg).unwrap();
    assert_eq!(
        after,
        text.replace("current-context = \"a\"", "current-context = \"b\"")
    );
    let e = run(&["config", "use-context", "nope"], &[])
        .await
        .expect_code(2);
    assert!(e.stderr.contains("no context named nope"), "{}", e.stderr);

    // Errors: a missing context names the file and line, an unknown key too.
    let bad = text.replace("current-context = \"a\"", "current-context = \"gone\"");
    let cfg2 = config_file(dir.path(), "bad.toml", &bad, 0o600);
    let e = ov_raw(args(&["--config", &cfg2, "list"]))
        .await
        .expect_code(2);
    assert!(
        e.stderr.contains(&cfg2) && e.stderr.contains("line 2") && e.stderr.contains("gone"),
        "{}",
        e.stderr
    );
    // ... and list-contexts still works, to repair it.
    ov_raw(args(&["--config", &cfg2, "config", "list-contexts"]))
        .await
        .ok();
    let cfg3 = config_file(
        dir.path(),
        "unknown.toml",
        "[contexts.a]\nbootstrap = \"k:9092\"\n",
        0o644,
    );
    let e = ov_raw(args(&["--config", &cfg3, "config", "show"]))
        .await
        .expect_code(2);
    assert!(
        e.stderr.contains("line 2") && e.stderr.contains("bootstrap"),
        "{}",
        e.stderr
    );
    let missing = ov_raw(args(&["--config", "/nonexistent/ov.toml", "list"]))
        .await
        .expect_code(2);
    assert!(
        missing.stderr.contains("/nonexistent/ov.toml"),
        "{}",
        missing.stderr
    );

    // A file others can read is reported.
    let cfg4 = config_file(dir.path(), "open.toml", &text, 0o644);
    let warned = ov_raw(args(&["--config", &cfg4, "config", "show"]))
        .await
        .ok();
    assert!(
        warned.stderr.contains("readable by group or others"),
        "{}",
        warned.stderr
    );

    // The default location: $XDG_CONFIG_HOME/offset-vault/config.toml.
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("offset-vault")).unwrap();
    std::fs::copy(&cfg, xdg.path().join("offset-vault/config.toml")).unwrap();
    let show = ov_raw_env(
        args(&["config", "show", "--output", "json"]),
        &[("XDG_CONFIG_HOME", xdg.path().to_str().unwrap())],
    )
    .await
    .ok()
    .json();
    assert_eq!(show["context"], "b");
}

#[tokio::test(flavor = "multi_thread")]
async fn guard_records_the_status_and_prints_the_rollback() {
    if !util::require_kafka() {
        return;
    }
    let topic = unique_name("guard");
    util::create_topic(&topic, 2).await;
    util::produce(&topic, 0, 10).await;
    util::produce(&topic, 1, 10).await;
    let group = unique_name("guard-g");
    util::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 4), (1, 6)])).await;
    let (dir, store) = local_store();
    let marker = dir.path().join("seen-id");

    // A failing command: the snapshot is taken first, its id reaches the command, the status is
    // recorded, and the rollback is printed, never run.
    let script = format!(
        "echo \"$OFFSET_VAULT_SNAPSHOT\" > {}; exit 3",
        marker.display()
    );
    let failed = ov(
        &store,
        &[
            "guard", "--group", &group, "--tag", "deploy=7", "--", "sh", "-c", &script,
        ],
    )
    .await
    .expect_code(3);
    let id = std::fs::read_to_string(&marker).unwrap().trim().to_string();
    assert!(!id.is_empty());
    let files = local_files(&store, &id);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.contains(&"guard-exit-3.json".to_string()),
        "{names:?}"
    );
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            files
                .iter()
                .find(|f| f.ends_with("guard-exit-3.json"))
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(record["exit_code"], 3);
    assert_eq!(record["snapshot_id"], id.as_str());
    let dry = failed
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("offset-vault ")
                && l.contains(&format!("restore {id}"))
                && !l.ends_with("--execute")
        })
        .unwrap_or_else(|| panic!("no rollback line in:\n{}", failed.stderr))
        .to_string();
    assert!(
        failed.stderr.contains(&format!("{dry} --execute")),
        "{}",
        failed.stderr
    );

    // Nothing was restored; the group's offsets are what it committed.
    assert_eq!(
        util::committed_offsets(&group, &topic).await,
        std::collections::BTreeMap::from([(0, 4), (1, 6)])
    );

    // The sidecar does not disturb list, show or verify.
    ov(&store, &["verify", "--all"]).await.ok();
    ov(&store, &["show", &id]).await.ok();
    let listed = ov(&store, &["list", "--tag", "deploy=7", "--output", "json"])
        .await
        .ok();
    assert!(listed.stdout.contains(&id));

    // The printed dry run works as printed.
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let line = dry.replacen("offset-vault", bin.to_str().unwrap(), 1);
    let out = Command::new("sh").args(["-c", &line]).output().unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A succeeding command: exit 0, recorded, no rollback.
    let ok = ov(&store, &["guard", "--group", &group, "--", "true"])
        .await
        .ok();
    assert!(!ok.stderr.contains("--execute"), "{}", ok.stderr);
    let json = ov(
        &store,
        &["guard", "--group", &group, "--output", "json", "--", "true"],
    )
    .await
    .ok()
    .json();
    let id2 = json["snapshot_id"].as_str().unwrap();
    assert!(local_files(&store, id2)
        .iter()
        .any(|f| f.ends_with("guard-exit-0.json")));
    assert_eq!(json["exit_code"], 0);
    assert!(json["rollback"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn guard_runs_nothing_when_the_snapshot_fails() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let (_s, store) = local_store();
    let run = ov_raw(args(&[
        "--bootstrap-server",
        "127.0.0.1:1",
        "--store",
        &store,
        "--timeout",
        "3s",
        "guard",
        "--group",
        "g",
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        !marker.exists(),
        "the command ran although no snapshot was taken"
    );
}

/// Validates `doc` against `docs/schema/NAME.schema.json`.
fn validate(name: &str, doc: &serde_json::Value) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    assert_eq!(doc["schema_version"], 1, "{name}");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_matches_the_published_schemas() {
    if !util::require_kafka() {
        return;
    }
    let topic = unique_name("schema");
    util::create_topic(&topic, 1).await;
    util::produce(&topic, 0, 5).await;
    let group = unique_name("schema-g");
    util::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3)])).await;
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

    // Documents without a published schema yet carry the version too.
    let plan = ov(&store, &["restore", &id, "--output", "json"])
        .await
        .ok()
        .json();
    assert_eq!(plan["schema_version"], 1, "{plan:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_only_on_a_terminal_and_colors_honour_no_color() {
    if !util::require_kafka() {
        return;
    }
    let topic = unique_name("progress");
    util::create_topic(&topic, 1).await;
    util::produce(&topic, 0, 3).await;
    let group = unique_name("progress-g");
    util::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 2)])).await;
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
            !util::in_ci(),
            "script(1) is needed for the terminal half of this test"
        );
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let line = format!(
        "{} --bootstrap-server {} --store {store} snapshot --group {group}",
        bin.display(),
        util::bootstrap()
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
