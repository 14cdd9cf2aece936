//! The reconstruction end to end, on an archive in a local store: the groups handed out one at
//! a time through bins on disk are the answer held whole, in the same order.

use super::*;
use crate::log::segment::{Row, SEGMENT_FORMAT_VERSION};
use crate::log::testing;
use crate::snapshot::model::Selection;

/// The base's time; the instant is 10 s after it, the archive sealed 20 s after it.
const T0: i64 = 1_796_000_000_000;
const PARTITIONS: i32 = 3;

fn t(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

fn base_group(id: &str, group_type: GroupType) -> GroupSnapshot {
    GroupSnapshot {
        group_id: id.into(),
        state: crate::kafka::GroupState::Empty,
        protocol_type: "consumer".into(),
        group_type,
        members: vec![],
        connector: None,
        configs: Default::default(),
        partitions: vec![
            PartitionOffset {
                log_end_offset: Some(50),
                ..PartitionOffset::new("t", 0, 5)
            },
            PartitionOffset::new("t", 1, 5),
        ],
    }
}

fn partition_of(g: &str) -> i32 {
    crate::wire::offsets_partition(g, PARTITIONS as usize).unwrap() as i32
}

/// The records of every group, by source partition: each base group `gNN` commits t[0] at NN
/// before the instant and t[1] at 100 after it; `g03` also had t[2] committed in the window
/// before the base; `g05`'s offsets are deleted before the instant; `new-a` and `new-b` are
/// created after the base; the share group `s` commits too.
fn records(base: &[String]) -> BTreeMap<i32, Vec<(i64, LogRecord)>> {
    let mut out: BTreeMap<i32, Vec<(i64, LogRecord)>> = BTreeMap::new();
    let mut add =
        |g: &str, at: i64, r: LogRecord| out.entry(partition_of(g)).or_default().push((at, r));
    add("g03", T0 - 1_000, testing::commit("g03", 2, 3, T0 - 1_000));
    for (i, g) in base.iter().enumerate() {
        add(
            g,
            T0 + 1_000 + i as i64,
            testing::commit(g, 0, i as i64, T0 + 1_000 + i as i64),
        );
        add(g, T0 + 15_000, testing::commit(g, 1, 100, T0 + 15_000));
    }
    add("g05", T0 + 2_000, testing::tombstone("g05", 0));
    add("g05", T0 + 2_001, testing::tombstone("g05", 1));
    for g in ["new-b", "new-a"] {
        add(g, T0 + 3_000, testing::commit(g, 0, 42, T0 + 3_000));
    }
    add("s", T0 + 4_000, testing::commit("s", 0, 9, T0 + 4_000));
    for rows in out.values_mut() {
        rows.sort_by_key(|(at, _)| *at);
    }
    out
}

/// A store whose archive holds `records`, one sealed segment per source partition that has any.
async fn archive(records: BTreeMap<i32, Vec<(i64, LogRecord)>>) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        dir.path().to_str().unwrap(),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    for (partition, records) in records {
        let rows: Vec<Row> = records
            .iter()
            .enumerate()
            .map(|(i, (at, r))| Row {
                source_offset: i as i64,
                timestamp: *at,
                record: r.clone(),
            })
            .collect();
        let meta = SegmentMeta {
            format_version: SEGMENT_FORMAT_VERSION.into(),
            cluster_id: "c".into(),
            topic: "__consumer_offsets".into(),
            partitions: PARTITIONS,
            partition,
            start: 0,
            next: rows.len() as i64,
            rows: rows.len() as u64,
            ignored: 0,
            unknown: 0,
            first_timestamp: rows.first().map(|r| r.timestamp),
            last_timestamp: rows.last().map(|r| r.timestamp),
            sealed_at: t(T0 + 20_000),
            gap: None,
        };
        super::super::archive::publish(&store, &meta, &rows)
            .await
            .unwrap();
    }
    (dir, store)
}

fn base_meta() -> SnapshotMeta {
    SnapshotMeta {
        id: "20261129T000000.000Z-base".into(),
        created_at: t(T0),
        cluster_id: "c".into(),
        selection: Selection {
            all_groups: true,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn request(groups: &[&str]) -> AtRequest {
    AtRequest {
        at: t(T0 + 10_000),
        filter: Filter {
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        },
        command: "restore",
    }
}

/// The answer held whole, and the groups handed out one at a time through bins on disk.
async fn both(
    store: &Store,
    groups: Vec<GroupSnapshot>,
    beyond: Beyond,
    req: &AtRequest,
) -> (AtInstant, AtSummary, Vec<AtGroup>) {
    let whole = reconstruct(
        store,
        &base_meta(),
        groups.clone(),
        beyond.clone(),
        &[],
        req,
    )
    .await
    .unwrap();
    let mut each = Vec::new();
    let summary = reconstruct_each(
        store,
        &base_meta(),
        &mut groups.into_iter().map(Ok),
        beyond,
        &[],
        req,
        true,
        &mut |g| {
            each.push(g);
            Ok(())
        },
    )
    .await
    .unwrap();
    (whole, summary, each)
}

fn ids(groups: &[AtGroup]) -> Vec<&str> {
    groups.iter().map(|g| g.source.group_id.as_str()).collect()
}

#[tokio::test]
async fn groups_handed_out_one_at_a_time_are_the_answer_held_whole_in_its_order() {
    let names: Vec<String> = (0..12).map(|i| format!("g{i:02}")).collect();
    let (_dir, store) = archive(records(&names)).await;
    let mut groups: Vec<GroupSnapshot> = names
        .iter()
        .map(|g| base_group(g, GroupType::Classic))
        .collect();
    groups.insert(4, base_group("s", GroupType::Share));
    // The groups span every source partition, interleaved.
    let spread: BTreeSet<i32> = names.iter().map(|g| partition_of(g)).collect();
    assert_eq!(spread.len(), PARTITIONS as usize);

    let (whole, summary, each) = both(&store, groups, Beyond::Discover, &request(&[])).await;
    assert_eq!(each, whole.groups);
    let mut want: Vec<&str> = names.iter().map(String::as_str).collect();
    // Those found in the log come after the base's, by source partition, each partition's
    // in id order.
    let mut found = vec!["new-a", "new-b"];
    found.sort_by_key(|g| (partition_of(g), *g));
    want.extend(found);
    assert_eq!(ids(&each), want);
    assert_eq!(summary.groups, each.len());
    assert_eq!(summary.describe(), whole.describe());
    assert_eq!(summary.absent, whole.absent());
    assert_eq!(summary.absent, ["g05"]);
    assert_eq!(summary.newcomers, whole.newcomers());
    assert_eq!(summary.records, whole.records());
    assert_eq!(summary.left_out, ["s"]);
    assert_eq!(summary.segments, whole.segments);
    // The positions of the instant: t[0] as committed before it, t[1] the base's (its commit
    // is after the instant), t[2] from the window before the base.
    let g03 = &each[3].snapshot;
    let got: Vec<(i32, i64)> = g03
        .partitions
        .iter()
        .map(|p| (p.partition, p.offset))
        .collect();
    assert_eq!(got, [(0, 3), (1, 5), (2, 3)]);
    assert_eq!(
        g03.partitions[0].log_end_offset,
        Some(50),
        "kept from the base"
    );
    assert!(
        each[5].snapshot.partitions.is_empty(),
        "g05's offsets were deleted"
    );
    let n = each.iter().find(|g| g.source.group_id == "new-a").unwrap();
    assert!(!n.source.in_base && n.source.committed);
}

#[tokio::test]
async fn named_groups_created_after_the_base_follow_the_base_groups_in_the_order_named() {
    let names: Vec<String> = (0..12).map(|i| format!("g{i:02}")).collect();
    let (_dir, store) = archive(records(&names)).await;
    let named = ["g07", "new-b", "g02", "new-a"];
    let groups: Vec<GroupSnapshot> = ["g02", "g07"]
        .iter()
        .map(|g| base_group(g, GroupType::Classic))
        .collect();
    let beyond = Beyond::Named(named.iter().map(|g| (g.to_string(), None)).collect());
    let (whole, summary, each) = both(&store, groups, beyond, &request(&named)).await;
    assert_eq!(each, whole.groups);
    assert_eq!(ids(&each), ["g02", "g07", "new-b", "new-a"]);
    assert_eq!(summary.newcomers, ["new-b", "new-a"]);
    assert_eq!(summary.describe(), whole.describe());
}

#[tokio::test]
async fn a_partition_the_archive_does_not_cover_is_refused_naming_its_first_group_in_order() {
    let names: Vec<String> = (0..12).map(|i| format!("g{i:02}")).collect();
    let mut recs = records(&names);
    // The source partition of g04 has no segment at all.
    let missing = partition_of("g04");
    recs.remove(&missing);
    let (_dir, store) = archive(recs).await;
    let groups: Vec<GroupSnapshot> = names
        .iter()
        .map(|g| base_group(g, GroupType::Classic))
        .collect();
    let first = names
        .iter()
        .find(|g| partition_of(g) == missing)
        .unwrap()
        .clone();
    for spill in [false, true] {
        let got = reconstruct_each(
            &store,
            &base_meta(),
            &mut groups.clone().into_iter().map(Ok),
            Beyond::Named(Vec::new()),
            &[],
            &request(&[]),
            spill,
            &mut |_| Ok(()),
        )
        .await;
        let why = got.unwrap_err().to_string();
        assert!(why.contains(&format!("group {first}: ")), "{why}");
    }
}
