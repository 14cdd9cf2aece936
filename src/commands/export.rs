//! `export`: a snapshot's offsets, or those at an instant, as kafka-consumer-groups CSV rows,
//! and the file they are written to (replaced only once complete).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::csv::{self as csv_form, CsvOffset};
use crate::kafka::GroupType;
use crate::snapshot::manifest::Manifest;
use crate::snapshot::model::GroupSnapshot;
use crate::snapshot::repo::Opened;
use clap::Args;

/// Which groups of a snapshot `export` writes: the ones named (all when none is), with
/// committed offsets; share groups only when named, since kafka-consumer-groups --from-file
/// would take their start offsets for consumer offsets.
pub struct Wanted<'a> {
    pub named: &'a [String],
}

impl Wanted<'_> {
    /// The group is selected and has offsets.
    pub fn selects(&self, g: &GroupSnapshot) -> bool {
        (self.named.is_empty() || self.named.contains(&g.group_id)) && !g.partitions.is_empty()
    }

    /// A selected group that is left out: a share group not named.
    pub fn leaves_out(&self, g: &GroupSnapshot) -> bool {
        g.group_type == GroupType::Share && !self.named.contains(&g.group_id)
    }

    /// Selected and not left out: written.
    pub fn writes(&self, g: &GroupSnapshot) -> bool {
        self.selects(g) && !self.leaves_out(g)
    }

    /// Checks the named groups against the snapshot and counts what is written: a group that
    /// is not in it is not found, share groups left out are noted, and nothing to write is a
    /// usage error.
    pub fn check(&self, manifest: &Manifest, opened: &Opened) -> Result<usize> {
        for g in self.named {
            if !manifest.summary.group_ids.contains(g) {
                return Err(Error::NotFound {
                    what: "consumer group in the snapshot",
                    name: g.clone(),
                    hint: format!(
                        "; `offset-vault show {}` lists its groups",
                        manifest.meta.id
                    ),
                });
            }
        }
        let (share, groups) = self.count(opened)?;
        if !share.is_empty() {
            crate::noteln!(
                "note: left out share group(s) {}: their share-partition start offsets are not consumer offsets for kafka-consumer-groups --from-file; name one with --group to export it anyway",
                share.join(", ")
            );
        }
        if groups == 0 {
            return Err(Error::usage(format!(
                "snapshot {} has no committed offsets for the selected groups: nothing to export",
                manifest.meta.id
            )));
        }
        Ok(groups)
    }

    /// A first pass over the snapshot: the share groups left out, and how many groups are
    /// written (the CSV form depends on it).
    pub fn count(&self, opened: &Opened) -> Result<(Vec<String>, usize)> {
        let (mut share, mut groups) = (Vec::new(), 0usize);
        opened.for_each_group(&mut |g| {
            if self.selects(&g) {
                if self.leaves_out(&g) {
                    share.push(g.group_id);
                } else {
                    groups += 1;
                }
            }
            Ok(())
        })?;
        Ok((share, groups))
    }
}

/// The CSV rows of groups, in their order.
pub fn csv_rows(
    groups: impl Iterator<Item = GroupSnapshot>,
) -> impl Iterator<Item = Result<CsvOffset>> {
    groups.flat_map(|g| {
        let group = g.group_id;
        g.partitions.into_iter().map(move |p| {
            Ok(CsvOffset {
                group: Some(group.clone()),
                topic: p.topic,
                partition: p.partition,
                offset: p.offset,
                line: 0,
            })
        })
    })
}

/// Writes the rows of `groups` groups to `path`, in the one-group form when there is one; the
/// file is written next to it and renamed over it once complete, so a failed export leaves it
/// as it was. `stream_error` is the error that ended the rows early, if one did. Returns the
/// number of rows written.
pub fn write_file(
    path: &Path,
    rows: &mut dyn Iterator<Item = Result<CsvOffset>>,
    groups: usize,
    stream_error: impl Fn() -> Option<Error>,
) -> Result<u64> {
    let target =
        |e: &dyn std::fmt::Display| Error::usage(format!("--file {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| target(&e))?;
    let written = csv_form::encode_to(std::io::BufWriter::new(tmp.as_file()), rows, groups > 1)?;
    if let Some(e) = stream_error() {
        return Err(e);
    }
    tmp.persist(path).map_err(|e| target(&e.error))?;
    Ok(written)
}

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Snapshot id, or a unique prefix of one.
    #[arg(required_unless_present = "at", conflicts_with = "at")]
    pub id: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, or a
    /// duration such as 15m ago): the newest snapshot before TIME plus every commit the
    /// commit-log archive (`follow`) holds up to TIME. Refused (exit 7) when the archive does not
    /// cover TIME; a group with no committed offset at TIME is named on stderr and not written.
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
    /// Only this group (repeatable). Default: every group of the snapshot except share groups
    /// (whose start offsets are not consumer offsets); name a share group to export it (not
    /// with --at: the commit log does not hold a share group's positions).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}
