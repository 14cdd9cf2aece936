//! The valid inputs that the hostile inputs start from: one of each file format, as the current
//! encoders write them, plus valid times, client properties and store URLs.

use std::sync::{Arc, OnceLock};

use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::format::{json, parquet as pq};

pub(super) const OFFSETS_JSON: &str = r#"{"format_version": "1.1",
 "snapshot": {"id": "20261201T093005.042Z-0123456789abcdef", "created_at": "2026-12-01T09:30:05.042Z",
  "tool_version": "0.1.0", "cluster_id": "q1Sh-9_ISia_zwGINzRvyQ", "bootstrap_servers": "127.0.0.1:19092",
  "brokers": ["1@127.0.0.1:19092"],
  "selection": {"groups": ["orders"], "group_pattern": "pay-.*", "topics": ["orders"], "with_timestamps": true},
  "tags": {"change": "CHG-1", "deploy": "1234"}, "kind": "undo",
  "undo_of": "20261130T000000.000Z-fedcba9876543210", "partial": ["connector c: offsets unavailable"]},
 "groups": [
  {"group_id": "orders", "state": "Empty", "protocol_type": "consumer", "group_type": "classic", "members": [],
   "partitions": [
    {"topic": "orders", "partition": 0, "offset": 42, "leader_epoch": 3, "metadata": "m", "log_start_offset": 0,
     "log_end_offset": 50, "lag": 8, "last_record_timestamp": "2026-12-01T09:29:59.123Z"},
    {"topic": "orders", "partition": 1, "offset": 9223372036854775807}]},
  {"group_id": "pay-1", "state": "Stable", "protocol_type": "consumer", "group_type": "consumer",
   "members": [{"member_id": "m-1", "client_id": "c-1", "host": "/127.0.0.1"}], "connector": "sink-1",
   "partitions": [{"topic": "pay", "partition": 7, "offset": 0, "lag": -1}]}]}"#;

pub(super) const CONNECTORS_JSON: &str = r#"{"format_version": "1.1", "snapshot_id": "20261201T093005.042Z-0123456789abcdef",
 "connectors": [
  {"name": "sink-1", "connect_url": "http://127.0.0.1:18083", "connector_type": "sink", "group_id": "connect-sink-1",
   "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "orders",
    "sasl.password": "<redacted>"},
   "redacted_keys": ["sasl.password"], "state": "RUNNING",
   "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "127.0.0.1:18083"}],
   "offsets": [{"partition": {"kafka_topic": "orders", "kafka_partition": 0}, "offset": {"kafka_offset": 42}}]},
  {"name": "source-1", "connect_url": "http://127.0.0.1:18083", "connector_type": "source", "config": {},
   "state": "PAUSED", "tasks": [], "offsets_unavailable": "the worker answered 500"}]}"#;

pub(super) const MANIFEST_JSON: &str = r#"{"format_version": "1.1", "id": "20261201T093005.042Z-0123456789abcdef",
 "created_at": "2026-12-01T09:30:05.042Z", "tool_version": "0.1.0", "cluster_id": "q1Sh-9_ISia_zwGINzRvyQ",
 "bootstrap_servers": "127.0.0.1:19092", "brokers": ["1@127.0.0.1:19092"], "selection": {"all_groups": true},
 "tags": {"deploy": "1234"}, "kind": "undo", "undo_of": "20261130T000000.000Z-fedcba9876543210",
 "format": "parquet",
 "summary": {"groups": 2, "partitions": 3, "connectors": 1, "total_lag": 8, "group_states": {"Empty": 1, "Stable": 1},
  "group_ids": ["orders", "pay-1"], "connector_names": ["sink-1"]},
 "content_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
 "files": [{"name": "offsets.parquet", "size": 2417, "sha256": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
  {"name": "connectors.json", "size": 99, "sha256": "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"}]}"#;

pub(super) const PROPERTIES: &str = "# client.properties of the production cluster\n\
bootstrap.servers=broker-1:9093,broker-2:9093\n\
security.protocol = SASL_SSL\n\
sasl.mechanism=SCRAM-SHA-512\n\
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    \
username=\"alice\" password=\"s3cr=t\";\n\
ssl.endpoint.identification.algorithm=\n\
ssl.keystore.type=PKCS12\n\
client.id : offset-vault\\tops\n\
! an old comment\n\
key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n";

/// Files written by `kafka-consumer-groups --reset-offsets --export`, in both forms.
pub(super) const CSV_FILES: &[&[u8]] = &[
    include_bytes!("../../fixtures/csv/one-group.csv"),
    include_bytes!("../../fixtures/csv/several-groups.csv"),
];

pub(super) const TIMES: &[&str] = &[
    "2026-12-01T10:00:00Z",
    "2026-12-01T11:00:00.123+01:00",
    "2026-12-01",
    "90m",
    "1d 12h",
    "2h 30min 10s",
];

pub(super) const STORE_URLS: &[&str] = &[
    "s3://offset-vault-test/prod/cluster-a",
    "file:///nonexistent-offset-vault/vault",
    "./nonexistent-offset-vault",
    "gs://bucket/prefix",
    "az://container/prefix",
    "http://127.0.0.1:1/vault",
    "memory:///",
];

/// The offsets seed as Parquet, written by the real encoder.
pub(super) fn offsets_parquet() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let (meta, groups) = json::decode_offsets("seed", OFFSETS_JSON.as_bytes()).unwrap();
        pq::encode_offsets(&meta, &groups).unwrap()
    })
}

/// The rows and key-value metadata of the Parquet seed, to write files with edited metadata.
pub(super) fn parquet_parts() -> &'static (RecordBatch, Vec<(String, String)>) {
    static PARTS: OnceLock<(RecordBatch, Vec<(String, String)>)> = OnceLock::new();
    PARTS.get_or_init(|| {
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(Bytes::from_static(offsets_parquet()))
                .unwrap();
        let kv = builder.metadata().file_metadata().key_value_metadata();
        let kv: Vec<(String, String)> = kv
            .into_iter()
            .flatten()
            .filter(|e| e.key.starts_with("offset_vault."))
            .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
            .collect();
        let batch = builder.build().unwrap().next().unwrap().unwrap();
        let schema = Arc::new(
            batch
                .schema()
                .as_ref()
                .clone()
                .with_metadata(std::collections::HashMap::new()),
        );
        (batch.with_schema(schema).unwrap(), kv)
    })
}

/// The seed's rows in a Parquet file with this key-value metadata.
pub(super) fn parquet_with_kv(kv: &[(String, String)]) -> Vec<u8> {
    let (batch, _) = parquet_parts();
    let kv = kv.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone()));
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(kv.collect()))
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    out
}
