//! Restoring onto a MirrorMaker 2 replica: the pure parts.
//!
//! - [`topic_map`]: which topic of the replica a topic of the snapshot's cluster is
//!   (`--topic-map` rules, a replication policy), and which topics MirrorMaker never carries over.
//! - [`checkpoints`]: MirrorMaker 2's checkpoint records (a group's offset translated onto the
//!   replica) and offset-sync records, decoded from their bytes.

pub mod checkpoints;
pub mod topic_map;

pub use checkpoints::{decode_checkpoint, decode_offset_sync, Checkpoint, OffsetSync};
pub use topic_map::{MappedBy, Mapping, NotReplicated, ReplicationPolicy, TopicMap, TopicRule};
