//! Decoding the records of `__consumer_offsets`. Pure: a record's key and value bytes in, a
//! typed record out.
//!
//! Every record's key starts with an int16 record type (the "version" of the key in older
//! brokers). Types 0 and 1 are offset commits: the key holds group, topic and partition; the
//! value (versions 0 to 4, version 4 the first flexible one, where the topic id is a tagged
//! field) holds offset, leader epoch, metadata and commit time; a null value is a tombstone (the
//! offset was deleted or expired). Type 2 is a classic group's metadata; 3, 11 and 17 are the
//! metadata of consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups; their
//! tombstones say the group was deleted. The other group-coordinator records (members,
//! assignments, topologies) are not needed to know where a group was and are reported as
//! [`LogRecord::Ignored`]; a record type this decoder does not know is [`LogRecord::Unknown`],
//! to be counted and skipped, never a failure of the whole log.
//!
//! Kafka documents the layouts in its group-coordinator module's message JSON files; its own
//! decoder of this topic is `org.apache.kafka.tools.consumer.OffsetsMessageFormatter`, which the
//! tests use as the independent reference.

use base64::engine::general_purpose::STANDARD_NO_PAD;
use base64::Engine;
use serde::Serialize;

/// What kind of group a metadata record is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    /// A classic group (record type 2), with the protocol type its value names (`consumer`,
    /// `connect`, ...; `None` on a tombstone).
    Classic { protocol_type: Option<String> },
    /// A consumer group of the KIP-848 protocol (type 3).
    Consumer,
    /// A share group (type 11).
    Share,
    /// A streams group (type 17).
    Streams,
}

/// The value of an offset commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitValue {
    /// The value's version (0 to 4).
    pub version: i16,
    pub offset: i64,
    /// The leader epoch of the last consumed record (version 3 and later; `None` for -1).
    pub leader_epoch: Option<i32>,
    pub metadata: String,
    /// When the coordinator wrote the commit (ms since the epoch).
    pub commit_timestamp: i64,
    /// Version 1 only (`None` for -1).
    pub expire_timestamp: Option<i64>,
    /// The topic's id (a tagged field of version 4), written as the rest of this tool writes
    /// topic ids (librdkafka's form: standard base64 without padding; Kafka's own tools print
    /// the same 16 bytes in the URL-safe alphabet, `-` and `_` for `+` and `/`).
    pub topic_id: Option<String>,
}

/// One record of `__consumer_offsets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "record", rename_all = "kebab-case")]
pub enum LogRecord {
    /// An offset commit, or (value `None`) the deletion or expiry of that offset.
    OffsetCommit {
        group: String,
        topic: String,
        partition: i32,
        value: Option<CommitValue>,
    },
    /// A group's metadata; `deleted` for a tombstone (the group was deleted or expired).
    GroupMetadata {
        group: String,
        kind: GroupKind,
        deleted: bool,
    },
    /// A source connector's position, from Kafka Connect's offsets topic: the connector, the
    /// source partition and its offset as canonical JSON (keys sorted), or (offset `None`) the
    /// deletion of that partition's offset.
    SourceOffset {
        connector: String,
        partition: String,
        offset: Option<String>,
    },
    /// A group-coordinator record this tool does not need (members, assignments, ...).
    Ignored { record_type: i16 },
    /// A record type this decoder does not know.
    Unknown { record_type: i16 },
}

/// A record that could not be decoded, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot decode a record of __consumer_offsets: {0}")]
pub struct DecodeError(pub String);

/// Reads the fields of one record, big-endian, failing on truncation.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(DecodeError(format!(
                "{what}: {n} byte(s) needed at {}, {} left",
                self.at,
                self.bytes.len().saturating_sub(self.at)
            )));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn i16(&mut self, what: &str) -> Result<i16, DecodeError> {
        let b = self.take(2, what)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes(b.try_into().expect("4 bytes")))
    }

    fn i64(&mut self, what: &str) -> Result<i64, DecodeError> {
        let b = self.take(8, what)?;
        Ok(i64::from_be_bytes(b.try_into().expect("8 bytes")))
    }

    fn uvarint(&mut self, what: &str) -> Result<u64, DecodeError> {
        let mut out: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.take(1, what)?[0];
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(DecodeError(format!(
            "{what}: a varint longer than 10 bytes"
        )))
    }

    fn text(&mut self, len: usize, what: &str) -> Result<String, DecodeError> {
        let b = self.take(len, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError(format!("{what}: not UTF-8")))
    }

    /// A non-flexible string: int16 length (-1: null).
    fn string(&mut self, what: &str) -> Result<Option<String>, DecodeError> {
        match self.i16(what)? {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError(format!("{what}: length {n}"))),
            n => self.text(n as usize, what).map(Some),
        }
    }

    /// A flexible (compact) string: unsigned varint length + 1 (0: null).
    fn compact_string(&mut self, what: &str) -> Result<Option<String>, DecodeError> {
        match self.uvarint(what)? {
            0 => Ok(None),
            n => self.text((n - 1) as usize, what).map(Some),
        }
    }

    /// The tagged fields of a flexible version: (tag, bytes) pairs.
    fn tagged(&mut self, what: &str) -> Result<Vec<(u64, &'a [u8])>, DecodeError> {
        let n = self.uvarint(what)?;
        let mut out = Vec::new();
        for _ in 0..n {
            let tag = self.uvarint(what)?;
            let size = self.uvarint(what)? as usize;
            out.push((tag, self.take(size, what)?));
        }
        Ok(out)
    }
}

fn required(s: Option<String>, what: &str) -> Result<String, DecodeError> {
    s.ok_or_else(|| DecodeError(format!("{what} is null")))
}

/// Decodes one record: its key, and its value (`None` for a tombstone).
pub fn decode(key: &[u8], value: Option<&[u8]>) -> Result<LogRecord, DecodeError> {
    let mut k = Reader::new(key);
    let record_type = k.i16("record type")?;
    match record_type {
        0 | 1 => {
            let group = required(k.string("group")?, "group")?;
            let topic = required(k.string("topic")?, "topic")?;
            let partition = k.i32("partition")?;
            let value = value.map(decode_commit).transpose()?;
            Ok(LogRecord::OffsetCommit {
                group,
                topic,
                partition,
                value,
            })
        }
        2 | 3 | 11 | 17 => {
            let group = required(k.string("group")?, "group")?;
            let kind = match record_type {
                2 => GroupKind::Classic {
                    protocol_type: value.map(classic_protocol_type).transpose()?,
                },
                3 => GroupKind::Consumer,
                11 => GroupKind::Share,
                _ => GroupKind::Streams,
            };
            Ok(LogRecord::GroupMetadata {
                group,
                kind,
                deleted: value.is_none(),
            })
        }
        4..=10 | 12..=16 | 18..=24 => Ok(LogRecord::Ignored { record_type }),
        _ => Ok(LogRecord::Unknown { record_type }),
    }
}

fn decode_commit(value: &[u8]) -> Result<CommitValue, DecodeError> {
    let mut v = Reader::new(value);
    let version = v.i16("value version")?;
    if !(0..=4).contains(&version) {
        return Err(DecodeError(format!(
            "offset commit value version {version} (this decoder reads 0 to 4)"
        )));
    }
    let offset = v.i64("offset")?;
    let leader_epoch = if version >= 3 {
        Some(v.i32("leader epoch")?).filter(|e| *e >= 0)
    } else {
        None
    };
    let metadata = if version >= 4 {
        v.compact_string("metadata")?
    } else {
        v.string("metadata")?
    };
    let commit_timestamp = v.i64("commit timestamp")?;
    let expire_timestamp = if version == 1 {
        Some(v.i64("expire timestamp")?).filter(|t| *t >= 0)
    } else {
        None
    };
    let mut topic_id = None;
    if version >= 4 {
        for (tag, bytes) in v.tagged("tagged fields")? {
            // Tag 0: the topic id, a UUID.
            if tag == 0 && bytes.len() == 16 {
                topic_id = Some(STANDARD_NO_PAD.encode(bytes));
            }
        }
    }
    Ok(CommitValue {
        version,
        offset,
        leader_epoch,
        metadata: metadata.unwrap_or_default(),
        commit_timestamp,
        expire_timestamp,
        topic_id,
    })
}

/// The protocol type of a classic group's metadata value (the first field of every version).
fn classic_protocol_type(value: &[u8]) -> Result<String, DecodeError> {
    let mut v = Reader::new(value);
    let version = v.i16("group metadata version")?;
    if !(0..=3).contains(&version) {
        return Err(DecodeError(format!(
            "group metadata value version {version} (this decoder reads 0 to 3)"
        )));
    }
    Ok(v.string("protocol type")?.unwrap_or_default())
}

/// The `currentStateTimestamp` of a classic group's metadata value (versions 2 and 3): when the
/// group entered the state it was in when the record was written (for an Empty group, when it
/// became Empty). Kafka expires an Empty classic group's offsets counting from this instant.
/// `None` for versions 0 and 1, which do not have it, and for -1.
pub fn classic_state_timestamp(value: &[u8]) -> Result<Option<i64>, DecodeError> {
    let mut v = Reader::new(value);
    let version = v.i16("group metadata version")?;
    if !(0..=3).contains(&version) {
        return Err(DecodeError(format!(
            "group metadata value version {version} (this decoder reads 0 to 3)"
        )));
    }
    v.string("protocol type")?;
    v.i32("generation")?;
    v.string("protocol")?;
    v.string("leader")?;
    if version < 2 {
        return Ok(None);
    }
    Ok(Some(v.i64("current state timestamp")?).filter(|t| *t >= 0))
}

/// A JSON value as canonical text: object keys sorted at every level, no spaces; the same
/// position always has the same text, whichever worker wrote it.
pub fn canonical_json(value: &serde_json::Value) -> String {
    fn sorted(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                serde_json::Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Decodes one record of Kafka Connect's offsets topic: the key is the JSON array
/// `[connector, partition]` (Connect's internal JSON converter, without schemas), the value the
/// offset as a JSON object, or null when the offset was deleted (`DELETE /connectors/X/offsets`,
/// or a reset).
pub fn decode_connect(key: &[u8], value: Option<&[u8]>) -> Result<LogRecord, DecodeError> {
    let key: serde_json::Value = serde_json::from_slice(key)
        .map_err(|e| DecodeError(format!("a Connect offsets key that is not JSON: {e}")))?;
    let (connector, partition) = match key.as_array().map(Vec::as_slice) {
        Some([serde_json::Value::String(c), p]) => (c.clone(), canonical_json(p)),
        _ => {
            return Err(DecodeError(format!(
                "a Connect offsets key that is not [connector, partition]: {key}"
            )))
        }
    };
    let offset = match value {
        None => None,
        Some(v) => {
            let v: serde_json::Value = serde_json::from_slice(v).map_err(|e| {
                DecodeError(format!("a Connect offsets value that is not JSON: {e}"))
            })?;
            (!v.is_null()).then(|| canonical_json(&v))
        }
    };
    Ok(LogRecord::SourceOffset {
        connector,
        partition,
        offset,
    })
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
