//! The staging cluster of `--rehearse-on`: a restore or reset applied there, never on the
//! cluster its targets come from: which cluster `--rehearse-on` names, and the command that
//! then applies the same change to production.

use std::path::Path;

use crate::config::GlobalArgs;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::KafkaSettings;
use crate::settings::ClientProperties;

/// Where a rehearsal is applied: a context of the configuration file, or a bootstrap address
/// with production's other settings.
pub struct Staging {
    pub settings: KafkaSettings,
    pub clients: Vec<ConnectClient>,
    /// How it was named: `context NAME`, or the bootstrap address.
    pub name: String,
}

/// Resolves `--rehearse-on`: a context of the configuration file by that name (its bootstrap
/// servers, properties, command-config and Connect URLs), else bootstrap servers reached with
/// production's client properties and no Connect.
pub fn resolve(g: &GlobalArgs, value: &str) -> Result<Staging> {
    let value = value.trim();
    if value.is_empty() {
        return Err(Error::usage(
            "--rehearse-on: give the staging cluster's HOST:PORT or a context name",
        ));
    }
    let production = g.kafka_settings()?;
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let context = crate::config::config_path(g.config.as_deref(), xdg.as_deref(), home.as_deref())
        .and_then(|(path, _)| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path.clone(), crate::config::parse(&path, &text)))
        });
    if let Some((path, file)) = context {
        if let Some(ctx) = file?.contexts.get(value) {
            let bootstrap = ctx.bootstrap_server.clone().ok_or_else(|| {
                Error::usage(format!(
                    "--rehearse-on {value}: context {value} in {} has no bootstrap-server",
                    path.display()
                ))
            })?;
            let mut properties = match &ctx.command_config {
                Some(file) => {
                    let base = path.parent().unwrap_or(Path::new("."));
                    ClientProperties::from_java_file(&base.join(file))?
                }
                None => ClientProperties::new(),
            };
            for (k, v) in &ctx.properties {
                properties.set(k.clone(), v.clone());
            }
            let clients = crate::config::connect_clients(&ctx.connect_urls(), g.timeout)?;
            return Ok(Staging {
                settings: KafkaSettings {
                    bootstrap,
                    properties,
                    ..production
                },
                clients,
                name: format!("context {value}"),
            });
        }
    }
    if !value.contains(':') {
        return Err(Error::usage(format!(
            "--rehearse-on {value}: no context of that name in the configuration file, and not HOST:PORT"
        )));
    }
    if value == production.bootstrap {
        return Err(Error::usage(format!(
            "--rehearse-on {value} is the production cluster itself (-b); give the staging cluster"
        )));
    }
    Ok(Staging {
        settings: KafkaSettings {
            bootstrap: value.to_string(),
            ..production
        },
        clients: Vec::new(),
        name: value.to_string(),
    })
}

/// The command to run on production after a rehearsal: this command line without
/// `--rehearse-on` and the options that map onto the staging cluster, with `--execute`. A
/// restore that chose its snapshot (`--latest`, `--before`) names the one rehearsed instead, so
/// that production gets that snapshot and not a newer one.
pub fn production_command(argv: &[String], snapshot: Option<&str>) -> String {
    const DROPPED: [&str; 6] = [
        "--rehearse-on",
        "--topic-map",
        "--replication-policy",
        "--translate",
        "--checkpoints-topic",
        "--offset-syncs-topic",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut args = argv.iter();
    let mut execute = false;
    let mut chose = false;
    while let Some(a) = args.next() {
        let with_value = snapshot.is_some() && a == "--before";
        if DROPPED.contains(&a.as_str()) || with_value {
            chose |= with_value;
            args.next();
            continue;
        }
        if DROPPED.iter().any(|d| a.starts_with(&format!("{d}="))) {
            continue;
        }
        if snapshot.is_some() && (a == "--latest" || a.starts_with("--before=")) {
            chose = true;
            continue;
        }
        execute |= a == "--execute";
        out.push(a.clone());
    }
    if !execute {
        out.push("--execute".into());
    }
    if let (true, Some(id)) = (chose, snapshot) {
        let at = out
            .iter()
            .position(|a| a == "restore")
            .map_or(out.len(), |i| i + 1);
        out.insert(at, id.to_string());
    }
    out.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// The cluster a restore changes: the staging cluster `--rehearse-on` names (`rehearse_on`),
/// else production, with its Kafka settings and Connect clients.
pub fn target(
    g: &GlobalArgs,
    rehearse_on: Option<&str>,
) -> Result<(Option<Staging>, KafkaSettings, Vec<ConnectClient>)> {
    match rehearse_on {
        Some(v) => {
            let s = resolve(g, v)?;
            let (settings, clients) = (s.settings.clone(), s.clients.clone());
            Ok((Some(s), settings, clients))
        }
        None => Ok((None, g.kafka_settings()?, g.connect_clients()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::production_command;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn the_production_command_drops_the_rehearsal_and_the_mapping_and_executes() {
        assert_eq!(
            production_command(
                &argv(
                    "offset-vault -b prod:9092 reset --group g --to-earliest --rehearse-on stage:9092 --replication-policy default:primary --translate=auto"
                ),
                None
            ),
            "offset-vault -b prod:9092 reset --group g --to-earliest --execute"
        );
        assert_eq!(
            production_command(
                &argv(
                    "offset-vault restore --latest --group g --execute --rehearse-on=staging --topic-map a=b"
                ),
                Some("20261205T1-ab")
            ),
            "offset-vault restore 20261205T1-ab --group g --execute"
        );
        assert_eq!(
            production_command(
                &argv("ov restore --before 2h --group g --rehearse-on s:1"),
                Some("X")
            ),
            "ov restore X --group g --execute"
        );
        // An id given is kept as it is; --at names an instant, not a snapshot.
        assert_eq!(
            production_command(
                &argv("ov restore 2026 --rehearse-on s:1"),
                Some("2026-full")
            ),
            "ov restore 2026 --execute"
        );
        assert_eq!(
            production_command(&["ov".into(), "--tag".into(), "a b".into()], None),
            "ov --tag 'a b' --execute"
        );
    }
}
