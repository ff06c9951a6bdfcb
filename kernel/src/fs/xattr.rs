//! Extended attributes (xattr(7)): the rules the VFS applies before a file
//! system sees a request (namespaces, privileges, permissions), and the
//! per-inode store of the file systems that keep them (ramfs, tmpfs,
//! devtmpfs).
//!
//! Names are byte strings `namespace.rest`. The syscall layer checks the
//! sizes (names of 1..=255 bytes, values of at most 64 KiB) and calls
//! [`check_access`]; the inode then answers through `Inode::get_xattr` and
//! friends, whose defaults are those of a file system without xattr
//! support (EOPNOTSUPP, and an empty list).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::inode::{FileType, Inode};
use super::perm::{Cred, MAY_READ, MAY_WRITE};
use crate::error::{Errno, Error, Result};

/// Longest attribute name (XATTR_NAME_MAX).
pub const NAME_MAX: usize = 255;
/// Largest attribute value (XATTR_SIZE_MAX).
pub const SIZE_MAX: usize = 65536;
/// Largest buffer listxattr(2) fills (XATTR_LIST_MAX).
pub const LIST_MAX: usize = 65536;
/// Most bytes the attributes of one inode may take, names and values plus
/// [`ENTRY_OVERHEAD`] each: past it setxattr fails with ENOSPC. (Linux's
/// tmpfs charges nothing; this keeps one inode from eating the heap.)
pub const INODE_BYTES: usize = 1 << 20;
/// What one attribute costs besides its name and value.
const ENTRY_OVERHEAD: usize = 32;

pub const USER: &[u8] = b"user.";
pub const TRUSTED: &[u8] = b"trusted.";
pub const SECURITY: &[u8] = b"security.";
pub const SYSTEM: &[u8] = b"system.";

/// setxattr(2)'s flags.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetFlags {
    /// XATTR_CREATE: EEXIST if the attribute exists.
    pub create: bool,
    /// XATTR_REPLACE: ENODATA if it does not.
    pub replace: bool,
}

/// Who asks, for [`check_access`]: the file-system ids for permission
/// bits, and whether the caller holds CAP_SYS_ADMIN.
pub struct Asker<'a> {
    pub cred: &'a Cred,
    pub privileged: bool,
}

/// Linux's `xattr_permission` plus the capability rule for security.*:
/// security.* and system.* are left to the file system, except that
/// changing security.* needs privilege (EPERM); trusted.* needs privilege
/// (else EPERM to change, ENODATA to read); user.* exists only on regular
/// files and directories (else EPERM / ENODATA), and a sticky directory's
/// only for its owner to change (EPERM); user.* and names outside the
/// known namespaces then need read or write permission on the inode
/// (EACCES).
pub fn check_access(node: &dyn Inode, name: &[u8], write: bool, who: &Asker) -> Result<()> {
    let refuse = || Error::new(if write { Errno::EPERM } else { Errno::ENODATA });
    if name.starts_with(SECURITY) {
        return if write && !who.privileged { Err(refuse()) } else { Ok(()) };
    }
    if name.starts_with(SYSTEM) {
        return Ok(());
    }
    if name.starts_with(TRUSTED) {
        return if who.privileged { Ok(()) } else { Err(refuse()) };
    }
    let meta = node.metadata();
    if name.starts_with(USER) {
        match meta.file_type {
            FileType::Regular => {}
            FileType::Directory => {
                if write && meta.perm & 0o1000 != 0 && !who.cred.owns(&meta) {
                    return Err(Error::new(Errno::EPERM));
                }
            }
            _ => return Err(refuse()),
        }
    }
    if !who.cred.may(&meta, if write { MAY_WRITE } else { MAY_READ }) {
        return Err(Error::new(Errno::EACCES));
    }
    Ok(())
}

/// Whether a listing shows `name` to a caller (trusted.* only to the
/// privileged).
pub fn visible(name: &[u8], privileged: bool) -> bool {
    privileged || !name.starts_with(TRUSTED)
}

/// A copy of `bytes`, or ENOMEM (never an allocation panic).
pub fn copy(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes.len())
        .map_err(|_| Error::new(Errno::ENOMEM))?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// The check of a file system that stores user.*, trusted.* and
/// security.* attributes: EOPNOTSUPP for other namespaces (system.* holds
/// POSIX ACLs, which Trellis does not support), EINVAL for a name that is
/// only a namespace prefix.
pub fn check_name(name: &[u8]) -> Result<()> {
    for prefix in [USER, TRUSTED, SECURITY] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if rest.is_empty() {
                return Err(Error::new(Errno::EINVAL));
            }
            return Ok(());
        }
    }
    Err(Error::new(Errno::EOPNOTSUPP))
}

/// The attributes of one inode. Listings come in descending byte order of
/// the names, the order Linux's tmpfs lists them in (stable, whatever the
/// order they were set in).
#[derive(Default)]
pub struct Store {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    /// What the attributes cost against [`INODE_BYTES`].
    bytes: usize,
}

fn cost(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + ENTRY_OVERHEAD
}

impl Store {
    pub const fn new() -> Store {
        Store {
            map: BTreeMap::new(),
            bytes: 0,
        }
    }

    /// The value of `name` (ENODATA if absent).
    pub fn get(&self, name: &[u8]) -> Result<Vec<u8>> {
        copy(self.map.get(name).ok_or(Error::new(Errno::ENODATA))?)
    }

    /// Sets `name` to `value` with setxattr(2)'s flags; ENOSPC past
    /// [`INODE_BYTES`].
    pub fn set(&mut self, name: &[u8], value: Vec<u8>, flags: SetFlags) -> Result<()> {
        let old = self.map.get(name).map(|v| cost(name, v));
        match old {
            Some(_) if flags.create => return Err(Error::new(Errno::EEXIST)),
            None if flags.replace => return Err(Error::new(Errno::ENODATA)),
            _ => {}
        }
        let bytes = self.bytes - old.unwrap_or(0) + cost(name, &value);
        if bytes > INODE_BYTES {
            return Err(Error::with_message(Errno::ENOSPC, "xattr space of the inode"));
        }
        self.map.insert(name.to_vec(), value);
        self.bytes = bytes;
        Ok(())
    }

    /// Removes `name` (ENODATA if absent).
    pub fn remove(&mut self, name: &[u8]) -> Result<()> {
        let v = self.map.remove(name).ok_or(Error::new(Errno::ENODATA))?;
        self.bytes -= cost(name, &v);
        Ok(())
    }

    /// The names, in listing order.
    pub fn names(&self) -> Vec<Vec<u8>> {
        self.map.keys().rev().cloned().collect()
    }
}
