//! Clock ids and the user-visible time structures.

use crate::error::{Errno, Error, Result};
use crate::process::Process;

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
    ProcessCputime,
    ThreadCputime,
    MonotonicRaw,
    RealtimeCoarse,
    MonotonicCoarse,
    Boottime,
    /// clock_getcpuclockid(3): another process's CPU clock.
    ProcessCpu(u32),
    /// pthread_getcpuclockid(3): a thread's CPU clock.
    ThreadCpu(u32),
}

impl ClockId {
    pub fn from_raw(id: i32) -> Result<ClockId> {
        Ok(match id {
            0 => ClockId::Realtime,
            1 => ClockId::Monotonic,
            2 => ClockId::ProcessCputime,
            3 => ClockId::ThreadCputime,
            4 => ClockId::MonotonicRaw,
            5 => ClockId::RealtimeCoarse,
            6 => ClockId::MonotonicCoarse,
            7 => ClockId::Boottime,
            // Dynamic CPU clocks: ~pid << 3 | per-thread bit (4) | type;
            // only the "sched" type (2) is a real CPU-time clock here.
            id if id < 0 => {
                let pid = !(id >> 3) as u32;
                if id & 3 != 2 || pid == 0 {
                    return Err(Error::new(Errno::EINVAL));
                }
                let exists = if id & 4 != 0 {
                    crate::process::find_thread(pid).is_some()
                } else {
                    crate::process::find_process(pid).is_some()
                };
                if !exists {
                    return Err(Error::new(Errno::EINVAL));
                }
                if id & 4 != 0 { ClockId::ThreadCpu(pid) } else { ClockId::ProcessCpu(pid) }
            }
            _ => return Err(Error::new(Errno::EINVAL)),
        })
    }

    pub fn is_coarse(&self) -> bool {
        matches!(self, ClockId::RealtimeCoarse | ClockId::MonotonicCoarse)
    }
}

/// The current value of `clock` in nanoseconds.
pub fn now_ns(clock: ClockId, process: &Process) -> u64 {
    let mono = frame::timer::monotonic_ns();
    match clock {
        ClockId::Realtime | ClockId::RealtimeCoarse => frame::timer::realtime_at_boot_ns() + mono,
        ClockId::Monotonic | ClockId::MonotonicRaw | ClockId::MonotonicCoarse | ClockId::Boottime => mono,
        ClockId::ProcessCputime => process.cpu_time_ns(),
        ClockId::ThreadCputime => frame::task::try_current().map_or(0, |t| t.cpu_time_ns()),
        ClockId::ProcessCpu(pid) => crate::process::find_process(pid).map_or(0, |p| p.cpu_time_ns()),
        ClockId::ThreadCpu(tid) => crate::process::find_thread(tid).map_or(0, |(_, t)| t.cpu_time_ns()),
    }
}

frame::pod_struct! {
    /// `struct rusage` (144 bytes): two timevals and 14 longs.
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
    pub fn from_cpu_ns(user_ns: u64, sys_ns: u64) -> Rusage {
        let mut r = <Rusage as frame::Pod>::new_zeroed();
        r.utime_sec = (user_ns / 1_000_000_000) as i64;
        r.utime_usec = ((user_ns % 1_000_000_000) / 1000) as i64;
        r.stime_sec = (sys_ns / 1_000_000_000) as i64;
        r.stime_usec = ((sys_ns % 1_000_000_000) / 1000) as i64;
        r
    }
}
