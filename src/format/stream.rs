//! What both offsets formats share below them: a streaming reader's groups collected.

use crate::error::Result;
use crate::model::{GroupSnapshot, SnapshotMeta};

/// Every group a streaming reader hands out, with the metadata it returns.
pub(super) fn collect(
    read: impl FnOnce(&mut dyn FnMut(GroupSnapshot) -> Result<()>) -> Result<SnapshotMeta>,
) -> Result<(SnapshotMeta, Vec<GroupSnapshot>)> {
    let mut groups = Vec::new();
    let meta = read(&mut |g| {
        groups.push(g);
        Ok(())
    })?;
    Ok((meta, groups))
}
