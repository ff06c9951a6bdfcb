//! ITIMER_REAL and alarm(2): a frame timer callback marks the process (the
//! callback runs in interrupt context, so it only sets a flag and wakes a
//! thread); the signal is generated on the next pass through delivery.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::{Process, Thread};

type TaskRef = Option<alloc::sync::Weak<frame::task::Task>>;

/// The task the timer wakes: `thread`'s, else the process's first thread's.
/// Must be called without the timer lock held (it takes the thread list).
fn target_task(process: &Process, thread: Option<&Thread>) -> TaskRef {
    thread
        .and_then(|t| t.task.get().cloned())
        .or_else(|| process.threads().first().and_then(|t| t.task.get().cloned()))
}

fn arm(process: &Process, task: TaskRef, deadline: u64) -> u64 {
    let flag = process.signals.alarm_fired.clone();
    frame::timer::call_at(
        deadline,
        alloc::boxed::Box::new(move || {
            flag.store(true, Ordering::Release);
            if let Some(t) = task.and_then(|w| w.upgrade()) {
                t.wake();
            }
        }),
    )
}

/// Sets the real timer; returns the previous (remaining, interval) in ns.
pub fn set_real(process: &Arc<Process>, thread: &Thread, value_ns: u64, interval_ns: u64) -> (u64, u64) {
    let now = frame::timer::monotonic_ns();
    let task = target_task(process, Some(thread));
    let mut t = process.signals.real_timer.lock();
    let (old_id, old_deadline, old_interval) = *t;
    if old_id != 0 {
        frame::timer::cancel(old_id);
    }
    let remaining = if old_id != 0 { old_deadline.saturating_sub(now).max(1) } else { 0 };
    *t = if value_ns == 0 {
        (0, 0, 0)
    } else {
        let deadline = now.saturating_add(value_ns);
        (arm(process, task, deadline), deadline, interval_ns)
    };
    (remaining, old_interval)
}

/// Current (remaining, interval) of the real timer in ns.
pub fn get_real(process: &Process) -> (u64, u64) {
    let (id, deadline, interval) = *process.signals.real_timer.lock();
    if id == 0 {
        return (0, interval);
    }
    (deadline.saturating_sub(frame::timer::monotonic_ns()).max(1), interval)
}

/// The timer fired: re-arm a periodic timer.
pub fn on_alarm(process: &Process) {
    let task = target_task(process, None);
    let mut t = process.signals.real_timer.lock();
    let (_, deadline, interval) = *t;
    *t = if interval == 0 {
        (0, 0, 0)
    } else {
        let next = deadline.saturating_add(interval).max(frame::timer::monotonic_ns());
        (arm(process, task, next), next, interval)
    };
}
