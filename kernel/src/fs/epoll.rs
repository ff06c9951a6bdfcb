//! epoll(7) instances: an interest list of (descriptor, file) pairs that
//! epoll_wait re-polls each time it looks.
//!
//! Ownership: an entry holds its file weakly. Linux removes an entry when
//! the file description is released (not when one descriptor closes), and
//! so do we: an entry whose file is gone is dropped when next seen.
//! Level-triggered entries report whenever the file is ready;
//! edge-triggered ones only when the file's [`Readiness`] generation moved
//! since the last report; EPOLLONESHOT entries are disarmed after one
//! report until EPOLL_CTL_MOD.
//!
//! Locking: the interest list's lock is never held while polling a file
//! (which may be another epoll instance).

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::any::Any;

use frame::sync::{Mutex, SpinLock, level};

use super::anon::anon_inode;
use super::file::{File, O_RDWR};
use super::inode::FileType;
use super::readiness::{self, Readiness};
use super::stream::*;
use crate::error::{Errno, Error, Result};

pub const EPOLLERR: u32 = 0x8;
pub const EPOLLHUP: u32 = 0x10;
pub const EPOLLEXCLUSIVE: u32 = 1 << 28;
pub const EPOLLWAKEUP: u32 = 1 << 29;
pub const EPOLLONESHOT: u32 = 1 << 30;
pub const EPOLLET: u32 = 1 << 31;
/// Event bits a file can report (poll's, plus EPOLLRDHUP and friends).
const EVENT_BITS: u32 = 0xffff;
/// Most nested epoll instances (Linux's EP_MAX_NESTS).
const MAX_NESTS: usize = 4;
/// Entries per instance before ENOSPC (a bound on kernel memory, in the
/// role of /proc/sys/fs/epoll/max_user_watches).
const MAX_ENTRIES: usize = 65536;

/// Held while an epoll instance is added to another (Linux's
/// epnested_mutex). A sleeping lock, below the file-level locks, since
/// the cycle check may drop the last reference to a file.
static NESTING: Mutex<(), { level::VFS }> = Mutex::new(());

/// (descriptor, file id): an entry's identity, as in Linux.
type Key = (i32, usize);

#[derive(Clone)]
struct Entry {
    file: Weak<File>,
    events: u32,
    data: u64,
    /// Edge-triggered: the generation last reported.
    seen: Option<u64>,
    /// False once an EPOLLONESHOT entry has reported.
    armed: bool,
}

struct Interest {
    entries: BTreeMap<Key, Entry>,
    /// The key last reported, so that a small `maxevents` takes turns.
    cursor: Option<Key>,
}

pub struct Epoll {
    interest: SpinLock<Interest, { level::FILE }>,
    readiness: Readiness,
}

/// The operation of epoll_ctl(2).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CtlOp {
    Add,
    Del,
    Mod,
}

/// A new epoll instance's file.
pub fn new_epoll() -> Arc<File> {
    let ops = Epoll {
        interest: SpinLock::new(Interest {
            entries: BTreeMap::new(),
            cursor: None,
        }),
        readiness: Readiness::new(),
    };
    // Linux shows "anon_inode:[eventpoll]": no file type bits in st_mode.
    let node = anon_inode(FileType::Regular, 0o600, 0);
    File::new(node, Some(Arc::new(ops)), O_RDWR)
}

/// The epoll instance behind `file`, if it is one.
pub fn as_epoll(file: &File) -> Option<&Epoll> {
    file.ops()
        .and_then(|ops| (ops.as_ref() as &dyn Any).downcast_ref::<Epoll>())
}

impl Epoll {
    /// epoll_ctl(2) for descriptor `fd` open on `file`; `events`/`data`
    /// unused by Del. EEXIST, ENOENT, EINVAL (EPOLLEXCLUSIVE with Mod),
    /// ELOOP (a cycle or too deep a nest of instances), ENOSPC.
    pub fn ctl(&self, op: CtlOp, fd: i32, file: &Arc<File>, events: u32, data: u64) -> Result<()> {
        let key = (fd, file.id());
        // Adding an instance: the cycle check and the insertion happen
        // under one lock, so that two adds cannot close a cycle together.
        let _nesting = match as_epoll(file) {
            Some(inner) if op == CtlOp::Add => {
                let guard = NESTING.lock();
                if core::ptr::eq(inner, self) || inner.reaches(self, 1)? {
                    return Err(Error::new(Errno::ELOOP));
                }
                Some(guard)
            }
            _ => None,
        };
        let mut interest = self.interest.lock();
        match op {
            CtlOp::Add => {
                if interest.entries.contains_key(&key) {
                    return Err(Error::new(Errno::EEXIST));
                }
                if interest.entries.len() >= MAX_ENTRIES {
                    return Err(Error::new(Errno::ENOSPC));
                }
                let entry = Entry {
                    file: Arc::downgrade(file),
                    events: events | EPOLLERR | EPOLLHUP,
                    data,
                    seen: None,
                    armed: true,
                };
                // A BTreeMap node is allocated infallibly (bounded by
                // MAX_ENTRIES; docs/robustness.md); epoll_ctl(2) reports a
                // failed allocation as ENOMEM, which injection tests.
                crate::fallible::check()?;
                interest.entries.insert(key, entry);
            }
            CtlOp::Mod => {
                let entry = interest
                    .entries
                    .get_mut(&key)
                    .ok_or(Error::new(Errno::ENOENT))?;
                if events & EPOLLEXCLUSIVE != 0 || entry.events & EPOLLEXCLUSIVE != 0 {
                    return Err(Error::new(Errno::EINVAL));
                }
                entry.events = events | EPOLLERR | EPOLLHUP;
                entry.data = data;
                entry.seen = None;
                entry.armed = true;
            }
            CtlOp::Del => {
                interest
                    .entries
                    .remove(&key)
                    .ok_or(Error::new(Errno::ENOENT))?;
            }
        }
        drop(interest);
        // A waiter may now have something to report.
        readiness::wake_pollers();
        Ok(())
    }

    /// Whether `goal` is this instance or is watched, directly or through
    /// nested instances, from it. ELOOP past [`MAX_NESTS`] levels.
    fn reaches(&self, goal: &Epoll, depth: usize) -> Result<bool> {
        if depth > MAX_NESTS {
            return Err(Error::new(Errno::ELOOP));
        }
        let files: Vec<Weak<File>> = {
            let interest = self.interest.lock();
            interest.entries.values().map(|e| e.file.clone()).collect()
        };
        for file in files.iter().filter_map(Weak::upgrade) {
            if let Some(inner) = as_epoll(&file)
                && (core::ptr::eq(inner, goal) || inner.reaches(goal, depth + 1)?)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Up to `max` ready events as (events, data), updating edge-triggered
    /// and one-shot state unless `peek`. Also tells whether some watched
    /// file cannot wake a sleeper (so the wait must recheck periodically).
    fn collect(&self, max: usize, peek: bool, caller: &dyn Caller) -> (Vec<(u32, u64)>, bool) {
        let snapshot: Vec<(Key, Entry)> = {
            let interest = self.interest.lock();
            let after = interest.cursor;
            let (tail, head): (Vec<_>, Vec<_>) = interest
                .entries
                .iter()
                .filter(|(_, e)| e.armed)
                .map(|(k, e)| (*k, e.clone()))
                .partition(|(k, _)| after.is_some_and(|a| *k > a));
            tail.into_iter().chain(head).collect()
        };
        let mut out = Vec::new();
        let mut updates = Vec::new();
        let mut dead = Vec::new();
        let mut needs_recheck = false;
        for (key, entry) in snapshot {
            if out.len() >= max {
                break;
            }
            let Some(file) = entry.file.upgrade() else {
                dead.push(key);
                continue;
            };
            let notifier = file.ops().and_then(|o| o.readiness());
            needs_recheck |= notifier.is_none();
            let revents = u32::from(file.poll(caller)) & entry.events & EVENT_BITS;
            if revents == 0 {
                continue;
            }
            let mut seen = entry.seen;
            if entry.events & EPOLLET != 0 {
                let generation = notifier.map_or(0, |r| r.generation(revents as u16));
                if seen == Some(generation) {
                    continue;
                }
                seen = Some(generation);
            }
            let armed = entry.events & EPOLLONESHOT == 0;
            out.push((revents, entry.data));
            updates.push((key, seen, armed));
        }
        if !peek && (!updates.is_empty() || !dead.is_empty()) {
            let mut interest = self.interest.lock();
            for (key, seen, armed) in &updates {
                if let Some(e) = interest.entries.get_mut(key) {
                    e.seen = *seen;
                    e.armed &= *armed;
                }
            }
            for key in &dead {
                interest.entries.remove(key);
            }
            if let Some((key, _, _)) = updates.last() {
                interest.cursor = Some(*key);
            }
        }
        (out, needs_recheck)
    }

    /// epoll_wait(2): up to `max` events, waiting until `deadline` (a
    /// monotonic time; None: forever). EINTR if a signal comes first.
    pub fn wait(
        &self,
        max: usize,
        deadline: Option<u64>,
        caller: &dyn Caller,
    ) -> Result<Vec<(u32, u64)>> {
        loop {
            let seen = readiness::epoch();
            let (events, needs_recheck) = self.collect(max, false, caller);
            let now = frame::timer::monotonic_ns();
            if !events.is_empty() || deadline.is_some_and(|d| now >= d) {
                return Ok(events);
            }
            let mut until = deadline.unwrap_or(u64::MAX);
            if needs_recheck {
                until = until.min(now.saturating_add(RECHECK_NS));
            }
            if readiness::wait_for_change(caller, seen, until).is_err() {
                return Err(Error::new(Errno::EINTR));
            }
        }
    }
}

impl FileOps for Epoll {
    fn read(&self, _buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn write(&self, _buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    /// Readable while some entry has an event to report.
    fn poll(&self, caller: &dyn Caller) -> u16 {
        let (events, _) = self.collect(1, true, caller);
        if events.is_empty() {
            0
        } else {
            POLLIN | POLLRDNORM
        }
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.readiness)
    }

    /// lseek succeeds and does nothing (Linux's noop_llseek).
    fn is_seekable(&self) -> bool {
        true
    }
}
