//! The tools: each builds the command line of one offset-vault command from typed arguments,
//! runs it ([`super::runner`]) and returns its JSON as structured content.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ProgressNotificationParam, ProtocolVersion, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plans::{self, Stored};
use super::{Options, Ran};

/// What a read-only tool returns: the command it ran and what that printed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandResult {
    /// The equivalent command line (without the binary and the connection flags).
    pub command: Vec<String>,
    pub exit_code: i32,
    /// The JSON document the command prints with `--output json` (null when it printed none).
    pub result: Value,
    /// What the command wrote on stderr: warnings, and the error when it failed.
    pub errors: String,
}

/// What a planning tool returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlanResult {
    /// SHA-256 of the plan: the only thing `apply_plan` takes.
    pub hash: Option<String>,
    /// The plan file, for review and `offset-vault approve`.
    pub plan_file: Option<String>,
    /// `restore` or `reset`.
    pub kind: String,
    /// Whether the plan can be applied as things stand.
    pub applicable: bool,
    /// One line for the person who confirms it.
    pub summary: String,
    pub command: Vec<String>,
    pub exit_code: i32,
    /// The dry run's JSON document (every group and partition with its target).
    pub plan: Value,
    pub errors: String,
}

/// What `apply_plan` returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ApplyResult {
    pub hash: String,
    pub plan_file: Option<String>,
    pub kind: Option<String>,
    /// How the change was confirmed: `elicitation` (the person said yes) or `allow-apply` (the
    /// client cannot ask; the server was started with --allow-apply).
    pub confirmed: Option<String>,
    pub command: Vec<String>,
    /// The command's exit code (see `offset-vault --help`); null when it was not run.
    pub exit_code: Option<i32>,
    /// The executed command's JSON document: status, verified, undo snapshot, plan, errors.
    pub result: Value,
    /// Why nothing was changed, or what the command wrote on stderr.
    pub errors: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListParams {
    /// Only snapshots holding this group.
    pub group: Option<String>,
    /// Only snapshots holding this connector.
    pub connector: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ShowParams {
    /// Snapshot id (or a unique prefix); default: the newest.
    pub id: Option<String>,
    /// The offsets at this instant from the commit-log archive (RFC 3339 or e.g. `2h ago`).
    pub at: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub connectors: Vec<String>,
    #[serde(default)]
    pub topics: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct DiffParams {
    /// The older snapshot.
    pub old: Option<String>,
    /// The newer snapshot.
    pub new: Option<String>,
    /// Instants from the commit-log archive in place of snapshots (at most two).
    #[serde(default)]
    pub at: Vec<String>,
    /// Compare with the committed offsets now.
    #[serde(default)]
    pub live: bool,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub connectors: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct HistoryParams {
    pub group: String,
    pub since: Option<String>,
    pub until: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct LiveParams {
    #[serde(default)]
    pub groups: Vec<String>,
    /// A regular expression over group ids.
    pub group_pattern: Option<String>,
    #[serde(default)]
    pub all_groups: bool,
    #[serde(default)]
    pub connectors: Vec<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct VerifyParams {
    /// Snapshot id; default: the newest.
    pub id: Option<String>,
    /// Every snapshot in the store.
    #[serde(default)]
    pub all: bool,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct RestoreParams {
    /// Snapshot id (or a unique prefix).
    pub id: Option<String>,
    /// The newest snapshot.
    #[serde(default)]
    pub latest: bool,
    /// The newest snapshot taken before this instant.
    pub before: Option<String>,
    /// The offsets at this instant, from the commit-log archive.
    pub at: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub connectors: Vec<String>,
    #[serde(default)]
    pub topics: Vec<String>,
    #[serde(default)]
    pub partitions: Vec<i32>,
}

/// kafka-consumer-groups' reset scenarios.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    ToEarliest,
    ToLatest,
    ToCurrent,
    /// `value`: the offset.
    ToOffset,
    /// `value`: records to move by (negative: back).
    ShiftBy,
    /// `value`: RFC 3339 instant.
    ToDatetime,
    /// `value`: ISO 8601 duration back from now (e.g. PT1H).
    ByDuration,
}

impl Scenario {
    fn flag(self) -> &'static str {
        match self {
            Scenario::ToEarliest => "--to-earliest",
            Scenario::ToLatest => "--to-latest",
            Scenario::ToCurrent => "--to-current",
            Scenario::ToOffset => "--to-offset",
            Scenario::ShiftBy => "--shift-by",
            Scenario::ToDatetime => "--to-datetime",
            Scenario::ByDuration => "--by-duration",
        }
    }

    fn takes_value(self) -> bool {
        !matches!(
            self,
            Scenario::ToEarliest | Scenario::ToLatest | Scenario::ToCurrent
        )
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResetParams {
    #[serde(default)]
    pub groups: Vec<String>,
    /// A sink connector (its group) or a source connector (its offsets).
    pub connector: Option<String>,
    /// Topics (TOPIC or TOPIC:P,P...); or set all_topics.
    #[serde(default)]
    pub topics: Vec<String>,
    #[serde(default)]
    pub all_topics: bool,
    pub scenario: Scenario,
    /// The scenario's value (offset, shift, instant or duration).
    pub value: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ApplyParams {
    /// The plan's hash, as plan_restore or plan_reset returned it.
    pub hash: String,
}

/// What the person is asked to confirm.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Apply this plan now.
    pub confirm: bool,
}
rmcp::elicit_safe!(Confirm);

/// The MCP server's handler.
#[derive(Clone)]
pub struct Vault {
    opts: Arc<Options>,
    tool_router: ToolRouter<Self>,
}

fn push_all(args: &mut Vec<String>, flag: &str, values: &[String]) {
    for v in values {
        args.push(flag.into());
        args.push(v.clone());
    }
}

fn push_opt(args: &mut Vec<String>, flag: &str, value: &Option<String>) {
    if let Some(v) = value {
        args.push(flag.into());
        args.push(v.clone());
    }
}

fn push_if(args: &mut Vec<String>, flag: &str, on: bool) {
    if on {
        args.push(flag.into());
    }
}

fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("tool results serialize")
}

fn result_of(structured: Value, ok: bool) -> CallToolResult {
    if ok {
        CallToolResult::structured(structured)
    } else {
        CallToolResult::structured_error(structured)
    }
}

fn internal(e: crate::error::Error) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

#[tool_router]
impl Vault {
    pub fn new(opts: Arc<Options>) -> Self {
        let mut tool_router = Self::tool_router();
        if !opts.allow_apply {
            tool_router.remove_route("apply_plan");
        }
        Vault { opts, tool_router }
    }

    /// Runs one command for a call, reporting each stderr line as progress and interrupting the
    /// command when the call is cancelled.
    async fn run(
        &self,
        args: Vec<String>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Ran, ErrorData> {
        self.run_with(&self.opts.runner, args, ctx).await
    }

    async fn run_with(
        &self,
        runner: &super::Runner,
        args: Vec<String>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Ran, ErrorData> {
        let token = ctx.meta.get_progress_token();
        let peer = ctx.peer.clone();
        let step = std::sync::atomic::AtomicU64::new(0);
        let progress = move |line: String| {
            let Some(token) = token.clone() else { return };
            let n = step.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            let peer = peer.clone();
            tokio::spawn(async move {
                let _ = peer
                    .notify_progress(
                        ProgressNotificationParam::new(token, n as f64).with_message(line),
                    )
                    .await;
            });
        };
        runner.run(args, &ctx.ct, &progress).await.map_err(internal)
    }

    /// The id of the newest snapshot in the runner's store; Err: the tool's failed result
    /// (the store could not be listed, or holds no snapshot).
    async fn newest(
        &self,
        runner: &super::Runner,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Result<String, CallToolResult>, ErrorData> {
        let listed = self.run_with(runner, vec!["list".into()], ctx).await?;
        let newest = listed
            .json
            .as_ref()
            .and_then(|d| d["snapshots"].get(0))
            .and_then(|s| s["id"].as_str())
            .map(str::to_string);
        match newest {
            Some(id) if listed.exit_code == 0 && !listed.cancelled => Ok(Ok(id)),
            _ => {
                let mut errors = listed.stderr;
                if listed.exit_code == 0 {
                    errors.push_str("error: the store holds no snapshot\n");
                }
                let out = CommandResult {
                    command: listed.command,
                    exit_code: if listed.exit_code == 0 {
                        4
                    } else {
                        listed.exit_code
                    },
                    result: listed.json.unwrap_or(Value::Null),
                    errors,
                };
                Ok(Err(result_of(to_value(&out), false)))
            }
        }
    }

    async fn read(
        &self,
        args: Vec<String>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.read_with(&self.opts.runner, args, ctx).await
    }

    async fn read_with(
        &self,
        runner: &super::Runner,
        args: Vec<String>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let ran = self.run_with(runner, args, &ctx).await?;
        let ok = ran.exit_code == 0 && !ran.cancelled;
        let out = CommandResult {
            command: ran.command,
            exit_code: ran.exit_code,
            result: ran.json.unwrap_or(Value::Null),
            errors: ran.stderr,
        };
        Ok(result_of(to_value(&out), ok))
    }

    /// Lists the snapshots in the store, newest first.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn list_snapshots(
        &self,
        Parameters(p): Parameters<ListParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["list".to_string()];
        push_opt(&mut args, "--group", &p.group);
        push_opt(&mut args, "--connector", &p.connector);
        self.read(args, ctx).await
    }

    /// Shows one snapshot (verified first), or the offsets at an instant from the commit-log
    /// archive (`at`).
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn show_snapshot(
        &self,
        Parameters(p): Parameters<ShowParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["show".to_string()];
        match (p.id, &p.at) {
            (Some(id), _) => args.push(id),
            (None, Some(_)) => {}
            (None, None) => match self.newest(&self.opts.runner, &ctx).await? {
                Ok(id) => args.push(id),
                Err(failed) => return Ok(failed),
            },
        }
        push_opt(&mut args, "--at", &p.at);
        push_all(&mut args, "--group", &p.groups);
        push_all(&mut args, "--connector", &p.connectors);
        push_all(&mut args, "--topic", &p.topics);
        self.read(args, ctx).await
    }

    /// Compares two snapshots, a snapshot or an instant with the committed offsets now
    /// (`live`), or two instants.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn diff(
        &self,
        Parameters(p): Parameters<DiffParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["diff".to_string()];
        args.extend(p.old);
        args.extend(p.new);
        push_all(&mut args, "--at", &p.at);
        push_if(&mut args, "--live", p.live);
        push_all(&mut args, "--group", &p.groups);
        push_all(&mut args, "--connector", &p.connectors);
        self.read(args, ctx).await
    }

    /// A group's archived offset changes, from the commit-log archive.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn history(
        &self,
        Parameters(p): Parameters<HistoryParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["history".to_string(), p.group];
        push_opt(&mut args, "--since", &p.since);
        push_opt(&mut args, "--until", &p.until);
        self.read(args, ctx).await
    }

    /// The live groups and connectors as a snapshot would capture them (state, members,
    /// committed offsets, log ranges), read now; nothing is written to the store.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn describe_live(
        &self,
        Parameters(p): Parameters<LiveParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        // A snapshot into a store of its own, read back with show, then thrown away.
        let dir =
            tempfile::tempdir().map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let runner = self
            .opts
            .runner
            .with_store(&dir.path().display().to_string());
        let mut take = vec!["snapshot".to_string()];
        push_all(&mut take, "--group", &p.groups);
        push_opt(&mut take, "--group-pattern", &p.group_pattern);
        push_if(&mut take, "--all-groups", p.all_groups);
        push_all(&mut take, "--connector", &p.connectors);
        push_if(&mut take, "--allow-empty", true);
        let taken = self.run_with(&runner, take, &ctx).await?;
        if taken.exit_code != 0 || taken.cancelled {
            let out = CommandResult {
                command: taken.command,
                exit_code: taken.exit_code,
                result: taken.json.unwrap_or(Value::Null),
                errors: taken.stderr,
            };
            return Ok(result_of(to_value(&out), false));
        }
        let Some(id) = taken.json.as_ref().and_then(|d| d["id"].as_str()) else {
            return Err(ErrorData::internal_error(
                format!("the snapshot printed no id: {:?}", taken.json),
                None,
            ));
        };
        self.read_with(&runner, vec!["show".into(), id.to_string()], ctx)
            .await
    }

    /// Re-hashes the files of one or every snapshot against their manifests.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CommandResult>()
    )]
    async fn verify(
        &self,
        Parameters(p): Parameters<VerifyParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["verify".to_string()];
        args.extend(p.id);
        push_if(&mut args, "--all", p.all);
        self.read(args, ctx).await
    }

    /// Plans a restore back to a snapshot (id, latest, before) or to an instant (`at`); changes
    /// nothing. Returns the plan and its hash: give the hash to apply_plan once a person has
    /// reviewed it.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<PlanResult>()
    )]
    async fn plan_restore(
        &self,
        Parameters(p): Parameters<RestoreParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["restore".to_string()];
        args.extend(p.id);
        push_if(&mut args, "--latest", p.latest);
        push_opt(&mut args, "--before", &p.before);
        push_opt(&mut args, "--at", &p.at);
        push_all(&mut args, "--group", &p.groups);
        push_all(&mut args, "--connector", &p.connectors);
        push_all(&mut args, "--topic", &p.topics);
        let partitions: Vec<String> = p.partitions.iter().map(i32::to_string).collect();
        push_all(&mut args, "--partition", &partitions);
        self.plan("restore", args, ctx).await
    }

    /// Plans a reset with kafka-consumer-groups' scenarios (to-earliest, to-latest,
    /// to-current, to-offset, shift-by, to-datetime, by-duration); changes nothing. Returns
    /// the plan and its hash for apply_plan.
    #[tool(
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<PlanResult>()
    )]
    async fn plan_reset(
        &self,
        Parameters(p): Parameters<ResetParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["reset".to_string()];
        push_all(&mut args, "--group", &p.groups);
        push_opt(&mut args, "--connector", &p.connector);
        push_all(&mut args, "--topic", &p.topics);
        push_if(&mut args, "--all-topics", p.all_topics);
        args.push(p.scenario.flag().into());
        match (p.scenario.takes_value(), p.value) {
            (true, Some(v)) => args.push(v),
            (true, None) => {
                return Err(ErrorData::invalid_params(
                    format!("scenario {} needs a value", p.scenario.flag()),
                    None,
                ))
            }
            (false, Some(_)) => {
                return Err(ErrorData::invalid_params(
                    format!("scenario {} takes no value", p.scenario.flag()),
                    None,
                ))
            }
            (false, None) => {}
        }
        self.plan("reset", args, ctx).await
    }

    async fn plan(
        &self,
        kind: &str,
        mut args: Vec<String>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let written = tempfile::Builder::new()
            .prefix(".plan-")
            .suffix(".json")
            .tempfile_in(&self.opts.plan_dir)
            .map_err(|e| {
                ErrorData::internal_error(format!("{}: {e}", self.opts.plan_dir.display()), None)
            })?
            .into_temp_path();
        args.push("--plan-file".into());
        args.push(written.display().to_string());
        let ran = self.run(args, &ctx).await?;
        let kept = if ran.exit_code == 0 && !ran.cancelled {
            Some(plans::keep(&self.opts.plan_dir, &written))
        } else {
            None
        };
        let mut errors = ran.stderr;
        let stored: Option<Stored> = match kept {
            Some(Ok(s)) => Some(s),
            Some(Err(e)) => {
                errors.push_str(&format!("error: {e}\n"));
                None
            }
            None => None,
        };
        let out = PlanResult {
            hash: stored.as_ref().map(|s| s.file.sha256.clone()),
            plan_file: stored.as_ref().map(|s| s.path.display().to_string()),
            kind: kind.to_string(),
            applicable: stored
                .as_ref()
                .is_some_and(|s| s.file.body.plan.applicable && !s.file.body.plan.blocked),
            summary: stored.as_ref().map(Stored::summary).unwrap_or_else(|| {
                format!("no plan: the {kind} dry run exited with {}", ran.exit_code)
            }),
            command: ran.command,
            exit_code: ran.exit_code,
            plan: ran.json.unwrap_or(Value::Null),
            errors,
        };
        let ok = stored.is_some();
        Ok(result_of(to_value(&out), ok))
    }

    /// Applies a reviewed plan, given only its hash: planned again against the live cluster
    /// and refused, with nothing changed, unless it is still the reviewed plan on the same
    /// cluster, no committed offset moved since, no group is active, and it has the approvals
    /// the server requires. Takes an
    /// undo snapshot first. Asks the person to confirm when the client can ask.
    #[tool(
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<ApplyResult>()
    )]
    async fn apply_plan(
        &self,
        Parameters(p): Parameters<ApplyParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let refused = |stored: Option<&Stored>, why: String| {
            let out = ApplyResult {
                hash: p.hash.clone(),
                plan_file: stored.map(|s| s.path.display().to_string()),
                kind: stored.map(|s| s.kind().to_string()),
                confirmed: None,
                command: Vec::new(),
                exit_code: None,
                result: Value::Null,
                errors: format!("{why}; nothing was changed"),
            };
            Ok(result_of(to_value(&out), false))
        };
        let stored = match plans::find(&self.opts.plan_dir, &p.hash) {
            Ok(s) => s,
            Err(e) => return refused(None, e.to_string()),
        };
        let confirmed = match self.confirm(&stored, &ctx).await {
            Ok(how) => how,
            Err(why) => return refused(Some(&stored), why),
        };
        let mut args = vec![
            stored.kind().to_string(),
            "--from-plan".into(),
            stored.path.display().to_string(),
            "--execute".into(),
            // The plan is applied only to the state the person reviewed.
            "--refuse-moved".into(),
        ];
        if self.opts.require_approvals > 0 {
            args.push("--require-approvals".into());
            args.push(self.opts.require_approvals.to_string());
        }
        let ran = self.run(args, &ctx).await?;
        let ok = ran.exit_code == 0 && !ran.cancelled;
        let mut errors = ran.stderr;
        if ran.cancelled {
            errors.push_str("the call was cancelled: the command was interrupted; its result above says what it left changed and how to undo it\n");
        }
        let out = ApplyResult {
            hash: p.hash.clone(),
            plan_file: Some(stored.path.display().to_string()),
            kind: Some(stored.kind().to_string()),
            confirmed: Some(confirmed.to_string()),
            command: ran.command,
            exit_code: Some(ran.exit_code),
            result: ran.json.unwrap_or(Value::Null),
            errors,
        };
        Ok(result_of(to_value(&out), ok))
    }
}

impl Vault {
    /// Asks the person to confirm the plan when the client can ask (elicitation); otherwise the
    /// server's --allow-apply stands for the confirmation. Err: why it is not confirmed.
    async fn confirm(
        &self,
        stored: &Stored,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<&'static str, String> {
        use rmcp::service::ElicitationError;
        let message = format!(
            "Apply this plan? {}. Plan {} (file {}).",
            stored.summary(),
            stored.file.sha256,
            stored.path.display()
        );
        match ctx.peer.elicit::<Confirm>(message).await {
            Ok(Some(Confirm { confirm: true })) => Ok("elicitation"),
            Ok(_) => Err("the person did not confirm the plan".into()),
            Err(ElicitationError::CapabilityNotSupported) => Ok("allow-apply"),
            Err(ElicitationError::UserDeclined) => Err("the person declined the plan".into()),
            Err(ElicitationError::UserCancelled) => {
                Err("the person dismissed the confirmation".into())
            }
            Err(e) => Err(format!("the confirmation could not be asked for: {e}")),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Vault {
    fn get_info(&self) -> ServerConfig {
        let apply = if self.opts.allow_apply {
            "apply_plan applies a plan by its hash, after a person confirms it where the client can ask."
        } else {
            "This server changes nothing: start it with --allow-apply to offer apply_plan."
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("offset-vault", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Kafka consumer-group offsets: snapshots, the commit-log archive and the live cluster are read with the read-only tools; plan_restore and plan_reset make a plan (nothing changes) and return its hash. {apply}"
            ))
    }

    /// Up to the last revision with server-to-client requests, so that apply_plan can ask the
    /// person to confirm (elicitation).
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }
}
