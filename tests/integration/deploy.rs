//! What `deploy/` ships, checked with the tools that consume it (no Kafka needed):
//! - the Prometheus alerting rules with `promtool check rules` and `promtool test rules`
//!   (`prometheus.rs`);
//! - the systemd unit with `systemd-analyze verify` and `systemd-analyze security` (`systemd.rs`);
//! - the Helm chart with `helm lint` and `helm template`, its rendered manifests read back and held
//!   against the `serve` contract: probe paths and port, arguments, the PrometheusRule taken from
//!   the rule file, the CronJobs' concurrency policy (`helm.rs`).
//!
//! A missing tool is a loud skip, or a failure under CI (see `support/tools.rs`).

mod helm;
mod prometheus;
mod systemd;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::tools::repo_dir;

/// From the `serve` contract: the default port of --listen, and the HTTP paths.
const METRICS_PORT: u64 = 9464;
const HEALTHZ: &str = "/healthz";
const READYZ: &str = "/readyz";
const METRICS_PATH: &str = "/metrics";

/// The job kinds of a [serve.jobs.NAME] table, and the keys such a table may hold (the contract's
/// kind, every/cron, store, the snapshot selection and tags, the prune --keep-* policy).
const JOB_KINDS: &[&str] = &["snapshot", "prune", "verify", "expiry-guard"];
const JOB_KEYS: &[&str] = &[
    "kind",
    "every",
    "cron",
    "store",
    "all-groups",
    "groups",
    "group-pattern",
    "all-connectors",
    "connectors",
    "topics",
    "tags",
    "format",
    "keep-last",
    "keep-hourly",
    "keep-daily",
    "keep-weekly",
    "keep-monthly",
    "keep-yearly",
    "keep-within",
    "keep-tag",
];
const SERVE_KEYS: &[&str] = &["listen", "jobs", "follow"];
const FOLLOW_KEYS: &[&str] = &["enabled", "group-id", "segment-interval"];

fn deploy_dir() -> PathBuf {
    repo_dir().join("deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn yaml_file(path: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&read(path))
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

fn keys(table: &toml::Table) -> BTreeSet<&str> {
    table.keys().map(String::as_str).collect()
}

/// Checks a configuration file shipped in `deploy/` against the contract's [serve] section: known
/// keys only, a known kind per job, exactly one of `every` (a humantime duration) and `cron`.
/// Returns the job names with their kinds.
fn check_serve_config(what: &str, text: &str) -> Vec<(String, String)> {
    let config: toml::Table =
        toml::from_str(text).unwrap_or_else(|e| panic!("{what} is not TOML: {e}"));
    let serve = config
        .get("serve")
        .and_then(toml::Value::as_table)
        .unwrap_or_else(|| panic!("{what} has no [serve] section"));
    let unknown: Vec<_> = keys(serve)
        .difference(&SERVE_KEYS.iter().copied().collect())
        .copied()
        .collect();
    assert!(
        unknown.is_empty(),
        "{what}: unknown [serve] keys {unknown:?}"
    );
    if let Some(follow) = serve.get("follow").and_then(toml::Value::as_table) {
        let unknown: Vec<_> = keys(follow)
            .difference(&FOLLOW_KEYS.iter().copied().collect())
            .copied()
            .collect();
        assert!(
            unknown.is_empty(),
            "{what}: unknown [serve.follow] keys {unknown:?}"
        );
    }
    let jobs = serve
        .get("jobs")
        .and_then(toml::Value::as_table)
        .unwrap_or_else(|| panic!("{what} has no [serve.jobs.*] tables"));
    let allowed: BTreeSet<&str> = JOB_KEYS.iter().copied().collect();
    jobs.iter()
        .map(|(name, job)| {
            let job = job
                .as_table()
                .unwrap_or_else(|| panic!("{what}: serve.jobs.{name} is not a table"));
            let unknown: Vec<_> = keys(job).difference(&allowed).copied().collect();
            assert!(
                unknown.is_empty(),
                "{what}: unknown keys {unknown:?} in serve.jobs.{name}"
            );
            let kind = job
                .get("kind")
                .and_then(toml::Value::as_str)
                .unwrap_or_default();
            assert!(
                JOB_KINDS.contains(&kind),
                "{what}: serve.jobs.{name} has kind {kind:?}, not one of {JOB_KINDS:?}"
            );
            match (job.get("every"), job.get("cron")) {
                (Some(every), None) => {
                    let every = every.as_str().unwrap_or_default();
                    humantime::parse_duration(every).unwrap_or_else(|e| {
                        panic!("{what}: serve.jobs.{name}.every = {every:?}: {e}")
                    });
                }
                (None, Some(_)) => {}
                _ => panic!("{what}: serve.jobs.{name} needs exactly one of `every` and `cron`"),
            }
            (name.clone(), kind.to_string())
        })
        .collect()
}

#[test]
fn the_config_check_refuses_what_the_contract_does_not_know() {
    let good = "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"5m\"\n";
    assert_eq!(
        check_serve_config("good", good),
        vec![("a".to_string(), "snapshot".to_string())]
    );
    for bad in [
        "[serve.jobs.a]\nkind = \"snapshots\"\nevery = \"5m\"\n",
        "[serve.jobs.a]\nkind = \"snapshot\"\n",
        "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"5m\"\ncron = \"0 * * * * *\"\n",
        "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"5 minutes or so\"\n",
        "[serve.jobs.a]\nkind = \"prune\"\nevery = \"1h\"\nkeep-dayly = 3\n",
        "[serve]\nlisten = \"0.0.0.0:9464\"\nport = 1\n[serve.jobs.a]\nkind = \"prune\"\nevery = \"1h\"\n",
    ] {
        let refused = std::panic::catch_unwind(|| check_serve_config("bad", bad)).is_err();
        assert!(refused, "the check accepted:\n{bad}");
    }
}
