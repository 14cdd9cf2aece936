//! The commit log of `__consumer_offsets`: decoding its records ([`record`]) and replaying them
//! onto a base to an instant ([`replay`]), both pure. The follower that archives them and the
//! segments build on these.

pub mod record;
pub mod replay;
