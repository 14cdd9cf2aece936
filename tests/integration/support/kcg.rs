//! The reference tool: running the real `kafka-consumer-groups` (and the other Kafka tools) and
//! parsing their output.

use std::process::Command;

use super::blocking;
use super::env::{bootstrap, kafka_tools_dir};

/// Committed offsets per partition of `group` on `topic`, as the real `kafka-consumer-groups
/// --describe` reports them.
pub async fn committed(group: &str, topic: &str) -> std::collections::BTreeMap<i32, i64> {
    kcg_describe(group)
        .await
        .into_iter()
        .filter(|r| r.topic == topic)
        .filter_map(|r| Some((r.partition, r.current_offset?)))
        .collect()
}

/// Output of one run of a Kafka tool.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a tool from [`kafka_tools_dir`] (e.g. `kafka-consumer-groups`) with the given arguments.
/// A run that failed only because the tool's own admin client timed out (a loaded two-core
/// machine running many JVMs at once) is run again, twice at most; any other failure is
/// returned as it is.
pub async fn run_kafka_tool(tool: &str, args: &[&str]) -> ToolOutput {
    let mut out = run_kafka_tool_once(tool, args).await;
    for _ in 0..2 {
        // (kafka-consumer-groups prints "Error: ..." and may still exit 0.)
        let text = format!("{}{}", out.stdout, out.stderr);
        let timed_out = text.contains("org.apache.kafka.common.errors.TimeoutException")
            && (!out.success || text.contains("Error:"));
        if !timed_out {
            break;
        }
        eprintln!("{tool} timed out; running it again");
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        out = run_kafka_tool_once(tool, args).await;
    }
    out
}

async fn run_kafka_tool_once(tool: &str, args: &[&str]) -> ToolOutput {
    let program = kafka_tools_dir().join(tool);
    let args: Vec<String> = args.iter().map(|a| (*a).to_string()).collect();
    blocking(move || {
        let output = Command::new(&program)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        ToolOutput {
            success: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    })
    .await
}

/// Runs `kafka-consumer-groups --bootstrap-server <OV_BOOTSTRAP> ARGS...`.
pub async fn kcg(args: &[&str]) -> ToolOutput {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-consumer-groups", &all).await
}

/// One partition row of `kafka-consumer-groups --describe --group G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KcgRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// `None` where the tool prints `-` (no committed offset).
    pub current_offset: Option<i64>,
    pub log_end: Option<i64>,
    pub lag: Option<i64>,
    pub consumer_id: Option<String>,
    pub host: Option<String>,
    pub client_id: Option<String>,
}

fn dash_none(value: &str) -> Option<String> {
    (value != "-").then(|| value.to_string())
}

fn dash_i64(value: &str, what: &str) -> Option<i64> {
    (value != "-").then(|| {
        value
            .parse()
            .unwrap_or_else(|e| panic!("kafka-consumer-groups {what} {value:?}: {e}"))
    })
}

/// Parses the partition table of `kafka-consumer-groups --describe [--offsets] [--verbose]`.
/// Columns are found by their header names, so optional columns (e.g. LEADER-EPOCH) do not matter.
/// Lines that are not part of a table (blank lines, "Consumer group 'g' has no active members.")
/// are skipped.
pub fn parse_kcg_describe(stdout: &str) -> Vec<KcgRow> {
    let mut rows = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            header = None;
            continue;
        }
        if fields[0] == "GROUP" && fields.contains(&"PARTITION") {
            header = Some(fields);
            continue;
        }
        let Some(columns) = header.as_ref() else {
            continue;
        };
        if fields.len() != columns.len() {
            continue;
        }
        let get = |name: &str| {
            columns
                .iter()
                .position(|c| *c == name)
                .map(|i| fields[i])
                .unwrap_or("-")
        };
        rows.push(KcgRow {
            group: get("GROUP").to_string(),
            topic: get("TOPIC").to_string(),
            partition: get("PARTITION")
                .parse()
                .unwrap_or_else(|e| panic!("kafka-consumer-groups partition in {line:?}: {e}")),
            current_offset: dash_i64(get("CURRENT-OFFSET"), "CURRENT-OFFSET"),
            log_end: dash_i64(get("LOG-END-OFFSET"), "LOG-END-OFFSET"),
            lag: dash_i64(get("LAG"), "LAG"),
            consumer_id: dash_none(get("CONSUMER-ID")),
            host: dash_none(get("HOST")),
            client_id: dash_none(get("CLIENT-ID")),
        });
    }
    rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    rows
}

/// `kafka-consumer-groups --describe --group G`, parsed. Panics if the tool reports an error
/// (it prints "Error: ..." and still exits 0 for a group that does not exist).
pub async fn kcg_describe(group: &str) -> Vec<KcgRow> {
    let out = kcg(&["--describe", "--group", group]).await;
    assert!(
        out.success && !out.stdout.contains("Error:"),
        "kafka-consumer-groups --describe --group {group} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    parse_kcg_describe(&out.stdout)
}

/// The STATE column of `kafka-consumer-groups --describe --group G --state` (e.g. "Empty",
/// "Stable"), or `None` when the tool says the group does not exist.
pub async fn kcg_group_state(group: &str) -> Option<String> {
    let out = kcg(&["--describe", "--group", group, "--state"]).await;
    if out.stdout.contains("does not exist") || out.stdout.contains("not found") {
        return None;
    }
    assert!(
        out.success && !out.stdout.contains("Error:"),
        "kafka-consumer-groups --describe --state --group {group} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    parse_kcg_state(&out.stdout, group)
}

/// Parses `--describe --state` output. The COORDINATOR (ID) column holds spaces, so the STATE
/// value is located by the header's column position (the tool pads columns to align).
pub fn parse_kcg_state(stdout: &str, group: &str) -> Option<String> {
    let mut state_column: Option<usize> = None;
    for line in stdout.lines() {
        if line.starts_with("GROUP") {
            state_column = line.find(" STATE").map(|i| i + 1);
            continue;
        }
        if let Some(column) = state_column {
            if line.split_whitespace().next() == Some(group) && line.len() > column {
                return line[column..].split_whitespace().next().map(str::to_string);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--describe --group G` of a group without members, as Kafka 4.3 prints it.
    const EMPTY_GROUP: &str = "
Consumer group 'g-both' has no active members.

GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
g-both          topic-two       0          2               4               2               -               -               -
g-both          topic-one       0          3               4               1               -               -               -
";

    /// `--describe --offsets --verbose` of a rebalancing group with a member: an extra
    /// LEADER-EPOCH column, and a warning line before the table.
    const VERBOSE_ACTIVE: &str = "
Warning: Consumer group 'connect-sink' is rebalancing.

GROUP        TOPIC   PARTITION  LEADER-EPOCH    CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID                    HOST            CLIENT-ID
connect-sink orders  1          -               0               0               0               connector-consumer-sink-0-00cc /127.0.0.1      connector-consumer-sink-0
connect-sink orders  0          7               45              45              0               connector-consumer-sink-0-00cc /127.0.0.1      connector-consumer-sink-0
connect-sink orders  2          -               -               12              -               -                              -               -
";

    /// `--describe --state`: the COORDINATOR (ID) column holds spaces.
    const STATE: &str = "
Consumer group 'g-both' has no active members.

GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS
g-both          127.0.0.1:19092  (1)      -                    Empty                0
";

    /// `--describe --state --verbose` of a consumer-protocol group: more columns after STATE.
    const STATE_VERBOSE: &str = "
Warning: Consumer group 'connect-sink' is rebalancing.

GROUP        COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS
connect-sink 127.0.0.1:19092  (1)      -                    PreparingRebalance   -               -                         2
";

    fn row(topic: &str, partition: i32, offsets: [Option<i64>; 3]) -> KcgRow {
        KcgRow {
            group: "g-both".into(),
            topic: topic.into(),
            partition,
            current_offset: offsets[0],
            log_end: offsets[1],
            lag: offsets[2],
            consumer_id: None,
            host: None,
            client_id: None,
        }
    }

    #[test]
    fn describe_rows_are_sorted_and_dashes_are_none() {
        assert_eq!(
            parse_kcg_describe(EMPTY_GROUP),
            vec![
                row("topic-one", 0, [Some(3), Some(4), Some(1)]),
                row("topic-two", 0, [Some(2), Some(4), Some(2)]),
            ]
        );
    }

    #[test]
    fn describe_finds_columns_by_name_and_keeps_members() {
        let rows = parse_kcg_describe(VERBOSE_ACTIVE);
        let offsets: Vec<_> = rows
            .iter()
            .map(|r| (r.partition, r.current_offset, r.log_end, r.lag))
            .collect();
        assert_eq!(
            offsets,
            vec![
                (0, Some(45), Some(45), Some(0)),
                (1, Some(0), Some(0), Some(0)),
                (2, None, Some(12), None),
            ]
        );
        assert_eq!(
            rows[0].consumer_id.as_deref(),
            Some("connector-consumer-sink-0-00cc")
        );
        assert_eq!(rows[0].host.as_deref(), Some("/127.0.0.1"));
        assert_eq!(rows[2].client_id, None);
    }

    #[test]
    fn describe_of_nothing_is_no_rows() {
        for text in [
            "",
            "\nConsumer group 'g' has no active members.\n",
            "Error: Executing consumer group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group g not found.\n",
        ] {
            assert_eq!(parse_kcg_describe(text), vec![], "{text:?}");
        }
    }

    #[test]
    #[should_panic(expected = "CURRENT-OFFSET")]
    fn describe_refuses_an_offset_that_is_not_a_number() {
        parse_kcg_describe(&EMPTY_GROUP.replace(" 3               4", " x               4"));
    }

    #[test]
    fn state_is_read_under_its_header_column() {
        assert_eq!(parse_kcg_state(STATE, "g-both").as_deref(), Some("Empty"));
        assert_eq!(
            parse_kcg_state(STATE_VERBOSE, "connect-sink").as_deref(),
            Some("PreparingRebalance")
        );
        assert_eq!(parse_kcg_state(STATE, "other-group"), None);
        assert_eq!(parse_kcg_state("", "g-both"), None);
    }
}
