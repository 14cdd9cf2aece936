use std::collections::BTreeMap;

use super::*;
use crate::error::exit;

pub(crate) const SECRET: &str = "s3cr3t-Hunter2-value";

pub(crate) fn full_connector(name: &str) -> ConnectorSnapshot {
    ConnectorSnapshot {
        name: name.into(),
        connect_url: "http://connect:8083".into(),
        connector_type: "sink".into(),
        group_id: Some(format!("connect-{name}")),
        config: BTreeMap::from([
            ("connector.class".into(), "FileStreamSink".into()),
            ("topics".into(), "orders".into()),
            ("db.password".into(), SECRET.into()),
            (
                "connection.url".into(),
                format!("jdbc:postgresql://db/x?user=app&password={SECRET}"),
            ),
        ]),
        redacted_keys: vec![],
        state: "RUNNING".into(),
        tasks: vec![],
        offsets: None,
        offsets_unavailable: Some("sink".into()),
    }
}

pub(crate) fn key() -> (age::x25519::Identity, Recipients) {
    let id = age::x25519::Identity::generate();
    let r = Recipients::parse(&[id.to_public().to_string()], "test").unwrap();
    (id, r)
}

pub(crate) fn identities(ids: &[&age::x25519::Identity]) -> Identities {
    let text: String = ids
        .iter()
        .map(|i| {
            use age::secrecy::ExposeSecret;
            format!("# created: now\n{}\n", i.to_string().expose_secret())
        })
        .collect();
    Identities::parse(Path::new("id.txt"), &text).unwrap()
}

#[test]
fn encrypted_connectors_decrypt_to_the_same_connectors() {
    let (id, r) = key();
    let full = vec![full_connector("a"), full_connector("b")];
    let sealed = encrypt(&r, "C", &full).unwrap();
    assert!(sealed.starts_with(b"age-encryption.org/v1\n"));
    assert!(!String::from_utf8_lossy(&sealed).contains(SECRET));
    let back = decrypt(&identities(&[&id]), ("SNAP", "C"), "f", &sealed).unwrap();
    assert_eq!(back, full);
    // Any one of several recipients opens it.
    let (other, r2) = key();
    let both = Recipients::parse(&[r.keys(), r2.keys()].concat(), "test").unwrap();
    let sealed = encrypt(&both, "C", &full).unwrap();
    assert_eq!(
        decrypt(&identities(&[&other]), ("SNAP", "C"), "f", &sealed).unwrap(),
        full
    );
}

#[test]
fn a_wrong_identity_is_a_usage_error_that_names_the_file() {
    let (_, r) = key();
    let (wrong, _) = key();
    let sealed = encrypt(&r, "C", &[full_connector("a")]).unwrap();
    let err = decrypt(&identities(&[&wrong]), ("SNAP", "C"), "snap/x.age", &sealed).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE, "{err}");
    let text = err.to_string();
    for words in ["snap/x.age", "id.txt", "Nothing was changed"] {
        assert!(text.contains(words), "{words} not in {text}");
    }
}

#[test]
fn a_changed_byte_anywhere_in_the_file_is_an_integrity_error() {
    let (id, r) = key();
    let ids = identities(&[&id]);
    let sealed = encrypt(&r, "C", &[full_connector("a")]).unwrap();
    let header_end = sealed
        .windows(4)
        .position(|w| w == b"--- ")
        .expect("an age header ends with its MAC line");
    // In the header MAC, the nonce, the first and the last payload byte.
    for at in [
        header_end + 6,
        header_end + 60,
        sealed.len() / 2,
        sealed.len() - 1,
    ] {
        let mut bad = sealed.clone();
        bad[at] ^= 0x01;
        let err = decrypt(&ids, ("SNAP", "C"), "f", &bad).unwrap_err();
        assert_eq!(err.exit_code(), exit::INTEGRITY, "byte {at}: {err}");
        assert!(err.to_string().contains("nothing was changed"), "{err}");
    }
    // Cut short: the last chunk is missing.
    let err = decrypt(&ids, ("SNAP", "C"), "f", &sealed[..sealed.len() - 20]).unwrap_err();
    assert_eq!(err.exit_code(), exit::INTEGRITY, "{err}");
}

#[test]
fn a_file_of_another_snapshots_content_is_refused_after_decryption() {
    let (id, r) = key();
    let sealed = encrypt(&r, "OTHER CONTENT", &[full_connector("a")]).unwrap();
    let err = decrypt(&identities(&[&id]), ("SNAP", "C"), "f", &sealed).unwrap_err();
    assert_eq!(err.exit_code(), exit::INTEGRITY);
    assert!(
        err.to_string()
            .contains("belongs to a snapshot of other content"),
        "{err}"
    );
}

#[test]
fn recipients_are_checked_and_deduplicated() {
    let (_, r1) = key();
    let (_, r2) = key();
    let (k1, k2) = (r1.keys()[0].clone(), r2.keys()[0].clone());
    let both = Recipients::parse(&[format!("{k1}, {k2}"), k1.clone()], "--encrypt-to").unwrap();
    assert_eq!(both.keys(), vec![k1.clone(), k2.clone()]);
    for bad in ["age1notakey", "AGE-SECRET-KEY-1ABC", "ssh-ed25519 AAAA"] {
        let err = Recipients::parse(&[bad], "--encrypt-to").unwrap_err();
        assert_eq!(err.exit_code(), exit::USAGE);
        assert!(err.to_string().contains("--encrypt-to"), "{err}");
    }
    let err = Recipients::parse(&[" , "], "--encrypt-to").unwrap_err();
    assert!(err.to_string().contains("no recipient"), "{err}");
    // A recipients file: comments and blank lines skipped.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recipients.txt");
    std::fs::write(&path, format!("# ops team\n\n{k1}\n  {k2}  \n")).unwrap();
    assert_eq!(Recipients::read_file(&path).unwrap(), vec![k1, k2]);
    let err = Recipients::read_file(&dir.path().join("missing")).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
}

#[test]
fn identity_files_are_read_as_age_keygen_writes_them() {
    let (id, _) = key();
    use age::secrecy::ExposeSecret;
    let secret = id.to_string().expose_secret().to_string();
    let text = format!(
        "# created: 2026-12-01T00:00:00Z\n# public key: {}\n{secret}\n",
        id.to_public()
    );
    let ids = Identities::parse(Path::new("k.txt"), &text).unwrap();
    assert_eq!(ids.recipients(), vec![id.to_public().to_string()]);
    let bad = format!("{secret}\nnot a key\n");
    let err = Identities::parse(Path::new("k.txt"), &bad).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
    let text = err.to_string();
    assert!(text.contains("k.txt") && text.contains("line 2"), "{text}");
    assert!(!text.contains(&secret), "the key is never quoted");
    let err = Identities::parse(Path::new("k.txt"), "# only comments\n").unwrap_err();
    assert!(err.to_string().contains("no AGE-SECRET-KEY"), "{err}");
    let err = Identities::read(Path::new("/nonexistent/identity.txt")).unwrap_err();
    assert_eq!(err.exit_code(), exit::USAGE);
    assert!(
        err.to_string().contains("/nonexistent/identity.txt"),
        "{err}"
    );
}

#[test]
fn decrypted_connectors_must_match_the_redacted_ones() {
    let full = vec![full_connector("a"), full_connector("b")];
    let redacted_: Vec<ConnectorSnapshot> = full.iter().map(redacted).collect();
    assert_eq!(
        redacted_[0].redacted_keys,
        vec!["connection.url", "db.password"]
    );
    assert!(mismatches(&redacted_, &full).is_empty());
    // Only a secret differs: that cannot be seen without the secret, and is accepted.
    let mut other_secret = full.clone();
    other_secret[0]
        .config
        .insert("db.password".into(), "another".into());
    assert!(mismatches(&redacted_, &other_secret).is_empty());
    // A non-secret value changed.
    let mut changed = full.clone();
    changed[1].config.insert("topics".into(), "payments".into());
    let p = mismatches(&redacted_, &changed);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("connector b") && p[0].contains("config topics"),
        "{p:?}"
    );
    // A connector missing, one added, one moved to another Connect cluster.
    let p = mismatches(&redacted_, &full[..1]);
    assert!(
        p[0].contains("connector b") && p[0].contains("missing"),
        "{p:?}"
    );
    let mut extra = full.clone();
    extra.push(full_connector("c"));
    let p = mismatches(&redacted_, &extra);
    assert!(
        p[0].contains("connector c") && p[0].contains("not in connectors.json"),
        "{p:?}"
    );
    // Redacted under other rules (say an older version redacted less): still the same.
    let mut fewer = redacted_.clone();
    fewer[0].config.insert(
        "connection.url".into(),
        full[0].config["connection.url"].clone(),
    );
    fewer[0].redacted_keys.retain(|k| k != "connection.url");
    assert!(mismatches(&fewer, &full).is_empty());
    // Another state or offsets.
    let mut stopped = full.clone();
    stopped[0].state = "STOPPED".into();
    let p = mismatches(&redacted_, &stopped);
    assert!(p[0].contains("state"), "{p:?}");
    let mut moved = full.clone();
    moved[0].connect_url = "http://elsewhere:8083".into();
    assert_eq!(mismatches(&redacted_, &moved).len(), 2);
    for problem in mismatches(&redacted_, &changed) {
        assert!(!problem.contains(SECRET));
    }
}
