//! POSIX per-process timers: timer_create(2), timer_settime(2),
//! timer_gettime(2), timer_getoverrun(2) and timer_delete(2).
//!
//! Expiry works like ITIMER_REAL: the frame timer callback runs in
//! interrupt context, so it only marks the timer and the process and wakes
//! a thread. The next pass through signal handling ([`run_expired`]) counts
//! missed periods, re-arms periodic timers and generates the signal. A
//! timer's signal is queued at most once: while it is still pending, further
//! expirations only raise its `si_overrun` (as Linux does), and
//! timer_getoverrun reports the count of the last delivered one.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::sync::{SpinLock, level};

use super::signal::{self, SigInfo};
use super::{Process, Thread};
use crate::error::{Errno, Error, Result};
use crate::time::{self, ClockId};

/// si_code of a timer expiration.
pub const SI_TIMER: i32 = -2;

pub const SIGEV_SIGNAL: i32 = 0;
pub const SIGEV_NONE: i32 = 1;
pub const SIGEV_THREAD_ID: i32 = 4;

/// Most timers per process (Linux bounds them by RLIMIT_SIGPENDING).
const MAX_TIMERS: usize = 1024;
/// DELAYTIMER_MAX: the overrun count saturates here.
const OVERRUN_MAX: u64 = i32::MAX as u64;

/// How a timer notifies its process.
#[derive(Clone, Copy)]
pub struct Notify {
    /// SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID.
    pub kind: i32,
    pub signo: usize,
    /// sigev_value, passed back in si_value.
    pub value: u64,
    /// The thread of SIGEV_THREAD_ID.
    pub tid: u32,
}

struct Timer {
    clock: ClockId,
    notify: Notify,
    /// The frame timer of the pending expiration; 0 when disarmed.
    frame_id: u64,
    /// Next expiration, monotonic ns.
    deadline: u64,
    interval: u64,
    /// Set by the frame timer callback.
    expired: Arc<AtomicBool>,
    /// Overrun of the last delivered signal (timer_getoverrun).
    overrun_last: i32,
}

/// The timers of one process (kept with its signal state).
pub struct Timers {
    /// Some timer expired since the last [`run_expired`].
    pub(crate) fired: Arc<AtomicBool>,
    list: SpinLock<BTreeMap<i32, Timer>, { level::PROCESS }>,
}

impl Default for Timers {
    fn default() -> Self {
        Self::new()
    }
}

impl Timers {
    pub fn new() -> Self {
        Timers { fired: Arc::new(AtomicBool::new(false)), list: SpinLock::new(BTreeMap::new()) }
    }

    /// Deletes every timer (execve and exit).
    pub fn clear(&self) {
        let list = core::mem::take(&mut *self.list.lock());
        for t in list.values() {
            if t.frame_id != 0 {
                frame::timer::cancel(t.frame_id);
            }
        }
    }
}

/// The clocks a timer can measure: EINVAL for a bad id, EOPNOTSUPP for the
/// clocks Linux has no timers on (raw, coarse) and for CPU-time clocks,
/// whose timers Trellis does not implement.
fn timer_clock(raw: i32) -> Result<ClockId> {
    const CLOCK_REALTIME_ALARM: i32 = 8;
    const CLOCK_BOOTTIME_ALARM: i32 = 9;
    match raw {
        // Without suspend the alarm clocks are the plain ones.
        CLOCK_REALTIME_ALARM => Ok(ClockId::Realtime),
        CLOCK_BOOTTIME_ALARM => Ok(ClockId::Boottime),
        _ => match ClockId::from_raw(raw)? {
            c @ (ClockId::Realtime | ClockId::Monotonic | ClockId::Boottime) => Ok(c),
            _ => Err(Error::new(Errno::EOPNOTSUPP)),
        },
    }
}

/// timer_create: a new disarmed timer; returns its id.
pub fn create(p: &Process, raw_clock: i32, notify: Notify) -> Result<i32> {
    let clock = timer_clock(raw_clock)?;
    match notify.kind {
        SIGEV_NONE => {}
        SIGEV_SIGNAL | SIGEV_THREAD_ID => {
            if !(1..=signal::NSIG).contains(&notify.signo) {
                return Err(Error::new(Errno::EINVAL));
            }
            if notify.kind == SIGEV_THREAD_ID && !p.threads().iter().any(|t| t.tid() == notify.tid) {
                return Err(Error::new(Errno::EINVAL));
            }
        }
        _ => return Err(Error::new(Errno::EINVAL)),
    }
    let mut list = p.signals.timers.list.lock();
    if list.len() >= MAX_TIMERS {
        return Err(Error::new(Errno::EAGAIN));
    }
    // Linux hands out the lowest free id, starting at 0.
    let id = (0..).find(|i| !list.contains_key(i)).unwrap_or(0);
    list.insert(
        id,
        Timer {
            clock,
            notify,
            frame_id: 0,
            deadline: 0,
            interval: 0,
            expired: Arc::new(AtomicBool::new(false)),
            overrun_last: 0,
        },
    );
    Ok(id)
}

type TaskRef = Option<alloc::sync::Weak<frame::task::Task>>;

/// The task an expiration wakes so that it runs [`run_expired`]: the first
/// live thread's (takes the thread list: call without the timer lock).
fn wake_target(p: &Process) -> TaskRef {
    p.threads().first().and_then(|t| t.task.get().cloned())
}

fn arm(fired: &Arc<AtomicBool>, t: &mut Timer, deadline: u64, task: TaskRef) {
    let (expired, fired) = (t.expired.clone(), fired.clone());
    t.deadline = deadline;
    t.frame_id = frame::timer::call_at(
        deadline,
        Box::new(move || {
            expired.store(true, Ordering::Release);
            fired.store(true, Ordering::Release);
            if let Some(task) = task.and_then(|w| w.upgrade()) {
                task.wake();
            }
        }),
    );
}

fn disarm(t: &mut Timer) {
    if t.frame_id != 0 {
        frame::timer::cancel(t.frame_id);
    }
    t.frame_id = 0;
    t.expired.store(false, Ordering::Release);
}

/// (remaining ns, interval ns) of an armed timer; remaining 0 if disarmed.
fn current(t: &Timer) -> (u64, u64) {
    if t.frame_id == 0 {
        return (0, t.interval);
    }
    (t.deadline.saturating_sub(frame::timer::monotonic_ns()).max(1), t.interval)
}

/// timer_settime: arms (value > 0) or disarms (value 0) timer `id`.
/// `value` is relative, or absolute on the timer's clock with `abstime`.
/// Returns the old (remaining, interval).
pub fn settime(p: &Process, id: i32, value: u64, interval: u64, abstime: bool) -> Result<(u64, u64)> {
    let clock = p.signals.timers.list.lock().get(&id).map(|t| t.clock).ok_or(Error::new(Errno::EINVAL))?;
    let deadline = if value == 0 {
        None
    } else if abstime {
        Some(time::monotonic_deadline_ns(clock, value))
    } else {
        Some(frame::timer::monotonic_ns().saturating_add(value))
    };
    let task = wake_target(p);
    let mut list = p.signals.timers.list.lock();
    let t = list.get_mut(&id).ok_or(Error::new(Errno::EINVAL))?;
    let old = current(t);
    disarm(t);
    t.interval = if deadline.is_some() { interval } else { 0 };
    if let Some(d) = deadline {
        arm(&p.signals.timers.fired, t, d, task);
    }
    Ok(old)
}

/// Sets the sigev_value of timer `id` (timer_create without a sigevent
/// passes the timer id).
pub fn set_value(p: &Process, id: i32, value: u64) {
    if let Some(t) = p.signals.timers.list.lock().get_mut(&id) {
        t.notify.value = value;
    }
}

/// timer_gettime: (remaining, interval) of timer `id`.
pub fn gettime(p: &Process, id: i32) -> Result<(u64, u64)> {
    p.signals.timers.list.lock().get(&id).map(current).ok_or(Error::new(Errno::EINVAL))
}

/// timer_getoverrun: the overrun count of the last delivered signal.
pub fn getoverrun(p: &Process, id: i32) -> Result<i32> {
    p.signals.timers.list.lock().get(&id).map(|t| t.overrun_last).ok_or(Error::new(Errno::EINVAL))
}

/// timer_delete.
pub fn delete(p: &Process, id: i32) -> Result<()> {
    let mut t = p.signals.timers.list.lock().remove(&id).ok_or(Error::new(Errno::EINVAL))?;
    disarm(&mut t);
    Ok(())
}

/// A timer signal was dequeued for delivery: remember its overrun.
pub fn delivered(p: &Process, info: &SigInfo) {
    if let Some(t) = p.signals.timers.list.lock().get_mut(&info.pid) {
        t.overrun_last = info.uid as i32;
    }
}

/// Handles the expirations the interrupt handler marked: counts missed
/// periods, re-arms periodic timers and generates (or overruns) signals.
pub fn run_expired(p: &Arc<Process>) {
    if !p.signals.timers.fired.swap(false, Ordering::AcqRel) {
        return;
    }
    let now = frame::timer::monotonic_ns();
    let task = wake_target(p);
    let mut due: Vec<(i32, Notify, u64)> = Vec::new();
    {
        let mut list = p.signals.timers.list.lock();
        for (&id, t) in list.iter_mut() {
            if t.frame_id == 0 || !t.expired.swap(false, Ordering::AcqRel) {
                continue;
            }
            t.frame_id = 0;
            let mut missed = 0;
            if t.interval != 0 {
                missed = now.saturating_sub(t.deadline) / t.interval;
                let next = t.deadline.saturating_add(t.interval.saturating_mul(missed + 1));
                arm(&p.signals.timers.fired, t, next, task.clone());
            }
            if t.notify.kind != SIGEV_NONE {
                due.push((id, t.notify, missed));
            }
        }
    }
    for (id, notify, missed) in due {
        send(p, id, notify, missed);
    }
}

/// Generates timer `id`'s signal, or adds to the overrun of the copy that
/// is still pending.
fn send(p: &Arc<Process>, id: i32, n: Notify, missed: u64) {
    let thread: Option<Arc<Thread>> = if n.kind == SIGEV_THREAD_ID {
        p.threads().into_iter().find(|t| t.tid() == n.tid)
    } else {
        None
    };
    let bump = |info: &mut SigInfo| {
        let total = (info.uid as u64).saturating_add(1 + missed).min(OVERRUN_MAX);
        info.uid = total as u32;
    };
    let queued = match &thread {
        Some(t) => t.signals.pending.lock().update_timer(id, bump),
        None => p.signals.shared.lock().update_timer(id, bump),
    };
    if queued {
        return;
    }
    let mut info = SigInfo::new(n.signo, SI_TIMER);
    info.pid = id; // si_timerid
    info.uid = missed.min(OVERRUN_MAX) as u32; // si_overrun
    info.status = n.value as u32 as i32; // si_value (low half)
    info.pad1 = (n.value >> 32) as u32 as i32;
    match thread {
        Some(t) => signal::send_to_thread(p, &t, info),
        None => signal::send_to_process(p, info),
    }
}
