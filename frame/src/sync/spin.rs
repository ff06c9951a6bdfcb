//! Spin locks, with an interrupt-disabling variant.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

use crate::irq::{DisabledLocalIrqGuard, disable_local};

/// A spin lock at lock level `LEVEL` (see [`super::level`]).
pub struct SpinLock<T: ?Sized, const LEVEL: u8 = 0> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one holder at a time, so sharing
// the lock between threads only ever moves access to `T` from one thread to
// another: `T: Send` is enough (as for `std::sync::Mutex`).
// MIRI: relied on by sync::tests::spin_lock_serialises_threads_and_guards_share_only_the_value
unsafe impl<T: ?Sized + Send, const L: u8> Sync for SpinLock<T, L> {}
// SAFETY: sending the lock sends the value.
// MIRI: relied on by sync::tests::spin_lock_serialises_threads_and_guards_share_only_the_value
unsafe impl<T: ?Sized + Send, const L: u8> Send for SpinLock<T, L> {}

/// Proof that this CPU holds a [`SpinLock`]. It is `!Send` (through the
/// interrupt guard: the held lock levels and the interrupt state belong to
/// this CPU and task), and sharing `&SpinLockGuard` shares `&T`, so it is
/// `Sync` only if `T` is.
pub struct SpinLockGuard<'a, T: ?Sized, const L: u8> {
    lock: &'a SpinLock<T, L>,
    prev_levels: u64,
    _irq: Option<DisabledLocalIrqGuard>,
}

// SAFETY: a `&SpinLockGuard` gives out only `&T`, so sharing it between
// threads is sound exactly when sharing `&T` is: `T: Sync`.
// MIRI: relied on by sync::tests::spin_lock_serialises_threads_and_guards_share_only_the_value
unsafe impl<T: ?Sized + Sync, const L: u8> Sync for SpinLockGuard<'_, T, L> {}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    fn sync<T: Sync>() {}
    send_sync::<SpinLock<core::cell::Cell<u64>>>();
    sync::<SpinLockGuard<'static, u64, 0>>();
};

impl<T, const L: u8> SpinLock<T, L> {
    pub const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized, const L: u8> SpinLock<T, L> {
    fn acquire(&self, irq: Option<DisabledLocalIrqGuard>) -> SpinLockGuard<'_, T, L> {
        let prev_levels = super::note_acquire(L, true);
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
        SpinLockGuard {
            lock: self,
            prev_levels,
            _irq: irq,
        }
    }

    /// Acquires the lock. Must not be used for locks that interrupt handlers
    /// also take (use [`SpinLock::lock_irq_disabled`]).
    pub fn lock(&self) -> SpinLockGuard<'_, T, L> {
        self.acquire(None)
    }

    /// Disables local interrupts, then acquires the lock.
    pub fn lock_irq_disabled(&self) -> SpinLockGuard<'_, T, L> {
        self.acquire(Some(disable_local()))
    }

    pub fn try_lock(&self) -> Option<SpinLockGuard<'_, T, L>> {
        if self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            let prev_levels = super::note_acquire(L, true);
            Some(SpinLockGuard {
                lock: self,
                prev_levels,
                _irq: None,
            })
        } else {
            None
        }
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: ?Sized, const L: u8> Deref for SpinLockGuard<'_, T, L> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves exclusive ownership of the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized, const L: u8> DerefMut for SpinLockGuard<'_, T, L> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive ownership of the lock.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized, const L: u8> Drop for SpinLockGuard<'_, T, L> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
        super::note_release(L, true, self.prev_levels);
    }
}
