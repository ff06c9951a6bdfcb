//! Time: a periodic tick from the local APIC timer, a monotonic clock from
//! the TSC (calibrated at boot), the wall-clock time read from the CMOS RTC
//! at boot, and task wake-ups at a deadline.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::{apic, cpu};
use crate::sync::{SpinLock, level};
use crate::task::Task;

/// Timer interrupts per second.
pub const TICK_HZ: u32 = 100;

static JIFFIES: AtomicU64 = AtomicU64::new(0);
static TSC_AT_BOOT: AtomicU64 = AtomicU64::new(0);
static REALTIME_AT_BOOT_NS: AtomicU64 = AtomicU64::new(0);
static WAKEUPS: SpinLock<Vec<(u64, Arc<Task>)>, { level::TIMER }> = SpinLock::new(Vec::new());

/// A one-shot callback run from the timer interrupt. It must only touch
/// interrupt-safe state (atomics, `Task::wake`).
pub type TimerCallback = alloc::boxed::Box<dyn FnOnce() + Send>;

static CALLBACKS: SpinLock<Vec<(u64, u64, TimerCallback)>, { level::TIMER }> =
    SpinLock::new(Vec::new());
static NEXT_TIMER_ID: AtomicU64 = AtomicU64::new(1);

/// Runs `f` from the timer interrupt once the monotonic clock reaches
/// `deadline_ns`; returns an id for [`cancel`].
pub fn call_at(deadline_ns: u64, f: TimerCallback) -> u64 {
    let id = NEXT_TIMER_ID.fetch_add(1, Ordering::Relaxed);
    CALLBACKS.lock_irq_disabled().push((deadline_ns, id, f));
    id
}

/// Cancels a pending callback; `false` if it already ran (or never existed).
pub fn cancel(id: u64) -> bool {
    let mut list = CALLBACKS.lock_irq_disabled();
    let before = list.len();
    list.retain(|(_, i, _)| *i != id);
    list.len() != before
}

pub(crate) fn init() {
    TSC_AT_BOOT.store(cpu::rdtsc(), Ordering::Relaxed);
    apic::init(TICK_HZ);
    REALTIME_AT_BOOT_NS.store(
        crate::arch::cmos::read_unix_time() * 1_000_000_000,
        Ordering::Relaxed,
    );
}

/// Nanoseconds since boot; never goes backwards.
pub fn monotonic_ns() -> u64 {
    let hz = apic::tsc_hz();
    if hz == 0 {
        return 0;
    }
    let ticks = cpu::rdtsc().saturating_sub(TSC_AT_BOOT.load(Ordering::Relaxed));
    (u128::from(ticks) * 1_000_000_000 / u128::from(hz)) as u64
}

/// Nanoseconds since the Unix epoch at boot, from the RTC.
pub fn realtime_at_boot_ns() -> u64 {
    REALTIME_AT_BOOT_NS.load(Ordering::Relaxed)
}

/// Timer ticks since boot.
pub fn jiffies() -> u64 {
    JIFFIES.load(Ordering::Relaxed)
}

/// Wakes `task` once the monotonic clock reaches `deadline_ns`.
pub(crate) fn wake_at(deadline_ns: u64, task: &Arc<Task>) {
    WAKEUPS
        .lock_irq_disabled()
        .push((deadline_ns, task.clone()));
}

/// The timer interrupt.
pub(crate) fn on_tick() {
    JIFFIES.fetch_add(1, Ordering::Relaxed);
    let now = monotonic_ns();
    let due: Vec<Arc<Task>> = {
        let mut list = WAKEUPS.lock_irq_disabled();
        if list.iter().all(|(d, _)| *d > now) {
            Vec::new()
        } else {
            let (due, keep): (Vec<_>, Vec<_>) = core::mem::take(&mut *list)
                .into_iter()
                .partition(|(d, _)| *d <= now);
            *list = keep;
            due.into_iter().map(|(_, t)| t).collect()
        }
    };
    for t in due {
        t.wake();
    }
    let fired: Vec<TimerCallback> = {
        let mut list = CALLBACKS.lock_irq_disabled();
        if list.iter().all(|(d, _, _)| *d > now) {
            Vec::new()
        } else {
            let (due, keep): (Vec<_>, Vec<_>) = core::mem::take(&mut *list)
                .into_iter()
                .partition(|(d, _, _)| *d <= now);
            *list = keep;
            due.into_iter().map(|(_, _, f)| f).collect()
        }
    };
    for f in fired {
        f();
    }
    crate::task::on_tick();
}
