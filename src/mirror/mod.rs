//! Restoring onto a MirrorMaker 2 replica: the pure parts.
//!
//! - [`topic_map`]: which topic of the replica a topic of the snapshot's cluster is
//!   (`--topic-map` rules, a replication policy), and which topics MirrorMaker never carries over.

pub mod topic_map;

pub use topic_map::{MappedBy, Mapping, NotReplicated, ReplicationPolicy, TopicMap, TopicRule};
