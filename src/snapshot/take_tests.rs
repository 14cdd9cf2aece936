//! Snapshots as [`super::write`] leaves them in the store: read back, verified, and refused
//! once changed.

use std::path::{Path, PathBuf};

use chrono::SubsecRound;

use super::*;
use crate::error::exit;
use crate::snapshot::manifest::{sha256_hex, Format};
use crate::snapshot::model::{SnapshotContent, SnapshotMeta};
use crate::snapshot::repo::tests::{group, meta, store};
use crate::snapshot::repo::{folder_of, open_verified, resolve, MANIFEST_SIG};
use crate::snapshot::secrets::tests::{full_connector, identities, key, SECRET};
use crate::snapshot::secrets::{decrypt, encrypt, mismatches, redacted};

#[tokio::test]
async fn a_written_snapshot_opens_and_streams_its_groups_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    for format in [Format::Parquet, Format::Json] {
        let content = SnapshotContent {
            groups: vec![group("b", 3), group("a", 2), group("c", 0)],
            connectors: vec![],
        };
        let captured = Captured::from_content(meta(), format, content.clone(), vec![]).unwrap();
        let manifest = write(&store, &captured).await.unwrap();
        let opened = open_verified(&store, &manifest).await.unwrap();
        let ids: Vec<String> = opened.groups().map(|g| g.group_id).collect();
        assert_eq!(ids, ["a", "b", "c"], "{format:?}");
        let loaded = opened.load().unwrap();
        let mut want = content;
        want.normalize();
        assert_eq!(loaded.content, want, "{format:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// With a trusted key, a change of any byte of any file of a signed snapshot (its
    /// manifest and signature included) is refused before anything is read from it.
    #[test]
    fn any_changed_byte_of_a_signed_snapshot_is_refused(
        json in proptest::prelude::any::<bool>(),
        file in proptest::prelude::any::<proptest::sample::Index>(),
        at in proptest::prelude::any::<proptest::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let key = crate::sign::SecretKey::generate().unwrap();
            let keys = std::sync::Arc::new(crate::sign::Keys::new(Some(key.clone()), vec![key.public()]));
            let store = store(&dir).with_keys(keys);
            let format = if json { Format::Json } else { Format::Parquet };
            let content = SnapshotContent { groups: vec![group("a", 2), group("b", 1)], connectors: vec![] };
            let captured = Captured::from_content(meta(), format, content, vec![]).unwrap();
            let manifest = write(&store, &captured).await.unwrap();
            open_verified(&store, &manifest).await.unwrap();
            let folder = dir.path().join(folder_of(&manifest));
            let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(&folder)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            names.sort();
            let path = &names[file.index(names.len())];
            let mut bytes = std::fs::read(path).unwrap();
            let before = bytes.clone();
            let i = at.index(bytes.len());
            bytes[i] ^= flip;
            std::fs::write(path, &bytes).unwrap();
            let opened = match resolve(&store, &manifest.meta.id).await {
                Ok(m) => open_verified(&store, &m).await.map(|_| ()),
                Err(e) => Err(e),
            };
            // A signature file whose change leaves the same signature (JSON whitespace) still
            // signs the same manifest.
            let same_signature = path.ends_with(MANIFEST_SIG)
                && crate::sign::Signature::from_bytes(&bytes).ok()
                    == crate::sign::Signature::from_bytes(&before).ok();
            if same_signature {
                assert!(opened.is_ok(), "{opened:?}");
            } else {
                let err = opened.expect_err(&format!("a changed byte in {} was accepted", path.display()));
                assert!(
                    matches!(err.exit_code(), crate::error::exit::INTEGRITY | crate::error::exit::NOT_FOUND),
                    "{err}"
                );
            }
        });
    }
}

/// Every file under `dir`, with its path.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.push((path, bytes));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn an_encrypted_snapshot_holds_no_secret_nor_its_digest_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        dir.path().to_str().unwrap(),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let (id, r) = key();
    let full = vec![full_connector("a")];
    let content = SnapshotContent {
        groups: vec![],
        connectors: full.iter().map(redacted).collect(),
    };
    let meta = SnapshotMeta {
        created_at: chrono::Utc::now().trunc_subsecs(3),
        cluster_id: "c".into(),
        ..Default::default()
    };
    let captured = Captured::from_content(meta, Format::Json, content, vec![])
        .unwrap()
        .with_encrypted_secrets(r.clone(), full.clone())
        .unwrap();
    let manifest = write(&store, &captured).await.unwrap();
    assert_eq!(
        manifest.format_version,
        crate::snapshot::model::FORMAT_VERSION
    );
    let listed = manifest.file(SECRETS_FILE).expect("listed in the manifest");
    assert!(listed.size > 0 && listed.sha256.len() == 64);
    assert_eq!(
        manifest
            .encrypted_secrets
            .as_ref()
            .map(|s| s.recipients.clone()),
        Some(r.keys())
    );
    assert_eq!(
        manifest.expected_id(),
        manifest.meta.id,
        "the recipients are sealed"
    );

    let files = files_under(dir.path());
    assert_eq!(
        files.len(),
        4,
        "offsets, connectors, secrets, manifest: {files:?}"
    );
    let config_json = serde_json::to_vec(&full[0].config).unwrap();
    let needles: Vec<(&str, Vec<u8>)> = vec![
        ("the secret", SECRET.as_bytes().to_vec()),
        ("its SHA-256", sha256_hex(SECRET.as_bytes()).into_bytes()),
        (
            "the full config's SHA-256",
            sha256_hex(&config_json).into_bytes(),
        ),
    ];
    for (path, bytes) in &files {
        for (what, needle) in &needles {
            assert!(!contains(bytes, needle), "{what} in {}", path.display());
        }
    }

    // It verifies without the identity like any snapshot, and the identity opens the file.
    let opened = repo::open_verified(&store, &manifest).await.unwrap();
    assert_eq!(opened.connectors[0].config["db.password"], "<redacted>");
    let bytes = repo::read_listed(&store, &manifest, SECRETS_FILE)
        .await
        .unwrap();
    let ids = (manifest.meta.id.as_str(), manifest.content_sha256.as_str());
    let back = decrypt(&identities(&[&id]), ids, "f", &bytes).unwrap();
    assert_eq!(back, full);
    assert!(mismatches(&opened.connectors, &back).is_empty());

    // A changed encrypted file is caught by the manifest, without the identity.
    let (path, mut bytes) = files
        .into_iter()
        .find(|(p, _)| p.ends_with(SECRETS_FILE))
        .unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let (_, problems) = repo::check(&store, &manifest).await;
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(SECRETS_FILE) && p.contains("SHA-256")),
        "{problems:?}"
    );
    let err = repo::read_listed(&store, &manifest, SECRETS_FILE)
        .await
        .unwrap_err();
    assert_eq!(err.exit_code(), exit::INTEGRITY);
    // Another file encrypted to the same public key (age does not say who encrypted), with its
    // digest put into the manifest: the sealed digest, and so the id, catch it.
    let mut forged = full.clone();
    forged[0]
        .config
        .insert("db.password".into(), "attacker".into());
    let other = encrypt(&r, &manifest.content_sha256, &forged).unwrap();
    std::fs::write(&path, &other).unwrap();
    let mut edited = manifest.clone();
    let entry = edited
        .files
        .iter_mut()
        .find(|f| f.name == SECRETS_FILE)
        .unwrap();
    entry.size = other.len() as u64;
    entry.sha256 = sha256_hex(&other);
    let (_, problems) = repo::check(&store, &edited).await;
    assert!(
        problems
            .iter()
            .any(|p| p.contains("sealed encrypted_secrets")),
        "{problems:?}"
    );
    if let Some(s) = edited.encrypted_secrets.as_mut() {
        s.sha256 = sha256_hex(&other);
    }
    let (_, problems) = repo::check(&store, &edited).await;
    assert!(
        problems.iter().any(|p| p.contains("does not match the id")),
        "{problems:?}"
    );
}
