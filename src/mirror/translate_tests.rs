use std::collections::BTreeMap;

use super::*;
use crate::model::{GroupState, GroupType, PartitionOffset};

fn part(topic: &str, partition: i32, offset: i64) -> PartitionOffset {
    PartitionOffset {
        leader_epoch: Some(3),
        topic_id: Some("id".into()),
        ..PartitionOffset::new(topic, partition, offset)
    }
}

fn group(partitions: Vec<PartitionOffset>) -> GroupSnapshot {
    GroupSnapshot {
        group_id: "g".into(),
        state: GroupState::Empty,
        protocol_type: "consumer".into(),
        group_type: GroupType::Classic,
        members: Vec::new(),
        connector: None,
        configs: BTreeMap::new(),
        partitions,
    }
}

fn connector(name: &str, kind: &str, config: &[(&str, &str)]) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: name.into(),
        connect_url: "http://c".into(),
        connector_type: kind.into(),
        group_id: None,
        config: config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        redacted_keys: Vec::new(),
        state: "RUNNING".into(),
        tasks: Vec::new(),
        offsets: None,
        offsets_unavailable: None,
    }
}

fn policy(alias: &str) -> TopicMap {
    TopicMap::parse::<&str>(&[], Some(&format!("default:{alias}"))).unwrap()
}

#[test]
fn renaming_drops_what_belongs_to_the_other_cluster_and_keeps_order() {
    let map = TopicMap::parse(&["b=a2"], Some("default:primary")).unwrap();
    let g = rename_group(
        &map,
        group(vec![
            part("a", 0, 5),
            part("b", 0, 6),
            part("__consumer_offsets", 1, 7),
        ]),
    );
    let names: Vec<(&str, i64)> = g
        .partitions
        .iter()
        .map(|p| (p.topic.as_str(), p.offset))
        .collect();
    // `b` is `a2` by the rule and sorts before `primary.a`; an internal topic keeps its name.
    assert_eq!(
        names,
        vec![("__consumer_offsets", 7), ("a2", 6), ("primary.a", 5)]
    );
    let renamed = &g.partitions[1];
    assert_eq!((renamed.leader_epoch, &renamed.topic_id), (None, &None));
    assert_eq!(g.partitions[0].topic_id.as_deref(), Some("id"));
}

#[test]
fn a_sink_connector_gets_its_topics_renamed_and_a_source_connector_a_note() {
    let mut m = Mirror::new(policy("primary"), Method::Auto, None, None);
    let mut connectors = vec![
        connector("sink", "sink", &[("topics", "orders, payments")]),
        connector("re", "sink", &[("topics.regex", "orders.*")]),
        connector("src", "source", &[("topic", "x")]),
    ];
    m.carry_connectors(&mut connectors).unwrap();
    assert_eq!(
        connectors[0].config["topics"],
        "primary.orders,primary.payments"
    );
    assert!(m.connector_notes["sink"][0].contains("topics=primary.orders,primary.payments"));
    assert_eq!(connectors[1].config["topics.regex"], "orders.*");
    assert!(m.connector_notes["re"][0].contains("topics.regex=orders.* is kept"));
    assert!(m.connector_notes["src"][0].contains("copied as they are"));

    let mut internal = vec![connector(
        "bad",
        "sink",
        &[("topics", "__consumer_offsets")],
    )];
    let err = m.carry_connectors(&mut internal).unwrap_err().to_string();
    assert!(
        err.contains("connector bad") && err.contains("never carries over"),
        "{err}"
    );
}

fn sync(up: i64, down: i64) -> OffsetSync {
    OffsetSync {
        topic: "orders".into(),
        partition: 0,
        upstream_offset: up,
        downstream_offset: down,
    }
}

#[test]
fn mirror_maker_answers_from_its_checkpoint_at_the_offset_else_from_offset_syncs() {
    let target = ("primary.orders".to_string(), 0);
    let mut records = MirrorRecords::default();
    records.syncs.insert(
        ("orders".into(), 0),
        vec![sync(0, 0), sync(100, 90), sync(40, 35)],
    );
    records.checkpoints.insert(
        ("g".into(), target.clone()),
        Checkpoint {
            group: "g".into(),
            topic: target.0.clone(),
            partition: 0,
            upstream_offset: 50,
            downstream_offset: 9,
            metadata: String::new(),
        },
    );
    let at = |offset: i64| {
        records
            .answer("g", &target, "orders", offset)
            .map(|a| a.offset)
    };
    // The checkpoint, where it is at the offset.
    assert_eq!(at(50), Some(9));
    // Else the newest sync at or before the offset: exactly on it, or one past it.
    assert_eq!(at(40), Some(35));
    assert_eq!(at(41), Some(36));
    assert_eq!(at(99), Some(36));
    assert_eq!(at(100), Some(90));
    assert_eq!(at(0), Some(0));
    // Another group has no checkpoint but the same syncs; another partition has none.
    assert_eq!(
        records.answer("h", &target, "orders", 50).map(|a| a.offset),
        Some(36)
    );
    assert_eq!(
        records.answer("g", &("primary.orders".into(), 1), "orders", 50),
        None
    );
}

#[test]
fn carrying_renames_refuses_what_is_never_replicated_and_two_topics_made_one() {
    let m = Mirror::new(policy("primary"), Method::Auto, None, None);
    let carried = m
        .rename(&[group(vec![
            part("orders", 0, 5),
            part("__consumer_offsets", 3, 7),
        ])])
        .unwrap();
    let parts = &carried.parts;
    assert_eq!(carried.groups[0].partitions[0].topic, "primary.orders");
    let key = |t: &str, p: i32| ("g".to_string(), (t.to_string(), p));
    assert_eq!(carried.decisions[&key("primary.orders", 0)].0, "orders");
    assert!(matches!(
        &carried.decisions[&key("__consumer_offsets", 3)].1,
        Decision::Refused { why, .. } if why.contains("never carries over")
    ));
    // Only the replicated partition is translated.
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].1, ("primary.orders".to_string(), 0));

    let merged = Mirror::new(
        TopicMap::parse(&["re:(a|b)=c"], None).unwrap(),
        Method::Auto,
        None,
        None,
    );
    let err = merged
        .rename(&[group(vec![part("a", 0, 1), part("b", 0, 2)])])
        .unwrap_err()
        .to_string();
    assert!(err.contains("topics a and b are both c"), "{err}");
}
