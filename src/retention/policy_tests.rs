use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;

use super::*;

fn t(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .with_timezone(&Utc)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FixtureSnapshot {
    Time(String),
    Tagged {
        time: String,
        #[serde(default)]
        tags: BTreeMap<String, String>,
    },
}

#[derive(Deserialize)]
struct Fixture {
    description: String,
    now: String,
    policy: BTreeMap<String, String>,
    snapshots: Vec<FixtureSnapshot>,
    kept: BTreeMap<String, Vec<String>>,
    /// The group is refused: the policy keeps none of it, so prune deletes none of it.
    #[serde(default)]
    refused: bool,
}

fn fixtures() -> Vec<(PathBuf, Fixture)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/retention");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("fixtures/retention") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).expect("read fixture");
            let f: Fixture =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((path, f));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn golden_cases_keep_exactly_the_expected_snapshots() {
    let cases = fixtures();
    assert!(cases.len() >= 10, "golden cases missing: {}", cases.len());
    for (path, f) in cases {
        let mut policy = Policy::default();
        for (option, value) in &f.policy {
            policy
                .set(option, value)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let candidates: Vec<Candidate> = f
            .snapshots
            .iter()
            .map(|s| {
                let (time, tags) = match s {
                    FixtureSnapshot::Time(time) => (time.clone(), BTreeMap::new()),
                    FixtureSnapshot::Tagged { time, tags } => (time.clone(), tags.clone()),
                };
                Candidate {
                    id: time.clone(),
                    time: t(&time),
                    tags,
                }
            })
            .collect();
        let decisions = apply(&candidates, &policy, t(&f.now));
        assert_eq!(decisions.len(), candidates.len(), "{}", path.display());
        let kept: BTreeMap<String, Vec<String>> = decisions
            .iter()
            .filter(|d| d.keep)
            .map(|d| (d.id.clone(), d.reasons.clone()))
            .collect();
        let want: BTreeMap<String, Vec<String>> =
            f.kept.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(
            kept,
            want,
            "{} ({}): kept set differs",
            path.display(),
            f.description
        );
        assert!(
            decisions.iter().all(|d| d.keep != d.reasons.is_empty()),
            "{}: a kept snapshot without reason or a removed one with one",
            path.display()
        );
        assert_eq!(
            refusal(&decisions, false).is_some(),
            f.refused,
            "{}: refused",
            path.display()
        );
        assert!(refusal(&decisions, true).is_none());
    }
}

#[test]
fn refusal_needs_a_group_with_nothing_kept() {
    let d = |keep: bool| Decision {
        id: "x".into(),
        time: t("2027-01-01T00:00:00Z"),
        keep,
        reasons: if keep { vec!["last".into()] } else { vec![] },
    };
    // (decisions, allow_empty_group, refused?)
    let cases = [
        (vec![], false, false),
        (vec![d(false)], false, true),
        (vec![d(false), d(false)], false, true),
        (vec![d(false), d(true)], false, false),
        (vec![d(false), d(false)], true, false),
    ];
    for (decisions, allow, want) in cases {
        assert_eq!(
            refusal(&decisions, allow).is_some(),
            want,
            "{decisions:?} {allow}"
        );
    }
}

#[test]
fn decisions_come_newest_first_with_ties_broken_by_id() {
    let at = t("2027-01-01T00:00:00Z");
    let c = |id: &str, time| Candidate {
        id: id.into(),
        time,
        tags: BTreeMap::new(),
    };
    let list = [c("a", at), c("c", at), c("b", at + Duration::hours(1))];
    let policy = Policy {
        last: Count::Upto(2),
        ..Default::default()
    };
    let d = apply(&list, &policy, at + Duration::days(1));
    let order: Vec<(&str, bool)> = d.iter().map(|d| (d.id.as_str(), d.keep)).collect();
    assert_eq!(order, [("b", true), ("c", true), ("a", false)]);
}

#[test]
fn spans_parse_like_restic_and_step_like_go_add_date() {
    // (text, parsed, one span before 2027-03-31T10:00Z)
    let cases = [
        ("2d", (0, 0, 2, 0), "2027-03-29T10:00:00Z"),
        ("36h", (0, 0, 0, 36), "2027-03-29T22:00:00Z"),
        ("1m", (0, 1, 0, 0), "2027-03-03T10:00:00Z"),
        ("1y1m", (1, 1, 0, 0), "2026-03-03T10:00:00Z"),
        ("13m", (0, 13, 0, 0), "2026-03-03T10:00:00Z"),
        ("1y2m3d4h", (1, 2, 3, 4), "2026-01-28T06:00:00Z"),
        ("4h3d", (0, 0, 3, 4), "2027-03-28T06:00:00Z"),
        ("0d", (0, 0, 0, 0), "2027-03-31T10:00:00Z"),
    ];
    let from = t("2027-03-31T10:00:00Z");
    for (text, (y, m, d, h), before) in cases {
        let s = Span::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            s,
            Span {
                years: y,
                months: m,
                days: d,
                hours: h
            },
            "{text}"
        );
        assert_eq!(s.before(from), Some(t(before)), "{text}");
    }
    // A leap year: one month before 2028-03-31 is "2028-02-31" = March 2.
    assert_eq!(
        Span::parse("1m").unwrap().before(t("2028-03-31T00:00:00Z")),
        Some(t("2028-03-02T00:00:00Z"))
    );
    for bad in ["", "2", "d", "2w", "1.5d", "-1d", "2 days"] {
        assert!(Span::parse(bad).is_err(), "{bad:?} should be refused");
    }
    assert_eq!(Span::parse("1y2m3d4h").unwrap().to_string(), "1y2m3d4h");
}

#[test]
fn counts_and_options_parse_or_say_what_is_expected() {
    let cases = [
        ("3", Ok(Count::Upto(3))),
        ("0", Ok(Count::Off)),
        ("unlimited", Ok(Count::Unlimited)),
        ("-1", Ok(Count::Unlimited)),
        ("x", Err(())),
        ("-2", Err(())),
    ];
    for (text, want) in cases {
        assert_eq!(Count::parse(text).map_err(|_| ()), want, "{text}");
    }
    let mut p = Policy::default();
    assert!(p.is_empty());
    p.set("keep-daily", "7").unwrap();
    p.set("keep-within", "2d").unwrap();
    p.set("keep-tag", "deploy=1,who=ci").unwrap();
    assert!(!p.is_empty());
    assert_eq!(
        p.describe(),
        "keep 7 daily, all within 2d of the newest, tagged deploy=1,who=ci"
    );
    let err = p.set("keep-weekly", "many").unwrap_err().to_string();
    assert!(
        err.contains("--keep-weekly") && err.contains("unlimited"),
        "{err}"
    );
    assert!(p.set("keep-tag", "novalue").is_err());
    // Every documented option is accepted.
    for o in OPTIONS {
        let value = if o.starts_with("keep-within") {
            "1d"
        } else if *o == "keep-tag" {
            "a=b"
        } else {
            "1"
        };
        Policy::default().set(o, value).unwrap();
    }
}

#[test]
fn without_a_past_snapshot_everything_is_within() {
    let now = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
    let future = Candidate {
        id: "f".into(),
        time: now + Duration::days(400),
        tags: BTreeMap::new(),
    };
    let policy = Policy {
        within: Span::parse("1d").unwrap(),
        ..Default::default()
    };
    let d = apply(&[future], &policy, now);
    assert!(d[0].keep, "{d:?}");
}
