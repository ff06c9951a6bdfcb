//! Wait queues: a task sleeps until a condition holds.

use alloc::collections::VecDeque;
use alloc::sync::Arc;

use super::{SpinLock, level};
use crate::irq::disable_local;
use crate::task::{self, Task};

pub struct WaitQueue {
    waiters: SpinLock<VecDeque<Arc<Task>>, { level::WAIT_QUEUE }>,
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
        crate::domain::heap::with_kernel_heap(|| self.waiters.lock().push_back(current.clone()));
        // Re-check with interrupts off: a wake-up that raced with the first
        // check has either happened (cond is true now) or will find us queued.
        if let Some(r) = cond() {
            self.waiters.lock().retain(|t| !Arc::ptr_eq(t, &current));
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
        self.waiters
            .lock_irq_disabled()
            .retain(|t| !Arc::ptr_eq(t, &current));
        None
    }

    /// Wakes the task that waited longest.
    pub fn wake_one(&self) {
        let t = self.waiters.lock_irq_disabled().pop_front();
        if let Some(t) = t {
            t.wake();
        }
    }

    /// Wakes every waiting task.
    pub fn wake_all(&self) {
        let all = core::mem::take(&mut *self.waiters.lock_irq_disabled());
        for t in all {
            t.wake();
        }
    }
}
