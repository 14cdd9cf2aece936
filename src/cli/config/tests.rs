use std::io::Write;

use clap::{CommandFactory, FromArgMatches};

use super::*;
use crate::config::tests::{ctx, FILE};
use crate::config::{OutputFormat, Source};

/// Parses `args` as the binary does and applies the configuration in `text`.
fn run_with(text: &str, args: &[&str]) -> Result<Cli> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let mut all = vec!["offset-vault", "--config", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let matches = Cli::command().try_get_matches_from(all).unwrap();
    let mut cli = Cli::from_arg_matches(&matches).unwrap();
    apply(&mut cli, &matches, true).map(|()| cli)
}

#[test]
fn the_context_fills_only_what_flags_left_unset() {
    let cli = run_with(
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
    let g = &cli.global;
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
    let cli = run_with(FILE, &["--output", "table", "list"]).unwrap();
    assert_eq!(cli.global.output, OutputFormat::Table);
    let cli = run_with(FILE, &["--audit", "required", "list"]).unwrap();
    assert_eq!(cli.global.audit, crate::audit::Mode::Required);
    let e = run_with(
        "[contexts.a]\naudit = \"maybe\"\n",
        &["--context", "a", "list"],
    )
    .unwrap_err();
    assert!(e.to_string().contains("audit = \"maybe\""), "{e}");
    let cli = run_with("", &["list"]).unwrap();
    assert_eq!(cli.global.output, OutputFormat::Table);
    assert_eq!(cli.global.audit, crate::audit::Mode::Required);
    assert_eq!(cli.global.audit_topic, None);
    assert_eq!(cli.global.bootstrap_server, None);
    assert!(cli.global.applied.context.is_none());
}

#[test]
fn context_flag_picks_another_context_with_a_relative_command_config() {
    let cli = run_with(FILE, &["--context", "staging", "list"]).unwrap();
    let g = &cli.global;
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
fn context_encrypt_to_and_identity_fill_the_commands_that_left_them_unset() {
    let file = "current-context = \"p\"\n[contexts.p]\nencrypt-to = [\"age1aaa\", \"age1bbb\"]\nidentity = \"keys/id.txt\"\n";
    let snapshot_args = |cli: &Cli| match &cli.command {
        crate::cli::Command::Snapshot(a) => a.encrypt_to.clone(),
        other => panic!("{other:?}"),
    };
    let cli = run_with(file, &["snapshot", "--all-groups"]).unwrap();
    assert_eq!(snapshot_args(&cli), vec!["age1aaa", "age1bbb"]);
    let origin = cli
        .global
        .applied
        .origins
        .iter()
        .find(|o| o.setting == "encrypt-to")
        .unwrap();
    assert_eq!(origin.source, ctx("p"));
    let cli = run_with(
        file,
        &["snapshot", "--all-groups", "--encrypt-to", "age1flag"],
    )
    .unwrap();
    assert_eq!(snapshot_args(&cli), vec!["age1flag"]);
    let identity = |cli: &Cli| match &cli.command {
        crate::cli::Command::Restore(a) => a.identity.clone(),
        other => panic!("{other:?}"),
    };
    let cli = run_with(file, &["restore", "X", "--recreate-connectors"]).unwrap();
    let id = identity(&cli).unwrap();
    assert!(id.is_absolute() && id.ends_with("keys/id.txt"), "{id:?}");
    let cli = run_with(file, &["restore", "X", "--identity", "/k.txt"]).unwrap();
    assert_eq!(identity(&cli), Some(std::path::PathBuf::from("/k.txt")));
}
