//! Time: a monotonic clock from the TSC (calibrated at boot), the
//! wall-clock time read from the CMOS RTC at boot, and high-resolution
//! timers: task wake-ups and callbacks at a deadline.
//!
//! The local APIC timer runs in one-shot mode and is armed for the earliest
//! of two deadlines: the front of the timer queue, and the next scheduler
//! tick (every 1/[`TICK_HZ`] s) while a task runs. An idle CPU stops the
//! tick (tickless idle): it halts until the next timer deadline or a
//! device interrupt, so a sleep of `t` ends at `t` plus the interrupt and
//! wake-up latency rather than at the next tick.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::{apic, cpu};
use crate::sync::{SpinLock, level};
use crate::task::Task;

/// Timer interrupts per second.
pub const TICK_HZ: u32 = 100;

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

/// Every pending timer, ordered by `(deadline, id)`, so the interrupt only
/// looks at the front and each expiry or cancellation costs O(log n). An
/// entry lives until it fires or is cancelled: a task that wakes before its
/// deadline cancels its wake-up (see [`WakeAt`]), so the queue holds only
/// live waits and armed timers.
struct Queue {
    events: BTreeMap<(u64, u64), Event>,
    /// The deadline of each pending callback, so [`cancel`] can find it.
    callbacks: BTreeMap<u64, u64>,
    /// The driver domain (heap tag) that armed a pending callback, for the
    /// callbacks armed inside one: revoked when it dies (`revoke_domain`).
    owners: BTreeMap<u64, u8>,
    /// When the next scheduler tick is due; `None` while the CPU idles.
    next_tick: Option<u64>,
    /// The deadline the APIC timer is armed for (`u64::MAX`: not armed).
    armed: u64,
    /// The timer interrupt is running (it arms the timer when it ends).
    in_interrupt: bool,
}

impl Queue {
    /// The earliest deadline the timer must interrupt at.
    fn next_deadline(&self) -> u64 {
        let first = self.events.first_key_value().map_or(u64::MAX, |(k, _)| k.0);
        first.min(self.next_tick.unwrap_or(u64::MAX))
    }

    /// Arms the APIC timer for [`Queue::next_deadline`] unless it already is.
    /// A deadline that has passed interrupts at once (a count of 1).
    fn rearm(&mut self) {
        let deadline = self.next_deadline();
        self.arm(deadline);
    }

    fn arm(&mut self, deadline: u64) {
        if deadline == self.armed {
            return;
        }
        self.armed = deadline;
        if deadline == u64::MAX {
            apic::stop_timer();
        } else {
            apic::arm_timer_ns(deadline.saturating_sub(monotonic_ns()));
        }
    }

    /// A new entry at `deadline`: the timer comes earlier if it must (the
    /// interrupt handler arms it itself when it ends).
    fn added(&mut self, deadline: u64) {
        if deadline < self.armed && !self.in_interrupt {
            self.rearm();
        }
    }

    /// Moves the callbacks armed during a timer interrupt (ids from
    /// `first_new`: a callback re-arming itself) that would be due before
    /// `floor` to `floor`, so that a callback re-arming itself at or near
    /// the present cannot keep the CPU in the handler.
    fn defer_new_callbacks(&mut self, first_new: u64, floor: u64) {
        loop {
            let key = self
                .events
                .range(..(floor, 0))
                .find(|(k, e)| k.1 >= first_new && matches!(e, Event::Call(_)))
                .map(|(k, _)| *k);
            let Some(key) = key else { break };
            if let Some(event) = self.events.remove(&key) {
                self.events.insert((floor, key.1), event);
                self.callbacks.insert(key.1, floor);
            }
        }
    }
}

static QUEUE: SpinLock<Queue, { level::TIMER }> = SpinLock::new(Queue {
    events: BTreeMap::new(),
    callbacks: BTreeMap::new(),
    owners: BTreeMap::new(),
    next_tick: None,
    armed: u64::MAX,
    in_interrupt: false,
});
/// Nanoseconds between scheduler ticks.
const TICK_NS: u64 = 1_000_000_000 / TICK_HZ as u64;
/// How long after a timer interrupt ends a callback armed during it runs at
/// the earliest (see [`Queue::defer_new_callbacks`]).
const MIN_REARM_NS: u64 = 50_000;
/// Timer interrupts taken (for tests and statistics).
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);
static NEXT_TIMER_ID: AtomicU64 = AtomicU64::new(1);

/// Runs `f` from the timer interrupt once the monotonic clock reaches
/// `deadline_ns`; returns an id for [`cancel`].
///
/// Armed inside a driver domain, the callback belongs to the domain: if the
/// domain dies first, it is revoked (removed unrun, never dropped: it lives
/// on the domain's heap). The queue's own nodes are always on the kernel
/// heap.
pub fn call_at(deadline_ns: u64, f: TimerCallback) -> u64 {
    let id = NEXT_TIMER_ID.fetch_add(1, Ordering::Relaxed);
    let owner = crate::domain::heap::current_tag();
    crate::domain::heap::with_kernel_heap(|| {
        let mut q = QUEUE.lock_irq_disabled();
        q.events.insert((deadline_ns, id), Event::Call(f));
        q.callbacks.insert(id, deadline_ns);
        if owner != 0 {
            q.owners.insert(id, owner);
        }
        q.added(deadline_ns);
    });
    id
}

/// Removes, unrun and undropped, every pending callback the domain with
/// heap tag `tag` armed: called when it dies, before its heap (where the
/// callbacks live) is freed. Returns how many were revoked.
pub(crate) fn revoke_domain(tag: u8) -> usize {
    crate::domain::heap::with_kernel_heap(|| {
        let mut q = QUEUE.lock_irq_disabled();
        let ids: alloc::vec::Vec<u64> = q
            .owners
            .iter()
            .filter(|(_, o)| **o == tag)
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            q.owners.remove(id);
            if let Some(deadline) = q.callbacks.remove(id)
                && let Some(event) = q.events.remove(&(deadline, *id))
            {
                // The closure and what it captured are the dead domain's.
                core::mem::forget(event);
            }
        }
        ids.len()
    })
}

/// Cancels a pending callback; `false` if it already ran (or never existed).
pub fn cancel(id: u64) -> bool {
    let removed = {
        let mut q = QUEUE.lock_irq_disabled();
        q.owners.remove(&id);
        q.callbacks
            .remove(&id)
            .and_then(|deadline| q.events.remove(&(deadline, id)))
    };
    // The callback (and what it captured) is dropped outside the lock.
    removed.is_some()
}

/// Callbacks pending (tests).
#[cfg(test)]
pub(crate) fn pending_callbacks() -> usize {
    QUEUE.lock_irq_disabled().callbacks.len()
}

pub(crate) fn init() {
    TSC_AT_BOOT.store(cpu::rdtsc(), Ordering::Relaxed);
    apic::init();
    let hz = u128::from(apic::tsc_hz().max(1));
    let mult = ((1_000_000_000u128 << CLOCK_SHIFT) / hz).min(u128::from(u64::MAX)) as u64;
    CLOCK_MULT.store(mult, Ordering::Relaxed);
    REALTIME_AT_BOOT_NS.store(
        crate::arch::cmos::read_unix_time() * 1_000_000_000,
        Ordering::Relaxed,
    );
    let mut q = QUEUE.lock_irq_disabled();
    q.next_tick = Some(monotonic_ns() + TICK_NS);
    q.rearm();
}

/// Nanoseconds since boot; never goes backwards. The TSC ticks since boot
/// times a fixed-point multiplier: a computation that user mode can repeat
/// exactly from [`clock_params`] (the vDSO), with no division.
pub fn monotonic_ns() -> u64 {
    let ticks = cpu::rdtsc().saturating_sub(TSC_AT_BOOT.load(Ordering::Relaxed));
    ((u128::from(ticks) * u128::from(CLOCK_MULT.load(Ordering::Relaxed))) >> CLOCK_SHIFT) as u64
}

/// A raw reading of the clock's counter (the TSC): one instruction, for
/// accounting that adds up many short intervals (user time, per system
/// call) and converts the sum once, with [`cycles_to_ns`].
#[inline]
pub fn cycles() -> u64 {
    cpu::rdtsc()
}

/// Nanoseconds in `cycles` counter ticks, at [`monotonic_ns`]'s rate.
pub fn cycles_to_ns(cycles: u64) -> u64 {
    ((u128::from(cycles) * u128::from(CLOCK_MULT.load(Ordering::Relaxed))) >> CLOCK_SHIFT) as u64
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

/// Tick periods (1/[`TICK_HZ`] s) of the monotonic clock since boot. It
/// counts on while the tick is stopped (an idle CPU takes no ticks).
pub fn jiffies() -> u64 {
    monotonic_ns() / TICK_NS
}

/// Timer interrupts taken since boot.
#[cfg(test)]
pub(crate) fn interrupts() -> u64 {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// The CPU has nothing to run and is about to halt: the tick stops, and
/// the timer is armed for the first pending deadline only. Interrupts are
/// disabled (the caller halts with `sti; hlt`).
pub(crate) fn idle_enter() {
    let mut q = QUEUE.lock_irq_disabled();
    q.next_tick = None;
    q.rearm();
}

/// The CPU leaves idle to run a task: the tick starts again, one period
/// from now.
pub(crate) fn idle_exit() {
    let mut q = QUEUE.lock_irq_disabled();
    if q.next_tick.is_none() {
        let next = monotonic_ns().saturating_add(TICK_NS);
        q.next_tick = Some(next);
        q.added(next);
    }
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
    crate::domain::heap::with_kernel_heap(|| {
        let mut q = QUEUE.lock_irq_disabled();
        q.events.insert(key, Event::Wake(task.clone()));
        q.added(deadline_ns);
    });
    WakeAt { key }
}

impl Drop for WakeAt {
    fn drop(&mut self) {
        // The task reference is released outside the lock. The timer stays
        // armed: an interrupt that finds nothing due only re-arms it.
        let _task = QUEUE.lock_irq_disabled().events.remove(&self.key);
    }
}

/// The timer interrupt: the one-shot count has run out. Runs what is due,
/// takes the scheduler tick if it is due, and arms the timer again.
pub(crate) fn on_interrupt() {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
    let now = monotonic_ns();
    let tick = {
        let mut q = QUEUE.lock_irq_disabled();
        q.armed = u64::MAX; // a one-shot count that ran out
        q.in_interrupt = true;
        match q.next_tick {
            Some(t) if t <= now => {
                // Ticks missed (interrupts held off) are not made up.
                let next = t.saturating_add(TICK_NS);
                q.next_tick = Some(if next <= now { now + TICK_NS } else { next });
                true
            }
            _ => false,
        }
    };
    // Timers armed while this interrupt runs (a periodic callback re-arming
    // itself) wait for a later interrupt, so the loop ends.
    let first_new = NEXT_TIMER_ID.load(Ordering::Relaxed);
    loop {
        let due = {
            let mut q = QUEUE.lock_irq_disabled();
            let key = q
                .events
                .range(..=(now, u64::MAX))
                .map(|(k, _)| *k)
                .find(|k| k.1 < first_new);
            key.and_then(|k| {
                let event = q.events.remove(&k)?;
                if let Event::Call(_) = event {
                    q.callbacks.remove(&k.1);
                    q.owners.remove(&k.1);
                }
                Some(event)
            })
        };
        match due {
            Some(Event::Wake(t)) => t.wake(),
            Some(Event::Call(f)) => f(),
            None => break,
        }
    }
    if tick {
        crate::task::on_tick();
    }
    let mut q = QUEUE.lock_irq_disabled();
    q.in_interrupt = false;
    q.defer_new_callbacks(first_new, monotonic_ns().saturating_add(MIN_REARM_NS));
    q.rearm();
}
