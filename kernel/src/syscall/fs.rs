//! File syscalls: the table, and what the families below share (fetching
//! a descriptor's file, resolving `(dirfd, path)` pairs, the fd limit).
//!
//! Families: `io` (read/write and friends), `fd` (descriptor management,
//! fcntl, ioctl), `path` (creating, removing and renaming names), `attr`
//! (stat, statfs, access), `setattr` (chmod, chown, times, truncate), `dir`
//! (directory listing, cwd, umask), `poll` (poll/select), `mount`,
//! `xattr` (extended attributes).

mod attr;
mod dir;
mod epoll;
mod eventfd;
mod fd;
mod io;
mod lock;
mod mount;
mod path;
mod pipe;
mod poll;
pub(crate) use self::poll::restartable_poll;
mod range;
mod setattr;
mod signalfd;
mod timerfd;
mod splice;
mod xattr;

use alloc::sync::Arc;

use super::{Context, SyscallFn};
use crate::error::{Errno, Error, Result};
use frame::sync::WaitQueue;

use crate::fs::{Caller, Cred, File, FsContext, Inode};
use crate::process::signal::{self, SigInfo};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (0, "read", io::sys_read),
    (1, "write", io::sys_write),
    (2, "open", path::sys_open),
    (3, "close", fd::sys_close),
    (4, "stat", attr::sys_stat),
    (5, "fstat", attr::sys_fstat),
    (6, "lstat", attr::sys_lstat),
    (7, "poll", poll::sys_poll),
    (8, "lseek", io::sys_lseek),
    (16, "ioctl", fd::sys_ioctl),
    (17, "pread64", io::sys_pread64),
    (18, "pwrite64", io::sys_pwrite64),
    (19, "readv", io::sys_readv),
    (20, "writev", io::sys_writev),
    (21, "access", attr::sys_access),
    (22, "pipe", pipe::sys_pipe),
    (23, "select", poll::sys_select),
    (32, "dup", fd::sys_dup),
    (33, "dup2", fd::sys_dup2),
    (40, "sendfile", io::sys_sendfile),
    (72, "fcntl", fd::sys_fcntl),
    (73, "flock", lock::sys_flock),
    (74, "fsync", fd::sys_fsync),
    (75, "fdatasync", fd::sys_fsync),
    (78, "getdents", dir::sys_getdents),
    (76, "truncate", setattr::sys_truncate),
    (77, "ftruncate", setattr::sys_ftruncate),
    (79, "getcwd", dir::sys_getcwd),
    (80, "chdir", dir::sys_chdir),
    (81, "fchdir", dir::sys_fchdir),
    (82, "rename", path::sys_rename),
    (83, "mkdir", path::sys_mkdir),
    (84, "rmdir", path::sys_rmdir),
    (85, "creat", path::sys_creat),
    (86, "link", path::sys_link),
    (87, "unlink", path::sys_unlink),
    (88, "symlink", path::sys_symlink),
    (89, "readlink", path::sys_readlink),
    (90, "chmod", setattr::sys_chmod),
    (91, "fchmod", setattr::sys_fchmod),
    (92, "chown", setattr::sys_chown),
    (93, "fchown", setattr::sys_fchown),
    (94, "lchown", setattr::sys_lchown),
    (95, "umask", dir::sys_umask),
    (132, "utime", setattr::sys_utime),
    (133, "mknod", path::sys_mknod),
    (137, "statfs", attr::sys_statfs),
    (138, "fstatfs", attr::sys_fstatfs),
    (161, "chroot", dir::sys_chroot),
    (162, "sync", fd::sys_sync),
    (165, "mount", mount::sys_mount),
    (166, "umount2", mount::sys_umount2),
    (187, "readahead", range::sys_readahead),
    (188, "setxattr", xattr::sys_setxattr),
    (189, "lsetxattr", xattr::sys_lsetxattr),
    (190, "fsetxattr", xattr::sys_fsetxattr),
    (191, "getxattr", xattr::sys_getxattr),
    (192, "lgetxattr", xattr::sys_lgetxattr),
    (193, "fgetxattr", xattr::sys_fgetxattr),
    (194, "listxattr", xattr::sys_listxattr),
    (195, "llistxattr", xattr::sys_llistxattr),
    (196, "flistxattr", xattr::sys_flistxattr),
    (197, "removexattr", xattr::sys_removexattr),
    (198, "lremovexattr", xattr::sys_lremovexattr),
    (199, "fremovexattr", xattr::sys_fremovexattr),
    (213, "epoll_create", epoll::sys_epoll_create),
    (217, "getdents64", dir::sys_getdents64),
    (221, "fadvise64", range::sys_fadvise64),
    (232, "epoll_wait", epoll::sys_epoll_wait),
    (233, "epoll_ctl", epoll::sys_epoll_ctl),
    (235, "utimes", setattr::sys_utimes),
    (257, "openat", path::sys_openat),
    (258, "mkdirat", path::sys_mkdirat),
    (259, "mknodat", path::sys_mknodat),
    (260, "fchownat", setattr::sys_fchownat),
    (261, "futimesat", setattr::sys_futimesat),
    (262, "newfstatat", attr::sys_newfstatat),
    (263, "unlinkat", path::sys_unlinkat),
    (264, "renameat", path::sys_renameat),
    (265, "linkat", path::sys_linkat),
    (266, "symlinkat", path::sys_symlinkat),
    (267, "readlinkat", path::sys_readlinkat),
    (268, "fchmodat", setattr::sys_fchmodat),
    (269, "faccessat", attr::sys_faccessat),
    (270, "pselect6", poll::sys_pselect6),
    (271, "ppoll", poll::sys_ppoll),
    (275, "splice", splice::sys_splice),
    (276, "tee", splice::sys_tee),
    (277, "sync_file_range", range::sys_sync_file_range),
    (278, "vmsplice", splice::sys_vmsplice),
    (280, "utimensat", setattr::sys_utimensat),
    (281, "epoll_pwait", epoll::sys_epoll_pwait),
    (284, "eventfd", eventfd::sys_eventfd),
    (285, "fallocate", range::sys_fallocate),
    (290, "eventfd2", eventfd::sys_eventfd2),
    (282, "signalfd", signalfd::sys_signalfd),
    (289, "signalfd4", signalfd::sys_signalfd4),
    (283, "timerfd_create", timerfd::sys_timerfd_create),
    (286, "timerfd_settime", timerfd::sys_timerfd_settime),
    (287, "timerfd_gettime", timerfd::sys_timerfd_gettime),
    (291, "epoll_create1", epoll::sys_epoll_create1),
    (292, "dup3", fd::sys_dup3),
    (293, "pipe2", pipe::sys_pipe2),
    (295, "preadv", io::sys_preadv),
    (296, "pwritev", io::sys_pwritev),
    (306, "syncfs", fd::sys_syncfs),
    (316, "renameat2", path::sys_renameat2),
    (319, "memfd_create", fd::sys_memfd_create),
    (326, "copy_file_range", range::sys_copy_file_range),
    (327, "preadv2", io::sys_preadv2),
    (328, "pwritev2", io::sys_pwritev2),
    (332, "statx", attr::sys_statx),
    (436, "close_range", fd::sys_close_range),
    (439, "faccessat2", attr::sys_faccessat2),
    (441, "epoll_pwait2", epoll::sys_epoll_pwait2),
];

pub const AT_FDCWD: i32 = -100;
pub const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
pub const AT_REMOVEDIR: u32 = 0x200;
pub const AT_EACCESS: u32 = 0x200;
pub const AT_SYMLINK_FOLLOW: u32 = 0x400;
pub const AT_NO_AUTOMOUNT: u32 = 0x800;
pub const AT_EMPTY_PATH: u32 = 0x1000;

/// Largest byte count of one read or write (Linux's MAX_RW_COUNT).
const MAX_RW_COUNT: usize = 0x7fff_f000;

/// A descriptor argument (C `int`: the low 32 bits of the register).
fn fd_arg(arg: u64) -> i32 {
    arg as u32 as i32
}

/// A byte-count argument, clamped like Linux clamps it.
fn count_arg(arg: u64) -> usize {
    usize::try_from(arg).unwrap_or(usize::MAX).min(MAX_RW_COUNT)
}

/// The file open on `fd`, O_PATH descriptors included (Linux's
/// `fdget_raw`): for calls that only name the file (fstat, fchdir,
/// fstatfs, a dirfd, AT_EMPTY_PATH, dup, fcntl's descriptor commands).
fn get_file(ctx: &Context, fd: i32) -> Result<Arc<File>> {
    ctx.files.lock().get(fd)
}

/// The file open on `fd` for a call that uses the open file itself
/// (Linux's `fdget`): EBADF for an O_PATH descriptor as for a closed one
/// (open(2): read, write, ioctl, lseek, fsync, mmap, epoll_ctl, ...).
fn get_io_file(ctx: &Context, fd: i32) -> Result<Arc<File>> {
    let file = get_file(ctx, fd)?;
    if file.is_path_only() {
        return Err(Error::new(Errno::EBADF));
    }
    Ok(file)
}

/// The caller's root, cwd and umask (a snapshot: the lock is released),
/// acting with the caller's file-system ids.
fn fs_context(ctx: &Context) -> FsContext {
    let cred = caller_cred(ctx);
    ctx.process.fs().lock().snapshot_for(cred)
}

/// The caller's file-system ids, for permission checks.
fn caller_cred(ctx: &Context) -> Cred {
    ctx.process.fs_cred()
}

/// The caller's RLIMIT_NOFILE, as a descriptor bound.
fn fd_limit(ctx: &Context) -> usize {
    crate::process::nofile_limit(ctx.process)
}

/// Where a path given with `dirfd` starts: ENOENT for an empty path (check
/// AT_EMPTY_PATH first), the root for an absolute one (dirfd unused), else
/// the cwd (AT_FDCWD) or the directory open on `dirfd` (EBADF).
fn start_dir(ctx: &Context, fs: &FsContext, dirfd: i32, path: &str) -> Result<Arc<dyn Inode>> {
    if path.is_empty() {
        return Err(Error::new(Errno::ENOENT));
    }
    if path.starts_with('/') {
        Ok(fs.root().clone())
    } else if dirfd == AT_FDCWD {
        Ok(fs.cwd().clone())
    } else {
        Ok(get_file(ctx, dirfd)?.node().clone())
    }
}

/// The inode `dirfd` itself names, for AT_EMPTY_PATH with an empty path.
fn dirfd_inode(ctx: &Context, fs: &FsContext, dirfd: i32) -> Result<Arc<dyn Inode>> {
    if dirfd == AT_FDCWD {
        Ok(fs.cwd().clone())
    } else {
        Ok(get_file(ctx, dirfd)?.node().clone())
    }
}

/// Resolves the path at user address `path_addr` relative to `dirfd`;
/// `empty_ok` implements AT_EMPTY_PATH.
fn resolve_at(
    ctx: &Context,
    dirfd: i32,
    path_addr: u64,
    follow: bool,
    empty_ok: bool,
) -> Result<Arc<dyn Inode>> {
    resolve_at_as(ctx, &fs_context(ctx), dirfd, path_addr, follow, empty_ok)
}

/// [`resolve_at`] with the credentials (and root, cwd) of `fs`.
fn resolve_at_as(
    ctx: &Context,
    fs: &FsContext,
    dirfd: i32,
    path_addr: u64,
    follow: bool,
    empty_ok: bool,
) -> Result<Arc<dyn Inode>> {
    ctx.with_path(path_addr, |path| {
        if path.is_empty() && empty_ok {
            return dirfd_inode(ctx, fs, dirfd);
        }
        let start = start_dir(ctx, fs, dirfd, path)?;
        crate::fs::lookup(fs, &start, path, follow)
    })
}

/// The calling thread, for file operations that touch user memory, block,
/// or signal.
pub(crate) struct CallerCtx<'a, 'b>(pub(crate) &'a Context<'b>);

impl Caller for CallerCtx<'_, '_> {
    fn read_bytes(&self, addr: u64, buf: &mut [u8]) -> Result<()> {
        self.0.read_into(addr, buf)
    }

    fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<()> {
        self.0.write_bytes(addr, data)
    }

    fn pgid(&self) -> u32 {
        self.0.process.pgid()
    }

    fn sid(&self) -> u32 {
        self.0.process.sid()
    }

    fn wait(
        &self,
        queue: &WaitQueue,
        ready: &mut dyn FnMut() -> bool,
        deadline_ns: u64,
    ) -> Result<bool> {
        let (p, t) = (self.0.process, self.0.thread);
        let r = signal::wait_interruptible_deadline(
            p,
            t,
            queue,
            || ready().then_some(()),
            deadline_ns,
        )?;
        Ok(r.is_some())
    }

    fn raise(&self, signo: u32) {
        let pid = self.0.process.pid();
        let info = SigInfo::from_sender(signo as usize, signal::SI_USER, pid);
        signal::send_to_process(self.0.process, info);
    }

    fn raise_thread(&self, signo: u32) {
        let pid = self.0.process.pid();
        let info = SigInfo::from_sender(signo as usize, signal::SI_USER, pid);
        signal::send_to_thread(self.0.process, self.0.thread, info);
    }

    fn file_size_limit(&self) -> u64 {
        self.0.process.rlimits.lock().0[crate::process::rlimit::RLIMIT_FSIZE].cur
    }

    fn capable(&self, cap: u32) -> bool {
        self.0.process.creds().capable(cap)
    }

    fn signal_pending(&self) -> bool {
        signal::has_deliverable(self.0.process, self.0.thread)
    }

    fn pending_signals(&self) -> u64 {
        signal::pending_mask(self.0.process, self.0.thread)
    }

    fn take_signal(&self, mask: u64) -> Option<SigInfo> {
        signal::dequeue_in(self.0.process, self.0.thread, mask)
    }

    fn ucred(&self) -> (u32, u32, u32) {
        let creds = self.0.process.creds();
        (self.0.process.pid(), creds.euid, creds.egid)
    }

    fn fs_context(&self) -> Option<FsContext> {
        Some(fs_context(self.0))
    }
}
