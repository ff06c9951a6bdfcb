//! ext2 in the VFS: a mounted volume over a block device, with the on-disk
//! logic in the `ext2` crate (libs/ext2).
//!
//! Where the bytes go: metadata (superblock, descriptors, bitmaps, inode
//! table, indirect and directory blocks, slow symlinks) goes through the
//! block device's page cache, which the crate reaches as its `BlockIo`;
//! regular-file data lives in one [`PageCache`] per file whose backend maps
//! file blocks with the crate's `bmap` and moves them with bios straight
//! between the cache's frames and the disk. No data block is ever copied in
//! the device cache, and a freed block is forgotten there, so a stale copy
//! is never written over a block that changed owner.
//!
//! Ownership: a [`Volume`] (the crate's `Fs` behind a mutex, the device,
//! the per-inode file states) lives as long as anything of the mount does;
//! [`Ext2Mount`] is held by every inode handle, and dropping the last one
//! (umount, or the last close after a lazy umount) writes everything back
//! and marks the file system clean. Locks: the volume mutex (level
//! [`VOLUME_LEVEL`]) is below the page caches' (36) and is never held
//! across a call into a file's page cache (whose backend takes it).

mod inode;

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ::ext2 as disk;
use frame::sync::{Mutex, SpinLock};

use self::inode::{Ext2Inode, FileState};
use super::inode::{FileType, Inode, Timespec};
use super::stat::StatFs;
use crate::block::BlockDevice;
use crate::error::{Errno, Error, Result};

pub use self::inode::downcast;

/// The volume mutex's level: above the VFS, inode and file locks a caller
/// may hold, and the VMAR lock of a page fault; below the page caches.
const VOLUME_LEVEL: u8 = 34;
/// Leaf locks of the volume (inode table, orphan list).
const TABLE_LEVEL: u8 = 35;

/// `EXT2_SUPER_MAGIC`, statfs's `f_type`.
const EXT2_SUPER_MAGIC: i64 = 0xEF53;

/// Devices with a mounted ext2 (a second mount is refused: EBUSY).
static MOUNTED: SpinLock<Vec<u64>, TABLE_LEVEL> = SpinLock::new(Vec::new());
/// Every live volume, for the clean shutdown at power-off.
static VOLUMES: SpinLock<Vec<alloc::sync::Weak<Volume>>, TABLE_LEVEL> = SpinLock::new(Vec::new());

/// The crate's storage: the block device's page cache.
struct DevIo {
    bdev: Arc<BlockDevice>,
}

impl disk::BlockIo for DevIo {
    fn read(&self, offset: u64, buf: &mut [u8]) -> disk::Result<()> {
        let size = self.bdev.size();
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or(disk::Error::Io)?;
        if end > size {
            return Err(disk::Error::Io);
        }
        let cache = self.bdev.page_cache();
        if cache.read_cached(offset as usize, buf) {
            return Ok(());
        }
        match cache.read(offset as usize, buf, size as usize) {
            Ok(n) if n == buf.len() => Ok(()),
            _ => Err(disk::Error::Io),
        }
    }

    fn write(&self, offset: u64, buf: &[u8]) -> disk::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .ok_or(disk::Error::Io)?;
        if end > self.bdev.size() {
            return Err(disk::Error::Io);
        }
        let cache = self.bdev.page_cache();
        if cache.write_cached(offset as usize, buf) {
            return Ok(());
        }
        match cache.write(offset as usize, buf) {
            Ok(n) if n == buf.len() => Ok(()),
            _ => Err(disk::Error::Io),
        }
    }

    fn size(&self) -> u64 {
        self.bdev.size()
    }

    fn forget(&self, offset: u64, len: usize) {
        self.bdev
            .page_cache()
            .invalidate_range(offset as usize, len);
    }
}

/// The errno for an error of the crate after mount (damage: EIO).
fn errno(e: disk::Error) -> Error {
    match e {
        disk::Error::Io => Error::new(Errno::EIO),
        disk::Error::BadSuperblock(m) | disk::Error::Unsupported(m) => {
            Error::with_message(Errno::EINVAL, m)
        }
        disk::Error::Corrupt(m) => Error::with_message(Errno::EIO, m),
        disk::Error::NotFound => Error::new(Errno::ENOENT),
        disk::Error::Exists => Error::new(Errno::EEXIST),
        disk::Error::NotDir => Error::new(Errno::ENOTDIR),
        disk::Error::IsDir => Error::new(Errno::EISDIR),
        disk::Error::NotEmpty => Error::new(Errno::ENOTEMPTY),
        disk::Error::NameTooLong => Error::new(Errno::ENAMETOOLONG),
        disk::Error::NoSpace => Error::new(Errno::ENOSPC),
        disk::Error::ReadOnly => Error::new(Errno::EROFS),
        disk::Error::TooManyLinks => Error::new(Errno::EMLINK),
        disk::Error::FileTooBig => Error::new(Errno::EFBIG),
        disk::Error::Invalid => Error::new(Errno::EINVAL),
    }
}

/// Seconds since the epoch, for the crate's timestamps.
fn now() -> u32 {
    Timespec::now().sec.clamp(0, i64::from(u32::MAX)) as u32
}

/// A mounted ext2 file system.
struct Volume {
    fs: Mutex<disk::Fs<DevIo>, VOLUME_LEVEL>,
    bdev: Arc<BlockDevice>,
    /// `st_dev` of every inode: the block device's number.
    devt: u64,
    block_size: u32,
    /// Per-inode state (the file's page cache), one per inode number so
    /// that every handle shares the same cached pages.
    files: SpinLock<BTreeMap<u32, Arc<FileState>>, TABLE_LEVEL>,
    /// Size of `files` at which the next new state first removes the idle
    /// ones ([`take_idle`]): twice what was left by the last time, so the
    /// sweeps cost O(1) per new state.
    trim_at: AtomicUsize,
    /// Inodes whose last handle went away: evicted if unlinked at the next
    /// reap (a handle may be dropped where sleeping is not allowed).
    orphans: SpinLock<Vec<u32>, TABLE_LEVEL>,
    finished: AtomicBool,
    /// The mount keeps the device busy until the clean unmount ends (not
    /// until the last reference to the volume goes: write-back may hold
    /// one for a moment after umount(2) returned).
    hold: SpinLock<Option<crate::block::Hold>, TABLE_LEVEL>,
}

/// The table of file states is first swept when it holds this many.
const MIN_TRIM: usize = 1024;

/// Takes the states out of `files` that nothing needs: no handle, not
/// unlinked (`Volume::reap` frees those), no cached page (so no dirty
/// data and no mapping). A later handle on the inode makes a new state.
/// Without this the table would keep a state (and an empty page cache)
/// for every inode ever looked up.
fn take_idle(files: &mut BTreeMap<u32, Arc<FileState>>) -> Vec<Arc<FileState>> {
    let mut idle = Vec::new();
    files.retain(|_, s| {
        if s.is_idle() {
            idle.push(s.clone());
            false
        } else {
            true
        }
    });
    idle
}

/// Held by every inode handle; the last drop unmounts cleanly.
struct Ext2Mount {
    vol: Arc<Volume>,
}

impl Drop for Ext2Mount {
    fn drop(&mut self) {
        if let Err(e) = self.vol.finish() {
            frame::println!(
                "ext2: {}: write-back at unmount failed: {e:?}",
                self.vol.bdev.name()
            );
        }
    }
}

impl Volume {
    /// The shared state of inode `ino`, created on first use.
    fn file_state(self: &Arc<Self>, ino: u32, ftype: FileType) -> Result<Arc<FileState>> {
        let (s, idle) = {
            let mut files = self.files.lock();
            if let Some(s) = files.get(&ino) {
                s.add_handle();
                return Ok(s.clone());
            }
            let s = FileState::new(Arc::downgrade(self), ino, ftype);
            s.add_handle();
            files.insert(ino, s.clone());
            let idle = if files.len() >= self.trim_at.load(Ordering::Relaxed) {
                let idle = take_idle(&mut files);
                let next = files.len().saturating_mul(2).max(MIN_TRIM);
                self.trim_at.store(next, Ordering::Relaxed);
                idle
            } else {
                Vec::new()
            };
            (s, idle)
        };
        // The idle states (and their empty caches) go without the lock.
        drop(idle);
        Ok(s)
    }

    /// The state of inode `ino` with one more handle, if it has one.
    fn known_state(&self, ino: u32) -> Option<Arc<FileState>> {
        let files = self.files.lock();
        let s = files.get(&ino)?;
        s.add_handle();
        Some(s.clone())
    }

    /// Notes that inode `ino` lost its last handle after its last link.
    fn note_released(&self, ino: u32) {
        self.orphans.lock().push(ino);
    }

    /// Inode `ino` lost its last link: it is freed at the next reap if no
    /// handle is left, else when the last one goes.
    fn mark_unlinked(&self, ino: u32) {
        if let Some(s) = self.files.lock().get(&ino) {
            s.set_unlinked();
        }
        self.note_released(ino);
    }

    /// Frees the inodes that are unlinked and no longer open. Called where
    /// sleeping is allowed and no volume lock is held.
    fn reap(&self) {
        let mut cand: Vec<u32> = core::mem::take(&mut *self.orphans.lock());
        if cand.is_empty() {
            return;
        }
        // An inode may be queued more than once (by the unlink and by its
        // last handle's drop, or again by `finish`): it is freed once, and
        // the later entries must not read the freed inode as damage.
        cand.sort_unstable();
        cand.dedup();
        let mut fs = self.fs.lock();
        for &ino in &cand {
            let state = {
                let files = self.files.lock();
                match files.get(&ino) {
                    Some(s) if s.handles() == 0 => Some(s.clone()),
                    Some(_) => continue,
                    None => None,
                }
            };
            if !matches!(fs.awaits_eviction(ino), Ok(true)) {
                continue;
            }
            if let Some(s) = &state {
                // The data goes with the file: no write-back.
                s.drop_pages();
                self.files.lock().remove(&ino);
            }
            if let Err(e) = fs.evict(ino) {
                frame::println!("ext2: {}: cannot free inode {ino}: {e:?}", self.bdev.name());
            }
        }
        drop(fs);
        // The queue's buffer goes back for the next ones (no allocation
        // per unlink).
        cand.clear();
        let mut q = self.orphans.lock();
        if q.is_empty() {
            *q = cand;
        }
    }

    /// syncfs: every file's dirty pages, then the metadata, then a flush.
    fn sync_all(&self) -> Result<()> {
        self.reap();
        let states: Vec<Arc<FileState>> = self.files.lock().values().cloned().collect();
        let mut first_err = Ok(());
        for s in states {
            if let Err(e) = s.sync_pages() {
                first_err = first_err.and(Err(e));
            }
        }
        self.fs.lock().sync().map_err(errno)?;
        self.bdev.page_cache().sync_and_flush()?;
        first_err
    }

    /// Clean unmount: write-back, the superblock's state restored, the
    /// device cache written and its clean pages dropped.
    fn finish(&self) -> Result<()> {
        if self.finished.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // Handles are gone: every orphan can go.
        let all: Vec<u32> = self.files.lock().keys().copied().collect();
        self.orphans.lock().extend(all);
        let r = self.sync_all();
        let r2 = self.fs.lock().unmount().map_err(errno);
        let r3 = self.bdev.page_cache().sync_and_flush();
        self.bdev.page_cache().invalidate_clean();
        MOUNTED.lock().retain(|&d| d != self.devt);
        let hold = self.hold.lock().take();
        drop(hold);
        r.and(r2).and(r3)
    }

    fn statfs(&self, flags: Option<u32>) -> StatFs {
        let s = self.fs.lock().statfs();
        let fsid = s.fsid;
        StatFs {
            f_type: EXT2_SUPER_MAGIC,
            f_bsize: i64::from(s.block_size),
            f_blocks: s.blocks,
            f_bfree: s.free_blocks,
            f_bavail: s.avail_blocks,
            f_files: s.files,
            f_ffree: s.free_files,
            f_fsid: [fsid as u32 as i32, (fsid >> 32) as u32 as i32],
            f_namelen: i64::from(s.name_max),
            f_frsize: i64::from(s.block_size),
            // ST_VALID (0x20) and the mount's flags.
            f_flags: 0x20 | i64::from(flags.unwrap_or(super::mount::ST_RELATIME)),
            f_spare: [0; 4],
        }
    }
}

/// Options from mount(2)'s data string: `errors=` and the ext2 options
/// Linux accepts that change nothing here.
fn parse_options(data: &str) -> Result<Option<disk::ErrorsPolicy>> {
    let mut errors = None;
    for opt in data.split(',').filter(|o| !o.is_empty()) {
        match opt {
            "errors=continue" => errors = Some(disk::ErrorsPolicy::Continue),
            "errors=remount-ro" => errors = Some(disk::ErrorsPolicy::RemountRo),
            "errors=panic" => errors = Some(disk::ErrorsPolicy::Panic),
            "ro" | "rw" | "acl" | "noacl" | "user_xattr" | "nouser_xattr" | "grpid"
            | "bsdgroups" | "nogrpid" | "sysvgroups" | "minixdf" | "bsddf" | "nocheck"
            | "check=none" | "oldalloc" | "orlov" | "nobh" | "noquota" | "defaults"
            | "relatime" | "noatime" | "strictatime" | "nosuid" | "nodev" | "noexec" | "suid"
            | "dev" | "exec" | "sync" | "async" => {}
            _ => {
                return Err(Error::with_message(
                    Errno::EINVAL,
                    "unknown ext2 mount option",
                ));
            }
        }
    }
    Ok(errors)
}

/// Mounts the ext2 file system on `bdev`; returns its root directory.
/// EINVAL for a superblock that is not ext2 (or uses features we do not
/// know), EUCLEAN for damaged descriptors or root, EBUSY if it is mounted
/// already, EACCES for a read-write mount of a read-only device.
pub fn mount(bdev: Arc<BlockDevice>, read_only: bool, data: &str) -> Result<Arc<dyn Inode>> {
    let errors = parse_options(data)?;
    let read_only = read_only || data.split(',').any(|o| o == "ro");
    if !read_only && bdev.read_only() {
        return Err(Error::with_message(Errno::EACCES, "read-only device"));
    }
    let devt = bdev.devt();
    {
        let mut m = MOUNTED.lock();
        if m.contains(&devt) {
            return Err(Error::new(Errno::EBUSY));
        }
        m.push(devt);
    }
    let r = mount_on(bdev, devt, read_only, errors);
    if r.is_err() {
        MOUNTED.lock().retain(|&d| d != devt);
    }
    r
}

fn mount_on(
    bdev: Arc<BlockDevice>,
    devt: u64,
    read_only: bool,
    errors: Option<disk::ErrorsPolicy>,
) -> Result<Arc<dyn Inode>> {
    // Writes made through /dev/<disk> (an image copied in with dd) reach
    // the disk first: file data is read from the disk, not that cache.
    bdev.page_cache().sync()?;
    bdev.page_cache().invalidate_clean();
    let opts = disk::MountOptions {
        read_only,
        errors,
        now,
    };
    let fs = disk::Fs::mount(DevIo { bdev: bdev.clone() }, opts).map_err(|e| {
        frame::println!("ext2: {}: cannot mount: {e:?}", bdev.name());
        match e {
            disk::Error::Corrupt(m) => Error::with_message(Errno::EUCLEAN, m),
            e => errno(e),
        }
    })?;
    if fs.has_errors() {
        frame::println!(
            "ext2: {}: warning: mounting a file system with errors, running e2fsck is recommended",
            bdev.name()
        );
    }
    let hold = bdev.hold();
    let vol = Arc::new(Volume {
        block_size: fs.block_size(),
        fs: Mutex::new(fs),
        hold: SpinLock::new(Some(hold)),
        bdev,
        devt,
        files: SpinLock::new(BTreeMap::new()),
        trim_at: AtomicUsize::new(MIN_TRIM),
        orphans: SpinLock::new(Vec::new()),
        finished: AtomicBool::new(false),
    });
    {
        let mut v = VOLUMES.lock();
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(&vol));
    }
    let mnt = Arc::new(Ext2Mount { vol });
    let root = Ext2Inode::handle(&mnt, disk::ROOT_INO)?;
    Ok(root)
}

/// mount(2) MS_REMOUNT of an ext2 mount: switches between read-only
/// (everything written back, marked clean) and read-write. Not ext2: Ok.
pub fn remount(root: &Arc<dyn Inode>, read_only: bool) -> Result<()> {
    let Some(node) = downcast(root) else {
        return Ok(());
    };
    let vol = &node.mnt.vol;
    if read_only {
        vol.sync_all()?;
    } else if vol.bdev.read_only() {
        return Err(Error::new(Errno::EACCES));
    }
    vol.fs.lock().remount(read_only).map_err(errno)?;
    vol.bdev.page_cache().sync_and_flush()
}

/// statfs(2) figures of the ext2 file system holding `node`, if it is one.
pub fn statfs(node: &Arc<dyn Inode>, flags: Option<u32>) -> Option<StatFs> {
    downcast(node).map(|n| n.mnt.vol.statfs(flags))
}

/// Power-off (init exited): every ext2 file system still mounted (the
/// root of `root=` among them) is written back and marked clean, as an
/// unmount would.
pub fn shutdown_all() {
    let vols: Vec<Arc<Volume>> = VOLUMES.lock().iter().filter_map(|w| w.upgrade()).collect();
    for v in vols {
        if let Err(e) = v.finish() {
            frame::println!(
                "ext2: {}: write-back at power-off failed: {e:?}",
                v.bdev.name()
            );
        }
    }
}

/// The root file system of `root=DEV rootfstype=TYPE`: DEV is `/dev/NAME`
/// (or `NAME`) of a registered block device; only ext2 is known.
pub fn mount_root(dev: &str, fstype: &str, read_only: bool, flags: &str) -> Result<Arc<dyn Inode>> {
    if fstype != "ext2" {
        return Err(Error::with_message(
            Errno::ENODEV,
            "unknown root file system type",
        ));
    }
    let name = dev.strip_prefix("/dev/").unwrap_or(dev);
    let bdev = crate::block::lookup_name(name)
        .ok_or(Error::with_message(Errno::ENXIO, "no such block device"))?;
    mount(bdev, read_only, flags)
}

/// Makes `mount -t ext2` known (/proc/filesystems). mount(2) resolves the
/// source itself (see syscall/fs/mount.rs); this entry serves absolute
/// device paths.
pub fn init() {
    super::mount::register_filesystem("ext2", make);
}

fn make(source: &str, data: &str) -> Result<Arc<dyn Inode>> {
    let ctx = super::FsContext::default();
    let bdev = crate::block::lookup_path(&ctx, source)?;
    mount(bdev, false, data)
}
