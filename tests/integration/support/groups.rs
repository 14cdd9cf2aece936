//! What the reference tools print alike for every group type: `kafka-groups --list` (each group
//! with its type), the `GROUP TOPIC PARTITION NEW-OFFSET` table of `--reset-offsets`, and the
//! column-by-name reading of their tables that [`super::share`] and [`super::streams`] share.

use super::env::bootstrap;
use super::kcg::{run_kafka_tool, ToolOutput};

/// One table row of a reference tool, with the header it appeared under.
#[derive(Debug, Clone)]
pub struct TableRow<'a> {
    pub line: &'a str,
    columns: Vec<&'a str>,
    fields: Vec<&'a str>,
}

impl<'a> TableRow<'a> {
    /// The field under the column `name`, `None` when the table has no such column.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.columns
            .iter()
            .position(|c| *c == name)
            .map(|i| self.fields[i])
    }

    /// The field under `name`, panicking (with the tool's name and the line) when it is missing.
    pub fn require(&self, name: &str, tool: &str) -> &'a str {
        self.get(name)
            .unwrap_or_else(|| panic!("{tool}: no {name} column for {:?}", self.line))
    }
}

/// The rows of every table in `stdout` whose header starts with `GROUP` and has the column
/// `marker` (e.g. `PARTITION`). Columns are found by their header names, so optional columns
/// (`LEADER-EPOCH` with `--verbose`) do not matter. A row with another number of fields than its
/// header, and text outside tables (warnings, "has no active members"), are skipped. Column names
/// and values must not hold spaces (true of these tables, not of `--describe --state`).
pub fn parse_table<'a>(stdout: &'a str, marker: &str) -> Vec<TableRow<'a>> {
    let mut rows = Vec::new();
    let mut header: Option<Vec<&str>> = None;
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            header = None;
            continue;
        }
        if fields[0] == "GROUP" && fields.contains(&marker) {
            header = Some(fields);
            continue;
        }
        if let Some(columns) = header.as_ref() {
            if fields.len() == columns.len() {
                rows.push(TableRow {
                    line,
                    columns: columns.clone(),
                    fields,
                });
            }
        }
    }
    rows
}

/// A number in a tool's table, `None` for `-`; panics on anything else.
pub fn dash_i64(value: &str, tool: &str, column: &str) -> Option<i64> {
    (value != "-").then(|| {
        value
            .parse()
            .unwrap_or_else(|e| panic!("{tool} {column} {value:?}: {e}"))
    })
}

/// A group as `kafka-groups --list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub group: String,
    /// `Classic`, `Consumer`, `Share` or `Streams`, as the tool prints it.
    pub group_type: String,
    /// `consumer`, `connect`, `share`, `streams`...; `None` for a group that only holds committed
    /// offsets (a classic group with an empty protocol type, which the tool prints as nothing).
    pub protocol: Option<String>,
}

/// Parses `kafka-groups --list`: `GROUP TYPE PROTOCOL`, the protocol column left blank for a
/// group without one.
pub fn parse_groups_list(stdout: &str) -> Vec<GroupListing> {
    let mut in_table = false;
    let mut groups = Vec::new();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["GROUP", "TYPE", "PROTOCOL"] => in_table = true,
            [group, group_type, protocol] if in_table => groups.push(GroupListing {
                group: group.to_string(),
                group_type: group_type.to_string(),
                protocol: Some(protocol.to_string()),
            }),
            [group, group_type] if in_table => groups.push(GroupListing {
                group: group.to_string(),
                group_type: group_type.to_string(),
                protocol: None,
            }),
            _ => {}
        }
    }
    groups.sort_by(|a, b| a.group.cmp(&b.group));
    groups
}

/// Runs `kafka-groups --bootstrap-server <OV_BOOTSTRAP> --list ARGS...` (ARGS: e.g. `--share`,
/// `--streams`, `--group-type consumer`) and parses it.
pub async fn list_groups(args: &[&str]) -> Vec<GroupListing> {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str(), "--list"];
    all.extend_from_slice(args);
    let out = run_kafka_tool("kafka-groups", &all).await;
    assert_tool_ok("kafka-groups --list", &out);
    parse_groups_list(&out.stdout)
}

/// The type `kafka-groups --list` shows for `group`, `None` when it is not listed.
pub async fn group_type(group: &str) -> Option<String> {
    list_groups(&[])
        .await
        .into_iter()
        .find(|g| g.group == group)
        .map(|g| g.group_type)
}

/// Panics with the tool's output unless it exited 0 and printed no "Error:" (the group tools
/// print some errors, e.g. for an unknown group, and still exit 0).
pub fn assert_tool_ok(what: &str, out: &ToolOutput) {
    assert!(
        out.success && !out.stdout.contains("Error:"),
        "{what} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

/// Where `--reset-offsets` moves a group's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetTo {
    Earliest,
    Latest,
    /// The committed offsets themselves: with `--dry-run`, a way to read them.
    Current,
}

impl ResetTo {
    pub fn flag(self) -> &'static str {
        match self {
            ResetTo::Earliest => "--to-earliest",
            ResetTo::Latest => "--to-latest",
            ResetTo::Current => "--to-current",
        }
    }
}

/// One row of the `GROUP TOPIC PARTITION NEW-OFFSET` table that `--reset-offsets` prints (with
/// `--dry-run` and with `--execute`), in kafka-consumer-groups, kafka-share-groups and
/// kafka-streams-groups alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOffset {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// Parses the table of `--reset-offsets`, sorted by topic and partition.
pub fn parse_new_offsets(stdout: &str) -> Vec<NewOffset> {
    let tool = "--reset-offsets";
    let mut rows: Vec<NewOffset> = parse_table(stdout, "NEW-OFFSET")
        .into_iter()
        .map(|row| NewOffset {
            group: row.require("GROUP", tool).to_string(),
            topic: row.require("TOPIC", tool).to_string(),
            partition: row
                .require("PARTITION", tool)
                .parse()
                .unwrap_or_else(|e| panic!("{tool} partition in {:?}: {e}", row.line)),
            offset: dash_i64(row.require("NEW-OFFSET", tool), tool, "NEW-OFFSET")
                .unwrap_or_else(|| panic!("{tool}: no new offset in {:?}", row.line)),
        })
        .collect();
    rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kafka-groups --list` (Kafka 4.3.1) with a group of each type, and a group that only holds
    /// committed offsets (no protocol).
    const GROUPS_LIST: &str = "\
GROUP                     TYPE                      PROTOCOL                 
console-consumer-24971    Classic                   consumer                  
cons-g1                   Consumer                  consumer                  
st-app-1                  Streams                   streams                   
sh-group-1                Share                     share                     
simple-g1                 Classic                                             
offset-vault-test-connect Classic                   connect                   
";

    /// `kafka-streams-groups --reset-offsets --to-latest --execute` (Kafka 4.3.1): wide columns
    /// with trailing spaces, partitions in no particular order.
    const RESET_STREAMS: &str = "
GROUP                          TOPIC                          PARTITION  NEW-OFFSET     
st-app-1                       st-in-1                        0          3              
st-app-1                       st-in-1                        2          6              
st-app-1                       st-in-1                        1          3              
";

    /// `kafka-share-groups --reset-offsets --to-latest --execute` (Kafka 4.3.1).
    const RESET_SHARE: &str = "
GROUP           TOPIC           PARTITION  NEW-OFFSET
sh-group-1      sh-topic-1      1          10
sh-group-1      sh-topic-1      0          0
";

    fn listing(group: &str, group_type: &str, protocol: Option<&str>) -> GroupListing {
        GroupListing {
            group: group.into(),
            group_type: group_type.into(),
            protocol: protocol.map(str::to_string),
        }
    }

    #[test]
    fn groups_list_has_every_type_and_a_blank_protocol_is_none() {
        assert_eq!(
            parse_groups_list(GROUPS_LIST),
            vec![
                listing("cons-g1", "Consumer", Some("consumer")),
                listing("console-consumer-24971", "Classic", Some("consumer")),
                listing("offset-vault-test-connect", "Classic", Some("connect")),
                listing("sh-group-1", "Share", Some("share")),
                listing("simple-g1", "Classic", None),
                listing("st-app-1", "Streams", Some("streams")),
            ]
        );
        assert_eq!(parse_groups_list(""), vec![]);
        assert_eq!(parse_groups_list("GROUP TYPE PROTOCOL\n"), vec![]);
    }

    fn new_offset(group: &str, topic: &str, partition: i32, offset: i64) -> NewOffset {
        NewOffset {
            group: group.into(),
            topic: topic.into(),
            partition,
            offset,
        }
    }

    #[test]
    fn reset_tables_of_both_tools_are_read_and_sorted() {
        assert_eq!(
            parse_new_offsets(RESET_STREAMS),
            vec![
                new_offset("st-app-1", "st-in-1", 0, 3),
                new_offset("st-app-1", "st-in-1", 1, 3),
                new_offset("st-app-1", "st-in-1", 2, 6),
            ]
        );
        assert_eq!(
            parse_new_offsets(RESET_SHARE),
            vec![
                new_offset("sh-group-1", "sh-topic-1", 0, 0),
                new_offset("sh-group-1", "sh-topic-1", 1, 10),
            ]
        );
    }

    #[test]
    fn reset_errors_are_no_rows() {
        for text in [
            "",
            "\nError: One or more topics are not part of the group 'nonexistent-app'.\n",
            "\nError: Executing streams group command failed due to java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupIdNotFoundException: Group nonexistent-app not found.\n",
        ] {
            assert_eq!(parse_new_offsets(text), vec![], "{text:?}");
        }
    }

    #[test]
    #[should_panic(expected = "NEW-OFFSET")]
    fn reset_refuses_an_offset_that_is_not_a_number() {
        parse_new_offsets(&RESET_SHARE.replace("1          10", "1          ten"));
    }
}
