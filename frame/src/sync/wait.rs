//! Wait queues: a task sleeps until a condition holds.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering, fence};

use super::{SpinLock, level};
use crate::irq::disable_local;
use crate::task::{self, Task};

pub struct WaitQueue {
    waiters: SpinLock<VecDeque<Arc<Task>>, { level::WAIT_QUEUE }>,
    /// How many tasks `waiters` holds, written under its lock, so that a
    /// wake-up with nobody queued (every unlock of an uncontended mutex)
    /// takes no lock and disables no interrupt. A waker makes its
    /// condition true, then reads this count; a waiter counts itself in,
    /// then checks the condition again; a SeqCst fence between the two
    /// steps on each side means at least one of them sees the other's
    /// write: either the waker sees the waiter queued and wakes it, or
    /// the waiter sees the condition true and does not sleep.
    queued: AtomicUsize,
}

impl Default for WaitQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitQueue {
    pub const fn new() -> Self {
        WaitQueue {
            waiters: SpinLock::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
        }
    }

    /// Sleeps until `cond` returns `Some`, and returns that value.
    pub fn wait_until<R>(&self, mut cond: impl FnMut() -> Option<R>) -> R {
        loop {
            if let Some(r) = self.wait_once(&mut cond, None) {
                return r;
            }
        }
    }

    /// Like [`WaitQueue::wait_until`], but gives up (returning `None`) once
    /// the monotonic clock reaches `deadline_ns`. `u64::MAX` never comes:
    /// such a wait is [`WaitQueue::wait_until`].
    pub fn wait_until_or_deadline<R>(
        &self,
        mut cond: impl FnMut() -> Option<R>,
        deadline_ns: u64,
    ) -> Option<R> {
        loop {
            if let Some(r) = self.wait_once(&mut cond, Some(deadline_ns)) {
                return Some(r);
            }
            if crate::timer::monotonic_ns() >= deadline_ns {
                return cond();
            }
        }
    }

    fn wait_once<R>(
        &self,
        cond: &mut impl FnMut() -> Option<R>,
        deadline: Option<u64>,
    ) -> Option<R> {
        super::might_sleep();
        if let Some(r) = cond() {
            return Some(r);
        }
        let current = task::current();
        let irq = disable_local();
        // The queue's storage may have to grow: on the kernel heap, even
        // for a waiter inside a driver domain (the queue may outlive it).
        crate::domain::heap::with_kernel_heap(|| {
            let mut w = self.waiters.lock();
            w.push_back(current.clone());
            self.queued.store(w.len(), Ordering::Relaxed);
        });
        // Re-check with interrupts off: a wake-up that raced with the first
        // check has either happened (cond is true now) or will find us queued
        // (the fence pairs with the waker's, see `queued`).
        fence(Ordering::SeqCst);
        if let Some(r) = cond() {
            self.remove(&current);
            return Some(r);
        }
        // Only a finite deadline needs a timer; the entry goes away as soon
        // as the wait ends, whether the timer or a waker ended it.
        let timer = deadline
            .filter(|d| *d != u64::MAX)
            .map(|d| crate::timer::wake_at(d, &current));
        task::sleep_current(&irq);
        drop(irq);
        drop(timer);
        self.remove(&current);
        None
    }

    /// Takes `task` off the queue if a waker has not already.
    fn remove(&self, task: &Arc<Task>) {
        let mut w = self.waiters.lock_irq_disabled();
        w.retain(|t| !Arc::ptr_eq(t, task));
        self.queued.store(w.len(), Ordering::Relaxed);
    }

    /// Whether no task can be queued that a waker must wake: the caller has
    /// made its condition true before (the fence pairs with the waiter's).
    #[inline(always)]
    fn nobody_queued(&self) -> bool {
        fence(Ordering::SeqCst);
        self.queued.load(Ordering::Relaxed) == 0
    }

    /// Wakes the task that waited longest. Inlined: with nobody queued (an
    /// uncontended mutex's unlock) it is a fence and a load, with no call.
    #[inline]
    pub fn wake_one(&self) {
        if self.nobody_queued() {
            return;
        }
        self.wake_one_queued();
    }

    /// [`WaitQueue::wake_one`] when a task may be queued.
    #[cold]
    #[inline(never)]
    fn wake_one_queued(&self) {
        let t = {
            let mut w = self.waiters.lock_irq_disabled();
            let t = w.pop_front();
            self.queued.store(w.len(), Ordering::Relaxed);
            t
        };
        if let Some(t) = t {
            t.wake();
        }
    }

    /// Wakes every waiting task.
    pub fn wake_all(&self) {
        if self.nobody_queued() {
            return;
        }
        let all = {
            let mut w = self.waiters.lock_irq_disabled();
            self.queued.store(0, Ordering::Relaxed);
            core::mem::take(&mut *w)
        };
        for t in all {
            t.wake();
        }
    }
}
