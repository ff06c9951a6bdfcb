//! A sleeping mutex.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

use super::WaitQueue;

pub struct Mutex<T: ?Sized, const LEVEL: u8 = 0> {
    locked: AtomicBool,
    queue: WaitQueue,
    value: UnsafeCell<T>,
}

// SAFETY: the mutex hands `&mut T` to one holder at a time, so sharing the
// mutex between tasks only ever moves access to `T` from one task to
// another: `T: Send` is enough, exactly as for `std::sync::Mutex`.
// MIRI: relied on by task::tests::wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them
unsafe impl<T: ?Sized + Send, const L: u8> Sync for Mutex<T, L> {}
// SAFETY: sending the mutex sends the value it owns.
// MIRI: relied on by task::tests::wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them
unsafe impl<T: ?Sized + Send, const L: u8> Send for Mutex<T, L> {}

/// Proof that the current task holds a [`Mutex`]. It stays with the task
/// that locked it (`!Send`: the held lock levels are that task's state), and
/// sharing `&MutexGuard` shares `&T`, so it is `Sync` only if `T` is.
pub struct MutexGuard<'a, T: ?Sized, const L: u8> {
    lock: &'a Mutex<T, L>,
    prev_levels: u64,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a `&MutexGuard` gives out only `&T` (DerefMut needs `&mut`), so
// sharing it between tasks is sound exactly when sharing `&T` is: `T: Sync`.
// MIRI: relied on by task::tests::a_mutex_guard_shares_only_the_value_across_threads
unsafe impl<T: ?Sized + Sync, const L: u8> Sync for MutexGuard<'_, T, L> {}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    fn sync<T: Sync>() {}
    send_sync::<Mutex<core::cell::Cell<u64>>>();
    sync::<MutexGuard<'static, u64, 0>>();
};

impl<T, const L: u8> Mutex<T, L> {
    pub const fn new(value: T) -> Self {
        Mutex {
            locked: AtomicBool::new(false),
            queue: WaitQueue::new(),
            value: UnsafeCell::new(value),
        }
    }
}

impl<T: ?Sized, const L: u8> Mutex<T, L> {
    /// Takes the lock, sleeping while another task holds it.
    ///
    /// Inlined: uncontended, locking is the sleep check's two loads, one
    /// compare-and-swap and the level bookkeeping, with no call (the
    /// descriptor table's lock is taken by every read and write).
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T, L> {
        super::might_sleep();
        // Uncontended: one compare-and-swap, no wait-queue round.
        if self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        let prev_levels = super::note_acquire(L, false);
        MutexGuard {
            lock: self,
            prev_levels,
            _not_send: PhantomData,
        }
    }
}

impl<T: ?Sized, const L: u8> Deref for MutexGuard<'_, T, L> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves exclusive ownership of the mutex.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized, const L: u8> DerefMut for MutexGuard<'_, T, L> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves exclusive ownership of the mutex.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized, const L: u8> Mutex<T, L> {
    /// Sleeps until the lock is free and takes it (the lock's slow path,
    /// out of line).
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        self.queue.wait_until(|| {
            self.locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .ok()
        });
    }
}

impl<T: ?Sized, const L: u8> Drop for MutexGuard<'_, T, L> {
    /// Inlined: with nobody waiting, unlocking is a store, a fence and a
    /// load (`WaitQueue::wake_one`'s fast path).
    #[inline]
    fn drop(&mut self) {
        super::note_release(L, false, self.prev_levels);
        self.lock.locked.store(false, Ordering::Release);
        self.lock.queue.wake_one();
    }
}
