//! How to reach Kafka: the settings both clients read (librdkafka in [`crate::kafka`] and the
//! protocol client in [`crate::wire`]), and the client properties they are made from. Below both
//! clients, so that neither depends on the other for its configuration.

pub mod properties;

use std::time::Duration;

pub use properties::ClientProperties;

/// Where and how to connect to Kafka.
#[derive(Debug, Clone)]
pub struct KafkaSettings {
    pub bootstrap: String,
    pub properties: ClientProperties,
    /// Bound on each request, and on the first connection.
    pub timeout: Duration,
    /// Use the direct protocol path (batched offset reads, share groups, group configs) where
    /// the settings allow it; `false` keeps everything on librdkafka.
    pub direct: bool,
}
