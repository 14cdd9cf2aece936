//! Which topic of the target cluster a topic of the source cluster is: `--topic-map` rules and a
//! MirrorMaker 2 replication policy. Pure: names in, names out.
//!
//! Rules (`--topic-map`), tried in the order given, the first that matches wins:
//! - `FROM=TO`: the topic named FROM is TO on the target (exact names).
//! - `re:REGEX=TEMPLATE`: a topic whose whole name REGEX matches (the `regex` crate's syntax;
//!   the match is anchored at both ends, `^`/`$` are not needed) is TEMPLATE on the target, with
//!   `$1`, `${1}`, `$name` or `${name}` replaced by what that group of REGEX matched (`${1}` when
//!   letters, digits or `_` follow the reference). Topic names cannot hold `=`, so the last `=`
//!   ends REGEX.
//!
//! A topic no rule matches is renamed by the replication policy (`--replication-policy`), as
//! MirrorMaker 2 names remote topics:
//! - `default:ALIAS` (DefaultReplicationPolicy): `ALIAS.` + the name; `default:ALIAS:SEPARATOR`
//!   with `replication.policy.separator` set to SEPARATOR.
//! - `identity` (IdentityReplicationPolicy): the same name.
//!
//! Without a policy, a topic no rule matches keeps its name.
//!
//! Some topics are never carried over, whatever the rules ([`NotReplicated`]): Kafka's internal
//! topics (`__consumer_offsets`, names starting with `__` or `.`), MirrorMaker's own internal
//! topics (`mm2…` names ending in `.internal`, checkpoints topics `ALIAS.checkpoints.internal`,
//! with the policy's separator for `.`) and its heartbeats topics (`heartbeats`,
//! `ALIAS.heartbeats`). The first two are the topics Kafka 4.3's `ReplicationPolicy` calls
//! internal and MirrorMaker never replicates (earlier releases also skipped every name ending in
//! `.internal` or `-internal`). Heartbeats MirrorMaker does copy (as `ALIAS.heartbeats`), but for
//! its own use: no group's offsets on them are carried over.

use std::fmt;
use std::str::FromStr;

use regex::Regex;
use serde::Serialize;

use crate::error::{Error, Result};

/// The longest topic name Kafka accepts.
const MAX_TOPIC_LEN: usize = 249;

/// The name of MirrorMaker's heartbeats topic (its default, `heartbeats.topic.name` aside).
const HEARTBEATS: &str = "heartbeats";

/// How MirrorMaker 2 names a source topic on the target cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum ReplicationPolicy {
    /// DefaultReplicationPolicy: the source cluster's alias, the separator, the name.
    Default { alias: String, separator: String },
    /// IdentityReplicationPolicy: the same name.
    Identity,
}

impl ReplicationPolicy {
    /// The separator MirrorMaker uses in this policy's names (`.` for identity).
    fn separator(&self) -> &str {
        match self {
            ReplicationPolicy::Default { separator, .. } => separator,
            ReplicationPolicy::Identity => ".",
        }
    }
}

const POLICY_FORMS: &str =
    "write `default:ALIAS` (e.g. `default:primary`: `orders` is `primary.orders` on the target), \
     `default:ALIAS:SEPARATOR` (a replication.policy.separator other than `.`) or `identity`";

impl FromStr for ReplicationPolicy {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::usage(format!(
                "--replication-policy {text:?}: {why}; {POLICY_FORMS}"
            ))
        };
        let mut parts = text.split(':');
        match parts.next().unwrap_or_default() {
            "identity" if !text.contains(':') => Ok(ReplicationPolicy::Identity),
            "identity" => Err(bad("identity takes no alias")),
            "default" => {
                let alias = parts.next().unwrap_or_default();
                let separator = parts.next().unwrap_or(".");
                if parts.next().is_some() {
                    return Err(bad("too many `:`"));
                }
                if alias.is_empty() {
                    return Err(bad("the source cluster's alias is missing"));
                }
                if separator.is_empty() {
                    return Err(bad("the separator is empty"));
                }
                check_topic_chars(alias).map_err(|c| {
                    bad(&format!("the alias holds {c:?}, which topic names cannot"))
                })?;
                check_topic_chars(separator).map_err(|c| {
                    bad(&format!(
                        "the separator holds {c:?}, which topic names cannot"
                    ))
                })?;
                if alias.contains(separator) {
                    return Err(bad(&format!(
                        "the alias {alias:?} holds the separator {separator:?}, so MirrorMaker \
                         would read another alias out of its own topic names"
                    )));
                }
                Ok(ReplicationPolicy::Default {
                    alias: alias.to_string(),
                    separator: separator.to_string(),
                })
            }
            "" if text.is_empty() => Err(bad("it is empty")),
            other => Err(bad(&format!("unknown policy {other:?}"))),
        }
    }
}

impl fmt::Display for ReplicationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplicationPolicy::Default { alias, separator } if separator == "." => {
                write!(f, "default:{alias}")
            }
            ReplicationPolicy::Default { alias, separator } => {
                write!(f, "default:{alias}:{separator}")
            }
            ReplicationPolicy::Identity => f.write_str("identity"),
        }
    }
}

/// One `--topic-map` rule.
#[derive(Debug, Clone)]
pub struct TopicRule {
    /// The rule as the user wrote it, to show in plans and errors.
    text: String,
    from: Match,
    to: Vec<Part>,
}

/// What a rule matches.
#[derive(Debug, Clone)]
enum Match {
    Exact(String),
    /// The user's expression, anchored: `^(?:REGEX)$`.
    Regex(Regex),
}

/// A piece of a rule's target: text, or a reference to a group of the rule's expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Group(usize),
    Named(String),
}

const RULE_FORMS: &str = "write `FROM=TO` (exact topic names, e.g. `orders=dr.orders`) or \
     `re:REGEX=TEMPLATE` (e.g. `re:(.*)=dr.$1`; REGEX must match the whole name, `$1` or `${1}` \
     in TEMPLATE is what its first group matched)";

impl FromStr for TopicRule {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: String| Error::usage(format!("--topic-map {text:?}: {why}; {RULE_FORMS}"));
        let (pattern, regex) = match text.strip_prefix("re:") {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let Some((from, to)) = pattern.rsplit_once('=') else {
            return Err(bad("no `=` between the source and the target topic".into()));
        };
        if from.is_empty() {
            return Err(bad("the source side (before `=`) is empty".into()));
        }
        if to.is_empty() {
            return Err(bad("the target side (after `=`) is empty".into()));
        }
        if !regex {
            check_topic_name(from).map_err(|why| bad(format!("{from:?} {why}")))?;
            if let Some(reason) = NotReplicated::of(from, None) {
                return Err(bad(format!(
                    "{from:?} is {reason}; MirrorMaker 2 never carries its offsets over"
                )));
            }
            check_topic_name(to).map_err(|why| bad(format!("{to:?} {why}")))?;
            return Ok(TopicRule {
                text: text.to_string(),
                from: Match::Exact(from.to_string()),
                to: vec![Part::Text(to.to_string())],
            });
        }
        let anchored = Regex::new(&format!("^(?:{from})$"))
            .map_err(|e| bad(format!("{from:?} is not a regular expression: {e}")))?;
        let parts = parse_template(to).map_err(&bad)?;
        for part in &parts {
            match part {
                Part::Text(t) => check_topic_chars(t).map_err(|c| {
                    bad(format!("the target holds {c:?}, which topic names cannot"))
                })?,
                Part::Group(n) if *n >= anchored.captures_len() => {
                    return Err(bad(format!(
                        "the target uses group {n}, but {from:?} has {} group(s)",
                        anchored.captures_len() - 1
                    )))
                }
                Part::Named(name)
                    if !anchored.capture_names().any(|n| n == Some(name.as_str())) =>
                {
                    return Err(bad(format!(
                        "the target uses group {name:?}, which {from:?} does not name (to follow a \
                         group's number with letters, digits or `_`, write `${{1}}x`, not `$1x`)"
                    )))
                }
                _ => {}
            }
        }
        Ok(TopicRule {
            text: text.to_string(),
            from: Match::Regex(anchored),
            to: parts,
        })
    }
}

impl fmt::Display for TopicRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Splits a rule's target into text and group references (`$1`, `${1}`, `$name`, `${name}`;
/// `$$` is not offered: `$` cannot be in a topic name).
fn parse_template(to: &str) -> std::result::Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = to;
    while let Some(at) = rest.find('$') {
        text.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let (name, after) = if let Some(braced) = rest.strip_prefix('{') {
            let Some(end) = braced.find('}') else {
                return Err(format!("`${{` without its `}}` in {to:?}"));
            };
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        if name.is_empty() {
            return Err(format!(
                "a `$` in {to:?} is not followed by a group (`$1`, `${{1}}` or `${{name}}`)"
            ));
        }
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        parts.push(match name.parse::<usize>() {
            Ok(n) => Part::Group(n),
            Err(_) => Part::Named(name.to_string()),
        });
        rest = after;
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

/// Why a topic's offsets are never carried over to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotReplicated {
    /// A Kafka internal topic: `__consumer_offsets`, `__transaction_state`, any name starting
    /// with `__` or `.`.
    KafkaInternal,
    /// One of MirrorMaker's internal topics: `mm2-offset-syncs.ALIAS.internal`, its Connect
    /// topics `mm2-offsets.ALIAS.internal` and the like, a checkpoints topic
    /// `ALIAS.checkpoints.internal`.
    MirrorMakerInternal,
    /// MirrorMaker's heartbeats topic (`heartbeats`, or a copy such as `primary.heartbeats`).
    Heartbeats,
}

impl NotReplicated {
    /// Why `topic` is not carried over, if it is not; `separator` is the replication policy's
    /// (MirrorMaker names its internal topics with it), `.` without one.
    fn of(topic: &str, policy: Option<&ReplicationPolicy>) -> Option<NotReplicated> {
        let sep = policy.map_or(".", ReplicationPolicy::separator);
        let internal = format!("{sep}internal");
        if topic.starts_with("__") || topic.starts_with('.') {
            Some(NotReplicated::KafkaInternal)
        } else if (topic.starts_with("mm2") && topic.ends_with(&internal))
            || topic.ends_with(&format!("{sep}checkpoints{internal}"))
        {
            Some(NotReplicated::MirrorMakerInternal)
        } else if topic == HEARTBEATS || topic.ends_with(&format!("{sep}{HEARTBEATS}")) {
            Some(NotReplicated::Heartbeats)
        } else {
            None
        }
    }
}

impl fmt::Display for NotReplicated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotReplicated::KafkaInternal => "a Kafka internal topic",
            NotReplicated::MirrorMakerInternal => "an internal topic of MirrorMaker 2",
            NotReplicated::Heartbeats => "MirrorMaker 2's heartbeats topic",
        })
    }
}

/// What decided a topic's name on the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum MappedBy {
    /// The `--topic-map` rule at this index (0-based, in the order given).
    Rule { index: usize },
    /// The replication policy.
    Policy,
    /// Nothing: no rule matched and there is no policy; the name is kept.
    Unchanged,
}

/// A source topic's fate on the target cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "mapping", rename_all = "kebab-case")]
pub enum Mapping {
    /// The topic is `topic` on the target.
    Replicated { topic: String, by: MappedBy },
    /// The topic is never carried over.
    NotReplicated { reason: NotReplicated },
}

/// `--topic-map` rules and an optional replication policy. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct TopicMap {
    rules: Vec<TopicRule>,
    policy: Option<ReplicationPolicy>,
}

impl TopicMap {
    /// A map from parsed rules and a policy. Two exact rules for the same topic are refused: the
    /// second could never apply.
    pub fn new(rules: Vec<TopicRule>, policy: Option<ReplicationPolicy>) -> Result<Self> {
        for (i, rule) in rules.iter().enumerate() {
            let Match::Exact(from) = &rule.from else {
                continue;
            };
            if let Some(earlier) = rules[..i]
                .iter()
                .find(|r| matches!(&r.from, Match::Exact(f) if f == from))
            {
                return Err(Error::usage(format!(
                    "--topic-map {:?} and {:?} both map {from:?}; give one rule per topic",
                    earlier.text, rule.text
                )));
            }
        }
        Ok(TopicMap { rules, policy })
    }

    /// A map from the arguments as given: `--topic-map` values and `--replication-policy`.
    pub fn parse<S: AsRef<str>>(rules: &[S], policy: Option<&str>) -> Result<Self> {
        let rules = rules
            .iter()
            .map(|r| r.as_ref().parse())
            .collect::<Result<Vec<TopicRule>>>()?;
        let policy = policy.map(str::parse).transpose()?;
        TopicMap::new(rules, policy)
    }

    /// True when every topic keeps its name (no rule, no policy, or only `identity`) and only the
    /// internal topics are set apart.
    pub fn keeps_names(&self) -> bool {
        self.rules.is_empty() && matches!(self.policy, None | Some(ReplicationPolicy::Identity))
    }

    pub fn rules(&self) -> &[TopicRule] {
        &self.rules
    }

    pub fn policy(&self) -> Option<&ReplicationPolicy> {
        self.policy.as_ref()
    }

    /// The name of `topic` on the target cluster, or why it is not carried over. An error when a
    /// rule or the policy makes a name Kafka would refuse (empty, too long).
    pub fn map(&self, topic: &str) -> Result<Mapping> {
        if let Some(reason) = NotReplicated::of(topic, self.policy.as_ref()) {
            return Ok(Mapping::NotReplicated { reason });
        }
        let (target, by) = self.target(topic);
        check_topic_name(&target).map_err(|why| {
            let by_what = match (&by, &self.policy) {
                (MappedBy::Rule { index }, _) => {
                    format!("--topic-map {:?}", self.rules[*index].text)
                }
                (MappedBy::Policy, Some(policy)) => format!("--replication-policy {policy}"),
                (MappedBy::Policy | MappedBy::Unchanged, _) => {
                    return Error::usage(format!("topic {topic:?} {why}"));
                }
            };
            Error::usage(format!(
                "{by_what} maps topic {topic:?} to {target:?}, which {why}; change the rule, or \
                 add an exact rule `{topic}=NAME` before it"
            ))
        })?;
        Ok(Mapping::Replicated { topic: target, by })
    }

    fn target(&self, topic: &str) -> (String, MappedBy) {
        for (index, rule) in self.rules.iter().enumerate() {
            let target = match &rule.from {
                Match::Exact(from) if from == topic => Some(expand(&rule.to, None)),
                Match::Exact(_) => None,
                Match::Regex(re) => re.captures(topic).map(|c| expand(&rule.to, Some(&c))),
            };
            if let Some(target) = target {
                return (target, MappedBy::Rule { index });
            }
        }
        match &self.policy {
            Some(ReplicationPolicy::Default { alias, separator }) => {
                (format!("{alias}{separator}{topic}"), MappedBy::Policy)
            }
            Some(ReplicationPolicy::Identity) => (topic.to_string(), MappedBy::Policy),
            None => (topic.to_string(), MappedBy::Unchanged),
        }
    }
}

/// A rule's target with the groups filled in (a group that did not take part is empty).
fn expand(parts: &[Part], captures: Option<&regex::Captures<'_>>) -> String {
    let mut out = String::new();
    for part in parts {
        let group = match part {
            Part::Text(t) => {
                out.push_str(t);
                continue;
            }
            Part::Group(n) => captures.and_then(|c| c.get(*n)),
            Part::Named(name) => captures.and_then(|c| c.name(name)),
        };
        out.push_str(group.map_or("", |m| m.as_str()));
    }
    out
}

/// The first character a topic name cannot hold (Kafka allows ASCII letters, digits, `.`, `_`
/// and `-`), if there is one.
fn check_topic_chars(text: &str) -> std::result::Result<(), char> {
    match text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        Some(c) => Err(c),
        None => Ok(()),
    }
}

/// Whether Kafka would accept `name` as a topic name; the reason if not, as the end of a
/// sentence about the name.
fn check_topic_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err("is empty, and a topic name cannot be".into());
    }
    if name == "." || name == ".." {
        return Err("is not a topic name Kafka accepts".into());
    }
    if name.len() > MAX_TOPIC_LEN {
        return Err(format!(
            "is {} characters long, and Kafka accepts at most {MAX_TOPIC_LEN}",
            name.len()
        ));
    }
    check_topic_chars(name).map_err(|c| {
        format!("holds {c:?}, and topic names hold only ASCII letters, digits, `.`, `_` and `-`")
    })
}

#[cfg(test)]
#[path = "topic_map_tests.rs"]
mod tests;
