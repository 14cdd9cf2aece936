//! `/metrics`, `/healthz` and `/readyz` over HTTP (axum).
//!
//! `/healthz` answers 200 while the scheduler's loop turns (it beats every second); `/readyz`
//! answers 200 when the last check reached Kafka (its metadata) and the store (a listing), else
//! 503 with the reason; a check is made at most every [`READY_EVERY`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::sync::{watch, Mutex};

use super::jobs::Shared;
use crate::error::{Error, Result};

/// The longest a readiness answer is reused.
pub const READY_EVERY: Duration = Duration::from_secs(5);
/// The loop is taken for stuck when it has not beaten for this long.
const HEALTHY_WITHIN: Duration = Duration::from_secs(30);

/// What the HTTP handlers read.
#[derive(Debug)]
pub struct Health {
    pub shared: Arc<Shared>,
    /// The scheduler's last beat.
    pub beat: std::sync::Mutex<Instant>,
    /// The last readiness check: when, and the reason it failed (`None`: ready).
    ready: Mutex<Option<(Instant, Option<String>)>>,
}

impl Health {
    pub fn new(shared: Arc<Shared>) -> Self {
        Health {
            shared,
            beat: std::sync::Mutex::new(Instant::now()),
            ready: Mutex::new(None),
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

    /// Checks Kafka and the store (at most every [`READY_EVERY`]); `None` when both answer.
    pub async fn readiness(&self) -> Option<String> {
        let mut last = self.ready.lock().await;
        if let Some((at, why)) = last.as_ref() {
            if at.elapsed() < READY_EVERY {
                return why.clone();
            }
        }
        let why = self.check().await.err().map(|e| e.to_string());
        self.shared.metrics.ready.set(i64::from(why.is_none()));
        *last = Some((Instant::now(), why.clone()));
        why
    }

    async fn check(&self) -> Result<()> {
        let bound = self.shared.timeout.min(Duration::from_secs(10));
        let timed_out = |what: &str| {
            Error::Internal(format!(
                "{what} did not answer within {}",
                humantime::format_duration(bound)
            ))
        };
        let kafka = async {
            let k = self.shared.kafka().await?;
            k.metadata().await.map(|_| ())
        };
        tokio::time::timeout(bound, kafka)
            .await
            .map_err(|_| timed_out("Kafka"))?
            .map_err(|e| Error::Internal(format!("Kafka: {e}")))?;
        let store = self.shared.store(None)?;
        tokio::time::timeout(bound, store.folders(super::lease::PREFIX))
            .await
            .map_err(|_| timed_out("the store"))?
            .map_err(|e| Error::Internal(format!("the store: {e}")))?;
        Ok(())
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
    match h.readiness().await {
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
        .with_state(health);
    tracing::info!("metrics and health on http://{addr}/ (/metrics, /healthz, /readyz)");
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
