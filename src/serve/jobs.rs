//! The jobs `serve` runs: what each kind does in one run, and the retries of a failed run.
//!
//! A new kind is a variant of [`Work`] and an arm of [`Work::run`]; the scheduler, leases,
//! retries and metrics are the same for every kind.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use tokio::sync::watch;

use super::lease;
use super::metrics::{self, Metrics, Outcome};
use super::schedule::{retry_waits, Schedule};
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, KafkaSettings};
use crate::retention::PruneOptions;
use crate::snapshot::repo::{self, DayRange};
use crate::snapshot::CaptureOptions;
use crate::store::Store;

/// How many times a failed run is tried within its slot.
pub const TRIES: u32 = 3;

/// What a job does.
#[derive(Debug, Clone)]
pub enum Work {
    /// `snapshot` with these options.
    Snapshot(CaptureOptions),
    /// `prune --execute` with these options; also deletes leases older than 7 days.
    Prune(PruneOptions),
    /// `verify` of the complete snapshots created within this long before the run.
    Verify { within: Duration },
    /// `expiring`: the expiry guard (report and snapshot the Empty groups whose offsets the
    /// broker is about to expire).
    Expiry(crate::expiry::ExpiryOptions),
}

impl Work {
    /// The kind, as the configuration file names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Work::Snapshot(_) => "snapshot",
            Work::Prune(_) => "prune",
            Work::Verify { .. } => "verify",
            Work::Expiry(_) => "expiry-guard",
        }
    }
}

/// A scheduled job.
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    pub schedule: Schedule,
    /// The job's store URL; `None`: the global store.
    pub store: Option<String>,
    pub work: Work,
}

impl Job {
    /// A description that changes when anything of the job changes (to see what a reload
    /// changed).
    pub fn fingerprint(&self) -> String {
        format!("{} {:?} {:?}", self.schedule, self.store, self.work)
    }
}

/// Job names become metric labels and lease keys: letters, digits, `-`, `_`, `.`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "job name \"{name}\": use 1 to 64 letters, digits, '-', '_' or '.' (it names the job's metrics and leases)"
        )))
    }
}

/// What every job shares: the connections, the metrics, the instance's id.
#[derive(Debug)]
pub struct Shared {
    pub settings: KafkaSettings,
    kafka: tokio::sync::Mutex<Option<KafkaClient>>,
    /// Why Kafka does not answer, while a connection waits or since one failed (`None` once
    /// one succeeds): what `/readyz` and a skipped slot say.
    kafka_trouble: Arc<std::sync::Mutex<Option<String>>>,
    pub connect: Vec<ConnectClient>,
    pub store_url: String,
    pub timeout: Duration,
    pub metrics: Metrics,
    pub holder: String,
    /// Written after every run when set (`serve --metrics-textfile`).
    pub textfile: Option<std::path::PathBuf>,
    /// The signing key and trusted keys every job's store uses.
    pub keys: std::sync::Arc<crate::sign::Keys>,
}

impl Shared {
    pub fn new(
        settings: KafkaSettings,
        connect: Vec<ConnectClient>,
        store_url: String,
        timeout: Duration,
        textfile: Option<std::path::PathBuf>,
    ) -> Self {
        Shared {
            settings,
            kafka: tokio::sync::Mutex::new(None),
            kafka_trouble: Default::default(),
            connect,
            store_url,
            timeout,
            metrics: Metrics::new(),
            holder: lease::holder_id(),
            textfile,
            keys: Default::default(),
        }
    }

    /// The Kafka client, connected on first use (a broker that is away at start is not fatal).
    /// `who` (`job snapshot slot ...`) names the caller in the log: a connection that meets
    /// an error is logged at once with the error, not only when the timeout ends the wait.
    pub async fn kafka(&self, who: &str) -> Result<KafkaClient> {
        let mut held = self.lock_kafka(who).await;
        if let Some(k) = held.as_ref() {
            return Ok(k.clone());
        }
        let (trouble, who_, bootstrap) = (
            self.kafka_trouble.clone(),
            who.to_string(),
            self.settings.bootstrap.clone(),
        );
        let wait = humantime::format_duration(self.settings.timeout);
        let connected = KafkaClient::connect_watched(self.settings.clone(), move |why| {
            let why = format!("no answer yet from {bootstrap}: {why}");
            tracing::warn!("{who_}: Kafka: {why}; still trying, for up to {wait}");
            set(&trouble, Some(why));
        })
        .await;
        match connected {
            Ok(k) => {
                set(&self.kafka_trouble, None);
                *held = Some(k.clone());
                Ok(k)
            }
            Err(e) => {
                set(&self.kafka_trouble, Some(e.to_string()));
                Err(e)
            }
        }
    }

    /// The client's lock; while another caller holds it (connecting), says once a second what
    /// the connection has met so far, if it changed.
    async fn lock_kafka(&self, who: &str) -> tokio::sync::MutexGuard<'_, Option<KafkaClient>> {
        let lock = self.kafka.lock();
        tokio::pin!(lock);
        let mut told = None;
        loop {
            tokio::select! {
                held = &mut lock => return held,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {
                    let now = self.kafka_trouble();
                    if now.is_some() && now != told {
                        tracing::warn!(
                            "{who}: waits for Kafka: {}",
                            now.as_deref().unwrap_or_default()
                        );
                        told = now;
                    }
                }
            }
        }
    }

    /// Why Kafka does not answer (see [`Shared::kafka`]), without the word Kafka: `no answer yet
    /// from HOST:PORT: ...` while a connection waits, the error once one failed; `None` when
    /// nothing is known wrong.
    pub fn kafka_trouble(&self) -> Option<String> {
        self.kafka_trouble.lock().ok().and_then(|t| t.clone())
    }

    /// Records that Kafka answered (the readiness check's metadata request).
    pub fn kafka_answered(&self) {
        set(&self.kafka_trouble, None);
    }

    /// Drops the Kafka client after a failure, so that the next run connects anew (a restarted
    /// broker is then met with fresh connections).
    pub async fn forget_kafka(&self) {
        self.kafka.lock().await.take();
    }

    /// The store of a job.
    pub fn store(&self, url: Option<&str>) -> Result<Store> {
        Ok(Store::open(url.unwrap_or(&self.store_url), self.timeout)?.with_keys(self.keys.clone()))
    }

    /// Writes the metrics file, if there is one; a failure is logged, not fatal.
    pub fn write_textfile(&self) {
        if let Some(path) = &self.textfile {
            if let Err(e) = metrics::write_textfile(path, &self.metrics.encode()) {
                tracing::warn!("{e}");
            }
        }
    }
}

fn set(slot: &std::sync::Mutex<Option<String>>, value: Option<String>) {
    if let Ok(mut s) = slot.lock() {
        *s = value;
    }
}

/// What one run did, for the log and the metrics.
#[derive(Debug, Default)]
pub struct Report {
    pub summary: String,
    /// A snapshot's groups and rows.
    pub snapshot: Option<(u64, u64)>,
}

fn store_failure(e: &Error) -> bool {
    matches!(e, Error::Store { .. })
}

impl Work {
    /// One run, without retries.
    /// `who` names the run in the log (`job NAME slot T`).
    async fn run(
        &self,
        who: &str,
        shared: &Shared,
        store: &Store,
        now: DateTime<Utc>,
    ) -> Result<Report> {
        match self {
            Work::Snapshot(opts) => snapshot(who, shared, store, opts).await,
            Work::Prune(opts) => prune(store, opts, now).await,
            Work::Verify { within } => verify(shared, store, *within, now).await,
            Work::Expiry(opts) => expiry(who, shared, store, opts).await,
        }
    }
}

async fn snapshot(
    who: &str,
    shared: &Shared,
    store: &Store,
    opts: &CaptureOptions,
) -> Result<Report> {
    let kafka = shared.kafka(who).await?;
    let (m, _warnings) = crate::snapshot::take(store, &kafka, &shared.connect, opts).await?;
    Ok(Report {
        summary: format!(
            "snapshot {}: {} group(s), {} partition(s), {} connector(s)",
            m.meta.id, m.summary.groups, m.summary.partitions, m.summary.connectors
        ),
        snapshot: Some((m.summary.groups as u64, m.summary.partitions as u64)),
    })
}

async fn prune(store: &Store, opts: &PruneOptions, now: DateTime<Utc>) -> Result<Report> {
    let prepared = crate::retention::prepare(store, opts, now).await?;
    let pruned = crate::retention::execute(store, &prepared).await;
    let leases = lease::prune(store, now, lease::KEEP_LEASES).await?;
    let failed = pruned.failed.len() + pruned.log_failures().len();
    if failed > 0 {
        return Err(Error::store(
            store.url(),
            format!("{failed} object(s) could not be deleted; the next prune goes on"),
        ));
    }
    let refused = prepared.plan.refused().count();
    if refused > 0 {
        return Err(Error::usage(format!(
            "prune refused {refused} group(s) of which the policy keeps nothing (nothing of them deleted); check the job's keep-* settings"
        )));
    }
    Ok(Report {
        summary: format!(
            "pruned {} snapshot(s), {} log segment(s), {leases} old lease(s)",
            pruned.deleted.len(),
            [&pruned.log, &pruned.connect_log]
                .into_iter()
                .flatten()
                .map(|l| l.segments.len())
                .sum::<usize>()
        ),
        snapshot: None,
    })
}

/// Verifies the snapshots of the last `within`; with trusted keys configured, a snapshot no
/// trusted key signed fails too, as in `verify --all`.
async fn verify(
    shared: &Shared,
    store: &Store,
    within: Duration,
    now: DateTime<Utc>,
) -> Result<Report> {
    let from = now - TimeDelta::from_std(within).unwrap_or(TimeDelta::MAX);
    let days = DayRange {
        from: Some(from.date_naive()),
        to: None,
    };
    let listed = repo::list(store, days).await?;
    let mut checked = 0;
    let mut failed = Vec::new();
    // Incomplete snapshots may be being written; prune removes old ones.
    for l in listed.iter().filter(|l| {
        l.manifest
            .as_ref()
            .is_some_and(|m| m.meta.created_at >= from)
    }) {
        checked += 1;
        let mut problems = repo::verify_listed(store, l).await;
        if store.keys().enforcing() || matches!(l.signature, crate::sign::Verdict::Invalid { .. }) {
            problems.extend(l.signature.refusal());
        }
        if !problems.is_empty() {
            shared.metrics.verify_failures.inc();
            failed.push(format!("{}: {}", l.id, problems.join("; ")));
        }
    }
    if !failed.is_empty() {
        return Err(Error::Internal(format!(
            "{} of {checked} snapshot(s) failed verification: {}",
            failed.len(),
            failed.join(" | ")
        )));
    }
    Ok(Report {
        summary: format!("verified {checked} snapshot(s)"),
        snapshot: None,
    })
}

async fn expiry(
    who: &str,
    shared: &Shared,
    store: &Store,
    opts: &crate::expiry::ExpiryOptions,
) -> Result<Report> {
    let kafka = shared.kafka(who).await?;
    let report = crate::expiry::guard(&kafka, store, &shared.connect, opts).await?;
    shared
        .metrics
        .groups_near_expiry
        .set(report.groups.len() as i64);
    for g in &report.groups {
        tracing::warn!(
            "group {} expires at {} (retention {}); to bring it back: {}",
            g.group,
            g.expires_at.format("%Y-%m-%dT%H:%M:%SZ"),
            humantime::format_duration(report.retention),
            g.restore_hint
        );
    }
    for w in &report.warnings {
        tracing::warn!("expiry guard: {w}");
    }
    Ok(Report {
        summary: format!(
            "{} group(s) near expiry{}",
            report.groups.len(),
            report
                .snapshot_id
                .as_ref()
                .map(|id| format!(", snapshot {id}"))
                .unwrap_or_default()
        ),
        snapshot: None,
    })
}

/// Runs `job`'s slot (whose lease this instance holds), retrying a failure within the slot
/// unless `stop` is set, and records the outcome.
pub async fn run_slot(
    job: Arc<Job>,
    shared: Arc<Shared>,
    slot: DateTime<Utc>,
    stop: watch::Receiver<bool>,
) {
    let started = Instant::now();
    let waits = retry_waits(job.schedule.slot_length(slot), TRIES);
    let mut attempt = 0;
    let who = format!("job {} slot {slot}", job.name);
    let outcome = loop {
        let result = match shared.store(job.store.as_deref()) {
            Ok(store) => job.work.run(&who, &shared, &store, Utc::now()).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(report) => {
                tracing::info!("job {} slot {slot}: {}", job.name, report.summary);
                if let Some((groups, rows)) = report.snapshot {
                    let l = metrics::job(&job.name);
                    shared
                        .metrics
                        .snapshot_groups
                        .get_or_create(&l)
                        .set(groups as i64);
                    shared
                        .metrics
                        .snapshot_rows
                        .get_or_create(&l)
                        .set(rows as i64);
                }
                break Outcome::Success;
            }
            Err(e) => {
                shared.metrics.record_failure(&job.name, &e);
                let store = store_failure(&e);
                if !store {
                    shared.forget_kafka().await;
                }
                let stopped = *stop.borrow();
                match waits.get(attempt) {
                    Some(wait) if !stopped => {
                        tracing::warn!(
                            "job {} slot {slot}: try {} of {TRIES} failed: {e}; trying again in {}",
                            job.name,
                            attempt + 1,
                            humantime::format_duration(*wait)
                        );
                        attempt += 1;
                        let mut stop = stop.clone();
                        tokio::select! {
                            _ = tokio::time::sleep(*wait) => {}
                            _ = stop.wait_for(|s| *s) => {}
                        }
                    }
                    _ => {
                        tracing::error!("job {} slot {slot} failed: {e}", job.name);
                        break Outcome::Failure { store };
                    }
                }
            }
        }
    };
    shared
        .metrics
        .record_run(&job.name, outcome, started.elapsed(), Utc::now());
    shared.write_textfile();
}

/// The follower's settings.
#[derive(Debug, Clone)]
pub struct FollowJob {
    pub opts: crate::log::follow::FollowOptions,
    pub store: Option<String>,
}

/// The follower as a long-running task: restarted with a growing pause (1 s to 1 min) when it
/// fails, until `stop` is set; then what it holds is sealed.
pub async fn run_follower(
    mut spec: FollowJob,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    const JOB: &str = "follow";
    let mut pause = Duration::from_secs(1);
    let progress = Arc::new(crate::log::progress::FollowProgress::default());
    spec.opts.progress = Some(progress.clone());
    let mut applied = BTreeMap::new();
    loop {
        let stopped = *stop.borrow();
        if stopped {
            break;
        }
        let started = Instant::now();
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let result = async {
            let kafka = shared.kafka("follower").await?;
            let store = shared.store(spec.store.as_deref())?;
            let run = crate::log::follow::follow(
                &kafka,
                &store,
                &shared.connect,
                &spec.opts,
                flag.clone(),
            );
            tokio::pin!(run);
            let mut stop = stop.clone();
            let mut tick = tokio::time::interval(Duration::from_secs(5));
            let ended = loop {
                tokio::select! {
                    done = &mut run => break Some(done),
                    _ = stop.wait_for(|s| *s) => break None,
                    _ = tick.tick() => {
                        apply_progress(&shared.metrics, &progress, &mut applied);
                        shared.write_textfile();
                    }
                }
            };
            match ended {
                Some(done) => done,
                None => {
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                    run.await
                }
            }
        }
        .await;
        let m = &shared.metrics;
        apply_progress(m, &progress, &mut applied);
        match result {
            Ok(done) => {
                tracing::info!(
                    "follower stopped: {} segment(s), {} record(s) archived",
                    done.segments.len(),
                    done.records
                );
                m.record_run(JOB, Outcome::Success, started.elapsed(), Utc::now());
                pause = Duration::from_secs(1);
            }
            Err(e) => {
                m.record_failure(JOB, &e);
                tracing::error!(
                    "follower failed: {e}; starting again in {}",
                    humantime::format_duration(pause)
                );
                m.record_run(
                    JOB,
                    Outcome::Failure {
                        store: store_failure(&e),
                    },
                    started.elapsed(),
                    Utc::now(),
                );
            }
        }
        shared.write_textfile();
        let stopped = *stop.borrow();
        if stopped {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        pause = (pause * 2).min(Duration::from_secs(60));
    }
}

/// Brings the follower's metrics up to its progress: the counters by what they gained since
/// `applied`, the lag gauges to the last report.
fn apply_progress(
    m: &Metrics,
    progress: &crate::log::progress::FollowProgress,
    applied: &mut BTreeMap<String, (u64, u64)>,
) {
    for (topic, lane) in progress.now() {
        let label = metrics::topic(&topic);
        let (segments, rewinds) = applied.get(&topic).copied().unwrap_or_default();
        m.follower_segments
            .get_or_create(&label)
            .inc_by(lane.segments.saturating_sub(segments));
        m.follower_rewinds
            .get_or_create(&label)
            .inc_by(lane.rewinds.saturating_sub(rewinds));
        m.follower_lag_records
            .get_or_create(&label)
            .set(lane.lag_records);
        m.follower_lag_seconds
            .get_or_create(&label)
            .set(lane.lag_seconds);
        applied.insert(topic, (lane.segments, lane.rewinds));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_labels_and_keys() {
        for ok in ["snapshot", "hourly-all", "prune_1", "a.b"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/b", "with space", ".hidden", "ä", &"x".repeat(65)] {
            let e = check_name(bad).unwrap_err();
            assert_eq!(e.exit_code(), crate::error::exit::USAGE, "{bad}");
        }
    }
}
