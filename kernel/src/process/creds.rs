//! Credentials (credentials(7)): real, effective, saved and file-system
//! user and group ids, and supplementary groups.

use alloc::vec::Vec;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    pub ruid: u32,
    pub euid: u32,
    pub suid: u32,
    pub fsuid: u32,
    pub rgid: u32,
    pub egid: u32,
    pub sgid: u32,
    pub fsgid: u32,
    pub groups: Vec<u32>,
}

/// "Unchanged" in setreuid/setresuid arguments.
pub const KEEP: u32 = u32::MAX;

impl Credentials {
    /// CAP_SETUID/CAP_SETGID and friends: only euid 0 holds capabilities.
    pub fn is_privileged(&self) -> bool {
        self.euid == 0
    }

    pub fn in_group(&self, gid: u32) -> bool {
        self.fsgid == gid || self.groups.contains(&gid)
    }

    /// setuid(2).
    pub fn setuid(&mut self, uid: u32) -> bool {
        if self.is_privileged() {
            (self.ruid, self.euid, self.suid, self.fsuid) = (uid, uid, uid, uid);
            true
        } else if uid == self.ruid || uid == self.suid {
            self.euid = uid;
            self.fsuid = uid;
            true
        } else {
            false
        }
    }

    pub fn setgid(&mut self, gid: u32) -> bool {
        if self.is_privileged() {
            (self.rgid, self.egid, self.sgid, self.fsgid) = (gid, gid, gid, gid);
            true
        } else if gid == self.rgid || gid == self.sgid {
            self.egid = gid;
            self.fsgid = gid;
            true
        } else {
            false
        }
    }

    /// setresuid(2): an unprivileged caller may set each id to one of its
    /// current real, effective or saved ids.
    pub fn setresuid(&mut self, r: u32, e: u32, s: u32) -> bool {
        let allowed = |v: u32| v == KEEP || v == self.ruid || v == self.euid || v == self.suid;
        if !self.is_privileged() && !(allowed(r) && allowed(e) && allowed(s)) {
            return false;
        }
        if r != KEEP {
            self.ruid = r;
        }
        if e != KEEP {
            self.euid = e;
        }
        if s != KEEP {
            self.suid = s;
        }
        self.fsuid = self.euid;
        true
    }

    pub fn setresgid(&mut self, r: u32, e: u32, s: u32) -> bool {
        let allowed = |v: u32| v == KEEP || v == self.rgid || v == self.egid || v == self.sgid;
        if !self.is_privileged() && !(allowed(r) && allowed(e) && allowed(s)) {
            return false;
        }
        if r != KEEP {
            self.rgid = r;
        }
        if e != KEEP {
            self.egid = e;
        }
        if s != KEEP {
            self.sgid = s;
        }
        self.fsgid = self.egid;
        true
    }

    /// setreuid(2): like setresuid, and the saved id follows the new
    /// effective id when the real id is set or the effective id changes to
    /// something other than the old real id.
    pub fn setreuid(&mut self, r: u32, e: u32) -> bool {
        let old_ruid = self.ruid;
        let ok_r = r == KEEP || self.is_privileged() || r == self.ruid || r == self.euid;
        let ok_e = e == KEEP || self.is_privileged() || e == self.ruid || e == self.euid || e == self.suid;
        if !(ok_r && ok_e) {
            return false;
        }
        if r != KEEP {
            self.ruid = r;
        }
        if e != KEEP {
            self.euid = e;
        }
        if r != KEEP || (e != KEEP && e != old_ruid) {
            self.suid = self.euid;
        }
        self.fsuid = self.euid;
        true
    }

    pub fn setregid(&mut self, r: u32, e: u32) -> bool {
        let old_rgid = self.rgid;
        let ok_r = r == KEEP || self.is_privileged() || r == self.rgid || r == self.egid;
        let ok_e = e == KEEP || self.is_privileged() || e == self.rgid || e == self.egid || e == self.sgid;
        if !(ok_r && ok_e) {
            return false;
        }
        if r != KEEP {
            self.rgid = r;
        }
        if e != KEEP {
            self.egid = e;
        }
        if r != KEEP || (e != KEEP && e != old_rgid) {
            self.sgid = self.egid;
        }
        self.fsgid = self.egid;
        true
    }
}
