//! One function per command: validate, call the library, print.

use chrono::Utc;
use serde_json::json;

use super::output::{self, print_json};
use super::{Cli, Command};
use crate::commands::list::ListArgs;
use crate::commands::list::{self};
use crate::commands::show::{ShowArgs, Shown};
use crate::commands::snapshot::SnapshotArgs;
use crate::commands::verify;
use crate::commands::verify::VerifyArgs;
use crate::config::OutputFormat;
use crate::error::{exit, Result};
use crate::kafka::KafkaClient;
use crate::serve::metrics::{self, one_shot_textfile, Outcome};
use crate::sign::Verdict;
use crate::snapshot;
use crate::snapshot::repo;

/// Runs a parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> Result<i32> {
    match &cli.command {
        Command::Snapshot(args) => cmd_snapshot(&cli, args).await,
        Command::List(args) => cmd_list(&cli, args).await,
        Command::Show(args) => cmd_show(&cli, args).await,
        Command::Verify(args) => cmd_verify(&cli, args).await,
        Command::Diff(args) => super::diff::run(&cli, args).await,
        Command::Reset(args) => super::reset::cmd_reset(&cli, args).await,
        Command::Restore(args) => super::restore::cmd_restore(&cli, args).await,
        Command::Follow(args) => super::follow::cmd_follow(&cli, args).await,
        Command::Expiring(args) => super::expiring::cmd_expiring(&cli, args).await,
        Command::History(args) => super::log::cmd_history(&cli, args).await,
        Command::Prune(args) => super::prune::run(&cli, args).await,
        Command::Export(args) => super::csv::export(&cli, args).await,
        Command::Import(args) => super::csv::cmd_import(&cli, args).await,
        Command::Guard(args) => super::guard::cmd_guard(&cli, args).await,
        Command::Serve(args) => super::serve::cmd_serve(&cli, args).await,
        Command::Keygen(args) => super::sign::cmd_keygen(&cli, args),
        Command::Approve(args) => super::sign::cmd_approve(&cli, args).await,
        Command::Audit(args) => super::audit::cmd_audit(&cli, args).await,
        Command::Config(command) => super::config::commands::run(&cli, command),
        Command::Mcp(args) => super::mcp::cmd_mcp(&cli, args).await,
        Command::Completions(args) => super::completions::cmd_completions(args),
        Command::Man(args) => super::completions::cmd_man(args),
    }
}

async fn cmd_snapshot(cli: &Cli, args: &SnapshotArgs) -> Result<i32> {
    let started = std::time::Instant::now();
    let mut taken = None;
    let result = snapshot(cli, args, &mut taken).await;
    let outcome = Outcome::of(&result);
    one_shot_textfile(
        args.metrics_textfile.as_deref(),
        "snapshot",
        outcome,
        started.elapsed(),
        |m| {
            if let Some((groups, rows)) = taken {
                let l = metrics::job("snapshot");
                m.snapshot_groups.get_or_create(&l).set(groups);
                m.snapshot_rows.get_or_create(&l).set(rows);
            }
        },
    )?;
    result
}

async fn snapshot(cli: &Cli, args: &SnapshotArgs, taken: &mut Option<(i64, i64)>) -> Result<i32> {
    // Everything that can be checked without I/O is checked first.
    let connect = cli.global.connect_clients()?;
    let opts = args.capture_options(connect.len())?;
    let settings = cli.global.kafka_settings()?;
    let store = cli.global.open_store()?;
    args.log_secrets(&opts);

    let kafka = KafkaClient::connect(settings).await?;
    let (manifest, warnings) = snapshot::take(&store, &kafka, &connect, &opts).await?;
    *taken = Some((
        manifest.summary.groups as i64,
        manifest.summary.partitions as i64,
    ));
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "id": manifest.meta.id,
            "store": store.url(),
            "created_at": manifest.meta.created_at,
            "cluster_id": manifest.meta.cluster_id,
            "format": manifest.format,
            "summary": manifest.summary,
            "files": manifest.files,
            "tags": manifest.meta.tags,
            "warnings": warnings,
            "encrypted_secrets": manifest.encrypted_secrets,
        })),
        OutputFormat::Table => {
            let s = &manifest.summary;
            crate::noteln!(
                "snapshot of {} group(s), {} partition(s), {} connector(s) written to {}",
                s.groups,
                s.partitions,
                s.connectors,
                store.url()
            );
            if let Some(e) = &manifest.encrypted_secrets {
                crate::noteln!(
                    "connector secrets stored only encrypted, in {}, to {} recipient(s)",
                    e.file,
                    e.recipients.len()
                );
            }
            crate::outln!("{}", manifest.meta.id);
        }
    }
    Ok(exit::OK)
}

async fn cmd_list(cli: &Cli, args: &ListArgs) -> Result<i32> {
    let filter = args.filter(Utc::now())?;
    let store = cli.global.open_existing_store()?;
    let listed = list::list(&store, &filter).await?;
    match cli.global.output {
        OutputFormat::Json => print_json(&output::list_json(&listed)),
        OutputFormat::Table => output::print_list(&listed),
    }
    Ok(exit::OK)
}

async fn cmd_show(cli: &Cli, args: &ShowArgs) -> Result<i32> {
    let id = match args.target()? {
        Shown::At(at) => return super::at::show(cli, args, at).await,
        Shown::Snapshot(id) => id,
    };
    let store = cli.global.open_existing_store()?;
    let manifest = repo::resolve(&store, id).await?;
    let opened = repo::open_verified(&store, &manifest).await?;
    let map = args.names.topic_map()?;
    match cli.global.output {
        OutputFormat::Json => print_show_json(&opened, map.as_ref())?,
        OutputFormat::Table => output::print_snapshot(&opened, map.as_ref())?,
    }
    Ok(exit::OK)
}

/// `show --output json`, written as the groups are read. With a topic map, a partition whose
/// topic another cluster names otherwise has that name as `topic` and the snapshot's as
/// `source_topic`.
fn print_show_json(opened: &repo::Opened, map: Option<&crate::mirror::TopicMap>) -> Result<()> {
    use std::io::Write;
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        schema_version: u32,
        manifest: &'a crate::snapshot::Manifest,
        signature: &'a crate::sign::Verdict,
        groups: &'a crate::format::json::SeqOf<'a, serde_json::Value>,
        connectors: &'a [crate::snapshot::ConnectorSnapshot],
    }
    let mut stream = opened.groups();
    let error = stream.error_slot();
    let as_json = |g: crate::snapshot::GroupSnapshot| -> Result<serde_json::Value> {
        let mut names = Vec::new();
        if let Some(map) = map {
            names = g
                .partitions
                .iter()
                .map(|p| output::mapped(map, &p.topic))
                .collect();
        }
        let mut v =
            serde_json::to_value(&g).map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        if let Some(parts) = v["partitions"].as_array_mut() {
            for (p, name) in parts.iter_mut().zip(names) {
                if let (Some(name), Some(p)) = (name, p.as_object_mut()) {
                    let old = p.insert("topic".into(), name.into());
                    if let Some(old) = old {
                        p.insert("source_topic".into(), old);
                    }
                }
            }
        }
        Ok(v)
    };
    let mut groups = std::iter::from_fn(|| stream.next().map(as_json));
    let seq = crate::format::json::SeqOf::new(&mut groups);
    let doc = Doc {
        schema_version: crate::schema::SCHEMA_VERSION,
        manifest: &opened.manifest,
        signature: &opened.signature,
        groups: &seq,
        connectors: &opened.connectors,
    };
    let io =
        |e: &dyn std::fmt::Display| crate::error::Error::Internal(format!("write to stdout: {e}"));
    let mut out = std::io::BufWriter::new(crate::console::QuietStdout);
    serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| seq.error_or(|| io(&e)))?;
    writeln!(out).map_err(|e| io(&e))?;
    out.flush().map_err(|e| io(&e))?;
    if let Some(e) = error.lock().expect("not poisoned").take() {
        return Err(e);
    }
    Ok(())
}

/// `verify ID` checks one snapshot; `verify --all` every snapshot, and the commit-log archive
/// and the apply records (a problem in either fails the verification; notes such as orphan
/// data files and recorded gaps do not).
async fn cmd_verify(cli: &Cli, args: &VerifyArgs) -> Result<i32> {
    let store = cli.global.open_existing_store()?;
    let id = (!args.all).then(|| args.id.as_deref().unwrap_or_default());
    let v = verify::verify(&store, id).await?;
    match cli.global.output {
        OutputFormat::Json => {
            let mut doc = json!({
                "verified": v.snapshots.len(),
                "failed": v.failed(),
                "unsigned": v.unsigned(),
                "untrusted": v.untrusted(),
                "snapshots": v.snapshots.iter().map(|c| json!({
                    "id": c.id,
                    "ok": !c.corrupt() && v.accepted(&c.signature),
                    "problems": c.problems,
                    "signature": c.signature,
                })).collect::<Vec<_>>(),
            });
            if let Some(l) = &v.log {
                doc["log"] = json!(l);
            }
            print_json(&doc)
        }
        OutputFormat::Table => print_verification(&v),
    }
    Ok(v.exit_code())
}

/// Each snapshot verified, with its problems, then the totals and the archive's part.
fn print_verification(v: &verify::Verification) {
    for c in &v.snapshots {
        let s = &c.signature;
        let word = if c.corrupt() {
            "FAILED"
        } else if !v.accepted(s) {
            match s {
                Verdict::Unsigned => "UNSIGNED",
                _ => "UNTRUSTED",
            }
        } else {
            "OK"
        };
        crate::outln!("{word:<7} {}  ({})", c.id, s.describe());
        for p in &c.problems {
            crate::outln!("        - {p}");
        }
        if let Some(why) = s.refusal().filter(|_| c.corrupt() || !v.accepted(s)) {
            if matches!(s, Verdict::Invalid { .. }) || v.enforcing {
                crate::outln!("        - {why}");
            }
        }
    }
    crate::noteln!(
        "{} snapshot(s) verified, {} failed, {} unsigned, {} signed by an untrusted key{}",
        v.snapshots.len(),
        v.failed(),
        v.unsigned(),
        v.untrusted(),
        if v.enforcing {
            ""
        } else {
            " (no --trusted-key given: signatures are not required)"
        }
    );
    if let Some(l) = &v.log {
        print_log_report(l);
    }
}

/// The archive's part of `verify --all`, for people.
fn print_log_report(l: &crate::log::verify::LogReport) {
    let label = |f: &crate::log::verify::Finding| match f.partition {
        Some(p) => format!("partition {p}: {}", f.key),
        None => f.key.clone(),
    };
    for f in &l.problems {
        let kind = serde_json::to_value(f.kind).unwrap_or_default();
        crate::outln!(
            "FAILED  log {} {}\n        - {}",
            kind.as_str().unwrap_or_default(),
            label(f),
            f.detail
        );
    }
    for f in &l.notes {
        let kind = serde_json::to_value(f.kind).unwrap_or_default();
        crate::outln!(
            "NOTE    log {} {}\n        - {}",
            kind.as_str().unwrap_or_default(),
            label(f),
            f.detail
        );
    }
    crate::noteln!(
        "commit-log archive: {} partition(s), {} index entries, {} data file(s) re-hashed, {} apply record(s): {} problem(s), {} note(s)",
        l.partitions,
        l.manifests,
        l.segments_checked,
        l.apply_records,
        l.problems.len(),
        l.notes.len()
    );
}
