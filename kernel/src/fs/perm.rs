//! Permission checks: the owner/group/other bits of an inode against the
//! caller's file-system ids (path_resolution(7), "Permission checking"),
//! then the capabilities that override them: CAP_DAC_OVERRIDE reads and
//! writes anything, searches any directory, and executes a file only if
//! some execute bit is set; CAP_DAC_READ_SEARCH reads any file and reads
//! and searches any directory; CAP_FOWNER acts as any file's owner.

use alloc::vec::Vec;

use crate::caps::{self, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER};

use super::inode::{FileType, Inode, Metadata};
use crate::error::{Errno, Error, Result};

pub const MAY_EXEC: u32 = 1;
pub const MAY_WRITE: u32 = 2;
pub const MAY_READ: u32 = 4;

/// Who is asking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cred {
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// The effective capability set (the file-system ones follow fsuid).
    pub caps: u64,
}

impl Cred {
    /// Root with every capability (the kernel's own lookups).
    pub fn root() -> Cred {
        Cred { caps: caps::CAP_FULL, ..Cred::default() }
    }

    /// Whether the effective set holds `cap`.
    pub fn capable(&self, cap: u32) -> bool {
        caps::has(self.caps, cap)
    }

    pub fn in_group(&self, gid: u32) -> bool {
        self.gid == gid || self.groups.contains(&gid)
    }

    /// Whether this caller may access an inode with `meta` as `want`
    /// (`MAY_*` bits).
    pub fn may(&self, meta: &Metadata, want: u32) -> bool {
        let bits = if meta.uid == self.uid {
            meta.perm >> 6
        } else if self.in_group(meta.gid) {
            meta.perm >> 3
        } else {
            meta.perm
        };
        if bits & 7 & want == want {
            return true;
        }
        // Linux's generic_permission after the mode bits.
        if meta.file_type == FileType::Directory {
            return self.capable(CAP_DAC_OVERRIDE) || (want & MAY_WRITE == 0 && self.capable(CAP_DAC_READ_SEARCH));
        }
        if (want & MAY_EXEC == 0 || meta.perm & 0o111 != 0) && self.capable(CAP_DAC_OVERRIDE) {
            return true;
        }
        want == MAY_READ && self.capable(CAP_DAC_READ_SEARCH)
    }

    /// EACCES unless [`Cred::may`].
    pub fn check(&self, node: &dyn Inode, want: u32) -> Result<()> {
        if self.may(&node.metadata(), want) {
            Ok(())
        } else {
            Err(Error::new(Errno::EACCES))
        }
    }

    /// Whether this caller owns `meta` or may act as its owner (CAP_FOWNER).
    pub fn owns(&self, meta: &Metadata) -> bool {
        meta.uid == self.uid || self.capable(CAP_FOWNER)
    }

    /// fs.protected_symlinks (Linux's may_follow_link): a symlink in a
    /// sticky world-writable directory is followed only if the caller or
    /// the directory's owner owns it; EACCES otherwise, for root too.
    pub fn may_follow_link(&self, dir: &dyn Inode, link: &dyn Inode) -> Result<()> {
        if crate::sysctl::PROTECTED_SYMLINKS.get() == 0 {
            return Ok(());
        }
        let owner = link.metadata().uid;
        if owner == self.uid {
            return Ok(());
        }
        let dmeta = dir.metadata();
        if dmeta.perm & 0o1002 != 0o1002 || dmeta.uid == owner {
            return Ok(());
        }
        Err(Error::with_message(Errno::EACCES, "fs.protected_symlinks"))
    }

    /// fs.protected_hardlinks (Linux's may_linkat): only the owner (or
    /// CAP_FOWNER) may hard-link a file, or anyone who could read and
    /// write it if it is a plain regular file (not set-user-ID, not
    /// set-group-ID with group execute); EPERM otherwise.
    pub fn may_link(&self, node: &dyn Inode) -> Result<()> {
        if crate::sysctl::PROTECTED_HARDLINKS.get() == 0 {
            return Ok(());
        }
        let meta = node.metadata();
        if self.owns(&meta) {
            return Ok(());
        }
        let safe = meta.file_type == FileType::Regular
            && meta.perm & 0o4000 == 0
            && meta.perm & 0o2010 != 0o2010
            && self.may(&meta, MAY_READ | MAY_WRITE);
        if safe { Ok(()) } else { Err(Error::with_message(Errno::EPERM, "fs.protected_hardlinks")) }
    }

    /// Removing or renaming `child` out of `dir`: write and search
    /// permission on `dir`, and with the sticky bit on `dir` only the owner
    /// of `child` or of `dir` may do it (EPERM).
    pub fn check_delete(&self, dir: &dyn Inode, child: &dyn Inode) -> Result<()> {
        let dmeta = dir.metadata();
        if !self.may(&dmeta, MAY_WRITE | MAY_EXEC) {
            return Err(Error::new(Errno::EACCES));
        }
        if dmeta.perm & 0o1000 != 0 && !self.owns(&dmeta) && !self.owns(&child.metadata()) {
            return Err(Error::new(Errno::EPERM));
        }
        Ok(())
    }
}
