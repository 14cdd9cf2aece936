//! The commit log of `__consumer_offsets`: decoding its records ([`record`], pure). The follower
//! that archives them, the segments and the replay to an instant build on it.

pub mod record;
