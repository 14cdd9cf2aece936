//! TLS for the direct connection (rustls with PEM files; the system's roots by default).

use std::sync::Arc;

use tokio_rustls::TlsConnector;

use super::config::Tls;
use crate::error::{Error, Result};

fn read_pem(path: &str, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::usage(format!("{what} {path}: {e}")))
}

/// A connector for the given settings.
pub fn connector(tls: &Tls) -> Result<TlsConnector> {
    let mut roots = rustls::RootCertStore::empty();
    match &tls.ca_file {
        Some(path) => {
            let pem = read_pem(path, "ssl.ca.location")?;
            let mut n = 0;
            for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
                let cert =
                    cert.map_err(|e| Error::usage(format!("ssl.ca.location {path}: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| Error::usage(format!("ssl.ca.location {path}: {e}")))?;
                n += 1;
            }
            if n == 0 {
                return Err(Error::usage(format!(
                    "ssl.ca.location {path}: no PEM certificate in it"
                )));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS setup: {e}")))?
        .with_root_certificates(roots);
    let config = match &tls.client_cert {
        Some((cert, key)) => {
            let pem = read_pem(cert, "ssl.certificate.location")?;
            let chain = rustls_pemfile::certs(&mut pem.as_slice())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::usage(format!("ssl.certificate.location {cert}: {e}")))?;
            let pem = read_pem(key, "ssl.key.location")?;
            let key = rustls_pemfile::private_key(&mut pem.as_slice())
                .map_err(|e| Error::usage(format!("ssl.key.location {key}: {e}")))?
                .ok_or_else(|| {
                    Error::usage(format!("ssl.key.location {key}: no PEM private key in it"))
                })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::usage(format!("client certificate: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(TlsConnector::from(Arc::new(config)))
}
