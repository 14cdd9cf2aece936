//! Waiting for something to become true. [`eventually`] is the one way the tests and their helpers
//! wait: for a topic's leaders, a connector's state, committed offsets, a file's lines.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long [`eventually`] waits between two checks.
pub const INTERVAL: Duration = Duration::from_millis(250);

/// The outcome of one check: done, with a value, or not yet, with what was seen (shown when the
/// wait times out). `Option` (`None`: not yet) and `Result` (`Err(seen)`: not yet) are checks.
pub trait Check {
    /// The value a finished check yields.
    type Output;
    /// `Ok(value)` when done, `Err(what was seen)` when not yet.
    fn outcome(self) -> Result<Self::Output, String>;
}

impl<T> Check for Option<T> {
    type Output = T;
    fn outcome(self) -> Result<T, String> {
        self.ok_or_else(|| "not yet".to_string())
    }
}

impl<T, E: Display> Check for Result<T, E> {
    type Output = T;
    fn outcome(self) -> Result<T, String> {
        self.map_err(|seen| seen.to_string())
    }
}

/// Runs `check` every [`INTERVAL`] until it is done, and returns its value. After `timeout`,
/// panics with `what` and what the last check saw. A check that meets a failure that will not go
/// away (a connector in state FAILED) panics itself rather than wait for the timeout.
pub async fn eventually<C, F, Fut>(what: &str, timeout: Duration, mut check: F) -> C::Output
where
    C: Check,
    F: FnMut() -> Fut,
    Fut: Future<Output = C>,
{
    let deadline = Instant::now() + timeout;
    loop {
        let seen = match check().await.outcome() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}; last seen: {seen}"
        );
        tokio::time::sleep(INTERVAL).await;
    }
}
