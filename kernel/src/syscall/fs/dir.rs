//! Directories and the per-process file-system context: getdents64(2)
//! and the old getdents(2), getcwd(2), chdir(2)/fchdir, chroot(2), umask(2).

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{AT_FDCWD, caller_cred, fd_arg, fs_context, get_file, get_io_file, resolve_at};
use crate::error::{Errno, Error, Result};
use crate::fs::{self, FileType, IO_CHUNK, Inode, MAY_EXEC};
use crate::syscall::{Context, SyscallArgs};

/// Size of a `linux_dirent64` header: d_ino, d_off, d_reclen, d_type.
const DIRENT64_HEADER: usize = 8 + 8 + 2 + 1;
/// Size of an old `linux_dirent` header: d_ino, d_off, d_reclen (d_type
/// is the record's last byte, after the name's NUL).
const DIRENT_HEADER: usize = 8 + 8 + 2;

pub fn sys_getdents64(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    getdents(ctx, args, true)
}

/// getdents(2), the old call: `struct linux_dirent`, whose d_type follows
/// the name.
pub fn sys_getdents(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    getdents(ctx, args, false)
}

fn getdents(ctx: &Context, args: &SyscallArgs, is64: bool) -> Result<isize> {
    let (dirp, count) = (args[1], (args[2] as u32 as usize).min(IO_CHUNK));
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if file.ops().is_some() || file.node().file_type() != FileType::Directory {
        return Err(Error::new(Errno::ENOTDIR));
    }
    // Reserved up front: the listing runs under the directory's spin lock.
    let mut out: Vec<u8> = crate::fallible::with_capacity(count)?;
    let mut next = None;
    let mut too_small = false;
    // Linux writes record by record, checking each against the end of
    // user space (filldir64's user_write_access_begin): the records that
    // fit are returned, the first that would leave user space ends the
    // listing, and it is EFAULT only if none fitted.
    let room = (frame::mm::USER_SPACE_END as u64).saturating_sub(dirp) as usize;
    let mut outside = false;
    file.node().read_dir(file.position(), &mut |e| {
        let name = fs::name::to_user(e.name);
        let reclen = if is64 {
            (DIRENT64_HEADER + name.len() + 1).next_multiple_of(8)
        } else {
            (DIRENT_HEADER + name.len() + 2).next_multiple_of(8)
        };
        if out.len() + reclen > count {
            too_small = out.is_empty();
            return false;
        }
        if out.len() + reclen > room {
            outside = out.is_empty();
            return false;
        }
        let start = out.len();
        out.extend_from_slice(&e.ino.to_ne_bytes());
        out.extend_from_slice(&(e.next_cookie as i64).to_ne_bytes());
        out.extend_from_slice(&(reclen as u16).to_ne_bytes());
        if is64 {
            out.push(e.file_type.dirent_type());
        }
        out.extend_from_slice(&name);
        out.resize(start + reclen, 0);
        if !is64 {
            out[start + reclen - 1] = e.file_type.dirent_type();
        }
        next = Some(e.next_cookie);
        true
    })?;
    if out.is_empty() {
        return if too_small {
            Err(Error::new(Errno::EINVAL))
        } else if outside {
            Err(Error::new(Errno::EFAULT))
        } else {
            Ok(0)
        };
    }
    ctx.write_bytes(dirp, &out)?;
    if let Some(cookie) = next {
        file.set_position(cookie);
    }
    Ok(out.len() as isize)
}

pub fn sys_getcwd(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (buf, size) = (args[0], args[1]);
    let fs = fs_context(ctx);
    let path = fs::path_of(&fs, fs.cwd())?;
    let mut bytes = fs::name::to_user(&path).into_owned();
    bytes.push(0);
    let len = bytes.len();
    if (size as usize) < len {
        return Err(Error::new(Errno::ERANGE));
    }
    ctx.write_bytes(buf, &bytes)?;
    Ok(len as isize)
}

/// A directory the caller may search (chdir(2): ENOTDIR, EACCES).
fn searchable_dir(ctx: &Context, node: Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
    if !node.is_dir() {
        return Err(Error::new(Errno::ENOTDIR));
    }
    caller_cred(ctx).check(&*node, MAY_EXEC)?;
    Ok(node)
}

pub fn sys_chdir(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let dir = searchable_dir(ctx, resolve_at(ctx, AT_FDCWD, args[0], true, false)?)?;
    ctx.process.fs().lock().set_cwd(dir);
    Ok(0)
}

pub fn sys_fchdir(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let node = get_file(ctx, fd_arg(args[0]))?.node().clone();
    let dir = searchable_dir(ctx, node)?;
    ctx.process.fs().lock().set_cwd(dir);
    Ok(0)
}

/// chroot(2): CAP_SYS_CHROOT only; the cwd stays where it is.
pub fn sys_chroot(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let dir = searchable_dir(ctx, resolve_at(ctx, AT_FDCWD, args[0], true, false)?)?;
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_CHROOT) {
        return Err(Error::new(Errno::EPERM));
    }
    ctx.process.fs().lock().set_root(dir);
    Ok(0)
}

pub fn sys_umask(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let old = ctx.process.fs().lock().set_umask(args[0] as u32);
    Ok(old as isize)
}
