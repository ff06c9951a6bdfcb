//! System V IPC syscalls: shared memory, semaphores, message queues
//! (svipc(7)). The objects live in `crate::ipc`; this file decodes the
//! arguments and does the user copies, never under an IPC lock.

use alloc::vec::Vec;

use frame::mm::{PAGE_SIZE, USER_SPACE_END};

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::ipc::{msg, sem, shm, IPC_SET};
use crate::mm::vmar::{Perms, ShmBacking, Vma};
use crate::time::Timespec;

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (29, "shmget", sys_shmget),
    (30, "shmat", sys_shmat),
    (31, "shmctl", sys_shmctl),
    (64, "semget", sys_semget),
    (65, "semop", sys_semop),
    (66, "semctl", sys_semctl),
    (67, "shmdt", sys_shmdt),
    (68, "msgget", sys_msgget),
    (69, "msgsnd", sys_msgsnd),
    (70, "msgrcv", sys_msgrcv),
    (71, "msgctl", sys_msgctl),
    (220, "semtimedop", sys_semtimedop),
];

// ---- shared memory ----------------------------------------------------------

fn sys_shmget(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let creds = ctx.process.creds();
    shm::get(a[0] as i32, a[1], a[2] as i32, &creds, ctx.process.pid()).map(|id| id as isize)
}

fn sys_shmat(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, mut addr, flags) = (a[0] as i32, a[1] as usize, a[2] as i32);
    if id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if addr != 0 {
        if addr % shm::SHMLBA != 0 {
            if flags & shm::SHM_RND == 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            addr &= !(shm::SHMLBA - 1);
            // Rounded down to 0 there is nothing fixed to map at.
            if addr == 0 {
                return Err(Error::new(Errno::EINVAL));
            }
        }
    } else if flags & shm::SHM_REMAP != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let creds = ctx.process.creds();
    let att = shm::attach(id, flags, &creds)?;
    let len = att.size.checked_add(PAGE_SIZE - 1).ok_or(Error::new(Errno::ENOMEM))? & !(PAGE_SIZE - 1);
    let fixed = addr != 0;
    if fixed && addr.checked_add(len).is_none_or(|end| end > USER_SPACE_END) {
        return Err(Error::new(Errno::EINVAL));
    }
    let perms = Perms { read: true, write: flags & shm::SHM_RDONLY == 0, exec: flags & shm::SHM_EXEC != 0 };
    let vma = Vma {
        start: 0,
        end: 0,
        perms,
        shared: true,
        file: None,
        name: "",
        shm: Some(ShmBacking { pages: att.pages, offset: 0, attach: Some(att.attachment), may_write: perms.write }),
        locked: false,
        may_write: perms.write,
        account: false,
        noreserve: false,
    };
    // Without SHM_REMAP an attach address must be free (EINVAL).
    let noreplace = flags & shm::SHM_REMAP == 0;
    let limits = crate::mm::MapLimits::of(ctx.process);
    let start = ctx.process.vm().map_area(addr, len, fixed, noreplace, vma, &limits).map_err(|e| match e.errno() {
        Errno::EEXIST => Error::new(Errno::EINVAL),
        _ => e,
    })?;
    Ok(start as isize)
}

fn sys_shmdt(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let addr = a[0] as usize;
    if addr % PAGE_SIZE != 0 || addr >= USER_SPACE_END {
        return Err(Error::new(Errno::EINVAL));
    }
    if ctx.process.vm().detach_shm(addr) { Ok(0) } else { Err(Error::new(Errno::EINVAL)) }
}

fn sys_shmctl(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, cmd, buf) = (a[0] as i32, a[1] as i32, a[2]);
    let set = if cmd == IPC_SET && id >= 0 { Some(ctx.read_val::<shm::ShmidDs>(buf)?) } else { None };
    let creds = ctx.process.creds();
    let (ret, out) = shm::ctl(id, cmd, set.as_ref(), &creds)?;
    match out {
        shm::CtlOut::None => {}
        shm::CtlOut::Stat(ds) => ctx.write_val(buf, &ds)?,
        shm::CtlOut::Info(info) => ctx.write_val(buf, &info)?,
        shm::CtlOut::ShmInfo(info) => ctx.write_val(buf, &info)?,
    }
    Ok(ret)
}

// ---- semaphores -------------------------------------------------------------

fn sys_semget(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let creds = ctx.process.creds();
    sem::get(a[0] as i32, a[1] as i32, a[2] as i32, &creds).map(|id| id as isize)
}

/// Operations per semop call read onto the stack (lat_sem and most
/// programs pass one or two); longer lists go on the heap.
const INLINE_SOPS: usize = 8;

fn parse_sop(c: &[u8]) -> sem::SemBuf {
    sem::SemBuf {
        num: u16::from_le_bytes([c[0], c[1]]),
        op: i16::from_le_bytes([c[2], c[3]]),
        flg: i16::from_le_bytes([c[4], c[5]]),
    }
}

/// Reads `nsops` `struct sembuf`s (6 bytes each) and runs `f` on them.
fn with_sops<R>(ctx: &Context, id: i32, addr: u64, nsops: u32, f: impl FnOnce(&[sem::SemBuf]) -> Result<R>) -> Result<R> {
    if nsops < 1 || id < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if nsops as usize > sem::SEMOPM {
        return Err(Error::new(Errno::E2BIG));
    }
    let n = nsops as usize;
    if n <= INLINE_SOPS {
        let mut raw = [0u8; INLINE_SOPS * 6];
        ctx.read_into(addr, &mut raw[..n * 6])?;
        let mut sops = [sem::SemBuf { num: 0, op: 0, flg: 0 }; INLINE_SOPS];
        for (s, c) in sops.iter_mut().zip(raw[..n * 6].chunks_exact(6)) {
            *s = parse_sop(c);
        }
        return f(&sops[..n]);
    }
    let raw = ctx.read_bytes(addr, n * 6)?;
    let mut sops: Vec<sem::SemBuf> = crate::fallible::with_capacity(n)?;
    sops.extend(raw.chunks_exact(6).map(parse_sop));
    f(&sops)
}

fn sys_semop(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let id = a[0] as i32;
    with_sops(ctx, id, a[1], a[2] as u32, |sops| sem::op(ctx.process, ctx.thread, id, sops, None))?;
    Ok(0)
}

fn sys_semtimedop(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let id = a[0] as i32;
    with_sops(ctx, id, a[1], a[2] as u32, |sops| {
        let deadline = if a[3] != 0 {
            let ts: Timespec = ctx.read_val(a[3])?;
            let ns = ts.to_ns().ok_or(Error::new(Errno::EINVAL))?;
            Some(frame::timer::monotonic_ns().saturating_add(ns))
        } else {
            None
        };
        sem::op(ctx.process, ctx.thread, id, sops, deadline)
    })?;
    Ok(0)
}

fn sys_semctl(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, semnum, cmd, arg) = (a[0] as i32, a[1] as i32, a[2] as i32, a[3]);
    let creds = ctx.process.creds();
    let pid = ctx.process.pid();
    if cmd == sem::SETALL {
        let n = sem::setall_prepare(id, &creds)?;
        let raw = ctx.read_bytes(arg, n * 2)?;
        let vals: Vec<u16> = raw.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        sem::setall(id, &vals, pid)?;
        return Ok(0);
    }
    let set = if cmd == IPC_SET && id >= 0 { Some(ctx.read_val::<sem::SemidDs>(arg)?) } else { None };
    // SETVAL's semun is passed by value: its int is the low half.
    let (ret, out) = sem::ctl(id, semnum, cmd, arg as i32, set.as_ref(), &creds, pid)?;
    match out {
        sem::CtlOut::None => {}
        sem::CtlOut::Stat(ds) => ctx.write_val(arg, &ds)?,
        sem::CtlOut::Info(info) => ctx.write_val(arg, &info)?,
        sem::CtlOut::All(vals) => {
            let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            ctx.write_bytes(arg, &bytes)?;
        }
    }
    Ok(ret)
}

// ---- message queues ---------------------------------------------------------

fn sys_msgget(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let creds = ctx.process.creds();
    msg::get(a[0] as i32, a[1] as i32, &creds).map(|id| id as isize)
}

fn sys_msgsnd(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, msgp, msgsz, flags) = (a[0] as i32, a[1], a[2] as usize, a[3] as i32);
    let mtype: i64 = ctx.read_val(msgp)?;
    if msgsz > msg::MSGMAX || id < 0 || mtype < 1 {
        return Err(Error::new(Errno::EINVAL));
    }
    let data = ctx.read_bytes(msgp.checked_add(8).ok_or(Error::new(Errno::EFAULT))?, msgsz)?;
    msg::send(ctx.process, ctx.thread, id, msg::Message { mtype, data }, flags)?;
    Ok(0)
}

fn sys_msgrcv(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, msgp, bufsz, msgtyp, flags) = (a[0] as i32, a[1], a[2] as usize, a[3] as i64, a[4] as i32);
    let m = msg::receive(ctx.process, ctx.thread, id, bufsz, msgtyp, flags)?;
    let n = m.data.len().min(bufsz);
    ctx.write_val(msgp, &m.mtype)?;
    ctx.write_bytes(msgp.checked_add(8).ok_or(Error::new(Errno::EFAULT))?, &m.data[..n])?;
    Ok(n as isize)
}

fn sys_msgctl(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (id, cmd, buf) = (a[0] as i32, a[1] as i32, a[2]);
    let set = if cmd == IPC_SET && id >= 0 { Some(ctx.read_val::<msg::MsqidDs>(buf)?) } else { None };
    let creds = ctx.process.creds();
    let (ret, out) = msg::ctl(id, cmd, set.as_ref(), &creds)?;
    match out {
        msg::CtlOut::None => {}
        msg::CtlOut::Stat(ds) => ctx.write_val(buf, &ds)?,
        msg::CtlOut::Info(info) => ctx.write_val(buf, &info)?,
    }
    Ok(ret)
}
