//! Character devices: /dev/null, /dev/zero, /dev/full, /dev/random and
//! /dev/urandom, and the terminals (/dev/console, /dev/tty, /dev/ptmx and
//! the pty slaves /dev/pts/N), chosen by device number when a device node
//! is opened.

use alloc::sync::Arc;

use super::anon::anon_inode;
use super::file::File;
use super::inode::{FileType, dev_major, dev_minor, makedev};
use super::stream::{Caller, FileOps, accepted_prefix};
use crate::error::{Errno, Error, Result};

pub const NULL: u64 = makedev(1, 3);
pub const ZERO: u64 = makedev(1, 5);
pub const FULL: u64 = makedev(1, 7);
pub const RANDOM: u64 = makedev(1, 8);
pub const URANDOM: u64 = makedev(1, 9);
pub const TTY: u64 = makedev(5, 0);
pub const CONSOLE: u64 = makedev(5, 1);
pub const PTMX: u64 = makedev(5, 2);
/// The major number of pty slaves (UNIX98_PTY_SLAVE_MAJOR).
pub const PTS_MAJOR: u32 = 136;

/// The memory devices (mem(4), null(4), random(4)), which differ only in
/// what a read gives and what becomes of a write.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mem {
    /// /dev/null: end of file; writes vanish.
    Null,
    /// /dev/zero: zeros; writes vanish.
    Zero,
    /// /dev/full: zeros; writes fail with ENOSPC.
    Full,
    /// /dev/random, /dev/urandom: the kernel's generator (it never blocks,
    /// as on Linux once seeded); writes are accepted and ignored.
    Random,
}

impl FileOps for Mem {
    fn read(&self, buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        match self {
            Mem::Null => return Ok(0),
            Mem::Zero | Mem::Full => buf.fill(0),
            Mem::Random => crate::system::fill_random(buf),
        }
        Ok(buf.len())
    }

    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        match self {
            Mem::Full => Err(Error::new(Errno::ENOSPC)),
            _ => Ok(buf.len()),
        }
    }

    /// /dev/null gives end of file; /dev/zero and /dev/full copy zeros
    /// from a page of them, the whole count, stopping early only for a
    /// signal (after the first page) or a fault (the bytes before it).
    fn read_direct(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        _nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        static ZEROS: [u8; 4096] = [0; 4096];
        match self {
            Mem::Null => Some(Ok(0)),
            Mem::Zero | Mem::Full => {
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(ZEROS.len());
                    if let Err(e) = sink(done, &ZEROS[..n]) {
                        done += accepted_prefix(sink, done, &ZEROS[..n], &e);
                        if done == 0 {
                            return Some(Err(e));
                        }
                        break;
                    }
                    done += n;
                    if done < len && caller.signal_pending() {
                        break;
                    }
                }
                Some(Ok(done))
            }
            Mem::Random => None,
        }
    }

    /// Writes to /dev/null and /dev/zero vanish unread, as Linux's
    /// write_null returns the count without touching the buffer.
    fn write_direct(
        &self,
        len: usize,
        _source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        _nonblocking: bool,
        _caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        match self {
            Mem::Null | Mem::Zero => Some(Ok(len)),
            Mem::Full => Some(Err(Error::new(Errno::ENOSPC))),
            Mem::Random => None,
        }
    }

    fn is_seekable(&self) -> bool {
        true
    }

    /// pread/pwrite work and ignore the offset.
    fn allows_positional_io(&self) -> bool {
        true
    }

    /// A read gets the whole count (never short).
    fn fills_whole_reads(&self) -> bool {
        *self != Mem::Null
    }

    /// mmap of /dev/zero is anonymous memory.
    fn maps_as_anonymous(&self) -> bool {
        *self == Mem::Zero
    }

    /// Linux's memory devices have no poll method: epoll refuses them
    /// (EPERM), poll and select see them as always ready.
    fn can_poll(&self) -> bool {
        false
    }
}

/// The driver of character device `rdev`: ENXIO if there is none.
pub fn char_device(rdev: u64) -> Result<Arc<dyn FileOps>> {
    Ok(match rdev {
        NULL => Arc::new(Mem::Null),
        ZERO => Arc::new(Mem::Zero),
        FULL => Arc::new(Mem::Full),
        RANDOM | URANDOM => Arc::new(Mem::Random),
        TTY => crate::tty::terminal::open_controlling()?,
        CONSOLE => crate::tty::console::open(),
        PTMX => crate::tty::pty::open_master()?,
        crate::block::loop_dev::LOOP_CONTROL => crate::block::loop_dev::open_control(),
        _ if dev_major(rdev) == PTS_MAJOR => crate::tty::pty::open_slave(dev_minor(rdev))?,
        _ => {
            return Err(Error::with_message(
                Errno::ENXIO,
                "no driver for this device number",
            ));
        }
    })
}

/// An open file on the console with open(2) `flags` (the console the
/// kernel starts `init` with): /dev/console, as Linux opens it for init
/// (so that ttyname(3) finds it), or a nameless one if /dev lacks it.
pub fn open_console(flags: u32) -> Arc<File> {
    let fs = super::FsContext::default();
    if let Ok(file) = super::open(&fs, fs.root(), "/dev/console", flags, 0)
        && file.node().metadata().rdev == CONSOLE
    {
        return file;
    }
    let node = anon_inode(FileType::CharDevice, 0o600, CONSOLE);
    File::new(node, Some(crate::tty::console::open()), flags)
}
