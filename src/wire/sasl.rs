//! SASL client messages for the direct Kafka connection: PLAIN (RFC 4616) and SCRAM-SHA-256/512
//! (RFC 5802, RFC 7677). Pure functions and a small state machine; the connection sends the bytes.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{KeyInit, Mac};
use sha2::Digest;

/// The SASL mechanisms this path speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl Mechanism {
    /// The mechanism named by `sasl.mechanism(s)`, if this path speaks it.
    pub fn from_name(name: &str) -> Option<Mechanism> {
        match name.trim().to_ascii_uppercase().as_str() {
            "PLAIN" => Some(Mechanism::Plain),
            "SCRAM-SHA-256" => Some(Mechanism::ScramSha256),
            "SCRAM-SHA-512" => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::ScramSha512 => {
                let mut m = hmac::Hmac::<sha2::Sha512>::new_from_slice(key).expect("any key size");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            _ => {
                let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("any key size");
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::ScramSha512 => sha2::Sha512::digest(data).to_vec(),
            _ => sha2::Sha256::digest(data).to_vec(),
        }
    }
}

/// The single PLAIN message: authorization id (empty), user, password.
pub fn plain_message(user: &str, password: &str) -> Vec<u8> {
    format!("\0{user}\0{password}").into_bytes()
}

/// A fresh client nonce: 24 random bytes, base64.
pub fn new_nonce() -> String {
    let mut raw = [0u8; 24];
    // The OS random source does not fail on Linux once booted; a fixed nonce would still
    // authenticate, only without replay protection, so fall back to the time.
    if getrandom::fill(&mut raw).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            .to_le_bytes();
        raw[..16].copy_from_slice(&t);
    }
    B64.encode(raw)
}

/// A SCRAM exchange in progress.
#[derive(Debug)]
pub struct Scram {
    mechanism: Mechanism,
    password: String,
    client_first_bare: String,
    nonce: String,
    server_signature: Option<Vec<u8>>,
}

fn escape_name(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// PBKDF2 with one output block, as SCRAM's `Hi()` defines it.
fn hi(mechanism: Mechanism, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
    let mut first = salt.to_vec();
    first.extend_from_slice(&1u32.to_be_bytes());
    let mut u = mechanism.hmac(password, &first);
    let mut out = u.clone();
    for _ in 1..iterations {
        u = mechanism.hmac(password, &u);
        out.iter_mut().zip(&u).for_each(|(o, x)| *o ^= x);
    }
    out
}

impl Scram {
    /// Starts an exchange; returns it with the client-first message to send.
    pub fn start(
        mechanism: Mechanism,
        user: &str,
        password: &str,
        nonce: &str,
    ) -> (Scram, Vec<u8>) {
        let client_first_bare = format!("n={},r={nonce}", escape_name(user));
        let message = format!("n,,{client_first_bare}").into_bytes();
        let scram = Scram {
            mechanism,
            password: password.to_string(),
            client_first_bare,
            nonce: nonce.to_string(),
            server_signature: None,
        };
        (scram, message)
    }

    /// Answers the server-first message with the client-final message (with the proof).
    pub fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, String> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| "the server's SCRAM challenge is not UTF-8".to_string())?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attr in server_first.split(',') {
            match attr.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = Some(v),
                Some(("i", v)) => iterations = v.parse::<u32>().ok(),
                Some(("e", v)) => return Err(format!("the server refused: {v}")),
                _ => {}
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err(format!("malformed SCRAM challenge: {server_first:?}"));
        };
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's SCRAM nonce does not extend ours".into());
        }
        if iterations == 0 {
            return Err("the server asked for 0 SCRAM iterations".into());
        }
        let salt = B64
            .decode(salt)
            .map_err(|e| format!("the server's SCRAM salt is not base64: {e}"))?;
        let m = self.mechanism;
        let salted = hi(m, self.password.as_bytes(), &salt, iterations);
        let client_key = m.hmac(&salted, b"Client Key");
        let stored_key = m.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = m.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = m.hmac(&salted, b"Server Key");
        self.server_signature = Some(m.hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)).into_bytes())
    }

    /// Checks the server-final message: the server proves it knew the password too.
    pub fn verify_server(&self, server_final: &[u8]) -> Result<(), String> {
        let text = String::from_utf8_lossy(server_final);
        if let Some(e) = text.strip_prefix("e=") {
            return Err(format!("the server refused: {e}"));
        }
        let Some(v) = text.split(',').find_map(|a| a.strip_prefix("v=")) else {
            return Err(format!("malformed SCRAM server-final message: {text:?}"));
        };
        let got = B64
            .decode(v)
            .map_err(|e| format!("the server's SCRAM signature is not base64: {e}"))?;
        match &self.server_signature {
            Some(expected) if *expected == got => Ok(()),
            _ => Err("the server's SCRAM signature does not match: it does not know this user's credentials".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scram_sha256_matches_the_rfc_7677_example() {
        let (mut s, first) = Scram::start(
            Mechanism::ScramSha256,
            "user",
            "pencil",
            "rOprNGfwEbeRWgbNEkqO",
        );
        assert_eq!(first, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first =
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = s.client_final(server_first).unwrap();
        assert_eq!(
            String::from_utf8(fin).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        s.verify_server(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        assert!(s
            .verify_server(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .is_err());
        assert!(s
            .verify_server(b"e=invalid-proof")
            .unwrap_err()
            .contains("invalid-proof"));
    }

    #[test]
    fn a_challenge_that_does_not_extend_our_nonce_is_refused() {
        let (mut s, _) = Scram::start(Mechanism::ScramSha512, "u", "p", "abc");
        assert!(s.client_final(b"r=xyz123,s=c2FsdA==,i=4096").is_err());
        assert!(s.client_final(b"r=abc,s=c2FsdA==,i=4096").is_err());
        assert!(s.client_final(b"r=abcdef,s=c2FsdA==").is_err());
        assert!(s.client_final(b"r=abcdef,s=c2FsdA==,i=4096").is_ok());
    }

    #[test]
    fn names_are_escaped_and_mechanisms_named() {
        let (_, first) = Scram::start(Mechanism::ScramSha256, "a=b,c", "p", "n");
        assert_eq!(first, b"n,,n=a=3Db=2Cc,r=n");
        assert_eq!(plain_message("u", "p"), b"\0u\0p");
        assert_eq!(
            Mechanism::from_name("scram-sha-512"),
            Some(Mechanism::ScramSha512)
        );
        assert_eq!(Mechanism::from_name("GSSAPI"), None);
        assert_ne!(new_nonce(), new_nonce());
    }
}
