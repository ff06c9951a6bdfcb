//! Permission checks: the owner/group/other bits of an inode against the
//! caller's file-system ids (path_resolution(7), "Permission checking").
//! Root (uid 0) has CAP_DAC_OVERRIDE, CAP_FOWNER and CAP_CHOWN: it may read
//! and write anything, search any directory, and execute a file only if
//! some execute bit is set.

use alloc::vec::Vec;

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
}

impl Cred {
    pub fn root() -> Cred {
        Cred::default()
    }

    pub fn is_root(&self) -> bool {
        self.uid == 0
    }

    pub fn in_group(&self, gid: u32) -> bool {
        self.gid == gid || self.groups.contains(&gid)
    }

    /// Whether this caller may access an inode with `meta` as `want`
    /// (`MAY_*` bits).
    pub fn may(&self, meta: &Metadata, want: u32) -> bool {
        if self.is_root() {
            let executable = meta.file_type == FileType::Directory || meta.perm & 0o111 != 0;
            return want & MAY_EXEC == 0 || executable;
        }
        let bits = if meta.uid == self.uid {
            meta.perm >> 6
        } else if self.in_group(meta.gid) {
            meta.perm >> 3
        } else {
            meta.perm
        };
        bits & 7 & want == want
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
        self.is_root() || meta.uid == self.uid
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
