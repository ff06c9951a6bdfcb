//! Scheduling syscalls: sched_yield, affinity, getcpu, priorities.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::{self, Pid};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (24, "sched_yield", sys_sched_yield),
    (140, "getpriority", sys_getpriority),
    (141, "setpriority", sys_setpriority),
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
    let who = who as u32;
    let all = process::all_processes().into_iter().filter(|p| p.exit_status().is_none());
    let v: alloc::vec::Vec<_> = match which {
        PRIO_PROCESS => {
            let pid = if who == 0 { ctx.process.pid() } else { who as Pid };
            all.filter(|p| p.pid() == pid).collect()
        }
        PRIO_PGRP => {
            let g = if who == 0 { ctx.process.pgid() } else { who };
            all.filter(|p| p.pgid() == g).collect()
        }
        // Everyone is uid 0 for now.
        PRIO_USER => all.filter(|_| who == 0).collect(),
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

fn sys_setpriority(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let nice = (a[2] as i32).clamp(-20, 19);
    for p in targets(ctx, a[0], a[1])? {
        p.set_nice(nice, weight_of_nice(nice));
    }
    Ok(0)
}

fn sys_sched_getaffinity(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (pid, len, mask) = (a[0] as i32, a[1] as usize, a[2]);
    if pid < 0 || (pid > 0 && process::find_thread(pid as Pid).is_none()) {
        return Err(Error::new(Errno::ESRCH));
    }
    // The mask must be a multiple of sizeof(long) and hold all CPUs.
    if len < 8 || len % 8 != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut bytes = alloc::vec![0u8; len.min(128)];
    bytes[0] = 1; // one CPU
    ctx.write_bytes(mask, &bytes)?;
    Ok(bytes.len() as isize)
}

fn sys_sched_setaffinity(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (pid, len, mask) = (a[0] as i32, a[1] as usize, a[2]);
    if pid < 0 || (pid > 0 && process::find_thread(pid as Pid).is_none()) {
        return Err(Error::new(Errno::ESRCH));
    }
    let first: u8 = if len == 0 { 0 } else { ctx.read_val(mask)? };
    if first & 1 == 0 {
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
