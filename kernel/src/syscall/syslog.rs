//! syslog(2) (glibc's klogctl): reading the kernel message ring.
//!
//! The ring is frame's console log: every kernel message, as printed on
//! the serial console (without Linux's "<N>" priority prefixes). As with
//! Linux's default `dmesg_restrict` 0, anyone may read it all and ask its
//! size; the other actions need privilege.

use core::sync::atomic::{AtomicU64, Ordering};

use super::{Context, SyscallArgs, SyscallFn};
use crate::error::{Errno, Error, Result};
use crate::process::signal::wait_interruptible_deadline;

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[(103, "syslog", sys_syslog)];

const CLOSE: u64 = 0;
const OPEN: u64 = 1;
const READ: u64 = 2;
const READ_ALL: u64 = 3;
const READ_CLEAR: u64 = 4;
const CLEAR: u64 = 5;
const CONSOLE_OFF: u64 = 6;
const CONSOLE_ON: u64 = 7;
const CONSOLE_LEVEL: u64 = 8;
const SIZE_UNREAD: u64 = 9;
const SIZE_BUFFER: u64 = 10;

/// Where READ (the destructive read) continues.
static READ_POS: AtomicU64 = AtomicU64::new(0);
/// Where READ_ALL starts after a CLEAR.
static CLEAR_POS: AtomicU64 = AtomicU64::new(0);

/// How often a READ with nothing to read looks again.
const READ_RECHECK_NS: u64 = 100_000_000;

fn sys_syslog(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (action, buf, len) = (a[0], a[1], a[2] as i32);
    let open_to_all = matches!(action, READ_ALL | SIZE_BUFFER);
    if action > SIZE_BUFFER {
        return Err(Error::new(Errno::EINVAL));
    }
    // CAP_SYSLOG, or the CAP_SYS_ADMIN that Linux still accepts for it.
    let c = ctx.process.creds();
    if !open_to_all && !c.capable(crate::caps::CAP_SYSLOG) && !c.capable(crate::caps::CAP_SYS_ADMIN) {
        return Err(Error::new(Errno::EPERM));
    }
    match action {
        CLOSE | OPEN | CONSOLE_OFF | CONSOLE_ON => Ok(0),
        CONSOLE_LEVEL => {
            if !(1..=8).contains(&len) {
                return Err(Error::new(Errno::EINVAL));
            }
            Ok(0)
        }
        SIZE_BUFFER => Ok(frame::console::LOG_RING_SIZE as isize),
        SIZE_UNREAD => {
            let (unread, _) = frame::console::read_log(READ_POS.load(Ordering::Relaxed));
            Ok(unread.len() as isize)
        }
        CLEAR => {
            let (_, end) = frame::console::read_log(u64::MAX);
            CLEAR_POS.store(end, Ordering::Relaxed);
            Ok(0)
        }
        READ => {
            if buf == 0 || len < 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            if len == 0 {
                return Ok(0);
            }
            // Wait (interruptibly) for something new.
            let wq = frame::sync::WaitQueue::new();
            loop {
                let from = READ_POS.load(Ordering::Relaxed);
                let (data, _) = frame::console::read_log(from);
                if !data.is_empty() {
                    let n = data.len().min(len as usize);
                    ctx.write_bytes(buf, &data[..n])?;
                    let start = frame::console::read_log(0).1 - data.len() as u64;
                    READ_POS.store(start + n as u64, Ordering::Relaxed);
                    return Ok(n as isize);
                }
                let deadline = frame::timer::monotonic_ns().saturating_add(READ_RECHECK_NS);
                wait_interruptible_deadline(ctx.process, ctx.thread, &wq, || None::<()>, deadline)?;
            }
        }
        _ => {
            // READ_ALL and READ_CLEAR: the last `len` bytes held.
            if buf == 0 || len < 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            let (data, end) = frame::console::read_log(CLEAR_POS.load(Ordering::Relaxed));
            let n = data.len().min(len as usize);
            ctx.write_bytes(buf, &data[data.len() - n..])?;
            if action == READ_CLEAR {
                CLEAR_POS.store(end, Ordering::Relaxed);
            }
            Ok(n as isize)
        }
    }
}
