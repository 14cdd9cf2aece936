//! The command line as the trail records it: every word kept except secrets, which become `***`.
//! Pure.
//!
//! What is taken for a secret:
//! - the value of a `KEY=VALUE` given to `-X`/`--property`, `--connector-config-override`,
//!   `--set` or `--config`, or standing alone (`env AWS_SECRET_ACCESS_KEY=... cmd`), when the key
//!   looks secret ([`looks_secret`]);
//! - every value of an environment flag (`-e`/`--env KEY=VALUE`): environments carry secrets
//!   whatever their names;
//! - the value of a flag whose own name looks secret (`--sasl-password X`, `--token=X`);
//! - the password of a URL (`scheme://user:password@host`).

use std::sync::LazyLock;

use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "***";

/// Words in a key or flag name that mark its value as secret.
const SECRET_WORDS: [&str; 6] = ["password", "secret", "token", "jaas", "key", "credential"];

/// Flags whose value is `KEY=VALUE`, redacted when the key looks secret.
const KV_FLAGS: [&str; 5] = [
    "-X",
    "--property",
    "--connector-config-override",
    "--set",
    "--config",
];

/// Flags whose value is an environment entry: always redacted.
const ENV_FLAGS: [&str; 2] = ["-e", "--env"];

/// Flags of our own whose names contain a secret word but whose values are not secrets.
const NOT_SECRET_FLAGS: [&str; 3] = ["--signing-key", "--trusted-key", "--include-secrets"];

/// Does this key (a property, a config key, a flag name) look like it holds a secret?
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| k.contains(w))
}

static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/@:\s]*):[^/@\s]*@").expect("a valid regex")
});

/// `scheme://user:password@host` becomes `scheme://user:***@host`, wherever it is in `word`.
pub fn redact_url(word: &str) -> String {
    URL_PASSWORD
        .replace_all(word, format!("$1:{REDACTED}@").as_str())
        .into_owned()
}

/// `KEY=VALUE` with the value redacted when the key looks secret (or `always`).
fn redact_kv(kv: &str, always: bool) -> String {
    match kv.split_once('=') {
        Some((k, _)) if always || looks_secret(k) => format!("{k}={REDACTED}"),
        Some(_) => kv.to_string(),
        None if always => REDACTED.to_string(),
        None => kv.to_string(),
    }
}

/// A standalone `NAME=VALUE` word where NAME is an environment variable's name.
fn is_env_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((k, _)) => {
            !k.is_empty()
                && k.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// What the value after a flag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Plain,
    Kv,
    Env,
    Secret,
}

fn flag_kind(flag: &str) -> Next {
    if KV_FLAGS.contains(&flag) {
        Next::Kv
    } else if ENV_FLAGS.contains(&flag) {
        Next::Env
    } else if flag.starts_with("--") && !NOT_SECRET_FLAGS.contains(&flag) && looks_secret(flag) {
        Next::Secret
    } else {
        Next::Plain
    }
}

/// The command line with its secrets redacted.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next = Next::Plain;
    for word in args {
        let word = redact_url(word);
        let mut pending = std::mem::replace(&mut next, Next::Plain);
        if word.len() > 1 && word.starts_with('-') && word.parse::<f64>().is_err() {
            // A flag where a value was expected: the flag before took none.
            pending = Next::Plain;
        }
        let redacted = match pending {
            Next::Kv => redact_kv(&word, false),
            Next::Env => redact_kv(&word, true),
            Next::Secret => REDACTED.to_string(),
            Next::Plain => {
                if let Some(rest) = word.strip_prefix("-X").filter(|r| !r.is_empty()) {
                    // -Xkey=value
                    format!("-X{}", redact_kv(rest, false))
                } else if let Some((flag, value)) =
                    word.split_once('=').filter(|(f, _)| f.starts_with('-'))
                {
                    // --flag=value
                    match flag_kind(flag) {
                        Next::Kv => format!("{flag}={}", redact_kv(value, false)),
                        Next::Env => format!("{flag}={}", redact_kv(value, true)),
                        Next::Secret => format!("{flag}={REDACTED}"),
                        Next::Plain => word,
                    }
                } else if word.starts_with('-') {
                    next = flag_kind(&word);
                    word
                } else if is_env_assignment(&word) {
                    redact_kv(&word, false)
                } else {
                    word
                }
            }
        };
        out.push(redacted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn secrets_are_redacted_and_everything_else_kept() {
        // (command line, what the trail records)
        let cases = [
            (
                "offset-vault -b k:9092 restore ID --execute",
                "offset-vault -b k:9092 restore ID --execute",
            ),
            (
                "offset-vault -X sasl.password=hunter2 -X security.protocol=SASL_SSL restore ID",
                "offset-vault -X sasl.password=*** -X security.protocol=SASL_SSL restore ID",
            ),
            (
                "offset-vault -Xsasl.jaas.config=x=y restore",
                "offset-vault -Xsasl.jaas.config=*** restore",
            ),
            (
                "offset-vault --property ssl.key.password=p --property=sasl.oauthbearer.token=t x",
                "offset-vault --property ssl.key.password=*** --property=sasl.oauthbearer.token=*** x",
            ),
            (
                "offset-vault --property sasl.username=me",
                "offset-vault --property sasl.username=me",
            ),
            (
                "offset-vault --connect-url http://admin:pw@connect:8083 list",
                "offset-vault --connect-url http://admin:***@connect:8083 list",
            ),
            (
                "offset-vault --store=s3://a:b@bucket/p list",
                "offset-vault --store=s3://a:***@bucket/p list",
            ),
            (
                "offset-vault --connect-url http://connect:8083/a@b list",
                "offset-vault --connect-url http://connect:8083/a@b list",
            ),
            (
                "restore --connector-config-override connection.password=pw --connector-config-override topics=a",
                "restore --connector-config-override connection.password=*** --connector-config-override topics=a",
            ),
            (
                "guard -- docker run -e DB_URL=x --env=PLAIN=y img",
                "guard -- docker run -e DB_URL=*** --env=PLAIN=*** img",
            ),
            (
                "guard -- env AWS_SECRET_ACCESS_KEY=abc LOG=1 deploy.sh",
                "guard -- env AWS_SECRET_ACCESS_KEY=*** LOG=1 deploy.sh",
            ),
            (
                "guard -- tool --sasl-password hunter2 --api-token=abc --user me",
                "guard -- tool --sasl-password *** --api-token=*** --user me",
            ),
            (
                "offset-vault --signing-key ops.key prune --keep-tag release=yes",
                "offset-vault --signing-key ops.key prune --keep-tag release=yes",
            ),
            (
                "offset-vault snapshot --include-secrets --group g",
                "offset-vault snapshot --include-secrets --group g",
            ),
            (
                "guard -- tool --password --verbose",
                "guard -- tool --password --verbose",
            ),
            ("restore -X", "restore -X"),
        ];
        for (line, want) in cases {
            assert_eq!(redact_args(&words(line)).join(" "), want, "{line}");
        }
    }

    #[test]
    fn secret_looking_keys() {
        for (key, secret) in [
            ("sasl.password", true),
            ("SASL.JAAS.CONFIG", true),
            ("ssl.key.location", true),
            ("aws_session_token", true),
            ("client.secret", true),
            ("credentials.file", true),
            ("security.protocol", false),
            ("bootstrap.servers", false),
            ("sasl.username", false),
        ] {
            assert_eq!(looks_secret(key), secret, "{key}");
        }
    }
}
