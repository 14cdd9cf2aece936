//! Hostile input for every reader and parser of outside data: arbitrary bytes, valid files with
//! bytes flipped, inserted, deleted or cut off, and (for JSON) documents with wrong types, huge
//! numbers, deep nesting and missing fields. Nothing may panic; every failure must be the typed
//! error the reader documents; and what does decode must be internally consistent (it encodes
//! and decodes back to itself).
//!
//! Each target is one proptest named `hostile_<target>`. The default case count keeps `cargo test`
//! fast; `PROPTEST_CASES` overrides it, and `scripts/fuzz` runs every `hostile_` target with a
//! million cases in a release build.

use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Datelike, TimeZone, Utc};
use proptest::collection::vec;
use proptest::prelude::*;

use crate::error::Error;
use crate::format::{csv, json, parquet as pq};
use crate::group_model::GroupState;
use crate::settings::ClientProperties;
use crate::snapshot::manifest::{Format, Manifest};
use crate::snapshot::model::{GroupSnapshot, SnapshotMeta};
use crate::store::Store;
use crate::timeutil::parse_time;

mod mutate;
mod seeds;
use mutate::{
    apply_changes, apply_edits, bytes_input, change, render_text, text_input, Change, Edit, Input,
    Node, Shape,
};
use seeds::{
    offsets_parquet, parquet_parts, parquet_with_kv, CONNECTORS_JSON, CSV_FILES, MANIFEST_JSON,
    OFFSETS_JSON, PROPERTIES, STORE_URLS, TIMES,
};

type Offsets = (SnapshotMeta, Vec<GroupSnapshot>);

/// Cases per target under plain `cargo test`: all targets together stay within seconds in debug.
const DEFAULT_CASES: u32 = 400;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_CASES);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs

const JSON_DICT: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "null",
    "-1",
    "1e400",
    "\\u0000",
    "\\ud800",
    "\\",
    "0x10",
    "\"format_version\":\"1.0\",",
    "18446744073709551616",
    "\u{feff}",
];
const BINARY_DICT: &[&str] = &[
    "PAR1",
    "\0\0\0\0",
    "\u{7f}\u{7f}\u{7f}\u{7f}",
    "\u{1}",
    "\u{19}",
];
const PROPERTIES_DICT: &[&str] = &[
    "=",
    ":",
    "\\",
    "\\\n",
    "\n",
    "#",
    "!",
    " ",
    "\"",
    "\\u",
    "sasl.jaas.config=",
    "org.apache.kafka.common.security.plain.PlainLoginModule required ",
    "username=\"",
    "password=\"",
    "ssl.keystore.type=JKS\n",
    "ssl.truststore.location=/x\n",
    "sasl.mechanism=",
    "é",
    "\u{0}",
];
const TIME_DICT: &[&str] = &[
    "T",
    "Z",
    "+",
    "-",
    ":",
    ".",
    " ",
    "99999999999",
    "d",
    "h",
    "ms",
    "ns",
    "y",
    "1e9",
    "+14:00",
    "262143",
    "0000",
    "60",
    "é",
];
const CSV_DICT: &[&str] = &[
    ",",
    "\"",
    "\"\"",
    "\n",
    "\r\n",
    " ",
    "-1",
    "0",
    "2147483648",
    "9223372036854775808",
    "1e3",
    "\u{feff}",
    "\t",
    "topic",
    "group,",
    "\0",
    "é",
];
const URL_DICT: &[&str] = &[
    "://", "s3", "file", "gs", "az", "http", "..", "/", "%", "%zz", "@", "[::1]", ":99999", "?",
    "#", "\\", " ", "\0", "é",
];

fn parquet_input() -> impl Strategy<Value = Input> {
    let metadata = (
        any::<usize>(),
        vec(change(), 1..4),
        proptest::bool::weighted(0.1),
    )
        .prop_map(|(entry, changes, drop)| Input::Metadata {
            entry,
            changes,
            drop,
        });
    prop_oneof![
        3 => bytes_input(1, BINARY_DICT, Shape::Parquet, 2048),
        1 => metadata,
    ]
}

// ---------------------------------------------------------------------------------------------
// The targets

/// The errors a file reader may end in: the file is not what it claims, or from a newer version.
fn is_decode_error(err: &Error) -> bool {
    matches!(err, Error::Decode { .. } | Error::UnsupportedFormat { .. })
}

/// The path a store URL names on the local file system, as the store reads it.
fn local_path(url: &str) -> Option<std::path::PathBuf> {
    match url.strip_prefix("file://") {
        Some(rest) => Some(rest.into()),
        None => (!url.contains("://")).then(|| url.into()),
    }
}

/// Encodes decoded offsets in `format` and decodes them again.
fn rewrite_offsets(format: Format, (meta, groups): &Offsets) -> crate::Result<Offsets> {
    let bytes = crate::format::encode_offsets(format, meta, groups)?;
    crate::format::decode_offsets(format, "rewritten", Bytes::from(bytes))
}

/// Offsets that are the same apart from how an unknown group state is worded: a state name
/// this build does not know is read as "unknown, with a reason" and written as `Unknown`.
fn same_offsets(a: &Offsets, b: &Offsets) -> bool {
    let key = |(meta, groups): &Offsets| {
        let groups: Vec<_> = groups
            .iter()
            .map(|g| {
                let state = match &g.state {
                    GroupState::Unknown(_) => None,
                    known => Some(known.clone()),
                };
                (
                    g.group_id.clone(),
                    state,
                    g.members.clone(),
                    g.partitions.clone(),
                )
            })
            .collect();
        (meta.clone(), groups)
    };
    key(a) == key(b)
}

/// A valid, sealed restore plan file: the seed the plan-file mutations start from.
fn plan_file_seed() -> Vec<u8> {
    use crate::restore::plan::{Action, GroupPlan, PartitionPlan, Plan, PlanSummary};
    use crate::restore::review::{PlanBody, PlanFile, PlanRequest, PLAN_FORMAT_VERSION, PLAN_KIND};
    let partition = PartitionPlan {
        topic: "orders".into(),
        partition: 0,
        current: Some(45),
        snapshot_offset: Some(30),
        target: Some(30),
        log_start: Some(0),
        log_end: Some(45),
        reprocess: 15,
        skip: 0,
        action: Action::Reset,
        note: None,
        leader_epoch: Some(3),
        metadata: Some("m".into()),
        source_topic: None,
        translation: None,
    };
    let plan = Plan {
        snapshot_id: "20261201T093005.042Z-0123456789abcdef".into(),
        groups: vec![GroupPlan {
            group_id: "connect-orders-sink".into(),
            group_type: Default::default(),
            state: GroupState::Empty,
            members: vec![],
            connector: Some("orders-sink".into()),
            blocked: None,
            warnings: vec![],
            partitions: vec![partition],
        }],
        connectors: vec![],
        summary: PlanSummary::default(),
        applicable: true,
        blocked: false,
        problems: vec![],
    };
    PlanFile::seal(PlanBody {
        kind: PLAN_KIND.into(),
        format_version: PLAN_FORMAT_VERSION.into(),
        created_at: Utc.with_ymd_and_hms(2026, 12, 1, 9, 31, 0).unwrap(),
        tool_version: "0.1.0".into(),
        cluster_id: "c1".into(),
        bootstrap_servers: "k:9092".into(),
        snapshot_id: plan.snapshot_id.clone(),
        request: PlanRequest::default(),
        plan,
        reset: None,
    })
    .to_bytes()
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let shown: String = text.chars().take(2000).collect();
    format!("{} bytes: {shown:?}", bytes.len())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn hostile_offsets_json(input in bytes_input(1, JSON_DICT, Shape::Json, 1024)) {
        let bytes = input.render(&[OFFSETS_JSON.as_bytes()]);
        match json::decode_offsets("offsets.json", &bytes) {
            Ok(decoded) => {
                let written = rewrite_offsets(Format::Json, &decoded);
                prop_assert!(written.is_ok(), "{written:?} from {}", show(&bytes));
                let written = written.unwrap();
                prop_assert!(same_offsets(&decoded, &written), "{written:?} from {}", show(&bytes));
                let again = rewrite_offsets(Format::Json, &written);
                prop_assert!(again.as_ref().is_ok_and(|a| *a == written), "{again:?} from {}", show(&bytes));
            }
            Err(e) => prop_assert!(is_decode_error(&e), "{e:?} from {}", show(&bytes)),
        }
    }

    #[test]
    fn hostile_offsets_parquet(input in parquet_input()) {
        let bytes = input.render(&[offsets_parquet()]);
        match pq::decode_offsets("offsets.parquet", Bytes::from(bytes.clone())) {
            Ok(decoded) => {
                let written = rewrite_offsets(Format::Parquet, &decoded);
                prop_assert!(written.is_ok(), "{written:?} from {}", show(&bytes));
                let written = written.unwrap();
                prop_assert!(same_offsets(&decoded, &written), "{written:?} from {}", show(&bytes));
                let again = rewrite_offsets(Format::Parquet, &written);
                prop_assert!(again.as_ref().is_ok_and(|a| *a == written), "{again:?} from {}", show(&bytes));
            }
            Err(e) => prop_assert!(is_decode_error(&e), "{e:?} from {}", show(&bytes)),
        }
    }

    #[test]
    fn hostile_connectors_json(input in bytes_input(1, JSON_DICT, Shape::Json, 1024)) {
        let bytes = input.render(&[CONNECTORS_JSON.as_bytes()]);
        match json::decode_connectors("connectors.json", &bytes) {
            Ok((id, connectors)) => {
                let again = json::encode_connectors(&id, &connectors).unwrap();
                let back = json::decode_connectors("again", &again);
                prop_assert!(back.as_ref().is_ok_and(|b| *b == (id, connectors)), "{back:?} from {}", show(&bytes));
            }
            Err(e) => prop_assert!(is_decode_error(&e), "{e:?} from {}", show(&bytes)),
        }
    }

    #[test]
    fn hostile_plan_file(input in bytes_input(1, JSON_DICT, Shape::Json, 1024)) {
        let seed = plan_file_seed();
        let bytes = input.render(&[seed.as_slice()]);
        match crate::restore::review::PlanFile::from_bytes("plan.json", &bytes) {
            // Only a file whose checksum holds is accepted, and it reads back as itself.
            Ok(file) => {
                let back = crate::restore::review::PlanFile::from_bytes("again", &file.to_bytes());
                prop_assert!(back.as_ref().is_ok_and(|b| *b == file), "{back:?} from {}", show(&bytes));
            }
            Err(e) => prop_assert!(
                is_decode_error(&e) || matches!(e, Error::Integrity { .. }),
                "{e:?} from {}", show(&bytes)
            ),
        }
    }

    #[test]
    fn hostile_manifest(input in bytes_input(1, JSON_DICT, Shape::Json, 1024)) {
        let bytes = input.render(&[MANIFEST_JSON.as_bytes()]);
        match Manifest::from_bytes("manifest.json", &bytes) {
            Ok(m) => {
                let back = Manifest::from_bytes("again", &m.to_bytes());
                prop_assert!(back.as_ref().is_ok_and(|b| *b == m), "{back:?} from {}", show(&bytes));
                // What a reader does next with a manifest must work on whatever decoded, and an
                // id made for a time in the years 0 to 9999 parses back to that time.
                let expected = m.expected_id();
                if (0..=9999).contains(&m.meta.created_at.year()) {
                    let parsed = crate::snapshot::manifest::parse_id(&expected);
                    prop_assert_eq!(
                        parsed.map(|(t, _)| t.timestamp_millis()),
                        Some(m.meta.created_at.timestamp_millis()),
                        "{}", expected
                    );
                }
            }
            Err(e) => prop_assert!(is_decode_error(&e), "{e:?} from {}", show(&bytes)),
        }
    }

    #[test]
    fn hostile_import_csv(input in bytes_input(CSV_FILES.len(), CSV_DICT, Shape::Text, 512)) {
        let bytes = input.render(CSV_FILES);
        match csv::decode("offsets.csv", &bytes) {
            Ok(file) => {
                let fields = |rows: &[csv::CsvOffset]| -> Vec<_> {
                    rows.iter().map(|r| (r.group.clone(), r.topic.clone(), r.partition, r.offset)).collect()
                };
                prop_assert!(file.rows.iter().all(|r| r.partition >= 0 && r.offset >= 0), "{file:?}");
                let mut keys: Vec<_> = file.rows.iter().map(|r| (&r.group, &r.topic, r.partition)).collect();
                keys.sort();
                keys.dedup();
                prop_assert_eq!(keys.len(), file.rows.len(), "a partition twice in {:?}", file);
                let again = csv::encode(&file.rows, file.with_group).unwrap();
                let back = csv::decode("again", &again);
                prop_assert!(
                    back.as_ref().is_ok_and(|b| b.with_group == file.with_group && fields(&b.rows) == fields(&file.rows)),
                    "{back:?} from {}", show(&bytes)
                );
            }
            Err(e) => prop_assert!(matches!(e, Error::Usage(_)), "{e:?} from {}", show(&bytes)),
        }
    }

    #[test]
    fn hostile_parse_time(input in text_input(TIMES.len(), TIME_DICT)) {
        let text = render_text(&input, TIMES);
        let now = fixed_now();
        let hour = chrono::Duration::hours(1);
        match (parse_time(&text, now), parse_time(&text, now + hour)) {
            // A time or date does not depend on "now"; a duration back from now moves with it.
            (Ok(a), Ok(b)) => prop_assert!(b == a || (b - a == hour && a <= now), "{text:?}: {a}, then {b}"),
            (Err(a), Err(b)) => prop_assert!(
                matches!((&a, &b), (Error::Usage(_), Error::Usage(_))), "{text:?}: {a:?}, {b:?}"
            ),
            (a, b) => prop_assert!(false, "{text:?}: {a:?} at {now}, but {b:?} an hour later"),
        }
    }

    #[test]
    fn hostile_command_config(input in text_input(1, PROPERTIES_DICT)) {
        let text = render_text(&input, &[PROPERTIES]);
        match ClientProperties::from_java_text("client.properties", &text) {
            Ok(props) => {
                // Java-only keys never reach librdkafka: each is translated, dropped or refused.
                for key in ["sasl.jaas.config", "sasl.mechanism", "ssl.truststore.location", "key.deserializer"] {
                    prop_assert!(props.get(key).is_none(), "{key} passed through from {text:?}");
                }
            }
            Err(e) => prop_assert!(matches!(e, Error::Usage(_)), "{e:?} from {text:?}"),
        }
    }

    #[test]
    fn hostile_store_url(input in text_input(STORE_URLS.len(), URL_DICT)) {
        let url = render_text(&input, STORE_URLS);
        let local = local_path(&url);
        let existed = local.as_ref().map(|p| p.symlink_metadata().is_ok());
        let opened = Store::open_existing(&url, Duration::from_secs(5));
        let exists = local.as_ref().map(|p| p.symlink_metadata().is_ok());
        prop_assert_eq!(existed, exists, "opening {:?} to read created {:?}", url, local);
        if let Err(e) = opened {
            prop_assert!(
                matches!(e, Error::Usage(_) | Error::NotFound { .. } | Error::Store { .. }),
                "{e:?} from {url:?}"
            );
        }
    }
}

#[test]
fn the_seeds_are_valid_inputs() {
    let (meta, groups) = json::decode_offsets("seed", OFFSETS_JSON.as_bytes()).unwrap();
    assert_eq!(groups.len(), 2);
    let from_parquet = pq::decode_offsets("seed", Bytes::from_static(offsets_parquet())).unwrap();
    assert_eq!(from_parquet, (meta.clone(), groups.clone()));
    let rewritten = parquet_with_kv(&parquet_parts().1);
    assert_eq!(
        pq::decode_offsets("rewritten", Bytes::from(rewritten)).unwrap(),
        (meta, groups)
    );
    let (_, connectors) = json::decode_connectors("seed", CONNECTORS_JSON.as_bytes()).unwrap();
    assert_eq!(connectors.len(), 2);
    let manifest = Manifest::from_bytes("seed", MANIFEST_JSON.as_bytes()).unwrap();
    assert_eq!(manifest.files.len(), 2);
    let now = Utc::now();
    for t in TIMES {
        parse_time(t, now).unwrap();
    }
    let props = ClientProperties::from_java_text("seed", PROPERTIES).unwrap();
    assert_eq!(props.get("sasl.username"), Some("alice"));
    assert_eq!(props.get("client.id"), Some("offset-vault\tops"));
    assert!(Store::open_existing(STORE_URLS[0], Duration::from_secs(5)).is_ok());
}

/// Found by `hostile_connectors_json`: without serde_json's `float_roundtrip`, a number in a
/// connector's offsets (an integer beyond 64 bits, or a float with many digits) could be written
/// back as a different number than the one read.
#[test]
fn connector_offsets_are_written_back_as_the_numbers_read() {
    let text = CONNECTORS_JSON.replace(
        "\"kafka_offset\": 42",
        "\"kafka_offset\": 4184467440737095516162, \"ts\": 0.30000000000000004, \"x\": 2.2250738585072011e-308",
    );
    let (id, connectors) = json::decode_connectors("c", text.as_bytes()).unwrap();
    let again = json::encode_connectors(&id, &connectors).unwrap();
    assert_eq!(
        json::decode_connectors("again", &again).unwrap(),
        (id, connectors)
    );
}

/// Found by `hostile_offsets_parquet`: the parquet crate panics ("Decoder for dict should have
/// been set") on a page marked dictionary-encoded in a column chunk with no dictionary page. The
/// reader must report that as a file it cannot decode.
#[test]
fn a_dictionary_page_missing_from_a_parquet_file_is_a_decode_error() {
    let edits = [
        Edit::Insert {
            at: 5781520280763749926,
            chunk: "\u{1}",
        },
        Edit::Flip {
            at: 17991106377945162807,
            bit: 7,
        },
    ];
    let bytes = apply_edits(offsets_parquet(), &edits);
    let err = pq::decode_offsets("offsets.parquet", Bytes::from(bytes)).unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err:?}");
}

#[test]
fn the_mutations_do_what_they_say() {
    assert_eq!(apply_edits(b"abc", &[Edit::Flip { at: 4, bit: 0 }]), b"acc");
    assert_eq!(apply_edits(b"abc", &[Edit::Delete { at: 1, len: 9 }]), b"a");
    assert_eq!(apply_edits(b"abc", &[Edit::Truncate { keep: 2 }]), b"ab");
    assert_eq!(apply_edits(b"abc", &[Edit::Truncate { keep: 7 }]), b"abc");
    assert_eq!(
        apply_edits(b"abc", &[Edit::Insert { at: 3, chunk: "[" }]),
        b"abc["
    );
    let doc = r#"{"a": [1, {"b": 2}], "c": 3}"#;
    let replaced = apply_changes(
        doc,
        &[Change::Replace {
            path: vec![0, 1, 0],
            with: Node::Raw("1e400"),
        }],
    );
    assert_eq!(replaced, br#"{"a":[1,{"b":1e400}],"c":3}"#);
    let removed = apply_changes(doc, &[Change::Remove { path: vec![1] }]);
    assert_eq!(removed, br#"{"a":[1,{"b":2}]}"#);
    let nested = Node::Nested {
        depth: 2,
        object: false,
    };
    assert_eq!(nested.text(), "[[1]]");
}

#[test]
fn the_file_reader_of_client_properties_reports_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("client.properties");
    std::fs::write(&path, b"security.protocol=SSL\n\xff\xfe\n").unwrap();
    let err = ClientProperties::from_java_file(&path).unwrap_err();
    assert!(matches!(err, Error::ReadFile { .. }), "{err:?}");
    std::fs::write(&path, "ssl.truststore.type=JKS\n").unwrap();
    let err = ClientProperties::from_java_file(&path).unwrap_err();
    assert!(err.to_string().contains("client.properties"), "{err}");
}

/// A fixed "now", so the time checks do not depend on the clock.
fn fixed_now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap()
}
