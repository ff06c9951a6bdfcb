//! Clocks and sleeping.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::CpuKind;
use crate::process::posix_timer::{self, Notify};
use crate::process::signal::{RestartBlock, SIGALRM, wait_interruptible_deadline};
use crate::time::{self, ClockId, CpuClock, CpuTarget, Timespec};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (35, "nanosleep", sys_nanosleep),
    (96, "gettimeofday", sys_gettimeofday),
    (201, "time", sys_time),
    (228, "clock_gettime", sys_clock_gettime),
    (229, "clock_getres", sys_clock_getres),
    (230, "clock_nanosleep", sys_clock_nanosleep),
    (222, "timer_create", sys_timer_create),
    (223, "timer_settime", sys_timer_settime),
    (224, "timer_gettime", sys_timer_gettime),
    (225, "timer_getoverrun", sys_timer_getoverrun),
    (226, "timer_delete", sys_timer_delete),
    (219, "restart_syscall", sys_restart_syscall),
    (227, "clock_settime", sys_clock_settime),
    (164, "settimeofday", sys_settimeofday),
];

frame::pod_struct! {
    pub struct Timeval {
        pub sec: i64,
        pub usec: i64,
    }
}

/// The current value of `clock` for the caller; EINVAL for a CPU-time
/// clock whose process or thread cannot be read.
fn read_clock(ctx: &Context, clock: ClockId) -> Result<u64> {
    match clock {
        ClockId::Cpu(c) => c.read_ns(ctx.process, ctx.thread),
        other => Ok(time::now_ns(other)),
    }
}

fn sys_clock_gettime(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    let ts = Timespec::from_ns(read_clock(ctx, clock)?);
    ctx.write_val(a[1], &ts)?;
    Ok(0)
}

/// One timer tick.
const TICK_NS: u64 = 1_000_000_000 / frame::timer::TICK_HZ as u64;

fn sys_clock_getres(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    // Linux: CPU-time clocks are checked here too (clock_getcpuclockid(3)
    // relies on it); the "sched" ones count nanoseconds, the others ticks.
    let res = match clock {
        ClockId::Cpu(c) => {
            c.target(ctx.process, ctx.thread, false)?;
            if c.kind == CpuKind::Sched { 1 } else { TICK_NS }
        }
        c if c.is_coarse() => TICK_NS,
        _ => 1,
    };
    if a[1] != 0 {
        ctx.write_val(a[1], &Timespec::from_ns(res))?;
    }
    Ok(0)
}

/// Only CLOCK_REALTIME can be set, by a privileged caller (CAP_SYS_TIME);
/// an invalid time is EINVAL before the permission check, as on Linux.
fn set_wall_clock(ctx: &Context, ns: u64) -> Result<isize> {
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_TIME) {
        return Err(Error::new(Errno::EPERM));
    }
    time::set_realtime_ns(ns);
    Ok(0)
}

fn sys_clock_settime(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    let ts: Timespec = ctx.read_val(a[1])?;
    if clock != ClockId::Realtime {
        return Err(Error::new(Errno::EINVAL));
    }
    let ns = ts.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    set_wall_clock(ctx, ns)
}

fn sys_settimeofday(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[0] == 0 {
        // Only a time zone: Linux keeps it for FAT timestamps; nothing here
        // reads it, but it still needs the privilege.
        if a[1] != 0 {
            ctx.read_val::<[u32; 2]>(a[1])?;
        }
        return if ctx.process.creds().capable(crate::caps::CAP_SYS_TIME) { Ok(0) } else { Err(Error::new(Errno::EPERM)) };
    }
    let tv: Timeval = ctx.read_val(a[0])?;
    if a[1] != 0 {
        ctx.read_val::<[u32; 2]>(a[1])?;
    }
    if tv.sec < 0 || !(0..1_000_000).contains(&tv.usec) {
        return Err(Error::new(Errno::EINVAL));
    }
    set_wall_clock(ctx, (tv.sec as u64).saturating_mul(1_000_000_000).saturating_add(tv.usec as u64 * 1000))
}

fn sys_gettimeofday(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[0] != 0 {
        let ns = time::now_ns(ClockId::Realtime);
        let tv = Timeval { sec: (ns / 1_000_000_000) as i64, usec: ((ns % 1_000_000_000) / 1000) as i64 };
        ctx.write_val(a[0], &tv)?;
    }
    if a[1] != 0 {
        ctx.write_val(a[1], &[0u32; 2])?; // struct timezone: UTC
    }
    Ok(0)
}

fn sys_time(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let secs = (time::now_ns(ClockId::Realtime) / 1_000_000_000) as i64;
    if a[0] != 0 {
        ctx.write_val(a[0], &secs)?;
    }
    Ok(secs as isize)
}

/// Sleeps until `deadline` (monotonic ns). A signal cuts the sleep short;
/// the remaining time goes to `rem_ptr` (if not 0). A handler then sees
/// EINTR (nanosleep-family calls are never restarted after a handler,
/// signal(7)); without one (a stop and continue) a relative sleep goes on
/// to the same deadline through restart_syscall, and an absolute one
/// (`relative` false) is simply restarted.
fn sleep_until(ctx: &Context, deadline: u64, rem_ptr: u64, relative: bool) -> Result<isize> {
    let wq = frame::sync::WaitQueue::new();
    match wait_interruptible_deadline(ctx.process, ctx.thread, &wq, || None::<()>, deadline) {
        Ok(_) => Ok(0),
        Err(_) if !relative => Err(Error::new(Errno::ERESTARTNOHAND)),
        Err(_) => {
            if rem_ptr != 0 {
                let left = deadline.saturating_sub(frame::timer::monotonic_ns());
                ctx.write_val(rem_ptr, &Timespec::from_ns(left))?;
            }
            *ctx.thread.signals.restart.lock() = Some(RestartBlock::Sleep { deadline, rem: rem_ptr });
            Err(Error::new(Errno::ERESTART_RESTARTBLOCK))
        }
    }
}

/// restart_syscall(2): continues the interrupted call recorded in the
/// thread's restart block (EINTR if there is none).
fn sys_restart_syscall(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    let block = ctx.thread.signals.restart.lock().take();
    match block {
        Some(RestartBlock::Sleep { deadline, rem }) => sleep_until(ctx, deadline, rem, true),
        Some(RestartBlock::Poll { fds, nfds, deadline }) => super::fs::restartable_poll(ctx, fds, nfds, deadline),
        None => Err(Error::new(Errno::EINTR)),
    }
}

fn sys_nanosleep(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let req: Timespec = ctx.read_val(a[0])?;
    let ns = req.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    sleep_until(ctx, frame::timer::monotonic_ns().saturating_add(ns), a[1], true)
}

const TIMER_ABSTIME: u64 = 1;

/// clock_nanosleep(2), with Linux's order of checks: an unknown clock is
/// EINVAL; a clock that cannot be slept on EOPNOTSUPP (the raw and coarse
/// clocks, CLOCK_THREAD_CPUTIME_ID, and the alarm clocks, there being no
/// wake-up alarm device, after the request is read); then the request
/// (EFAULT, EINVAL); then a CPU clock's owner (EINVAL for the caller's
/// own thread, whose clock cannot advance while it sleeps). Flags other
/// than TIMER_ABSTIME are ignored.
fn sys_clock_nanosleep(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    const CLOCK_REALTIME_ALARM: i32 = 8;
    const CLOCK_BOOTTIME_ALARM: i32 = 9;
    let raw = a[0] as i32;
    let read_request = |ctx: &Context| -> Result<u64> {
        let req: Timespec = ctx.read_val(a[2])?;
        req.to_ns().ok_or(Error::new(Errno::EINVAL))
    };
    if raw == CLOCK_REALTIME_ALARM || raw == CLOCK_BOOTTIME_ALARM {
        read_request(ctx)?;
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    // A negative id is a CPU clock (the sleep is possible, the request is
    // read before the id is checked) unless it names a descriptor's clock
    // (low bits 3), which cannot be slept on.
    const CLOCKFD: i32 = 3;
    let ns = if raw < 0 {
        if raw & 7 == CLOCKFD {
            return Err(Error::new(Errno::EOPNOTSUPP));
        }
        let ns = read_request(ctx)?;
        ClockId::from_raw(raw)?;
        ns
    } else {
        0
    };
    let clock = ClockId::from_raw(raw)?;
    let sleepable = matches!(clock, ClockId::Cpu(_) | ClockId::Realtime | ClockId::Monotonic | ClockId::Boottime | ClockId::Tai);
    if !sleepable || raw == CLOCK_THREAD_CPUTIME_ID {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    let ns = if raw < 0 { ns } else { read_request(ctx)? };
    if let ClockId::Cpu(c) = clock
        && c.per_thread
        && (c.pid == 0 || c.pid == ctx.thread.tid())
    {
        return Err(Error::new(Errno::EINVAL));
    }
    let abs = a[1] & TIMER_ABSTIME != 0;
    let rem = if abs { 0 } else { a[3] };
    if let ClockId::Cpu(c) = clock {
        c.target(ctx.process, ctx.thread, false)?;
        let start = c.read_ns(ctx.process, ctx.thread)?;
        let target = if abs { ns } else { start.saturating_add(ns) };
        return sleep_until_cpu(ctx, c, target, rem);
    }
    let deadline = if abs {
        time::monotonic_deadline_ns(clock, ns)
    } else {
        frame::timer::monotonic_ns().saturating_add(ns)
    };
    sleep_until(ctx, deadline, rem, !abs)
}

frame::pod_struct! {
    /// struct sigevent, as far as the kernel reads it.
    pub struct SigEvent {
        pub value: u64,
        pub signo: i32,
        pub notify: i32,
        pub tid: i32,
        pub pad: [i32; 11],
    }
}

frame::pod_struct! {
    pub struct ItimerSpec {
        pub interval: Timespec,
        pub value: Timespec,
    }
}

fn timer_id(raw: u64) -> Result<i32> {
    i32::try_from(raw as i64).map_err(|_| Error::new(Errno::EINVAL))
}

fn sys_timer_create(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    const SIGEV_THREAD: i32 = 2;
    let notify = if a[1] == 0 {
        // No sigevent: SIGALRM with the timer id as the value (fixed below).
        None
    } else {
        let ev: SigEvent = ctx.read_val(a[1])?;
        // The kernel treats SIGEV_THREAD (done by libc) as SIGEV_SIGNAL.
        let kind = if ev.notify == SIGEV_THREAD { posix_timer::SIGEV_SIGNAL } else { ev.notify };
        let signo = usize::try_from(ev.signo).unwrap_or(usize::MAX);
        Some(Notify { kind, signo, value: ev.value, tid: ev.tid as u32 })
    };
    let n = notify.unwrap_or(Notify { kind: posix_timer::SIGEV_SIGNAL, signo: SIGALRM, value: 0, tid: 0 });
    let id = posix_timer::create(ctx.process, a[0] as i32, n)?;
    if notify.is_none() {
        posix_timer::set_value(ctx.process, id, id as u64);
    }
    if let Err(e) = ctx.write_val(a[2], &id) {
        let _ = posix_timer::delete(ctx.process, id);
        return Err(e);
    }
    Ok(0)
}

pub(crate) fn itimerspec(remaining: u64, interval: u64) -> ItimerSpec {
    ItimerSpec { interval: Timespec::from_ns(interval), value: Timespec::from_ns(remaining) }
}

fn sys_timer_settime(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let id = timer_id(a[0])?;
    // Linux ignores flags other than TIMER_ABSTIME here.
    if a[2] == 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let new: ItimerSpec = ctx.read_val(a[2])?;
    let value = new.value.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    let interval = new.interval.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    // Check the old-value pointer first: a fault must not leave the
    // timer changed.
    if a[3] != 0 {
        let (r, i) = posix_timer::gettime(ctx.process, id)?;
        ctx.write_val(a[3], &itimerspec(r, i))?;
    }
    let (r, i) = posix_timer::settime(ctx.process, id, value, interval, a[1] & TIMER_ABSTIME != 0)?;
    if a[3] != 0 {
        ctx.write_val(a[3], &itimerspec(r, i))?;
    }
    Ok(0)
}

fn sys_timer_gettime(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (r, i) = posix_timer::gettime(ctx.process, timer_id(a[0])?)?;
    ctx.write_val(a[1], &itimerspec(r, i))?;
    Ok(0)
}

fn sys_timer_getoverrun(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(posix_timer::getoverrun(ctx.process, timer_id(a[0])?)? as isize)
}

fn sys_timer_delete(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    posix_timer::delete(ctx.process, timer_id(a[0])?)?;
    Ok(0)
}
/// Sleeps until CPU-time clock `clock` reaches `target`, looking again
/// every tick at most; ends early (as Linux's disarmed timer) if what the
/// clock reads is gone (exited). A signal cuts the sleep short with EINTR
/// and the CPU time left.
fn sleep_until_cpu(ctx: &Context, clock: CpuClock, target: u64, rem_ptr: u64) -> Result<isize> {
    loop {
        let gone = match clock.target(ctx.process, ctx.thread, false) {
            Ok(CpuTarget::Process(p)) => p.exit_status().is_some(),
            Ok(CpuTarget::Thread(_)) => false,
            Err(_) => true,
        };
        let now = clock.read_ns(ctx.process, ctx.thread).unwrap_or(target);
        if gone || now >= target {
            return Ok(0);
        }
        let deadline = frame::timer::monotonic_ns().saturating_add((target - now).min(TICK_NS));
        let wq = frame::sync::WaitQueue::new();
        if wait_interruptible_deadline(ctx.process, ctx.thread, &wq, || None::<()>, deadline).is_err() {
            if rem_ptr != 0 {
                let now = clock.read_ns(ctx.process, ctx.thread).unwrap_or(target);
                ctx.write_val(rem_ptr, &Timespec::from_ns(target.saturating_sub(now)))?;
            }
            return Err(Error::new(Errno::EINTR));
        }
    }
}
