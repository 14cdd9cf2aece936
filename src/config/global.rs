//! The global flags (connection, store, output, signing, audit, configuration), and how a
//! context of the configuration file fills the ones left unset.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};
use toml::Spanned;

use super::file::{
    load, resolve, Applied, Context, Loaded, Origin, Source, ENV_CONFIG, ENV_CONTEXT,
};
use super::values::{connect_clients, parse_duration};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{ClientProperties, KafkaSettings};
use crate::sign::{Keys, PublicKey, SecretKey};
use crate::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// Human-readable tables.
    #[default]
    Table,
    /// JSON on stdout, for scripts.
    Json,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Kafka bootstrap servers (HOST:PORT[,HOST:PORT...]).
    #[arg(
        help_heading = "Connection",
        short = 'b',
        long,
        global = true,
        env = "OFFSET_VAULT_BOOTSTRAP_SERVER"
    )]
    pub bootstrap_server: Option<String>,

    /// Kafka Connect REST URL; repeat (or separate with commas) for several Connect clusters.
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_CONNECT_URL",
        value_delimiter = ','
    )]
    pub connect_url: Vec<String>,

    /// Kafka client properties file, as for Kafka's own tools (security.protocol, sasl.*, ssl.*).
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_COMMAND_CONFIG",
        value_name = "FILE"
    )]
    pub command_config: Option<PathBuf>,

    /// librdkafka property KEY=VALUE (repeatable); overrides --command-config.
    #[arg(
        help_heading = "Connection",
        short = 'X',
        global = true,
        value_name = "KEY=VALUE"
    )]
    pub property: Vec<String>,

    /// Where snapshots live: a directory, file:///path, or s3://bucket/prefix (s3a:// too;
    /// credentials and endpoint from AWS_* variables).
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_STORE",
        value_name = "URL"
    )]
    pub store: Option<String>,

    /// Output format.
    #[arg(
        help_heading = "Output",
        long,
        global = true,
        value_enum,
        default_value_t,
        env = "OFFSET_VAULT_OUTPUT"
    )]
    pub output: OutputFormat,

    /// Bound on each request to Kafka, Kafka Connect or the store (e.g. 10s, 1m).
    #[arg(help_heading = "Connection", long, global = true, default_value = "30s", env = "OFFSET_VAULT_TIMEOUT", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Talk to Kafka through librdkafka only: no direct protocol connection. Offsets are then
    /// read one group per request, and share groups and group configs cannot be read.
    #[arg(
        help_heading = "Connection",
        long,
        global = true,
        env = "OFFSET_VAULT_LIBRDKAFKA_ONLY"
    )]
    pub librdkafka_only: bool,

    /// More logging on stderr (-v info, -vv debug, -vvv with librdkafka's own logs).
    #[arg(help_heading = "Output", short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only errors on stderr.
    #[arg(help_heading = "Output", short, long, global = true)]
    pub quiet: bool,

    /// Sign every snapshot, commit-log segment, plan file and audit event written with this
    /// Ed25519 secret key (a PEM file from `keygen`, or the PEM text itself).
    #[arg(
        help_heading = "Signing",
        long,
        global = true,
        env = "OFFSET_VAULT_SIGNING_KEY",
        value_name = "FILE",
        hide_env_values = true
    )]
    pub signing_key: Option<String>,

    /// Accept only snapshots, segments and plan files signed by this public key (repeatable, or
    /// comma-separated): verify, show, diff, export and restore refuse anything else (exit 5).
    #[arg(
        help_heading = "Signing",
        long,
        global = true,
        env = "OFFSET_VAULT_TRUSTED_KEYS",
        value_delimiter = ',',
        value_name = "FILE"
    )]
    pub trusted_key: Vec<String>,

    /// Configuration file with named contexts [default: $XDG_CONFIG_HOME/offset-vault/config.toml].
    #[arg(help_heading = "Connection", long, global = true, env = ENV_CONFIG, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The context of the configuration file to use [default: its current-context].
    #[arg(help_heading = "Connection", long, global = true, env = ENV_CONTEXT, value_name = "NAME")]
    pub context: Option<String>,

    /// Whether a command that changes offsets or snapshots (restore and reset --execute, prune
    /// --execute, import, guard) must first record itself in the store's audit trail:
    /// `required` fails before any change when audit/ cannot be written; `optional` warns and
    /// goes on.
    #[arg(
        help_heading = "Audit",
        long = "audit",
        global = true,
        value_enum,
        default_value_t,
        env = "OFFSET_VAULT_AUDIT",
        value_name = "MODE"
    )]
    pub audit: crate::audit::Mode,

    /// Also produce each audit event written to this Kafka topic (key: the event id; header
    /// content-type: application/cloudevents+json). A failed produce is a warning: the store
    /// holds the record.
    #[arg(
        help_heading = "Audit",
        long,
        global = true,
        env = "OFFSET_VAULT_AUDIT_TOPIC",
        value_name = "TOPIC"
    )]
    pub audit_topic: Option<String>,

    /// Where the command came from, recorded in its audit events (`mcp` for the commands the
    /// MCP server runs).
    #[arg(long, global = true, hide = true, value_name = "ORIGIN")]
    pub via: Option<String>,

    /// What the configuration file added, and where each setting came from.
    #[arg(skip)]
    pub applied: Applied,
}

impl GlobalArgs {
    /// Kafka settings from the flags, the properties file and `-X`.
    pub fn kafka_settings(&self) -> Result<KafkaSettings> {
        // Lowest first: a context's command-config file, the context's properties, a file from a
        // flag or the environment, -X on the command line (see Applied).
        let file = match &self.command_config {
            Some(path) => ClientProperties::from_java_file(path)?,
            None => ClientProperties::new(),
        };
        let mut properties = ClientProperties::new();
        if self.applied.command_config_from_context {
            properties = file;
            properties.apply_overrides(&self.applied.properties)?;
        } else {
            properties.apply_overrides(&self.applied.properties)?;
            for (k, v) in file.iter() {
                properties.set(k, v);
            }
        }
        properties.apply_overrides(&self.property)?;
        let bootstrap = self
            .bootstrap_server
            .clone()
            .or_else(|| properties.get("bootstrap.servers").map(String::from))
            .ok_or_else(|| {
                Error::usage(
                    "no Kafka bootstrap servers: pass --bootstrap-server HOST:PORT or set OFFSET_VAULT_BOOTSTRAP_SERVER",
                )
            })?;
        Ok(KafkaSettings {
            bootstrap,
            properties,
            timeout: self.timeout,
            direct: !self.librdkafka_only,
        })
    }

    pub fn connect_clients(&self) -> Result<Vec<ConnectClient>> {
        connect_clients(&self.connect_url, self.timeout)
    }

    /// The signing key and the trusted keys, read from their files.
    pub fn keys(&self) -> Result<Arc<Keys>> {
        let signer = match &self.signing_key {
            Some(v) => {
                let (source, text) = crate::sign::key_text("--signing-key", v)?;
                Some(SecretKey::from_pem(&source, &text)?)
            }
            None => None,
        };
        let trusted = self
            .trusted_key
            .iter()
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                let (source, text) = crate::sign::key_text("--trusted-key", v)?;
                PublicKey::from_pem(&source, &text)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Keys::new(signer, trusted)))
    }

    /// Opens the store to read and write (a local directory is created), with the keys.
    pub fn open_store(&self) -> Result<Store> {
        Ok(Store::open(self.store_url()?, self.timeout)?.with_keys(self.keys()?))
    }

    /// Opens an existing store (a missing local directory is an error), with the keys.
    pub fn open_existing_store(&self) -> Result<Store> {
        Ok(Store::open_existing(self.store_url()?, self.timeout)?.with_keys(self.keys()?))
    }

    pub fn store_url(&self) -> Result<&str> {
        self.store.as_deref().ok_or_else(|| {
            Error::usage(
                "no store: pass --store URL (a directory, file:///path or s3://bucket/prefix) or set OFFSET_VAULT_STORE",
            )
        })
    }
}

/// Fills `g` from the context where no flag or variable gave a value, and records every origin.
/// `src` says where clap found a flag's value (`Some` for a flag or a variable).
pub fn merge(
    g: &mut GlobalArgs,
    src: &dyn Fn(&str) -> Option<Source>,
    ctx: &Context,
    ctx_name: Option<&str>,
    base: Option<&Path>,
    applied: &mut Applied,
) -> Result<()> {
    let mut m = Merge {
        src,
        name: ctx_name.unwrap_or_default(),
        base,
        applied,
    };
    m.connection(g, ctx);
    m.keys(g, ctx);
    m.properties(g, ctx);
    if let Some(o) = m.ctx_value("output", &ctx.output) {
        g.output = OutputFormat::from_str(o, true)
            .map_err(|_| m.bad("output", o, "expected \"table\" or \"json\""))?;
    }
    m.record_value(
        "output",
        &ctx.output,
        format!("{:?}", g.output).to_lowercase(),
    );
    if let Some(t) = m.ctx_value("timeout", &ctx.timeout) {
        g.timeout = parse_duration(t).map_err(|e| m.bad("timeout", t, &e))?;
    }
    let timeout = humantime::format_duration(g.timeout).to_string();
    m.record_value("timeout", &ctx.timeout, timeout);
    if let Some(a) = m.ctx_value("audit", &ctx.audit) {
        g.audit = crate::audit::Mode::from_str(a, true)
            .map_err(|_| m.bad("audit", a, "expected \"required\" or \"optional\""))?;
    }
    m.record_value("audit", &ctx.audit, g.audit.name().to_string());
    g.audit_topic = m.text(
        "audit-topic",
        "audit_topic",
        g.audit_topic.take(),
        ctx.audit_topic.clone(),
    );
    Ok(())
}

/// One merge of a context into the command line: where each value came from.
struct Merge<'a> {
    src: &'a dyn Fn(&str) -> Option<Source>,
    name: &'a str,
    base: Option<&'a Path>,
    applied: &'a mut Applied,
}

impl Merge<'_> {
    /// Records where `setting` came from and returns its value.
    fn origin(&mut self, setting: &str, pick: Option<(String, Source)>) -> Option<String> {
        let (value, source) = pick?;
        // A key given as PEM text (from a variable) is never shown.
        let shown = if value.trim_start().starts_with("-----BEGIN") {
            "(PEM text, not shown)".to_string()
        } else {
            value.clone()
        };
        self.applied.origins.push(Origin {
            setting: setting.into(),
            value: shown,
            source,
        });
        Some(value)
    }

    /// A flag's (or variable's) value with its source.
    fn given(&self, v: Option<String>, id: &str) -> Option<(String, Source)> {
        v.map(|v| (v, (self.src)(id).unwrap_or(Source::Flag)))
    }

    /// A text setting: the flag or variable, else the context.
    fn text(
        &mut self,
        setting: &str,
        id: &str,
        flag: Option<String>,
        ctx: Option<String>,
    ) -> Option<String> {
        let pick = resolve(self.given(flag, id), ctx.map(|v| (v, self.name)), None);
        self.origin(setting, pick)
    }

    /// A list setting (comma-joined on the way through).
    fn list(
        &mut self,
        setting: &str,
        id: &str,
        flag: &[String],
        ctx: Option<Vec<String>>,
    ) -> Vec<String> {
        let given = (!flag.is_empty()).then(|| flag.join(","));
        let pick = resolve(
            self.given(given, id),
            ctx.map(|v| (v.join(","), self.name)),
            None,
        );
        self.origin(setting, pick)
            .map(|v| v.split(',').map(String::from).collect())
            .unwrap_or_default()
    }

    /// A path of the context, relative to the configuration file.
    fn in_base(&self, p: &Path) -> String {
        match self.base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p.to_path_buf(),
        }
        .display()
        .to_string()
    }

    /// The context's value of a setting that neither a flag nor a variable gave.
    fn ctx_value<'v>(&self, id: &str, ctx: &'v Option<Spanned<String>>) -> Option<&'v str> {
        if (self.src)(id).is_some() {
            return None;
        }
        ctx.as_ref().map(|v| v.get_ref().as_str())
    }

    /// Records a setting that always has a value (a default at least).
    fn record_value(&mut self, id: &str, ctx: &Option<Spanned<String>>, value: String) {
        let source = (self.src)(id).or_else(|| {
            ctx.as_ref().map(|_| Source::Context {
                name: self.name.into(),
            })
        });
        self.origin(id, Some((value, source.unwrap_or_default())));
    }

    fn bad(&self, setting: &str, value: &str, why: &str) -> Error {
        Error::usage(format!(
            "context {}: {setting} = {value:?}: {why}",
            self.name
        ))
    }

    fn connection(&mut self, g: &mut GlobalArgs, ctx: &Context) {
        g.bootstrap_server = self.text(
            "bootstrap-server",
            "bootstrap_server",
            g.bootstrap_server.take(),
            ctx.bootstrap_server.clone(),
        );
        let urls = ctx.connect_url.as_ref().map(|u| u.to_vec());
        g.connect_url = self.list("connect-url", "connect_url", &g.connect_url, urls);
        g.store = self.text("store", "store", g.store.take(), ctx.store.clone());
        let file = g.command_config.take().map(|p| p.display().to_string());
        let ctx_file = ctx
            .command_config
            .as_ref()
            .map(|p| (self.in_base(p), self.name));
        let picked = resolve(self.given(file, "command_config"), ctx_file, None);
        self.applied.command_config_from_context =
            matches!(picked, Some((_, Source::Context { .. })));
        g.command_config = self.origin("command-config", picked).map(PathBuf::from);
    }

    fn keys(&mut self, g: &mut GlobalArgs, ctx: &Context) {
        let ctx_key = ctx.signing_key.as_ref().map(|p| self.in_base(p));
        g.signing_key = self.text("signing-key", "signing_key", g.signing_key.take(), ctx_key);
        let ctx_keys = ctx
            .trusted_keys
            .as_ref()
            .map(|ks| ks.iter().map(|p| self.in_base(p)).collect());
        g.trusted_key = self.list("trusted-keys", "trusted_key", &g.trusted_key, ctx_keys);
    }

    fn properties(&mut self, g: &GlobalArgs, ctx: &Context) {
        for (k, v) in &ctx.properties {
            self.applied.properties.push(format!("{k}={v}"));
            let source = Source::Context {
                name: self.name.into(),
            };
            self.origin(&format!("property {k}"), Some((v.clone(), source)));
        }
        for p in &g.property {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            self.origin(
                &format!("property {}", k.trim()),
                Some((v.to_string(), Source::Flag)),
            );
        }
    }
}

/// Where clap found the argument `id`: `Some` for a flag or a variable.
fn explicit_source(cmd: &clap::Command, matches: &ArgMatches, id: &str) -> Option<Source> {
    match matches.value_source(id)? {
        ValueSource::CommandLine => Some(Source::Flag),
        ValueSource::EnvVariable => {
            let variable = cmd
                .get_arguments()
                .find(|a| a.get_id() == id)
                .and_then(|a| a.get_env())
                .map(|v| v.to_string_lossy().into_owned())
                .unwrap_or_default();
            Some(Source::Env { variable })
        }
        _ => None,
    }
}

/// Reads the configuration file (if any) and fills in the global flags that neither a flag nor a
/// variable gave; `cmd` is the command line's definition and `matches` what clap parsed from
/// it, which say where each value came from. Returns what was read, with the origins so far,
/// for the command's own settings from the context (the caller then sets `g.applied`).
/// `strict`: a context asked for that does not exist is an error.
pub fn apply(
    g: &mut GlobalArgs,
    cmd: &clap::Command,
    matches: &ArgMatches,
    strict: bool,
) -> Result<Loaded> {
    let src = |id: &str| explicit_source(cmd, matches, id);
    let explicit_context = g
        .context
        .clone()
        .map(|c| (c, src("context").unwrap_or(Source::Flag)));
    let mut loaded = load(g.config.as_deref(), explicit_context, strict)?;
    merge(
        g,
        &src,
        &loaded.context,
        loaded.name.as_deref(),
        loaded.base.as_deref(),
        &mut loaded.applied,
    )?;
    Ok(loaded)
}
