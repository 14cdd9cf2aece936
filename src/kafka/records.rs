//! Reading individual records: the last record a group consumed (its timestamp and fingerprint,
//! for `--with-timestamps`), and short offset ranges of partitions (to find a record again on
//! another cluster, or to read a small internal topic whole).
//!
//! A record's fingerprint is the SHA-256 of its key, value and headers, each length-prefixed (a
//! null key or value, or a header without a value, is length -1): two records with the same
//! fingerprint carry the same bytes, whatever offset, partition or cluster they are at. The
//! timestamp is not part of it; it is compared on its own.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{BorrowedMessage, Headers};
use rdkafka::{Message, Offset, TopicPartitionList};
use sha2::{Digest, Sha256};

use super::TopicPartition;
use crate::error::{Error, Result};

/// One record as read: where it is, when, what it holds (its fingerprint), and its key and value
/// when they were asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordPrint {
    pub offset: i64,
    /// The record's timestamp (ms), when it has one.
    pub timestamp: Option<i64>,
    /// Hex SHA-256 of key, value and headers (see the module's documentation).
    pub digest: String,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// The fingerprint of a record's key, value and headers.
pub fn record_digest<'a>(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
) -> String {
    fn field(h: &mut Sha256, bytes: Option<&[u8]>) {
        match bytes {
            Some(b) => {
                h.update((b.len() as i64).to_be_bytes());
                h.update(b);
            }
            None => h.update((-1i64).to_be_bytes()),
        }
    }
    let mut h = Sha256::new();
    field(&mut h, key);
    field(&mut h, value);
    let headers: Vec<(&str, Option<&[u8]>)> = headers.into_iter().collect();
    h.update((headers.len() as i64).to_be_bytes());
    for (name, value) in headers {
        field(&mut h, Some(name.as_bytes()));
        field(&mut h, value);
    }
    hex::encode(h.finalize())
}

fn print(msg: &BorrowedMessage<'_>, keep_payload: bool) -> RecordPrint {
    let headers: Vec<(&str, Option<&[u8]>)> = msg
        .headers()
        .map(|hs| hs.iter().map(|h| (h.key, h.value)).collect())
        .unwrap_or_default();
    RecordPrint {
        offset: msg.offset(),
        timestamp: msg.timestamp().to_millis(),
        digest: record_digest(msg.key(), msg.payload(), headers),
        key: keep_payload
            .then(|| msg.key().map(<[u8]>::to_vec))
            .flatten(),
        value: keep_payload
            .then(|| msg.payload().map(<[u8]>::to_vec))
            .flatten(),
    }
}

/// Reads the record at the given offset of each partition; returns each one found, and the
/// records that could not be read before the deadline (`topic[partition]@offset`). A record
/// compacted or deleted away is neither (the next record comes instead).
pub(super) fn read_records_at(
    consumer: &BaseConsumer,
    mut wanted: HashMap<TopicPartition, i64>,
    deadline: Instant,
) -> Result<(HashMap<TopicPartition, RecordPrint>, Vec<String>)> {
    let mut tpl = TopicPartitionList::new();
    for ((topic, partition), offset) in &wanted {
        tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
            .map_err(|e| Error::kafka("assign", e))?;
    }
    consumer
        .assign(&tpl)
        .map_err(|e| Error::kafka("assign", e))?;
    let mut found = HashMap::new();
    let mut last_error = None;
    while !wanted.is_empty() && Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(msg)) => {
                let key = (msg.topic().to_string(), msg.partition());
                // A later offset than asked means the record was compacted away.
                if let Some(&want) = wanted.get(&key).filter(|&&w| msg.offset() >= w) {
                    wanted.remove(&key);
                    if msg.offset() == want {
                        found.insert(key.clone(), print(&msg, false));
                    }
                }
            }
            Some(Err(e)) => {
                tracing::debug!("reading records: {e}");
                last_error = Some(e.to_string());
            }
            None => {}
        }
    }
    let why = last_error
        .map(|e| format!("; last consumer error: {e}"))
        .unwrap_or_default();
    let missing = wanted
        .iter()
        .map(|((t, p), o)| format!("{t}[{p}]@{o} (record not read within the timeout{why})"))
        .collect();
    Ok((found, missing))
}

/// One offset range to read: `[from, until)` of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub tp: TopicPartition,
    pub from: i64,
    pub until: i64,
}

/// Reads every record of the given ranges (each partition once); the records of each, in offset
/// order, with key and value when `keep_payload`. A range is done when the consumer's position
/// reaches its end (past control records and compacted gaps). Fails when a range is not read
/// before the deadline: a partial read is never taken for the whole.
pub(super) fn read_ranges(
    consumer: &BaseConsumer,
    ranges: &[Range],
    keep_payload: bool,
    deadline: Instant,
) -> Result<BTreeMap<TopicPartition, Vec<RecordPrint>>> {
    let mut out: BTreeMap<TopicPartition, Vec<RecordPrint>> = BTreeMap::new();
    let mut pending: HashMap<TopicPartition, i64> = HashMap::new();
    let mut tpl = TopicPartitionList::new();
    for r in ranges.iter().filter(|r| r.until > r.from) {
        out.entry(r.tp.clone()).or_default();
        if pending.insert(r.tp.clone(), r.until).is_some() {
            return Err(Error::Internal(format!(
                "read_ranges: {}[{}] asked for twice",
                r.tp.0, r.tp.1
            )));
        }
        tpl.add_partition_offset(&r.tp.0, r.tp.1, Offset::Offset(r.from))
            .map_err(|e| Error::kafka("assign", e))?;
    }
    for r in ranges.iter().filter(|r| r.until <= r.from) {
        out.entry(r.tp.clone()).or_default();
    }
    if pending.is_empty() {
        return Ok(out);
    }
    consumer
        .assign(&tpl)
        .map_err(|e| Error::kafka("assign", e))?;
    let mut last_error = None;
    while !pending.is_empty() {
        if Instant::now() >= deadline {
            let why = last_error
                .map(|e| format!("; last consumer error: {e}"))
                .unwrap_or_default();
            let (tp, until) = pending.iter().next().expect("not empty");
            return Err(Error::kafka(
                "read records",
                format!(
                    "{}[{}] was not read up to offset {until} within the timeout{why}",
                    tp.0, tp.1
                ),
            ));
        }
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(msg)) => {
                let tp = (msg.topic().to_string(), msg.partition());
                if let Some(&until) = pending.get(&tp) {
                    if msg.offset() < until {
                        out.entry(tp.clone())
                            .or_default()
                            .push(print(&msg, keep_payload));
                    }
                    if msg.offset() + 1 >= until {
                        pending.remove(&tp);
                    }
                }
            }
            Some(Err(e)) => {
                tracing::debug!("reading record ranges: {e}");
                last_error = Some(e.to_string());
            }
            None => {
                // Control records and compacted gaps deliver nothing: the position says how far
                // the consumer got.
                let positions = consumer
                    .position()
                    .map_err(|e| Error::kafka("position", e))?;
                for e in positions.elements() {
                    let tp = (e.topic().to_string(), e.partition());
                    if let (Some(&until), Offset::Offset(at)) = (pending.get(&tp), e.offset()) {
                        if at >= until {
                            pending.remove(&tp);
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::record_digest;

    #[test]
    fn the_fingerprint_tells_null_from_empty_and_key_from_value() {
        let none = record_digest(None, None, []);
        let empty_key = record_digest(Some(b""), None, []);
        let key_a = record_digest(Some(b"a"), None, []);
        let value_a = record_digest(None, Some(b"a"), []);
        let header = record_digest(None, None, [("a", None)]);
        let header_empty = record_digest(None, None, [("a", Some(&b""[..]))]);
        let all = [&none, &empty_key, &key_a, &value_a, &header, &header_empty];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(key_a, record_digest(Some(b"a"), None, []));
        assert_eq!(key_a.len(), 64);
    }

    #[test]
    fn header_order_and_boundaries_count() {
        let ab = record_digest(None, None, [("a", Some(&b"1"[..])), ("b", Some(&b"2"[..]))]);
        let ba = record_digest(None, None, [("b", Some(&b"2"[..])), ("a", Some(&b"1"[..]))]);
        assert_ne!(ab, ba);
        // "ab" + "" is not "a" + "b".
        assert_ne!(
            record_digest(Some(b"ab"), Some(b""), []),
            record_digest(Some(b"a"), Some(b"b"), [])
        );
    }
}
