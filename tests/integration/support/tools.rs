//! The tools that check what `deploy/` ships, as `scripts/test-env install` puts them in the cache:
//! promtool (from Debian's `prometheus` package), Helm (built with `go install`) and
//! systemd-analyze (Debian's `systemd`). Each is looked up in its variable (`OV_PROMTOOL`,
//! `OV_HELM`), then in the cache, then on `PATH`; a missing one is [`env::unavailable`]: a loud skip,
//! or a failure under CI.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::env;

/// The result of one run of a tool.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with the whole output unless the tool succeeded.
    pub fn ok(self, what: &str) -> Run {
        assert!(
            self.success,
            "{what} failed\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs `program args...` in `dir` and collects its output.
pub fn run<I, S>(program: &Path, args: I, dir: &Path) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    Run {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The repository's root.
pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A shell variable's value as `scripts/lib/common.sh` sets it (`NAME="value"`), so that the tests
/// and the install script share one pinned version.
fn common_sh_value(name: &str) -> String {
    let path = repo_dir().join("scripts/lib/common.sh");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let prefix = format!("{name}=\"");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix)?.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{} sets no {name}=\"...\"", path.display()))
        .to_string()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The tool from `variable`, else the first of `cached` that exists, else `name` on PATH.
fn find(name: &str, variable: &str, cached: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    cached
        .filter(|path| path.is_file())
        .or_else(|| on_path(name))
}

fn require(name: &str, found: Option<PathBuf>, installed_by: &str) -> Option<PathBuf> {
    match found {
        Some(path) if path.is_file() => Some(path),
        other => {
            let detail = match other {
                Some(path) => format!("{} does not exist", path.display()),
                None => format!("not in the cache nor on PATH; {installed_by}"),
            };
            env::unavailable(name, &detail);
            None
        }
    }
}

/// promtool, or None after [`env::unavailable`].
pub fn promtool() -> Option<PathBuf> {
    let cached = env::cache_dir().join("promtool/bin/promtool");
    require(
        "promtool",
        find("promtool", "OV_PROMTOOL", Some(cached)),
        "`scripts/test-env install` installs it",
    )
}

/// Helm, the version `scripts/lib/common.sh` pins, or None after [`env::unavailable`].
pub fn helm() -> Option<PathBuf> {
    let version = common_sh_value("OV_HELM_VERSION");
    let cached = env::cache_dir().join(format!("helm-{version}/bin/helm"));
    require(
        "helm",
        find("helm", "OV_HELM", Some(cached)),
        "`scripts/test-env install` builds it",
    )
}

/// systemd-analyze, or None after [`env::unavailable`].
pub fn systemd_analyze() -> Option<PathBuf> {
    require(
        "systemd-analyze",
        find("systemd-analyze", "OV_SYSTEMD_ANALYZE", None),
        "`scripts/test-env install` installs Debian's systemd package for it",
    )
}
