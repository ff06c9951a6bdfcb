//! Fallible kernel allocation: the helpers every allocation whose size or
//! count a user program drives goes through, and the fault injection that
//! tests them (Linux's failslab, see Documentation/fault-injection).
//!
//! An allocation made with these helpers fails with `ENOMEM` (the caller
//! turns it into `EAGAIN` where its man page says so) when the heap has no
//! room, or when fault injection picks it. Injection is consulted only
//! here, so it never reaches an infallible allocation (a `Box`/`Arc` of a
//! small fixed-size object, a `BTreeMap` node): those are listed, with why
//! they may stay infallible, in docs/robustness.md ("Allocation failure").
//!
//! Control, as Linux's (which needs debugfs and CONFIG_FAULT_INJECTION):
//! - `/proc/<pid>/make-it-fail` (0 or 1, written by root): the process's
//!   fallible allocations are candidates (Linux's task-filter, always on
//!   here, so injection never touches another process);
//! - `/proc/sys/debug/failslab/{probability,interval,times}` (root): a
//!   candidate fails when it is the `interval`-th since the last failure
//!   and a `probability`-percent draw picks it, while `times` (counted
//!   down by each injected failure) is not 0;
//! - the boot parameter `failslab=<interval>,<probability>,<space>,<times>`
//!   sets the same three (`space` is accepted and ignored).

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Errno, Error, Result};
use crate::sysctl::Sysctl;

/// failslab/probability: percent of candidates that fail (Linux's default 0:
/// nothing fails until it is set).
pub static PROBABILITY: Sysctl = Sysctl::new(0, 0, 100);
/// failslab/interval: only every `interval`-th candidate may fail.
pub static INTERVAL: Sysctl = Sysctl::new(1, 1, u64::MAX);
/// failslab/times: how many failures may still be injected.
pub static TIMES: Sysctl = Sysctl::new(1, 0, u64::MAX);

/// Candidates seen since the last injected failure (for `interval`).
static SEEN: AtomicU64 = AtomicU64::new(0);
/// State of the probability draw (xorshift64).
static RNG: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);

/// Whether the allocation about to be made by the current process should
/// fail on purpose.
pub fn should_fail() -> bool {
    let probability = PROBABILITY.get();
    if probability == 0 || TIMES.get() == 0 {
        return false;
    }
    let Some(process) = crate::process::current_thread().and_then(|t| t.process()) else {
        return false;
    };
    if !process.make_it_fail() {
        return false;
    }
    let seen = SEEN.fetch_add(1, Ordering::Relaxed) + 1;
    if seen < INTERVAL.get() {
        return false;
    }
    if probability < 100 {
        let mut x = RNG.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        RNG.store(x, Ordering::Relaxed);
        if x % 100 >= probability {
            return false;
        }
    }
    // Count down `times`; another CPU may have taken the last one.
    if !TIMES.take_one() {
        return false;
    }
    SEEN.store(0, Ordering::Relaxed);
    true
}

/// Restarts the `interval` count (when a process turns injection on, so
/// that `interval` = N with `times` = 1 fails exactly its N-th candidate,
/// as Linux's fail-nth does).
pub fn restart_count() {
    SEEN.store(0, Ordering::Relaxed);
}

/// `failslab=<interval>,<probability>,<space>,<times>` from the command
/// line; a malformed or out-of-range field leaves its knob alone.
pub fn boot_param(value: &str) {
    let mut fields = value.split(',');
    let knobs = [Some(&INTERVAL), Some(&PROBABILITY), None, Some(&TIMES)];
    for knob in knobs {
        let Some(field) = fields.next() else { break };
        if let Some(k) = knob {
            let _ = k.write_text(field.as_bytes());
        }
    }
}

fn nomem() -> Error {
    Error::with_message(Errno::ENOMEM, "kernel allocation failed")
}

/// A container whose growth can fail.
pub trait Reserve {
    /// Makes room for `additional` more elements, or fails without change.
    fn try_grow(
        &mut self,
        additional: usize,
    ) -> core::result::Result<(), alloc::collections::TryReserveError>;
    /// Whether `additional` more elements fit without allocating.
    fn has_room(&self, additional: usize) -> bool;
}

impl<T> Reserve for Vec<T> {
    fn try_grow(
        &mut self,
        additional: usize,
    ) -> core::result::Result<(), alloc::collections::TryReserveError> {
        self.try_reserve(additional)
    }
    fn has_room(&self, additional: usize) -> bool {
        self.capacity() - self.len() >= additional
    }
}

impl<T> Reserve for VecDeque<T> {
    fn try_grow(
        &mut self,
        additional: usize,
    ) -> core::result::Result<(), alloc::collections::TryReserveError> {
        self.try_reserve(additional)
    }
    fn has_room(&self, additional: usize) -> bool {
        self.capacity() - self.len() >= additional
    }
}

impl Reserve for String {
    fn try_grow(
        &mut self,
        additional: usize,
    ) -> core::result::Result<(), alloc::collections::TryReserveError> {
        self.try_reserve(additional)
    }
    fn has_room(&self, additional: usize) -> bool {
        self.capacity() - self.len() >= additional
    }
}

/// Makes room for `additional` more elements in `c`: `ENOMEM` if the heap
/// cannot, or if injection picks a growth that would allocate.
pub fn reserve<C: Reserve>(c: &mut C, additional: usize) -> Result<()> {
    if c.has_room(additional) {
        return Ok(());
    }
    if should_fail() {
        return Err(nomem());
    }
    c.try_grow(additional).map_err(|_| nomem())
}

/// Pushes `value` onto `v`, or `ENOMEM` with `v` unchanged.
pub fn push<T>(v: &mut Vec<T>, value: T) -> Result<()> {
    reserve(v, 1)?;
    v.push(value);
    Ok(())
}

/// Pushes `value` at the back of `q`, or `ENOMEM` with `q` unchanged.
pub fn push_back<T>(q: &mut VecDeque<T>, value: T) -> Result<()> {
    reserve(q, 1)?;
    q.push_back(value);
    Ok(())
}

/// A buffer of `len` zero bytes, or `ENOMEM`.
pub fn zeroed(len: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    if len > 0 {
        if should_fail() {
            return Err(nomem());
        }
        buf.try_reserve_exact(len).map_err(|_| nomem())?;
    }
    buf.resize(len, 0);
    Ok(buf)
}

/// An empty vector with room for `n` elements, or `ENOMEM`.
pub fn with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    if n > 0 {
        if should_fail() {
            return Err(nomem());
        }
        v.try_reserve_exact(n).map_err(|_| nomem())?;
    }
    Ok(v)
}

/// A copy of `src`, or `ENOMEM`.
pub fn copy<T: Clone>(src: &[T]) -> Result<Vec<T>> {
    let mut v = with_capacity(src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

/// Appends `src` to `v`, or `ENOMEM` with `v` unchanged.
pub fn extend<T: Clone>(v: &mut Vec<T>, src: &[T]) -> Result<()> {
    reserve(v, src.len())?;
    v.extend_from_slice(src);
    Ok(())
}

/// `ENOMEM` if injection picks this allocation. For an object that is
/// created infallibly (a small `Box`/`Arc`) on a path whose caller can
/// take `ENOMEM`: the path's error handling is tested, although the real
/// allocation cannot fail softly (it is in the infallible list).
pub fn check() -> Result<()> {
    if should_fail() { Err(nomem()) } else { Ok(()) }
}

/// Clean page-cache pages evicted at once when a frame cannot be had.
const RECLAIM_BATCH: usize = 32;

/// A zero-filled untyped frame. When memory is short, clean page-cache
/// pages are evicted and the allocation tried once more before `ENOMEM`
/// (the caller's OOM path then reclaims harder, or kills). Reclaim never
/// sleeps, so this may be called with spin locks held below the cache's.
pub fn frame() -> Result<frame::mm::UFrame> {
    frame::mm::UFrame::alloc_zeroed().or_else(|_| {
        crate::mm::page_cache::reclaim(RECLAIM_BATCH);
        frame::mm::UFrame::alloc_zeroed().map_err(|_| nomem())
    })
}

/// A copy of `src` (copy-on-write), reclaiming cache pages first if needed.
pub fn frame_copy(src: &frame::mm::UFrame) -> Result<frame::mm::UFrame> {
    frame::mm::UFrame::alloc_copy_of(src).or_else(|_| {
        crate::mm::page_cache::reclaim(RECLAIM_BATCH);
        frame::mm::UFrame::alloc_copy_of(src).map_err(|_| nomem())
    })
}
