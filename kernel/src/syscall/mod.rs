//! The system call table: one entry per x86-64 syscall number, each a plain
//! safe function in a file per family.

mod creds;
mod fs;
mod ipc;
mod mm;
mod net;
mod pidfd;
mod process;
mod sched;
pub use self::sched::weight_of_nice;
mod signal;
mod syslog;
mod system;
pub(crate) mod time;

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::pod::Pod;
use frame::user::UserContext;

use crate::error::{Errno, Error, Result};
use crate::mm::Vmar;
use crate::process::{Process, SharedFiles, Thread};

/// Raw syscall arguments (rdi, rsi, rdx, r10, r8, r9).
pub type SyscallArgs = [u64; 6];
pub type SyscallFn = fn(&mut Context, &SyscallArgs) -> Result<isize>;

/// Longest path accepted (PATH_MAX, including the NUL).
pub const PATH_MAX: usize = 4096;

/// What a syscall handler can reach: the calling thread, its process and its
/// saved user registers.
pub struct Context<'a> {
    pub process: &'a Arc<Process>,
    pub thread: &'a Arc<Thread>,
    /// The address space the call came from (the process's, fetched by
    /// the thread's loop without a lock); the user-memory helpers below
    /// copy through it. execve installs a new one, which this does not
    /// follow: nothing copies to user memory after that in the call.
    pub vm: &'a Arc<Vmar>,
    /// The descriptor table the call came with (fetched like `vm`), for
    /// the descriptor lookups of read, write, fstat and the like. A call
    /// that unshares the table (execve, close_range) does not follow the
    /// change: it uses `process.files()` after that.
    pub files: &'a Arc<SharedFiles>,
    pub user: &'a mut UserContext,
}

impl Context<'_> {
    /// Copies `len` bytes of user memory at `addr`.
    pub fn read_bytes(&self, addr: u64, len: usize) -> Result<Vec<u8>> {
        // A range leaving user space fails anyway: refuse it before
        // allocating a buffer of the caller's size.
        if len > 0 && !access_ok(addr, len as u64) {
            return Err(Error::new(Errno::EFAULT));
        }
        let mut buf = crate::fallible::zeroed(len)?;
        self.vm.read_bytes(addr as usize, &mut buf)?;
        Ok(buf)
    }

    /// Copies user memory at `addr` into `buf`.
    pub fn read_into(&self, addr: u64, buf: &mut [u8]) -> Result<()> {
        self.vm.read_bytes(addr as usize, buf)
    }

    pub fn write_bytes(&self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.vm.write_bytes(addr as usize, bytes)
    }

    /// Copies part of a page-cache page to user memory at `addr`: the
    /// bytes copied (fewer if a fault past the first byte stopped it).
    pub fn write_from_frames(&self, addr: u64, frames: &[frame::mm::UFrame], offset: usize, len: usize) -> Result<usize> {
        self.vm.write_from_frames(addr as usize, frames, offset, len)
    }

    /// Copies user memory at `addr` into part of a page-cache page: the
    /// bytes copied (fewer if a fault past the first byte stopped it).
    pub fn read_into_frame(&self, addr: u64, frame: &frame::mm::UFrame, offset: usize, len: usize) -> Result<usize> {
        self.vm.read_into_frame(addr as usize, frame, offset, len)
    }

    /// [`Context::read_into_frame`] resolving no fault: the bytes copied
    /// before the first one not mapped (see `Vmar::read_into_frame_nofault`).
    pub fn read_into_frame_nofault(&self, addr: u64, frame: &frame::mm::UFrame, offset: usize, len: usize) -> usize {
        self.vm.read_into_frame_nofault(addr as usize, frame, offset, len)
    }

    pub fn read_val<T: Pod>(&self, addr: u64) -> Result<T> {
        let mut v = T::new_zeroed();
        self.vm.read_bytes(addr as usize, v.as_bytes_mut())?;
        Ok(v)
    }

    pub fn write_val<T: Pod>(&self, addr: u64, v: &T) -> Result<()> {
        self.vm.write_bytes(addr as usize, v.as_bytes())
    }

    /// Reads a NUL-terminated string of at most `max` bytes (NUL included);
    /// `ENAMETOOLONG` if longer, `EFAULT` if unreadable.
    pub fn read_cstring(&self, addr: u64, max: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut cur = addr as usize;
        let mut chunk = [0u8; 256];
        loop {
            // Never read across a page boundary we were not asked for.
            let to_page_end = 4096 - (cur % 4096);
            let n = chunk.len().min(to_page_end);
            self.vm.read_bytes(cur, &mut chunk[..n])?;
            if let Some(pos) = chunk[..n].iter().position(|&b| b == 0) {
                crate::fallible::extend(&mut out, &chunk[..pos])?;
                if out.len() >= max {
                    return Err(Error::new(Errno::ENAMETOOLONG));
                }
                return Ok(out);
            }
            crate::fallible::extend(&mut out, &chunk[..n])?;
            if out.len() >= max {
                return Err(Error::new(Errno::ENAMETOOLONG));
            }
            cur = cur.checked_add(n).ok_or(Error::new(Errno::EFAULT))?;
        }
    }

    /// Runs `f` on the path argument at `addr`, as [`Context::read_path`]
    /// reads it; a short path that needs no conversion is read into a
    /// stack buffer, without an allocation.
    pub fn with_path<R>(&self, addr: u64, f: impl FnOnce(&str) -> Result<R>) -> Result<R> {
        // A first step like read_cstring's, but of 64 bytes (most paths are
        // shorter; every byte read costs a copy), and within the same page:
        // it faults only where read_cstring's first step would. A longer
        // path is read again whole by read_path.
        let mut chunk = [0u8; 64];
        let cur = addr as usize;
        let n = chunk.len().min(4096 - (cur % 4096));
        self.vm.read_bytes(cur, &mut chunk[..n])?;
        if let Some(path) = crate::fs::name::stored_as_is_until_nul(&chunk[..n]) {
            return f(path);
        }
        f(&self.read_path(addr)?)
    }

    /// Reads a path argument (`ENOENT` for an empty path is left to the
    /// caller, since AT_EMPTY_PATH allows it).
    pub fn read_path(&self, addr: u64) -> Result<String> {
        let bytes = self.read_cstring(addr, PATH_MAX)?;
        Ok(crate::fs::name::from_user(bytes))
    }
}

/// Linux's access_ok(): the range lies in the user half (below
/// USER_SPACE_END, Linux's TASK_SIZE_MAX), whether mapped or not.
pub fn access_ok(addr: u64, len: u64) -> bool {
    addr.checked_add(len).is_some_and(|end| end <= frame::mm::USER_SPACE_END as u64)
}

const MAX_NR: usize = 463;

/// Syscalls already reported as missing (each is logged once).
static REPORTED: [AtomicBool; MAX_NR] = [const { AtomicBool::new(false) }; MAX_NR];

/// The dispatch table, indexed by syscall number, built from the family
/// tables at compile time (a number registered twice fails the build), so
/// that a system call finds its handler with one load.
static TABLE: [Option<SyscallFn>; MAX_NR] = build_table();

const fn build_table() -> [Option<SyscallFn>; MAX_NR] {
    let families: [&[(usize, &'static str, SyscallFn)]; 12] = [
        creds::SYSCALLS,
        fs::SYSCALLS,
        ipc::SYSCALLS,
        mm::SYSCALLS,
        net::SYSCALLS,
        pidfd::SYSCALLS,
        process::SYSCALLS,
        sched::SYSCALLS,
        signal::SYSCALLS,
        system::SYSCALLS,
        syslog::SYSCALLS,
        time::SYSCALLS,
    ];
    let mut t: [Option<SyscallFn>; MAX_NR] = [None; MAX_NR];
    let mut f = 0;
    while f < families.len() {
        let family = families[f];
        let mut i = 0;
        while i < family.len() {
            let (nr, _, handler) = family[i];
            assert!(nr < MAX_NR, "syscall table: number out of range");
            assert!(t[nr].is_none(), "syscall table: number registered twice");
            t[nr] = Some(handler);
            i += 1;
        }
        f += 1;
    }
    t
}

mod names;

/// Runs the syscall in the context's registers and stores the result in rax.
/// Inlined into the thread loop; the unusual outcomes (an unknown number,
/// an error to log) are out of line.
#[inline(always)]
pub fn dispatch(ctx: &mut Context) {
    let (nr, args) = ctx.user.syscall();
    let Some(&Some(handler)) = TABLE.get(nr as usize) else {
        return missing(ctx, nr);
    };
    let ret = match handler(ctx, &args) {
        Ok(v) => v as i64,
        Err(e) => failed(nr, e),
    };
    ctx.user.set_rax(ret as u64);
}

/// The result of a system call that failed with `e`.
#[cold]
#[inline(never)]
fn failed(nr: u64, e: Error) -> i64 {
    frame::log_debug!("syscall {nr} -> {:?}", e);
    -(e.errno() as i64)
}

/// A number with no handler: ENOSYS (logged once per known number).
#[cold]
#[inline(never)]
fn missing(ctx: &mut Context, nr: u64) {
    if let Some(n) = usize::try_from(nr).ok().filter(|n| *n < MAX_NR)
        && !REPORTED[n].swap(true, Ordering::Relaxed)
    {
        frame::log_warn!("unimplemented syscall {} ({n}): ENOSYS", names::name_of(n));
    }
    ctx.user.set_rax(-(Errno::ENOSYS as i64) as u64);
}
