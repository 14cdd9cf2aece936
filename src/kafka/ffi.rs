//! Safe wrappers over the librdkafka admin calls that rdkafka's `AdminClient` does not expose:
//! listing and describing consumer groups, reading and altering committed offsets, and listing
//! partition offsets (earliest, latest, by timestamp).
//!
//! This is the only module with `unsafe` code. Every call follows the same pattern: build the
//! request objects, submit them with a private result queue, wait for exactly one result event with
//! a timeout, copy everything out of the event into owned Rust values, then free the native objects.
//! Nothing borrowed from librdkafka outlives the function that read it.

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::time::Duration;

use rdkafka::bindings as rd;
use rdkafka::client::Client;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use crate::error::{Error, Result};
use crate::group_model::{
    DescribeError, GroupDescription, GroupListing, GroupMember, GroupOffset, GroupState, GroupType,
    OffsetQuery, PartitionAnswer,
};

/// librdkafka's "invalid offset" (`RD_KAFKA_OFFSET_INVALID`).
const OFFSET_INVALID: i64 = -1001;

/// Owns a native object and frees it with the given function when dropped.
struct Owned<T> {
    ptr: *mut T,
    free: unsafe extern "C" fn(*mut T),
}

impl<T> Owned<T> {
    fn new(ptr: *mut T, free: unsafe extern "C" fn(*mut T)) -> Result<Self> {
        if ptr.is_null() {
            return Err(Error::Internal("librdkafka returned a null object".into()));
        }
        Ok(Owned { ptr, free })
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the matching librdkafka constructor and is freed exactly once.
        unsafe { (self.free)(self.ptr) }
    }
}

/// Copies a nullable C string into an owned `String`.
///
/// SAFETY: `p` is null or points to a NUL-terminated string valid for the duration of the call.
unsafe fn owned_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

fn err_text(code: rd::rd_kafka_resp_err_t) -> String {
    RDKafkaErrorCode::from(code).to_string()
}

/// SAFETY: `e` is null or a valid `rd_kafka_error_t`.
unsafe fn error_text(e: *const rd::rd_kafka_error_t) -> Option<String> {
    if e.is_null() {
        None
    } else {
        Some(owned_str(rd::rd_kafka_error_string(e)).unwrap_or_else(|| "unknown error".into()))
    }
}

/// SAFETY: `e` is null or a valid `rd_kafka_error_t`.
unsafe fn describe_error(e: *const rd::rd_kafka_error_t) -> Option<DescribeError> {
    if e.is_null() {
        return None;
    }
    Some(DescribeError {
        code: RDKafkaErrorCode::from(rd::rd_kafka_error_code(e)),
        message: error_text(e).unwrap_or_default(),
    })
}

/// Submits one admin request on a private queue and waits for its result event.
///
/// `submit` gets the admin options and the queue, and must hand them to exactly one librdkafka
/// admin call. The returned event is checked for its type and top-level error.
fn run_admin<C: ClientContext>(
    client: &Client<C>,
    op_name: &'static str,
    op: rd::rd_kafka_admin_op_t,
    expected_event: i32,
    timeout: Duration,
    submit: impl FnOnce(*mut rd::rd_kafka_AdminOptions_t, *mut rd::rd_kafka_queue_t),
) -> Result<Owned<rd::rd_kafka_event_t>> {
    let rk = client.native_ptr();
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `rk` is a live client handle owned by `client`, which outlives this call. The queue
    // and options are freed by their guards after the event has been taken off the queue.
    unsafe {
        let queue = Owned::new(rd::rd_kafka_queue_new(rk), rd::rd_kafka_queue_destroy)?;
        let options = Owned::new(
            rd::rd_kafka_AdminOptions_new(rk, op),
            rd::rd_kafka_AdminOptions_destroy,
        )?;
        let mut errstr = [0 as c_char; 256];
        let code = rd::rd_kafka_AdminOptions_set_request_timeout(
            options.ptr,
            timeout_ms,
            errstr.as_mut_ptr(),
            errstr.len(),
        );
        if code != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Err(Error::kafka(
                op_name,
                owned_str(errstr.as_ptr()).unwrap_or_default(),
            ));
        }
        submit(options.ptr, queue.ptr);
        // Leave the broker's own timeout room to answer before we give up waiting.
        let event = rd::rd_kafka_queue_poll(queue.ptr, timeout_ms.saturating_add(2000));
        if event.is_null() {
            return Err(Error::Timeout {
                service: "Kafka",
                op: op_name.to_string(),
                after: timeout,
                detail: "no answer from the cluster".into(),
            });
        }
        let event = Owned::new(event, rd::rd_kafka_event_destroy)?;
        let kind = rd::rd_kafka_event_type(event.ptr);
        if kind != expected_event {
            return Err(Error::kafka(
                op_name,
                format!("unexpected event type {kind} from librdkafka"),
            ));
        }
        let code = rd::rd_kafka_event_error(event.ptr);
        if code != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            let text = owned_str(rd::rd_kafka_event_error_string(event.ptr))
                .unwrap_or_else(|| err_text(code));
            return Err(Error::kafka_code(
                op_name,
                RDKafkaErrorCode::from(code),
                "the cluster",
                text,
                timeout,
            ));
        }
        Ok(event)
    }
}

/// SAFETY: `p` is a valid `rd_kafka_topic_partition_t`.
unsafe fn read_partition(
    p: &rd::rd_kafka_topic_partition_t,
) -> (String, i32, i64, Option<i32>, Option<String>) {
    let topic = owned_str(p.topic).unwrap_or_default();
    let epoch = rd::rd_kafka_topic_partition_get_leader_epoch(p);
    let metadata = if p.metadata.is_null() || p.metadata_size == 0 {
        None
    } else {
        let bytes = std::slice::from_raw_parts(p.metadata as *const u8, p.metadata_size);
        Some(String::from_utf8_lossy(bytes).into_owned())
    };
    (
        topic,
        p.partition,
        p.offset,
        (epoch >= 0).then_some(epoch),
        metadata,
    )
}

/// SAFETY: `list` is null or a valid topic-partition list.
unsafe fn partitions_of<'a>(
    list: *const rd::rd_kafka_topic_partition_list_t,
) -> &'a [rd::rd_kafka_topic_partition_t] {
    if list.is_null() || (*list).cnt <= 0 || (*list).elems.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts((*list).elems, (*list).cnt as usize)
    }
}

/// SAFETY: `array` is null or points to `cnt` valid pointers.
unsafe fn array_of<'a, T>(array: *mut *const T, cnt: usize) -> &'a [*const T] {
    if array.is_null() || cnt == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(array as *const *const T, cnt)
    }
}

/// Lists every consumer group the cluster knows (classic and consumer protocol).
pub fn list_groups<C: ClientContext>(
    client: &Client<C>,
    timeout: Duration,
) -> Result<Vec<GroupListing>> {
    let event = run_admin(
        client,
        "ListConsumerGroups",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS,
        rd::RD_KAFKA_EVENT_LISTCONSUMERGROUPS_RESULT,
        timeout,
        // SAFETY: valid client, options and queue, as documented by `run_admin`.
        |opts, queue| unsafe { rd::rd_kafka_ListConsumerGroups(client.native_ptr(), opts, queue) },
    )?;
    // SAFETY: the event is a ListConsumerGroups result; everything read is copied out before the
    // event guard frees it.
    unsafe {
        let res = rd::rd_kafka_event_ListConsumerGroups_result(event.ptr);
        let mut cnt = 0usize;
        let errors = rd::rd_kafka_ListConsumerGroups_result_errors(res, &mut cnt);
        if let Some(first) = array_of(errors, cnt).first() {
            return Err(Error::kafka(
                "ListConsumerGroups",
                error_text(*first).unwrap_or_default(),
            ));
        }
        let mut cnt = 0usize;
        let valid = rd::rd_kafka_ListConsumerGroups_result_valid(res, &mut cnt);
        Ok(array_of(valid, cnt)
            .iter()
            .map(|&g| GroupListing {
                group_id: owned_str(rd::rd_kafka_ConsumerGroupListing_group_id(g))
                    .unwrap_or_default(),
                state: GroupState::from_name(&state_name(rd::rd_kafka_ConsumerGroupListing_state(
                    g,
                ))),
                group_type: GroupType::from_name(&type_name(
                    rd::rd_kafka_ConsumerGroupListing_type(g),
                )),
                is_simple: rd::rd_kafka_ConsumerGroupListing_is_simple_consumer_group(g) != 0,
                protocol_type: None,
            })
            .collect())
    }
}

fn state_name(state: rd::rd_kafka_consumer_group_state_t) -> String {
    // SAFETY: librdkafka returns a static string for every state value.
    unsafe { owned_str(rd::rd_kafka_consumer_group_state_name(state)) }
        .unwrap_or_else(|| "Unknown".into())
}

fn type_name(kind: rd::rd_kafka_consumer_group_type_t) -> String {
    // SAFETY: librdkafka returns a static string for every type value.
    unsafe { owned_str(rd::rd_kafka_consumer_group_type_name(kind)) }
        .unwrap_or_else(|| "Unknown".into())
        .to_lowercase()
}

/// Describes the given groups in one request (librdkafka routes it to each group's coordinator).
pub fn describe_groups<C: ClientContext>(
    client: &Client<C>,
    groups: &[String],
    timeout: Duration,
) -> Result<Vec<GroupDescription>> {
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<CString> = groups
        .iter()
        .map(|g| CString::new(g.as_str()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::usage("a group id contains a NUL byte"))?;
    let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let event = run_admin(
        client,
        "DescribeConsumerGroups",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS,
        rd::RD_KAFKA_EVENT_DESCRIBECONSUMERGROUPS_RESULT,
        timeout,
        // SAFETY: `ptrs` holds `ptrs.len()` valid C strings that librdkafka copies.
        |opts, queue| unsafe {
            rd::rd_kafka_DescribeConsumerGroups(
                client.native_ptr(),
                ptrs.as_mut_ptr(),
                ptrs.len(),
                opts,
                queue,
            )
        },
    )?;
    // SAFETY: the event is a DescribeConsumerGroups result; all data is copied out.
    unsafe {
        let res = rd::rd_kafka_event_DescribeConsumerGroups_result(event.ptr);
        let mut cnt = 0usize;
        let descs = rd::rd_kafka_DescribeConsumerGroups_result_groups(res, &mut cnt);
        Ok(array_of(descs, cnt)
            .iter()
            .map(|&d| {
                let members = (0..rd::rd_kafka_ConsumerGroupDescription_member_count(d))
                    .map(|i| rd::rd_kafka_ConsumerGroupDescription_member(d, i))
                    .filter(|m| !m.is_null())
                    .map(|m| GroupMember {
                        member_id: owned_str(rd::rd_kafka_MemberDescription_consumer_id(m))
                            .unwrap_or_default(),
                        client_id: owned_str(rd::rd_kafka_MemberDescription_client_id(m))
                            .unwrap_or_default(),
                        host: owned_str(rd::rd_kafka_MemberDescription_host(m)).unwrap_or_default(),
                    })
                    .collect();
                let error = describe_error(rd::rd_kafka_ConsumerGroupDescription_error(d));
                let state = state_name(rd::rd_kafka_ConsumerGroupDescription_state(d));
                GroupDescription {
                    group_id: owned_str(rd::rd_kafka_ConsumerGroupDescription_group_id(d))
                        .unwrap_or_default(),
                    state: GroupState::from_description(&state, error.as_ref()),
                    group_type: GroupType::from_name(&type_name(
                        rd::rd_kafka_ConsumerGroupDescription_type(d),
                    )),
                    is_simple: rd::rd_kafka_ConsumerGroupDescription_is_simple_consumer_group(d)
                        != 0,
                    members,
                    error,
                }
            })
            .collect())
    }
}

/// Reads every committed offset of one group (all topics; the caller need not know them).
pub fn list_group_offsets<C: ClientContext>(
    client: &Client<C>,
    group: &str,
    timeout: Duration,
) -> Result<Vec<GroupOffset>> {
    let name = CString::new(group).map_err(|_| Error::usage("a group id contains a NUL byte"))?;
    // SAFETY: the request copies the group name; a null partition list means "all partitions".
    let request = Owned::new(
        unsafe { rd::rd_kafka_ListConsumerGroupOffsets_new(name.as_ptr(), ptr::null()) },
        rd::rd_kafka_ListConsumerGroupOffsets_destroy,
    )?;
    let mut requests = [request.ptr];
    let event = run_admin(
        client,
        "ListConsumerGroupOffsets",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS,
        rd::RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT,
        timeout,
        // SAFETY: one valid request; librdkafka copies it, the guard frees ours.
        |opts, queue| unsafe {
            rd::rd_kafka_ListConsumerGroupOffsets(
                client.native_ptr(),
                requests.as_mut_ptr(),
                1,
                opts,
                queue,
            )
        },
    )?;
    // SAFETY: the event is a ListConsumerGroupOffsets result; all data is copied out.
    unsafe {
        let res = rd::rd_kafka_event_ListConsumerGroupOffsets_result(event.ptr);
        let mut cnt = 0usize;
        let groups = rd::rd_kafka_ListConsumerGroupOffsets_result_groups(res, &mut cnt);
        let mut out = Vec::new();
        for (p, err) in group_partitions(groups, cnt, "ListConsumerGroupOffsets", group, timeout)? {
            let (topic, partition, offset, leader_epoch, metadata) = p;
            if let Some(e) = err {
                return Err(Error::kafka(
                    "ListConsumerGroupOffsets",
                    format!("group {group}, {topic}[{partition}]: {e}"),
                ));
            }
            // A negative offset means "no committed offset" for that partition.
            if offset >= 0 {
                out.push(GroupOffset {
                    topic,
                    partition,
                    offset,
                    leader_epoch,
                    metadata,
                    lag: None,
                });
            }
        }
        out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        Ok(out)
    }
}

/// The fields of a partition in a group result, and its error if any.
type GroupPartition = (
    (String, i32, i64, Option<i32>, Option<String>),
    Option<String>,
);

/// Reads the partitions of a group-offsets result; a group-level error fails the whole call.
///
/// SAFETY: `groups` is null or points to `cnt` valid group results owned by a live event.
unsafe fn group_partitions(
    groups: *mut *const rd::rd_kafka_group_result_t,
    cnt: usize,
    op: &'static str,
    group: &str,
    timeout: Duration,
) -> Result<Vec<GroupPartition>> {
    let mut out = Vec::new();
    for &g in array_of(groups, cnt) {
        if let Some(e) = describe_error(rd::rd_kafka_group_result_error(g)) {
            return Err(Error::kafka_code(
                op,
                e.code,
                &format!("group {group}"),
                format!("group {group}: {}", e.message),
                timeout,
            ));
        }
        for p in partitions_of(rd::rd_kafka_group_result_partitions(g)) {
            let err = (p.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
                .then(|| err_text(p.err));
            out.push((read_partition(p), err));
        }
    }
    Ok(out)
}

/// Builds a native topic-partition list; `fill` sets each element's fields.
fn native_list<T>(
    items: &[T],
    key: impl Fn(&T) -> (&str, i32),
    fill: impl Fn(&T, *mut rd::rd_kafka_topic_partition_t),
) -> Result<Owned<rd::rd_kafka_topic_partition_list_t>> {
    // SAFETY: the list is created here and freed by the guard; elements are written through the
    // pointers librdkafka returns for them.
    unsafe {
        let list = Owned::new(
            rd::rd_kafka_topic_partition_list_new(items.len().max(1) as i32),
            rd::rd_kafka_topic_partition_list_destroy,
        )?;
        for item in items {
            let (topic, partition) = key(item);
            let topic = CString::new(topic).map_err(|_| Error::usage("a topic contains NUL"))?;
            let elem = rd::rd_kafka_topic_partition_list_add(list.ptr, topic.as_ptr(), partition);
            if elem.is_null() {
                return Err(Error::Internal("cannot add to a partition list".into()));
            }
            fill(item, elem);
        }
        Ok(list)
    }
}

/// Commits offsets for a group through the admin API. The group must be empty; the broker refuses
/// otherwise. Returns one answer per partition (the request itself may succeed while single
/// partitions fail, so the caller must look at each).
pub fn alter_group_offsets<C: ClientContext>(
    client: &Client<C>,
    group: &str,
    offsets: &[GroupOffset],
    timeout: Duration,
) -> Result<Vec<PartitionAnswer>> {
    let name = CString::new(group).map_err(|_| Error::usage("a group id contains a NUL byte"))?;
    let list = native_list(
        offsets,
        |o| (o.topic.as_str(), o.partition),
        // SAFETY: `elem` is a fresh element of the list; librdkafka copies the metadata buffer.
        |o, elem| unsafe {
            (*elem).offset = o.offset;
            if let Some(epoch) = o.leader_epoch {
                rd::rd_kafka_topic_partition_set_leader_epoch(elem, epoch);
            }
            if let Some(meta) = &o.metadata {
                let buf = rd::rd_kafka_mem_malloc(ptr::null_mut(), meta.len().max(1));
                ptr::copy_nonoverlapping(meta.as_ptr(), buf as *mut u8, meta.len());
                (*elem).metadata = buf;
                (*elem).metadata_size = meta.len();
            }
        },
    )?;
    // SAFETY: the request copies the group name and the list.
    let request = Owned::new(
        unsafe { rd::rd_kafka_AlterConsumerGroupOffsets_new(name.as_ptr(), list.ptr) },
        rd::rd_kafka_AlterConsumerGroupOffsets_destroy,
    )?;
    let mut requests = [request.ptr];
    let event = run_admin(
        client,
        "AlterConsumerGroupOffsets",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS,
        rd::RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT,
        timeout,
        // SAFETY: one valid request.
        |opts, queue| unsafe {
            rd::rd_kafka_AlterConsumerGroupOffsets(
                client.native_ptr(),
                requests.as_mut_ptr(),
                1,
                opts,
                queue,
            )
        },
    )?;
    // SAFETY: the event is an AlterConsumerGroupOffsets result; all data is copied out.
    unsafe {
        let res = rd::rd_kafka_event_AlterConsumerGroupOffsets_result(event.ptr);
        let mut cnt = 0usize;
        let groups = rd::rd_kafka_AlterConsumerGroupOffsets_result_groups(res, &mut cnt);
        Ok(
            group_partitions(groups, cnt, "AlterConsumerGroupOffsets", group, timeout)?
                .into_iter()
                .map(|((topic, partition, offset, ..), err)| PartitionAnswer {
                    topic,
                    partition,
                    result: err.map_or(Ok(offset), Err),
                })
                .collect(),
        )
    }
}

/// Looks up offsets of many partitions in one request (librdkafka batches it per leader).
pub fn list_offsets<C: ClientContext>(
    client: &Client<C>,
    queries: &[(String, i32, OffsetQuery)],
    timeout: Duration,
) -> Result<Vec<PartitionAnswer>> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let list = native_list(
        queries,
        |(t, p, _)| (t.as_str(), *p),
        // SAFETY: `elem` is a fresh element of the list.
        |(_, _, q), elem| unsafe {
            (*elem).offset = match q {
                OffsetQuery::Earliest => {
                    rd::rd_kafka_OffsetSpec_t::RD_KAFKA_OFFSET_SPEC_EARLIEST as i64
                }
                OffsetQuery::Latest => {
                    rd::rd_kafka_OffsetSpec_t::RD_KAFKA_OFFSET_SPEC_LATEST as i64
                }
                OffsetQuery::Timestamp(ms) => *ms,
            };
        },
    )?;
    let event = run_admin(
        client,
        "ListOffsets",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTOFFSETS,
        rd::RD_KAFKA_EVENT_LISTOFFSETS_RESULT,
        timeout,
        // SAFETY: librdkafka copies the list.
        |opts, queue| unsafe {
            rd::rd_kafka_ListOffsets(client.native_ptr(), list.ptr, opts, queue)
        },
    )?;
    // SAFETY: the event is a ListOffsets result; all data is copied out.
    unsafe {
        let res = rd::rd_kafka_event_ListOffsets_result(event.ptr);
        let mut cnt = 0usize;
        let infos = rd::rd_kafka_ListOffsets_result_infos(res, &mut cnt);
        Ok(array_of(infos, cnt)
            .iter()
            .filter_map(|&info| {
                let p = rd::rd_kafka_ListOffsetsResultInfo_topic_partition(info);
                if p.is_null() {
                    return None;
                }
                let p = &*p;
                let (topic, partition, offset, ..) = read_partition(p);
                let result = if p.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                    Err(err_text(p.err))
                } else if offset == OFFSET_INVALID {
                    // librdkafka answers "no error" with this offset when no broker answered
                    // for the partition (seen with the leader down): it is no offset at all.
                    Err("no offset in the answer (the partition leader did not answer)".into())
                } else {
                    Ok(offset)
                };
                Some(PartitionAnswer {
                    topic,
                    partition,
                    result,
                })
            })
            .collect())
    }
}

/// The id (a UUID in Kafka's base64 form) of each named topic that exists. A topic deleted and
/// created again under the same name gets a new id. Topics the cluster does not know, or could not
/// describe, are left out.
pub fn topic_ids<C: ClientContext>(
    client: &Client<C>,
    topics: &[String],
    timeout: Duration,
) -> Result<Vec<(String, String)>> {
    if topics.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<CString> = topics
        .iter()
        .map(|t| CString::new(t.as_str()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::usage("a topic name contains a NUL byte"))?;
    let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    // SAFETY: `ptrs` holds `ptrs.len()` valid C strings, which librdkafka copies.
    let collection = Owned::new(
        unsafe { rd::rd_kafka_TopicCollection_of_topic_names(ptrs.as_mut_ptr(), ptrs.len()) },
        rd::rd_kafka_TopicCollection_destroy,
    )?;
    let event = run_admin(
        client,
        "DescribeTopics",
        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBETOPICS,
        rd::RD_KAFKA_EVENT_DESCRIBETOPICS_RESULT,
        timeout,
        // SAFETY: librdkafka copies the collection, which outlives the call.
        |opts, queue| unsafe {
            rd::rd_kafka_DescribeTopics(client.native_ptr(), collection.ptr, opts, queue)
        },
    )?;
    // SAFETY: the event is a DescribeTopics result; all data is copied out.
    unsafe {
        let res = rd::rd_kafka_event_DescribeTopics_result(event.ptr);
        let mut cnt = 0usize;
        let descs = rd::rd_kafka_DescribeTopics_result_topics(res, &mut cnt);
        Ok(array_of(descs, cnt)
            .iter()
            .filter(|&&d| rd::rd_kafka_TopicDescription_error(d).is_null())
            .filter_map(|&d| {
                let name = owned_str(rd::rd_kafka_TopicDescription_name(d))?;
                let uuid = rd::rd_kafka_TopicDescription_topic_id(d);
                if uuid.is_null() {
                    return None;
                }
                let id = owned_str(rd::rd_kafka_Uuid_base64str(uuid))?;
                Some((name, id))
            })
            .collect())
    }
}
