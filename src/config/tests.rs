use std::path::{Path, PathBuf};

use super::*;

pub(crate) fn ctx(name: &str) -> Source {
    Source::Context { name: name.into() }
}

pub(crate) fn env(v: &str) -> Source {
    Source::Env { variable: v.into() }
}

#[test]
fn flags_beat_environment_beat_context_beat_defaults() {
    // (explicit, context, default, expected)
    type Case = (
        Option<(&'static str, Source)>,
        Option<&'static str>,
        Option<&'static str>,
        Option<(&'static str, Source)>,
    );
    let cases: Vec<Case> = vec![
        (
            Some(("f", Source::Flag)),
            Some("c"),
            Some("d"),
            Some(("f", Source::Flag)),
        ),
        (
            Some(("e", env("V"))),
            Some("c"),
            Some("d"),
            Some(("e", env("V"))),
        ),
        (None, Some("c"), Some("d"), Some(("c", ctx("prod")))),
        (None, None, Some("d"), Some(("d", Source::Default))),
        (None, None, None, None),
        (
            Some(("f", Source::Flag)),
            None,
            None,
            Some(("f", Source::Flag)),
        ),
    ];
    for (explicit, context, default, want) in cases {
        let got = resolve(explicit.clone(), context.map(|c| (c, "prod")), default);
        assert_eq!(got, want, "explicit {explicit:?}, context {context:?}");
    }
}

#[test]
fn config_path_prefers_explicit_then_xdg_then_home() {
    let cases = [
        (
            Some("/x/c.toml"),
            Some("/xdg"),
            Some("/home/u"),
            Some(("/x/c.toml", true)),
        ),
        (
            None,
            Some("/xdg"),
            Some("/home/u"),
            Some(("/xdg/offset-vault/config.toml", false)),
        ),
        (
            None,
            Some(""),
            Some("/home/u"),
            Some(("/home/u/.config/offset-vault/config.toml", false)),
        ),
        (
            None,
            None,
            Some("/home/u"),
            Some(("/home/u/.config/offset-vault/config.toml", false)),
        ),
        (None, None, None, None),
    ];
    for (explicit, xdg, home, want) in cases {
        let got = config_path(explicit.map(Path::new), xdg, home);
        assert_eq!(
            got,
            want.map(|(p, m)| (PathBuf::from(p), m)),
            "{explicit:?} {xdg:?} {home:?}"
        );
    }
}

pub(crate) const FILE: &str = r#"current-context = "prod"

[contexts.prod]
bootstrap-server = "kafka-prod:9092"
connect-url = ["http://c1:8083", "http://c2:8083"]
store = "s3://backups/offsets"
output = "json"
timeout = "45s"
audit = "optional"
audit-topic = "ov-audit"
properties = { "sasl.mechanism" = "PLAIN", "sasl.password" = "hunter2" }

[contexts.staging]
bootstrap-server = "kafka-staging:9092"
connect-url = "http://cs:8083"
command-config = "staging.properties"
"#;

#[test]
fn context_choice_flag_then_current_context() {
    let file = parse(Path::new("c.toml"), FILE).unwrap();
    assert_eq!(
        choose_context(Some(("staging".into(), Source::Flag)), &file),
        Some(("staging".into(), Source::Flag))
    );
    assert_eq!(
        choose_context(None, &file).map(|c| c.0),
        Some("prod".to_string())
    );
    assert_eq!(choose_context(None, &ConfigFile::default()), None);
}

#[test]
fn unknown_keys_are_errors_that_name_file_and_line() {
    let cases = [
        ("current-context = \"a\"\nbogus = 1\n", "line 2"),
        (
            "[contexts.a]\nbootstrap-server = \"k:9092\"\nstroe = \"x\"\n",
            "line 3",
        ),
        ("[contexts.a]\nbootstrap-server = 5\n", "line 2"),
        ("current-context = \n", "line 1"),
    ];
    for (text, line) in cases {
        let e = parse(Path::new("/etc/ov.toml"), text).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        assert!(
            msg.contains("/etc/ov.toml") && msg.contains(line),
            "{text:?}: {msg}"
        );
    }
}

#[test]
fn secrets_are_redacted_for_show() {
    let cases = [
        ("property sasl.password", "hunter2", "<redacted>"),
        ("property sasl.jaas.config", "x required;", "<redacted>"),
        ("property ssl.key.password", "k", "<redacted>"),
        ("property sasl.mechanism", "PLAIN", "PLAIN"),
        ("store", "s3://bucket/p", "s3://bucket/p"),
        ("connect-url", "http://user:pw@c:8083", "<redacted>"),
        ("bootstrap-server", "k:9092", "k:9092"),
    ];
    for (setting, value, want) in cases {
        assert_eq!(redacted(setting, value), want, "{setting}");
    }
}

/// Parses the global flags and a command `list` in `args` as the command line does, and applies the
/// configuration in `text` to them.
fn run_with(text: &str, args: &[&str]) -> crate::error::Result<GlobalArgs> {
    use clap::{CommandFactory, FromArgMatches, Parser};
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        global: GlobalArgs,
        #[command(subcommand)]
        command: Sub,
    }
    #[derive(clap::Subcommand)]
    enum Sub {
        List,
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let mut all = vec!["offset-vault", "--config", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let cmd = Line::command();
    let matches = cmd.clone().try_get_matches_from(all).unwrap();
    let mut line = Line::from_arg_matches(&matches).unwrap();
    let loaded = apply(&mut line.global, &cmd, &matches, true)?;
    line.global.applied = loaded.applied;
    Ok(line.global)
}

#[test]
fn the_context_fills_only_what_flags_left_unset() {
    let g = run_with(
        FILE,
        &[
            "list",
            "--store",
            "/tmp/v",
            "-X",
            "sasl.mechanism=SCRAM-SHA-256",
        ],
    )
    .unwrap();
    assert_eq!(g.bootstrap_server.as_deref(), Some("kafka-prod:9092"));
    assert_eq!(g.store.as_deref(), Some("/tmp/v"));
    assert_eq!(g.connect_url, vec!["http://c1:8083", "http://c2:8083"]);
    assert_eq!(g.output, OutputFormat::Json);
    assert_eq!(g.timeout, std::time::Duration::from_secs(45));
    assert_eq!(g.audit, crate::audit::Mode::Optional);
    assert_eq!(g.audit_topic.as_deref(), Some("ov-audit"));
    let source = |s: &str| {
        g.applied
            .origins
            .iter()
            .filter(|o| o.setting == s)
            .map(|o| o.source.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(source("store"), vec![Source::Flag]);
    assert_eq!(source("audit"), vec![ctx("prod")]);
    assert_eq!(source("bootstrap-server"), vec![ctx("prod")]);
    // Both layers are shown; the command line's -X is applied last, so it wins.
    assert_eq!(
        source("property sasl.mechanism"),
        vec![ctx("prod"), Source::Flag]
    );
    let settings = g.kafka_settings().unwrap();
    assert_eq!(
        settings.properties.get("sasl.mechanism"),
        Some("SCRAM-SHA-256")
    );
    assert_eq!(settings.properties.get("sasl.password"), Some("hunter2"));
}

#[test]
fn output_flag_beats_the_context_and_defaults_stay_without_one() {
    let g = run_with(FILE, &["--output", "table", "list"]).unwrap();
    assert_eq!(g.output, OutputFormat::Table);
    let g = run_with(FILE, &["--audit", "required", "list"]).unwrap();
    assert_eq!(g.audit, crate::audit::Mode::Required);
    let e = run_with(
        "[contexts.a]\naudit = \"maybe\"\n",
        &["--context", "a", "list"],
    )
    .unwrap_err();
    assert!(e.to_string().contains("audit = \"maybe\""), "{e}");
    let g = run_with("", &["list"]).unwrap();
    assert_eq!(g.output, OutputFormat::Table);
    assert_eq!(g.audit, crate::audit::Mode::Required);
    assert_eq!(g.audit_topic, None);
    assert_eq!(g.bootstrap_server, None);
    assert!(g.applied.context.is_none());
}

#[test]
fn context_flag_picks_another_context_with_a_relative_command_config() {
    let g = run_with(FILE, &["--context", "staging", "list"]).unwrap();
    assert_eq!(g.bootstrap_server.as_deref(), Some("kafka-staging:9092"));
    assert_eq!(g.connect_url, vec!["http://cs:8083"]);
    let cc = g.command_config.as_ref().unwrap();
    assert!(
        cc.is_absolute() && cc.ends_with("staging.properties"),
        "{cc:?}"
    );
    assert!(g.applied.command_config_from_context);
}

#[test]
fn a_missing_context_is_a_usage_error_naming_the_line() {
    let e = run_with("current-context = \"gone\"\n[contexts.a]\n", &["list"]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("no context named gone")
            && msg.contains("line 1")
            && msg.contains("its contexts: a"),
        "{msg}"
    );
    let e = run_with(FILE, &["--context", "nope", "list"]).unwrap_err();
    assert!(e.to_string().contains("no context named nope"), "{e}");
}

#[test]
fn use_context_changes_one_line_and_keeps_the_rest() {
    let cases = [
        (
            "# mine\ncurrent-context = \"a\" # note\n\n[contexts.a]\nstore = \"/v\"\n",
            "# mine\ncurrent-context = \"b\" # note\n\n[contexts.a]\nstore = \"/v\"\n",
        ),
        (
            "[contexts.a]\nstore = \"/v\"\n",
            "current-context = \"b\"\n[contexts.a]\nstore = \"/v\"\n",
        ),
    ];
    for (before, after) in cases {
        assert_eq!(with_current_context(before, "b").unwrap(), after);
    }
    assert!(with_current_context("[contexts\n", "b").is_err());
}
