//! Options that several commands share: which groups and connectors, and how the snapshot's
//! topics are named and its offsets translated on another cluster. They are clap argument
//! groups, which the command line flattens into each command's flags.

use clap::{Args, ValueEnum};

use crate::error::Result;
use crate::mirror::MirrorOptions;
use crate::snapshot::Selection;

/// Which groups and connectors.
#[derive(Debug, Args, Clone, Default)]
pub struct WhoArgs {
    /// A consumer group (repeatable).
    #[arg(help_heading = "Selection", long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// Consumer groups whose whole id matches this regular expression.
    #[arg(help_heading = "Selection", long, value_name = "REGEX")]
    pub group_pattern: Option<String>,
    /// Every consumer group of the cluster.
    #[arg(help_heading = "Selection", long)]
    pub all_groups: bool,
    /// A Kafka Connect connector (repeatable); a sink connector's consumer group comes with it.
    #[arg(help_heading = "Selection", long = "connector", value_name = "NAME")]
    pub connectors: Vec<String>,
    /// Every connector of every --connect-url.
    #[arg(help_heading = "Selection", long)]
    pub all_connectors: bool,
    /// With --all-groups or --group-pattern, only groups of these types (classic, consumer,
    /// share, streams; comma-separated). Default: every type. Kafka Connect's worker groups
    /// are left out of --all-groups and patterns; name one with --group to capture it.
    #[arg(
        help_heading = "Selection",
        long,
        value_name = "TYPES",
        value_delimiter = ','
    )]
    pub group_type: Vec<String>,
}

/// Which groups and connectors to capture, and of which topics.
#[derive(Debug, Args, Clone, Default)]
pub struct SelectArgs {
    #[command(flatten)]
    pub who: WhoArgs,
    /// Only these topics (repeatable).
    #[arg(help_heading = "Selection", long = "topic", value_name = "TOPIC")]
    pub topics: Vec<String>,
}

impl WhoArgs {
    /// The selection, for every topic.
    pub fn to_selection(&self) -> Selection {
        Selection {
            groups: self.groups.clone(),
            group_pattern: self.group_pattern.clone(),
            all_groups: self.all_groups,
            connectors: self.connectors.clone(),
            all_connectors: self.all_connectors,
            group_types: self
                .group_type
                .iter()
                .map(|t| crate::kafka::GroupType::from_name(t.trim()))
                .collect(),
            ..Default::default()
        }
    }
}

impl SelectArgs {
    /// The selection, for the topics given (every topic without --topic).
    pub fn to_selection(&self) -> Selection {
        Selection {
            topics: self.topics.clone(),
            ..self.who.to_selection()
        }
    }
}

/// How this cluster names the snapshot's topics (`diff`, `show`, and below).
#[derive(Debug, Clone, Args, Default)]
pub struct NamesArgs {
    /// Another cluster names a topic otherwise: FROM=TO, or re:REGEX=TEMPLATE ($1, ${name}
    /// refer to REGEX's groups; the whole name must match). Repeatable; the first rule that
    /// matches wins, then --replication-policy.
    #[arg(
        help_heading = "Another cluster",
        long = "topic-map",
        value_name = "RULE"
    )]
    pub topic_map: Vec<String>,
    /// How a MirrorMaker 2 replica names the topics no --topic-map rule matches:
    /// default:ALIAS (DefaultReplicationPolicy: `orders` is `ALIAS.orders`; default:ALIAS:SEP
    /// with another separator) or identity (the same names).
    #[arg(help_heading = "Another cluster", long, value_name = "POLICY")]
    pub replication_policy: Option<String>,
}

/// `--translate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TranslateArg {
    /// Identity if the records confirm it, else timestamp and record match, else MirrorMaker 2's
    /// checkpoints, else refuse the partition.
    Auto,
    /// The same offsets (a replicator that keeps offsets); the record before each is checked.
    Identity,
    /// The record after the last consumed one, found by its timestamp and fingerprint (snapshots
    /// taken with --with-timestamps).
    Timestamp,
    /// MirrorMaker 2's checkpoints and offset syncs on the target.
    Checkpoints,
}

impl TranslateArg {
    fn name(self) -> &'static str {
        match self {
            TranslateArg::Auto => "auto",
            TranslateArg::Identity => "identity",
            TranslateArg::Timestamp => "timestamp",
            TranslateArg::Checkpoints => "checkpoints",
        }
    }
}

/// `restore` and `reset` onto another cluster.
#[derive(Debug, Clone, Args, Default)]
pub struct MirrorArgs {
    #[command(flatten)]
    pub names: NamesArgs,
    /// How offsets become offsets of another cluster, chosen per partition; the plan names the
    /// method and what it is based on. Default with --allow-other-cluster or --rehearse-on: auto.
    #[arg(
        help_heading = "Another cluster",
        long,
        value_enum,
        value_name = "METHOD"
    )]
    pub translate: Option<TranslateArg>,
    /// MirrorMaker 2's checkpoints topic on the target (default: ALIAS.checkpoints.internal of
    /// --replication-policy default:ALIAS).
    #[arg(help_heading = "Another cluster", long, value_name = "TOPIC")]
    pub checkpoints_topic: Option<String>,
    /// MirrorMaker 2's offset-syncs topic on the target (default: the one topic named
    /// mm2-offset-syncs.*.internal there).
    #[arg(help_heading = "Another cluster", long, value_name = "TOPIC")]
    pub offset_syncs_topic: Option<String>,
    /// Rehearse on a staging cluster (HOST:PORT, or a context of the configuration file): plan
    /// and apply the same operation there, topics mapped and offsets translated as above, then
    /// print what happened and the command for production. The production cluster (-b) is only
    /// read. Implies --execute on the staging cluster.
    #[arg(
        help_heading = "Another cluster",
        long,
        value_name = "BOOTSTRAP|CONTEXT",
        conflicts_with = "plan_file"
    )]
    pub rehearse_on: Option<String>,
}

impl MirrorArgs {
    pub fn options(&self) -> MirrorOptions {
        MirrorOptions {
            topic_map: self.names.topic_map.clone(),
            replication_policy: self.names.replication_policy.clone(),
            translate: self.translate.map(|t| t.name().to_string()),
            checkpoints_topic: self.checkpoints_topic.clone(),
            offset_syncs_topic: self.offset_syncs_topic.clone(),
        }
    }
}

impl NamesArgs {
    /// The topic map, when one was given.
    pub fn topic_map(&self) -> Result<Option<crate::mirror::TopicMap>> {
        if self.topic_map.is_empty() && self.replication_policy.is_none() {
            return Ok(None);
        }
        crate::mirror::TopicMap::parse(&self.topic_map, self.replication_policy.as_deref())
            .map(Some)
    }
}
