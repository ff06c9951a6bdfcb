//! Job control for terminals (credentials(7), "Controlling terminal";
//! termios(3), "Job control"): which session a terminal controls, its
//! foreground process group, and what happens when a background process
//! touches it (SIGTTIN, SIGTTOU, EIO). The terminal's own state stays in
//! the device; this module asks the process layer about the caller and
//! process groups.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use crate::error::{Errno, Error, Result};
use crate::process::signal::{self, SI_KERNEL, SigInfo};
use crate::process::{Process, Thread};

pub const SIGHUP: u32 = 1;
pub const SIGCONT: u32 = 18;
pub const SIGTTIN: u32 = 21;
pub const SIGTTOU: u32 = 22;
pub const SIGWINCH: u32 = 28;

/// A terminal's owner: the session it controls (0: none) and the
/// foreground process group (0: none).
#[derive(Clone, Copy, Default)]
pub struct Owner {
    pub session: u32,
    pub fg_pgrp: u32,
}

/// The calling process and thread (None in kernel tasks).
fn current() -> Option<(Arc<Process>, Arc<Thread>)> {
    let thread = crate::process::current_thread()?;
    Some((thread.process()?, thread))
}

/// The caller's (pid, pgid, sid).
pub fn caller_ids() -> Option<(u32, u32, u32)> {
    let (p, _) = current()?;
    Some((p.pid(), p.pgid(), p.sid()))
}

/// Whether the caller holds CAP_SYS_ADMIN (stealing a terminal, faking
/// input on another's).
pub fn caller_is_privileged() -> bool {
    current().is_some_and(|(p, _)| p.creds().capable(crate::caps::CAP_SYS_ADMIN))
}

impl Owner {
    /// Whether the terminal is the caller's controlling terminal.
    pub fn controls_caller(&self) -> bool {
        self.session != 0 && caller_ids().is_some_and(|(_, _, sid)| sid == self.session)
    }
}

/// Whether the caller blocks or ignores `sig`.
fn blocked_or_ignored(p: &Process, t: &Thread, sig: u32) -> bool {
    let sig = sig as usize;
    t.sigmask.load(Ordering::Relaxed) & signal::bit(sig) != 0
        || p.signals.action(sig).handler == signal::SIG_IGN
}

/// The session of process group `pgrp`, if the group exists.
pub fn session_of(pgrp: u32) -> Option<u32> {
    let mut sid = None;
    crate::process::for_each_process(|p| {
        if p.pgid() == pgrp && p.exit_status().is_none() {
            sid = Some(p.sid());
        }
        sid.is_none()
    });
    sid
}

/// Sends `sig` to every process of group `pgrp`.
pub fn signal_group(pgrp: u32, sig: u32) {
    if pgrp == 0 {
        return;
    }
    // A walk, not a list: a session leader's exit hangs up its terminal
    // through here, and exit must not need memory.
    crate::process::for_each_process(|p| {
        if p.pgid() == pgrp && p.exit_status().is_none() {
            signal::send_to_process(p, SigInfo::new(sig as usize, SI_KERNEL));
        }
        true
    });
}

/// Sends `sig` to process `pid`, if it is alive.
pub fn signal_process(pid: u32, sig: u32) {
    if let Some(p) = crate::process::find_process(pid)
        && p.exit_status().is_none()
    {
        signal::send_to_process(&p, SigInfo::new(sig as usize, SI_KERNEL));
    }
}

/// The caller's file-system uid and gid (who owns a new pty's node).
pub fn caller_fs_ids() -> (u32, u32) {
    current().map_or((0, 0), |(p, _)| {
        let c = p.creds();
        (c.fsuid, c.fsgid)
    })
}

/// Whether the caller may read (`sig` SIGTTIN) or change or, with TOSTOP,
/// write to (`sig` SIGTTOU) a terminal owned by `owner` (Linux's
/// __tty_check_change). A background caller's group gets `sig` and the
/// call is restarted once it is resumed (ERESTARTSYS); EIO if the group
/// is orphaned, or for SIGTTIN if the caller blocks or ignores it (a
/// blocked or ignored SIGTTOU lets the caller go on).
pub fn check_access(owner: Owner, sig: u32) -> Result<()> {
    let Some((p, t)) = current() else {
        return Ok(());
    };
    if owner.session == 0 || p.sid() != owner.session {
        return Ok(());
    }
    let pgrp = p.pgid();
    if owner.fg_pgrp == 0 || pgrp == owner.fg_pgrp {
        return Ok(());
    }
    if blocked_or_ignored(&p, &t, sig) {
        return if sig == SIGTTIN {
            Err(Error::new(Errno::EIO))
        } else {
            Ok(())
        };
    }
    if signal::is_orphaned_pgrp(pgrp) {
        return Err(Error::new(Errno::EIO));
    }
    signal_group(pgrp, sig);
    Err(Error::new(Errno::ERESTARTSYS))
}
