//! `offset-vault config show | list-contexts | use-context`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ConfigCommand;
use crate::cli::{Cli, OutputFormat};
use crate::config::{config_path, missing_context, parse, ConfigFile, Origin, Source};
use crate::error::{Error, Result};

/// A value as `config show` prints it: secrets (by key or inline in a URL) redacted.
pub fn redacted(setting: &str, value: &str) -> String {
    let key = setting.strip_prefix("property ").unwrap_or(setting);
    let mut one = BTreeMap::from([(key.to_string(), value.to_string())]);
    crate::redact::redact_config(&mut one);
    one.into_values().next().unwrap_or_default()
}

/// Runs `offset-vault config ...`.
pub fn run(cli: &Cli, command: &ConfigCommand) -> Result<i32> {
    match command {
        ConfigCommand::Show => show(cli),
        ConfigCommand::ListContexts => {
            let (path, file) = read_existing(cli)?;
            let current = file.current_context.as_ref().map(|c| c.get_ref().as_str());
            if cli.global.output == OutputFormat::Json {
                crate::cli::output::print_json(&serde_json::json!({
                    "file": path,
                    "current_context": current,
                    "contexts": file.contexts.keys().collect::<Vec<_>>(),
                }));
                return Ok(0);
            }
            let mut t =
                crate::cli::output::table(&["CURRENT", "NAME", "BOOTSTRAP-SERVER", "STORE"]);
            for (name, c) in &file.contexts {
                t.add_row(vec![
                    if Some(name.as_str()) == current {
                        "*"
                    } else {
                        ""
                    }
                    .to_string(),
                    name.clone(),
                    c.bootstrap_server.clone().unwrap_or_default(),
                    c.store
                        .as_deref()
                        .map(|s| redacted("store", s))
                        .unwrap_or_default(),
                ]);
            }
            crate::outln!("{t}");
            Ok(0)
        }
        ConfigCommand::UseContext { name } => {
            let (path, file) = read_existing(cli)?;
            if !file.contexts.contains_key(name) {
                return Err(missing_context(&path, name, &Source::Flag, &file));
            }
            let text = std::fs::read_to_string(&path).map_err(|source| Error::ReadFile {
                path: path.clone(),
                source,
            })?;
            let edited = with_current_context(&text, name)
                .map_err(|e| Error::usage(format!("configuration file {}: {e}", path.display())))?;
            replace_file(&path, edited.as_bytes())?;
            crate::noteln!("current context is now {name} ({})", path.display());
            Ok(0)
        }
    }
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

fn show(cli: &Cli) -> Result<i32> {
    let applied = &cli.global.applied;
    let settings: Vec<Origin> = applied
        .origins
        .iter()
        .map(|o| Origin {
            value: redacted(&o.setting, &o.value),
            ..o.clone()
        })
        .collect();
    if cli.global.output == OutputFormat::Json {
        crate::cli::output::print_json(&serde_json::json!({
            "file": applied.file,
            "context": applied.context.as_ref().map(|c| &c.0),
            "context_source": applied.context.as_ref().map(|c| &c.1),
            "settings": settings,
        }));
        return Ok(0);
    }
    let file = applied
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(none)".into());
    crate::outln!("file     {file}");
    match &applied.context {
        Some((name, how)) => crate::outln!("context  {name} (chosen by {how})"),
        None => crate::outln!("context  (none)"),
    }
    let mut t = crate::cli::output::table(&["SETTING", "VALUE", "SOURCE"]);
    for o in &settings {
        t.add_row(vec![
            o.setting.clone(),
            o.value.clone(),
            o.source.to_string(),
        ]);
    }
    crate::outln!("{t}");
    Ok(0)
}

/// The configuration file that `config list-contexts` and `use-context` work on; it must exist.
fn read_existing(cli: &Cli) -> Result<(PathBuf, ConfigFile)> {
    let path = match &cli.global.applied.file {
        Some(p) => p.clone(),
        None => {
            let xdg = std::env::var("XDG_CONFIG_HOME").ok();
            let home = std::env::var("HOME").ok();
            let p = config_path(
                cli.global.config.as_deref(),
                xdg.as_deref(),
                home.as_deref(),
            )
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

#[cfg(test)]
mod tests {
    use super::with_current_context;

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
}
