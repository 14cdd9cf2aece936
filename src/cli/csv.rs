//! `offset-vault export` and `import`: kafka-consumer-groups CSV out of and into the store; the
//! flags and the printing ([`crate::commands::export`], [`crate::commands::import`] do the work).

use chrono::Utc;
use serde_json::json;

use super::output::print_json;
use super::Cli;
use crate::commands::export::{self, ExportArgs};
use crate::commands::import::{self, ImportArgs};
use crate::config::OutputFormat;
use crate::error::{exit, Error, Result};
use crate::format::csv::{self as csv_form, CsvOffset};
use crate::snapshot::model::GroupSnapshot;
use crate::snapshot::repo;

pub async fn cmd_import(cli: &Cli, args: &ImportArgs) -> Result<i32> {
    // Bad input is refused before the trail is opened: a refused import writes nothing.
    import::check_import(args)?;
    let trail = super::audit::begin(cli, crate::audit::EventType::Import, true, true).await?;
    let mut facts = crate::audit::Facts::default();
    let result = super::csv::import(cli, args, &mut facts).await;
    super::audit::finish(trail, facts, &result).await;
    result
}

pub async fn export(cli: &Cli, args: &ExportArgs) -> Result<i32> {
    let id = match (&args.id, &args.at) {
        (_, Some(at)) => return export_at(cli, args, at).await,
        (Some(id), None) => id,
        (None, None) => {
            return Err(Error::usage(
                "say what to export: a snapshot id, or --at TIME",
            ))
        }
    };
    let store = cli.global.open_existing_store()?;
    let manifest = repo::resolve(&store, id).await?;
    let opened = repo::open_verified(&store, &manifest).await?;
    let wanted = export::Wanted {
        named: &args.groups,
    };
    let groups = wanted.check(&manifest, &opened)?;
    let mut stream = opened.groups();
    let error = stream.error_slot();
    let mut rows = export::csv_rows(stream.by_ref().filter(|g| wanted.writes(g)));
    let stream_error = || error.lock().expect("not poisoned").take();
    let from = format!("snapshot {}", manifest.meta.id);
    write_csv(args, &mut rows, groups, &from, stream_error)
}

/// `export --at TIME`: the offsets at an instant, the groups with none then named on stderr.
async fn export_at(cli: &Cli, args: &ExportArgs, text: &str) -> Result<i32> {
    let filter = crate::diff::Filter {
        groups: args.groups.clone(),
        ..Default::default()
    };
    let req = crate::commands::at::request(text, filter, "export", Utc::now())?;
    let store = cli.global.open_existing_store()?;
    let read = crate::log::at::read(&store, &req).await?;
    crate::noteln!("{}", read.instant.describe());
    for note in super::at::notes(&read) {
        crate::noteln!("{note}");
    }
    let present: Vec<GroupSnapshot> = read.instant.present().cloned().collect();
    if present.is_empty() {
        return Err(Error::usage(format!(
            "no committed offsets at {} for the selected groups: nothing to export",
            crate::log::at::millis(req.at)
        )));
    }
    let groups = present.len();
    let mut rows = export::csv_rows(present.into_iter());
    let from = format!(
        "{} (snapshot {} and the commit log)",
        crate::log::at::millis(req.at),
        read.instant.base_id
    );
    write_csv(args, &mut rows, groups, &from, || None)
}

/// Writes the rows of `groups` groups to `--file` or stdout, in the one-group form when there
/// is one; `stream_error` is the error that ended the rows early, if one did.
fn write_csv(
    args: &ExportArgs,
    rows: &mut dyn Iterator<Item = Result<CsvOffset>>,
    groups: usize,
    from: &str,
    stream_error: impl Fn() -> Option<Error>,
) -> Result<i32> {
    match &args.file {
        Some(path) => {
            let written = export::write_file(path, rows, groups, stream_error)?;
            crate::noteln!(
                "{written} offset(s) of {groups} group(s) from {from} written to {}",
                path.display()
            );
        }
        None => {
            let out = std::io::BufWriter::new(crate::console::QuietStdout);
            csv_form::encode_to(out, rows, groups > 1)?;
            if let Some(e) = stream_error() {
                return Err(e);
            }
        }
    }
    Ok(exit::OK)
}

pub async fn import(cli: &Cli, args: &ImportArgs, facts: &mut crate::audit::Facts) -> Result<i32> {
    // The file, the groups and the tags are checked before connecting to anything.
    let file = import::check_import(args)?;
    let name = file.name.clone();
    let settings = cli.global.kafka_settings()?;
    let store = cli.global.open_store()?;
    let imported = import::import(&store, settings, file, args.format, facts).await?;
    let manifest = &imported.manifest;
    match cli.global.output {
        OutputFormat::Json => print_json(&json!({
            "id": manifest.meta.id,
            "kind": manifest.meta.kind,
            "store": store.url(),
            "created_at": manifest.meta.created_at,
            "cluster_id": manifest.meta.cluster_id,
            "summary": manifest.summary,
            "warnings": imported.warnings,
        })),
        OutputFormat::Table => {
            crate::noteln!(
                "imported {} offset(s) of {} group(s) from {name} as snapshot (kind import) in {}",
                manifest.summary.partitions,
                manifest.summary.groups,
                store.url()
            );
            crate::outln!("{}", manifest.meta.id);
        }
    }
    Ok(exit::OK)
}
