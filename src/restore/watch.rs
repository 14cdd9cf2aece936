//! Watching what a reset or restore set going (`--watch DURATION`): for a while after the apply,
//! the states of the plan's connectors and their tasks, the committed offsets of its groups
//! against the targets just committed, and the groups' lag, read every few seconds; then one
//! verdict, as a serializable report.
//!
//! The loop in [`watch`] only reads. Everything it decides (what changed since the last read,
//! whether a group moved forward, how much of a stack trace to keep, the verdict) is a pure
//! function of what was read, tested on its own below.

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
mod tests {
    use super::*;
    use crate::kafka::GroupState;
    use crate::restore::plan::{Action, ConnectorPlan, GroupPlan, PartitionPlan, PlanSummary};

    type Parts<'a> = &'a [(&'a str, i32, i64)];

    fn map(parts: Parts) -> BTreeMap<TopicPartition, i64> {
        parts
            .iter()
            .map(|(t, p, o)| ((t.to_string(), *p), *o))
            .collect()
    }

    fn partition(topic: &str, partition: i32, target: i64, action: Action) -> PartitionPlan {
        PartitionPlan {
            topic: topic.into(),
            partition,
            current: Some(target + 5),
            snapshot_offset: Some(target),
            target: Some(target),
            log_start: Some(0),
            log_end: Some(100),
            reprocess: 5,
            skip: 0,
            action,
            note: None,
            leader_epoch: None,
            metadata: None,
        }
    }

    fn group(id: &str, connector: Option<&str>, parts: Vec<PartitionPlan>) -> GroupPlan {
        GroupPlan {
            group_id: id.into(),
            group_type: Default::default(),
            state: GroupState::Empty,
            members: vec![],
            connector: connector.map(String::from),
            blocked: None,
            warnings: vec![],
            partitions: parts,
        }
    }

    fn connector(name: &str, state: Option<&str>, group_id: Option<&str>) -> ConnectorPlan {
        ConnectorPlan {
            name: name.into(),
            connect_url: "http://connect:8083".into(),
            connector_type: "sink".into(),
            state: state.map(String::from),
            stop_and_resume: true,
            method: "rest-sink".into(),
            group_id: group_id.map(String::from),
            offsets: vec![],
            not_in_snapshot: vec![],
            recreate: false,
            reset_all: false,
            blocked: None,
            problem: None,
        }
    }

    fn plan(groups: Vec<GroupPlan>, connectors: Vec<ConnectorPlan>) -> Plan {
        Plan {
            snapshot_id: "S".into(),
            groups,
            connectors,
            summary: PlanSummary::default(),
            applicable: true,
            blocked: false,
            problems: vec![],
        }
    }

    /// A sink `sink` with group `connect-sink` reset to offset 10 of `t`[0].
    fn sink_plan(state_before: &str) -> Plan {
        plan(
            vec![group(
                "connect-sink",
                Some("sink"),
                vec![partition("t", 0, 10, Action::Reset)],
            )],
            vec![connector("sink", Some(state_before), Some("connect-sink"))],
        )
    }

    /// A plain group `g` reset to offset 10 of `t`[0], and no connector.
    fn group_plan() -> Plan {
        plan(
            vec![group("g", None, vec![partition("t", 0, 10, Action::Reset)])],
            vec![],
        )
    }

    fn status(state: &str, tasks: &[&str]) -> Seen {
        Seen {
            state: RunState::parse(state),
            worker_id: Some("w1:8083".into()),
            trace: None,
            tasks: tasks
                .iter()
                .enumerate()
                .map(|(i, s)| TaskSeen {
                    id: i as i32,
                    state: RunState::parse(s),
                    worker_id: Some("w1:8083".into()),
                    trace: (*s == "FAILED").then(|| {
                        "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler\n\tat a.b(C.java:1)".to_string()
                    }),
                })
                .collect(),
        }
    }

    fn poll(
        connectors: Vec<(&str, Result<Seen, &str>)>,
        groups: Vec<(&str, Result<Parts, &str>)>,
        log_end: Result<Parts, &str>,
    ) -> Poll {
        Poll {
            connectors: connectors
                .into_iter()
                .map(|(n, r)| (n.to_string(), r.map_err(String::from)))
                .collect(),
            groups: groups
                .into_iter()
                .map(|(g, r)| (g.to_string(), r.map(map).map_err(String::from)))
                .collect(),
            log_end: log_end.map(map).map_err(String::from),
        }
    }

    /// A read of the sink: its state and tasks, its committed offset on `t`[0], log-end 20.
    fn sink_read(state: &str, tasks: &[&str], committed: i64) -> Poll {
        poll(
            vec![("sink", Ok(status(state, tasks)))],
            vec![("connect-sink", Ok(&[("t", 0, committed)]))],
            Ok(&[("t", 0, 20)]),
        )
    }

    fn group_read(committed: i64, log_end: i64) -> Poll {
        poll(
            vec![],
            vec![("g", Ok(&[("t", 0, committed)]))],
            Ok(&[("t", 0, log_end)]),
        )
    }

    fn unreadable() -> Poll {
        poll(
            vec![("sink", Err("cannot reach Kafka Connect"))],
            vec![("connect-sink", Err("cannot reach Kafka"))],
            Err("cannot reach Kafka"),
        )
    }

    fn run(plan: &Plan, polls: Vec<Poll>) -> (WatchReport, Vec<String>) {
        let mut tracker = Tracker::new(plan);
        let mut events = Vec::new();
        for p in polls {
            events.extend(tracker.observe(p));
            if tracker.failed() {
                break;
            }
        }
        (tracker.finish(Duration::from_secs(30)), events)
    }

    #[test]
    fn verdict_follows_the_sequence_of_reads() {
        struct Case {
            name: &'static str,
            plan: Plan,
            polls: Vec<Poll>,
            verdict: Verdict,
            /// A problem line containing this, or no problem at all when empty.
            problem: &'static str,
        }
        let cases = vec![
            Case {
                name: "sink running and consuming",
                plan: sink_plan("RUNNING"),
                polls: vec![
                    sink_read("RUNNING", &["RUNNING"], 10),
                    sink_read("RUNNING", &["RUNNING"], 15),
                ],
                verdict: Verdict::Healthy,
                problem: "",
            },
            Case {
                name: "caught up from the start: nothing to consume",
                plan: group_plan(),
                polls: vec![group_read(10, 10), group_read(10, 10)],
                verdict: Verdict::Healthy,
                problem: "",
            },
            Case {
                name: "a task fails on the second read",
                plan: sink_plan("RUNNING"),
                polls: vec![
                    sink_read("RUNNING", &["RUNNING"], 10),
                    sink_read("RUNNING", &["FAILED"], 10),
                    sink_read("RUNNING", &["RUNNING"], 20),
                ],
                verdict: Verdict::ConnectorFailed,
                problem:
                    "task 0 FAILED on w1:8083: org.apache.kafka.connect.errors.ConnectException",
            },
            Case {
                name: "the connector itself fails",
                plan: sink_plan("RUNNING"),
                polls: vec![sink_read("FAILED", &[], 10)],
                verdict: Verdict::ConnectorFailed,
                problem: "connector sink FAILED",
            },
            Case {
                name: "running with lag, offsets never move",
                plan: sink_plan("RUNNING"),
                polls: vec![
                    sink_read("RUNNING", &["RUNNING"], 10),
                    sink_read("RUNNING", &["RUNNING"], 10),
                ],
                verdict: Verdict::NotMoving,
                problem: "offset.flush.interval.ms",
            },
            Case {
                name: "paused before and after: not moving is expected",
                plan: sink_plan("PAUSED"),
                polls: vec![sink_read("PAUSED", &["PAUSED"], 10)],
                verdict: Verdict::Healthy,
                problem: "",
            },
            Case {
                name: "stopped before and after, no tasks",
                plan: sink_plan("STOPPED"),
                polls: vec![sink_read("STOPPED", &[], 10)],
                verdict: Verdict::Healthy,
                problem: "",
            },
            Case {
                name: "running before, unassigned at the end",
                plan: sink_plan("RUNNING"),
                polls: vec![sink_read("UNASSIGNED", &[], 10)],
                verdict: Verdict::NotMoving,
                problem: "is UNASSIGNED at the end of the watch (it was RUNNING before)",
            },
            Case {
                name: "a task still restarting at the end",
                plan: sink_plan("RUNNING"),
                polls: vec![
                    sink_read("RUNNING", &["RUNNING"], 12),
                    sink_read("RUNNING", &["RESTARTING"], 14),
                ],
                verdict: Verdict::NotMoving,
                problem: "task 0 is RESTARTING",
            },
            Case {
                name: "plain group with lag whose consumers never commit",
                plan: group_plan(),
                polls: vec![group_read(10, 50), group_read(10, 60)],
                verdict: Verdict::NotMoving,
                problem: "check that its consumers are running",
            },
            Case {
                name: "moved once, then caught up: healthy",
                plan: group_plan(),
                polls: vec![group_read(10, 50), group_read(50, 50)],
                verdict: Verdict::Healthy,
                problem: "",
            },
            Case {
                name: "nothing readable",
                plan: sink_plan("RUNNING"),
                polls: vec![unreadable(), unreadable()],
                verdict: Verdict::Unknown,
                problem: "nothing could be read",
            },
            Case {
                name: "connector unreadable at the end, group consuming",
                plan: sink_plan("RUNNING"),
                polls: vec![
                    sink_read("RUNNING", &["RUNNING"], 15),
                    poll(
                        vec![("sink", Err("HTTP 500"))],
                        vec![("connect-sink", Ok(&[("t", 0, 18)]))],
                        Ok(&[("t", 0, 20)]),
                    ),
                ],
                verdict: Verdict::Healthy,
                problem: "connector sink: cannot read its status: HTTP 500",
            },
            Case {
                name: "lag unknown: no judgement on the offsets",
                plan: group_plan(),
                polls: vec![poll(
                    vec![],
                    vec![("g", Ok(&[("t", 0, 10)]))],
                    Err("timed out"),
                )],
                verdict: Verdict::Healthy,
                problem: "the lag is not known",
            },
        ];
        for case in cases {
            let (report, _) = run(&case.plan, case.polls);
            assert_eq!(report.verdict, case.verdict, "{}", case.name);
            if case.problem.is_empty() {
                assert!(
                    report.problems.is_empty(),
                    "{}: {:?}",
                    case.name,
                    report.problems
                );
            } else {
                assert!(
                    report.problems.iter().any(|p| p.contains(case.problem)),
                    "{}: {:?}",
                    case.name,
                    report.problems
                );
            }
        }
    }

    #[test]
    fn a_failure_outranks_everything_then_nothing_read() {
        #[rustfmt::skip]
        let cases = [
            (true, true, true, Verdict::ConnectorFailed),
            (true, false, false, Verdict::ConnectorFailed),
            (false, false, true, Verdict::Unknown),
            (false, true, true, Verdict::NotMoving),
            (false, true, false, Verdict::Healthy),
        ];
        for (failed, read, stalled, want) in cases {
            assert_eq!(
                verdict(failed, read, stalled),
                want,
                "{failed} {read} {stalled}"
            );
        }
        let empty = Tracker::new(&plan(vec![], vec![])).finish(Duration::ZERO);
        assert_eq!((empty.verdict, empty.polls), (Verdict::Healthy, 0));
    }

    #[test]
    fn a_failure_ends_the_watch_early() {
        let mut tracker = Tracker::new(&sink_plan("RUNNING"));
        tracker.observe(sink_read("RUNNING", &["RUNNING"], 10));
        assert!(!tracker.failed());
        tracker.observe(sink_read("RUNNING", &["RUNNING", "FAILED"], 10));
        assert!(tracker.failed());
    }

    #[test]
    fn exit_code_is_16_only_for_a_failure() {
        for (verdict, code) in [
            (Verdict::Healthy, 0),
            (Verdict::NotMoving, 0),
            (Verdict::Unknown, 0),
            (Verdict::ConnectorFailed, 16),
        ] {
            let report = WatchReport {
                verdict,
                duration_s: 1.0,
                polls: 1,
                connectors: vec![],
                groups: vec![],
                problems: vec![],
            };
            assert_eq!(report.exit_code(), code, "{verdict}");
        }
    }

    #[test]
    fn events_tell_changes_failures_and_moves_once() {
        let (_, events) = run(
            &sink_plan("RUNNING"),
            vec![
                sink_read("RUNNING", &["UNASSIGNED"], 10),
                sink_read("RUNNING", &["RUNNING"], 10),
                sink_read("RUNNING", &["RUNNING"], 12),
                sink_read("RUNNING", &["RUNNING"], 14),
                unreadable(),
                unreadable(),
                sink_read("RUNNING", &["FAILED"], 14),
            ],
        );
        assert_eq!(
            events,
            vec![
                "connector sink task 0: UNASSIGNED -> RUNNING",
                "group connect-sink: offsets moving forward from the targets (1 of 1 partition(s), 2 record(s) consumed)",
                "cannot read the partitions' log-end offsets: cannot reach Kafka",
                "connector sink: cannot read its status: cannot reach Kafka Connect",
                "group connect-sink: cannot read its committed offsets: cannot reach Kafka",
                "connector sink task 0 FAILED on w1:8083: org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler",
            ]
        );
    }

    #[test]
    fn a_task_failed_at_the_first_read_is_told() {
        let (_, events) = run(
            &sink_plan("RUNNING"),
            vec![sink_read("RUNNING", &["RUNNING", "FAILED"], 10)],
        );
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(events[0].starts_with("connector sink task 1 FAILED"));
    }

    #[test]
    fn only_committed_targets_and_existing_connectors_are_watched() {
        let p = plan(
            vec![
                group(
                    "g",
                    None,
                    vec![
                        partition("t", 0, 10, Action::Reset),
                        partition("t", 1, 10, Action::NotInSnapshot),
                        partition("t", 2, 10, Action::OutOfRange),
                        partition("u", 0, 3, Action::NoChange),
                    ],
                ),
                group("nothing", None, vec![partition("t", 0, 1, Action::Skipped)]),
            ],
            vec![
                connector("gone", None, None),
                connector("live", Some("RUNNING"), Some("g")),
            ],
        );
        let tracker = Tracker::new(&p);
        assert_eq!(tracker.groups.keys().collect::<Vec<_>>(), vec!["g"]);
        assert_eq!(
            tracker.groups["g"].targets,
            map(&[("t", 0, 10), ("u", 0, 3)])
        );
        assert_eq!(tracker.groups["g"].connector.as_deref(), Some("live"));
        assert_eq!(tracker.connectors.keys().collect::<Vec<_>>(), vec!["live"]);
        assert!(Tracker::new(&plan(vec![], vec![])).is_empty());
    }

    #[test]
    fn progress_against_the_targets() {
        let targets = map(&[("t", 0, 10), ("t", 1, 10), ("t", 2, 10)]);
        #[rustfmt::skip]
        let cases: Vec<(&str, Parts, Option<Parts>, Progress)> = vec![
            ("nothing committed yet", &[], Some(&[("t", 0, 10), ("t", 1, 12), ("t", 2, 10)]),
             Progress { moved: 0, consumed: 0, behind: 0, lag: Some(2) }),
            ("one moved", &[("t", 0, 15), ("t", 1, 10), ("t", 2, 10)],
             Some(&[("t", 0, 20), ("t", 1, 10), ("t", 2, 10)]),
             Progress { moved: 1, consumed: 5, behind: 0, lag: Some(5) }),
            ("one moved back", &[("t", 0, 4), ("t", 1, 11), ("t", 2, 10)],
             Some(&[("t", 0, 20), ("t", 1, 11), ("t", 2, 10)]),
             Progress { moved: 1, consumed: 1, behind: 1, lag: Some(16) }),
            ("log-end unreadable", &[("t", 0, 11)], None,
             Progress { moved: 1, consumed: 1, behind: 0, lag: None }),
            ("one log-end missing", &[("t", 0, 11)], Some(&[("t", 0, 11), ("t", 1, 10)]),
             Progress { moved: 1, consumed: 1, behind: 0, lag: None }),
            ("log-end below committed (truncated)", &[("t", 0, 30), ("t", 1, 10), ("t", 2, 10)],
             Some(&[("t", 0, 20), ("t", 1, 10), ("t", 2, 10)]),
             Progress { moved: 1, consumed: 20, behind: 0, lag: Some(0) }),
        ];
        for (name, committed, log_end, want) in cases {
            let log_end = log_end.map(map);
            assert_eq!(
                progress(&targets, &map(committed), log_end.as_ref()),
                want,
                "{name}"
            );
        }
    }

    /// Lines kept, the `Caused by:` lines, lines omitted; `None` for no trace.
    type TraceShape<'a> = Option<(usize, Vec<&'a str>, usize)>;

    #[test]
    fn traces_keep_the_first_lines_and_the_root_causes() {
        let long: String = (0..30)
            .map(|i| format!("\tat frame{i}(X.java:{i})\n"))
            .collect();
        let with_causes = format!(
            "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded\n{long}Caused by: org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed\n\tat y\nCaused by: org.apache.kafka.common.errors.SerializationException: Unrecognized token 'poison'\n\t... 17 more\n"
        );
        #[rustfmt::skip]
        let cases: Vec<(&str, &str, usize, TraceShape)> = vec![
            ("empty", "", 10, None),
            ("blank lines only", " \n\t\n", 10, None),
            ("short, kept whole", "E: boom\n\tat a\n\n\tat b  \n", 10, Some((3, vec![], 0))),
            ("long without causes", &long, 10, Some((10, vec![], 20))),
            ("causes below the first lines", &with_causes, 10, Some((10, vec![
                "Caused by: org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed",
                "Caused by: org.apache.kafka.common.errors.SerializationException: Unrecognized token 'poison'",
            ], 23))),
        ];
        for (name, text, max, want) in cases {
            let got = trim_trace(text, max).map(|t| (t.lines.len(), t.caused_by, t.omitted));
            let want = want.map(|(n, c, o)| (n, c.into_iter().map(String::from).collect(), o));
            assert_eq!(got, want, "{name}");
        }
        let t = trim_trace("E: boom\n\tat a  \n", 10).unwrap();
        assert_eq!(t.lines, vec!["E: boom", "\tat a"]);
        let many: String = (0..8).map(|i| format!("x\nCaused by: c{i}\n")).collect();
        let t = trim_trace(&many, 1).unwrap();
        assert_eq!(t.caused_by.len(), CAUSE_LINES);
        assert_eq!(
            t.caused_by.last().map(String::as_str),
            Some("Caused by: c7")
        );
    }

    #[test]
    fn settled_states() {
        let running = RunState::Running;
        let paused = RunState::Paused;
        #[rustfmt::skip]
        let cases: Vec<(Option<&RunState>, Seen, usize)> = vec![
            (Some(&running), status("RUNNING", &["RUNNING", "RUNNING"]), 0),
            (Some(&paused), status("PAUSED", &["PAUSED"]), 0),
            (Some(&paused), status("RUNNING", &["RUNNING"]), 0),
            (Some(&running), status("PAUSED", &["PAUSED"]), 1),
            (Some(&running), status("RUNNING", &["UNASSIGNED", "RUNNING"]), 1),
            (None, status("UNASSIGNED", &["UNASSIGNED"]), 1),
            (Some(&running), status("RUNNING", &[]), 0),
        ];
        for (before, seen, problems) in cases {
            assert_eq!(
                settled("c", before, &seen).len(),
                problems,
                "{before:?} {seen:?}"
            );
        }
    }

    #[test]
    fn states_parse_and_serialize_as_connect_names() {
        for name in [
            "RUNNING",
            "PAUSED",
            "STOPPED",
            "FAILED",
            "UNASSIGNED",
            "RESTARTING",
            "NEW",
        ] {
            assert_eq!(RunState::parse(name).name(), name);
        }
        assert_eq!(RunState::parse("NEW"), RunState::Other("NEW".into()));
    }

    #[test]
    fn report_serializes_with_stable_names() {
        let mut tracker = Tracker::new(&sink_plan("RUNNING"));
        tracker.observe(sink_read("RUNNING", &["FAILED"], 12));
        let report = tracker.finish(Duration::from_millis(2500));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["verdict"], "connector-failed");
        assert_eq!(json["duration_s"], 2.5);
        assert_eq!(json["connectors"][0]["state"], "RUNNING");
        assert_eq!(json["connectors"][0]["state_before"], "RUNNING");
        let task = &json["connectors"][0]["tasks"][0];
        assert_eq!(task["state"], "FAILED");
        assert_eq!(
            task["trace"]["lines"][0],
            "org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler"
        );
        let group = &json["groups"][0];
        assert_eq!(group["group_id"], "connect-sink");
        assert_eq!(group["moved_forward"], 1);
        assert_eq!(group["consumed"], 2);
        assert_eq!(group["lag"], 8);
        assert!(group.get("behind_target").is_none());
        assert_eq!(report.exit_code(), 16);
    }

    #[test]
    fn status_answers_become_states() {
        let answer: ConnectorStatus = serde_json::from_value(serde_json::json!({
            "name": "sink",
            "connector": {"state": "RUNNING", "worker_id": "w1:8083"},
            "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w1:8083", "trace": "E: boom\n\tat a"}],
            "type": "sink"
        }))
        .unwrap();
        let s = seen(&answer);
        assert_eq!(s.state, RunState::Running);
        assert_eq!(s.tasks[0].state, RunState::Failed);
        assert_eq!(s.tasks[0].worker_id.as_deref(), Some("w1:8083"));
    }
}
