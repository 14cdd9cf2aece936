//! The plan directory of the MCP server: the planning tools write each plan there under its
//! hash, and `apply_plan` finds it again by that hash only.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::restore::review::PlanFile;

/// A plan file as the planning tools report it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub path: PathBuf,
    pub file: PlanFile,
}

impl Stored {
    /// `reset` for a reset's plan, else `restore`.
    pub fn kind(&self) -> &'static str {
        if self.file.body.reset.is_some() {
            "reset"
        } else {
            "restore"
        }
    }

    /// One line for a person: what the plan does, to which groups and connectors, on which
    /// cluster, and what it costs.
    pub fn summary(&self) -> String {
        let plan = &self.file.body.plan;
        let s = &plan.summary;
        let what = match &self.file.body.reset {
            Some(r) => r.label(),
            None => format!("restore from snapshot {}", self.file.body.snapshot_id),
        };
        let groups: Vec<&str> = plan.groups.iter().map(|g| g.group_id.as_str()).collect();
        let connectors: Vec<&str> = plan.connectors.iter().map(|c| c.name.as_str()).collect();
        let mut of = Vec::new();
        if !groups.is_empty() {
            of.push(format!("group(s) {}", named(&groups)));
        }
        if !connectors.is_empty() {
            of.push(format!("connector(s) {}", named(&connectors)));
        }
        let of = if of.is_empty() {
            "no group".to_string()
        } else {
            of.join(" and ")
        };
        let mut line = format!(
            "{what} of {of} on cluster {}: {} of {} partition(s) change, {} record(s) processed again, {} skipped",
            self.file.body.cluster_id, s.changes, s.partitions, s.reprocess, s.skip
        );
        if !plan.applicable || plan.blocked {
            line.push_str(&format!(
                "; not applicable as planned: {}",
                plan.problems.join("; ")
            ));
        }
        line
    }
}

/// Up to five names, then how many more.
fn named(names: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// Is `hash` the form of a plan's hash (64 lowercase hex digits)?
pub fn is_hash(hash: &str) -> bool {
    hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Moves a plan file just written at `written` to `<dir>/<sha256>.json` and reads it back.
/// A plan with the same hash already there is the same plan (its body is the same): the new
/// file replaces it only when the old one has no approvals, so approvals are never lost.
pub fn keep(dir: &Path, written: &Path) -> Result<Stored> {
    let file = PlanFile::read_any(written)?;
    let path = dir.join(format!("{}.json", file.sha256));
    let approved = path.exists()
        && PlanFile::read_any(&path)
            .map(|old| !old.signatures.is_empty())
            .unwrap_or(false);
    if approved {
        std::fs::remove_file(written).ok();
    } else {
        std::fs::rename(written, &path).map_err(|e| {
            Error::Internal(format!(
                "cannot move {} to {}: {e}",
                written.display(),
                path.display()
            ))
        })?;
    }
    find(dir, &file.sha256)
}

/// The plan file with this hash in `dir`; its content must have that hash (a file edited
/// since it was written is refused).
pub fn find(dir: &Path, hash: &str) -> Result<Stored> {
    if !is_hash(hash) {
        return Err(Error::usage(format!(
            "{hash:?} is not a plan hash (64 lowercase hex digits, as plan_restore or plan_reset returned it)"
        )));
    }
    let path = dir.join(format!("{hash}.json"));
    if !path.exists() {
        return Err(Error::NotFound {
            what: "plan",
            name: hash.to_string(),
            hint: format!(
                " in {} (make one with plan_restore or plan_reset; nothing was changed)",
                dir.display()
            ),
        });
    }
    let file = PlanFile::read_any(&path)?;
    if file.sha256 != hash {
        return Err(Error::usage(format!(
            "{} holds the plan {}, not {hash}: it was changed after it was written; nothing was changed, plan again",
            path.display(),
            file.sha256
        )));
    }
    Ok(Stored { path, file })
}

#[cfg(test)]
mod tests {
    use super::{is_hash, named};

    #[test]
    fn a_summary_names_five_and_counts_the_rest() {
        assert_eq!(named(&["a"]), "a");
        assert_eq!(named(&["a", "b", "c", "d", "e"]), "a, b, c, d, e");
        assert_eq!(
            named(&["a", "b", "c", "d", "e", "f", "g"]),
            "a, b, c, d, e and 2 more"
        );
    }

    #[test]
    fn only_a_sha256_in_lowercase_hex_is_a_plan_hash() {
        let good = "a".repeat(64);
        for (text, want) in [
            (good.as_str(), true),
            (&"0123456789abcdef".repeat(4), true),
            (&"A".repeat(64), false),
            (&"a".repeat(63), false),
            (&"g".repeat(64), false),
            ("../../etc/passwd", false),
            ("", false),
        ] {
            assert_eq!(is_hash(text), want, "{text}");
        }
    }
}
