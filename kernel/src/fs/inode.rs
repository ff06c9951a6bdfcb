//! The inode interface every file system implements, and the metadata it
//! reports.
//!
//! An inode is shared as `Arc<dyn Inode>`: directory entries, open files,
//! working directories and file mappings each hold a reference, and the
//! storage is freed when the last one goes. Every method takes `&self`; an
//! implementation protects its own state (see `ramfs` for the locking rules).

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;

use crate::error::{Errno, Error, Result};

/// File types, as encoded in the `S_IFMT` bits of `st_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    Regular,
    Directory,
    Symlink,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
}

pub const S_IFMT: u32 = 0o170_000;

impl FileType {
    /// The type encoded in `mode`'s `S_IFMT` bits, if valid.
    pub fn from_mode(mode: u32) -> Option<FileType> {
        Some(match mode & S_IFMT {
            0o100_000 => FileType::Regular,
            0o040_000 => FileType::Directory,
            0o120_000 => FileType::Symlink,
            0o020_000 => FileType::CharDevice,
            0o060_000 => FileType::BlockDevice,
            0o010_000 => FileType::Fifo,
            0o140_000 => FileType::Socket,
            _ => return None,
        })
    }

    /// The `S_IFMT` bits of this type.
    pub const fn mode_bits(self) -> u32 {
        match self {
            FileType::Regular => 0o100_000,
            FileType::Directory => 0o040_000,
            FileType::Symlink => 0o120_000,
            FileType::CharDevice => 0o020_000,
            FileType::BlockDevice => 0o060_000,
            FileType::Fifo => 0o010_000,
            FileType::Socket => 0o140_000,
        }
    }

    /// The `d_type` of a `linux_dirent64` (`DT_*`).
    pub const fn dirent_type(self) -> u8 {
        match self {
            FileType::Fifo => 1,
            FileType::CharDevice => 2,
            FileType::Directory => 4,
            FileType::BlockDevice => 6,
            FileType::Regular => 8,
            FileType::Symlink => 10,
            FileType::Socket => 12,
        }
    }
}

/// A point in time, in seconds and nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timespec {
    pub sec: i64,
    pub nsec: u32,
}

impl Timespec {
    /// The current wall-clock time.
    pub fn now() -> Timespec {
        let ns = crate::time::realtime_at_boot_ns().saturating_add(frame::timer::monotonic_ns());
        Timespec {
            sec: (ns / 1_000_000_000) as i64,
            nsec: (ns % 1_000_000_000) as u32,
        }
    }
}

/// Encodes a device number the way glibc and musl's `makedev` do, which is
/// also what `stat` reports in `st_dev`/`st_rdev`.
pub const fn makedev(major: u32, minor: u32) -> u64 {
    let (major, minor) = (major as u64, minor as u64);
    ((major & 0xffff_f000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffff_ff00) << 12)
        | (minor & 0xff)
}

pub const fn dev_major(dev: u64) -> u32 {
    (((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)) as u32
}

pub const fn dev_minor(dev: u64) -> u32 {
    (((dev >> 12) & 0xffff_ff00) | (dev & 0xff)) as u32
}

/// What `stat` reports about an inode.
#[derive(Clone, Copy, Debug)]
pub struct Metadata {
    pub dev: u64,
    pub ino: u64,
    pub file_type: FileType,
    /// Permission bits, including setuid, setgid and sticky (`0o7777`).
    pub perm: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    /// Device number of a device node.
    pub rdev: u64,
    pub size: u64,
    pub blksize: u32,
    /// Storage used, in 512-byte units.
    pub blocks: u64,
    pub atime: Timespec,
    pub mtime: Timespec,
    pub ctime: Timespec,
}

impl Metadata {
    /// `st_mode`: type and permission bits.
    pub fn mode(&self) -> u32 {
        self.file_type.mode_bits() | self.perm
    }
}

/// What to create in a directory.
#[derive(Clone, Debug)]
pub enum NodeKind {
    Regular,
    Directory,
    Symlink(String),
    /// A character or block device, FIFO or socket node, with its `rdev`.
    Special(FileType, u64),
}

/// A new node's kind, permissions and owner.
#[derive(Clone, Debug)]
pub struct NewNode {
    pub kind: NodeKind,
    pub perm: u32,
    pub uid: u32,
    pub gid: u32,
}

/// One directory entry as `Inode::read_dir` reports it.
pub struct DirEntry<'a> {
    pub ino: u64,
    pub name: &'a str,
    pub file_type: FileType,
    /// The cookie that continues the listing after this entry (`d_off`).
    pub next_cookie: u64,
}

/// rename(2) flags.
#[derive(Clone, Copy, Debug, Default)]
pub struct RenameFlags {
    /// Fail with EEXIST instead of replacing the target.
    pub noreplace: bool,
    /// Swap the two names (RENAME_EXCHANGE); both must exist.
    pub exchange: bool,
}

/// fallocate(2) modes a file system may support.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocate {
    /// Mode 0: allocate, growing the file if the range ends past it.
    Extend,
    /// FALLOC_FL_KEEP_SIZE: allocate without changing the size.
    KeepSize,
    /// FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: free the range, which
    /// then reads as zeros.
    PunchHole,
}

/// Where a "magic" symlink of procfs (/proc/pid/fd/N, cwd, root, exe)
/// leads: straight to an inode, without resolving its text, and for a
/// descriptor's link also to the open file, whose stream a new open
/// shares (a pipe reached through /dev/stdin is the same pipe).
pub struct MagicLink {
    pub node: Arc<dyn Inode>,
    pub file: Option<Arc<super::File>>,
}

/// A file, directory, symlink or device node of some file system.
///
/// Operations that do not apply to the inode's type return the errno Linux
/// returns for them (ENOTDIR for directory operations on a non-directory,
/// EINVAL for `read_link` on a non-symlink ...).
pub trait Inode: Any + Send + Sync {
    /// Reads at `offset`; returns bytes read (0 at end of file).
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize>;
    /// Size in bytes.
    fn size(&self) -> usize;
    fn metadata(&self) -> Metadata;

    fn file_type(&self) -> FileType {
        self.metadata().file_type
    }

    /// A check of its own that open(2) makes after the permission bits
    /// (procfs: the ptrace access check of /proc/<pid>/maps and others).
    fn check_open(&self) -> Result<()> {
        Ok(())
    }

    /// (device, inode number): what identifies the inode. Path resolution
    /// asks for it at every step (to find mounts), so file systems whose
    /// `metadata` takes a lock answer it without one.
    fn id(&self) -> (u64, u64) {
        let m = self.metadata();
        (m.dev, m.ino)
    }

    /// Writes at `offset`, growing the file as needed; returns bytes written.
    fn write_at(&self, _offset: usize, _buf: &[u8]) -> Result<usize> {
        Err(self.not_regular())
    }

    /// `read_at` straight from the file's cached pages: `sink` gets each
    /// page's part in turn (as [`PageCache::read_pages`] hands it out), and
    /// moves it where it goes without a kernel buffer between. `None`: the
    /// file has no page cache (the caller uses `read_at`).
    ///
    /// [`PageCache::read_pages`]: crate::mm::page_cache::PageCache::read_pages
    fn read_pages(
        &self,
        _offset: usize,
        _len: usize,
        _sink: &mut crate::mm::page_cache::PageRunSink<'_>,
    ) -> Option<Result<usize>> {
        None
    }

    /// `write_at` (at `Some(offset)`) or `append` (`None`) with `source`
    /// filling the file's cached pages directly
    /// ([`PageCache::write_pages_nofault`]:
    /// crate::mm::page_cache::PageCache::write_pages_nofault); returns bytes written and
    /// the end offset of the write. `None`: no page cache (the caller uses
    /// `write_at` or `append`).
    fn write_pages(
        &self,
        _offset: Option<usize>,
        _len: usize,
        _source: &mut crate::mm::page_cache::PageSource<'_, '_>,
    ) -> Option<Result<(usize, usize)>> {
        None
    }

    /// Writes at the end of the file, atomically with respect to other
    /// writers; returns bytes written and the new end offset.
    fn append(&self, _buf: &[u8]) -> Result<(usize, usize)> {
        Err(self.not_regular())
    }

    /// Sets the size, discarding or zero-filling data (truncate(2)).
    fn resize(&self, _size: usize) -> Result<()> {
        Err(self.not_regular())
    }

    /// fallocate(2) on `[offset, offset + len)`: EOPNOTSUPP if the file
    /// system cannot.
    fn allocate(&self, _mode: Allocate, _offset: usize, _len: usize) -> Result<()> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    /// lseek(2) SEEK_DATA (`data`) or SEEK_HOLE: the first offset at or
    /// after `offset` in data or in a hole; ENXIO at or past the end. By
    /// default a file has no holes but the one at its end.
    fn seek_data(&self, offset: usize, data: bool) -> Result<usize> {
        let size = self.size();
        if offset >= size {
            return Err(Error::new(Errno::ENXIO));
        }
        Ok(if data { offset } else { size })
    }

    /// Whether the file's pages may be mapped with mmap(2) (generated files
    /// cannot: ENODEV, as on Linux).
    fn can_mmap(&self) -> bool {
        self.file_type() == FileType::Regular
    }

    /// The file's own page at page index `index`, allocated (and charged to
    /// the file system) if it is a hole: what a MAP_SHARED mapping maps, so
    /// that stores through it and write(2) see each other. ENODEV where
    /// the file system keeps no pages in memory.
    fn shared_page(&self, _index: usize) -> Result<frame::mm::UFrame> {
        Err(Error::new(Errno::ENODEV))
    }

    /// The file's page cache, for a file whose data lives on a device:
    /// MAP_PRIVATE maps its pages until the first store copies them, and
    /// mincore reports what it holds.
    fn page_cache(&self) -> Option<Arc<crate::mm::page_cache::PageCache>> {
        None
    }

    /// The pages `first..first + out.len()` that the file keeps in memory
    /// itself (ramfs: its data pages), into `out`; holes and pages it does
    /// not have stay `None`. Never allocates or reads a device: MAP_PRIVATE
    /// read faults and fault-around map these pages read-only instead of
    /// copying them (a store copies), as they map a page cache's.
    fn resident_pages(&self, _first: usize, _out: &mut [Option<frame::mm::UFrame>]) {}

    /// Whether [`Inode::shared_page`] works for this file.
    fn has_shared_pages(&self) -> bool {
        false
    }

    /// A token every shared mapping through a writable descriptor holds
    /// for its lifetime, so that the file can tell whether such mappings
    /// exist (F_SEAL_WRITE: EBUSY).
    fn shared_write_token(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }

    /// fsync(2) (`data_only`: fdatasync): writes the file's dirty pages
    /// and metadata and waits until the device has them. Nothing to do
    /// for a file kept only in memory.
    fn sync(&self, _data_only: bool) -> Result<()> {
        Ok(())
    }

    /// syncfs(2) on the file system this inode belongs to: every dirty
    /// page and metadata block of it reaches the device.
    fn sync_fs(&self) -> Result<()> {
        Ok(())
    }

    /// ioctl(2) on a file without a stream (a block device's BLK*
    /// requests): ENOTTY by default.
    fn ioctl(&self, _cmd: u32, _arg: u64, _caller: &dyn super::stream::Caller) -> Result<isize> {
        Err(Error::new(Errno::ENOTTY))
    }

    /// Sets the permission bits (`0o7777`).
    fn set_perm(&self, _perm: u32) -> Result<()> {
        Err(Error::new(Errno::EPERM))
    }

    /// Changes the owner and/or group.
    fn set_owner(&self, _uid: Option<u32>, _gid: Option<u32>) -> Result<()> {
        Err(Error::new(Errno::EPERM))
    }

    /// The file's data was read: the access time becomes now, always if
    /// `strict`, otherwise by relatime's rule (mount(8)). The VFS decides
    /// whether to call it (O_NOATIME, the mount's atime flags).
    fn touch_atime(&self, _strict: bool) {}

    /// Sets the access and/or modification time (ctime becomes now).
    fn set_times(&self, _atime: Option<Timespec>, _mtime: Option<Timespec>) -> Result<()> {
        Err(Error::new(Errno::EPERM))
    }

    /// The value of the extended attribute `name` (xattr(7)); the VFS has
    /// checked the name's length and the caller's access. ENODATA if it is
    /// not set; EOPNOTSUPP where the file system keeps no attributes.
    fn get_xattr(&self, _name: &[u8]) -> Result<Vec<u8>> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    /// Sets the extended attribute `name` (setxattr(2)'s XATTR_CREATE:
    /// EEXIST, XATTR_REPLACE: ENODATA); ctime becomes now.
    fn set_xattr(&self, _name: &[u8], _value: &[u8], _flags: super::xattr::SetFlags) -> Result<()> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    /// Removes the extended attribute `name` (ENODATA if it is not set);
    /// ctime becomes now.
    fn remove_xattr(&self, _name: &[u8]) -> Result<()> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    /// The names of the extended attributes, in a stable order (the VFS
    /// hides those the caller may not see). A file system without them has
    /// none: listxattr(2) returns an empty list, as on Linux.
    fn list_xattr(&self) -> Result<Vec<Vec<u8>>> {
        Ok(Vec::new())
    }

    /// Finds `name` (which may be "." or "..") in this directory.
    fn lookup(&self, _name: &str) -> Result<Arc<dyn Inode>> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// Creates `name` in this directory: EEXIST if it exists, ENOENT if this
    /// directory was removed.
    fn create(&self, _name: &str, _node: NewNode) -> Result<Arc<dyn Inode>> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// A memfd's seals (fcntl F_GET_SEALS): EINVAL for a file that cannot
    /// be sealed.
    fn seals(&self) -> Result<u32> {
        Err(Error::new(Errno::EINVAL))
    }

    /// Adds seals (F_ADD_SEALS): EPERM once F_SEAL_SEAL is set, EINVAL for
    /// a file that cannot be sealed.
    fn add_seals(&self, _seals: u32) -> Result<()> {
        Err(Error::new(Errno::EINVAL))
    }

    /// An unnamed regular file in this directory (open(2) O_TMPFILE);
    /// `linkable`: link(2) may give it a name later.
    fn create_tmpfile(&self, _node: NewNode, _linkable: bool) -> Result<Arc<dyn Inode>> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    /// Adds `name` as a hard link to `target`.
    fn link(&self, _name: &str, _target: &Arc<dyn Inode>) -> Result<()> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// Removes the non-directory `name` (EISDIR for a directory).
    fn unlink(&self, _name: &str) -> Result<()> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// unlink(2)'s lookup, checks and removal: finds `name`, lets `check`
    /// refuse its inode (that error is returned and nothing changes), then
    /// removes it as [`Inode::unlink`]. A file system that can keep the
    /// entry it found overrides this to look the name up once; `check`
    /// may take inode locks, so it runs with none of them held.
    fn unlink_checked(&self, name: &str, check: &dyn Fn(&dyn Inode) -> Result<()>) -> Result<()> {
        let node = self.lookup(name)?;
        check(&*node)?;
        self.unlink(name)
    }

    /// Removes the empty directory `name`.
    fn rmdir(&self, _name: &str) -> Result<()> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// Moves `old_name` in this directory to `new_name` in `new_dir`, with
    /// rename(2)'s rules for replacing the target. Both names are plain names.
    fn rename(
        &self,
        _old_name: &str,
        _new_dir: &Arc<dyn Inode>,
        _new_name: &str,
        _flags: RenameFlags,
    ) -> Result<()> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// Lists entries, "." and ".." first, starting at `cookie` (0 = the
    /// start); `sink` returns false to stop before consuming an entry.
    fn read_dir(&self, _cookie: u64, _sink: &mut dyn FnMut(DirEntry<'_>) -> bool) -> Result<()> {
        Err(Error::new(Errno::ENOTDIR))
    }

    /// The target of a symbolic link.
    fn read_link(&self) -> Result<String> {
        Err(Error::new(Errno::EINVAL))
    }

    /// For a magic link, what following it leads to (path resolution then
    /// ignores `read_link`'s text); None for an ordinary link.
    fn follow_magic(&self) -> Option<Result<MagicLink>> {
        None
    }

    /// The errno for a data operation on something that is not a regular file.
    #[doc(hidden)]
    fn not_regular(&self) -> Error {
        if self.file_type() == FileType::Directory {
            Error::new(Errno::EISDIR)
        } else {
            Error::new(Errno::EINVAL)
        }
    }
}

impl dyn Inode {
    pub fn is_dir(&self) -> bool {
        self.file_type() == FileType::Directory
    }

    pub fn is_symlink(&self) -> bool {
        self.file_type() == FileType::Symlink
    }
}

/// Whether two references name the same inode: the same object, or the
/// same (device, inode number), since a file system may hand out a fresh
/// object per lookup.
pub fn same_inode(a: &Arc<dyn Inode>, b: &Arc<dyn Inode>) -> bool {
    if core::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)) {
        return true;
    }
    a.id() == b.id()
}
