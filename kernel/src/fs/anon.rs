//! Inodes that belong to no directory: what fstat reports for files that
//! are not reached by a path (the console descriptors `init` starts with,
//! and later pipes and sockets).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::xattr;
use super::inode::{FileType, Inode, Metadata, Timespec, makedev};
use crate::error::{Errno, Error, Result};

/// Device of anonymous inodes (Linux shows pipes on "pipefs", an
/// anonymous device like this one).
pub(super) const ANON_DEV: u64 = makedev(0, 13);
static NEXT_INO: AtomicU64 = AtomicU64::new(1);

struct AnonInode {
    ino: u64,
    file_type: FileType,
    perm: u32,
    rdev: u64,
    created: Timespec,
}

/// A new inode of `file_type` with permissions `perm`, owned by root, in no
/// file system; `rdev` for a device.
pub fn anon_inode(file_type: FileType, perm: u32, rdev: u64) -> Arc<dyn Inode> {
    Arc::new(AnonInode {
        ino: NEXT_INO.fetch_add(1, Ordering::Relaxed),
        file_type,
        perm: perm & 0o7777,
        rdev,
        created: Timespec::now(),
    })
}

impl Inode for AnonInode {
    fn read_at(&self, _offset: usize, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn size(&self) -> usize {
        0
    }

    fn metadata(&self) -> Metadata {
        Metadata {
            dev: ANON_DEV,
            ino: self.ino,
            file_type: self.file_type,
            perm: self.perm,
            nlink: 1,
            uid: 0,
            gid: 0,
            rdev: self.rdev,
            size: 0,
            blksize: 4096,
            blocks: 0,
            atime: self.created,
            mtime: self.created,
            ctime: self.created,
        }
    }

    fn file_type(&self) -> FileType {
        self.file_type
    }

    // Linux's anonymous inodes (eventfd, epoll, signalfd, timerfd) have no
    // file type bits, so user.* attributes are refused as for any file
    // that is neither regular nor a directory; there is no other storage.
    fn get_xattr(&self, name: &[u8]) -> Result<Vec<u8>> {
        Err(Error::new(if name.starts_with(xattr::USER) {
            Errno::ENODATA
        } else {
            Errno::EOPNOTSUPP
        }))
    }

    fn set_xattr(&self, name: &[u8], _value: &[u8], _flags: xattr::SetFlags) -> Result<()> {
        self.remove_xattr(name)
    }

    fn remove_xattr(&self, name: &[u8]) -> Result<()> {
        Err(Error::new(if name.starts_with(xattr::USER) {
            Errno::EPERM
        } else {
            Errno::EOPNOTSUPP
        }))
    }
}
