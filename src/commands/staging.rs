//! The staging cluster of `--rehearse-on`: a restore or reset applied there, never on the
//! cluster its targets come from.

use crate::connect::ConnectClient;
use crate::kafka::KafkaSettings;

/// Where a rehearsal is applied: a context of the configuration file, or a bootstrap address
/// with production's other settings.
pub struct Staging {
    pub settings: KafkaSettings,
    pub clients: Vec<ConnectClient>,
    /// How it was named: `context NAME`, or the bootstrap address.
    pub name: String,
}
