//! Connector secrets at rest: the full, unredacted connector configs of a snapshot, encrypted
//! with age to X25519 recipients (`snapshot --encrypt-to age1...`) in `connectors.secrets.age`.
//!
//! The snapshot keeps its redacted `connectors.json` as well, so everything that reads a
//! snapshot works without the identity. The encrypted file is listed in the manifest with the
//! size and SHA-256 of its ciphertext like every other file, so tampering is caught without the
//! identity; nothing derived from the plaintext secrets (no digest of them) is written in clear:
//! a hash of a low-entropy secret could be searched offline. The SHA-256 of the ciphertext (which
//! says nothing of the plaintext: age encrypts with a fresh random key) is also among the
//! manifest's sealed fields, so the id binds the encrypted file: age does not authenticate who
//! encrypted, and anyone who knows a recipient's public key could otherwise put in another file
//! and fix its digest in the manifest. The plaintext names the content digest of the snapshot
//! it belongs to.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::ConnectorSnapshot;
use crate::error::{Error, Result};
use crate::redact::{redact_config, REDACTED};

/// The encrypted file's name in a snapshot folder.
pub const SECRETS_FILE: &str = "connectors.secrets.age";

/// Largest plaintext accepted from a decrypted file (connector configs are small).
const MAX_PLAINTEXT: u64 = 64 * 1024 * 1024;

/// What the manifest says of the encrypted secrets, all of it sealed into the id: the file, the
/// recipients' public keys (public by design, and what tells a user which identity opens the
/// file) and the SHA-256 of the ciphertext.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncryptedSecrets {
    /// The file in the snapshot folder that holds them (`connectors.secrets.age`).
    pub file: String,
    /// The X25519 recipients (`age1...`) the file is encrypted to.
    pub recipients: Vec<String>,
    /// SHA-256 of the file's bytes (the ciphertext), as its entry in `files` has it.
    pub sha256: String,
}

/// The plaintext: the full connectors of the snapshot whose content digest is `content_sha256`.
#[derive(Serialize, Deserialize)]
struct SecretsDoc {
    format_version: String,
    content_sha256: String,
    connectors: Vec<ConnectorSnapshot>,
}

/// X25519 recipients, checked.
#[derive(Clone)]
pub struct Recipients(Vec<age::x25519::Recipient>);

impl std::fmt::Debug for Recipients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.keys()).finish()
    }
}

impl Recipients {
    /// Parses recipients given one per value (a value may also hold several, separated by
    /// commas or white space). Duplicates are dropped. `from` names where they came from.
    pub fn parse<S: AsRef<str>>(values: &[S], from: &str) -> Result<Self> {
        let mut out: Vec<age::x25519::Recipient> = Vec::new();
        for value in values {
            for word in value
                .as_ref()
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
            {
                let r = word.parse::<age::x25519::Recipient>().map_err(|_| {
                    Error::usage(format!(
                        "{from}: {word:?} is not an age X25519 recipient: expected a public key that starts with age1 (as printed by `age-keygen -y IDENTITY_FILE` or `rage-keygen -y IDENTITY_FILE`)"
                    ))
                })?;
                if !out.iter().any(|o| o.to_string() == r.to_string()) {
                    out.push(r);
                }
            }
        }
        if out.is_empty() {
            return Err(Error::usage(format!("{from}: no recipient given")));
        }
        Ok(Recipients(out))
    }

    /// Reads a recipients file: one `age1...` key a line; blank lines and `#` comments are
    /// skipped.
    pub fn read_file(path: &Path) -> Result<Vec<String>> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect())
    }

    /// The public keys, `age1...`.
    pub fn keys(&self) -> Vec<String> {
        self.0.iter().map(|r| r.to_string()).collect()
    }
}

/// The identities of an identity file (`AGE-SECRET-KEY-1...` lines, as `age-keygen` writes them).
#[derive(Clone)]
pub struct Identities {
    path: PathBuf,
    keys: Vec<age::x25519::Identity>,
}

impl std::fmt::Debug for Identities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Identities({}, {} key(s))",
            self.path.display(),
            self.keys.len()
        )
    }
}

impl Identities {
    /// Reads an identity file. A missing, unreadable or malformed file is a usage error that
    /// names it (the key material itself is never quoted).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<Self> {
        let mut keys = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let key = line.parse::<age::x25519::Identity>().map_err(|_| {
                Error::usage(format!(
                    "identity file {}: line {} is not an age X25519 identity (AGE-SECRET-KEY-1...); make one with `age-keygen -o FILE` or `rage-keygen -o FILE`",
                    path.display(),
                    n + 1
                ))
            })?;
            keys.push(key);
        }
        if keys.is_empty() {
            return Err(Error::usage(format!(
                "identity file {}: holds no AGE-SECRET-KEY-1... line",
                path.display()
            )));
        }
        Ok(Identities {
            path: path.to_path_buf(),
            keys,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The public keys of these identities.
    pub fn recipients(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|k| k.to_public().to_string())
            .collect()
    }
}

/// Encrypts the full connectors of the snapshot whose content digest is `content_sha256`.
pub fn encrypt(
    recipients: &Recipients,
    content_sha256: &str,
    full: &[ConnectorSnapshot],
) -> Result<Vec<u8>> {
    let failed = |e: String| Error::Internal(format!("encrypting {SECRETS_FILE}: {e}"));
    let plaintext = serde_json::to_vec(&SecretsDoc {
        format_version: super::model::FORMAT_VERSION.into(),
        content_sha256: content_sha256.into(),
        connectors: full.to_vec(),
    })
    .map_err(|e| failed(e.to_string()))?;
    let encryptor =
        age::Encryptor::with_recipients(recipients.0.iter().map(|r| r as &dyn age::Recipient))
            .map_err(|e| failed(e.to_string()))?;
    let mut out = Vec::with_capacity(plaintext.len() + 1024);
    let mut writer = encryptor
        .wrap_output(&mut out)
        .map_err(|e| failed(e.to_string()))?;
    writer
        .write_all(&plaintext)
        .and_then(|_| writer.finish().map(|_| ()))
        .map_err(|e| failed(e.to_string()))?;
    Ok(out)
}

/// Decrypts `connectors.secrets.age` of snapshot `snapshot_id` (content digest
/// `content_sha256`); `path` names it in errors. A file that none of the identities opens is a
/// usage error (the wrong identity file); a file that does not decrypt or decode once opened
/// (changed bytes: age authenticates every chunk), or that belongs to other content, is an
/// integrity error.
pub fn decrypt(
    identities: &Identities,
    (snapshot_id, content_sha256): (&str, &str),
    path: &str,
    ciphertext: &[u8],
) -> Result<Vec<ConnectorSnapshot>> {
    let integrity = |problem: String| Error::Integrity {
        id: snapshot_id.to_string(),
        problems: vec![format!("{path}: {problem}; nothing was changed")],
    };
    let decryptor = age::Decryptor::new_buffered(ciphertext)
        .map_err(|e| integrity(format!("not a readable age file: {e}")))?;
    let reader = match decryptor.decrypt(identities.keys.iter().map(|k| k as &dyn age::Identity)) {
        Ok(r) => r,
        Err(age::DecryptError::NoMatchingKeys) => {
            return Err(Error::usage(format!(
                "{path} is not encrypted to any key of identity file {} (its public key(s): {}); pass the identity file whose public key is among the recipients that `offset-vault show {snapshot_id}` lists. Nothing was changed",
                identities.path.display(),
                identities.recipients().join(", ")
            )))
        }
        Err(e) => return Err(integrity(format!("cannot be decrypted: {e}"))),
    };
    let mut plaintext = Vec::new();
    reader
        .take(MAX_PLAINTEXT)
        .read_to_end(&mut plaintext)
        .map_err(|e| integrity(format!("cannot be decrypted: {e}")))?;
    let doc: SecretsDoc = serde_json::from_slice(&plaintext)
        .map_err(|e| integrity(format!("decrypted, but not a connectors document: {e}")))?;
    crate::model::check_format_version(path, &doc.format_version)?;
    if doc.content_sha256 != content_sha256 {
        return Err(integrity(
            "decrypted, but it belongs to a snapshot of other content".into(),
        ));
    }
    Ok(doc.connectors)
}

/// The redacted form of a full connector, exactly as a snapshot stores it in `connectors.json`.
pub fn redacted(full: &ConnectorSnapshot) -> ConnectorSnapshot {
    let mut c = full.clone();
    c.redacted_keys = redact_config(&mut c.config);
    c
}

/// Checks that the decrypted connectors are the redacted ones with their secrets: the same
/// connectors (names, Connect URLs), the same config keys, the same value for every key that was
/// not redacted, and the same type, group, state, tasks and offsets. The comparison does not
/// redact again, so it holds for snapshots taken under other redaction rules. Returns the
/// problems; values are never quoted.
pub fn mismatches(redacted_: &[ConnectorSnapshot], full: &[ConnectorSnapshot]) -> Vec<String> {
    let mut problems = Vec::new();
    let key = |c: &ConnectorSnapshot| (c.connect_url.clone(), c.name.clone());
    for r in redacted_ {
        match full.iter().find(|f| key(f) == key(r)) {
            None => problems.push(format!(
                "connector {} ({}) is missing from the decrypted file",
                r.name, r.connect_url
            )),
            Some(f) => {
                let what = differences(r, f);
                if !what.is_empty() {
                    problems.push(format!(
                        "connector {} ({}) differs from connectors.json: {}",
                        r.name,
                        r.connect_url,
                        what.join(", ")
                    ));
                }
            }
        }
    }
    for f in full {
        if !redacted_.iter().any(|r| key(r) == key(f)) {
            problems.push(format!(
                "connector {} ({}) is in the decrypted file but not in connectors.json",
                f.name, f.connect_url
            ));
        }
    }
    problems
}

/// What differs between a redacted connector and a full one, by name only.
fn differences(r: &ConnectorSnapshot, f: &ConnectorSnapshot) -> Vec<String> {
    let mut what = std::collections::BTreeSet::new();
    for k in r.config.keys().chain(f.config.keys()) {
        let same = match (r.config.get(k), f.config.get(k)) {
            (Some(rv), Some(_)) if rv == REDACTED && r.redacted_keys.contains(k) => true,
            (Some(rv), Some(fv)) => rv == fv,
            _ => false,
        };
        if !same {
            what.insert(format!("config {k}"));
        }
    }
    let rest = |c: &ConnectorSnapshot| {
        let mut c = c.clone();
        c.config.clear();
        c.redacted_keys.clear();
        c
    };
    if rest(r) != rest(f) {
        what.insert("its type, group, state, tasks or offsets".into());
    }
    what.into_iter().collect()
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
pub(crate) mod tests;
