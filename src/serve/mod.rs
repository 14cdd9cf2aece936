//! `offset-vault serve`: the follower, scheduled snapshots, prune and verify in one process,
//! with Prometheus metrics and health over HTTP.
//!
//! - [`schedule`]: slots of intervals and cron expressions, overlaps, retries (pure).
//! - [`lease`]: the create-only lease of each job's slot in the store (at most once per slot).
//! - [`jobs`]: what each kind of job does in a run, and the follower as a long-running task.
//! - [`metrics`]: the metrics (`prometheus-client`) and the node_exporter textfile writer.
//! - [`http`]: `/metrics`, `/healthz`, `/readyz`.
//!
//! This module is the loop: one task per job, the follower, and the signals. SIGTERM and SIGINT
//! stop taking new runs, let a running one finish (a snapshot is listed only once its manifest
//! is written, which is its last write), seal the follower's segments, and return. SIGHUP
//! reloads the jobs (added, removed, changed; a bad file keeps the jobs as they are).

pub mod http;
pub mod jobs;
pub mod lease;
pub mod metrics;
pub mod schedule;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use jobs::{FollowJob, Job, Shared};
use lease::{Lease, Taken};
use schedule::Step;

/// Everything `serve` runs.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Where `/metrics`, `/healthz` and `/readyz` are served (`None`: no HTTP server).
    pub listen: Option<SocketAddr>,
    pub jobs: Vec<Job>,
    pub follow: Option<FollowJob>,
}

impl Plan {
    /// Refuses a plan with nothing to do, or two jobs of one name.
    pub fn check(&self) -> Result<()> {
        if self.jobs.is_empty() && self.follow.is_none() {
            return Err(Error::usage(
                "serve has no job: add one with --snapshot-every DURATION (with a selection such as --all-groups), --prune-every DURATION (with --keep-*), --verify-every DURATION, --expiry-every DURATION or --follow, or in the [serve.jobs.NAME] tables of the configuration file",
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for j in &self.jobs {
            jobs::check_name(&j.name)?;
            if j.name == "follow" {
                return Err(Error::usage(
                    "job name \"follow\" is the follower's: configure it in [serve.follow]",
                ));
            }
            if !seen.insert(j.name.as_str()) {
                return Err(Error::usage(format!(
                    "two jobs are named \"{}\" (a flag's job takes its kind as its name: snapshot, prune, verify)",
                    j.name
                )));
            }
        }
        Ok(())
    }
}

/// Re-reads the configuration for SIGHUP.
pub type Reloader = Box<dyn Fn() -> Result<Plan> + Send + Sync>;

/// A job's task and the switch that stops it.
struct Running {
    job: Arc<Job>,
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

struct Follower {
    spec: FollowJob,
    stop: watch::Sender<bool>,
    handle: JoinHandle<()>,
}

fn start_job(job: Job, shared: &Arc<Shared>) -> Running {
    let job = Arc::new(job);
    let (stop, rx) = watch::channel(false);
    let handle = tokio::spawn(job_loop(job.clone(), shared.clone(), rx));
    Running { job, stop, handle }
}

fn start_follower(spec: FollowJob, shared: &Arc<Shared>) -> Follower {
    let (stop, rx) = watch::channel(false);
    tracing::info!(
        "follower on: group {}, segments every {}",
        spec.opts.group,
        humantime::format_duration(spec.opts.interval)
    );
    let handle = tokio::spawn(jobs::run_follower(spec.clone(), shared.clone(), rx));
    Follower { spec, stop, handle }
}

/// One job: take the lease of each slot and run it, skip a slot that comes while the last run
/// is still going. Returns after `stop` once its running run (if any) has finished.
async fn job_loop(job: Arc<Job>, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    tracing::info!("job {} ({}): {}", job.name, job.work.kind(), job.schedule);
    let mut handled = None;
    let mut running: Option<JoinHandle<()>> = None;
    while !*stop.borrow() {
        if running.as_ref().is_some_and(|h| h.is_finished()) {
            running = None;
        }
        let now = Utc::now();
        shared
            .metrics
            .set_interval(&job.name, job.schedule.interval_seconds(now));
        match schedule::step(&job.schedule, handled, running.is_some(), now) {
            Step::WaitUntil(t) => {
                let wait = (t - now + TimeDelta::milliseconds(1))
                    .to_std()
                    .unwrap_or_default();
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.changed() => {}
                }
            }
            Step::Skip(slot) => {
                handled = Some(slot);
                shared
                    .metrics
                    .skipped_slots
                    .get_or_create(&metrics::job(&job.name))
                    .inc();
                let waits = shared
                    .kafka_trouble()
                    .map(|why| format!(" (it waits for Kafka: {why})"))
                    .unwrap_or_default();
                tracing::warn!(
                    "job {} slot {slot} skipped: its last run is still going{waits}",
                    job.name
                );
            }
            Step::Run(slot) => {
                handled = Some(slot);
                running = take_and_run(&job, &shared, slot, &stop).await;
            }
        }
    }
    if let Some(h) = running {
        tracing::info!("job {}: waiting for its running run to end", job.name);
        let _ = h.await;
    }
}

/// Takes the slot's lease; when it is this instance's, starts the run.
async fn take_and_run(
    job: &Arc<Job>,
    shared: &Arc<Shared>,
    slot: chrono::DateTime<Utc>,
    stop: &watch::Receiver<bool>,
) -> Option<JoinHandle<()>> {
    let length = job.schedule.slot_length(slot);
    let lease = Lease::new(&job.name, slot, length, &shared.holder, Utc::now());
    let taken = match shared.store(job.store.as_deref()) {
        Ok(store) => lease::take(&store, &lease, !is_local(store.url())).await,
        Err(e) => Err(e),
    };
    match taken {
        Ok(Taken::Ours) => {
            tracing::debug!("job {} slot {slot}: lease taken", job.name);
            // The library's futures are not all `Send` (higher-ranked lifetimes in some of
            // them): the run gets a thread of its own that drives it on the runtime.
            let (job, shared, stop) = (job.clone(), shared.clone(), stop.clone());
            let handle = tokio::runtime::Handle::current();
            Some(tokio::task::spawn_blocking(move || {
                handle.block_on(jobs::run_slot(job, shared, slot, stop))
            }))
        }
        Ok(Taken::Elsewhere(other)) => {
            shared
                .metrics
                .taken_elsewhere
                .get_or_create(&metrics::job(&job.name))
                .inc();
            tracing::info!(
                "job {} slot {slot}: taken by {}",
                job.name,
                other
                    .map(|l| l.holder)
                    .unwrap_or_else(|| "another instance".into())
            );
            None
        }
        Err(e) => {
            tracing::error!("job {} slot {slot}: cannot take its lease: {e}", job.name);
            shared.metrics.record_failure(&job.name, &e);
            shared.metrics.record_run(
                &job.name,
                metrics::Outcome::Failure {
                    store: matches!(e, Error::Store { .. }),
                },
                Duration::ZERO,
                Utc::now(),
            );
            shared.write_textfile();
            None
        }
    }
}

fn is_local(url: &str) -> bool {
    !url.contains("://") || url.starts_with("file://")
}

/// Runs `plan` until SIGTERM or SIGINT; SIGHUP calls `reload` and applies what changed.
pub async fn run(plan: Plan, shared: Arc<Shared>, reload: Option<Reloader>) -> Result<()> {
    plan.check()?;
    use tokio::signal::unix::{signal, SignalKind};
    let sig = |k: SignalKind, name: &str| {
        signal(k).map_err(|e| Error::Internal(format!("cannot listen for {name}: {e}")))
    };
    let (mut term, mut int, mut hup) = (
        sig(SignalKind::terminate(), "SIGTERM")?,
        sig(SignalKind::interrupt(), "SIGINT")?,
        sig(SignalKind::hangup(), "SIGHUP")?,
    );
    let health = Arc::new(http::Health::new(shared.clone()));
    let (http_stop, http_rx) = watch::channel(false);
    let server = match plan.listen {
        Some(addr) => Some(http::serve(addr, health.clone(), http_rx).await?),
        None => None,
    };
    let mut running: BTreeMap<String, Running> = BTreeMap::new();
    for job in plan.jobs.clone() {
        running.insert(job.name.clone(), start_job(job, &shared));
    }
    let mut follower = plan.follow.clone().map(|f| start_follower(f, &shared));
    shared.write_textfile();
    let listen = plan.listen;
    let why = loop {
        health.beat();
        tokio::select! {
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
            _ = hup.recv() => {
                let Some(reload) = reload.as_ref() else { continue };
                match reload().and_then(|p| p.check().map(|_| p)) {
                    Ok(new) => {
                        if new.listen != listen {
                            tracing::warn!("reload: a new listen address takes a restart; still on {listen:?}");
                        }
                        apply(&mut running, &mut follower, new, &shared).await;
                    }
                    Err(e) => tracing::error!("reload failed, the jobs stay as they were: {e}"),
                }
            }
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    };
    tracing::info!("{why}: no new runs; waiting for running runs, sealing the follower");
    crate::noteln!("{why}: stopping (running runs finish, the follower seals what it holds)");
    for r in running.values() {
        let _ = r.stop.send(true);
    }
    if let Some(f) = &follower {
        let _ = f.stop.send(true);
    }
    for (_, r) in running {
        let _ = r.handle.await;
    }
    if let Some(f) = follower {
        let _ = f.handle.await;
    }
    shared.write_textfile();
    let _ = http_stop.send(true);
    if let Some(s) = server {
        let _ = s.await;
    }
    Ok(())
}

/// What a reload changed, in words (pure).
pub fn changes(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, print) in new {
        match old.get(name) {
            None => out.push(format!("added {name}")),
            Some(p) if p != print => out.push(format!("changed {name}")),
            Some(_) => {}
        }
    }
    for name in old.keys().filter(|n| !new.contains_key(*n)) {
        out.push(format!("removed {name}"));
    }
    out
}

/// Applies a reloaded plan: jobs added, removed or changed are started or stopped (a stopped
/// job's running run finishes on its own); a changed follower is sealed and started again.
async fn apply(
    running: &mut BTreeMap<String, Running>,
    follower: &mut Option<Follower>,
    plan: Plan,
    shared: &Arc<Shared>,
) {
    let old: BTreeMap<String, String> = running
        .iter()
        .map(|(n, r)| (n.clone(), r.job.fingerprint()))
        .collect();
    let new: BTreeMap<String, String> = plan
        .jobs
        .iter()
        .map(|j| (j.name.clone(), j.fingerprint()))
        .collect();
    let changed = changes(&old, &new);
    for job in plan.jobs {
        if old.get(&job.name) == Some(&job.fingerprint()) {
            continue;
        }
        if let Some(r) = running.remove(&job.name) {
            let _ = r.stop.send(true);
        }
        shared.metrics.forget_job(&job.name);
        running.insert(job.name.clone(), start_job(job, shared));
    }
    let gone: Vec<String> = running
        .keys()
        .filter(|n| !new.contains_key(*n))
        .cloned()
        .collect();
    for name in gone {
        if let Some(r) = running.remove(&name) {
            let _ = r.stop.send(true);
            shared.metrics.forget_job(&name);
        }
    }
    let follow_changed = match (follower.as_ref(), plan.follow.as_ref()) {
        (None, None) => false,
        (Some(f), Some(n)) => format!("{:?}", f.spec) != format!("{n:?}"),
        _ => true,
    };
    if follow_changed {
        if let Some(f) = follower.take() {
            let _ = f.stop.send(true);
            let _ = f.handle.await;
        }
        *follower = plan.follow.map(|f| start_follower(f, shared));
    }
    if changed.is_empty() && !follow_changed {
        tracing::info!("reload: nothing changed");
    } else {
        let follow = if follow_changed {
            "; follower changed"
        } else {
            ""
        };
        tracing::warn!("reload: {}{follow}", changed.join(", "));
        crate::noteln!("reload: {}{follow}", changed.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_says_what_changed() {
        let m = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let cases = [
            (m(&[("a", "1")]), m(&[("a", "1")]), vec![]),
            (
                m(&[("a", "1"), ("b", "1")]),
                m(&[("a", "2"), ("c", "1")]),
                vec!["changed a", "added c", "removed b"],
            ),
            (m(&[]), m(&[("x", "1")]), vec!["added x"]),
        ];
        for (old, new, want) in cases {
            assert_eq!(changes(&old, &new), want);
        }
    }

    #[test]
    fn a_plan_without_jobs_says_which_flags_add_one() {
        let e = Plan::default().check().unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
        for flag in [
            "--snapshot-every",
            "--prune-every",
            "--verify-every",
            "--follow",
            "[serve.jobs.NAME]",
        ] {
            assert!(e.to_string().contains(flag), "{flag}: {e}");
        }
    }
}
