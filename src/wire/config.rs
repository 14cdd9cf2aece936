//! How the direct connection is set up, read from the same client properties as the librdkafka
//! path (`--command-config`, `-X`). Settings this path cannot honour are named, so the caller can
//! fall back to librdkafka or say exactly what is missing; nothing is ignored silently.

use std::time::Duration;

use crate::settings::KafkaSettings;

use super::sasl::Mechanism;

/// TLS settings (PEM files only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// `ssl.ca.location`: CA certificates; without it, the system's roots.
    pub ca_file: Option<String>,
    /// `ssl.certificate.location` and `ssl.key.location`: a client certificate.
    pub client_cert: Option<(String, String)>,
}

/// SASL credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sasl {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: String,
}

/// Everything the direct connection needs.
#[derive(Debug, Clone)]
pub struct WireConfig {
    pub bootstrap: Vec<String>,
    pub tls: Option<Tls>,
    pub sasl: Option<Sasl>,
    pub timeout: Duration,
}

/// Properties that only concern librdkafka's own behaviour (buffers, logging, timeouts it
/// manages): they change nothing about who we are or how we connect.
fn harmless(key: &str) -> bool {
    const PREFIXES: [&str; 8] = [
        "client.id",
        "socket.",
        "debug",
        "log",
        "metadata.",
        "topic.metadata.",
        "reconnect.",
        "request.timeout",
    ];
    PREFIXES.iter().any(|p| key.starts_with(p))
        || matches!(
            key,
            "bootstrap.servers"
                | "security.protocol"
                | "sasl.mechanism"
                | "sasl.mechanisms"
                | "sasl.username"
                | "sasl.password"
                | "ssl.ca.location"
                | "ssl.certificate.location"
                | "ssl.key.location"
                | "ssl.endpoint.identification.algorithm"
                | "enable.ssl.certificate.verification"
                | "api.version.request"
                | "broker.address.family"
                | "enable.auto.commit"
                | "enable.partition.eof"
                | "group.id"
                | "session.timeout.ms"
                | "isolation.level"
        )
}

impl WireConfig {
    /// The direct-connection settings, or the reason this path cannot honour them.
    pub fn from_settings(s: &KafkaSettings) -> Result<WireConfig, String> {
        let props = &s.properties;
        let get = |k: &str| props.get(k).map(str::trim).filter(|v| !v.is_empty());
        if let Some((k, _)) = props.iter().find(|(k, _)| !harmless(k)) {
            return Err(format!(
                "the client property {k} is not supported by the direct protocol path"
            ));
        }
        let protocol = get("security.protocol")
            .unwrap_or("plaintext")
            .to_ascii_uppercase();
        let (tls, sasl) = match protocol.as_str() {
            "PLAINTEXT" => (false, false),
            "SSL" => (true, false),
            "SASL_PLAINTEXT" => (false, true),
            "SASL_SSL" => (true, true),
            other => {
                return Err(format!(
                    "security.protocol={other} is not supported by the direct protocol path"
                ))
            }
        };
        let tls = if tls {
            if get("enable.ssl.certificate.verification")
                .is_some_and(|v| v.eq_ignore_ascii_case("false"))
            {
                return Err("enable.ssl.certificate.verification=false is not supported by the direct protocol path (it always verifies the broker's certificate)".into());
            }
            if get("ssl.endpoint.identification.algorithm")
                .is_some_and(|v| v.eq_ignore_ascii_case("none"))
            {
                return Err("ssl.endpoint.identification.algorithm=none is not supported by the direct protocol path (it always checks the broker's host name)".into());
            }
            let client_cert = match (get("ssl.certificate.location"), get("ssl.key.location")) {
                (Some(c), Some(k)) => Some((c.to_string(), k.to_string())),
                (None, None) => None,
                _ => return Err("ssl.certificate.location and ssl.key.location go together".into()),
            };
            Some(Tls {
                ca_file: get("ssl.ca.location").map(str::to_string),
                client_cert,
            })
        } else {
            None
        };
        let sasl = if sasl {
            let name = get("sasl.mechanisms")
                .or(get("sasl.mechanism"))
                .unwrap_or("GSSAPI");
            let mechanism = Mechanism::from_name(name).ok_or_else(|| {
                format!("sasl.mechanism={name} is not supported by the direct protocol path (it speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512)")
            })?;
            let (Some(username), Some(password)) =
                (get("sasl.username"), props.get("sasl.password"))
            else {
                return Err(format!("SASL {name} needs sasl.username and sasl.password (or sasl.jaas.config in --command-config)"));
            };
            Some(Sasl {
                mechanism,
                username: username.to_string(),
                password: password.to_string(),
            })
        } else {
            None
        };
        let bootstrap: Vec<String> = s
            .bootstrap
            .split(',')
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(str::to_string)
            .collect();
        if bootstrap.is_empty() {
            return Err("no bootstrap servers".into());
        }
        Ok(WireConfig {
            bootstrap,
            tls,
            sasl,
            timeout: s.timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ClientProperties;

    fn settings(pairs: &[(&str, &str)]) -> KafkaSettings {
        let mut properties = ClientProperties::new();
        for (k, v) in pairs {
            properties.set(*k, *v);
        }
        KafkaSettings {
            bootstrap: "a:1, b:2".into(),
            properties,
            timeout: Duration::from_secs(5),
            direct: true,
        }
    }

    /// Properties, and Ok(TLS?, SASL mechanism) or the start of the reason.
    type Case<'a> = (
        Vec<(&'a str, &'a str)>,
        Result<(bool, Option<Mechanism>), &'a str>,
    );

    #[test]
    fn reads_each_security_protocol() {
        let cases: Vec<Case> = vec![
            (vec![], Ok((false, None))),
            (
                vec![("security.protocol", "ssl"), ("ssl.ca.location", "/ca.pem")],
                Ok((true, None)),
            ),
            (
                vec![
                    ("security.protocol", "SASL_PLAINTEXT"),
                    ("sasl.mechanisms", "SCRAM-SHA-512"),
                    ("sasl.username", "u"),
                    ("sasl.password", "p"),
                ],
                Ok((false, Some(Mechanism::ScramSha512))),
            ),
            (
                vec![
                    ("security.protocol", "SASL_SSL"),
                    ("sasl.mechanism", "PLAIN"),
                    ("sasl.username", "u"),
                    ("sasl.password", "p"),
                ],
                Ok((true, Some(Mechanism::Plain))),
            ),
            (
                vec![
                    ("security.protocol", "SASL_PLAINTEXT"),
                    ("sasl.mechanisms", "GSSAPI"),
                ],
                Err("sasl.mechanism=GSSAPI"),
            ),
            (
                vec![
                    ("security.protocol", "SASL_PLAINTEXT"),
                    ("sasl.mechanisms", "PLAIN"),
                ],
                Err("SASL PLAIN needs"),
            ),
            (
                vec![
                    ("security.protocol", "SSL"),
                    ("ssl.endpoint.identification.algorithm", "none"),
                ],
                Err("ssl.endpoint"),
            ),
            (
                vec![
                    ("security.protocol", "SSL"),
                    ("ssl.certificate.location", "/c.pem"),
                ],
                Err("ssl.certificate.location and"),
            ),
            (
                vec![("ssl.keystore.location", "/k.p12")],
                Err("the client property ssl.keystore.location"),
            ),
            (
                vec![("socket.keepalive.enable", "true"), ("client.id", "x")],
                Ok((false, None)),
            ),
        ];
        for (pairs, want) in cases {
            let got = WireConfig::from_settings(&settings(&pairs));
            match (got, want) {
                (Ok(c), Ok((tls, mech))) => {
                    assert_eq!(c.tls.is_some(), tls, "{pairs:?}");
                    assert_eq!(c.sasl.map(|s| s.mechanism), mech, "{pairs:?}");
                    assert_eq!(c.bootstrap, vec!["a:1", "b:2"]);
                }
                (Err(e), Err(start)) => assert!(e.starts_with(start), "{pairs:?}: {e}"),
                (got, want) => panic!("{pairs:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
