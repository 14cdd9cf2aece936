//! Captured groups kept on the local disk while a snapshot is taken: one compact JSON line per
//! group, in group id order. The content digest and the summary are computed as the groups go
//! in, so the snapshot's id is known without holding its rows, and the offsets file is then
//! written from the spill one group at a time.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};

use super::manifest::{normalize_group, ContentHasher, Summary, SummaryBuilder};
use super::model::{ConnectorSnapshot, GroupSnapshot};
use crate::error::{Error, Result};

fn spill_err(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!(
        "the local spill file of the snapshot (in {}; set TMPDIR to put it elsewhere): {e}",
        std::env::temp_dir().display()
    ))
}

/// Groups being captured.
pub struct Spill {
    writer: BufWriter<File>,
    path: tempfile::TempPath,
    /// The id of the last group pushed, to keep the order.
    last: Option<String>,
    groups: usize,
    hasher: ContentHasher,
    summary: SummaryBuilder,
    line: Vec<u8>,
    rows: usize,
}

impl Spill {
    pub fn new() -> Result<Self> {
        let (file, path) = tempfile::NamedTempFile::new()
            .map_err(spill_err)?
            .into_parts();
        Ok(Spill {
            writer: BufWriter::new(file),
            path,
            last: None,
            groups: 0,
            hasher: ContentHasher::new(),
            summary: SummaryBuilder::default(),
            line: Vec::new(),
            rows: 0,
        })
    }

    /// Adds the next group: group ids must come in increasing order. Its partitions and members
    /// are put in their normalized order here.
    pub fn push(&mut self, mut g: GroupSnapshot) -> Result<()> {
        if let Some(last) = &self.last {
            if *last >= g.group_id {
                return Err(Error::Internal(format!(
                    "group {} captured after {last}: groups must come in id order, each once",
                    g.group_id
                )));
            }
        }
        normalize_group(&mut g);
        self.line.clear();
        serde_json::to_writer(&mut self.line, &g).map_err(spill_err)?;
        self.hasher.add_encoded(&self.line);
        self.line.push(b'\n');
        self.writer.write_all(&self.line).map_err(spill_err)?;
        self.summary.add_group(&g);
        self.rows += g.partitions.len();
        self.groups += 1;
        self.last = Some(g.group_id);
        Ok(())
    }

    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Partitions (rows) pushed so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Ends the capture: the digest and summary with the connectors.
    pub fn seal(self, connectors: &[ConnectorSnapshot]) -> Result<Sealed> {
        let file = self.writer.into_inner().map_err(|e| spill_err(e.error()))?;
        file.sync_all().ok();
        Ok(Sealed {
            content_sha256: self.hasher.finish(connectors),
            summary: self.summary.finish(connectors),
            groups: SpilledGroups { path: self.path },
        })
    }
}

/// A finished spill.
pub struct Sealed {
    pub content_sha256: String,
    pub summary: Summary,
    pub groups: SpilledGroups,
}

/// The groups of a finished spill, to read back as often as needed.
#[derive(Debug)]
pub struct SpilledGroups {
    path: tempfile::TempPath,
}

impl SpilledGroups {
    /// The groups in order, one at a time.
    pub fn iter(&self) -> Result<impl Iterator<Item = Result<GroupSnapshot>>> {
        let file = File::open(&self.path).map_err(spill_err)?;
        Ok(BufReader::new(file).lines().map(|line| {
            let line = line.map_err(spill_err)?;
            serde_json::from_str(&line).map_err(spill_err)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::manifest::content_sha256;
    use crate::snapshot::model::{GroupState, GroupType, PartitionOffset, SnapshotContent};

    fn group(id: &str, topics: &[(&str, i32)]) -> GroupSnapshot {
        GroupSnapshot {
            group_id: id.into(),
            state: GroupState::Empty,
            protocol_type: "consumer".into(),
            group_type: GroupType::Classic,
            members: vec![],
            connector: None,
            configs: Default::default(),
            partitions: topics
                .iter()
                .map(|(t, p)| PartitionOffset {
                    log_start_offset: Some(0),
                    log_end_offset: Some(10),
                    lag: Some(3),
                    ..PartitionOffset::new(t.to_string(), *p, 7)
                })
                .collect(),
        }
    }

    #[test]
    fn digest_and_summary_match_those_of_the_whole_content() {
        let groups = vec![
            group("a", &[("t", 1), ("t", 0)]),
            group("b", &[]),
            group("c", &[("u", 0), ("t", 2)]),
        ];
        let mut spill = Spill::new().unwrap();
        for g in groups.clone() {
            spill.push(g).unwrap();
        }
        let sealed = spill.seal(&[]).unwrap();
        let mut content = SnapshotContent {
            groups,
            connectors: vec![],
        };
        assert_eq!(sealed.content_sha256, content_sha256(&content));
        assert_eq!(sealed.summary, Summary::of(&content));
        content.normalize();
        let back: Vec<GroupSnapshot> = sealed.groups.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(back, content.groups);
    }

    #[test]
    fn groups_out_of_order_or_twice_are_refused() {
        let mut spill = Spill::new().unwrap();
        spill.push(group("b", &[])).unwrap();
        for id in ["a", "b"] {
            let err = spill.push(group(id, &[])).unwrap_err();
            assert!(err.to_string().contains("in id order"), "{err}");
        }
        assert_eq!(spill.groups(), 1);
    }
}
