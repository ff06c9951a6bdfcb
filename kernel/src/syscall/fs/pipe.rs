//! pipe(2) and pipe2.

use alloc::sync::Arc;

use super::fd_limit;
use crate::error::{Errno, Error, Result};
use crate::fs::pipe::new_pipe;
use crate::fs::{File, O_CLOEXEC, O_DIRECT, O_NONBLOCK};
use crate::syscall::{Context, SyscallArgs};

/// Installs `files` on the lowest free descriptors, all or none (EMFILE).
pub(super) fn install_all<const N: usize>(
    ctx: &Context,
    files: [Arc<File>; N],
    cloexec: bool,
) -> Result<[i32; N]> {
    let limit = fd_limit(ctx);
    let shared_files = ctx.process.files();
    let mut table = shared_files.lock();
    let mut fds = [-1; N];
    for (i, file) in files.into_iter().enumerate() {
        match table.insert(file, cloexec, limit) {
            Ok(fd) => fds[i] = fd,
            Err(e) => {
                let undo: alloc::vec::Vec<_> = fds[..i]
                    .iter()
                    .filter_map(|&fd| table.remove(fd).ok())
                    .collect();
                drop(table);
                drop(undo);
                return Err(e);
            }
        }
    }
    Ok(fds)
}

fn pipe2(ctx: &Context, fds_addr: u64, flags: u32) -> Result<isize> {
    // O_NOTIFICATION_PIPE is not supported.
    if flags & !(O_CLOEXEC | O_NONBLOCK | O_DIRECT) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let cred = super::caller_cred(ctx);
    let (reader, writer) = new_pipe(flags, (cred.uid, cred.gid))?;
    let fds = install_all(ctx, [reader, writer], flags & O_CLOEXEC != 0)?;
    let bytes = [fds[0].to_ne_bytes(), fds[1].to_ne_bytes()].concat();
    if let Err(e) = ctx.write_bytes(fds_addr, &bytes) {
        // Linux closes both descriptors again on EFAULT.
        let closed: alloc::vec::Vec<_> = {
            let shared_files = ctx.process.files();
            let mut table = shared_files.lock();
            fds.iter().filter_map(|&fd| table.remove(fd).ok()).collect()
        };
        drop(closed);
        return Err(e);
    }
    Ok(0)
}

pub fn sys_pipe(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    pipe2(ctx, args[0], 0)
}

pub fn sys_pipe2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    pipe2(ctx, args[0], args[1] as u32)
}
