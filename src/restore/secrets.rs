//! Connector secrets kept encrypted in a snapshot (`connectors.secrets.age`): with an identity,
//! a restore that may create connectors again uses the full configs instead of the redacted ones.

use super::request::RestoreRequest;
use crate::error::{Error, Result};
use crate::snapshot::manifest::Manifest;
use crate::snapshot::model::ConnectorSnapshot;
use crate::snapshot::repo;
use crate::snapshot::secrets;
use crate::store::Store;

/// With `--identity` and `--recreate-connectors`, decrypts the snapshot's encrypted connector
/// configs, checks them against its redacted `connectors.json`, and puts the secrets into the
/// selected connectors (their `redacted_keys` then empty). Reads only the store, before the
/// cluster is contacted: a wrong identity or a changed file fails here, with nothing changed.
pub(super) async fn unseal(
    store: &Store,
    manifest: &Manifest,
    all: &[ConnectorSnapshot],
    selected: &mut [ConnectorSnapshot],
    req: &RestoreRequest,
) -> Result<()> {
    let Some(identities) = &req.identities else {
        return Ok(());
    };
    let Some(sealed) = &manifest.encrypted_secrets else {
        tracing::warn!(
            "--identity {}: snapshot {} holds no encrypted connector secrets (it was not taken with --encrypt-to); the identity is not used",
            identities.path().display(),
            manifest.meta.id
        );
        return Ok(());
    };
    if req.plan.recreate.is_none() || selected.is_empty() {
        // Only a connector created again needs its secrets.
        return Ok(());
    }
    if sealed.file != secrets::SECRETS_FILE {
        return Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems: vec![format!(
                "encrypted_secrets names the file {:?}, not {}; nothing was changed",
                sealed.file,
                secrets::SECRETS_FILE
            )],
        });
    }
    let bytes = repo::read_listed(store, manifest, &sealed.file).await?;
    let path = format!("snapshot {} file {}", manifest.meta.id, sealed.file);
    if crate::snapshot::manifest::sha256_hex(&bytes) != sealed.sha256 {
        return Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems: vec![format!(
                "{path}: its SHA-256 differs from the sealed one; nothing was changed"
            )],
        });
    }
    let ids = (manifest.meta.id.as_str(), manifest.content_sha256.as_str());
    let full = secrets::decrypt(identities, ids, &path, &bytes)?;
    let problems = secrets::mismatches(all, &full);
    if !problems.is_empty() {
        return Err(Error::Integrity {
            id: manifest.meta.id.clone(),
            problems: problems
                .into_iter()
                .map(|p| format!("{}: {p}; nothing was changed", sealed.file))
                .collect(),
        });
    }
    for c in selected.iter_mut() {
        if let Some(f) = full
            .iter()
            .find(|f| f.name == c.name && f.connect_url == c.connect_url)
        {
            c.config = f.config.clone();
            c.redacted_keys.clear();
        }
    }
    Ok(())
}
