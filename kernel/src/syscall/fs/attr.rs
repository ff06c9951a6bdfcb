//! File attributes: stat(2) family and statx(2), access(2)/faccessat,
//! chmod(2), chown(2), utimensat(2), truncate(2), statfs(2).

use alloc::sync::Arc;

use super::{
    AT_EACCESS, AT_EMPTY_PATH, AT_FDCWD, AT_NO_AUTOMOUNT, AT_SYMLINK_NOFOLLOW, fd_arg, get_file,
    resolve_at,
};
use crate::error::{Errno, Error, Result};
use crate::fs::{File, FileType, Inode, STATX_RESERVED, Stat, StatFs, Statx, Timespec};
use crate::syscall::{Context, SyscallArgs};

/// An fd's inode for calls that change or read attributes (EBADF for bad
/// descriptors; O_PATH ones are fine for fstat but not for changes).
fn fd_inode(ctx: &Context, fd: i32, allow_path_only: bool) -> Result<Arc<dyn Inode>> {
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
        let fs = super::fs_context(ctx);
        super::dirfd_inode(ctx, &fs, dirfd)?
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
    const X_OK: u32 = 1;
    if mode & !7 != 0 || flags & !(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let node = resolve_at(
        ctx,
        dirfd,
        path,
        flags & AT_SYMLINK_NOFOLLOW == 0,
        flags & AT_EMPTY_PATH != 0,
    )?;
    // Everyone is root: reading and writing are always allowed, executing
    // (searching) only a directory or a file with some execute bit.
    let meta = node.metadata();
    if mode & X_OK != 0 && meta.file_type != FileType::Directory && meta.perm & 0o111 == 0 {
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

pub fn sys_chmod(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    resolve_at(ctx, AT_FDCWD, args[0], true, false)?.set_perm(args[1] as u32 & 0o7777)?;
    Ok(0)
}

pub fn sys_fchmod(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    fd_inode(ctx, fd_arg(args[0]), false)?.set_perm(args[1] as u32 & 0o7777)?;
    Ok(0)
}

pub fn sys_fchmodat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    resolve_at(ctx, fd_arg(args[0]), args[1], true, false)?.set_perm(args[2] as u32 & 0o7777)?;
    Ok(0)
}

/// chown(2) on `node`: -1 leaves an id unchanged. Changing the owner of a
/// non-directory clears set-user-ID, and set-group-ID when group-executable.
fn chown(node: &Arc<dyn Inode>, uid: u64, gid: u64) -> Result<isize> {
    let id = |v: u64| Some(v as u32).filter(|v| *v != u32::MAX);
    let (uid, gid) = (id(uid), id(gid));
    if uid.is_none() && gid.is_none() {
        return Ok(0);
    }
    let meta = node.metadata();
    node.set_owner(uid, gid)?;
    if meta.file_type != FileType::Directory && meta.perm & 0o6000 != 0 {
        let mut perm = meta.perm & !0o4000;
        if perm & 0o010 != 0 {
            perm &= !0o2000;
        }
        node.set_perm(perm)?;
    }
    Ok(0)
}

pub fn sys_chown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chown(
        &resolve_at(ctx, AT_FDCWD, args[0], true, false)?,
        args[1],
        args[2],
    )
}

pub fn sys_lchown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chown(
        &resolve_at(ctx, AT_FDCWD, args[0], false, false)?,
        args[1],
        args[2],
    )
}

pub fn sys_fchown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chown(&fd_inode(ctx, fd_arg(args[0]), false)?, args[1], args[2])
}

pub fn sys_fchownat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let flags = args[4] as u32;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let node = resolve_at(
        ctx,
        fd_arg(args[0]),
        args[1],
        flags & AT_SYMLINK_NOFOLLOW == 0,
        flags & AT_EMPTY_PATH != 0,
    )?;
    chown(&node, args[2], args[3])
}

pub fn sys_utimensat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    const UTIME_NOW: i64 = (1 << 30) - 1;
    const UTIME_OMIT: i64 = (1 << 30) - 2;
    let (dirfd, path, times, flags) = (fd_arg(args[0]), args[1], args[2], args[3] as u32);
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let now = Timespec::now();
    let (atime, mtime) = if times == 0 {
        (Some(now), Some(now))
    } else {
        let t: [i64; 4] = ctx.read_val(times)?;
        let convert = |sec: i64, nsec: i64| match nsec {
            UTIME_NOW => Ok(Some(now)),
            UTIME_OMIT => Ok(None),
            0..=999_999_999 => Ok(Some(Timespec {
                sec,
                nsec: nsec as u32,
            })),
            _ => Err(Error::new(Errno::EINVAL)),
        };
        (convert(t[0], t[1])?, convert(t[2], t[3])?)
    };
    let node = if path == 0 {
        // futimens(3): the descriptor itself.
        if dirfd == AT_FDCWD {
            return Err(Error::new(Errno::EFAULT));
        }
        fd_inode(ctx, dirfd, false)?
    } else {
        resolve_at(
            ctx,
            dirfd,
            path,
            flags & AT_SYMLINK_NOFOLLOW == 0,
            flags & AT_EMPTY_PATH != 0,
        )?
    };
    if atime.is_some() || mtime.is_some() {
        node.set_times(atime, mtime)?;
    }
    Ok(0)
}

/// A length argument: EINVAL if negative.
fn length_arg(arg: u64) -> Result<usize> {
    usize::try_from(arg as i64).map_err(|_| Error::new(Errno::EINVAL))
}

pub fn sys_truncate(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let len = length_arg(args[1])?;
    let node = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    match node.file_type() {
        FileType::Directory => Err(Error::new(Errno::EISDIR)),
        FileType::Regular => node.resize(len).map(|()| 0),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

pub fn sys_ftruncate(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let len = length_arg(args[1])?;
    let file = get_file(ctx, fd_arg(args[0]))?;
    if file.is_path_only() {
        return Err(Error::new(Errno::EBADF));
    }
    if !file.can_write() || file.ops().is_some() || file.node().file_type() != FileType::Regular {
        return Err(Error::new(Errno::EINVAL));
    }
    file.node().resize(len)?;
    Ok(0)
}

pub fn sys_statfs(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    ctx.write_val(args[1], &StatFs::ramfs())?;
    Ok(0)
}

pub fn sys_fstatfs(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    fd_inode(ctx, fd_arg(args[0]), true)?;
    ctx.write_val(args[1], &StatFs::ramfs())?;
    Ok(0)
}
