//! eventfd(2): a 64-bit counter read and written as 8-byte values.

use alloc::sync::Arc;

use frame::sync::{SpinLock, level};

use super::anon::anon_inode;
use super::file::{File, O_NONBLOCK, O_RDWR};
use super::inode::FileType;
use super::readiness::Readiness;
use super::stream::*;
use crate::error::{Errno, Error, Result};

pub const EFD_SEMAPHORE: u32 = 1;
pub const EFD_NONBLOCK: u32 = O_NONBLOCK;
pub const EFD_CLOEXEC: u32 = 0o2000000;
/// The counter never exceeds this (a write that would blocks).
const MAX_COUNT: u64 = 0xffff_ffff_ffff_fffe;

pub struct EventFd {
    count: SpinLock<u64, { level::FILE }>,
    semaphore: bool,
    readiness: Readiness,
}

/// A new eventfd file starting at `initval` with eventfd2(2) `flags`
/// (already checked; the caller applies EFD_CLOEXEC).
pub fn new_eventfd(initval: u32, flags: u32) -> Arc<File> {
    let ops = EventFd {
        count: SpinLock::new(u64::from(initval)),
        semaphore: flags & EFD_SEMAPHORE != 0,
        readiness: Readiness::new(),
    };
    // Linux shows "anon_inode:[eventfd]": no file type bits in st_mode.
    let node = anon_inode(FileType::Regular, 0o600, 0);
    File::new(node, Some(Arc::new(ops)), O_RDWR | (flags & O_NONBLOCK))
}

impl FileOps for EventFd {
    /// The counter (then zero), or 1 (then one less) with EFD_SEMAPHORE;
    /// EAGAIN while it is zero.
    fn read(&self, buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        let out = buf.get_mut(..8).ok_or(Error::new(Errno::EINVAL))?;
        let value = {
            let mut count = self.count.lock();
            if *count == 0 {
                return Err(Error::new(Errno::EAGAIN));
            }
            let value = if self.semaphore { 1 } else { *count };
            *count -= value;
            value
        };
        out.copy_from_slice(&value.to_ne_bytes());
        self.readiness.notify(POLLOUT);
        Ok(8)
    }

    /// Adds the 8-byte value; EINVAL for 0xffffffffffffffff, EAGAIN while
    /// the sum would pass the maximum.
    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        let bytes: [u8; 8] = buf
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or(Error::new(Errno::EINVAL))?;
        let value = u64::from_ne_bytes(bytes);
        if value == u64::MAX {
            return Err(Error::new(Errno::EINVAL));
        }
        if value == 0 {
            return Ok(8);
        }
        {
            let mut count = self.count.lock();
            match count.checked_add(value) {
                Some(sum) if sum <= MAX_COUNT => *count = sum,
                _ => return Err(Error::new(Errno::EAGAIN)),
            }
        }
        self.readiness.notify(POLLIN);
        Ok(8)
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        let count = *self.count.lock();
        let mut events = 0;
        if count > 0 {
            events |= POLLIN | POLLRDNORM;
        }
        if count < MAX_COUNT {
            events |= POLLOUT | POLLWRNORM;
        }
        events
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.readiness)
    }

    fn writes_whole_messages(&self) -> bool {
        true
    }

    /// lseek succeeds and does nothing (Linux's noop_llseek).
    fn is_seekable(&self) -> bool {
        true
    }
}
