//! Identity syscalls (credentials(7)).

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::creds::{Credentials, KEEP};

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (102, "getuid", |c, _| Ok(c.process.creds().ruid as isize)),
    (104, "getgid", |c, _| Ok(c.process.creds().rgid as isize)),
    (105, "setuid", sys_setuid),
    (106, "setgid", sys_setgid),
    (107, "geteuid", |c, _| Ok(c.process.creds().euid as isize)),
    (108, "getegid", |c, _| Ok(c.process.creds().egid as isize)),
    (113, "setreuid", sys_setreuid),
    (114, "setregid", sys_setregid),
    (115, "getgroups", sys_getgroups),
    (116, "setgroups", sys_setgroups),
    (117, "setresuid", sys_setresuid),
    (118, "getresuid", sys_getresuid),
    (119, "setresgid", sys_setresgid),
    (120, "getresgid", sys_getresgid),
    (122, "setfsuid", sys_setfsuid),
    (123, "setfsgid", sys_setfsgid),
    (125, "capget", sys_capget),
    (126, "capset", sys_capset),
];

fn update(ctx: &Context, f: impl FnOnce(&mut Credentials) -> bool) -> Result<isize> {
    let mut c = ctx.process.creds();
    if !f(&mut c) {
        return Err(Error::new(Errno::EPERM));
    }
    ctx.process.commit_creds(c);
    Ok(0)
}

fn id(v: u64) -> u32 {
    v as u32
}

fn sys_setuid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if id(a[0]) == KEEP {
        return Err(Error::new(Errno::EINVAL));
    }
    update(ctx, |c| c.setuid(id(a[0])))
}

fn sys_setgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if id(a[0]) == KEEP {
        return Err(Error::new(Errno::EINVAL));
    }
    update(ctx, |c| c.setgid(id(a[0])))
}

fn sys_setreuid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    update(ctx, |c| c.setreuid(id(a[0]), id(a[1])))
}

fn sys_setregid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    update(ctx, |c| c.setregid(id(a[0]), id(a[1])))
}

fn sys_setresuid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    update(ctx, |c| c.setresuid(id(a[0]), id(a[1]), id(a[2])))
}

fn sys_setresgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    update(ctx, |c| c.setresgid(id(a[0]), id(a[1]), id(a[2])))
}

fn write_three(ctx: &Context, ptrs: &[u64], vals: [u32; 3]) -> Result<isize> {
    for (p, v) in ptrs.iter().zip(vals) {
        ctx.write_val(*p, &v)?;
    }
    Ok(0)
}

fn sys_getresuid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let c = ctx.process.creds();
    write_three(ctx, &a[..3], [c.ruid, c.euid, c.suid])
}

fn sys_getresgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let c = ctx.process.creds();
    write_three(ctx, &a[..3], [c.rgid, c.egid, c.sgid])
}

/// setfsuid(2) returns the previous fsuid whether or not it succeeded.
fn sys_setfsuid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let mut c = ctx.process.creds();
    let old = c.fsuid;
    let v = id(a[0]);
    // -1 is no uid: nothing changes.
    if v != u32::MAX && (c.capable(crate::caps::CAP_SETUID) || [c.ruid, c.euid, c.suid, c.fsuid].contains(&v)) {
        c.fsuid = v;
        c.fix_caps_for_fsuid(old);
        ctx.process.commit_creds(c);
    }
    Ok(old as isize)
}

fn sys_setfsgid(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let mut c = ctx.process.creds();
    let old = c.fsgid;
    let v = id(a[0]);
    if v != u32::MAX && (c.capable(crate::caps::CAP_SETGID) || [c.rgid, c.egid, c.sgid, c.fsgid].contains(&v)) {
        c.fsgid = v;
        ctx.process.commit_creds(c);
    }
    Ok(old as isize)
}

/// NGROUPS_MAX.
const NGROUPS_MAX: usize = 65536;

fn sys_getgroups(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let groups = ctx.process.creds().groups;
    let size = a[0] as i32;
    if size < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if size == 0 {
        return Ok(groups.len() as isize);
    }
    if (size as usize) < groups.len() {
        return Err(Error::new(Errno::EINVAL));
    }
    let bytes: alloc::vec::Vec<u8> = groups.iter().flat_map(|g| g.to_le_bytes()).collect();
    ctx.write_bytes(a[1], &bytes)?;
    Ok(groups.len() as isize)
}

/// setgroups(2), in Linux's order: privilege (EPERM), the count (an
/// int; EINVAL above NGROUPS_MAX), then the ids one by one: a fault is
/// EFAULT, an invalid id (-1) EINVAL, whichever comes first.
fn sys_setgroups(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    if !ctx.process.creds().capable(crate::caps::CAP_SETGID) {
        return Err(Error::new(Errno::EPERM));
    }
    let n = a[0] as u32 as usize;
    if n > NGROUPS_MAX {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut groups = alloc::vec::Vec::with_capacity(n);
    let mut chunk = [0u8; 4 * 256];
    let mut done = 0;
    while done < n {
        let k = (n - done).min(256);
        let addr = a[1].wrapping_add(4 * done as u64);
        if ctx.read_into(addr, &mut chunk[..4 * k]).is_err() {
            // Find the first bad id or the first unreadable one.
            for i in 0..k {
                let g: u32 = ctx.read_val(addr.wrapping_add(4 * i as u64))?;
                if g == u32::MAX {
                    return Err(Error::new(Errno::EINVAL));
                }
            }
        }
        for c in chunk[..4 * k].chunks_exact(4) {
            let g = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if g == u32::MAX {
                return Err(Error::new(Errno::EINVAL));
            }
            groups.push(g);
        }
        done += k;
    }
    update(ctx, |c| {
        c.groups = groups;
        true
    })
}

const CAP_VERSION_1: u32 = 0x1998_0330;
const CAP_VERSION_2: u32 = 0x2007_1026;
const CAP_VERSION_3: u32 = 0x2008_0522;

frame::pod_struct! {
    /// `struct __user_cap_data_struct`: one 32-bit half of each set.
    pub struct CapData {
        pub effective: u32,
        pub permitted: u32,
        pub inheritable: u32,
    }
}

/// The number of `CapData` halves of a header's version (1 for version
/// 1, 2 for versions 2 and 3). An unknown version is EINVAL, after the
/// version the kernel prefers (3) is written into the header.
fn cap_version(ctx: &Context, header: u64) -> Result<usize> {
    let version: u32 = ctx.read_val(header)?;
    match version {
        CAP_VERSION_1 => Ok(1),
        CAP_VERSION_2 | CAP_VERSION_3 => Ok(2),
        _ => {
            ctx.write_val(header, &CAP_VERSION_3)?;
            Err(Error::new(Errno::EINVAL))
        }
    }
}

/// capget(2): the sets of the caller (pid 0) or of any process (ESRCH).
/// A NULL data pointer only probes the version (0 even for an unknown
/// one, once the preferred version is written back).
fn sys_capget(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let halves = match cap_version(ctx, a[0]) {
        Ok(n) => n,
        Err(e) if e.errno() == Errno::EINVAL && a[1] == 0 => return Ok(0),
        Err(e) => return Err(e),
    };
    if a[1] == 0 {
        return Ok(0);
    }
    let pid: i32 = ctx.read_val(a[0] + 4)?;
    let c = match pid {
        p if p < 0 => return Err(Error::new(Errno::EINVAL)),
        0 => ctx.process.creds(),
        p => crate::process::find_task(p as u32).ok_or(Error::new(Errno::ESRCH))?.0.creds(),
    };
    for i in 0..halves {
        let half = |set: u64| (set >> (32 * i)) as u32;
        let data = CapData {
            effective: half(c.cap_effective),
            permitted: half(c.cap_permitted),
            inheritable: half(c.cap_inheritable),
        };
        ctx.write_val(a[1] + 12 * i as u64, &data)?;
    }
    Ok(0)
}

/// capset(2): only the caller's own sets (another pid: EPERM); EPERM for
/// any set that would gain (see [`Credentials::capset`]).
fn sys_capset(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let halves = cap_version(ctx, a[0])?;
    let pid: i32 = ctx.read_val(a[0] + 4)?;
    if pid != 0 && pid as u32 != ctx.process.pid() {
        return Err(Error::new(Errno::EPERM));
    }
    let (mut e, mut p, mut i) = (0u64, 0u64, 0u64);
    for h in 0..halves {
        let d: CapData = ctx.read_val(a[1] + 12 * h as u64)?;
        e |= u64::from(d.effective) << (32 * h);
        p |= u64::from(d.permitted) << (32 * h);
        i |= u64::from(d.inheritable) << (32 * h);
    }
    let full = crate::process::creds::CAP_FULL;
    update(ctx, |c| c.capset(e & full, p & full, i & full))
}
