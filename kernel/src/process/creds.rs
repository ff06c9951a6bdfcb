//! Credentials (credentials(7)): real, effective, saved and file-system
//! user and group ids, and supplementary groups.

use alloc::vec::Vec;

use crate::caps::{self, CAP_SETGID, CAP_SETUID};
pub use crate::caps::{CAP_FULL, CAP_LAST_CAP, CAP_SETPCAP};

#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Capability sets (capabilities(7)), one bit per capability, as
    /// Linux computes them for uid changes and execve; the bounding set
    /// is always full and the ambient set empty. Privilege checks ask for
    /// one capability in the effective set ([`Credentials::capable`]).
    pub cap_effective: u64,
    pub cap_permitted: u64,
    pub cap_inheritable: u64,
}

/// "Unchanged" in setreuid/setresuid arguments.
pub const KEEP: u32 = u32::MAX;

/// The capabilities that follow the file-system uid (Linux's CAP_FS_MASK:
/// CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER, FSETID, LINUX_IMMUTABLE,
/// MKNOD, MAC_OVERRIDE).
const CAP_FS_MASK: u64 = 0x1f | 1 << 9 | 1 << 27 | 1 << 32;

impl Default for Credentials {
    /// Root with every capability (the first process).
    fn default() -> Self {
        Credentials {
            ruid: 0,
            euid: 0,
            suid: 0,
            fsuid: 0,
            rgid: 0,
            egid: 0,
            sgid: 0,
            fsgid: 0,
            groups: Vec::new(),
            cap_effective: CAP_FULL,
            cap_permitted: CAP_FULL,
            cap_inheritable: 0,
        }
    }
}

impl Credentials {
    /// The capability changes that follow a change of the real,
    /// effective or saved uid from `old` (capabilities(7), "Effect of
    /// user ID changes on capabilities"; Linux's cap_emulate_setxuid):
    /// leaving uid 0 everywhere drops the permitted and effective sets,
    /// leaving euid 0 the effective set, and regaining euid 0 makes the
    /// permitted set effective.
    fn fix_caps_for_uids(&mut self, old: &Credentials) {
        let had_root = old.ruid == 0 || old.euid == 0 || old.suid == 0;
        let has_root = self.ruid == 0 || self.euid == 0 || self.suid == 0;
        if had_root && !has_root {
            self.cap_permitted = 0;
            self.cap_effective = 0;
        }
        if old.euid == 0 && self.euid != 0 {
            self.cap_effective = 0;
        }
        if old.euid != 0 && self.euid == 0 {
            self.cap_effective = self.cap_permitted;
        }
    }

    /// setfsuid(2)'s capability change: leaving fsuid 0 drops the
    /// file-system capabilities from the effective set, regaining it
    /// restores those that are permitted.
    pub fn fix_caps_for_fsuid(&mut self, old_fsuid: u32) {
        if old_fsuid == 0 && self.fsuid != 0 {
            self.cap_effective &= !CAP_FS_MASK;
        }
        if old_fsuid != 0 && self.fsuid == 0 {
            self.cap_effective |= self.cap_permitted & CAP_FS_MASK;
        }
    }

    /// The capability sets after an execve that leaves these ids
    /// (Linux's cap_bprm_creds_from_file for a file without file
    /// capabilities): a root real or effective uid permits the
    /// inheritable and bounding sets, effective only with euid 0; anyone
    /// else gets none. The inheritable set stays.
    pub fn caps_for_exec(&mut self) {
        self.cap_permitted = if self.ruid == 0 || self.euid == 0 { CAP_FULL | self.cap_inheritable } else { 0 };
        self.cap_effective = if self.euid == 0 { self.cap_permitted } else { 0 };
    }

    /// capset(2) on these credentials (Linux's cap_capset): EPERM for a
    /// permitted set that is not a subset of the current one, an
    /// effective set outside the new permitted set, or an inheritable
    /// set beyond the current inheritable and permitted ones (without
    /// CAP_SETPCAP) or the bounding set.
    pub fn capset(&mut self, effective: u64, permitted: u64, inheritable: u64) -> bool {
        let setpcap = self.cap_effective & 1 << CAP_SETPCAP != 0;
        let subset = |a: u64, b: u64| a & !b == 0;
        if (!setpcap && !subset(inheritable, self.cap_inheritable | self.cap_permitted))
            || !subset(inheritable, self.cap_inheritable | CAP_FULL)
            || !subset(permitted, self.cap_permitted)
            || !subset(effective, permitted)
        {
            return false;
        }
        (self.cap_effective, self.cap_permitted, self.cap_inheritable) = (effective, permitted, inheritable);
        true
    }

    /// Whether the effective set holds `cap` (Linux's capable()).
    pub fn capable(&self, cap: u32) -> bool {
        caps::has(self.cap_effective, cap)
    }

    /// The file-system view of these credentials, for permission checks.
    pub fn fs_cred(&self) -> crate::fs::Cred {
        crate::fs::Cred {
            uid: self.fsuid,
            gid: self.fsgid,
            groups: self.groups.clone(),
            caps: self.cap_effective,
        }
    }

    pub fn in_group(&self, gid: u32) -> bool {
        self.fsgid == gid || self.groups.contains(&gid)
    }

    /// setuid(2).
    pub fn setuid(&mut self, uid: u32) -> bool {
        let old = self.clone();
        if self.capable(CAP_SETUID) {
            (self.ruid, self.euid, self.suid, self.fsuid) = (uid, uid, uid, uid);
        } else if uid == self.ruid || uid == self.suid {
            self.euid = uid;
            self.fsuid = uid;
        } else {
            return false;
        }
        self.fix_caps_for_uids(&old);
        true
    }

    pub fn setgid(&mut self, gid: u32) -> bool {
        if self.capable(CAP_SETGID) {
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
        if !self.capable(CAP_SETUID) && !(allowed(r) && allowed(e) && allowed(s)) {
            return false;
        }
        let old = self.clone();
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
        self.fix_caps_for_uids(&old);
        true
    }

    pub fn setresgid(&mut self, r: u32, e: u32, s: u32) -> bool {
        let allowed = |v: u32| v == KEEP || v == self.rgid || v == self.egid || v == self.sgid;
        if !self.capable(CAP_SETGID) && !(allowed(r) && allowed(e) && allowed(s)) {
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
        let old = self.clone();
        let old_ruid = self.ruid;
        let ok_r = r == KEEP || self.capable(CAP_SETUID) || r == self.ruid || r == self.euid;
        let ok_e = e == KEEP || self.capable(CAP_SETUID) || e == self.ruid || e == self.euid || e == self.suid;
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
        self.fix_caps_for_uids(&old);
        true
    }

    pub fn setregid(&mut self, r: u32, e: u32) -> bool {
        let old_rgid = self.rgid;
        let ok_r = r == KEEP || self.capable(CAP_SETGID) || r == self.rgid || r == self.egid;
        let ok_e = e == KEEP || self.capable(CAP_SETGID) || e == self.rgid || e == self.egid || e == self.sgid;
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
