//! Broker configuration, read with rdkafka's admin client (DescribeConfigs on BROKER resources,
//! each sent to its broker by librdkafka).

use std::collections::BTreeMap;

use rdkafka::admin::{AdminClient, AdminOptions, OwnedResourceSpecifier, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::Consumer;

use super::{blocking, KafkaClient};
use crate::error::{Error, Result};

impl KafkaClient {
    /// The ids of the cluster's brokers (from the metadata of one topic, which lists them all).
    pub async fn broker_ids(&self) -> Result<Vec<i32>> {
        let me = self.clone();
        blocking(move || {
            let md = me
                .inner
                .fetch_metadata(Some("__consumer_offsets"), me.timeout())
                .map_err(|e| Error::kafka("Metadata", e))?;
            Ok(md.brokers().iter().map(|b| b.id()).collect())
        })
        .await
    }

    /// The value of the broker config `name` on each broker (`None` where it has none), as
    /// DescribeConfigs reports it (the broker's default when it is not set).
    pub async fn broker_config(&self, name: &str) -> Result<BTreeMap<i32, Option<String>>> {
        let ids = self.broker_ids().await?;
        if ids.is_empty() {
            return Err(Error::kafka("Metadata", "the cluster lists no brokers"));
        }
        // An admin client of its own: the consumer's settings minus the consumer-only ones.
        let mut config = ClientConfig::new();
        config.set("client.id", "offset-vault");
        for (k, v) in self.settings.properties.iter() {
            config.set(k, v);
        }
        config.set("bootstrap.servers", &self.settings.bootstrap);
        let admin: AdminClient<DefaultClientContext> = config
            .create()
            .map_err(|e| Error::usage(format!("invalid Kafka client configuration: {e}")))?;
        let specs: Vec<ResourceSpecifier> = ids
            .iter()
            .map(|id| ResourceSpecifier::Broker(*id))
            .collect();
        let opts = AdminOptions::new().request_timeout(Some(self.timeout()));
        let timeout = self.timeout();
        let results =
            tokio::time::timeout(timeout + timeout, admin.describe_configs(&specs, &opts))
                .await
                .map_err(|_| Error::Timeout {
                    service: "Kafka",
                    op: "DescribeConfigs".into(),
                    after: timeout,
                    detail: format!("the configs of brokers {ids:?}"),
                })?
                .map_err(|e| match e.rdkafka_error_code() {
                    Some(code) => Error::kafka_code(
                        "DescribeConfigs",
                        code,
                        "the cluster's brokers",
                        &e,
                        timeout,
                    ),
                    None => Error::kafka("DescribeConfigs", e),
                })?;
        let mut out = BTreeMap::new();
        for r in results {
            let resource = r.map_err(|code| {
                Error::kafka_code(
                    "DescribeConfigs",
                    code,
                    &format!("brokers {ids:?}"),
                    "the brokers' configuration (needs DESCRIBE_CONFIGS on the cluster)",
                    timeout,
                )
            })?;
            if let OwnedResourceSpecifier::Broker(id) = resource.specifier {
                out.insert(id, resource.get(name).and_then(|e| e.value.clone()));
            }
        }
        Ok(out)
    }
}
