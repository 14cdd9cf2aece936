//! The options of `restore` and `reset` that carry offsets to another cluster (a MirrorMaker 2
//! replica, a staging cluster), and `--rehearse-on`.

use std::path::Path;

use serde_json::{json, Value};

use crate::commands::staging::Staging;
use crate::config::OutputFormat;
use crate::kafka::KafkaClient;

/// What a rehearsal's JSON document says besides the outcome: where it ran, and the command
/// for production.
/// `snapshot`: the snapshot a restore rehearsed, which the production command names.
pub fn rehearsal_json(s: &Staging, kafka: &KafkaClient, snapshot: Option<&str>) -> Value {
    json!({
        "staging": s.name,
        "staging_cluster_id": kafka.cluster_id(),
        "production_changed": false,
        "production_command": crate::commands::staging::production_command(&argv(), snapshot),
    })
}

/// After a rehearsal (table output): where it ran, how it ended, and the command for
/// production.
pub fn print_rehearsal(
    output: OutputFormat,
    s: &Staging,
    kafka: &KafkaClient,
    code: i32,
    snapshot: Option<&str>,
) {
    if output != OutputFormat::Table {
        return;
    }
    crate::outln!();
    crate::outln!(
        "rehearsed on {} (cluster {}): exit code {code}; the production cluster was only read",
        s.name,
        kafka.cluster_id()
    );
    crate::outln!(
        "for production: {}",
        crate::commands::staging::production_command(&argv(), snapshot)
    );
}

/// This command line, with the program named by its file name.
fn argv() -> Vec<String> {
    let mut argv: Vec<String> = std::env::args().collect();
    if let Some(first) = argv.first_mut() {
        if let Some(name) = Path::new(first.as_str()).file_name() {
            *first = name.to_string_lossy().into_owned();
        }
    }
    argv
}
