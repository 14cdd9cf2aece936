use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::{json, Value};

use super::event::*;
use super::filter::{parse_type, Filter};
use super::*;
use crate::error::exit;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn event(t: EventType, time: &str, groups: &[&str]) -> Event {
    Event {
        specversion: SPEC_VERSION.into(),
        id: "0123456789abcdef0123456789abcdef".into(),
        source: source_of("ops-1"),
        event_type: t.type_name(),
        time: at(time),
        subject: Some("20261201T093005.042Z-abc".into()),
        datacontenttype: DATA_CONTENT_TYPE.into(),
        data: EventData {
            format_version: DATA_FORMAT_VERSION.into(),
            who: Who {
                user: "ops".into(),
                host: "ops-1".into(),
                key_id: None,
                via: None,
            },
            command: vec!["offset-vault".into(), "restore".into()],
            snapshot_ids: vec!["20261201T093005.042Z-abc".into()],
            plan_sha256: None,
            undo_snapshot: Some("20261204T100000.000Z-def".into()),
            outcome: AuditOutcome::Executed,
            exit_code: Some(0),
            message: None,
            groups: groups
                .iter()
                .map(|g| GroupChange {
                    group_id: g.to_string(),
                    partitions_changed: 3,
                    records_reprocessed: 18,
                    records_skipped: 0,
                })
                .collect(),
            detail: BTreeMap::new(),
        },
    }
}

#[test]
fn an_event_is_cloudevents_structured_json_and_decodes_back() {
    let e = event(EventType::Restore, "2026-12-04T10:00:00.123Z", &["billing"]);
    let bytes = e.to_bytes().unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    // The CloudEvents 1.0 context attributes, with their names and types.
    assert_eq!(v["specversion"], "1.0");
    assert_eq!(v["type"], "dev.offset-vault.restore");
    assert_eq!(v["source"], "offset-vault://ops-1");
    assert_eq!(v["time"], "2026-12-04T10:00:00.123Z");
    assert_eq!(v["datacontenttype"], "application/json");
    assert_eq!(v["subject"], "20261201T093005.042Z-abc");
    assert!(v["data"].is_object());
    assert_eq!(v["data"]["outcome"], "executed");
    assert_eq!(
        v["data"]["groups"][0],
        json!({"group_id": "billing", "partitions_changed": 3, "records_reprocessed": 18, "records_skipped": 0})
    );
    assert_eq!(v["data"]["who"]["key_id"], Value::Null);
    assert_eq!(Event::from_slice("k", &bytes).unwrap(), e);

    // No subject: the attribute is left out (CloudEvents has no null attributes).
    let mut none = e.clone();
    none.subject = None;
    let v: Value = serde_json::from_slice(&none.to_bytes().unwrap()).unwrap();
    assert!(v.get("subject").is_none());

    let mut other = v.clone();
    other["specversion"] = json!("0.3");
    let err = Event::from_slice("k", &serde_json::to_vec(&other).unwrap()).unwrap_err();
    assert_eq!(err.exit_code(), exit::INTEGRITY);
    assert!(Event::from_slice("k", b"{}").is_err());
}

#[test]
fn ids_are_128_random_bits_in_hex() {
    let a = new_id().unwrap();
    let b = new_id().unwrap();
    assert!(is_id(&a) && is_id(&b), "{a} {b}");
    assert_ne!(a, b);
    for (s, ok) in [
        ("0123456789abcdef0123456789abcdef", true),
        ("0123456789ABCDEF0123456789abcdef", false),
        ("0123456789abcdef", false),
        ("0123456789abcdef0123456789abcdeg", false),
    ] {
        assert_eq!(is_id(s), ok, "{s}");
    }
}

#[test]
fn keys_put_events_in_date_folders_sorted_by_time() {
    let id = "0123456789abcdef0123456789abcdef";
    // (time, key)
    let cases = [
        (
            "2026-12-04T10:00:00.123Z",
            "audit/date=2026-12-04/20261204T100000.123Z-0123456789abcdef0123456789abcdef.json",
        ),
        (
            "2026-12-31T23:59:59.999Z",
            "audit/date=2026-12-31/20261231T235959.999Z-0123456789abcdef0123456789abcdef.json",
        ),
        (
            "2027-01-01T00:00:00Z",
            "audit/date=2027-01-01/20270101T000000.000Z-0123456789abcdef0123456789abcdef.json",
        ),
    ];
    for (time, key) in cases {
        assert_eq!(event_key(at(time), id), key);
        assert_eq!(
            parse_event_key(key),
            Some((at(time), id.to_string())),
            "{key}"
        );
    }
    assert_eq!(
        marker_key(id),
        "audit/open/0123456789abcdef0123456789abcdef.json"
    );
    assert_eq!(parse_marker_key(&marker_key(id)).as_deref(), Some(id));
    for bad in [
        "audit/date=2026-12-04/20261204T100000.123Z-xyz.json",
        // The date folder must be the event's day.
        "audit/date=2026-12-05/20261204T100000.123Z-0123456789abcdef0123456789abcdef.json",
        "audit/date=2026-12-04/20261204T100000.123Z-0123456789abcdef0123456789abcdef.json.sig",
        "audit/open/0123456789abcdef0123456789abcdef.json",
        "snapshots/date=2026-12-04/x/manifest.json",
    ] {
        assert_eq!(parse_event_key(bad), None, "{bad}");
    }
    assert_eq!(parse_marker_key("audit/open/x.json"), None);
    let e = event(EventType::Prune, "2026-12-04T10:00:00.123Z", &[]);
    assert_eq!(e.key(), event_key(e.time, &e.id));
    assert_eq!(
        to_millis(Utc.timestamp_nanos(1_700_000_000_123_456_789)).timestamp_subsec_nanos(),
        123_000_000
    );
}

#[test]
fn filters_select_by_time_group_and_type() {
    let e = event(
        EventType::Restore,
        "2026-12-04T10:00:00Z",
        &["billing", "orders"],
    );
    let gap = event(EventType::FollowGap, "2026-12-04T10:00:00Z", &[]);
    let f =
        |since: Option<&str>, until: Option<&str>, group: Option<&str>, t: Option<&str>| Filter {
            since: since.map(at),
            until: until.map(at),
            group: group.map(String::from),
            event_type: t.map(|t| parse_type(t).unwrap()),
        };
    // (filter, matches the restore, matches the gap)
    let cases = [
        (f(None, None, None, None), true, true),
        (
            f(Some("2026-12-04T10:00:00Z"), None, None, None),
            true,
            true,
        ),
        (
            f(Some("2026-12-04T10:00:01Z"), None, None, None),
            false,
            false,
        ),
        (
            f(None, Some("2026-12-04T10:00:00Z"), None, None),
            true,
            true,
        ),
        (
            f(None, Some("2026-12-04T09:59:59Z"), None, None),
            false,
            false,
        ),
        (f(None, None, Some("billing"), None), true, false),
        (f(None, None, Some("bill"), None), false, false),
        (f(None, None, None, Some("restore")), true, false),
        (
            f(None, None, None, Some("dev.offset-vault.restore")),
            true,
            false,
        ),
        (f(None, None, None, Some("follow")), false, true),
        (f(None, None, None, Some("follow.gap")), false, true),
        (f(None, None, Some("orders"), Some("reset")), false, false),
    ];
    for (i, (filter, restore, gapped)) in cases.iter().enumerate() {
        assert_eq!(filter.matches(&e), *restore, "case {i}: {filter:?}");
        assert_eq!(filter.matches(&gap), *gapped, "case {i}: {filter:?}");
    }
    assert!(parse_type("restor").is_err());
    assert!(parse_type("foll").is_err());
}

#[test]
fn only_the_date_folders_from_since_are_needed() {
    let f = Filter {
        since: Some(at("2026-12-03T23:00:00Z")),
        until: Some(at("2026-12-05T01:00:00Z")),
        ..Default::default()
    };
    for (folder, needed) in [
        ("date=2026-12-02", false),
        ("date=2026-12-03", true),
        ("date=2026-12-05", true),
        ("date=2026-12-06", false),
        ("open", false),
        ("date=soon", false),
    ] {
        assert_eq!(f.folder_needed(folder), needed, "{folder}");
    }
    assert!(Filter::default().folder_needed("date=2001-01-01"));
}

#[test]
fn outcomes_follow_the_exit_codes_of_refusals() {
    // (exit code, outcome)
    let cases = [
        (exit::OK, AuditOutcome::Executed),
        (exit::BLOCKED, AuditOutcome::Blocked),
        (exit::INTEGRITY, AuditOutcome::Refused),
        (exit::NOT_APPLICABLE, AuditOutcome::Refused),
        (exit::OTHER_CLUSTER, AuditOutcome::Refused),
        (exit::PLAN_CHANGED, AuditOutcome::Refused),
        (exit::PRUNE_REFUSED, AuditOutcome::Refused),
        (exit::PARTIALLY_APPLIED, AuditOutcome::Partial),
        (exit::UNREACHABLE, AuditOutcome::Failed),
        (exit::USAGE, AuditOutcome::Failed),
        (exit::INTERRUPTED, AuditOutcome::Failed),
    ];
    for (code, want) in cases {
        assert_eq!(AuditOutcome::of_code(code), want, "{code}");
    }
}

#[test]
fn a_marker_without_its_event_lists_as_unfinished() {
    let m = Marker {
        format_version: DATA_FORMAT_VERSION.into(),
        id: "0123456789abcdef0123456789abcdef".into(),
        event_type: EventType::Reset.type_name(),
        source: source_of("h"),
        time: at("2026-12-04T10:00:00Z"),
        who: Who {
            user: "u".into(),
            host: "h".into(),
            key_id: None,
            via: None,
        },
        command: vec!["offset-vault".into(), "reset".into()],
    };
    let e = m.unfinished();
    assert_eq!(e.data.outcome, AuditOutcome::Unfinished);
    assert_eq!(e.data.exit_code, None);
    assert_eq!((e.id.as_str(), e.short_type()), (m.id.as_str(), "reset"));
    let v: Value = serde_json::from_slice(&e.to_bytes().unwrap()).unwrap();
    assert_eq!(v["data"]["outcome"], "unfinished");
}

#[test]
fn an_unwritable_trail_keeps_the_stores_exit_code_and_says_nothing_changed() {
    let key = "audit/open/x.json";
    // (the store's error, the exit code kept)
    let cases = [
        (
            crate::error::Error::store("s3://b/p", "connection refused"),
            exit::UNREACHABLE,
        ),
        (
            crate::error::Error::AccessDenied {
                service: "the store",
                resource: key.into(),
                detail: "403".into(),
                advice: "check the credentials",
            },
            exit::ACCESS_DENIED,
        ),
        (
            crate::error::Error::Timeout {
                service: "the store",
                op: "PUT".into(),
                after: std::time::Duration::from_secs(1),
                detail: "slow".into(),
            },
            exit::UNREACHABLE,
        ),
    ];
    for (e, code) in cases {
        let was = e.to_string();
        let got = unwritable("s3://b/p", key, e);
        assert_eq!(got.exit_code(), code, "{was}");
        let text = got.to_string();
        assert!(
            text.contains("audit trail cannot be written")
                && text.contains("Nothing was changed")
                && text.contains("--audit optional"),
            "{text}"
        );
    }
}
