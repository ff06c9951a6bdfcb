//! Reading file attributes: stat(2) family, statx(2), statfs(2), and
//! access(2)/faccessat.

use alloc::sync::Arc;

use super::{
    AT_EACCESS, AT_EMPTY_PATH, AT_FDCWD, AT_NO_AUTOMOUNT, AT_SYMLINK_NOFOLLOW, fd_arg, fs_context,
    get_file, resolve_at, resolve_at_as,
};
use crate::error::{Errno, Error, Result};
use crate::fs::{Cred, File, FileType, Inode, MAY_EXEC, MAY_WRITE, STATX_RESERVED, Stat, Statx, mount};
use crate::syscall::{Context, SyscallArgs};

/// An fd's inode for calls that change or read attributes (EBADF for bad
/// descriptors; O_PATH ones are fine for fstat but not for changes).
pub(super) fn fd_inode(ctx: &Context, fd: i32, allow_path_only: bool) -> Result<Arc<dyn Inode>> {
    let file: Arc<File> = get_file(ctx, fd)?;
    if file.is_path_only() && !allow_path_only {
        return Err(Error::new(Errno::EBADF));
    }
    Ok(file.node().clone())
}

fn write_stat(ctx: &Context, addr: u64, node: &Arc<dyn Inode>) -> Result<isize> {
    ctx.write_val(addr, &Stat::from_metadata(&node.metadata()))?;
    Ok(0)
}

pub fn sys_stat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    write_stat(ctx, args[1], &node)
}

pub fn sys_lstat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = resolve_at(ctx, AT_FDCWD, args[0], false, false)?;
    write_stat(ctx, args[1], &node)
}

pub fn sys_fstat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = fd_inode(ctx, fd_arg(args[0]), true)?;
    write_stat(ctx, args[1], &node)
}

pub fn sys_newfstatat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let flags = args[3] as u32;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
    let node = resolve_at(
        ctx,
        fd_arg(args[0]),
        args[1],
        follow,
        flags & AT_EMPTY_PATH != 0,
    )?;
    write_stat(ctx, args[2], &node)
}

pub fn sys_statx(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    const AT_STATX_SYNC_TYPE: u32 = 0x6000;
    let (dirfd, path, flags, mask, buf) = (
        fd_arg(args[0]),
        args[1],
        args[2] as u32,
        args[3] as u32,
        args[4],
    );
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE) != 0
        || flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE
        || mask & STATX_RESERVED != 0
    {
        return Err(Error::new(Errno::EINVAL));
    }
    let empty_path = flags & AT_EMPTY_PATH != 0;
    let node = if path == 0 && empty_path {
        // Linux 6.11 accepts a NULL path with AT_EMPTY_PATH.
        super::dirfd_inode(ctx, &fs_context(ctx), dirfd)?
    } else {
        resolve_at(
            ctx,
            dirfd,
            path,
            flags & AT_SYMLINK_NOFOLLOW == 0,
            empty_path,
        )?
    };
    ctx.write_val(buf, &Statx::from_metadata(&node.metadata()))?;
    Ok(0)
}

fn faccessat(ctx: &Context, dirfd: i32, path: u64, mode: u32, flags: u32) -> Result<isize> {
    if mode & !7 != 0 || flags & !(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // access(2) checks with the real ids unless AT_EACCESS asks for the
    // effective (file-system) ones; with the real ids a real uid 0 holds
    // its permitted capabilities and anyone else none (Linux's
    // access_override_creds).
    let mut fs = fs_context(ctx);
    if flags & AT_EACCESS == 0 {
        let c = ctx.process.creds();
        fs = fs.with_cred(Cred {
            uid: c.ruid,
            gid: c.rgid,
            caps: if c.ruid == 0 { c.cap_permitted } else { 0 },
            groups: c.groups,
        });
    }
    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
    let node = resolve_at_as(ctx, &fs, dirfd, path, follow, flags & AT_EMPTY_PATH != 0)?;
    let meta = node.metadata();
    // As Linux's do_faccessat: X_OK on a regular file of a noexec mount
    // is EACCES, W_OK on a file (not a device, FIFO or socket) of a
    // read-only one EROFS, before the permission bits are looked at.
    if mode & MAY_EXEC != 0 && meta.file_type == FileType::Regular && !mount::allows_exec(&node) {
        return Err(Error::new(Errno::EACCES));
    }
    let special = matches!(
        meta.file_type,
        FileType::CharDevice | FileType::BlockDevice | FileType::Fifo | FileType::Socket
    );
    if mode & MAY_WRITE != 0 && !special {
        mount::check_writable(&node)?;
    }
    // R_OK, W_OK and X_OK are MAY_READ, MAY_WRITE and MAY_EXEC.
    if !fs.cred().may(&meta, mode) {
        return Err(Error::new(Errno::EACCES));
    }
    Ok(0)
}

pub fn sys_access(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    faccessat(ctx, AT_FDCWD, args[0], args[1] as u32, 0)
}

pub fn sys_faccessat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    faccessat(ctx, fd_arg(args[0]), args[1], args[2] as u32, 0)
}

pub fn sys_faccessat2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    faccessat(
        ctx,
        fd_arg(args[0]),
        args[1],
        args[2] as u32,
        args[3] as u32,
    )
}

pub fn sys_statfs(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    ctx.write_val(args[1], &mount::statfs(&node))?;
    Ok(0)
}

pub fn sys_fstatfs(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = fd_inode(ctx, fd_arg(args[0]), true)?;
    ctx.write_val(args[1], &mount::statfs(&node))?;
    Ok(0)
}
