//! `keygen`: a signing key pair.

use serde_json::json;

use super::output::print_json;
use super::Cli;
use crate::audit::{EventType, Facts};
use crate::commands::sign::{ApproveArgs, KeygenArgs};
use crate::config::OutputFormat;
use crate::error::{exit, Result};

pub fn cmd_keygen(cli: &Cli, args: &KeygenArgs) -> Result<i32> {
    let key = crate::sign::keygen(&args.out)?;
    let name = args.out.file_name().unwrap_or_default().to_string_lossy();
    let secret = args.out.with_file_name(format!("{name}.key"));
    let public = args.out.with_file_name(format!("{name}.pub"));
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "key_id": key.id(),
            "secret_key": secret,
            "public_key": public,
        })),
        OutputFormat::Table => {
            crate::outln!("key id      {}", key.id());
            crate::outln!(
                "secret key  {} (keep it secret: it signs)",
                secret.display()
            );
            crate::outln!(
                "public key  {} (give it to whoever verifies)",
                public.display()
            );
        }
    }
    Ok(exit::OK)
}

/// Adds an approval to a plan file, after showing what is approved. The file is replaced
/// atomically: it holds either the old approvals or all of them. With a store configured, the
/// approval is recorded in its audit trail (`--audit` applies); without one it is not.
pub async fn cmd_approve(cli: &Cli, args: &ApproveArgs) -> Result<i32> {
    use crate::restore::review::PlanFile;
    let path = &args.plan;
    let name = path.display().to_string();
    let (mut file, groups) = PlanFile::read_streamed(path, None)?;
    let (source, text) = crate::sign::key_text("--key", &args.key)?;
    let key = crate::sign::SecretKey::from_pem(&source, &text)?;
    let keys = cli.global.keys()?;
    let recorded = cli.global.store.is_some();
    if !recorded {
        crate::noteln!(
            "no store is configured: this approval is not recorded in an audit trail (the restore that applies the plan records its approvals)"
        );
    }
    let trail = super::audit::begin(cli, EventType::Approve, recorded, false).await?;
    let mut facts = Facts {
        subject: Some(file.sha256.clone()),
        plan_sha256: Some(file.sha256.clone()),
        snapshot_ids: vec![file.body.snapshot_id.clone()],
        groups: groups
            .reader()?
            .map(|g| g.map(|g| crate::restore::plan::group_change(&g)))
            .collect::<Result<_>>()?,
        ..Default::default()
    };
    facts.detail.insert("approved_by".into(), key.id().into());
    facts.detail.insert("plan_file".into(), name.clone().into());
    let result = approve(cli, &mut file, &groups, &name, &key, &keys);
    super::audit::finish(trail, facts, &result).await;
    result
}

fn approve(
    cli: &Cli,
    file: &mut crate::restore::review::PlanFile,
    groups: &crate::spool::Spool<crate::restore::plan::GroupPlan>,
    name: &str,
    key: &crate::sign::SecretKey,
    keys: &crate::sign::Keys,
) -> Result<i32> {
    crate::restore::approval::approve(file, name, key, keys)?;
    let trust = crate::restore::approval::judge(file, keys);
    // Written again from the groups read, to a new file that replaces the old one at once.
    let written = crate::restore::review::PlanFile::write_streamed(
        std::path::Path::new(name),
        file.body.clone(),
        &mut groups.reader()?,
        file.signatures.clone(),
        None,
    )
    .map_err(|e| {
        crate::error::Error::usage(format!(
            "cannot write {name}: {e}; the plan file is unchanged"
        ))
    })?;
    if written.sha256 != file.sha256 {
        return Err(crate::error::Error::Internal(format!(
            "{name} was written again with another checksum ({} instead of {}); approve it again",
            written.sha256, file.sha256
        )));
    }
    print_approval(cli.global.output, file, name, key, &trust);
    Ok(exit::OK)
}

/// What was approved, and the approvals the file now holds.
fn print_approval(
    output: OutputFormat,
    file: &crate::restore::review::PlanFile,
    name: &str,
    key: &crate::sign::SecretKey,
    trust: &crate::restore::approval::PlanTrust,
) {
    let b = &file.body;
    let s = &b.plan.summary;
    let kind = if b.reset.is_some() {
        "reset"
    } else {
        "restore"
    };
    let approvals: Vec<String> = file
        .signatures
        .iter()
        .filter(|s| s.purpose == crate::sign::Purpose::PlanApproval)
        .map(|s| s.key_id.clone())
        .collect();
    match output {
        OutputFormat::Json => print_json(&json!({
            "plan": name,
            "sha256": file.sha256,
            "kind": kind,
            "snapshot_id": b.snapshot_id,
            "cluster_id": b.cluster_id,
            "author": trust.author,
            "approved_by": key.id(),
            "approvals": approvals,
        })),
        OutputFormat::Table => {
            crate::outln!("approved   {name} (sha256 {})", file.sha256);
            crate::outln!(
                "plan       {kind} of {} on cluster {} ({}), made {}",
                b.snapshot_id,
                b.cluster_id,
                b.bootstrap_servers,
                b.created_at.to_rfc3339()
            );
            crate::outln!(
                "changes    {} partition(s) of {} group(s): {} record(s) to reprocess, {} to skip",
                s.changes,
                s.groups,
                s.reprocess,
                s.skip
            );
            crate::outln!(
                "author     {}",
                super::output::signature_text(&trust.author)
            );
            crate::outln!("by         key {}", key.id());
            crate::outln!(
                "approvals  {} in the file: {}",
                approvals.len(),
                approvals.join(", ")
            );
        }
    }
}
