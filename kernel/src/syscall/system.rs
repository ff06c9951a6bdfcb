//! System information and per-process setup: uname, sysinfo, rlimits,
//! getrandom, arch_prctl.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::rlimit::{RLimit, RLIM_NLIMITS};
use crate::process::{self, Pid};
use crate::system::{fill_random, RELEASE, VERSION};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (63, "uname", sys_uname),
    (97, "getrlimit", sys_getrlimit),
    (99, "sysinfo", sys_sysinfo),
    (158, "arch_prctl", sys_arch_prctl),
    (160, "setrlimit", sys_setrlimit),
    (302, "prlimit64", sys_prlimit64),
    (318, "getrandom", sys_getrandom),
];

frame::pod_struct! {
    pub struct Utsname {
        pub sysname: [u8; 65],
        pub nodename: [u8; 65],
        pub release: [u8; 65],
        pub version: [u8; 65],
        pub machine: [u8; 65],
        pub domainname: [u8; 65],
    }
}
const _: () = assert!(core::mem::size_of::<Utsname>() == 390);

fn field(s: &str) -> [u8; 65] {
    let mut f = [0u8; 65];
    let n = s.len().min(64);
    f[..n].copy_from_slice(&s.as_bytes()[..n]);
    f
}

fn sys_uname(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let u = Utsname {
        sysname: field("Linux"),
        nodename: field("trellis"),
        release: field(RELEASE),
        version: field(VERSION),
        machine: field("x86_64"),
        domainname: field("(none)"),
    };
    ctx.write_val(a[0], &u)?;
    Ok(0)
}

frame::pod_struct! {
    /// `struct sysinfo` on x86-64.
    pub struct SysInfo {
        pub uptime: i64,
        pub loads: [u64; 3],
        pub totalram: u64,
        pub freeram: u64,
        pub sharedram: u64,
        pub bufferram: u64,
        pub totalswap: u64,
        pub freeswap: u64,
        pub procs: u16,
        pub pad: [u16; 3],
        pub totalhigh: u64,
        pub freehigh: u64,
        pub mem_unit: u32,
        pub reserved: [u8; 4],
    }
}
const _: () = assert!(core::mem::size_of::<SysInfo>() == 112);

fn sys_sysinfo(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let mut info = SysInfo::new_zeroed_info();
    info.uptime = (frame::timer::monotonic_ns() / 1_000_000_000) as i64;
    info.totalram = frame::boot::total_ram() as u64;
    info.freeram = (frame::mm::frame_alloc::free_frames() * frame::mm::PAGE_SIZE) as u64;
    info.procs = process::all_processes().len().min(u16::MAX as usize) as u16;
    info.mem_unit = 1;
    ctx.write_val(a[0], &info)?;
    Ok(0)
}

impl SysInfo {
    fn new_zeroed_info() -> Self {
        <SysInfo as frame::Pod>::new_zeroed()
    }
}

fn limits_target(ctx: &Context, pid: u64) -> Result<alloc::sync::Arc<process::Process>> {
    match pid as i32 {
        0 => Ok(ctx.process.clone()),
        p if p > 0 => process::find_process(p as Pid).ok_or(Error::new(Errno::ESRCH)),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn prlimit(ctx: &Context, pid: u64, resource: u64, new: u64, old: u64) -> Result<isize> {
    let resource = resource as usize;
    if resource >= RLIM_NLIMITS {
        return Err(Error::new(Errno::EINVAL));
    }
    let target = limits_target(ctx, pid)?;
    let new_limit = if new != 0 {
        let l: RLimit = ctx.read_val(new)?;
        if l.cur > l.max {
            return Err(Error::new(Errno::EINVAL));
        }
        Some(l)
    } else {
        None
    };
    let current = target.rlimits.lock().0[resource];
    if let Some(l) = new_limit {
        // Raising the hard limit needs privilege; NOFILE is capped (fs.nr_open).
        let privileged = ctx.process.creds().is_privileged();
        if (l.max > current.max && !privileged)
            || (resource == process::rlimit::RLIMIT_NOFILE && l.max > 1024 * 1024)
        {
            return Err(Error::new(Errno::EPERM));
        }
        // Changing another process's limits needs matching ids or privilege.
        let (me, them) = (ctx.process.creds(), target.creds());
        if !privileged && (me.ruid != them.ruid || me.ruid != them.euid || me.ruid != them.suid) {
            return Err(Error::new(Errno::EPERM));
        }
    }
    if old != 0 {
        ctx.write_val(old, &current)?;
    }
    if let Some(l) = new_limit {
        target.rlimits.lock().0[resource] = l;
        if resource == process::rlimit::RLIMIT_STACK {
            target.vm().set_stack_limit(l.cur.min(crate::mm::vmar::STACK_RESERVE as u64) as usize);
        }
    }
    Ok(0)
}

fn sys_getrlimit(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    prlimit(ctx, 0, a[0], 0, a[1])
}

fn sys_setrlimit(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if a[1] == 0 {
        return Err(Error::new(Errno::EFAULT));
    }
    prlimit(ctx, 0, a[0], a[1], 0)
}

fn sys_prlimit64(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    prlimit(ctx, a[0], a[1], a[2], a[3])
}

const GRND_NONBLOCK: u64 = 1;
const GRND_RANDOM: u64 = 2;
const GRND_INSECURE: u64 = 4;

fn sys_getrandom(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (buf, len, flags) = (a[0], a[1] as usize, a[2]);
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0 || flags & GRND_RANDOM & (flags >> 1) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // Linux returns at most 32 MiB - 1 per call.
    let len = len.min((32 << 20) - 1);
    let mut chunk = [0u8; 256];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(chunk.len());
        fill_random(&mut chunk[..n]);
        ctx.write_bytes(buf + done as u64, &chunk[..n])?;
        done += n;
    }
    Ok(done as isize)
}

const ARCH_SET_GS: u64 = 0x1001;
const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;
const ARCH_GET_GS: u64 = 0x1004;

fn sys_arch_prctl(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    match a[0] {
        ARCH_SET_FS => ctx.user.set_fs_base(a[1]).map_err(|_| Error::new(Errno::EPERM))?,
        ARCH_SET_GS => ctx.user.set_gs_base(a[1]).map_err(|_| Error::new(Errno::EPERM))?,
        ARCH_GET_FS => ctx.write_val(a[1], &ctx.user.fs_base())?,
        ARCH_GET_GS => ctx.write_val(a[1], &ctx.user.gs_base())?,
        _ => return Err(Error::new(Errno::EINVAL)),
    }
    Ok(0)
}
