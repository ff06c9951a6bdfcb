//! Time: a periodic tick from the local APIC timer, a monotonic clock from
//! the TSC (calibrated at boot), the wall-clock time read from the CMOS RTC
//! at boot, and task wake-ups at a deadline.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::{apic, cpu};
use crate::sync::{SpinLock, level};
use crate::task::Task;

/// Timer interrupts per second.
pub const TICK_HZ: u32 = 100;

static JIFFIES: AtomicU64 = AtomicU64::new(0);
static TSC_AT_BOOT: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds per TSC tick, as a fixed-point number with [`CLOCK_SHIFT`]
/// fraction bits (0 until the TSC is calibrated).
static CLOCK_MULT: AtomicU64 = AtomicU64::new(0);
/// Fraction bits of the monotonic clock's multiplier.
pub const CLOCK_SHIFT: u32 = 32;
static REALTIME_AT_BOOT_NS: AtomicU64 = AtomicU64::new(0);

/// A one-shot callback run from the timer interrupt. It must only touch
/// interrupt-safe state (atomics, `Task::wake`).
pub type TimerCallback = alloc::boxed::Box<dyn FnOnce() + Send>;

/// What a pending timer does when it expires.
enum Event {
    Wake(Arc<Task>),
    Call(TimerCallback),
}

/// Every pending timer, ordered by `(deadline, id)`, so the tick only looks
/// at the front and each expiry or cancellation costs O(log n). An entry
/// lives until it fires or is cancelled: a task that wakes before its
/// deadline cancels its wake-up (see [`WakeAt`]), so the queue holds only
/// live waits and armed timers.
struct Queue {
    events: BTreeMap<(u64, u64), Event>,
    /// The deadline of each pending callback, so [`cancel`] can find it.
    callbacks: BTreeMap<u64, u64>,
}

static QUEUE: SpinLock<Queue, { level::TIMER }> = SpinLock::new(Queue {
    events: BTreeMap::new(),
    callbacks: BTreeMap::new(),
});
static NEXT_TIMER_ID: AtomicU64 = AtomicU64::new(1);

/// Runs `f` from the timer interrupt once the monotonic clock reaches
/// `deadline_ns`; returns an id for [`cancel`].
pub fn call_at(deadline_ns: u64, f: TimerCallback) -> u64 {
    let id = NEXT_TIMER_ID.fetch_add(1, Ordering::Relaxed);
    let mut q = QUEUE.lock_irq_disabled();
    q.events.insert((deadline_ns, id), Event::Call(f));
    q.callbacks.insert(id, deadline_ns);
    id
}

/// Cancels a pending callback; `false` if it already ran (or never existed).
pub fn cancel(id: u64) -> bool {
    let removed = {
        let mut q = QUEUE.lock_irq_disabled();
        q.callbacks
            .remove(&id)
            .and_then(|deadline| q.events.remove(&(deadline, id)))
    };
    // The callback (and what it captured) is dropped outside the lock.
    removed.is_some()
}

pub(crate) fn init() {
    TSC_AT_BOOT.store(cpu::rdtsc(), Ordering::Relaxed);
    apic::init(TICK_HZ);
    let hz = u128::from(apic::tsc_hz().max(1));
    let mult = ((1_000_000_000u128 << CLOCK_SHIFT) / hz).min(u128::from(u64::MAX)) as u64;
    CLOCK_MULT.store(mult, Ordering::Relaxed);
    REALTIME_AT_BOOT_NS.store(
        crate::arch::cmos::read_unix_time() * 1_000_000_000,
        Ordering::Relaxed,
    );
}

/// Nanoseconds since boot; never goes backwards. The TSC ticks since boot
/// times a fixed-point multiplier: a computation that user mode can repeat
/// exactly from [`clock_params`] (the vDSO), with no division.
pub fn monotonic_ns() -> u64 {
    let ticks = cpu::rdtsc().saturating_sub(TSC_AT_BOOT.load(Ordering::Relaxed));
    ((u128::from(ticks) * u128::from(CLOCK_MULT.load(Ordering::Relaxed))) >> CLOCK_SHIFT) as u64
}

/// How [`monotonic_ns`] is computed: `((rdtsc - tsc_at_boot) * mult) >>
/// shift`, in 128-bit arithmetic, saturating at 0 below `tsc_at_boot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockParams {
    pub tsc_at_boot: u64,
    pub mult: u64,
    pub shift: u32,
}

/// The parameters of the monotonic clock (fixed after boot).
pub fn clock_params() -> ClockParams {
    ClockParams {
        tsc_at_boot: TSC_AT_BOOT.load(Ordering::Relaxed),
        mult: CLOCK_MULT.load(Ordering::Relaxed),
        shift: CLOCK_SHIFT,
    }
}

/// Nanoseconds since the Unix epoch at boot, from the RTC.
pub fn realtime_at_boot_ns() -> u64 {
    REALTIME_AT_BOOT_NS.load(Ordering::Relaxed)
}

/// Timer ticks since boot.
pub fn jiffies() -> u64 {
    JIFFIES.load(Ordering::Relaxed)
}

/// A registered wake-up of a task at a deadline; dropping it cancels the
/// wake-up if it has not fired yet.
#[must_use = "dropping the guard cancels the wake-up"]
pub(crate) struct WakeAt {
    key: (u64, u64),
}

/// Wakes `task` once the monotonic clock reaches `deadline_ns`, unless the
/// returned guard is dropped first.
pub(crate) fn wake_at(deadline_ns: u64, task: &Arc<Task>) -> WakeAt {
    let key = (deadline_ns, NEXT_TIMER_ID.fetch_add(1, Ordering::Relaxed));
    QUEUE
        .lock_irq_disabled()
        .events
        .insert(key, Event::Wake(task.clone()));
    WakeAt { key }
}

impl Drop for WakeAt {
    fn drop(&mut self) {
        // The task reference is released outside the lock.
        let _task = QUEUE.lock_irq_disabled().events.remove(&self.key);
    }
}

/// The timer interrupt.
pub(crate) fn on_tick() {
    JIFFIES.fetch_add(1, Ordering::Relaxed);
    let now = monotonic_ns();
    // Timers armed while this tick runs (a periodic callback re-arming
    // itself) wait for the next tick, so the loop ends.
    let first_new = NEXT_TIMER_ID.load(Ordering::Relaxed);
    loop {
        let due = {
            let mut q = QUEUE.lock_irq_disabled();
            match q.events.first_entry() {
                Some(e) if e.key().0 <= now && e.key().1 < first_new => {
                    let ((_, id), event) = e.remove_entry();
                    if let Event::Call(_) = event {
                        q.callbacks.remove(&id);
                    }
                    Some(event)
                }
                _ => None,
            }
        };
        match due {
            Some(Event::Wake(t)) => t.wake(),
            Some(Event::Call(f)) => f(),
            None => break,
        }
    }
    crate::task::on_tick();
}
