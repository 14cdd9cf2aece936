use super::*;
use proptest::prelude::*;

fn key() -> SecretKey {
    SecretKey::generate().unwrap()
}

#[test]
fn pem_round_trips_and_ids_match() {
    let k = key();
    let back = SecretKey::from_pem("k", &k.to_pem().unwrap()).unwrap();
    assert_eq!(back.id(), k.id());
    assert_eq!(k.id().len(), 16);
    let public = PublicKey::from_pem("p", &k.public().to_pem().unwrap()).unwrap();
    assert_eq!(public.id(), k.id());
    // The public half of a secret key file is accepted where a public key is expected.
    let from_secret = PublicKey::from_pem("s", &k.to_pem().unwrap()).unwrap();
    assert_eq!(from_secret, public);
    assert!(k
        .to_pem()
        .unwrap()
        .starts_with("-----BEGIN PRIVATE KEY-----"));
    assert!(public
        .to_pem()
        .unwrap()
        .starts_with("-----BEGIN PUBLIC KEY-----"));
}

#[test]
fn a_key_that_is_not_pem_is_a_usage_error_that_says_how_to_make_one() {
    let err = SecretKey::from_pem("--signing-key x", "hello").unwrap_err();
    assert_eq!(err.exit_code(), crate::error::exit::USAGE);
    assert!(err.to_string().contains("keygen"), "{err}");
    let err = PublicKey::from_pem(
        "--trusted-key y",
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
    )
    .unwrap_err();
    assert!(err.to_string().contains("--trusted-key y"), "{err}");
}

#[test]
fn verdicts() {
    let author = key();
    let other = key();
    let bytes = b"{\"manifest\": 1}\n";
    let sig = author.sign(Purpose::SnapshotManifest, bytes).to_bytes();
    let trusting = Keys::new(None, vec![author.public()]);
    let trusting_other = Keys::new(None, vec![other.public()]);
    let nobody = Keys::default();
    let id = author.id().to_string();
    let p = Purpose::SnapshotManifest;

    assert_eq!(
        trusting.judge(p, bytes, Some(&sig)),
        Verdict::Trusted { key_id: id.clone() }
    );
    assert_eq!(trusting.judge(p, bytes, None), Verdict::Unsigned);
    assert_eq!(
        trusting_other.judge(p, bytes, Some(&sig)),
        Verdict::Untrusted { key_id: id.clone() }
    );
    assert_eq!(
        nobody.judge(p, bytes, Some(&sig)),
        Verdict::Unverified { key_id: id.clone() }
    );
    assert!(!nobody.enforcing());
    // Changed bytes under a trusted key: invalid, naming the key.
    let v = trusting.judge(p, b"{\"manifest\": 2}\n", Some(&sig));
    assert!(
        matches!(&v, Verdict::Invalid { key_id: Some(k), .. } if *k == id),
        "{v:?}"
    );
    // A signature for another purpose is not accepted for this one.
    let audit_sig = author.sign(Purpose::AuditEvent, bytes).to_bytes();
    assert!(matches!(
        trusting.judge(p, bytes, Some(&audit_sig)),
        Verdict::Invalid { .. }
    ));
    // Garbage in the signature file.
    assert!(matches!(
        trusting.judge(p, bytes, Some(b"nope")),
        Verdict::Invalid { key_id: None, .. }
    ));
    // Only a trusted verdict is accepted when enforcing.
    assert!(Verdict::Trusted { key_id: id.clone() }.refusal().is_none());
    for v in [
        Verdict::Unsigned,
        Verdict::Untrusted { key_id: id.clone() },
        Verdict::Unverified { key_id: id.clone() },
    ] {
        assert!(v.refusal().is_some(), "{v:?}");
    }
    assert!(Verdict::Untrusted { key_id: id.clone() }
        .refusal()
        .unwrap()
        .contains(&id));
}

#[test]
fn keygen_writes_an_owner_only_secret_key_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ops");
    let k = keygen(&prefix).unwrap();
    let secret = dir.path().join("ops.key");
    let public = dir.path().join("ops.pub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let read = SecretKey::from_pem("k", &std::fs::read_to_string(&secret).unwrap()).unwrap();
    assert_eq!(read.id(), k.id());
    let pubk = PublicKey::from_pem("p", &std::fs::read_to_string(&public).unwrap()).unwrap();
    assert_eq!(pubk.id(), k.id());
    let err = keygen(&prefix).unwrap_err();
    assert!(err.to_string().contains("never overwrites"), "{err}");
    assert_eq!(
        SecretKey::from_pem("k", &std::fs::read_to_string(&secret).unwrap())
            .unwrap()
            .id(),
        k.id(),
        "the first key is untouched"
    );
}

#[test]
fn key_text_takes_pem_or_a_path() {
    let k = key();
    let pem = k.to_pem().unwrap();
    let (source, text) = key_text("--signing-key", &pem).unwrap();
    assert_eq!(source, "--signing-key");
    assert_eq!(text, pem);
    let err = key_text("--signing-key", "/nonexistent/key").unwrap_err();
    assert!(err.to_string().contains("/nonexistent/key"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// A change of any byte of a signed object, or of its signature file, is never accepted.
    #[test]
    fn any_changed_byte_is_detected(
        body in proptest::collection::vec(any::<u8>(), 1..512),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
        in_sig in any::<bool>(),
    ) {
        let author = fixed_key();
        let keys = Keys::new(None, vec![author.public()]);
        let mut bytes = body.clone();
        let mut sig = author.sign(Purpose::SnapshotManifest, &bytes).to_bytes();
        prop_assert_eq!(
            keys.judge(Purpose::SnapshotManifest, &bytes, Some(&sig)),
            Verdict::Trusted { key_id: author.id().to_string() }
        );
        if in_sig {
            let i = at.index(sig.len());
            sig[i] ^= flip;
        } else {
            let i = at.index(bytes.len());
            bytes[i] ^= flip;
        }
        let v = keys.judge(Purpose::SnapshotManifest, &bytes, Some(&sig));
        // A change in the JSON's insignificant whitespace still parses to the same signature:
        // that is not a change of what is signed, so it may stay trusted.
        let same_sig = Signature::from_bytes(&sig).ok()
            == Some(author.sign(Purpose::SnapshotManifest, &body));
        if in_sig && same_sig {
            prop_assert!(v.refusal().is_none());
        } else {
            prop_assert!(v.refusal().is_some(), "accepted after a change: {:?}", v);
        }
    }
}

fn fixed_key() -> SecretKey {
    SecretKey::from_signing(SigningKey::from_bytes(&[7u8; 32]))
}
