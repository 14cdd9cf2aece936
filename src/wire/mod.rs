//! A direct Kafka protocol client (the `kafka-protocol` crate over tokio, with TLS and SASL
//! PLAIN/SCRAM), for what librdkafka cannot do: share-group offsets, group configs, and offset
//! reads for many groups in one request per coordinator; and for partition offsets (one
//! ListOffsets request per leader), where librdkafka 2.12's admin call can crash the process
//! under load. Configured from the same client properties as the librdkafka path;
//! [`WireConfig::from_settings`] names any setting it cannot honour.

pub mod config;
mod conn;
pub mod groups;
pub mod offsets;
pub mod sasl;
mod tls;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{ApiKey, FindCoordinatorRequest, MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

pub use config::WireConfig;
use conn::Connection;

use crate::error::{Error, Result};
use crate::settings::KafkaSettings;

/// Kafka's error codes, by name where this module acts on them.
pub mod code {
    pub const NONE: i16 = 0;
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    pub const LEADER_NOT_AVAILABLE: i16 = 5;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
    pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
    pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
    pub const NON_EMPTY_GROUP: i16 = 68;
    pub const GROUP_ID_NOT_FOUND: i16 = 69;
}

/// The name Kafka gives an error code.
pub fn code_name(code: i16) -> String {
    use kafka_protocol::error::ParseResponseErrorCode;
    match code.err() {
        Some(e) => format!("{e:?}"),
        None => "NONE".into(),
    }
}

/// Whether the coordinator answer means "ask again, maybe elsewhere".
fn coordinator_moved(code: i16) -> bool {
    matches!(
        code,
        code::COORDINATOR_LOAD_IN_PROGRESS
            | code::COORDINATOR_NOT_AVAILABLE
            | code::NOT_COORDINATOR
    )
}

/// A broker error as the crate's error: access codes become [`Error::AccessDenied`] naming the
/// resource, others a Kafka error with the code's name.
pub fn broker_error(op: &'static str, code: i16, resource: &str, message: Option<&str>) -> Error {
    let detail = match message.filter(|m| !m.is_empty()) {
        Some(m) => format!("{} ({code}): {m}", code_name(code)),
        None => format!("{} ({code})", code_name(code)),
    };
    match code {
        code::TOPIC_AUTHORIZATION_FAILED
        | code::GROUP_AUTHORIZATION_FAILED
        | code::CLUSTER_AUTHORIZATION_FAILED
        | code::SASL_AUTHENTICATION_FAILED => Error::AccessDenied {
            service: "Kafka",
            resource: resource.to_string(),
            detail: format!("{op}: {detail}"),
            advice: "Grant the principal the ACLs named in the documentation (Describe on the group and topics; Read to change offsets), or use another principal",
        },
        _ => Error::kafka(op, format!("{resource}: {detail}")),
    }
}

/// Connections to the brokers of one cluster, opened on first use and then reused.
pub struct Cluster {
    config: WireConfig,
    /// Broker id to `host:port`, from the bootstrap metadata.
    brokers: BTreeMap<i32, String>,
    conns: tokio::sync::Mutex<HashMap<String, Arc<Connection>>>,
    /// Group to coordinator, as last found (forgotten when a broker says it moved).
    coordinator_of: std::sync::Mutex<HashMap<String, i32>>,
    /// The leader of each partition of `__consumer_offsets` (by index; -1 without one), when the
    /// metadata showed it: a group's coordinator leads the partition its id hashes to.
    offsets_leaders: Vec<i32>,
    /// Groups whose coordinator is asked for, never worked out (a broker said it moved).
    ask_for: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("brokers", &self.brokers)
            .finish()
    }
}

impl Cluster {
    /// Connects to the first bootstrap server that answers and reads the broker list. The outer
    /// error is a setting this path cannot honour (see [`WireConfig::from_settings`]).
    pub async fn connect(settings: &KafkaSettings) -> std::result::Result<Result<Cluster>, String> {
        let config = WireConfig::from_settings(settings)?;
        Ok(Self::connect_with(config).await)
    }

    async fn connect_with(config: WireConfig) -> Result<Cluster> {
        let mut last = None;
        for addr in &config.bootstrap {
            match Connection::open(addr, &config).await {
                Ok(conn) => {
                    let conn = Arc::new(conn);
                    let (brokers, offsets_leaders) = match brokers(&conn).await {
                        Ok(b) => b,
                        Err(e) => {
                            last = Some(e);
                            continue;
                        }
                    };
                    let conns = HashMap::from([(addr.clone(), conn)]);
                    return Ok(Cluster {
                        config,
                        brokers,
                        conns: tokio::sync::Mutex::new(conns),
                        coordinator_of: std::sync::Mutex::new(HashMap::new()),
                        offsets_leaders,
                        ask_for: std::sync::Mutex::new(Default::default()),
                    });
                }
                // Refused credentials will be refused by every broker.
                Err(e @ Error::AccessDenied { .. }) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Error::usage("no bootstrap servers")))
    }

    /// The ids of all brokers.
    pub fn broker_ids(&self) -> Vec<i32> {
        self.brokers.keys().copied().collect()
    }

    /// The brokers as `id@host:port`.
    pub fn broker_list(&self) -> Vec<String> {
        self.brokers
            .iter()
            .map(|(id, addr)| format!("{id}@{addr}"))
            .collect()
    }

    /// The partition count of each named topic that exists (one Metadata request).
    pub async fn partition_counts(&self, topics: &[String]) -> Result<BTreeMap<String, i32>> {
        if topics.is_empty() {
            return Ok(BTreeMap::new());
        }
        let conn = self.any().await?;
        let v = conn.require_version(ApiKey::Metadata as i16, 1, 12, "reading topic metadata")?;
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default()
                            .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(false);
        let resp = conn.call(&req, v).await?;
        Ok(resp
            .topics
            .into_iter()
            .filter(|t| t.error_code == code::NONE)
            .filter_map(|t| Some((t.name?.0.to_string(), t.partitions.len() as i32)))
            .collect())
    }

    async fn conn_to(&self, addr: &str) -> Result<Arc<Connection>> {
        let mut conns = self.conns.lock().await;
        // A connection the broker closed (a restart, an idle timeout) is opened again.
        if let Some(c) = conns.get(addr).filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        let c = Arc::new(Connection::open(addr, &self.config).await?);
        conns.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    /// The connection to a broker by id.
    pub async fn broker(&self, id: i32) -> Result<Arc<Connection>> {
        let addr = self
            .brokers
            .get(&id)
            .ok_or_else(|| {
                Error::kafka(
                    "Metadata",
                    format!("broker {id} is not in the cluster metadata"),
                )
            })?
            .clone();
        self.conn_to(&addr).await
    }

    /// Any connection (the first one opened).
    pub async fn any(&self) -> Result<Arc<Connection>> {
        if let Some(c) = self.conns.lock().await.values().find(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        let first = *self
            .brokers
            .keys()
            .next()
            .ok_or_else(|| Error::kafka("Metadata", "no brokers"))?;
        self.broker(first).await
    }

    /// Forgets a connection that failed, so the next use opens a new one.
    async fn drop_conn(&self, addr: &str) {
        self.conns.lock().await.remove(addr);
    }

    /// The coordinator of each group (`key_type` 0), batched where the broker allows it
    /// (FindCoordinator v4+). Coordinators that are moving or loading are asked again.
    pub async fn coordinators(&self, groups: &[String]) -> BTreeMap<String, Result<i32>> {
        const ATTEMPTS: u32 = 5;
        let mut answers: BTreeMap<String, Result<i32>> = BTreeMap::new();
        let mut wanted: Vec<String> = Vec::new();
        // A coordinator worked out from the leaders of __consumer_offsets is not kept: it is
        // worked out again as cheaply, so the cache holds only the groups that were asked about.
        if let (Ok(known), Ok(ask_for)) = (self.coordinator_of.lock(), self.ask_for.lock()) {
            for g in groups {
                let worked_out = || {
                    let leader = *self
                        .offsets_leaders
                        .get(offsets_partition(g, self.offsets_leaders.len())?)?;
                    (leader >= 0 && !ask_for.contains(g)).then_some(leader)
                };
                match known.get(g).copied().or_else(worked_out) {
                    Some(node) => {
                        answers.insert(g.clone(), Ok(node));
                    }
                    None => wanted.push(g.clone()),
                }
            }
        }
        for attempt in 0..ATTEMPTS {
            if wanted.is_empty() {
                break;
            }
            if attempt > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            let t0 = std::time::Instant::now();
            let found = self.find_coordinators_once(&wanted).await;
            tracing::debug!(
                "FindCoordinator for {} groups (attempt {attempt}): {:?}",
                wanted.len(),
                t0.elapsed()
            );
            wanted.clear();
            for (g, r) in found {
                match r {
                    Err((code, _)) if coordinator_moved(code) && attempt + 1 < ATTEMPTS => {
                        wanted.push(g)
                    }
                    Err((code, msg)) => {
                        answers.insert(
                            g.clone(),
                            Err(broker_error(
                                "FindCoordinator",
                                code,
                                &format!("group {g}"),
                                msg.as_deref(),
                            )),
                        );
                    }
                    Ok(node) => {
                        if let Ok(mut known) = self.coordinator_of.lock() {
                            known.insert(g.clone(), node);
                        }
                        answers.insert(g, Ok(node));
                    }
                }
            }
        }
        answers
    }

    #[allow(clippy::type_complexity)]
    async fn find_coordinators_once(
        &self,
        groups: &[String],
    ) -> Vec<(String, std::result::Result<i32, (i16, Option<String>)>)> {
        let fail_all = |e: &Error| {
            groups
                .iter()
                .map(|g| (g.clone(), Err((-1, Some(e.to_string())))))
                .collect()
        };
        let conn = match self.any().await {
            Ok(c) => c,
            Err(e) => return fail_all(&e),
        };
        let key = ApiKey::FindCoordinator as i16;
        let mut out = Vec::new();
        if let Some(v) = conn.version(key, 4, 6) {
            // The broker takes many keys at once; keep each request a reasonable size.
            for chunk in groups.chunks(1000) {
                let req = FindCoordinatorRequest::default()
                    .with_key_type(0)
                    .with_coordinator_keys(
                        chunk
                            .iter()
                            .map(|g| StrBytes::from_string(g.clone()))
                            .collect(),
                    );
                match conn.call(&req, v).await {
                    Ok(resp) => {
                        for c in resp.coordinators {
                            let r = if c.error_code == 0 {
                                Ok(c.node_id.0)
                            } else {
                                Err((c.error_code, c.error_message.map(|m| m.to_string())))
                            };
                            out.push((c.key.to_string(), r));
                        }
                    }
                    Err(e) => {
                        self.drop_conn(conn.addr()).await;
                        out.extend(
                            chunk
                                .iter()
                                .map(|g| (g.clone(), Err((-1, Some(e.to_string()))))),
                        );
                    }
                }
            }
            return out;
        }
        let Some(v) = conn.version(key, 1, 3) else {
            return fail_all(&Error::kafka(
                "FindCoordinator",
                "the broker supports no usable version",
            ));
        };
        for g in groups {
            let req = FindCoordinatorRequest::default()
                .with_key_type(0)
                .with_key(StrBytes::from_string(g.clone()));
            let r = match conn.call(&req, v).await {
                Ok(resp) if resp.error_code == 0 => Ok(resp.node_id.0),
                Ok(resp) => Err((resp.error_code, resp.error_message.map(|m| m.to_string()))),
                Err(e) => Err((-1, Some(e.to_string()))),
            };
            out.push((g.clone(), r));
        }
        out
    }

    /// Forgets where groups are coordinated (a broker said it no longer is).
    pub fn forget_coordinators(&self, groups: &[String]) {
        if let (Ok(mut known), Ok(mut ask_for)) = (self.coordinator_of.lock(), self.ask_for.lock())
        {
            for g in groups {
                known.remove(g);
                ask_for.insert(g.clone());
            }
        }
    }

    /// Groups by coordinator; groups whose coordinator is unknown come back with their error.
    pub async fn by_coordinator(
        &self,
        groups: &[String],
    ) -> (BTreeMap<i32, Vec<String>>, BTreeMap<String, Error>) {
        let mut by = BTreeMap::<i32, Vec<String>>::new();
        let mut failed = BTreeMap::new();
        for (g, r) in self.coordinators(groups).await {
            match r {
                Ok(node) => by.entry(node).or_default().push(g),
                Err(e) => {
                    failed.insert(g, e);
                }
            }
        }
        (by, failed)
    }
}

/// The brokers, and the leaders of `__consumer_offsets` if the principal may see them.
async fn brokers(conn: &Connection) -> Result<(BTreeMap<i32, String>, Vec<i32>)> {
    let v = conn.require_version(ApiKey::Metadata as i16, 1, 12, "reading the broker list")?;
    let topic = MetadataRequestTopic::default().with_name(Some(TopicName(
        StrBytes::from_static_str("__consumer_offsets"),
    )));
    let req = MetadataRequest::default()
        .with_topics(Some(vec![topic]))
        .with_allow_auto_topic_creation(false);
    let resp = conn.call(&req, v).await?;
    let mut leaders = Vec::new();
    if let Some(t) = resp.topics.iter().find(|t| t.error_code == code::NONE) {
        let n = t
            .partitions
            .iter()
            .map(|p| p.partition_index + 1)
            .max()
            .unwrap_or(0);
        leaders = vec![-1; n.max(0) as usize];
        for p in &t.partitions {
            if p.error_code == code::NONE {
                leaders[p.partition_index as usize] = p.leader_id.0;
            }
        }
    }
    let brokers = resp
        .brokers
        .into_iter()
        .map(|b| (b.node_id.0, format!("{}:{}", b.host.as_str(), b.port)))
        .collect();
    Ok((brokers, leaders))
}

/// The `__consumer_offsets` partition a group id maps to, as the broker computes it: the Java
/// `String.hashCode` of the id, made non-negative the way Kafka's `Utils.abs` does (the minimum
/// value becomes 0), modulo the partition count. `None` without partitions.
pub(crate) fn offsets_partition(group: &str, partitions: usize) -> Option<usize> {
    if partitions == 0 {
        return None;
    }
    let hash = group.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let non_negative = if hash == i32::MIN {
        0
    } else {
        hash.unsigned_abs()
    };
    Some(non_negative as usize % partitions)
}

#[cfg(test)]
mod tests {
    use super::offsets_partition;

    #[test]
    fn group_ids_map_to_partitions_as_the_broker_maps_them() {
        // (group id, partition of 50) as Kafka 4.3.1 computes them, printed by jshell with
        // `Utils.abs(s.hashCode()) % 50` from kafka-clients: a positive hash, a negative one,
        // Integer.MIN_VALUE (which Utils.abs makes 0), and non-ASCII characters.
        let cases = [
            ("hello", 22),
            ("Hello World", 26),
            ("polygenelubricants", 0),
            ("connect-orders-sink", 22),
            ("ovbench-g00042", 49),
            ("grüße-ü", 38),
        ];
        for (group, partition) in cases {
            assert_eq!(offsets_partition(group, 50), Some(partition), "{group}");
        }
        assert_eq!(offsets_partition("g", 0), None);
    }
}
