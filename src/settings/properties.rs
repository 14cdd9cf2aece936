//! Client properties: a Kafka-tools style `client.properties` file (`--command-config`) and
//! librdkafka `-X key=value` pairs, turned into one librdkafka configuration.
//!
//! Java client property names mostly coincide with librdkafka's. The ones that do not are
//! translated where there is an exact equivalent (`sasl.jaas.config` for PLAIN and SCRAM), and
//! refused with advice where there is none (JKS trust stores), so a properties file that works with
//! `kafka-consumer-groups --command-config` either works here too or fails with a clear message.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

/// Ordered librdkafka properties. `Debug` hides values of secret-looking keys.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ClientProperties(BTreeMap<String, String>);

impl std::fmt::Debug for ClientProperties {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown: BTreeMap<&str, &str> = self
            .0
            .iter()
            .map(|(k, v)| {
                let v = if crate::redact::is_secret_key(k) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), v)
            })
            .collect();
        shown.fmt(f)
    }
}

impl ClientProperties {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.insert(key.into(), value.into());
    }

    /// Reads a Java-style properties file and translates it for librdkafka.
    pub fn from_java_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_java_text(&path.display().to_string(), &text)
    }

    /// Parses the text of a Java-style properties file and translates it for librdkafka;
    /// `origin` names the file in errors.
    pub fn from_java_text(origin: &str, text: &str) -> Result<Self> {
        translate_java(parse_java_properties(text))
            .map_err(|e| Error::usage(format!("{origin}: {e}")))
    }

    /// Adds `key=value` pairs given with `-X`, which take precedence over the file.
    pub fn apply_overrides(&mut self, pairs: &[String]) -> Result<()> {
        for pair in pairs {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                Error::usage(format!(
                    "-X {pair}: expected key=value, e.g. -X security.protocol=SASL_SSL"
                ))
            })?;
            let k = k.trim();
            if k.is_empty() {
                return Err(Error::usage(format!("-X {pair}: the key is empty")));
            }
            self.set(k, v.trim());
        }
        Ok(())
    }
}

/// Parses the subset of the `.properties` syntax that client configs use: `key=value` or
/// `key: value` or `key value`, `#`/`!` comments, backslash line continuations and escapes.
pub fn parse_java_properties(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if logical.is_empty() && (trimmed.is_empty() || trimmed.starts_with(['#', '!'])) {
            continue;
        }
        let continued = trimmed.ends_with('\\') && !trimmed.ends_with("\\\\");
        if continued {
            logical.push_str(&trimmed[..trimmed.len() - 1]);
            continue;
        }
        logical.push_str(trimmed);
        let entry = std::mem::take(&mut logical);
        let sep = entry
            .char_indices()
            .find(|&(i, c)| {
                (c == '=' || c == ':' || c.is_whitespace()) && !entry[..i].ends_with('\\')
            })
            .map(|(i, _)| i);
        let (k, v) = match sep {
            Some(i) => {
                let rest = entry[i..].trim_start();
                let rest = rest
                    .strip_prefix(['=', ':'])
                    .map(str::trim_start)
                    .unwrap_or(rest);
                (&entry[..i], rest)
            }
            None => (entry.as_str(), ""),
        };
        out.insert(unescape(k), unescape(v.trim_end()));
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Java client keys with no librdkafka equivalent, and what to use instead.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "ssl.truststore.location",
        "convert the trust store to a PEM file and set ssl.ca.location",
    ),
    (
        "ssl.truststore.password",
        "convert the trust store to a PEM file and set ssl.ca.location",
    ),
    (
        "ssl.truststore.type",
        "convert the trust store to a PEM file and set ssl.ca.location",
    ),
    (
        "sasl.login.callback.handler.class",
        "use -X sasl.oauthbearer.* properties (librdkafka's OIDC support)",
    ),
    (
        "sasl.client.callback.handler.class",
        "use librdkafka's sasl.* properties",
    ),
];

/// Java keys that librdkafka does not know but that are harmless to drop.
const IGNORED: &[&str] = &[
    "key.deserializer",
    "value.deserializer",
    "exclude.internal.topics",
];

fn translate_java(raw: BTreeMap<String, String>) -> std::result::Result<ClientProperties, String> {
    let mut props = ClientProperties::new();
    for (key, value) in raw {
        if let Some((_, advice)) = UNSUPPORTED.iter().find(|(k, _)| *k == key) {
            return Err(format!("{key} is a Java-only setting: {advice}"));
        }
        if IGNORED.contains(&key.as_str()) {
            continue;
        }
        match key.as_str() {
            "sasl.jaas.config" => {
                let (user, pass) = parse_jaas(&value)?;
                props.set("sasl.username", user);
                props.set("sasl.password", pass);
            }
            "sasl.mechanism" => props.set("sasl.mechanisms", value),
            "ssl.endpoint.identification.algorithm" if value.is_empty() => {
                props.set(key, "none")
            }
            "ssl.keystore.type" if value.eq_ignore_ascii_case("PKCS12") => {}
            "ssl.keystore.type" => {
                return Err(format!(
                    "ssl.keystore.type={value} is not supported: use a PKCS12 key store, or PEM files with ssl.certificate.location and ssl.key.location"
                ))
            }
            _ => props.set(key, value),
        }
    }
    Ok(props)
}

/// Extracts username and password from a PLAIN or SCRAM JAAS line. OAUTHBEARER and Kerberos JAAS
/// lines have no direct librdkafka form and are refused with advice.
fn parse_jaas(value: &str) -> std::result::Result<(String, String), String> {
    let module = value.split_whitespace().next().unwrap_or_default();
    if !(module.ends_with("PlainLoginModule") || module.ends_with("ScramLoginModule")) {
        return Err(format!(
            "sasl.jaas.config with {module} cannot be translated: set the equivalent librdkafka properties with -X (e.g. sasl.kerberos.* or sasl.oauthbearer.*)"
        ));
    }
    let field = |name: &str| -> Option<String> {
        let start = value.find(&format!("{name}="))? + name.len() + 1;
        let rest = &value[start..];
        let rest = rest.strip_prefix('"')?;
        let end = rest.find('"')?;
        Some(rest[..end].to_string())
    };
    match (field("username"), field("password")) {
        (Some(u), Some(p)) => Ok((u, p)),
        _ => Err("sasl.jaas.config: expected username=\"...\" password=\"...\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_properties_syntax() {
        let text = "# comment\n! also\nbootstrap.servers = a:1,b:2\nsecurity.protocol:SASL_SSL\nclient.id my\\\n  -tool\nempty=\n";
        let p = parse_java_properties(text);
        assert_eq!(p["bootstrap.servers"], "a:1,b:2");
        assert_eq!(p["security.protocol"], "SASL_SSL");
        assert_eq!(p["client.id"], "my-tool");
        assert_eq!(p["empty"], "");
        assert_eq!(p.len(), 4);
    }

    #[test]
    fn translates_scram_jaas() {
        let raw = parse_java_properties(
            "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cr=t\";\n",
        );
        let p = translate_java(raw).unwrap();
        assert_eq!(p.get("sasl.mechanisms"), Some("SCRAM-SHA-512"));
        assert_eq!(p.get("sasl.username"), Some("alice"));
        assert_eq!(p.get("sasl.password"), Some("s3cr=t"));
        assert!(
            !format!("{p:?}").contains("s3cr=t"),
            "Debug must hide secrets"
        );
    }

    #[test]
    fn refuses_jks_truststore_with_advice() {
        let raw = parse_java_properties("ssl.truststore.location=/x.jks\n");
        let err = translate_java(raw).unwrap_err();
        assert!(err.contains("ssl.ca.location"), "{err}");
    }

    #[test]
    fn overrides_need_key_value() {
        let mut p = ClientProperties::new();
        p.apply_overrides(&["a=b=c".into()]).unwrap();
        assert_eq!(p.get("a"), Some("b=c"));
        assert!(p.apply_overrides(&["novalue".into()]).is_err());
    }
}
