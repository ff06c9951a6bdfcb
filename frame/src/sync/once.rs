//! One-time initialisation.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU8, Ordering};

const EMPTY: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;

pub struct Once<T> {
    state: AtomicU8,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the value is written once (state RUNNING, by one caller) and only
// read after state is DONE (Acquire pairs with the Release store). A shared
// `Once` hands out `&T` to every thread (so `T: Sync`), and the value may be
// created by one thread and dropped by another (so `T: Send`).
// MIRI: relied on by sync::tests::once_runs_its_initialiser_once_for_racing_threads
unsafe impl<T: Send + Sync> Sync for Once<T> {}
// SAFETY: sending the cell sends the value.
// MIRI: relied on by sync::tests::once_runs_its_initialiser_once_for_racing_threads
unsafe impl<T: Send> Send for Once<T> {}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Once<u64>>();
};

impl<T> Default for Once<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Once<T> {
    pub const fn new() -> Self {
        Once {
            state: AtomicU8::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Runs `f` and stores its result if the cell is empty; returns the value.
    pub fn call_once(&self, f: impl FnOnce() -> T) -> &T {
        if self
            .state
            .compare_exchange(EMPTY, RUNNING, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
        {
            // SAFETY: the CAS made us the only writer; no reader looks at the
            // value before DONE is published.
            unsafe { (*self.value.get()).write(f()) };
            self.state.store(DONE, Ordering::Release);
        }
        while self.state.load(Ordering::Acquire) != DONE {
            core::hint::spin_loop();
        }
        // SAFETY: DONE means the value was initialised and is never written again.
        unsafe { (*self.value.get()).assume_init_ref() }
    }

    pub fn get(&self) -> Option<&T> {
        if self.state.load(Ordering::Acquire) == DONE {
            // SAFETY: see `call_once`.
            Some(unsafe { (*self.value.get()).assume_init_ref() })
        } else {
            None
        }
    }
}

impl<T> Drop for Once<T> {
    fn drop(&mut self) {
        if *self.state.get_mut() == DONE {
            // SAFETY: DONE means initialised; we have exclusive access.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}
