//! Leases: at most one run of a job's slot, however many instances share the store.
//!
//! Before it runs slot S of job J an instance creates, create-only, the object
//! `serve/leases/<J>/<S as YYYYMMDDTHHMMSSZ>.json`; whoever creates it runs the slot, everybody
//! else counts the slot as taken elsewhere. The guarantee rests on the store's create-only
//! write: atomic on a local store (a hard link that fails when the name exists) and on S3 with
//! `If-None-Match: *`. For a server that checks the condition before it writes rather than
//! atomically, the lease is also read back after [`CONFIRM_AFTER`]: an instance whose lease was
//! overwritten by another's in the meantime gives the slot up. A crashed holder's slot is lost;
//! the next slot is free. The prune job deletes leases older than [`KEEP_LEASES`].

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::schedule::slot_key;
use crate::error::{Error, Result};
use crate::store::Store;

/// Where the leases are.
pub const PREFIX: &str = "serve/leases/";
/// How long leases are kept.
pub const KEEP_LEASES: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long after writing a lease on a remote store it is read back.
pub const CONFIRM_AFTER: Duration = Duration::from_millis(300);
/// The format of a lease object.
pub const LEASE_FORMAT_VERSION: &str = "1";

/// A lease: who runs a job's slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub format_version: String,
    pub job: String,
    pub slot: DateTime<Utc>,
    /// The instance: unique per process start.
    pub holder: String,
    pub host: String,
    pub pid: u32,
    pub taken_at: DateTime<Utc>,
    /// The end of the slot: the next slot's lease is free whatever became of this run.
    pub expires_at: DateTime<Utc>,
}

/// The outcome of taking a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// This instance runs the slot.
    Ours,
    /// Another instance holds it (its lease, when it could be read).
    Elsewhere(Option<Box<Lease>>),
}

/// An instance's id: host, pid and start time, unique enough to tell instances apart.
pub fn holder_id() -> String {
    format!(
        "{}-{}-{}",
        host_name(),
        std::process::id(),
        Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
    )
}

/// The host name, or `unknown`.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The key of a job's slot's lease.
pub fn key(job: &str, slot: DateTime<Utc>) -> String {
    format!("{PREFIX}{job}/{}.json", slot_key(slot))
}

/// The slot of a lease key, if it is one.
pub fn slot_of_key(key: &str) -> Option<DateTime<Utc>> {
    let name = key.strip_prefix(PREFIX)?.rsplit('/').next()?;
    let stamp = name.strip_suffix(".json")?;
    NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ")
        .ok()
        .map(|t| t.and_utc())
}

/// The leases to delete of those listed: older than `keep` before `now` (pure).
pub fn expired(keys: &[String], now: DateTime<Utc>, keep: Duration) -> Vec<&str> {
    let cutoff = now - TimeDelta::from_std(keep).unwrap_or(TimeDelta::MAX);
    keys.iter()
        .filter(|k| slot_of_key(k).is_some_and(|s| s < cutoff))
        .map(String::as_str)
        .collect()
}

impl Lease {
    pub fn new(
        job: &str,
        slot: DateTime<Utc>,
        length: Duration,
        holder: &str,
        now: DateTime<Utc>,
    ) -> Self {
        Lease {
            format_version: LEASE_FORMAT_VERSION.into(),
            job: job.into(),
            slot,
            holder: holder.into(),
            host: host_name(),
            pid: std::process::id(),
            taken_at: now,
            expires_at: slot + TimeDelta::from_std(length).unwrap_or_default(),
        }
    }
}

/// Reads a lease; `None` when it is missing or not a lease.
pub async fn read(store: &Store, key: &str) -> Result<Option<Lease>> {
    match store.get(key).await {
        Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        Err(Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Takes the lease of `lease.job`'s slot, create-only. `confirm`: read it back after
/// [`CONFIRM_AFTER`] (for stores whose create-only write may not be atomic).
pub async fn take(store: &Store, lease: &Lease, confirm: bool) -> Result<Taken> {
    let key = key(&lease.job, lease.slot);
    let body = serde_json::to_vec_pretty(lease)
        .map_err(|e| Error::Internal(format!("encode the lease {key}: {e}")))?;
    if let Err(e) = store.put_new(&key, Bytes::from(body)).await {
        // put_new refuses an existing key; any other failure leaves no object behind.
        return match read(store, &key).await {
            Ok(Some(other)) => Ok(Taken::Elsewhere(Some(Box::new(other)))),
            Ok(None) if store.exists(&key).await.unwrap_or(false) => Ok(Taken::Elsewhere(None)),
            _ => Err(e),
        };
    }
    if confirm {
        tokio::time::sleep(CONFIRM_AFTER).await;
        match read(store, &key).await? {
            Some(got) if got.holder == lease.holder => {}
            other => {
                tracing::warn!(
                    "the lease {key} was overwritten by another instance ({}): the store did not refuse a second create-only write; this instance leaves the slot to it",
                    other.as_ref().map(|l| l.holder.as_str()).unwrap_or("unreadable")
                );
                return Ok(Taken::Elsewhere(other.map(Box::new)));
            }
        }
    }
    Ok(Taken::Ours)
}

/// Deletes the leases older than `keep`; returns how many.
pub async fn prune(store: &Store, now: DateTime<Utc>, keep: Duration) -> Result<usize> {
    let keys: Vec<String> = store
        .list(PREFIX)
        .await?
        .into_iter()
        .map(|o| o.key)
        .collect();
    let old = expired(&keys, now, keep);
    for k in &old {
        store.delete(k).await?;
    }
    Ok(old.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn keys_name_job_and_slot_and_parse_back() {
        let slot = t("2026-12-04T10:05:00Z");
        let k = key("hourly-all", slot);
        assert_eq!(k, "serve/leases/hourly-all/20261204T100500Z.json");
        assert_eq!(slot_of_key(&k), Some(slot));
        for bad in [
            "serve/leases/a/notatime.json",
            "serve/leases/a/20261204T100500Z.txt",
            "snapshots/a/20261204T100500Z.json",
        ] {
            assert_eq!(slot_of_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_leases_older_than_the_window_expire() {
        let now = t("2026-12-11T12:00:00Z");
        let keys: Vec<String> = [
            "serve/leases/a/20261204T115959Z.json",
            "serve/leases/a/20261204T120000Z.json",
            "serve/leases/b/20261101T000000Z.json",
            "serve/leases/b/20261211T115500Z.json",
            "serve/leases/b/README",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            expired(&keys, now, KEEP_LEASES),
            [
                "serve/leases/a/20261204T115959Z.json",
                "serve/leases/b/20261101T000000Z.json"
            ]
        );
    }

    #[tokio::test]
    async fn a_slot_is_taken_once_on_a_local_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), Duration::from_secs(5)).unwrap();
        let slot = t("2026-12-04T10:05:00Z");
        let now = Utc::now();
        let a = Lease::new("j", slot, Duration::from_secs(5), "a", now);
        let b = Lease::new("j", slot, Duration::from_secs(5), "b", now);
        let (ra, rb) = tokio::join!(take(&store, &a, false), take(&store, &b, false));
        let outcomes = [ra.unwrap(), rb.unwrap()];
        let ours = outcomes.iter().filter(|o| **o == Taken::Ours).count();
        assert_eq!(ours, 1, "{outcomes:?}");
        let held = read(&store, &key("j", slot)).await.unwrap().unwrap();
        let loser = if outcomes[0] == Taken::Ours { &b } else { &a };
        assert_ne!(held.holder, loser.holder);
        assert!(outcomes.contains(&Taken::Elsewhere(Some(Box::new(held)))));
        assert_eq!(
            prune(&store, slot + TimeDelta::days(8), KEEP_LEASES)
                .await
                .unwrap(),
            1
        );
        assert!(!store.exists(&key("j", slot)).await.unwrap());
    }
}
