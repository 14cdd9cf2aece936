//! Checks of the test environment for share groups, streams groups and the SCRAM, TLS and proxied
//! listeners, each against the real tools (and librdkafka for the listeners). Tests of those paths
//! can only be trusted once these pass.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;

use crate::support::groups::{self, NewOffset, ResetTo};
use crate::support::kafka::{self, Take};
use crate::support::kcg::{parse_kcg_describe, run_kafka_tool, ToolOutput};
use crate::support::poll::eventually;
use crate::support::streams::{self, AppMode};
use crate::support::{self, blocking, env, share};

fn new_offsets(group: &str, topic: &str, offsets: &[(i32, i64)]) -> Vec<NewOffset> {
    offsets
        .iter()
        .map(|&(partition, offset)| NewOffset {
            group: group.to_string(),
            topic: topic.to_string(),
            partition,
            offset,
        })
        .collect()
}

/// (start offset, lag) of one partition of a share group, as kafka-share-groups shows them.
async fn share_partition(group: &str, topic: &str, partition: i32) -> (Option<i64>, Option<i64>) {
    share::describe_offsets(group)
        .await
        .into_iter()
        .find(|r| r.topic == topic && r.partition == partition)
        .map_or((None, None), |r| (r.start_offset, r.lag))
}

#[tokio::test(flavor = "multi_thread")]
async fn share_group_consumes_and_kafka_share_groups_shows_its_start_offsets() {
    if !env::require_kafka() {
        return;
    }
    let topic = support::unique_name("ov-env-share");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 10).await;
    let group = support::unique_name("ov-env-share-group");

    // 4 of the 10 records, acknowledged; the rest of what the consumer fetched is released.
    let values = share::consume(&group, &topic, 4).await;
    let first: Vec<String> = (0..4).map(|i| kafka::record_value(&topic, 0, i)).collect();
    assert_eq!(values, first);
    eventually(
        "kafka-share-groups to show start offset 4 and lag 6 on partition 0",
        Duration::from_secs(30),
        || async {
            let seen = share_partition(&group, &topic, 0).await;
            (seen == (Some(4), Some(6)))
                .then_some(())
                .ok_or(format!("{seen:?}"))
        },
    )
    .await;
    assert_eq!(share::group_state(&group).await.as_deref(), Some("Empty"));
    assert_eq!(groups::group_type(&group).await.as_deref(), Some("Share"));

    // Resets, and the tool's view after each.
    assert_eq!(
        share::reset_offsets(&group, Some(&topic), ResetTo::Latest).await,
        new_offsets(&group, &topic, &[(0, 10), (1, 0)])
    );
    assert_eq!(
        share_partition(&group, &topic, 0).await,
        (Some(10), Some(0))
    );
    assert_eq!(
        share::reset_offsets(&group, None, ResetTo::Earliest).await,
        new_offsets(&group, &topic, &[(0, 0), (1, 0)])
    );
    assert_eq!(
        share::start_offsets(&group, &topic).await,
        BTreeMap::from([(0, 0), (1, 0)])
    );
    // The reset took effect: the first records are delivered again.
    assert_eq!(share::consume(&group, &topic, 2).await, first[..2].to_vec());
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_app_commits_and_kafka_streams_groups_shows_its_offsets() {
    if !env::require_kafka() {
        return;
    }
    let input = support::unique_name("ov-env-streams-in");
    let output = support::unique_name("ov-env-streams-out");
    kafka::create_topic(&input, 3).await;
    kafka::create_topic(&output, 1).await;
    for (partition, n) in [(0, 3), (1, 4), (2, 5)] {
        kafka::produce(&input, partition, n).await;
    }
    let app_id = support::unique_name("ov-env-streams-app");
    let timeout = Duration::from_secs(90);

    // The application waits for 15 records and there are 12: while it waits, it is an active
    // member, and the tool shows its committed offsets.
    let app = streams::spawn_app(&app_id, &input, &output, 15, timeout, AppMode::PassThrough);
    eventually(
        "kafka-streams-groups to show the application's committed offsets",
        Duration::from_secs(60),
        || async {
            let rows = streams::try_describe_offsets(&app_id).await?;
            let seen: BTreeMap<i32, (Option<i64>, Option<i64>)> = rows
                .iter()
                .filter(|r| r.topic == input)
                .map(|r| (r.partition, (r.current_offset, r.lag)))
                .collect();
            let want = BTreeMap::from([
                (0, (Some(3), Some(0))),
                (1, (Some(4), Some(0))),
                (2, (Some(5), Some(0))),
            ]);
            (seen == want).then_some(()).ok_or(format!("{rows:?}"))
        },
    )
    .await;
    assert_eq!(
        streams::group_state(&app_id).await.as_deref(),
        Some("Stable")
    );
    assert_eq!(
        groups::group_type(&app_id).await.as_deref(),
        Some("Streams")
    );

    kafka::produce(&input, 0, 3).await;
    let run = app.wait().await.ok();
    assert_eq!(run.processed, Some(15), "{}", run.stderr);
    assert_eq!(
        kafka::watermarks(&output).await,
        BTreeMap::from([(0, (0, 15))])
    );

    // The application left the group: empty, the offsets stay committed, and only the dry run
    // of a reset shows them (describe --offsets lists active members' partitions only).
    assert_eq!(
        streams::group_state(&app_id).await.as_deref(),
        Some("Empty")
    );
    assert_eq!(streams::describe_offsets(&app_id).await, vec![]);
    assert_eq!(
        streams::committed(&app_id, &input).await,
        BTreeMap::from([(0, 6), (1, 4), (2, 5)])
    );

    assert_eq!(
        streams::reset_offsets(&app_id, Some(&input), ResetTo::Earliest).await,
        new_offsets(&app_id, &input, &[(0, 0), (1, 0), (2, 0)])
    );
    assert_eq!(
        streams::committed(&app_id, &input).await,
        BTreeMap::from([(0, 0), (1, 0), (2, 0)])
    );
    // The reset took effect: a second run processes every record again.
    let again = streams::run_app(&app_id, &input, &output, 15, timeout, AppMode::PassThrough)
        .await
        .ok();
    assert_eq!(again.processed, Some(15), "{}", again.stderr);
    assert_eq!(
        kafka::watermarks(&output).await,
        BTreeMap::from([(0, (0, 30))])
    );
    assert_eq!(
        streams::committed(&app_id, &input).await,
        BTreeMap::from([(0, 6), (1, 4), (2, 5)])
    );
}

/// A properties file for a Java tool's `--command-config`.
fn command_config(lines: &[String]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    for line in lines {
        writeln!(file, "{line}").expect("write the command config");
    }
    file
}

fn scram_config(mechanism: &str, password: &str) -> tempfile::NamedTempFile {
    command_config(&[
        "security.protocol=SASL_PLAINTEXT".into(),
        format!("sasl.mechanism={mechanism}"),
        format!(
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"{}\" password=\"{password}\";",
            env::scram_user()
        ),
    ])
}

fn tls_config() -> tempfile::NamedTempFile {
    command_config(&[
        "security.protocol=SSL".into(),
        "ssl.truststore.type=PEM".into(),
        format!("ssl.truststore.location={}", env::tls_ca_file().display()),
    ])
}

/// Runs `kafka-consumer-groups --bootstrap-server BOOTSTRAP --command-config CONFIG ARGS...`.
async fn kcg_with(bootstrap: &str, config: &tempfile::NamedTempFile, args: &[&str]) -> ToolOutput {
    let config = config.path().to_string_lossy().into_owned();
    let mut all = vec!["--bootstrap-server", bootstrap, "--command-config", &config];
    all.extend_from_slice(args);
    run_kafka_tool("kafka-consumer-groups", &all).await
}

/// The ports of the brokers that librdkafka, bootstrapped with `settings`, reads from the
/// metadata, and the partition count of `topic` in it.
async fn rdkafka_metadata(settings: Vec<(&'static str, String)>, topic: &str) -> (Vec<i32>, usize) {
    let topic = topic.to_string();
    blocking(move || {
        let mut config = ClientConfig::new();
        for (key, value) in &settings {
            config.set(*key, value);
        }
        let consumer: BaseConsumer = config.create().expect("cannot create a Kafka consumer");
        let metadata = consumer
            .fetch_metadata(Some(&topic), Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("metadata with {settings:?}: {e}"));
        let ports = metadata.brokers().iter().map(|b| b.port()).collect();
        let partitions = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .map_or(0, |t| t.partitions().len());
        (ports, partitions)
    })
    .await
}

fn port_of(address: &str) -> i32 {
    address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {address:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn scram_and_tls_listeners_serve_the_reference_tool_and_librdkafka() {
    if !env::require_kafka() || !env::require_scram() || !env::require_tls() {
        return;
    }
    // A group with committed offsets, which must look the same through every listener.
    let topic = support::unique_name("ov-env-listeners");
    kafka::create_topic(&topic, 2).await;
    kafka::produce(&topic, 0, 3).await;
    kafka::produce(&topic, 1, 2).await;
    let group = support::unique_name("ov-env-listeners-group");
    kafka::consume_and_commit(&group, &topic, Take::per_partition(&[(0, 3), (1, 1)])).await;

    let scram = env::scram_bootstrap();
    let tls = env::tls_bootstrap();
    let password = env::scram_password();
    for (what, bootstrap, config) in [
        (
            "SCRAM-SHA-256",
            &scram,
            scram_config("SCRAM-SHA-256", &password),
        ),
        (
            "SCRAM-SHA-512",
            &scram,
            scram_config("SCRAM-SHA-512", &password),
        ),
        ("TLS", &tls, tls_config()),
    ] {
        let listed = kcg_with(bootstrap, &config, &["--list"]).await;
        assert!(
            listed.success && listed.stdout.lines().any(|l| l == group),
            "kafka-consumer-groups --list over {what}:\n{}\n{}",
            listed.stdout,
            listed.stderr
        );
        let described = kcg_with(bootstrap, &config, &["--describe", "--group", &group]).await;
        let committed: BTreeMap<i32, Option<i64>> = parse_kcg_describe(&described.stdout)
            .into_iter()
            .map(|r| (r.partition, r.current_offset))
            .collect();
        assert_eq!(
            committed,
            BTreeMap::from([(0, Some(3)), (1, Some(1))]),
            "kafka-consumer-groups --describe over {what}:\n{}\n{}",
            described.stdout,
            described.stderr
        );
    }

    // The listeners do check: a wrong password and an untrusted certificate are refused.
    let wrong = kcg_with(
        &scram,
        &scram_config("SCRAM-SHA-512", "not-the-password"),
        &["--list", "--timeout", "10000"],
    )
    .await;
    let text = format!("{}{}", wrong.stdout, wrong.stderr);
    assert!(
        text.contains("SaslAuthenticationException") && text.contains("invalid credentials"),
        "{text}"
    );
    let untrusted = kcg_with(
        &tls,
        &command_config(&["security.protocol=SSL".into()]),
        &["--list", "--timeout", "10000"],
    )
    .await;
    let text = format!("{}{}", untrusted.stdout, untrusted.stderr);
    assert!(text.contains("SSL handshake failed"), "{text}");

    // librdkafka with the settings a user would give it: the broker answers on the listener it
    // was reached through, with the topic's metadata.
    let user = env::scram_user();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let settings = vec![
            ("bootstrap.servers", scram.clone()),
            ("security.protocol", "SASL_PLAINTEXT".to_string()),
            ("sasl.mechanism", mechanism.to_string()),
            ("sasl.username", user.clone()),
            ("sasl.password", password.clone()),
        ];
        assert_eq!(
            rdkafka_metadata(settings, &topic).await,
            (vec![port_of(&scram)], 2),
            "{mechanism}"
        );
    }
    let settings = vec![
        ("bootstrap.servers", tls.clone()),
        ("security.protocol", "SSL".to_string()),
        ("ssl.ca.location", env::tls_ca_file().display().to_string()),
    ];
    assert_eq!(
        rdkafka_metadata(settings, &topic).await,
        (vec![port_of(&tls)], 2)
    );
}

/// A plain TCP forwarder from `from` to `to`, standing in for the delay proxy; it stops accepting
/// when dropped (connections it forwards end when their client closes them).
struct Forwarder {
    stop: Arc<AtomicBool>,
}

impl Forwarder {
    fn start(from: u16, to: u16) -> std::io::Result<Forwarder> {
        let listener = TcpListener::bind(("127.0.0.1", from))?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let _ = client.set_nonblocking(false);
                        if let Ok(broker) = TcpStream::connect(("127.0.0.1", to)) {
                            pipe(&client, &broker);
                            pipe(&broker, &client);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Forwarder { stop })
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Copies `from` to `to` on a thread of its own until `from` ends.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (mut from, mut to) = (
        from.try_clone().expect("clone a socket"),
        to.try_clone().expect("clone a socket"),
    );
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn proxied_listener_advertises_the_proxy_port() {
    if !env::require_kafka() {
        return;
    }
    let (listen, advertised) = (env::proxied_listen_port(), env::proxied_advertised_port());
    let topic = support::unique_name("ov-env-proxied");
    kafka::create_topic(&topic, 1).await;
    // A client bootstrapped at the bound port learns the advertised one and goes on there, so
    // something must forward it, as the delay proxy does. (If the port is taken, the delay proxy
    // itself is taken to be running there.)
    let _forwarder = match Forwarder::start(advertised, listen) {
        Ok(forwarder) => Some(forwarder),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => None,
        Err(e) => panic!("cannot listen on 127.0.0.1:{advertised}: {e}"),
    };
    let settings = vec![("bootstrap.servers", format!("127.0.0.1:{listen}"))];
    assert_eq!(
        rdkafka_metadata(settings, &topic).await,
        (vec![i32::from(advertised)], 1)
    );
}
