//! `offset-vault follow`: archive `__consumer_offsets` as sealed segments, continuously or once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::output::print_json;
use super::Cli;
use crate::commands::follow::FollowArgs;
use crate::config::OutputFormat;
use crate::error::Result;
use crate::kafka::KafkaClient;
use crate::log::follow::{follow, Followed, NO_COMMIT_YET};
use crate::serve::metrics::{self, one_shot_textfile, Outcome};

pub(super) const EXAMPLES: &str = "\
Examples:
  # Keep archiving every commit (a Deployment or a systemd service); SIGTERM seals and exits 0
  offset-vault --store s3://backups/offsets follow

  # Archive every commit written since the last run, then exit (a CronJob or a timer)
  offset-vault --store s3://backups/offsets follow --once

  # Two or more followers with one --group-id split the partitions between them
  offset-vault --store s3://backups/offsets follow --group-id offset-vault-follower

  # Also archive Kafka Connect's offsets topic (source connectors' positions)
  offset-vault --store s3://backups/offsets --connect-url http://connect:8083 \
    follow --connect-offsets-topic connect-offsets

The follower reads __consumer_offsets with read_committed (aborted transactional commits never
appear). Each partition starts where the archive of it ends (the log start on the first run,
recorded with a base snapshot of the groups); a segment is sealed when its oldest record has
waited --segment-interval: log/date=YYYY-MM-DD/partition=NN/<start>-<next>-<sha>.parquet, then
its index entry log/index/partition=NN/<start>.json, then the group's position is committed. A
follower killed at any point resumes with no gap and no duplicate. Where the log no longer holds
the archive's end, the skipped offsets are recorded as a gap, a restore into which is refused.
It needs DESCRIBE and READ on the topic __consumer_offsets and READ on its group.

On a new cluster where no group has committed yet, __consumer_offsets does not exist (the broker
creates it at the first commit): the follower waits for it and then archives as usual; with
--once it says so, archives nothing and exits 0.

With --connect-offsets-topic, a second consumer (group <GROUP>.connect) archives Connect's offsets
topic the same way under connect-log/, so `restore --at` also puts source connectors back to
their position at the instant; it needs DESCRIBE and READ on that topic and READ on that group.
Connect's REST API does not say the topic's name: it is the workers' offset.storage.topic.";

/// Sets `stop` on SIGTERM or Ctrl-C.
fn stop_on_signal(stop: Arc<AtomicBool>) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!("cannot listen for SIGTERM: {e}");
                        let _ = tokio::signal::ctrl_c().await;
                        stop.store(true, Ordering::SeqCst);
                        return;
                    }
                };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("stopping: sealing what is held");
        stop.store(true, Ordering::SeqCst);
    });
}

pub async fn cmd_follow(cli: &Cli, args: &FollowArgs) -> Result<i32> {
    let started = std::time::Instant::now();
    let mut followed = None;
    let result = run(cli, args, &mut followed).await;
    let outcome = Outcome::of(&result);
    let topic = args.follower.connect_offsets_topic.clone();
    one_shot_textfile(
        args.metrics_textfile.as_deref(),
        "follow",
        outcome,
        started.elapsed(),
        |m| {
            let Some(done) = &followed else { return };
            let t = metrics::topic(crate::log::follow::OFFSETS_TOPIC);
            m.follower_segments
                .get_or_create(&t)
                .inc_by(done.segments.len() as u64);
            m.follower_rewinds.get_or_create(&t).inc_by(done.rewinds);
            if let (Some(c), Some(topic)) = (&done.connect, &topic) {
                let t = metrics::topic(topic);
                m.follower_segments
                    .get_or_create(&t)
                    .inc_by(c.segments.len() as u64);
                m.follower_rewinds.get_or_create(&t).inc_by(c.rewinds);
            }
        },
    )?;
    result
}

async fn run(cli: &Cli, args: &FollowArgs, followed: &mut Option<Followed>) -> Result<i32> {
    let mut opts =
        args.follower
            .options(args.once, args.groups.clone(), args.group_pattern.clone())?;
    let settings = cli.global.kafka_settings()?;
    let store = cli.global.open_store()?;
    opts.audit = Some(super::audit::auditor(cli, store.clone())?);
    let kafka = KafkaClient::connect(settings).await?;
    let connect = cli.global.connect_clients()?;
    let stop = Arc::new(AtomicBool::new(false));
    stop_on_signal(stop.clone());
    if !args.once {
        crate::noteln!(
            "following __consumer_offsets into {} as group {} (segments every {}); SIGTERM seals and exits",
            store.url(),
            opts.group,
            humantime::format_duration(opts.interval)
        );
    }
    let done = follow(&kafka, &store, &connect, &opts, stop).await?;
    let done = followed.insert(done);
    if done.topic_absent {
        // Nothing to archive is no failure: the run ends as any run that found nothing new.
        crate::noteln!("{NO_COMMIT_YET}; nothing to archive");
    }
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "store": store.url(),
            "topic_exists": !done.topic_absent,
            "segments": done.segments,
            "records": done.records,
            "ignored": done.ignored,
            "unknown": done.unknown,
            "gaps": done.gaps,
            "lost": done.lost,
            "rewinds": done.rewinds,
            "base_snapshot": done.base_snapshot,
            "warnings": done.warnings,
            "connect": done.connect.as_ref().map(|c| json!({
                "topic": args.follower.connect_offsets_topic,
                "segments": c.segments,
                "records": c.records,
                "unknown": c.unknown,
                "gaps": c.gaps,
                "lost": c.lost,
                "base_snapshot": c.base_snapshot,
                "warnings": c.warnings,
            })),
        })),
        OutputFormat::Table => print_followed(done, args, store.url()),
    }
    Ok(crate::error::exit::OK)
}

/// What a run archived, for people; its warnings on stderr.
fn print_followed(done: &Followed, args: &FollowArgs, store: &str) {
    for w in &done.warnings {
        crate::alertln!("warning: {w}");
    }
    crate::outln!(
        "{} segment(s), {} record(s) archived to {} ({} not needed, {} unknown){}",
        done.segments.len(),
        done.records,
        store,
        done.ignored,
        done.unknown,
        done.base_snapshot
            .as_ref()
            .map(|id| format!("; base snapshot {id}"))
            .unwrap_or_default()
    );
    if let Some(c) = &done.connect {
        for w in &c.warnings {
            crate::alertln!("warning: {w}");
        }
        crate::outln!(
            "{} segment(s), {} record(s) of {} archived ({} unknown)",
            c.segments.len(),
            c.records,
            args.follower
                .connect_offsets_topic
                .as_deref()
                .unwrap_or_default(),
            c.unknown
        );
    }
}
