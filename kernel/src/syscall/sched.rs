//! Scheduling syscalls: sched_yield, affinity, getcpu, priorities.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::{self, Pid};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (24, "sched_yield", sys_sched_yield),
    (140, "getpriority", sys_getpriority),
    (141, "setpriority", sys_setpriority),
    (142, "sched_setparam", sys_sched_setparam),
    (143, "sched_getparam", sys_sched_getparam),
    (144, "sched_setscheduler", sys_sched_setscheduler),
    (145, "sched_getscheduler", sys_sched_getscheduler),
    (146, "sched_get_priority_max", sys_sched_get_priority_max),
    (147, "sched_get_priority_min", sys_sched_get_priority_min),
    (148, "sched_rr_get_interval", sys_sched_rr_get_interval),
    (203, "sched_setaffinity", sys_sched_setaffinity),
    (204, "sched_getaffinity", sys_sched_getaffinity),
    (309, "getcpu", sys_getcpu),
];

fn sys_sched_yield(_: &mut Context, _: &SyscallArgs) -> Result<isize> {
    frame::task::yield_now();
    Ok(0)
}

/// Linux's nice-to-weight table (kernel/sched/core.c: each step is ~1.25x).
const NICE_WEIGHTS: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

pub fn weight_of_nice(nice: i32) -> u32 {
    NICE_WEIGHTS[(nice.clamp(-20, 19) + 20) as usize]
}

const PRIO_PROCESS: u64 = 0;
const PRIO_PGRP: u64 = 1;
const PRIO_USER: u64 = 2;

fn targets(ctx: &Context, which: u64, who: u64) -> Result<alloc::vec::Vec<alloc::sync::Arc<process::Process>>> {
    // Both are C ints.
    let (which, who) = (which as u32 as u64, who as u32);
    let all = process::all_processes().into_iter().filter(|p| p.exit_status().is_none());
    let v: alloc::vec::Vec<_> = match which {
        // Any thread id names its process; a zombie is still found.
        PRIO_PROCESS => {
            let pid = if who == 0 { ctx.process.pid() } else { who as Pid };
            process::find_task(pid).map(|(p, _)| p).into_iter().collect()
        }
        PRIO_PGRP => {
            let g = if who == 0 { ctx.process.pgid() } else { who };
            all.filter(|p| p.pgid() == g).collect()
        }
        // Processes whose real user id is `who` (0: the caller's).
        PRIO_USER => {
            let uid = if who == 0 { ctx.process.creds().ruid } else { who };
            all.filter(|p| p.creds().ruid == uid).collect()
        }
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    if v.is_empty() {
        return Err(Error::new(Errno::ESRCH));
    }
    Ok(v)
}

/// getpriority(2): the raw syscall returns 20 - nice (1..40).
fn sys_getpriority(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let best = targets(ctx, a[0], a[1])?.iter().map(|p| p.nice()).min().unwrap_or(0);
    Ok((20 - best) as isize)
}

/// setpriority(2): EPERM for another user's process, EACCES for lowering
/// the nice value without privilege (RLIMIT_NICE is not consulted).
fn sys_setpriority(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let nice = (a[2] as i32).clamp(-20, 19);
    let me = ctx.process.creds();
    let targets = targets(ctx, a[0], a[1])?;
    for p in &targets {
        let them = p.creds();
        if !me.capable(crate::caps::CAP_SYS_NICE) {
            if me.euid != them.euid && me.euid != them.ruid {
                return Err(Error::new(Errno::EPERM));
            }
            if nice < p.nice() {
                return Err(Error::new(Errno::EACCES));
            }
        }
    }
    for p in targets {
        p.set_nice(nice, weight_of_nice(nice));
    }
    Ok(0)
}

const SCHED_OTHER: u64 = 0;
const SCHED_FIFO: u64 = 1;
const SCHED_RR: u64 = 2;
const SCHED_BATCH: u64 = 3;
const SCHED_IDLE: u64 = 5;
const SCHED_RESET_ON_FORK: u64 = 0x4000_0000;

const SCHED_DEADLINE: u64 = 6;
const SCHED_EXT: u64 = 7;

/// A pid argument of the sched_* calls: EINVAL if negative, then ESRCH
/// unless it names a task (0: the caller). Zombies are still found.
fn sched_target(ctx: &Context, pid: u64) -> Result<alloc::sync::Arc<process::Process>> {
    let pid = pid as i32;
    if pid < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if pid == 0 {
        return Ok(ctx.process.clone());
    }
    process::find_task(pid as Pid).map(|(p, _)| p).ok_or(Error::new(Errno::ESRCH))
}

/// Whether the caller may change `target`'s scheduling (Linux's
/// check_same_owner, else CAP_SYS_NICE): our effective user id is the
/// target's effective or real one, or we are privileged.
fn may_reschedule(ctx: &Context, target: &process::Process) -> bool {
    let (me, them) = (ctx.process.creds(), target.creds());
    me.capable(crate::caps::CAP_SYS_NICE) || me.euid == them.euid || me.euid == them.ruid
}

/// Only SCHED_OTHER exists: the real-time classes are not implemented.
fn sys_sched_getscheduler(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    sched_target(ctx, a[0])?;
    Ok(SCHED_OTHER as isize)
}

/// sched_setscheduler(2)/sched_setparam(2) in Linux's order: a negative
/// policy, a NULL parameter or a negative pid is EINVAL; then the
/// parameter is read (EFAULT), the task found (ESRCH), and the policy and
/// priority checked (EINVAL), then the caller's right to change the
/// target (EPERM: another user's process, or a real-time policy without
/// privilege). `policy` None keeps the current one.
fn set_scheduler(ctx: &Context, pid: u64, policy: Option<u64>, param: u64) -> Result<isize> {
    if param == 0 || (pid as i32) < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let prio: i32 = ctx.read_val(param)?;
    let target = sched_target(ctx, pid)?;
    let privileged = ctx.process.creds().capable(crate::caps::CAP_SYS_NICE);
    match policy.unwrap_or(SCHED_OTHER) & !SCHED_RESET_ON_FORK {
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE if prio != 0 => Err(Error::new(Errno::EINVAL)),
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE if !may_reschedule(ctx, &target) => Err(Error::new(Errno::EPERM)),
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE => Ok(0),
        SCHED_FIFO | SCHED_RR if !(1..=99).contains(&prio) => Err(Error::new(Errno::EINVAL)),
        SCHED_FIFO | SCHED_RR if !privileged => Err(Error::new(Errno::EPERM)),
        SCHED_FIFO | SCHED_RR => Err(Error::with_message(Errno::EPERM, "real-time scheduling is not implemented")),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn sys_sched_setscheduler(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let policy = a[1] as i32;
    if policy < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    set_scheduler(ctx, a[0], Some(policy as u64), a[2])
}

fn sys_sched_getparam(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[1] == 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    sched_target(ctx, a[0])?;
    ctx.write_val(a[1], &0i32)?;
    Ok(0)
}

fn sys_sched_setparam(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    set_scheduler(ctx, a[0], None, a[1])
}

/// The priority range of a policy; deadline and sched_ext tasks have no
/// static priority (0..0), as on Linux.
fn priority_range(policy: u64) -> Result<(i32, i32)> {
    match policy as u32 as u64 {
        SCHED_OTHER | SCHED_BATCH | SCHED_IDLE | SCHED_DEADLINE | SCHED_EXT => Ok((0, 0)),
        SCHED_FIFO | SCHED_RR => Ok((1, 99)),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn sys_sched_get_priority_max(_: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(priority_range(a[0])?.1 as isize)
}

fn sys_sched_get_priority_min(_: &mut Context, a: &SyscallArgs) -> Result<isize> {
    Ok(priority_range(a[0])?.0 as isize)
}

/// The round-robin quantum (our default time slice).
fn sys_sched_rr_get_interval(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    sched_target(ctx, a[0])?;
    let ns = u64::from(policies::sched::slice_ticks(1024)) * 1_000_000_000 / u64::from(frame::timer::TICK_HZ);
    ctx.write_val(a[1], &crate::time::Timespec::from_ns(ns))?;
    Ok(0)
}

/// The kernel's CPU mask: one long (one CPU).
const CPUMASK_SIZE: usize = 8;

/// A task for the affinity calls: ESRCH for a negative pid or none.
fn affinity_target(ctx: &Context, pid: u64) -> Result<alloc::sync::Arc<process::Process>> {
    if (pid as i32) < 0 {
        return Err(Error::new(Errno::ESRCH));
    }
    sched_target(ctx, pid)
}

/// sched_getaffinity(2): the length (an unsigned int) must hold all CPUs
/// and be a multiple of sizeof(long) (EINVAL, checked first); the mask
/// size is returned.
fn sys_sched_getaffinity(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (len, mask) = (a[1] as u32, a[2]);
    // Linux computes len * 8 as an unsigned int (it may wrap to 0).
    if len.wrapping_mul(8) == 0 || len % 8 != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    affinity_target(ctx, a[0])?;
    let mut bytes = [0u8; CPUMASK_SIZE];
    bytes[0] = 1; // one CPU
    ctx.write_bytes(mask, &bytes)?;
    Ok(CPUMASK_SIZE as isize)
}

/// sched_setaffinity(2): the mask is read first (at most the kernel's
/// size of it; EFAULT), then the task (ESRCH) and the caller's right to
/// change it (EPERM, as for sched_setscheduler); a mask without a CPU we
/// have is EINVAL.
fn sys_sched_setaffinity(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (len, mask) = (a[1] as u32 as usize, a[2]);
    let mut bytes = [0u8; CPUMASK_SIZE];
    if len >= CPUMASK_SIZE {
        ctx.read_into(mask, &mut bytes)?;
    } else {
        ctx.read_into(mask, &mut bytes[..len])?;
    }
    let target = affinity_target(ctx, a[0])?;
    if !may_reschedule(ctx, &target) {
        return Err(Error::new(Errno::EPERM));
    }
    if bytes[0] & 1 == 0 {
        return Err(Error::new(Errno::EINVAL)); // no CPU we have
    }
    Ok(0)
}

fn sys_getcpu(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[0] != 0 {
        ctx.write_val(a[0], &0u32)?;
    }
    if a[1] != 0 {
        ctx.write_val(a[1], &0u32)?;
    }
    Ok(0)
}
