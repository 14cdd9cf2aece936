//! Streams groups (KIP-1071) through the real tools: the test Kafka Streams application
//! (`scripts/streams-app`, source in `fixtures/streams-app/`) makes them, and
//! `kafka-streams-groups` describes and resets them (parsers of its output are here).
//!
//! What Kafka 4.3.1's `kafka-streams-groups` can and cannot show:
//! - `--describe --offsets` lists only the partitions assigned to active members: for an empty
//!   group it prints nothing. Without `--verbose` it shows only OFFSET-LAG; with it, also
//!   CURRENT-OFFSET and LOG-END-OFFSET ([`describe_offsets`] always asks for `--verbose`).
//! - The committed offsets of an empty group are shown by `--reset-offsets --to-current
//!   --dry-run` ([`committed`]), which changes nothing.
//! - `kafka-consumer-groups` refuses a streams group ("is not a consumer group").

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::blocking;
use super::env::{bootstrap, kafka_tools_dir};
use super::groups::{assert_tool_ok, dash_i64, parse_new_offsets, parse_table, NewOffset, ResetTo};
use super::kcg::{parse_kcg_state, run_kafka_tool, ToolOutput};

/// Runs `kafka-streams-groups --bootstrap-server <OV_BOOTSTRAP> ARGS...`.
pub async fn kstg(args: &[&str]) -> ToolOutput {
    let bootstrap = bootstrap();
    let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-streams-groups", &all).await
}

/// One partition row of `kafka-streams-groups --describe --offsets [--verbose] --group G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsOffsetRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// Only with `--verbose`; `None` without it or where the tool prints `-`.
    pub current_offset: Option<i64>,
    /// Only with `--verbose`.
    pub log_end: Option<i64>,
    pub lag: Option<i64>,
}

/// Parses `kafka-streams-groups --describe --offsets [--verbose]`, sorted by topic and partition.
pub fn parse_streams_offsets(stdout: &str) -> Vec<StreamsOffsetRow> {
    let tool = "kafka-streams-groups";
    let optional = |row: &super::groups::TableRow, column: &str| {
        row.get(column).and_then(|v| dash_i64(v, tool, column))
    };
    let mut rows: Vec<StreamsOffsetRow> = parse_table(stdout, "OFFSET-LAG")
        .into_iter()
        .map(|row| StreamsOffsetRow {
            group: row.require("GROUP", tool).to_string(),
            topic: row.require("TOPIC", tool).to_string(),
            partition: row
                .require("PARTITION", tool)
                .parse()
                .unwrap_or_else(|e| panic!("{tool} partition in {:?}: {e}", row.line)),
            current_offset: optional(&row, "CURRENT-OFFSET"),
            log_end: optional(&row, "LOG-END-OFFSET"),
            lag: dash_i64(row.require("OFFSET-LAG", tool), tool, "OFFSET-LAG"),
        })
        .collect();
    rows.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    rows
}

/// `kafka-streams-groups --describe --offsets --verbose --group G`, parsed: the partitions of the
/// group's active members (none for an empty group). `Err` with the tool's output when it reports
/// an error, e.g. for a group that does not exist (yet).
pub async fn try_describe_offsets(group: &str) -> Result<Vec<StreamsOffsetRow>, String> {
    let out = kstg(&["--describe", "--offsets", "--verbose", "--group", group]).await;
    if out.success && !out.stdout.contains("Error:") {
        Ok(parse_streams_offsets(&out.stdout))
    } else {
        Err(format!("{}\n{}", out.stdout.trim(), out.stderr.trim()))
    }
}

/// [`try_describe_offsets`], panicking on an error.
pub async fn describe_offsets(group: &str) -> Vec<StreamsOffsetRow> {
    try_describe_offsets(group).await.unwrap_or_else(|e| {
        panic!("kafka-streams-groups --describe --offsets --group {group} failed:\n{e}")
    })
}

/// The STATE of `kafka-streams-groups --describe --state --group G` (`Empty`, `Stable`...), or
/// `None` when the tool says the group does not exist. (For an empty group the tool prints
/// "Error: Streams group 'G' has no active members." above the table, and exits 0.)
pub async fn group_state(group: &str) -> Option<String> {
    let out = kstg(&["--describe", "--state", "--group", group]).await;
    if out.stdout.contains("not found") || out.stdout.contains("does not exist") {
        return None;
    }
    let state = parse_kcg_state(&out.stdout, group);
    assert!(
        out.success && state.is_some(),
        "kafka-streams-groups --describe --state --group {group} failed:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    state
}

fn reset_args<'a>(
    group: &'a str,
    topic: Option<&'a str>,
    to: ResetTo,
    mode: &'a str,
) -> Vec<&'a str> {
    let mut args = vec!["--reset-offsets", to.flag(), mode, "--group", group];
    match topic {
        Some(topic) => args.extend(["--input-topic", topic]),
        None => args.push("--all-input-topics"),
    }
    args
}

/// `kafka-streams-groups --reset-offsets --execute --group G --input-topic T` (all input topics
/// when `topic` is `None`), returning the offsets the tool says it set. The group must be empty.
pub async fn reset_offsets(group: &str, topic: Option<&str>, to: ResetTo) -> Vec<NewOffset> {
    let args = reset_args(group, topic, to, "--execute");
    let out = kstg(&args).await;
    assert_tool_ok(&format!("kafka-streams-groups {}", args.join(" ")), &out);
    parse_new_offsets(&out.stdout)
}

/// The committed offsets of `group` on its input topic `topic`, as `kafka-streams-groups
/// --reset-offsets --to-current --dry-run` shows them (the one way the tool shows the offsets of
/// an empty group).
pub async fn committed(group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let args = reset_args(group, Some(topic), ResetTo::Current, "--dry-run");
    let out = kstg(&args).await;
    assert_tool_ok(&format!("kafka-streams-groups {}", args.join(" ")), &out);
    parse_new_offsets(&out.stdout)
        .into_iter()
        .map(|r| (r.partition, r.offset))
        .collect()
}

/// How the test Streams application processes records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppMode {
    /// Every record is written to the output topic unchanged; no state.
    PassThrough,
    /// Counts per key in an in-memory store (with a changelog topic); records need keys.
    CountByKey,
}

/// What one run of the test Streams application ended with.
#[derive(Debug, Clone)]
pub struct AppRun {
    /// 0: saw the count; 3: timed out; 1: error; 2: bad arguments.
    pub code: Option<i32>,
    /// From its "processed N records" line.
    pub processed: Option<u64>,
    pub stdout: String,
    pub stderr: String,
}

impl AppRun {
    /// Panics with the application's output unless it saw all its records and exited 0.
    pub fn ok(self) -> AppRun {
        assert_eq!(
            self.code,
            Some(0),
            "the Streams application failed:\n{}\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// The test Streams application as a child process (see [`spawn_app`]).
pub struct StreamsApp {
    child: Option<Child>,
}

/// Starts the test Streams application (`scripts/streams-app`): application id (= streams group)
/// `app_id`, reading `input` and writing `output`, until it has seen `count` records or
/// `timeout` has passed; then it commits, leaves the group and exits. Use [`StreamsApp::wait`];
/// dropping it kills the process.
pub fn spawn_app(
    app_id: &str,
    input: &str,
    output: &str,
    count: u64,
    timeout: Duration,
    mode: AppMode,
) -> StreamsApp {
    let program = kafka_tools_dir().join("streams-app");
    let mut command = Command::new(&program);
    command
        .args([
            bootstrap().as_str(),
            app_id,
            input,
            output,
            &count.to_string(),
            &timeout.as_secs().max(1).to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if mode == AppMode::CountByKey {
        command.arg("--count-by-key");
    }
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    StreamsApp { child: Some(child) }
}

impl StreamsApp {
    /// Waits until the application exits.
    pub async fn wait(mut self) -> AppRun {
        let child = self
            .child
            .take()
            .expect("the application is waited for once");
        blocking(move || {
            let output = child
                .wait_with_output()
                .expect("cannot wait for the Streams application");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            AppRun {
                code: output.status.code(),
                processed: parse_processed(&stdout),
                stdout,
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            }
        })
        .await
    }
}

impl Drop for StreamsApp {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs the test Streams application to the end (see [`spawn_app`]).
pub async fn run_app(
    app_id: &str,
    input: &str,
    output: &str,
    count: u64,
    timeout: Duration,
    mode: AppMode,
) -> AppRun {
    spawn_app(app_id, input, output, count, timeout, mode)
        .wait()
        .await
}

/// The N of the application's "processed N records" line.
pub fn parse_processed(stdout: &str) -> Option<u64> {
    stdout.lines().find_map(|line| {
        line.strip_prefix("processed ")?
            .strip_suffix(" records")?
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--describe --offsets --group G` (Kafka 4.3.1) while the application runs: only the lag.
    const OFFSETS: &str = "\
GROUP           TOPIC           PARTITION  OFFSET-LAG
st-app-1        st-in-1         0          0
st-app-1        st-in-1         2          0
st-app-1        st-in-1         1          0
";

    /// The same with `--verbose`: CURRENT-OFFSET, LEADER-EPOCH and LOG-END-OFFSET, in another
    /// order than kafka-consumer-groups prints them, with trailing spaces.
    const OFFSETS_VERBOSE: &str = "\
GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LEADER-EPOCH    LOG-END-OFFSET  OFFSET-LAG     
st-app-1        st-in-1         0          3               0               3               0              
st-app-1        st-in-1         2          6               0               6               0              
st-app-1        st-in-1         1          3               0               3               0              
";

    /// `--describe --state --group G` of an empty group: an "Error:" line on stdout, and the
    /// coordinator with one space before its id (kafka-consumer-groups prints two).
    const STATE_EMPTY: &str = "
Error: Streams group 'st-app-1' has no active members.
GROUP           COORDINATOR (ID)          STATE                     #MEMBERS
st-app-1        127.0.0.1:19292 (1)       Empty                     0
";

    /// `--describe --state --verbose --group G` of the empty group: more columns after STATE.
    const STATE_VERBOSE: &str = "
Error: Streams group 'st-app-1' has no active members.
GROUP           COORDINATOR (ID)          STATE                     GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS
st-app-1        127.0.0.1:19292 (1)       Empty                     3               2                         0
";

    /// `--describe --state --group G` while the application runs.
    const STATE_ACTIVE: &str = "\
GROUP           COORDINATOR (ID)          STATE                     #MEMBERS
st-app-1        127.0.0.1:19292 (1)       Stable                    1
";

    fn row(partition: i32, current: Option<i64>, end: Option<i64>) -> StreamsOffsetRow {
        StreamsOffsetRow {
            group: "st-app-1".into(),
            topic: "st-in-1".into(),
            partition,
            current_offset: current,
            log_end: end,
            lag: Some(0),
        }
    }

    #[test]
    fn offsets_without_verbose_have_only_the_lag() {
        assert_eq!(
            parse_streams_offsets(OFFSETS),
            vec![row(0, None, None), row(1, None, None), row(2, None, None)]
        );
    }

    #[test]
    fn verbose_offsets_find_columns_by_name() {
        assert_eq!(
            parse_streams_offsets(OFFSETS_VERBOSE),
            vec![
                row(0, Some(3), Some(3)),
                row(1, Some(3), Some(3)),
                row(2, Some(6), Some(6)),
            ]
        );
    }

    #[test]
    fn offsets_of_nothing_are_no_rows() {
        for text in [
            "",
            "\nError: Streams group 'st-app-1' has no active members.\n",
            "\nError: Executing streams group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group nonexist not found.\n",
        ] {
            assert_eq!(parse_streams_offsets(text), vec![], "{text:?}");
        }
    }

    #[test]
    #[should_panic(expected = "OFFSET-LAG")]
    fn offsets_refuse_a_lag_that_is_not_a_number() {
        parse_streams_offsets(&OFFSETS.replace("2          0", "2          many"));
    }

    #[test]
    fn state_is_read_under_its_header_column() {
        assert_eq!(
            parse_kcg_state(STATE_EMPTY, "st-app-1").as_deref(),
            Some("Empty")
        );
        assert_eq!(
            parse_kcg_state(STATE_VERBOSE, "st-app-1").as_deref(),
            Some("Empty")
        );
        assert_eq!(
            parse_kcg_state(STATE_ACTIVE, "st-app-1").as_deref(),
            Some("Stable")
        );
    }

    #[test]
    fn processed_count_is_read_from_its_line() {
        assert_eq!(parse_processed("processed 15 records\n"), Some(15));
        assert_eq!(parse_processed("processed 0 records"), Some(0));
        assert_eq!(parse_processed(""), None);
        assert_eq!(parse_processed("processed many records\n"), None);
    }
}
