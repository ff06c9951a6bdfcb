//! epoll_create(2)/epoll_create1, epoll_ctl(2), and epoll_wait(2) with
//! epoll_pwait and epoll_pwait2.

use alloc::vec::Vec;

use super::pipe::install_all;
use super::poll::{read_sigmask, read_timeout, with_sigmask};
use super::{CallerCtx, fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::O_CLOEXEC;
use crate::fs::epoll::{
    CtlOp, EPOLLERR, EPOLLET, EPOLLEXCLUSIVE, EPOLLHUP, EPOLLWAKEUP, as_epoll, new_epoll,
};
use crate::syscall::{Context, SyscallArgs};

const EPOLL_CTL_ADD: u64 = 1;
const EPOLL_CTL_DEL: u64 = 2;
const EPOLL_CTL_MOD: u64 = 3;
/// `struct epoll_event` is packed on x86-64: u32 events, u64 data.
const EVENT_SIZE: usize = 12;
/// Linux's EP_MAX_EVENTS.
const MAX_EVENTS: usize = i32::MAX as usize / EVENT_SIZE;
/// What EPOLLEXCLUSIVE may be combined with (epoll_ctl(2), EINVAL).
const EXCLUSIVE_OK: u32 = 0x1 | 0x4 | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET | EPOLLEXCLUSIVE;

fn create(ctx: &Context, flags: u32) -> Result<isize> {
    if flags & !O_CLOEXEC != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let [fd] = install_all(ctx, [new_epoll()], flags & O_CLOEXEC != 0)?;
    Ok(fd as isize)
}

pub fn sys_epoll_create(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    if args[0] as i32 <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    create(ctx, 0)
}

pub fn sys_epoll_create1(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    create(ctx, args[0] as u32)
}

pub fn sys_epoll_ctl(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (epfd, op, fd, event_addr) = (fd_arg(args[0]), args[1], fd_arg(args[2]), args[3]);
    // The checks come in Linux's order (do_epoll_ctl).
    let (events, data) = if op == EPOLL_CTL_DEL {
        (0, 0)
    } else {
        let raw: [u8; EVENT_SIZE] = ctx.read_val(event_addr)?;
        let (e, d) = raw.split_at(4);
        let events = u32::from_ne_bytes([e[0], e[1], e[2], e[3]]);
        let data = u64::from_ne_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
        (events, data)
    };
    let ep_file = get_io_file(ctx, epfd)?;
    let target = get_io_file(ctx, fd)?;
    if !target.ops().is_some_and(|o| o.can_poll()) {
        // Regular files, directories, /dev/null and the like cannot be
        // polled.
        return Err(Error::new(Errno::EPERM));
    }
    let ep = as_epoll(&ep_file)
        .filter(|_| !alloc::sync::Arc::ptr_eq(&ep_file, &target))
        .ok_or(Error::new(Errno::EINVAL))?;
    let op = match op {
        EPOLL_CTL_ADD => CtlOp::Add,
        EPOLL_CTL_MOD => CtlOp::Mod,
        EPOLL_CTL_DEL => CtlOp::Del,
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    if events & EPOLLEXCLUSIVE != 0
        && op == CtlOp::Add
        && (as_epoll(&target).is_some() || events & !EXCLUSIVE_OK != 0)
    {
        return Err(Error::new(Errno::EINVAL));
    }
    ep.ctl(op, fd, &target, events, data)?;
    Ok(0)
}

/// epoll_wait and friends once the timeout is known.
fn wait(ctx: &Context, args: &SyscallArgs, deadline: Option<u64>) -> Result<isize> {
    let (epfd, events_addr, max) = (fd_arg(args[0]), args[1], args[2] as i32);
    // Linux's order: the descriptor (EBADF), the count (EINVAL), the
    // range of the buffer (EFAULT), then whether it is an epoll (EINVAL).
    let ep_file = get_io_file(ctx, epfd)?;
    let max = usize::try_from(max)
        .ok()
        .filter(|m| (1..=MAX_EVENTS).contains(m))
        .ok_or(Error::new(Errno::EINVAL))?;
    if !crate::syscall::access_ok(events_addr, (max * EVENT_SIZE) as u64) {
        return Err(Error::new(Errno::EFAULT));
    }
    let ep = as_epoll(&ep_file).ok_or(Error::new(Errno::EINVAL))?;
    let ready = ep.wait(max, deadline, &CallerCtx(ctx))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(ready.len() * EVENT_SIZE)
        .map_err(|_| Error::new(Errno::ENOMEM))?;
    for (events, data) in &ready {
        bytes.extend_from_slice(&events.to_ne_bytes());
        bytes.extend_from_slice(&data.to_ne_bytes());
    }
    ctx.write_bytes(events_addr, &bytes)?;
    Ok(ready.len() as isize)
}

/// A timeout in milliseconds (negative: forever) as a deadline.
fn ms_deadline(timeout: u64) -> Option<u64> {
    let ms = timeout as i32;
    (ms >= 0).then(|| frame::timer::monotonic_ns().saturating_add(ms as u64 * 1_000_000))
}

pub fn sys_epoll_wait(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    wait(ctx, args, ms_deadline(args[3]))
}

pub fn sys_epoll_pwait(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let mask = read_sigmask(ctx, args[4], args[5])?;
    let deadline = ms_deadline(args[3]);
    with_sigmask(ctx, mask, || wait(ctx, args, deadline))
}

pub fn sys_epoll_pwait2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let deadline = read_timeout(ctx, args[3], false)?;
    let mask = read_sigmask(ctx, args[4], args[5])?;
    with_sigmask(ctx, mask, || wait(ctx, args, deadline))
}
