//! ramfs: a file system that lives entirely in memory (the root file system,
//! unpacked from the initramfs).
//!
//! Locking: each inode's state (metadata and contents) sits behind one
//! `INODE`-level spin lock, held only for short, non-sleeping work and never
//! two at a time. Changes to the directory tree (create, link, unlink,
//! rmdir, rename) also hold the file system's `VFS`-level tree mutex, taken
//! first, so that what such an operation checked under one inode lock (the
//! target is absent, a directory is empty, the destination is not inside
//! the source) still holds when it updates the next inode. Lookups and
//! listings take only the directory's inode lock.

mod dir;
mod pages;
mod rename;

use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use frame::sync::{Mutex, SpinLock, level};

use self::dir::DirData;
use self::pages::{Budget, FileData};
pub use self::pages::{page_usage, set_page_limit};
use super::xattr::{self, SetFlags};
use super::inode::{
    Allocate, DirEntry, FileType, Inode, Metadata, NewNode, NodeKind, RenameFlags, Timespec,
};
use crate::error::{Errno, Error, Result};

/// Longest file name (NAME_MAX).
pub const NAME_MAX: usize = 255;

pub struct RamFs {
    dev: u64,
    next_ino: AtomicU64,
    /// Serialises changes to the directory tree (see the module doc).
    tree: Mutex<(), { level::VFS }>,
    /// Pages this instance may hold (tmpfs `size=`).
    budget: Arc<Budget>,
    /// Live inodes, and the most there may be (tmpfs `nr_inodes=`).
    inodes: AtomicUsize,
    max_inodes: AtomicUsize,
}

/// Limits of one instance (tmpfs(5) `size=` and `nr_inodes=`);
/// `usize::MAX` for none.
#[derive(Clone, Copy)]
pub struct Limits {
    pub pages: usize,
    pub inodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { pages: usize::MAX, inodes: usize::MAX }
    }
}

/// What statfs(2) reports of an instance with limits.
pub struct Usage {
    pub pages: usize,
    pub max_pages: usize,
    pub inodes: usize,
    pub max_inodes: usize,
}

/// Seal bits (fcntl(2) F_ADD_SEALS).
pub mod seal {
    pub const SEAL: u32 = 0x01;
    pub const SHRINK: u32 = 0x02;
    pub const GROW: u32 = 0x04;
    pub const WRITE: u32 = 0x08;
    pub const FUTURE_WRITE: u32 = 0x10;
    pub const EXEC: u32 = 0x20;
}

impl RamFs {
    /// A new file system with an empty root directory (mode 0755, owned by
    /// root); returns the root.
    pub fn new_root(dev: u64) -> Arc<RamInode> {
        Self::new_root_with(dev, Limits::default())
    }

    /// Like [`Self::new_root`], within `limits`.
    pub fn new_root_with(dev: u64, limits: Limits) -> Arc<RamInode> {
        let fs = Arc::new(RamFs {
            dev,
            next_ino: AtomicU64::new(1),
            tree: Mutex::new(()),
            budget: Budget::new(limits.pages),
            inodes: AtomicUsize::new(0),
            max_inodes: AtomicUsize::new(limits.inodes),
        });
        fs.inodes.fetch_add(1, Ordering::Relaxed);
        let node = NewNode {
            kind: NodeKind::Directory,
            perm: 0o755,
            uid: 0,
            gid: 0,
        };
        RamInode::new(&fs, node, None)
    }

    /// A memfd's file (memfd_create(2)): a regular file with no name in
    /// this file system, sealable, starting with `seals`.
    pub fn new_memfd(root: &Arc<RamInode>, node: NewNode, seals: u32) -> Arc<RamInode> {
        let child = RamInode::new(&root.fs, node, Some(Arc::downgrade(root)));
        {
            let mut st = child.state.lock();
            st.nlink = 0;
            st.seals = Some(seals);
        }
        child
    }

    fn alloc_ino(&self) -> u64 {
        self.next_ino.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts a new inode; ENOSPC past `nr_inodes`.
    fn reserve_inode(&self) -> Result<()> {
        if self.inodes.fetch_add(1, Ordering::Relaxed) >= self.max_inodes.load(Ordering::Relaxed) {
            self.inodes.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::with_message(Errno::ENOSPC, "tmpfs nr_inodes reached"));
        }
        Ok(())
    }

    /// A remount of the instance whose root is `root` with new limits
    /// (`None`: unchanged; `usize::MAX`: none). EINVAL if `root` is not the
    /// root of a ramfs instance, or a limit is below what is in use or
    /// would limit an unlimited instance (Linux's shmem_reconfigure).
    pub fn reconfigure(root: &Arc<dyn Inode>, pages: Option<usize>, inodes: Option<usize>) -> Result<()> {
        let inode = RamInode::downcast(root).ok_or(Error::new(Errno::EINVAL))?;
        if inode.metadata().ino != 1 {
            return Err(Error::with_message(Errno::EINVAL, "not the root of a tmpfs"));
        }
        let fs = &inode.fs;
        if let Some(n) = inodes {
            let old = fs.max_inodes.load(Ordering::Relaxed);
            if n != usize::MAX && old == usize::MAX {
                return Err(Error::with_message(Errno::EINVAL, "cannot retroactively limit inodes"));
            }
            if fs.inodes.load(Ordering::Relaxed) > n {
                return Err(Error::with_message(Errno::EINVAL, "too few inodes for current use"));
            }
        }
        if let Some(p) = pages {
            fs.budget.set_limit(p)?;
        }
        if let Some(n) = inodes {
            fs.max_inodes.store(n, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Usage of the instance holding `node`, if it is a ramfs inode.
    pub fn usage(node: &Arc<dyn Inode>) -> Option<Usage> {
        let fs = &RamInode::downcast(node)?.fs;
        let (pages, max_pages) = fs.budget.usage();
        Some(Usage {
            pages,
            max_pages,
            inodes: fs.inodes.load(Ordering::Relaxed),
            max_inodes: fs.max_inodes.load(Ordering::Relaxed),
        })
    }
}

pub struct RamInode {
    ino: u64,
    file_type: FileType,
    fs: Arc<RamFs>,
    this: Weak<RamInode>,
    /// Held by every shared mapping made through a descriptor open for
    /// writing (Linux's i_mmap_writable): F_SEAL_WRITE is EBUSY while
    /// there are any.
    writable_maps: Arc<()>,
    state: SpinLock<State, { level::INODE }>,
}

struct State {
    perm: u32,
    uid: u32,
    gid: u32,
    nlink: u32,
    /// An O_TMPFILE file that linkat(2) may still give a name.
    linkable: bool,
    /// A memfd's seals (fcntl F_ADD_SEALS); None for other files, which
    /// cannot be sealed.
    seals: Option<u32>,
    atime: Timespec,
    mtime: Timespec,
    ctime: Timespec,
    /// Extended attributes (user.*, trusted.*, security.*).
    xattrs: xattr::Store,
    body: Body,
}

enum Body {
    File(FileData),
    Dir(DirData),
    Symlink(String),
    /// Device node, FIFO or socket, with its `rdev`.
    Special(u64),
}

impl State {
    fn dir(&self) -> Result<&DirData> {
        match &self.body {
            Body::Dir(d) if self.nlink > 0 => Ok(d),
            Body::Dir(_) => Err(Error::with_message(Errno::ENOENT, "directory was removed")),
            _ => Err(Error::new(Errno::ENOTDIR)),
        }
    }

    fn dir_mut(&mut self) -> Result<&mut DirData> {
        match &mut self.body {
            Body::Dir(d) if self.nlink > 0 => Ok(d),
            Body::Dir(_) => Err(Error::with_message(Errno::ENOENT, "directory was removed")),
            _ => Err(Error::new(Errno::ENOTDIR)),
        }
    }

    fn touch(&mut self, now: Timespec) {
        self.mtime = now;
        self.ctime = now;
    }
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') {
        return Err(Error::new(Errno::EINVAL));
    }
    if name == "." || name == ".." {
        return Err(Error::new(Errno::EEXIST));
    }
    if super::name::user_len(name) > NAME_MAX {
        return Err(Error::new(Errno::ENAMETOOLONG));
    }
    Ok(())
}

impl RamInode {
    /// A new inode; `parent` is None only for the root, which is its own parent.
    fn new(fs: &Arc<RamFs>, node: NewNode, parent: Option<Weak<RamInode>>) -> Arc<RamInode> {
        let now = Timespec::now();
        Arc::new_cyclic(|this| {
            let (file_type, body, nlink) = match node.kind {
                NodeKind::Regular => (FileType::Regular, Body::File(FileData::new(fs.budget.clone())), 1),
                NodeKind::Directory => {
                    let parent = parent.unwrap_or_else(|| this.clone());
                    (FileType::Directory, Body::Dir(DirData::new(parent)), 2)
                }
                NodeKind::Symlink(target) => (FileType::Symlink, Body::Symlink(target), 1),
                NodeKind::Special(t, rdev) => (t, Body::Special(rdev), 1),
            };
            let state = State {
                perm: node.perm & 0o7777,
                uid: node.uid,
                gid: node.gid,
                nlink,
                linkable: false,
                seals: None,
                atime: now,
                mtime: now,
                ctime: now,
                xattrs: xattr::Store::new(),
                body,
            };
            RamInode {
                ino: fs.alloc_ino(),
                file_type,
                fs: fs.clone(),
                this: this.clone(),
                writable_maps: Arc::new(()),
                state: SpinLock::new(state),
            }
        })
    }

    /// The ramfs inode behind `inode`, if it is one.
    fn downcast(inode: &Arc<dyn Inode>) -> Option<Arc<RamInode>> {
        let any: Arc<dyn Any + Send + Sync> = inode.clone();
        any.downcast::<RamInode>().ok()
    }

    fn child(&self, name: &str) -> Result<Arc<RamInode>> {
        self.state
            .lock()
            .dir()?
            .get(name)
            .cloned()
            .ok_or(Error::new(Errno::ENOENT))
    }

    fn parent(&self) -> Option<Arc<RamInode>> {
        match &self.state.lock().body {
            Body::Dir(d) => d.parent.upgrade(),
            _ => None,
        }
    }

    /// True if `other` is this directory or lies below it. Callers hold the
    /// tree lock, so parent links do not change during the walk.
    fn is_ancestor_of(&self, other: &Arc<RamInode>) -> bool {
        let mut cur = other.clone();
        loop {
            if core::ptr::eq(self, Arc::as_ptr(&cur)) {
                return true;
            }
            match cur.parent() {
                Some(p) if !Arc::ptr_eq(&p, &cur) => cur = p,
                _ => return false,
            }
        }
    }

    fn is_empty_dir(&self) -> bool {
        matches!(&self.state.lock().body, Body::Dir(d) if d.is_empty())
    }

    /// The seals that forbid a change: EPERM if `write` (data changes) and
    /// F_SEAL_WRITE or F_SEAL_FUTURE_WRITE is set, or if the size would go
    /// from `size` to `new_size` against F_SEAL_SHRINK / F_SEAL_GROW.
    fn check_seals(&self, write: bool, new_size: impl FnOnce(usize) -> usize) -> Result<()> {
        let (seals, size) = {
            let st = self.state.lock();
            let size = match &st.body {
                Body::File(data) => data.size(),
                _ => 0,
            };
            (st.seals.unwrap_or(0), size)
        };
        if seals == 0 {
            return Ok(());
        }
        let new = new_size(size);
        let denied = (write && seals & (seal::WRITE | seal::FUTURE_WRITE) != 0)
            || (new < size && seals & seal::SHRINK != 0)
            || (new > size && seals & seal::GROW != 0);
        if denied {
            return Err(Error::new(Errno::EPERM));
        }
        Ok(())
    }

    /// Runs `f` on a regular file's contents; `modify` updates mtime and ctime.
    fn with_file<R>(&self, modify: bool, f: impl FnOnce(&mut FileData) -> Result<R>) -> Result<R> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let r = match &mut st.body {
            Body::File(data) => f(data)?,
            Body::Dir(_) => return Err(Error::new(Errno::EISDIR)),
            _ => return Err(Error::new(Errno::EINVAL)),
        };
        if modify {
            st.touch(Timespec::now());
        }
        Ok(r)
    }
}

impl Drop for RamInode {
    fn drop(&mut self) {
        self.fs.inodes.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Inode for RamInode {
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let n = match &st.body {
            Body::File(data) => data.read(offset, buf)?,
            Body::Dir(_) => return Err(Error::new(Errno::EISDIR)),
            _ => return Err(Error::new(Errno::EINVAL)),
        };
        Ok(n)
    }

    fn touch_atime(&self, strict: bool) {
        let mut st = self.state.lock();
        // relatime (mount(8)): the access time moves on a read only if it
        // is not newer than the last change, or is a day old.
        let now = Timespec::now();
        let stale = (st.atime.sec, st.atime.nsec) <= (st.mtime.sec, st.mtime.nsec)
            || (st.atime.sec, st.atime.nsec) <= (st.ctime.sec, st.ctime.nsec)
            || now.sec.saturating_sub(st.atime.sec) >= 24 * 60 * 60;
        if strict || stale {
            st.atime = now;
        }
    }

    fn shared_page(&self, index: usize) -> Result<frame::mm::UFrame> {
        self.with_file(false, |data| data.page_for_mapping(index))
    }

    fn resident_pages(&self, first: usize, out: &mut [Option<frame::mm::UFrame>]) {
        let _ = self.with_file(false, |data| {
            data.resident_pages(first, out);
            Ok(())
        });
    }

    fn has_shared_pages(&self) -> bool {
        self.file_type == FileType::Regular
    }

    fn shared_write_token(&self) -> Option<Arc<dyn core::any::Any + Send + Sync>> {
        Some(self.writable_maps.clone())
    }

    fn size(&self) -> usize {
        match &self.state.lock().body {
            Body::File(data) => data.size(),
            Body::Symlink(target) => super::name::user_len(target),
            // Like tmpfs: a nominal 20 bytes per entry, "." and ".." included.
            Body::Dir(d) => (d.len() + 2) * 20,
            Body::Special(_) => 0,
        }
    }

    fn metadata(&self) -> Metadata {
        let st = self.state.lock();
        let (rdev, blocks) = match &st.body {
            Body::Special(rdev) => (*rdev, 0),
            Body::File(data) => (0, data.blocks()),
            _ => (0, 0),
        };
        let size = match &st.body {
            Body::File(data) => data.size(),
            Body::Symlink(target) => super::name::user_len(target),
            Body::Dir(d) => (d.len() + 2) * 20,
            Body::Special(_) => 0,
        };
        Metadata {
            dev: self.fs.dev,
            ino: self.ino,
            file_type: self.file_type,
            perm: st.perm,
            nlink: st.nlink,
            uid: st.uid,
            gid: st.gid,
            rdev,
            size: size as u64,
            blksize: 4096,
            blocks,
            atime: st.atime,
            mtime: st.mtime,
            ctime: st.ctime,
        }
    }

    fn file_type(&self) -> FileType {
        self.file_type
    }

    fn id(&self) -> (u64, u64) {
        (self.fs.dev, self.ino)
    }

    fn write_at(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        self.check_seals(true, |size| size.max(offset.saturating_add(buf.len())))?;
        self.with_file(true, |data| data.write(offset, buf))
    }

    fn append(&self, buf: &[u8]) -> Result<(usize, usize)> {
        self.check_seals(true, |size| size.saturating_add(buf.len()))?;
        self.with_file(true, |data| {
            let offset = data.size();
            let n = data.write(offset, buf)?;
            Ok((n, offset + n))
        })
    }

    fn resize(&self, size: usize) -> Result<()> {
        self.check_seals(false, |_| size)?;
        self.with_file(true, |data| data.resize(size))
    }

    fn allocate(&self, mode: Allocate, offset: usize, len: usize) -> Result<()> {
        let end = offset
            .checked_add(len)
            .filter(|e| *e <= pages::MAX_FILE_SIZE)
            .ok_or(Error::new(Errno::EFBIG))?;
        // Like tmpfs, punching a hole changes the times; allocating only
        // does when the size grows.
        match mode {
            Allocate::PunchHole => self.check_seals(true, |size| size)?,
            Allocate::Extend => self.check_seals(false, |size| size.max(end))?,
            Allocate::KeepSize => {}
        }
        let grows = mode == Allocate::Extend && end > self.size();
        self.with_file(mode == Allocate::PunchHole || grows, |data| match mode {
            Allocate::Extend => data.allocate(offset, end, false),
            Allocate::KeepSize => data.allocate(offset, end, true),
            Allocate::PunchHole => data.punch_hole(offset, end),
        })
    }

    fn seek_data(&self, offset: usize, data: bool) -> Result<usize> {
        self.with_file(false, |file| {
            file.seek_data(offset, data).ok_or(Error::new(Errno::ENXIO))
        })
    }

    fn set_perm(&self, perm: u32) -> Result<()> {
        let mut st = self.state.lock();
        st.perm = perm & 0o7777;
        st.ctime = Timespec::now();
        Ok(())
    }

    fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> Result<()> {
        let mut st = self.state.lock();
        if let Some(uid) = uid {
            st.uid = uid;
        }
        if let Some(gid) = gid {
            st.gid = gid;
        }
        st.ctime = Timespec::now();
        Ok(())
    }

    fn set_times(&self, atime: Option<Timespec>, mtime: Option<Timespec>) -> Result<()> {
        let mut st = self.state.lock();
        if let Some(t) = atime {
            st.atime = t;
        }
        if let Some(t) = mtime {
            st.mtime = t;
        }
        st.ctime = Timespec::now();
        Ok(())
    }

    fn get_xattr(&self, name: &[u8]) -> Result<Vec<u8>> {
        xattr::check_name(name)?;
        self.state.lock().xattrs.get(name)
    }

    fn set_xattr(&self, name: &[u8], value: &[u8], flags: SetFlags) -> Result<()> {
        xattr::check_name(name)?;
        let value = xattr::copy(value)?;
        let mut st = self.state.lock();
        st.xattrs.set(name, value, flags)?;
        st.ctime = Timespec::now();
        Ok(())
    }

    fn remove_xattr(&self, name: &[u8]) -> Result<()> {
        xattr::check_name(name)?;
        let mut st = self.state.lock();
        st.xattrs.remove(name)?;
        st.ctime = Timespec::now();
        Ok(())
    }

    fn list_xattr(&self) -> Result<Vec<Vec<u8>>> {
        Ok(self.state.lock().xattrs.names())
    }

    fn lookup(&self, name: &str) -> Result<Arc<dyn Inode>> {
        let st = self.state.lock();
        let dir = st.dir()?;
        let found = match name {
            "." => self.this.upgrade(),
            ".." => dir.parent.upgrade(),
            _ => dir.get(name).cloned(),
        };
        found
            .map(|i| i as Arc<dyn Inode>)
            .ok_or(Error::new(Errno::ENOENT))
    }

    fn create(&self, name: &str, mut node: NewNode) -> Result<Arc<dyn Inode>> {
        check_name(name)?;
        let _tree = self.fs.tree.lock();
        let mut guard = self.state.lock();
        let st = &mut *guard;
        // A set-group-ID directory passes its group on, and the bit to
        // subdirectories (mkdir(2), "NOTES" of chmod(2)).
        if st.perm & 0o2000 != 0 {
            node.gid = st.gid;
            if matches!(node.kind, NodeKind::Directory) {
                node.perm |= 0o2000;
            }
        }
        let is_dir = matches!(node.kind, NodeKind::Directory);
        let this = self.this.clone();
        let dir = st.dir_mut()?;
        if dir.get(name).is_some() {
            return Err(Error::new(Errno::EEXIST));
        }
        self.fs.reserve_inode()?;
        let child = RamInode::new(&self.fs, node, Some(this));
        dir.insert(name, child.clone());
        if is_dir {
            st.nlink += 1;
        }
        st.touch(Timespec::now());
        Ok(child)
    }

    fn link(&self, name: &str, target: &Arc<dyn Inode>) -> Result<()> {
        check_name(name)?;
        let target = RamInode::downcast(target).ok_or(Error::new(Errno::EXDEV))?;
        if !Arc::ptr_eq(&self.fs, &target.fs) {
            return Err(Error::new(Errno::EXDEV));
        }
        if target.file_type == FileType::Directory {
            return Err(Error::new(Errno::EPERM));
        }
        let _tree = self.fs.tree.lock();
        {
            let st = target.state.lock();
            if st.nlink == 0 && !st.linkable {
                return Err(Error::with_message(Errno::ENOENT, "linking a removed file"));
            }
        }
        let now = Timespec::now();
        {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            let dir = st.dir_mut()?;
            if dir.get(name).is_some() {
                return Err(Error::new(Errno::EEXIST));
            }
            dir.insert(name, target.clone());
            st.touch(now);
        }
        let mut st = target.state.lock();
        st.nlink = st.nlink.saturating_add(1);
        st.linkable = false;
        st.ctime = now;
        Ok(())
    }

    fn seals(&self) -> Result<u32> {
        self.state.lock().seals.ok_or(Error::new(Errno::EINVAL))
    }

    fn add_seals(&self, add: u32) -> Result<()> {
        let mut st = self.state.lock();
        let seals = st.seals.ok_or(Error::new(Errno::EINVAL))?;
        if seals & seal::SEAL != 0 {
            return Err(Error::new(Errno::EPERM));
        }
        if add & seal::WRITE != 0 && Arc::strong_count(&self.writable_maps) > 1 {
            return Err(Error::new(Errno::EBUSY));
        }
        st.seals = Some(seals | add);
        Ok(())
    }

    fn create_tmpfile(&self, node: NewNode, linkable: bool) -> Result<Arc<dyn Inode>> {
        self.state.lock().dir()?;
        self.fs.reserve_inode()?;
        let child = RamInode::new(
            &self.fs,
            node,
            self.this.upgrade().map(|d| Arc::downgrade(&d)),
        );
        {
            let mut st = child.state.lock();
            st.nlink = 0;
            st.linkable = linkable;
        }
        Ok(child)
    }

    fn unlink_checked(&self, name: &str, check: &dyn Fn(&dyn Inode) -> Result<()>) -> Result<()> {
        // The tree mutex keeps the entry found here in place until it is
        // removed, so the name is hashed and compared once, and `check`
        // runs with no inode lock held (it reads this directory's and the
        // child's attributes).
        let _tree = self.fs.tree.lock();
        let (key, child) = {
            let st = self.state.lock();
            let (key, child) = st.dir()?.find(name).ok_or(Error::new(Errno::ENOENT))?;
            (key, child.clone())
        };
        check(&*child)?;
        if child.file_type == FileType::Directory {
            return Err(Error::new(Errno::EISDIR));
        }
        let now = Timespec::now();
        {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            if !st.dir_mut()?.remove_found(key, name, &child) {
                // Only a change of the tree without the tree mutex could
                // get here.
                return Err(Error::new(Errno::ENOENT));
            }
            st.touch(now);
        }
        let mut st = child.state.lock();
        st.nlink = st.nlink.saturating_sub(1);
        st.ctime = now;
        Ok(())
    }

    fn unlink(&self, name: &str) -> Result<()> {
        let _tree = self.fs.tree.lock();
        let now = Timespec::now();
        let child = {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            let child = st.dir_mut()?.remove_checked(name, |c| {
                if c.file_type == FileType::Directory {
                    Err(Error::new(Errno::EISDIR))
                } else {
                    Ok(())
                }
            })?;
            st.touch(now);
            child
        };
        let mut st = child.state.lock();
        st.nlink = st.nlink.saturating_sub(1);
        st.ctime = now;
        Ok(())
    }

    fn rmdir(&self, name: &str) -> Result<()> {
        let _tree = self.fs.tree.lock();
        let child = self.child(name)?;
        if child.file_type != FileType::Directory {
            return Err(Error::new(Errno::ENOTDIR));
        }
        if !child.is_empty_dir() {
            return Err(Error::new(Errno::ENOTEMPTY));
        }
        let now = Timespec::now();
        {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            st.dir_mut()?.remove(name);
            st.nlink = st.nlink.saturating_sub(1);
            st.touch(now);
        }
        let mut st = child.state.lock();
        st.nlink = 0;
        st.ctime = now;
        Ok(())
    }

    fn rename(
        &self,
        old_name: &str,
        new_dir: &Arc<dyn Inode>,
        new_name: &str,
        flags: RenameFlags,
    ) -> Result<()> {
        rename::rename(self, old_name, new_dir, new_name, flags)
    }

    fn read_dir(&self, cookie: u64, sink: &mut dyn FnMut(DirEntry<'_>) -> bool) -> Result<()> {
        let st = self.state.lock();
        let dir = st.dir()?;
        if cookie == 0 {
            let e = DirEntry {
                ino: self.ino,
                name: ".",
                file_type: FileType::Directory,
                next_cookie: 1,
            };
            if !sink(e) {
                return Ok(());
            }
        }
        if cookie <= 1 {
            let ino = dir.parent.upgrade().map_or(self.ino, |p| p.ino);
            let e = DirEntry {
                ino,
                name: "..",
                file_type: FileType::Directory,
                next_cookie: dir::FIRST_COOKIE,
            };
            if !sink(e) {
                return Ok(());
            }
        }
        for (c, name, inode) in dir.entries_from(cookie) {
            let e = DirEntry {
                ino: inode.ino,
                name,
                file_type: inode.file_type,
                next_cookie: c + 1,
            };
            if !sink(e) {
                break;
            }
        }
        Ok(())
    }

    fn read_link(&self) -> Result<String> {
        match &self.state.lock().body {
            Body::Symlink(target) => Ok(target.clone()),
            _ => Err(Error::new(Errno::EINVAL)),
        }
    }
}
