//! The configuration file and its named contexts.
//!
//! A TOML file (`--config FILE`, `OFFSET_VAULT_CONFIG`, or by default
//! `$XDG_CONFIG_HOME/offset-vault/config.toml`, falling back to `~/.config/offset-vault/`) holds
//! named contexts, each a set of connection settings:
//!
//! ```toml
//! current-context = "prod"
//!
//! [contexts.prod]
//! bootstrap-server = "kafka-1:9092,kafka-2:9092"
//! connect-url = ["http://connect:8083"]
//! store = "s3://backups/offsets"
//! command-config = "prod-client.properties"   # relative to this file
//! output = "table"
//! timeout = "30s"
//! audit = "required"                          # or "optional"
//! audit-topic = "offset-vault-audit"
//! properties = { "security.protocol" = "SASL_SSL", "sasl.mechanism" = "SCRAM-SHA-512" }
//! encrypt-to = ["age1..."]                     # snapshot --encrypt-to
//! identity = "vault-identity.txt"              # restore --identity, relative to this file
//! ```
//!
//! `--context NAME` (or `OFFSET_VAULT_CONTEXT`) picks a context, else `current-context` does.
//! Precedence, highest first: command-line flags, environment variables, the context, built-in
//! defaults. A context fills only the settings that neither a flag nor a variable gave.
//! The pure rules (which layer wins, which file, which context) are separate from reading the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{Cli, Command, GlobalArgs, OutputFormat};

pub mod commands;
pub mod serve;
use crate::error::{Error, Result};

/// The variable that names the configuration file.
pub const ENV_CONFIG: &str = "OFFSET_VAULT_CONFIG";
/// The variable that names the context.
pub const ENV_CONTEXT: &str = "OFFSET_VAULT_CONTEXT";

/// Examples of `config`, with a file to start from.
pub const EXAMPLES: &str = "\
Examples:
  offset-vault config show
  offset-vault --context staging config show --output json
  offset-vault config list-contexts
  offset-vault config use-context prod

A configuration file ($XDG_CONFIG_HOME/offset-vault/config.toml, or --config FILE):
  current-context = \"prod\"

  [contexts.prod]
  bootstrap-server = \"kafka-1:9092,kafka-2:9092\"
  connect-url = [\"http://connect:8083\"]
  store = \"s3://backups/offsets\"
  command-config = \"prod-client.properties\"   # relative to this file
  properties = { \"sasl.mechanism\" = \"SCRAM-SHA-512\" }
  encrypt-to = [\"age1...\"]                     # snapshot --encrypt-to
  identity = \"vault-identity.txt\"              # restore --identity, relative to this file

Precedence, highest first: flags, environment variables, the context, built-in defaults.";

/// `offset-vault config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective settings and where each came from (secrets redacted).
    #[command(
        after_long_help = "Examples:\n  offset-vault config show\n  offset-vault --context staging config show --output json"
    )]
    Show,
    /// List the contexts of the configuration file; `*` marks the current one.
    #[command(after_long_help = "Examples:\n  offset-vault config list-contexts")]
    ListContexts,
    /// Make NAME the current context (rewrites `current-context`, keeps the rest of the file).
    #[command(after_long_help = "Examples:\n  offset-vault config use-context prod")]
    UseContext {
        /// A context defined in the configuration file.
        name: String,
    },
}

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Source {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env { variable: String },
    /// A context of the configuration file.
    Context { name: String },
    /// The built-in default.
    #[default]
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => write!(f, "flag"),
            Source::Env { variable } => write!(f, "environment ({variable})"),
            Source::Context { name } => write!(f, "context {name}"),
            Source::Default => write!(f, "default"),
        }
    }
}

/// One setting as `config show` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The setting's name, as in the file (`store`, `property sasl.mechanism`).
    pub setting: String,
    /// Its value (secrets are redacted when printed).
    pub value: String,
    pub source: Source,
}

/// What the configuration file added to the command line.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The configuration file read, if any.
    pub file: Option<PathBuf>,
    /// The context used, and what chose it.
    pub context: Option<(String, Source)>,
    /// The context's `-X` properties as `KEY=VALUE`, below those of the command line.
    pub properties: Vec<String>,
    /// True when `command-config` came from the context (its file then sits below the context's
    /// properties; a file from a flag or variable sits above them).
    pub command_config_from_context: bool,
    /// Every setting with a value, and where it came from.
    pub origins: Vec<Origin>,
}

/// The configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigFile {
    pub current_context: Option<Spanned<String>>,
    #[serde(default)]
    pub contexts: BTreeMap<String, Context>,
    /// `serve`'s jobs, read by `serve` itself ([`serve::parse_section`]).
    pub serve: Option<toml::Table>,
}

/// A named context.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Context {
    pub bootstrap_server: Option<String>,
    pub connect_url: Option<OneOrMany>,
    pub store: Option<String>,
    pub command_config: Option<PathBuf>,
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    pub output: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    /// `--signing-key`: a PEM file (relative to the configuration file).
    pub signing_key: Option<PathBuf>,
    /// `--trusted-key`: PEM files (relative to the configuration file).
    pub trusted_keys: Option<Vec<PathBuf>>,
    /// `required` or `optional` (`--audit`).
    pub audit: Option<Spanned<String>>,
    /// `--audit-topic`.
    pub audit_topic: Option<String>,
    /// `snapshot --encrypt-to` (and serve's flag snapshot job) when neither the flag, its
    /// variable nor --encrypt-to-file gives recipients.
    pub encrypt_to: Option<OneOrMany>,
    /// `restore --identity` when neither the flag nor its variable gives one; relative to the
    /// file.
    pub identity: Option<PathBuf>,
}

/// A string or a list of strings (`connect-url`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl Context {
    /// The context's Connect URLs.
    pub fn connect_urls(&self) -> Vec<String> {
        self.connect_url
            .as_ref()
            .map(OneOrMany::to_vec)
            .unwrap_or_default()
    }
}

impl OneOrMany {
    fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => s.split(',').map(|u| u.trim().to_string()).collect(),
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses a configuration file's text; `path` names it in errors (with the line).
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile> {
    toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", line_of(text, s.start)))
            .unwrap_or_default();
        Error::usage(format!(
            "configuration file {}{at}: {}",
            path.display(),
            e.message().trim()
        ))
    })
}

/// The configuration file to read: an explicit one (flag or variable) must exist; the default
/// one may not. `xdg` and `home` are `$XDG_CONFIG_HOME` and `$HOME`.
pub fn config_path(
    explicit: Option<&Path>,
    xdg: Option<&str>,
    home: Option<&str>,
) -> Option<(PathBuf, bool)> {
    if let Some(p) = explicit {
        return Some((p.to_path_buf(), true));
    }
    let base = match (
        xdg.filter(|x| !x.is_empty()),
        home.filter(|h| !h.is_empty()),
    ) {
        (Some(x), _) => PathBuf::from(x),
        (None, Some(h)) => Path::new(h).join(".config"),
        (None, None) => return None,
    };
    Some((base.join("offset-vault").join("config.toml"), false))
}

/// Which context to use: the flag or variable, else `current-context`.
pub fn choose_context(
    explicit: Option<(String, Source)>,
    file: &ConfigFile,
) -> Option<(String, Source)> {
    explicit.or_else(|| {
        file.current_context.as_ref().map(|c| {
            (
                c.get_ref().clone(),
                Source::Context {
                    name: "current-context".into(),
                },
            )
        })
    })
}

/// The winning value of one setting: flag or environment (`explicit`), else the context's, else
/// the built-in default.
pub fn resolve<T>(
    explicit: Option<(T, Source)>,
    context: Option<(T, &str)>,
    default: Option<T>,
) -> Option<(T, Source)> {
    explicit
        .or_else(|| {
            context.map(|(v, name)| {
                (
                    v,
                    Source::Context {
                        name: name.to_string(),
                    },
                )
            })
        })
        .or_else(|| default.map(|v| (v, Source::Default)))
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

/// Reads the configuration file (if any) and fills in what neither a flag nor a variable gave.
/// `strict`: a missing context is an error (`config list-contexts` and `use-context` pass false,
/// so a bad `current-context` can be fixed with them).
pub fn apply(cli: &mut Cli, matches: &ArgMatches, strict: bool) -> Result<()> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let src = |id: &str| explicit_source(&cmd, matches, id);
    let g = &mut cli.global;
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let mut file = ConfigFile::default();
    let mut applied = Applied::default();
    if let Some((path, must_exist)) =
        config_path(g.config.as_deref(), xdg.as_deref(), home.as_deref())
    {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                warn_if_readable(&path);
                file = parse(&path, &text)?;
                applied.file = Some(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {}
            Err(source) => return Err(Error::ReadFile { path, source }),
        }
    }
    let explicit_context = g
        .context
        .clone()
        .map(|c| (c, src("context").unwrap_or(Source::Flag)));
    let chosen = choose_context(explicit_context, &file);
    let mut context = Context::default();
    if let Some((name, how)) = &chosen {
        match (&applied.file, file.contexts.get(name)) {
            (Some(_), Some(c)) => {
                context = c.clone();
                applied.context = Some((name.clone(), how.clone()));
            }
            _ if !strict => {}
            (None, _) => {
                return Err(Error::usage(format!(
                    "context {name} is asked for ({how}) but there is no configuration file: create {} or pass --config FILE",
                    g.config.clone().or_else(|| config_path(None, xdg.as_deref(), home.as_deref()).map(|p| p.0)).unwrap_or_default().display()
                )))
            }
            (Some(path), None) => return Err(missing_context(path, name, how, &file)),
        }
    }
    let base = applied
        .file
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    merge(
        g,
        &src,
        &context,
        chosen.as_ref().map(|c| c.0.as_str()),
        base.as_deref(),
        &mut applied,
    )?;
    let name = chosen.as_ref().map(|c| c.0.as_str()).unwrap_or_default();
    secrets_keys(
        &mut cli.command,
        &context,
        name,
        base.as_deref(),
        &mut applied,
    );
    cli.global.applied = applied;
    Ok(())
}

/// The context's `encrypt-to` and `identity`: they fill the command's flags when neither the
/// flag nor its variable gave a value, and `config show` lists them.
fn secrets_keys(
    command: &mut Command,
    ctx: &Context,
    name: &str,
    base: Option<&Path>,
    applied: &mut Applied,
) {
    let from_env = |var: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| {
                (
                    v,
                    Source::Env {
                        variable: var.into(),
                    },
                )
            })
    };
    let context = || Source::Context { name: name.into() };
    if let Some(r) = &ctx.encrypt_to {
        let keys = r.to_vec();
        let snapshot = match command {
            Command::Snapshot(a) => Some(a),
            Command::Serve(a) => Some(&mut a.snapshot),
            _ => None,
        };
        if let Some(a) = snapshot {
            if a.encrypt_to.iter().all(|v| v.trim().is_empty()) && a.encrypt_to_file.is_empty() {
                a.encrypt_to = keys.clone();
            }
        }
        let (value, source) =
            from_env("OFFSET_VAULT_ENCRYPT_TO").unwrap_or_else(|| (keys.join(","), context()));
        applied.origins.push(Origin {
            setting: "encrypt-to".into(),
            value,
            source,
        });
    }
    if let Some(p) = &ctx.identity {
        let p = match base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p.clone(),
        };
        if let Command::Restore(a) = command {
            if a.identity.is_none() {
                a.identity = Some(p.clone());
            }
        }
        let (value, source) = from_env("OFFSET_VAULT_IDENTITY")
            .unwrap_or_else(|| (p.display().to_string(), context()));
        applied.origins.push(Origin {
            setting: "identity".into(),
            value,
            source,
        });
    }
}

pub(crate) fn missing_context(path: &Path, name: &str, how: &Source, file: &ConfigFile) -> Error {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let at = match (how, &file.current_context) {
        (Source::Context { .. }, Some(c)) => format!(
            " (current-context, line {})",
            line_of(&text, c.span().start)
        ),
        _ => format!(" ({how})"),
    };
    let known: Vec<&str> = file.contexts.keys().map(String::as_str).collect();
    Error::usage(format!(
        "configuration file {}: no context named {name}{at}; its contexts: {}",
        path.display(),
        if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        }
    ))
}

/// Fills `g` from the context where no flag or variable gave a value, and records every origin.
fn merge(
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
        g.timeout = super::parse_duration(t).map_err(|e| m.bad("timeout", t, &e))?;
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

/// The configuration file may hold secrets: say so when others can read it.
fn warn_if_readable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o044 != 0 {
                tracing::warn!(
                    "configuration file {} is readable by group or others (mode {mode:o}) and may hold secrets: chmod 600 {}",
                    path.display(),
                    path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
