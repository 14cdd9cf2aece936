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
