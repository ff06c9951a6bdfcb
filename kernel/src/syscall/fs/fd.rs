//! Descriptor management: close(2), close_range(2), dup(2)/dup2/dup3,
//! fcntl(2), ioctl(2),
//! and the calls that only need a valid descriptor (fsync).

use super::lock::{F_GETLK, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLK, F_SETLKW};
use super::{CallerCtx, fd_arg, fd_limit, get_file, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::{FileType, O_CLOEXEC, O_NONBLOCK, mount};
use crate::syscall::{Context, SyscallArgs};

const F_DUPFD: u32 = 0;
const F_GETFD: u32 = 1;
const F_SETFD: u32 = 2;
const F_GETFL: u32 = 3;
const F_SETFL: u32 = 4;
const F_SETOWN: u32 = 8;
const F_GETOWN: u32 = 9;
const F_SETSIG: u32 = 10;
const F_GETSIG: u32 = 11;
const F_SETOWN_EX: u32 = 15;
const F_GETOWN_EX: u32 = 16;
const F_SETLEASE: u32 = 1024;
const F_GETLEASE: u32 = 1025;
const F_NOTIFY: u32 = 1026;
/// f_owner_ex types (F_OWNER_TID is 0).
const F_OWNER_PID: u32 = 1;
const F_OWNER_PGRP: u32 = 2;
const F_UNLCK: isize = 2;
const F_DUPFD_CLOEXEC: u32 = 1030;
const F_SETPIPE_SZ: u32 = 1031;
const F_GETPIPE_SZ: u32 = 1032;
const F_ADD_SEALS: u32 = 1033;
const F_GET_SEALS: u32 = 1034;
const FD_CLOEXEC: u64 = 1;

const FIONREAD: u32 = 0x541B;
const FIONBIO: u32 = 0x5421;
const FIONCLEX: u32 = 0x5450;
const FIOCLEX: u32 = 0x5451;
const FIOASYNC: u32 = 0x5452;
/// ioctl_tty(2): open the peer (slave) of a pty master.
const TIOCGPTPEER: u32 = 0x5441;

pub fn sys_close(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = ctx.files.lock().remove(fd_arg(args[0]))?;
    // Closing any descriptor of a file drops the process's record locks on it.
    crate::fs::lock::release_posix(ctx.process.pid(), &**file.node());
    drop(file);
    Ok(0)
}

const CLOSE_RANGE_UNSHARE: u32 = 1 << 1;
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

/// close_range(2): closes (or with CLOSE_RANGE_CLOEXEC marks
/// close-on-exec) every open descriptor in `[first, last]`, after giving
/// the process its own table with CLOSE_RANGE_UNSHARE. EINVAL for unknown
/// flags or `first > last`.
pub fn sys_close_range(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (first, last, flags) = (args[0] as u32, args[1] as u32, args[2] as u32);
    if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & CLOSE_RANGE_UNSHARE != 0 {
        ctx.process.unshare_files()?;
    }
    let cloexec = flags & CLOSE_RANGE_CLOEXEC != 0;
    let files = ctx.process.files();
    if cloexec {
        files.lock().set_cloexec_range(first as usize, last as usize);
        return Ok(0);
    }
    // One descriptor per turn of the lock: closing allocates nothing.
    let mut next = first as usize;
    loop {
        let taken = files.lock().take_next(next, last as usize);
        let Some((fd, file)) = taken else { break };
        crate::fs::lock::release_posix(ctx.process.pid(), &**file.node());
        drop(file);
        next = fd + 1;
    }
    Ok(0)
}

pub fn sys_dup(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let limit = fd_limit(ctx);
    let shared_files = ctx.process.files();
    let mut files = shared_files.lock();
    let file = files.get(fd_arg(args[0]))?;
    Ok(files.insert(file, false, limit)? as isize)
}

/// dup2/dup3 once the arguments are checked.
fn dup_to(ctx: &Context, old: i32, new: i32, cloexec: bool) -> Result<isize> {
    let limit = fd_limit(ctx);
    let replaced = {
        let shared_files = ctx.process.files();
        let mut files = shared_files.lock();
        let file = files.get(old)?;
        files.install(new, file, cloexec, limit)?
    };
    // The replaced file is closed outside the table lock.
    if let Some(file) = replaced {
        crate::fs::lock::release_posix(ctx.process.pid(), &**file.node());
    }
    Ok(new as isize)
}

pub fn sys_dup2(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (old, new) = (fd_arg(args[0]), fd_arg(args[1]));
    if old == new {
        get_file(ctx, old)?;
        return Ok(new as isize);
    }
    dup_to(ctx, old, new, false)
}

pub fn sys_dup3(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (old, new, flags) = (fd_arg(args[0]), fd_arg(args[1]), args[2] as u32);
    if flags & !O_CLOEXEC != 0 || old == new {
        return Err(Error::new(Errno::EINVAL));
    }
    dup_to(ctx, old, new, flags & O_CLOEXEC != 0)
}

pub fn sys_fcntl(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (fd, cmd, arg) = (fd_arg(args[0]), args[1] as u32, args[2]);
    // On an O_PATH descriptor only the commands about the descriptor
    // itself work (open(2)); the rest are EBADF.
    let file = match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC | F_GETFD | F_SETFD | F_GETFL => get_file(ctx, fd)?,
        _ => get_io_file(ctx, fd)?,
    };
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => {
            let limit = fd_limit(ctx);
            let min = arg as u32 as usize;
            if min >= limit {
                return Err(Error::new(Errno::EINVAL));
            }
            let fd =
                ctx.process
                    .files()
                    .lock()
                    .insert_from(min, file, cmd == F_DUPFD_CLOEXEC, limit)?;
            Ok(fd as isize)
        }
        F_GETFD => Ok(isize::from(ctx.process.files().lock().cloexec(fd)?)),
        F_SETFD => {
            ctx.process
                .files()
                .lock()
                .set_cloexec(fd, arg & FD_CLOEXEC != 0)?;
            Ok(0)
        }
        F_GETFL => Ok(file.flags() as isize),
        F_SETFL => {
            // Turning O_NOATIME on needs ownership (fcntl(2), EPERM).
            let flags = arg as u32;
            if flags & crate::fs::O_NOATIME != 0
                && file.flags() & crate::fs::O_NOATIME == 0
                && !super::caller_cred(ctx).owns(&file.node().metadata())
            {
                return Err(Error::new(Errno::EPERM));
            }
            file.set_status_flags(flags);
            Ok(0)
        }
        F_GETLK | F_SETLK | F_SETLKW | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW => {
            super::lock::fcntl_lock(ctx, &file, cmd, arg)
        }
        F_GETPIPE_SZ => crate::fs::pipe::pipe_capacity(&file, None),
        F_SETPIPE_SZ => crate::fs::pipe::pipe_capacity(&file, Some(arg as u32 as u64)),
        F_ADD_SEALS => add_seals(&file, arg as u32),
        F_GET_SEALS => Ok(file.node().seals()? as isize),
        F_SETOWN => {
            // A negative owner is a process group (INT_MIN: EINVAL).
            let who = arg as i32;
            if who == i32::MIN {
                return Err(Error::new(Errno::EINVAL));
            }
            let kind = if who < 0 { F_OWNER_PGRP } else { F_OWNER_PID };
            set_owner(&file, kind, who.unsigned_abs())?;
            Ok(0)
        }
        F_GETOWN => {
            let (kind, pid) = file.owner();
            Ok(if kind == F_OWNER_PGRP { -(pid as isize) } else { pid as isize })
        }
        F_SETOWN_EX => {
            let [kind, pid]: [i32; 2] = ctx.read_val(arg)?;
            let kind = u32::try_from(kind).ok().filter(|k| *k <= F_OWNER_PGRP).ok_or(Error::new(Errno::EINVAL))?;
            let pid = u32::try_from(pid).map_err(|_| Error::new(Errno::ESRCH))?;
            set_owner(&file, kind, pid)?;
            Ok(0)
        }
        F_GETOWN_EX => {
            let (kind, pid) = file.owner();
            let kind = if pid == 0 { F_OWNER_PID } else { kind };
            ctx.write_val(arg, &[kind as i32, pid as i32])?;
            Ok(0)
        }
        F_SETSIG => {
            let sig = u32::try_from(arg as i32).ok().filter(|s| *s <= 64).ok_or(Error::new(Errno::EINVAL))?;
            file.set_io_signal(sig);
            Ok(0)
        }
        F_GETSIG => Ok(file.io_signal() as isize),
        // Leases are not supported: there never is one to report.
        F_GETLEASE => Ok(F_UNLCK),
        // dnotify is not supported; clearing (no events) always works,
        // and only directories can be watched.
        F_NOTIFY => {
            const DN_MULTISHOT: u64 = 0x8000_0000;
            if arg as u32 as u64 & !DN_MULTISHOT == 0 {
                Ok(0)
            } else if file.node().file_type() != FileType::Directory {
                Err(Error::new(Errno::ENOTDIR))
            } else {
                Err(Error::with_message(Errno::EINVAL, "dnotify is not supported"))
            }
        }
        F_SETLEASE => Err(Error::with_message(Errno::EINVAL, "leases are not supported")),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// fcntl F_ADD_SEALS (memfd_create(2)): EPERM unless open for writing or
/// once F_SEAL_SEAL is set, EINVAL for unknown seals or a file that cannot
/// be sealed. F_SEAL_EXEC on an executable file also seals its size and
/// contents (Linux's W^X rule). No shared writable mapping can exist, so
/// F_SEAL_WRITE never fails with EBUSY.
fn add_seals(file: &crate::fs::File, seals: u32) -> Result<isize> {
    use crate::fs::memfd::*;
    if !file.can_write() {
        return Err(Error::new(Errno::EPERM));
    }
    if seals & !F_ALL_SEALS != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut seals = seals;
    if seals & F_SEAL_EXEC != 0 && file.node().metadata().perm & 0o111 != 0 {
        seals |= F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;
    }
    file.node().add_seals(seals)?;
    Ok(0)
}

const MFD_CLOEXEC: u32 = 0x1;
const MFD_ALLOW_SEALING: u32 = 0x2;
const MFD_HUGETLB: u32 = 0x4;
const MFD_NOEXEC_SEAL: u32 = 0x8;
const MFD_EXEC: u32 = 0x10;
/// Longest name: NAME_MAX less "memfd:".
const MFD_NAME_MAX: usize = 255 - 6;

/// memfd_create(2): EINVAL for unknown flags, MFD_EXEC with
/// MFD_NOEXEC_SEAL, or a name longer than 249 bytes; EFAULT for an
/// unreadable name. MFD_HUGETLB is refused (EINVAL): there are no huge
/// pages. Without MFD_ALLOW_SEALING the file starts sealed with
/// F_SEAL_SEAL; MFD_NOEXEC_SEAL drops the execute bits and seals them
/// (F_SEAL_EXEC), allowing further seals.
pub fn sys_memfd_create(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    use crate::fs::memfd::{F_SEAL_EXEC, F_SEAL_SEAL};
    let (name_addr, flags) = (args[0], args[1] as u32);
    let known = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC;
    if flags & !known != 0 || flags & MFD_HUGETLB != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & (MFD_EXEC | MFD_NOEXEC_SEAL) == MFD_EXEC | MFD_NOEXEC_SEAL {
        return Err(Error::new(Errno::EINVAL));
    }
    let name = ctx
        .read_cstring(name_addr, MFD_NAME_MAX + 1)
        .map_err(|e| match e.errno() {
            Errno::ENAMETOOLONG => Error::new(Errno::EINVAL),
            _ => e,
        })?;
    let name = crate::fs::name::from_user(name);
    let noexec = flags & MFD_NOEXEC_SEAL != 0;
    let seals = if noexec {
        F_SEAL_EXEC
    } else if flags & MFD_ALLOW_SEALING != 0 {
        0
    } else {
        F_SEAL_SEAL
    };
    let file = crate::fs::memfd::create(&name, &super::caller_cred(ctx), noexec, seals)?;
    let limit = fd_limit(ctx);
    let fd = ctx
        .process
        .files()
        .lock()
        .insert(file, flags & MFD_CLOEXEC != 0, limit)?;
    Ok(fd as isize)
}

/// F_SETOWN/F_SETOWN_EX: a nonzero owner must exist (ESRCH).
fn set_owner(file: &crate::fs::File, kind: u32, pid: u32) -> Result<()> {
    if pid != 0 && crate::process::find_task(pid).is_none() {
        return Err(Error::new(Errno::ESRCH));
    }
    file.set_owner(kind, pid);
    Ok(())}

pub fn sys_ioctl(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (fd, cmd, arg) = (fd_arg(args[0]), args[1] as u32, args[2]);
    let file = get_io_file(ctx, fd)?;
    match cmd {
        FIONBIO => {
            let mut on = [0u8; 4];
            ctx.read_into(arg, &mut on)?;
            let flags = file.flags() & !O_NONBLOCK;
            file.set_status_flags(if i32::from_ne_bytes(on) != 0 {
                flags | O_NONBLOCK
            } else {
                flags
            });
            Ok(0)
        }
        FIOCLEX | FIONCLEX => {
            ctx.process.files().lock().set_cloexec(fd, cmd == FIOCLEX)?;
            Ok(0)
        }
        FIOASYNC => Ok(0),
        TIOCGPTPEER => match crate::tty::pty::open_peer(&file, arg as u32) {
            Some(peer) => {
                let peer = peer?;
                let flags = arg as u32;
                if let Some(ops) = peer.ops() {
                    ops.opened(flags, &CallerCtx(ctx))?;
                }
                let limit = fd_limit(ctx);
                let cloexec = flags & O_CLOEXEC != 0;
                let fd = ctx.process.files().lock().insert(peer.clone(), cloexec, limit);
                // Dropped (if the table was full) outside the table lock.
                drop(peer);
                Ok(fd? as isize)
            }
            None => file.ioctl(cmd, arg, &CallerCtx(ctx)),
        },
        FIONREAD if file.ops().is_none() && file.node().file_type() == FileType::Regular => {
            let left = (file.node().size() as u64).saturating_sub(file.position());
            ctx.write_bytes(arg, &(left.min(i32::MAX as u64) as i32).to_ne_bytes())?;
            Ok(0)
        }
        _ if crate::block::loop_dev::is_loop_file(&file) => {
            crate::block::loop_dev::ioctl(&file, cmd, arg, &CallerCtx(ctx), &|fd| {
                get_io_file(ctx, fd)
            })
        }
        _ => file.ioctl(cmd, arg, &CallerCtx(ctx)),
    }
}

/// fsync(2), fdatasync(2): the file's dirty pages (and, for a file
/// system on a disk, its metadata) are written and the device flushed
/// before it returns; EIO if a write-back of the file failed since the
/// last fsync. As on Linux, only files whose file system implements it
/// may be synced: EINVAL for pipes, sockets, character devices, eventfd
/// and epoll descriptors, everything in /proc, and sysfs directories
/// (sysfs files and tmpfs, ramfs and devtmpfs files and directories
/// succeed, with nothing to write).
pub fn sys_fsync(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if file.ops().is_some() {
        return Err(Error::new(Errno::EINVAL));
    }
    let supported = match mount::fstype_of(file.node()).as_str() {
        "proc" => false,
        "sysfs" => !file.node().is_dir(),
        _ => true,
    };
    if !supported {
        return Err(Error::new(Errno::EINVAL));
    }
    file.node().sync(false)?;
    Ok(0)
}

/// syncfs(2): any open file (not O_PATH) names its file system, whose
/// dirty data reaches its device.
pub fn sys_syncfs(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    file.node().sync_fs()?;
    Ok(0)
}

/// sync(2): every file system, then every cache, then every disk's
/// write cache. It cannot fail (errors stay for each file's fsync).
pub fn sys_sync(_ctx: &mut Context, _args: &SyscallArgs) -> Result<isize> {
    crate::block::sync_all();
    Ok(0)
}
