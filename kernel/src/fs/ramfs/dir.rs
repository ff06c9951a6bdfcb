//! The entries of a ramfs directory.
//!
//! Every entry gets a cookie from a per-directory counter when it is
//! inserted; listings run in cookie order and resume from a cookie, so a
//! `getdents64` offset stays valid while entries come and go: removed
//! entries are skipped, new ones appear at the end, and no surviving entry
//! is returned twice or lost. Cookies 0 and 1 are "." and "..".
//!
//! These maps are the ramfs's dentry cache (as tmpfs's directories are
//! Linux's dcache): a lookup is one search of `by_name`, which holds the
//! inode itself; the name is allocated once and shared by both maps.
//! `by_name` is keyed by a hash of the name, so that a search compares
//! integers and only the names of one bucket (almost always one) as
//! bytes; names are never listed in its order.

use alloc::collections::{BTreeMap, btree_map};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use super::RamInode;
use crate::error::{Errno, Error, Result};

/// The first cookie of a real entry.
pub const FIRST_COOKIE: u64 = 2;

/// Where [`DirData::find`] found a name: the key of its bucket.
#[derive(Clone, Copy)]
pub struct FoundKey(u64);

/// One entry as `by_name` holds it: its name, cookie and inode.
type Entry = (Arc<str>, u64, Arc<RamInode>);

/// The entries whose names share a hash.
enum Bucket {
    One(Entry),
    Many(Vec<Entry>),
}

impl Bucket {
    fn find(&self, name: &str) -> Option<&Entry> {
        match self {
            Bucket::One(e) => same_name(&e.0, name).then_some(e),
            Bucket::Many(v) => v.iter().find(|e| same_name(&e.0, name)),
        }
    }
}

/// Whether two names are the same bytes. Names are short, and a search
/// compares the one name its hash found: comparing eight bytes at a time
/// inline costs a fraction of a `memcmp` call for them.
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        if u64::from_ne_bytes(word(x)) != u64::from_ne_bytes(word(y)) {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// An 8-byte chunk as an array (`chunks_exact(8)` yields only those).
fn word(chunk: &[u8]) -> [u8; 8] {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    w
}

/// FNV-1a over the name's bytes.
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

pub struct DirData {
    by_cookie: BTreeMap<u64, (Arc<str>, Arc<RamInode>)>,
    by_name: BTreeMap<u64, Bucket>,
    len: usize,
    next_cookie: u64,
    /// The directory holding this one; the root points at itself.
    pub parent: Weak<RamInode>,
}

impl DirData {
    pub fn new(parent: Weak<RamInode>) -> Self {
        DirData {
            by_cookie: BTreeMap::new(),
            by_name: BTreeMap::new(),
            len: 0,
            next_cookie: FIRST_COOKIE,
            parent,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<RamInode>> {
        self.find(name).map(|(_, inode)| inode)
    }

    /// `name`'s inode and the key that finds its entry again for
    /// [`DirData::remove_found`].
    pub fn find(&self, name: &str) -> Option<(FoundKey, &Arc<RamInode>)> {
        let h = name_hash(name);
        self.by_name
            .get(&h)?
            .find(name)
            .map(|(_, _, inode)| (FoundKey(h), inode))
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds or replaces `name`; returns the inode it replaced.
    pub fn insert(&mut self, name: &str, inode: Arc<RamInode>) -> Option<Arc<RamInode>> {
        let h = name_hash(name);
        let old = self.remove_hashed(h, name);
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        let name: Arc<str> = Arc::from(name);
        self.by_cookie.insert(cookie, (name.clone(), inode.clone()));
        let entry = (name, cookie, inode);
        match self.by_name.entry(h) {
            btree_map::Entry::Vacant(v) => {
                v.insert(Bucket::One(entry));
            }
            btree_map::Entry::Occupied(mut o) => {
                let b = o.get_mut();
                match b {
                    Bucket::Many(v) => v.push(entry),
                    Bucket::One(first) => {
                        let first = first.clone();
                        *b = Bucket::Many(alloc::vec![first, entry]);
                    }
                }
            }
        }
        self.len += 1;
        old
    }

    pub fn remove(&mut self, name: &str) -> Option<Arc<RamInode>> {
        self.remove_hashed(name_hash(name), name)
    }

    /// Removes `name` if `check` accepts its inode, in one search of the
    /// name map (unlink's lookup, type check and removal). ENOENT if there
    /// is no such name; `check`'s error leaves the entry in place.
    pub fn remove_checked(
        &mut self,
        name: &str,
        check: impl Fn(&RamInode) -> Result<()>,
    ) -> Result<Arc<RamInode>> {
        self.remove_checked_hashed(name_hash(name), name, check)
    }

    fn remove_checked_hashed(
        &mut self,
        h: u64,
        name: &str,
        check: impl Fn(&RamInode) -> Result<()>,
    ) -> Result<Arc<RamInode>> {
        let absent = || Error::new(Errno::ENOENT);
        let btree_map::Entry::Occupied(mut o) = self.by_name.entry(h) else {
            return Err(absent());
        };
        let (cookie, inode) = match o.get_mut() {
            Bucket::One(e) => {
                if !same_name(&e.0, name) {
                    return Err(absent());
                }
                check(&e.2)?;
                let r = (e.1, e.2.clone());
                o.remove();
                r
            }
            Bucket::Many(v) => {
                let i = v
                    .iter()
                    .position(|e| same_name(&e.0, name))
                    .ok_or_else(absent)?;
                check(&v[i].2)?;
                let (_, cookie, inode) = v.swap_remove(i);
                if v.len() == 1
                    && let Some(last) = v.pop()
                {
                    *o.get_mut() = Bucket::One(last);
                }
                (cookie, inode)
            }
        };
        self.by_cookie.remove(&cookie);
        self.len -= 1;
        Ok(inode)
    }

    /// Removes the entry [`DirData::find`] found as `key` for `name`,
    /// which must still hold `inode` (the caller kept the directory
    /// unchanged since: ramfs's tree mutex), without hashing the name
    /// again; a bucket of one entry is taken without comparing names.
    /// False (nothing removed) if the entry is not there.
    pub fn remove_found(&mut self, key: FoundKey, name: &str, inode: &Arc<RamInode>) -> bool {
        let btree_map::Entry::Occupied(mut o) = self.by_name.entry(key.0) else {
            return false;
        };
        let cookie = match o.get_mut() {
            Bucket::One(e) => {
                if !Arc::ptr_eq(&e.2, inode) {
                    return false;
                }
                let cookie = e.1;
                o.remove();
                cookie
            }
            Bucket::Many(v) => {
                let Some(i) = v
                    .iter()
                    .position(|e| Arc::ptr_eq(&e.2, inode) && same_name(&e.0, name))
                else {
                    return false;
                };
                let (_, cookie, _) = v.swap_remove(i);
                if v.len() == 1
                    && let Some(last) = v.pop()
                {
                    *o.get_mut() = Bucket::One(last);
                }
                cookie
            }
        };
        self.by_cookie.remove(&cookie);
        self.len -= 1;
        true
    }

    fn remove_hashed(&mut self, h: u64, name: &str) -> Option<Arc<RamInode>> {
        self.remove_checked_hashed(h, name, |_| Ok(())).ok()
    }

    /// Entries with cookies at or after `cookie`, in order.
    pub fn entries_from(&self, cookie: u64) -> impl Iterator<Item = (u64, &str, &Arc<RamInode>)> {
        self.by_cookie
            .range(cookie.max(FIRST_COOKIE)..)
            .map(|(c, (name, inode))| (*c, &**name, inode))
    }
}
