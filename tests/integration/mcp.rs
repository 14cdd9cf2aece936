//! `offset-vault mcp` driven by a real MCP client, the official Python SDK's stdio client
//! (tests/mcp/client.py), against the real broker: the tools and their annotations, read tools
//! that answer what the command line answers, and `apply_plan`, which changes offsets only by a
//! reviewed plan's hash and otherwise changes nothing (checked with the real
//! `kafka-consumer-groups`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::kafka::{self, ActiveConsumer, Take};
use crate::support::ov::{local_store, ov, ov_raw, with_services};
use crate::support::poll::eventually;
use crate::support::{blocking, env, kcg, unique_name};

/// One `offset-vault mcp` server as the client starts it: its global flags and its own.
struct Server {
    global: Vec<String>,
    flags: Vec<String>,
}

impl Server {
    /// A server on the test cluster and `store`, writing plans into `plans`.
    fn new(store: &str, plans: &Path) -> Server {
        Server {
            global: with_services(store, "20s", &[]),
            flags: vec!["--plan-dir".into(), plans.display().to_string()],
        }
    }

    fn global(mut self, args: &[&str]) -> Server {
        self.global.extend(args.iter().map(|a| a.to_string()));
        self
    }

    fn flags(mut self, args: &[&str]) -> Server {
        self.flags.extend(args.iter().map(|a| a.to_string()));
        self
    }

    fn command(&self) -> Vec<String> {
        let exe = assert_cmd::cargo::cargo_bin("offset-vault");
        let mut all = vec![exe.display().to_string()];
        all.extend(self.global.iter().cloned());
        all.push("mcp".into());
        all.extend(self.flags.iter().cloned());
        all
    }

    /// Starts the server under the Python client, runs `steps` in one session and returns what
    /// the client saw: `{"server", "elicitations", "results"}`. `elicitation`: how the client
    /// answers confirmations (None: it does not offer elicitation).
    async fn session(&self, elicitation: Option<&str>, steps: Vec<Value>) -> Value {
        let script = json!({
            "command": self.command(),
            "env": {"NO_COLOR": "1"},
            "elicitation": elicitation,
            "steps": steps,
        });
        blocking(move || {
            let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
            let mut child = Command::new(env::python())
                .arg(&client)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("start {}: {e}", env::python().display()));
            child
                .stdin
                .take()
                .unwrap()
                .write_all(script.to_string().as_bytes())
                .unwrap();
            let out = child.wait_with_output().expect("the MCP client ends");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "the MCP client failed ({}):\n{stdout}\n{stderr}",
                out.status
            );
            serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("client output is not JSON ({e}):\n{stdout}\n{stderr}"))
        })
        .await
    }

    /// One tool call in a session of its own; returns (the call's result, the whole session).
    async fn call(&self, elicitation: Option<&str>, tool: &str, args: Value) -> (Value, Value) {
        let session = self.session(elicitation, vec![call(tool, args)]).await;
        (session["results"][0].clone(), session)
    }
}

fn call(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "arguments": args})
}

fn call_with_progress(tool: &str, args: Value) -> Value {
    json!({"op": "call", "tool": tool, "arguments": args, "progress": true})
}

fn list_tools() -> Value {
    json!({"op": "list_tools"})
}

/// The structured content of a call that must have succeeded.
fn ok(result: &Value) -> &Value {
    assert_eq!(result["is_error"], false, "the call failed: {result:#}");
    &result["structured"]
}

/// The structured content of a call that must have failed.
fn refused(result: &Value) -> &Value {
    assert_eq!(result["is_error"], true, "the call succeeded: {result:#}");
    &result["structured"]
}

fn tools_by_name(session: &Value) -> BTreeMap<String, Value> {
    session["results"][0]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {session:#}"))
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

const READ_TOOLS: [&str; 8] = [
    "describe_live",
    "diff",
    "history",
    "list_snapshots",
    "plan_reset",
    "plan_restore",
    "show_snapshot",
    "verify",
];

fn both(n: i64) -> BTreeMap<i32, i64> {
    BTreeMap::from([(0, n), (1, n)])
}

/// Moves the group on by `n` records on each partition.
async fn commit_more(group: &str, topic: &str, n: usize) {
    kafka::consume_and_commit(group, topic, Take::per_partition(&[(0, n), (1, n)])).await;
}

/// The group's offsets as the real `kafka-consumer-groups --describe` shows them.
async fn described(group: &str) -> BTreeMap<i32, i64> {
    kcg::kcg_describe(group)
        .await
        .into_iter()
        .filter_map(|r| r.current_offset.map(|o| (r.partition, o)))
        .collect()
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// A plan's hash, checked to name the plan file the tool says it wrote.
fn plan_hash(plan: &Value) -> String {
    let hash = text(&plan["hash"]);
    assert_eq!(hash.len(), 64, "{plan:#}");
    let file = PathBuf::from(text(&plan["plan_file"]));
    assert_eq!(
        file.file_name().unwrap().to_str().unwrap(),
        format!("{hash}.json")
    );
    assert!(file.is_file(), "{}", file.display());
    hash
}

/// The command lines of running processes that hold every string of `all_of`.
fn commands_holding(all_of: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if all_of.iter().all(|s| line.contains(s)) {
            found.push(line);
        }
    }
    found
}

/// `audit --output json` events of type `t`.
async fn audit_events(store: &str, t: &str) -> Vec<Value> {
    let doc = ov(store, &["audit", "--type", t, "--output", "json"])
        .await
        .ok()
        .json();
    doc["events"].as_array().expect("events").clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_shows_the_annotations_and_apply_plan_only_with_allow_apply() {
    if !env::require_mcp_sdk() {
        return;
    }
    let (dir, store) = local_store();
    let plans = dir.path().join("plans");

    let default = Server::new(&store, &plans)
        .session(None, vec![list_tools()])
        .await;
    assert_eq!(default["server"]["name"], "offset-vault");
    let tools = tools_by_name(&default);
    assert_eq!(
        tools.keys().map(String::as_str).collect::<Vec<_>>(),
        READ_TOOLS,
        "the default server offers no destructive tool"
    );
    for (name, tool) in &tools {
        let a = &tool["annotations"];
        assert_eq!(a["readOnlyHint"], true, "{name}: {a:#}");
        assert_eq!(a["destructiveHint"], false, "{name}: {a:#}");
        assert!(a["openWorldHint"].is_boolean(), "{name}: {a:#}");
        assert_eq!(
            tool["output_schema"]["type"], "object",
            "{name} declares its structured result: {tool:#}"
        );
    }
    // Those that read the live cluster say so; those that read the store only do not.
    for name in ["describe_live", "diff", "plan_reset", "plan_restore"] {
        assert_eq!(tools[name]["annotations"]["openWorldHint"], true, "{name}");
    }
    for name in ["list_snapshots", "show_snapshot", "history", "verify"] {
        assert_eq!(tools[name]["annotations"]["openWorldHint"], false, "{name}");
    }
    // Reset scenarios are an enumeration, as kafka-consumer-groups names them.
    let scenarios = &tools["plan_reset"]["input_schema"];
    let rendered = scenarios.to_string();
    for s in [
        "to-earliest",
        "to-latest",
        "to-offset",
        "shift-by",
        "to-datetime",
        "by-duration",
    ] {
        assert!(rendered.contains(&format!("\"{s}\"")), "{s}: {scenarios:#}");
    }

    let applying = Server::new(&store, &plans)
        .flags(&["--allow-apply"])
        .session(None, vec![list_tools()])
        .await;
    let tools = tools_by_name(&applying);
    assert_eq!(tools.len(), READ_TOOLS.len() + 1);
    let apply = &tools["apply_plan"];
    let a = &apply["annotations"];
    assert_eq!(a["readOnlyHint"], false, "{a:#}");
    assert_eq!(a["destructiveHint"], true, "{a:#}");
    assert_eq!(a["idempotentHint"], true, "{a:#}");
    // It takes a hash and nothing else: no offsets, no groups.
    let input = &apply["input_schema"];
    let properties: Vec<&String> = input["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["hash"], "{input:#}");
    assert_eq!(input["required"], json!(["hash"]), "{input:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_tools_return_what_the_command_line_returns() {
    if !(env::require_kafka() && env::require_mcp_sdk()) {
        return;
    }
    let (topic, group) = kafka::group_at("mcp-read", 5).await;
    let (dir, store) = local_store();
    let snap = ov(&store, &["snapshot", "--group", &group, "--output", "json"])
        .await
        .ok()
        .json();
    let id = text(&snap["id"]);
    commit_more(&group, &topic, 3).await;
    let server = Server::new(&store, &dir.path().join("plans"));

    let session = server
        .session(
            None,
            vec![
                call("list_snapshots", json!({})),
                call("show_snapshot", json!({"id": id})),
                call("verify", json!({"id": id})),
                call("diff", json!({"old": id, "live": true, "groups": [group]})),
                call("show_snapshot", json!({"id": "0000000000"})),
                call("show_snapshot", json!({})),
            ],
        )
        .await;
    let r = &session["results"];
    let cli = |args: &'static [&'static str]| {
        let store = store.clone();
        let id = id.clone();
        let group = group.clone();
        async move {
            let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            for a in all.iter_mut() {
                if a == "ID" {
                    *a = id.clone();
                } else if a == "GROUP" {
                    *a = group.clone();
                }
            }
            all.extend(["--output".into(), "json".into()]);
            let refs: Vec<&str> = all.iter().map(String::as_str).collect();
            ov(&store, &refs).await.ok().json()
        }
    };
    let list = ok(&r[0]);
    assert_eq!(list["command"], json!(["list"]));
    assert_eq!(list["exit_code"], 0);
    assert_eq!(list["result"], cli(&["list"]).await);
    let show = ok(&r[1]);
    assert_eq!(show["command"], json!(["show", id]));
    assert_eq!(show["result"], cli(&["show", "ID"]).await);
    assert_eq!(ok(&r[2])["result"], cli(&["verify", "ID"]).await);
    // Without an id: the newest snapshot.
    let newest = ok(&r[5]);
    assert_eq!(newest["command"], json!(["show", id]));
    assert_eq!(newest["result"], show["result"]);
    // The same diff, but for the instant the live side was read.
    let without_read_at = |mut doc: Value| {
        let read_at = doc["new"]["read_at"].take();
        assert!(read_at.is_string(), "{doc:#}");
        doc
    };
    let diff = ok(&r[3]);
    assert_eq!(
        without_read_at(diff["result"].clone()),
        without_read_at(cli(&["diff", "ID", "--live", "--group", "GROUP"]).await)
    );
    assert!(
        diff["result"].to_string().contains(&group),
        "the diff names the group: {diff:#}"
    );

    // A command's failure is the tool's: its exit code and its message.
    let missing = refused(&r[4]);
    assert_eq!(missing["exit_code"], 4, "{missing:#}");
    let cli_missing = ov(&store, &["show", "0000000000"]).await.expect_code(4);
    let first_line = cli_missing.stderr.lines().next().unwrap_or_default();
    assert!(
        !first_line.is_empty() && text(&missing["errors"]).contains(first_line),
        "{missing:#}\nthe command line said:\n{}",
        cli_missing.stderr
    );

    // The live groups as a snapshot would capture them, with progress reported on the way;
    // nothing is written to the server's store.
    let live = server
        .session(
            None,
            vec![call_with_progress(
                "describe_live",
                json!({"groups": [group]}),
            )],
        )
        .await;
    let live = &live["results"][0];
    let doc = ok(live);
    let groups = doc["result"]["groups"].to_string();
    assert!(groups.contains(&group), "{doc:#}");
    // Progress notifications as the command reads the group.
    let messages: Vec<String> = live["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| text(&p["message"]))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m == "groups: committed offsets read 1/1"),
        "progress notifications: {live:#}"
    );
    assert_eq!(
        cli(&["list"]).await["snapshots"].as_array().unwrap().len(),
        1,
        "describe_live leaves the store as it was"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_plan_changes_nothing_unless_the_reviewed_plan_still_holds() {
    if !(env::require_kafka() && env::require_mcp_sdk()) {
        return;
    }
    let (topic, group) = kafka::group_at("mcp-apply", 5).await;
    let (dir, store) = local_store();
    let id = text(
        &ov(&store, &["snapshot", "--group", &group, "--output", "json"])
            .await
            .ok()
            .json()["id"],
    );
    commit_more(&group, &topic, 7).await;
    assert_eq!(kcg::committed(&group, &topic).await, both(12));
    let plans = dir.path().join("plans");
    let server = Server::new(&store, &plans).flags(&["--allow-apply"]);
    let restore = json!({"id": id, "groups": [group]});

    // A hash no plan has, and something that is not a hash: refused.
    let first = server
        .session(
            None,
            vec![
                call("apply_plan", json!({"hash": "0".repeat(64)})),
                call("apply_plan", json!({"hash": "../../etc/passwd"})),
                call("plan_restore", restore.clone()),
            ],
        )
        .await;
    let r = &first["results"];
    for refusal in [refused(&r[0]), refused(&r[1])] {
        assert!(
            text(&refusal["errors"]).contains("nothing was changed"),
            "{refusal:#}"
        );
        assert!(refusal["exit_code"].is_null(), "nothing ran: {refusal:#}");
    }
    let planned = ok(&r[2]);
    assert_eq!(planned["kind"], "restore");
    assert_eq!(planned["applicable"], true, "{planned:#}");
    let stale = plan_hash(planned);
    assert!(text(&planned["summary"]).contains(&group), "{planned:#}");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        both(12),
        "planning changes nothing"
    );

    // The group moves after the review: the plan is stale and refused.
    commit_more(&group, &topic, 1).await;
    assert_eq!(kcg::committed(&group, &topic).await, both(13));
    let (moved, _) = server
        .call(None, "apply_plan", json!({"hash": stale}))
        .await;
    let moved = refused(&moved);
    assert_eq!(moved["exit_code"], 11, "{moved:#}");
    assert!(
        text(&moved["errors"]).contains("--refuse-moved"),
        "{moved:#}"
    );
    assert_eq!(described(&group).await, both(13), "nothing changed");

    // Reviewed again; then a consumer joins the group: refused while it is active.
    let (again, _) = server.call(None, "plan_restore", restore.clone()).await;
    let fresh = plan_hash(ok(&again));
    assert_ne!(fresh, stale, "the new plan starts from the new offsets");
    let member = ActiveConsumer::start(&group, &topic, Take::per_partition(&[])).await;
    eventually(
        "the group to be Stable",
        Duration::from_secs(60),
        || async {
            (kcg::kcg_group_state(&group).await.as_deref() == Some("Stable")).then_some(())
        },
    )
    .await;
    let (active, _) = server
        .call(None, "apply_plan", json!({"hash": fresh}))
        .await;
    let active = refused(&active);
    assert_eq!(active["exit_code"], 6, "{active:#}");
    assert!(text(&active["errors"]).contains("Stable"), "{active:#}");
    assert_eq!(
        kcg::committed(&group, &topic).await,
        both(13),
        "nothing changed"
    );
    drop(member);
    eventually("the group to be Empty", Duration::from_secs(60), || async {
        (kcg::kcg_group_state(&group).await.as_deref() == Some("Empty")).then_some(())
    })
    .await;

    // The reviewed plan, as it still holds: applied exactly.
    let (applied, _) = server
        .call(None, "apply_plan", json!({"hash": fresh}))
        .await;
    let applied = ok(&applied);
    assert_eq!(applied["exit_code"], 0, "{applied:#}");
    assert_eq!(applied["confirmed"], "allow-apply", "{applied:#}");
    assert_eq!(applied["result"]["verified"], true, "{applied:#}");
    let undo = text(&applied["result"]["undo_snapshot"]);
    assert!(!undo.is_empty(), "an undo snapshot was taken: {applied:#}");
    assert_eq!(described(&group).await, both(5));

    // The same hash again changes nothing more: the offsets it was reviewed on are gone.
    let (twice, _) = server
        .call(None, "apply_plan", json!({"hash": fresh}))
        .await;
    assert_eq!(refused(&twice)["exit_code"], 11, "{twice:#}");
    assert_eq!(described(&group).await, both(5));

    // Each application through MCP is in the audit trail, marked as coming from it.
    let events = audit_events(&store, "restore").await;
    let outcomes: Vec<(i64, String)> = events
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["who"]["via"], "mcp", "{e:#}");
            (
                e["data"]["exit_code"].as_i64().unwrap(),
                text(&e["data"]["outcome"]),
            )
        })
        .collect();
    let codes: Vec<i64> = outcomes.iter().map(|(c, _)| *c).collect();
    assert!(
        codes.contains(&0) && codes.contains(&6) && codes.contains(&11),
        "{outcomes:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_plan_needs_the_approvals_and_the_cluster_the_plan_was_made_on() {
    if !(env::require_kafka() && env::require_mcp_sdk()) {
        return;
    }
    // The server signs its plans with a key of its own; Bob, a person, approves them.
    let keys = tempfile::tempdir().unwrap();
    let keygen = |name: &str| {
        let prefix = keys.path().join(name);
        async move {
            ov_raw(vec![
                "keygen".into(),
                "--out".into(),
                prefix.display().to_string(),
            ])
            .await
            .ok();
            (
                format!("{}.key", prefix.display()),
                format!("{}.pub", prefix.display()),
            )
        }
    };
    let (agent_key, agent_pub) = keygen("agent").await;
    let (bob_key, bob_pub) = keygen("bob").await;
    let trusted = format!("{agent_pub},{bob_pub}");
    let (topic, group) = kafka::group_at("mcp-approve", 9).await;
    let (dir, store) = local_store();
    let plans = dir.path().join("plans");
    let server = Server::new(&store, &plans)
        .global(&["--trusted-key", &trusted, "--signing-key", &agent_key])
        .flags(&["--allow-apply", "--require-approvals", "1"]);

    let (planned, _) = server
        .call(
            None,
            "plan_reset",
            json!({"groups": [group], "all_topics": true, "scenario": "to-offset", "value": "2"}),
        )
        .await;
    let planned = ok(&planned);
    assert_eq!(planned["kind"], "reset");
    let hash = plan_hash(planned);
    let plan_file = text(&planned["plan_file"]);

    let (unapproved, _) = server.call(None, "apply_plan", json!({"hash": hash})).await;
    let unapproved = refused(&unapproved);
    assert_eq!(unapproved["exit_code"], 17, "{unapproved:#}");
    assert!(
        text(&unapproved["errors"]).contains("0 of 1"),
        "{unapproved:#}"
    );
    assert_eq!(described(&group).await, both(9), "nothing changed");

    // Bob approves the plan file; its hash (of what it does) stays the same.
    ov_raw(vec![
        "approve".into(),
        plan_file.clone(),
        "--key".into(),
        bob_key,
        "--trusted-key".into(),
        agent_pub.clone(),
    ])
    .await
    .ok();

    // A server connected to another cluster refuses it.
    if env::require_other_kafka() {
        let mut other = Server::new(&store, &plans)
            .global(&["--trusted-key", &trusted, "--signing-key", &agent_key])
            .flags(&["--allow-apply", "--require-approvals", "1"]);
        other.global[1] = env::other_bootstrap();
        let (elsewhere, _) = other.call(None, "apply_plan", json!({"hash": hash})).await;
        let elsewhere = refused(&elsewhere);
        assert_eq!(elsewhere["exit_code"], 9, "{elsewhere:#}");
        assert_eq!(described(&group).await, both(9), "nothing changed");
    }

    let (applied, _) = server.call(None, "apply_plan", json!({"hash": hash})).await;
    let applied = ok(&applied);
    assert_eq!(applied["kind"], "reset");
    assert_eq!(applied["exit_code"], 0, "{applied:#}");
    assert_eq!(described(&group).await, both(2));
    assert_eq!(kcg::committed(&group, &topic).await, both(2));

    let events = audit_events(&store, "reset").await;
    let executed: Vec<&Value> = events
        .iter()
        .filter(|e| e["data"]["exit_code"] == 0)
        .collect();
    assert_eq!(executed.len(), 1, "{events:#?}");
    assert_eq!(
        executed[0]["data"]["who"]["via"], "mcp",
        "{:#}",
        executed[0]
    );
    assert!(
        events
            .iter()
            .any(|e| e["data"]["exit_code"] == 17 && e["data"]["who"]["via"] == "mcp"),
        "the refusal is in the trail too: {events:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_plan_asks_the_person_and_applies_only_on_yes() {
    if !(env::require_kafka() && env::require_mcp_sdk()) {
        return;
    }
    let (topic, group) = kafka::group_at("mcp-elicit", 6).await;
    let (dir, store) = local_store();
    let server = Server::new(&store, &dir.path().join("plans")).flags(&["--allow-apply"]);
    let (planned, _) = server
        .call(
            None,
            "plan_reset",
            json!({"groups": [group], "topics": [topic], "scenario": "shift-by", "value": "-4"}),
        )
        .await;
    let hash = plan_hash(ok(&planned));

    for (answer, why) in [
        ("decline", "declined"),
        ("cancel", "dismissed"),
        ("refuse", "did not confirm"),
    ] {
        let (result, session) = server
            .call(Some(answer), "apply_plan", json!({"hash": hash}))
            .await;
        let result = refused(&result);
        assert!(
            text(&result["errors"]).contains(why),
            "{answer}: {result:#}"
        );
        assert!(
            result["exit_code"].is_null(),
            "{answer}: nothing ran: {result:#}"
        );
        let asked = session["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{session:#}");
        let message = text(&asked[0]["message"]);
        assert!(
            message.contains(&hash) && message.contains(&group),
            "the person sees what they confirm: {message}"
        );
        assert_eq!(
            described(&group).await,
            both(6),
            "{answer}: nothing changed"
        );
    }

    let (applied, _) = server
        .call(Some("accept"), "apply_plan", json!({"hash": hash}))
        .await;
    let applied = ok(&applied);
    assert_eq!(applied["confirmed"], "elicitation", "{applied:#}");
    assert_eq!(described(&group).await, both(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_interrupts_its_command_and_the_server_goes_on() {
    if !env::require_mcp_sdk() {
        return;
    }
    let (dir, store) = local_store();
    // Commands that wait for a broker nobody runs, up to their timeout of 120 s; the marker
    // finds them among the processes.
    let marker = unique_name("mcp-cancel");
    let mut server = Server::new(&store, &dir.path().join("plans"))
        .global(&["-X", &format!("client.id={marker}")]);
    server.global[1] = "127.0.0.1:9".into();
    server.global[7] = "120s".into();
    let running = async {
        eventually(
            "the tool's command to run",
            Duration::from_secs(10),
            || async {
                let found = commands_holding(&[&marker, "--via", "snapshot"]);
                (!found.is_empty()).then_some(found)
            },
        )
        .await
    };
    let session = server.session(
        None,
        vec![
            json!({"op": "call", "tool": "describe_live", "arguments": {"all_groups": true}, "timeout": 3}),
                json!({"op": "processes", "all_of": [marker, "--via"], "gone_within": 30}),
            list_tools(),
        ],
    );
    let (session, seen) = tokio::join!(session, running);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let r = &session["results"];
    // No answer within 3 s: the command was still running when the client gave up on it.
    assert_eq!(r[0]["timed_out"], true, "{session:#}");
    // The client's cancellation reached the server, which interrupted the command long before
    // its own timeout.
    assert_eq!(r[1]["remaining"], json!([]), "{session:#}");
    assert_eq!(
        r[2]["tools"].as_array().map(Vec::len),
        Some(READ_TOOLS.len()),
        "the server still answers: {session:#}"
    );
}
