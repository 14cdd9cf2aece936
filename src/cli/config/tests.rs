use std::io::Write;

use clap::{CommandFactory, FromArgMatches};

use super::*;
use crate::config::tests::ctx;

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
