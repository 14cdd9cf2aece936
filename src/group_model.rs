//! What both Kafka clients (librdkafka in [`crate::kafka`], the protocol client in
//! [`crate::wire`]) report about groups: states and types as typed values, listings,
//! descriptions, members, offsets and per-partition answers. It sits below both clients, so
//! neither reaches into the other for its data types.
//!
//! An unknown state is a first-class value that blocks a restore with its reason; it is never an
//! empty string that happens to pass a check.

use std::fmt;

use rdkafka::types::RDKafkaErrorCode;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A topic-partition key.
pub type TopicPartition = (String, i32);

/// The state of a group as the coordinator reports it, or why it is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupState {
    Empty,
    Stable,
    PreparingRebalance,
    CompletingRebalance,
    /// KIP-848 consumer groups: assignments being computed.
    Assigning,
    /// KIP-848 consumer groups: members moving to their new assignment.
    Reconciling,
    Dead,
    /// The coordinator says the group does not exist (GroupIdNotFound).
    NotFound,
    /// The state could not be learned; the reason says why.
    Unknown(String),
    /// A state name this version does not know (a newer broker's, or one written by a newer
    /// offset-vault). Kept as it was, so a snapshot holding it still verifies; it blocks a
    /// restore like an unknown state.
    Unrecognized(String),
}

impl GroupState {
    /// The name used in tables, JSON and Parquet.
    pub fn name(&self) -> &str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::Stable => "Stable",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
            GroupState::Dead => "Dead",
            GroupState::NotFound => "NotFound",
            GroupState::Unknown(_) => "Unknown",
            GroupState::Unrecognized(name) => name,
        }
    }

    /// Parses a state name (librdkafka's, or one written by this tool). A name this version
    /// does not know is `Unknown`, with the name in the reason.
    pub fn from_name(name: &str) -> GroupState {
        match name.to_ascii_lowercase().as_str() {
            "empty" => GroupState::Empty,
            "stable" => GroupState::Stable,
            "preparingrebalance" => GroupState::PreparingRebalance,
            "completingrebalance" => GroupState::CompletingRebalance,
            "assigning" => GroupState::Assigning,
            "reconciling" => GroupState::Reconciling,
            "dead" => GroupState::Dead,
            "notfound" => GroupState::NotFound,
            "unknown" => GroupState::Unknown("the coordinator reported no known state".into()),
            _ => GroupState::Unrecognized(name.to_string()),
        }
    }

    /// The state from a group description: its state name, or the error describing it gave.
    /// GroupIdNotFound means the group does not exist; any other error leaves the state unknown.
    pub fn from_description(name: &str, error: Option<&DescribeError>) -> GroupState {
        match error {
            Some(e) if e.code == RDKafkaErrorCode::GroupIdNotFound => GroupState::NotFound,
            Some(e) => GroupState::Unknown(format!(
                "describing the group failed: {} ({:?})",
                e.message, e.code
            )),
            None => GroupState::from_name(name),
        }
    }

    /// May this group's offsets be changed now? Only a group known to be Empty or Dead, or
    /// known not to exist. The error says why not.
    pub fn may_change(&self) -> Result<(), String> {
        match self {
            GroupState::Empty | GroupState::Dead | GroupState::NotFound => Ok(()),
            GroupState::Unknown(why) => Err(format!("its state is unknown ({why})")),
            GroupState::Unrecognized(name) => Err(format!(
                "its state {name:?} is not one this version knows, so it cannot tell whether the group is active"
            )),
            other => Err(format!("it is {}", other.name())),
        }
    }

    /// Is the state not known well enough to decide anything (unknown, or a name this version
    /// does not know)?
    pub fn is_uncertain(&self) -> bool {
        matches!(self, GroupState::Unknown(_) | GroupState::Unrecognized(_))
    }

    /// Does the group exist with state (neither gone nor unknown)?
    pub fn is_known_live(&self) -> bool {
        !matches!(
            self,
            GroupState::Dead | GroupState::NotFound | GroupState::Unknown(_)
        )
    }
}

impl fmt::Display for GroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for GroupState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GroupState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(GroupState::from_name(&name))
    }
}

/// The kind of group (KIP-848 and later add kinds besides the classic protocol).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum GroupType {
    Classic,
    Consumer,
    Share,
    Streams,
    #[serde(other)]
    #[default]
    Unknown,
}

impl GroupType {
    pub fn from_name(name: &str) -> GroupType {
        match name.to_ascii_lowercase().as_str() {
            "classic" => GroupType::Classic,
            "consumer" => GroupType::Consumer,
            "share" => GroupType::Share,
            "streams" => GroupType::Streams,
            _ => GroupType::Unknown,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GroupType::Classic => "classic",
            GroupType::Consumer => "consumer",
            GroupType::Share => "share",
            GroupType::Streams => "streams",
            GroupType::Unknown => "unknown",
        }
    }
}

impl fmt::Display for GroupType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error a group description came back with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeError {
    pub code: RDKafkaErrorCode,
    pub message: String,
}

/// One consumer group as listed by the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub group_id: String,
    pub state: GroupState,
    pub group_type: GroupType,
    pub is_simple: bool,
    /// The group's protocol type (`consumer`, `connect`, ...) where the listing says it; `None`
    /// from librdkafka's listing, which does not.
    pub protocol_type: Option<String>,
}

/// A member of a consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    pub member_id: String,
    pub client_id: String,
    pub host: String,
}

/// A described consumer group. `error` is set when the broker could not describe it; the
/// state then says whether that means "not found" or "unknown".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    pub group_id: String,
    pub state: GroupState,
    pub group_type: GroupType,
    pub is_simple: bool,
    pub members: Vec<GroupMember>,
    pub error: Option<DescribeError>,
}

/// A group's offset on one partition: as committed (read), or to commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: Option<i32>,
    pub metadata: Option<String>,
    /// Share groups only: the records at or above the start offset not yet acknowledged, as the
    /// broker counts them.
    pub lag: Option<i64>,
}

/// Which offset of a partition to look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetQuery {
    Earliest,
    Latest,
    /// The first offset whose record timestamp is at or after this time (ms since the epoch).
    Timestamp(i64),
}

/// The per-partition answer to a list-offsets or alter-offsets request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionAnswer {
    pub topic: String,
    pub partition: i32,
    /// The offset found, or the error the broker gave for this partition.
    pub result: std::result::Result<i64, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(code: RDKafkaErrorCode) -> DescribeError {
        DescribeError {
            code,
            message: "m".into(),
        }
    }

    #[test]
    fn states_map_from_descriptions() {
        use GroupState::*;
        let not_coord = err(RDKafkaErrorCode::NotCoordinator);
        let not_found = err(RDKafkaErrorCode::GroupIdNotFound);
        let auth = err(RDKafkaErrorCode::GroupAuthorizationFailed);
        // (state name, error, expected state, may change?)
        let cases: Vec<(&str, Option<&DescribeError>, GroupState, bool)> = vec![
            ("Empty", None, Empty, true),
            ("Dead", None, Dead, true),
            ("Stable", None, Stable, false),
            ("PreparingRebalance", None, PreparingRebalance, false),
            ("CompletingRebalance", None, CompletingRebalance, false),
            ("Assigning", None, Assigning, false),
            ("Reconciling", None, Reconciling, false),
            ("Unknown", None, Unknown(String::new()), false),
            ("", None, Unrecognized(String::new()), false),
            ("Exotic", None, Unrecognized(String::new()), false),
            ("Dead", Some(&not_found), NotFound, true),
            ("", Some(&not_coord), Unknown(String::new()), false),
            ("Empty", Some(&auth), Unknown(String::new()), false),
        ];
        for (name, error, want, may) in cases {
            let got = GroupState::from_description(name, error);
            assert_eq!(
                std::mem::discriminant(&got),
                std::mem::discriminant(&want),
                "{name:?} {error:?}: {got:?}"
            );
            assert_eq!(got.may_change().is_ok(), may, "{name:?} {error:?}");
        }
    }

    #[test]
    fn unknown_keeps_its_reason_and_blocks() {
        let s = GroupState::from_description("", Some(&err(RDKafkaErrorCode::NotCoordinator)));
        let why = s.may_change().unwrap_err();
        assert!(
            why.contains("unknown") && why.contains("NotCoordinator"),
            "{why}"
        );
        let s = GroupState::from_name("Exotic");
        assert!(s.may_change().unwrap_err().contains("\"Exotic\""));
        // A name this version does not know is written back as it was read, so the content
        // digest of a snapshot from a newer version still matches.
        for name in ["Exotic", "", "Shrinking"] {
            let json = serde_json::to_string(&GroupState::from_name(name)).unwrap();
            assert_eq!(json, serde_json::to_string(name).unwrap());
        }
    }

    #[test]
    fn states_and_types_round_trip_through_json() {
        for s in ["Empty", "Stable", "Dead", "NotFound", "Reconciling"] {
            let st = GroupState::from_name(s);
            let json = serde_json::to_string(&st).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<GroupState>(&json).unwrap(), st);
        }
        for t in ["classic", "consumer", "share", "streams"] {
            let ty = GroupType::from_name(t);
            assert_eq!(serde_json::to_string(&ty).unwrap(), format!("\"{t}\""));
        }
        assert_eq!(
            serde_json::from_str::<GroupType>("\"whatever\"").unwrap(),
            GroupType::Unknown
        );
    }
}
