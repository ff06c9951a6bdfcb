//! Readiness notification for blocking I/O, poll(2)/select(2) and epoll(7).
//!
//! A stream that can wake its waiters (pipe, eventfd, terminal) owns a
//! [`Readiness`]: its wait queue, where its own blocked readers and writers
//! sleep, and event counters that edge-triggered epoll compares. Every
//! notification also wakes the one global poll queue, where poll, select and
//! epoll_wait sleep whatever files they watch: a waiter notes [`epoch`]
//! before checking its files and sleeps only while it is unchanged, so no
//! notification between the check and the sleep is lost. Waking every poller
//! on every change is simple and cheap with few pollers; per-file watcher
//! lists can replace it when epoll has to scale (issue 5).

use core::sync::atomic::{AtomicU64, Ordering};

use frame::sync::WaitQueue;

use super::stream::{Caller, POLLERR, POLLHUP, POLLIN, POLLOUT, POLLPRI, POLLRDNORM, POLLWRNORM};
use crate::error::Result;

/// Events counted as "input" and "output" for edge-triggered epoll.
const INPUT_EVENTS: u16 = POLLIN | POLLRDNORM | POLLPRI | POLLHUP;
const OUTPUT_EVENTS: u16 = POLLOUT | POLLWRNORM | POLLERR;

static POLLERS: WaitQueue = WaitQueue::new();
static EPOCH: AtomicU64 = AtomicU64::new(0);

pub struct Readiness {
    queue: WaitQueue,
    input: AtomicU64,
    output: AtomicU64,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::new()
    }
}

impl Readiness {
    pub const fn new() -> Self {
        Readiness {
            queue: WaitQueue::new(),
            input: AtomicU64::new(0),
            output: AtomicU64::new(0),
        }
    }

    /// Where the owner's blocked readers and writers sleep.
    pub fn queue(&self) -> &WaitQueue {
        &self.queue
    }

    /// Records that `events` happened (new data, space, hang-up...): wakes
    /// the owner's waiters and every poller. Call it without holding the
    /// owner's lock.
    pub fn notify(&self, events: u16) {
        if events & INPUT_EVENTS != 0 {
            self.input.fetch_add(1, Ordering::Relaxed);
        }
        if events & OUTPUT_EVENTS != 0 {
            self.output.fetch_add(1, Ordering::Relaxed);
        }
        self.queue.wake_all();
        wake_pollers();
    }

    /// A number that changes whenever one of `events` is notified again
    /// (what edge-triggered epoll compares between reports).
    pub fn generation(&self, events: u16) -> u64 {
        let mut g = 0u64;
        if events & INPUT_EVENTS != 0 {
            g = g.wrapping_add(self.input.load(Ordering::Relaxed));
        }
        if events & OUTPUT_EVENTS != 0 {
            g = g.wrapping_add(self.output.load(Ordering::Relaxed) << 32);
        }
        g
    }
}

/// Wakes every poll, select and epoll_wait sleeper to recheck its files.
pub fn wake_pollers() {
    EPOCH.fetch_add(1, Ordering::Release);
    POLLERS.wake_all();
}

/// The current notification count; read it before checking files.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Sleeps until a notification after `seen` (true), or until `deadline_ns`
/// (false); ERESTARTSYS if a signal comes first.
pub fn wait_for_change(caller: &dyn Caller, seen: u64, deadline_ns: u64) -> Result<bool> {
    caller.wait(&POLLERS, &mut || epoch() != seen, deadline_ns)
}
