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
    pub const VMAR: u8 = 32;
    pub const VM_SPACE: u8 = 40;
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
static HELD_LEVELS: AtomicU64 = AtomicU64::new(0);
static SPIN_DEPTH: AtomicU32 = AtomicU32::new(0);

pub(crate) fn note_acquire(level: u8, spin: bool) -> u64 {
    let mut prev = 0;
    if level != 0 {
        let bit = 1u64 << level;
        prev = HELD_LEVELS.load(Ordering::Relaxed);
        if prev >> level != 0 {
            panic!("lock order violation: taking level {level} while holding levels {prev:#b}");
        }
        HELD_LEVELS.store(prev | bit, Ordering::Relaxed);
    }
    if spin {
        SPIN_DEPTH.fetch_add(1, Ordering::Relaxed);
    }
    prev
}

pub(crate) fn note_release(level: u8, spin: bool, prev: u64) {
    if level != 0 {
        HELD_LEVELS.store(prev, Ordering::Relaxed);
    }
    if spin {
        SPIN_DEPTH.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Panics if the caller must not sleep: it holds a spin lock, or it runs in
/// interrupt context (an interrupt handler or a timer callback).
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

pub(crate) fn restore_held_state(state: (u64, u32)) {
    HELD_LEVELS.store(state.0, Ordering::Relaxed);
    SPIN_DEPTH.store(state.1, Ordering::Relaxed);
}
