//! Clock ids and the user-visible time structures.

use alloc::sync::Arc;

use crate::error::{Errno, Error, Result};
use crate::process::{CpuKind, Pid, Process, Thread};

frame::pod_struct! {
    #[derive(Debug)]
    pub struct Timespec {
        pub sec: i64,
        pub nsec: i64,
    }
}

impl Timespec {
    pub fn from_ns(ns: u64) -> Timespec {
        Timespec { sec: (ns / 1_000_000_000) as i64, nsec: (ns % 1_000_000_000) as i64 }
    }

    /// Nanoseconds, or `None` if the value is invalid (negative or
    /// `nsec` outside `0..1e9`, as nanosleep(2) requires).
    pub fn to_ns(&self) -> Option<u64> {
        if self.sec < 0 || !(0..1_000_000_000).contains(&self.nsec) {
            return None;
        }
        Some((self.sec as u64).saturating_mul(1_000_000_000).saturating_add(self.nsec as u64))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockId {
    Realtime,
    Monotonic,
    MonotonicRaw,
    RealtimeCoarse,
    MonotonicCoarse,
    Boottime,
    /// International atomic time: no leap-second offset is kept, so it
    /// reads as CLOCK_REALTIME (Linux's TAI offset is 0 until set).
    Tai,
    /// A CPU-time clock: CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID,
    /// or one made by clock_getcpuclockid(3)/pthread_getcpuclockid(3).
    Cpu(CpuClock),
}

/// A CPU-time clock as Linux encodes it in a negative clock id:
/// `~pid << 3 | per-thread bit (4) | kind (0 PROF, 1 VIRT, 2 SCHED)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuClock {
    /// The process or thread id; 0 for the caller's.
    pub pid: Pid,
    pub per_thread: bool,
    pub kind: CpuKind,
}

/// Whose CPU time a CPU-time clock reads.
pub enum CpuTarget {
    Process(Arc<Process>),
    Thread(Arc<Thread>),
}

impl CpuClock {
    /// The process or thread the clock reads, as Linux finds it: id 0 is
    /// the caller (its thread or its process); a thread clock only names a
    /// thread of the caller's own process; a process clock names a process
    /// (zombies included) or, for reading the time only, the caller's own
    /// thread id. EINVAL otherwise.
    pub fn target(&self, process: &Arc<Process>, thread: &Arc<Thread>, gettime: bool) -> Result<CpuTarget> {
        let einval = || Error::new(Errno::EINVAL);
        if self.per_thread {
            if self.pid == 0 || self.pid == thread.tid() {
                return Ok(CpuTarget::Thread(thread.clone()));
            }
            let t = process.threads().into_iter().find(|t| t.tid() == self.pid).ok_or_else(einval)?;
            return Ok(CpuTarget::Thread(t));
        }
        if self.pid == 0 || self.pid == process.pid() || (gettime && self.pid == thread.tid()) {
            return Ok(CpuTarget::Process(process.clone()));
        }
        crate::process::find_process(self.pid).map(CpuTarget::Process).ok_or_else(einval)
    }

    /// The clock's value in nanoseconds.
    pub fn read_ns(&self, process: &Arc<Process>, thread: &Arc<Thread>) -> Result<u64> {
        Ok(match self.target(process, thread, true)? {
            CpuTarget::Process(p) => p.cpu_clock_ns(self.kind),
            CpuTarget::Thread(t) => t.cpu_clock_ns(self.kind),
        })
    }
}

impl ClockId {
    /// The clock a clock id names, or EINVAL. Which process or thread a
    /// CPU-time clock reads is checked when it is used ([`CpuClock::target`]).
    pub fn from_raw(id: i32) -> Result<ClockId> {
        let cpu = |per_thread, kind| ClockId::Cpu(CpuClock { pid: 0, per_thread, kind });
        Ok(match id {
            0 => ClockId::Realtime,
            1 => ClockId::Monotonic,
            2 => cpu(false, CpuKind::Sched),
            3 => cpu(true, CpuKind::Sched),
            4 => ClockId::MonotonicRaw,
            5 => ClockId::RealtimeCoarse,
            6 => ClockId::MonotonicCoarse,
            7 => ClockId::Boottime,
            11 => ClockId::Tai,
            id if id < 0 => {
                let kind = match id & 3 {
                    0 => CpuKind::Prof,
                    1 => CpuKind::Virt,
                    2 => CpuKind::Sched,
                    _ => return Err(Error::new(Errno::EINVAL)),
                };
                ClockId::Cpu(CpuClock { pid: !(id >> 3) as Pid, per_thread: id & 4 != 0, kind })
            }
            _ => return Err(Error::new(Errno::EINVAL)),
        })
    }

    pub fn is_coarse(&self) -> bool {
        matches!(self, ClockId::RealtimeCoarse | ClockId::MonotonicCoarse)
    }
}

/// How far clock_settime/settimeofday moved the wall clock from the RTC's
/// reading at boot, in nanoseconds.
static REALTIME_SHIFT_NS: core::sync::atomic::AtomicI64 = core::sync::atomic::AtomicI64::new(0);

/// The wall-clock time at boot, as the system clock now has it (the RTC's
/// reading, moved by every setting of the clock since).
pub fn realtime_at_boot_ns() -> u64 {
    let shift = REALTIME_SHIFT_NS.load(core::sync::atomic::Ordering::Relaxed);
    frame::timer::realtime_at_boot_ns().saturating_add_signed(shift)
}

/// Sets CLOCK_REALTIME to `ns` since the epoch (clock_settime(2)); the
/// monotonic clocks do not move.
pub fn set_realtime_ns(ns: u64) {
    let boot = ns.saturating_sub(frame::timer::monotonic_ns());
    let shift = boot as i128 - i128::from(frame::timer::realtime_at_boot_ns());
    let shift = shift.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    REALTIME_SHIFT_NS.store(shift, core::sync::atomic::Ordering::Relaxed);
    crate::vdso::update_realtime();
}

/// How far a clock that is not a CPU-time clock is ahead of the monotonic
/// clock, in nanoseconds (the wall-clock time at boot for the realtime
/// clocks, 0 for the others).
pub fn offset_from_monotonic_ns(clock: ClockId) -> u64 {
    match clock {
        ClockId::Realtime | ClockId::RealtimeCoarse | ClockId::Tai => realtime_at_boot_ns(),
        _ => 0,
    }
}

/// The monotonic deadline of an absolute time `abs_ns` on `clock`, or now
/// if that time has passed. The clock's offset is applied directly (not
/// the difference of two clock readings, which would put the deadline
/// early by the time between them), so a timer armed for it cannot end
/// before `clock` reads `abs_ns`.
pub fn monotonic_deadline_ns(clock: ClockId, abs_ns: u64) -> u64 {
    abs_ns.saturating_sub(offset_from_monotonic_ns(clock)).max(frame::timer::monotonic_ns())
}

/// The current value of a clock that is not a CPU-time clock, in
/// nanoseconds (CPU-time clocks read 0 here: see [`CpuClock::read_ns`]).
pub fn now_ns(clock: ClockId) -> u64 {
    match clock {
        ClockId::Cpu(_) => 0,
        _ => offset_from_monotonic_ns(clock) + frame::timer::monotonic_ns(),
    }
}

frame::pod_struct! {
    /// `struct rusage` (144 bytes): two timevals and 14 longs (maxrss,
    /// ixrss, idrss, isrss, minflt, majflt, nswap, inblock, oublock,
    /// msgsnd, msgrcv, nsignals, nvcsw, nivcsw).
    pub struct Rusage {
        pub utime_sec: i64,
        pub utime_usec: i64,
        pub stime_sec: i64,
        pub stime_usec: i64,
        pub rest: [i64; 14],
    }
}
const _: () = assert!(core::mem::size_of::<Rusage>() == 144);

impl Rusage {
    pub fn from_usage(u: &crate::process::Usage) -> Rusage {
        let mut r = <Rusage as frame::Pod>::new_zeroed();
        r.utime_sec = (u.utime_ns / 1_000_000_000) as i64;
        r.utime_usec = ((u.utime_ns % 1_000_000_000) / 1000) as i64;
        r.stime_sec = (u.stime_ns / 1_000_000_000) as i64;
        r.stime_usec = ((u.stime_ns % 1_000_000_000) / 1000) as i64;
        let field = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        r.rest[0] = field(u.maxrss_kb);
        r.rest[4] = field(u.minflt);
        r.rest[5] = field(u.majflt);
        r.rest[12] = field(u.nvcsw);
        r.rest[13] = field(u.nivcsw);
        r
    }
}
