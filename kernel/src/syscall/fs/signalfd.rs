//! signalfd(2) and signalfd4.

use super::pipe::install_all;
use super::{fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::signalfd::{SFD_CLOEXEC, SFD_NONBLOCK, as_signalfd, new_signalfd};
use crate::process::signal::UNBLOCKABLE;
use crate::syscall::{Context, SyscallArgs};

fn signalfd4(ctx: &Context, fd: i32, mask_ptr: u64, size: u64, flags: u64) -> Result<isize> {
    if size != 8 || flags & !u64::from(SFD_CLOEXEC | SFD_NONBLOCK) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let mask = ctx.read_val::<u64>(mask_ptr)? & !UNBLOCKABLE;
    if fd == -1 {
        let file = new_signalfd(mask, flags as u32);
        let [fd] = install_all(ctx, [file], flags & u64::from(SFD_CLOEXEC) != 0)?;
        return Ok(fd as isize);
    }
    let file = get_io_file(ctx, fd)?;
    as_signalfd(&file).ok_or(Error::new(Errno::EINVAL))?.set_mask(mask);
    Ok(fd as isize)
}

pub fn sys_signalfd(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    signalfd4(ctx, fd_arg(args[0]), args[1], args[2], 0)
}

pub fn sys_signalfd4(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    signalfd4(ctx, fd_arg(args[0]), args[1], args[2], args[3])
}
