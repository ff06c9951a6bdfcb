//! System information and per-process setup: uname, sethostname,
//! setdomainname, sysinfo, rlimits, getrandom, arch_prctl, personality,
//! membarrier, reboot.

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::rlimit::{RLimit, RLIM_NLIMITS};
use crate::process::{self, Pid};
use crate::system::{fill_random, RELEASE, VERSION};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (63, "uname", sys_uname),
    (135, "personality", sys_personality),
    (170, "sethostname", sys_sethostname),
    (171, "setdomainname", sys_setdomainname),
    (324, "membarrier", sys_membarrier),
    (97, "getrlimit", sys_getrlimit),
    (99, "sysinfo", sys_sysinfo),
    (158, "arch_prctl", sys_arch_prctl),
    (160, "setrlimit", sys_setrlimit),
    (302, "prlimit64", sys_prlimit64),
    (318, "getrandom", sys_getrandom),
    (169, "reboot", sys_reboot),
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
    bytes_field(s.as_bytes())
}

fn bytes_field(s: &[u8]) -> [u8; 65] {
    let mut f = [0u8; 65];
    let n = s.len().min(64);
    f[..n].copy_from_slice(&s[..n]);
    f
}

/// Longest host or domain name (__NEW_UTS_LEN).
const UTS_LEN: i32 = 64;

/// sethostname(2) / setdomainname(2): EPERM without CAP_SYS_ADMIN (checked
/// first), EINVAL for a negative length or one above 64, EFAULT.
fn set_uts(ctx: &Context, a: &SyscallArgs, domain: bool) -> Result<isize> {
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_ADMIN) {
        return Err(Error::new(Errno::EPERM));
    }
    let len = a[1] as i32;
    if !(0..=UTS_LEN).contains(&len) {
        return Err(Error::new(Errno::EINVAL));
    }
    let name = ctx.read_bytes(a[0], len as usize)?;
    crate::system::set_uts_name(domain, &name);
    Ok(0)
}

fn sys_sethostname(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    set_uts(ctx, a, false)
}

fn sys_setdomainname(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    set_uts(ctx, a, true)
}

/// personality(2): 0xffffffff queries; anything else is stored (Linux
/// accepts any value) and the old one returned.
fn sys_personality(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    use core::sync::atomic::Ordering;
    let persona = a[0] as u32;
    let old = if persona == 0xffff_ffff {
        ctx.process.personality.load(Ordering::Relaxed)
    } else {
        ctx.process.personality.swap(persona, Ordering::Relaxed)
    };
    Ok(old as isize)
}

const MEMBARRIER_CMD_QUERY: u32 = 0;
const MEMBARRIER_CMD_GLOBAL: u32 = 1 << 0;
const MEMBARRIER_CMD_GLOBAL_EXPEDITED: u32 = 1 << 1;
const MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED: u32 = 1 << 2;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: u32 = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: u32 = 1 << 4;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE: u32 = 1 << 5;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE: u32 = 1 << 6;
const MEMBARRIER_CMD_GET_REGISTRATIONS: u32 = 1 << 9;
/// What QUERY reports: everything but the rseq commands (there is no
/// rseq(2)).
const MEMBARRIER_SUPPORTED: u32 = MEMBARRIER_CMD_GLOBAL
    | MEMBARRIER_CMD_GLOBAL_EXPEDITED
    | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED
    | MEMBARRIER_CMD_PRIVATE_EXPEDITED
    | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED
    | MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE
    | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE
    | MEMBARRIER_CMD_GET_REGISTRATIONS;

/// membarrier(2). On one CPU every barrier is already implied by the
/// context switch that lets another thread run, so the barrier commands
/// only check their preconditions: flags must be 0 (EINVAL), the private
/// expedited ones need the address space's registration (EPERM).
/// Registrations belong to the address space: threads share them, fork
/// keeps them, execve drops them.
fn sys_membarrier(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    use core::sync::atomic::Ordering;
    let (cmd, flags) = (a[0] as u32, a[1] as u32);
    if flags != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let vm = ctx.process.vm();
    let registered = vm.membarrier.load(Ordering::Relaxed);
    let need = |reg: u32| {
        if registered & reg != 0 {
            Ok(0)
        } else {
            Err(Error::new(Errno::EPERM))
        }
    };
    match cmd {
        MEMBARRIER_CMD_QUERY => Ok(MEMBARRIER_SUPPORTED as isize),
        MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED => Ok(0),
        MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED
        | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED
        | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE => {
            vm.membarrier.fetch_or(cmd, Ordering::Relaxed);
            Ok(0)
        }
        MEMBARRIER_CMD_PRIVATE_EXPEDITED => need(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED),
        MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE => {
            need(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)
        }
        MEMBARRIER_CMD_GET_REGISTRATIONS => Ok(registered as isize),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn sys_uname(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let u = Utsname {
        sysname: field("Linux"),
        nodename: bytes_field(&crate::system::hostname()),
        release: field(RELEASE),
        version: field(VERSION),
        machine: field("x86_64"),
        domainname: bytes_field(&crate::system::domainname()),
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

/// The process whose limits prlimit64 names: the caller for 0, else the
/// process of thread `pid` (ESRCH, also for a negative pid). Another
/// user's process needs privilege (EPERM), for reading too.
fn limits_target(ctx: &Context, pid: u64) -> Result<alloc::sync::Arc<process::Process>> {
    let target = match pid as i32 {
        0 => return Ok(ctx.process.clone()),
        p if p > 0 => process::find_thread(p as Pid).map(|(p, _)| p).ok_or(Error::new(Errno::ESRCH))?,
        _ => return Err(Error::new(Errno::ESRCH)),
    };
    let (me, them) = (ctx.process.creds(), target.creds());
    let same_ids = [them.ruid, them.euid, them.suid].iter().all(|u| *u == me.ruid)
        && [them.rgid, them.egid, them.sgid].iter().all(|g| *g == me.rgid);
    if !alloc::sync::Arc::ptr_eq(&target, ctx.process) && !same_ids && !me.capable(crate::caps::CAP_SYS_RESOURCE) {
        return Err(Error::new(Errno::EPERM));
    }
    Ok(target)
}

/// prlimit64(2) and friends, in Linux's order: the new limit is read
/// (EFAULT), the target found (ESRCH, EPERM), the resource and the new
/// values checked (EINVAL, EPERM); the new limit is in place before the
/// old one is written out (EFAULT).
fn prlimit(ctx: &Context, pid: u64, resource: u64, new: u64, old: u64) -> Result<isize> {
    let new_limit: Option<RLimit> = if new != 0 { Some(ctx.read_val(new)?) } else { None };
    let target = limits_target(ctx, pid)?;
    let resource = resource as u32 as usize;
    if resource >= RLIM_NLIMITS {
        return Err(Error::new(Errno::EINVAL));
    }
    let current = target.rlimits.lock().0[resource];
    if let Some(l) = new_limit {
        if l.cur > l.max {
            return Err(Error::new(Errno::EINVAL));
        }
        // Raising the hard limit needs CAP_SYS_RESOURCE; NOFILE is capped
        // (fs.nr_open).
        let privileged = ctx.process.creds().capable(crate::caps::CAP_SYS_RESOURCE);
        let nr_open = crate::sysctl::NR_OPEN.get();
        if (resource == process::rlimit::RLIMIT_NOFILE && l.max > nr_open) || (l.max > current.max && !privileged) {
            return Err(Error::new(Errno::EPERM));
        }
        target.rlimits.lock().0[resource] = l;
        if resource == process::rlimit::RLIMIT_CPU && l.cur != process::rlimit::RLIM_INFINITY {
            target.signals.cpu_watch.store(true, core::sync::atomic::Ordering::Release);
        }
        if resource == process::rlimit::RLIMIT_STACK {
            target.vm().set_stack_limit(l.cur.min(crate::mm::vmar::STACK_RESERVE as u64) as usize);
        }
    }
    if old != 0 {
        ctx.write_val(old, &current)?;
    }
    Ok(0)
}

fn sys_getrlimit(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    // The limit is always written (NULL is EFAULT), once the resource is
    // known to be valid.
    if a[1] == 0 && (a[0] as u32 as usize) < RLIM_NLIMITS {
        return Err(Error::new(Errno::EFAULT));
    }
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

const LINUX_REBOOT_MAGIC1: u32 = 0xfee1_dead;
/// The second magic may be any of these (dates of Linus's and his
/// daughters' birthdays, reboot(2)).
const LINUX_REBOOT_MAGIC2: [u32; 4] = [672_274_793, 85_072_278, 369_367_448, 537_993_216];
const LINUX_REBOOT_CMD_RESTART: u32 = 0x0123_4567;
const LINUX_REBOOT_CMD_HALT: u32 = 0xcdef_0123;
const LINUX_REBOOT_CMD_CAD_ON: u32 = 0x89ab_cdef;
const LINUX_REBOOT_CMD_CAD_OFF: u32 = 0;
const LINUX_REBOOT_CMD_POWER_OFF: u32 = 0x4321_fedc;
const LINUX_REBOOT_CMD_RESTART2: u32 = 0xa1b2_c3d4;

/// reboot(2): EPERM without CAP_SYS_BOOT (checked first), EINVAL for a bad
/// magic pair or an unknown command. RESTART, RESTART2, HALT and POWER_OFF
/// write back the mounted ext2 volumes (as device shutdown would) and do not
/// return; CAD_ON/CAD_OFF only record the Ctrl-Alt-Del setting (there is no
/// keyboard to press it on). KEXEC and SW_SUSPEND are EINVAL, as from a
/// kernel built without kexec and hibernation.
fn sys_reboot(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if !ctx.process.creds().capable(crate::caps::CAP_SYS_BOOT) {
        return Err(Error::new(Errno::EPERM));
    }
    let (magic1, magic2, cmd) = (a[0] as u32, a[1] as u32, a[2] as u32);
    if magic1 != LINUX_REBOOT_MAGIC1 || !LINUX_REBOOT_MAGIC2.contains(&magic2) {
        return Err(Error::new(Errno::EINVAL));
    }
    match cmd {
        LINUX_REBOOT_CMD_CAD_ON | LINUX_REBOOT_CMD_CAD_OFF => {
            crate::system::set_ctrl_alt_del(cmd == LINUX_REBOOT_CMD_CAD_ON);
            Ok(0)
        }
        LINUX_REBOOT_CMD_RESTART => {
            crate::fs::ext2::shutdown_all();
            frame::println!("reboot: Restarting system");
            frame::restart()
        }
        LINUX_REBOOT_CMD_RESTART2 => {
            // The command string (Linux keeps its first 255 bytes) is only
            // logged; a bad pointer is EFAULT before anything shuts down.
            let what = match ctx.read_cstring(a[3], 256) {
                Ok(v) => v,
                Err(e) if e.errno() == Errno::ENAMETOOLONG => b"...".to_vec(),
                Err(e) => return Err(e),
            };
            crate::fs::ext2::shutdown_all();
            let what = core::str::from_utf8(&what).unwrap_or("?");
            frame::println!("reboot: Restarting system with command '{what}'");
            frame::restart()
        }
        LINUX_REBOOT_CMD_HALT => {
            crate::fs::ext2::shutdown_all();
            frame::println!("reboot: System halted");
            frame::halt()
        }
        LINUX_REBOOT_CMD_POWER_OFF => {
            frame::println!("reboot: Power down");
            crate::system::power_off(0)
        }
        _ => Err(Error::new(Errno::EINVAL)),
    }
}
