//! Garbage collection of sockets in flight, and deferred release of the
//! files messages carry.
//!
//! A socket whose open file only sits in receive queues (sent with
//! SCM_RIGHTS and never received) can keep itself alive: sent over
//! itself, or in a cycle of sockets each holding the next. Like Linux,
//! the collector runs when a socket is released while descriptors are in
//! flight:
//! 1. it counts, for every open file of an AF_UNIX socket found in a
//!    receive queue, how many queue entries hold it; a file all of whose
//!    references are such entries is a *candidate*;
//! 2. every candidate reachable from the queue of a socket that is not a
//!    candidate (one a process still holds) is alive, transitively;
//! 3. the queues of the other candidates are emptied, which releases the
//!    cycle.
//!
//! Sends and receives that move descriptors take [`GC_LOCK`] around their
//! queue operation, so the in-flight set is frozen while the collector
//! counts. Files taken out of queues are released through [`defer`] and
//! [`drain`], iteratively: a chain of sockets each holding the next cannot
//! recurse through the kernel stack.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use frame::sync::{SpinLock, SpinLockGuard, level};

use super::{Msg, UnixSocket, names};
use crate::fs::File;

/// Below a socket's lock: taken first, then socket locks one at a time.
pub(super) const GC_LEVEL: u8 = level::FILE + 1;

pub(super) static GC_LOCK: SpinLock<(), GC_LEVEL> = SpinLock::new(());

/// Files carried by messages in receive queues.
pub(super) static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

static RUNNING: AtomicBool = AtomicBool::new(false);
static AGAIN: AtomicBool = AtomicBool::new(false);

static DEFERRED: SpinLock<Vec<Arc<File>>, { names::TABLE_LEVEL }> = SpinLock::new(Vec::new());
static DRAINING: AtomicBool = AtomicBool::new(false);

pub(super) fn lock() -> SpinLockGuard<'static, (), GC_LEVEL> {
    GC_LOCK.lock()
}

/// Releases `files` later, from [`drain`] (never under a lock).
pub(super) fn defer(files: Vec<Arc<File>>) {
    if files.is_empty() {
        return;
    }
    IN_FLIGHT.fetch_sub(files.len(), Ordering::Relaxed);
    DEFERRED.lock().extend(files);
}

/// Releases deferred files until none is left; a release nested in
/// another only queues.
pub(super) fn drain() {
    loop {
        if DRAINING.swap(true, Ordering::Acquire) {
            return;
        }
        loop {
            let batch = core::mem::take(&mut *DEFERRED.lock());
            if batch.is_empty() {
                break;
            }
            drop(batch);
        }
        DRAINING.store(false, Ordering::Release);
        if DEFERRED.lock().is_empty() {
            return;
        }
    }
}

/// The AF_UNIX socket `file` holds, if any.
fn unix_of(file: &File) -> Option<&UnixSocket> {
    let sock = crate::net::socket::socket_of(file)?;
    (sock.as_ref() as &dyn core::any::Any).downcast_ref::<UnixSocket>()
}

/// Runs the collector if descriptors are in flight.
pub(super) fn maybe_collect() {
    if IN_FLIGHT.load(Ordering::Relaxed) > 0 {
        collect();
    }
}

/// Frees unreachable sockets in flight (see the module comment).
pub fn collect() {
    if RUNNING.swap(true, Ordering::Acquire) {
        AGAIN.store(true, Ordering::Relaxed);
        return;
    }
    loop {
        AGAIN.store(false, Ordering::Relaxed);
        let socks = names::all();
        let guard = lock();
        // 1. In-flight files of AF_UNIX sockets: one clone each, and how
        // many queue entries hold it.
        let mut counts: BTreeMap<usize, (Arc<File>, usize)> = BTreeMap::new();
        let mut queued_files: Vec<Vec<usize>> = Vec::with_capacity(socks.len());
        for s in &socks {
            let st = s.state.lock();
            let mut here = Vec::new();
            for m in st.queue.iter() {
                for f in &m.rights {
                    if unix_of(f).is_some() {
                        let key = Arc::as_ptr(f) as usize;
                        counts.entry(key).or_insert_with(|| (f.clone(), 0)).1 += 1;
                        here.push(key);
                    }
                }
            }
            drop(st);
            queued_files.push(here);
        }
        // Candidates: files whose every reference is a queue entry (our
        // clone is the one more).
        let candidates: BTreeSet<usize> = counts
            .iter()
            .filter(|(_, (f, n))| Arc::strong_count(f) == n + 1)
            .map(|(k, _)| *k)
            .collect();
        // The socket (index in `socks`) of each candidate file.
        let mut cand_sock: BTreeMap<usize, usize> = BTreeMap::new();
        for k in &candidates {
            if let Some(u) = counts.get(k).and_then(|(f, _)| unix_of(f))
                && let Some(i) = socks.iter().position(|s| core::ptr::eq(Arc::as_ptr(s), u))
            {
                cand_sock.insert(*k, i);
            }
        }
        let cand_index: BTreeSet<usize> = cand_sock.values().copied().collect();
        // 2. Mark what the other sockets reach.
        let mut alive: BTreeSet<usize> = BTreeSet::new();
        let mut work: Vec<usize> = Vec::new();
        for (i, files) in queued_files.iter().enumerate() {
            if cand_index.contains(&i) {
                continue;
            }
            for k in files {
                if candidates.contains(k) && alive.insert(*k) {
                    work.push(*k);
                }
            }
        }
        while let Some(k) = work.pop() {
            let Some(&i) = cand_sock.get(&k) else {
                continue;
            };
            for k2 in &queued_files[i] {
                if candidates.contains(k2) && alive.insert(*k2) {
                    work.push(*k2);
                }
            }
        }
        // A candidate whose socket was not found (released meanwhile) is
        // left alone.
        // 3. Empty the queues of the unreachable ones.
        let mut garbage: Vec<Msg> = Vec::new();
        for (k, &i) in &cand_sock {
            if alive.contains(k) {
                continue;
            }
            let mut st = socks[i].state.lock();
            garbage.extend(st.queue.drain(..));
            st.queued = 0;
            drop(st);
        }
        drop(guard);
        let found = !garbage.is_empty();
        drop(garbage);
        drop(counts);
        drop(socks);
        drain();
        if !found && !AGAIN.load(Ordering::Relaxed) {
            break;
        }
        if !found {
            continue;
        }
    }
    RUNNING.store(false, Ordering::Release);
}
