//! Changing file attributes: chmod(2), chown(2), utimensat(2) and the
//! older utime(2)/utimes(2)/futimesat(2), truncate(2), with their
//! permission rules (the owner or root changes modes and times; only root
//! gives files away).

use alloc::sync::Arc;

use super::attr::fd_inode;
use super::{
    AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_NOFOLLOW, CallerCtx, caller_cred, fd_arg, get_io_file, resolve_at,
};
use crate::error::{Errno, Error, Result};
use crate::fs::{FileType, Inode, MAY_WRITE, Timespec, mount};
use crate::syscall::{Context, SyscallArgs};

/// chmod(2) on `node`: only its owner (or root) may; a caller outside the
/// file's group loses the set-group-ID bit.
fn chmod(ctx: &Context, node: &Arc<dyn Inode>, mode: u64) -> Result<isize> {
    mount::check_writable(node)?;
    let cred = caller_cred(ctx);
    let meta = node.metadata();
    if !cred.owns(&meta) {
        return Err(Error::new(Errno::EPERM));
    }
    let mut perm = mode as u32 & 0o7777;
    if !cred.capable(crate::caps::CAP_FSETID) && !cred.in_group(meta.gid) {
        perm &= !0o2000;
    }
    node.set_perm(perm)?;
    Ok(0)
}

pub fn sys_chmod(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chmod(
        ctx,
        &resolve_at(ctx, AT_FDCWD, args[0], true, false)?,
        args[1],
    )
}

pub fn sys_fchmod(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chmod(ctx, &fd_inode(ctx, fd_arg(args[0]), false)?, args[1])
}

pub fn sys_fchmodat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = resolve_at(ctx, fd_arg(args[0]), args[1], true, false)?;
    chmod(ctx, &node, args[2])
}

/// chown(2) on `node`: -1 leaves an id unchanged. Root may set any ids;
/// the owner may only change the group, to one of its own groups.
/// Changing the owner of a non-directory clears set-user-ID, and
/// set-group-ID when group-executable.
fn chown(ctx: &Context, node: &Arc<dyn Inode>, uid: u64, gid: u64) -> Result<isize> {
    let id = |v: u64| Some(v as u32).filter(|v| *v != u32::MAX);
    let (uid, gid) = (id(uid), id(gid));
    mount::check_writable(node)?;
    let cred = caller_cred(ctx);
    let meta = node.metadata();
    if !cred.capable(crate::caps::CAP_CHOWN) {
        let owner = meta.uid == cred.uid;
        let uid_ok = uid.is_none_or(|u| owner && u == meta.uid);
        let gid_ok = gid.is_none_or(|g| owner && (cred.in_group(g) || g == meta.gid));
        if !uid_ok || !gid_ok {
            return Err(Error::new(Errno::EPERM));
        }
    }
    if uid.is_none() && gid.is_none() {
        return Ok(0);
    }
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
    let node = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    chown(ctx, &node, args[1], args[2])
}

pub fn sys_lchown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = resolve_at(ctx, AT_FDCWD, args[0], false, false)?;
    chown(ctx, &node, args[1], args[2])
}

pub fn sys_fchown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    chown(
        ctx,
        &fd_inode(ctx, fd_arg(args[0]), false)?,
        args[1],
        args[2],
    )
}

pub fn sys_fchownat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let flags = args[4] as u32;
    if flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
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
    chown(ctx, &node, args[2], args[3])
}

/// One `struct timespec` of utimensat: None for UTIME_OMIT, and whether it
/// is an explicit time (not UTIME_NOW).
fn time_arg(sec: i64, nsec: i64, now: Timespec) -> Result<TimeArg> {
    const UTIME_NOW: i64 = (1 << 30) - 1;
    const UTIME_OMIT: i64 = (1 << 30) - 2;
    match nsec {
        UTIME_NOW => Ok((Some(now), false)),
        UTIME_OMIT => Ok((None, false)),
        0..=999_999_999 => Ok((
            Some(Timespec {
                sec,
                nsec: nsec as u32,
            }),
            true,
        )),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// One time of a utimes-family call: the time to set (None to leave it),
/// and whether it is explicit (not "now"), which needs ownership.
type TimeArg = (Option<Timespec>, bool);

/// The node a utimes-family call names: the descriptor itself for a NULL
/// path (futimens(3); EFAULT with AT_FDCWD), else the path from `dirfd`.
fn times_target(ctx: &Context, dirfd: i32, path: u64, flags: u32) -> Result<Arc<dyn Inode>> {
    if path == 0 {
        if dirfd == AT_FDCWD {
            return Err(Error::new(Errno::EFAULT));
        }
        return fd_inode(ctx, dirfd, false);
    }
    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
    resolve_at(ctx, dirfd, path, follow, flags & AT_EMPTY_PATH != 0)
}

/// Sets the times of `node`. Explicit times need ownership; "now" also
/// write permission (utimensat(2), "Permissions requirements").
fn set_times(
    ctx: &Context,
    node: &Arc<dyn Inode>,
    atime: TimeArg,
    mtime: TimeArg,
) -> Result<isize> {
    if atime.0.is_none() && mtime.0.is_none() {
        return Ok(0);
    }
    mount::check_writable(node)?;
    let cred = caller_cred(ctx);
    let meta = node.metadata();
    if !cred.owns(&meta) {
        if atime.1 || mtime.1 {
            return Err(Error::new(Errno::EPERM));
        }
        if !cred.may(&meta, MAY_WRITE) {
            return Err(Error::new(Errno::EACCES));
        }
    }
    node.set_times(atime.0, mtime.0)?;
    Ok(0)
}

/// utimensat(2), in Linux's order: the times are read first (EFAULT) and
/// two UTIME_OMITs succeed without looking at anything else; then the
/// flags (EINVAL; none at all for a NULL path, futimens), the file, and
/// only then the nanoseconds (EINVAL).
pub fn sys_utimensat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    const UTIME_OMIT: i64 = (1 << 30) - 2;
    let (dirfd, path, times, flags) = (fd_arg(args[0]), args[1], args[2], args[3] as u32);
    let raw: Option<[i64; 4]> = if times == 0 { None } else { Some(ctx.read_val(times)?) };
    if raw.is_some_and(|t| t[1] == UTIME_OMIT && t[3] == UTIME_OMIT) {
        return Ok(0);
    }
    let fd_only = path == 0 && dirfd != AT_FDCWD;
    if (fd_only && flags != 0) || flags & !(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let node = times_target(ctx, dirfd, path, flags)?;
    let now = Timespec::now();
    let (atime, mtime) = match raw {
        None => ((Some(now), false), (Some(now), false)),
        Some(t) => (time_arg(t[0], t[1], now)?, time_arg(t[2], t[3], now)?),
    };
    set_times(ctx, &node, atime, mtime)
}

/// utimes(2)/futimesat(2): `times` is NULL (now) or two `struct timeval`s.
fn utimes_at(ctx: &Context, dirfd: i32, path: u64, times: u64) -> Result<isize> {
    let now = (Some(Timespec::now()), false);
    let (atime, mtime) = if times == 0 {
        (now, now)
    } else {
        let t: [i64; 4] = ctx.read_val(times)?;
        let tv = |sec: i64, usec: i64| -> Result<TimeArg> {
            if !(0..1_000_000).contains(&usec) {
                return Err(Error::new(Errno::EINVAL));
            }
            let nsec = (usec * 1000) as u32;
            Ok((Some(Timespec { sec, nsec }), true))
        };
        (tv(t[0], t[1])?, tv(t[2], t[3])?)
    };
    let node = times_target(ctx, dirfd, path, 0)?;
    set_times(ctx, &node, atime, mtime)
}

pub fn sys_utimes(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    utimes_at(ctx, AT_FDCWD, args[0], args[1])
}

pub fn sys_futimesat(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    utimes_at(ctx, fd_arg(args[0]), args[1], args[2])
}

/// utime(2): `times` is NULL (now) or a `struct utimbuf` of whole seconds.
pub fn sys_utime(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (atime, mtime) = if args[1] == 0 {
        let now = (Some(Timespec::now()), false);
        (now, now)
    } else {
        let t: [i64; 2] = ctx.read_val(args[1])?;
        let at = |sec| (Some(Timespec { sec, nsec: 0 }), true);
        (at(t[0]), at(t[1]))
    };
    let node = resolve_at(ctx, AT_FDCWD, args[0], true, false)?;
    set_times(ctx, &node, atime, mtime)
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
        FileType::Regular => {
            mount::check_writable(&node)?;
            caller_cred(ctx).check(&*node, MAY_WRITE)?;
            // A running program cannot be truncated (ETXTBSY).
            let _access = crate::fs::WriteAccess::get(&*node)?;
            crate::fs::file_size_grow_check(node.size(), len, &CallerCtx(ctx))?;
            node.resize(len)?;
            Ok(0)
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

pub fn sys_ftruncate(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let len = length_arg(args[1])?;
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    let regular = file.ops().is_none() && file.node().file_type() == FileType::Regular;
    if !file.can_write() || !regular {
        return Err(Error::new(Errno::EINVAL));
    }
    crate::fs::file_size_grow_check(file.node().size(), len, &CallerCtx(ctx))?;
    file.node().resize(len)?;
    Ok(0)
}
