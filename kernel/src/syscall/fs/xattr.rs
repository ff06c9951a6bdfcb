//! Extended attributes: setxattr(2), getxattr(2), listxattr(2),
//! removexattr(2), each by path (following a final symlink), by path
//! without following it (l*) and by descriptor (f*; EBADF for O_PATH).
//!
//! The order of the checks is Linux's: flags, the name (EFAULT, ERANGE for
//! an empty name or one longer than 255 bytes), the value size (E2BIG past
//! 64 KiB) and the value itself, then the file, then EROFS, then
//! `fs::xattr::check_access`, then the file system.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::{AT_FDCWD, caller_cred, fd_arg, get_io_file, resolve_at};
use crate::error::{Errno, Error, Result};
use crate::fs::xattr::{self, Asker, SetFlags};
use crate::fs::{Inode, mount};
use crate::syscall::{Context, SyscallArgs};

const XATTR_CREATE: u64 = 1;
const XATTR_REPLACE: u64 = 2;

/// How a call names its file.
#[derive(Clone, Copy)]
enum Target {
    Path { follow: bool },
    Fd,
}

const PATH: Target = Target::Path { follow: true };
const LPATH: Target = Target::Path { follow: false };

fn target_inode(ctx: &Context, how: Target, arg: u64) -> Result<Arc<dyn Inode>> {
    match how {
        Target::Path { follow } => resolve_at(ctx, AT_FDCWD, arg, follow, false),
        Target::Fd => Ok(get_io_file(ctx, fd_arg(arg))?.node().clone()),
    }
}

/// An attribute name argument: EFAULT, or ERANGE if empty or longer than
/// XATTR_NAME_MAX.
fn read_name(ctx: &Context, addr: u64) -> Result<Vec<u8>> {
    match ctx.read_cstring(addr, xattr::NAME_MAX + 1) {
        Ok(name) if !name.is_empty() => Ok(name),
        Ok(_) => Err(Error::new(Errno::ERANGE)),
        Err(e) if e.errno() == Errno::ENAMETOOLONG => Err(Error::new(Errno::ERANGE)),
        Err(e) => Err(e),
    }
}

fn asker_privileged(ctx: &Context) -> bool {
    ctx.process.creds().capable(crate::caps::CAP_SYS_ADMIN)
}

/// Copies `data` out to a user buffer of `size` bytes (size 0: only the
/// length is asked for; Linux reads at most `limit` bytes of the buffer).
fn copy_out(ctx: &Context, addr: u64, size: u64, data: &[u8], limit: usize) -> Result<isize> {
    if size != 0 {
        let size = usize::try_from(size).unwrap_or(usize::MAX).min(limit);
        if data.len() > size {
            return Err(Error::new(Errno::ERANGE));
        }
        ctx.write_bytes(addr, data)?;
    }
    Ok(data.len() as isize)
}

fn setxattr(ctx: &Context, args: &SyscallArgs, how: Target) -> Result<isize> {
    let (value_addr, size, flags) = (args[2], args[3], args[4] as u32 as u64);
    if flags & !(XATTR_CREATE | XATTR_REPLACE) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let name = read_name(ctx, args[1])?;
    if size > xattr::SIZE_MAX as u64 {
        return Err(Error::new(Errno::E2BIG));
    }
    let value = if size == 0 {
        Vec::new()
    } else {
        let mut v = crate::fs::kernel_buffer(size as usize)?;
        ctx.read_into(value_addr, &mut v)?;
        v
    };
    let node = target_inode(ctx, how, args[0])?;
    mount::check_writable(&node)?;
    let cred = caller_cred(ctx);
    let who = Asker { cred: &cred, privileged: asker_privileged(ctx) };
    xattr::check_access(&*node, &name, true, &who)?;
    let flags = SetFlags {
        create: flags & XATTR_CREATE != 0,
        replace: flags & XATTR_REPLACE != 0,
    };
    node.set_xattr(&name, &value, flags)?;
    Ok(0)
}

fn getxattr(ctx: &Context, args: &SyscallArgs, how: Target) -> Result<isize> {
    let name = read_name(ctx, args[1])?;
    let node = target_inode(ctx, how, args[0])?;
    let cred = caller_cred(ctx);
    let who = Asker { cred: &cred, privileged: asker_privileged(ctx) };
    xattr::check_access(&*node, &name, false, &who)?;
    let value = node.get_xattr(&name)?;
    copy_out(ctx, args[2], args[3], &value, xattr::SIZE_MAX)
}

fn listxattr(ctx: &Context, args: &SyscallArgs, how: Target) -> Result<isize> {
    let node = target_inode(ctx, how, args[0])?;
    let privileged = asker_privileged(ctx);
    let mut list = Vec::new();
    for name in node.list_xattr()? {
        if xattr::visible(&name, privileged) {
            list.try_reserve(name.len() + 1)
                .map_err(|_| Error::new(Errno::ENOMEM))?;
            list.extend_from_slice(&name);
            list.push(0);
        }
    }
    copy_out(ctx, args[1], args[2], &list, xattr::LIST_MAX)
}

fn removexattr(ctx: &Context, args: &SyscallArgs, how: Target) -> Result<isize> {
    let name = read_name(ctx, args[1])?;
    let node = target_inode(ctx, how, args[0])?;
    mount::check_writable(&node)?;
    let cred = caller_cred(ctx);
    let who = Asker { cred: &cred, privileged: asker_privileged(ctx) };
    xattr::check_access(&*node, &name, true, &who)?;
    node.remove_xattr(&name)?;
    Ok(0)
}

pub fn sys_setxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    setxattr(ctx, args, PATH)
}

pub fn sys_lsetxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    setxattr(ctx, args, LPATH)
}

pub fn sys_fsetxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    setxattr(ctx, args, Target::Fd)
}

pub fn sys_getxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    getxattr(ctx, args, PATH)
}

pub fn sys_lgetxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    getxattr(ctx, args, LPATH)
}

pub fn sys_fgetxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    getxattr(ctx, args, Target::Fd)
}

pub fn sys_listxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    listxattr(ctx, args, PATH)
}

pub fn sys_llistxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    listxattr(ctx, args, LPATH)
}

pub fn sys_flistxattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    listxattr(ctx, args, Target::Fd)
}

pub fn sys_removexattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    removexattr(ctx, args, PATH)
}

pub fn sys_lremovexattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    removexattr(ctx, args, LPATH)
}

pub fn sys_fremovexattr(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    removexattr(ctx, args, Target::Fd)
}
