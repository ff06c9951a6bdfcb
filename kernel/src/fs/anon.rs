//! Inodes that belong to no directory: what fstat reports for files that
//! are not reached by a path (the console descriptors `init` starts with,
//! and later pipes and sockets).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::xattr;
use frame::sync::{level, SpinLock};

use super::inode::{FileType, Inode, Metadata, Timespec, makedev};
use crate::error::{Errno, Error, Result};

/// Device of anonymous inodes (Linux shows pipes on "pipefs", an
/// anonymous device like this one).
pub(super) const ANON_DEV: u64 = makedev(0, 13);
static NEXT_INO: AtomicU64 = AtomicU64::new(1);

struct AnonInode {
    ino: u64,
    file_type: FileType,
    rdev: u64,
    /// Whether chmod/chown/utimes apply (pipes, as on Linux's pipefs).
    settable: bool,
    attrs: SpinLock<Attrs, { level::INODE }>,
}

#[derive(Clone, Copy)]
struct Attrs {
    perm: u32,
    uid: u32,
    gid: u32,
    atime: Timespec,
    mtime: Timespec,
    ctime: Timespec,
}

/// A new inode of `file_type` with permissions `perm`, owned by root, in no
/// file system; `rdev` for a device.
pub fn anon_inode(file_type: FileType, perm: u32, rdev: u64) -> Arc<dyn Inode> {
    new(file_type, perm, rdev, (0, 0), false)
}

/// A pipe's inode: owned by its creator (`owner`: fs uid and gid), and its
/// owner and mode can be changed like a file's.
pub fn pipe_inode(owner: (u32, u32)) -> Arc<dyn Inode> {
    new(FileType::Fifo, 0o600, 0, owner, true)
}

/// A socket's inode: owned by its creator (`owner`: fs uid and gid), mode
/// 0777 like Linux's sockfs inodes.
pub fn socket_inode(owner: (u32, u32)) -> Arc<dyn Inode> {
    new(FileType::Socket, 0o777, 0, owner, true)
}

fn new(file_type: FileType, perm: u32, rdev: u64, (uid, gid): (u32, u32), settable: bool) -> Arc<dyn Inode> {
    let now = Timespec::now();
    Arc::new(AnonInode {
        ino: NEXT_INO.fetch_add(1, Ordering::Relaxed),
        file_type,
        rdev,
        settable,
        attrs: SpinLock::new(Attrs { perm: perm & 0o7777, uid, gid, atime: now, mtime: now, ctime: now }),
    })
}

impl AnonInode {
    fn change(&self, f: impl FnOnce(&mut Attrs)) -> Result<()> {
        if !self.settable {
            return Err(Error::new(Errno::EPERM));
        }
        let mut a = self.attrs.lock();
        f(&mut a);
        a.ctime = Timespec::now();
        Ok(())
    }
}

impl Inode for AnonInode {
    fn read_at(&self, _offset: usize, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn size(&self) -> usize {
        0
    }

    fn metadata(&self) -> Metadata {
        let a = *self.attrs.lock();
        Metadata {
            dev: ANON_DEV,
            ino: self.ino,
            file_type: self.file_type,
            perm: a.perm,
            nlink: 1,
            uid: a.uid,
            gid: a.gid,
            rdev: self.rdev,
            size: 0,
            blksize: 4096,
            blocks: 0,
            atime: a.atime,
            mtime: a.mtime,
            ctime: a.ctime,
        }
    }

    fn set_perm(&self, perm: u32) -> Result<()> {
        self.change(|a| a.perm = perm & 0o7777)
    }

    fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> Result<()> {
        self.change(|a| {
            a.uid = uid.unwrap_or(a.uid);
            a.gid = gid.unwrap_or(a.gid);
        })
    }

    fn set_times(&self, atime: Option<Timespec>, mtime: Option<Timespec>) -> Result<()> {
        self.change(|a| {
            a.atime = atime.unwrap_or(a.atime);
            a.mtime = mtime.unwrap_or(a.mtime);
        })
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
