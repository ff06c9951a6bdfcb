//! Calls that create, remove or rename names: open(2)/openat/creat,
//! mkdir(2), mknod(2), unlink(2)/rmdir(2), rename(2)/renameat2,
//! link(2), symlink(2), readlink(2), and their *at variants.

use super::{
    AT_EMPTY_PATH, AT_FDCWD, AT_REMOVEDIR, AT_SYMLINK_FOLLOW, CallerCtx, fd_arg, fd_limit,
    fs_context, resolve_at, start_dir,
};
use crate::error::{Errno, Error, Result};
use crate::fs::{self, O_CLOEXEC, O_CREAT, O_TRUNC, O_WRONLY, RenameFlags, makedev};
use crate::syscall::{Context, SyscallArgs};

fn openat(ctx: &Context, dirfd: i32, path_addr: u64, flags: u32, mode: u32) -> Result<isize> {
    let fs = fs_context(ctx);
    let limit = fd_limit(ctx);
    let file = ctx.with_path(path_addr, |path| {
        let start = start_dir(ctx, &fs, dirfd, path)?;
        // Fail with EMFILE before creating anything, as Linux does.
        if !ctx.files.lock().has_free(limit) {
            return Err(Error::new(Errno::EMFILE));
        }
        fs::open(&fs, &start, path, flags, mode)
    })?;
    if let Some(ops) = file.ops() {
        ops.opened(flags, &CallerCtx(ctx))?;
    }
    let fd = ctx.files.lock().insert(file, flags & O_CLOEXEC != 0, limit)?;
    Ok(fd as isize)
}

pub fn sys_open(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    openat(ctx, AT_FDCWD, args[0], args[1] as u32, args[2] as u32)
}

pub fn sys_openat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    openat(
        ctx,
        fd_arg(args[0]),
        args[1],
        args[2] as u32,
        args[3] as u32,
    )
}

pub fn sys_creat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    openat(
        ctx,
        AT_FDCWD,
        args[0],
        O_CREAT | O_WRONLY | O_TRUNC,
        args[1] as u32,
    )
}

fn mkdirat(ctx: &Context, dirfd: i32, path_addr: u64, mode: u32) -> Result<isize> {
    ctx.with_path(path_addr, |path| {
        let fs = fs_context(ctx);
        let start = start_dir(ctx, &fs, dirfd, path)?;
        fs::mkdir(&fs, &start, path, mode)
    })?;
    Ok(0)
}

pub fn sys_mkdir(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    mkdirat(ctx, AT_FDCWD, args[0], args[1] as u32)
}

pub fn sys_mkdirat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    mkdirat(ctx, fd_arg(args[0]), args[1], args[2] as u32)
}

fn mknodat(ctx: &Context, dirfd: i32, path_addr: u64, mode: u32, dev: u32) -> Result<isize> {
    // The mode is a umode_t (16 bits); its type is checked before the
    // path is even read (Linux's may_mknod).
    let mode = mode & 0xffff;
    match mode & 0o170_000 {
        0 | 0o100_000 | 0o020_000 | 0o060_000 | 0o010_000 | 0o140_000 => {}
        0o040_000 => return Err(Error::new(Errno::EPERM)),
        _ => return Err(Error::new(Errno::EINVAL)),
    }
    let path = ctx.read_path(path_addr)?;
    let fs = fs_context(ctx);
    let start = start_dir(ctx, &fs, dirfd, &path)?;
    // The kernel's 32-bit device encoding (new_decode_dev).
    let rdev = makedev((dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00));
    fs::mknod(&fs, &start, &path, mode, rdev)?;
    Ok(0)
}

pub fn sys_mknod(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    mknodat(ctx, AT_FDCWD, args[0], args[1] as u32, args[2] as u32)
}

pub fn sys_mknodat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    mknodat(
        ctx,
        fd_arg(args[0]),
        args[1],
        args[2] as u32,
        args[3] as u32,
    )
}

fn unlinkat(ctx: &Context, dirfd: i32, path_addr: u64, flags: u32) -> Result<isize> {
    if flags & !AT_REMOVEDIR != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    ctx.with_path(path_addr, |path| {
        let fs = fs_context(ctx);
        let start = start_dir(ctx, &fs, dirfd, path)?;
        if flags & AT_REMOVEDIR != 0 {
            fs::rmdir(&fs, &start, path)
        } else {
            fs::unlink(&fs, &start, path)
        }
    })?;
    Ok(0)
}

pub fn sys_unlink(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    unlinkat(ctx, AT_FDCWD, args[0], 0)
}

pub fn sys_unlinkat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    unlinkat(ctx, fd_arg(args[0]), args[1], args[2] as u32)
}

pub fn sys_rmdir(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    unlinkat(ctx, AT_FDCWD, args[0], AT_REMOVEDIR)
}

fn renameat2(
    ctx: &Context,
    olddfd: i32,
    old_addr: u64,
    newdfd: i32,
    new_addr: u64,
    flags: u32,
) -> Result<isize> {
    const RENAME_NOREPLACE: u32 = 1;
    const RENAME_EXCHANGE: u32 = 2;
    const RENAME_WHITEOUT: u32 = 4;
    if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & (RENAME_NOREPLACE | RENAME_WHITEOUT) != 0 && flags & RENAME_EXCHANGE != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & RENAME_WHITEOUT != 0 {
        return Err(Error::with_message(
            Errno::EINVAL,
            "RENAME_WHITEOUT is for overlay file systems",
        ));
    }
    let old = ctx.read_path(old_addr)?;
    let new = ctx.read_path(new_addr)?;
    let fs = fs_context(ctx);
    let old_start = start_dir(ctx, &fs, olddfd, &old)?;
    let new_start = start_dir(ctx, &fs, newdfd, &new)?;
    let flags = RenameFlags {
        noreplace: flags & RENAME_NOREPLACE != 0,
        exchange: flags & RENAME_EXCHANGE != 0,
    };
    fs::rename(&fs, &old_start, &old, &new_start, &new, flags)?;
    Ok(0)
}

pub fn sys_rename(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    renameat2(ctx, AT_FDCWD, args[0], AT_FDCWD, args[1], 0)
}

pub fn sys_renameat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    renameat2(ctx, fd_arg(args[0]), args[1], fd_arg(args[2]), args[3], 0)
}

pub fn sys_renameat2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    renameat2(
        ctx,
        fd_arg(args[0]),
        args[1],
        fd_arg(args[2]),
        args[3],
        args[4] as u32,
    )
}

fn linkat(
    ctx: &Context,
    olddfd: i32,
    old_addr: u64,
    newdfd: i32,
    new_addr: u64,
    flags: u32,
) -> Result<isize> {
    if flags & !(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let node = resolve_at(
        ctx,
        olddfd,
        old_addr,
        flags & AT_SYMLINK_FOLLOW != 0,
        flags & AT_EMPTY_PATH != 0,
    )?;
    let new = ctx.read_path(new_addr)?;
    let fs = fs_context(ctx);
    let start = start_dir(ctx, &fs, newdfd, &new)?;
    fs::link(&fs, &node, &start, &new)?;
    Ok(0)
}

pub fn sys_link(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    linkat(ctx, AT_FDCWD, args[0], AT_FDCWD, args[1], 0)
}

pub fn sys_linkat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    linkat(
        ctx,
        fd_arg(args[0]),
        args[1],
        fd_arg(args[2]),
        args[3],
        args[4] as u32,
    )
}

fn symlinkat(ctx: &Context, target_addr: u64, newdfd: i32, path_addr: u64) -> Result<isize> {
    let target = ctx.read_path(target_addr)?;
    let path = ctx.read_path(path_addr)?;
    let fs = fs_context(ctx);
    let start = start_dir(ctx, &fs, newdfd, &path)?;
    fs::symlink(&fs, &target, &start, &path)?;
    Ok(0)
}

pub fn sys_symlink(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    symlinkat(ctx, args[0], AT_FDCWD, args[1])
}

pub fn sys_symlinkat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    symlinkat(ctx, args[0], fd_arg(args[1]), args[2])
}

fn readlinkat(ctx: &Context, dirfd: i32, path_addr: u64, buf: u64, bufsiz: u64) -> Result<isize> {
    let bufsiz = bufsiz as i32;
    if bufsiz <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let path = ctx.read_path(path_addr)?;
    let node = if path.is_empty() && dirfd != AT_FDCWD {
        // An O_PATH descriptor of the link itself (readlinkat(2)).
        let node = super::get_file(ctx, dirfd)?.node().clone();
        if !node.is_symlink() {
            return Err(Error::new(Errno::ENOENT));
        }
        node
    } else {
        let fs = fs_context(ctx);
        let start = start_dir(ctx, &fs, dirfd, &path)?;
        fs::lookup(&fs, &start, &path, false)?
    };
    let target = node.read_link()?;
    let target = fs::name::to_user(&target);
    let n = target.len().min(bufsiz as usize);
    ctx.write_bytes(buf, &target[..n])?;
    Ok(n as isize)
}

pub fn sys_readlink(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    readlinkat(ctx, AT_FDCWD, args[0], args[1], args[2])
}

pub fn sys_readlinkat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    readlinkat(ctx, fd_arg(args[0]), args[1], args[2], args[3])
}
