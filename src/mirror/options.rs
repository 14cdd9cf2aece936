//! The options that carry a restore or reset to another cluster, as given on the command line
//! and as a plan file records them.

use serde::{Deserialize, Serialize};

use super::decide::Method;
use super::topic_map::TopicMap;
use super::translate::Mirror;
use crate::error::{Error, Result};

/// `--topic-map`, `--replication-policy`, `--translate`, `--checkpoints-topic` and
/// `--offset-syncs-topic`, unparsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorOptions {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topic_map: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints_topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_syncs_topic: Option<String>,
}

impl MirrorOptions {
    /// No option was given.
    pub fn is_empty(&self) -> bool {
        *self == MirrorOptions::default()
    }

    /// Checks the options without a cluster: the rules and the policy parse, the method is known.
    pub fn check(&self) -> Result<()> {
        TopicMap::parse(&self.topic_map, self.replication_policy.as_deref())?;
        self.method()?;
        Ok(())
    }

    fn method(&self) -> Result<Option<Method>> {
        self.translate.as_deref().map(str::parse).transpose()
    }

    /// How offsets are carried, when they are: onto another cluster (`other_cluster`), or when
    /// any option was given (a topic map on one cluster too). `by_timestamp` (`--by-timestamp`)
    /// onto another cluster is `--translate timestamp`.
    pub fn mirror(&self, other_cluster: bool, by_timestamp: bool) -> Result<Option<Mirror>> {
        if !other_cluster && self.is_empty() {
            return Ok(None);
        }
        let method = match (self.method()?, by_timestamp) {
            (Some(m), false) => m,
            (None, true) => Method::Timestamp,
            (None, false) => Method::Auto,
            (Some(m), true) => {
                return Err(Error::usage(format!(
                    "--by-timestamp and --translate {m}: give one (--by-timestamp is --translate timestamp)"
                )))
            }
        };
        let map = TopicMap::parse(&self.topic_map, self.replication_policy.as_deref())?;
        Ok(Some(Mirror::new(
            map,
            method,
            self.checkpoints_topic.clone(),
            self.offset_syncs_topic.clone(),
        )))
    }

    /// The options as command-line arguments, for the command printed after a rehearsal.
    pub fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for rule in &self.topic_map {
            out.extend(["--topic-map".to_string(), rule.clone()]);
        }
        for (flag, value) in [
            ("--replication-policy", &self.replication_policy),
            ("--translate", &self.translate),
            ("--checkpoints-topic", &self.checkpoints_topic),
            ("--offset-syncs-topic", &self.offset_syncs_topic),
        ] {
            if let Some(v) = value {
                out.extend([flag.to_string(), v.clone()]);
            }
        }
        out
    }
}
