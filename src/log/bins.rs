//! Items sorted into bins (one per source partition of `__consumer_offsets`), each kept in the
//! order it was filled, in memory or in a spool of the temporary directory; and read back in the
//! order of the whole. The reconstruction of `--at` reads one source partition at a time: it
//! sorts the base's groups by partition, replays each partition's groups from that partition's
//! records, and hands the groups out again in the base's order. With the bins on disk
//! (`restore --at`, whose groups can be every group of a large cluster) what it holds is one
//! item per bin being read, not every group.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::spool::{Spool, SpoolIter};

/// Items by bin, each bin in the order pushed.
pub(super) struct Bins<T> {
    /// Bins on disk (spools) rather than in memory.
    spill: bool,
    bins: BTreeMap<i32, Bin<T>>,
}

enum Bin<T> {
    Memory(Vec<T>),
    Disk(Spool<T>),
}

/// One bin's items, in the order pushed.
pub(super) enum Drain<T> {
    Memory(std::vec::IntoIter<T>),
    /// The spool is kept with its reader: its file goes when both are dropped.
    Disk {
        _spool: Spool<T>,
        items: SpoolIter<T>,
    },
}

impl<T: DeserializeOwned> Iterator for Drain<T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        match self {
            Drain::Memory(it) => it.next().map(Ok),
            Drain::Disk { items, .. } => items.next(),
        }
    }
}

impl<T: Serialize + DeserializeOwned> Bins<T> {
    /// No bins yet; `spill`: keep them on disk.
    pub(super) fn new(spill: bool) -> Self {
        Bins {
            spill,
            bins: BTreeMap::new(),
        }
    }

    /// Appends `item` to bin `bin`.
    pub(super) fn push(&mut self, bin: i32, item: T) -> Result<()> {
        let slot = match self.bins.entry(bin) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(if self.spill {
                Bin::Disk(Spool::new()?)
            } else {
                Bin::Memory(Vec::new())
            }),
        };
        match slot {
            Bin::Memory(v) => {
                v.push(item);
                Ok(())
            }
            Bin::Disk(s) => s.push(&item),
        }
    }

    /// Takes bin `bin` out, its items in the order pushed (none for a bin never filled).
    pub(super) fn drain(&mut self, bin: i32) -> Result<Drain<T>> {
        match self.bins.remove(&bin) {
            None => Ok(Drain::Memory(Vec::new().into_iter())),
            Some(b) => drain_of(b),
        }
    }

    /// Every item in the order of the whole: `order` names the bin of each item in turn (each
    /// bin's items come out in the order they were pushed). An `order` that asks a bin for more
    /// than it holds is an error; items `order` does not ask for are left out.
    pub(super) fn merge<I: Iterator<Item = i32>>(self, order: I) -> Result<Merge<T, I>> {
        let mut drains = BTreeMap::new();
        for (bin, b) in self.bins {
            drains.insert(bin, drain_of(b)?);
        }
        Ok(Merge { drains, order })
    }
}

fn drain_of<T: Serialize + DeserializeOwned>(b: Bin<T>) -> Result<Drain<T>> {
    Ok(match b {
        Bin::Memory(v) => Drain::Memory(v.into_iter()),
        Bin::Disk(mut s) => {
            s.seal()?;
            let items = s.reader()?;
            Drain::Disk { _spool: s, items }
        }
    })
}

/// See [`Bins::merge`].
pub(super) struct Merge<T, I> {
    drains: BTreeMap<i32, Drain<T>>,
    order: I,
}

impl<T: DeserializeOwned, I: Iterator<Item = i32>> Iterator for Merge<T, I> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        let bin = self.order.next()?;
        let item = self.drains.get_mut(&bin).and_then(Iterator::next);
        Some(item.unwrap_or_else(|| {
            Err(Error::Internal(format!(
                "bin {bin} of the reconstruction ended before its groups did"
            )))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items 0..n sorted into bins by `bin_of`, then merged back by the same order.
    fn round_trip(spill: bool, n: usize, bin_of: impl Fn(usize) -> i32) -> Vec<usize> {
        let mut bins = Bins::new(spill);
        let order: Vec<i32> = (0..n).map(&bin_of).collect();
        for (i, bin) in order.iter().enumerate() {
            bins.push(*bin, i).unwrap();
        }
        bins.merge(order.into_iter())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn merged_bins_give_the_items_back_in_the_order_of_the_whole() {
        type BinOf = Box<dyn Fn(usize) -> i32>;
        // (case, items, bin of item i)
        let cases: Vec<(&str, usize, BinOf)> = vec![
            ("nothing", 0, Box::new(|_| 0)),
            ("one bin", 5, Box::new(|_| 3)),
            ("one item per bin", 7, Box::new(|i| i as i32)),
            (
                "interleaved, 50 bins",
                1000,
                Box::new(|i| ((i * 7919) % 50) as i32),
            ),
            (
                "runs of one bin then another",
                30,
                Box::new(|i| (i / 10) as i32),
            ),
            ("bins filled out of order", 20, Box::new(|i| 19 - i as i32)),
        ];
        for (case, n, bin_of) in cases {
            for spill in [false, true] {
                let got = round_trip(spill, n, &bin_of);
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "{case}, spill {spill}");
            }
        }
    }

    #[test]
    fn a_drained_bin_holds_its_items_in_the_order_pushed_and_an_unknown_bin_none() {
        for spill in [false, true] {
            let mut bins = Bins::new(spill);
            for (bin, item) in [(2, "a"), (1, "b"), (2, "c"), (2, "d")] {
                bins.push(bin, item.to_string()).unwrap();
            }
            let two: Vec<String> = bins.drain(2).unwrap().map(Result::unwrap).collect();
            assert_eq!(two, ["a", "c", "d"], "spill {spill}");
            assert_eq!(bins.drain(2).unwrap().count(), 0, "spill {spill}: taken");
            assert_eq!(
                bins.drain(7).unwrap().count(),
                0,
                "spill {spill}: never filled"
            );
            let one: Vec<String> = bins.drain(1).unwrap().map(Result::unwrap).collect();
            assert_eq!(one, ["b"], "spill {spill}");
        }
    }

    #[test]
    fn an_order_that_asks_a_bin_for_more_than_it_holds_is_an_error() {
        for spill in [false, true] {
            let mut bins = Bins::new(spill);
            bins.push(0, 1u8).unwrap();
            let got: Vec<Result<u8>> = bins.merge([0, 0, 5].into_iter()).unwrap().collect();
            assert_eq!(got.len(), 3);
            assert_eq!(*got[0].as_ref().unwrap(), 1);
            assert!(got[1].is_err() && got[2].is_err(), "spill {spill}");
        }
    }
}
