//! Locks and wait queues.
//!
//! Every lock declares a *level* (a const generic). A CPU may only acquire a
//! lock whose level is strictly above every ranked lock it already holds, so
//! lock-order cycles — deadlocks — cannot form. Today the check runs when the
//! lock is taken (panicking with both levels named); the compile-time token
//! version (ARCHITECTURE §5) will keep the same level numbers. Level 0 means
//! "unranked" and is not checked; it is for leaf locks only.
//!
//! Sleeping while holding a spin lock is refused at run time (`might_sleep`).

#[cfg(any(target_os = "none", test))]
mod mutex;
mod once;
mod spin;
#[cfg(any(target_os = "none", test))]
mod wait;

#[cfg(any(target_os = "none", test))]
pub use self::mutex::{Mutex, MutexGuard};
pub use self::once::Once;
pub use self::spin::{SpinLock, SpinLockGuard};
#[cfg(any(target_os = "none", test))]
pub use self::wait::WaitQueue;

/// Lock levels, outermost first. A lock may be taken only while every held
/// ranked lock has a lower level.
pub mod level {
    pub const UNRANKED: u8 = 0;
    pub const PROCESS_TABLE: u8 = 8;
    pub const PROCESS: u8 = 12;
    pub const FILE_TABLE: u8 = 16;
    pub const FS_CONTEXT: u8 = 18;
    pub const VFS: u8 = 20;
    pub const INODE: u8 = 24;
    /// System V IPC object tables (shm, sem, msg): never held across user
    /// copies or while attaching to an address space.
    pub const IPC: u8 = 26;
    pub const FILE: u8 = 28;
    /// A socket's own state (queues, connection state): never held across
    /// user copies or while taking another socket's lock.
    pub const SOCKET: u8 = 30;
    pub const VMAR: u8 = 32;
    /// The IP stack (interfaces and the protocol state machines).
    pub const NET_STACK: u8 = 34;
    pub const VM_SPACE: u8 = 40;
    /// A driver domain's call lock (`domain::Domain::call`): held across
    /// the call, so everything the domain takes ranks above it.
    pub const DOMAIN: u8 = 42;
    pub const CONSOLE: u8 = 44;
    pub const WAIT_QUEUE: u8 = 50;
    pub const TIMER: u8 = 52;
    pub const SCHEDULER: u8 = 54;
    pub const HEAP: u8 = 58;
    pub const FRAME_ALLOC: u8 = 60;
    pub const LOG: u8 = 63;
}

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Ranked levels held by this CPU (bit n = level n), and how many spin locks
/// are held (atomic mode). Single CPU for now; per-CPU with SMP.
///
/// Both are plain loads and stores on the machine, with no locked
/// instruction: only this CPU writes them, and an interrupt handler that
/// takes locks releases them before it returns, so a load-modify-store that
/// an interrupt splits stores what the interrupted code expected. The host
/// model runs host threads as CPUs against the same words, so there the
/// spin depth is counted with atomic read-modify-writes.
static HELD_LEVELS: AtomicU64 = AtomicU64::new(0);
static SPIN_DEPTH: AtomicU32 = AtomicU32::new(0);

/// Records that a lock of `level` is being taken (`spin`: a spin lock,
/// which puts the CPU in atomic mode) and returns the held levels to
/// restore at its release. Inlined into every lock operation: `level` and
/// `spin` are constants there, so a ranked spin lock costs a load, a
/// shift-and-test, a store and a counter increment.
#[inline(always)]
pub(crate) fn note_acquire(level: u8, spin: bool) -> u64 {
    let mut prev = 0;
    if level != 0 {
        prev = HELD_LEVELS.load(Ordering::Relaxed);
        if prev >> level != 0 {
            lock_order_violation(level, prev);
        }
        HELD_LEVELS.store(prev | (1u64 << level), Ordering::Relaxed);
    }
    if spin {
        spin_depth_add(1);
    }
    prev
}

#[inline(always)]
pub(crate) fn note_release(level: u8, spin: bool, prev: u64) {
    if level != 0 {
        HELD_LEVELS.store(prev, Ordering::Relaxed);
    }
    if spin {
        spin_depth_add(u32::MAX);
    }
}

/// Adds `delta` (mod 2^32: `u32::MAX` subtracts one) to the spin depth.
#[inline(always)]
fn spin_depth_add(delta: u32) {
    #[cfg(target_os = "none")]
    SPIN_DEPTH.store(
        SPIN_DEPTH.load(Ordering::Relaxed).wrapping_add(delta),
        Ordering::Relaxed,
    );
    #[cfg(not(target_os = "none"))]
    SPIN_DEPTH.fetch_add(delta, Ordering::Relaxed);
}

#[cold]
#[inline(never)]
fn lock_order_violation(level: u8, held: u64) -> ! {
    panic!("lock order violation: taking level {level} while holding levels {held:#b}");
}

/// Panics if the caller must not sleep: it holds a spin lock, or it runs in
/// interrupt context (an interrupt handler or a timer callback). Inlined
/// (two loads and two tests): every `Mutex::lock` runs it.
#[inline(always)]
pub(crate) fn might_sleep() {
    #[cfg(any(target_os = "none", test))]
    assert!(
        !crate::irq::in_interrupt(),
        "sleeping, yielding or exiting in interrupt context"
    );
    let depth = SPIN_DEPTH.load(Ordering::Relaxed);
    assert!(
        depth == 0,
        "sleeping while holding {depth} spin lock(s) (atomic mode)"
    );
}

/// Held ranked levels are per *task* context: the scheduler saves and
/// restores them around a switch.
pub(crate) fn take_held_state() -> (u64, u32) {
    (
        HELD_LEVELS.swap(0, Ordering::Relaxed),
        SPIN_DEPTH.swap(0, Ordering::Relaxed),
    )
}

/// The current held levels and spin-lock depth, unchanged.
pub(crate) fn held_state() -> (u64, u32) {
    (
        HELD_LEVELS.load(Ordering::Relaxed),
        SPIN_DEPTH.load(Ordering::Relaxed),
    )
}

pub(crate) fn restore_held_state(state: (u64, u32)) {
    HELD_LEVELS.store(state.0, Ordering::Relaxed);
    SPIN_DEPTH.store(state.1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;
    use core::sync::atomic::AtomicUsize;

    use super::*;

    fn rounds() -> usize {
        if crate::sim::miri_sized() { 20 } else { 2000 }
    }

    /// Host threads stand in for CPUs here; the lock state is global, so
    /// the simulated machine must be idle meanwhile.
    #[test]
    fn spin_lock_serialises_threads_and_guards_share_only_the_value() {
        let _machine = crate::sim::lock();
        let lock: SpinLock<(usize, Vec<usize>)> = SpinLock::new((0, Vec::new()));
        std::thread::scope(|s| {
            for t in 0..3 {
                let lock = &lock;
                s.spawn(move || {
                    for _ in 0..rounds() {
                        let mut g = lock.lock();
                        g.0 += 1;
                        g.1.push(t);
                    }
                });
            }
        });
        let g = lock.lock();
        assert_eq!((g.0, g.1.len()), (3 * rounds(), 3 * rounds()));
        // `&SpinLockGuard` crosses threads as a `&T` would.
        std::thread::scope(|s| {
            let g = &g;
            s.spawn(move || assert_eq!(g.0, 3 * rounds()));
        });
        drop(g);
        assert!(lock.try_lock().is_some());
        // A lock moved to another thread takes its value along.
        let moved: SpinLock<Vec<i32>> = SpinLock::new(Vec::from([1, 2, 3]));
        let sum = std::thread::spawn(move || moved.into_inner().iter().sum::<i32>());
        assert_eq!(sum.join().unwrap(), 6);
    }

    /// The inlined bookkeeping: levels and spin depth recorded while held,
    /// restored at release, and a descending acquisition refused without
    /// leaving anything recorded.
    #[test]
    fn lock_levels_ascend_and_the_bookkeeping_is_restored_at_release() {
        let _machine = crate::sim::lock();
        let before = held_state();
        let outer: SpinLock<u32, { level::VFS }> = SpinLock::new(0);
        let inner: SpinLock<u32, { level::INODE }> = SpinLock::new(0);
        {
            let _a = outer.lock();
            let _b = inner.lock();
            assert_eq!(
                held_state(),
                (
                    before.0 | 1 << level::VFS | 1 << level::INODE,
                    before.1 + 2
                )
            );
        }
        assert_eq!(held_state(), before);
        let descending = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            let _b = inner.lock();
            let _a = outer.lock();
        }));
        assert!(descending.is_err(), "a lower level under a higher one");
        assert_eq!(held_state(), before);
        assert!(outer.try_lock().is_some() && inner.try_lock().is_some());
        assert_eq!(held_state(), before);
    }

    #[test]
    fn once_runs_its_initialiser_once_for_racing_threads() {
        let once: Once<Vec<u8>> = Once::new();
        let runs = AtomicUsize::new(0);
        let seen: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let v = once.call_once(|| {
                            runs.fetch_add(1, Ordering::Relaxed);
                            Vec::from([7u8; 3])
                        });
                        v.as_ptr().addr()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        assert!(seen.iter().all(|&p| p == seen[0]), "one value for all");
        assert_eq!(once.get().map(Vec::as_slice), Some(&[7u8; 3][..]));
        // The value is dropped with the cell, on whichever thread has it.
        let empty: Once<Vec<u8>> = Once::default();
        assert!(empty.get().is_none());
        std::thread::spawn(move || drop((once, empty)))
            .join()
            .unwrap();
    }
}
