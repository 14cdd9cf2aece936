//! Watching what a reset or restore set going (`--watch DURATION`): for a while after the apply,
//! the states of the plan's connectors and their tasks, the committed offsets of its groups
//! against the targets just committed, and the groups' lag, read every few seconds; then one
//! verdict, as a serializable report.
//!
//! The loop in [`watch`] only reads. Everything it decides (what changed since the last read,
//! whether a group moved forward, how much of a stack trace to keep, the verdict) is a pure
//! function of what was read, tested on its own (watch_tests.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};

use super::plan::Plan;
use crate::connect::{ConnectClient, ConnectorStatus};
use crate::error::exit;
use crate::kafka::{KafkaClient, TopicPartition};

/// How many lines of a stack trace the report keeps.
pub const TRACE_LINES: usize = 10;

/// How many `Caused by:` lines below those the report keeps (the last ones: the root cause is
/// the last).
const CAUSE_LINES: usize = 5;

/// How long to watch, and how often to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// How long to watch after the apply (`--watch`).
    pub duration: Duration,
    /// The time between two reads.
    pub interval: Duration,
}

impl WatchOptions {
    /// The time between two reads on the command line.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

    /// Watch for `duration`, reading every [`Self::DEFAULT_INTERVAL`].
    pub fn new(duration: Duration) -> Self {
        WatchOptions {
            duration,
            interval: Self::DEFAULT_INTERVAL,
        }
    }
}

/// How the watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Connectors and tasks are RUNNING (or in the state they had before), and every group's
    /// offsets moved forward from the targets or had nothing to consume.
    Healthy,
    /// A connector or task went FAILED.
    ConnectorFailed,
    /// Nothing failed, but something is not making progress: a group's committed offsets never
    /// moved from the targets while it had records to consume, or a connector or task is not
    /// back in its state. A warning: the problems say which.
    NotMoving,
    /// Nothing could be read while watching.
    Unknown,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Healthy => "healthy",
            Verdict::ConnectorFailed => "connector-failed",
            Verdict::NotMoving => "not-moving",
            Verdict::Unknown => "unknown",
        })
    }
}

/// A connector's or task's state, as Kafka Connect names it (and as JSON shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    Running,
    Paused,
    Stopped,
    Failed,
    Unassigned,
    Restarting,
    /// A state this version does not know, as the worker named it.
    Other(String),
}

impl RunState {
    /// The state a worker names; a name this version does not know is kept as `Other`.
    pub fn parse(name: &str) -> Self {
        match name {
            "RUNNING" => RunState::Running,
            "PAUSED" => RunState::Paused,
            "STOPPED" => RunState::Stopped,
            "FAILED" => RunState::Failed,
            "UNASSIGNED" => RunState::Unassigned,
            "RESTARTING" => RunState::Restarting,
            other => RunState::Other(other.to_string()),
        }
    }

    /// The name Kafka Connect uses.
    pub fn name(&self) -> &str {
        match self {
            RunState::Running => "RUNNING",
            RunState::Paused => "PAUSED",
            RunState::Stopped => "STOPPED",
            RunState::Failed => "FAILED",
            RunState::Unassigned => "UNASSIGNED",
            RunState::Restarting => "RESTARTING",
            RunState::Other(name) => name,
        }
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for RunState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The start of a failed connector's or task's stack trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// The first lines (at most [`TRACE_LINES`]).
    pub lines: Vec<String>,
    /// The last `Caused by:` lines below those, where the root cause is said.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caused_by: Vec<String>,
    /// How many lines are in neither.
    pub omitted: usize,
}

/// One task at the last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskWatch {
    pub id: i32,
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

/// One connector of the plan at the last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConnectorWatch {
    pub name: String,
    /// Its state when the plan was made (the restore returns it to that state).
    pub state_before: Option<String>,
    /// Its state at the last read; `None` if it could not be read at all.
    pub state: Option<RunState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    pub tasks: Vec<TaskWatch>,
}

/// One group of the plan at the last read, against the targets committed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GroupWatch {
    pub group_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connector: Option<String>,
    /// Partitions with a committed target.
    pub partitions: usize,
    /// Partitions whose committed offset is past its target.
    pub moved_forward: usize,
    /// Records consumed since the targets: committed minus target, over the partitions that
    /// moved forward.
    pub consumed: i64,
    /// Log-end minus committed (the target where nothing is committed), summed; `None` when it
    /// could not be read.
    pub lag: Option<i64>,
    /// Partitions whose committed offset is below its target: something else moved them back.
    #[serde(skip_serializing_if = "is_zero")]
    pub behind_target: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the watch saw, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatchReport {
    pub verdict: Verdict,
    pub duration_s: f64,
    /// How many times everything was read.
    pub polls: usize,
    pub connectors: Vec<ConnectorWatch>,
    pub groups: Vec<GroupWatch>,
    /// Failures, warnings and what could not be read, one line each.
    pub problems: Vec<String>,
}

impl WatchReport {
    /// `exit::WATCH_FAILED` (16) when a connector or task failed; otherwise 0 (a group that did not
    /// move, or nothing readable, is a warning in `problems`).
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::ConnectorFailed => exit::WATCH_FAILED,
            Verdict::Healthy | Verdict::NotMoving | Verdict::Unknown => exit::OK,
        }
    }
}

/// Follows the plan's connectors and groups for `opts.duration` (at least one read), every
/// `opts.interval`, and stops early once a connector or task is FAILED. `notify` gets one line
/// per notable event: a state change, a failure with the first line of its trace, a group whose
/// offsets start moving, a read that fails. Changes nothing.
pub async fn watch(
    kafka: &KafkaClient,
    clients: &BTreeMap<String, ConnectClient>,
    plan: &Plan,
    opts: &WatchOptions,
    notify: &(dyn Fn(&str) + Sync),
) -> WatchReport {
    let started = Instant::now();
    let mut tracker = Tracker::new(plan);
    if tracker.is_empty() {
        return tracker.finish(Duration::ZERO);
    }
    loop {
        let poll = read(kafka, clients, &tracker).await;
        for line in tracker.observe(poll) {
            notify(&line);
        }
        let left = opts.duration.saturating_sub(started.elapsed());
        if tracker.failed() || left.is_zero() {
            break;
        }
        tokio::time::sleep(opts.interval.min(left)).await;
    }
    tracker.finish(started.elapsed())
}

/// Reads everything once: each connector's status, the groups' committed offsets and the
/// partitions' log-end offsets, at the same time.
async fn read(
    kafka: &KafkaClient,
    clients: &BTreeMap<String, ConnectClient>,
    tracker: &Tracker,
) -> Poll {
    let connectors = futures::future::join_all(tracker.connectors.keys().map(|name| async move {
        let seen = match clients.get(name) {
            Some(client) => client.status(name).await.map(|s| seen(&s)),
            None => Err(crate::Error::usage(
                "no Kafka Connect worker is known for it",
            )),
        };
        (name.clone(), seen.map_err(|e| e.to_string()))
    }));
    let group_ids: Vec<String> = tracker.groups.keys().cloned().collect();
    let offsets = async {
        if group_ids.is_empty() {
            BTreeMap::new()
        } else {
            kafka.group_offsets_each(group_ids).await
        }
    };
    let partitions = tracker.partitions();
    let marks = async {
        if partitions.is_empty() {
            Ok(BTreeMap::new())
        } else {
            kafka.watermarks(&partitions).await
        }
    };
    let (connectors, offsets, marks) = futures::join!(connectors, offsets, marks);
    tracing::debug!(
        "watch: read {} connector(s), {} group(s)",
        connectors.len(),
        offsets.len()
    );
    Poll {
        connectors: connectors.into_iter().collect(),
        groups: offsets
            .into_iter()
            .map(|(g, r)| {
                let committed = r.map(|offsets| {
                    offsets
                        .into_iter()
                        .map(|o| ((o.topic, o.partition), o.offset))
                        .collect()
                });
                (g, committed.map_err(|e| e.to_string()))
            })
            .collect(),
        log_end: marks
            .map(|m| {
                m.into_iter()
                    .filter_map(|(tp, w)| Some((tp, w.log_end?)))
                    .collect()
            })
            .map_err(|e| e.to_string()),
    }
}

/// A connector's status as the watch keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    state: RunState,
    worker_id: Option<String>,
    trace: Option<String>,
    tasks: Vec<TaskSeen>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct TaskSeen {
    id: i32,
    state: RunState,
    worker_id: Option<String>,
    trace: Option<String>,
}

/// What one status answer says (a FAILED connector or task carries its `trace`).
fn seen(status: &ConnectorStatus) -> Seen {
    Seen {
        state: RunState::parse(&status.connector.state),
        worker_id: status.connector.worker_id.clone(),
        trace: status.connector.trace.clone(),
        tasks: status
            .tasks
            .iter()
            .map(|t| TaskSeen {
                id: t.id,
                state: RunState::parse(&t.state),
                worker_id: t.worker_id.clone(),
                trace: t.trace.clone(),
            })
            .collect(),
    }
}

/// What one read found; an error is the reason that part could not be read.
#[derive(Debug, Clone)]
struct Poll {
    connectors: BTreeMap<String, Result<Seen, String>>,
    /// Each group's committed offsets.
    groups: BTreeMap<String, Result<BTreeMap<TopicPartition, i64>, String>>,
    log_end: Result<BTreeMap<TopicPartition, i64>, String>,
}

/// Keeps the first `max` non-empty lines of a stack trace, and the last `Caused by:` lines
/// below them. `None` for an empty trace.
pub fn trim_trace(text: &str, max: usize) -> Option<Trace> {
    let all: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if all.is_empty() {
        return None;
    }
    let shown = all.len().min(max);
    let causes: Vec<&str> = all[shown..]
        .iter()
        .copied()
        .filter(|l| l.trim_start().starts_with("Caused by:"))
        .collect();
    let caused_by: Vec<String> = causes[causes.len().saturating_sub(CAUSE_LINES)..]
        .iter()
        .map(|l| l.trim_start().to_string())
        .collect();
    Some(Trace {
        lines: all[..shown].iter().map(|l| l.to_string()).collect(),
        omitted: all.len() - shown - caused_by.len(),
        caused_by,
    })
}

/// Where a group stands against its targets at one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Progress {
    moved: usize,
    consumed: i64,
    behind: usize,
    lag: Option<i64>,
}

/// Compares the committed offsets with the targets. The lag is known only when every
/// partition's log-end offset is.
fn progress(
    targets: &BTreeMap<TopicPartition, i64>,
    committed: &BTreeMap<TopicPartition, i64>,
    log_end: Option<&BTreeMap<TopicPartition, i64>>,
) -> Progress {
    let mut p = Progress {
        lag: log_end.map(|_| 0),
        ..Progress::default()
    };
    for (tp, &target) in targets {
        let now = committed.get(tp).copied();
        match now {
            Some(c) if c > target => {
                p.moved += 1;
                p.consumed += c - target;
            }
            Some(c) if c < target => p.behind += 1,
            _ => {}
        }
        let end = log_end.and_then(|m| m.get(tp)).copied();
        p.lag = match (p.lag, end) {
            (Some(sum), Some(end)) => Some(sum + (end - now.unwrap_or(target)).max(0)),
            _ => None,
        };
    }
    p
}

/// What is wrong with a connector that did not fail, at the end: it should be RUNNING, or in
/// the state it had before; its tasks RUNNING, or in the connector's state.
fn settled(name: &str, before: Option<&RunState>, seen: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    if seen.state != RunState::Running && Some(&seen.state) != before {
        out.push(format!(
            "connector {name} is {} at the end of the watch (it was {} before)",
            seen.state,
            before.map_or("absent".to_string(), |b| b.to_string())
        ));
    }
    for t in &seen.tasks {
        if t.state != RunState::Running && t.state != seen.state && t.state != RunState::Failed {
            out.push(format!(
                "connector {name} task {} is {} at the end of the watch",
                t.id, t.state
            ));
        }
    }
    out
}

/// Whether a connector runs as it should for its group to move: RUNNING, every task RUNNING.
fn all_running(seen: &Seen) -> bool {
    seen.state == RunState::Running && seen.tasks.iter().all(|t| t.state == RunState::Running)
}

/// The verdict: a failure outranks everything; then nothing read at all; then anything not
/// making progress.
fn verdict(failed: bool, anything_read: bool, stalled: bool) -> Verdict {
    match (failed, anything_read, stalled) {
        (true, _, _) => Verdict::ConnectorFailed,
        (false, false, _) => Verdict::Unknown,
        (false, true, true) => Verdict::NotMoving,
        (false, true, false) => Verdict::Healthy,
    }
}

/// One line per FAILED part of a connector (itself, then its tasks).
fn failures(name: &str, seen: &Seen) -> Vec<String> {
    let own = (seen.state == RunState::Failed)
        .then(|| failed_line(name, None, seen.worker_id.as_deref(), seen.trace.as_deref()));
    let tasks = seen
        .tasks
        .iter()
        .filter(|t| t.state == RunState::Failed)
        .map(|t| failed_line(name, Some(t.id), t.worker_id.as_deref(), t.trace.as_deref()));
    own.into_iter().chain(tasks).collect()
}

fn failed_line(name: &str, task: Option<i32>, worker: Option<&str>, trace: Option<&str>) -> String {
    let what = match task {
        Some(id) => format!("connector {name} task {id}"),
        None => format!("connector {name}"),
    };
    let on = worker.map(|w| format!(" on {w}")).unwrap_or_default();
    let first = trace
        .and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("(the status carries no trace)");
    format!("{what} FAILED{on}: {first}")
}

/// The lines to tell about a connector between two reads (`before`: the previous read).
fn connector_events(name: &str, before: Option<&Seen>, now: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    let was = before.map(|b| &b.state);
    if was != Some(&now.state) {
        if now.state == RunState::Failed {
            out.push(failed_line(
                name,
                None,
                now.worker_id.as_deref(),
                now.trace.as_deref(),
            ));
        } else if let Some(was) = was {
            out.push(format!("connector {name}: {was} -> {}", now.state));
        }
    }
    for t in &now.tasks {
        let was = before.and_then(|b| b.tasks.iter().find(|x| x.id == t.id).map(|x| &x.state));
        if was == Some(&t.state) {
            continue;
        }
        if t.state == RunState::Failed {
            out.push(failed_line(
                name,
                Some(t.id),
                t.worker_id.as_deref(),
                t.trace.as_deref(),
            ));
        } else if let Some(was) = was {
            out.push(format!(
                "connector {name} task {}: {was} -> {}",
                t.id, t.state
            ));
        }
    }
    out
}

/// Keeps a read error; the line to tell when it is new (not the one the last read gave).
fn note_error(slot: &mut Option<String>, what: &str, error: String) -> Option<String> {
    let line = (slot.as_deref() != Some(error.as_str())).then(|| format!("{what}: {error}"));
    *slot = Some(error);
    line
}

fn any_failed(seen: &Seen) -> bool {
    seen.state == RunState::Failed || seen.tasks.iter().any(|t| t.state == RunState::Failed)
}

#[derive(Debug, Clone, Default)]
struct ConnectorTrack {
    before: Option<RunState>,
    last: Option<Seen>,
    error: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct GroupTrack {
    connector: Option<String>,
    targets: BTreeMap<TopicPartition, i64>,
    last: Option<Progress>,
    error: Option<String>,
    /// Its offsets moved forward from the targets at some read.
    moved: bool,
    /// It had records to consume at some read before it moved.
    lagged: bool,
}

/// Everything seen so far; `observe` takes one read, `finish` makes the report.
#[derive(Debug, Clone, Default)]
struct Tracker {
    connectors: BTreeMap<String, ConnectorTrack>,
    groups: BTreeMap<String, GroupTrack>,
    log_end_error: Option<String>,
    polls: usize,
    anything_read: bool,
}

impl Tracker {
    /// The connectors that exist (or were created again), and the groups with committed targets.
    fn new(plan: &Plan) -> Self {
        let connectors = plan
            .connectors
            .iter()
            .filter(|c| c.state.is_some() || c.recreate)
            .map(|c| {
                let track = ConnectorTrack {
                    before: c.state.as_deref().map(RunState::parse),
                    ..ConnectorTrack::default()
                };
                (c.name.clone(), track)
            })
            .collect();
        let groups = plan
            .groups
            .iter()
            .map(|g| {
                let targets: BTreeMap<TopicPartition, i64> = g
                    .partitions
                    .iter()
                    .filter(|p| p.action.commits())
                    .filter_map(|p| Some(((p.topic.clone(), p.partition), p.target?)))
                    .collect();
                let connector = g.connector.clone().or_else(|| {
                    plan.connectors
                        .iter()
                        .find(|c| c.group_id.as_deref() == Some(g.group_id.as_str()))
                        .map(|c| c.name.clone())
                });
                let track = GroupTrack {
                    connector,
                    targets,
                    ..GroupTrack::default()
                };
                (g.group_id.clone(), track)
            })
            .filter(|(_, t)| !t.targets.is_empty())
            .collect();
        Tracker {
            connectors,
            groups,
            ..Tracker::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.connectors.is_empty() && self.groups.is_empty()
    }

    fn partitions(&self) -> BTreeSet<TopicPartition> {
        self.groups
            .values()
            .flat_map(|g| g.targets.keys().cloned())
            .collect()
    }

    fn failed(&self) -> bool {
        self.connectors
            .values()
            .any(|c| c.last.as_ref().is_some_and(any_failed))
    }

    /// Takes one read; returns the lines to tell.
    fn observe(&mut self, poll: Poll) -> Vec<String> {
        self.polls += 1;
        let mut out = Vec::new();
        let log_end = match poll.log_end {
            Ok(m) => {
                self.log_end_error = None;
                Some(m)
            }
            Err(e) => {
                let what = "cannot read the partitions' log-end offsets";
                out.extend(note_error(&mut self.log_end_error, what, e));
                None
            }
        };
        for (name, read) in poll.connectors {
            let Some(track) = self.connectors.get_mut(&name) else {
                continue;
            };
            match read {
                Ok(now) => {
                    self.anything_read = true;
                    track.error = None;
                    out.extend(connector_events(&name, track.last.as_ref(), &now));
                    track.last = Some(now);
                }
                Err(e) => {
                    let what = format!("connector {name}: cannot read its status");
                    out.extend(note_error(&mut track.error, &what, e));
                }
            }
        }
        for (group_id, read) in poll.groups {
            let Some(track) = self.groups.get_mut(&group_id) else {
                continue;
            };
            let committed = match read {
                Ok(c) => c,
                Err(e) => {
                    let what = format!("group {group_id}: cannot read its committed offsets");
                    out.extend(note_error(&mut track.error, &what, e));
                    continue;
                }
            };
            self.anything_read = true;
            track.error = None;
            let p = progress(&track.targets, &committed, log_end.as_ref());
            if p.moved > 0 && !track.moved {
                track.moved = true;
                out.push(format!(
                    "group {group_id}: offsets moving forward from the targets ({} of {} partition(s), {} record(s) consumed)",
                    p.moved,
                    track.targets.len(),
                    p.consumed
                ));
            }
            if !track.moved && p.lag.is_some_and(|l| l > 0) {
                track.lagged = true;
            }
            track.last = Some(p);
        }
        out
    }

    /// The report, with the verdict from everything seen.
    fn finish(self, elapsed: Duration) -> WatchReport {
        let mut problems = Vec::new();
        let mut stalled = false;
        for (name, c) in &self.connectors {
            if let Some(e) = &c.error {
                problems.push(format!("connector {name}: cannot read its status: {e}"));
            }
            let Some(seen) = &c.last else { continue };
            if any_failed(seen) {
                problems.extend(failures(name, seen));
            } else {
                let unsettled = settled(name, c.before.as_ref(), seen);
                stalled |= !unsettled.is_empty();
                problems.extend(unsettled);
            }
        }
        for (group_id, g) in &self.groups {
            if let Some(e) = &g.error {
                problems.push(format!(
                    "group {group_id}: cannot read its committed offsets: {e}"
                ));
            }
            // A group whose connector is not RUNNING (paused before, or unreadable) is not
            // expected to move.
            let expected = g.connector.as_ref().is_none_or(|c| {
                let seen = self.connectors.get(c).and_then(|c| c.last.as_ref());
                seen.is_some_and(all_running)
            });
            if g.lagged && !g.moved && expected {
                stalled = true;
                problems.push(not_moving(group_id, g, elapsed));
            }
        }
        if let Some(e) = &self.log_end_error {
            problems.push(format!(
                "cannot read the partitions' log-end offsets, so the lag is not known: {e}"
            ));
        }
        let readable = self.anything_read || self.is_empty();
        let verdict = verdict(self.failed(), readable, stalled);
        if verdict == Verdict::Unknown {
            problems.insert(
                0,
                "nothing could be read while watching: the result of the apply is not known beyond its read-back".into(),
            );
        }
        WatchReport {
            verdict,
            duration_s: elapsed.as_secs_f64(),
            polls: self.polls,
            connectors: self
                .connectors
                .iter()
                .map(|(name, c)| connector_watch(name, c))
                .collect(),
            groups: self
                .groups
                .iter()
                .map(|(group_id, g)| group_watch(group_id, g))
                .collect(),
            problems,
        }
    }
}

fn group_watch(group_id: &str, g: &GroupTrack) -> GroupWatch {
    let p = g.last.unwrap_or_default();
    GroupWatch {
        group_id: group_id.to_string(),
        connector: g.connector.clone(),
        partitions: g.targets.len(),
        moved_forward: p.moved,
        consumed: p.consumed,
        lag: p.lag,
        behind_target: p.behind,
    }
}

fn not_moving(group_id: &str, g: &GroupTrack, elapsed: Duration) -> String {
    let lag = g.last.and_then(|p| p.lag).unwrap_or_default();
    let advice = match &g.connector {
        Some(c) => format!(
            "connector {c} is RUNNING, but Kafka Connect commits a sink's offsets only every offset.flush.interval.ms (60 s by default): watch longer than that, or look at the connector's log"
        ),
        None => "check that its consumers are running and committing".to_string(),
    };
    format!(
        "group {group_id}: its committed offsets did not move from the targets in {:.0} s while it had {lag} record(s) to consume; {advice}",
        elapsed.as_secs_f64()
    )
}

fn connector_watch(name: &str, c: &ConnectorTrack) -> ConnectorWatch {
    let trace = |t: &Option<String>| t.as_deref().and_then(|t| trim_trace(t, TRACE_LINES));
    ConnectorWatch {
        name: name.to_string(),
        state_before: c.before.as_ref().map(|b| b.to_string()),
        state: c.last.as_ref().map(|s| s.state.clone()),
        worker_id: c.last.as_ref().and_then(|s| s.worker_id.clone()),
        trace: c.last.as_ref().and_then(|s| trace(&s.trace)),
        tasks: c
            .last
            .iter()
            .flat_map(|s| &s.tasks)
            .map(|t| TaskWatch {
                id: t.id,
                state: t.state.clone(),
                worker_id: t.worker_id.clone(),
                trace: trace(&t.trace),
            })
            .collect(),
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
