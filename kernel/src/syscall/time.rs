//! Clocks and sleeping.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::signal::{wait_interruptible_deadline, RestartBlock};
use crate::time::{self, ClockId, Timespec};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (35, "nanosleep", sys_nanosleep),
    (96, "gettimeofday", sys_gettimeofday),
    (201, "time", sys_time),
    (228, "clock_gettime", sys_clock_gettime),
    (229, "clock_getres", sys_clock_getres),
    (230, "clock_nanosleep", sys_clock_nanosleep),
    (219, "restart_syscall", sys_restart_syscall),
];

frame::pod_struct! {
    pub struct Timeval {
        pub sec: i64,
        pub usec: i64,
    }
}

fn sys_clock_gettime(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    let ts = Timespec::from_ns(time::now_ns(clock, ctx.process));
    ctx.write_val(a[1], &ts)?;
    Ok(0)
}

fn sys_clock_getres(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    if a[1] != 0 {
        let res = if clock.is_coarse() { 10_000_000 } else { 1 };
        ctx.write_val(a[1], &Timespec::from_ns(res))?;
    }
    Ok(0)
}

fn sys_gettimeofday(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[0] != 0 {
        let ns = time::now_ns(ClockId::Realtime, ctx.process);
        let tv = Timeval { sec: (ns / 1_000_000_000) as i64, usec: ((ns % 1_000_000_000) / 1000) as i64 };
        ctx.write_val(a[0], &tv)?;
    }
    if a[1] != 0 {
        ctx.write_val(a[1], &[0u32; 2])?; // struct timezone: UTC
    }
    Ok(0)
}

fn sys_time(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let secs = (time::now_ns(ClockId::Realtime, ctx.process) / 1_000_000_000) as i64;
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
        None => Err(Error::new(Errno::EINTR)),
    }
}

fn sys_nanosleep(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let req: Timespec = ctx.read_val(a[0])?;
    let ns = req.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    sleep_until(ctx, frame::timer::monotonic_ns().saturating_add(ns), a[1], true)
}

const TIMER_ABSTIME: u64 = 1;

fn sys_clock_nanosleep(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let clock = ClockId::from_raw(a[0] as i32)?;
    if matches!(clock, ClockId::ThreadCputime | ClockId::ThreadCpu(_)) {
        return Err(Error::new(Errno::EINVAL));
    }
    if !matches!(clock, ClockId::Realtime | ClockId::Monotonic | ClockId::Boottime) {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    if a[1] & !TIMER_ABSTIME != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let req: Timespec = ctx.read_val(a[2])?;
    let ns = req.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    let now_mono = frame::timer::monotonic_ns();
    let deadline = if a[1] & TIMER_ABSTIME != 0 {
        let now = time::now_ns(clock, ctx.process);
        now_mono.saturating_add(ns.saturating_sub(now))
    } else {
        now_mono.saturating_add(ns)
    };
    let relative = a[1] & TIMER_ABSTIME == 0;
    sleep_until(ctx, deadline, if relative { a[3] } else { 0 }, relative)
}
