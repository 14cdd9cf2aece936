//! Decoding MirrorMaker 2's checkpoint and offset-sync records. Pure: a record's key and value
//! bytes in, a typed record out; malformed bytes are an error, never a panic.
//!
//! Both are Kafka protocol structs (big-endian integers; a string is an int16 byte length, never
//! negative here, then that many bytes of UTF-8), as Kafka's connect-mirror-client `Checkpoint`
//! and connect-mirror `OffsetSync` classes define them:
//!
//! - checkpoint (topic `ALIAS.checkpoints.internal` on the target cluster): key = group (string),
//!   topic (string), partition (int32); value = version (int16, only 0 exists), upstream offset
//!   (int64), downstream offset (int64), metadata (string). The key's topic is the topic as it is
//!   called on the target cluster (`primary.orders` for `orders` under DefaultReplicationPolicy);
//!   the upstream offset is the group's committed offset on the source, the downstream offset
//!   MirrorMaker's translation of it onto the target topic.
//! - offset sync (topic `mm2-offset-syncs.ALIAS.internal`, on the source cluster by default or
//!   on the target with `offset-syncs.topic.location=target`): key = topic (string), partition
//!   (int32); value = upstream offset (int64), downstream offset (int64), with no version. Its
//!   topic is the one on the source cluster (`orders`).
//!
//! Bytes left over after the last field are an error: Kafka's own reader ignores them, but a
//! record longer than its layout is not one this decoder understands. Kafka's own readers of
//! these records are `org.apache.kafka.connect.mirror.formatters.CheckpointFormatter` and
//! `OffsetSyncFormatter`; the golden fixtures in `fixtures/mirror/` carry what they printed.

use serde::Serialize;

use crate::error::{Error, Result};

/// The version of a checkpoint's value: the only one MirrorMaker has written (checked up to Kafka 4.3).
pub const CHECKPOINT_VALUE_VERSION: i16 = 0;

/// A group's committed offset on the source cluster, translated by MirrorMaker onto the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checkpoint {
    /// The consumer group (the same name on both clusters).
    pub group: String,
    /// The topic as it is called on the target cluster (e.g. `primary.orders`).
    pub topic: String,
    pub partition: i32,
    /// The group's committed offset on the source cluster.
    pub upstream_offset: i64,
    /// That offset translated onto the target topic: where the group resumes on the target.
    pub downstream_offset: i64,
    /// The commit's metadata string, copied from the source.
    pub metadata: String,
}

/// A pair of offsets of the same record on the source and the target, which MirrorMaker
/// translates group offsets with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OffsetSync {
    /// The topic as it is called on the source cluster (e.g. `orders`).
    pub topic: String,
    pub partition: i32,
    /// The record's offset on the source.
    pub upstream_offset: i64,
    /// The same record's offset on the target.
    pub downstream_offset: i64,
}

const CHECKPOINT: &str = "MirrorMaker 2 checkpoint record";
const OFFSET_SYNC: &str = "MirrorMaker 2 offset-sync record";

/// Decodes a record of `ALIAS.checkpoints.internal`.
pub fn decode_checkpoint(key: &[u8], value: &[u8]) -> Result<Checkpoint> {
    let mut k = Reader::new(key, CHECKPOINT, "key");
    let group = k.string("group")?;
    let topic = k.string("topic")?;
    let partition = k.i32("partition")?;
    k.end()?;

    let mut v = Reader::new(value, CHECKPOINT, "value");
    let version = v.i16("version")?;
    if version != CHECKPOINT_VALUE_VERSION {
        return Err(v.error(format!(
            "version {version} is not one this offset-vault reads (only \
             {CHECKPOINT_VALUE_VERSION}); a newer MirrorMaker may have written it"
        )));
    }
    let upstream_offset = v.i64("upstream offset")?;
    let downstream_offset = v.i64("downstream offset")?;
    let metadata = v.string("metadata")?;
    v.end()?;

    Ok(Checkpoint {
        group,
        topic,
        partition,
        upstream_offset,
        downstream_offset,
        metadata,
    })
}

/// Decodes a record of `mm2-offset-syncs.ALIAS.internal`.
pub fn decode_offset_sync(key: &[u8], value: &[u8]) -> Result<OffsetSync> {
    let mut k = Reader::new(key, OFFSET_SYNC, "key");
    let topic = k.string("topic")?;
    let partition = k.i32("partition")?;
    k.end()?;

    let mut v = Reader::new(value, OFFSET_SYNC, "value");
    let upstream_offset = v.i64("upstream offset")?;
    let downstream_offset = v.i64("downstream offset")?;
    v.end()?;

    Ok(OffsetSync {
        topic,
        partition,
        upstream_offset,
        downstream_offset,
    })
}

/// Reads the fields of a key or a value in order, failing (never panicking) on truncation.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    record: &'static str,
    part: &'static str,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], record: &'static str, part: &'static str) -> Self {
        Reader {
            bytes,
            at: 0,
            record,
            part,
        }
    }

    fn error(&self, detail: String) -> Error {
        Error::Decode {
            path: self.record.to_string(),
            detail: format!("{}: {detail}", self.part),
        }
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let left = &self.bytes[self.at..];
        match left.get(..N).and_then(|b| <[u8; N]>::try_from(b).ok()) {
            Some(out) => {
                self.at += N;
                Ok(out)
            }
            None => Err(self.error(format!(
                "{what}: {N} byte(s) needed at byte {}, {} left",
                self.at,
                left.len()
            ))),
        }
    }

    fn i16(&mut self, what: &str) -> Result<i16> {
        Ok(i16::from_be_bytes(self.take(what)?))
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take(what)?))
    }

    fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.take(what)?))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let start = self.at;
        let len = self.i16(what)?;
        let Ok(len) = usize::try_from(len) else {
            return Err(self.error(format!(
                "{what}: negative length {len} at byte {start} (the field is not nullable)"
            )));
        };
        let left = &self.bytes[self.at..];
        let Some(raw) = left.get(..len) else {
            return Err(self.error(format!(
                "{what}: {len} byte(s) of text needed at byte {}, {} left",
                self.at,
                left.len()
            )));
        };
        let text = std::str::from_utf8(raw)
            .map_err(|e| self.error(format!("{what}: not UTF-8 at byte {start}: {e}")))?;
        self.at += len;
        Ok(text.to_string())
    }

    fn end(&self) -> Result<()> {
        let left = self.bytes.len() - self.at;
        if left == 0 {
            Ok(())
        } else {
            Err(self.error(format!(
                "{left} byte(s) left over after the last field (at byte {})",
                self.at
            )))
        }
    }
}

#[cfg(test)]
#[path = "checkpoints_tests.rs"]
mod tests;
