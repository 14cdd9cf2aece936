//! The service's metrics (the book: docs/book, "Metrics and health"), encoded by `prometheus-client` in the
//! Prometheus text format, for `/metrics` and for node_exporter's textfile collector
//! (`--metrics-textfile`, written atomically).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use chrono::{DateTime, Utc};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::error::{Error, Result};

/// The `Content-Type` of `/metrics`.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabel {
    pub job: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RunLabel {
    pub job: String,
    pub outcome: String,
}

/// A failure's job (or `readyz` for the readiness check) and [`Error::cause`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CauseLabel {
    pub job: String,
    pub cause: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TopicLabel {
    pub topic: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabel {
    version: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;
type Histograms = Family<JobLabel, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    // 0.1 s to about 27 minutes.
    Histogram::new(exponential_buckets(0.1, 2.0, 15))
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure { store: bool },
}

impl Outcome {
    /// The outcome of a one-shot command: success only with exit code 0; a failure on the
    /// store counted as such.
    pub fn of(result: &Result<i32>) -> Self {
        match result {
            Ok(code) if *code == crate::error::exit::OK => Outcome::Success,
            Ok(_) => Outcome::Failure { store: false },
            Err(e) => Outcome::Failure {
                store: matches!(e, crate::error::Error::Store { .. }),
            },
        }
    }
}

/// Every metric of the service.
pub struct Metrics {
    registry: Registry,
    pub job_interval: Family<JobLabel, FloatGauge>,
    pub last_success: Family<JobLabel, FloatGauge>,
    pub last_failure: Family<JobLabel, FloatGauge>,
    pub runs: Family<RunLabel, Counter>,
    pub failures: Family<JobLabel, Counter>,
    pub duration: Histograms,
    pub skipped_slots: Family<JobLabel, Counter>,
    pub taken_elsewhere: Family<JobLabel, Counter>,
    pub snapshot_groups: Family<JobLabel, Gauge>,
    pub snapshot_rows: Family<JobLabel, Gauge>,
    pub follower_lag_records: Family<TopicLabel, Gauge>,
    pub follower_lag_seconds: Family<TopicLabel, FloatGauge>,
    pub follower_segments: Family<TopicLabel, Counter>,
    pub follower_rewinds: Family<TopicLabel, Counter>,
    pub store_errors: Family<JobLabel, Counter>,
    pub failures_by_cause: Family<CauseLabel, Counter>,
    pub verify_failures: Counter,
    pub groups_near_expiry: Gauge,
    pub ready: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

pub fn job(name: &str) -> JobLabel {
    JobLabel { job: name.into() }
}

pub fn topic(name: &str) -> TopicLabel {
    TopicLabel { topic: name.into() }
}

fn seconds(t: DateTime<Utc>) -> f64 {
    t.timestamp_millis() as f64 / 1000.0
}

impl Metrics {
    pub fn new() -> Self {
        let mut r = Registry::default();
        let build_info = Family::<VersionLabel, Gauge>::default();
        build_info
            .get_or_create(&VersionLabel {
                version: env!("CARGO_PKG_VERSION").into(),
            })
            .set(1);
        r.register(
            "offset_vault_build_info",
            "The offset-vault version; always 1",
            build_info,
        );
        let m = Metrics {
            job_interval: Family::default(),
            last_success: Family::default(),
            last_failure: Family::default(),
            runs: Family::default(),
            failures: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
            skipped_slots: Family::default(),
            failures_by_cause: Family::default(),
            taken_elsewhere: Family::default(),
            snapshot_groups: Family::default(),
            snapshot_rows: Family::default(),
            follower_lag_records: Family::default(),
            follower_lag_seconds: Family::default(),
            follower_segments: Family::default(),
            follower_rewinds: Family::default(),
            store_errors: Family::default(),
            verify_failures: Counter::default(),
            groups_near_expiry: Gauge::default(),
            ready: Gauge::default(),
            registry: Registry::default(),
        };
        m.register_jobs(&mut r);
        m.register_follower(&mut r);
        m.register_service(&mut r);
        Metrics { registry: r, ..m }
    }

    /// The scheduled jobs' metrics: schedule, runs, outcomes, durations, slots, snapshots.
    fn register_jobs(&self, r: &mut Registry) {
        r.register(
            "offset_vault_job_interval_seconds",
            "The job's interval (cron: the time between its next two instants)",
            self.job_interval.clone(),
        );
        r.register(
            "offset_vault_job_last_success_timestamp_seconds",
            "When the job's last successful run ended",
            self.last_success.clone(),
        );
        r.register(
            "offset_vault_job_last_failure_timestamp_seconds",
            "When the job's last failed run ended",
            self.last_failure.clone(),
        );
        r.register(
            "offset_vault_job_runs",
            "Runs of the job, by outcome (success, failure)",
            self.runs.clone(),
        );
        r.register(
            "offset_vault_job_failures",
            "Failed runs of the job (after their retries)",
            self.failures.clone(),
        );
        r.register(
            "offset_vault_job_duration_seconds",
            "How long the job's runs took, retries included",
            self.duration.clone(),
        );
        r.register(
            "offset_vault_failures_by_cause",
            "Failed tries, by job (readyz: the readiness check) and cause (kafka_unreachable, kafka, connect, store, access_denied, timeout, integrity, usage, other); a run's retries each count",
            self.failures_by_cause.clone(),
        );
        r.register(
            "offset_vault_job_skipped_slots",
            "Slots skipped because the job's last run was still going",
            self.skipped_slots.clone(),
        );
        r.register(
            "offset_vault_job_slots_taken_elsewhere",
            "Slots whose lease another instance held",
            self.taken_elsewhere.clone(),
        );
        r.register(
            "offset_vault_snapshot_groups",
            "Groups in the job's last snapshot",
            self.snapshot_groups.clone(),
        );
        r.register(
            "offset_vault_snapshot_rows",
            "Partitions (rows) in the job's last snapshot",
            self.snapshot_rows.clone(),
        );
    }

    /// The follower's metrics.
    fn register_follower(&self, r: &mut Registry) {
        r.register(
            "offset_vault_follower_lag_records",
            "Records between the archive's end and the log end",
            self.follower_lag_records.clone(),
        );
        r.register(
            "offset_vault_follower_lag_seconds",
            "Age of the oldest record not yet sealed (0 when caught up)",
            self.follower_lag_seconds.clone(),
        );
        r.register(
            "offset_vault_follower_segments_written",
            "Segments the follower sealed",
            self.follower_segments.clone(),
        );
        r.register(
            "offset_vault_follower_rewinds",
            "Commits that moved an offset backwards",
            self.follower_rewinds.clone(),
        );
    }

    /// The store, verification, expiry and readiness metrics.
    fn register_service(&self, r: &mut Registry) {
        r.register(
            "offset_vault_store_errors",
            "Runs that failed on the store",
            self.store_errors.clone(),
        );
        r.register(
            "offset_vault_verify_failures",
            "Snapshots or segments that failed verification",
            self.verify_failures.clone(),
        );
        r.register(
            "offset_vault_groups_near_expiry",
            "Empty groups within the expiry margin (last expiry-guard run)",
            self.groups_near_expiry.clone(),
        );
        r.register(
            "offset_vault_ready",
            "What /readyz last answered: 1 ready, 0 not",
            self.ready.clone(),
        );
    }

    /// Records a job's schedule.
    pub fn set_interval(&self, name: &str, seconds: f64) {
        self.job_interval.get_or_create(&job(name)).set(seconds);
    }

    /// Records the end of a run.
    pub fn record_run(&self, name: &str, outcome: Outcome, took: Duration, ended: DateTime<Utc>) {
        let label = job(name);
        self.duration
            .get_or_create(&label)
            .observe(took.as_secs_f64());
        let word = match outcome {
            Outcome::Success => {
                self.last_success.get_or_create(&label).set(seconds(ended));
                "success"
            }
            Outcome::Failure { store } => {
                self.last_failure.get_or_create(&label).set(seconds(ended));
                self.failures.get_or_create(&label).inc();
                if store {
                    self.store_errors.get_or_create(&label).inc();
                }
                "failure"
            }
        };
        self.runs
            .get_or_create(&RunLabel {
                job: name.into(),
                outcome: word.into(),
            })
            .inc();
    }

    /// Counts one failed try of `job` (a run's try, a lease, the follower, `readyz`) by its cause.
    pub fn record_failure(&self, job: &str, error: &Error) {
        self.failures_by_cause
            .get_or_create(&CauseLabel {
                job: job.into(),
                cause: error.cause().into(),
            })
            .inc();
    }

    /// Forgets a job removed by a reload (its series go away).
    pub fn forget_job(&self, name: &str) {
        let label = job(name);
        self.job_interval.remove(&label);
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// Writes `text` to `path` for node_exporter's textfile collector: into `PATH.tmp.<pid>` in the
/// same directory, fsynced, then renamed over `path` (and the directory fsynced), so the
/// collector never reads half a file.
pub fn write_textfile(path: &Path, text: &str) -> Result<()> {
    let err = |what: &str, e: std::io::Error| {
        Error::Internal(format!(
            "--metrics-textfile {}: {what}: {e}",
            path.display()
        ))
    };
    let name = path.file_name().ok_or_else(|| {
        Error::usage(format!(
            "--metrics-textfile {}: not a file name",
            path.display()
        ))
    })?;
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err("write the temporary file", e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err("rename the temporary file", e)
    })?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The metrics of a one-shot command (`snapshot`, `prune`, `follow --once`) under the job name
/// `job`, written to `path` when one is given.
pub fn one_shot_textfile(
    path: Option<&Path>,
    name: &str,
    outcome: Outcome,
    took: Duration,
    fill: impl FnOnce(&Metrics),
) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let m = Metrics::new();
    m.record_run(name, outcome, took, Utc::now());
    fill(&m);
    write_textfile(path, &m.encode())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_appear_only_once_something_happened() {
        let m = Metrics::new();
        let text = m.encode();
        assert!(
            text.contains("offset_vault_build_info{version=\""),
            "{text}"
        );
        assert!(!text.contains("offset_vault_job_last_success_timestamp_seconds{"));
        let ended = DateTime::parse_from_rfc3339("2026-12-04T10:00:05.250Z")
            .unwrap()
            .with_timezone(&Utc);
        m.record_run(
            "hourly",
            Outcome::Success,
            Duration::from_millis(1500),
            ended,
        );
        m.record_run(
            "hourly",
            Outcome::Failure { store: true },
            Duration::from_secs(2),
            ended,
        );
        m.set_interval("hourly", 3600.0);
        let unreachable = Error::KafkaUnreachable {
            bootstrap: "127.0.0.1:1".into(),
            detail: "Connection refused".into(),
        };
        m.record_failure("hourly", &unreachable);
        m.record_failure("hourly", &unreachable);
        m.record_failure("readyz", &Error::Internal("?".into()));
        let text = m.encode();
        for line in [
            "offset_vault_job_last_success_timestamp_seconds{job=\"hourly\"} 1796378405.25",
            "offset_vault_job_last_failure_timestamp_seconds{job=\"hourly\"} 1796378405.25",
            "offset_vault_job_runs_total{job=\"hourly\",outcome=\"success\"} 1",
            "offset_vault_job_runs_total{job=\"hourly\",outcome=\"failure\"} 1",
            "offset_vault_job_failures_total{job=\"hourly\"} 1",
            "offset_vault_store_errors_total{job=\"hourly\"} 1",
            "offset_vault_job_duration_seconds_count{job=\"hourly\"} 2",
            "offset_vault_job_interval_seconds{job=\"hourly\"} 3600.0",
            "offset_vault_ready 0",
            "offset_vault_failures_by_cause_total{job=\"hourly\",cause=\"kafka_unreachable\"} 2",
            "offset_vault_failures_by_cause_total{job=\"readyz\",cause=\"other\"} 1",
            "offset_vault_verify_failures_total 0",
            "# TYPE offset_vault_job_duration_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }

    #[test]
    fn the_textfile_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("offset_vault.prom");
        write_textfile(&path, "a 1\n").unwrap();
        write_textfile(&path, "b 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b 2\n");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        let e = write_textfile(&dir.path().join("no/such/dir/x.prom"), "").unwrap_err();
        assert!(e.to_string().contains("--metrics-textfile"), "{e}");
    }
}
