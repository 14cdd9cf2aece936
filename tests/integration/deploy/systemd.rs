//! deploy/systemd: the unit, checked offline by systemd-analyze (no systemd needs to run), and its
//! example configuration held against the `serve` contract.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{check_serve_config, deploy_dir, read};
use crate::support::tools::{self, run};

const UNIT: &str = "offset-vault.service";
const INSTALLED_BINARY: &str = "/usr/local/bin/offset-vault";

fn systemd_dir() -> PathBuf {
    deploy_dir().join("systemd")
}

/// The unit with its ExecStart pointing at the binary just built (systemd-analyze verify checks
/// that the command exists), in a directory of its own.
fn unit_for_verify(dir: &Path) -> PathBuf {
    let unit = read(&systemd_dir().join(UNIT));
    assert!(
        unit.contains(INSTALLED_BINARY),
        "{UNIT} no longer runs {INSTALLED_BINARY}"
    );
    let path = dir.join(UNIT);
    std::fs::write(
        &path,
        unit.replace(INSTALLED_BINARY, env!("CARGO_BIN_EXE_offset-vault")),
    )
    .unwrap();
    path
}

#[test]
fn systemd_analyze_verifies_the_unit() {
    let Some(analyze) = tools::systemd_analyze() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_for_verify(dir.path());
    // verify exits 0 on unknown keys and bad values, with a warning: any output is a failure.
    let out = run(&analyze, ["verify".as_ref(), unit.as_os_str()], dir.path())
        .ok("systemd-analyze verify");
    assert_eq!(
        format!("{}{}", out.stdout, out.stderr),
        "",
        "systemd-analyze verify has complaints"
    );

    // The check itself notices a misspelt key.
    let broken = dir.path().join("broken.service");
    std::fs::write(
        &broken,
        read(&unit).replace("DynamicUser=yes", "DynamicUsr=yes"),
    )
    .unwrap();
    let out = run(
        &analyze,
        ["verify".as_ref(), broken.as_os_str()],
        dir.path(),
    );
    assert!(
        out.stderr.contains("Unknown key"),
        "systemd-analyze verify missed a misspelt key: {out:?}"
    );
}

/// systemd's own exposure score of the hardening (0 = fully locked down, 10 = none): the unit
/// scores 1.4; 2.0 leaves room for systemd versions that weigh settings differently.
#[test]
fn systemd_analyze_security_rates_the_unit_locked_down() {
    let Some(analyze) = tools::systemd_analyze() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_for_verify(dir.path());
    let args = [
        "security".as_ref(),
        "--offline=true".as_ref(),
        unit.as_os_str(),
    ];
    let out = run(&analyze, args, dir.path());
    let score = out
        .stdout
        .lines()
        .find_map(|line| line.split("Overall exposure level for ").nth(1))
        .and_then(|rest| rest.split(": ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|score| score.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{}{}", out.stdout, out.stderr));
    assert!(
        score <= 2.0,
        "exposure level {score}, above 2.0:\n{}",
        out.stdout
    );
}

/// The settings of one section of a unit file: key -> every value it was given.
fn section(unit: &str, name: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = String::new();
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = header.to_string();
        } else if current == name {
            let (key, value) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("not a setting: {line}"));
            settings
                .entry(key.trim().to_string())
                .or_default()
                .push(value.trim().to_string());
        }
    }
    settings
}

#[test]
fn the_unit_runs_serve_hardened_and_stops_cleanly() {
    let unit = read(&systemd_dir().join(UNIT));
    let service = section(&unit, "Service");
    let one = |key: &str| -> &str {
        match service.get(key).map(Vec::as_slice) {
            Some([value]) => value,
            other => panic!("[Service] {key}= should be set once, is {other:?}"),
        }
    };
    let exec: Vec<&str> = one("ExecStart").split_whitespace().collect();
    assert_eq!(exec[0], INSTALLED_BINARY);
    assert_eq!(
        exec.last(),
        Some(&"serve"),
        "ExecStart must end with the serve command: {exec:?}"
    );
    assert_eq!(one("ExecReload"), "/bin/kill -HUP $MAINPID");
    for (key, value) in [
        ("DynamicUser", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("StateDirectory", "offset-vault"),
        ("Restart", "on-failure"),
        ("KillSignal", "SIGTERM"),
    ] {
        assert_eq!(one(key), value, "[Service] {key}=");
    }
    let stop: u64 = one("TimeoutStopSec")
        .parse()
        .expect("TimeoutStopSec in seconds");
    assert!(
        stop >= 60,
        "TimeoutStopSec={stop}: too short to seal the follower's segment"
    );

    // The example configuration's local store is inside the state directory, the one writable path.
    let config = read(&systemd_dir().join("config.toml"));
    assert!(
        config.contains("store = \"/var/lib/offset-vault/"),
        "config.toml's store is not under the state directory"
    );
    let jobs = check_serve_config("deploy/systemd/config.toml", &config);
    let kinds: Vec<&str> = jobs.iter().map(|(_, kind)| kind.as_str()).collect();
    assert!(
        kinds.contains(&"snapshot"),
        "config.toml schedules no snapshot: {jobs:?}"
    );
}
