//! Process lifecycle and identity syscalls.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;


use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::{self, exit_status_for, CloneArgs, Pid, WaitOptions, WaitTarget};
use crate::time::Rusage;

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (39, "getpid", sys_getpid),
    (56, "clone", sys_clone),
    (435, "clone3", sys_clone3),
    (57, "fork", sys_fork),
    (58, "vfork", sys_vfork),
    (59, "execve", sys_execve),
    (322, "execveat", sys_execveat),
    (60, "exit", sys_exit),
    (61, "wait4", sys_wait4),
    (109, "setpgid", sys_setpgid),
    (110, "getppid", sys_getppid),
    (111, "getpgrp", sys_getpgrp),
    (112, "setsid", sys_setsid),
    (121, "getpgid", sys_getpgid),
    (124, "getsid", sys_getsid),
    (186, "gettid", sys_gettid),
    (202, "futex", sys_futex),
    (98, "getrusage", sys_getrusage),
    (100, "times", sys_times),
    (157, "prctl", sys_prctl),
    (218, "set_tid_address", sys_set_tid_address),
    (247, "waitid", sys_waitid),
    (231, "exit_group", sys_exit_group),
    (273, "set_robust_list", sys_set_robust_list),
    (274, "get_robust_list", sys_get_robust_list),
];

fn sys_getpid(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    Ok(ctx.process.pid() as isize)
}

fn sys_gettid(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    Ok(ctx.thread.tid() as isize)
}

fn sys_getppid(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    Ok(ctx.process.ppid() as isize)
}

/// The process of task `pid` (any thread id names its process; 0 is the
/// caller), for getpgid/getsid.
fn target_process(ctx: &Context, pid: u64) -> Result<alloc::sync::Arc<process::Process>> {
    let pid = pid as i32;
    if pid < 0 {
        return Err(Error::new(Errno::ESRCH));
    }
    if pid == 0 {
        return Ok(ctx.process.clone());
    }
    process::find_task(pid as Pid).map(|(p, _)| p).ok_or(Error::new(Errno::ESRCH))
}

fn sys_getpgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(target_process(ctx, a[0])?.pgid() as isize)
}

fn sys_getpgrp(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    Ok(ctx.process.pgid() as isize)
}

fn sys_getsid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(target_process(ctx, a[0])?.sid() as isize)
}

/// setpgid(2): the target is the caller or one of its children, in the same
/// session; the group must exist in that session unless it is the target's
/// own pid.
fn sys_setpgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (pid, pgid) = (a[0] as i32, a[1] as i32);
    // Linux's order: pid 0 is the caller, pgid 0 is pid (so a negative
    // pid with pgid 0 is EINVAL too), then a negative pgid is EINVAL.
    let pid = if pid == 0 { ctx.process.pid() as i32 } else { pid };
    let pgid_given = if pgid == 0 { pid } else { pgid };
    if pgid_given < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // The target must exist (ESRCH), be a process rather than another
    // thread (EINVAL), and be the caller or one of its children (ESRCH).
    let target = if pid == 0 || pid as Pid == ctx.process.pid() {
        ctx.process.clone()
    } else {
        let (p, _) = u32::try_from(pid).ok().and_then(process::find_task).ok_or(Error::new(Errno::ESRCH))?;
        if p.pid() != pid as Pid {
            return Err(Error::new(Errno::EINVAL));
        }
        let child = ctx.process.children().into_iter().find(|c| c.pid() == pid as Pid);
        child.ok_or(Error::new(Errno::ESRCH))?
    };
    if target.sid() != ctx.process.sid() {
        return Err(Error::new(Errno::EPERM));
    }
    // A child that has already called execve can no longer be moved.
    if target.pid() != ctx.process.pid() && target.did_exec.load(Ordering::Relaxed) {
        return Err(Error::new(Errno::EACCES));
    }
    if target.pid() == target.sid() {
        return Err(Error::new(Errno::EPERM)); // a session leader
    }
    let pgid = if pgid == 0 { target.pid() } else { pgid as Pid };
    if pgid != target.pid() && !process::all_processes().iter().any(|p| p.pgid() == pgid && p.sid() == target.sid()) {
        return Err(Error::new(Errno::EPERM));
    }
    target.set_pgid(pgid);
    Ok(0)
}

fn sys_setsid(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    let pid = ctx.process.pid();
    if process::all_processes().iter().any(|p| p.pgid() == pid) {
        return Err(Error::new(Errno::EPERM));
    }
    ctx.process.set_sid(pid);
    ctx.process.set_pgid(pid);
    Ok(pid as isize)
}

fn do_clone(ctx: &mut Context, args: CloneArgs) -> Result<isize> {
    let pid = process::clone_process(ctx.process, ctx.thread, ctx.user, args)?;
    Ok(pid as isize)
}

fn sys_fork(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    do_clone(ctx, CloneArgs { flags: 17, ..Default::default() })
}

fn sys_vfork(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    do_clone(ctx, CloneArgs { flags: 17 | process::CLONE_VM | process::CLONE_VFORK, ..Default::default() })
}

/// clone(flags, stack, parent_tid, child_tid, tls) — the x86-64 order.
fn sys_clone(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    do_clone(ctx, CloneArgs { flags: a[0], stack: a[1], parent_tid: a[2], child_tid: a[3], tls: a[4], ..Default::default() })
}

/// clone3's `struct clone_args` size of its first version, and the size
/// this kernel knows (up to `cgroup`).
const CLONE_ARGS_SIZE_VER0: usize = 64;
const CLONE_ARGS_SIZE: usize = 88;
/// clone3-only flags (above the 32 bits clone(2) has).
const CLONE_CLEAR_SIGHAND: u64 = 0x1_0000_0000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
/// CLONE_NEWTIME shares its bit with the exit-signal byte of clone(2).
const CLONE_NEWTIME: u64 = 0x80;

/// clone3(args, size): the flags, exit signal, stack (base and size) and
/// pointers come from `struct clone_args`; a larger struct must be zero
/// past the fields known here (E2BIG), a smaller one than version 0 is
/// EINVAL, as are the exit-signal byte in the flags, CLONE_DETACHED, an
/// exit signal with CLONE_THREAD or CLONE_PARENT, a stack without a size
/// (or the reverse) and CLONE_CLEAR_SIGHAND with CLONE_SIGHAND. There are
/// no cgroups (CLONE_INTO_CGROUP: EINVAL) and no pid namespaces to pick a
/// pid in (set_tid: EINVAL).
fn sys_clone3(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let size = a[1] as usize;
    if size < CLONE_ARGS_SIZE_VER0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if size > frame::mm::PAGE_SIZE {
        return Err(Error::new(Errno::E2BIG));
    }
    let raw = ctx.read_bytes(a[0], size)?;
    if raw[CLONE_ARGS_SIZE.min(size)..].iter().any(|&b| b != 0) {
        return Err(Error::new(Errno::E2BIG));
    }
    let mut words = [0u64; CLONE_ARGS_SIZE / 8];
    for (i, w) in words.iter_mut().enumerate() {
        if let Some(b) = raw.get(i * 8..i * 8 + 8) {
            *w = u64::from_le_bytes(b.try_into().map_err(|_| Error::new(Errno::EINVAL))?);
        }
    }
    let [flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, _cgroup] = words;
    let legacy = 0xffff_ffffu64;
    if flags & !(legacy | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP) != 0
        || flags & (process::CLONE_DETACHED | (0xff & !CLONE_NEWTIME)) != 0
        || flags & (process::CLONE_SIGHAND | CLONE_CLEAR_SIGHAND) == process::CLONE_SIGHAND | CLONE_CLEAR_SIGHAND
        || (flags & (process::CLONE_THREAD | process::CLONE_PARENT) != 0 && exit_signal != 0)
        || exit_signal > crate::process::signal::NSIG as u64
        || (stack == 0) != (stack_size == 0)
        || (set_tid == 0 && set_tid_size != 0)
    {
        return Err(Error::new(Errno::EINVAL));
    }
    if flags & CLONE_INTO_CGROUP != 0 || flags & CLONE_NEWTIME != 0 {
        return Err(Error::with_message(Errno::EINVAL, "no cgroups or time namespaces"));
    }
    if set_tid_size != 0 {
        return Err(Error::with_message(Errno::EINVAL, "set_tid: no pid namespaces"));
    }
    let top = if stack == 0 { 0 } else { stack.checked_add(stack_size).ok_or(Error::new(Errno::EINVAL))? };
    do_clone(
        ctx,
        CloneArgs {
            flags: (flags & legacy) | exit_signal,
            stack: top,
            parent_tid,
            child_tid,
            tls,
            pidfd: Some(pidfd),
            clear_sighand: flags & CLONE_CLEAR_SIGHAND != 0,
        },
    )
}

/// Reads a NULL-terminated array of string pointers (argv, envp).
fn read_string_array(ctx: &Context, addr: u64) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    let mut total = 0usize;
    for i in 0.. {
        let ptr: u64 = ctx.read_val(addr.checked_add(i * 8).ok_or(Error::new(Errno::EFAULT))?)?;
        if ptr == 0 {
            break;
        }
        let s = ctx.read_cstring(ptr, process::MAX_ARG_STRLEN).map_err(|e| match e.errno() {
            Errno::ENAMETOOLONG => Error::new(Errno::E2BIG),
            _ => e,
        })?;
        total += s.len() + 1;
        if total > process::ARG_MAX {
            return Err(Error::new(Errno::E2BIG));
        }
        crate::fallible::push(&mut out, s)?;
    }
    Ok(out)
}

/// execve(2). As on Linux, the file is looked up (ENOENT, EACCES ...)
/// before argv and envp are read (EFAULT, E2BIG).
fn sys_execve(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let path = ctx.read_path(a[0])?;
    if path.is_empty() {
        return Err(Error::new(Errno::ENOENT));
    }
    let fs = process::exec_fs(ctx.process);
    let file = process::ExecFile::from_path(&fs, &path)?;
    let argv = read_string_array(ctx, a[1])?;
    let envp = read_string_array(ctx, a[2])?;
    process::execve(ctx.process, ctx.thread, ctx.user, &fs, file, argv, envp)?;
    // The new program starts with rax = 0 (set by the fresh context).
    Ok(0)
}

const AT_FDCWD: i32 = -100;
const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
const AT_EMPTY_PATH: u32 = 0x1000;
/// Only check that the file could be executed (Linux 6.14).
const AT_EXECVE_CHECK: u32 = 0x10000;

/// execveat(dirfd, path, argv, envp, flags): execve with a relative path
/// taken from `dirfd`, or with AT_EMPTY_PATH and an empty path the file
/// open on `dirfd` (fexecve(3); O_PATH descriptors too).
/// AT_SYMLINK_NOFOLLOW: ELOOP for a final symlink; AT_EXECVE_CHECK: stop
/// after the checks, returning 0. Other flags: EINVAL. Like Linux, the new
/// program's AT_EXECFN (and a script's path for its interpreter) is
/// "/dev/fd/N/path" or "/dev/fd/N" when the file was found through
/// `dirfd`; a script reached through a close-on-exec `dirfd` is ENOENT
/// (its interpreter could not open it).
fn sys_execveat(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (dirfd, flags) = (a[0] as u32 as i32, a[4] as u32);
    let path = ctx.read_path(a[1])?;
    if path.is_empty() && flags & AT_EMPTY_PATH == 0 {
        return Err(Error::new(Errno::ENOENT));
    }
    if flags & !(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_EXECVE_CHECK) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
    let fs = process::exec_fs(ctx.process);
    let through_fd = dirfd != AT_FDCWD && !path.starts_with('/');
    let file = if !through_fd {
        if path.is_empty() {
            // AT_FDCWD with an empty path names the cwd: a directory.
            return Err(Error::new(Errno::EACCES));
        }
        let (inode, found) = crate::fs::open_exec_at(&fs, fs.cwd(), &path, follow)?;
        let mut file = process::ExecFile::from_path_found(&fs, inode, &path, found);
        file.filename = path.clone();
        file
    } else {
        let (opened, cloexec) = {
            let shared = ctx.process.files();
            let table = shared.lock();
            (table.get(dirfd)?, table.cloexec(dirfd).unwrap_or(false))
        };
        if path.is_empty() {
            let inode = opened.node().clone();
            crate::fs::check_exec(&fs, &inode)?;
            let (exe, comm) = match opened.origin() {
                Some((dir, name)) => {
                    let mut p = crate::fs::path_of(&fs, dir).unwrap_or_default();
                    if !p.ends_with('/') {
                        p.push('/');
                    }
                    p.push_str(name);
                    (p, name.clone())
                }
                None => (alloc::format!("/dev/fd/{dirfd}"), alloc::format!("{dirfd}")),
            };
            process::ExecFile {
                inode,
                filename: alloc::format!("/dev/fd/{dirfd}"),
                exe,
                comm,
                inaccessible: cloexec,
            }
        } else {
            let (inode, found) = crate::fs::open_exec_at(&fs, opened.node(), &path, follow)?;
            let mut file = process::ExecFile::from_path_found(&fs, inode, &path, found);
            file.filename = alloc::format!("/dev/fd/{dirfd}/{path}");
            file.inaccessible = cloexec;
            file
        }
    };
    let argv = read_string_array(ctx, a[2])?;
    let envp = read_string_array(ctx, a[3])?;
    if flags & AT_EXECVE_CHECK != 0 {
        return Ok(0);
    }
    process::execve(ctx.process, ctx.thread, ctx.user, &fs, file, argv, envp)?;
    Ok(0)
}

fn sys_exit(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    process::exit_thread(ctx.process, ctx.thread, exit_status_for(a[0] as i32));
    Ok(0)
}

fn sys_futex(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let timeout_ptr = a[3];
    let op = a[1] & !(128 | 256);
    // WAIT, LOCK_PI, WAIT_BITSET and LOCK_PI2 take a timeout.
    let is_wait = matches!(op, 0 | 6 | 9 | 13);
    let timeout = |absolute: bool, realtime: bool| -> Result<u64> {
        if !is_wait || timeout_ptr == 0 {
            return Ok(u64::MAX);
        }
        let ts: crate::time::Timespec = ctx.read_val(timeout_ptr)?;
        let ns = ts.to_ns().ok_or(Error::new(Errno::EINVAL))?;
        let now = frame::timer::monotonic_ns();
        Ok(if absolute {
            let base = if realtime { crate::time::realtime_at_boot_ns() } else { 0 };
            now.saturating_add(ns.saturating_sub(base.saturating_add(now)))
        } else {
            now.saturating_add(ns)
        })
    };
    process::futex::futex(ctx.process, ctx.thread, a, &timeout)
}

fn sys_exit_group(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    process::do_exit(ctx.process, exit_status_for(a[0] as i32));
    Ok(0)
}

const WNOHANG: u64 = 1;
const WUNTRACED: u64 = 2;
const WCONTINUED: u64 = 8;
const WALL: u64 = 0x4000_0000;
const WCLONE: u64 = 0x8000_0000;
const WNOTHREAD: u64 = 0x2000_0000;

/// __WALL: every child; __WCLONE: only clone children; else ordinary ones.
fn clone_filter(options: u64) -> Option<bool> {
    if options & WALL != 0 {
        None
    } else {
        Some(options & WCLONE != 0)
    }
}

fn sys_wait4(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (pid, status_ptr, options, rusage) = (a[0] as i32, a[1], u64::from(a[2] as u32), a[3]);
    if options & !(WNOHANG | WUNTRACED | WCONTINUED | WALL | WCLONE | WNOTHREAD) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if pid == i32::MIN {
        return Err(Error::new(Errno::ESRCH));
    }
    let target = WaitTarget::from_arg(pid, ctx.process);
    let opts = WaitOptions {
        nohang: options & WNOHANG != 0,
        exited: true,
        stopped: options & WUNTRACED != 0,
        continued: options & WCONTINUED != 0,
        nowait: false,
        clone_children: clone_filter(options),
    };
    match process::wait_child(ctx.process, ctx.thread, target, opts)? {
        None => Ok(0),
        Some((child, status, usage)) => {
            // Linux reaps the child even if the status pointer is bad.
            if status_ptr != 0 {
                ctx.write_val(status_ptr, &status)?;
            }
            if rusage != 0 {
                ctx.write_val(rusage, &Rusage::from_usage(&usage))?;
            }
            Ok(child as isize)
        }
    }
}

fn sys_set_tid_address(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    ctx.thread.clear_child_tid.store(a[0], Ordering::Relaxed);
    Ok(ctx.thread.tid() as isize)
}

fn sys_set_robust_list(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    // The head is three words (struct robust_list_head).
    if a[1] != 24 {
        return Err(Error::new(Errno::EINVAL));
    }
    ctx.thread.robust_list.store(a[0], Ordering::Relaxed);
    Ok(0)
}

/// get_robust_list(pid, head_ptr, len_ptr): the caller's (pid 0) or any
/// thread's, given ptrace-like access to it.
fn sys_get_robust_list(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let tid = a[0] as i32;
    let thread = if tid == 0 {
        ctx.thread.clone()
    } else {
        let (p, t) = u32::try_from(tid).ok().and_then(process::find_thread).ok_or(Error::new(Errno::ESRCH))?;
        if !process::ptrace_may_access(ctx.process, &p, process::AccessCreds::Real) {
            return Err(Error::new(Errno::EPERM));
        }
        t
    };
    ctx.write_val(a[1], &thread.robust_list.load(Ordering::Relaxed))?;
    ctx.write_val(a[2], &24u64)?;
    Ok(0)
}

const RUSAGE_SELF: i64 = 0;
const RUSAGE_CHILDREN: i64 = -1;
const RUSAGE_THREAD: i64 = 1;

/// getrusage(2). RUSAGE_THREAD reports the calling thread's times,
/// faults and switches with the process's peak RSS, as Linux does.
fn sys_getrusage(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let p = ctx.process;
    let usage = match a[0] as i32 as i64 {
        RUSAGE_SELF => p.self_usage(),
        RUSAGE_THREAD => {
            let mut u = ctx.thread.usage();
            u.maxrss_kb = p.self_usage().maxrss_kb;
            u
        }
        RUSAGE_CHILDREN => p.children_usage(),
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    ctx.write_val(a[1], &Rusage::from_usage(&usage))?;
    Ok(0)
}

/// times(2): clock ticks (USER_HZ = 100) of CPU time, and the uptime.
fn sys_times(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let ticks = |ns: u64| (ns / 10_000_000) as i64;
    let p = ctx.process;
    if a[0] != 0 {
        let (own, children) = (p.self_usage(), p.children_usage());
        let t = [ticks(own.utime_ns), ticks(own.stime_ns), ticks(children.utime_ns), ticks(children.stime_ns)];
        ctx.write_val(a[0], &t)?;
    }
    Ok(ticks(frame::timer::monotonic_ns()) as isize)
}

const PR_SET_PDEATHSIG: u64 = 1;
const PR_GET_PDEATHSIG: u64 = 2;
const PR_SET_NAME: u64 = 15;
const PR_GET_NAME: u64 = 16;
const PR_SET_CHILD_SUBREAPER: u64 = 36;
const PR_GET_CHILD_SUBREAPER: u64 = 37;
const PR_GET_DUMPABLE: u64 = 3;
const PR_SET_DUMPABLE: u64 = 4;
const PR_GET_SECCOMP: u64 = 21;
const PR_CAPBSET_READ: u64 = 23;
const PR_SET_TIMERSLACK: u64 = 29;
const PR_GET_TIMERSLACK: u64 = 30;
const PR_SET_NO_NEW_PRIVS: u64 = 38;
const PR_GET_NO_NEW_PRIVS: u64 = 39;
/// CAP_LAST_CAP of Linux 6.x (CAP_CHECKPOINT_RESTORE).
const CAP_LAST_CAP: u64 = 40;

fn sys_prctl(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    match a[0] {
        PR_SET_NAME => {
            // The name is at most 16 bytes including the NUL; longer is cut.
            let mut name = alloc::vec::Vec::new();
            for i in 0..15 {
                let b: u8 = ctx.read_val(a[1] + i)?;
                if b == 0 {
                    break;
                }
                name.push(b);
            }
            let n = name.len();
            ctx.process.set_name(core::str::from_utf8(&name[..n]).unwrap_or("?"));
            Ok(0)
        }
        PR_GET_NAME => {
            let mut buf = [0u8; 16];
            let name = ctx.process.name();
            let n = name.len().min(15);
            buf[..n].copy_from_slice(&name.as_bytes()[..n]);
            ctx.write_bytes(a[1], &buf)?;
            Ok(0)
        }
        PR_SET_CHILD_SUBREAPER => {
            ctx.process.subreaper.store(a[1] != 0, Ordering::Relaxed);
            Ok(0)
        }
        PR_GET_CHILD_SUBREAPER => {
            ctx.write_val(a[1], &(ctx.process.subreaper.load(Ordering::Relaxed) as i32))?;
            Ok(0)
        }
        PR_SET_PDEATHSIG => {
            crate::process::signal::check_signo(a[1], true)?;
            ctx.process.pdeathsig.store(a[1] as u32, Ordering::Relaxed);
            Ok(0)
        }
        PR_GET_PDEATHSIG => {
            ctx.write_val(a[1], &(ctx.process.pdeathsig.load(Ordering::Relaxed) as i32))?;
            Ok(0)
        }
        PR_GET_DUMPABLE => Ok(ctx.process.dumpable.load(Ordering::Relaxed) as isize),
        PR_SET_DUMPABLE if a[1] <= 1 => {
            ctx.process.dumpable.store(a[1] as u32, Ordering::Relaxed);
            Ok(0)
        }
        // Not in seccomp mode (and seccomp is not built: setting is EINVAL).
        PR_GET_SECCOMP => Ok(0),
        // Capabilities are not modelled apart from euid 0, whose bounding
        // set is full: every valid capability is in it.
        PR_CAPBSET_READ if a[1] <= CAP_LAST_CAP => Ok(1),
        PR_SET_TIMERSLACK => {
            let slack = if a[1] == 0 { 50_000 } else { a[1] };
            ctx.process.timer_slack_ns.store(slack, Ordering::Relaxed);
            Ok(0)
        }
        PR_GET_TIMERSLACK => Ok(ctx.process.timer_slack_ns.load(Ordering::Relaxed) as isize),
        // One way only, and the other arguments must be zero.
        PR_SET_NO_NEW_PRIVS if a[1] == 1 && a[2..5].iter().all(|v| *v == 0) => {
            ctx.process.no_new_privs.store(true, Ordering::Relaxed);
            Ok(0)
        }
        PR_GET_NO_NEW_PRIVS if a[1..5].iter().all(|v| *v == 0) => {
            Ok(isize::from(ctx.process.no_new_privs.load(Ordering::Relaxed)))
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

const P_ALL: u64 = 0;
const P_PID: u64 = 1;
const P_PGID: u64 = 2;
const P_PIDFD: u64 = 3;
const WEXITED: u64 = 4;
const WSTOPPED: u64 = 2;
const WNOWAIT: u64 = 0x0100_0000;

/// waitid(2). As on Linux, `infop` (if not NULL) is written whatever the
/// outcome: zeroed when nothing was reported or on an error, whose errno
/// comes back only if that write worked (else EFAULT).
fn sys_waitid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (infop, rusage) = (a[2], a[4]);
    let result = waitid(ctx, a);
    use crate::process::signal::{SigInfo, CLD_CONTINUED, CLD_DUMPED, CLD_EXITED, CLD_KILLED, CLD_STOPPED, SIGCHLD};
    let info = match &result {
        Ok(Some((pid, status, usage))) => {
            let (code, st) = if *status == 0xffff {
                (CLD_CONTINUED, 18)
            } else if status & 0xff == 0x7f {
                (CLD_STOPPED, (status >> 8) & 0xff)
            } else if status & 0x7f == 0 {
                (CLD_EXITED, (status >> 8) & 0xff)
            } else if status & 0x80 != 0 {
                (CLD_DUMPED, status & 0x7f)
            } else {
                (CLD_KILLED, status & 0x7f)
            };
            if rusage != 0 {
                ctx.write_val(rusage, &Rusage::from_usage(usage))?;
            }
            let mut i = SigInfo::from_sender(SIGCHLD, code, *pid);
            i.status = st;
            i
        }
        _ => <SigInfo as frame::Pod>::new_zeroed(),
    };
    if infop != 0 {
        // Only the fields waitid reports are stored: si_signo, si_errno,
        // si_code, then si_pid, si_uid, si_status (the rest of the user's
        // structure is left alone).
        let bytes = frame::Pod::as_bytes(&info);
        ctx.write_bytes(infop, &bytes[..12])?;
        ctx.write_bytes(infop.wrapping_add(16), &bytes[16..28])?;
    }
    result.map(|_| 0)
}

type WaitResult = Option<(Pid, i32, crate::process::Usage)>;

fn waitid(ctx: &Context, a: &SyscallArgs) -> Result<WaitResult> {
    let (idtype, id, options) = (a[0] as u32 as u64, a[1] as i32, u64::from(a[3] as u32));
    if options & !(WNOHANG | WSTOPPED | WEXITED | WCONTINUED | WNOWAIT | WALL | WCLONE | WNOTHREAD) != 0
        || options & (WEXITED | WSTOPPED | WCONTINUED) == 0
    {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut nonblocking_pidfd = false;
    let target = match idtype {
        P_ALL => WaitTarget::Any,
        P_PID if id <= 0 => return Err(Error::new(Errno::EINVAL)),
        P_PID => WaitTarget::Pid(id as Pid),
        P_PGID if id < 0 => return Err(Error::new(Errno::EINVAL)),
        P_PGID => WaitTarget::Pgid(if id == 0 { ctx.process.pgid() } else { id as Pid }),
        P_PIDFD if id < 0 => return Err(Error::new(Errno::EINVAL)),
        P_PIDFD => {
            let file = super::pidfd::pidfd_file(ctx, id)?;
            nonblocking_pidfd = file.is_nonblocking();
            WaitTarget::Pid(crate::process::pidfd::as_pidfd(&file).map_or(0, |p| p.pid()))
        }
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    let opts = WaitOptions {
        // A pidfd opened with PIDFD_NONBLOCK makes the wait non-blocking,
        // and EAGAIN if nothing is ready (unless WNOHANG asked for 0).
        nohang: options & WNOHANG != 0 || nonblocking_pidfd,
        exited: options & WEXITED != 0,
        stopped: options & WSTOPPED != 0,
        continued: options & WCONTINUED != 0,
        nowait: options & WNOWAIT != 0,
        clone_children: clone_filter(options),
    };
    let result = process::wait_child(ctx.process, ctx.thread, target, opts)?;
    if result.is_none() && nonblocking_pidfd && options & WNOHANG == 0 {
        return Err(Error::new(Errno::EAGAIN));
    }
    Ok(result)
}
