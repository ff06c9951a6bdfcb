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

use alloc::sync::Arc;
use alloc::vec;
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
///
/// One pass costs O(E log E) for E queue entries that hold sockets, in flat
/// vectors (no allocation per socket): a chain of sockets each in the queue
/// of the one before is scanned whole at every release, so the constant
/// matters.
pub fn collect() {
    if RUNNING.swap(true, Ordering::Acquire) {
        AGAIN.store(true, Ordering::Relaxed);
        return;
    }
    loop {
        AGAIN.store(false, Ordering::Relaxed);
        let found = collect_once();
        drain();
        if !found && !AGAIN.load(Ordering::Relaxed) {
            break;
        }
    }
    RUNNING.store(false, Ordering::Release);
}

/// No socket: an edge whose file is not a candidate.
const NONE: u32 = u32::MAX;

/// One pass of [`collect`]; whether it emptied any queue.
fn collect_once() -> bool {
    let socks = names::all();
    // Socket addresses in order: finds a queued file's socket.
    let mut by_addr: Vec<(usize, u32)> = socks
        .iter()
        .enumerate()
        .map(|(i, s)| (Arc::as_ptr(s) as usize, i as u32))
        .collect();
    by_addr.sort_unstable();
    let sock_index = |u: &UnixSocket| {
        let addr = u as *const UnixSocket as usize;
        by_addr
            .binary_search_by_key(&addr, |&(a, _)| a)
            .ok()
            .map(|k| by_addr[k].1)
    };
    let guard = lock();
    // 1. Every queue entry that holds an AF_UNIX socket's file, grouped by
    // the socket whose queue it sits in (`start[i]..start[i + 1]`), with a
    // clone of the file and the index of its socket.
    let mut edges: Vec<(Arc<File>, u32)> = Vec::new();
    let mut start: Vec<u32> = Vec::with_capacity(socks.len() + 1);
    for s in &socks {
        start.push(edges.len() as u32);
        let st = s.state.lock();
        for m in st.queue.iter() {
            for f in &m.rights {
                if let Some(u) = unix_of(f) {
                    edges.push((f.clone(), sock_index(u).unwrap_or(NONE)));
                }
            }
        }
    }
    start.push(edges.len() as u32);
    // Candidates: files whose every reference is a queue entry. Each edge
    // holds one clone, so a file on n edges is a candidate when it has 2n
    // references.
    let mut by_file: Vec<(usize, u32)> = edges
        .iter()
        .enumerate()
        .map(|(e, (f, _))| (Arc::as_ptr(f) as usize, e as u32))
        .collect();
    by_file.sort_unstable();
    let mut candidate = vec![false; socks.len()];
    for group in by_file.chunk_by(|a, b| a.0 == b.0) {
        let (f, t) = &edges[group[0].1 as usize];
        // A candidate whose socket is not in `socks` (created or released
        // meanwhile) is left alone.
        if *t != NONE && Arc::strong_count(f) == 2 * group.len() {
            candidate[*t as usize] = true;
        }
    }
    // 2. Mark what the sockets a process still holds reach.
    let mut alive = vec![false; socks.len()];
    let mut work: Vec<u32> = Vec::new();
    let reach = |from: usize, alive: &mut Vec<bool>, work: &mut Vec<u32>| {
        for (_, t) in &edges[start[from] as usize..start[from + 1] as usize] {
            if *t != NONE && candidate[*t as usize] && !alive[*t as usize] {
                alive[*t as usize] = true;
                work.push(*t);
            }
        }
    };
    for i in 0..socks.len() {
        if !candidate[i] {
            reach(i, &mut alive, &mut work);
        }
    }
    while let Some(t) = work.pop() {
        reach(t as usize, &mut alive, &mut work);
    }
    // 3. Empty the queues of the unreachable ones.
    let mut garbage: Vec<Msg> = Vec::new();
    for (i, s) in socks.iter().enumerate() {
        if candidate[i] && !alive[i] {
            let mut st = s.state.lock();
            garbage.extend(st.queue.drain(..));
            st.queued = 0;
        }
    }
    drop(guard);
    let found = !garbage.is_empty();
    drop(garbage);
    drop(edges);
    drop(socks);
    found
}
