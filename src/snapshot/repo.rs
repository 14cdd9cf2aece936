//! Snapshots in a store: layout, writing (manifest last), listing, lookup by id prefix, loading
//! and verification.
//!
//! Layout: `snapshots/date=YYYY-MM-DD/<id>/{offsets.parquet|offsets.json, connectors.json,
//! manifest.json}`. The date folders let a point-in-time lookup list one day, and their Hive-style
//! names let query engines prune an archive by date.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use chrono::{DateTime, NaiveDate, Utc};
use futures::stream::{self, StreamExt};

use super::manifest::{
    date_folder, date_folder_of_prefix, parse_id, sha256_hex, FileEntry, Manifest, CONNECTORS_FILE,
    MANIFEST_FILE,
};
use super::model::SnapshotContent;
use crate::error::{Error, Result};
use crate::format;
use crate::store::{Object, Store};

pub const SNAPSHOTS: &str = "snapshots";

/// Files a snapshot folder may hold besides its manifest's: create-only records written after the
/// snapshot was sealed (`guard-exit-0.json`: how the command run by `guard` ended). They are not
/// part of the snapshot's content and never change it.
pub fn is_sidecar(name: &str) -> bool {
    name.strip_prefix("guard-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|status| !status.is_empty() && !status.contains('/'))
}

/// A snapshot folder found in the store.
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: String,
    pub folder: String,
    /// `None` when the manifest is missing (incomplete snapshot) or unreadable.
    pub manifest: Option<Manifest>,
    /// Why the snapshot is incomplete or unreadable.
    pub problem: Option<String>,
    pub files: Vec<Object>,
}

impl Listed {
    pub fn is_complete(&self) -> bool {
        self.manifest.is_some()
    }
}

/// A verified snapshot with its decoded content.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub manifest: Manifest,
    pub content: SnapshotContent,
}

fn folder_of(manifest: &Manifest) -> String {
    format!(
        "{SNAPSHOTS}/{}/{}",
        date_folder(manifest.meta.created_at),
        manifest.meta.id
    )
}

/// Writes the files, then the manifest with their sizes and SHA-256. Returns the final manifest.
/// `files` must be in the order of `manifest.files`.
pub async fn write(
    store: &Store,
    mut manifest: Manifest,
    files: Vec<(String, Vec<u8>)>,
) -> Result<Manifest> {
    let folder = folder_of(&manifest);
    let mut entries = Vec::new();
    for (name, bytes) in files {
        entries.push(FileEntry {
            name: name.clone(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
        });
        store
            .put_new(&format!("{folder}/{name}"), Bytes::from(bytes))
            .await?;
    }
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let sealed: Vec<&str> = manifest.files.iter().map(|e| e.name.as_str()).collect();
    if names != sealed {
        return Err(Error::Internal(format!(
            "files {names:?} differ from the sealed list {sealed:?}"
        )));
    }
    manifest.files = entries;
    crate::failpoint::hit("snapshot-before-manifest");
    store
        .put_new(
            &format!("{folder}/{MANIFEST_FILE}"),
            Bytes::from(manifest.to_bytes()),
        )
        .await?;
    Ok(manifest)
}

/// Which days to list.
#[derive(Debug, Clone, Copy, Default)]
pub struct DayRange {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

impl DayRange {
    fn contains(&self, folder: &str) -> bool {
        let Some(day) = folder
            .strip_prefix("date=")
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        else {
            return false;
        };
        self.from.is_none_or(|f| day >= f) && self.to.is_none_or(|t| day <= t)
    }
}

/// Lists the snapshots in the given days, newest first, reading each manifest.
pub async fn list(store: &Store, days: DayRange) -> Result<Vec<Listed>> {
    let mut folders: Vec<String> = store
        .folders(SNAPSHOTS)
        .await?
        .into_iter()
        .filter(|f| days.contains(f))
        .collect();
    folders.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = Vec::new();
    for folder in folders {
        out.extend(list_day(store, &folder).await?);
    }
    Ok(out)
}

/// Lists one day folder, newest first.
async fn list_day(store: &Store, folder: &str) -> Result<Vec<Listed>> {
    let prefix = format!("{SNAPSHOTS}/{folder}");
    let mut by_id: BTreeMap<String, Vec<Object>> = BTreeMap::new();
    for obj in store.list(&prefix).await? {
        let rest = obj.key.strip_prefix(&prefix).unwrap_or(&obj.key);
        if let Some((id, _)) = rest.trim_start_matches('/').split_once('/') {
            by_id.entry(id.to_string()).or_default().push(obj);
        }
    }
    let prefix = &prefix;
    let mut listed: Vec<Listed> = stream::iter(by_id.into_iter().rev())
        .map(|(id, files)| async move {
            let has_manifest = files.iter().any(|f| f.key.ends_with(MANIFEST_FILE));
            let (manifest, problem) = if !has_manifest {
                (None, Some("incomplete: no manifest".to_string()))
            } else {
                let key = format!("{prefix}/{id}/{MANIFEST_FILE}");
                match store.get(&key).await {
                    Ok(bytes) => match Manifest::from_bytes(&key, &bytes) {
                        Ok(m) => (Some(m), None),
                        Err(e) => (None, Some(format!("unreadable manifest: {e}"))),
                    },
                    Err(e) => (None, Some(format!("unreadable manifest: {e}"))),
                }
            };
            Listed {
                id,
                folder: folder.to_string(),
                manifest,
                problem,
                files,
            }
        })
        .buffered(16)
        .collect()
        .await;
    listed.sort_by(|a, b| b.id.cmp(&a.id));
    Ok(listed)
}

/// Finds the one complete snapshot whose id starts with `prefix`.
pub async fn resolve(store: &Store, prefix: &str) -> Result<Manifest> {
    if prefix.trim().is_empty() {
        return Err(Error::usage("empty snapshot id"));
    }
    let days = match date_folder_of_prefix(prefix) {
        Some(folder) => {
            let day = NaiveDate::parse_from_str(&folder["date=".len()..], "%Y-%m-%d").ok();
            DayRange { from: day, to: day }
        }
        None => DayRange::default(),
    };
    let matches: Vec<Listed> = list(store, days)
        .await?
        .into_iter()
        .filter(|l| l.id.starts_with(prefix))
        .collect();
    match matches.as_slice() {
        [] => Err(Error::NotFound {
            what: "snapshot",
            name: prefix.to_string(),
            hint: format!(
                " in {}; `offset-vault list` shows the snapshots there",
                store.url()
            ),
        }),
        [one] => match &one.manifest {
            Some(m) => Ok(m.clone()),
            None => Err(Error::Integrity {
                id: one.id.clone(),
                problems: vec![one.problem.clone().unwrap_or_else(|| "incomplete".into())],
            }),
        },
        many => Err(Error::usage(format!(
            "snapshot id prefix {prefix} is ambiguous: it matches {}; give more characters",
            many.iter()
                .map(|l| l.id.as_str())
                .take(5)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The newest complete snapshot created at or before `time` that `keep` accepts. Lists one day
/// at a time, newest first, so only the days needed are read.
pub async fn newest_before(
    store: &Store,
    time: Option<DateTime<Utc>>,
    keep: impl Fn(&Manifest) -> bool,
) -> Result<Option<Manifest>> {
    let mut folders: Vec<String> = store.folders(SNAPSHOTS).await?;
    folders.sort_unstable_by(|a, b| b.cmp(a));
    let last_day = time.map(date_folder);
    for folder in folders {
        if last_day.as_ref().is_some_and(|d| folder > *d) {
            continue;
        }
        // One listing per day; manifests are read newest first, only until one is accepted, and
        // ids newer than `time` are passed over by their name (an id starts with its time).
        let prefix = format!("{SNAPSHOTS}/{folder}");
        let mut ids: BTreeSet<String> = BTreeSet::new();
        for obj in store.list(&prefix).await? {
            let rest = obj.key.strip_prefix(&prefix).unwrap_or(&obj.key);
            if let Some((id, file)) = rest.trim_start_matches('/').split_once('/') {
                if file == MANIFEST_FILE {
                    ids.insert(id.to_string());
                }
            }
        }
        for id in ids.into_iter().rev() {
            let created = parse_id(&id).map(|(t, _)| t);
            if let (Some(t), Some(c)) = (time, created) {
                if c > t {
                    continue;
                }
            }
            let key = format!("{prefix}/{id}/{MANIFEST_FILE}");
            let Ok(m) = store
                .get(&key)
                .await
                .and_then(|bytes| Manifest::from_bytes(&key, &bytes))
            else {
                // An unreadable manifest is not a snapshot to restore; `list` reports it.
                continue;
            };
            if time.is_none_or(|t| m.meta.created_at <= t) && keep(&m) {
                return Ok(Some(m));
            }
        }
    }
    Ok(None)
}

/// Re-reads every file of a snapshot and checks it against the manifest and the id; returns the
/// decoded content when everything matches, and the list of problems otherwise.
pub async fn check(store: &Store, manifest: &Manifest) -> (Option<SnapshotContent>, Vec<String>) {
    let mut problems = Vec::new();
    let id = &manifest.meta.id;
    let expected = manifest.expected_id();
    if &expected != id {
        problems.push(format!(
            "manifest content does not match the id (the manifest was changed after it was written; it implies id {expected})"
        ));
    }
    if parse_id(id).map(|(t, _)| t) != Some(manifest.meta.created_at) {
        problems.push(format!(
            "id {id} does not match created_at {}",
            manifest.meta.created_at
        ));
    }
    let folder = &folder_of(manifest);
    let fetched: Vec<(&FileEntry, Result<Bytes>)> = stream::iter(&manifest.files)
        .map(|f| async move { (f, store.get(&format!("{folder}/{}", f.name)).await) })
        .buffered(4)
        .collect()
        .await;
    let mut files = BTreeMap::new();
    for (entry, got) in fetched {
        match got {
            Err(e) => problems.push(format!("{}: cannot read: {e}", entry.name)),
            Ok(bytes) => {
                let mut ok = true;
                if bytes.len() as u64 != entry.size {
                    ok = false;
                    problems.push(format!(
                        "{}: size {} bytes, manifest says {}",
                        entry.name,
                        bytes.len(),
                        entry.size
                    ));
                }
                let actual = sha256_hex(&bytes);
                if actual != entry.sha256 {
                    ok = false;
                    problems.push(format!(
                        "{}: SHA-256 {actual}, manifest says {}",
                        entry.name, entry.sha256
                    ));
                }
                if ok {
                    files.insert(entry.name.clone(), bytes);
                }
            }
        }
    }
    if !problems.is_empty() {
        return (None, problems);
    }
    match decode(manifest, folder, &files) {
        Ok(content) => (Some(content), problems),
        Err(e) => {
            problems.push(e.to_string());
            (None, problems)
        }
    }
}

fn decode(
    manifest: &Manifest,
    folder: &str,
    files: &BTreeMap<String, Bytes>,
) -> Result<SnapshotContent> {
    let offsets_name = manifest.format.offsets_file();
    let missing = |name: &str| Error::Decode {
        path: format!("{folder}/{name}"),
        detail: "not listed in the manifest".into(),
    };
    let offsets = files
        .get(offsets_name)
        .ok_or_else(|| missing(offsets_name))?;
    let connectors = files
        .get(CONNECTORS_FILE)
        .ok_or_else(|| missing(CONNECTORS_FILE))?;
    let (meta, groups) = format::decode_offsets(
        manifest.format,
        &format!("{folder}/{offsets_name}"),
        offsets.clone(),
    )?;
    let (conn_id, connectors) =
        format::json::decode_connectors(&format!("{folder}/{CONNECTORS_FILE}"), connectors)?;
    let mut problems = Vec::new();
    if meta != manifest.meta {
        problems.push(format!(
            "{offsets_name}: its snapshot metadata differs from the manifest"
        ));
    }
    if conn_id != manifest.meta.id {
        problems.push(format!("{CONNECTORS_FILE}: snapshot id {conn_id} differs"));
    }
    let content = SnapshotContent { groups, connectors };
    let digest = super::manifest::content_sha256(&content);
    if digest != manifest.content_sha256 {
        problems.push(format!(
            "content SHA-256 {digest} differs from the manifest's {}",
            manifest.content_sha256
        ));
    }
    if problems.is_empty() {
        Ok(content)
    } else {
        Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems,
        })
    }
}

/// Loads a snapshot after verifying it; any problem is an integrity error and nothing is returned.
pub async fn load_verified(store: &Store, manifest: &Manifest) -> Result<Loaded> {
    match check(store, manifest).await {
        (Some(content), problems) if problems.is_empty() => Ok(Loaded {
            manifest: manifest.clone(),
            content,
        }),
        (_, problems) => Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems,
        }),
    }
}

/// Verifies a listed snapshot, including one with no or an unreadable manifest.
pub async fn verify_listed(store: &Store, listed: &Listed) -> Vec<String> {
    let Some(manifest) = &listed.manifest else {
        return vec![listed
            .problem
            .clone()
            .unwrap_or_else(|| "incomplete".into())];
    };
    let mut problems = Vec::new();
    if manifest.meta.id != listed.id {
        problems.push(format!(
            "folder {} holds a manifest for id {}",
            listed.id, manifest.meta.id
        ));
    }
    for f in &listed.files {
        let name = f.key.rsplit('/').next().unwrap_or_default();
        if name != MANIFEST_FILE && manifest.file(name).is_none() && !is_sidecar(name) {
            problems.push(format!("{name}: not listed in the manifest"));
        }
    }
    problems.extend(check(store, manifest).await.1);
    problems
}
