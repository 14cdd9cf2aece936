//! Kafka access: one client per run, used for cluster identity, group and offset reads, partition
//! offsets and commits. All librdkafka calls block, so each runs on tokio's blocking pool.

mod admin;
mod ffi;
mod records;
pub mod tail;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

pub use crate::group_model::{
    DescribeError, GroupDescription, GroupListing, GroupMember, GroupOffset, GroupState, GroupType,
    OffsetQuery, PartitionAnswer, TopicPartition,
};
pub use crate::settings::{ClientProperties, KafkaSettings};
pub use records::{record_digest, Range, RecordPrint};

use crate::error::{Error, Result};
use crate::wire::Cluster;

/// How many group-offset requests run at once.
const GROUP_CONCURRENCY: usize = 8;

/// What [`KafkaClient::read_groups`] returns: the groups' descriptions, and each group's
/// committed offsets (or why they could not be read).
pub type GroupsRead = (
    Vec<GroupDescription>,
    BTreeMap<String, Result<Vec<GroupOffset>>>,
);

/// Log-start and log-end offsets of one partition at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Watermarks {
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
}

/// The client context: keeps librdkafka's last global error (a failed SASL handshake, a refused
/// connection), so a client that gets no answer can say why instead of only "no answer".
#[derive(Default)]
pub struct RecordingContext {
    last_error: Mutex<Option<(RDKafkaErrorCode, String)>>,
}

impl RecordingContext {
    fn last_error(&self) -> Option<(RDKafkaErrorCode, String)> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

impl ClientContext for RecordingContext {
    fn error(&self, error: KafkaError, reason: &str) {
        tracing::debug!("librdkafka: {error}: {reason}");
        if let (Some(code), Ok(mut last)) = (error.rdkafka_error_code(), self.last_error.lock()) {
            *last = Some((code, reason.to_string()));
        }
    }
}

impl ConsumerContext for RecordingContext {}

/// A connected Kafka client. Cheap to clone.
#[derive(Clone)]
pub struct KafkaClient {
    inner: Arc<BaseConsumer<RecordingContext>>,
    settings: Arc<KafkaSettings>,
    cluster_id: String,
    /// The direct protocol path, connected on first use; `None` inside when it is off or
    /// cannot be used (a notice says why).
    wire: Arc<tokio::sync::OnceCell<Option<Arc<Cluster>>>>,
}

impl std::fmt::Debug for KafkaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaClient")
            .field("bootstrap", &self.settings.bootstrap)
            .field("cluster_id", &self.cluster_id)
            .finish()
    }
}

fn client_config(settings: &KafkaSettings) -> ClientConfig {
    let mut config = ClientConfig::new();
    let timeout_ms = settings.timeout.as_millis().max(1000).to_string();
    config
        .set("client.id", "offset-vault")
        .set("socket.connection.setup.timeout.ms", &timeout_ms)
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false");
    for (k, v) in settings.properties.iter() {
        config.set(k, v);
    }
    // The command-line bootstrap wins over one in a properties file.
    config.set("bootstrap.servers", &settings.bootstrap);
    config
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("background task failed: {e}")))?
}

/// Reads the cluster id within the timeout, one short try at a time; between tries, serves
/// librdkafka's events so that an authentication failure ends the wait at once, named as such.
/// `trouble` hears each new error librdkafka reports while the wait goes on (a refused
/// connection, a name that does not resolve), so that a caller can say why long before the
/// timeout ends the wait.
fn first_contact(
    consumer: &BaseConsumer<RecordingContext>,
    s: &KafkaSettings,
    trouble: &mut dyn FnMut(&str),
) -> Result<String> {
    let deadline = Instant::now() + s.timeout;
    let mut told: Option<RDKafkaErrorCode> = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = left
            .min(Duration::from_secs(1))
            .max(Duration::from_millis(100));
        if let Some(id) = consumer.client().fetch_cluster_id(attempt) {
            return Ok(id);
        }
        // Error events reach the context only while the client is polled.
        let _ = consumer.poll(Duration::from_millis(50));
        let last = consumer.context().last_error();
        let denied = last
            .as_ref()
            .is_some_and(|(code, _)| crate::error::is_access_code(*code));
        if denied || Instant::now() >= deadline {
            return Err(no_cluster_id(s, last));
        }
        // Told once per error code: librdkafka's text of a repeated error changes ("1
        // identical error(s) suppressed").
        if let Some((code, reason)) = last.filter(|(code, _)| told != Some(*code)) {
            trouble(&format!("{reason} ({code:?})"));
            told = Some(code);
        }
    }
}

/// Why no cluster id came back: an access failure if librdkafka reported one, else unreachable
/// with the last error librdkafka saw.
fn no_cluster_id(s: &KafkaSettings, last: Option<(RDKafkaErrorCode, String)>) -> Error {
    match last {
        Some((code, reason)) if crate::error::is_access_code(code) => {
            Error::kafka_code("connect", code, &s.bootstrap, reason, s.timeout)
        }
        Some((code, reason)) => Error::KafkaUnreachable {
            bootstrap: s.bootstrap.clone(),
            detail: format!(
                "no answer within {} s; last client error: {reason} ({code:?})",
                s.timeout.as_secs_f32()
            ),
        },
        None => Error::KafkaUnreachable {
            bootstrap: s.bootstrap.clone(),
            detail: format!("no answer within {} s", s.timeout.as_secs_f32()),
        },
    }
}

impl KafkaClient {
    /// Creates the client and proves the cluster is reachable by reading its cluster id, within
    /// the configured timeout.
    pub async fn connect(settings: KafkaSettings) -> Result<Self> {
        Self::connect_watched(settings, |_| {}).await
    }

    /// [`KafkaClient::connect`], telling `trouble` each new client error seen while it waits
    /// for the cluster to answer (the wait goes on until the timeout, as for `connect`).
    pub async fn connect_watched(
        settings: KafkaSettings,
        mut trouble: impl FnMut(&str) + Send + 'static,
    ) -> Result<Self> {
        if settings.bootstrap.trim().is_empty() {
            return Err(Error::usage(
                "no Kafka bootstrap servers: pass --bootstrap-server HOST:PORT or set OFFSET_VAULT_BOOTSTRAP_SERVER",
            ));
        }
        let settings = Arc::new(settings);
        let s = settings.clone();
        blocking(move || {
            let consumer: BaseConsumer<RecordingContext> = client_config(&s)
                .create_with_context(RecordingContext::default())
                .map_err(|e| Error::usage(format!("invalid Kafka client configuration: {e}")))?;
            let cluster_id = first_contact(&consumer, &s, &mut trouble)?;
            Ok(KafkaClient {
                inner: Arc::new(consumer),
                settings: s,
                cluster_id,
                wire: Arc::new(tokio::sync::OnceCell::new()),
            })
        })
        .await
    }

    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    pub fn bootstrap(&self) -> &str {
        &self.settings.bootstrap
    }

    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
    }

    fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    /// The brokers of the cluster as `id@host:port`, and every topic with its partition count.
    pub async fn metadata(&self) -> Result<(Vec<String>, BTreeMap<String, i32>)> {
        let me = self.clone();
        blocking(move || {
            let md = me
                .inner
                .fetch_metadata(None, me.timeout())
                .map_err(|e| Error::kafka("Metadata", e))?;
            let brokers = md
                .brokers()
                .iter()
                .map(|b| format!("{}@{}:{}", b.id(), b.host(), b.port()))
                .collect();
            let topics = md
                .topics()
                .iter()
                .filter(|t| t.error().is_none())
                .map(|t| (t.name().to_string(), t.partitions().len() as i32))
                .collect();
            Ok((brokers, topics))
        })
        .await
    }

    /// The brokers as `id@host:port` (from the direct path's metadata when it is on).
    pub async fn brokers(&self) -> Result<Vec<String>> {
        match self.wire().await {
            Some(wire) => Ok(wire.broker_list()),
            None => Ok(self.metadata().await?.0),
        }
    }

    /// The partition count of each named topic that exists. With the direct path, one Metadata
    /// request for those topics; without it, librdkafka's metadata of every topic.
    pub async fn partition_counts(&self, topics: Vec<String>) -> Result<BTreeMap<String, i32>> {
        if let Some(wire) = self.wire().await {
            return wire.partition_counts(&topics).await;
        }
        let wanted: BTreeSet<String> = topics.into_iter().collect();
        Ok(self
            .metadata()
            .await?
            .1
            .into_iter()
            .filter(|(t, _)| wanted.contains(t))
            .collect())
    }

    /// Each existing topic's id, for the named topics (one DescribeTopics request).
    pub async fn topic_ids(&self, topics: Vec<String>) -> Result<BTreeMap<String, String>> {
        let me = self.clone();
        blocking(move || ffi::topic_ids(me.inner.client(), &topics, me.timeout()))
            .await
            .map(|ids| ids.into_iter().collect())
    }

    /// The direct protocol path, if it is on and usable. The first call connects; when the
    /// settings or the broker do not allow it, a notice says so once and librdkafka does the work.
    pub async fn wire(&self) -> Option<Arc<Cluster>> {
        self.wire
            .get_or_init(|| async {
                if !self.settings.direct {
                    return None;
                }
                let why = match Cluster::connect(&self.settings).await {
                    Ok(Ok(c)) => return Some(Arc::new(c)),
                    Ok(Err(e)) => format!("the direct connection failed: {e}"),
                    Err(reason) => reason,
                };
                crate::noteln!(
                    "note: {why}; using librdkafka only: group offsets are read one group per request, and share groups and group configs cannot be read"
                );
                None
            })
            .await
            .clone()
    }

    /// The direct path, or an error saying why `what` needs it.
    pub async fn require_wire(&self, what: &str) -> Result<Arc<Cluster>> {
        if let Some(c) = self.wire().await {
            return Ok(c);
        }
        let why = if self.settings.direct {
            "the direct protocol path cannot be used with these client settings (see the note above)"
        } else {
            "the direct protocol path is turned off (--librdkafka-only)"
        };
        Err(Error::usage(format!(
            "{what} needs Kafka's own protocol, but {why}"
        )))
    }

    pub async fn list_groups(&self) -> Result<Vec<GroupListing>> {
        self.list_groups_where(&|_| true).await
    }

    /// [`Self::list_groups`], only the groups `keep` wants (the others are dropped as the
    /// listing is read).
    pub async fn list_groups_where(
        &self,
        keep: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<GroupListing>> {
        if let Some(wire) = self.wire().await {
            return Ok(wire
                .list_groups_where(keep)
                .await?
                .into_iter()
                .map(|g| GroupListing {
                    is_simple: g.protocol_type.is_empty(),
                    group_id: g.group_id,
                    state: g.state,
                    group_type: g.group_type,
                    protocol_type: Some(g.protocol_type),
                })
                .collect());
        }
        let me = self.clone();
        let all = blocking(move || ffi::list_groups(me.inner.client(), me.timeout())).await?;
        Ok(all.into_iter().filter(|g| keep(&g.group_id)).collect())
    }

    /// The type of each named group that the cluster lists (with the direct path; without it,
    /// none is known and every group is taken as a consumer group).
    pub async fn group_types(&self, groups: &[String]) -> Result<BTreeMap<String, GroupListing>> {
        if groups.is_empty() {
            return Ok(BTreeMap::new());
        }
        let wanted: BTreeSet<&str> = groups.iter().map(String::as_str).collect();
        self.group_types_where(&|g| wanted.contains(g)).await
    }

    /// [`Self::group_types`] of the groups `wanted` says: the listing is filtered as it is
    /// read, so a batch of a large cluster's groups holds its own groups' listing only.
    pub async fn group_types_where(
        &self,
        wanted: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<BTreeMap<String, GroupListing>> {
        if self.wire().await.is_none() {
            return Ok(BTreeMap::new());
        }
        Ok(Self::listed_types(
            self.list_groups_where(wanted).await?,
            &|g| wanted(g),
        ))
    }

    /// [`Self::group_types`] out of a listing already read, for the groups `wanted` says.
    pub fn listed_types(
        listing: Vec<GroupListing>,
        wanted: &dyn Fn(&String) -> bool,
    ) -> BTreeMap<String, GroupListing> {
        listing
            .into_iter()
            .filter(|g| wanted(&g.group_id))
            .map(|g| (g.group_id.clone(), g))
            .collect()
    }

    /// Describes groups of any type. With the direct path: batched per coordinator, each type
    /// with its own request (streams groups from the listing, state only). Without it: librdkafka.
    pub async fn describe_groups(&self, groups: Vec<String>) -> Result<Vec<GroupDescription>> {
        let types = self.group_types(&groups).await?;
        self.describe_listed(groups, &types).await
    }

    /// Descriptions and committed offsets of groups, listing the groups once for both.
    pub async fn read_groups(&self, groups: Vec<String>) -> Result<GroupsRead> {
        let types = self.group_types(&groups).await?;
        self.read_groups_typed(groups, &types).await
    }

    /// [`Self::read_groups`] with the groups' listing already read ([`Self::group_types`]), so
    /// groups read in several batches are listed once.
    pub async fn read_groups_typed(
        &self,
        groups: Vec<String>,
        types: &BTreeMap<String, GroupListing>,
    ) -> Result<GroupsRead> {
        let (described, offsets) = futures::join!(
            self.describe_listed(groups.clone(), types),
            self.offsets_listed(groups, types)
        );
        Ok((described?, offsets))
    }

    /// [`Self::describe_groups`] with the groups' listing (empty without the direct path).
    async fn describe_listed(
        &self,
        groups: Vec<String>,
        types: &BTreeMap<String, GroupListing>,
    ) -> Result<Vec<GroupDescription>> {
        let Some(wire) = self.wire().await else {
            let me = self.clone();
            return blocking(move || {
                ffi::describe_groups(me.inner.client(), &groups, me.timeout())
            })
            .await;
        };
        let mut out = Vec::new();
        let mut by_type: BTreeMap<GroupType, Vec<String>> = BTreeMap::new();
        for g in &groups {
            // An Empty group has no members: its listing says all a description would.
            if let Some(l) = types.get(g).filter(|l| l.state == GroupState::Empty) {
                out.push(GroupDescription {
                    group_id: g.clone(),
                    state: GroupState::Empty,
                    group_type: l.group_type,
                    is_simple: l.is_simple,
                    members: Vec::new(),
                    error: None,
                });
                continue;
            }
            let t = match types.get(g).map(|l| l.group_type) {
                Some(t @ (GroupType::Share | GroupType::Consumer | GroupType::Streams)) => t,
                _ => GroupType::Classic,
            };
            by_type.entry(t).or_default().push(g.clone());
        }
        for (t, ids) in by_type {
            if t == GroupType::Streams {
                out.extend(ids.iter().map(|g| GroupDescription {
                    group_id: g.clone(),
                    state: types[g].state.clone(),
                    group_type: t,
                    is_simple: false,
                    members: Vec::new(),
                    error: None,
                }));
                continue;
            }
            let started = Instant::now();
            let answers = wire.describe(&ids, t).await;
            tracing::debug!(
                "described {} {t} group(s) in {:?}",
                ids.len(),
                started.elapsed()
            );
            for (g, d) in answers {
                let (state, members, is_simple) = match d {
                    Ok(d) => (d.state, d.members, d.protocol_type.is_empty()),
                    Err(e) => (GroupState::Unknown(e.to_string()), Vec::new(), false),
                };
                // A classic group that does not exist is described as Dead with no type.
                let group_type = types.get(&g).map_or(t, |l| l.group_type);
                out.push(GroupDescription {
                    group_id: g,
                    state,
                    group_type,
                    is_simple,
                    members,
                    error: None,
                });
            }
        }
        Ok(out)
    }

    /// The configs of groups (Kafka 4.0+ group configs), name to value.
    pub async fn group_configs(
        &self,
        groups: &[String],
    ) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
        if groups.is_empty() {
            return Ok(BTreeMap::new());
        }
        self.require_wire("reading group configs")
            .await?
            .group_configs(groups)
            .await
    }

    /// Committed offsets of many groups, a bounded number of requests at a time; the first
    /// failure fails the whole call.
    pub async fn group_offsets(
        &self,
        groups: Vec<String>,
    ) -> Result<BTreeMap<String, Vec<GroupOffset>>> {
        self.group_offsets_each(groups)
            .await
            .into_iter()
            .map(|(g, r)| r.map(|o| (g, o)))
            .collect()
    }

    /// Committed offsets of many groups, each group's answer on its own. Share groups give
    /// their start offsets. With the direct path, one request per coordinator carries many
    /// groups; without it, librdkafka asks one group per request.
    pub async fn group_offsets_each(
        &self,
        groups: Vec<String>,
    ) -> BTreeMap<String, Result<Vec<GroupOffset>>> {
        match self.group_types(&groups).await {
            Ok(types) => self.offsets_listed(groups, &types).await,
            Err(e) => {
                let text = e.to_string();
                groups
                    .into_iter()
                    .map(|g| (g, Err(Error::kafka("ListGroups", text.clone()))))
                    .collect()
            }
        }
    }

    /// [`Self::group_offsets_each`] with the groups' listing (empty without the direct path).
    /// Committed offsets of groups whose types are known (`types`: at least the share groups;
    /// the others are asked with OffsetFetch), each group's answer on its own.
    pub async fn offsets_listed(
        &self,
        groups: Vec<String>,
        types: &BTreeMap<String, GroupListing>,
    ) -> BTreeMap<String, Result<Vec<GroupOffset>>> {
        let Some(wire) = self.wire().await else {
            return self.group_offsets_one_by_one(groups).await;
        };
        let (share, rest): (Vec<String>, Vec<String>) = groups.into_iter().partition(|g| {
            types
                .get(g)
                .is_some_and(|l| l.group_type == GroupType::Share)
        });
        let n = rest.len() as u64;
        let (mut out, shares) =
            futures::join!(wire.offset_fetch(&rest), wire.share_offsets(&share));
        crate::progress::advance(n);
        for (g, r) in shares {
            let offsets = r.map(|offsets| {
                offsets
                    .into_iter()
                    .map(|o| GroupOffset {
                        topic: o.topic,
                        partition: o.partition,
                        offset: o.start_offset,
                        leader_epoch: o.leader_epoch,
                        metadata: None,
                        lag: o.lag,
                    })
                    .collect()
            });
            crate::progress::advance(1);
            out.insert(g, offsets);
        }
        out
    }

    async fn group_offsets_one_by_one(
        &self,
        groups: Vec<String>,
    ) -> BTreeMap<String, Result<Vec<GroupOffset>>> {
        stream::iter(groups.into_iter().map(|group| {
            let me = self.clone();
            async move {
                let g = group.clone();
                let offsets =
                    blocking(move || ffi::list_group_offsets(me.inner.client(), &g, me.timeout()))
                        .await;
                crate::progress::advance(1);
                (group, offsets)
            }
        }))
        .buffer_unordered(GROUP_CONCURRENCY)
        .collect()
        .await
    }

    /// Log-start and log-end offsets of a set of partitions: two batched requests in all.
    /// Partitions with an error are asked again (leadership moves, metadata refreshes: until the
    /// timeout; other errors a few times); one that still fails (e.g. its topic is gone) gets
    /// `None` and a warning.
    pub async fn watermarks(
        &self,
        partitions: &BTreeSet<TopicPartition>,
    ) -> Result<BTreeMap<TopicPartition, Watermarks>> {
        let earliest = self.list_offsets_retrying(partitions, OffsetQuery::Earliest);
        let latest = self.list_offsets_retrying(partitions, OffsetQuery::Latest);
        let (earliest, latest) = futures::try_join!(earliest, latest)?;
        Ok(partitions
            .iter()
            .map(|tp| {
                // A log offset is never negative; anything else is no answer.
                let valid = |r: Option<&std::result::Result<i64, String>>| {
                    r.and_then(|r| r.clone().ok()).filter(|o| *o >= 0)
                };
                let w = Watermarks {
                    log_start: valid(earliest.get(tp)),
                    log_end: valid(latest.get(tp)),
                };
                (tp.clone(), w)
            })
            .collect())
    }

    /// [`Self::list_offsets`], asking again for the partitions that failed.
    async fn list_offsets_retrying(
        &self,
        partitions: &BTreeSet<TopicPartition>,
        query: OffsetQuery,
    ) -> Result<HashMap<TopicPartition, std::result::Result<i64, String>>> {
        // Leadership moves and new partitions' first elections answer with an error for a while
        // (a broker creating a topic of a thousand partitions under load takes well over 10 s to
        // lead them all): ask the failed partitions again, backing off up to a second, until the
        // request timeout has passed.
        let deadline = Instant::now() + self.timeout();
        let mut answers = self.list_offsets(partitions, query).await?;
        for attempt in 1u64.. {
            if Instant::now() >= deadline {
                break;
            }
            // Other errors (a topic that is gone) are asked about ten times, not for the whole
            // timeout.
            let failed: BTreeSet<TopicPartition> = partitions
                .iter()
                .filter(|tp| match answers.get(*tp) {
                    Some(Ok(_)) => false,
                    Some(Err(e)) => attempt <= 10 || leadership_error(e),
                    None => true,
                })
                .cloned()
                .collect();
            if failed.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis((200 * attempt).min(1000))).await;
            answers.extend(self.list_offsets(&failed, query).await?);
        }
        for tp in partitions {
            match answers.get(tp) {
                Some(Ok(_)) => {}
                Some(Err(e)) => tracing::warn!("{query:?} offset of {}[{}]: {e}", tp.0, tp.1),
                None => tracing::warn!("{query:?} offset of {}[{}]: no answer", tp.0, tp.1),
            }
        }
        Ok(answers)
    }

    /// One offset lookup per partition, all in one batched request.
    pub async fn list_offsets(
        &self,
        partitions: &BTreeSet<TopicPartition>,
        query: OffsetQuery,
    ) -> Result<HashMap<TopicPartition, std::result::Result<i64, String>>> {
        self.list_offsets_each(partitions.iter().map(|tp| (tp.clone(), query)).collect())
            .await
    }

    /// Offset lookups with a query per partition, batched: with the direct path, one Metadata
    /// request and one ListOffsets request per leader; without it, librdkafka's ListOffsets.
    /// The direct path is preferred because librdkafka 2.12.1's `rd_kafka_ListOffsets` can crash
    /// the process (a NULL lock in its leader lookup) when several run at once.
    pub async fn list_offsets_each(
        &self,
        queries: Vec<(TopicPartition, OffsetQuery)>,
    ) -> Result<HashMap<TopicPartition, std::result::Result<i64, String>>> {
        let queries: Vec<(String, i32, OffsetQuery)> =
            queries.into_iter().map(|((t, p), q)| (t, p, q)).collect();
        let answers = match self.wire().await {
            Some(wire) => wire.list_offsets(&queries).await?,
            None => {
                let me = self.clone();
                blocking(move || ffi::list_offsets(me.inner.client(), &queries, me.timeout()))
                    .await?
            }
        };
        Ok(answers
            .into_iter()
            .map(|a| ((a.topic, a.partition), a.result))
            .collect())
    }

    /// Commits offsets for an empty group of the given type (a share group: sets its start
    /// offsets). Each partition's answer must be checked by the caller.
    pub async fn alter_group_offsets(
        &self,
        group: String,
        group_type: GroupType,
        offsets: Vec<GroupOffset>,
    ) -> Result<Vec<PartitionAnswer>> {
        if group_type == GroupType::Share {
            let wire = self.require_wire("setting share-group offsets").await?;
            return wire.alter_share_offsets(&group, &offsets).await;
        }
        if let Some(wire) = self.wire().await {
            return wire.commit_offsets(&group, &offsets).await;
        }
        let me = self.clone();
        blocking(move || {
            ffi::alter_group_offsets(me.inner.client(), &group, &offsets, me.timeout())
        })
        .await
    }

    /// The record just before each given offset (its timestamp and fingerprint), i.e. the last
    /// record a group at that offset has consumed, keyed by (partition, offset). Records that are
    /// gone (deleted or compacted away) are left out. One consumer reads all partitions at once,
    /// within the timeout; when several offsets of one partition are asked for, it reads in
    /// rounds. Also returns the positions whose record could not be read in time
    /// (`topic[partition]@offset`).
    pub async fn last_records(
        &self,
        positions: Vec<(TopicPartition, i64)>,
    ) -> Result<(BTreeMap<(TopicPartition, i64), RecordPrint>, Vec<String>)> {
        if positions.is_empty() {
            return Ok((BTreeMap::new(), Vec::new()));
        }
        let settings = self.settings.clone();
        blocking(move || {
            let consumer = reader(&settings)?;
            let mut rounds: BTreeMap<TopicPartition, Vec<i64>> = BTreeMap::new();
            for (tp, offset) in positions {
                rounds.entry(tp).or_default().push(offset);
            }
            let mut found = BTreeMap::new();
            let mut unread = Vec::new();
            let deadline = Instant::now() + settings.timeout;
            loop {
                let round: HashMap<TopicPartition, i64> = rounds
                    .iter_mut()
                    .filter_map(|(tp, offsets)| offsets.pop().map(|o| (tp.clone(), o - 1)))
                    .collect();
                if round.is_empty() {
                    break;
                }
                let asked = round.clone();
                let (read, missing) = records::read_records_at(&consumer, round, deadline)?;
                for (tp, record) in read {
                    let record_offset = asked[&tp];
                    found.insert((tp, record_offset + 1), record);
                }
                unread.extend(missing);
            }
            Ok((found, unread))
        })
        .await
    }

    /// Every record of the given offset ranges, per partition in offset order (key and value
    /// kept when `keep_payload`). Fails when a range cannot be read whole within the timeout.
    pub async fn read_ranges(
        &self,
        ranges: Vec<Range>,
        keep_payload: bool,
    ) -> Result<BTreeMap<TopicPartition, Vec<RecordPrint>>> {
        let settings = self.settings.clone();
        blocking(move || {
            let consumer = reader(&settings)?;
            let deadline = Instant::now() + settings.timeout;
            records::read_ranges(&consumer, &ranges, keep_payload, deadline)
        })
        .await
    }
}

/// A consumer that only reads (assigned partitions, never commits).
fn reader(settings: &KafkaSettings) -> Result<BaseConsumer> {
    client_config(settings)
        .set("group.id", "offset-vault-reader-unused")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "error")
        .create()
        .map_err(|e| Error::kafka("consumer", e))
}

/// Whether a partition's error is a leader that is moving or not elected yet, which passes.
/// Names from both paths: librdkafka's (`NotLeaderForPartition`) and Kafka's own, as the direct
/// path gives them (`NotLeaderOrFollower`; `OffsetNotAvailable` from a leader just elected whose
/// high watermark has not caught up).
fn leadership_error(error: &str) -> bool {
    [
        "NotLeader",
        "LeaderNotAvailable",
        "OffsetNotAvailable",
        "the partition leader did not answer",
    ]
    .iter()
    .any(|e| error.contains(e))
}

#[cfg(test)]
mod tests {
    use super::leadership_error;

    #[test]
    fn only_leadership_errors_are_waited_out() {
        for (error, passes) in [
            (
                "NotLeaderForPartition (Broker: Not leader for partition)",
                true,
            ),
            ("LeaderNotAvailable (Broker: Leader not available)", true),
            (
                "no offset in the answer (the partition leader did not answer)",
                true,
            ),
            (
                "UnknownTopicOrPartition (Broker: Unknown topic or partition)",
                false,
            ),
            (
                "TopicAuthorizationFailed (Broker: Topic authorization failed)",
                false,
            ),
            // The direct path's answers (see `wire::offsets`).
            ("NotLeaderOrFollower (6)", true),
            ("LeaderNotAvailable (5)", true),
            ("OffsetNotAvailable (78)", true),
            (
                "no offset in the answer (the partition leader did not answer)",
                true,
            ),
            (
                "the partition leader did not answer: broker 2: Kafka unreachable",
                true,
            ),
            ("UnknownTopicOrPartition (3)", false),
            ("TopicAuthorizationFailed (29)", false),
        ] {
            assert_eq!(leadership_error(error), passes, "{error}");
        }
    }
}
