//! `verify` of the commit-log archive and the apply records: every data file re-hashed against
//! its index manifest, each partition's chain of manifests checked for overlaps and gaps that
//! no gap entry records, data files that no manifest names (orphans), and every apply record
//! (`applies/...`) decoded and checked.
//!
//! An orphan is harmless: nothing reads a data file that no manifest names (a writer stopped
//! between the data file and its manifest, or an interrupted prune deleted the manifest first).
//! It is a note, not a problem; `prune` removes it. A recorded gap (an index entry with no data
//! file) is a note too: the archive says what it lost, and `--at` refuses the instants that need
//! it. The checks on the chains are pure ([`check_chains`]); reading and hashing is here too.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::archive::{index_prefix, Lane, SegmentManifest};
use super::segment::{self, discontinuities, Discontinuity, SegmentMeta};
use crate::log::applies::{ApplyRecord, APPLIES};
use crate::sign::{Purpose, Verdict, SIG_SUFFIX};
use crate::snapshot::manifest::sha256_hex;
use crate::store::Store;

/// Where the data files are: `log/date=YYYY-MM-DD/partition=NN/...`.
pub const DATA_PREFIX: &str = "log/date=";
/// Where the data files of Connect's offsets topic are: `connect-log/date=...`, the same layout.
pub const CONNECT_DATA_PREFIX: &str = "connect-log/date=";

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A data file whose size or SHA-256 differs from its manifest.
    Checksum,
    /// A data file whose own description (Parquet metadata) differs from its manifest, or that
    /// does not decode.
    Content,
    /// A manifest whose data file is not in the store.
    MissingData,
    /// An index manifest that does not decode, or that sits at another key than its range's.
    BadManifest,
    /// Two manifests of a partition cover the same source offsets.
    Overlap,
    /// Source offsets between two consecutive manifests that no gap entry records.
    UnrecordedGap,
    /// An apply record that does not decode or whose checksum or key is wrong.
    BadApplyRecord,
    /// A data file that no manifest names (note: harmless, never read, `prune` removes it).
    Orphan,
    /// A gap the follower recorded (note: `--at` refuses the instants that need it).
    RecordedGap,
    /// An index manifest whose signature does not verify (changed after it was signed).
    BadSignature,
    /// With trusted keys configured: an index manifest with no signature.
    Unsigned,
    /// With trusted keys configured: an index manifest signed by a key that is not trusted.
    Untrusted,
}

impl FindingKind {
    /// Notes are information; every other kind is a problem (verify fails).
    pub fn is_note(self) -> bool {
        matches!(self, FindingKind::Orphan | FindingKind::RecordedGap)
    }
}

/// One thing verify found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// The source partition of `__consumer_offsets`, when the finding is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// The store key the finding is about.
    pub key: String,
    pub detail: String,
}

impl Finding {
    fn new(kind: FindingKind, partition: Option<i32>, key: &str, detail: String) -> Self {
        Finding {
            kind,
            partition,
            key: key.to_string(),
            detail,
        }
    }
}

/// What verify found in the archive and the apply records.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LogReport {
    pub partitions: usize,
    /// Index entries (segments and recorded gaps).
    pub manifests: usize,
    /// Data files re-hashed.
    pub segments_checked: usize,
    pub apply_records: usize,
    pub ok: bool,
    pub problems: Vec<Finding>,
    pub notes: Vec<Finding>,
}

impl LogReport {
    fn from_findings(mut findings: Vec<Finding>) -> Self {
        findings.sort_by(|a, b| (a.partition, &a.key, a.kind).cmp(&(b.partition, &b.key, b.kind)));
        let (notes, problems): (Vec<Finding>, Vec<Finding>) =
            findings.into_iter().partition(|f| f.kind.is_note());
        LogReport {
            ok: problems.is_empty(),
            problems,
            notes,
            ..Default::default()
        }
    }
}

/// The (partition, start, next) of a data file's key
/// (`log/date=D/partition=NN/<start>-<next>-<sha8>.parquet`), when it is one. Pure.
pub fn parse_data_key(key: &str) -> Option<(i32, i64, i64)> {
    let rest = key
        .strip_prefix(DATA_PREFIX)
        .or_else(|| key.strip_prefix(CONNECT_DATA_PREFIX))?;
    let mut parts = rest.split('/');
    let _day = parts.next()?;
    let partition: i32 = parts.next()?.strip_prefix("partition=")?.parse().ok()?;
    let name = parts.next()?.strip_suffix(".parquet")?;
    if parts.next().is_some() {
        return None;
    }
    let mut fields = name.split('-');
    let start: i64 = fields.next()?.parse().ok()?;
    let next: i64 = fields.next()?.parse().ok()?;
    Some((partition, start, next))
}

/// The message of an orphan, the same wherever it is shown.
pub fn orphan_detail() -> String {
    "data file that no index manifest names (a writer stopped between the data file and its manifest, or a prune between the manifest and the data file): harmless, never read; `offset-vault prune --keep-log` removes it once it is older than the grace period".to_string()
}

/// The checks that need no file content: per partition, overlaps and unrecorded gaps between
/// consecutive entries, recorded gaps (notes), manifests whose data file is not listed, and data
/// files no manifest names. `manifests` are (key, manifest); `data_files` the keys listed under
/// `log/date=`. Pure.
pub fn check_chains(
    manifests: &[(String, SegmentManifest)],
    data_files: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let listed: BTreeSet<&str> = data_files.iter().map(String::as_str).collect();
    let mut by_partition: BTreeMap<i32, Vec<&SegmentMeta>> = BTreeMap::new();
    for (key, m) in manifests {
        let p = Some(m.meta.partition);
        if *key != m.key() {
            out.push(Finding::new(
                FindingKind::BadManifest,
                p,
                key,
                format!(
                    "the manifest describes offsets {} to {} of partition {}, which belong at {}",
                    m.meta.start,
                    m.meta.next,
                    m.meta.partition,
                    m.key()
                ),
            ));
        }
        by_partition
            .entry(m.meta.partition)
            .or_default()
            .push(&m.meta);
        if let Some(why) = &m.meta.gap {
            out.push(Finding::new(
                FindingKind::RecordedGap,
                p,
                key,
                format!(
                    "recorded gap: offsets {} to {} were not archived ({why}), found {}; --at refuses the instants that need them",
                    m.meta.start, m.meta.next, m.meta.sealed_at
                ),
            ));
        } else if !listed.contains(m.file.as_str()) {
            out.push(Finding::new(
                FindingKind::MissingData,
                p,
                key,
                format!(
                    "data file {} of offsets {} to {} is missing: --at cannot use this range",
                    m.file, m.meta.start, m.meta.next
                ),
            ));
        }
    }
    for (partition, metas) in by_partition {
        let owned: Vec<SegmentMeta> = metas.into_iter().cloned().collect();
        for d in discontinuities(&owned) {
            let (kind, from, to, what) = match d {
                Discontinuity::Gap { from, to, .. } => (
                    FindingKind::UnrecordedGap,
                    from,
                    to,
                    "are in no segment and no gap entry records them (a manifest was deleted by hand, or the archive was copied in part)",
                ),
                Discontinuity::Overlap { from, to, .. } => (
                    FindingKind::Overlap,
                    from,
                    to,
                    "are in two segments (two archives written into one store?)",
                ),
            };
            let topic = &owned[0].topic;
            out.push(Finding::new(
                kind,
                Some(partition),
                &SegmentManifest::index_key_in(Lane::of_topic(topic), partition, from),
                format!("offsets {from} to {to} of {topic}[{partition}] {what}"),
            ));
        }
    }
    let named: BTreeSet<&str> = manifests.iter().map(|(_, m)| m.file.as_str()).collect();
    for key in data_files {
        if !named.contains(key.as_str()) {
            out.push(Finding::new(
                FindingKind::Orphan,
                parse_data_key(key).map(|(p, _, _)| p),
                key,
                orphan_detail(),
            ));
        }
    }
    out
}

/// A data file's bytes against its manifest: size, SHA-256, then its own description. Pure.
pub fn check_data(manifest_key: &str, m: &SegmentManifest, bytes: bytes::Bytes) -> Option<Finding> {
    let p = Some(m.meta.partition);
    let sha = sha256_hex(&bytes);
    if bytes.len() as u64 != m.size || sha != m.sha256 {
        return Some(Finding::new(
            FindingKind::Checksum,
            p,
            &m.file,
            format!(
                "{} bytes with SHA-256 {sha}, but the manifest {manifest_key} says {} bytes with {}",
                bytes.len(),
                m.size,
                m.sha256
            ),
        ));
    }
    match segment::decode(&m.file, bytes) {
        Err(e) => Some(Finding::new(
            FindingKind::Content,
            p,
            &m.file,
            format!("does not decode: {e}"),
        )),
        Ok((meta, _)) if meta != m.meta => Some(Finding::new(
            FindingKind::Content,
            p,
            &m.file,
            format!("the file's description differs from its manifest {manifest_key}"),
        )),
        Ok(_) => None,
    }
}

/// An apply record's bytes at `key`: decodes, checksum, and the key its content names. Pure.
pub fn check_apply_record(key: &str, bytes: &[u8]) -> Option<Finding> {
    match ApplyRecord::from_bytes(key, bytes) {
        Err(e) => Some(Finding::new(
            FindingKind::BadApplyRecord,
            None,
            key,
            format!("{e}; history cannot use it to explain the commits of that restore or reset"),
        )),
        Ok(r) if r.key() != key => Some(Finding::new(
            FindingKind::BadApplyRecord,
            None,
            key,
            format!("the record's content belongs at {}", r.key()),
        )),
        Ok(_) => None,
    }
}

/// Verifies the archive and the apply records of `store`. A store error (listing, reading) is
/// returned as such; everything about the content is a finding.
pub async fn verify(store: &Store) -> crate::error::Result<LogReport> {
    let mut findings = Vec::new();
    let (mut partitions, mut manifest_count, mut checked) = (0, 0, 0);
    // The commit log, and the archive of Connect's offsets topic, each with its own chains.
    for (lane, data_prefix) in [
        (Lane::Offsets, DATA_PREFIX),
        (Lane::Connect, CONNECT_DATA_PREFIX),
    ] {
        let (p, m, c) = verify_lane(store, lane, data_prefix, &mut findings).await?;
        (partitions, manifest_count, checked) = (partitions + p, manifest_count + m, checked + c);
    }
    let records: Vec<_> = store
        .list(APPLIES)
        .await?
        .into_iter()
        .filter(|o| !o.key.ends_with(SIG_SUFFIX))
        .collect();
    for o in &records {
        let bytes = store.get(&o.key).await?;
        findings.extend(check_apply_record(&o.key, &bytes));
        findings.extend(signature_finding(store, &o.key, &bytes, Purpose::ApplyRecord).await?);
    }
    let mut report = LogReport::from_findings(findings);
    report.partitions = partitions;
    report.manifests = manifest_count;
    report.segments_checked = checked;
    report.apply_records = records.len();
    Ok(report)
}

/// What the signature of the object `key` (read as `bytes`) says, as a finding: a signature that
/// does not verify always, and with trusted keys configured an unsigned or untrusted object.
async fn signature_finding(
    store: &Store,
    key: &str,
    bytes: &[u8],
    purpose: Purpose,
) -> crate::error::Result<Option<Finding>> {
    let verdict = store.judge(key, bytes, purpose).await?;
    let enforcing = store.keys().enforcing();
    let kind = match &verdict {
        Verdict::Invalid { .. } => FindingKind::BadSignature,
        Verdict::Unsigned if enforcing => FindingKind::Unsigned,
        Verdict::Untrusted { .. } if enforcing => FindingKind::Untrusted,
        _ => return Ok(None),
    };
    Ok(verdict
        .refusal()
        .map(|why| Finding::new(kind, None, key, why)))
}

/// The chains and data files of one lane; returns (partitions, manifests, segments hashed).
async fn verify_lane(
    store: &Store,
    lane: Lane,
    data_prefix: &str,
    findings: &mut Vec<Finding>,
) -> crate::error::Result<(usize, usize, usize)> {
    let mut manifests = Vec::new();
    for o in store.list(&index_prefix(lane)).await? {
        if o.key.ends_with(SIG_SUFFIX) {
            continue;
        }
        let bytes = store.get(&o.key).await?;
        findings.extend(signature_finding(store, &o.key, &bytes, Purpose::LogSegment).await?);
        match serde_json::from_slice::<SegmentManifest>(&bytes) {
            Ok(m) => manifests.push((o.key, m)),
            Err(e) => findings.push(Finding::new(
                FindingKind::BadManifest,
                None,
                &o.key,
                format!("not a segment manifest: {e}; the chain of its partition cannot be trusted past it"),
            )),
        }
    }
    manifests.sort_by_key(|(_, m)| (m.meta.partition, m.meta.start));
    let data_files: Vec<String> = store
        .list(lane.root())
        .await?
        .into_iter()
        .map(|o| o.key)
        .filter(|k| k.starts_with(data_prefix))
        .collect();
    findings.extend(check_chains(&manifests, &data_files));
    let listed: BTreeSet<&str> = data_files.iter().map(String::as_str).collect();
    let to_hash: Vec<&(String, SegmentManifest)> = manifests
        .iter()
        .filter(|(_, m)| !m.is_gap() && listed.contains(m.file.as_str()))
        .collect();
    crate::progress::stage("log segments verified", to_hash.len() as u64);
    for (key, m) in &to_hash {
        crate::progress::advance(1);
        findings.extend(check_data(key, m, store.get(&m.file).await?));
    }
    crate::progress::finish();
    let partitions = manifests
        .iter()
        .map(|(_, m)| m.meta.partition)
        .collect::<BTreeSet<_>>()
        .len();
    Ok((partitions, manifests.len(), to_hash.len()))
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
