//! Redaction of secrets in connector configurations.
//!
//! A value is redacted when its key looks like a secret (a `password`, `secret`, `token`,
//! `credential`, `jaas` or `apikey` part, or a name ending in `key` such as `aws.secret.key` or
//! `api.key`), or when the value itself carries a password (`password=` in a connection string, or
//! `user:pass@` in a URL). Config-provider references such as `${file:/secrets.properties:db.pass}`
//! hold no secret and are kept, so a restore can still show where the value comes from.

use std::collections::BTreeMap;

pub const REDACTED: &str = "<redacted>";

const SECRET_PARTS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "jaas",
    "apikey",
    "privatekey",
];

/// Keys that end in `key` but name a class or setting, not a secret.
const NOT_SECRET_KEYS: &[&str] = &["key", "message.key", "record.key"];

/// Does this configuration key look like it holds a secret?
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let parts: Vec<&str> = lower
        .split(['.', '_', '-'])
        .filter(|p| !p.is_empty())
        .collect();
    if parts.iter().any(|p| SECRET_PARTS.contains(p)) {
        return true;
    }
    // `api.key`, `aws.access.key`, `ssl.key`: but not `key.converter` (key first) or `key` alone.
    parts.len() > 1 && parts.last() == Some(&"key") && !NOT_SECRET_KEYS.contains(&lower.as_str())
}

/// Does this value carry a password inline?
fn value_has_secret(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if lower.contains("password=") || lower.contains("pwd=") {
        return true;
    }
    // scheme://user:pass@host
    if let Some((_, rest)) = lower.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            return userinfo.contains(':');
        }
    }
    false
}

/// Is the value only config-provider references (`${provider:path:key}`), which hold no secret?
fn is_provider_reference(value: &str) -> bool {
    let mut rest = value.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix("${") else {
            return false;
        };
        let Some(end) = after.find('}') else {
            return false;
        };
        if !after[..end].contains(':') {
            return false;
        }
        rest = after[end + 1..].trim_start();
    }
    true
}

/// Redacts a configuration in place; returns the keys whose values were replaced.
pub fn redact_config(config: &mut BTreeMap<String, String>) -> Vec<String> {
    let mut redacted = Vec::new();
    for (key, value) in config.iter_mut() {
        if value.is_empty() || is_provider_reference(value) {
            continue;
        }
        if is_secret_key(key) || value_has_secret(value) {
            *value = REDACTED.to_string();
            redacted.push(key.clone());
        }
    }
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys() {
        for k in [
            "connection.password",
            "ssl.key.password",
            "sasl.jaas.config",
            "aws.secret.access.key",
            "aws.access.key",
            "api.key",
            "consumer.override.sasl.jaas.config",
            "oauth.token",
            "db_PASSWORD",
            "gcp.credentials.json",
            "private-key",
        ] {
            assert!(is_secret_key(k), "{k} should be secret");
        }
        for k in [
            "key.converter",
            "key.converter.schemas.enable",
            "value.converter",
            "topics",
            "file",
            "key",
            "tasks.max",
            "keystore.type",
            "connection.url",
        ] {
            assert!(!is_secret_key(k), "{k} should not be secret");
        }
    }

    #[test]
    fn redacts_values_and_keeps_references() {
        let mut c: BTreeMap<String, String> = [
            ("connection.password", "hunter2"),
            ("connection.user", "app"),
            (
                "connection.url",
                "jdbc:postgresql://db:5432/x?user=app&password=hunter2",
            ),
            ("http.url", "https://app:hunter2@api.example.com/v1"),
            ("plain.url", "https://api.example.com/v1?x=@y"),
            ("db.password", "${file:/opt/secrets.properties:db.password}"),
            ("empty.password", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let keys = redact_config(&mut c);
        assert_eq!(
            keys,
            vec!["connection.password", "connection.url", "http.url"]
        );
        assert!(!c.values().any(|v| v.contains("hunter2")));
        assert_eq!(
            c["db.password"],
            "${file:/opt/secrets.properties:db.password}"
        );
        assert_eq!(c["connection.user"], "app");
        assert_eq!(c["plain.url"], "https://api.example.com/v1?x=@y");
    }

    #[test]
    fn provider_references() {
        assert!(is_provider_reference("${vault:secret/db:pass}"));
        assert!(is_provider_reference("${env:A} ${env:B}"));
        assert!(!is_provider_reference("${notaprovider}"));
        assert!(!is_provider_reference("pre${env:A}"));
    }
}
