//! A copy of each event on a Kafka topic, for SIEM pipelines: key the event id, value the event's
//! JSON (CloudEvents structured mode), header `content-type: application/cloudevents+json`.
//! The store's copy is the record; a produce that fails is reported, never taken for one.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::util::Timeout;

use super::event::{Event, CLOUDEVENTS_JSON};
use crate::error::{Error, Result};
use crate::kafka::KafkaSettings;

/// A producer for one topic.
#[derive(Clone)]
pub struct KafkaSink {
    topic: String,
    bootstrap: String,
    producer: FutureProducer,
    timeout: Duration,
}

impl std::fmt::Debug for KafkaSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaSink")
            .field("topic", &self.topic)
            .field("bootstrap", &self.bootstrap)
            .finish()
    }
}

impl KafkaSink {
    /// A producer with the run's Kafka settings (its client properties included: SASL, TLS).
    pub fn new(settings: &KafkaSettings, topic: &str) -> Result<Self> {
        if topic.trim().is_empty() {
            return Err(Error::usage("the audit topic is empty: name a Kafka topic"));
        }
        let mut config = ClientConfig::new();
        let timeout_ms = settings.timeout.as_millis().max(1000).to_string();
        config
            .set("client.id", "offset-vault-audit")
            .set("socket.connection.setup.timeout.ms", &timeout_ms)
            .set("message.timeout.ms", &timeout_ms)
            .set("enable.idempotence", "true");
        for (k, v) in settings.properties.iter() {
            config.set(k, v);
        }
        config.set("bootstrap.servers", &settings.bootstrap);
        let producer: FutureProducer = config
            .create()
            .map_err(|e| Error::kafka("create the audit producer", e))?;
        Ok(KafkaSink {
            topic: topic.trim().to_string(),
            bootstrap: settings.bootstrap.clone(),
            producer,
            timeout: settings.timeout,
        })
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Produces one event and waits for the broker's acknowledgement.
    pub async fn send(&self, event: &Event) -> Result<()> {
        let value = event.to_bytes()?;
        let headers = OwnedHeaders::new().insert(Header {
            key: "content-type",
            value: Some(CLOUDEVENTS_JSON),
        });
        let record = FutureRecord::to(&self.topic)
            .key(&event.id)
            .payload(&value)
            .headers(headers);
        self.producer
            .send(record, Timeout::After(self.timeout))
            .await
            .map(|_| ())
            .map_err(|(e, _)| {
                Error::kafka(
                    "produce an audit event",
                    format!("topic {} at {}: {e}", self.topic, self.bootstrap),
                )
            })
    }
}
