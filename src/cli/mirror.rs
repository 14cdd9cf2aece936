//! The options of `restore` and `reset` that carry offsets to another cluster (a MirrorMaker 2
//! replica, a staging cluster), and `--rehearse-on`.

use std::path::Path;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use super::{GlobalArgs, OutputFormat};
use crate::commands::staging::Staging;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, KafkaSettings};
use crate::mirror::MirrorOptions;
use crate::settings::ClientProperties;

/// How this cluster names the snapshot's topics (`diff`, `show`, and below).
#[derive(Debug, Clone, Args, Default)]
pub struct NamesArgs {
    /// Another cluster names a topic otherwise: FROM=TO, or re:REGEX=TEMPLATE ($1, ${name}
    /// refer to REGEX's groups; the whole name must match). Repeatable; the first rule that
    /// matches wins, then --replication-policy.
    #[arg(
        help_heading = "Another cluster",
        long = "topic-map",
        value_name = "RULE"
    )]
    pub topic_map: Vec<String>,
    /// How a MirrorMaker 2 replica names the topics no --topic-map rule matches:
    /// default:ALIAS (DefaultReplicationPolicy: `orders` is `ALIAS.orders`; default:ALIAS:SEP
    /// with another separator) or identity (the same names).
    #[arg(help_heading = "Another cluster", long, value_name = "POLICY")]
    pub replication_policy: Option<String>,
}

/// `--translate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TranslateArg {
    /// Identity if the records confirm it, else timestamp and record match, else MirrorMaker 2's
    /// checkpoints, else refuse the partition.
    Auto,
    /// The same offsets (a replicator that keeps offsets); the record before each is checked.
    Identity,
    /// The record after the last consumed one, found by its timestamp and fingerprint (snapshots
    /// taken with --with-timestamps).
    Timestamp,
    /// MirrorMaker 2's checkpoints and offset syncs on the target.
    Checkpoints,
}

impl TranslateArg {
    fn name(self) -> &'static str {
        match self {
            TranslateArg::Auto => "auto",
            TranslateArg::Identity => "identity",
            TranslateArg::Timestamp => "timestamp",
            TranslateArg::Checkpoints => "checkpoints",
        }
    }
}

/// `restore` and `reset` onto another cluster.
#[derive(Debug, Clone, Args, Default)]
pub struct MirrorArgs {
    #[command(flatten)]
    pub names: NamesArgs,
    /// How offsets become offsets of another cluster, chosen per partition; the plan names the
    /// method and what it is based on. Default with --allow-other-cluster or --rehearse-on: auto.
    #[arg(
        help_heading = "Another cluster",
        long,
        value_enum,
        value_name = "METHOD"
    )]
    pub translate: Option<TranslateArg>,
    /// MirrorMaker 2's checkpoints topic on the target (default: ALIAS.checkpoints.internal of
    /// --replication-policy default:ALIAS).
    #[arg(help_heading = "Another cluster", long, value_name = "TOPIC")]
    pub checkpoints_topic: Option<String>,
    /// MirrorMaker 2's offset-syncs topic on the target (default: the one topic named
    /// mm2-offset-syncs.*.internal there).
    #[arg(help_heading = "Another cluster", long, value_name = "TOPIC")]
    pub offset_syncs_topic: Option<String>,
    /// Rehearse on a staging cluster (HOST:PORT, or a context of the configuration file): plan
    /// and apply the same operation there, topics mapped and offsets translated as above, then
    /// print what happened and the command for production. The production cluster (-b) is only
    /// read. Implies --execute on the staging cluster.
    #[arg(
        help_heading = "Another cluster",
        long,
        value_name = "BOOTSTRAP|CONTEXT",
        conflicts_with = "plan_file"
    )]
    pub rehearse_on: Option<String>,
}

impl MirrorArgs {
    pub fn options(&self) -> MirrorOptions {
        MirrorOptions {
            topic_map: self.names.topic_map.clone(),
            replication_policy: self.names.replication_policy.clone(),
            translate: self.translate.map(|t| t.name().to_string()),
            checkpoints_topic: self.checkpoints_topic.clone(),
            offset_syncs_topic: self.offset_syncs_topic.clone(),
        }
    }
}

impl NamesArgs {
    /// The topic map, when one was given.
    pub fn topic_map(&self) -> Result<Option<crate::mirror::TopicMap>> {
        if self.topic_map.is_empty() && self.replication_policy.is_none() {
            return Ok(None);
        }
        crate::mirror::TopicMap::parse(&self.topic_map, self.replication_policy.as_deref())
            .map(Some)
    }
}

/// Resolves `--rehearse-on`: a context of the configuration file by that name (its bootstrap
/// servers, properties, command-config and Connect URLs), else bootstrap servers reached with
/// production's client properties and no Connect.
pub fn staging(g: &GlobalArgs, value: &str) -> Result<Staging> {
    let value = value.trim();
    if value.is_empty() {
        return Err(Error::usage(
            "--rehearse-on: give the staging cluster's HOST:PORT or a context name",
        ));
    }
    let production = g.kafka_settings()?;
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let context = super::config::config_path(g.config.as_deref(), xdg.as_deref(), home.as_deref())
        .and_then(|(path, _)| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path.clone(), super::config::parse(&path, &text)))
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
            let clients = super::connect_clients(&ctx.connect_urls(), g.timeout)?;
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

/// What a rehearsal's JSON document says besides the outcome: where it ran, and the command
/// for production.
/// `snapshot`: the snapshot a restore rehearsed, which the production command names.
pub fn rehearsal_json(s: &Staging, kafka: &KafkaClient, snapshot: Option<&str>) -> Value {
    json!({
        "staging": s.name,
        "staging_cluster_id": kafka.cluster_id(),
        "production_changed": false,
        "production_command": production_command(&argv(), snapshot),
    })
}

/// After a rehearsal (table output): where it ran, how it ended, and the command for
/// production.
pub fn print_rehearsal(
    output: OutputFormat,
    s: &Staging,
    kafka: &KafkaClient,
    code: i32,
    snapshot: Option<&str>,
) {
    if output != OutputFormat::Table {
        return;
    }
    crate::outln!();
    crate::outln!(
        "rehearsed on {} (cluster {}): exit code {code}; the production cluster was only read",
        s.name,
        kafka.cluster_id()
    );
    crate::outln!("for production: {}", production_command(&argv(), snapshot));
}

/// This command line, with the program named by its file name.
fn argv() -> Vec<String> {
    let mut argv: Vec<String> = std::env::args().collect();
    if let Some(first) = argv.first_mut() {
        if let Some(name) = Path::new(first.as_str()).file_name() {
            *first = name.to_string_lossy().into_owned();
        }
    }
    argv
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
