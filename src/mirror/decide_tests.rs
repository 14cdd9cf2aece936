use super::*;

fn facts(u: i64, identity: IdentityCheck, by_time: ByTime, checkpoint: Option<i64>) -> Facts {
    Facts {
        source_offset: u,
        identity,
        by_time,
        checkpoint: checkpoint.map(|offset| MirrorAnswer {
            offset,
            basis: "checkpoint".into(),
        }),
        source_log_start: None,
        target_log_start: Some(3),
    }
}

fn unchecked() -> IdentityCheck {
    IdentityCheck::Unchecked("no fingerprint".into())
}

fn differs() -> IdentityCheck {
    IdentityCheck::Differs("another record".into())
}

fn matched(offset: i64, same_time: i64, identical: i64) -> ByTime {
    ByTime::Matched {
        offset,
        same_time,
        identical,
    }
}

fn missing(next: i64) -> ByTime {
    ByTime::Missing {
        next,
        why: "gap".into(),
    }
}

fn not_looked() -> ByTime {
    ByTime::NotLooked("no timestamp".into())
}

/// (target, method used) or (refused, clamp offset).
#[derive(Debug, PartialEq)]
enum Out {
    To(i64, Used),
    No(Option<i64>),
    Before(i64),
}

fn out(d: &Decision) -> Out {
    match d {
        Decision::Target {
            offset,
            translation,
        } => Out::To(*offset, translation.method),
        Decision::Refused { clamp_to, .. } => Out::No(*clamp_to),
        Decision::BeforeStart { start, .. } => Out::Before(*start),
    }
}

#[test]
fn each_method_chooses_as_documented() {
    use IdentityCheck::Confirmed;
    use Method::*;
    use Out::*;
    let cases: Vec<(&str, Method, Facts, Out)> = vec![
        (
            "auto: identity confirmed wins",
            Auto,
            facts(50, Confirmed, matched(60, 1, 1), Some(41)),
            To(50, Used::Identity),
        ),
        (
            "auto: else timestamp match",
            Auto,
            facts(50, differs(), matched(60, 3, 1), Some(41)),
            To(61, Used::Timestamp),
        ),
        (
            "auto: one record at that time, no fingerprint",
            Auto,
            facts(
                50,
                unchecked(),
                ByTime::Unmatched {
                    first: 70,
                    same_time: 1,
                },
                None,
            ),
            To(71, Used::Timestamp),
        ),
        (
            "auto: several at that time, no fingerprint: the first",
            Auto,
            facts(
                50,
                unchecked(),
                ByTime::Unmatched {
                    first: 70,
                    same_time: 4,
                },
                None,
            ),
            To(70, Used::Timestamp),
        ),
        (
            "auto: else checkpoints",
            Auto,
            facts(50, unchecked(), not_looked(), Some(41)),
            To(41, Used::Checkpoints),
        ),
        (
            "auto: a gap and a checkpoint: checkpoint",
            Auto,
            facts(50, differs(), missing(80), Some(41)),
            To(41, Used::Checkpoints),
        ),
        (
            "auto: a gap alone: refused, clampable",
            Auto,
            facts(50, differs(), missing(80), None),
            No(Some(80)),
        ),
        (
            "auto: nothing: refused",
            Auto,
            facts(50, unchecked(), not_looked(), None),
            No(None),
        ),
        (
            "identity: confirmed",
            Identity,
            facts(50, Confirmed, not_looked(), None),
            To(50, Used::Identity),
        ),
        (
            "identity: unchecked is used, unconfirmed",
            Identity,
            facts(50, unchecked(), not_looked(), None),
            To(50, Used::Identity),
        ),
        (
            "identity: differs is refused",
            Identity,
            facts(50, differs(), matched(60, 1, 1), Some(41)),
            No(None),
        ),
        (
            "timestamp: match even when identity holds",
            Timestamp,
            facts(50, Confirmed, matched(49, 2, 1), None),
            To(50, Used::Timestamp),
        ),
        (
            "timestamp: gap refused, clampable",
            Timestamp,
            facts(50, unchecked(), missing(80), Some(41)),
            No(Some(80)),
        ),
        (
            "timestamp: no timestamp refused",
            Timestamp,
            facts(50, unchecked(), not_looked(), Some(41)),
            No(None),
        ),
        (
            "checkpoints: used",
            Checkpoints,
            facts(50, Confirmed, matched(49, 1, 1), Some(41)),
            To(41, Used::Checkpoints),
        ),
        (
            "checkpoints: none refused",
            Checkpoints,
            facts(50, Confirmed, matched(49, 1, 1), None),
            No(None),
        ),
        (
            "offset 0 is the log start whatever the method",
            Checkpoints,
            facts(0, unchecked(), not_looked(), None),
            To(3, Used::None),
        ),
    ];
    for (name, method, f, want) in cases {
        assert_eq!(out(&decide(method, &f)), want, "{name}");
    }
}

#[test]
fn the_checkpoint_is_shown_beside_with_the_records_it_would_repeat() {
    let d = decide(
        Method::Timestamp,
        &facts(50, unchecked(), matched(49, 3, 1), Some(9)),
    );
    let t = d.translation();
    assert_eq!(t.method, Used::Timestamp);
    assert_eq!(t.checkpoint, Some(9));
    assert_eq!(t.checkpoint_repeats, Some(41));
    assert_eq!(t.same_time, Some(3));
    assert!(t.basis.contains("3 records share that time"), "{}", t.basis);
}

#[test]
fn identical_records_at_one_time_are_said_and_the_first_is_taken() {
    let d = decide(
        Method::Timestamp,
        &facts(50, unchecked(), matched(47, 4, 2), None),
    );
    assert_eq!(out(&d), Out::To(48, Used::Timestamp));
    assert!(d.translation().basis.contains("2 identical records"));
}

#[test]
fn a_refusal_says_what_each_method_found_and_how_to_go_on() {
    let d = decide(Method::Auto, &facts(50, unchecked(), not_looked(), None));
    let Decision::Refused { why, .. } = &d else {
        panic!("{d:?}")
    };
    assert!(
        why.contains("no fingerprint") && why.contains("no timestamp"),
        "{why}"
    );
    let d = decide(Method::Auto, &facts(50, differs(), missing(80), None));
    let Decision::Refused { why, .. } = &d else {
        panic!("{d:?}")
    };
    assert!(
        why.contains("--on-out-of-range clamp") && why.contains("80"),
        "{why}"
    );
}

#[test]
fn methods_parse_and_print() {
    for m in ["auto", "identity", "timestamp", "checkpoints"] {
        assert_eq!(m.parse::<Method>().unwrap().to_string(), m);
    }
    let err = "offsets".parse::<Method>().unwrap_err().to_string();
    assert!(
        err.contains("expected auto, identity, timestamp or checkpoints"),
        "{err}"
    );
}

#[test]
fn the_source_log_start_is_the_target_log_start_when_nothing_else_says_more() {
    let mut f = facts(40, unchecked(), not_looked(), None);
    f.source_log_start = Some(40);
    assert_eq!(out(&decide(Method::Auto, &f)), Out::To(3, Used::None));
    assert_eq!(out(&decide(Method::Timestamp, &f)), Out::To(3, Used::None));
    // A checkpoint says more than "the beginning".
    f.checkpoint = Some(MirrorAnswer {
        offset: 20,
        basis: "checkpoint".into(),
    });
    assert_eq!(
        out(&decide(Method::Auto, &f)),
        Out::To(20, Used::Checkpoints)
    );
    // Identity refuses: it does not guess.
    f.identity = differs();
    assert_eq!(out(&decide(Method::Identity, &f)), Out::No(None));
}

#[test]
fn a_last_record_older_than_the_target_log_is_before_its_start_not_a_gap() {
    let before = ByTime::BeforeStart {
        start: 8,
        why: "older".into(),
    };
    for method in [Method::Auto, Method::Timestamp] {
        let d = decide(
            method,
            &facts(
                6,
                IdentityCheck::Unchecked("before log start".into()),
                before.clone(),
                None,
            ),
        );
        assert_eq!(out(&d), Out::Before(8), "{method}");
    }
}
