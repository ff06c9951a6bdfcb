//! ITIMER_REAL and alarm(2): a frame timer callback marks the process (the
//! callback runs in interrupt context, so it only sets a flag and wakes a
//! thread); the signal is generated on the next pass through delivery.
//!
//! ITIMER_VIRTUAL and ITIMER_PROF count the process's CPU time (user, and
//! user plus system, of all its threads). They are looked at when a thread
//! is about to return to user mode, which a running thread does at least at
//! every timer tick, so they fire within a tick of expiring; but at most
//! once a tick, as Linux checks them from the tick: with an interval
//! shorter than the time a signal delivery takes, looking at every return
//! would raise a signal on every one and the process would never run.

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
    *t = if value_ns == 0 || process.exit_status().is_some() {
        (0, 0, 0)
    } else {
        let deadline = now.saturating_add(value_ns);
        (arm(process, task, deadline), deadline, interval_ns)
    };
    (remaining, old_interval)
}

/// Disarms the real timer when the process exits, as Linux does when the
/// thread group dies: its wake-up would otherwise stay queued until the
/// deadline, which alarm(2) can put a century away. A `set_real` racing
/// with the exit sees the exit status under the lock and arms nothing.
pub fn cancel_real(process: &Process) {
    let mut t = process.signals.real_timer.lock();
    if t.0 != 0 {
        frame::timer::cancel(t.0);
    }
    *t = (0, 0, 0);
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
    *t = if interval == 0 || process.exit_status().is_some() {
        (0, 0, 0)
    } else {
        let next = deadline.saturating_add(interval).max(frame::timer::monotonic_ns());
        (arm(process, task, next), next, interval)
    };
}

const TICK_NS: u64 = 1_000_000_000 / frame::timer::TICK_HZ as u64;
const SIGVTALRM: usize = 26;
const SIGPROF: usize = 27;

/// ITIMER_VIRTUAL (1) and ITIMER_PROF (2): the slot, clock and signal.
fn cpu_timer(which: u32) -> (usize, super::CpuKind, usize) {
    if which == 1 { (0, super::CpuKind::Virt, SIGVTALRM) } else { (1, super::CpuKind::Prof, SIGPROF) }
}

/// What is left of a CPU timer expiring at `expires` when the clock
/// reads `now`: at least a tick if it is due (Linux's get_cpu_itimer).
fn cpu_remaining(expires: u64, now: u64) -> u64 {
    match expires {
        0 => 0,
        e if e <= now => TICK_NS,
        e => e - now,
    }
}

/// Sets ITIMER_VIRTUAL (`which` 1) or ITIMER_PROF (2); returns the
/// previous (remaining, interval) in ns.
pub fn set_cpu(process: &Process, which: u32, value_ns: u64, interval_ns: u64) -> (u64, u64) {
    let (slot, kind, _) = cpu_timer(which);
    let now = process.cpu_clock_ns(kind);
    let mut timers = process.signals.cpu_itimers.lock();
    let (old_expires, old_interval) = timers[slot];
    timers[slot] = (if value_ns == 0 { 0 } else { now.saturating_add(value_ns) }, interval_ns);
    let armed = timers.iter().any(|t| t.0 != 0);
    drop(timers);
    process.signals.cpu_itimers_armed.store(armed, Ordering::Release);
    (cpu_remaining(old_expires, now), old_interval)
}

/// Current (remaining, interval) of ITIMER_VIRTUAL or ITIMER_PROF in ns.
pub fn get_cpu(process: &Process, which: u32) -> (u64, u64) {
    let (slot, kind, _) = cpu_timer(which);
    let now = process.cpu_clock_ns(kind);
    let (expires, interval) = process.signals.cpu_itimers.lock()[slot];
    (cpu_remaining(expires, now), interval)
}

const SIGKILL: usize = 9;
const SIGXCPU: usize = 24;

/// RLIMIT_CPU (setrlimit(2), Linux's check_process_timers): once the
/// process's CPU time (user plus system, all threads) reaches the soft
/// limit it gets SIGXCPU, and the soft limit moves one second on (while
/// below the hard one), so SIGXCPU comes once a CPU second; at the hard
/// limit, SIGKILL.
fn check_cpu_limit(process: &Arc<Process>) {
    if process.rlimits.lock().0[super::rlimit::RLIMIT_CPU].cur == super::rlimit::RLIM_INFINITY {
        return;
    }
    // The clock takes the thread list's lock: read it before the limits'.
    let used = process.cpu_clock_ns(super::CpuKind::Prof);
    let sig = {
        let mut limits = process.rlimits.lock();
        let l = &mut limits.0[super::rlimit::RLIMIT_CPU];
        if l.cur == super::rlimit::RLIM_INFINITY {
            return;
        }
        if l.max != super::rlimit::RLIM_INFINITY && used >= l.max.saturating_mul(1_000_000_000) {
            SIGKILL
        } else if used >= l.cur.saturating_mul(1_000_000_000) {
            if l.cur < l.max {
                l.cur += 1;
            }
            SIGXCPU
        } else {
            return;
        }
    };
    super::signal::send_to_process(process, super::signal::SigInfo::new(sig, super::signal::SI_KERNEL));
}

/// Once a tick at most: checks RLIMIT_CPU, fires the CPU-time timers that
/// have expired (SIGVTALRM, SIGPROF to the process) and re-arms the
/// periodic ones.
pub fn run_cpu(process: &Arc<Process>) {
    let jiffy = frame::timer::jiffies();
    if process.signals.cpu_itimers_checked.load(Ordering::Relaxed) == jiffy
        || process.signals.cpu_itimers_checked.swap(jiffy, Ordering::AcqRel) == jiffy
    {
        return;
    }
    check_cpu_limit(process);
    if !process.signals.cpu_itimers_armed.load(Ordering::Acquire) {
        return;
    }
    let now = [process.cpu_clock_ns(super::CpuKind::Virt), process.cpu_clock_ns(super::CpuKind::Prof)];
    let mut fired = [None, None];
    {
        let mut timers = process.signals.cpu_itimers.lock();
        for which in 1..=2u32 {
            let (slot, _, sig) = cpu_timer(which);
            let (expires, interval) = timers[slot];
            if expires != 0 && now[slot] >= expires {
                fired[slot] = Some(sig);
                timers[slot].0 = if interval == 0 { 0 } else { expires.saturating_add(interval) };
            }
        }
        let armed = timers.iter().any(|t| t.0 != 0);
        process.signals.cpu_itimers_armed.store(armed, Ordering::Release);
    }
    for sig in fired.into_iter().flatten() {
        super::signal::send_to_process(process, super::signal::SigInfo::new(sig, super::signal::SI_KERNEL));
    }
}
