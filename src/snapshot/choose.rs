//! Choosing a snapshot: by id (or a unique prefix), the latest, or the newest created at or before
//! a time, among complete snapshots that hold the wanted groups and connectors.
//!
//! "Latest" and "before" consider only snapshots of kind `snapshot` unless undo points (or
//! imports) are asked for, so a retried restore never picks the undo snapshot its first run
//! wrote. Partial snapshots are passed over unless accepted. An id is always taken as given:
//! that is how an undo snapshot is restored.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::manifest::Manifest;
use super::model::SnapshotKind;
use super::repo;
use crate::error::{Error, Result};
use crate::store::Store;

/// Which snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// An id or a unique prefix of one.
    Id(String),
    /// The newest eligible snapshot.
    Latest,
    /// The newest eligible snapshot created at or before this time.
    Before(DateTime<Utc>),
}

/// What makes a snapshot eligible for `Latest` and `Before`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Eligible {
    /// Every one of these groups must be in the snapshot.
    pub groups: Vec<String>,
    /// Every one of these connectors must be in the snapshot.
    pub connectors: Vec<String>,
    /// Also consider undo snapshots (`--include-undo`).
    pub include_undo: bool,
    /// Also consider imported snapshots.
    pub include_import: bool,
    /// Also consider the snapshots `reset` takes before it changes anything
    /// (`--include-pre-reset`).
    pub include_pre_reset: bool,
    /// Also consider partial snapshots (`--allow-partial`).
    pub include_partial: bool,
    /// Also accept a snapshot that does not hold a wanted group or connector but whose
    /// selection would have captured it (`--all-groups`, a matching pattern): it did not exist
    /// then. The base of `--at`, where the commit log supplies what came after.
    pub covering: bool,
}

impl Eligible {
    /// Is this manifest a candidate? (Pure; the rule every choice uses.)
    pub fn accepts(&self, m: &Manifest) -> bool {
        let kind_ok = match m.meta.kind {
            SnapshotKind::Snapshot => true,
            SnapshotKind::Undo => self.include_undo,
            SnapshotKind::Import => self.include_import,
            SnapshotKind::PreReset => self.include_pre_reset,
        };
        kind_ok
            && (self.include_partial || !m.meta.is_partial())
            && self.groups.iter().all(|g| {
                m.summary.group_ids.contains(g)
                    || (self.covering && m.meta.selection.covers_group(g))
            })
            && self.connectors.iter().all(|c| {
                m.summary.connector_names.contains(c)
                    || (self.covering && m.meta.selection.covers_connector(c))
            })
    }

    /// The rule in words: "newest complete snapshot-kind snapshot holding g".
    pub fn describe(&self) -> String {
        let mut kinds = vec!["snapshot"];
        for (on, kind) in [
            (self.include_undo, "undo"),
            (self.include_import, "import"),
            (self.include_pre_reset, "pre-reset"),
        ] {
            if on {
                kinds.push(kind);
            }
        }
        let kinds = match kinds.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => "snapshot".to_string(),
        };
        let partial = if self.include_partial {
            " (partial ones included)"
        } else {
            ""
        };
        let names: Vec<&str> = self
            .groups
            .iter()
            .chain(&self.connectors)
            .map(String::as_str)
            .collect();
        let holding = if names.is_empty() {
            String::new()
        } else {
            let verb = if self.covering {
                "holding (or selecting)"
            } else {
                "holding"
            };
            format!(" {verb} {}", names.join(", "))
        };
        format!("newest complete {kinds}-kind snapshot{partial}{holding}")
    }
}

/// The chosen snapshot and why.
#[derive(Debug, Clone, Serialize)]
pub struct Chosen {
    pub manifest: Manifest,
    /// Why it was chosen, in words.
    pub because: String,
    /// Newer snapshots the choice passed over because no trusted key signed them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passed_over: Vec<repo::PassedOver>,
}

impl Chosen {
    /// One line for people: id, kind, age, tags and the reason.
    pub fn announce(&self, now: DateTime<Utc>) -> String {
        let m = &self.manifest.meta;
        let tags: Vec<String> = m.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut extra = String::new();
        if let Some(of) = &m.undo_of {
            extra.push_str(&format!(", undo point of a restore of {of}"));
        }
        if m.is_partial() {
            extra.push_str(&format!(", PARTIAL: {}", m.partial.join("; ")));
        }
        format!(
            "using snapshot {} (kind {}, taken {} ago, tags [{}]{extra}; {})",
            m.id,
            m.kind,
            age(now - m.created_at),
            tags.join(", "),
            self.because
        )
    }
}

/// A short human age: 45s, 12m, 3h 5m, 2d 4h.
pub fn age(d: chrono::Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0..=119 => format!("{s}s"),
        120..=3599 => format!("{}m", s / 60),
        3600..=86399 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {}h", s / 86400, (s % 86400) / 3600),
    }
}

/// Chooses a snapshot. An id is taken as given (any kind; a partial one only when accepted).
pub async fn choose(store: &Store, choice: &Choice, eligible: &Eligible) -> Result<Chosen> {
    let (found, because) = match choice {
        Choice::Id(id) => {
            let manifest = repo::resolve(store, id).await?;
            if manifest.meta.is_partial() && !eligible.include_partial {
                return Err(Error::usage(format!(
                    "snapshot {} is partial (missing: {}); pass --allow-partial to use it anyway",
                    manifest.meta.id,
                    manifest.meta.partial.join("; ")
                )));
            }
            return Ok(Chosen {
                manifest,
                because: format!("given by id {id}"),
                passed_over: Vec::new(),
            });
        }
        Choice::Latest => (
            repo::newest_before(store, None, |m| eligible.accepts(m)).await?,
            eligible.describe(),
        ),
        Choice::Before(t) => (
            repo::newest_before(store, Some(*t), |m| eligible.accepts(m)).await?,
            format!(
                "{} created at or before {}",
                eligible.describe(),
                t.to_rfc3339()
            ),
        ),
    };
    let (found, passed_over) = found;
    for p in &passed_over {
        tracing::warn!("passed over snapshot {}: {}", p.id, p.reason);
    }
    let untrusted = if passed_over.is_empty() {
        String::new()
    } else {
        format!(
            " ({} newer snapshot(s) passed over, not signed by a trusted key: {})",
            passed_over.len(),
            passed_over
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    match found {
        Some(manifest) => Ok(Chosen {
            manifest,
            because: format!("{because}{untrusted}"),
            passed_over,
        }),
        None => Err(Error::NotFound {
            what: "snapshot",
            name: format!(
                "(the {because}{})",
                if store.keys().enforcing() {
                    ", signed by a trusted key"
                } else {
                    ""
                }
            ),
            hint: format!(
                " in {}{untrusted}; `offset-vault list` shows what is there{}",
                store.url(),
                if eligible.include_undo {
                    ""
                } else {
                    " (undo snapshots are chosen only by id or with --include-undo)"
                }
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::manifest::{Format, Summary};
    use crate::snapshot::model::{SnapshotMeta, FORMAT_VERSION};

    fn manifest(kind: SnapshotKind, partial: bool, groups: &[&str]) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION.into(),
            meta: SnapshotMeta {
                kind,
                partial: if partial {
                    vec!["connector x: offsets".into()]
                } else {
                    vec![]
                },
                ..Default::default()
            },
            format: Format::Json,
            summary: Summary {
                group_ids: groups.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
            content_sha256: String::new(),
            files: vec![],
            encrypted_secrets: None,
        }
    }

    #[test]
    fn eligibility_by_kind_partial_and_content() {
        use SnapshotKind::*;
        let plain = Eligible {
            groups: vec!["g".into()],
            ..Default::default()
        };
        let undo_too = Eligible {
            include_undo: true,
            ..plain.clone()
        };
        let partial_too = Eligible {
            include_partial: true,
            ..plain.clone()
        };
        let covering = Eligible {
            covering: true,
            ..plain.clone()
        };
        let all_groups = |groups: &[&str]| {
            let mut m = manifest(Snapshot, false, groups);
            m.meta.selection.all_groups = true;
            m
        };
        let pre_reset_too = Eligible {
            include_pre_reset: true,
            ..plain.clone()
        };
        // (manifest, eligible, accepted?)
        let cases = [
            (manifest(Snapshot, false, &["g"]), &plain, true),
            (manifest(Undo, false, &["g"]), &plain, false),
            (manifest(Undo, false, &["g"]), &undo_too, true),
            (manifest(Import, false, &["g"]), &plain, false),
            (manifest(Import, false, &["g"]), &undo_too, false),
            (manifest(PreReset, false, &["g"]), &plain, false),
            (manifest(PreReset, false, &["g"]), &undo_too, false),
            (manifest(PreReset, false, &["g"]), &pre_reset_too, true),
            (manifest(Snapshot, true, &["g"]), &plain, false),
            (manifest(Snapshot, true, &["g"]), &partial_too, true),
            (manifest(Snapshot, false, &["other"]), &plain, false),
            (manifest(Snapshot, false, &["g", "other"]), &plain, true),
            (all_groups(&["other"]), &plain, false),
            (all_groups(&["other"]), &covering, true),
            (manifest(Snapshot, false, &["other"]), &covering, false),
        ];
        for (i, (m, e, want)) in cases.iter().enumerate() {
            assert_eq!(
                e.accepts(m),
                *want,
                "case {i}: {:?} with {e:?}",
                m.meta.kind
            );
        }
    }

    #[test]
    fn ages_read_well() {
        let d = chrono::Duration::seconds;
        assert_eq!(age(d(5)), "5s");
        assert_eq!(age(d(600)), "10m");
        assert_eq!(age(d(3 * 3600 + 300)), "3h 5m");
        assert_eq!(age(d(2 * 86400 + 4 * 3600)), "2d 4h");
        assert_eq!(age(d(-3)), "0s");
    }
}
