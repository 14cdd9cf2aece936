//! The commit log of `__consumer_offsets`: decoding its records ([`record`]), replaying them
//! onto a base to an instant ([`replay`]), and the segments that archive them as Parquet, with
//! the rules for gaps and overlaps ([`segment`]); all pure. The follower builds on these.

pub mod follow;
pub mod history;
pub mod record;
pub mod replay;
pub mod segment;
