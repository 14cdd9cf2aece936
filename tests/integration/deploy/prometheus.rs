//! deploy/prometheus: the alerting rules, checked and unit-tested by promtool itself.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_yaml::Value;

use super::{deploy_dir, yaml_file};
use crate::support::tools::{self, run};

const RULES: &str = "offset-vault.rules.yml";
const RULE_TESTS: &str = "offset-vault.rules.test.yml";

fn prometheus_dir() -> PathBuf {
    deploy_dir().join("prometheus")
}

/// The alerts of the rule file, by name, with their rule objects.
fn alerts() -> BTreeMap<String, Value> {
    let rules = yaml_file(&prometheus_dir().join(RULES));
    let mut alerts = BTreeMap::new();
    for group in rules["groups"].as_sequence().expect("groups") {
        for rule in group["rules"].as_sequence().expect("rules") {
            if let Some(name) = rule["alert"].as_str() {
                alerts.insert(name.to_string(), rule.clone());
            }
        }
    }
    alerts
}

#[test]
fn promtool_checks_the_rule_file() {
    let Some(promtool) = tools::promtool() else {
        return;
    };
    let dir = prometheus_dir();
    let out = run(&promtool, ["check", "rules", RULES], &dir).ok("promtool check rules");
    let count = alerts().len();
    assert!(count >= 7, "expected at least 7 alerts, found {count}");
    assert!(
        out.stdout
            .contains(&format!("SUCCESS: {count} rules found")),
        "promtool did not find the {count} rules:\n{}",
        out.stdout
    );
}

#[test]
fn promtool_unit_tests_of_the_rules_pass() {
    let Some(promtool) = tools::promtool() else {
        return;
    };
    let out =
        run(&promtool, ["test", "rules", RULE_TESTS], &prometheus_dir()).ok("promtool test rules");
    assert!(out.stdout.contains("SUCCESS"), "{}", out.stdout);
}

/// The unit tests can fail: with the "twice the interval" threshold changed to three times, or the
/// aggregation over replicas removed, `promtool test rules` must report failures.
#[test]
fn promtool_unit_tests_catch_a_broken_rule() {
    let Some(promtool) = tools::promtool() else {
        return;
    };
    let rules = std::fs::read_to_string(prometheus_dir().join(RULES)).unwrap();
    let tests = std::fs::read_to_string(prometheus_dir().join(RULE_TESTS)).unwrap();
    for (from, to) in [
        ("> 2 * max without", "> 3 * max without"),
        (
            "max without (instance, pod) (max_over_time(offset_vault_job_last_success_timestamp_seconds[3d]))\n          )",
            "min without (instance, pod) (offset_vault_job_last_success_timestamp_seconds)\n          )",
        ),
        ("(offset_vault_groups_near_expiry) > 0", "(offset_vault_groups_near_expiry) > 2"),
    ] {
        assert!(rules.contains(from), "the rule file no longer contains {from:?}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RULES), rules.replacen(from, to, 1)).unwrap();
        std::fs::write(dir.path().join(RULE_TESTS), &tests).unwrap();
        let out = run(&promtool, ["test", "rules", RULE_TESTS], dir.path());
        assert!(
            !out.success && out.stderr.contains("FAILED"),
            "the unit tests still pass with {from:?} changed to {to:?}:\n{}{}",
            out.stdout,
            out.stderr
        );
    }
}

/// Every alert has a severity, a summary and a description, and unit-test cases where it fires
/// and where it does not.
#[test]
fn every_alert_is_documented_and_tested_both_ways() {
    let alerts = alerts();
    for name in [
        "OffsetVaultScheduledRunMissing",
        "OffsetVaultJobNeverSucceeded",
        "OffsetVaultMetricsAbsent",
        "OffsetVaultFollowerBehind",
        "OffsetVaultVerifyFailed",
        "OffsetVaultGroupsNearExpiry",
        "OffsetVaultJobFailing",
    ] {
        assert!(
            alerts.contains_key(name),
            "the rule file has no alert {name}"
        );
    }
    for (name, rule) in &alerts {
        let severity = rule["labels"]["severity"].as_str().unwrap_or_default();
        assert!(
            ["critical", "warning"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        for annotation in ["summary", "description"] {
            let text = rule["annotations"][annotation].as_str().unwrap_or_default();
            assert!(
                text.len() > 20,
                "{name} has no useful {annotation}: {text:?}"
            );
        }
    }

    let tests = yaml_file(&prometheus_dir().join(RULE_TESTS));
    let mut firing: BTreeMap<String, usize> = BTreeMap::new();
    let mut quiet: BTreeMap<String, usize> = BTreeMap::new();
    for test in tests["tests"].as_sequence().expect("tests") {
        for case in test["alert_rule_test"].as_sequence().into_iter().flatten() {
            let name = case["alertname"].as_str().expect("alertname").to_string();
            assert!(
                alerts.contains_key(&name),
                "a test case names an unknown alert {name}"
            );
            let expected = case["exp_alerts"].as_sequence().map_or(0, Vec::len);
            *if expected > 0 {
                &mut firing
            } else {
                &mut quiet
            }
            .entry(name)
            .or_default() += 1;
        }
    }
    for name in alerts.keys() {
        assert!(firing.contains_key(name), "no test case where {name} fires");
        assert!(
            quiet.contains_key(name),
            "no test case where {name} stays quiet"
        );
    }
}
