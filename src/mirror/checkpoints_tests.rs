use proptest::prelude::*;

use super::*;

/// One record of a golden fixture: what Kafka's own formatter printed, and the bytes.
struct Golden {
    formatter: String,
    key: Vec<u8>,
    value: Vec<u8>,
}

/// Reads a `fixtures/mirror/*.tsv` file: a `# ` line with the formatter's reading, then
/// `partition<TAB>offset<TAB>key hex<TAB>value hex`.
fn golden(name: &str) -> Vec<Golden> {
    let path = format!("{}/fixtures/mirror/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    let mut formatter = None;
    for line in text.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            if comment.starts_with("Checkpoint{") || comment.starts_with("OffsetSync{") {
                formatter = Some(comment.to_string());
            }
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 4, "{path}: {line}");
        out.push(Golden {
            formatter: formatter
                .take()
                .unwrap_or_else(|| panic!("{path}: no reading above {line}")),
            key: hex::decode(fields[2]).unwrap(),
            value: hex::decode(fields[3]).unwrap(),
        });
    }
    out
}

/// A checkpoint as Kafka's `Checkpoint.toString()` (and so `CheckpointFormatter`) writes it.
fn kafka_text_checkpoint(c: &Checkpoint) -> String {
    format!(
        "Checkpoint{{consumerGroupId={}, topicPartition={}-{}, upstreamOffset={}, downstreamOffset={}, metadata={}}}",
        c.group, c.topic, c.partition, c.upstream_offset, c.downstream_offset, c.metadata
    )
}

fn kafka_text_offset_sync(s: &OffsetSync) -> String {
    format!(
        "OffsetSync{{topicPartition={}-{}, upstreamOffset={}, downstreamOffset={}}}",
        s.topic, s.partition, s.upstream_offset, s.downstream_offset
    )
}

fn checkpoint(
    group: &str,
    topic: &str,
    partition: i32,
    up: i64,
    down: i64,
    metadata: &str,
) -> Checkpoint {
    Checkpoint {
        group: group.into(),
        topic: topic.into(),
        partition,
        upstream_offset: up,
        downstream_offset: down,
        metadata: metadata.into(),
    }
}

fn sync(topic: &str, partition: i32, up: i64, down: i64) -> OffsetSync {
    OffsetSync {
        topic: topic.into(),
        partition,
        upstream_offset: up,
        downstream_offset: down,
    }
}

/// The records MirrorMaker 2 of Kafka 4.3.1 wrote (fixtures/mirror/README.md): the figures seen,
/// and every field as Kafka's own formatter printed it.
#[test]
fn checkpoints_mirror_maker_wrote_decode_to_what_was_observed() {
    let records = golden("checkpoints.tsv");
    let got: Vec<Checkpoint> = records
        .iter()
        .map(|r| decode_checkpoint(&r.key, &r.value).unwrap())
        .collect();
    assert_eq!(
        got,
        vec![
            checkpoint("mm2-orders-app", "primary.mm2.orders", 0, 30, 1, ""),
            checkpoint("mm2-orders-app", "primary.mm2.orders", 1, 50, 1, ""),
            checkpoint("mm2-grüppe", "primary.mm2.orders", 0, 41, 41, ""),
            checkpoint(
                "mm2-grüppe",
                "primary.mm2.orders",
                1,
                58,
                58,
                "ov-test-metadata"
            ),
        ]
    );
    for (record, decoded) in records.iter().zip(&got) {
        assert_eq!(kafka_text_checkpoint(decoded), record.formatter);
    }
}

#[test]
fn offset_syncs_mirror_maker_wrote_decode_to_what_was_observed() {
    let records = golden("offset-syncs.tsv");
    let got: Vec<OffsetSync> = records
        .iter()
        .map(|r| decode_offset_sync(&r.key, &r.value).unwrap())
        .collect();
    assert_eq!(
        got,
        vec![
            sync("mm2.orders", 1, 0, 0),
            sync("mm2.orders", 0, 0, 0),
            sync("mm2.orders", 1, 57, 57),
            sync("mm2.orders", 0, 41, 41),
        ]
    );
    for (record, decoded) in records.iter().zip(&got) {
        assert_eq!(kafka_text_offset_sync(decoded), record.formatter);
    }
}

// Encoders of the layouts, for the tests only (the library never writes these records).

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn checkpoint_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut out = Vec::new();
    put_string(&mut out, group);
    put_string(&mut out, topic);
    out.extend_from_slice(&partition.to_be_bytes());
    out
}

fn checkpoint_value(version: i16, up: i64, down: i64, metadata: &str) -> Vec<u8> {
    let mut out = version.to_be_bytes().to_vec();
    out.extend_from_slice(&up.to_be_bytes());
    out.extend_from_slice(&down.to_be_bytes());
    put_string(&mut out, metadata);
    out
}

fn sync_key(topic: &str, partition: i32) -> Vec<u8> {
    let mut out = Vec::new();
    put_string(&mut out, topic);
    out.extend_from_slice(&partition.to_be_bytes());
    out
}

fn sync_value(up: i64, down: i64) -> Vec<u8> {
    let mut out = up.to_be_bytes().to_vec();
    out.extend_from_slice(&down.to_be_bytes());
    out
}

fn decode_error(result: Result<impl std::fmt::Debug>) -> String {
    match result {
        Ok(v) => panic!("decoded {v:?}"),
        Err(e) => {
            assert!(matches!(e, Error::Decode { .. }), "{e:?}");
            assert_eq!(e.exit_code(), crate::error::exit::INTEGRITY);
            e.to_string()
        }
    }
}

#[test]
fn malformed_checkpoints_are_errors_that_say_what_is_wrong() {
    let key = checkpoint_key("g", "t", 0);
    let value = checkpoint_value(0, 5, 6, "m");
    let mut long_key = key.clone();
    long_key.push(0);
    let mut long_value = value.clone();
    long_value.extend_from_slice(b"xy");
    let mut null_metadata = checkpoint_value(0, 5, 6, "");
    let n = null_metadata.len();
    null_metadata[n - 2..].copy_from_slice(&(-1i16).to_be_bytes());
    let mut bad_utf8_key = Vec::new();
    bad_utf8_key.extend_from_slice(&2i16.to_be_bytes());
    bad_utf8_key.extend_from_slice(&[0xc3, 0x28]);
    bad_utf8_key.extend_from_slice(&sync_key("t", 0));

    let cases: Vec<(&str, Vec<u8>, Vec<u8>, &str)> = vec![
        (
            "empty key",
            vec![],
            value.clone(),
            "key: group: 2 byte(s) needed at byte 0, 0 left",
        ),
        (
            "key cut in the group",
            key[..2].to_vec(),
            value.clone(),
            "key: group: 1 byte(s) of text needed at byte 2, 0 left",
        ),
        (
            "key without partition",
            key[..key.len() - 4].to_vec(),
            value.clone(),
            "key: partition: 4 byte(s) needed",
        ),
        (
            "key too long",
            long_key,
            value.clone(),
            "key: 1 byte(s) left over after the last field",
        ),
        (
            "group not UTF-8",
            bad_utf8_key,
            value.clone(),
            "key: group: not UTF-8 at byte 0",
        ),
        (
            "null group",
            (-1i16).to_be_bytes().to_vec(),
            value.clone(),
            "key: group: negative length -1 at byte 0",
        ),
        (
            "empty value",
            key.clone(),
            vec![],
            "value: version: 2 byte(s) needed at byte 0, 0 left",
        ),
        (
            "version 1",
            key.clone(),
            checkpoint_value(1, 5, 6, "m"),
            "value: version 1 is not one this offset-vault reads (only 0)",
        ),
        (
            "version -1",
            key.clone(),
            checkpoint_value(-1, 5, 6, "m"),
            "value: version -1 is not one",
        ),
        (
            "value cut in the upstream offset",
            key.clone(),
            value[..6].to_vec(),
            "value: upstream offset: 8 byte(s) needed at byte 2, 4 left",
        ),
        (
            "value without metadata",
            key.clone(),
            value[..18].to_vec(),
            "value: metadata: 2 byte(s) needed at byte 18, 0 left",
        ),
        (
            "null metadata",
            key.clone(),
            null_metadata,
            "value: metadata: negative length -1 at byte 18",
        ),
        (
            "value too long",
            key.clone(),
            long_value,
            "value: 2 byte(s) left over after the last field (at byte 21)",
        ),
        // Its first two bytes read as version 0: the layout mismatch shows up further on.
        (
            "an offset sync's value",
            key.clone(),
            sync_value(5, 6),
            "value: downstream offset: 8 byte(s) needed at byte 10, 6 left",
        ),
    ];
    for (name, key, value, want) in cases {
        let msg = decode_error(decode_checkpoint(&key, &value));
        assert!(
            msg.starts_with("MirrorMaker 2 checkpoint record: cannot decode: "),
            "{name}: {msg}"
        );
        assert!(msg.contains(want), "{name}: {msg}\n  wanted: {want}");
    }
}

#[test]
fn malformed_offset_syncs_are_errors_that_say_what_is_wrong() {
    let key = sync_key("orders", 3);
    let value = sync_value(10, 12);
    let mut long_value = value.clone();
    long_value.push(1);
    let cases: Vec<(&str, Vec<u8>, Vec<u8>, &str)> = vec![
        (
            "empty key",
            vec![],
            value.clone(),
            "key: topic: 2 byte(s) needed at byte 0, 0 left",
        ),
        (
            "key without partition",
            key[..8].to_vec(),
            value.clone(),
            "key: partition: 4 byte(s) needed at byte 8, 0 left",
        ),
        (
            "a checkpoint's key",
            checkpoint_key("g", "t", 0),
            value.clone(),
            "key: 3 byte(s) left over after the last field (at byte 7)",
        ),
        (
            "empty value",
            key.clone(),
            vec![],
            "value: upstream offset: 8 byte(s) needed at byte 0, 0 left",
        ),
        (
            "value without downstream offset",
            key.clone(),
            value[..8].to_vec(),
            "value: downstream offset: 8 byte(s) needed at byte 8, 0 left",
        ),
        (
            "value too long",
            key.clone(),
            long_value,
            "value: 1 byte(s) left over after the last field (at byte 16)",
        ),
        (
            "a checkpoint's value",
            key.clone(),
            checkpoint_value(0, 5, 6, "m"),
            "value: 5 byte(s) left over after the last field (at byte 16)",
        ),
    ];
    for (name, key, value, want) in cases {
        let msg = decode_error(decode_offset_sync(&key, &value));
        assert!(
            msg.starts_with("MirrorMaker 2 offset-sync record: cannot decode: "),
            "{name}: {msg}"
        );
        assert!(msg.contains(want), "{name}: {msg}\n  wanted: {want}");
    }
}

#[test]
fn extreme_values_decode() {
    let key = checkpoint_key("", "", i32::MIN);
    let value = checkpoint_value(0, i64::MIN, i64::MAX, "");
    assert_eq!(
        decode_checkpoint(&key, &value).unwrap(),
        checkpoint("", "", i32::MIN, i64::MIN, i64::MAX, "")
    );
    let long = "x".repeat(i16::MAX as usize);
    let key = sync_key(&long, i32::MAX);
    assert_eq!(
        decode_offset_sync(&key, &sync_value(-1, 0)).unwrap(),
        sync(&long, i32::MAX, -1, 0)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(
        key in proptest::collection::vec(any::<u8>(), 0..64),
        value in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let _ = decode_checkpoint(&key, &value);
        let _ = decode_offset_sync(&key, &value);
    }

    #[test]
    fn encoded_checkpoints_decode_to_themselves(
        group in "\\PC{0,20}",
        topic in "[a-zA-Z0-9._-]{1,40}",
        partition in any::<i32>(),
        up in any::<i64>(),
        down in any::<i64>(),
        metadata in "\\PC{0,30}",
    ) {
        let key = checkpoint_key(&group, &topic, partition);
        let value = checkpoint_value(0, up, down, &metadata);
        prop_assert_eq!(
            decode_checkpoint(&key, &value).unwrap(),
            checkpoint(&group, &topic, partition, up, down, &metadata)
        );
        // Every strict prefix of the key or the value is an error, not a panic.
        for cut in 0..key.len() {
            prop_assert!(decode_checkpoint(&key[..cut], &value).is_err());
        }
        for cut in 0..value.len() {
            prop_assert!(decode_checkpoint(&key, &value[..cut]).is_err());
        }
    }

    #[test]
    fn encoded_offset_syncs_decode_to_themselves(
        topic in "[a-zA-Z0-9._-]{1,40}",
        partition in any::<i32>(),
        up in any::<i64>(),
        down in any::<i64>(),
    ) {
        let key = sync_key(&topic, partition);
        let value = sync_value(up, down);
        prop_assert_eq!(decode_offset_sync(&key, &value).unwrap(), sync(&topic, partition, up, down));
        for cut in 0..value.len() {
            prop_assert!(decode_offset_sync(&key, &value[..cut]).is_err());
        }
    }
}
