//! Advisory locks: fcntl(2) F_GETLK/F_SETLK/F_SETLKW and their F_OFD_*
//! forms, and flock(2).

use super::{CallerCtx, fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::lock::{self, FlockOp, Kind, Owner, RecordLock};
use crate::fs::{File, SEEK_CUR, SEEK_END, SEEK_SET};
use crate::syscall::{Context, SyscallArgs};

pub const F_GETLK: u32 = 5;
pub const F_SETLK: u32 = 6;
pub const F_SETLKW: u32 = 7;
pub const F_OFD_GETLK: u32 = 36;
pub const F_OFD_SETLK: u32 = 37;
pub const F_OFD_SETLKW: u32 = 38;

const F_RDLCK: i16 = 0;
const F_WRLCK: i16 = 1;
const F_UNLCK: i16 = 2;

frame::pod_struct! {
    /// `struct flock` (asm-generic/fcntl.h, 64-bit).
    pub struct Flock {
        pub l_type: i16,
        pub l_whence: i16,
        pub pad0: u32,
        pub l_start: i64,
        pub l_len: i64,
        pub l_pid: i32,
        pub pad1: u32,
    }
}
const _: () = assert!(core::mem::size_of::<Flock>() == 32);

/// The byte range `fl` names in `file`, as `start..=end` (end u64::MAX:
/// to end of file): EINVAL for a bad whence or a negative start,
/// EOVERFLOW past the largest offset (flock_to_posix_lock).
fn range_of(fl: &Flock, file: &File) -> Result<(u64, u64)> {
    let base: i64 = match fl.l_whence as u32 {
        SEEK_SET => 0,
        SEEK_CUR => i64::try_from(file.position()).map_err(|_| Error::new(Errno::EOVERFLOW))?,
        SEEK_END => i64::try_from(file.node().size()).map_err(|_| Error::new(Errno::EOVERFLOW))?,
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    let start = base
        .checked_add(fl.l_start)
        .ok_or(Error::new(Errno::EOVERFLOW))?;
    if start < 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let (start, end) = match fl.l_len {
        0 => (start, i64::MAX),
        len if len > 0 => {
            let end = start
                .checked_add(len - 1)
                .ok_or(Error::new(Errno::EOVERFLOW))?;
            (start, end)
        }
        len => {
            let from = start.checked_add(len).filter(|s| *s >= 0);
            (from.ok_or(Error::new(Errno::EINVAL))?, start - 1)
        }
    };
    let end = if end == i64::MAX {
        u64::MAX
    } else {
        end as u64
    };
    Ok((start as u64, end))
}

/// The fcntl(2) lock commands on `file` (open on `fd`).
pub fn fcntl_lock(ctx: &Context, file: &File, cmd: u32, arg: u64) -> Result<isize> {
    if file.is_path_only() {
        return Err(Error::new(Errno::EBADF));
    }
    let mut fl: Flock = ctx.read_val(arg)?;
    let ofd = matches!(cmd, F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW);
    if ofd && fl.l_pid != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let kind = match fl.l_type {
        F_RDLCK => Some(Kind::Read),
        F_WRLCK => Some(Kind::Write),
        F_UNLCK => None,
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    let (start, end) = range_of(&fl, file)?;
    let pid = ctx.process.pid();
    let owner = if ofd {
        Owner::File(file.id())
    } else {
        Owner::Process(pid)
    };
    let key = lock::key_of(&**file.node());
    if matches!(cmd, F_GETLK | F_OFD_GETLK) {
        let kind = kind.ok_or(Error::new(Errno::EINVAL))?;
        let req = RecordLock {
            owner,
            kind,
            start,
            end,
        };
        match lock::test_lock(key, &req) {
            None => fl.l_type = F_UNLCK,
            Some(held) => {
                fl.l_type = if held.kind == Kind::Write {
                    F_WRLCK
                } else {
                    F_RDLCK
                };
                fl.l_whence = SEEK_SET as i16;
                fl.l_start = held.start as i64;
                fl.l_len = if held.end == u64::MAX {
                    0
                } else {
                    (held.end - held.start + 1) as i64
                };
                fl.l_pid = match held.owner {
                    Owner::Process(p) => p as i32,
                    Owner::File(_) => -1,
                };
            }
        }
        ctx.write_val(arg, &fl)?;
        return Ok(0);
    }
    // A read lock needs a file open for reading, a write lock one open for
    // writing (fcntl(2), EBADF).
    match kind {
        Some(Kind::Read) if !file.can_read() => return Err(Error::new(Errno::EBADF)),
        Some(Kind::Write) if !file.can_write() => return Err(Error::new(Errno::EBADF)),
        _ => {}
    }
    let caller = CallerCtx(ctx);
    let wait = matches!(cmd, F_SETLKW | F_OFD_SETLKW).then_some((&caller as _, pid));
    lock::set_lock(key, owner, start, end, kind, wait)?;
    Ok(0)
}

pub fn sys_flock(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    const LOCK_SH: u32 = 1;
    const LOCK_EX: u32 = 2;
    const LOCK_NB: u32 = 4;
    const LOCK_UN: u32 = 8;
    const LOCK_MAND: u32 = 32;
    let (fd, operation) = (fd_arg(args[0]), args[1] as u32);
    // Linux accepts and ignores the obsolete LOCK_MAND requests before it
    // looks at the descriptor, and checks the operation (EINVAL) before
    // the descriptor (EBADF).
    if operation & LOCK_MAND != 0 {
        return Ok(0);
    }
    let op = match operation & !LOCK_NB {
        LOCK_SH => FlockOp::Shared,
        LOCK_EX => FlockOp::Exclusive,
        LOCK_UN => FlockOp::Unlock,
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    let file = get_io_file(ctx, fd)?;
    let caller = CallerCtx(ctx);
    let wait = (operation & LOCK_NB == 0).then_some(&caller as _);
    lock::flock(lock::key_of(&**file.node()), file.id(), op, wait)?;
    Ok(0)
}
