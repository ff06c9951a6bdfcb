//! Advisory file locks: POSIX record locks (fcntl(2) F_SETLK, F_SETLKW,
//! F_GETLK), open file description locks (F_OFD_*), and flock(2).
//!
//! Ownership: a record lock belongs to a process (POSIX locks: released
//! when the process closes *any* descriptor of the file, and at exit) or to
//! an open file description (OFD locks, and flock locks: released when the
//! description's last descriptor is closed, from `File`'s drop). Locks are
//! kept per inode, by (device, inode number), in one table; POSIX and OFD
//! locks conflict with each other, flock locks only with flock locks.
//!
//! Blocked lockers sleep on one queue, woken whenever some lock is removed
//! or weakened; a generation count makes the wake-up impossible to miss.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use frame::sync::{SpinLock, WaitQueue};

use super::file::File;
use super::inode::Inode;
use super::stream::Caller;
use crate::error::{Errno, Error, Result};

/// Lock level of the table: above the file-level locks, since a `File`
/// may be dropped (releasing its locks) while one of those is held.
const LOCK_TABLE: u8 = frame::sync::level::FILE + 1;
/// Record locks per inode before ENOLCK (a bound on kernel memory).
const MAX_RECORDS: usize = 16384;
/// Waits-for chain followed in deadlock detection (Linux's
/// MAX_DEADLK_ITERATIONS).
const MAX_CHAIN: usize = 10;

/// (device, inode number).
pub type InodeKey = (u64, u64);

pub fn key_of(node: &dyn Inode) -> InodeKey {
    node.id()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A POSIX lock of the process with this pid.
    Process(u32),
    /// An OFD lock of the open file description with this [`File::id`].
    File(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
}

/// A locked byte range, `start..=end` (`end` = u64::MAX: to end of file).
#[derive(Clone, Copy, Debug)]
pub struct RecordLock {
    pub owner: Owner,
    pub kind: Kind,
    pub start: u64,
    pub end: u64,
}

impl RecordLock {
    fn overlaps(&self, start: u64, end: u64) -> bool {
        self.start <= end && start <= self.end
    }

    fn conflicts(&self, req: &RecordLock) -> bool {
        self.owner != req.owner
            && self.overlaps(req.start, req.end)
            && (self.kind == Kind::Write || req.kind == Kind::Write)
    }
}

#[derive(Default)]
struct InodeLocks {
    records: Vec<RecordLock>,
    /// (file id, exclusive) of each flock holder.
    flocks: Vec<(usize, bool)>,
}

struct Table {
    inodes: BTreeMap<InodeKey, InodeLocks>,
    /// Processes sleeping in F_SETLKW and the process they wait for.
    waiting: Vec<(u32, u32)>,
}

static TABLE: SpinLock<Table, LOCK_TABLE> = SpinLock::new(Table {
    inodes: BTreeMap::new(),
    waiting: Vec::new(),
});
static WAITERS: WaitQueue = WaitQueue::new();
static RELEASES: AtomicU64 = AtomicU64::new(0);
/// OFD and flock locks in the table: zero lets `release_file` skip it.
static FILE_LOCKS: AtomicUsize = AtomicUsize::new(0);

/// Wakes blocked lockers after locks were removed or weakened.
fn released() {
    RELEASES.fetch_add(1, Ordering::Release);
    WAITERS.wake_all();
}

/// Sleeps until some lock is released after `seen`.
fn wait_release(caller: &dyn Caller, seen: u64) -> Result<()> {
    caller.wait(
        &WAITERS,
        &mut || RELEASES.load(Ordering::Acquire) != seen,
        u64::MAX,
    )?;
    Ok(())
}

impl Table {
    fn recount(&self) {
        let n = self
            .inodes
            .values()
            .map(|l| {
                l.flocks.len()
                    + l.records
                        .iter()
                        .filter(|r| matches!(r.owner, Owner::File(_)))
                        .count()
            })
            .sum();
        FILE_LOCKS.store(n, Ordering::Relaxed);
    }

    fn prune(&mut self, key: InodeKey) {
        if self
            .inodes
            .get(&key)
            .is_some_and(|l| l.records.is_empty() && l.flocks.is_empty())
        {
            self.inodes.remove(&key);
        }
    }

    /// Whether `pid` waiting for `blocker` would close a cycle.
    fn would_deadlock(&self, pid: u32, blocker: u32) -> bool {
        let mut at = blocker;
        for _ in 0..MAX_CHAIN {
            if at == pid {
                return true;
            }
            match self.waiting.iter().find(|(w, _)| *w == at) {
                Some((_, next)) => at = *next,
                None => return false,
            }
        }
        false
    }
}

/// F_GETLK: the first lock that would block `req`, if any.
pub fn test_lock(key: InodeKey, req: &RecordLock) -> Option<RecordLock> {
    let table = TABLE.lock();
    let locks = table.inodes.get(&key)?;
    locks.records.iter().find(|l| l.conflicts(req)).copied()
}

/// Replaces `owner`'s locks on `start..=end` with `kind` (None: unlocks),
/// merging with adjacent locks of the same kind.
fn apply(
    locks: &mut InodeLocks,
    owner: Owner,
    start: u64,
    end: u64,
    kind: Option<Kind>,
) -> Result<()> {
    let mut out = Vec::new();
    out.try_reserve(locks.records.len() + 2)
        .map_err(|_| Error::new(Errno::ENOLCK))?;
    for l in locks.records.drain(..) {
        if l.owner != owner || !l.overlaps(start, end) {
            out.push(l);
            continue;
        }
        // Keep the parts of our own lock outside the range (a split).
        if l.start < start {
            out.push(RecordLock {
                end: start - 1,
                ..l
            });
        }
        if l.end > end {
            out.push(RecordLock {
                start: end + 1,
                ..l
            });
        }
    }
    if let Some(kind) = kind {
        let (mut s, mut e) = (start, end);
        out.retain(|l| {
            let touches = l.start <= e.saturating_add(1) && s <= l.end.saturating_add(1);
            if l.owner == owner && l.kind == kind && touches {
                s = s.min(l.start);
                e = e.max(l.end);
                false
            } else {
                true
            }
        });
        out.push(RecordLock {
            owner,
            kind,
            start: s,
            end: e,
        });
    }
    if out.len() > MAX_RECORDS {
        return Err(Error::new(Errno::ENOLCK));
    }
    locks.records = out;
    Ok(())
}

/// F_SETLK / F_SETLKW: locks (`kind` Some) or unlocks `start..=end` for
/// `owner`. A conflict is EAGAIN, unless `wait` gives the caller to sleep
/// as (F_SETLKW): then EDEADLK if the sleep would deadlock, ERESTARTSYS on
/// a signal.
pub fn set_lock(
    key: InodeKey,
    owner: Owner,
    start: u64,
    end: u64,
    kind: Option<Kind>,
    wait: Option<(&dyn Caller, u32)>,
) -> Result<()> {
    loop {
        let seen = RELEASES.load(Ordering::Acquire);
        let mut table = TABLE.lock();
        let locks = table.inodes.entry(key).or_default();
        let blocker = kind.and_then(|kind| {
            let req = RecordLock {
                owner,
                kind,
                start,
                end,
            };
            locks
                .records
                .iter()
                .find(|l| l.conflicts(&req))
                .map(|l| l.owner)
        });
        let Some(blocker) = blocker else {
            let r = apply(locks, owner, start, end, kind);
            table.prune(key);
            table.recount();
            drop(table);
            released();
            return r;
        };
        table.prune(key);
        let Some((caller, pid)) = wait else {
            return Err(Error::new(Errno::EAGAIN));
        };
        let blocking_pid = match blocker {
            Owner::Process(p) => Some(p),
            Owner::File(_) => None,
        };
        if let Some(b) = blocking_pid {
            if matches!(owner, Owner::Process(_)) && table.would_deadlock(pid, b) {
                return Err(Error::new(Errno::EDEADLK));
            }
            table.waiting.push((pid, b));
        }
        drop(table);
        let r = wait_release(caller, seen);
        if blocking_pid.is_some() {
            let mut table = TABLE.lock();
            if let Some(i) = table.waiting.iter().position(|(w, _)| *w == pid) {
                table.waiting.swap_remove(i);
            }
        }
        r?;
    }
}

/// Drops the POSIX locks `pid` holds on `node` (close(2) of any of its
/// descriptors for the file).
pub fn release_posix(pid: u32, node: &dyn Inode) {
    let key = key_of(node);
    let mut table = TABLE.lock();
    let Some(locks) = table.inodes.get_mut(&key) else {
        return;
    };
    let before = locks.records.len();
    locks.records.retain(|l| l.owner != Owner::Process(pid));
    let changed = locks.records.len() != before;
    table.prune(key);
    drop(table);
    if changed {
        released();
    }
}

/// Drops every POSIX lock of `pid` (process exit).
pub fn release_process(pid: u32) {
    let mut table = TABLE.lock();
    let mut changed = false;
    for locks in table.inodes.values_mut() {
        let before = locks.records.len();
        locks.records.retain(|l| l.owner != Owner::Process(pid));
        changed |= locks.records.len() != before;
    }
    table
        .inodes
        .retain(|_, l| !l.records.is_empty() || !l.flocks.is_empty());
    drop(table);
    if changed {
        released();
    }
}

/// Drops the OFD and flock locks of `file` (its last descriptor is gone).
pub fn release_file(file: &File) {
    if FILE_LOCKS.load(Ordering::Relaxed) == 0 {
        return;
    }
    let key = key_of(&**file.node());
    let id = file.id();
    let mut table = TABLE.lock();
    let Some(locks) = table.inodes.get_mut(&key) else {
        return;
    };
    locks.records.retain(|l| l.owner != Owner::File(id));
    locks.flocks.retain(|(f, _)| *f != id);
    table.prune(key);
    table.recount();
    drop(table);
    released();
}

/// flock(2) operations.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum FlockOp {
    Shared,
    Exclusive,
    Unlock,
}

/// flock(2) for the open file description `file_id`: a conversion drops
/// the old lock first (as Linux does); EWOULDBLOCK on conflict without
/// `wait`, ERESTARTSYS if a signal interrupts the wait.
pub fn flock(key: InodeKey, file_id: usize, op: FlockOp, wait: Option<&dyn Caller>) -> Result<()> {
    let exclusive = op == FlockOp::Exclusive;
    loop {
        let seen = RELEASES.load(Ordering::Acquire);
        let mut table = TABLE.lock();
        let locks = table.inodes.entry(key).or_default();
        let mine = locks.flocks.iter().position(|(f, _)| *f == file_id);
        let same = mine.is_some_and(|i| locks.flocks[i].1 == exclusive);
        if op != FlockOp::Unlock && same {
            return Ok(());
        }
        let dropped_old = if let Some(i) = mine {
            locks.flocks.swap_remove(i);
            true
        } else {
            false
        };
        let conflict = op != FlockOp::Unlock
            && locks
                .flocks
                .iter()
                .any(|(f, ex)| *f != file_id && (*ex || exclusive));
        if !conflict && op != FlockOp::Unlock {
            locks
                .flocks
                .try_reserve(1)
                .map_err(|_| Error::new(Errno::ENOLCK))?;
            locks.flocks.push((file_id, exclusive));
        }
        table.prune(key);
        table.recount();
        drop(table);
        if dropped_old {
            released();
        }
        if !conflict {
            return Ok(());
        }
        let Some(caller) = wait else {
            return Err(Error::new(Errno::EAGAIN));
        };
        wait_release(caller, seen)?;
    }
}
