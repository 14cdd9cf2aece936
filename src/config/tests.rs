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
