//! signalfd(2): the reader's pending signals in a mask, read as
//! `struct signalfd_siginfo` records.
//!
//! As on Linux the file names no process: a read dequeues the *reader's*
//! signals (thread-directed first, then process-wide), whether blocked or
//! not. Readers and pollers of every signalfd sleep on one queue that is
//! notified whenever any signal is queued; they recheck their own pending
//! set.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use frame::pod::Pod;

use super::anon::anon_inode;
use super::file::{File, O_NONBLOCK, O_RDWR};
use super::inode::FileType;
use super::readiness::Readiness;
use super::stream::*;
use crate::error::{Errno, Error, Result};
use crate::process::signal::{SIGCHLD, SigInfo};

pub const SFD_NONBLOCK: u32 = O_NONBLOCK;
pub const SFD_CLOEXEC: u32 = 0o2000000;
/// sizeof(struct signalfd_siginfo).
const RECORD: usize = 128;

static QUEUED: Readiness = Readiness::new();

/// A signal was queued somewhere: signalfd readers recheck.
pub fn signal_queued() {
    QUEUED.notify(POLLIN);
}

pub struct SignalFd {
    mask: AtomicU64,
}

/// A new signalfd for `mask` (SIGKILL and SIGSTOP already removed).
pub fn new_signalfd(mask: u64, flags: u32) -> Arc<File> {
    let ops = SignalFd { mask: AtomicU64::new(mask) };
    // Linux shows "anon_inode:[signalfd]": no file type bits in st_mode.
    let node = anon_inode(FileType::Regular, 0o600, 0);
    File::new(node, Some(Arc::new(ops)), O_RDWR | (flags & O_NONBLOCK))
}

/// The signalfd behind `file`, if it is one.
pub fn as_signalfd(file: &File) -> Option<&SignalFd> {
    file.ops().and_then(|ops| (ops.as_ref() as &dyn core::any::Any).downcast_ref::<SignalFd>())
}

impl SignalFd {
    pub fn set_mask(&self, mask: u64) {
        self.mask.store(mask, Ordering::Release);
        QUEUED.notify(POLLIN);
    }
}

/// A kernel siginfo as `struct signalfd_siginfo`, picking the union member
/// by signal and code the way Linux's siginfo_layout does.
fn record(info: &SigInfo) -> [u8; RECORD] {
    const SI_TIMER: i32 = -2;
    const SI_KERNEL: i32 = 0x80;
    let raw = info.as_bytes();
    let mut r = [0u8; RECORD];
    r[0..4].copy_from_slice(&info.signo.to_ne_bytes());
    r[4..8].copy_from_slice(&info.errno.to_ne_bytes());
    r[8..12].copy_from_slice(&info.code.to_ne_bytes());
    let sig = info.signo as usize;
    let code = info.code;
    let fault = matches!(sig, 4 | 5 | 7 | 8 | 11); // ILL TRAP BUS FPE SEGV
    if code > 0 && code < SI_KERNEL && fault {
        // ssi_addr
        r[72..80].copy_from_slice(&raw[16..24]);
    } else if code > 0 && code < SI_KERNEL && sig == SIGCHLD {
        r[12..20].copy_from_slice(&raw[16..24]); // pid, uid
        r[40..44].copy_from_slice(&raw[24..28]); // status
        r[56..72].copy_from_slice(&raw[32..48]); // utime, stime
    } else if code == SI_TIMER {
        r[24..28].copy_from_slice(&raw[16..20]); // ssi_tid = timer id
        r[32..36].copy_from_slice(&raw[20..24]); // overrun
        r[44..48].copy_from_slice(&raw[24..28]); // ssi_int
        r[48..56].copy_from_slice(&raw[24..32]); // ssi_ptr
    } else if code < 0 {
        r[12..20].copy_from_slice(&raw[16..24]); // pid, uid
        r[44..48].copy_from_slice(&raw[24..28]);
        r[48..56].copy_from_slice(&raw[24..32]);
    } else {
        r[12..20].copy_from_slice(&raw[16..24]); // pid, uid
    }
    r
}

impl FileOps for SignalFd {
    /// As many whole records as fit and are pending; EINVAL for a buffer
    /// under one record; EAGAIN if none is pending.
    fn read(&self, buf: &mut [u8], caller: &dyn Caller) -> Result<usize> {
        if buf.len() < RECORD {
            return Err(Error::new(Errno::EINVAL));
        }
        let mask = self.mask.load(Ordering::Acquire);
        let mut done = 0;
        while done + RECORD <= buf.len() {
            let Some(info) = caller.take_signal(mask) else { break };
            buf[done..done + RECORD].copy_from_slice(&record(&info));
            done += RECORD;
        }
        if done == 0 {
            return Err(Error::new(Errno::EAGAIN));
        }
        Ok(done)
    }

    fn write(&self, _buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn poll(&self, caller: &dyn Caller) -> u16 {
        if caller.pending_signals() & self.mask.load(Ordering::Acquire) != 0 {
            POLLIN | POLLRDNORM
        } else {
            0
        }
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&QUEUED)
    }

    fn is_seekable(&self) -> bool {
        false
    }
}
