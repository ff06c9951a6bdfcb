//! Signal syscalls (signal(7), rt_sigaction(2), kill(2), sigaltstack(2),
//! setitimer(2) ...).

use core::sync::atomic::Ordering;

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::signal::{
    check_signo, send_to_process, wait_interruptible_deadline, SigAction, SigInfo, NSIG,
    SIGKILL, SIGSTOP, SI_TKILL, SI_USER, UNBLOCKABLE,
};
use crate::process::{self, signal_frame, Pid};
use crate::time::Timespec;

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (13, "rt_sigaction", sys_rt_sigaction),
    (14, "rt_sigprocmask", sys_rt_sigprocmask),
    (15, "rt_sigreturn", sys_rt_sigreturn),
    (34, "pause", sys_pause),
    (36, "getitimer", sys_getitimer),
    (37, "alarm", sys_alarm),
    (38, "setitimer", sys_setitimer),
    (62, "kill", sys_kill),
    (127, "rt_sigpending", sys_rt_sigpending),
    (128, "rt_sigtimedwait", sys_rt_sigtimedwait),
    (130, "rt_sigsuspend", sys_rt_sigsuspend),
    (129, "rt_sigqueueinfo", sys_rt_sigqueueinfo),
    (297, "rt_tgsigqueueinfo", sys_rt_tgsigqueueinfo),
    (131, "sigaltstack", sys_sigaltstack),
    (200, "tkill", sys_tkill),
    (234, "tgkill", sys_tgkill),
];

const SIGSET_SIZE: u64 = 8;

fn sys_rt_sigaction(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (sig, act, oldact, size) = (a[0] as usize, a[1], a[2], a[3]);
    if size != SIGSET_SIZE || sig == 0 || sig > NSIG {
        return Err(Error::new(Errno::EINVAL));
    }
    if act != 0 && (sig == SIGKILL || sig == SIGSTOP) {
        return Err(Error::new(Errno::EINVAL));
    }
    let new = if act != 0 { Some(ctx.read_val::<SigAction>(act)?) } else { None };
    // The new action is in place before the old one is written out
    // (EFAULT then), as Linux's do_sigaction and copy_to_user order them.
    let (old, ignored) = ctx.process.signals.swap_action(sig, new);
    if ignored {
        crate::process::signal::discard_threads_pending(ctx.process, sig);
    }
    if oldact != 0 {
        ctx.write_val(oldact, &old)?;
    }
    Ok(0)
}

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;

fn sys_rt_sigprocmask(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (how, set, oldset, size) = (a[0], a[1], a[2], a[3]);
    if size != SIGSET_SIZE {
        return Err(Error::new(Errno::EINVAL));
    }
    // The set is read (EFAULT) before `how` is checked (EINVAL).
    let new = if set != 0 {
        let s = ctx.read_val::<u64>(set)?;
        if how as u32 as u64 > SIG_SETMASK {
            return Err(Error::new(Errno::EINVAL));
        }
        Some(s)
    } else {
        None
    };
    // The new mask is in place before the old one is written (EFAULT).
    let old = ctx.thread.sigmask.load(Ordering::Relaxed);
    if let Some(s) = new {
        let mask = match how as u32 as u64 {
            SIG_BLOCK => old | s,
            SIG_UNBLOCK => old & !s,
            _ => s,
        } & !UNBLOCKABLE;
        ctx.thread.sigmask.store(mask, Ordering::Relaxed);
    }
    if oldset != 0 {
        ctx.write_val(oldset, &old)?;
    }
    Ok(0)
}

fn sys_rt_sigreturn(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    signal_frame::sigreturn(ctx.process, ctx.thread, ctx.vm, ctx.user)
}

fn sys_rt_sigpending(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[1] > SIGSET_SIZE {
        return Err(Error::new(Errno::EINVAL));
    }
    let shared = ctx.process.signals.shared.lock().mask();
    let pending = shared | ctx.thread.signals.pending.lock().mask();
    let blocked = ctx.thread.sigmask.load(Ordering::Relaxed);
    ctx.write_bytes(a[0], &(pending & blocked).to_le_bytes()[..a[1] as usize])?;
    Ok(0)
}

/// Sleeps until a signal arrives (handled on the way out).
fn wait_for_signal(ctx: &Context) -> Result<isize> {
    let wq = frame::sync::WaitQueue::new();
    crate::process::signal::wait_interruptible(ctx.process, ctx.thread, &wq, || None::<()>)
        .map(|_| 0)
        .map_err(|_| Error::new(Errno::ERESTARTNOHAND))
}

fn sys_pause(ctx: &mut Context, _: &SyscallArgs) -> Result<isize> {
    wait_for_signal(ctx)
}

fn sys_rt_sigsuspend(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[1] != SIGSET_SIZE {
        return Err(Error::new(Errno::EINVAL));
    }
    let mask: u64 = ctx.read_val(a[0])?;
    let old = ctx.thread.sigmask.swap(mask & !UNBLOCKABLE, Ordering::Relaxed);
    ctx.thread.signals.saved_mask.set(old);
    wait_for_signal(ctx)
}

fn sys_rt_sigtimedwait(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (set_ptr, info_ptr, timeout_ptr, size) = (a[0], a[1], a[2], a[3]);
    if size != SIGSET_SIZE {
        return Err(Error::new(Errno::EINVAL));
    }
    let set: u64 = ctx.read_val::<u64>(set_ptr)? & !UNBLOCKABLE;
    let deadline = if timeout_ptr != 0 {
        let ts: Timespec = ctx.read_val(timeout_ptr)?;
        let ns = ts.to_ns().ok_or(Error::new(Errno::EINVAL))?;
        frame::timer::monotonic_ns().saturating_add(ns)
    } else {
        u64::MAX
    };
    // The awaited signals stay blocked while we wait (so that, as Linux's
    // real_blocked, they are queued even where an unblocked one would be
    // discarded); `take` dequeues them whether blocked or not.
    let take = || crate::process::signal::dequeue_in(ctx.process, ctx.thread, set);
    let wq = frame::sync::WaitQueue::new();
    let r = wait_interruptible_deadline(ctx.process, ctx.thread, &wq, take, deadline);
    match r {
        Ok(Some(info)) => {
            if info_ptr != 0 {
                ctx.write_val(info_ptr, &info)?;
            }
            Ok(info.signo as isize)
        }
        Ok(None) => Err(Error::new(Errno::EAGAIN)),
        Err(_) => Err(Error::new(Errno::EINTR)),
    }
}

frame::pod_struct! {
    pub struct StackT {
        pub sp: u64,
        pub flags: i32,
        pub pad: i32,
        pub size: u64,
    }
}

fn sys_sigaltstack(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (ss_ptr, old_ptr) = (a[0], a[1]);
    let signals = &ctx.thread.signals;
    let rsp = ctx.user.rsp();
    let (cur_sp, _, cur_size) = *signals.altstack.lock();
    let old = StackT { sp: cur_sp, flags: signals.altstack_flags(rsp), pad: 0, size: cur_size };
    let new = if ss_ptr != 0 { Some(ctx.read_val::<StackT>(ss_ptr)?) } else { None };
    if let Some(ss) = new {
        signals.set_altstack(rsp, ss.sp, ss.flags, ss.size)?;
    }
    // Linux reports the old stack only once the change has succeeded.
    if old_ptr != 0 {
        ctx.write_val(old_ptr, &old)?;
    }
    Ok(0)
}

fn sys_kill(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let pid = a[0] as i32;
    let me = ctx.process.pid();
    if pid == i32::MIN {
        return Err(Error::new(Errno::ESRCH));
    }
    // No list of targets (kill(-1) may reach every process): matching
    // processes are walked once to find them (ESRCH, EPERM) and once to
    // signal them.
    let matches = |q: &process::Process| match pid {
        0 => q.pgid() == ctx.process.pgid(),
        -1 => q.pid() != process::INIT_PID && q.pid() != me,
        p => q.pgid() == p.unsigned_abs(),
    };
    let single = if pid > 0 && pid as Pid == me {
        // The caller's own process (no table search).
        Some(ctx.process.clone())
    } else if pid > 0 {
        // Any thread id names its process. Zombies still count (and are
        // signalled in vain) until reaped, as on Linux, where they stay in
        // the task list and their group.
        Some(process::find_task(pid as Pid).map(|(p, _)| p).ok_or(Error::new(Errno::ESRCH))?)
    } else {
        None
    };
    if single.is_none() {
        let mut found = false;
        process::for_each_process(|q| {
            found = matches(q);
            !found
        });
        // Linux finds the targets (ESRCH) before it looks at the signal.
        if !found {
            return Err(Error::new(Errno::ESRCH));
        }
    }
    let sig = check_signo(a[1], true)?;
    let info = SigInfo::from_sender(sig, SI_USER, me);
    // kill(-1) ignores the processes it may not signal (kill_something_info);
    // a single target or a group with none allowed is EPERM.
    if let Some(t) = single {
        if !may_signal(ctx, &t, sig) {
            return Err(Error::new(Errno::EPERM));
        }
        // A real-time signal beyond the target's RLIMIT_SIGPENDING is
        // lost, without an error (Linux's SI_USER rule).
        process::signal::queue_to_process_from(&t, info, sigpending_limit(&t), ctx.thread);
        return Ok(0);
    }
    let mut sent = false;
    process::for_each_process(|q| {
        if matches(q) && may_signal(ctx, q, sig) {
            send_to_process(q, info);
            sent = true;
        }
        true
    });
    if !sent && pid != -1 {
        return Err(Error::new(Errno::EPERM));
    }
    Ok(0)
}

/// kill(2) permission: the caller's own process, privilege, or the
/// sender's real or effective uid equals the target's real or saved uid;
/// SIGCONT within the session.
pub(super) fn may_signal(ctx: &Context, target: &process::Process, sig: usize) -> bool {
    if target.pid() == ctx.process.pid() {
        return true;
    }
    let (me, them) = (ctx.process.creds(), target.creds());
    me.capable(crate::caps::CAP_KILL)
        || [me.ruid, me.euid].iter().any(|u| *u == them.ruid || *u == them.suid)
        || (sig == crate::process::signal::SIGCONT && target.sid() == ctx.process.sid())
}

/// Linux's check on a signal sent to a found target: a valid number
/// (EINVAL), then permission (EPERM).
fn check_send(ctx: &Context, target: &process::Process, sig: u64) -> Result<usize> {
    let sig = check_signo(sig, true)?;
    if !may_signal(ctx, target, sig) {
        return Err(Error::new(Errno::EPERM));
    }
    Ok(sig)
}

/// The siginfo of rt_sigqueueinfo/rt_tgsigqueueinfo, with the checks
/// Linux makes as it copies it in: unreadable is EFAULT; a si_code with
/// no known layout needs the part of the structure beyond the common one
/// zeroed (E2BIG).
fn queued_info(ctx: &Context, addr: u64, sig: u64) -> Result<SigInfo> {
    // The common part (48 bytes) is all Linux reads of a known layout.
    const COMMON: usize = 48;
    let mut info = <SigInfo as frame::Pod>::new_zeroed();
    ctx.read_into(addr, &mut frame::Pod::as_bytes_mut(&mut info)[..COMMON])?;
    info.signo = sig as i32;
    if !known_siginfo_layout(sig, info.code) {
        let mut rest = [0u8; core::mem::size_of::<SigInfo>() - COMMON];
        ctx.read_into(addr.wrapping_add(COMMON as u64), &mut rest)?;
        if rest.iter().any(|b| *b != 0) {
            return Err(Error::new(Errno::E2BIG));
        }
    }
    Ok(info)
}

/// Only the kernel may claim si_code >= 0 or SI_TKILL, unless the calling
/// thread names itself (`to_self`).
fn check_queued_code(info: &SigInfo, to_self: bool) -> Result<()> {
    if (info.code >= 0 || info.code == SI_TKILL) && !to_self {
        return Err(Error::new(Errno::EPERM));
    }
    Ok(())
}

/// Whether `code` is a si_code whose siginfo layout is known for `sig`
/// (Linux's known_siginfo_layout).
fn known_siginfo_layout(sig: u64, code: i32) -> bool {
    const SI_KERNEL: i32 = 0x80;
    const SI_DETHREAD: i32 = -7;
    const SI_ASYNCNL: i32 = -60;
    // The signals with codes of their own, and how many they have.
    let specific = match sig {
        4 => Some(11),  // SIGILL
        8 => Some(15),  // SIGFPE
        11 => Some(10), // SIGSEGV
        7 => Some(5),   // SIGBUS
        5 => Some(6),   // SIGTRAP
        17 => Some(6),  // SIGCHLD
        29 => Some(6),  // SIGPOLL
        31 => Some(2),  // SIGSYS
        _ => None,
    };
    if code == SI_KERNEL {
        true
    } else if code > SI_USER {
        code <= specific.unwrap_or(6)
    } else {
        code >= SI_DETHREAD || code == SI_ASYNCNL
    }
}

/// The target's RLIMIT_SIGPENDING, as a queue length.
fn sigpending_limit(target: &process::Process) -> usize {
    let cur = target.rlimits.lock().0[process::rlimit::RLIMIT_SIGPENDING].cur;
    usize::try_from(cur).unwrap_or(usize::MAX)
}

fn sys_rt_sigqueueinfo(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let pid = a[0] as i32;
    let info = queued_info(ctx, a[2], a[1])?;
    check_queued_code(&info, pid as Pid == ctx.thread.tid())?;
    // POSIX.1b: a process (any of its thread ids names it), not a group.
    let (target, _) = u32::try_from(pid).ok().and_then(process::find_task).ok_or(Error::new(Errno::ESRCH))?;
    check_send(ctx, &target, a[1])?;
    if !process::signal::queue_to_process(&target, info, sigpending_limit(&target)) {
        return Err(Error::new(Errno::EAGAIN));
    }
    Ok(0)
}

fn sys_rt_tgsigqueueinfo(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (tgid, tid) = (a[0] as i32, a[1] as i32);
    let info = queued_info(ctx, a[3], a[2])?;
    if tgid <= 0 || tid <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    check_queued_code(&info, tid as Pid == ctx.thread.tid())?;
    send_specific(ctx, Some(tgid as Pid), tid as Pid, a[2], info)
}

/// Sends `info` to thread `tid` (of process `tgid`, if given): ESRCH if
/// there is none, then the signal and permission checks. A zombie's
/// leader can be named and drops the signal.
fn send_specific(ctx: &Context, tgid: Option<Pid>, tid: Pid, sig: u64, mut info: SigInfo) -> Result<isize> {
    let (proc_, thread) = process::find_task(tid).ok_or(Error::new(Errno::ESRCH))?;
    if tgid.is_some_and(|g| g != proc_.pid()) {
        return Err(Error::new(Errno::ESRCH));
    }
    let sig = check_send(ctx, &proc_, sig)?;
    info.signo = sig as i32;
    // A real-time signal sent with a negative si_code (tgkill, sigqueue)
    // that finds the queue full is EAGAIN; kill(2)'s is dropped (Linux's
    // __send_signal_locked).
    if let Some(thread) = thread.filter(|_| proc_.exit_status().is_none()) {
        if !process::signal::queue_to_thread(&proc_, &thread, info, sigpending_limit(&proc_)) && info.code < 0 {
            return Err(Error::new(Errno::EAGAIN));
        }
    }
    Ok(0)
}

fn thread_kill(ctx: &Context, tgid: Option<Pid>, tid: i32, sig: u64) -> Result<isize> {
    if tid <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let info = SigInfo::from_sender(0, SI_TKILL, ctx.process.pid());
    send_specific(ctx, tgid, tid as Pid, sig, info)
}

fn sys_tkill(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    thread_kill(ctx, None, a[0] as i32, a[1])
}

fn sys_tgkill(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if (a[0] as i32) <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    thread_kill(ctx, Some(a[0] as Pid), a[1] as i32, a[2])
}

frame::pod_struct! {
    pub struct ItimerVal {
        pub interval_sec: i64,
        pub interval_usec: i64,
        pub value_sec: i64,
        pub value_usec: i64,
    }
}

fn tv_ns(sec: i64, usec: i64) -> Result<u64> {
    if sec < 0 || !(0..1_000_000).contains(&usec) {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok((sec as u64).saturating_mul(1_000_000_000).saturating_add(usec as u64 * 1000))
}

fn to_itimerval(remaining: u64, interval: u64) -> ItimerVal {
    // Round up to whole microseconds so a running timer never reads as 0.
    let us = |ns: u64| ns.div_ceil(1000);
    let (r, i) = (us(remaining), us(interval));
    ItimerVal {
        interval_sec: (i / 1_000_000) as i64,
        interval_usec: (i % 1_000_000) as i64,
        value_sec: (r / 1_000_000) as i64,
        value_usec: (r % 1_000_000) as i64,
    }
}

const ITIMER_REAL: u64 = 0;

fn sys_getitimer(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[0] as u32 > 2 {
        return Err(Error::new(Errno::EINVAL));
    }
    let which = a[0] as u32;
    let (r, i) = if u64::from(which) == ITIMER_REAL {
        process::get_real_timer(ctx.process)
    } else {
        process::get_cpu_timer(ctx.process, which)
    };
    ctx.write_val(a[1], &to_itimerval(r, i))?;
    Ok(0)
}

/// setitimer(2), in Linux's order: the new value is read (EFAULT) and
/// checked (EINVAL) before the timer kind is.
fn sys_setitimer(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let new: ItimerVal = if a[1] != 0 { ctx.read_val(a[1])? } else { <ItimerVal as frame::Pod>::new_zeroed() };
    let value = tv_ns(new.value_sec, new.value_usec)?;
    let interval = tv_ns(new.interval_sec, new.interval_usec)?;
    let which = a[0] as u32;
    if which > 2 {
        return Err(Error::new(Errno::EINVAL));
    }
    let (r, i) = if u64::from(which) == ITIMER_REAL {
        process::set_real_timer(ctx.process, ctx.thread, value, interval)
    } else {
        process::set_cpu_timer(ctx.process, which, value, interval)
    };
    if a[2] != 0 {
        ctx.write_val(a[2], &to_itimerval(r, i))?;
    }
    Ok(0)
}

fn sys_alarm(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let secs = a[0] as u32 as u64;
    let (r, _) = process::set_real_timer(ctx.process, ctx.thread, secs * 1_000_000_000, 0);
    // Remaining seconds, rounded to nearest, at least 1 if a timer was set.
    Ok(if r == 0 { 0 } else { r.div_ceil(1_000_000_000).max(1) as isize })
}
