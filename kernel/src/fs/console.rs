//! The console terminal on the serial port: /dev/console, /dev/tty (the
//! caller's controlling terminal) and fds 0-2 of init.
//!
//! A kernel task runs the line discipline (tty.rs) on every received byte,
//! woken by the UART receive interrupt (or, where that is missing, every
//! 10 ms): ^C, ^Z and ^\ reach the foreground process group even while
//! nobody reads. Readers sleep on the terminal's [`Readiness`] queue.
//! Job control (tty_job.rs): the terminal controls one session — init's
//! from boot — and a background process that reads, changes the settings,
//! or writes with TOSTOP is stopped by SIGTTIN/SIGTTOU.
//!
//! Locking: the terminal state is one `CONSOLE`-level spin lock, never held
//! while writing to the serial port, signalling or sleeping.

use alloc::sync::Arc;
use alloc::vec::Vec;

use frame::sync::{Once, SpinLock, level};

use super::file::O_NOCTTY;
use super::readiness::Readiness;
use super::stream::*;
use super::termios::*;
use super::tty::{Ldisc, process_output};
use super::tty_job::{self, Owner, SIGHUP, SIGTTIN, SIGTTOU};
use crate::error::{Errno, Error, Result};

/// How often input is polled when the UART interrupt is not available,
/// and (rarely) when it is, in case one is lost.
const POLL_NS: u64 = 10_000_000;
const IRQ_POLL_NS: u64 = 1_000_000_000;
/// VTIME counts tenths of a second.
const VTIME_UNIT_NS: u64 = 100_000_000;

struct Shared {
    state: SpinLock<State, { level::CONSOLE }>,
    readiness: Readiness,
}

pub(super) struct State {
    pub ld: Ldisc,
    pub winsize: WinSize,
    pub owner: Owner,
}

static SHARED: Once<Shared> = Once::new();
static CONSOLE: Once<Arc<Console>> = Once::new();
static CONTROLLING: Once<Arc<Console>> = Once::new();

/// An open console: `/dev/console`, or `/dev/tty` (`controlling`), which
/// only a process whose controlling terminal it is may open.
pub struct Console {
    controlling: bool,
}

/// The terminal, created (with its input task) on first use. It starts as
/// the controlling terminal of init's session.
fn shared() -> &'static Shared {
    let mut created = false;
    let s = SHARED.call_once(|| {
        created = true;
        let init = crate::process::INIT_PID;
        Shared {
            state: SpinLock::new(State {
                ld: Ldisc::new(Termios::serial_console()),
                winsize: WinSize {
                    ws_row: 24,
                    ws_col: 80,
                    ws_xpixel: 0,
                    ws_ypixel: 0,
                },
                owner: Owner {
                    session: init,
                    fg_pgrp: init,
                },
            }),
            readiness: Readiness::new(),
        }
    });
    if created && frame::task::TaskOptions::new(input_task).spawn().is_err() {
        frame::log_warn!("console: no input task; typed input is lost");
    }
    s
}

/// Runs the line discipline on received bytes, forever.
fn input_task() {
    let rx = frame::console::input_wait_queue();
    loop {
        let period = if frame::console::input_interrupts_enabled() {
            IRQ_POLL_NS
        } else {
            POLL_NS
        };
        let deadline = frame::timer::monotonic_ns().saturating_add(period);
        if let Some(first) = rx.wait_until_or_deadline(frame::console::try_read_byte, deadline) {
            receive(first);
        }
    }
}

/// Feeds `first` and whatever else has arrived (a bounded batch, so echo
/// is not held back for long) to the line discipline.
fn receive(first: u8) {
    let more = core::iter::from_fn(frame::console::try_read_byte);
    deliver(core::iter::once(first).chain(more).take(256));
}

/// Runs `bytes` through the line discipline as typed input; then echoes,
/// signals the foreground group and wakes readers.
pub(super) fn deliver(bytes: impl Iterator<Item = u8>) {
    let sh = shared();
    let mut echo = Vec::new();
    let mut signals = Vec::new();
    {
        let mut st = sh.state.lock();
        st.ld.last_input_ns = frame::timer::monotonic_ns();
        for b in bytes {
            if let Some(sig) = st.ld.receive(b, &mut echo) {
                signals.push((st.owner.fg_pgrp, sig));
            }
        }
    }
    frame::console::write_bytes(&echo);
    for (pgrp, sig) in signals {
        tty_job::signal_group(pgrp, sig);
    }
    sh.readiness.notify(POLLIN);
}

/// The session leader `sid` exited: its terminal is released and the
/// foreground group hung up (Linux's disassociate_ctty on exit).
pub fn session_ended(sid: u32) {
    let Some(sh) = SHARED.get() else { return };
    let fg = {
        let mut st = sh.state.lock();
        if st.owner.session != sid {
            return;
        }
        core::mem::take(&mut st.owner).fg_pgrp
    };
    tty_job::signal_group(fg, SIGHUP);
    sh.readiness.notify(POLLIN | POLLHUP);
}

impl Console {
    /// /dev/console, and what init's fds 0-2 are open on.
    pub fn get() -> Arc<Console> {
        shared();
        CONSOLE
            .call_once(|| Arc::new(Console { controlling: false }))
            .clone()
    }

    /// /dev/tty.
    pub fn controlling() -> Arc<Console> {
        shared();
        CONTROLLING
            .call_once(|| Arc::new(Console { controlling: true }))
            .clone()
    }
}

fn owner() -> Owner {
    shared().state.lock().owner
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

impl FileOps for Console {
    fn read(&self, buf: &mut [u8], caller: &dyn Caller) -> Result<usize> {
        self.read_blocking(buf, true, caller)
            .unwrap_or(Err(Error::new(Errno::EAGAIN)))
    }

    fn read_blocking(
        &self,
        buf: &mut [u8],
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        Some(self.do_read(buf, nonblocking, caller))
    }

    fn write(&self, buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        let (oflag, owner, tostop) = {
            let st = shared().state.lock();
            (
                st.ld.termios.c_oflag,
                st.owner,
                st.ld.termios.c_lflag & TOSTOP != 0,
            )
        };
        if tostop {
            tty_job::check_access(owner, SIGTTOU)?;
        }
        let mut out = Vec::new();
        out.try_reserve(buf.len().saturating_mul(2))
            .map_err(|_| Error::new(Errno::ENOMEM))?;
        process_output(oflag, buf, &mut out);
        frame::console::write_bytes(&out);
        Ok(buf.len())
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        let st = shared().state.lock();
        let input = if st.ld.readable() {
            POLLIN | POLLRDNORM
        } else {
            0
        };
        input | POLLOUT | POLLWRNORM
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&shared().readiness)
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        super::tty_ioctl::ioctl(cmd, arg, caller)
    }

    /// /dev/tty needs a controlling terminal (ENXIO); opening the console
    /// without O_NOCTTY makes it the controlling terminal of a session
    /// leader when no session has it.
    fn opened(&self, flags: u32, _caller: &dyn Caller) -> Result<()> {
        let Some((pid, pgid, sid)) = tty_job::caller_ids() else {
            return Ok(());
        };
        let mut st = shared().state.lock();
        if self.controlling {
            if st.owner.session == 0 || st.owner.session != sid {
                return Err(Error::new(Errno::ENXIO));
            }
            return Ok(());
        }
        if flags & O_NOCTTY == 0 && pid == sid && st.owner.session == 0 {
            st.owner = Owner {
                session: sid,
                fg_pgrp: pgid,
            };
        }
        Ok(())
    }
}

impl Console {
    fn do_read(&self, buf: &mut [u8], nonblocking: bool, caller: &dyn Caller) -> Result<usize> {
        tty_job::check_access(owner(), SIGTTIN)?;
        if buf.is_empty() {
            return Ok(0);
        }
        let sh = shared();
        let mut started = None;
        loop {
            let seen = sh.readiness.generation(POLLIN);
            let (done, deadline) = {
                let mut st = sh.state.lock();
                try_read(&mut st.ld, buf, nonblocking, &mut started)?
            };
            if let Some(n) = done {
                return Ok(n);
            }
            let mut changed = || sh.readiness.generation(POLLIN) != seen;
            caller.wait(
                sh.readiness.queue(),
                &mut changed,
                deadline.unwrap_or(u64::MAX),
            )?;
        }
    }
}

/// Runs `f` on the terminal state, under its lock (for the ioctls).
pub(super) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    f(&mut shared().state.lock())
}

/// Wakes readers after the input or the settings changed.
pub(super) fn notify_input() {
    shared().readiness.notify(POLLIN);
}
