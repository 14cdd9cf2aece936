//! Taking a snapshot: capture it ([`super::capture`]), then encode its files and write them to
//! the store ([`super::repo`]), manifest last.

use super::capture::{capture, CaptureOptions, Captured};
use super::manifest::{Manifest, CONNECTORS_FILE};
use super::repo;
use super::secrets::SECRETS_FILE;
use crate::error::Result;
use crate::format;
use crate::store::Store;

/// Captures a snapshot and writes it (manifest last); warnings are logged and returned.
pub async fn take(
    store: &Store,
    kafka: &crate::kafka::KafkaClient,
    connect: &[crate::connect::ConnectClient],
    opts: &CaptureOptions,
) -> Result<(Manifest, Vec<String>)> {
    let captured = capture(kafka, connect, opts).await?;
    crate::progress::finish();
    for w in &captured.warnings {
        tracing::warn!("{w}");
    }
    let manifest = write(store, &captured).await?;
    Ok((manifest, captured.warnings))
}

/// Encodes a captured snapshot and writes it to the store, manifest last. The offsets file is
/// encoded from the spilled groups into a local temporary file (hashed as it is written) and
/// uploaded from there, so no step holds all rows.
pub async fn write(store: &Store, captured: &Captured) -> Result<Manifest> {
    let meta = &captured.manifest.meta;
    let format = captured.manifest.format;
    let local = |e: std::io::Error| {
        crate::error::Error::Internal(format!(
            "a local temporary file for the offsets file (in {}; set TMPDIR to put it elsewhere): {e}",
            std::env::temp_dir().display()
        ))
    };
    let (file, path) = tempfile::NamedTempFile::new().map_err(local)?.into_parts();
    let mut groups = captured.groups.iter()?;
    let out = format::write_offsets(
        format,
        repo::HashingWriter::new(std::io::BufWriter::new(file)),
        meta,
        &mut groups,
    )?;
    let (size, sha256) = out.finish().map_err(local)?;
    let connectors = format::json::encode_connectors(&meta.id, &captured.connectors)?;
    let mut files = vec![
        (
            format.offsets_file().to_string(),
            repo::FileBody::Local {
                path: &path,
                size,
                sha256,
            },
        ),
        (
            CONNECTORS_FILE.to_string(),
            repo::FileBody::Bytes(connectors),
        ),
    ];
    if let Some(sealed) = &captured.encrypted_secrets {
        // Encrypted in memory when captured: the plaintext never reaches a file.
        files.push((
            SECRETS_FILE.to_string(),
            repo::FileBody::Bytes(sealed.clone()),
        ));
    }
    repo::write(store, captured.manifest.clone(), files).await
}

#[cfg(test)]
#[path = "take_tests.rs"]
mod tests;
