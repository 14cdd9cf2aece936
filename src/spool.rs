//! A spool: items written one after another to a file of the local temporary directory, one
//! JSON line each, and read back as often as needed. A restore keeps its plan and its
//! read-back here, and `diff --live` the cluster's rows, so what they hold in memory is one
//! batch of groups, not the whole cluster.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

/// Items of type `T`, in the order written. Cloning shares the file.
#[derive(Debug)]
pub struct Spool<T> {
    file: Arc<tempfile::NamedTempFile>,
    writer: Option<BufWriter<File>>,
    len: usize,
    _items: PhantomData<fn() -> T>,
}

impl<T> Clone for Spool<T> {
    /// A reader of the same items; only the original writes.
    fn clone(&self) -> Self {
        Spool {
            file: self.file.clone(),
            writer: None,
            len: self.len,
            _items: PhantomData,
        }
    }
}

fn io_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Internal(format!(
        "a work file in the temporary directory (TMPDIR) could not be {what}: {e}"
    ))
}

impl<T: Serialize + DeserializeOwned> Spool<T> {
    /// An empty spool in the temporary directory (removed when the last clone is dropped).
    pub fn new() -> Result<Self> {
        let file = tempfile::NamedTempFile::new().map_err(|e| io_error("created", e))?;
        let writer = BufWriter::new(file.reopen().map_err(|e| io_error("opened", e))?);
        Ok(Spool {
            file: Arc::new(file),
            writer: Some(writer),
            len: 0,
            _items: PhantomData,
        })
    }

    /// Appends one item.
    pub fn push(&mut self, item: &T) -> Result<()> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::Internal("a spool is written only by its original".into()))?;
        serde_json::to_writer(&mut *w, item).map_err(|e| io_error("written", e))?;
        w.write_all(b"\n").map_err(|e| io_error("written", e))?;
        self.len += 1;
        Ok(())
    }

    /// How many items were written.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads the items from the first, one at a time. What was pushed before is flushed.
    pub fn iter(&mut self) -> Result<SpoolIter<T>> {
        if let Some(w) = self.writer.as_mut() {
            w.flush().map_err(|e| io_error("written", e))?;
        }
        self.reader()
    }

    /// Reads the items of a spool that is no longer written (or of a clone).
    pub fn reader(&self) -> Result<SpoolIter<T>> {
        let file = self.file.reopen().map_err(|e| io_error("read", e))?;
        Ok(SpoolIter {
            lines: BufReader::new(file),
            left: self.len,
            line: String::new(),
            _items: PhantomData,
        })
    }

    /// Stops writing: flushes, so that clones read everything.
    pub fn seal(&mut self) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.flush().map_err(|e| io_error("written", e))?;
        }
        Ok(())
    }
}

/// See [`Spool::iter`].
pub struct SpoolIter<T> {
    lines: BufReader<File>,
    left: usize,
    line: String,
    _items: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Iterator for SpoolIter<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.line.clear();
        Some(match self.lines.read_line(&mut self.line) {
            Ok(0) => Err(io_error("read", "it ended early")),
            Ok(_) => serde_json::from_str(&self.line).map_err(|e| io_error("read", e)),
            Err(e) => Err(io_error("read", e)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_back_in_order_and_can_be_read_again() {
        let mut s: Spool<(String, i64)> = Spool::new().unwrap();
        for i in 0..1000 {
            s.push(&(format!("g-{i}\n\"quoted\""), i)).unwrap();
        }
        let first: Vec<(String, i64)> = s.iter().unwrap().map(Result::unwrap).collect();
        assert_eq!(first.len(), 1000);
        assert_eq!(first[7], ("g-7\n\"quoted\"".to_string(), 7));
        s.push(&("last".into(), -1)).unwrap();
        s.seal().unwrap();
        let reader = s.clone();
        let again: Vec<(String, i64)> = reader.reader().unwrap().map(Result::unwrap).collect();
        assert_eq!(again.len(), 1001);
        assert_eq!(again[1000], ("last".to_string(), -1));
        assert_eq!(&again[..1000], &first[..]);
    }

    #[test]
    fn a_clone_cannot_write() {
        let s: Spool<i32> = Spool::new().unwrap();
        let mut c = s.clone();
        assert!(c.push(&1).is_err());
    }
}
