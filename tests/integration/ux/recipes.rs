//! The recipes under docs/recipes/: the manifests and unit files parse, and the exact command
//! lines they contain run against the real services. A command whose subcommand this build does
//! not implement yet (its `--help` says so) is parsed but not run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_yaml::Value as Yaml;

use crate::support::kafka::{self, Take};
use crate::support::ov::local_store;
use crate::support::{env, kcg, s3, unique_name};

fn recipe(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/recipes")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(recipe(name)).unwrap()
}

/// PATH with the freshly built binary first, so recipes that say `offset-vault` run it.
fn path_with_binary() -> String {
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs a shell script in `dir` with the binary on PATH and `env`.
fn sh(dir: &Path, script: &str, env: &BTreeMap<String, String>) -> Output {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script])
        .current_dir(dir)
        .env("PATH", path_with_binary())
        .env_remove("OFFSET_VAULT_BOOTSTRAP_SERVER")
        .env_remove("OFFSET_VAULT_STORE")
        .env_remove("OFFSET_VAULT_CONNECT_URL");
    cmd.envs(env);
    cmd.output().unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// True when this build implements `offset-vault SUBCOMMAND`.
fn implemented(subcommand: &str) -> bool {
    let out = Command::new(assert_cmd::cargo::cargo_bin("offset-vault"))
        .args([subcommand, "--help"])
        .output()
        .unwrap();
    out.status.success() && !text(&out.stdout).contains("not implemented yet")
}

/// Runs each `offset-vault ...` command of `commands` whose subcommand is implemented; returns
/// how many ran.
fn run_commands(commands: &[String], dir: &Path, env: &BTreeMap<String, String>) -> usize {
    let mut ran = 0;
    for c in commands {
        let sub = c.split_whitespace().nth(1).unwrap_or_default().to_string();
        if !implemented(&sub) {
            eprintln!("not run (offset-vault {sub} is not implemented in this build): {c}");
            continue;
        }
        let out = sh(dir, c, env);
        assert!(
            out.status.success(),
            "{c}\n{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        ran += 1;
    }
    ran
}

/// A group with committed offsets on a fresh topic; returns (group, topic).
async fn group_with_offsets(prefix: &str) -> (String, String) {
    let topic = unique_name(prefix);
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 8).await;
    kafka::produce(&topic, 1, 8).await;
    let group = unique_name(&format!("{prefix}-g"));
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 5)])).await;
    (group, topic)
}

fn base_env(store: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "OFFSET_VAULT_BOOTSTRAP_SERVER".to_string(),
            env::bootstrap(),
        ),
        ("OFFSET_VAULT_STORE".to_string(), store.to_string()),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn pre_deploy_hooks_run_guard_as_written() {
    if !env::require_kafka() {
        return;
    }
    let (group, _) = group_with_offsets("recipe-hook").await;
    let (dir, store) = local_store();
    std::fs::create_dir_all(&store).unwrap();
    let mut env = base_env(&store);
    env.insert("CONSUMER_GROUP".into(), group.clone());
    env.insert("DEPLOY_ID".into(), "4711".into());

    // The GitHub Actions step: the workflow parses, and its `run` line runs as written.
    let workflow: Yaml = serde_yaml::from_str(&read("github-actions-guard.yml")).unwrap();
    let steps = workflow["jobs"]["deploy"]["steps"].as_sequence().unwrap();
    let run = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("offset-vault guard"))
        .expect("a step runs guard")
        .to_string();
    let job_env = workflow["jobs"]["deploy"]["env"].as_mapping().unwrap();
    assert!(
        job_env.contains_key("OFFSET_VAULT_STORE") && job_env.contains_key("AWS_SECRET_ACCESS_KEY")
    );
    let deploy = dir.path().join("deploy.sh");
    for (exit, want) in [(0, 0), (1, 1)] {
        std::fs::write(
            &deploy,
            format!("#!/bin/sh\necho \"deploying after $OFFSET_VAULT_SNAPSHOT\"\nexit {exit}\n"),
        )
        .unwrap();
        make_executable(&deploy);
        let out = sh(dir.path(), &run, &env);
        assert_eq!(
            out.status.code(),
            Some(want),
            "{run}\n{}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains("deploying after 2"),
            "{}",
            text(&out.stdout)
        );
        // The deploy moves no offsets: guard checks, says so, and has nothing to roll back.
        let stderr = text(&out.stderr);
        assert!(!stderr.contains(" --execute"), "{stderr}");
        assert!(stderr.contains("nothing moved"), "{stderr}");
        assert_eq!(
            stderr.contains("nothing to roll back"),
            exit != 0,
            "{stderr}"
        );
    }

    // The plain shell hook.
    let hook = recipe("pre-deploy-hook.sh");
    assert!(Command::new("sh")
        .arg("-n")
        .arg(&hook)
        .status()
        .unwrap()
        .success());
    let out = sh(
        dir.path(),
        &format!("{} sh -c 'exit 5'", hook.display()),
        &env,
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let listed = sh(
        dir.path(),
        "offset-vault list --tag deploy=4711 --output json",
        &env,
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed["snapshots"].as_array().unwrap().len(),
        3,
        "{listed:#}"
    );
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn kubernetes_cronjob_parses_and_its_commands_run_with_the_secret() {
    if !env::require_kafka() || !env::require_s3() {
        return;
    }
    let docs: Vec<Yaml> = serde_yaml::Deserializer::from_str(&read("k8s-archive-cronjob.yaml"))
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let secret = docs
        .iter()
        .find(|d| d["kind"] == "Secret")
        .expect("a Secret");
    let cron = docs
        .iter()
        .find(|d| d["kind"] == "CronJob")
        .expect("a CronJob");
    assert_eq!(cron["apiVersion"], "batch/v1");
    assert_eq!(
        cron["spec"]["schedule"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        5
    );
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["envFrom"][0]["secretRef"]["name"],
        secret["metadata"]["name"]
    );
    let keys: Vec<&str> = secret["stringData"]
        .as_mapping()
        .unwrap()
        .keys()
        .filter_map(|k| k.as_str())
        .collect();
    for k in [
        "OFFSET_VAULT_BOOTSTRAP_SERVER",
        "OFFSET_VAULT_STORE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(keys.contains(&k), "{k} not in the Secret");
    }
    let script = container["args"][0].as_str().unwrap();
    let commands: Vec<String> = script.split("&&").map(|c| c.trim().to_string()).collect();
    assert!(
        commands[0].starts_with("offset-vault snapshot")
            && commands[1].starts_with("offset-vault prune")
    );

    // The Secret's keys, with the test services' values (S3 credentials included).
    let store = s3::s3_url(&unique_name("recipe-k8s"));
    let mut env: BTreeMap<String, String> = s3::s3_env().into_iter().collect();
    env.extend(base_env(&store));
    let dir = tempfile::tempdir().unwrap();
    let ran = run_commands(&commands, dir.path(), &env);
    assert!(ran >= 1);
    let listed = sh(
        dir.path(),
        "offset-vault list --tag job=archive --output json",
        &env,
    );
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed["snapshots"].as_array().unwrap().len(),
        1,
        "{listed:#}"
    );
}

/// `[Section]` → key → values, as systemd reads a unit file (comments and blank lines skipped).
fn parse_unit(text: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut section = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("line {}: not KEY=VALUE: {line}", n + 1));
        let s = section
            .clone()
            .unwrap_or_else(|| panic!("line {}: outside a section", n + 1));
        out.get_mut(&s)
            .unwrap()
            .entry(k.trim().into())
            .or_default()
            .push(v.trim().into());
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn systemd_units_parse_and_their_commands_run() {
    if !env::require_kafka() {
        return;
    }
    let service = parse_unit(&read("offset-vault-archive.service"));
    let timer = parse_unit(&read("offset-vault-archive.timer"));
    assert_eq!(service["Service"]["Type"], ["oneshot"]);
    assert!(service["Service"].contains_key("EnvironmentFile"));
    assert!(timer["Install"]["WantedBy"].contains(&"timers.target".to_string()));
    let calendar = &timer["Timer"]["OnCalendar"][0];
    if let Ok(out) = Command::new("systemd-analyze")
        .args(["calendar", calendar])
        .output()
    {
        assert!(
            out.status.success(),
            "OnCalendar={calendar}: {}",
            text(&out.stderr)
        );
    }
    let commands: Vec<String> = service["Service"]["ExecStart"]
        .iter()
        .map(|c| c.replacen("/usr/local/bin/offset-vault", "offset-vault", 1))
        .collect();
    assert!(commands
        .iter()
        .any(|c| c.starts_with("offset-vault snapshot")));
    let (_dir, store) = local_store();
    std::fs::create_dir_all(&store).unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(run_commands(&commands, dir.path(), &base_env(&store)) >= 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn duckdb_query_over_the_archive_matches_kafka_consumer_groups() {
    if !env::require_kafka() {
        return;
    }
    let python = env::python();
    let has_duckdb = Command::new(&python)
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_duckdb {
        assert!(!env::in_ci(), "{} cannot import duckdb", python.display());
        eprintln!("SKIPPED: no duckdb for {}", python.display());
        return;
    }
    let (group, topic) = group_with_offsets("recipe-duck").await;
    let (_dir, store) = local_store();
    std::fs::create_dir_all(&store).unwrap();
    let env = base_env(&store);
    let dir = tempfile::tempdir().unwrap();
    let snap = format!("offset-vault snapshot --group {group}");
    run_commands(std::slice::from_ref(&snap), dir.path(), &env);
    // The group moves on; the archive's newest rows must show where it is now.
    // (Take counts records from where the group stands: 3 + 3 and 5 + 2.)
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 2)])).await;
    run_commands(std::slice::from_ref(&snap), dir.path(), &env);

    let query = read("archive-query.sql").replace("ARCHIVE", &store);
    let script = "import duckdb, json, sys\nrows = duckdb.sql(sys.stdin.read()).fetchall()\nprint(json.dumps([[str(c) for c in r] for r in rows]))";
    let mut child = Command::new(&python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(query.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<Vec<String>> = serde_json::from_slice(&out.stdout).unwrap();
    // (group, topic, partition) -> (offset, snapshots)
    let got: BTreeMap<(String, i32), (i64, i64)> = rows
        .iter()
        .filter(|r| r[0] == group)
        .map(|r| {
            (
                (r[1].clone(), r[2].parse().unwrap()),
                (r[3].parse().unwrap(), r[5].parse().unwrap()),
            )
        })
        .collect();
    let want: BTreeMap<(String, i32), (i64, i64)> = kcg::kcg_describe(&group)
        .await
        .into_iter()
        .filter_map(|r| Some(((r.topic, r.partition), (r.current_offset?, 2))))
        .collect();
    assert_eq!(got, want);
    assert_eq!(want.values().map(|v| v.0).collect::<Vec<_>>(), [6, 7]);
}
