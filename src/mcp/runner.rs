//! Running one offset-vault command for a tool call: the same binary as a child process, with
//! the server's connection settings, `--output json`, and `--via mcp` (so its audit event says
//! where it came from). A child per call keeps each command exactly as the command line runs
//! it (its checks, refusals, audit trail and exit code), and a crash in a Kafka client library
//! ends that call, not the server.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// How to start a command: the binary, the global flags that point it at the server's cluster,
/// Connect workers and store, and the environment it adds.
#[derive(Debug, Clone)]
pub struct Runner {
    pub exe: PathBuf,
    /// Global flags (`--bootstrap-server`, `--store`, ...), before the command.
    pub global: Vec<String>,
    /// Variables set for the child (secrets are passed here, not on its command line).
    pub env: Vec<(String, String)>,
}

/// What one command did.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The command as run, without the binary and the global flags.
    pub command: Vec<String>,
    pub exit_code: i32,
    /// Its JSON document on stdout, when it printed one.
    pub json: Option<Value>,
    pub stderr: String,
    /// The call was cancelled and the command interrupted (SIGINT) before it ended.
    pub cancelled: bool,
}

impl Runner {
    /// The same runner with another store in place of the server's.
    pub fn with_store(&self, store: &str) -> Runner {
        let mut global = Vec::with_capacity(self.global.len() + 2);
        let mut flags = self.global.iter();
        while let Some(flag) = flags.next() {
            if flag == "--store" {
                flags.next();
            } else {
                global.push(flag.clone());
            }
        }
        global.extend(["--store".to_string(), store.to_string()]);
        Runner {
            global,
            ..self.clone()
        }
    }

    /// Runs `command` (e.g. `["list"]`) to its end, or until `cancel` fires: then the child gets
    /// SIGINT, as from Ctrl-C, and is waited for, so that it leaves things as an interrupted
    /// command line does. Each line it writes on stderr goes to `progress` as it comes.
    pub async fn run(
        &self,
        command: Vec<String>,
        cancel: &CancellationToken,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<Ran> {
        let mut child = Command::new(&self.exe)
            .args(&self.global)
            .args(&command)
            .args(["--output", "json", "--via", "mcp"])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::Internal(format!("cannot start {}: {e}", self.exe.display())))?;
        let mut stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let read_out = async {
            let mut buf = Vec::new();
            stdout.read_to_end(&mut buf).await.map(|_| buf)
        };
        let read_err = async {
            let mut lines = BufReader::new(stderr).lines();
            let mut all = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(step) = progress_line(&line) {
                    progress(step);
                    continue;
                }
                if !line.trim().is_empty() {
                    progress(line.clone());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        };
        let mut cancelled = false;
        let pid = child.id();
        let wait = async {
            tokio::select! {
                status = child.wait() => status,
                _ = cancel.cancelled() => {
                    cancelled = true;
                    interrupt(pid);
                    child.wait().await
                }
            }
        };
        let (out, err, status) = tokio::join!(read_out, read_err, wait);
        let status = status.map_err(|e| Error::Internal(format!("waiting for a command: {e}")))?;
        let out = out.map_err(|e| Error::Internal(format!("reading a command's output: {e}")))?;
        let json = serde_json::from_slice::<Value>(&out).ok();
        Ok(Ran {
            command,
            // A child ended by a signal has no exit code; 1 is the generic failure.
            exit_code: status.code().unwrap_or(1),
            json,
            stderr: err,
            cancelled,
        })
    }
}

/// A progress line of the child ([`crate::progress::enable_lines`]) as one message, e.g.
/// `groups: committed offsets read 3/10`; None for any other line.
fn progress_line(line: &str) -> Option<String> {
    let doc: Value = serde_json::from_str(line.strip_prefix(crate::progress::LINE_PREFIX)?).ok()?;
    let stage = doc["stage"].as_str()?;
    let done = doc["done"].as_u64()?;
    Some(match doc["total"].as_u64() {
        Some(total) if total > 0 => format!("{stage} {done}/{total}"),
        _ => format!("{stage} {done}"),
    })
}

/// SIGINT to the child, as Ctrl-C would send it.
fn interrupt(pid: Option<u32>) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if let Some(pid) = pid {
        // SAFETY: kill(2) with a pid this process started and still waits for.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGINT);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = pid;
}

#[cfg(test)]
mod tests {
    use super::progress_line;

    #[test]
    fn progress_lines_become_messages_and_other_lines_stay_lines() {
        let p = crate::progress::LINE_PREFIX;
        for (line, want) in [
            (
                format!(r#"{p}{{"stage":"groups: committed offsets read","done":3,"total":10}}"#),
                Some("groups: committed offsets read 3/10"),
            ),
            (
                format!(r#"{p}{{"stage":"planning the restore","done":0,"total":0}}"#),
                Some("planning the restore 0"),
            ),
            (format!("{p}not json"), None),
            ("warning: group g is Empty".to_string(), None),
        ] {
            assert_eq!(progress_line(&line).as_deref(), want, "{line}");
        }
    }
}
