//! /proc/<pid>/mem: the process's memory, read and written at the file
//! offset as an address (proc(5)). Opening needs ptrace-attach access.

use alloc::sync::Arc;

use super::pid::{Target, may_access};
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{FileType, Inode, Metadata};
use crate::fs::pseudo::{Attr, UNKNOWN_SIZE};
use crate::mm::Vmar;

const PAGE: usize = frame::mm::PAGE_SIZE;

pub(super) struct ProcMem {
    pub attr: Attr,
    pub target: Target,
}

impl ProcMem {
    /// Copies page by page so that a hole ends the transfer where it
    /// starts: what was copied before it counts, and a transfer that
    /// could copy nothing is EIO (Linux's mem_rw).
    fn transfer(&self, offset: usize, len: usize, mut step: impl FnMut(&Vmar, usize, usize, usize) -> Result<()>) -> Result<usize> {
        let p = self.target.process()?;
        if p.exit_status().is_some() {
            return Ok(0);
        }
        let vm = p.vm();
        let mut done = 0;
        while done < len {
            let Some(addr) = offset.checked_add(done) else { break };
            let n = (PAGE - addr % PAGE).min(len - done);
            if step(&vm, addr, done, n).is_err() {
                break;
            }
            done += n;
        }
        if done == 0 && len > 0 {
            return Err(Error::new(Errno::EIO));
        }
        Ok(done)
    }
}

impl Inode for ProcMem {
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        self.transfer(offset, buf.len(), |vm, addr, at, n| vm.read_bytes(addr, &mut buf[at..at + n]))
    }

    fn write_at(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        self.transfer(offset, buf.len(), |vm, addr, at, n| vm.write_bytes(addr, &buf[at..at + n]))
    }

    fn size(&self) -> usize {
        UNKNOWN_SIZE
    }

    fn metadata(&self) -> Metadata {
        self.attr.metadata(FileType::Regular, 1, 0)
    }

    fn check_open(&self) -> Result<()> {
        may_access(&self.target.process()?)
    }

    fn can_mmap(&self) -> bool {
        false
    }
}

/// The inode of /proc/<pid>/mem.
pub(super) fn mem_file(attr: Attr, target: Target) -> Arc<dyn Inode> {
    Arc::new(ProcMem { attr, target })
}
