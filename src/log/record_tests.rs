use serde_json::Value;

use super::*;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Records the real broker wrote, with what Kafka's own `OffsetsMessageFormatter` printed for
/// them: every field must agree.
#[test]
fn records_of_the_real_broker_decode_as_kafkas_own_formatter_prints_them() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/log/broker-4.3.1.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = doc["records"].as_array().unwrap();
    assert!(cases.len() >= 10, "{}", cases.len());
    let (mut commits, mut tombstones, mut metadata) = (0, 0, 0);
    for case in cases {
        let key = hex(case["key"].as_str().unwrap());
        let value = case["value"].as_str().map(hex);
        let got = decode(&key, value.as_deref()).unwrap_or_else(|e| panic!("{case}: {e}"));
        let want = &case["formatter"];
        match got {
            LogRecord::OffsetCommit {
                group,
                topic,
                partition,
                value,
            } => {
                let k = &want["key"]["data"];
                assert_eq!(want["key"]["type"], 1, "{case}");
                assert_eq!(
                    (group.as_str(), topic.as_str(), i64::from(partition)),
                    (
                        k["group"].as_str().unwrap(),
                        k["topic"].as_str().unwrap(),
                        k["partition"].as_i64().unwrap()
                    )
                );
                match value {
                    None => {
                        assert!(want["value"].is_null(), "{case}");
                        tombstones += 1;
                    }
                    Some(v) => {
                        let d = &want["value"]["data"];
                        assert_eq!(
                            i64::from(v.version),
                            want["value"]["version"].as_i64().unwrap()
                        );
                        assert_eq!(v.offset, d["offset"].as_i64().unwrap(), "{case}");
                        assert_eq!(
                            v.leader_epoch.map(i64::from).unwrap_or(-1),
                            d["leaderEpoch"].as_i64().unwrap(),
                            "{case}"
                        );
                        assert_eq!(v.metadata, d["metadata"].as_str().unwrap(), "{case}");
                        assert_eq!(v.commit_timestamp, d["commitTimestamp"].as_i64().unwrap());
                        // Kafka prints ids in the URL-safe alphabet; this tool in librdkafka's.
                        let kafkas = d["topicId"]
                            .as_str()
                            .map(|id| id.replace('-', "+").replace('_', "/"));
                        assert_eq!(v.topic_id, kafkas, "{case}");
                        commits += 1;
                    }
                }
            }
            LogRecord::GroupMetadata { .. } => {
                assert!(
                    want.is_null(),
                    "the formatter prints no group metadata: {case}"
                );
                metadata += 1;
            }
            other => panic!("{case}: {other:?}"),
        }
    }
    assert!(
        commits >= 5 && tombstones >= 2 && metadata >= 3,
        "{commits} {tombstones} {metadata}"
    );
}

#[test]
fn group_metadata_records_say_the_type_and_whether_the_group_is_gone() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/log/broker-4.3.1.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut kinds = Vec::new();
    for case in doc["records"].as_array().unwrap() {
        let key = hex(case["key"].as_str().unwrap());
        let value = case["value"].as_str().map(hex);
        if let LogRecord::GroupMetadata { kind, deleted, .. } =
            decode(&key, value.as_deref()).unwrap()
        {
            assert_eq!(deleted, value.is_none());
            kinds.push(match kind {
                GroupKind::Classic { .. } => "classic",
                GroupKind::Consumer => "consumer",
                GroupKind::Share => "share",
                GroupKind::Streams => "streams",
            });
        }
    }
    for k in ["classic", "share", "streams"] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
}

/// Encodes an offset commit's key and value in the layout of `version` (0 to 3, which brokers
/// before 4.x wrote and the test broker no longer does).
fn old_commit(
    version: i16,
    offset: i64,
    epoch: i32,
    metadata: &str,
    ts: i64,
) -> (Vec<u8>, Vec<u8>) {
    let string = |s: &str, out: &mut Vec<u8>| {
        out.extend((s.len() as i16).to_be_bytes());
        out.extend(s.as_bytes());
    };
    let mut key = 1i16.to_be_bytes().to_vec();
    string("g", &mut key);
    string("t", &mut key);
    key.extend(7i32.to_be_bytes());
    let mut value = version.to_be_bytes().to_vec();
    value.extend(offset.to_be_bytes());
    if version >= 3 {
        value.extend(epoch.to_be_bytes());
    }
    string(metadata, &mut value);
    value.extend(ts.to_be_bytes());
    if version == 1 {
        value.extend((ts + 1000).to_be_bytes());
    }
    (key, value)
}

#[test]
fn every_value_version_decodes() {
    // (version, leader epoch written, leader epoch read, expire timestamp read)
    let cases = [
        (0, 0, None, None),
        (1, 0, None, Some(1_001_000)),
        (2, 0, None, None),
        (3, 5, Some(5), None),
        (3, -1, None, None),
    ];
    for (version, epoch, want_epoch, want_expire) in cases {
        let (key, value) = old_commit(version, 42, epoch, "m", 1_000_000);
        let got = decode(&key, Some(&value)).unwrap();
        assert_eq!(
            got,
            LogRecord::OffsetCommit {
                group: "g".into(),
                topic: "t".into(),
                partition: 7,
                value: Some(CommitValue {
                    version,
                    offset: 42,
                    leader_epoch: want_epoch,
                    metadata: "m".into(),
                    commit_timestamp: 1_000_000,
                    expire_timestamp: want_expire,
                    topic_id: None,
                }),
            },
            "version {version}"
        );
    }
}

#[test]
fn bad_and_unknown_records_are_errors_or_typed_never_panics() {
    let (key, value) = old_commit(3, 1, 1, "", 1);
    // Truncated anywhere: an error that says what was being read.
    for cut in 0..value.len() {
        let e = decode(&key, Some(&value[..cut])).unwrap_err();
        assert!(e.to_string().contains("byte(s) needed"), "{cut}: {e}");
    }
    for cut in 0..key.len() {
        assert!(decode(&key[..cut], None).is_err(), "key cut at {cut}");
    }
    let mut v5 = value.clone();
    v5[1] = 5;
    assert!(decode(&key, Some(&v5))
        .unwrap_err()
        .to_string()
        .contains("version 5"));
    // Known group-coordinator records are ignored; others are unknown, both without failing.
    assert_eq!(
        decode(&5i16.to_be_bytes(), None).unwrap(),
        LogRecord::Ignored { record_type: 5 }
    );
    assert_eq!(
        decode(&99i16.to_be_bytes(), Some(b"x")).unwrap(),
        LogRecord::Unknown { record_type: 99 }
    );
}

#[test]
fn a_compact_string_and_tagged_fields_are_read_as_flexible_versions_write_them() {
    // Version 4: offset 9, epoch -1, metadata "ab" (compact: length + 1), time 5, two tagged
    // fields (an unknown tag 3 first, then tag 0, the topic id).
    let mut value = 4i16.to_be_bytes().to_vec();
    value.extend(9i64.to_be_bytes());
    value.extend((-1i32).to_be_bytes());
    value.extend([3, b'a', b'b']);
    value.extend(5i64.to_be_bytes());
    value.extend([2, 3, 1, 0xff, 0, 16]);
    value.extend([0xfb; 16]);
    let (key, _) = old_commit(3, 0, 0, "", 0);
    let LogRecord::OffsetCommit { value: Some(v), .. } = decode(&key, Some(&value)).unwrap() else {
        panic!()
    };
    assert_eq!(
        (v.offset, v.leader_epoch, v.metadata.as_str()),
        (9, None, "ab")
    );
    assert_eq!(v.topic_id.as_deref(), Some("+/v7+/v7+/v7+/v7+/v7+w"));
}

#[test]
fn connects_offsets_records_become_source_offsets_with_canonical_json() {
    // Connect writes the key as [connector, partition] and the offset as an object; keys in any
    // order give the same text.
    let key = br#"["file-src",{"z":1,"filename":"/in.txt"}]"#;
    assert_eq!(
        decode_connect(
            key,
            Some(br#"{"position": 42, "a": [1, {"y": 2, "x": 1}]}"#)
        )
        .unwrap(),
        LogRecord::SourceOffset {
            connector: "file-src".into(),
            partition: r#"{"filename":"/in.txt","z":1}"#.into(),
            offset: Some(r#"{"a":[1,{"x":1,"y":2}],"position":42}"#.into()),
        }
    );
    // A tombstone (or a JSON null) deletes the partition's offset.
    for value in [None, Some(&b"null"[..])] {
        assert_eq!(
            decode_connect(key, value).unwrap(),
            LogRecord::SourceOffset {
                connector: "file-src".into(),
                partition: r#"{"filename":"/in.txt","z":1}"#.into(),
                offset: None,
            }
        );
    }
    for bad in [&b"not json"[..], br#"{"a":1}"#, br#"[1,{}]"#, br#"["c"]"#] {
        let e = decode_connect(bad, Some(b"{}")).unwrap_err().to_string();
        assert!(e.contains("Connect offsets key"), "{e}");
    }
    let e = decode_connect(key, Some(b"{oops")).unwrap_err().to_string();
    assert!(e.contains("not JSON"), "{e}");
}

#[test]
fn a_classic_groups_metadata_says_since_when_it_is_in_its_state() {
    // The simple group's metadata record of the 4.3.1 fixture: version 3, protocol type "",
    // generation 0, no protocol, no leader, the state's timestamp, no members.
    let value = hex("0003000000000000ffffffff000001a23cede8e800000000");
    assert_eq!(
        classic_state_timestamp(&value).unwrap(),
        Some(0x0000_01a2_3ced_e8e8)
    );
    // Version 1 has no timestamp; -1 is none; a version this decoder does not know fails.
    let v1 = hex("00010008636f6e73756d657200000001000572616e6765ffff00000000");
    assert_eq!(classic_state_timestamp(&v1).unwrap(), None);
    let unset = hex("0002000000000000ffffffffffffffffffffffff00000000");
    assert_eq!(classic_state_timestamp(&unset).unwrap(), None);
    assert!(classic_state_timestamp(&hex("0009")).is_err());
    assert!(classic_state_timestamp(&hex("000300")).is_err());
}
