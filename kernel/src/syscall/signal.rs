//! Signal state syscalls. Delivery arrives with the next issue; the state
//! (dispositions, mask) is kept exactly as rt_sigaction(2) and
//! rt_sigprocmask(2) describe.

use core::sync::atomic::Ordering;

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::signal::{SigAction, NSIG, SIGKILL, SIGSTOP, UNBLOCKABLE};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] =
    &[(13, "rt_sigaction", sys_rt_sigaction), (14, "rt_sigprocmask", sys_rt_sigprocmask)];

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
    if oldact != 0 {
        ctx.write_val(oldact, &ctx.process.signals.action(sig))?;
    }
    if let Some(new) = new {
        ctx.process.signals.set_action(sig, new);
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
    let new = if set != 0 {
        if how > SIG_SETMASK {
            return Err(Error::new(Errno::EINVAL));
        }
        Some(ctx.read_val::<u64>(set)?)
    } else {
        None
    };
    let old = ctx.thread.sigmask.load(Ordering::Relaxed);
    if oldset != 0 {
        ctx.write_val(oldset, &old)?;
    }
    if let Some(s) = new {
        let mask = match how {
            SIG_BLOCK => old | s,
            SIG_UNBLOCK => old & !s,
            _ => s,
        } & !UNBLOCKABLE;
        ctx.thread.sigmask.store(mask, Ordering::Relaxed);
    }
    Ok(0)
}
