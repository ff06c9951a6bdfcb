//! Process file descriptors (pidfd_open(2), clone(2)'s CLONE_PIDFD): an
//! "anon_inode:[pidfd]" file that names one process for as long as it is
//! open. It cannot be read or written; poll(2) and epoll report POLLIN
//! once the process has exited (a zombie), and POLLHUP as well once it has
//! been reaped. pidfd_send_signal(2), pidfd_getfd(2) and waitid(P_PIDFD)
//! act on the process it names (`syscall/pidfd.rs`).

use alloc::sync::Arc;

use super::{find_process, Pid, Process};
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::{anon_inode, Caller, File, FileOps, FileType, O_NONBLOCK, O_RDWR, POLLHUP, POLLIN, POLLRDNORM};

pub struct PidFd {
    /// The process (kept after it is reaped, to tell that it was).
    process: Arc<Process>,
}

/// A new pidfd file for `process` (O_RDWR, and O_NONBLOCK if asked: then
/// waitid(P_PIDFD) does not block); the caller installs it close-on-exec.
pub fn new_pidfd(process: Arc<Process>, nonblock: bool) -> Arc<File> {
    let node = anon_inode(FileType::Regular, 0o600, 0);
    let flags = O_RDWR | if nonblock { O_NONBLOCK } else { 0 };
    File::new(node, Some(Arc::new(PidFd { process })), flags)
}

/// The pidfd behind `file`, if it is one.
pub fn as_pidfd(file: &File) -> Option<&PidFd> {
    file.ops().and_then(|ops| (ops.as_ref() as &dyn core::any::Any).downcast_ref::<PidFd>())
}

impl PidFd {
    pub fn process(&self) -> &Arc<Process> {
        &self.process
    }

    pub fn pid(&self) -> Pid {
        self.process.pid()
    }

    /// The process has exited (it is a zombie, or was reaped).
    pub fn exited(&self) -> bool {
        self.process.exit_status().is_some()
    }

    /// The process has been reaped: it is no longer in the process table.
    pub fn reaped(&self) -> bool {
        find_process(self.pid()).is_none_or(|p| !Arc::ptr_eq(&p, &self.process))
    }

    /// The process, unless it has been reaped (ESRCH).
    pub fn live_or_zombie(&self) -> Result<&Arc<Process>> {
        if self.reaped() {
            return Err(Error::new(Errno::ESRCH));
        }
        Ok(&self.process)
    }
}

impl FileOps for PidFd {
    fn read(&self, _buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn write(&self, _buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        if !self.exited() {
            0
        } else if self.reaped() {
            POLLIN | POLLRDNORM | POLLHUP
        } else {
            POLLIN | POLLRDNORM
        }
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.process.exit_readiness)
    }
}
