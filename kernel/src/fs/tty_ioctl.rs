//! Terminal ioctls on the console (ioctl_tty(2), tty_ioctl(4)): settings,
//! window size, the controlling terminal and the foreground process group.

use frame::pod::Pod;

use super::console::{deliver, notify_input, with_state};
use super::stream::Caller;
use super::termios::*;
use super::tty_job::{self, Owner, SIGCONT, SIGHUP, SIGTTOU, SIGWINCH};
use crate::error::{Errno, Error, Result};

/// The only line discipline (N_TTY).
const N_TTY: i32 = 0;

fn owner() -> Owner {
    with_state(|st| st.owner)
}

fn read_i32(caller: &dyn Caller, arg: u64) -> Result<i32> {
    let mut b = [0u8; 4];
    caller.read_bytes(arg, &mut b)?;
    Ok(i32::from_ne_bytes(b))
}

fn write_i32(caller: &dyn Caller, arg: u64, v: i32) -> Result<()> {
    caller.write_bytes(arg, &v.to_ne_bytes())
}

/// ENOTTY unless the terminal is the caller's controlling terminal.
fn controlling_owner() -> Result<Owner> {
    let o = owner();
    if o.controls_caller() {
        Ok(o)
    } else {
        Err(Error::new(Errno::ENOTTY))
    }
}

pub fn ioctl(cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
    match cmd {
        TCGETS => {
            let t = with_state(|st| st.ld.termios);
            caller.write_bytes(arg, t.as_bytes())?;
        }
        TCSETS | TCSETSW | TCSETSF => {
            // A background process changing the settings gets SIGTTOU.
            tty_job::check_access(owner(), SIGTTOU)?;
            let mut t = Termios::new_zeroed();
            caller.read_bytes(arg, t.as_bytes_mut())?;
            with_state(|st| {
                if cmd == TCSETSF {
                    st.ld.flush_input();
                }
                st.ld.set_termios(t);
            });
            notify_input();
        }
        TIOCGWINSZ => {
            let w = with_state(|st| st.winsize);
            caller.write_bytes(arg, w.as_bytes())?;
        }
        TIOCSWINSZ => {
            let mut w = WinSize::new_zeroed();
            caller.read_bytes(arg, w.as_bytes_mut())?;
            let (changed, fg) = with_state(|st| {
                let changed = st.winsize != w;
                st.winsize = w;
                (changed, st.owner.fg_pgrp)
            });
            if changed {
                tty_job::signal_group(fg, SIGWINCH);
            }
        }
        TIOCGPGRP => write_i32(caller, arg, controlling_owner()?.fg_pgrp as i32)?,
        TIOCSPGRP => set_foreground(caller, arg)?,
        TIOCGSID => write_i32(caller, arg, controlling_owner()?.session as i32)?,
        TIOCSCTTY => make_controlling(arg)?,
        TIOCNOTTY => {
            let o = controlling_owner()?;
            // Only a session leader gives the terminal up for its session.
            if tty_job::caller_ids().is_some_and(|(pid, _, sid)| pid == sid) {
                with_state(|st| st.owner = Owner::default());
                tty_job::signal_group(o.fg_pgrp, SIGHUP);
                tty_job::signal_group(o.fg_pgrp, SIGCONT);
            }
        }
        FIONREAD => {
            let n = with_state(|st| st.ld.available());
            write_i32(caller, arg, n as i32)?;
        }
        TIOCOUTQ => write_i32(caller, arg, 0)?,
        TCFLSH => match arg {
            0 | 2 => {
                tty_job::check_access(owner(), SIGTTOU)?;
                with_state(|st| st.ld.flush_input());
            }
            1 => {}
            _ => return Err(Error::new(Errno::EINVAL)),
        },
        TIOCSTI => {
            // Faking input needs the terminal to be the caller's, or root.
            if !owner().controls_caller() && !tty_job::caller_is_privileged() {
                return Err(Error::new(Errno::EPERM));
            }
            let mut b = [0u8; 1];
            caller.read_bytes(arg, &mut b)?;
            deliver(b.into_iter());
        }
        TIOCGETD => write_i32(caller, arg, N_TTY)?,
        TIOCSETD => {
            if read_i32(caller, arg)? != N_TTY {
                return Err(Error::new(Errno::EINVAL));
            }
        }
        TCSBRK | TCSBRKP | TCXONC => {}
        _ => return Err(Error::new(Errno::ENOTTY)),
    }
    Ok(0)
}

/// TIOCSPGRP (tcsetpgrp(3)): the group must exist in the caller's session.
fn set_foreground(caller: &dyn Caller, arg: u64) -> Result<()> {
    let o = owner();
    match tty_job::check_access(o, SIGTTOU) {
        Err(e) if e.errno() == Errno::EIO => return Err(Error::new(Errno::ENOTTY)),
        r => r?,
    }
    if !o.controls_caller() {
        return Err(Error::new(Errno::ENOTTY));
    }
    let pgrp = u32::try_from(read_i32(caller, arg)?).map_err(|_| Error::new(Errno::EINVAL))?;
    match tty_job::session_of(pgrp) {
        None => return Err(Error::new(Errno::ESRCH)),
        Some(s) if s != o.session => return Err(Error::new(Errno::EPERM)),
        Some(_) => {}
    }
    with_state(|st| {
        if st.owner.session == o.session {
            st.owner.fg_pgrp = pgrp;
        }
    });
    Ok(())
}

/// TIOCSCTTY: a session leader without a controlling terminal takes this
/// one; from another session only with `arg` 1 and root's privileges.
fn make_controlling(arg: u64) -> Result<()> {
    let (pid, pgid, sid) = tty_job::caller_ids().ok_or(Error::new(Errno::EPERM))?;
    let o = owner();
    if pid == sid && o.session == sid {
        return Ok(());
    }
    if pid != sid {
        return Err(Error::new(Errno::EPERM));
    }
    if o.session != 0 && !(arg == 1 && tty_job::caller_is_privileged()) {
        return Err(Error::new(Errno::EPERM));
    }
    with_state(|st| {
        st.owner = Owner {
            session: sid,
            fg_pgrp: pgid,
        }
    });
    Ok(())
}
