//! A sleeping mutex.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

use super::WaitQueue;

pub struct Mutex<T: ?Sized, const LEVEL: u8 = 0> {
    locked: AtomicBool,
    queue: WaitQueue,
    value: UnsafeCell<T>,
}

// SAFETY: one holder at a time (see SpinLock).
unsafe impl<T: ?Sized + Send, const L: u8> Sync for Mutex<T, L> {}
// SAFETY: sending the lock sends the value.
unsafe impl<T: ?Sized + Send, const L: u8> Send for Mutex<T, L> {}

pub struct MutexGuard<'a, T: ?Sized, const L: u8> {
    lock: &'a Mutex<T, L>,
    prev_levels: u64,
}

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
    pub fn lock(&self) -> MutexGuard<'_, T, L> {
        super::might_sleep();
        self.queue.wait_until(|| {
            self.locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .ok()
        });
        let prev_levels = super::note_acquire(L, false);
        MutexGuard {
            lock: self,
            prev_levels,
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

impl<T: ?Sized, const L: u8> Drop for MutexGuard<'_, T, L> {
    fn drop(&mut self) {
        super::note_release(L, false, self.prev_levels);
        self.lock.locked.store(false, Ordering::Release);
        self.lock.queue.wake_one();
    }
}
