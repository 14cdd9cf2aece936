//! `restore` as library calls: the request a reviewed plan file makes, the snapshot chosen and
//! verified (and replayed to an instant with `--at`), the plan made against the cluster, and
//! the plan file written. [`super::apply`] executes the plan.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::Utc;

use super::options::MirrorArgs;
use crate::audit::Facts;
use crate::connect::ConnectClient;
use crate::error::{Error, Result};
use crate::kafka::{KafkaClient, KafkaSettings};
use crate::restore::plan::{GroupPlan, Recreate};
use crate::restore::review::{PlanBody, PlanFile, PlanRequest};
use crate::restore::{self, Choice, Eligible, PlanOptions, Prepared, RestoreRequest};
use crate::snapshot::secrets::Identities;
use crate::snapshot::SnapshotKind;
use crate::spool::Spool;
use crate::store::Store;
use crate::timeutil::parse_time;
use chrono::DateTime;
use clap::Args;
use std::path::PathBuf;

/// A plan file read as a stream: the file without its groups, and the groups.
pub type Reviewed = (PlanFile, Spool<GroupPlan>);

/// How an execution runs: from the command line, also when the plan comes from a file.
pub struct RunSettings {
    /// Take an undo snapshot before the first change.
    pub undo: bool,
    pub wait_timeout: Duration,
    pub settle: Duration,
    pub commit_concurrency: usize,
    pub batch_partitions: usize,
    pub refuse_moved: bool,
    pub identities: Option<Identities>,
}

/// The request of `--from-plan`: the one the plan was made with; only the execution settings
/// come from the command line.
pub fn reviewed_request((file, groups): Reviewed, run: RunSettings) -> RestoreRequest {
    let r = file.body.request.clone();
    RestoreRequest {
        choice: Choice::Id(file.body.snapshot_id.clone()),
        at: r.at,
        eligible: Eligible {
            include_partial: r.allow_partial,
            ..Default::default()
        },
        groups: r.groups,
        connectors: r.connectors,
        topics: r.topics,
        partitions: r.partitions,
        plan: PlanOptions {
            on_out_of_range: r.on_out_of_range,
            skip_missing: r.skip_missing,
            allow_recreated_topics: r.allow_recreated_topics,
            stop_connectors: r.stop_connectors,
            // A plan file holds no secrets: a connector with redacted config is refused.
            recreate: r.recreate_connectors.then(|| Recreate {
                supplied_keys: Default::default(),
                leave_stopped: r.leave_stopped,
                ..Default::default()
            }),
            ..Default::default()
        },
        allow_other_cluster: r.allow_other_cluster,
        by_timestamp: r.by_timestamp,
        mirror: r.mirror,
        undo: run.undo,
        wait_timeout: run.wait_timeout,
        settle: run.settle,
        commit_concurrency: run.commit_concurrency,
        batch_partitions: run.batch_partitions,
        reviewed: Some(file),
        reviewed_groups: Some(groups),
        connector_config: Default::default(),
        undo_kind: SnapshotKind::Undo,
        undo_tags: BTreeMap::new(),
        relative_targets: false,
        refuse_moved: run.refuse_moved,
        identities: run.identities,
    }
}

/// The request options as a plan file records them.
pub fn plan_request(req: &RestoreRequest) -> PlanRequest {
    PlanRequest {
        groups: req.groups.clone(),
        connectors: req.connectors.clone(),
        topics: req.topics.clone(),
        partitions: req.partitions.clone(),
        on_out_of_range: req.plan.on_out_of_range,
        skip_missing: req.plan.skip_missing,
        allow_recreated_topics: req.plan.allow_recreated_topics,
        recreate_connectors: req.plan.recreate.is_some(),
        leave_stopped: req.plan.recreate.as_ref().is_some_and(|r| r.leave_stopped),
        stop_connectors: req.plan.stop_connectors,
        by_timestamp: req.by_timestamp,
        allow_other_cluster: req.allow_other_cluster,
        allow_partial: req.eligible.include_partial,
        mirror: req.mirror.clone(),
        at: req.at,
    }
}

/// Where a restore is planned: the store its snapshot comes from, and the cluster (with its
/// Connect clusters) whose offsets it changes.
pub struct Place<'a> {
    pub store: &'a Store,
    pub settings: KafkaSettings,
    pub clients: &'a [ConnectClient],
    /// `--rehearse-on`: the cluster is a staging cluster, never the one the snapshot was taken on.
    pub rehearsal: bool,
}

/// A restore planned against the cluster.
pub struct Planned {
    pub kafka: KafkaClient,
    pub prepared: Prepared,
}

/// Chooses and verifies the snapshot (`--at`: replays the archive onto it), then plans the
/// restore against the cluster. `at_given`: `--at` was on the command line, so a missing
/// snapshot is the archive's missing base. `phase` follows the step reached, for the error
/// document of `--output json`.
pub async fn plan(
    place: Place<'_>,
    req: &RestoreRequest,
    at_given: bool,
    phase: &mut &'static str,
    facts: &mut Facts,
) -> Result<Planned> {
    *phase = "choose";
    let store = place.store;
    let mut verified = restore::open(store, req).await.map_err(|e| {
        if at_given {
            crate::log::at::no_base(e)
        } else {
            e
        }
    })?;
    crate::noteln!("{}, verified", verified.chosen.announce(Utc::now()));
    let snapshot_id = verified.chosen.manifest.meta.id.clone();
    facts.subject = facts.plan_sha256.clone().or(Some(snapshot_id.clone()));
    facts.snapshot_ids.push(snapshot_id);
    if let Some(at) = req.at {
        let because = restore::at::apply(store, &mut verified, req, at).await?;
        crate::noteln!("{because}");
        verified.chosen.because = format!("{}; {because}", verified.chosen.because);
    }
    *phase = "plan";
    let kafka = KafkaClient::connect(place.settings).await?;
    crate::progress::stage("planning the restore", 0);
    if place.rehearsal && verified.manifest.meta.cluster_id == kafka.cluster_id() {
        return Err(Error::usage(format!(
            "--rehearse-on reaches cluster {}, the cluster the snapshot was taken on: a rehearsal is for a staging cluster",
            kafka.cluster_id()
        )));
    }
    let prepared = restore::prepare(verified, &kafka, place.clients, req).await?;
    facts.groups = prepared.targets.ledger.group_changes()?;
    if !prepared.targets.moved.is_empty() {
        crate::noteln!(
            "{} partition(s) moved since the plan was reviewed; the targets are unchanged",
            prepared.targets.moved.len()
        );
    }
    Ok(Planned { kafka, prepared })
}

impl Planned {
    /// Writes `--plan-file`: the plan, the request it was made with, and (with a signing key)
    /// the author's signature.
    pub fn write_plan_file(
        &self,
        path: &Path,
        req: &RestoreRequest,
        keys: &crate::sign::Keys,
    ) -> Result<()> {
        let ledger = &self.prepared.targets.ledger;
        let body = PlanBody::made_now(
            self.kafka.cluster_id(),
            self.kafka.bootstrap(),
            plan_request(req),
            ledger.head.clone(),
            None,
        );
        PlanFile::write_streamed(path, body, &mut ledger.groups()?, Vec::new(), keys.signer())?;
        Ok(())
    }
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Snapshot id, or a unique prefix of one (any kind: this is how an undo snapshot is
    /// restored).
    #[arg(required_unless_present_any = ["latest", "before", "at", "from_plan"], conflicts_with_all = ["latest", "before"])]
    pub id: Option<String>,
    /// Use the newest complete snapshot-kind snapshot that holds the selected groups and
    /// connectors (undo and pre-reset snapshots only with --include-undo, --include-pre-reset).
    #[arg(help_heading = "Snapshot", long, conflicts_with = "before")]
    pub latest: bool,
    /// Use the newest complete snapshot-kind snapshot created at or before TIME (RFC 3339, a
    /// date, or a duration such as 2h meaning two hours ago): the committed positions the groups
    /// had then. (`reset --to-datetime TIME` is another thing: the first record whose timestamp
    /// is at or after TIME.)
    #[arg(help_heading = "Snapshot", long, value_name = "TIME")]
    pub before: Option<String>,
    /// The committed offsets exactly as they were at TIME (RFC 3339 with milliseconds, e.g.
    /// 2026-12-03T10:03:17.250Z, or a duration such as 15m ago): the newest snapshot before TIME
    /// plus every commit the commit-log archive (`follow`) holds up to TIME. A group or
    /// connector created after that snapshot, which it would have captured (--all-groups,
    /// --all-connectors, a matching pattern), is replayed from no offsets (a connector's config
    /// comes from the oldest later snapshot that has it); before the first snapshot the base is
    /// the log itself, when the archive begins at its start (offset 0). Refused (exit 7) when
    /// the archive does not cover TIME; a gap is named with its bounds. With --plan-file, the
    /// reviewed plan is replayed at the same instant by --from-plan. (`reset --to-datetime TIME`
    /// is another thing: the first record whose timestamp is at or after TIME.)
    #[arg(help_heading = "Snapshot", long, value_name = "TIME", conflicts_with_all = ["id", "latest", "before"])]
    pub at: Option<String>,
    /// Let --latest and --before choose undo snapshots (written by earlier restores) too.
    #[arg(help_heading = "Snapshot", long)]
    pub include_undo: bool,
    /// Let --latest and --before choose pre-reset snapshots (written by `reset` before it
    /// changed anything) too.
    #[arg(help_heading = "Snapshot", long)]
    pub include_pre_reset: bool,
    /// Accept a snapshot marked partial (written with snapshot --allow-partial).
    #[arg(help_heading = "Snapshot", long)]
    pub allow_partial: bool,
    /// Apply exactly the plan in FILE (written by --plan-file): its checksum, snapshot and
    /// cluster are checked, and nothing is applied if the plan computed now differs.
    #[arg(help_heading = "Snapshot", long, value_name = "FILE", conflicts_with_all = ["id", "latest", "before", "at", "include_undo", "include_pre_reset", "allow_partial", "groups", "connectors", "topics", "partitions", "on_out_of_range", "skip_missing", "allow_recreated_topics", "recreate_connectors", "connector_config_overrides", "stop_connectors", "allow_other_cluster", "by_timestamp", "plan_file", "topic_map", "replication_policy", "translate", "checkpoints_topic", "offset_syncs_topic", "rehearse_on"])]
    pub from_plan: Option<PathBuf>,
    /// With --from-plan: refuse (exit 11, nothing changed) when any committed offset moved since
    /// the plan was made, even where its target stays the same; the plan is applied only to the
    /// state that was reviewed.
    #[arg(help_heading = "Snapshot", long, requires = "from_plan")]
    pub refuse_moved: bool,
    /// With --from-plan: apply it only with N valid approvals (`offset-vault approve`) by
    /// trusted keys other than the plan author's; otherwise exit 17 and change nothing.
    #[arg(
        help_heading = "Snapshot",
        long,
        value_name = "N",
        requires = "from_plan",
        default_value_t = 0
    )]
    pub require_approvals: usize,
    /// Restore only this group (repeatable). Default: everything in the snapshot.
    #[arg(help_heading = "Selection", long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Restore this connector (repeatable): its sink group, or its source offsets.
    #[arg(help_heading = "Selection", long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Only partitions of this topic (repeatable).
    #[arg(help_heading = "Selection", long = "topic", value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// Only this partition number (repeatable).
    #[arg(help_heading = "Selection", long = "partition", value_name = "N")]
    pub partitions: Vec<i32>,
    /// Apply the plan. Without it, the plan is printed and nothing changes.
    #[arg(help_heading = "Safety", long)]
    pub execute: bool,
    /// What to do with a target outside the live [log-start, log-end] range.
    #[arg(help_heading = "Safety", long, value_enum, default_value_t)]
    pub on_out_of_range: crate::restore::OutOfRange,
    /// Leave out partitions whose topic or partition no longer exists instead of failing.
    #[arg(help_heading = "Safety", long)]
    pub skip_missing: bool,
    /// Apply the snapshot's offsets to a topic that was deleted and created again since (its
    /// id differs), as they are. Without it such partitions fail the plan; --by-timestamp
    /// translates them instead.
    #[arg(help_heading = "Safety", long)]
    pub allow_recreated_topics: bool,
    /// Stop connectors whose offsets change (PUT /connectors/NAME/stop), and return them to
    /// their earlier state afterwards, also when the restore fails.
    #[arg(help_heading = "Safety", long)]
    pub stop_connectors: bool,
    /// Create connectors of the snapshot that no longer exist: from the snapshot's config,
    /// STOPPED (Kafka Connect 3.7+), then set their offsets and resume them.
    #[arg(help_heading = "Safety", long)]
    pub recreate_connectors: bool,
    /// With --recreate-connectors: leave the recreated connectors STOPPED.
    #[arg(help_heading = "Safety", long, requires = "recreate_connectors")]
    pub leave_stopped: bool,
    /// A config value for a recreated connector, KEY=VALUE (repeatable): needed for every value
    /// that was redacted in the snapshot; replaces the snapshot's value.
    #[arg(
        help_heading = "Safety",
        long = "connector-config-override",
        value_name = "KEY=VALUE"
    )]
    pub connector_config_overrides: Vec<String>,
    /// With --recreate-connectors: an age identity file (AGE-SECRET-KEY-1... lines, as
    /// `age-keygen -o FILE` writes them) that opens the snapshot's encrypted connector secrets
    /// (snapshot --encrypt-to), so connectors are created again with their secrets. The
    /// decrypted configs must match the snapshot's redacted ones; a key that is not a recipient,
    /// or a changed file, stops the restore before anything changes. Context key: identity.
    #[arg(
        help_heading = "Safety",
        long,
        value_name = "FILE",
        env = "OFFSET_VAULT_IDENTITY"
    )]
    pub identity: Option<PathBuf>,
    /// Restore even though the snapshot was taken on another Kafka cluster: topics are mapped
    /// (--topic-map, --replication-policy) and offsets translated (--translate, default auto).
    #[arg(help_heading = "Safety", long)]
    pub allow_other_cluster: bool,
    /// Translate targets by the recorded last-record timestamps (snapshots taken with
    /// --with-timestamps), for a recreated topic; onto another cluster it is --translate
    /// timestamp.
    #[arg(help_heading = "Safety", long)]
    pub by_timestamp: bool,
    #[command(flatten)]
    pub mirror: MirrorArgs,
    /// Do not take an undo snapshot before changing offsets.
    #[arg(help_heading = "Safety", long)]
    pub no_undo: bool,
    /// Also write the plan to FILE (versioned JSON with a checksum), to review and later apply
    /// with --from-plan FILE --execute.
    #[arg(help_heading = "Safety", long, value_name = "FILE")]
    pub plan_file: Option<PathBuf>,
    /// Bound on waiting for a connector to stop and its group to empty.
    #[arg(help_heading = "Safety", long, default_value = "2m", value_parser = crate::config::parse_duration)]
    pub wait_timeout: Duration,
    /// After the read-back, wait this long and read the offsets again to catch anything that
    /// still commits for the groups (0 turns it off).
    #[arg(help_heading = "Safety", long, default_value = "3s", value_parser = crate::config::parse_duration)]
    pub settle: Duration,
    /// How many groups' offset commits are in flight at once (each commit carries one group).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub commit_concurrency: u16,
    /// Plan, apply and read back at most this many partitions at a time (whole groups; a larger
    /// group is a batch of its own). Memory grows with it, not with the snapshot. Every batch
    /// is planned and checked before the first offset changes.
    #[arg(long, value_name = "PARTITIONS", default_value_t = crate::restore::ledger::DEFAULT_BATCH_PARTITIONS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_partitions: u64,
    /// After an executed restore, follow the connectors' and tasks' states, the groups'
    /// committed offsets and their lag for DURATION (e.g. 2m), and end with a verdict; a
    /// connector or task that fails meanwhile exits 16 (with the first lines of its trace).
    #[arg(help_heading = "Watch", long, value_name = "DURATION", value_parser = crate::config::parse_duration, requires = "execute")]
    pub watch: Option<Duration>,
}

/// Reads and checks `--from-plan`: before anything else, so a bad file costs no connection.
pub fn read_plan_file(args: &RestoreArgs) -> Result<Option<Reviewed>> {
    args.from_plan
        .as_deref()
        .map(|path| PlanFile::read_streamed(path, Some(false)))
        .transpose()
}

/// The request: a reviewed plan file's, with only the execution settings from the flags, or
/// the flags'.
pub fn request(args: &RestoreArgs, reviewed: Option<Reviewed>) -> Result<RestoreRequest> {
    match reviewed {
        // Only the execution settings come from the command line.
        Some(file) => Ok(reviewed_request(file, run_settings(args)?)),
        None => args_request(args),
    }
}

/// How the execution runs.
pub fn run_settings(args: &RestoreArgs) -> Result<RunSettings> {
    Ok(RunSettings {
        undo: !args.no_undo,
        wait_timeout: args.wait_timeout,
        settle: args.settle,
        commit_concurrency: args.commit_concurrency.into(),
        batch_partitions: usize::try_from(args.batch_partitions).unwrap_or(usize::MAX),
        refuse_moved: args.refuse_moved,
        identities: identities(args)?,
    })
}

/// Which snapshot: an id, `--latest`, or the newest before a time (`--before`, `--at`).
fn choice(args: &RestoreArgs, now: DateTime<Utc>) -> Result<Choice> {
    Ok(match (&args.id, args.latest, &args.before, &args.at) {
        (Some(id), _, _, _) => Choice::Id(id.clone()),
        (None, true, _, _) => Choice::Latest,
        (None, false, Some(t), _) | (None, false, None, Some(t)) => {
            Choice::Before(parse_time(t, now)?)
        }
        (None, false, None, None) => return Err(Error::usage(
            "say which snapshot: an id, --latest, --before TIME, --at TIME, or --from-plan FILE",
        )),
    })
}

/// `--connector-config-override KEY=VALUE`: only for connectors created again.
fn overrides(args: &RestoreArgs) -> Result<std::collections::BTreeMap<String, String>> {
    let overrides = crate::config::parse_tags(&args.connector_config_overrides).map_err(|e| {
        Error::usage(
            e.to_string()
                .replace("--tag", "--connector-config-override"),
        )
    })?;
    if !overrides.is_empty() && !args.recreate_connectors {
        return Err(Error::usage(
            "--connector-config-override is only for connectors created again: add --recreate-connectors",
        ));
    }
    Ok(overrides)
}

/// The request the command line makes.
fn args_request(args: &RestoreArgs) -> Result<RestoreRequest> {
    let choice = choice(args, Utc::now())?;
    if !args.partitions.is_empty() && args.topics.is_empty() {
        return Err(Error::usage("--partition needs --topic"));
    }
    let overrides = overrides(args)?;
    let mirror = args.mirror.options();
    mirror.check()?;
    let rehearsal = args.mirror.rehearse_on.is_some();
    if !mirror.is_empty() && !args.allow_other_cluster && !rehearsal {
        return Err(Error::usage(
            "--topic-map, --replication-policy and --translate carry offsets to another cluster: add --allow-other-cluster (or --rehearse-on STAGING)",
        ));
    }
    let at = match (&args.at, &choice) {
        (Some(_), Choice::Before(t)) => Some(*t),
        _ => None,
    };
    let run = run_settings(args)?;
    Ok(RestoreRequest {
        choice,
        at,
        eligible: Eligible {
            include_undo: args.include_undo,
            include_pre_reset: args.include_pre_reset,
            include_partial: args.allow_partial,
            ..Default::default()
        },
        groups: args.groups.clone(),
        connectors: args.connectors.clone(),
        topics: args.topics.clone(),
        partitions: args.partitions.clone(),
        plan: PlanOptions {
            on_out_of_range: args.on_out_of_range,
            skip_missing: args.skip_missing,
            allow_recreated_topics: args.allow_recreated_topics,
            stop_connectors: args.stop_connectors,
            recreate: args.recreate_connectors.then(|| Recreate {
                supplied_keys: overrides.keys().cloned().collect(),
                leave_stopped: args.leave_stopped,
                ..Default::default()
            }),
            ..Default::default()
        },
        allow_other_cluster: args.allow_other_cluster || rehearsal,
        by_timestamp: args.by_timestamp,
        mirror,
        undo: run.undo,
        wait_timeout: run.wait_timeout,
        settle: run.settle,
        commit_concurrency: run.commit_concurrency,
        batch_partitions: run.batch_partitions,
        reviewed: None,
        reviewed_groups: None,
        connector_config: overrides,
        undo_kind: SnapshotKind::Undo,
        undo_tags: if rehearsal {
            [("rehearsal".to_string(), "true".to_string())].into()
        } else {
            Default::default()
        },
        relative_targets: false,
        refuse_moved: run.refuse_moved,
        identities: run.identities,
    })
}

/// Reads `--identity` (a missing or malformed file is a usage error that names it).
fn identities(args: &RestoreArgs) -> Result<Option<crate::snapshot::secrets::Identities>> {
    args.identity
        .as_deref()
        .map(crate::snapshot::secrets::Identities::read)
        .transpose()
}
