//! `/metrics`, `/healthz` and `/readyz` over HTTP (axum).
//!
//! `/healthz` answers 200 while the scheduler's loop turns (it beats every second). `/readyz`
//! answers at once from what is known: 503 with the reason while Kafka does not answer (a
//! connection that meets an error says so within about a second, long before its timeout),
//! 503 until the first check of Kafka (its metadata) and the store (a listing) has passed, and
//! after a check that failed; 200 otherwise. The checks run in the background, one
//! [`READY_EVERY`] after the last ended; each failed part is counted in
//! `offset_vault_failures_by_cause_total{job="readyz"}`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::sync::watch;

use super::jobs::Shared;
use crate::error::{Error, Result};

/// The pause between two readiness checks.
pub const READY_EVERY: Duration = Duration::from_secs(5);
/// The loop is taken for stuck when it has not beaten for this long.
const HEALTHY_WITHIN: Duration = Duration::from_secs(30);
/// What `/readyz` says before the first check has ended.
pub const FIRST_CHECK: &str = "the first check of Kafka and the store has not ended yet";

/// What the HTTP handlers read.
#[derive(Debug)]
pub struct Health {
    pub shared: Arc<Shared>,
    /// The scheduler's last beat.
    pub beat: std::sync::Mutex<Instant>,
    /// Why the last check failed (`None`: it passed; before the first, [`FIRST_CHECK`]).
    checked: std::sync::Mutex<Option<String>>,
}

impl Health {
    pub fn new(shared: Arc<Shared>) -> Self {
        Health {
            shared,
            beat: std::sync::Mutex::new(Instant::now()),
            checked: std::sync::Mutex::new(Some(FIRST_CHECK.into())),
        }
    }

    pub fn beat(&self) {
        if let Ok(mut b) = self.beat.lock() {
            *b = Instant::now();
        }
    }

    fn healthy(&self) -> bool {
        self.beat
            .lock()
            .map(|b| b.elapsed() < HEALTHY_WITHIN)
            .unwrap_or(false)
    }

    /// Why the service is not ready (`None`: ready), without waiting: Kafka's trouble as soon
    /// as a connection meets it, else the last check's answer.
    pub fn readiness(&self) -> Option<String> {
        let why = self
            .shared
            .kafka_trouble()
            .map(|t| format!("Kafka: {t}"))
            .or_else(|| {
                self.checked
                    .lock()
                    .map(|c| c.clone())
                    .unwrap_or_else(|_| Some("the readiness state is unreadable".into()))
            });
        self.shared.metrics.ready.set(i64::from(why.is_none()));
        why
    }

    /// Checks Kafka and the store every [`READY_EVERY`] until `stop`; a change of readiness
    /// is logged.
    pub async fn check_loop(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut was = Some(FIRST_CHECK.to_string());
        while !*stop.borrow() {
            let why = self.check().await;
            if let Ok(mut c) = self.checked.lock() {
                c.clone_from(&why);
            }
            let now = self.readiness();
            if now != was {
                match &now {
                    None => tracing::info!("ready: Kafka and the store answer"),
                    Some(why) => tracing::warn!("not ready: {why}"),
                }
                was = now;
            }
            tokio::select! {
                _ = tokio::time::sleep(READY_EVERY) => {}
                _ = stop.wait_for(|s| *s) => {}
            }
        }
    }

    /// One check of Kafka and the store, side by side; the reasons of the parts that failed.
    async fn check(&self) -> Option<String> {
        let (kafka, store) = tokio::join!(self.check_kafka(), self.check_store());
        let mut why = Vec::new();
        for (part, result) in [("Kafka", kafka), ("the store", store)] {
            if let Err(e) = result {
                self.shared.metrics.record_failure("readyz", &e);
                why.push(format!("{part}: {e}"));
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// A connection (which waits up to --timeout, saying why meanwhile), then a metadata
    /// request within at most 10 s.
    async fn check_kafka(&self) -> Result<()> {
        let k = self.shared.kafka("readiness check").await?;
        let bound = self.shared.timeout.min(Duration::from_secs(10));
        match tokio::time::timeout(bound, k.metadata()).await {
            Ok(Ok(_)) => {
                self.shared.kafka_answered();
                Ok(())
            }
            Ok(Err(e)) => {
                self.shared.forget_kafka().await;
                Err(e)
            }
            Err(_) => {
                self.shared.forget_kafka().await;
                Err(Error::Timeout {
                    service: "Kafka",
                    op: "metadata".into(),
                    after: bound,
                    detail: format!("no answer from {}", self.shared.settings.bootstrap),
                })
            }
        }
    }

    /// A listing of the leases' folder within at most 10 s.
    async fn check_store(&self) -> Result<()> {
        let bound = self.shared.timeout.min(Duration::from_secs(10));
        let store = self.shared.store(None)?;
        match tokio::time::timeout(bound, store.folders(super::lease::PREFIX)).await {
            Ok(listed) => listed.map(|_| ()),
            Err(_) => Err(Error::Timeout {
                service: "the store",
                op: "a listing".into(),
                after: bound,
                detail: format!("no answer from {}", store.url()),
            }),
        }
    }
}

async fn metrics(State(h): State<Arc<Health>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, super::metrics::CONTENT_TYPE)],
        h.shared.metrics.encode(),
    )
}

async fn healthz(State(h): State<Arc<Health>>) -> impl IntoResponse {
    if h.healthy() {
        (StatusCode::OK, "ok\n".to_string())
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "the scheduler's loop has stopped turning\n".to_string(),
        )
    }
}

async fn readyz(State(h): State<Arc<Health>>) -> impl IntoResponse {
    match h.readiness() {
        None => (StatusCode::OK, "ready\n".to_string()),
        Some(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

/// Binds `addr` (an error names it) and serves until `stop` is set.
pub async fn serve(
    addr: SocketAddr,
    health: Arc<Health>,
    mut stop: watch::Receiver<bool>,
) -> Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::usage(format!("--listen {addr}: cannot listen there: {e}")))?;
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(health.clone());
    tracing::info!("metrics and health on http://{addr}/ (/metrics, /healthz, /readyz)");
    tokio::spawn(health.clone().check_loop(stop.clone()));
    Ok(tokio::spawn(async move {
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::error!("the HTTP server stopped: {e}");
        }
    }))
}
