use super::*;

fn tp(t: &str, p: i32) -> TopicPartition {
    (t.to_string(), p)
}

fn facts(current: Option<i64>, start: i64, end: i64, at: Option<i64>) -> PartitionFacts {
    PartitionFacts {
        current,
        marks: Watermarks {
            log_start: Some(start),
            log_end: Some(end),
        },
        at_instant: at,
    }
}

#[test]
fn every_scenario_gives_the_kafka_consumer_groups_target_before_clamping() {
    let t0 = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let file: BTreeMap<String, BTreeMap<TopicPartition, i64>> =
        [("g".to_string(), [(tp("t", 0), 7)].into())].into();
    // (scenario, facts: current, log-start, log-end, offset at the instant; want)
    let cases: Vec<(Scenario, PartitionFacts, std::result::Result<i64, &str>)> = vec![
        (Scenario::ToEarliest, facts(Some(5), 2, 9, None), Ok(2)),
        (Scenario::ToLatest, facts(Some(5), 2, 9, None), Ok(9)),
        (Scenario::ToCurrent, facts(Some(5), 2, 9, None), Ok(5)),
        // No committed offset: kafka-consumer-groups takes the log end.
        (Scenario::ToCurrent, facts(None, 2, 9, None), Ok(9)),
        (Scenario::ToOffset(4), facts(Some(5), 2, 9, None), Ok(4)),
        // Out of range stays out of range: the plan refuses or clamps it.
        (Scenario::ToOffset(100), facts(Some(5), 2, 9, None), Ok(100)),
        (Scenario::ShiftBy(1), facts(Some(5), 2, 9, None), Ok(6)),
        (Scenario::ShiftBy(-10), facts(Some(5), 2, 9, None), Ok(-5)),
        (
            Scenario::ShiftBy(1),
            facts(None, 2, 9, None),
            Err("no committed offset to shift from"),
        ),
        (
            Scenario::ToDatetime(t0),
            facts(Some(5), 2, 9, Some(3)),
            Ok(3),
        ),
        // No record at or after the instant: the log end.
        (Scenario::ToDatetime(t0), facts(Some(5), 2, 9, None), Ok(9)),
        (
            Scenario::FromFile(file.clone()),
            facts(Some(5), 2, 9, None),
            Ok(7),
        ),
    ];
    for (scenario, f, want) in cases {
        let got = target(&scenario, "g", &tp("t", 0), &f);
        match (got, want) {
            (Ok(g), Ok(w)) => assert_eq!(g, w, "{scenario:?} {f:?}"),
            (Err(e), Err(words)) => assert!(e.contains(words), "{scenario:?}: {e}"),
            (got, want) => panic!("{scenario:?} {f:?}: got {got:?}, want {want:?}"),
        }
    }
    let unknown = PartitionFacts::default();
    for s in [
        Scenario::ToEarliest,
        Scenario::ToLatest,
        Scenario::ToCurrent,
    ] {
        let e = target(&s, "g", &tp("t", 0), &unknown).unwrap_err();
        assert!(
            e.contains("could not be read") && e.contains("g t[0]"),
            "{e}"
        );
    }
    let e = target(&Scenario::FromFile(file), "g", &tp("t", 1), &unknown).unwrap_err();
    assert!(e.contains("not in the file"), "{e}");
}

#[test]
fn share_groups_take_only_what_the_broker_can_set() {
    let t0 = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let cases = [
        (Scenario::ToEarliest, true),
        (Scenario::ToLatest, true),
        (Scenario::ToDatetime(t0), true),
        (Scenario::ToOffset(3), true),
        (Scenario::ShiftBy(1), false),
        (Scenario::ToCurrent, false),
        (Scenario::FromFile(BTreeMap::new()), false),
    ];
    for (s, ok) in cases {
        let r = s.check_group_type("sg", GroupType::Share);
        assert_eq!(r.is_ok(), ok, "{s:?}");
        if let Err(e) = r {
            assert_eq!(e.exit_code(), crate::error::exit::USAGE);
            assert!(e.to_string().contains("share group sg"), "{e}");
        }
        for other in [GroupType::Classic, GroupType::Consumer, GroupType::Streams] {
            assert!(s.check_group_type("g", other).is_ok(), "{s:?} {other:?}");
        }
    }
}

#[test]
fn topics_parse_in_the_kafka_consumer_groups_form() {
    type Want = std::result::Result<(&'static str, Option<Vec<i32>>), &'static str>;
    let cases: [(&str, Want); 8] = [
        ("orders", Ok(("orders", None))),
        ("orders:0,2", Ok(("orders", Some(vec![0, 2])))),
        ("orders:2,0,2", Ok(("orders", Some(vec![0, 2])))),
        ("orders: 1", Ok(("orders", Some(vec![1])))),
        ("", Err("the topic is empty")),
        (":1", Err("the topic is empty")),
        ("orders:x", Err("not a partition number")),
        ("orders:-1", Err("never negative")),
    ];
    for (text, want) in cases {
        match (parse_topic(text), want) {
            (Ok((t, p)), Ok((wt, wp))) => assert_eq!((t.as_str(), p), (wt, wp), "{text}"),
            (Err(e), Err(words)) => {
                assert_eq!(e.exit_code(), crate::error::exit::USAGE);
                assert!(e.to_string().contains(words), "{text}: {e}");
            }
            (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn the_scope_is_the_committed_partitions_the_named_topics_or_the_file() {
    let committed = vec![tp("a", 1), tp("a", 0), tp("b", 0)];
    let counts: BTreeMap<String, i32> = [("a".to_string(), 3), ("c".to_string(), 2)].into();
    let file = Scenario::FromFile([("g".to_string(), [(tp("x", 4), 1)].into())].into());
    let topics = |list: Vec<(&str, Option<Vec<i32>>)>| {
        Scope::Topics(list.into_iter().map(|(t, p)| (t.to_string(), p)).collect())
    };
    let cases: Vec<(Scope, &Scenario, Vec<TopicPartition>)> = vec![
        (
            Scope::AllTopics,
            &Scenario::ToEarliest,
            vec![tp("a", 0), tp("a", 1), tp("b", 0)],
        ),
        (
            topics(vec![("a", None)]),
            &Scenario::ToEarliest,
            vec![tp("a", 0), tp("a", 1), tp("a", 2)],
        ),
        (
            topics(vec![("c", Some(vec![1])), ("a", Some(vec![2]))]),
            &Scenario::ToEarliest,
            vec![tp("a", 2), tp("c", 1)],
        ),
        // A listed partition is taken as given: the plan reports one that does not exist.
        (
            topics(vec![("a", Some(vec![9]))]),
            &Scenario::ToEarliest,
            vec![tp("a", 9)],
        ),
        (Scope::File, &file, vec![tp("x", 4)]),
    ];
    for (scope, scenario, want) in cases {
        let got = scope_partitions(&scope, scenario, "g", &committed, &counts).unwrap();
        assert_eq!(got, want, "{scope:?}");
    }
    let e = scope_partitions(
        &topics(vec![("nope", None)]),
        &Scenario::ToEarliest,
        "g",
        &committed,
        &counts,
    )
    .unwrap_err();
    assert_eq!(e.exit_code(), crate::error::exit::NOT_FOUND, "{e}");
}

#[test]
fn datetimes_and_durations_parse_like_kafka_consumer_groups() {
    let utc = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
    let cases = [
        ("2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00Z"),
        ("2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"),
        ("2026-12-01T10:00:00.250+01:00", "2026-12-01T09:00:00.250Z"),
        ("2026-12-01T10:00:00.000-0500", "2026-12-01T15:00:00Z"),
    ];
    for (text, want) in cases {
        assert_eq!(parse_datetime(text).unwrap(), utc(want), "{text}");
    }
    // Without a zone: local time, as kafka-consumer-groups does.
    let naive = NaiveDateTime::parse_from_str("2026-12-01T10:00:00", "%Y-%m-%dT%H:%M:%S").unwrap();
    let local = Local.from_local_datetime(&naive).earliest().unwrap();
    assert_eq!(
        parse_datetime("2026-12-01T10:00:00.000").unwrap(),
        local.with_timezone(&Utc)
    );
    for bad in [
        "2026-12-01",
        "yesterday",
        "2026-12-01 10:00:00",
        "2026-13-01T10:00:00Z",
    ] {
        let e = parse_datetime(bad).unwrap_err();
        assert!(
            e.to_string().contains("YYYY-MM-DDTHH:mm:SS.sss"),
            "{bad}: {e}"
        );
    }

    let ms = |text: &str| parse_iso_duration(text).map(|d| d.num_milliseconds());
    let cases = [
        ("PT1H", 3_600_000),
        ("PT30M", 1_800_000),
        ("P1D", 86_400_000),
        ("P1DT12H", 129_600_000),
        ("PT0.5S", 500),
        ("pt2m3s", 123_000),
        ("PT0S", 0),
    ];
    for (text, want) in cases {
        assert_eq!(ms(text).unwrap(), want, "{text}");
    }
    for bad in [
        "1H", "P", "PT", "PT1", "P1H", "PT1D", "PT-1H", "P1.5D", "PT1X",
    ] {
        assert!(ms(bad).is_err(), "{bad} should be refused");
    }
}

#[test]
fn scenarios_describe_themselves_and_say_which_follow_the_committed_offsets() {
    let t0 = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let cases = [
        (Scenario::ToEarliest, "--to-earliest", false),
        (Scenario::ToCurrent, "--to-current", true),
        (Scenario::ShiftBy(-3), "--shift-by -3", true),
        (Scenario::ToOffset(8), "--to-offset 8", false),
        (
            Scenario::ToDatetime(t0),
            "--to-datetime 2026-12-01T10:00:00.000Z",
            false,
        ),
    ];
    for (s, words, relative) in cases {
        assert_eq!(s.describe(), words);
        assert_eq!(s.is_relative(), relative, "{words}");
    }
}
