//! Unit tests of `serve`'s flags and of the configuration file's `[serve]` section.

use clap::Parser;

use super::*;
use crate::error::exit;

fn section(text: &str) -> Result<ServeSection> {
    Ok(parse_section(Path::new("c.toml"), text)?.unwrap_or_default())
}

/// `serve` and its flags, as the command line parses them.
#[derive(Parser)]
enum Line {
    Serve(Box<ServeArgs>),
}

fn args(line: &str) -> ServeArgs {
    let Line::Serve(args) =
        Line::try_parse_from(format!("offset-vault serve {line}").split_whitespace())
            .unwrap_or_else(|e| panic!("{line}: {e}"));
    *args
}

fn plan_of(line: &str, text: &str) -> Result<Plan> {
    plan(&args(line), &section(text)?, 1, false)
}

#[test]
fn the_file_section_becomes_named_jobs() {
    let p = plan_of(
        "",
        r#"
        current-context = "x"
        [contexts.x]
        store = "/tmp/x"
        [serve]
        listen = "0.0.0.0:9999"
        [serve.jobs.hourly-all]
        kind = "snapshot"
        every = "1h"
        all-groups = true
        tags = { env = "prod" }
        topics = ["a", "b"]
        [serve.jobs.retention]
        kind = "prune"
        cron = "0 30 * * * *"
        store = "s3://other/prefix"
        keep-hourly = 48
        keep-daily = "30"
        [serve.jobs.check]
        kind = "verify"
        every = "6h"
        within = "2d"
        [serve.follow]
        group-id = "f"
        segment-interval = "10s"
        "#,
    )
    .unwrap();
    assert_eq!(p.listen, Some("0.0.0.0:9999".parse().unwrap()));
    let names: Vec<_> = p.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["check", "hourly-all", "retention"]);
    match &p.jobs[1].work {
        Work::Snapshot(o) => {
            assert!(o.selection.all_groups);
            assert_eq!(o.selection.topics, ["a", "b"]);
            assert_eq!(o.tags["env"], "prod");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.jobs[1].schedule.to_string(), "every 1h");
    match &p.jobs[2].work {
        Work::Prune(o) => assert_eq!(o.policy.describe(), "keep 48 hourly, 30 daily"),
        other => panic!("{other:?}"),
    }
    assert_eq!(p.jobs[2].store.as_deref(), Some("s3://other/prefix"));
    assert_eq!(p.jobs[2].schedule.to_string(), "cron \"0 30 * * * *\"");
    assert!(
        matches!(p.jobs[0].work, Work::Verify { within } if within == Duration::from_secs(2 * 86400))
    );
    let f = p.follow.unwrap();
    assert_eq!(
        (f.opts.group.as_str(), f.opts.interval),
        ("f", Duration::from_secs(10))
    );
}

#[test]
fn flags_and_file_add_up_and_flags_win_listen() {
    let p = plan_of(
        "--snapshot-every 5m --group g --tag a=b --prune-every 1h --keep-last 3 --listen none --follow",
        "[serve.jobs.other]\nkind = \"verify\"\nevery = \"1d\"\n[serve]\n",
    );
    // A [serve] table after its sub-table is still one table in TOML.
    let p = p.unwrap();
    let names: Vec<_> = p.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["snapshot", "prune", "other"]);
    assert_eq!(p.listen, None);
    assert!(p.follow.is_some());
    let p = plan_of("--verify-every 1h", "").unwrap();
    assert_eq!(p.listen, Some(DEFAULT_LISTEN.parse().unwrap()));
    // [serve.follow] enabled = false, and --no-follow, leave the follower out.
    let p = plan_of("--verify-every 1h", "[serve.follow]\nenabled = false\n").unwrap();
    assert!(p.follow.is_none());
    let p = plan(
        &args("--verify-every 1h --no-follow"),
        &section("").unwrap(),
        0,
        true,
    )
    .unwrap();
    assert!(p.follow.is_none());
    let p = plan(&args("--verify-every 1h"), &section("").unwrap(), 0, true).unwrap();
    assert!(
        p.follow.is_some(),
        "an archive in the store turns the follower on"
    );
}

#[test]
fn bad_settings_are_usage_errors_that_say_where() {
    // (flags, file, words of the error)
    let cases = [
        ("", "", "serve has no job: add one with --snapshot-every"),
        ("--all-groups", "", "add --snapshot-every"),
        ("--keep-daily 3", "", "add --prune-every"),
        ("--prune-every 1h", "", "no retention policy"),
        ("--snapshot-every 5m", "", "nothing"),
        ("--snapshot-every 0s --all-groups", "", "--snapshot-every 0s"),
        ("--verify-every 1h --listen localhost", "", "--listen localhost"),
        ("", "[serve.jobs.a]\nevery = \"1h\"\n", "[serve.jobs.a]: no `kind`"),
        (
            "",
            "[serve.jobs.a]\nkind = \"backup\"\nevery = \"1h\"\n",
            "kind = \"backup\": expected one of snapshot, prune, verify, expiry-guard",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"verify\"\n",
            "[serve.jobs.a]: give exactly one of `every`",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"verify\"\nevery = \"1h\"\ncron = \"* * * * *\"\n",
            "exactly one of",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"verify\"\ncron = \"99 * * * *\"\n",
            "[serve.jobs.a]: cron = \"99 * * * *\"",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"1h\"\nall-groups = true\nkeep-daily = 3\n",
            "[serve.jobs.a]: unknown key `keep-daily`",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"1h\"\nall-groups = \"yes\"\n",
            "key `all-groups`: expected true or false",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"snapshot\"\nevery = \"1h\"\nall-groups = true\nmetrics-textfile = \"x\"\n",
            "unknown key `metrics-textfile`",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"prune\"\nevery = \"1h\"\nkeep-daily = \"many\"\n",
            "[serve.jobs.a]: --keep-daily many",
        ),
        (
            "",
            "[serve.jobs.a]\nkind = \"prune\"\nevery = \"1h\"\n",
            "[serve.jobs.a]: no retention policy",
        ),
        ("", "[serve.jobs.\"a/b\"]\nkind = \"verify\"\nevery = \"1h\"\n", "job name \"a/b\""),
        ("", "[serve]\nlisten = 3\n", "(line 2): [serve]: invalid type"),
        ("", "[serve]\njob = {}\n", "unknown field `job`"),
        ("--verify-every 1h", "[serve.follow]\ngroup = \"x\"\n", "[serve.follow]: unknown key `group`"),
        (
            "--snapshot-every 1h --all-groups",
            "[serve.jobs.snapshot]\nkind = \"verify\"\nevery = \"1h\"\n",
            "two jobs are named \"snapshot\"",
        ),
    ];
    for (line, file, words) in cases {
        match plan_of(line, file) {
            Ok(p) => panic!("{line} / {file}: accepted {p:?}"),
            Err(e) => {
                assert_eq!(e.exit_code(), exit::USAGE, "{line} / {file}: {e}");
                assert!(e.to_string().contains(words), "{line} / {file}: {e}");
            }
        }
    }
}

#[test]
fn the_expiry_guard_is_a_job_of_the_flags_and_of_the_file() {
    let p = plan_of("--expiry-every 6h --expiry-margin 2d", "").unwrap();
    assert_eq!(p.jobs.len(), 1);
    assert_eq!(p.jobs[0].name, "expiry-guard");
    assert_eq!(p.jobs[0].work.kind(), "expiry-guard");
    match &p.jobs[0].work {
        Work::Expiry(o) => {
            assert_eq!(o.margin, Duration::from_secs(2 * 86400));
            assert!(o.selection.all_groups && o.snapshot);
        }
        other => panic!("{other:?}"),
    }
    let p = plan_of(
        "",
        r#"
        [serve.jobs.guard]
        kind = "expiry-guard"
        every = "1h"
        group-pattern = "billing-.*"
        expiry-margin = "12h"
        no-snapshot = true
        tags = ["team=billing"]
        "#,
    )
    .unwrap();
    match &p.jobs[0].work {
        Work::Expiry(o) => {
            assert_eq!(o.margin, Duration::from_secs(12 * 3600));
            assert_eq!(o.selection.group_pattern.as_deref(), Some("billing-.*"));
            assert!(!o.selection.all_groups && !o.snapshot);
            assert_eq!(o.tags["team"], "billing");
        }
        other => panic!("{other:?}"),
    }
    // The guard sets its own tag; a margin without a schedule is a usage error.
    let e = plan_of(
        "",
        "[serve.jobs.g]\nkind = \"expiry-guard\"\nevery = \"1h\"\ntags = [\"expiry-guard=no\"]\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("[serve.jobs.g]"), "{e}");
    assert!(
        Line::try_parse_from(["offset-vault", "serve", "--expiry-margin", "1h"]).is_err(),
        "--expiry-margin needs --expiry-every"
    );
}

#[test]
fn the_shipped_example_configuration_is_accepted_as_it_stands() {
    let p = plan_of("", include_str!("../../deploy/systemd/config.toml"))
        .unwrap_or_else(|e| panic!("deploy/systemd/config.toml: {e}"));
    let kinds: Vec<(&str, &str)> = p
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.work.kind()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("expiry-guard", "expiry-guard"),
            ("prune", "prune"),
            ("snapshot", "snapshot"),
            ("verify", "verify")
        ]
    );
    assert!(p.follow.is_none(), "the example leaves the follower off");
}

#[test]
fn a_snapshot_job_encrypts_connector_secrets_to_its_recipients() {
    let key = age::x25519::Identity::generate().to_public().to_string();
    let text = format!(
        "[serve.jobs.enc]\nkind = \"snapshot\"\nevery = \"1h\"\nall-connectors = true\nencrypt-to = [\"{key}\"]\n"
    );
    let p = plan_of("", &text).unwrap();
    match &p.jobs[0].work {
        Work::Snapshot(o) => {
            assert_eq!(
                o.encrypt_to.as_ref().map(|r| r.keys()),
                Some(vec![key.clone()])
            );
        }
        other => panic!("{other:?}"),
    }
    // The flags' job too; a malformed recipient is a usage error naming the job.
    let p = plan_of(
        &format!("--snapshot-every 5m --all-connectors --encrypt-to {key}"),
        "",
    )
    .unwrap();
    match &p.jobs[0].work {
        Work::Snapshot(o) => assert!(o.encrypt_to.is_some()),
        other => panic!("{other:?}"),
    }
    let bad = text.replace(&key, "age1bad");
    let err = plan_of("", &bad).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    let msg = err.to_string();
    assert!(
        msg.contains("[serve.jobs.enc]") && msg.contains("age1bad"),
        "{msg}"
    );
}
