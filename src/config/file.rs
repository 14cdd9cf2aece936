//! The configuration file's model and the rules that read it: which file, which context, which
//! layer wins. Nothing here knows the command line; `src/cli` asks clap where each flag came
//! from and [`super::global`] merges a context into the global flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{Error, Result};

/// The variable that names the configuration file.
pub const ENV_CONFIG: &str = "OFFSET_VAULT_CONFIG";
/// The variable that names the context.
pub const ENV_CONTEXT: &str = "OFFSET_VAULT_CONTEXT";

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
    /// `serve`'s jobs, read by `serve` itself ([`super::serve::parse_section`]).
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
    /// The URLs or keys, a string split at commas.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => s.split(',').map(|u| u.trim().to_string()).collect(),
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
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

pub fn missing_context(path: &Path, name: &str, how: &Source, file: &ConfigFile) -> Error {
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

/// A value as `config show` prints it: secrets (by key or inline in a URL) redacted.
pub fn redacted(setting: &str, value: &str) -> String {
    let key = setting.strip_prefix("property ").unwrap_or(setting);
    let mut one = BTreeMap::from([(key.to_string(), value.to_string())]);
    crate::redact::redact_config(&mut one);
    one.into_values().next().unwrap_or_default()
}

/// The configuration file read and the context chosen, before it is merged into the flags.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The file (empty when there is none).
    pub file: ConfigFile,
    /// The file read and the context used; the origins are filled by the merge.
    pub applied: Applied,
    /// The chosen context's settings (empty without one).
    pub context: Context,
    /// The chosen context's name, also when `strict` was false and it does not exist.
    pub name: Option<String>,
    /// The directory of the file: the context's relative paths are relative to it.
    pub base: Option<PathBuf>,
}

/// Reads the configuration file (`config`: the explicit one, which must exist; else the default
/// one, which may not) and chooses its context (`explicit`: from `--context` or its variable).
/// `strict`: a context that is asked for and does not exist is an error (`config
/// list-contexts` and `use-context` pass false, so a bad `current-context` can be fixed).
pub fn load(
    config: Option<&Path>,
    explicit: Option<(String, Source)>,
    strict: bool,
) -> Result<Loaded> {
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let mut loaded = Loaded::default();
    let found = config_path(config, xdg.as_deref(), home.as_deref());
    if let Some((path, must_exist)) = &found {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                warn_if_readable(path);
                loaded.file = parse(path, &text)?;
                loaded.applied.file = Some(path.clone());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {}
            Err(source) => {
                return Err(Error::ReadFile {
                    path: path.clone(),
                    source,
                })
            }
        }
    }
    let chosen = choose_context(explicit, &loaded.file);
    if let Some((name, how)) = &chosen {
        match (&loaded.applied.file, loaded.file.contexts.get(name)) {
            (Some(_), Some(c)) => {
                loaded.context = c.clone();
                loaded.applied.context = Some((name.clone(), how.clone()));
            }
            _ if !strict => {}
            (None, _) => {
                let wanted = found.map(|p| p.0).unwrap_or_default();
                return Err(Error::usage(format!(
                    "context {name} is asked for ({how}) but there is no configuration file: create {} or pass --config FILE",
                    wanted.display()
                )));
            }
            (Some(path), None) => return Err(missing_context(path, name, how, &loaded.file)),
        }
    }
    loaded.name = chosen.map(|c| c.0);
    loaded.base = loaded
        .applied
        .file
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    Ok(loaded)
}

/// The configuration file that `config list-contexts` and `use-context` work on; it must exist.
/// `read`: the file read at the start, if any; `config`: the one `--config` names.
pub fn existing(read: Option<&Path>, config: Option<&Path>) -> Result<(PathBuf, ConfigFile)> {
    let path = match read {
        Some(p) => p.to_path_buf(),
        None => {
            let xdg = std::env::var("XDG_CONFIG_HOME").ok();
            let home = std::env::var("HOME").ok();
            let p = config_path(config, xdg.as_deref(), home.as_deref())
                .map(|p| p.0)
                .unwrap_or_else(|| PathBuf::from("config.toml"));
            return Err(Error::usage(format!(
                "no configuration file at {}: create it (see `offset-vault config --help`) or pass --config FILE",
                p.display()
            )));
        }
    };
    let text = std::fs::read_to_string(&path).map_err(|source| Error::ReadFile {
        path: path.clone(),
        source,
    })?;
    let file = parse(&path, &text)?;
    Ok((path, file))
}

/// Makes `name` the file's current context (`config use-context`): `file` is the file at
/// `path` as read; the file is rewritten with only that line changed, or refused unchanged.
pub fn use_context(path: &Path, file: &ConfigFile, name: &str) -> Result<()> {
    if !file.contexts.contains_key(name) {
        return Err(missing_context(path, name, &Source::Flag, file));
    }
    let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let edited = with_current_context(&text, name)
        .map_err(|e| Error::usage(format!("configuration file {}: {e}", path.display())))?;
    replace_file(path, edited.as_bytes())
}

/// The file's text with `current-context = name`, everything else (comments, order) kept.
pub fn with_current_context(text: &str, name: &str) -> std::result::Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    match doc
        .get_mut("current-context")
        .and_then(|i| i.as_value_mut())
    {
        Some(value) => {
            // Keep the spacing and a comment at the end of the line.
            let decor = value.decor().clone();
            *value = name.into();
            *value.decor_mut() = decor;
        }
        None => doc["current-context"] = toml_edit::value(name),
    }
    Ok(doc.to_string())
}

/// Replaces a file by writing a sibling and renaming it over, keeping its permissions.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let io = |source| Error::ReadFile {
        path: path.to_path_buf(),
        source,
    };
    let perms = std::fs::metadata(path).map_err(io)?.permissions();
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.set_permissions(perms).map_err(io)?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}
