//! Restoring onto another cluster, such as a MirrorMaker 2 replica.
//!
//! - [`topic_map`]: which topic of the replica a topic of the snapshot's cluster is
//!   (`--topic-map` rules, a replication policy), and which topics MirrorMaker never carries over.
//! - [`checkpoints`]: MirrorMaker 2's checkpoint records (a group's offset translated onto the
//!   replica) and offset-sync records, decoded from their bytes.
//! - [`decide`]: a partition's target on the replica from what was found there (`--translate`).
//! - [`translate`]: finding it: the target cluster's records, MirrorMaker 2's checkpoints.

pub mod checkpoints;
pub mod decide;
pub mod options;
pub mod topic_map;
pub mod translate;

pub use checkpoints::{decode_checkpoint, decode_offset_sync, Checkpoint, OffsetSync};
pub use decide::{Decision, Method, Translation, Used};
pub use options::MirrorOptions;
pub use topic_map::{MappedBy, Mapping, NotReplicated, ReplicationPolicy, TopicMap, TopicRule};
pub use translate::{rename_group, Carried, Decisions, Mirror, Renamed};
