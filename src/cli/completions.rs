//! `offset-vault completions SHELL` and `offset-vault man [--dir DIR]`: generated from the clap
//! definition, so they always match the command line.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};

use super::Cli;
use crate::error::{exit, Error, Result};

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write offset-vault.1 and one offset-vault-COMMAND.1 per command into DIR, instead of the
    /// main page on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

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
