//! Ed25519 keys and detached signatures.
//!
//! Every object a restore may read (a snapshot's manifest, a commit-log segment's manifest, a plan
//! file) and every audit event can carry a signature by the key that wrote it. A manifest already
//! binds each of its files by size and SHA-256, so signing the manifest's bytes signs the whole
//! object: changing any byte of any file either breaks a file hash, or needs a new manifest, whose
//! bytes then no longer match the signature.
//!
//! Keys are PKCS#8 (secret) and SubjectPublicKeyInfo (public) PEM files, as OpenSSL writes them
//! for Ed25519, so they can be made and inspected with standard tools too. A key's id is the first
//! 16 hex digits of the SHA-256 of its 32-byte public key.
//!
//! A signature file (`<object>.sig`) is a small JSON document: the signer's key id, what kind of
//! object it signs, the SHA-256 of the signed bytes, and the Ed25519 signature over a message that
//! binds the kind and that digest. Binding the kind means a signature made for one kind of object
//! (an audit event) cannot be presented for another (a snapshot manifest).

use std::path::Path;

use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The suffix of a detached signature's object name.
pub const SIG_SUFFIX: &str = ".sig";
const SIG_KIND: &str = "offset-vault-signature";
const SIG_VERSION: &str = "1";
const ALGORITHM: &str = "ed25519";
const KEY_ID_LEN: usize = 16;

/// What a signature signs. Part of the signed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// A snapshot's `manifest.json` (snapshots, undo snapshots, imports).
    SnapshotManifest,
    /// A commit-log segment's manifest.
    LogSegment,
    /// The record of an executed restore or reset (`applies/`).
    ApplyRecord,
    /// A plan file's author signature.
    Plan,
    /// An approval of a plan file.
    PlanApproval,
    /// An audit event.
    AuditEvent,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::SnapshotManifest => "snapshot-manifest",
            Purpose::LogSegment => "log-segment",
            Purpose::ApplyRecord => "apply-record",
            Purpose::Plan => "plan",
            Purpose::PlanApproval => "plan-approval",
            Purpose::AuditEvent => "audit-event",
        }
    }
}

/// The id of a public key: 16 hex digits of the SHA-256 of its bytes.
pub fn key_id(key: &VerifyingKey) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))[..KEY_ID_LEN].to_string()
}

/// A secret key that signs.
#[derive(Clone)]
pub struct SecretKey {
    key: SigningKey,
    id: String,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.id)
    }
}

/// A public key that verifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    key: VerifyingKey,
    id: String,
}

fn bad_key(source: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::usage(format!(
        "{source}: not an Ed25519 {what} in PEM form ({e}); `offset-vault keygen --out PREFIX` makes a key pair"
    ))
}

impl SecretKey {
    /// A new random key.
    pub fn generate() -> Result<Self> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| Error::Internal(format!("no randomness for a key: {e}")))?;
        Ok(Self::from_signing(SigningKey::from_bytes(&seed)))
    }

    fn from_signing(key: SigningKey) -> Self {
        let id = key_id(&key.verifying_key());
        SecretKey { key, id }
    }

    /// Reads a PKCS#8 PEM secret key; `source` names it in errors.
    pub fn from_pem(source: &str, text: &str) -> Result<Self> {
        SigningKey::from_pkcs8_pem(text.trim())
            .map(Self::from_signing)
            .map_err(|e| bad_key(source, "secret key (PKCS#8)", e))
    }

    /// The PKCS#8 v1 form (the secret key alone), the one OpenSSL writes and reads for Ed25519;
    /// the v2 form with the public key beside it is not read by OpenSSL 3.0.
    pub fn to_pem(&self) -> Result<String> {
        ed25519_dalek::pkcs8::KeypairBytes {
            secret_key: self.key.to_bytes(),
            public_key: None,
        }
        .to_pkcs8_pem(Default::default())
        .map(|pem| pem.to_string())
        .map_err(|e| Error::Internal(format!("cannot encode the secret key: {e}")))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn public(&self) -> PublicKey {
        let key = self.key.verifying_key();
        PublicKey {
            id: key_id(&key),
            key,
        }
    }

    /// A detached signature of `bytes` for `purpose`.
    pub fn sign(&self, purpose: Purpose, bytes: &[u8]) -> Signature {
        let sha256 = hex::encode(Sha256::digest(bytes));
        let sig = self.key.sign(&message(purpose, &sha256));
        Signature {
            kind: SIG_KIND.into(),
            version: SIG_VERSION.into(),
            algorithm: ALGORITHM.into(),
            key_id: self.id.clone(),
            purpose,
            sha256,
            signature: base64::engine::general_purpose::STANDARD.encode(sig.to_bytes()),
        }
    }
}

impl PublicKey {
    /// Reads an SPKI PEM public key, or the public half of a PKCS#8 secret key.
    pub fn from_pem(source: &str, text: &str) -> Result<Self> {
        let text = text.trim();
        let key = match VerifyingKey::from_public_key_pem(text) {
            Ok(k) => k,
            Err(e) => match SigningKey::from_pkcs8_pem(text) {
                Ok(s) => s.verifying_key(),
                Err(_) => return Err(bad_key(source, "public key (SPKI)", e)),
            },
        };
        Ok(PublicKey {
            id: key_id(&key),
            key,
        })
    }

    pub fn to_pem(&self) -> Result<String> {
        self.key
            .to_public_key_pem(Default::default())
            .map_err(|e| Error::Internal(format!("cannot encode the public key: {e}")))
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `sig` is this key's valid signature of `bytes` for `purpose`.
    fn verifies(
        &self,
        purpose: Purpose,
        bytes: &[u8],
        sig: &Signature,
    ) -> std::result::Result<(), String> {
        let sha256 = hex::encode(Sha256::digest(bytes));
        if sig.sha256 != sha256 {
            return Err(format!(
                "the signed SHA-256 {} differs from the object's {sha256}",
                sig.sha256
            ));
        }
        if sig.purpose != purpose {
            return Err(format!(
                "it signs a {}, not a {}",
                sig.purpose.as_str(),
                purpose.as_str()
            ));
        }
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&sig.signature)
            .map_err(|e| format!("the signature is not base64: {e}"))?;
        let raw: [u8; 64] = raw
            .try_into()
            .map_err(|_| "the signature is not 64 bytes".to_string())?;
        self.key
            .verify_strict(
                &message(purpose, &sha256),
                &ed25519_dalek::Signature::from_bytes(&raw),
            )
            .map_err(|_| "the signature does not verify".to_string())
    }
}

/// The signed message: a fixed prefix, the purpose and the digest of the object's bytes.
fn message(purpose: Purpose, sha256_hex: &str) -> Vec<u8> {
    format!(
        "offset-vault signature v1\n{}\n{sha256_hex}\n",
        purpose.as_str()
    )
    .into_bytes()
}

/// A detached signature, as stored in `<object>.sig` (and inside plan files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    pub kind: String,
    pub version: String,
    pub algorithm: String,
    pub key_id: String,
    pub purpose: Purpose,
    /// SHA-256 of the signed bytes.
    pub sha256: String,
    /// The Ed25519 signature, base64.
    pub signature: String,
}

impl Signature {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a signature always serializes");
        out.push(b'\n');
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        let s: Signature =
            serde_json::from_slice(bytes).map_err(|e| format!("not a signature file: {e}"))?;
        if s.kind != SIG_KIND || s.algorithm != ALGORITHM || s.version != SIG_VERSION {
            return Err(format!(
                "unsupported signature: kind {}, version {}, algorithm {}",
                s.kind, s.version, s.algorithm
            ));
        }
        Ok(s)
    }
}

/// What a check of an object's signature found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// No signature.
    Unsigned,
    /// Signed, but no trusted key is configured: the key id is the one the signature names, not
    /// checked.
    Unverified { key_id: String },
    /// Signed by a trusted key, and the signature verifies.
    Trusted { key_id: String },
    /// Signed by a key that is not trusted.
    Untrusted { key_id: String },
    /// The signature is malformed or does not verify: the object or its signature was changed.
    Invalid {
        #[serde(skip_serializing_if = "Option::is_none")]
        key_id: Option<String>,
        problem: String,
    },
}

impl Verdict {
    /// The key id the signature names, if any.
    pub fn key_id(&self) -> Option<&str> {
        match self {
            Verdict::Unsigned => None,
            Verdict::Unverified { key_id }
            | Verdict::Trusted { key_id }
            | Verdict::Untrusted { key_id } => Some(key_id),
            Verdict::Invalid { key_id, .. } => key_id.as_deref(),
        }
    }

    /// A short word for tables.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Unsigned => "unsigned",
            Verdict::Unverified { .. } => "signed",
            Verdict::Trusted { .. } => "trusted",
            Verdict::Untrusted { .. } => "untrusted",
            Verdict::Invalid { .. } => "invalid",
        }
    }

    /// For tables: `trusted 1a2b...`, `unsigned`.
    pub fn describe(&self) -> String {
        match self.key_id() {
            Some(k) => format!("{} {k}", self.word()),
            None => self.word().to_string(),
        }
    }

    /// Why the object is refused when trusted keys are required; `None` when it is accepted.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Verdict::Trusted { .. } => None,
            Verdict::Unsigned => {
                Some("not signed, and trusted keys are configured (--trusted-key)".into())
            }
            Verdict::Unverified { key_id } | Verdict::Untrusted { key_id } => Some(format!(
                "signed by key {key_id}, which is not among the trusted keys (--trusted-key)"
            )),
            Verdict::Invalid { key_id, problem } => Some(match key_id {
                Some(k) => format!("signature by key {k} is invalid: {problem}"),
                None => format!("signature is invalid: {problem}"),
            }),
        }
    }
}

/// The keys a command works with: the one it signs with, and the ones it trusts.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    signer: Option<SecretKey>,
    trusted: Vec<PublicKey>,
}

impl Keys {
    pub fn new(signer: Option<SecretKey>, trusted: Vec<PublicKey>) -> Self {
        Keys { signer, trusted }
    }

    pub fn signer(&self) -> Option<&SecretKey> {
        self.signer.as_ref()
    }

    /// Whether only objects signed by a trusted key are accepted.
    pub fn enforcing(&self) -> bool {
        !self.trusted.is_empty()
    }

    pub fn trusts(&self, key_id: &str) -> bool {
        self.trusted.iter().any(|k| k.id == key_id)
    }

    /// Judges the signature (`sig`: the bytes of the signature file, `None` when there is none)
    /// of an object's `bytes`.
    pub fn judge(&self, purpose: Purpose, bytes: &[u8], sig: Option<&[u8]>) -> Verdict {
        let Some(sig) = sig else {
            return Verdict::Unsigned;
        };
        let sig = match Signature::from_bytes(sig) {
            Ok(s) => s,
            Err(problem) => {
                return Verdict::Invalid {
                    key_id: None,
                    problem,
                }
            }
        };
        self.judge_parsed(purpose, bytes, &sig)
    }

    /// [`Self::judge`] of a parsed signature.
    pub fn judge_parsed(&self, purpose: Purpose, bytes: &[u8], sig: &Signature) -> Verdict {
        let key_id = sig.key_id.clone();
        let known = self
            .trusted
            .iter()
            .chain(self.signer.as_ref().map(|s| s.public()).as_ref())
            .find(|k| k.id == key_id)
            .cloned();
        // A signature that names a key we hold is checked even when it is not trusted, so a
        // changed object is reported as changed, not only as untrusted.
        if let Some(k) = &known {
            if let Err(problem) = k.verifies(purpose, bytes, sig) {
                return Verdict::Invalid {
                    key_id: Some(key_id),
                    problem,
                };
            }
        }
        if self.trusts(&key_id) {
            Verdict::Trusted { key_id }
        } else if self.enforcing() {
            Verdict::Untrusted { key_id }
        } else {
            Verdict::Unverified { key_id }
        }
    }
}

/// Reads a key from a file; `what` names the option in errors.
pub fn read_key_file(what: &str, path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("{what} {}: cannot read it: {e}", path.display())))
}

/// A key given as a file path or, when it starts with `-----BEGIN`, as the PEM text itself
/// (the form environment variables and secret stores hand over).
pub fn key_text(what: &str, value: &str) -> Result<(String, String)> {
    if value.trim_start().starts_with("-----BEGIN") {
        Ok((what.to_string(), value.to_string()))
    } else {
        let path = Path::new(value);
        Ok((
            format!("{what} {}", path.display()),
            read_key_file(what, path)?,
        ))
    }
}

/// Writes a new key pair to `PREFIX.key` (created owner-only, never overwritten) and
/// `PREFIX.pub`. Returns the key.
pub fn keygen(prefix: &Path) -> Result<SecretKey> {
    let key = SecretKey::generate()?;
    let secret_path = prefix.with_file_name(format!(
        "{}.key",
        prefix.file_name().unwrap_or_default().to_string_lossy()
    ));
    let public_path = secret_path.with_extension("pub");
    for p in [&secret_path, &public_path] {
        if p.exists() {
            return Err(Error::usage(format!(
                "{} already exists; keygen never overwrites a key (choose another --out, or move the old pair away)",
                p.display()
            )));
        }
    }
    write_new(&secret_path, key.to_pem()?.as_bytes(), 0o600)?;
    if let Err(e) = write_new(&public_path, key.public().to_pem()?.as_bytes(), 0o644) {
        let _ = std::fs::remove_file(&secret_path);
        return Err(e);
    }
    Ok(key)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = opts
        .open(path)
        .map_err(|e| Error::usage(format!("cannot create {}: {e}", path.display())))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::usage(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests;
