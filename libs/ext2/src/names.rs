//! The name cache: what a lookup of `name` in directory `dir` found,
//! positive (an inode number) or negative (no such entry), so that a
//! repeated lookup does not scan the directory's blocks again.
//!
//! It lives inside [`Fs`](crate::Fs) and every call that changes a
//! directory entry goes through `Fs`, so it is exact: a changed name is
//! forgotten before the change is made (a change that fails half-way
//! leaves it uncached, and the next lookup reads the disk), and set again
//! only once the change succeeded. A directory's names are dropped
//! wholesale when it is removed and when an inode number is allocated
//! again, so a reused number never inherits names. "." and ".." are
//! never cached (a rename moves a directory's ".."). Permission checks are
//! the caller's and are never cached.
//!
//! A directory is *complete* when every live name it holds is cached:
//! then a name the cache does not hold is absent without a scan. A
//! directory this `Fs` created is complete from birth (it holds only "."
//! and ".."); it stays complete while every change of one of its entries
//! puts the new answer back, and any [`NameCache::forget`] of one of its
//! names ends it. In a complete directory a removed name is dropped rather
//! than kept as a negative entry.
//!
//! Each directory may also carry a [`Slot`]: where the last added entry
//! went, so that the next addition starts its search for room there
//! instead of at block 0 (crate::dir). Only a removal can make a slot
//! wrong (it merges an entry into its predecessor, and it makes room
//! before the slot), and every removal clears it first.
//!
//! The cache is bounded: past [`MAX_NAMES`] names (a cached directory
//! counts as one) it starts again empty.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Most names cached per file system (with the longest names, about 1 MiB).
pub const MAX_NAMES: usize = 4096;

/// Where to start looking for room in a directory: the entry at byte `off`
/// of logical block `lblk` is an entry boundary, and no entry before it
/// (in that block or an earlier one) has room for a new entry of `need`
/// bytes or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub lblk: u64,
    pub off: usize,
    pub need: usize,
}

#[derive(Default)]
struct Dir {
    /// Name -> inode (0: known absent; never kept in a complete directory).
    names: BTreeMap<Vec<u8>, u32>,
    complete: bool,
    slot: Option<Slot>,
}

#[derive(Default)]
pub(crate) struct NameCache {
    dirs: BTreeMap<u32, Dir>,
    /// Cached names plus cached directories, for the bound.
    used: usize,
}

/// Whether `name` may be cached at all.
fn cacheable(name: &[u8]) -> bool {
    name != b"." && name != b".."
}

impl NameCache {
    /// The cached answer for `dir/name`: Some(0) if it is known absent.
    pub(crate) fn get(&self, dir: u32, name: &[u8]) -> Option<u32> {
        if !cacheable(name) {
            return None;
        }
        let d = self.dirs.get(&dir)?;
        match d.names.get(name) {
            Some(&ino) => Some(ino),
            None if d.complete => Some(0),
            None => None,
        }
    }

    /// The directory's record, made (and counted) if absent.
    fn dir_mut(&mut self, dir: u32) -> &mut Dir {
        if !self.dirs.contains_key(&dir) {
            if self.used >= MAX_NAMES {
                self.dirs.clear();
                self.used = 0;
            }
            self.used += 1;
        }
        self.dirs.entry(dir).or_default()
    }

    /// Records that `dir/name` is `ino` (0: absent).
    pub(crate) fn put(&mut self, dir: u32, name: &[u8], ino: u32) {
        if !cacheable(name) {
            return;
        }
        if let Some(d) = self.dirs.get_mut(&dir) {
            if ino == 0 && d.complete {
                if d.names.remove(name).is_some() {
                    self.used = self.used.saturating_sub(1);
                }
                return;
            }
            if let Some(slot) = d.names.get_mut(name) {
                *slot = ino;
                return;
            }
        }
        if self.used >= MAX_NAMES {
            self.dirs.clear();
            self.used = 0;
        }
        self.dir_mut(dir).names.insert(name.to_vec(), ino);
        self.used += 1;
    }

    /// Forgets `dir/name`; the directory is no longer complete.
    pub(crate) fn forget(&mut self, dir: u32, name: &[u8]) {
        if let Some(d) = self.dirs.get_mut(&dir) {
            d.complete = false;
            if d.names.remove(name).is_some() {
                self.used = self.used.saturating_sub(1);
            }
        }
    }

    /// Forgets every name of directory `dir` (removed, or its number
    /// reused), and its slot.
    pub(crate) fn forget_dir(&mut self, dir: u32) {
        if let Some(d) = self.dirs.remove(&dir) {
            self.used = self.used.saturating_sub(d.names.len() + 1);
        }
    }

    /// Marks `dir` complete: the caller knows it has no live name but
    /// those cached (a directory just made: none).
    pub(crate) fn set_complete(&mut self, dir: u32) {
        self.dir_mut(dir).complete = true;
    }

    pub(crate) fn slot(&self, dir: u32) -> Option<Slot> {
        self.dirs.get(&dir)?.slot
    }

    pub(crate) fn set_slot(&mut self, dir: u32, slot: Slot) {
        self.dir_mut(dir).slot = Some(slot);
    }

    /// Before a removal in `dir`: its slot may stop being a boundary.
    pub(crate) fn clear_slot(&mut self, dir: u32) {
        if let Some(d) = self.dirs.get_mut(&dir) {
            d.slot = None;
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.dirs.values().map(|d| d.names.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_forget_and_the_bound() {
        let mut c = NameCache::default();
        c.put(2, b"a", 12);
        c.put(2, b"b", 0);
        c.put(2, b".", 2);
        c.put(2, b"..", 2);
        assert_eq!(c.get(2, b"a"), Some(12));
        assert_eq!(c.get(2, b"b"), Some(0));
        assert_eq!(c.get(2, b"."), None);
        assert_eq!(c.get(2, b".."), None);
        assert_eq!(c.get(3, b"a"), None);
        c.put(2, b"a", 13);
        assert_eq!((c.get(2, b"a"), c.len()), (Some(13), 2));
        c.forget(2, b"a");
        assert_eq!((c.get(2, b"a"), c.len()), (None, 1));
        c.forget_dir(2);
        assert_eq!((c.get(2, b"b"), c.len()), (None, 0));
        for i in 0..MAX_NAMES as u32 + 10 {
            c.put(7, &i.to_le_bytes(), i + 1);
            assert!(c.len() <= MAX_NAMES);
        }
        assert_eq!(
            c.get(7, &(MAX_NAMES as u32 + 9).to_le_bytes()),
            Some(MAX_NAMES as u32 + 10)
        );
    }

    #[test]
    fn a_complete_directory_answers_absent_and_forget_ends_it() {
        let mut c = NameCache::default();
        c.set_complete(5);
        assert_eq!(c.get(5, b"x"), Some(0));
        assert_eq!(c.get(5, b"."), None);
        assert_eq!(c.get(5, b".."), None);
        c.put(5, b"x", 20);
        assert_eq!(c.get(5, b"x"), Some(20));
        // A removal in a complete directory drops the name.
        c.put(5, b"x", 0);
        assert_eq!((c.get(5, b"x"), c.len()), (Some(0), 0));
        c.put(5, b"y", 21);
        c.forget(5, b"z");
        assert_eq!(c.get(5, b"x"), None);
        assert_eq!(c.get(5, b"y"), Some(21));
        c.set_slot(
            5,
            Slot {
                lblk: 1,
                off: 24,
                need: 12,
            },
        );
        assert_eq!(
            c.slot(5),
            Some(Slot {
                lblk: 1,
                off: 24,
                need: 12
            })
        );
        c.clear_slot(5);
        assert_eq!(c.slot(5), None);
        c.set_slot(
            5,
            Slot {
                lblk: 0,
                off: 12,
                need: 12,
            },
        );
        c.forget_dir(5);
        assert_eq!((c.slot(5), c.get(5, b"y")), (None, None));
    }
}
