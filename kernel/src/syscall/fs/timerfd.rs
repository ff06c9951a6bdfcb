//! timerfd_create(2), timerfd_settime and timerfd_gettime.

use super::pipe::install_all;
use super::{fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::timerfd::{
    TFD_CLOEXEC, TFD_NONBLOCK, TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET, as_timerfd, new_timerfd,
    timerfd_clock,
};
use crate::syscall::time::{ItimerSpec, itimerspec};
use crate::syscall::{Context, SyscallArgs};

pub fn sys_timerfd_create(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let clock = timerfd_clock(args[0] as i32)?;
    let flags = args[1] as u32;
    if args[1] > u64::from(u32::MAX) || flags & !(TFD_CLOEXEC | TFD_NONBLOCK) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let file = new_timerfd(clock, flags);
    let [fd] = install_all(ctx, [file], flags & TFD_CLOEXEC != 0)?;
    Ok(fd as isize)
}

pub fn sys_timerfd_settime(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    // Linux's order: EFAULT, then EINVAL for flags and times, then EBADF,
    // then EINVAL for a file that is no timerfd.
    let new: ItimerSpec = ctx.read_val(args[2])?;
    let flags = args[1];
    if flags & !u64::from(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let value = new.value.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    let interval = new.interval.to_ns().ok_or(Error::new(Errno::EINVAL))?;
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    let tfd = as_timerfd(&file).ok_or(Error::new(Errno::EINVAL))?;
    // The realtime clock is never set here, so CANCEL_ON_SET never fires.
    let (r, i) = tfd.settime(value, interval, flags as u32);
    if args[3] != 0 {
        ctx.write_val(args[3], &itimerspec(r, i))?;
    }
    Ok(0)
}

pub fn sys_timerfd_gettime(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    let tfd = as_timerfd(&file).ok_or(Error::new(Errno::EINVAL))?;
    let (r, i) = tfd.gettime();
    ctx.write_val(args[1], &itimerspec(r, i))?;
    Ok(0)
}
