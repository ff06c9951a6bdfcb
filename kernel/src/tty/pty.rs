//! Pseudo-terminals (pty(7)): opening /dev/ptmx makes a pair, a master
//! end (the file open(2) returns) and a slave terminal, /dev/pts/N
//! (devpts.rs), with the line discipline and job control of every
//! terminal (terminal.rs). What the master writes is the terminal's
//! received input; what the terminal outputs (writes after output
//! processing, and echo) waits in its output queue for the master to read.
//!
//! Lifetimes: the pair is a [`Tty`] whose driver is a [`PtyLink`]. The
//! master's file and every slave file hold it; the table of ptys holds it
//! weakly, so its number is free again once both sides are closed.
//! Closing the master hangs the slave up (its node disappears, its files
//! read end of file and fail with EIO, the session leader gets SIGHUP);
//! closing every slave file makes master reads fail with EIO once the
//! output is read (and poll report POLLHUP) until a slave is opened again.
//!
//! Locking: the table is an `INODE`-level spin lock held only to look up
//! or add entries; the pair's state is the terminal's lock.

use alloc::collections::BTreeMap;
use alloc::string::ToString;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::sync::{SpinLock, level};

use crate::fs::devices::PTS_MAJOR;
use crate::fs::File;
use crate::fs::{Timespec, makedev};
use crate::fs::readiness::Readiness;
use crate::fs::*;
use super::terminal::{Tty, TtyDriver, TtyFile};
use super::termios::*;
use super::ioctl::{self, Side, read_i32, write_i32};
use super::job::{self, Owner};
use crate::error::{Errno, Error, Result};

/// Most ptys at once (Linux's default /proc/sys/kernel/pty/max).
pub const MAX_PTYS: u32 = 4096;
/// Output the slave may queue for the master's reader before its writers
/// wait (about what Linux's pty buffers hold).
const OUTPUT_CAPACITY: usize = 16384;

const SIGINT: u32 = 2;
const SIGQUIT: u32 = 3;
const SIGTSTP: u32 = 20;

/// Mode and owner of a slave's node, as chmod(2)/chown(2) leave them.
#[derive(Clone, Copy)]
pub struct NodeAttr {
    pub perm: u32,
    pub uid: u32,
    pub gid: u32,
}

/// The master side of a pair, as its terminal's driver.
pub struct PtyLink {
    index: u32,
    /// Where the master's readers and writers wait.
    master: Readiness,
    /// Opening the slave fails with EIO until unlockpt(3).
    locked: AtomicBool,
    attr: SpinLock<NodeAttr, { level::INODE }>,
    created: Timespec,
}

impl PtyLink {
    pub fn attr(&self) -> NodeAttr {
        *self.attr.lock()
    }

    pub fn set_attr(&self, f: impl FnOnce(&mut NodeAttr)) {
        f(&mut self.attr.lock());
    }

    pub fn created(&self) -> Timespec {
        self.created
    }
}

impl TtyDriver for PtyLink {
    fn device(&self) -> u64 {
        makedev(PTS_MAJOR, self.index)
    }

    fn output_capacity(&self) -> usize {
        OUTPUT_CAPACITY
    }

    fn output_queued(&self, _tty: &Tty) {
        self.master.notify(POLLIN);
    }

    fn input_consumed(&self) {
        self.master.notify(POLLOUT);
    }

    fn closed(&self) {
        self.master.notify(POLLIN | POLLHUP);
    }
}

/// The pair's master side, if `tty` is a pty.
pub fn link(tty: &Tty) -> Option<&PtyLink> {
    (tty.driver() as &dyn Any).downcast_ref::<PtyLink>()
}

static PTYS: SpinLock<BTreeMap<u32, Weak<Tty>>, { level::INODE }> = SpinLock::new(BTreeMap::new());

/// Every pty with a side still open.
pub fn live() -> Vec<Arc<Tty>> {
    PTYS.lock().values().filter_map(Weak::upgrade).collect()
}

/// The ptys whose master is open (those devpts shows), by number.
pub fn visible() -> Vec<(u32, Arc<Tty>)> {
    let ptys: Vec<(u32, Arc<Tty>)> = PTYS
        .lock()
        .iter()
        .filter_map(|(i, t)| Some((*i, t.upgrade()?)))
        .collect();
    ptys.into_iter().filter(|(_, t)| !t.is_hung_up()).collect()
}

/// Pty `index`, if its master is open.
pub fn find(index: u32) -> Option<Arc<Tty>> {
    let tty = PTYS.lock().get(&index).and_then(Weak::upgrade)?;
    (!tty.is_hung_up()).then_some(tty)
}

/// A new pair with the lowest free number (ENOSPC past [`MAX_PTYS`]).
fn allocate() -> Result<Arc<Tty>> {
    let (uid, gid) = job::caller_fs_ids();
    let attr = crate::fs::devpts::new_slave_attr(uid, gid);
    let mut ptys = PTYS.lock();
    ptys.retain(|_, t| t.strong_count() > 0);
    // The numbers in use are the keys, in order: the first gap.
    let index = ptys
        .keys()
        .zip(0..)
        .find(|(used, i)| **used != *i)
        .map_or(ptys.len() as u32, |(_, i)| i);
    if index >= MAX_PTYS {
        return Err(Error::new(Errno::ENOSPC));
    }
    let link = PtyLink {
        index,
        master: Readiness::new(),
        locked: AtomicBool::new(true),
        attr: SpinLock::new(attr),
        created: Timespec::now(),
    };
    let winsize = WinSize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let tty = Arc::new(Tty::new(
        Termios::pty_slave(),
        winsize,
        Owner::default(),
        alloc::boxed::Box::new(link),
    ));
    ptys.insert(index, Arc::downgrade(&tty));
    Ok(tty)
}

/// Opening /dev/ptmx: a new pair's master.
pub fn open_master() -> Result<Arc<dyn FileOps>> {
    Ok(Arc::new(PtyMaster { tty: allocate()? }))
}

/// Opening /dev/pts/`index`: EIO while it is locked or once its master
/// is closed, ENXIO if there is no such pty.
pub fn open_slave(index: u32) -> Result<Arc<dyn FileOps>> {
    let tty = PTYS
        .lock()
        .get(&index)
        .and_then(Weak::upgrade)
        .ok_or(Error::new(Errno::ENXIO))?;
    check_slave_open(&tty)?;
    Ok(TtyFile::new(tty, false))
}

fn check_slave_open(tty: &Tty) -> Result<()> {
    let locked = link(tty).is_none_or(|l| l.locked.load(Ordering::Relaxed));
    if locked || tty.is_hung_up() {
        return Err(Error::new(Errno::EIO));
    }
    Ok(())
}

/// An open master: `/dev/ptmx` as open(2) returned it.
pub struct PtyMaster {
    tty: Arc<Tty>,
}

impl PtyMaster {
    fn link(&self) -> Result<&PtyLink> {
        link(&self.tty).ok_or(Error::new(Errno::EIO))
    }

    /// TIOCGPTPEER: a new open file on the slave, with open(2) `flags`.
    fn open_peer(&self, flags: u32) -> Result<Arc<File>> {
        check_slave_open(&self.tty)?;
        let index = self.link()?.index;
        let (dir, node) = crate::fs::devpts::slave_node(index)?;
        let file = File::new(node, Some(TtyFile::new(self.tty.clone(), false)), flags);
        file.set_origin(dir, index.to_string());
        Ok(file)
    }
}

/// TIOCGPTPEER on `file` (ioctl_tty(2)): a file on the slave of the pty
/// whose master `file` is, or None if it is not a master.
pub fn open_peer(file: &File, flags: u32) -> Option<Result<Arc<File>>> {
    let master = (file.ops()?.as_ref() as &dyn Any).downcast_ref::<PtyMaster>()?;
    Some(master.open_peer(flags))
}

impl Drop for PtyMaster {
    fn drop(&mut self) {
        self.tty.hang_up();
    }
}

impl FileOps for PtyMaster {
    /// The terminal's output; EIO once every slave file is closed and the
    /// output is read.
    fn read(&self, buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = {
            let mut st = self.tty.lock();
            if st.output.is_empty() {
                let errno = if st.closed { Errno::EIO } else { Errno::EAGAIN };
                return Err(Error::new(errno));
            }
            let n = buf.len().min(st.output.len());
            for (dst, src) in buf.iter_mut().zip(st.output.drain(..n)) {
                *dst = src;
            }
            n
        };
        self.tty.readiness().notify(POLLOUT);
        Ok(n)
    }

    /// Input for the terminal, as much as its line discipline takes.
    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.tty.receive(&mut buf.iter().copied(), true) {
            0 => Err(Error::new(Errno::EAGAIN)),
            n => Ok(n),
        }
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        let st = self.tty.lock();
        let mut events = 0;
        if !st.output.is_empty() {
            events |= POLLIN | POLLRDNORM;
        }
        if st.ld.accepts_input() {
            events |= POLLOUT | POLLWRNORM;
        }
        if st.closed {
            events |= POLLHUP;
        }
        events
    }

    fn readiness(&self) -> Option<&Readiness> {
        link(&self.tty).map(|l| &l.master)
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        let link = self.link()?;
        match cmd {
            TIOCGPTN => write_i32(caller, arg, link.index as i32)?,
            TIOCSPTLCK => {
                let lock = read_i32(caller, arg)? != 0;
                link.locked.store(lock, Ordering::Relaxed);
            }
            TIOCGPTLCK => {
                let locked = link.locked.load(Ordering::Relaxed);
                write_i32(caller, arg, i32::from(locked))?;
            }
            TIOCSIG => {
                // The argument is the signal number itself.
                let sig = u32::try_from(arg).unwrap_or(0);
                if !matches!(sig, SIGINT | SIGQUIT | SIGTSTP) {
                    return Err(Error::new(Errno::EINVAL));
                }
                job::signal_group(self.tty.owner().fg_pgrp, sig);
            }
            _ => return ioctl::ioctl(&self.tty, Side::Master, cmd, arg, caller),
        }
        Ok(0)
    }
}
