//! Round-robin scheduling: one FIFO run queue; a task's time slice grows
//! with its weight (nice), so nicer tasks get a smaller share of the CPU.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, Ordering};

use frame::sync::{SpinLock, level};
use frame::task::{Scheduler, Task};

/// Timer ticks a default-weight task may run before it is preempted
/// (40 ms at 100 Hz).
const TIME_SLICE_TICKS: u32 = 4;

/// Ticks a task of `weight` may run (weight 1024 gets the base slice).
pub fn slice_ticks(weight: u32) -> u32 {
    (TIME_SLICE_TICKS * weight / 1024).clamp(1, 64)
}

pub struct RoundRobin {
    queue: SpinLock<VecDeque<Arc<Task>>, { level::SCHEDULER }>,
    ticks_used: AtomicU32,
}

impl Default for RoundRobin {
    fn default() -> Self {
        Self::new()
    }
}

impl RoundRobin {
    pub const fn new() -> Self {
        RoundRobin {
            queue: SpinLock::new(VecDeque::new()),
            ticks_used: AtomicU32::new(0),
        }
    }
}

impl Scheduler for RoundRobin {
    fn enqueue(&self, task: Arc<Task>) {
        self.queue.lock_irq_disabled().push_back(task);
    }

    fn pick_next(&self) -> Option<Arc<Task>> {
        self.ticks_used.store(0, Ordering::Relaxed);
        self.queue.lock_irq_disabled().pop_front()
    }

    fn tick(&self, current: &Task) -> bool {
        let used = self.ticks_used.fetch_add(1, Ordering::Relaxed) + 1;
        used >= slice_ticks(current.weight()) && !self.queue.lock_irq_disabled().is_empty()
    }
}
