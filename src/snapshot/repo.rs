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

use super::manifest::ContentHasher;
use super::manifest::{
    date_folder, date_folder_of_prefix, parse_id, sha256_hex, FileEntry, Manifest, CONNECTORS_FILE,
    MANIFEST_FILE,
};
use super::model::{ConnectorSnapshot, GroupSnapshot, SnapshotContent};
use crate::error::{Error, Result};
use crate::format;
use crate::sign::{Purpose, Verdict};
use crate::store::{Fetched, LocalFile, Object, Store};

pub const SNAPSHOTS: &str = "snapshots";
/// The manifest's detached signature.
pub const MANIFEST_SIG: &str = "manifest.json.sig";

/// Files a snapshot folder may hold besides its manifest's: the manifest's detached signature
/// (`manifest.json.sig`), and create-only records written after the snapshot was sealed
/// (`guard-exit-0.json`: how the command run by `guard` ended). They are not part of the
/// snapshot's content and never change it.
pub fn is_sidecar(name: &str) -> bool {
    if name == MANIFEST_SIG {
        return true;
    }
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
    /// Who signed the manifest, as far as the configured keys tell.
    pub signature: Verdict,
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

/// The folder of a snapshot in the store.
pub(crate) fn folder_of(manifest: &Manifest) -> String {
    format!(
        "{SNAPSHOTS}/{}/{}",
        date_folder(manifest.meta.created_at),
        manifest.meta.id
    )
}

/// The body of a file to write.
pub enum FileBody<'a> {
    Bytes(Vec<u8>),
    /// A local file, with the size and SHA-256 it was written with.
    Local {
        path: &'a std::path::Path,
        size: u64,
        sha256: String,
    },
}

/// A writer that counts and hashes what goes through it.
pub struct HashingWriter<W: std::io::Write> {
    inner: W,
    size: u64,
    hasher: sha2::Sha256,
}

impl<W: std::io::Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        use sha2::Digest;
        HashingWriter {
            inner,
            size: 0,
            hasher: sha2::Sha256::new(),
        }
    }

    /// Flushes, and returns the size and the hex SHA-256 of everything written.
    pub fn finish(mut self) -> std::io::Result<(u64, String)> {
        use sha2::Digest;
        self.inner.flush()?;
        Ok((self.size, hex::encode(self.hasher.finalize())))
    }
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the files, then the manifest with their sizes and SHA-256. Returns the final manifest.
/// `files` must be in the order of `manifest.files`.
pub async fn write(
    store: &Store,
    mut manifest: Manifest,
    files: Vec<(String, FileBody<'_>)>,
) -> Result<Manifest> {
    let folder = folder_of(&manifest);
    let mut entries = Vec::new();
    for (name, body) in files {
        let key = format!("{folder}/{name}");
        let (size, sha256) = match body {
            FileBody::Bytes(bytes) => {
                let entry = (bytes.len() as u64, sha256_hex(&bytes));
                store.put_new(&key, Bytes::from(bytes)).await?;
                entry
            }
            FileBody::Local { path, size, sha256 } => {
                store.put_new_file(&key, path).await?;
                (size, sha256)
            }
        };
        entries.push(FileEntry { name, size, sha256 });
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
        .put_new_signed(
            &format!("{folder}/{MANIFEST_FILE}"),
            Bytes::from(manifest.to_bytes()),
            Purpose::SnapshotManifest,
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

/// The verdict on a manifest's signature; a signature that cannot be read is an invalid one.
async fn judge_manifest(store: &Store, key: &str, bytes: &[u8]) -> Verdict {
    store
        .judge(key, bytes, Purpose::SnapshotManifest)
        .await
        .unwrap_or_else(|e| Verdict::Invalid {
            key_id: None,
            problem: format!("cannot read the signature: {e}"),
        })
}

/// Reads a snapshot's manifest again, with its signature, and judges who signed it. The manifest
/// read must be the one given: a manifest replaced in between is reported as invalid.
pub async fn signature(store: &Store, manifest: &Manifest) -> Result<Verdict> {
    let key = format!("{}/{MANIFEST_FILE}", folder_of(manifest));
    let bytes = store.get(&key).await?;
    if Manifest::from_bytes(&key, &bytes).ok().as_ref() != Some(manifest) {
        return Ok(Verdict::Invalid {
            key_id: None,
            problem: "the manifest changed while it was being read".into(),
        });
    }
    store.judge(&key, &bytes, Purpose::SnapshotManifest).await
}

/// Fails with an integrity error (nothing read further, nothing changed) when trusted keys are
/// configured and the snapshot is not signed by one of them. Returns the verdict otherwise.
pub async fn require_trusted(store: &Store, manifest: &Manifest) -> Result<Verdict> {
    let verdict = signature(store, manifest).await?;
    if store.keys().enforcing() {
        if let Some(why) = verdict.refusal() {
            return Err(Error::Integrity {
                id: manifest.meta.id.clone(),
                problems: vec![format!("manifest.json: {why}")],
            });
        }
    }
    Ok(verdict)
}

/// Lists the snapshots in the given days, newest first, reading each manifest.
pub async fn list(store: &Store, days: DayRange) -> Result<Vec<Listed>> {
    list_matching(store, days, &|_| true).await
}

/// [`list`] of the snapshots whose ids `want` accepts: only their manifests are read.
async fn list_matching(
    store: &Store,
    days: DayRange,
    want: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Vec<Listed>> {
    let mut folders: Vec<String> = store
        .folders(SNAPSHOTS)
        .await?
        .into_iter()
        .filter(|f| days.contains(f))
        .collect();
    folders.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = Vec::new();
    for folder in folders {
        out.extend(list_day(store, &folder, want).await?);
    }
    Ok(out)
}

/// Lists one day folder, newest first (the snapshots whose ids `want` accepts).
async fn list_day(
    store: &Store,
    folder: &str,
    want: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Vec<Listed>> {
    let prefix = format!("{SNAPSHOTS}/{folder}");
    let mut by_id: BTreeMap<String, Vec<Object>> = BTreeMap::new();
    for obj in store.list(&prefix).await? {
        let rest = obj.key.strip_prefix(&prefix).unwrap_or(&obj.key);
        if let Some((id, _)) = rest.trim_start_matches('/').split_once('/') {
            if want(id) {
                by_id.entry(id.to_string()).or_default().push(obj);
            }
        }
    }
    let prefix = &prefix;
    let mut listed: Vec<Listed> = stream::iter(by_id.into_iter().rev())
        .map(|(id, files)| async move {
            let has_manifest = files.iter().any(|f| f.key.ends_with(MANIFEST_FILE));
            let has_sig = files.iter().any(|f| f.key.ends_with(MANIFEST_SIG));
            let mut signature = Verdict::Unsigned;
            let (manifest, problem) = if !has_manifest {
                (None, Some("incomplete: no manifest".to_string()))
            } else {
                let key = format!("{prefix}/{id}/{MANIFEST_FILE}");
                match store.get(&key).await {
                    Ok(bytes) => {
                        if has_sig {
                            signature = judge_manifest(store, &key, &bytes).await;
                        }
                        match Manifest::from_bytes(&key, &bytes) {
                            Ok(m) => (Some(m), None),
                            Err(e) => (None, Some(format!("unreadable manifest: {e}"))),
                        }
                    }
                    Err(e) => (None, Some(format!("unreadable manifest: {e}"))),
                }
            };
            Listed {
                id,
                folder: folder.to_string(),
                manifest,
                problem,
                signature,
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
    // Only the manifests of the ids that match are read: a manifest lists its groups, so a
    // store of snapshots of many groups would otherwise be read whole for one id.
    let matches: Vec<Listed> = list_matching(store, days, &|id| id.starts_with(prefix)).await?;
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

/// A newer snapshot a choice passed over because of its signature.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PassedOver {
    pub id: String,
    pub reason: String,
}

/// The newest complete snapshot created at or before `time` that `keep` accepts, and, when
/// trusted keys are configured, that one of them signed. Lists one day at a time, newest first,
/// so only the days needed are read. Also returns the newer snapshots `keep` accepted but that
/// were passed over for their signature.
pub async fn newest_before(
    store: &Store,
    time: Option<DateTime<Utc>>,
    keep: impl Fn(&Manifest) -> bool,
) -> Result<(Option<Manifest>, Vec<PassedOver>)> {
    let mut passed = Vec::new();
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
            let Ok(bytes) = store.get(&key).await else {
                continue;
            };
            let Ok(m) = Manifest::from_bytes(&key, &bytes) else {
                // An unreadable manifest is not a snapshot to restore; `list` reports it.
                continue;
            };
            if time.is_none_or(|t| m.meta.created_at <= t) && keep(&m) {
                if store.keys().enforcing() {
                    let verdict = judge_manifest(store, &key, &bytes).await;
                    if let Some(reason) = verdict.refusal() {
                        passed.push(PassedOver { id, reason });
                        continue;
                    }
                }
                return Ok((Some(m), passed));
            }
        }
    }
    Ok((None, passed))
}

/// A snapshot whose files all matched its manifest and id when read. Its offsets file stays on
/// the local disk and is read again one group at a time, so nothing holds all of its rows.
#[derive(Debug)]
pub struct Opened {
    pub manifest: Manifest,
    /// Who signed the manifest; with trusted keys configured, always a trusted key.
    pub signature: Verdict,
    pub connectors: Vec<ConnectorSnapshot>,
    offsets: LocalFile,
    /// The offsets file as errors name it.
    offsets_name: String,
}

impl Opened {
    /// Hands every group to `each`, in id order.
    pub fn for_each_group(&self, each: &mut dyn FnMut(GroupSnapshot) -> Result<()>) -> Result<()> {
        format::read_offsets(
            self.manifest.format,
            &self.offsets_name,
            self.offsets.path(),
            each,
        )
        .map(|_| ())
    }

    /// The groups in id order, read on a thread of their own. A read error ends the iteration
    /// early and is kept: [`GroupStream::error_slot`] holds it.
    pub fn groups(&self) -> GroupStream<'_> {
        // Handed over in chunks of whole groups of about CHUNK_ROWS partitions, one chunk at a
        // time (a group larger than that is a chunk of its own): the reader holds the chunk it
        // fills and the consumer the one it was given. One hand-over per group would cost two
        // thread switches per group, most of the time for many small groups.
        const CHUNK_ROWS: usize = 4096;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<GroupSnapshot>>(0);
        let error = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (format, name, path) = (
            self.manifest.format,
            self.offsets_name.clone(),
            self.offsets.path().to_path_buf(),
        );
        let kept = error.clone();
        std::thread::spawn(move || {
            let stopped = || Error::Internal("stopped".into());
            let mut chunk = Vec::new();
            let mut rows = 0;
            let read = format::read_offsets(format, &name, &path, &mut |g| {
                rows += g.partitions.len().max(1);
                chunk.push(g);
                if rows >= CHUNK_ROWS {
                    rows = 0;
                    // The receiver went away: the reader does not want more.
                    tx.send(std::mem::take(&mut chunk)).map_err(|_| stopped())?;
                }
                Ok(())
            })
            .and_then(|_| {
                if chunk.is_empty() {
                    Ok(())
                } else {
                    tx.send(chunk).map_err(|_| stopped())
                }
            });
            if let Err(e) = read {
                if !matches!(&e, Error::Internal(m) if m == "stopped") {
                    *kept.lock().expect("not poisoned") = Some(e);
                }
            }
        });
        GroupStream {
            rx,
            chunk: Vec::new().into_iter(),
            error,
            _opened: std::marker::PhantomData,
        }
    }

    /// Every group in memory: for the commands that need them all at once (restore).
    pub fn load(self) -> Result<Loaded> {
        let mut groups = Vec::new();
        self.for_each_group(&mut |g| {
            groups.push(g);
            Ok(())
        })?;
        Ok(Loaded {
            manifest: self.manifest,
            content: SnapshotContent {
                groups,
                connectors: self.connectors,
            },
        })
    }
}

/// Where a [`GroupStream`] keeps the error that ended it.
pub type ErrorSlot = std::sync::Arc<std::sync::Mutex<Option<Error>>>;

/// See [`Opened::groups`].
pub struct GroupStream<'a> {
    rx: std::sync::mpsc::Receiver<Vec<GroupSnapshot>>,
    /// The rest of the chunk being handed out.
    chunk: std::vec::IntoIter<GroupSnapshot>,
    error: ErrorSlot,
    _opened: std::marker::PhantomData<&'a Opened>,
}

impl GroupStream<'_> {
    /// The error that ended the iteration, if one did, readable after the stream is consumed.
    pub fn error_slot(&self) -> ErrorSlot {
        self.error.clone()
    }
}

impl Iterator for GroupStream<'_> {
    type Item = GroupSnapshot;
    fn next(&mut self) -> Option<GroupSnapshot> {
        loop {
            if let Some(g) = self.chunk.next() {
                return Some(g);
            }
            self.chunk = self.rx.recv().ok()?.into_iter();
        }
    }
}

/// Re-reads every file of a snapshot and checks it against the manifest and the id. Files are
/// read to the local disk while their SHA-256 is computed, then the offsets file is decoded one
/// group at a time to check the content digest. Returns the opened snapshot when everything
/// matches, and the list of problems otherwise.
pub async fn check(store: &Store, manifest: &Manifest) -> (Option<Opened>, Vec<String>) {
    let mut problems = Vec::new();
    let id = &manifest.meta.id;
    let expected = manifest.expected_id();
    if &expected != id {
        problems.push(format!(
            "manifest content does not match the id (the manifest was changed after it was written; it implies id {expected})"
        ));
    }
    if let Some(s) = &manifest.encrypted_secrets {
        if manifest.file(&s.file).map(|f| &f.sha256) != Some(&s.sha256) {
            problems.push(format!(
                "{}: not listed in the manifest with the SHA-256 its sealed encrypted_secrets name",
                s.file
            ));
        }
    }
    if parse_id(id).map(|(t, _)| t) != Some(manifest.meta.created_at) {
        problems.push(format!(
            "id {id} does not match created_at {}",
            manifest.meta.created_at
        ));
    }
    let folder = &folder_of(manifest);
    let fetched: Vec<(&FileEntry, Result<Fetched>)> = stream::iter(&manifest.files)
        .map(|f| async move { (f, store.fetch_local(&format!("{folder}/{}", f.name)).await) })
        .buffered(4)
        .collect()
        .await;
    let mut files = BTreeMap::new();
    for (entry, got) in fetched {
        match got {
            Err(e) => problems.push(format!("{}: cannot read: {e}", entry.name)),
            Ok(got) => {
                let mut ok = true;
                if got.size != entry.size {
                    ok = false;
                    problems.push(format!(
                        "{}: size {} bytes, manifest says {}",
                        entry.name, got.size, entry.size
                    ));
                }
                if got.sha256 != entry.sha256 {
                    ok = false;
                    problems.push(format!(
                        "{}: SHA-256 {}, manifest says {}",
                        entry.name, got.sha256, entry.sha256
                    ));
                }
                if ok {
                    files.insert(entry.name.clone(), got.file);
                }
            }
        }
    }
    if !problems.is_empty() {
        return (None, problems);
    }
    match decode(manifest, folder, files) {
        Ok(opened) => (Some(opened), problems),
        Err(e) => {
            problems.push(e.to_string());
            (None, problems)
        }
    }
}

fn decode(
    manifest: &Manifest,
    folder: &str,
    mut files: BTreeMap<String, LocalFile>,
) -> Result<Opened> {
    let offsets_name = manifest.format.offsets_file();
    let missing = |name: &str| Error::Decode {
        path: format!("{folder}/{name}"),
        detail: "not listed in the manifest".into(),
    };
    let offsets = files
        .remove(offsets_name)
        .ok_or_else(|| missing(offsets_name))?;
    let connectors = files
        .get(CONNECTORS_FILE)
        .ok_or_else(|| missing(CONNECTORS_FILE))?;
    let connectors_path = format!("{folder}/{CONNECTORS_FILE}");
    let connectors_bytes = std::fs::read(connectors.path()).map_err(|e| Error::Decode {
        path: connectors_path.clone(),
        detail: format!("cannot read the local copy: {e}"),
    })?;
    let (conn_id, connectors) =
        format::json::decode_connectors(&connectors_path, &connectors_bytes)?;
    let offsets_path = format!("{folder}/{offsets_name}");
    let mut hasher = ContentHasher::new();
    let mut last: Option<String> = None;
    let mut order_problem = None;
    let meta = format::read_offsets(manifest.format, &offsets_path, offsets.path(), &mut |g| {
        if order_problem.is_none() && last.as_ref().is_some_and(|l| *l >= g.group_id) {
            order_problem = Some(format!(
                "{offsets_name}: group {} comes after {}: groups must be in id order, each once",
                g.group_id,
                last.as_deref().unwrap_or_default()
            ));
        }
        hasher.add_group(&g);
        last = Some(g.group_id);
        Ok(())
    })?;
    let mut problems = Vec::new();
    if meta != manifest.meta {
        problems.push(format!(
            "{offsets_name}: its snapshot metadata differs from the manifest"
        ));
    }
    if conn_id != manifest.meta.id {
        problems.push(format!("{CONNECTORS_FILE}: snapshot id {conn_id} differs"));
    }
    problems.extend(order_problem);
    let digest = hasher.finish(&connectors);
    if digest != manifest.content_sha256 {
        problems.push(format!(
            "content SHA-256 {digest} differs from the manifest's {}",
            manifest.content_sha256
        ));
    }
    if problems.is_empty() {
        Ok(Opened {
            manifest: manifest.clone(),
            signature: Verdict::Unsigned,
            connectors,
            offsets,
            offsets_name: offsets_path,
        })
    } else {
        Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems,
        })
    }
}

/// Opens a snapshot after verifying it (and, when trusted keys are configured, its signer); any
/// problem is an integrity error and nothing is returned.
pub async fn open_verified(store: &Store, manifest: &Manifest) -> Result<Opened> {
    let signature = require_trusted(store, manifest).await?;
    match check(store, manifest).await {
        (Some(opened), problems) if problems.is_empty() => Ok(Opened {
            signature,
            ..opened
        }),
        (_, problems) => Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems,
        }),
    }
}

/// Reads one file that the manifest lists, into memory, and checks its size and SHA-256 against
/// the manifest; a difference is an integrity error. For small files read again after the
/// snapshot was verified (`connectors.secrets.age`).
pub async fn read_listed(store: &Store, manifest: &Manifest, name: &str) -> Result<Bytes> {
    let id = &manifest.meta.id;
    let entry = manifest.file(name).ok_or_else(|| Error::Integrity {
        id: id.clone(),
        problems: vec![format!("{name}: not listed in the manifest")],
    })?;
    let bytes = store
        .get(&format!("{}/{name}", folder_of(manifest)))
        .await?;
    let sha256 = sha256_hex(&bytes);
    if bytes.len() as u64 != entry.size || sha256 != entry.sha256 {
        return Err(Error::Integrity {
            id: id.clone(),
            problems: vec![format!(
                "{name}: {} bytes with SHA-256 {sha256}, manifest says {} bytes with SHA-256 {}",
                bytes.len(),
                entry.size,
                entry.sha256
            )],
        });
    }
    Ok(bytes)
}

/// Loads a snapshot, all of it in memory, after verifying it.
pub async fn load_verified(store: &Store, manifest: &Manifest) -> Result<Loaded> {
    open_verified(store, manifest).await?.load()
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::snapshot::manifest::{content_sha256, Format, Summary};
    use crate::snapshot::model::{GroupState, GroupType, PartitionOffset, SnapshotMeta};
    use chrono::{SubsecRound, Utc};

    pub(crate) fn group(id: &str, partitions: i32) -> GroupSnapshot {
        GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: (0..partitions)
                .map(|p| PartitionOffset {
                    log_start_offset: Some(0),
                    log_end_offset: Some(9),
                    lag: Some(4),
                    ..PartitionOffset::new("t", p, 5)
                })
                .collect(),
        }
    }

    pub(crate) fn meta() -> SnapshotMeta {
        SnapshotMeta {
            created_at: Utc::now().trunc_subsecs(3),
            cluster_id: "c".into(),
            ..Default::default()
        }
    }

    pub(crate) fn store(dir: &tempfile::TempDir) -> Store {
        Store::open(
            dir.path().to_str().unwrap(),
            std::time::Duration::from_secs(5),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn groups_out_of_id_order_in_a_file_are_a_problem_even_with_matching_digests() {
        // A file whose bytes match the manifest (sizes, SHA-256, content digest of the sorted
        // content) but whose groups are not in id order: readers that stream it would see the
        // groups in the wrong order, so verification refuses it.
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        let unsorted = vec![group("b", 1), group("a", 1)];
        let content = SnapshotContent {
            groups: unsorted.clone(),
            connectors: vec![],
        };
        let mut manifest = Manifest {
            format_version: crate::snapshot::model::FORMAT_VERSION.into(),
            meta: meta(),
            format: Format::Json,
            summary: Summary::of(&content),
            content_sha256: content_sha256(&content),
            files: [Format::Json.offsets_file(), CONNECTORS_FILE]
                .into_iter()
                .map(|name| FileEntry {
                    name: name.into(),
                    size: 0,
                    sha256: String::new(),
                })
                .collect(),
            encrypted_secrets: None,
        };
        manifest.assign_id();
        let offsets = crate::format::json::encode_offsets(&manifest.meta, &unsorted).unwrap();
        let connectors = crate::format::json::encode_connectors(&manifest.meta.id, &[]).unwrap();
        let manifest = write(
            &store,
            manifest,
            vec![
                ("offsets.json".into(), FileBody::Bytes(offsets)),
                (CONNECTORS_FILE.into(), FileBody::Bytes(connectors)),
            ],
        )
        .await
        .unwrap();
        let (opened, problems) = check(&store, &manifest).await;
        assert!(opened.is_none());
        assert!(
            problems
                .iter()
                .any(|p| p.contains("group a comes after b: groups must be in id order")),
            "{problems:?}"
        );
    }
}
