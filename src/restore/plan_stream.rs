//! Plan files written and read as a stream: a plan of a million partitions is never held in
//! memory. The groups are written one per line and read back one at a time into a spool, and
//! the checksum (the SHA-256 of the compact JSON of the body, as for a file written whole) is
//! computed as the groups go by. A file written whole and one written as a stream are the same
//! JSON; each reader reads both.

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::plan::GroupPlan;
use super::review::{PlanBody, PlanFile, PLAN_KIND};
use crate::error::{Error, Result};
use crate::spool::Spool;

/// The compact JSON of a body whose plan has no groups, cut where the groups go: the part up to
/// and including `"groups":` and the part after `[]`.
fn cut_at_groups(body: &PlanBody) -> Result<(String, String)> {
    let internal = |e: serde_json::Error| Error::Internal(format!("a plan body: {e}"));
    let compact = serde_json::to_string(body).map_err(internal)?;
    // Inside a JSON string a quote is escaped, so this key sequence is found only where the
    // body's own `plan` begins.
    let marker = format!(
        "\"plan\":{{\"snapshot_id\":{},\"groups\":[]",
        serde_json::to_string(&body.plan.snapshot_id).map_err(internal)?
    );
    let at = compact
        .find(&marker)
        .ok_or_else(|| Error::Internal("a plan body without its groups' place".into()))?;
    let end = at + marker.len();
    Ok((compact[..end - 2].to_string(), compact[end..].to_string()))
}

/// Feeds the hasher and the file: the compact bytes to both, `spacing` to the file only.
struct Twin<'a, W: Write> {
    file: &'a mut W,
    hasher: Sha256,
}

impl<W: Write> Twin<'_, W> {
    fn both(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.file.write_all(bytes)
    }

    fn spacing(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)
    }
}

impl PlanFile {
    /// Writes a plan file at `path` (replaced atomically) from a body without groups and its
    /// groups in order; the checksum is computed as the file is written. With `signer`, the
    /// author's signature over it is added to `signatures`. Returns the sealed file (without its
    /// groups).
    pub fn write_streamed(
        path: &Path,
        body: PlanBody,
        groups: &mut dyn Iterator<Item = Result<GroupPlan>>,
        mut signatures: Vec<crate::sign::Signature>,
        signer: Option<&crate::sign::SecretKey>,
    ) -> Result<PlanFile> {
        let (before, after) = cut_at_groups(&body)?;
        let io = |e: std::io::Error| Error::usage(format!("--plan-file {}: {e}", path.display()));
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let temp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
        let mut out = BufWriter::new(temp.as_file());
        let mut twin = Twin {
            file: &mut out,
            hasher: Sha256::new(),
        };
        twin.both(before.as_bytes()).map_err(io)?;
        twin.both(b"[").map_err(io)?;
        let mut first = true;
        for g in groups {
            let bytes = serde_json::to_vec(&g?)
                .map_err(|e| Error::Internal(format!("a group's plan: {e}")))?;
            if !first {
                twin.both(b",").map_err(io)?;
            }
            first = false;
            twin.spacing(b"\n").map_err(io)?;
            twin.both(&bytes).map_err(io)?;
        }
        twin.spacing(b"\n").map_err(io)?;
        twin.both(b"]").map_err(io)?;
        // The body's closing brace is hashed; the file's comes after the checksum.
        let (inner, brace) = after.split_at(after.len() - 1);
        twin.both(inner.as_bytes()).map_err(io)?;
        twin.hasher.update(brace.as_bytes());
        let sha256 = hex(twin.hasher.finalize().as_slice());
        if let Some(key) = signer {
            signatures.push(key.sign(crate::sign::Purpose::Plan, sha256.as_bytes()));
        }
        let tail = serde_json::json!({"sha256": sha256, "signatures": signatures});
        write!(out, ",\n\"sha256\":{}", tail["sha256"]).map_err(io)?;
        if !signatures.is_empty() {
            write!(out, ",\n\"signatures\":{}", tail["signatures"]).map_err(io)?;
        }
        out.write_all(b"}\n").map_err(io)?;
        out.flush().map_err(io)?;
        drop(out);
        temp.as_file().sync_all().map_err(io)?;
        temp.persist(path).map_err(|e| io(e.error))?;
        Ok(PlanFile {
            body,
            sha256,
            signatures,
        })
    }

    /// Reads and checks a plan file as a stream: kind, version, checksum, and (for `restore`,
    /// `for_reset` false, or `reset`; `None` for either) that it is a plan of that command.
    /// Returns the file without its groups and the groups in a spool, in the file's order.
    pub fn read_streamed(
        path: &Path,
        for_reset: Option<bool>,
    ) -> Result<(PlanFile, Spool<GroupPlan>)> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        let mut groups = Spool::new()?;
        let mut de = serde_json::Deserializer::from_reader(BufReader::new(file));
        let fields = ObjectSeed {
            groups: &mut groups,
            at_top: true,
        }
        .deserialize(&mut de)
        .and_then(|f| de.end().map(|()| f))
        .map_err(|e| Error::Decode {
            path: name.clone(),
            detail: format!("not a plan file (write one with restore --plan-file): {e}"),
        })?;
        check_kind(&name, &fields)?;
        let file: PlanFile =
            serde_json::from_value(Value::Object(fields)).map_err(|e| Error::Decode {
                path: name.clone(),
                detail: e.to_string(),
            })?;
        let (before, after) = cut_at_groups(&file.body)?;
        let mut hasher = Sha256::new();
        hasher.update(before.as_bytes());
        hasher.update(b"[");
        for (i, g) in groups.iter()?.enumerate() {
            if i > 0 {
                hasher.update(b",");
            }
            hasher.update(
                serde_json::to_vec(&g?)
                    .map_err(|e| Error::Internal(format!("a group's plan: {e}")))?,
            );
        }
        hasher.update(b"]");
        hasher.update(after.as_bytes());
        let actual = hex(hasher.finalize().as_slice());
        file.check(&name, &actual)?;
        if let Some(for_reset) = for_reset {
            file.check_command(path, for_reset)?;
        }
        groups.seal()?;
        Ok((file, groups))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The kind and major version of a plan file's fields.
fn check_kind(path: &str, fields: &Map<String, Value>) -> Result<()> {
    let kind = fields.get("kind").and_then(Value::as_str);
    if kind != Some(PLAN_KIND) {
        return Err(Error::Decode {
            path: path.to_string(),
            detail: format!(
                "not a plan file: kind is {:?}, expected {PLAN_KIND:?}",
                kind.unwrap_or_default()
            ),
        });
    }
    let version = fields
        .get("format_version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if version.split('.').next() != Some("1") {
        return Err(Error::UnsupportedFormat {
            path: path.to_string(),
            found: version.to_string(),
            supported: "major version 1".into(),
        });
    }
    Ok(())
}

/// An object of a plan file: every field as a value, except (at the top) the plan, and in the
/// plan its groups, which go to the spool one at a time.
struct ObjectSeed<'a> {
    groups: &'a mut Spool<GroupPlan>,
    at_top: bool,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = Map<String, Value>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(Fields {
            groups: self.groups,
            at_top: self.at_top,
        })
    }
}

/// The fields of an object; at the top, `plan` is read by a nested [`ObjectSeed`], and in the
/// plan, `groups` by [`Groups`].
struct Fields<'a> {
    groups: &'a mut Spool<GroupPlan>,
    at_top: bool,
}

impl<'de> Visitor<'de> for Fields<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match (self.at_top, key.as_str()) {
                (true, "plan") => Value::Object(map.next_value_seed(ObjectSeed {
                    groups: &mut *self.groups,
                    at_top: false,
                })?),
                (false, "groups") => {
                    map.next_value_seed(Groups {
                        groups: &mut *self.groups,
                    })?;
                    Value::Array(Vec::new())
                }
                _ => map.next_value::<Value>()?,
            };
            out.insert(key, value);
        }
        Ok(out)
    }
}

/// The plan's groups, each pushed to the spool as it is read.
struct Groups<'a> {
    groups: &'a mut Spool<GroupPlan>,
}

impl<'de> DeserializeSeed<'de> for Groups<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Groups<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of group plans")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(g) = seq.next_element::<GroupPlan>()? {
            self.groups.push(&g).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::review::tests::sealed_plan;

    fn whole_and_streamed() -> (PlanFile, tempfile::TempDir, std::path::PathBuf) {
        let whole = sealed_plan();
        assert!(!whole.body.plan.groups.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        let mut head = whole.body.clone();
        let groups = std::mem::take(&mut head.plan.groups);
        let written =
            PlanFile::write_streamed(&path, head, &mut groups.into_iter().map(Ok), vec![], None)
                .unwrap();
        assert_eq!(
            written.sha256, whole.sha256,
            "the same checksum as written whole"
        );
        (whole, dir, path)
    }

    #[test]
    fn a_streamed_file_is_the_same_plan_for_both_readers() {
        let (whole, _dir, path) = whole_and_streamed();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(PlanFile::from_bytes("p", &bytes).unwrap(), whole);
        let (head, groups) = PlanFile::read_streamed(&path, Some(false)).unwrap();
        assert_eq!(head.sha256, whole.sha256);
        let read: Vec<GroupPlan> = groups.reader().unwrap().map(Result::unwrap).collect();
        assert_eq!(read, whole.body.plan.groups);
        assert!(head.body.plan.groups.is_empty());
    }

    #[test]
    fn a_file_written_whole_is_read_as_a_stream() {
        let whole = sealed_plan();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        std::fs::write(&path, whole.to_bytes()).unwrap();
        let (head, groups) = PlanFile::read_streamed(&path, Some(false)).unwrap();
        assert_eq!(head.sha256, whole.sha256);
        assert_eq!(groups.len(), whole.body.plan.groups.len());
    }

    #[test]
    fn any_changed_target_or_group_is_refused_by_the_streamed_reader() {
        let (_whole, _dir, path) = whole_and_streamed();
        let text = std::fs::read_to_string(&path).unwrap();
        // (what is changed, the text before, after)
        let cases = [
            ("a target", "\"target\":", "\"target\":1"),
            ("a group's id", "\"group_id\":\"", "\"group_id\":\"x"),
            (
                "the snapshot id",
                "\"snapshot_id\":\"",
                "\"snapshot_id\":\"x",
            ),
        ];
        for (what, from, to) in cases {
            let edited = text.replacen(from, to, 1);
            assert_ne!(edited, text, "{what}: the case must change the file");
            std::fs::write(&path, &edited).unwrap();
            let err = PlanFile::read_streamed(&path, Some(false)).unwrap_err();
            assert!(
                matches!(err, Error::Integrity { .. } | Error::Decode { .. }),
                "{what}: {err}"
            );
        }
    }
}
