//! eventfd(2) and eventfd2.

use super::pipe::install_all;
use crate::error::{Errno, Error, Result};
use crate::fs::eventfd::{EFD_CLOEXEC, EFD_NONBLOCK, EFD_SEMAPHORE, new_eventfd};
use crate::syscall::{Context, SyscallArgs};

fn eventfd2(ctx: &Context, initval: u32, flags: u32) -> Result<isize> {
    if flags & !(EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let file = new_eventfd(initval, flags);
    let [fd] = install_all(ctx, [file], flags & EFD_CLOEXEC != 0)?;
    Ok(fd as isize)
}

pub fn sys_eventfd(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    eventfd2(ctx, args[0] as u32, 0)
}

pub fn sys_eventfd2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    eventfd2(ctx, args[0] as u32, args[1] as u32)
}
