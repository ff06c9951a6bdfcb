//! Linux's ptrace access mode check (ptrace(2), "Ptrace access mode
//! checking"), which also guards /proc/<pid> files that reveal another
//! process's memory or open files, pidfd_getfd and get_robust_list.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::Process;

/// Which of the caller's ids are compared with the target's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AccessCreds {
    /// PTRACE_MODE_FSCREDS: the file-system ids (/proc files).
    Fs,
    /// PTRACE_MODE_REALCREDS: the real ids (system calls).
    Real,
}

/// Whether `me` may inspect `target`: always its own thread group;
/// otherwise the caller's uid (fs or real) must be each of the target's
/// real, effective and saved uids and likewise for the gids, or the
/// caller holds CAP_SYS_PTRACE; the target must be dumpable, and its
/// permitted capabilities a subset of the caller's (Linux's
/// cap_ptrace_access_check), unless the caller holds CAP_SYS_PTRACE.
pub fn ptrace_may_access(me: &Arc<Process>, target: &Arc<Process>, creds: AccessCreds) -> bool {
    if Arc::ptr_eq(me, target) {
        return true;
    }
    let (c, t) = (me.creds(), target.creds());
    if c.capable(crate::caps::CAP_SYS_PTRACE) {
        return true;
    }
    let (uid, gid) = match creds {
        AccessCreds::Fs => (c.fsuid, c.fsgid),
        AccessCreds::Real => (c.ruid, c.rgid),
    };
    let ids = [t.ruid, t.euid, t.suid].iter().all(|u| *u == uid) && [t.rgid, t.egid, t.sgid].iter().all(|g| *g == gid);
    ids && target.dumpable.load(Ordering::Relaxed) == 1 && t.cap_permitted & !c.cap_permitted == 0
}
