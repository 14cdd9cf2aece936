//! `serve` with the broker away: its runs fail and are counted, /readyz says not ready while
//! /healthz stays up, and after the broker is back it is ready again and its runs succeed.

use std::time::Duration;

use crate::support::follower::{commit, topic_with};
use crate::support::ov::local_store;
use crate::support::poll::eventually;
use crate::support::serve::{self, free_port, scrape, value};
use crate::support::services::{start_service, stop_service, Service};
use crate::support::{env, unique_name};
use crate::{Revive, SERIAL};

#[tokio::test(flavor = "multi_thread")]
async fn broker_stopped_failures_count_up_and_readyz_says_not_ready() {
    if !env::require_kafka() || !env::require_python() {
        return;
    }
    let _serial = SERIAL.lock().await;
    let topic = topic_with("serve-fault", 4).await;
    let group = unique_name("serve-fault-g");
    commit(&group, &topic, 2).await;
    let (_dir, store) = local_store();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut s = serve::start(
        &store,
        &[
            "--snapshot-every",
            "3s",
            "--group",
            &group,
            "--listen",
            &listen,
        ],
        &[],
    );
    let job = [("job", "snapshot")];
    let failures = |samples: &[serve::Sample]| {
        value(samples, "offset_vault_job_failures_total", &job).unwrap_or(0.0)
    };
    let first = eventually("a first success", Duration::from_secs(30), || async {
        serve::get(port, "/healthz").await?;
        let (samples, _) = scrape(port).await;
        value(
            &samples,
            "offset_vault_job_last_success_timestamp_seconds",
            &job,
        )
    })
    .await;
    assert_eq!(serve::get(port, "/readyz").await.map(|r| r.0), Some(200));

    let revive = Revive(Service::Kafka);
    stop_service(Service::Kafka).await;
    let (before, _) = scrape(port).await;
    let failed_before = failures(&before);
    let success_before = value(
        &before,
        "offset_vault_job_last_success_timestamp_seconds",
        &job,
    )
    .unwrap();
    assert!(success_before >= first);
    eventually("failed runs counted", Duration::from_secs(90), || async {
        let (samples, _) = scrape(port).await;
        let f = failures(&samples);
        let last = value(
            &samples,
            "offset_vault_job_last_failure_timestamp_seconds",
            &job,
        );
        (f >= failed_before + 2.0 && last.is_some()).then_some(())
    })
    .await;
    let (code, body) = eventually(
        "/readyz to say not ready",
        Duration::from_secs(30),
        || async { serve::get(port, "/readyz").await.filter(|r| r.0 == 503) },
    )
    .await;
    assert!(body.contains("not ready: Kafka"), "{code} {body}");
    assert_eq!(
        serve::get(port, "/healthz").await,
        Some((200, "ok\n".into()))
    );
    let (samples, _) = scrape(port).await;
    assert_eq!(value(&samples, "offset_vault_ready", &[]), Some(0.0));
    let runs_failed = value(
        &samples,
        "offset_vault_job_runs_total",
        &[("job", "snapshot"), ("outcome", "failure")],
    );
    assert_eq!(runs_failed, Some(failures(&samples)));
    assert!(
        s.alive(),
        "serve goes on with the broker away:\n{}",
        s.stderr()
    );

    start_service(Service::Kafka).await;
    drop(revive);
    eventually(
        "/readyz to say ready again",
        Duration::from_secs(120),
        || async { serve::get(port, "/readyz").await.filter(|r| r.0 == 200) },
    )
    .await;
    eventually(
        "a success after the restart",
        Duration::from_secs(120),
        || async {
            let (samples, _) = scrape(port).await;
            let t = value(
                &samples,
                "offset_vault_job_last_success_timestamp_seconds",
                &job,
            )?;
            (t > success_before).then_some(())
        },
    )
    .await;
    serve::stop(s).await;
}
