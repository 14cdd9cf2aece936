//! Deleting objects, for `prune`.
//!
//! Guarantees: deleting a key that does not exist succeeds (a retried or interrupted prune can
//! run again). On a local store the deletion is durable when `delete` returns (the directory is
//! fsynced), so a caller that deletes a manifest before the files it lists never leaves, after a
//! crash, a manifest whose files are gone; directories left empty are removed up to the store's
//! root.

use object_store::path::Path;
use object_store::ObjectStoreExt;

use super::Store;
use crate::error::{Error, Result};

impl Store {
    /// Deletes one object. A key that does not exist is not an error.
    pub async fn delete(&self, key: &str) -> Result<()> {
        match self.inner.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.err(key, e)),
        }
        if let Some(root) = self.local_root.clone() {
            let owned = key.to_string();
            let url = self.url.clone();
            tokio::task::spawn_blocking(move || settle_local(&root, &owned))
                .await
                .map_err(|e| Error::Internal(format!("delete {key}: {e}")))?
                .map_err(|e| Error::store(&url, format!("after deleting a file: {e}")))?;
        }
        Ok(())
    }
}

/// Makes the removal of `root/key` durable and removes the directories it left empty.
fn settle_local(root: &std::path::Path, key: &str) -> std::io::Result<()> {
    let mut dir = root.join(key);
    while dir.pop() && dir.starts_with(root) && dir != root {
        match std::fs::remove_dir(&dir) {
            Ok(()) => continue,
            // Not empty (or already gone): this is where the deletion must be made durable.
            Err(_) => break,
        }
    }
    if dir.is_dir() {
        sync_dir(&dir)?;
    }
    Ok(())
}

#[cfg(unix)]
fn sync_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_: &std::path::Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;

    #[tokio::test]
    async fn local_delete_is_idempotent_and_tidies_empty_folders() {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("vault").to_str().unwrap().to_string();
        let store = Store::open(&url, Duration::from_secs(5)).unwrap();
        for key in ["s/d/a/one", "s/d/a/two", "s/d/b/three"] {
            store.put_new(key, Bytes::from_static(b"x")).await.unwrap();
        }
        store.delete("s/d/a/one").await.unwrap();
        assert!(!dir.path().join("vault/s/d/a/one").exists());
        assert!(dir.path().join("vault/s/d/a/two").exists());
        store.delete("s/d/a/one").await.unwrap();
        store.delete("s/d/a/two").await.unwrap();
        assert!(
            !dir.path().join("vault/s/d/a").exists(),
            "empty folder left"
        );
        assert!(dir.path().join("vault/s/d/b/three").exists());
        store.delete("s/d/b/three").await.unwrap();
        assert!(!dir.path().join("vault/s").exists(), "empty folders left");
        assert!(dir.path().join("vault").is_dir(), "the store root is kept");
        assert_eq!(store.list("").await.unwrap(), vec![]);
        // After a delete, the key can be written again (create-only writes still hold).
        store
            .put_new("s/d/a/one", Bytes::from_static(b"y"))
            .await
            .unwrap();
        assert_eq!(
            store.get("s/d/a/one").await.unwrap(),
            Bytes::from_static(b"y")
        );
    }
}
