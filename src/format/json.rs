//! JSON encodings: `offsets.json` and `connectors.json`. Offsets are JSON integers, read back as
//! exact 64-bit values.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::check_format_version;
use crate::model::{ConnectorSnapshot, GroupSnapshot, SnapshotMeta, FORMAT_VERSION};

#[derive(Serialize, Deserialize)]
struct ConnectorsDoc {
    format_version: String,
    snapshot_id: String,
    connectors: Vec<ConnectorSnapshot>,
}

#[derive(Deserialize)]
struct VersionOnly {
    format_version: String,
}

fn to_pretty<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::Internal(format!("encode JSON: {e}")))?;
    out.push(b'\n');
    Ok(out)
}

fn decode<T: for<'de> Deserialize<'de>>(path: &str, bytes: &[u8]) -> Result<T> {
    let v: VersionOnly = serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        path: path.to_string(),
        detail: e.to_string(),
    })?;
    check_format_version(path, &v.format_version)?;
    serde_json::from_slice(bytes).map_err(|e| Error::Decode {
        path: path.to_string(),
        detail: e.to_string(),
    })
}

pub fn encode_offsets(meta: &SnapshotMeta, groups: &[GroupSnapshot]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_offsets(&mut out, meta, &mut groups.iter().cloned().map(Ok))?;
    Ok(out)
}

pub fn decode_offsets(path: &str, bytes: &[u8]) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    super::stream::collect(|each| read_offsets(path, bytes, each))
}

/// A sequence serialized from an iterator, so a document is written without collecting it. The
/// first error of the iterator is kept in `failed` and stops the serializer.
pub struct SeqOf<'a, T> {
    items: RefCell<&'a mut dyn Iterator<Item = Result<T>>>,
    failed: RefCell<Option<Error>>,
}

impl<'a, T> SeqOf<'a, T> {
    pub fn new(items: &'a mut dyn Iterator<Item = Result<T>>) -> Self {
        SeqOf {
            items: RefCell::new(items),
            failed: RefCell::new(None),
        }
    }

    /// The iterator's error, when it stopped the serializer; otherwise `other`.
    pub fn error_or(&self, other: impl FnOnce() -> Error) -> Error {
        self.failed.borrow_mut().take().unwrap_or_else(other)
    }
}

impl<T: Serialize> Serialize for SeqOf<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        let mut items = self.items.borrow_mut();
        for item in &mut **items {
            match item {
                Ok(item) => seq.serialize_element(&item)?,
                Err(e) => {
                    *self.failed.borrow_mut() = Some(e);
                    return Err(S::Error::custom("stopped by a read error"));
                }
            }
        }
        seq.end()
    }
}

/// Writes `offsets.json` (pretty, as [`encode_offsets`] does) as the groups come.
pub fn write_offsets<W: std::io::Write>(
    out: W,
    meta: &SnapshotMeta,
    groups: &mut dyn Iterator<Item = Result<GroupSnapshot>>,
) -> Result<W> {
    #[derive(Serialize)]
    struct Doc<'a> {
        format_version: &'a str,
        snapshot: &'a SnapshotMeta,
        groups: &'a SeqOf<'a, GroupSnapshot>,
    }
    let seq = SeqOf::new(groups);
    let mut w = std::io::BufWriter::new(out);
    let doc = Doc {
        format_version: FORMAT_VERSION,
        snapshot: meta,
        groups: &seq,
    };
    let encode = |e: &dyn std::fmt::Display| Error::Internal(format!("encode JSON: {e}"));
    serde_json::to_writer_pretty(&mut w, &doc).map_err(|e| seq.error_or(|| encode(&e)))?;
    std::io::Write::write_all(&mut w, b"\n").map_err(|e| encode(&e))?;
    w.into_inner().map_err(|e| encode(&e.error()))
}

/// The streaming reader of an offsets document: groups are handed over one at a time as they
/// are decoded, never held together.
mod offsets_doc {
    use std::cell::RefCell;

    use super::{check_format_version, Error, GroupSnapshot, Result, SnapshotMeta};
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

    pub(super) struct Groups<'a, 'b> {
        each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
        failed: &'b RefCell<Option<Error>>,
    }
    impl<'de> DeserializeSeed<'de> for Groups<'_, '_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for Groups<'_, '_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of groups")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
            while let Some(g) = seq.next_element::<GroupSnapshot>()? {
                if let Err(e) = (self.each)(g) {
                    *self.failed.borrow_mut() = Some(e);
                    return Err(de::Error::custom("stopped"));
                }
            }
            Ok(())
        }
    }
    pub(super) struct DocVisitor<'a, 'b> {
        pub(super) path: &'a str,
        pub(super) each: &'a mut dyn FnMut(GroupSnapshot) -> Result<()>,
        pub(super) failed: &'b RefCell<Option<Error>>,
    }
    impl<'de> Visitor<'de> for DocVisitor<'_, '_> {
        type Value = SnapshotMeta;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an offsets document")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<SnapshotMeta, A::Error> {
            let (mut version, mut meta, mut groups) = (false, None, false);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "format_version" => {
                        let v: String = map.next_value()?;
                        if let Err(e) = check_format_version(self.path, &v) {
                            *self.failed.borrow_mut() = Some(e);
                            return Err(de::Error::custom("stopped"));
                        }
                        version = true;
                    }
                    "snapshot" => meta = Some(map.next_value::<SnapshotMeta>()?),
                    "groups" => {
                        map.next_value_seed(Groups {
                            each: &mut *self.each,
                            failed: self.failed,
                        })?;
                        groups = true;
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            if !version {
                return Err(de::Error::missing_field("format_version"));
            }
            if !groups {
                return Err(de::Error::missing_field("groups"));
            }
            meta.ok_or_else(|| de::Error::missing_field("snapshot"))
        }
    }
}

/// Reads `offsets.json` as a stream, handing each group to `each` as it is parsed; only one
/// group is held at a time. Returns the snapshot metadata.
pub fn read_offsets<R: std::io::Read>(
    path: &str,
    reader: R,
    each: &mut dyn FnMut(GroupSnapshot) -> Result<()>,
) -> Result<SnapshotMeta> {
    let failed = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let decoded = serde::Deserializer::deserialize_map(
        &mut de,
        offsets_doc::DocVisitor {
            path,
            each,
            failed: &failed,
        },
    )
    .and_then(|meta| de.end().map(|()| meta));
    decoded.map_err(|e| {
        failed.borrow_mut().take().unwrap_or_else(|| Error::Decode {
            path: path.to_string(),
            detail: e.to_string(),
        })
    })
}

pub fn encode_connectors(snapshot_id: &str, connectors: &[ConnectorSnapshot]) -> Result<Vec<u8>> {
    to_pretty(&ConnectorsDoc {
        format_version: FORMAT_VERSION.into(),
        snapshot_id: snapshot_id.to_string(),
        connectors: connectors.to_vec(),
    })
}

/// Returns the snapshot id recorded in the file and the connectors.
pub fn decode_connectors(path: &str, bytes: &[u8]) -> Result<(String, Vec<ConnectorSnapshot>)> {
    let doc: ConnectorsDoc = decode(path, bytes)?;
    Ok((doc.snapshot_id, doc.connectors))
}
