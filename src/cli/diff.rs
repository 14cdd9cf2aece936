//! `offset-vault diff`: two snapshots, or a snapshot and the cluster now; the sides are read and
//! compared by [`crate::commands::diff`].
//!
//! The partition rows are printed as the merge finds them (see `print`), so the output itself
//! holds no rows in memory.

mod print;

use std::sync::Arc;

use chrono::Utc;

use super::Cli;
use crate::commands::diff::DiffArgs;
use crate::commands::diff::{self as command, Compared, Side};
use crate::config::OutputFormat;
use crate::diff::PartitionDiff;
use crate::error::{Error, Result};
use crate::snapshot::choose::Eligible;

pub async fn run(cli: &Cli, args: &DiffArgs) -> Result<i32> {
    let now = Utc::now();
    let filter = args.filter();
    let (old_side, new_side) = command::args_sides(args, &filter, now)?;
    let eligible = Eligible {
        groups: args.groups.clone(),
        connectors: args.connectors.clone(),
        ..Default::default()
    };
    let kafka_settings = matches!(new_side, Side::Live)
        .then(|| cli.global.kafka_settings())
        .transpose()?;
    let store = cli.global.open_existing_store()?;
    crate::progress::stage("diff: reading and verifying the two sides", 0);
    let mut old = command::load(&store, &eligible, old_side).await?;
    old.rename = args.names.topic_map()?.map(Arc::new);
    if old.rename.is_some() && !matches!(new_side, Side::Live) {
        return Err(Error::usage(
            "--topic-map and --replication-policy compare a snapshot with another cluster: add --live",
        ));
    }
    let (new, live) = match new_side {
        Side::Live => {
            let settings = kafka_settings.expect("read for --live");
            let clients = || cli.global.connect_clients();
            let batch = usize::try_from(args.batch_partitions).unwrap_or(usize::MAX);
            let other = args.allow_other_cluster;
            let (read, live) =
                command::read_live(settings, clients, other, batch, &filter, &old).await?;
            (read, Some(live))
        }
        side => (command::load(&store, &eligible, side).await?, None),
    };
    let compared = Compared::new(old, new, live, filter);
    crate::progress::finish();
    let errors = std::cell::RefCell::new(Vec::new());
    let rows = |which: u8| compared.rows(which, &errors);
    let shown = |d: &PartitionDiff| args.all || d.is_notable();
    let (old, new, connectors) = (
        &compared.old.label,
        &compared.new.label,
        &compared.connectors,
    );
    let counts = match cli.global.output {
        OutputFormat::Json => print::json(old, new, &rows, &shown, connectors)?,
        OutputFormat::Table => print::table(old, new, &rows, &shown, connectors)?,
    };
    compared.check(&errors)?;
    Ok(command::exit_code(args.exit_code, &counts, connectors))
}
