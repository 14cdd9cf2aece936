//! `offset-vault completions SHELL` and `offset-vault man [--dir DIR]`: generated from the clap
//! definition, so they always match the command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use super::args::{CompletionsArgs, ManArgs};
use super::Cli;
use crate::error::{exit, Error, Result};

fn write_stdout(bytes: &[u8]) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::Internal(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(exit::OK),
    }
}

/// Prints the completion script for a shell.
pub fn cmd_completions(args: &CompletionsArgs) -> Result<i32> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "offset-vault", &mut buf);
    if args.shell == clap_complete::Shell::Bash {
        buf = fix_bash(&String::from_utf8_lossy(&buf)).into_bytes();
    }
    write_stdout(&buf)
}

/// The bash generator spells the program's name two ways when it holds a `-`: the state set while
/// reading the words (`offset__vault__subcmd__restore`) and the `case` labels that complete
/// options (`offset__subcmd__vault__subcmd__restore`), so options of subcommands never complete.
/// One spelling makes them meet.
fn fix_bash(script: &str) -> String {
    script.replace("offset__subcmd__vault", "offset__vault")
}

/// Prints the main man page, or writes every page into `--dir`.
pub fn cmd_man(args: &ManArgs) -> Result<i32> {
    let Some(dir) = &args.dir else {
        let mut buf = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut buf)
            .map_err(|e| Error::Internal(format!("cannot render the man page: {e}")))?;
        return write_stdout(&buf);
    };
    let io = |source| Error::ReadFile {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let written = write_pages(dir).map_err(io)?;
    for path in &written {
        crate::outln!("{}", path.display());
    }
    crate::noteln!("{} man page(s) written to {}", written.len(), dir.display());
    Ok(exit::OK)
}

/// One page for the program and one per (nested) command, named as `man` looks them up
/// (`offset-vault-restore.1`, `offset-vault-config-show.1`).
pub fn write_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn walk(cmd: &clap::Command, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        out.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, dir, out)?;
        }
        Ok(())
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, dir, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `offset-vault ...` lines of a help text's examples, `\` continuations joined.
    fn example_lines(help: &str) -> Vec<String> {
        let Some((_, examples)) = help.split_once("Examples:") else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        // Inside a `\`-continued line: of an offset-vault command (joined) or of another one.
        let mut continued: Option<bool> = None;
        for line in examples.lines().map(str::trim) {
            let ours = match continued {
                Some(true) => {
                    out.last_mut()
                        .unwrap()
                        .push_str(&format!(" {}", line.trim_end_matches('\\')));
                    true
                }
                Some(false) => false,
                None if line.starts_with("offset-vault") => {
                    out.push(line.trim_end_matches('\\').to_string());
                    true
                }
                None => false,
            };
            continued = line.ends_with('\\').then_some(ours);
        }
        out
    }

    /// Shell words of a command line, up to an unquoted comment, pipe or redirection.
    fn words(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur: Option<String> = None;
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    cur.get_or_insert_with(String::new);
                }
                (None, '#' | '|' | '>') if cur.is_none() => break,
                (None, c) if c.is_whitespace() => out.extend(cur.take()),
                (None, c) => cur.get_or_insert_with(String::new).push(c),
            }
        }
        out.extend(cur);
        out
    }

    #[test]
    fn example_lines_and_words_are_split_as_a_shell_would() {
        let help = "x\nExamples:\n  # a comment\n  offset-vault a 'b c' \\\n      --d \"e f\"  # note\n  offset-vault man | man -l -\n";
        let lines = example_lines(help);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(words(&lines[0]), ["offset-vault", "a", "b c", "--d", "e f"]);
        assert_eq!(words(&lines[1]), ["offset-vault", "man"]);
    }

    /// Every command's long help ends with examples, and every example parses. Commands not
    /// implemented yet are the only ones without.
    #[test]
    fn every_command_ends_its_long_help_with_examples_that_parse() {
        fn walk(cmd: &mut clap::Command, path: &mut Vec<String>, checked: &mut usize) {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect();
            for name in names {
                if name == "help" {
                    continue;
                }
                let sub = cmd.find_subcommand_mut(&name).unwrap();
                path.push(name.clone());
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                if !about.contains("not implemented yet") {
                    let help = sub.render_long_help().to_string();
                    let tail = help.rsplit_once("Options:").map_or(help.as_str(), |t| t.1);
                    assert!(
                        tail.contains("Examples:"),
                        "{path:?}: no examples at the end of\n{help}"
                    );
                    let examples = example_lines(&help);
                    assert!(!examples.is_empty(), "{path:?}: no example lines");
                    for e in examples {
                        let w = words(&e);
                        assert!(
                            path.iter().all(|p| w.contains(p)),
                            "{path:?}: example of another command: {e}"
                        );
                        if let Err(err) = <Cli as clap::Parser>::try_parse_from(&w) {
                            panic!("{path:?}: example does not parse: {e}\n{err}");
                        }
                        *checked += 1;
                    }
                }
                walk(sub, path, checked);
                path.pop();
            }
        }
        // Unwrapped, as the lines are written (a terminal may wrap them).
        let mut cmd = Cli::command().term_width(0);
        cmd.build();
        let mut checked = 0;
        walk(&mut cmd, &mut Vec::new(), &mut checked);
        assert!(checked >= 25, "only {checked} examples");
    }

    #[test]
    fn every_command_has_a_man_page() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_pages(dir.path()).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let mut want = vec!["offset-vault.1".to_string()];
        for sub in Cli::command().get_subcommands() {
            want.push(format!("offset-vault-{}.1", sub.get_name()));
            for nested in sub.get_subcommands() {
                want.push(format!(
                    "offset-vault-{}-{}.1",
                    sub.get_name(),
                    nested.get_name()
                ));
            }
        }
        for w in &want {
            assert!(names.contains(w), "no page {w} in {names:?}");
        }
        let restore = std::fs::read_to_string(dir.path().join("offset-vault-restore.1")).unwrap();
        assert!(
            restore.contains("\\-\\-execute") && restore.contains(".TH"),
            "{restore}"
        );
    }
}
