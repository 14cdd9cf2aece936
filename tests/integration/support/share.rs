//! Share groups (KIP-932) through the real tools: `kafka-share-groups` (describe and reset, with
//! parsers of its output), `kafka-console-share-consumer` (consumes and acknowledges records) and
//! `kafka-configs` (a share group's `share.auto.offset.reset`).
//!
//! A share group has no committed offset per partition but a *start offset*: every record before
//! it has been acknowledged (or is otherwise done with). Its lag counts the records from there.

use std::collections::BTreeMap;

use super::env::bootstrap;
use super::groups::{assert_tool_ok, dash_i64, parse_new_offsets, parse_table, NewOffset, ResetTo};
use super::kcg::{parse_kcg_state, run_kafka_tool, ToolOutput};

/// Runs `kafka-share-groups --bootstrap-server <OV_BOOTSTRAP> ARGS...`.
pub async fn ksg(args: &[&str]) -> ToolOutput {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-share-groups", &all).await
}

/// One partition row of `kafka-share-groups --describe --offsets [--verbose] --group G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareOffsetRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// `None` where the tool prints `-`: the group has no state for the partition yet.
    pub start_offset: Option<i64>,
    pub lag: Option<i64>,
    /// Only with `--verbose`; `None` without it or where the tool prints `-`.
    pub leader_epoch: Option<i64>,
}

/// Parses `kafka-share-groups --describe --offsets [--verbose]`, sorted by topic and partition.
pub fn parse_share_offsets(stdout: &str) -> Vec<ShareOffsetRow> {
    let tool = "kafka-share-groups";
    let mut rows: Vec<ShareOffsetRow> = parse_table(stdout, "START-OFFSET")
        .into_iter()
        .map(|row| ShareOffsetRow {
            group: row.require("GROUP", tool).to_string(),
            topic: row.require("TOPIC", tool).to_string(),
            partition: row
                .require("PARTITION", tool)
                .parse()
                .unwrap_or_else(|e| panic!("{tool} partition in {:?}: {e}", row.line)),
            start_offset: dash_i64(row.require("START-OFFSET", tool), tool, "START-OFFSET"),
            lag: dash_i64(row.require("LAG", tool), tool, "LAG"),
            leader_epoch: row
                .get("LEADER-EPOCH")
                .and_then(|v| dash_i64(v, tool, "LEADER-EPOCH")),
        })
        .collect();
    rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    rows
}

/// `kafka-share-groups --describe --offsets --verbose --group G`, parsed. Panics if the tool
/// reports an error (an unknown group is one).
pub async fn describe_offsets(group: &str) -> Vec<ShareOffsetRow> {
    let out = ksg(&["--describe", "--offsets", "--verbose", "--group", group]).await;
    assert_tool_ok(
        &format!("kafka-share-groups --describe --offsets --group {group}"),
        &out,
    );
    parse_share_offsets(&out.stdout)
}

/// Start offsets per partition of `group` on `topic` (partitions without one left out).
pub async fn start_offsets(group: &str, topic: &str) -> BTreeMap<i32, i64> {
    describe_offsets(group)
        .await
        .into_iter()
        .filter(|r| r.topic == topic)
        .filter_map(|r| Some((r.partition, r.start_offset?)))
        .collect()
}

/// The STATE of `kafka-share-groups --describe --state --group G` (`Empty`, `Stable`), or `None`
/// when the tool says the group does not exist.
pub async fn group_state(group: &str) -> Option<String> {
    let out = ksg(&["--describe", "--state", "--group", group]).await;
    if out.stdout.contains("not found") || out.stdout.contains("does not exist") {
        return None;
    }
    assert_tool_ok(
        &format!("kafka-share-groups --describe --state --group {group}"),
        &out,
    );
    // Same layout as kafka-consumer-groups: the COORDINATOR (ID) column holds spaces.
    parse_kcg_state(&out.stdout, group)
}

/// `kafka-share-groups --reset-offsets --execute --group G --topic T` (all topics of the group
/// when `topic` is `None`), returning the offsets the tool says it set. The group must be empty:
/// the tool refuses (and this panics) while it has members.
pub async fn reset_offsets(group: &str, topic: Option<&str>, to: ResetTo) -> Vec<NewOffset> {
    let mut args = vec!["--reset-offsets", to.flag(), "--execute", "--group", group];
    match topic {
        Some(topic) => args.extend(["--topic", topic]),
        None => args.push("--all-topics"),
    }
    let out = ksg(&args).await;
    assert_tool_ok(&format!("kafka-share-groups {}", args.join(" ")), &out);
    parse_new_offsets(&out.stdout)
}

/// Sets a group config with `kafka-configs --alter --entity-type groups` (e.g.
/// `share.auto.offset.reset=earliest`). Works before the group exists.
pub async fn set_group_config(group: &str, config: &str) {
    let bootstrap = bootstrap();
    let args = [
        "--bootstrap-server",
        bootstrap.as_str(),
        "--alter",
        "--entity-type",
        "groups",
        "--entity-name",
        group,
        "--add-config",
        config,
    ];
    let out = run_kafka_tool("kafka-configs", &args).await;
    assert!(
        out.success && out.stdout.contains("Completed updating config"),
        "kafka-configs {}:\n{}\n{}",
        args.join(" "),
        out.stdout,
        out.stderr
    );
}

/// Consumes `n` records of `topic` with the share group `group` using the real
/// `kafka-console-share-consumer`, acknowledging (accepting) each, then stops; the records it had
/// fetched beyond `n` are released. Returns the values, in the order they were delivered.
///
/// A new share group starts at the latest offset, so this first sets the group's
/// `share.auto.offset.reset` to `earliest`: the records already in the topic are delivered.
pub async fn consume(group: &str, topic: &str, n: usize) -> Vec<String> {
    set_group_config(group, "share.auto.offset.reset=earliest").await;
    let bootstrap = bootstrap();
    let max = n.to_string();
    let args = [
        "--bootstrap-server",
        bootstrap.as_str(),
        "--topic",
        topic,
        "--group",
        group,
        "--max-messages",
        max.as_str(),
        "--timeout-ms",
        "30000",
    ];
    let out = run_kafka_tool("kafka-console-share-consumer", &args).await;
    let values: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    assert!(
        out.success && values.len() == n,
        "kafka-console-share-consumer for {n} records of {topic} (group {group}) printed {}:\n{}\n{}",
        values.len(),
        out.stdout,
        out.stderr
    );
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--describe --offsets --group G` (Kafka 4.3.1) of an empty share group that consumed 4 of
    /// the 10 records of partition 1 and never saw partition 0.
    const OFFSETS: &str = "
GROUP           TOPIC           PARTITION  START-OFFSET  LAG
sh-group-1      sh-topic-1      0          -             -
sh-group-1      sh-topic-1      1          4             6
";

    /// The same with `--verbose`: a LEADER-EPOCH column before START-OFFSET. (The note "Share
    /// group 'sh-group-1' has no active members." goes to stderr.)
    const OFFSETS_VERBOSE: &str = "
GROUP           TOPIC           PARTITION  LEADER-EPOCH  START-OFFSET  LAG
sh-group-1      sh-topic-1      0          -             -             -
sh-group-1      sh-topic-1      1          0             4             6
";

    /// `--describe --state --group G` while a console share consumer is a member.
    const STATE_ACTIVE: &str = "
GROUP           COORDINATOR (ID)          STATE           #MEMBERS
sh-group-1      127.0.0.1:19292  (1)      Stable          1
";

    /// `--describe --state --verbose --group G` of the empty group.
    const STATE_VERBOSE: &str = "
GROUP           COORDINATOR (ID)          STATE           GROUP-EPOCH  ASSIGNMENT-EPOCH  #MEMBERS
sh-group-1      127.0.0.1:19292  (1)      Empty           4            3                 0
";

    fn row(partition: i32, start_offset: Option<i64>, lag: Option<i64>) -> ShareOffsetRow {
        ShareOffsetRow {
            group: "sh-group-1".into(),
            topic: "sh-topic-1".into(),
            partition,
            start_offset,
            lag,
            leader_epoch: None,
        }
    }

    #[test]
    fn offsets_rows_with_dashes_for_a_partition_without_state() {
        assert_eq!(
            parse_share_offsets(OFFSETS),
            vec![row(0, None, None), row(1, Some(4), Some(6))]
        );
    }

    #[test]
    fn verbose_offsets_find_columns_by_name_and_keep_the_leader_epoch() {
        let mut with_epoch = row(1, Some(4), Some(6));
        with_epoch.leader_epoch = Some(0);
        assert_eq!(
            parse_share_offsets(OFFSETS_VERBOSE),
            vec![row(0, None, None), with_epoch]
        );
    }

    #[test]
    fn offsets_of_nothing_are_no_rows() {
        for text in [
            "",
            "\nShare group 'g' has no active members.\n",
            "\nError: Executing share group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group nonexist-g not found.\n",
        ] {
            assert_eq!(parse_share_offsets(text), vec![], "{text:?}");
        }
    }

    #[test]
    #[should_panic(expected = "START-OFFSET")]
    fn offsets_refuse_a_start_offset_that_is_not_a_number() {
        parse_share_offsets(&OFFSETS.replace("1          4 ", "1          x "));
    }

    #[test]
    fn state_is_read_under_its_header_column() {
        assert_eq!(
            parse_kcg_state(STATE_ACTIVE, "sh-group-1").as_deref(),
            Some("Stable")
        );
        assert_eq!(
            parse_kcg_state(STATE_VERBOSE, "sh-group-1").as_deref(),
            Some("Empty")
        );
    }
}
