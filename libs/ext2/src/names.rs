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
//! The cache is bounded: past [`MAX_NAMES`] names it starts again empty.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

/// Most names cached per file system (with the longest names, about 1 MiB).
pub const MAX_NAMES: usize = 4096;

#[derive(Default)]
pub(crate) struct NameCache {
    /// Directory inode -> name -> inode (0: known absent).
    dirs: BTreeMap<u32, BTreeMap<Vec<u8>, u32>>,
    names: usize,
}

/// Whether `name` may be cached at all.
fn cacheable(name: &[u8]) -> bool {
    name != b"." && name != b".."
}

impl NameCache {
    /// The cached answer for `dir/name`: Some(0) if it is known absent.
    pub(crate) fn get(&self, dir: u32, name: &[u8]) -> Option<u32> {
        self.dirs.get(&dir)?.get(name).copied()
    }

    /// Records that `dir/name` is `ino` (0: absent).
    pub(crate) fn put(&mut self, dir: u32, name: &[u8], ino: u32) {
        if !cacheable(name) {
            return;
        }
        if let Some(slot) = self.dirs.get_mut(&dir).and_then(|d| d.get_mut(name)) {
            *slot = ino;
            return;
        }
        if self.names >= MAX_NAMES {
            self.dirs.clear();
            self.names = 0;
        }
        self.dirs.entry(dir).or_default().insert(name.to_vec(), ino);
        self.names += 1;
    }

    /// Forgets `dir/name`.
    pub(crate) fn forget(&mut self, dir: u32, name: &[u8]) {
        if let Some(d) = self.dirs.get_mut(&dir)
            && d.remove(name).is_some()
        {
            self.names = self.names.saturating_sub(1);
            if d.is_empty() {
                self.dirs.remove(&dir);
            }
        }
    }

    /// Forgets every name of directory `dir` (removed, or its number
    /// reused).
    pub(crate) fn forget_dir(&mut self, dir: u32) {
        if let Some(d) = self.dirs.remove(&dir) {
            self.names = self.names.saturating_sub(d.len());
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.names
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
}
