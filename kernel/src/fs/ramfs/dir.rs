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

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};

use super::RamInode;

/// The first cookie of a real entry.
pub const FIRST_COOKIE: u64 = 2;

pub struct DirData {
    by_cookie: BTreeMap<u64, (Arc<str>, Arc<RamInode>)>,
    by_name: BTreeMap<Arc<str>, (u64, Arc<RamInode>)>,
    next_cookie: u64,
    /// The directory holding this one; the root points at itself.
    pub parent: Weak<RamInode>,
}

impl DirData {
    pub fn new(parent: Weak<RamInode>) -> Self {
        DirData {
            by_cookie: BTreeMap::new(),
            by_name: BTreeMap::new(),
            next_cookie: FIRST_COOKIE,
            parent,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<RamInode>> {
        self.by_name.get(name).map(|(_, inode)| inode)
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Adds or replaces `name`; returns the inode it replaced.
    pub fn insert(&mut self, name: &str, inode: Arc<RamInode>) -> Option<Arc<RamInode>> {
        let old = self.remove(name);
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        let name: Arc<str> = Arc::from(name);
        self.by_name.insert(name.clone(), (cookie, inode.clone()));
        self.by_cookie.insert(cookie, (name, inode));
        old
    }

    pub fn remove(&mut self, name: &str) -> Option<Arc<RamInode>> {
        let (cookie, inode) = self.by_name.remove(name)?;
        self.by_cookie.remove(&cookie);
        Some(inode)
    }

    /// Entries with cookies at or after `cookie`, in order.
    pub fn entries_from(&self, cookie: u64) -> impl Iterator<Item = (u64, &str, &Arc<RamInode>)> {
        self.by_cookie
            .range(cookie.max(FIRST_COOKIE)..)
            .map(|(c, (name, inode))| (*c, &**name, inode))
    }
}
