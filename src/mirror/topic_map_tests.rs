use super::*;

fn map(rules: &[&str], policy: Option<&str>) -> TopicMap {
    TopicMap::parse(rules, policy).unwrap_or_else(|e| panic!("{rules:?} {policy:?}: {e}"))
}

fn to(topic: &str, by: MappedBy) -> Mapping {
    Mapping::Replicated {
        topic: topic.to_string(),
        by,
    }
}

fn not(reason: NotReplicated) -> Mapping {
    Mapping::NotReplicated { reason }
}

const RULE0: MappedBy = MappedBy::Rule { index: 0 };
const RULE1: MappedBy = MappedBy::Rule { index: 1 };
const POLICY: MappedBy = MappedBy::Policy;
const KEPT: MappedBy = MappedBy::Unchanged;

#[test]
fn topics_map_as_rules_and_policies_say() {
    use NotReplicated::*;
    let dr: &[&str] = &["re:(.*)=dr.$1"];
    let cases: &[(&[&str], Option<&str>, &str, Mapping)] = &[
        // No rule, no policy: the name is kept.
        (&[], None, "orders", to("orders", KEPT)),
        // MirrorMaker's policies.
        (
            &[],
            Some("default:primary"),
            "orders",
            to("primary.orders", POLICY),
        ),
        (
            &[],
            Some("default:primary:_"),
            "orders",
            to("primary_orders", POLICY),
        ),
        (
            &[],
            Some("default:primary:--"),
            "orders",
            to("primary--orders", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "primary.orders",
            to("primary.primary.orders", POLICY),
        ),
        (&[], Some("identity"), "orders", to("orders", POLICY)),
        // Exact rules win over the policy; other topics follow the policy.
        (
            &["orders=dr-orders"],
            Some("default:primary"),
            "orders",
            to("dr-orders", RULE0),
        ),
        (
            &["orders=dr-orders"],
            Some("default:primary"),
            "payments",
            to("primary.payments", POLICY),
        ),
        (
            &["orders=dr-orders"],
            None,
            "payments",
            to("payments", KEPT),
        ),
        (
            &["orders=dr-orders"],
            Some("identity"),
            "Orders",
            to("Orders", POLICY),
        ),
        // Regular expressions: whole name only, groups by number or name.
        (dr, None, "orders", to("dr.orders", RULE0)),
        (
            dr,
            Some("default:primary"),
            "orders",
            to("dr.orders", RULE0),
        ),
        (&["re:ord=x"], None, "orders", to("orders", KEPT)),
        (&["re:ord=x"], None, "ord", to("x", RULE0)),
        (&["re:ders=x"], None, "orders", to("orders", KEPT)),
        (&["re:^a(.*)$=b$1"], None, "abc", to("bbc", RULE0)),
        (&["re:a|b=x"], None, "ab", to("ab", KEPT)),
        (&["re:a|b=x"], None, "b", to("x", RULE0)),
        (&["re:(.*)=${1}_dr"], None, "orders", to("orders_dr", RULE0)),
        (
            &["re:(.*)\\.(.*)=$2.$1"],
            None,
            "eu.orders",
            to("orders.eu", RULE0),
        ),
        (
            &["re:(?P<env>prod|dev)\\.(?P<name>.+)=${name}.$env"],
            None,
            "prod.orders",
            to("orders.prod", RULE0),
        ),
        (
            &["re:(?P<env>prod|dev)\\.(?P<name>.+)=${name}.$env"],
            None,
            "test.orders",
            to("test.orders", KEPT),
        ),
        (&["re:(a)?(b)=x${1}y$2"], None, "b", to("xyb", RULE0)),
        (&["re:(a)?(b)=x${1}y$2"], None, "ab", to("xayb", RULE0)),
        (&["re:(.*)=fixed"], None, "anything", to("fixed", RULE0)),
        (&["re:(.*)=$0-copy"], None, "t", to("t-copy", RULE0)),
        // The first rule that matches wins.
        (
            &["re:ord.*=first", "orders=second"],
            None,
            "orders",
            to("first", RULE0),
        ),
        (
            &["orders=first", "re:ord.*=second"],
            None,
            "orders",
            to("first", RULE0),
        ),
        (
            &["orders=first", "re:ord.*=second"],
            None,
            "orderbook",
            to("second", RULE1),
        ),
        (&["a=x", "b=y"], Some("default:p"), "b", to("y", RULE1)),
        // Never carried over, whatever the rules say.
        (
            dr,
            Some("default:primary"),
            "__consumer_offsets",
            not(KafkaInternal),
        ),
        (dr, None, "__transaction_state", not(KafkaInternal)),
        (dr, None, "__anything", not(KafkaInternal)),
        (dr, None, ".hidden", not(KafkaInternal)),
        (
            dr,
            Some("default:primary"),
            "mm2-offset-syncs.primary.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            Some("default:primary"),
            "mm2-offsets.primary.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            Some("default:primary"),
            "mm2-configs.primary.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            Some("default:primary"),
            "mm2-status.primary.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            Some("default:primary"),
            "primary.checkpoints.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            Some("identity"),
            "backup.checkpoints.internal",
            not(MirrorMakerInternal),
        ),
        (
            dr,
            None,
            "primary.checkpoints.internal",
            not(MirrorMakerInternal),
        ),
        (dr, Some("default:primary"), "heartbeats", not(Heartbeats)),
        (
            dr,
            Some("default:primary"),
            "primary.heartbeats",
            not(Heartbeats),
        ),
        (dr, Some("identity"), "other.heartbeats", not(Heartbeats)),
        (&[], None, "heartbeats", not(Heartbeats)),
        // ... with the policy's separator.
        (
            &[],
            Some("default:primary:_"),
            "mm2-offset-syncs_primary_internal",
            not(MirrorMakerInternal),
        ),
        (
            &[],
            Some("default:primary:_"),
            "primary_checkpoints_internal",
            not(MirrorMakerInternal),
        ),
        (
            &[],
            Some("default:primary:_"),
            "primary_heartbeats",
            not(Heartbeats),
        ),
        // Kafka 4.3's MirrorMaker replicates these (older releases skipped `.internal` and
        // `-internal` names).
        (
            &[],
            Some("default:primary"),
            "orders.internal",
            to("primary.orders.internal", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "orders-internal",
            to("primary.orders-internal", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "mm2.orders",
            to("primary.mm2.orders", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "heartbeats-app",
            to("primary.heartbeats-app", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "myheartbeats",
            to("primary.myheartbeats", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "checkpoints.internal-data",
            to("primary.checkpoints.internal-data", POLICY),
        ),
        (
            &[],
            Some("default:primary"),
            "_single",
            to("primary._single", POLICY),
        ),
    ];
    for (rules, policy, topic, want) in cases {
        let got = map(rules, *policy).map(topic);
        match got {
            Ok(got) => assert_eq!(&got, want, "{rules:?} {policy:?} {topic:?}"),
            Err(e) => panic!("{rules:?} {policy:?} {topic:?}: {e}"),
        }
    }
}

#[test]
fn a_name_kafka_would_refuse_is_an_error_that_names_the_rule() {
    let long = "t".repeat(245);
    let long = long.as_str();
    let cases: &[(&[&str], Option<&str>, &str, &str)] = &[
        (
            &["re:x(.*)=$1"],
            None,
            "x",
            "--topic-map \"re:x(.*)=$1\" maps topic \"x\" to \"\", which is empty",
        ),
        (
            &["re:(a)?b=$1"],
            None,
            "b",
            "maps topic \"b\" to \"\", which is empty",
        ),
        (
            &[],
            Some("default:primary"),
            long,
            "--replication-policy default:primary maps topic",
        ),
        (
            &[],
            Some("default:primary"),
            long,
            "is 253 characters long, and Kafka accepts at most 249",
        ),
        (&["re:(.*)=$1$1"], None, long, "is 490 characters long"),
        (&[], None, "", "topic \"\" is empty"),
        (&[], None, "or ders", "topic \"or ders\" holds ' '"),
    ];
    for (rules, policy, topic, want) in cases {
        let err = map(rules, *policy).map(topic).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::USAGE, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(want),
            "{rules:?} {policy:?} {topic:?}: {msg}\n  wanted: {want}"
        );
    }
}

#[test]
fn bad_rules_are_usage_errors_that_say_what_to_write() {
    let cases: &[(&str, &str)] = &[
        ("orders", "no `=` between the source and the target topic"),
        ("", "no `=`"),
        ("re:", "no `=`"),
        ("=dr.orders", "the source side (before `=`) is empty"),
        ("re:=x", "the source side (before `=`) is empty"),
        ("orders=", "the target side (after `=`) is empty"),
        ("re:(.*)=", "the target side (after `=`) is empty"),
        ("ord ers=x", "\"ord ers\" holds ' '"),
        ("orders=dr orders", "\"dr orders\" holds ' '"),
        ("orders=dr/orders", "holds '/'"),
        ("a=b=c", "\"a=b\" holds '='"),
        ("orders=..", "\"..\" is not a topic name Kafka accepts"),
        (
            "__consumer_offsets=x",
            "\"__consumer_offsets\" is a Kafka internal topic",
        ),
        (
            "primary.checkpoints.internal=x",
            "is an internal topic of MirrorMaker 2",
        ),
        ("heartbeats=x", "is MirrorMaker 2's heartbeats topic"),
        ("re:(=x", "\"(\" is not a regular expression"),
        (
            "re:(.*)=dr.$2",
            "the target uses group 2, but \"(.*)\" has 1 group(s)",
        ),
        (
            "re:orders=dr.$1",
            "the target uses group 1, but \"orders\" has 0 group(s)",
        ),
        (
            "re:(.*)=$1x",
            "the target uses group \"1x\", which \"(.*)\" does not name",
        ),
        ("re:(.*)=$1x", "write `${1}x`, not `$1x`"),
        ("re:(?P<name>.*)=$nam", "uses group \"nam\""),
        ("re:(.*)=${1", "`${` without its `}`"),
        ("re:(.*)=a$", "a `$` in \"a$\" is not followed by a group"),
        ("re:(.*)=a$-b", "is not followed by a group"),
        ("re:(.*)=${}", "is not followed by a group"),
        (
            "re:(.*)=dr/$1",
            "the target holds '/', which topic names cannot",
        ),
    ];
    for (rule, want) in cases {
        let err = rule.parse::<TopicRule>().unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{rule}: {err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("--topic-map {rule:?}: ")),
            "{rule}: {msg}"
        );
        assert!(msg.contains(want), "{rule}: {msg}\n  wanted: {want}");
        assert!(msg.ends_with(RULE_FORMS), "{rule}: {msg}");
    }
}

#[test]
fn bad_policies_are_usage_errors_that_say_what_to_write() {
    let cases: &[(&str, &str)] = &[
        ("", "it is empty"),
        ("default", "the source cluster's alias is missing"),
        ("default:", "the source cluster's alias is missing"),
        ("default::_", "the source cluster's alias is missing"),
        ("default:primary:", "the separator is empty"),
        ("default:pri mary", "the alias holds ' '"),
        ("default:primary:/", "the separator holds '/'"),
        (
            "default:us.west",
            "the alias \"us.west\" holds the separator \".\"",
        ),
        ("default:us_west:_", "holds the separator \"_\""),
        ("default:a:b:c", "too many `:`"),
        ("identity:primary", "identity takes no alias"),
        ("identity:", "identity takes no alias"),
        ("mirror", "unknown policy \"mirror\""),
        ("Default:primary", "unknown policy \"Default\""),
        (":primary", "unknown policy \"\""),
    ];
    for (policy, want) in cases {
        let err = policy.parse::<ReplicationPolicy>().unwrap_err();
        assert_eq!(err.exit_code(), crate::error::exit::USAGE, "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("--replication-policy {policy:?}: ")),
            "{policy}: {msg}"
        );
        assert!(msg.contains(want), "{policy}: {msg}\n  wanted: {want}");
        assert!(msg.ends_with(POLICY_FORMS), "{policy}: {msg}");
    }
}

#[test]
fn two_exact_rules_for_one_topic_are_refused() {
    let err = TopicMap::parse(&["orders=a", "re:x=y", "orders=b"], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--topic-map \"orders=a\" and \"orders=b\" both map \"orders\"; give one rule per topic"
    );
    // A regular expression may overlap an exact rule: the order decides.
    assert!(TopicMap::parse(&["orders=a", "re:orders=b"], None).is_ok());
    // A bad rule among good ones is reported, whichever it is.
    let err = TopicMap::parse(&["orders=a", "bad"], Some("identity")).unwrap_err();
    assert!(
        err.to_string().starts_with("--topic-map \"bad\": "),
        "{err}"
    );
    let err = TopicMap::parse(&["orders=a"], Some("nope")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--replication-policy \"nope\": "),
        "{err}"
    );
}

#[test]
fn policies_and_rules_print_as_written() {
    for (text, shown) in [
        ("default:primary", "default:primary"),
        ("default:primary:_", "default:primary:_"),
        ("default:primary:.", "default:primary"),
        ("identity", "identity"),
    ] {
        let policy: ReplicationPolicy = text.parse().unwrap();
        assert_eq!(policy.to_string(), shown);
        assert_eq!(shown.parse::<ReplicationPolicy>().unwrap(), policy);
    }
    let m = map(&["orders=a", "re:(.*)=dr.$1"], Some("default:primary"));
    let rules: Vec<String> = m.rules().iter().map(ToString::to_string).collect();
    assert_eq!(rules, ["orders=a", "re:(.*)=dr.$1"]);
    assert_eq!(
        m.policy(),
        Some(&ReplicationPolicy::Default {
            alias: "primary".into(),
            separator: ".".into()
        })
    );
}

#[test]
fn only_maps_without_rules_or_renaming_keep_names() {
    assert!(map(&[], None).keeps_names());
    assert!(map(&[], Some("identity")).keeps_names());
    assert!(!map(&[], Some("default:primary")).keeps_names());
    assert!(!map(&["a=a"], None).keeps_names());
    assert!(TopicMap::default().keeps_names());
}

#[test]
fn mappings_serialize_for_json_output() {
    let m = map(&["orders=a"], Some("default:primary"));
    let json = |topic: &str| serde_json::to_value(m.map(topic).unwrap()).unwrap();
    assert_eq!(
        json("orders"),
        serde_json::json!({"mapping": "replicated", "topic": "a", "by": {"by": "rule", "index": 0}})
    );
    assert_eq!(
        json("x"),
        serde_json::json!({"mapping": "replicated", "topic": "primary.x", "by": {"by": "policy"}})
    );
    assert_eq!(
        json("__consumer_offsets"),
        serde_json::json!({"mapping": "not-replicated", "reason": "kafka-internal"})
    );
}
