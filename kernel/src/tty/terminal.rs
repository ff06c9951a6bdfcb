//! A terminal: what every file open on it shares — the line discipline
//! (ldisc.rs), the job-control owner (job.rs), the window size and the
//! queue of output for the device — and the driver behind it, which feeds
//! received bytes in and takes the output away. Two drivers exist: the
//! serial console (console.rs) and a pseudo-terminal pair (pty.rs), whose
//! master end writes the slave's input and reads its output. The files of
//! the terminal side (/dev/console, /dev/tty, /dev/pts/N) are one type,
//! [`TtyFile`], whatever the driver.
//!
//! Controlling terminals: a terminal records the session it controls;
//! a session's controlling terminal is the terminal that says so
//! ([`controlling`] asks each of them).
//!
//! Locking: the state is one `CONSOLE`-level spin lock, never held while
//! the driver writes to the UART, nor while notifying, signalling or
//! sleeping.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;

use frame::sync::{SpinLock, SpinLockGuard, level};

use crate::fs::{O_ACCMODE, O_NOCTTY, O_WRONLY};
use crate::fs::readiness::Readiness;
use crate::fs::*;
use super::termios::*;
use super::ldisc::{Ldisc, process_output_bounded};
use super::job::{self, Owner, SIGCONT, SIGHUP, SIGTTIN, SIGTTOU};
use crate::error::{Errno, Error, Result};

/// VTIME counts tenths of a second.
const VTIME_UNIT_NS: u64 = 100_000_000;

/// What a hung-up terminal's files report to poll (Linux's
/// hung_up_tty_poll).
const HUNG_UP_EVENTS: u16 = POLLIN | POLLOUT | POLLERR | POLLHUP | POLLRDNORM | POLLWRNORM;

/// The device side of a terminal.
pub trait TtyDriver: Any + Send + Sync {
    /// The terminal's device number (st_rdev of its node, /proc's tty_nr).
    fn device(&self) -> u64;
    /// How much output may wait in the terminal's queue: writers block
    /// beyond it (a pty's master has not read it). Unbounded for a driver
    /// that takes all output at once.
    fn output_capacity(&self) -> usize;
    /// Output (written or echoed) was queued; called without the lock.
    fn output_queued(&self, tty: &Tty);
    /// A reader took input, so there is room for more.
    fn input_consumed(&self) {}
    /// The terminal's last file was closed.
    fn closed(&self) {}
}

pub struct TtyState {
    pub ld: Ldisc,
    pub winsize: WinSize,
    pub owner: Owner,
    /// Processed output the driver has not taken yet.
    pub output: VecDeque<u8>,
    /// Open files on the terminal side.
    pub opens: usize,
    /// The terminal side was open and all its files were closed since
    /// (what a pty master sees as its other end closed).
    pub closed: bool,
    /// The device went away (a pty's master was closed): reads give end
    /// of file, everything else EIO.
    pub hung_up: bool,
}

pub struct Tty {
    state: SpinLock<TtyState, { level::CONSOLE }>,
    /// Where the terminal side's readers and writers wait.
    readiness: Readiness,
    driver: Box<dyn TtyDriver>,
}

impl Tty {
    pub fn new(
        termios: Termios,
        winsize: WinSize,
        owner: Owner,
        driver: Box<dyn TtyDriver>,
    ) -> Tty {
        Tty {
            state: SpinLock::new(TtyState {
                ld: Ldisc::new(termios),
                winsize,
                owner,
                output: VecDeque::new(),
                opens: 0,
                closed: false,
                hung_up: false,
            }),
            readiness: Readiness::new(),
            driver,
        }
    }

    pub fn lock(&self) -> SpinLockGuard<'_, TtyState, { level::CONSOLE }> {
        self.state.lock()
    }

    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    pub fn driver(&self) -> &dyn TtyDriver {
        &*self.driver
    }

    pub fn owner(&self) -> Owner {
        self.lock().owner
    }

    pub fn is_hung_up(&self) -> bool {
        self.lock().hung_up
    }

    /// Runs received bytes through the line discipline: echo is queued as
    /// output (what does not fit is dropped), signal characters signal the
    /// foreground group, readers are woken. With `bounded` it stops before
    /// a byte the line discipline cannot take yet (a pty master's write
    /// then waits); otherwise such bytes are dropped (the UART cannot
    /// wait). Returns how many bytes were taken.
    pub fn receive(&self, bytes: &mut dyn Iterator<Item = u8>, bounded: bool) -> usize {
        let mut echo = Vec::new();
        let mut signals = Vec::new();
        let mut taken = 0;
        {
            let mut st = self.lock();
            st.ld.last_input_ns = frame::timer::monotonic_ns();
            loop {
                if bounded && !st.ld.accepts_input() {
                    break;
                }
                let Some(b) = bytes.next() else { break };
                taken += 1;
                if let Some(sig) = st.ld.receive(b, &mut echo) {
                    signals.push((st.owner.fg_pgrp, sig));
                }
            }
            let room = self
                .driver
                .output_capacity()
                .saturating_sub(st.output.len());
            let n = echo.len().min(room);
            if st.output.try_reserve(n).is_ok() {
                st.output.extend(&echo[..n]);
            }
        }
        if !echo.is_empty() {
            self.driver.output_queued(self);
        }
        for (pgrp, sig) in signals {
            job::signal_group(pgrp, sig);
        }
        if taken > 0 {
            self.readiness.notify(POLLIN);
        }
        taken
    }

    /// read(2) on the terminal side: job control, then the line
    /// discipline's rules (a line, or VMIN/VTIME), sleeping unless
    /// `nonblocking`. End of file once hung up; a read that was waiting
    /// when it happened fails with EIO (n_tty sees the other end closed).
    pub fn read(&self, buf: &mut [u8], nonblocking: bool, caller: &dyn Caller) -> Result<usize> {
        if self.is_hung_up() {
            return Ok(0);
        }
        job::check_access(self.owner(), SIGTTIN)?;
        if buf.is_empty() {
            return Ok(0);
        }
        let mut started = None;
        loop {
            let seen = self.readiness.generation(POLLIN);
            let (done, deadline) = {
                let mut st = self.lock();
                if st.hung_up {
                    return Err(Error::new(Errno::EIO));
                }
                try_read(&mut st.ld, buf, nonblocking, &mut started)?
            };
            if let Some(n) = done {
                if n > 0 {
                    self.driver.input_consumed();
                }
                return Ok(n);
            }
            let mut changed = || self.readiness.generation(POLLIN) != seen;
            caller.wait(
                self.readiness.queue(),
                &mut changed,
                deadline.unwrap_or(u64::MAX),
            )?;
        }
    }

    /// write(2) on the terminal side: job control with TOSTOP, then output
    /// processing into the output queue, as much as fits (EAGAIN if
    /// nothing does). EIO once hung up.
    pub fn write(&self, buf: &[u8]) -> Result<usize> {
        let (owner, tostop, hung_up) = {
            let st = self.lock();
            (st.owner, st.ld.termios.c_lflag & TOSTOP != 0, st.hung_up)
        };
        if hung_up {
            return Err(Error::new(Errno::EIO));
        }
        if tostop {
            job::check_access(owner, SIGTTOU)?;
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let taken = {
            let mut guard = self.lock();
            let st = &mut *guard;
            let room = self
                .driver
                .output_capacity()
                .saturating_sub(st.output.len());
            st.output
                .try_reserve(room.min(buf.len().saturating_mul(2)))
                .map_err(|_| Error::new(Errno::ENOMEM))?;
            process_output_bounded(st.ld.termios.c_oflag, buf, room, &mut st.output)
        };
        if taken == 0 {
            return Err(Error::new(Errno::EAGAIN));
        }
        self.driver.output_queued(self);
        Ok(taken)
    }

    /// poll(2) on the terminal side.
    pub fn poll(&self) -> u16 {
        let st = self.lock();
        if st.hung_up {
            return HUNG_UP_EVENTS;
        }
        let mut events = 0;
        if st.ld.readable() {
            events |= POLLIN | POLLRDNORM;
        }
        // Room for any character, also "\n" becoming "\r\n".
        if self
            .driver
            .output_capacity()
            .saturating_sub(st.output.len())
            >= 2
        {
            events |= POLLOUT | POLLWRNORM;
        }
        events
    }

    /// The device went away: the terminal is hung up, its session loses
    /// it, and the session leader gets SIGHUP and SIGCONT (Linux's
    /// __tty_hangup for a pty whose master closed).
    pub fn hang_up(&self) {
        let owner = {
            let mut st = self.lock();
            st.hung_up = true;
            st.output.clear();
            st.ld.flush_input();
            core::mem::take(&mut st.owner)
        };
        if owner.session != 0 {
            job::signal_process(owner.session, SIGHUP);
            job::signal_process(owner.session, SIGCONT);
        }
        self.readiness.notify(HUNG_UP_EVENTS);
    }

    /// The session `sid` no longer controls the terminal (its leader
    /// exited): its foreground group gets SIGHUP.
    fn release(&self, sid: u32) {
        let fg = {
            let mut st = self.lock();
            if st.owner.session != sid {
                return;
            }
            core::mem::take(&mut st.owner).fg_pgrp
        };
        job::signal_group(fg, SIGHUP);
        self.readiness.notify(POLLIN);
    }

    /// Opening the terminal without O_NOCTTY makes it the controlling
    /// terminal of a session leader that has none, if no session has it
    /// and the file is open for reading (Linux's tty_open_proc_set_tty).
    fn acquire_on_open(&self, flags: u32) {
        let Some((pid, pgid, sid)) = job::caller_ids() else {
            return;
        };
        if flags & O_NOCTTY != 0 || flags & O_ACCMODE == O_WRONLY || pid != sid {
            return;
        }
        if controlling(sid).is_some() {
            return;
        }
        let mut st = self.lock();
        if st.owner.session == 0 && !st.hung_up {
            st.owner = Owner {
                session: sid,
                fg_pgrp: pgid,
            };
        }
    }
}

/// One attempt at a read from the line discipline: `(Some(n), _)` when
/// done, `(None, deadline)` to wait for input until `deadline` (None:
/// forever). `started` keeps the start of a VMIN = 0 read's timer.
fn try_read(
    ld: &mut Ldisc,
    buf: &mut [u8],
    nonblocking: bool,
    started: &mut Option<u64>,
) -> Result<(Option<usize>, Option<u64>)> {
    if ld.canonical() {
        return match ld.take_line(buf) {
            Some(n) => Ok((Some(n), None)),
            None if nonblocking => Err(Error::new(Errno::EAGAIN)),
            None => Ok((None, None)),
        };
    }
    // termios(3), "Canonical and noncanonical mode": VMIN and VTIME.
    let min = usize::from(ld.termios.c_cc[VMIN]);
    let time = u64::from(ld.termios.c_cc[VTIME]) * VTIME_UNIT_NS;
    let avail = ld.raw_len();
    let now = frame::timer::monotonic_ns();
    if min == 0 && time == 0 {
        return Ok((Some(ld.take_raw(buf)), None));
    }
    if nonblocking {
        return match avail {
            0 => Err(Error::new(Errno::EAGAIN)),
            _ => Ok((Some(ld.take_raw(buf)), None)),
        };
    }
    let target = min.min(buf.len()).max(1);
    if min == 0 {
        // A timer from the start of the read.
        let end = started.get_or_insert(now).saturating_add(time);
        if avail > 0 || now >= end {
            return Ok((Some(ld.take_raw(buf)), None));
        }
        return Ok((None, Some(end)));
    }
    if avail >= target {
        return Ok((Some(ld.take_raw(buf)), None));
    }
    if time == 0 || avail == 0 {
        return Ok((None, None));
    }
    // An inter-byte timer, from the last byte received.
    let end = ld.last_input_ns.saturating_add(time);
    if now >= end {
        return Ok((Some(ld.take_raw(buf)), None));
    }
    Ok((None, Some(end)))
}

/// Every terminal: the console (once it is in use) and the live ptys.
pub fn all() -> Vec<Arc<Tty>> {
    let mut ttys = super::pty::live();
    if let Some(console) = super::console::existing() {
        ttys.insert(0, console);
    }
    ttys
}

/// The controlling terminal of session `sid`, if it has one.
pub fn controlling(sid: u32) -> Option<Arc<Tty>> {
    if sid == 0 {
        return None;
    }
    all().into_iter().find(|t| t.owner().session == sid)
}

/// The session leader `sid` exited: its terminal is released and the
/// foreground group hung up (Linux's disassociate_ctty on exit).
pub fn session_ended(sid: u32) {
    if let Some(tty) = controlling(sid) {
        tty.release(sid);
    }
}

/// /proc/pid/stat's tty_nr and tpgid for a process of session `sid`:
/// the controlling terminal's device number in the kernel's encoding
/// (`new_encode_dev`) and its foreground group, or (0, -1).
pub fn stat_fields(sid: u32) -> (u32, i64) {
    match controlling(sid) {
        Some(tty) => {
            let dev = tty.driver().device();
            let (major, minor) = (crate::fs::dev_major(dev), crate::fs::dev_minor(dev));
            let nr = (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12);
            (nr, i64::from(tty.owner().fg_pgrp))
        }
        None => (0, -1),
    }
}

/// An open file on the terminal side: /dev/console, /dev/pts/N, or
/// /dev/tty (`alias`), which is the caller's controlling terminal.
pub struct TtyFile {
    tty: Arc<Tty>,
    alias: bool,
}

impl TtyFile {
    pub fn new(tty: Arc<Tty>, alias: bool) -> Arc<TtyFile> {
        {
            let mut st = tty.lock();
            st.opens += 1;
            st.closed = false;
        }
        Arc::new(TtyFile { tty, alias })
    }
}

impl Drop for TtyFile {
    fn drop(&mut self) {
        let last = {
            let mut st = self.tty.lock();
            st.opens -= 1;
            st.closed = st.opens == 0;
            st.closed
        };
        if last {
            self.tty.driver().closed();
        }
    }
}

/// /dev/tty: a file on the caller's controlling terminal (ENXIO without
/// one).
pub fn open_controlling() -> Result<Arc<dyn FileOps>> {
    let no_tty = || Error::with_message(Errno::ENXIO, "no controlling terminal");
    let (_, _, sid) = job::caller_ids().ok_or_else(no_tty)?;
    let tty = controlling(sid).ok_or_else(no_tty)?;
    Ok(TtyFile::new(tty, true))
}

impl FileOps for TtyFile {
    fn read(&self, buf: &mut [u8], caller: &dyn Caller) -> Result<usize> {
        self.tty.read(buf, true, caller)
    }

    fn read_blocking(
        &self,
        buf: &mut [u8],
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        Some(self.tty.read(buf, nonblocking, caller))
    }

    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        self.tty.write(buf)
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        self.tty.poll()
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.tty.readiness)
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        super::ioctl::ioctl(
            &self.tty,
            super::ioctl::Side::Terminal,
            cmd,
            arg,
            caller,
        )
    }

    fn opened(&self, flags: u32, _caller: &dyn Caller) -> Result<()> {
        if !self.alias {
            self.tty.acquire_on_open(flags);
        }
        Ok(())
    }
}
