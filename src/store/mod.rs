//! The store: an `object_store` backend picked by URL, with create-only writes.
//!
//! A store URL is a local path or `file://` URL, or `s3://bucket/prefix` (`s3a://` too); any
//! other scheme is a usage error that lists these. Credentials and endpoints come from the
//! usual environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL`, ...). Local files are fsynced and made readable by their owner only.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{
    ClientConfigKey, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig,
};

use crate::error::{Error, Result};
use crate::sign::{Keys, Purpose, Verdict, SIG_SUFFIX};

mod delete;

/// The store URLs this build accepts, for error messages.
pub const ACCEPTED_STORES: &str =
    "accepted: a directory path, file:///path, or s3://bucket/prefix (s3a:// too; endpoint and credentials from AWS_*)";

/// Files larger than this are uploaded in parts of this size (S3's smallest part).
pub const PART_SIZE: usize = 5 << 20;

/// An object read to the local disk: the store's own file, or a temporary copy removed on drop.
#[derive(Debug)]
pub enum LocalFile {
    Store(PathBuf),
    Temp(tempfile::TempPath),
}

impl LocalFile {
    pub fn path(&self) -> &std::path::Path {
        match self {
            LocalFile::Store(p) => p,
            LocalFile::Temp(p) => p,
        }
    }
}

/// What [`Store::fetch_local`] read.
#[derive(Debug)]
pub struct Fetched {
    pub file: LocalFile,
    pub size: u64,
    pub sha256: String,
}

/// An object in the store, relative to the store's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub key: String,
    pub size: u64,
}

/// An opened store.
#[derive(Debug, Clone)]
pub struct Store {
    url: String,
    inner: Arc<dyn ObjectStore>,
    /// For local stores: the root directory, to set file modes.
    local_root: Option<PathBuf>,
    /// The key objects are signed with, and the keys trusted when reading.
    keys: Arc<Keys>,
}

fn local_root(url: &str) -> Option<PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        return Some(PathBuf::from(rest));
    }
    (!url.contains("://")).then(|| PathBuf::from(url))
}

impl Store {
    /// Opens the store at `url` to read and write. A local directory is created if missing.
    pub fn open(url: &str, timeout: Duration) -> Result<Self> {
        Self::open_with(url, timeout, true)
    }

    /// Opens an existing store to read: a local directory that does not exist is an error, so
    /// a mistyped path is not taken for an empty store.
    pub fn open_existing(url: &str, timeout: Duration) -> Result<Self> {
        Self::open_with(url, timeout, false)
    }

    fn open_with(url: &str, timeout: Duration, create: bool) -> Result<Self> {
        if url.trim().is_empty() {
            return Err(Error::usage(
                "no store: pass --store URL (a directory, file:///path or s3://bucket/prefix) or set OFFSET_VAULT_STORE",
            ));
        }
        if let Some(root) = local_root(url) {
            if !create && !root.is_dir() {
                return Err(Error::NotFound {
                    what: "store directory",
                    name: root.display().to_string(),
                    hint: "; check --store (snapshot creates it)".into(),
                });
            }
            std::fs::create_dir_all(&root).map_err(|e| {
                Error::store(
                    url,
                    format!("cannot create directory {}: {e}", root.display()),
                )
            })?;
            let root = root
                .canonicalize()
                .map_err(|e| Error::store(url, format!("{}: {e}", root.display())))?;
            let fs = LocalFileSystem::new_with_prefix(&root)
                .map_err(|e| Error::store(url, e))?
                .with_fsync(true);
            return Ok(Store {
                url: url.to_string(),
                inner: Arc::new(fs),
                local_root: Some(root),
                keys: Arc::default(),
            });
        }
        let parsed = url::Url::parse(url)
            .map_err(|e| Error::usage(format!("--store {url}: {e}; {ACCEPTED_STORES}")))?;
        let retry = RetryConfig {
            max_retries: 3,
            retry_timeout: timeout,
            ..Default::default()
        };
        let timeout_text = format!("{}ms", timeout.as_millis());
        let prefix = Path::from(parsed.path().trim_matches('/'));
        if !matches!(parsed.scheme(), "s3" | "s3a") {
            return Err(Error::usage(format!(
                "--store {url}: unsupported scheme `{}`; {ACCEPTED_STORES}",
                parsed.scheme()
            )));
        }
        let inner: Arc<dyn ObjectStore> = {
            // Timeouts as config keys: `with_client_options` would drop what from_env read.
            let mut builder = AmazonS3Builder::from_env()
                .with_bucket_name(parsed.host_str().unwrap_or_default())
                .with_retry(retry)
                .with_config(
                    AmazonS3ConfigKey::Client(ClientConfigKey::Timeout),
                    &timeout_text,
                )
                .with_config(
                    AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                    &timeout_text,
                );
            let endpoint = std::env::var("AWS_ENDPOINT_URL_S3")
                .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
                .ok();
            if endpoint
                .as_deref()
                .is_some_and(|e| e.starts_with("http://"))
            {
                builder = builder.with_allow_http(true);
            }
            if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err()
            {
                builder = builder.with_region("us-east-1");
            }
            let s3 = builder.build().map_err(|e| Error::store(url, e))?;
            Arc::new(PrefixStore::new(s3, prefix))
        };
        Ok(Store {
            url: url.to_string(),
            inner,
            local_root: None,
            keys: Arc::default(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A store over a backend built elsewhere (tests reach a server with their own client).
    #[doc(hidden)]
    pub fn with_backend(url: &str, inner: Arc<dyn ObjectStore>) -> Self {
        Store {
            url: url.to_string(),
            inner,
            local_root: None,
            keys: Arc::default(),
        }
    }

    /// The same store, signing with and trusting `keys`.
    pub fn with_keys(mut self, keys: Arc<Keys>) -> Self {
        self.keys = keys;
        self
    }

    /// The keys this store signs with and trusts.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Writes an object that must not exist yet, preceded by its detached signature
    /// (`KEY.sig`) when a signing key is set: an object is never visible before its signature.
    pub async fn put_new_signed(&self, key: &str, bytes: Bytes, purpose: Purpose) -> Result<()> {
        if let Some(signer) = self.keys.signer() {
            let sig = signer.sign(purpose, &bytes);
            self.put_new(&format!("{key}{SIG_SUFFIX}"), Bytes::from(sig.to_bytes()))
                .await?;
        }
        self.put_new(key, bytes).await
    }

    /// The verdict on the signature of an object whose bytes were read as `bytes`.
    pub async fn judge(&self, key: &str, bytes: &[u8], purpose: Purpose) -> Result<Verdict> {
        let sig_key = format!("{key}{SIG_SUFFIX}");
        let sig = match self.get(&sig_key).await {
            Ok(b) => Some(b),
            Err(Error::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        Ok(self.keys.judge(purpose, bytes, sig.as_deref()))
    }

    fn err(&self, key: &str, e: object_store::Error) -> Error {
        match e {
            object_store::Error::NotFound { .. } => Error::NotFound {
                what: "object",
                name: format!("{key} in {}", self.url),
                hint: String::new(),
            },
            e @ (object_store::Error::Unauthenticated { .. }
            | object_store::Error::PermissionDenied { .. }) => Error::AccessDenied {
                service: "the store",
                resource: format!("{key} in {}", self.url),
                detail: e.to_string(),
                advice: "Check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and the bucket policy",
            },
            other => Error::Store {
                url: self.url.clone(),
                detail: format!("{key}: {other}"),
                source: Some(other),
            },
        }
    }

    /// Fails when the object exists.
    async fn refuse_existing(&self, key: &str, path: &Path) -> Result<()> {
        match self.inner.head(path).await {
            Ok(_) => Err(Error::store(
                &self.url,
                format!("{key} already exists; refusing to overwrite it"),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(key, e)),
        }
    }

    /// Whether an object exists.
    pub async fn exists(&self, key: &str) -> Result<bool> {
        match self.inner.head(&Path::from(key)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.err(key, e)),
        }
    }

    /// Writes an object, replacing what is there: only for small mutable pointers (the commit
    /// log's partition heads), never for archived content.
    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<()> {
        self.inner
            .put(&Path::from(key), PutPayload::from_bytes(bytes))
            .await
            .map_err(|e| self.err(key, e))?;
        if let Some(root) = &self.local_root {
            set_owner_only(&root.join(key)).map_err(|e| Error::store(&self.url, e))?;
        }
        Ok(())
    }

    /// Writes an object that must not exist yet. Never overwrites.
    pub async fn put_new(&self, key: &str, bytes: Bytes) -> Result<()> {
        let path = Path::from(key);
        // Some S3-compatible servers ignore conditional puts; check first as well.
        self.refuse_existing(key, &path).await?;
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .inner
            .put_opts(&path, PutPayload::from_bytes(bytes), opts)
            .await
        {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => {
                return Err(Error::store(
                    &self.url,
                    format!("{key} already exists; refusing to overwrite it"),
                ))
            }
            Err(e) => return Err(self.err(key, e)),
        }
        if let Some(root) = &self.local_root {
            set_owner_only(&root.join(key)).map_err(|e| Error::store(&self.url, e))?;
        }
        Ok(())
    }

    /// Writes an object that must not exist yet from a local file. Small files go in one
    /// create-only put; larger ones in a multipart upload of [`PART_SIZE`] parts after the same
    /// existence check (S3 has no create-only multipart upload), so memory stays at a few parts
    /// whatever the size.
    pub async fn put_new_file(&self, key: &str, file: &std::path::Path) -> Result<()> {
        let local = |e: std::io::Error| {
            Error::Internal(format!("read the local file {}: {e}", file.display()))
        };
        let size = std::fs::metadata(file).map_err(local)?.len();
        if size <= PART_SIZE as u64 {
            let bytes = std::fs::read(file).map_err(local)?;
            return self.put_new(key, Bytes::from(bytes)).await;
        }
        let path = Path::from(key);
        self.refuse_existing(key, &path).await?;
        tracing::debug!(target: "offset_vault::store::calls", "PUT-MULTIPART {key} ({size} bytes)");
        let upload = self
            .inner
            .put_multipart(&path)
            .await
            .map_err(|e| self.err(key, e))?;
        let mut writer = object_store::WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
        let mut reader = std::fs::File::open(file).map_err(local)?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = std::io::Read::read(&mut reader, &mut buf).map_err(local)?;
            if n == 0 {
                break;
            }
            // One part in flight while the next fills: memory stays at two parts.
            writer
                .wait_for_capacity(1)
                .await
                .map_err(|e| self.err(key, e))?;
            writer.write(&buf[..n]);
        }
        writer.finish().await.map_err(|e| self.err(key, e))?;
        if let Some(root) = &self.local_root {
            set_owner_only(&root.join(key)).map_err(|e| Error::store(&self.url, e))?;
        }
        Ok(())
    }

    /// Reads an object into a local file (the store's own file for a local store, else a
    /// temporary one), returning it with its size and SHA-256, computed as it streams.
    pub async fn fetch_local(&self, key: &str) -> Result<Fetched> {
        use sha2::Digest;
        use std::io::Write;
        tracing::debug!(target: "offset_vault::store::calls", "GET {key}");
        let path = Path::from(key);
        let got = self.inner.get(&path).await.map_err(|e| self.err(key, e))?;
        let local = |e: std::io::Error| Error::Internal(format!("a local copy of {key}: {e}"));
        let mut hasher = sha2::Sha256::new();
        let mut size = 0u64;
        match got.payload {
            object_store::GetResultPayload::File(mut file, path) => {
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = std::io::Read::read(&mut file, &mut buf).map_err(local)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                    size += n as u64;
                }
                Ok(Fetched {
                    file: LocalFile::Store(path),
                    size,
                    sha256: hex::encode(hasher.finalize()),
                })
            }
            object_store::GetResultPayload::Stream(mut stream) => {
                let mut tmp = tempfile::NamedTempFile::new().map_err(local)?;
                {
                    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
                    while let Some(chunk) = stream.try_next().await.map_err(|e| self.err(key, e))? {
                        hasher.update(&chunk);
                        size += chunk.len() as u64;
                        out.write_all(&chunk).map_err(local)?;
                    }
                    out.flush().map_err(local)?;
                }
                Ok(Fetched {
                    file: LocalFile::Temp(tmp.into_temp_path()),
                    size,
                    sha256: hex::encode(hasher.finalize()),
                })
            }
        }
    }

    pub async fn get(&self, key: &str) -> Result<Bytes> {
        tracing::debug!(target: "offset_vault::store::calls", "GET {key}");
        let path = Path::from(key);
        let got = self.inner.get(&path).await.map_err(|e| self.err(key, e))?;
        got.bytes().await.map_err(|e| self.err(key, e))
    }

    /// Every object under `prefix` (recursively).
    pub async fn list(&self, prefix: &str) -> Result<Vec<Object>> {
        tracing::debug!(target: "offset_vault::store::calls", "LIST {prefix}");
        let path = Path::from(prefix);
        self.inner
            .list(Some(&path))
            .map_ok(|m| Object {
                key: m.location.to_string(),
                size: m.size,
            })
            .try_collect()
            .await
            .map_err(|e| self.err(prefix, e))
    }

    /// Every object under `prefix` (recursively), with the time it was last written.
    pub async fn list_modified(
        &self,
        prefix: &str,
    ) -> Result<Vec<(Object, chrono::DateTime<chrono::Utc>)>> {
        tracing::debug!(target: "offset_vault::store::calls", "LIST {prefix}");
        let path = Path::from(prefix);
        self.inner
            .list(Some(&path))
            .map_ok(|m| {
                (
                    Object {
                        key: m.location.to_string(),
                        size: m.size,
                    },
                    m.last_modified,
                )
            })
            .try_collect()
            .await
            .map_err(|e| self.err(prefix, e))
    }

    /// The names of the folders directly under `prefix`.
    pub async fn folders(&self, prefix: &str) -> Result<Vec<String>> {
        tracing::debug!(target: "offset_vault::store::calls", "LIST-FOLDERS {prefix}");
        let path = Path::from(prefix);
        let listed = self
            .inner
            .list_with_delimiter(Some(&path))
            .await
            .map_err(|e| self.err(prefix, e))?;
        Ok(listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect())
    }
}

#[cfg(unix)]
fn set_owner_only(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn set_owner_only(_: &std::path::Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_writes_are_create_only_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("vault").to_str().unwrap().to_string();
        assert!(Store::open_existing(&url, Duration::from_secs(5)).is_err());
        let store = Store::open(&url, Duration::from_secs(5)).unwrap();
        store
            .put_new("a/b.json", Bytes::from_static(b"one"))
            .await
            .unwrap();
        let err = store
            .put_new("a/b.json", Bytes::from_static(b"two"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("refusing to overwrite"), "{err}");
        assert_eq!(
            store.get("a/b.json").await.unwrap(),
            Bytes::from_static(b"one")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(dir.path().join("vault/a/b.json")).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(store.folders("").await.unwrap(), vec!["a".to_string()]);
        let listed = store.list("a").await.unwrap();
        assert_eq!(
            listed,
            vec![Object {
                key: "a/b.json".into(),
                size: 3
            }]
        );
        assert!(Store::open_existing(&url, Duration::from_secs(5)).is_ok());
    }

    #[tokio::test]
    async fn files_larger_than_a_part_go_up_in_parts_and_come_back_hashed() {
        use sha2::Digest;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            dir.path().join("vault").to_str().unwrap(),
            Duration::from_secs(5),
        )
        .unwrap();
        for size in [10, PART_SIZE * 2 + 12_345] {
            let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let local = dir.path().join(format!("body-{size}"));
            std::fs::write(&local, &body).unwrap();
            let key = format!("s/{size}.bin");
            store.put_new_file(&key, &local).await.unwrap();
            let err = store.put_new_file(&key, &local).await.unwrap_err();
            assert!(err.to_string().contains("refusing to overwrite"), "{err}");
            let got = store.fetch_local(&key).await.unwrap();
            assert_eq!(got.size, size as u64);
            assert_eq!(got.sha256, hex::encode(sha2::Sha256::digest(&body)));
            assert_eq!(std::fs::read(got.file.path()).unwrap(), body);
        }
    }
}
