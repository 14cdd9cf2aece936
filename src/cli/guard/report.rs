//! What `guard` says once the command has ended: how it ended, what moved since the snapshot
//! (or that it could not be checked), and, when a rollback may be needed, the commands that do
//! it. Pure: the text is made here and printed by the caller.

use crate::guard::{Comparison, MovedConnector, MovedPartition};

/// `n thing(s)`.
fn count(n: impl std::fmt::Display, what: &str) -> String {
    format!("{n} {what}(s)")
}

/// One line saying what the comparison found.
pub fn summary(c: &Comparison) -> String {
    if !c.checked {
        let why = c.error.as_deref().unwrap_or("unknown error");
        return format!("could not check whether offsets moved: {why}; assume they may have");
    }
    let compared = format!(
        "{} of {}{}",
        count(c.partitions_compared, "partition"),
        count(c.groups_compared, "group"),
        if c.connectors_compared > 0 {
            format!(" and {}", count(c.connectors_compared, "connector"))
        } else {
            String::new()
        }
    );
    if !c.may_have_moved() {
        return format!("checked {compared} against the snapshot: nothing moved");
    }
    let mut parts = Vec::new();
    if c.partitions_moved > 0 {
        parts.push(format!(
            "{} of {} moved ({} to be processed again, moved backward; {} skipped, moved forward)",
            count(c.partitions_moved, "partition"),
            count(c.groups_moved, "group"),
            count(c.records_reprocessed, "record"),
            count(c.records_skipped, "record"),
        ));
    }
    if !c.connectors.is_empty() {
        let names: Vec<String> = c.connectors.iter().map(connector_text).collect();
        parts.push(format!("connector offsets moved: {}", names.join(", ")));
    }
    format!("offsets moved since the snapshot: {}", parts.join("; "))
}

fn connector_text(m: &MovedConnector) -> String {
    match m.change {
        crate::diff::ConnectorChange::Removed => format!("{} (not found now)", m.name),
        _ => format!("{} ({})", m.name, count(m.offsets_moved, "partition")),
    }
}

fn offset_text(o: Option<i64>) -> String {
    o.map_or_else(|| "none".to_string(), |o| o.to_string())
}

/// One listed partition: `g orders[0]: 10 -> 55 (+45, skipped)`.
pub fn partition_line(m: &MovedPartition) -> String {
    let mut notes = Vec::new();
    match (m.old, m.new, m.delta) {
        (_, _, Some(d)) if d > 0 => notes.push(format!("+{d}, skipped")),
        (_, _, Some(d)) if d < 0 => notes.push(format!("{d}, processed again")),
        (None, Some(_), _) => notes.push("newly committed".to_string()),
        (Some(_), None, _) => notes.push("deleted".to_string()),
        _ => {}
    }
    if m.topic_recreated {
        notes.push("topic recreated".to_string());
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    format!(
        "{} {}[{}]: {} -> {}{notes}",
        m.group,
        m.topic,
        m.partition,
        offset_text(m.old),
        offset_text(m.new)
    )
}

/// The listed partitions, indented, and how many more there are.
fn partition_lines(c: &Comparison, id: &str) -> String {
    let mut out = String::new();
    for m in &c.partitions {
        out.push_str(&format!("\n  {}", partition_line(m)));
    }
    if c.partitions_not_listed > 0 {
        out.push_str(&format!(
            "\n  ... and {} more partition(s) (`offset-vault diff {id} --live` lists them all)",
            c.partitions_not_listed
        ));
    }
    out
}

/// Everything `guard` says after the command, given its exit code, the snapshot id, the
/// comparison and (when a rollback may be needed) the dry run and the command that applies it.
pub fn after_command(
    exit_code: i32,
    id: &str,
    c: &Comparison,
    rollback: Option<&[String; 2]>,
) -> String {
    let ended = if exit_code == 0 {
        "the command succeeded".to_string()
    } else {
        format!("the command failed (exit code {exit_code})")
    };
    let found = summary(c);
    match rollback {
        Some([dry, apply]) => {
            let listed = if c.checked {
                partition_lines(c, id)
            } else {
                String::new()
            };
            format!(
                "{ended}; {found}.{listed}\nTo roll back to snapshot {id}, review the plan:\n  {dry}\nthen apply it:\n  {apply}"
            )
        }
        None if exit_code != 0 && !c.may_have_moved() => format!(
            "{ended}; {found}, so there is nothing to roll back; snapshot {id} stays as the rollback point"
        ),
        None => format!("{ended}; {found}; snapshot {id} stays as its rollback point"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::ConnectorChange;

    fn moved(partition: i32, old: Option<i64>, new: Option<i64>) -> MovedPartition {
        MovedPartition {
            group: "g".into(),
            topic: "orders".into(),
            partition,
            old,
            new,
            delta: old.zip(new).map(|(o, n)| n - o),
            topic_recreated: false,
        }
    }

    /// The reset of issue 17: 10,20,30 -> 55,5,30.
    fn reset() -> Comparison {
        Comparison {
            checked: true,
            error: None,
            groups_compared: 1,
            connectors_compared: 0,
            partitions_compared: 3,
            partitions_moved: 2,
            groups_moved: 1,
            records_reprocessed: 15,
            records_skipped: 45,
            groups: vec!["g".into()],
            partitions: vec![moved(0, Some(10), Some(55)), moved(1, Some(20), Some(5))],
            partitions_not_listed: 0,
            connectors: vec![],
        }
    }

    fn nothing() -> Comparison {
        Comparison {
            partitions_moved: 0,
            groups_moved: 0,
            records_reprocessed: 0,
            records_skipped: 0,
            groups: vec![],
            partitions: vec![],
            ..reset()
        }
    }

    #[test]
    fn the_summary_says_what_moved_or_that_nothing_did_or_that_it_could_not_check() {
        let connector = Comparison {
            connectors_compared: 2,
            connectors: vec![
                MovedConnector {
                    name: "src".into(),
                    change: ConnectorChange::Changed,
                    offsets_moved: 1,
                },
                MovedConnector {
                    name: "gone".into(),
                    change: ConnectorChange::Removed,
                    offsets_moved: 0,
                },
            ],
            ..nothing()
        };
        let cases = [
            (
                reset(),
                "offsets moved since the snapshot: 2 partition(s) of 1 group(s) moved (15 record(s) to be processed again, moved backward; 45 record(s) skipped, moved forward)",
            ),
            (
                nothing(),
                "checked 3 partition(s) of 1 group(s) against the snapshot: nothing moved",
            ),
            (
                connector,
                "offsets moved since the snapshot: connector offsets moved: src (1 partition(s)), gone (not found now)",
            ),
            (
                Comparison::failed("Kafka: BrokerTransportFailure"),
                "could not check whether offsets moved: Kafka: BrokerTransportFailure; assume they may have",
            ),
        ];
        for (c, want) in cases {
            assert_eq!(summary(&c), want);
        }
    }

    #[test]
    fn partition_lines_show_old_new_and_what_it_means() {
        let recreated = MovedPartition {
            topic_recreated: true,
            ..moved(3, Some(5), Some(5))
        };
        let cases = [
            (
                moved(0, Some(10), Some(55)),
                "g orders[0]: 10 -> 55 (+45, skipped)",
            ),
            (
                moved(1, Some(20), Some(5)),
                "g orders[1]: 20 -> 5 (-15, processed again)",
            ),
            (
                moved(2, None, Some(7)),
                "g orders[2]: none -> 7 (newly committed)",
            ),
            (moved(2, Some(7), None), "g orders[2]: 7 -> none (deleted)"),
            (recreated, "g orders[3]: 5 -> 5 (topic recreated)"),
        ];
        for (m, want) in cases {
            assert_eq!(partition_line(&m), want);
        }
    }

    #[test]
    fn a_failure_that_moved_offsets_lists_them_then_the_rollback() {
        let rollback = [
            "offset-vault restore S".to_string(),
            "offset-vault restore S --execute".to_string(),
        ];
        let text = after_command(3, "S", &reset(), Some(&rollback));
        assert_eq!(
            text,
            "the command failed (exit code 3); offsets moved since the snapshot: 2 partition(s) of 1 group(s) moved (15 record(s) to be processed again, moved backward; 45 record(s) skipped, moved forward).\n  g orders[0]: 10 -> 55 (+45, skipped)\n  g orders[1]: 20 -> 5 (-15, processed again)\nTo roll back to snapshot S, review the plan:\n  offset-vault restore S\nthen apply it:\n  offset-vault restore S --execute"
        );
        assert!(!text.contains("not touched"));

        let capped = Comparison {
            partitions_not_listed: 1200,
            ..reset()
        };
        let text = after_command(3, "S", &capped, Some(&rollback));
        assert!(
            text.contains("\n  g orders[1]: 20 -> 5 (-15, processed again)\n  ... and 1200 more partition(s) (`offset-vault diff S --live` lists them all)\nTo roll back"),
            "{text}"
        );

        let unknown = Comparison::failed("timed out");
        let text = after_command(3, "S", &unknown, Some(&rollback));
        assert!(
            text.starts_with("the command failed (exit code 3); could not check whether offsets moved: timed out; assume they may have.\nTo roll back"),
            "{text}"
        );
    }

    #[test]
    fn without_a_rollback_the_text_says_why() {
        let cases = [
            (
                3,
                nothing(),
                "the command failed (exit code 3); checked 3 partition(s) of 1 group(s) against the snapshot: nothing moved, so there is nothing to roll back; snapshot S stays as the rollback point",
            ),
            (
                0,
                nothing(),
                "the command succeeded; checked 3 partition(s) of 1 group(s) against the snapshot: nothing moved; snapshot S stays as its rollback point",
            ),
            (
                0,
                reset(),
                "the command succeeded; offsets moved since the snapshot: 2 partition(s) of 1 group(s) moved (15 record(s) to be processed again, moved backward; 45 record(s) skipped, moved forward); snapshot S stays as its rollback point",
            ),
            (
                0,
                Comparison::failed("timed out"),
                "the command succeeded; could not check whether offsets moved: timed out; assume they may have; snapshot S stays as its rollback point",
            ),
        ];
        for (code, c, want) in cases {
            assert_eq!(after_command(code, "S", &c, None), want);
        }
    }
}
