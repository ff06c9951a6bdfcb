//! pidfd_open(2), pidfd_send_signal(2) and pidfd_getfd(2) (the files are
//! `process::pidfd`; waitid(P_PIDFD) is in `process.rs`, CLONE_PIDFD in
//! `process/fork.rs`).
//!
//! Not supported: PIDFD_THREAD (pidfds for single threads, Linux 6.9),
//! which is EINVAL as on earlier kernels.

use alloc::sync::Arc;

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::fs::{File, O_NONBLOCK};
use crate::process::pidfd::{as_pidfd, new_pidfd, PidFd};
use crate::process::signal::{self, SigInfo, SI_TKILL, SI_USER};
use crate::process::{self, Pid, Process};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (424, "pidfd_send_signal", sys_pidfd_send_signal),
    (434, "pidfd_open", sys_pidfd_open),
    (438, "pidfd_getfd", sys_pidfd_getfd),
];

/// The pidfd open on `fd`: EBADF for a closed descriptor or another file.
pub fn pidfd_file(ctx: &Context, fd: i32) -> Result<Arc<File>> {
    let file = ctx.process.files().lock().get(fd)?;
    if file.is_path_only() || as_pidfd(&file).is_none() {
        return Err(Error::new(Errno::EBADF));
    }
    Ok(file)
}

fn pidfd_of(file: &File) -> Result<&PidFd> {
    as_pidfd(file).ok_or(Error::new(Errno::EBADF))
}

/// Installs `file` close-on-exec in the caller's table.
fn install(ctx: &Context, file: Arc<File>) -> Result<isize> {
    let limit = process::nofile_limit(ctx.process);
    let fd = ctx.process.files().lock().insert(file, true, limit)?;
    Ok(fd as isize)
}

/// pidfd_open(pid, flags): a pidfd for the process `pid`, a zombie too.
/// EINVAL for flags other than PIDFD_NONBLOCK or a pid <= 0; ENOENT for
/// a thread that is not a thread-group leader (Linux 6.9 on; EINVAL
/// before); ESRCH if there is no such process.
fn sys_pidfd_open(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (pid, flags) = (a[0] as i32, a[1] as u32);
    if flags & !O_NONBLOCK != 0 || pid <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let Some(p) = process::find_process(pid as Pid) else {
        if process::find_thread(pid as Pid).is_some() {
            return Err(Error::new(Errno::ENOENT));
        }
        return Err(Error::new(Errno::ESRCH));
    };
    install(ctx, new_pidfd(p, flags & O_NONBLOCK != 0))
}

const PIDFD_SIGNAL_THREAD: u32 = 1;
const PIDFD_SIGNAL_THREAD_GROUP: u32 = 2;
const PIDFD_SIGNAL_PROCESS_GROUP: u32 = 4;

/// pidfd_send_signal(pidfd, sig, info, flags): kill(2) aimed through a
/// pidfd. `flags` picks the scope: the process (0 or
/// PIDFD_SIGNAL_THREAD_GROUP), its thread-group leader thread
/// (PIDFD_SIGNAL_THREAD) or the process group whose id is the pid
/// (PIDFD_SIGNAL_PROCESS_GROUP). A NULL `info` sends SI_USER (SI_TKILL
/// for a thread) from the caller; a given one follows rt_sigqueueinfo's
/// rules (EINVAL unless its si_signo is `sig`, EPERM for si_code >= 0 or
/// SI_TKILL to anyone but the caller). ESRCH once the process is reaped (a
/// zombie takes the signal in vain); then the signal number (EINVAL) and
/// kill's permission rule (EPERM).
fn sys_pidfd_send_signal(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (fd, sig, info_addr, flags) = (a[0] as i32, a[1] as i32, a[2], a[3] as u32);
    let scopes = PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP | PIDFD_SIGNAL_PROCESS_GROUP;
    if flags & !scopes != 0 || flags.count_ones() > 1 {
        return Err(Error::new(Errno::EINVAL));
    }
    let file = pidfd_file(ctx, fd)?;
    let pidfd = pidfd_of(&file)?;
    let pid = pidfd.pid();
    let info = if info_addr != 0 {
        let info: SigInfo = ctx.read_val(info_addr)?;
        if info.signo != sig {
            return Err(Error::new(Errno::EINVAL));
        }
        let to_self = ctx.thread.tid() == pid && flags != PIDFD_SIGNAL_PROCESS_GROUP;
        if !to_self && (info.code >= 0 || info.code == SI_TKILL) {
            return Err(Error::new(Errno::EPERM));
        }
        info
    } else {
        let code = if flags == PIDFD_SIGNAL_THREAD { SI_TKILL } else { SI_USER };
        let mut info = SigInfo::from_sender(0, code, ctx.process.pid());
        info.uid = ctx.process.creds().ruid;
        info
    };
    if flags == PIDFD_SIGNAL_PROCESS_GROUP {
        let group: alloc::vec::Vec<_> = process::all_processes().into_iter().filter(|p| p.pgid() == pid).collect();
        if group.is_empty() {
            return Err(Error::new(Errno::ESRCH));
        }
        let sig = signal::check_signo(sig as u32 as u64, true)?;
        let allowed: alloc::vec::Vec<_> = group.iter().filter(|p| super::signal::may_signal(ctx, p, sig)).collect();
        if allowed.is_empty() {
            return Err(Error::new(Errno::EPERM));
        }
        for p in allowed {
            send(p, None, sig, info);
        }
        return Ok(0);
    }
    let target = pidfd.live_or_zombie()?.clone();
    let sig = signal::check_signo(sig as u32 as u64, true)?;
    if !super::signal::may_signal(ctx, &target, sig) {
        return Err(Error::new(Errno::EPERM));
    }
    let thread = (flags == PIDFD_SIGNAL_THREAD)
        .then(|| target.threads().into_iter().find(|t| t.tid() == pid))
        .flatten();
    send(&target, thread.as_deref(), sig, info);
    Ok(0)
}

/// Sends `info` as signal `sig` (0: nothing) to `p`, or to one of its
/// threads; a zombie takes it in vain.
fn send(p: &Arc<Process>, thread: Option<&process::Thread>, sig: usize, mut info: SigInfo) {
    if sig == 0 || p.exit_status().is_some() {
        return;
    }
    info.signo = sig as i32;
    match thread {
        Some(t) => signal::send_to_thread(p, t, info),
        None => signal::send_to_process(p, info),
    }
}

/// pidfd_getfd(pidfd, targetfd, flags): a duplicate, close-on-exec, of
/// descriptor `targetfd` of the process. EINVAL for flags; EBADF for a
/// bad pidfd; ESRCH once the process has exited; EPERM unless the caller
/// may "ptrace-attach" to it (see [`process::ptrace_may_access`]); EBADF
/// if `targetfd` is not open there.
fn sys_pidfd_getfd(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (fd, target_fd, flags) = (a[0] as i32, a[1] as i32, a[2] as u32);
    if flags != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let file = pidfd_file(ctx, fd)?;
    let target = pidfd_of(&file)?.process().clone();
    if target.exit_status().is_some() {
        return Err(Error::new(Errno::ESRCH));
    }
    if !may_attach(ctx.process, &target) {
        return Err(Error::new(Errno::EPERM));
    }
    let theirs = target.files().lock().get(target_fd)?;
    install(ctx, theirs)
}

/// The ptrace access check (PTRACE_MODE_ATTACH_REALCREDS).
fn may_attach(me: &Arc<Process>, target: &Arc<Process>) -> bool {
    process::ptrace_may_access(me, target, process::AccessCreds::Real)
}
