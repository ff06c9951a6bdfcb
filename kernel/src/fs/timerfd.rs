//! timerfd_create(2): a timer read as a file. Reading returns the number
//! of expirations since the last read (an 8-byte count) and resets it.
//!
//! The count is derived from time, not from interrupts: [`State::collect`]
//! turns the expirations up to "now" into the count whenever the file is
//! read, polled or queried. The frame timer callback only wakes readers and
//! pollers at each expiration; it touches nothing but atomics and the
//! (interrupt-safe) wait queues, and a callback from an older setting finds
//! the generation changed and does nothing.

use alloc::boxed::Box;
use alloc::sync::{Arc, Weak};
use core::sync::atomic::{AtomicU64, Ordering};

use frame::sync::{SpinLock, level};

use super::anon::anon_inode;
use super::file::{File, O_NONBLOCK, O_RDWR};
use super::inode::FileType;
use super::readiness::Readiness;
use super::stream::*;
use crate::error::{Errno, Error, Result};
use crate::time::{self, ClockId};

pub const TFD_NONBLOCK: u32 = O_NONBLOCK;
pub const TFD_CLOEXEC: u32 = 0o2000000;
pub const TFD_TIMER_ABSTIME: u32 = 1;
pub const TFD_TIMER_CANCEL_ON_SET: u32 = 2;

/// What the interrupt-side callback shares with the file.
struct Shared {
    readiness: Readiness,
    /// Bumped by every timerfd_settime and at close.
    generation: AtomicU64,
}

#[derive(Default)]
struct State {
    armed: bool,
    /// Next expiration, monotonic ns.
    next: u64,
    interval: u64,
    /// Expirations not read yet.
    ticks: u64,
}

impl State {
    /// Adds the expirations up to now to `ticks`.
    fn collect(&mut self) {
        if !self.armed {
            return;
        }
        let now = frame::timer::monotonic_ns();
        if now < self.next {
            return;
        }
        if self.interval == 0 {
            self.ticks = self.ticks.saturating_add(1);
            self.armed = false;
        } else {
            let n = (now - self.next) / self.interval + 1;
            self.ticks = self.ticks.saturating_add(n);
            self.next = self.next.saturating_add(n.saturating_mul(self.interval));
        }
    }

    /// (remaining ns, interval ns); remaining 0 when disarmed.
    fn current(&self) -> (u64, u64) {
        if !self.armed {
            return (0, self.interval);
        }
        let left = self.next.saturating_sub(frame::timer::monotonic_ns()).max(1);
        (left, self.interval)
    }
}

pub struct TimerFd {
    clock: ClockId,
    state: SpinLock<State, { level::FILE }>,
    shared: Arc<Shared>,
}

/// The clocks timerfd_create(2) accepts (the alarm clocks are the plain
/// ones without suspend); EINVAL otherwise.
pub fn timerfd_clock(raw: i32) -> Result<ClockId> {
    match raw {
        0 | 8 => Ok(ClockId::Realtime),
        1 => Ok(ClockId::Monotonic),
        7 | 9 => Ok(ClockId::Boottime),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// A new disarmed timerfd on `clock` (flags already checked; the caller
/// applies TFD_CLOEXEC).
pub fn new_timerfd(clock: ClockId, flags: u32) -> Arc<File> {
    let ops = TimerFd {
        clock,
        state: SpinLock::new(State::default()),
        shared: Arc::new(Shared { readiness: Readiness::new(), generation: AtomicU64::new(0) }),
    };
    // Linux shows "anon_inode:[timerfd]": no file type bits in st_mode.
    let node = anon_inode(FileType::Regular, 0o600, 0);
    File::new(node, Some(Arc::new(ops)), O_RDWR | (flags & O_NONBLOCK))
}

/// The timerfd behind `file`, if it is one.
pub fn as_timerfd(file: &File) -> Option<&TimerFd> {
    file.ops().and_then(|ops| (ops.as_ref() as &dyn core::any::Any).downcast_ref::<TimerFd>())
}

/// Wakes the file's waiters at `deadline`, then every `interval` after it,
/// for as long as the setting of `generation` stands.
fn schedule(shared: Weak<Shared>, generation: u64, deadline: u64, interval: u64) {
    frame::timer::call_at(
        deadline,
        Box::new(move || {
            let Some(s) = shared.upgrade() else { return };
            if s.generation.load(Ordering::Acquire) != generation {
                return;
            }
            s.readiness.notify(POLLIN);
            if interval != 0 {
                let now = frame::timer::monotonic_ns();
                let missed = now.saturating_sub(deadline) / interval;
                let next = deadline.saturating_add(interval.saturating_mul(missed + 1));
                schedule(shared, generation, next, interval);
            }
        }),
    );
}

impl TimerFd {
    /// timerfd_settime(2): `value` relative, or absolute on the timer's
    /// clock with TFD_TIMER_ABSTIME; 0 disarms. Returns the old
    /// (remaining, interval). Unread expirations are dropped.
    pub fn settime(&self, value: u64, interval: u64, flags: u32) -> (u64, u64) {
        let deadline = if flags & TFD_TIMER_ABSTIME != 0 {
            time::monotonic_deadline_ns(self.clock, value)
        } else {
            frame::timer::monotonic_ns().saturating_add(value)
        };
        let mut st = self.state.lock();
        st.collect();
        let old = st.current();
        let generation = self.shared.generation.fetch_add(1, Ordering::AcqRel) + 1;
        st.ticks = 0;
        st.armed = value != 0;
        st.interval = if value != 0 { interval } else { 0 };
        st.next = deadline;
        drop(st);
        if value != 0 {
            schedule(Arc::downgrade(&self.shared), generation, deadline, interval);
        }
        old
    }

    /// timerfd_gettime(2): (remaining, interval).
    pub fn gettime(&self) -> (u64, u64) {
        let mut st = self.state.lock();
        st.collect();
        st.current()
    }
}

impl Drop for TimerFd {
    fn drop(&mut self) {
        // Pending callbacks become no-ops.
        self.shared.generation.fetch_add(1, Ordering::AcqRel);
    }
}

impl FileOps for TimerFd {
    /// The expiration count (then zero); EINVAL for a buffer under 8
    /// bytes; EAGAIN before the first expiration.
    fn read(&self, buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        let out = buf.get_mut(..8).ok_or(Error::new(Errno::EINVAL))?;
        let ticks = {
            let mut st = self.state.lock();
            st.collect();
            core::mem::take(&mut st.ticks)
        };
        if ticks == 0 {
            return Err(Error::new(Errno::EAGAIN));
        }
        out.copy_from_slice(&ticks.to_ne_bytes());
        Ok(8)
    }

    fn write(&self, _buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        let mut st = self.state.lock();
        st.collect();
        if st.ticks > 0 { POLLIN | POLLRDNORM } else { 0 }
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.shared.readiness)
    }

    /// lseek fails (Linux gives timerfds no llseek).
    fn is_seekable(&self) -> bool {
        false
    }
}
