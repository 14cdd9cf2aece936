//! `offset-vault expiring`: the Empty groups whose offsets the broker is about to expire, and a
//! snapshot of them (the expiry guard, once).

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::output::{print_json, right, table};
use super::Cli;
use crate::commands::expiring::{options, ExpiringArgs};
use crate::config::OutputFormat;
use crate::error::{exit, Result};
use crate::expiry::{self, ExpiryReport};
use crate::kafka::KafkaClient;

pub async fn cmd_expiring(cli: &Cli, args: &ExpiringArgs) -> Result<i32> {
    use crate::serve::metrics::{one_shot_textfile, Outcome};
    let started = std::time::Instant::now();
    let mut near = None;
    let result = run(cli, args, &mut near).await;
    let outcome = Outcome::of(&result);
    one_shot_textfile(
        args.metrics_textfile.as_deref(),
        "expiring",
        outcome,
        started.elapsed(),
        |m| {
            if let Some(n) = near {
                m.groups_near_expiry.set(n);
            }
        },
    )?;
    result
}

async fn run(cli: &Cli, args: &ExpiringArgs, near: &mut Option<i64>) -> Result<i32> {
    let connect = cli.global.connect_clients()?;
    let opts = options(args, connect.len())?;
    let settings = cli.global.kafka_settings()?;
    let store = cli.global.open_store()?;
    let kafka = KafkaClient::connect(settings).await?;
    let report = expiry::guard(&kafka, &store, &connect, &opts).await?;
    *near = Some(report.groups.len() as i64);
    match cli.global.output {
        OutputFormat::Json => {
            let mut doc = serde_json::to_value(&report)
                .map_err(|e| crate::Error::Internal(format!("the report as JSON: {e}")))?;
            doc["store"] = store.url().into();
            print_json(&doc);
        }
        OutputFormat::Table => print_table(&report),
    }
    Ok(exit::OK)
}

fn print_table(report: &ExpiryReport) {
    let retention = humantime::format_duration(report.retention);
    let margin = humantime::format_duration(report.margin);
    if report.groups.is_empty() {
        crate::noteln!(
            "no Empty group loses offsets within {margin} ({} checked; offsets.retention.minutes = {})",
            report.checked,
            report.retention.as_secs() / 60
        );
        return;
    }
    let mut t = table(&[
        "GROUP",
        "STATE",
        "PARTITIONS",
        "NEWEST COMMIT (UTC)",
        "EXPIRES AT (UTC)",
        "IN",
    ]);
    for g in &report.groups {
        t.add_row(vec![
            g.group.clone(),
            g.state.name().to_string(),
            g.partitions.to_string(),
            g.newest_commit.format("%Y-%m-%d %H:%M:%S").to_string(),
            g.expires_at.format("%Y-%m-%d %H:%M:%S").to_string(),
            until(g.expires_at, report.checked_at),
        ]);
    }
    right(&mut t, &[2, 5]);
    crate::outln!("{t}");
    crate::noteln!(
        "{} of {} Empty group(s) lose offsets within {margin} (retention {retention})",
        report.groups.len(),
        report.checked
    );
    match &report.snapshot_id {
        Some(id) => crate::noteln!("snapshot {id} (tag {}=true) holds them", expiry::TAG),
        None => crate::noteln!("no snapshot taken (--no-snapshot)"),
    }
    crate::noteln!("to bring one back after it expired:");
    for g in &report.groups {
        crate::noteln!("  {}", g.restore_hint);
    }
    if let Some(id) = &report.snapshot_id {
        crate::outln!("{id}");
    }
}

/// "3h 20m", or "passed" when the instant is not after `now`, in whole seconds.
fn until(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let left = (at - now).num_seconds();
    if left <= 0 {
        return "passed".into();
    }
    humantime::format_duration(Duration::from_secs(left as u64)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_time_left_is_in_whole_seconds_and_passed_once_due() {
        let now = Utc.timestamp_opt(1_000_000, 0).unwrap();
        let cases = [
            (
                now + chrono::Duration::seconds(3 * 3600 + 20 * 60),
                "3h 20m",
            ),
            (now + chrono::Duration::milliseconds(59_900), "59s"),
            (now, "passed"),
            (now - chrono::Duration::seconds(5), "passed"),
        ];
        for (at, want) in cases {
            assert_eq!(until(at, now), want);
        }
    }
}
