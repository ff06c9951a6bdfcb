//! fork(2), vfork(2) and clone(2) used as fork.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use frame::user::UserContext;

use super::{Pid, Process, Thread};
use crate::error::{Errno, Error, Result};

pub const CLONE_VM: u64 = 0x100;
pub const CLONE_FS: u64 = 0x200;
pub const CLONE_FILES: u64 = 0x400;
pub const CLONE_SIGHAND: u64 = 0x800;
pub const CLONE_THREAD: u64 = 0x10000;
pub const CLONE_SYSVSEM: u64 = 0x40000;
pub const CLONE_DETACHED: u64 = 0x400000;
pub const CLONE_NEWNS: u64 = 0x20000;
pub const CLONE_NEWCGROUP: u64 = 0x0200_0000;
pub const CLONE_NEWUTS: u64 = 0x0400_0000;
pub const CLONE_NEWIPC: u64 = 0x0800_0000;
pub const CLONE_NEWUSER: u64 = 0x1000_0000;
pub const CLONE_NEWPID: u64 = 0x2000_0000;
pub const CLONE_NEWNET: u64 = 0x4000_0000;
const CLONE_NEW_ANY: u64 =
    CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
pub const CLONE_VFORK: u64 = 0x4000;
pub const CLONE_PARENT: u64 = 0x8000;
/// No tracer here: these two change nothing.
pub const CLONE_PTRACE: u64 = 0x2000;
pub const CLONE_UNTRACED: u64 = 0x0080_0000;
/// An I/O context hint: there is no I/O scheduler to share.
pub const CLONE_IO: u64 = 0x8000_0000;
pub const CLONE_SETTLS: u64 = 0x80000;
pub const CLONE_PARENT_SETTID: u64 = 0x100000;
pub const CLONE_CHILD_CLEARTID: u64 = 0x200000;
pub const CLONE_CHILD_SETTID: u64 = 0x1000000;
/// Return a pidfd for the child in the parent_tid slot.
pub const CLONE_PIDFD: u64 = 0x1000;
const CSIGNAL: u64 = 0xff;

#[derive(Clone, Copy, Debug, Default)]
pub struct CloneArgs {
    pub flags: u64,
    pub stack: u64,
    pub parent_tid: u64,
    pub child_tid: u64,
    pub tls: u64,
    /// clone3(2): where CLONE_PIDFD stores the pidfd (clone(2) uses the
    /// parent_tid slot, so there the two flags exclude each other).
    pub pidfd: Option<u64>,
    /// clone3(2) CLONE_CLEAR_SIGHAND: the child's handlers are reset to
    /// the default (ignored signals stay ignored).
    pub clear_sighand: bool,
}

/// Creates a child process as a copy of the caller. Thread-creating flags
/// (CLONE_VM without CLONE_VFORK, CLONE_THREAD, ...) are not supported yet.
pub fn clone_process(parent: &Arc<Process>, parent_thread: &Thread, user: &UserContext, args: CloneArgs) -> Result<Pid> {
    // Legacy clone(2) reads only the low 32 bits of its flags (Linux's
    // lower_32_bits); the rest is ignored.
    let f = args.flags & 0xffff_ffff & !CSIGNAL;
    // clone(2) returns the pidfd where CLONE_PARENT_SETTID writes the tid.
    if f & CLONE_PIDFD != 0 && f & CLONE_PARENT_SETTID != 0 && args.pidfd.is_none() {
        return Err(Error::new(Errno::EINVAL));
    }
    // clone(2): CLONE_THREAD needs CLONE_SIGHAND, which needs CLONE_VM.
    if (f & CLONE_THREAD != 0 && f & CLONE_SIGHAND == 0) || (f & CLONE_SIGHAND != 0 && f & CLONE_VM == 0) {
        return Err(Error::new(Errno::EINVAL));
    }
    // Namespaces are not implemented: EINVAL, as from a Linux kernel built
    // without them (clone(2) also documents EINVAL for CLONE_FS with
    // CLONE_NEWNS/NEWUSER and CLONE_THREAD with CLONE_NEWPID/NEWUSER).
    if f & CLONE_NEW_ANY != 0 {
        return Err(Error::with_message(Errno::EINVAL, "namespaces are not supported"));
    }
    if f & CLONE_SETTLS != 0 && args.tls >= frame::mm::USER_SPACE_END as u64 {
        return Err(Error::new(Errno::EPERM));
    }
    // Thread pidfds (Linux 6.9) are not supported; CLONE_DETACHED is
    // reserved for pidfds.
    if f & CLONE_PIDFD != 0 && f & (CLONE_THREAD | CLONE_DETACHED) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    super::check_threads_max()?;
    if f & CLONE_THREAD != 0 {
        check_nproc(parent)?;
        return clone_thread(parent, parent_thread, user, args);
    }
    let supported = CLONE_VFORK | CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_SETTLS
        | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | CLONE_SYSVSEM | CLONE_DETACHED
        | CLONE_PARENT | CLONE_PTRACE | CLONE_UNTRACED | CLONE_IO | CLONE_PIDFD;
    if f & !supported != 0 {
        return Err(Error::with_message(Errno::EINVAL, "unknown clone flags"));
    }
    check_nproc(parent)?;
    // CLONE_PARENT: the child is the caller's sibling, and its exit signal
    // is the caller's own (init has no parent to share: EINVAL).
    let (real_parent, exit_signal) = if f & CLONE_PARENT != 0 {
        let grand = parent.parent().ok_or(Error::new(Errno::EINVAL))?;
        (grand, parent.exit_signal.load(Ordering::Relaxed))
    } else {
        (parent.clone(), (args.flags & CSIGNAL) as u32)
    };
    // CLONE_VM (vfork, posix_spawn) shares the address space itself; a
    // plain fork gets a copy-on-write copy.
    let vm = if f & CLONE_VM != 0 { parent.vm() } else { Arc::new(parent.vm().fork()?) };
    let files = if f & CLONE_FILES != 0 {
        parent.files_shared().share()
    } else {
        super::SharedFiles::new(parent.files().lock().try_clone()?)
    };
    let fs = if f & CLONE_FS != 0 {
        parent.fs_shared().clone()
    } else {
        Arc::new(frame::sync::Mutex::new(parent.fs().lock().clone()))
    };
    let signals = if f & CLONE_SIGHAND != 0 {
        // One disposition table for both processes.
        parent.signals.sharing()?
    } else {
        parent.signals.copy_of(args.clear_sighand)
    };
    let pid = super::alloc_pid()?;
    let child = Process::new(Arc::downgrade(&real_parent), vm, files, fs, signals, Some((parent.pgid(), parent.sid())), pid);
    child.exit_signal.store(exit_signal, Ordering::Relaxed);
    child.set_name(&parent.name());
    child.set_exe(parent.exe());
    child.nice.store(parent.nice(), Ordering::Relaxed);
    child.oom_score_adj.store(parent.oom_score_adj.load(Ordering::Relaxed), Ordering::Relaxed);
    child.oom_score_adj_min.store(parent.oom_score_adj_min.load(Ordering::Relaxed), Ordering::Relaxed);
    child.no_new_privs.store(parent.no_new_privs.load(Ordering::Relaxed), Ordering::Relaxed);
    child.dumpable.store(parent.dumpable.load(Ordering::Relaxed), Ordering::Relaxed);
    child.timer_slack_ns.store(parent.timer_slack_ns.load(Ordering::Relaxed), Ordering::Relaxed);
    child.personality.store(parent.personality.load(Ordering::Relaxed), Ordering::Relaxed);
    child.set_creds(parent.creds());
    child.set_make_it_fail(parent.make_it_fail());
    let limits = *parent.rlimits.lock();
    *child.rlimits.lock() = limits;
    // The limits come with the watch on them (a finite RLIMIT_CPU makes the
    // return to user mode look at the CPU clocks).
    child.signals.cpu_watch.store(parent.signals.cpu_watch.load(Ordering::Acquire), Ordering::Release);
    let mut child_ctx = user.clone();
    child_ctx.set_rax(0);
    if args.stack != 0 {
        child_ctx.set_rsp(args.stack);
    }
    if f & CLONE_SETTLS != 0 && child_ctx.set_fs_base(args.tls).is_err() {
        super::discard_unstarted(&child);
        return Err(Error::new(Errno::EINVAL));
    }
    if let Err(e) = crate::fallible::push(&mut real_parent.children.lock(), child.clone()) {
        super::discard_unstarted(&child);
        return Err(e);
    }
    // CLONE_PIDFD: a close-on-exec pidfd in the caller's table (after the
    // child's copy was taken: only a CLONE_FILES child shares it), its
    // number stored at parent_tid; EFAULT there undoes the clone.
    let pidfd = if f & CLONE_PIDFD != 0 {
        match install_pidfd(parent, &child, args.pidfd.unwrap_or(args.parent_tid)) {
            Ok(fd) => Some(fd),
            Err(e) => {
                real_parent.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
                super::discard_unstarted(&child);
                return Err(e);
            }
        }
    } else {
        None
    };
    let bytes = pid.to_le_bytes();
    // Like Linux, a bad tid pointer does not undo the clone.
    if f & CLONE_PARENT_SETTID != 0 {
        let _ = parent.vm().write_bytes(args.parent_tid as usize, &bytes);
    }
    if f & CLONE_CHILD_SETTID != 0 {
        let _ = child.vm().write_bytes(args.child_tid as usize, &bytes);
    }
    let clear_tid = if f & CLONE_CHILD_CLEARTID != 0 { args.child_tid } else { 0 };
    // fork and vfork children keep the alternate signal stack (it is in
    // their copy, or share, of the address space); sigaltstack(2).
    let altstack = (f & CLONE_VM == 0 || f & CLONE_VFORK != 0).then(|| *parent_thread.signals.altstack.lock());
    let sigmask = parent_thread.sigmask.load(Ordering::Relaxed);
    crate::ipc::on_clone(parent.pid(), pid, f & CLONE_SYSVSEM != 0);
    if let Err(e) = super::spawn_user_thread_inner(&child, pid, child_ctx, sigmask, clear_tid, altstack) {
        // No thread ever ran: the child leaves no trace.
        crate::ipc::on_exit(pid);
        real_parent.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
        if let Some(fd) = pidfd {
            let _ = parent.files().lock().remove(fd);
        }
        super::discard_unstarted(&child);
        return Err(e);
    }
    if f & CLONE_VFORK != 0 {
        child.vfork_done.wait_until(|| child.vfork_released.load(Ordering::Acquire).then_some(()));
    }
    Ok(pid)
}

/// Puts a pidfd for `child` in `parent`'s table and its number at `addr`.
fn install_pidfd(parent: &Process, child: &Arc<Process>, addr: u64) -> Result<i32> {
    let file = super::pidfd::new_pidfd(child.clone(), false);
    let limit = super::nofile_limit(parent);
    let fd = parent.files().lock().insert(file, true, limit)?;
    if let Err(e) = parent.vm().write_bytes(addr as usize, &fd.to_le_bytes()) {
        let _ = parent.files().lock().remove(fd);
        return Err(e);
    }
    Ok(fd)
}

/// Lets a vfork parent continue (the child exec'd or exited).
pub fn release_vfork_parent(process: &Process) {
    if !process.vfork_released.swap(true, Ordering::AcqRel) {
        process.vfork_done.wake_all();
    }
}

/// pthread_create: a new thread in the caller's process (CLONE_THREAD).
fn clone_thread(process: &Arc<Process>, parent_thread: &Thread, user: &UserContext, args: CloneArgs) -> Result<Pid> {
    let f = args.flags;
    let mut ctx = user.clone();
    ctx.set_rax(0);
    if args.stack != 0 {
        ctx.set_rsp(args.stack);
    }
    if f & CLONE_SETTLS != 0 {
        ctx.set_fs_base(args.tls).map_err(|_| Error::new(Errno::EPERM))?;
    }
    let tid = super::alloc_pid()?;
    let bytes = tid.to_le_bytes();
    let vm = process.vm();
    if f & CLONE_PARENT_SETTID != 0 {
        vm.write_bytes(args.parent_tid as usize, &bytes)?;
    }
    if f & CLONE_CHILD_SETTID != 0 {
        vm.write_bytes(args.child_tid as usize, &bytes)?;
    }
    let clear_tid = if f & CLONE_CHILD_CLEARTID != 0 { args.child_tid } else { 0 };
    super::spawn_user_thread_inner(process, tid, ctx, parent_thread.sigmask.load(Ordering::Relaxed), clear_tid, None)?;
    Ok(tid)
}

/// RLIMIT_NPROC: the threads of all processes of the caller's real user
/// may not reach the limit (Linux's copy_process: real uid 0, CAP_SYS_RESOURCE
/// and CAP_SYS_ADMIN are exempt).
fn check_nproc(parent: &Process) -> Result<()> {
    let creds = parent.creds();
    if creds.ruid == 0 || creds.capable(crate::caps::CAP_SYS_RESOURCE) || creds.capable(crate::caps::CAP_SYS_ADMIN) {
        return Ok(());
    }
    let limit = parent.rlimits.lock().0[super::rlimit::RLIMIT_NPROC].cur;
    let used: usize = super::all_processes()
        .iter()
        .filter(|p| p.exit_status().is_none() && p.creds().ruid == creds.ruid)
        .map(|p| p.threads().len().max(1))
        .sum();
    if used as u64 >= limit {
        return Err(Error::new(Errno::EAGAIN));
    }
    Ok(())
}
