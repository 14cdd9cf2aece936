//! Operator experience: shell completions and man pages, and the configuration file with its
//! contexts; `guard`, JSON schemas and progress, and the recipes in their own modules.

mod guard;
mod output;
mod recipes;

use std::path::Path;
use std::process::Command;

use crate::support::ov::{local_store, ov_raw, ov_raw_env};

pub(super) fn args(a: &[&str]) -> Vec<String> {
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
    assert_eq!(complete("offset-vault res"), ["reset", "restore"]);
    assert_eq!(complete("offset-vault rest"), ["restore"]);
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
pub(super) fn config_file(dir: &Path, name: &str, text: &str, mode: u32) -> String {
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

/// The `offset-vault ...` example lines at the end of a long help, `\` continuations joined,
/// split into words as a shell would (up to a comment, pipe or redirection).
fn help_examples(help: &str) -> Vec<Vec<String>> {
    let Some((_, examples)) = help.split_once("Examples:") else {
        return Vec::new();
    };
    let mut lines: Vec<String> = Vec::new();
    let mut continued = false;
    for line in examples.lines().map(str::trim) {
        let body = line.trim_end_matches('\\').to_string();
        if continued {
            lines.last_mut().unwrap().push_str(&format!(" {body}"));
        } else if line.starts_with("offset-vault") {
            lines.push(body);
        }
        continued = line.ends_with('\\');
    }
    lines
        .iter()
        .map(|l| {
            let mut out = Vec::new();
            let mut cur: Option<String> = None;
            let mut quote: Option<char> = None;
            for c in l.chars() {
                match (quote, c) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
                    (None, '\'' | '"') => {
                        quote = Some(c);
                        cur.get_or_insert_with(String::new);
                    }
                    (None, '#' | '|' | '>') if cur.is_none() => break,
                    (None, c) if c.is_whitespace() => out.extend(cur.take()),
                    (None, c) => cur.get_or_insert_with(String::new).push(c),
                }
            }
            out.extend(cur);
            out
        })
        .collect()
}

/// The examples in `--help` that need nothing the test services lack (a snapshot id, a
/// connector or group of the examples, a system directory) run as written, with the
/// connection from the environment and a configuration file with the contexts they name.
#[tokio::test(flavor = "multi_thread")]
async fn help_examples_run_against_the_test_services() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let store = vault.to_str().unwrap();
    let cfg = config_file(
        dir.path(),
        "config.toml",
        &format!("current-context = \"prod\"\n[contexts.prod]\nstore = \"{store}\"\n[contexts.staging]\nstore = \"{store}\"\n"),
        0o600,
    );
    let needs_more = |w: &[String]| {
        w.iter().any(|a| {
            a.starts_with("2026")
                || a.starts_with("/usr/")
                || a.starts_with("/etc/")
                || ["orders-sink", "billing", "kafka:9092"].contains(&a.as_str())
        }) || w
            .iter()
            .any(|a| a == "--connector" || a == "--group-pattern" || a == "--all-groups")
    };
    let bin = assert_cmd::cargo::cargo_bin("offset-vault");
    let mut ran = Vec::new();
    for sub in ["list", "verify", "config", "completions", "man"] {
        let help = ov_raw(args(&[sub, "--help"])).await.ok().stdout;
        let mut all = help_examples(&help);
        if sub == "config" {
            for nested in ["show", "list-contexts", "use-context"] {
                let h = ov_raw(args(&["config", nested, "--help"]))
                    .await
                    .ok()
                    .stdout;
                all.extend(help_examples(&h));
            }
        }
        for words in all.into_iter().filter(|w| !needs_more(w)) {
            let out = Command::new(&bin)
                .args(&words[1..])
                .current_dir(dir.path())
                .env("OFFSET_VAULT_CONFIG", &cfg)
                .env(
                    "OFFSET_VAULT_BOOTSTRAP_SERVER",
                    crate::support::env::bootstrap(),
                )
                .env_remove("OFFSET_VAULT_STORE")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                words.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push(words.join(" "));
        }
    }
    assert!(ran.len() >= 12, "only these examples ran: {ran:#?}");
}
