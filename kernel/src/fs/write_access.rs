//! Writing and executing a file exclude each other (Linux's
//! i_writecount): a regular file open for writing cannot be executed, and
//! the file of a running program cannot be opened for writing or
//! truncated; both are ETXTBSY (execve(2), open(2)).
//!
//! The count is kept per inode identity (device, inode number) in one
//! table, whatever the file system. Holders keep the inode alive (an open
//! file, or the address space mapping the program), so an identity is not
//! reused while counted.

use alloc::collections::BTreeMap;

use frame::sync::SpinLock;

use super::inode::Inode;
use crate::error::{Errno, Error, Result};

/// Lock level of the table: above every kernel lock a holder may be
/// dropped under, below the timer's (the tick may interrupt its holder);
/// only allocation happens while it is held.
const WRITE_ACCESS: u8 = 48;

/// Writers (> 0) or programs running the file (< 0), by inode identity.
static COUNTS: SpinLock<BTreeMap<(u64, u64), i64>, WRITE_ACCESS> = SpinLock::new(BTreeMap::new());

/// Adds `delta` to the count of `key` if the count does not have the
/// opposite sign; ETXTBSY otherwise.
fn adjust(key: (u64, u64), delta: i64) -> Result<()> {
    let mut counts = COUNTS.lock();
    let count = counts.get(&key).copied().unwrap_or(0);
    if count.signum() == -delta.signum() {
        return Err(Error::new(Errno::ETXTBSY));
    }
    if count + delta == 0 {
        counts.remove(&key);
    } else {
        counts.insert(key, count + delta);
    }
    Ok(())
}

fn release(key: (u64, u64), delta: i64) {
    let mut counts = COUNTS.lock();
    if let Some(count) = counts.get_mut(&key) {
        *count -= delta;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

/// One writer of a file (held by an open file description).
pub struct WriteAccess {
    key: (u64, u64),
}

impl WriteAccess {
    /// ETXTBSY if the file is being executed.
    pub fn get(node: &dyn Inode) -> Result<WriteAccess> {
        let key = node.id();
        adjust(key, 1)?;
        Ok(WriteAccess { key })
    }
}

impl Drop for WriteAccess {
    fn drop(&mut self) {
        release(self.key, 1);
    }
}

/// One running program of a file (held by its address space).
pub struct DenyWrite {
    key: (u64, u64),
}

impl DenyWrite {
    /// ETXTBSY if the file is open for writing.
    pub fn get(node: &dyn Inode) -> Result<DenyWrite> {
        let key = node.id();
        adjust(key, -1)?;
        Ok(DenyWrite { key })
    }

    /// Another holder (a forked address space); never fails, as the
    /// count is already negative.
    pub fn duplicate(&self) -> DenyWrite {
        let _ = adjust(self.key, -1);
        DenyWrite { key: self.key }
    }
}

impl Drop for DenyWrite {
    fn drop(&mut self) {
        release(self.key, -1);
    }
}
