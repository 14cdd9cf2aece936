//! `offset-vault guard [selection] -- COMMAND ARGS...`: a change wrapped in a snapshot
//! ([`crate::commands::guard`] takes it, runs the command, compares and records). Here: the
//! flags, and what it says once the command has ended: what moved and, when the command failed
//! and offsets moved (or could not be checked), the restore commands that roll back. It exits
//! with the command's status.

mod report;

use std::collections::BTreeMap;

use super::output::print_json;
use super::Cli;
use crate::commands::guard::{self as command, rollback_commands, GuardArgs};
use crate::config::OutputFormat;
use crate::error::Result;
use crate::snapshot::{capture::validate, CaptureOptions};

/// Runs `offset-vault guard`: one audit event for the guarded run.
pub async fn cmd_guard(cli: &Cli, args: &GuardArgs) -> Result<i32> {
    // Bad input is refused before the trail is opened.
    validate(
        &args.select.to_selection(),
        cli.global.connect_clients()?.len(),
    )?;
    crate::config::parse_tags(&args.tags)?;
    let trail = super::audit::begin(cli, crate::audit::EventType::Guard, true, true).await?;
    let mut facts = crate::audit::Facts::default();
    let result = guard(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    result
}

async fn guard(cli: &Cli, args: &GuardArgs, facts: &mut crate::audit::Facts) -> Result<i32> {
    let g = &cli.global;
    let mut selection = args.select.to_selection();
    selection.allow_missing = args.allow_missing;
    let connect = g.connect_clients()?;
    validate(&selection, connect.len())?;
    let tags: BTreeMap<String, String> = crate::config::parse_tags(&args.tags)?;
    let settings = g.kafka_settings()?;
    let store = g.open_store()?;
    let capture = CaptureOptions {
        selection,
        tags,
        format: args.format,
        ..Default::default()
    };
    let guarded =
        command::guard(&store, settings, &connect, &capture, &args.command, facts).await?;
    let (record, id) = (&guarded.record, &guarded.record.snapshot_id);
    let (exit_code, comparison) = (record.exit_code, &record.comparison);
    let rollback = (exit_code != 0 && comparison.may_have_moved())
        .then(|| rollback_commands(g, id, guarded.manifest.summary.connectors > 0));
    match g.output {
        OutputFormat::Json => print_json(&serde_json::json!({
            "snapshot_id": id,
            "store": store.url(),
            "command": args.command,
            "exit_code": exit_code,
            "signal": record.signal,
            "recorded": guarded.recorded,
            "comparison": comparison,
            "rollback": rollback,
        })),
        OutputFormat::Table => {
            let text = report::after_command(exit_code, id, comparison, rollback.as_ref());
            if exit_code != 0 || !comparison.checked {
                crate::alertln!("{text}");
            } else {
                crate::noteln!("{text}");
            }
        }
    }
    Ok(exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn rollback_is_a_dry_run_then_execute_with_the_connection_spelled_out() {
        let cli = Cli::parse_from([
            "offset-vault",
            "-b",
            "k:9092",
            "--store",
            "/var/lib/my vault",
            "--connect-url",
            "http://c:8083",
            "-X",
            "sasl.password=secret",
            "guard",
            "--connector",
            "orders",
            "--",
            "true",
        ]);
        let [dry, apply] = rollback_commands(&cli.global, "20261201T093005.042Z-abc", true);
        assert_eq!(
            dry,
            "offset-vault --bootstrap-server k:9092 --connect-url http://c:8083 --store '/var/lib/my vault' restore 20261201T093005.042Z-abc --stop-connectors"
        );
        assert_eq!(apply, format!("{dry} --execute"));
        assert!(!apply.contains("secret"));
        let parsed = Cli::try_parse_from(shell_words(&apply)).expect("the printed command parses");
        assert!(
            matches!(parsed.command, super::super::Command::Restore(ref r) if r.execute && r.stop_connectors)
        );
    }

    /// Splits the quoted words `shell_quote` makes (enough for the test above).
    fn shell_words(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    }

    #[test]
    fn the_command_comes_after_the_double_dash() {
        let cli = Cli::try_parse_from([
            "offset-vault",
            "guard",
            "--group",
            "g",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .unwrap();
        match cli.command {
            super::super::Command::Guard(a) => assert_eq!(a.command, ["sh", "-c", "exit 3"]),
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["offset-vault", "guard", "--group", "g"]).is_err());
    }
}
