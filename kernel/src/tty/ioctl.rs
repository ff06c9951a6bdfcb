//! Terminal ioctls (ioctl_tty(2), tty_ioctl(4)): settings, window size,
//! the controlling terminal and the foreground process group, on the
//! terminal side (console, pty slave, /dev/tty) or through a pty's master,
//! which reaches the same terminal (Linux's tty_pair_get_tty) with a few
//! differences: the master is never a controlling terminal, reads the
//! foreground group and session without being one, and its input and
//! output queues are the other way round.

use frame::pod::Pod;

use crate::fs::{Caller, POLLIN, POLLOUT};
use super::terminal::Tty;
use super::termios::*;
use super::job::{self, Owner, SIGCONT, SIGHUP, SIGTTOU, SIGWINCH};
use crate::error::{Errno, Error, Result};

/// The only line discipline (N_TTY).
const N_TTY: i32 = 0;

/// Which end of the terminal the ioctl came through.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A file of the terminal itself (console, /dev/pts/N, /dev/tty).
    Terminal,
    /// A pty's master.
    Master,
}

pub fn read_i32(caller: &dyn Caller, arg: u64) -> Result<i32> {
    let mut b = [0u8; 4];
    caller.read_bytes(arg, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

pub fn write_i32(caller: &dyn Caller, arg: u64, v: i32) -> Result<()> {
    caller.write_bytes(arg, &v.to_ne_bytes())
}

/// The owner, for ioctls that need the terminal to be the caller's
/// controlling terminal when asked through the terminal side (ENOTTY).
fn owner_for(tty: &Tty, side: Side) -> Result<Owner> {
    let o = tty.owner();
    if side == Side::Master || o.controls_caller() {
        Ok(o)
    } else {
        Err(Error::new(Errno::ENOTTY))
    }
}

/// Installs the settings `make` derives from the current ones (output
/// is never queued, so the W variants have nothing to wait for), first
/// discarding unread input if `flush`.
fn set_termios(tty: &Tty, make: impl FnOnce(&Termios) -> Termios, flush: bool) {
    {
        let mut st = tty.lock();
        if flush {
            st.ld.flush_input();
        }
        let t = make(&st.ld.termios);
        st.ld.set_termios(t);
    }
    // Input may have become readable, or room for more.
    tty.readiness().notify(POLLIN);
    tty.driver().input_consumed();
}

pub fn ioctl(tty: &Tty, side: Side, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
    if side == Side::Terminal && tty.is_hung_up() {
        // Linux's hung_up_tty_ioctl.
        let errno = if cmd == TIOCSPGRP {
            Errno::ENOTTY
        } else {
            Errno::EIO
        };
        return Err(Error::new(errno));
    }
    match cmd {
        TCGETS => {
            let t = tty.lock().ld.termios;
            caller.write_bytes(arg, t.as_bytes())?;
        }
        TCSETS | TCSETSW | TCSETSF => {
            // A background process changing the settings gets SIGTTOU.
            job::check_access(tty.owner(), SIGTTOU)?;
            let mut t = Termios::new_zeroed();
            caller.read_bytes(arg, t.as_bytes_mut())?;
            set_termios(tty, |_| t, cmd == TCSETSF);
        }
        TCGETA => {
            let t = tty.lock().ld.termios;
            caller.write_bytes(arg, &Termio::encode(&t))?;
        }
        TCSETA | TCSETAW | TCSETAF => {
            job::check_access(tty.owner(), SIGTTOU)?;
            let mut b = [0u8; Termio::SIZE];
            caller.read_bytes(arg, &mut b)?;
            set_termios(tty, |old| Termio::apply(old, &b), cmd == TCSETAF);
        }
        TIOCGWINSZ => {
            let w = tty.lock().winsize;
            caller.write_bytes(arg, w.as_bytes())?;
        }
        TIOCSWINSZ => {
            let mut w = WinSize::new_zeroed();
            caller.read_bytes(arg, w.as_bytes_mut())?;
            let (changed, fg) = {
                let mut st = tty.lock();
                let changed = st.winsize != w;
                st.winsize = w;
                (changed, st.owner.fg_pgrp)
            };
            if changed {
                job::signal_group(fg, SIGWINCH);
            }
        }
        TIOCGPGRP => write_i32(caller, arg, owner_for(tty, side)?.fg_pgrp as i32)?,
        TIOCSPGRP => set_foreground(tty, caller, arg)?,
        TIOCGSID => {
            let o = owner_for(tty, side)?;
            if o.session == 0 {
                return Err(Error::new(Errno::ENOTTY));
            }
            write_i32(caller, arg, o.session as i32)?;
        }
        TIOCSCTTY => make_controlling(tty, arg)?,
        TIOCNOTTY => {
            if side == Side::Master {
                return Err(Error::new(Errno::ENOTTY));
            }
            let o = owner_for(tty, side)?;
            // Only a session leader gives the terminal up for its session.
            if job::caller_ids().is_some_and(|(pid, _, sid)| pid == sid) {
                tty.lock().owner = Owner::default();
                job::signal_group(o.fg_pgrp, SIGHUP);
                job::signal_group(o.fg_pgrp, SIGCONT);
            }
        }
        FIONREAD => {
            let n = {
                let st = tty.lock();
                match side {
                    Side::Terminal => st.ld.available(),
                    Side::Master => st.output.len(),
                }
            };
            write_i32(caller, arg, n as i32)?;
        }
        TIOCOUTQ => write_i32(caller, arg, 0)?,
        TCFLSH => {
            let (input, output) = match arg {
                0 => (true, false),
                1 => (false, true),
                2 => (true, true),
                _ => return Err(Error::new(Errno::EINVAL)),
            };
            if side == Side::Terminal {
                job::check_access(tty.owner(), SIGTTOU)?;
            }
            // The master's input is the terminal's output.
            let (input, output) = match side {
                Side::Terminal => (input, output),
                Side::Master => (output, input),
            };
            {
                let mut st = tty.lock();
                if input {
                    st.ld.flush_input();
                }
                if output {
                    st.output.clear();
                }
            }
            if input {
                tty.driver().input_consumed();
            }
            if output {
                tty.readiness().notify(POLLOUT);
            }
        }
        TIOCSTI => {
            // Faking input needs the terminal to be the caller's, or root.
            let mine = side == Side::Terminal && tty.owner().controls_caller();
            if !mine && !job::caller_is_privileged() {
                return Err(Error::new(Errno::EPERM));
            }
            let mut b = [0u8; 1];
            caller.read_bytes(arg, &mut b)?;
            match side {
                Side::Terminal => {
                    tty.receive(&mut b.into_iter(), false);
                }
                Side::Master => {
                    {
                        let mut st = tty.lock();
                        st.output
                            .try_reserve(1)
                            .map_err(|_| Error::new(Errno::ENOMEM))?;
                        st.output.push_back(b[0]);
                    }
                    tty.driver().output_queued(tty);
                }
            }
        }
        TIOCGETD => write_i32(caller, arg, N_TTY)?,
        TIOCSETD => {
            if read_i32(caller, arg)? != N_TTY {
                return Err(Error::new(Errno::EINVAL));
            }
        }
        // Only a pty master has a peer to open.
        TIOCGPTPEER => return Err(Error::new(Errno::EIO)),
        TCSBRK | TCSBRKP | TCXONC => {}
        _ => return Err(Error::new(Errno::ENOTTY)),
    }
    Ok(0)
}

/// TIOCSPGRP (tcsetpgrp(3)): the terminal must be the caller's
/// controlling terminal and the group must exist in its session.
fn set_foreground(tty: &Tty, caller: &dyn Caller, arg: u64) -> Result<()> {
    let o = tty.owner();
    match job::check_access(o, SIGTTOU) {
        Err(e) if e.errno() == Errno::EIO => return Err(Error::new(Errno::ENOTTY)),
        r => r?,
    }
    if !o.controls_caller() {
        return Err(Error::new(Errno::ENOTTY));
    }
    let pgrp = u32::try_from(read_i32(caller, arg)?).map_err(|_| Error::new(Errno::EINVAL))?;
    match job::session_of(pgrp) {
        None => return Err(Error::new(Errno::ESRCH)),
        Some(s) if s != o.session => return Err(Error::new(Errno::EPERM)),
        Some(_) => {}
    }
    let mut st = tty.lock();
    if st.owner.session == o.session {
        st.owner.fg_pgrp = pgrp;
    }
    Ok(())
}

/// TIOCSCTTY: a session leader without a controlling terminal takes this
/// one; from another session only with `arg` 1 and root's privileges.
fn make_controlling(tty: &Tty, arg: u64) -> Result<()> {
    let (pid, pgid, sid) = job::caller_ids().ok_or(Error::new(Errno::EPERM))?;
    let o = tty.owner();
    if pid == sid && o.session == sid {
        return Ok(());
    }
    if pid != sid || super::terminal::controlling(sid).is_some() {
        return Err(Error::new(Errno::EPERM));
    }
    if o.session != 0 && !(arg == 1 && job::caller_is_privileged()) {
        return Err(Error::new(Errno::EPERM));
    }
    let mut st = tty.lock();
    if st.hung_up {
        return Err(Error::new(Errno::EIO));
    }
    st.owner = Owner {
        session: sid,
        fg_pgrp: pgid,
    };
    Ok(())
}
