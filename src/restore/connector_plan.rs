//! The connector part of a restore plan: whether a connector must be stopped, and for source
//! connectors which source-partition offsets the REST API will set.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::options::PlanOptions;
use crate::live::LiveView;
use crate::mirror::Carried;
use crate::snapshot::model::ConnectorSnapshot;

/// One source-partition of a connector, restored through the Connect REST API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceOffsetPlan {
    pub partition: Value,
    pub current: Option<Value>,
    pub target: Value,
    pub changes: bool,
}

/// One connector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorPlan {
    pub name: String,
    pub connect_url: String,
    pub connector_type: String,
    /// State now (RUNNING, PAUSED, STOPPED, ...), or `None` if it does not exist.
    pub state: Option<String>,
    /// The restore stops it first and returns it to `state` afterwards.
    pub stop_and_resume: bool,
    /// How its offsets are restored: `group` (its consumer group, through Kafka), `rest`
    /// (a source connector's, `PATCH /connectors/{name}/offsets`) or `rest-sink` (a sink
    /// connector's group, written with the same request in the sink form).
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    pub offsets: Vec<SourceOffsetPlan>,
    /// Live source-partitions the snapshot lacks; left as they are.
    pub not_in_snapshot: Vec<Value>,
    /// The connector no longer exists: it is created again from the snapshot's config, STOPPED,
    /// before the offsets are set (`--recreate-connectors`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recreate: bool,
    /// Every offset of the connector is removed (`DELETE /connectors/{name}/offsets`), so a
    /// source connector starts again from the beginning of its source.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset_all: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// Why this connector cannot be restored at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What restoring onto another cluster does to it (renamed topics, offsets copied as
    /// they are).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

pub(super) fn plan_connector(
    c: &ConnectorSnapshot,
    live: &LiveView,
    carried: &Carried,
    opts: &PlanOptions,
) -> ConnectorPlan {
    let now = live.connectors.get(&c.name).cloned().flatten();
    let mut plan = ConnectorPlan {
        name: c.name.clone(),
        connect_url: now
            .as_ref()
            .map(|n| n.connect_url.clone())
            .unwrap_or_else(|| c.connect_url.clone()),
        connector_type: c.connector_type.clone(),
        state: now.as_ref().map(|n| n.state.clone()),
        stop_and_resume: false,
        method: match (c.connector_type.as_str(), opts.sink_via_rest) {
            ("sink", false) => "group",
            ("sink", true) => "rest-sink",
            _ => "rest",
        }
        .into(),
        group_id: c.group_id.clone(),
        offsets: Vec::new(),
        not_in_snapshot: Vec::new(),
        recreate: false,
        reset_all: false,
        blocked: None,
        problem: None,
        notes: carried
            .connector_notes
            .get(&c.name)
            .cloned()
            .unwrap_or_default(),
    };
    let Some(now) = now else {
        plan_recreation(c, opts, &mut plan);
        return plan;
    };
    if plan.method == "rest" && opts.reset_source_offsets.contains(&c.name) {
        plan.reset_all = true;
        plan.offsets = now
            .offsets
            .iter()
            .flatten()
            .map(|o| SourceOffsetPlan {
                partition: o["partition"].clone(),
                current: Some(o["offset"].clone()),
                target: Value::Null,
                changes: true,
            })
            .collect();
    } else if plan.method == "rest" {
        match &c.offsets {
            None => {
                plan.problem = Some(format!(
                    "the snapshot holds no offsets for it ({})",
                    c.offsets_unavailable.as_deref().unwrap_or("not captured")
                ));
            }
            Some(targets) => {
                let current: Vec<(Value, Value)> = now
                    .offsets
                    .iter()
                    .flatten()
                    .map(|o| (o["partition"].clone(), o["offset"].clone()))
                    .collect();
                for t in targets {
                    let cur = current
                        .iter()
                        .find(|(p, _)| *p == t["partition"])
                        .map(|(_, o)| o.clone());
                    plan.offsets.push(SourceOffsetPlan {
                        partition: t["partition"].clone(),
                        changes: cur.as_ref() != Some(&t["offset"]),
                        current: cur,
                        target: t["offset"].clone(),
                    });
                }
                plan.not_in_snapshot = current
                    .iter()
                    .filter(|(p, _)| !targets.iter().any(|t| t["partition"] == *p))
                    .map(|(p, _)| p.clone())
                    .collect();
            }
        }
    }
    if now.state != "STOPPED" {
        if opts.stop_connectors {
            plan.stop_and_resume = true;
        } else {
            plan.blocked = Some(format!(
                "connector {} is {}: its offsets can change only while it is STOPPED; pass --stop-connectors to stop it and return it to {} afterwards",
                c.name, now.state, now.state
            ));
        }
    }
    plan
}

/// The plan for a connector that no longer exists: created again from the snapshot's config with
/// `--recreate-connectors`, if every redacted secret is supplied; refused otherwise.
fn plan_recreation(c: &ConnectorSnapshot, opts: &PlanOptions, plan: &mut ConnectorPlan) {
    let Some(recreate) = &opts.recreate else {
        plan.problem = Some(format!(
            "it does not exist on {} now; pass --recreate-connectors to create it again from the snapshot's config (STOPPED, offsets set, then resumed)",
            c.connect_url
        ));
        return;
    };
    let missing: Vec<&str> = c
        .redacted_keys
        .iter()
        .filter(|k| !recreate.supplied_keys.contains(*k))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let encrypted = match recreate.encrypted_secrets {
            Some(n) => format!(
                "; the snapshot holds them encrypted (connectors.secrets.age, to {n} recipient(s)): pass --identity FILE with a recipient's key to use them, or"
            ),
            None => ":".into(),
        };
        plan.problem = Some(format!(
            "it does not exist now, and its snapshot config has redacted values for {}{encrypted} supply each with --connector-config-override KEY=VALUE to create it again",
            missing.join(", ")
        ));
        return;
    }
    if plan.method == "rest" {
        let Some(targets) = &c.offsets else {
            plan.problem = Some(format!(
                "the snapshot holds no offsets for it ({})",
                c.offsets_unavailable.as_deref().unwrap_or("not captured")
            ));
            return;
        };
        plan.offsets = targets
            .iter()
            .map(|t| SourceOffsetPlan {
                partition: t["partition"].clone(),
                current: None,
                target: t["offset"].clone(),
                changes: true,
            })
            .collect();
    }
    plan.recreate = true;
}
