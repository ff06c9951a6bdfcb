//! The mount table: file systems attached on directories of others.
//!
//! A mount covers a directory (the mount point) with the root of another
//! file system; path resolution steps from the mount point into that root,
//! and ".." at the root steps back out. Mounts stack: mounting on a covered
//! directory covers the root that is visible there. Inodes are identified
//! by (device, inode number), so file systems may hand out fresh inode
//! objects on each lookup.
//!
//! File system types other than ramfs/tmpfs are registered by their modules
//! ([`register_filesystem`]); mount(2) creates instances by type name.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use frame::sync::{SpinLock, level};

use super::anon::ANON_DEV;
use super::inode::{FileType, Inode, makedev};
use super::ramfs::RamFs;
use super::stat::StatFs;
use crate::error::{Errno, Error, Result};

/// Per-mount flags, as statfs(2) reports them in `f_flags` (ST_*; mount(2)
/// spells all but relatime with the same values, MS_*).
pub const ST_RDONLY: u32 = 1;
pub const ST_NOSUID: u32 = 2;
pub const ST_NODEV: u32 = 4;
pub const ST_NOEXEC: u32 = 8;
pub const ST_SYNCHRONOUS: u32 = 16;
pub const ST_MANDLOCK: u32 = 64;
pub const ST_NOATIME: u32 = 1024;
pub const ST_NODIRATIME: u32 = 2048;
pub const ST_RELATIME: u32 = 4096;

/// Makes the root of a new instance from mount(2)'s `source` and `data`.
pub type MakeFs = fn(source: &str, data: &str) -> Result<Arc<dyn Inode>>;

struct Mount {
    mountpoint: Arc<dyn Inode>,
    root: Arc<dyn Inode>,
    /// (dev, ino) of both, computed once: file systems' `metadata` may take
    /// locks that must not nest inside the table's.
    mountpoint_id: (u64, u64),
    root_id: (u64, u64),
    source: String,
    fstype: String,
    /// ST_* flags: reported by statfs and /proc/mounts; read-only, noexec
    /// and nodev are enforced ([`check_writable`], [`allows_exec`],
    /// [`allows_devices`]).
    flags: u32,
    /// Marked by umount2(MNT_EXPIRE); the next such call unmounts it.
    expiry_marked: bool,
}

/// How umount2(2) detaches a file system.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Umount {
    /// EBUSY while it is in use or has mounts inside it.
    Normal,
    /// MNT_DETACH: detached at once, with the mounts inside it; open
    /// files and directories in it go on working.
    Detach,
    /// MNT_EXPIRE: EBUSY while in use; otherwise the first call marks it
    /// (EAGAIN) and the next one unmounts it.
    Expire,
}

/// What /proc/mounts shows about one mount.
pub struct MountInfo {
    pub mountpoint: Arc<dyn Inode>,
    pub root: Arc<dyn Inode>,
    pub source: String,
    pub fstype: String,
    pub flags: u32,
}

static MOUNTS: SpinLock<Vec<Mount>, { level::VFS }> = SpinLock::new(Vec::new());
static TYPES: SpinLock<Vec<(&'static str, MakeFs)>, { level::VFS }> = SpinLock::new(Vec::new());
/// Minor numbers of anonymous devices (major 0), as Linux gives tmpfs.
/// Mounts in the table, so lookups skip it while it is empty.
static MOUNT_COUNT: AtomicUsize = AtomicUsize::new(0);
/// What /proc/mounts says of `/` when it is not the initramfs: source,
/// type and ST_* flags (a `root=` disk: "/dev/root", as Linux names it).
static ROOT_DESC: frame::sync::Once<(String, String, u32)> = frame::sync::Once::new();

/// Records what `/` is (set once at boot, for a `root=` disk).
pub fn set_root_description(source: &str, fstype: &str, flags: u32) {
    ROOT_DESC.call_once(|| (String::from(source), String::from(fstype), flags));
}

/// The source, type and flags of `/`: "rootfs" for the initramfs.
pub fn root_description() -> (String, String, u32) {
    ROOT_DESC
        .get()
        .cloned()
        .unwrap_or_else(|| (String::from("rootfs"), String::from("rootfs"), 0))
}
static NEXT_ANON_MINOR: AtomicU32 = AtomicU32::new(16);

/// A fresh anonymous device number for a new file system instance.
pub fn anon_dev() -> u64 {
    makedev(0, NEXT_ANON_MINOR.fetch_add(1, Ordering::Relaxed))
}

/// Makes file system type `name` mountable.
pub fn register_filesystem(name: &'static str, make: MakeFs) {
    TYPES.lock().push((name, make));
}

/// The mountable file system types, as /proc/filesystems lists them.
pub fn filesystem_types() -> Vec<&'static str> {
    let mut names = alloc::vec!["tmpfs", "ramfs"];
    names.extend(TYPES.lock().iter().map(|(n, _)| *n));
    names
}

/// The source and type of the mounted file system whose device is `dev`
/// (its first mount), if it is mounted.
pub fn describe(dev: u64) -> Option<(String, String)> {
    if MOUNT_COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let mounts = MOUNTS.lock();
    mounts
        .iter()
        .find(|m| m.root_id.0 == dev)
        .map(|m| (m.source.clone(), m.fstype.clone()))
}

/// The ST_* flags of the mounted file system whose device is `dev` (its
/// first mount), if it is mounted.
pub fn mount_flags(dev: u64) -> Option<u32> {
    if MOUNT_COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let mounts = MOUNTS.lock();
    mounts.iter().find(|m| m.root_id.0 == dev).map(|m| m.flags)
}

/// mount(2) with MS_REMOUNT: the flags of the mount whose root is `root`
/// become `flags` (Linux replaces them: what is not given is cleared).
/// EINVAL if `root` is not the root of a mount. The root file system
/// keeps its flags (it has no entry in the table: relatime, read-write).
pub fn set_flags(root: &Arc<dyn Inode>, flags: u32) -> Result<()> {
    let id = root.id();
    if id == super::root_inode().id() {
        return Ok(());
    }
    let mut mounts = MOUNTS.lock();
    let m = mounts
        .iter_mut()
        .rev()
        .find(|m| m.root_id == id)
        .ok_or(Error::new(Errno::EINVAL))?;
    m.flags = flags;
    Ok(())
}

/// A read of `node`'s data (Linux's touch_atime): nothing on a noatime
/// mount, relatime's rule on a relatime one (the default), always on a
/// strictatime one.
pub fn touch_atime(node: &dyn Inode) {
    let flags = mount_flags(node.id().0).unwrap_or(ST_RELATIME);
    if flags & ST_NOATIME == 0 {
        node.touch_atime(flags & ST_RELATIME == 0);
    }
}

fn has_flag(node: &Arc<dyn Inode>, flag: u32) -> bool {
    mount_flags(node.metadata().dev).is_some_and(|f| f & flag != 0)
}

/// EROFS if `node` is on a file system mounted read-only (names in it
/// cannot change, nor its files' contents or attributes).
pub fn check_writable(node: &Arc<dyn Inode>) -> Result<()> {
    if has_flag(node, ST_RDONLY) {
        return Err(Error::new(Errno::EROFS));
    }
    Ok(())
}

/// Whether programs on `node`'s file system may run (not MS_NOEXEC).
pub fn allows_exec(node: &Arc<dyn Inode>) -> bool {
    !has_flag(node, ST_NOEXEC)
}

/// Whether set-user-ID and set-group-ID bits of programs on `node`'s file
/// system take effect (not MS_NOSUID).
pub fn allows_suid(node: &Arc<dyn Inode>) -> bool {
    !has_flag(node, ST_NOSUID)
}

/// Whether device nodes on `node`'s file system may be opened (not
/// MS_NODEV).
pub fn allows_devices(node: &Arc<dyn Inode>) -> bool {
    !has_flag(node, ST_NODEV)
}

/// The root of a new instance of `fstype`: ENODEV for an unknown type.
pub fn make_filesystem(fstype: &str, source: &str, data: &str) -> Result<Arc<dyn Inode>> {
    if fstype == "tmpfs" {
        let opts = TmpfsOptions::parse(data)?;
        let root: Arc<dyn Inode> = RamFs::new_root_with(anon_dev(), opts.limits);
        // tmpfs(5): the root is world-writable and sticky unless "mode="
        // says otherwise.
        root.set_perm(opts.mode.unwrap_or(0o1777))?;
        if opts.uid.is_some() || opts.gid.is_some() {
            root.set_owner(opts.uid, opts.gid)?;
        }
        return Ok(root);
    }
    if fstype == "ramfs" {
        // ramfs takes "mode=" and ignores other options.
        let root: Arc<dyn Inode> = RamFs::new_root(anon_dev());
        root.set_perm(mode_option(data)?.unwrap_or(0o755))?;
        return Ok(root);
    }
    let make = TYPES
        .lock()
        .iter()
        .find(|(n, _)| *n == fstype)
        .map(|(_, m)| *m);
    let make = make.ok_or(Error::with_message(
        Errno::ENODEV,
        "unknown file system type",
    ))?;
    make(source, data)
}

/// tmpfs(5)'s default limits (Linux's shmem_default_max_blocks and
/// shmem_default_max_inodes): half the RAM, and as many inodes as that
/// has pages. The root file system (Linux's rootfs is a tmpfs) has them too.
pub fn default_tmpfs_limits() -> super::ramfs::Limits {
    let ram_pages = frame::boot::total_ram() / 4096;
    super::ramfs::Limits { pages: ram_pages / 2, inodes: ram_pages / 2 }
}

/// mount(2) with MS_REMOUNT of the tmpfs (or root file system) whose root
/// is `root`: the size and inode limits the options name change (EINVAL
/// below what is in use); the other options are accepted and change
/// nothing. Other file systems take the flags only, as before.
pub fn remount(root: &Arc<dyn Inode>, data: &str) -> Result<()> {
    if super::ramfs::RamFs::usage(root).is_none() {
        return Ok(());
    }
    let o = TmpfsOptions::parse(data)?;
    super::ramfs::RamFs::reconfigure(
        root,
        o.seen_pages.then_some(o.limits.pages),
        o.seen_inodes.then_some(o.limits.inodes),
    )
}

/// tmpfs(5) mount options.
struct TmpfsOptions {
    limits: super::ramfs::Limits,
    /// Whether the options named a size (size=, nr_blocks=) and an inode
    /// count (nr_inodes=): a remount changes only those.
    seen_pages: bool,
    seen_inodes: bool,
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
}

/// A number with an optional k/m/g/t/p/e suffix (memparse).
fn memparse(v: &str) -> Option<u64> {
    let (digits, shift) = match v.as_bytes().last()? {
        b'k' | b'K' => (&v[..v.len() - 1], 10),
        b'm' | b'M' => (&v[..v.len() - 1], 20),
        b'g' | b'G' => (&v[..v.len() - 1], 30),
        b't' | b'T' => (&v[..v.len() - 1], 40),
        b'p' | b'P' => (&v[..v.len() - 1], 50),
        b'e' | b'E' => (&v[..v.len() - 1], 60),
        _ => (v, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1u64.checked_shl(shift)?)
}

impl TmpfsOptions {
    /// Parses comma-separated tmpfs options: size (bytes with a suffix, or
    /// a percentage of RAM), nr_blocks, nr_inodes (0: unlimited), mode,
    /// uid, gid; huge=, inode32/inode64 and noswap are accepted and change
    /// nothing here. Anything else is EINVAL, as on Linux. The defaults
    /// are Linux's: half the RAM, and as many inodes as that has pages.
    fn parse(data: &str) -> Result<TmpfsOptions> {
        let bad = |why: &'static str| Error::with_message(Errno::EINVAL, why);
        let ram_pages = frame::boot::total_ram() / 4096;
        let mut o = TmpfsOptions {
            limits: default_tmpfs_limits(),
            seen_pages: false,
            seen_inodes: false,
            mode: None,
            uid: None,
            gid: None,
        };
        let unlimited = |n: u64| if n == 0 { usize::MAX } else { usize::try_from(n).unwrap_or(usize::MAX) };
        for opt in data.split(',').filter(|o| !o.is_empty()) {
            let (key, value) = opt.split_once('=').unwrap_or((opt, ""));
            match key {
                "size" => {
                    let pages = if let Some(pct) = value.strip_suffix('%') {
                        let pct: u64 = pct.parse().map_err(|_| bad("bad size="))?;
                        (ram_pages as u64).saturating_mul(pct).div_ceil(100)
                    } else {
                        memparse(value).ok_or(bad("bad size="))?.div_ceil(4096)
                    };
                    o.limits.pages = unlimited(pages);
                    o.seen_pages = true;
                }
                "nr_blocks" => {
                    o.limits.pages = unlimited(memparse(value).ok_or(bad("bad nr_blocks="))?);
                    o.seen_pages = true;
                }
                "nr_inodes" => {
                    o.limits.inodes = unlimited(memparse(value).ok_or(bad("bad nr_inodes="))?);
                    o.seen_inodes = true;
                }
                "mode" => o.mode = mode_option(opt)?,
                "uid" => o.uid = Some(value.parse().map_err(|_| bad("bad uid="))?),
                "gid" => o.gid = Some(value.parse().map_err(|_| bad("bad gid="))?),
                "huge" if matches!(value, "never" | "always" | "within_size" | "advise" | "deny" | "force") => {}
                "inode32" | "inode64" | "noswap" if value.is_empty() => {}
                _ => return Err(bad("unknown tmpfs option")),
            }
        }
        Ok(o)
    }
}

/// The "mode=" option (octal) of comma-separated mount data: EINVAL if
/// it is not a mode.
fn mode_option(data: &str) -> Result<Option<u32>> {
    let Some(value) = data.split(',').find_map(|o| o.strip_prefix("mode=")) else {
        return Ok(None);
    };
    match u32::from_str_radix(value, 8) {
        Ok(mode) if mode <= 0o7777 => Ok(Some(mode)),
        _ => Err(Error::with_message(Errno::EINVAL, "bad mode= option")),
    }
}

fn id(node: &Arc<dyn Inode>) -> (u64, u64) {
    node.id()
}

/// A filter of the inodes the mount table names, so that path walks skip
/// the table's lock for the nearly every directory that is neither a
/// mount point nor a mounted root: a clear bit means "not in the table";
/// a set bit means "look". Bits are set, under the table's lock, before a
/// mount is visible, and recomputed from the table after an unmount.
struct IdFilter([AtomicU64; 4]);

impl IdFilter {
    const fn new() -> Self {
        IdFilter([const { AtomicU64::new(0) }; 4])
    }

    fn bit((dev, ino): (u64, u64)) -> (usize, u64) {
        let h = dev.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ino.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        let h = (h >> 56) as usize;
        (h / 64, 1 << (h % 64))
    }

    fn insert(&self, id: (u64, u64)) {
        let (word, bit) = Self::bit(id);
        self.0[word].fetch_or(bit, Ordering::Relaxed);
    }

    fn may_contain(&self, id: (u64, u64)) -> bool {
        let (word, bit) = Self::bit(id);
        self.0[word].load(Ordering::Relaxed) & bit != 0
    }

    /// Rebuilds the filter from `ids`.
    fn reset(&self, ids: impl Iterator<Item = (u64, u64)>) {
        let mut words = [0u64; 4];
        for id in ids {
            let (word, bit) = Self::bit(id);
            words[word] |= bit;
        }
        for (w, v) in self.0.iter().zip(words) {
            w.store(v, Ordering::Relaxed);
        }
    }
}

/// The mount points and the mounted roots in [`MOUNTS`].
static MOUNTPOINT_FILTER: IdFilter = IdFilter::new();
static ROOT_FILTER: IdFilter = IdFilter::new();

/// Rebuilds both filters from the table (after entries left it).
fn refilter(mounts: &[Mount]) {
    MOUNTPOINT_FILTER.reset(mounts.iter().map(|m| m.mountpoint_id));
    ROOT_FILTER.reset(mounts.iter().map(|m| m.root_id));
}

/// Attaches `root` on the directory `mountpoint`, with ST_* `flags`.
pub fn mount(
    mountpoint: &Arc<dyn Inode>,
    root: Arc<dyn Inode>,
    source: &str,
    fstype: &str,
    flags: u32,
) -> Result<()> {
    if !mountpoint.is_dir() || !root.is_dir() {
        return Err(Error::new(Errno::ENOTDIR));
    }
    let m = Mount {
        mountpoint_id: id(mountpoint),
        root_id: id(&root),
        mountpoint: mountpoint.clone(),
        root,
        source: String::from(source),
        fstype: String::from(fstype),
        flags,
        expiry_marked: false,
    };
    let mut mounts = MOUNTS.lock();
    MOUNTPOINT_FILTER.insert(m.mountpoint_id);
    ROOT_FILTER.insert(m.root_id);
    mounts.push(m);
    MOUNT_COUNT.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Detaches the file system whose root is `root`: EINVAL if it is not
/// one. Without MNT_DETACH it is EBUSY while another mount is on it or on
/// a directory inside it, or while `in_use(dev)` says that a process
/// holds something on its device (an open file, a working or root
/// directory, a file mapping: what keeps a Linux mount busy). `in_use`
/// runs without the table's lock, so it may take process locks.
///
/// Inodes carry no mount, only a device, so a file system attached more
/// than once (bind mounts) or a bind mount of a directory of another one
/// cannot tell whose its open files are: those are never busy for open
/// files, and detaching one takes only that one mount.
pub fn umount(root: &Arc<dyn Inode>, how: Umount, in_use: &dyn Fn(u64) -> bool) -> Result<()> {
    let root_id = id(root);
    let dev = root_id.0;
    let sole = {
        let mounts = MOUNTS.lock();
        let Some(i) = mounts.iter().rposition(|m| m.root_id == root_id) else {
            return Err(Error::with_message(Errno::EINVAL, "not a mount point"));
        };
        // A mount on top of it, or on a directory inside it, keeps it busy.
        if how != Umount::Detach && mounts.iter().skip(i + 1).any(|m| m.mountpoint_id.0 == dev) {
            return Err(Error::new(Errno::EBUSY));
        }
        dev != super::ROOT_DEV && mounts.iter().filter(|m| m.root_id.0 == dev).count() == 1
    };
    if how != Umount::Detach && sole && in_use(dev) {
        return Err(Error::new(Errno::EBUSY));
    }
    // The last mount of a file system on a disk: its data reaches the
    // device before it goes (a write error is left for nobody to see, as
    // on Linux).
    if sole {
        let _ = root.sync_fs();
    }
    let removed = {
        let mut mounts = MOUNTS.lock();
        let Some(i) = mounts.iter().rposition(|m| m.root_id == root_id) else {
            return Err(Error::with_message(Errno::EINVAL, "not a mount point"));
        };
        if how == Umount::Expire && !core::mem::replace(&mut mounts[i].expiry_marked, true) {
            return Err(Error::new(Errno::EAGAIN));
        }
        // Room for every list first (umount(2): ENOMEM), so that a
        // failure changes nothing and the detaching itself cannot fail.
        let mut removed = crate::fallible::with_capacity(mounts.len())?;
        let mut devs = crate::fallible::with_capacity(mounts.len() + 1)?;
        removed.push(mounts.remove(i));
        if how == Umount::Detach && sole {
            // The mounts inside it go too, and those inside them.
            devs.push(dev);
            while let Some(j) = mounts.iter().position(|m| devs.contains(&m.mountpoint_id.0)) {
                let m = mounts.remove(j);
                devs.push(m.root_id.0);
                removed.push(m);
            }
        }
        MOUNT_COUNT.fetch_sub(removed.len(), Ordering::Relaxed);
        refilter(&mounts);
        removed
    };
    // Dropped outside the lock: the last reference may free a whole tree.
    drop(removed);
    Ok(())
}

/// The root visible at `node`: the root of the newest mount on it (after
/// following stacked mounts), or `node` itself. A directory bind-mounted
/// on itself covers nothing, so that the walk always ends.
pub fn covering(node: Arc<dyn Inode>) -> Arc<dyn Inode> {
    let mut node = node;
    // Each step takes a different mount, so there are at most as many
    // steps as mounts.
    for _ in 0..=MOUNT_COUNT.load(Ordering::Relaxed) {
        let node_id = id(&node);
        if !MOUNTPOINT_FILTER.may_contain(node_id) {
            return node;
        }
        let next = {
            let mounts = MOUNTS.lock();
            mounts
                .iter()
                .rev()
                .find(|m| m.mountpoint_id == node_id && m.root_id != node_id)
                .map(|m| m.root.clone())
        };
        match next {
            Some(root) => node = root,
            None => return node,
        }
    }
    node
}

/// The mount point `root` is mounted on, if it is a mounted root.
pub fn mounted_on(root: &Arc<dyn Inode>) -> Option<Arc<dyn Inode>> {
    if MOUNT_COUNT.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let root_id = id(root);
    if !ROOT_FILTER.may_contain(root_id) {
        return None;
    }
    let mounts = MOUNTS.lock();
    mounts
        .iter()
        .rev()
        .find(|m| m.root_id == root_id && m.mountpoint_id != root_id)
        .map(|m| m.mountpoint.clone())
}

/// Whether something is mounted on `node` (it cannot be removed: EBUSY).
pub fn is_mountpoint(node: &Arc<dyn Inode>) -> bool {
    if MOUNT_COUNT.load(Ordering::Relaxed) == 0 {
        return false;
    }
    let node_id = id(node);
    if !MOUNTPOINT_FILTER.may_contain(node_id) {
        return false;
    }
    MOUNTS.lock().iter().any(|m| m.mountpoint_id == node_id)
}

/// The mounts, oldest first.
pub fn mounts() -> Vec<MountInfo> {
    let mounts = MOUNTS.lock();
    mounts
        .iter()
        .map(|m| MountInfo {
            mountpoint: m.mountpoint.clone(),
            root: m.root.clone(),
            source: m.source.clone(),
            fstype: m.fstype.clone(),
            flags: m.flags,
        })
        .collect()
}

/// statfs(2) of the file system holding `node`.
pub fn statfs(node: &Arc<dyn Inode>) -> StatFs {
    let dev = node.metadata().dev;
    if let Some(s) = super::ext2::statfs(node, mount_flags(dev)) {
        return s;
    }
    StatFs::for_fs(&fstype_of(node), dev, mount_flags(dev), super::ramfs::RamFs::usage(node))
}

/// The type of the file system holding `node`: the type of the mount of
/// its device, else the root file system or, for inodes in no directory,
/// the pseudo file system Linux keeps them on.
pub fn fstype_of(node: &Arc<dyn Inode>) -> String {
    let meta = node.metadata();
    match describe(meta.dev) {
        Some((_, fstype)) => fstype,
        None if meta.dev == ANON_DEV => String::from(match meta.file_type {
            FileType::Fifo => "pipefs",
            FileType::Socket => "sockfs",
            FileType::CharDevice => "devtmpfs",
            _ => "anon_inodefs",
        }),
        None => root_description().1,
    }
}

/// Registers the kernel's own file system types and mounts them where a
/// Linux system has them: devtmpfs on /dev (with a tmpfs on /dev/shm and
/// devpts on /dev/pts), proc on /proc and sysfs on /sys. Runs once, after
/// the initramfs is unpacked, so that any init finds them.
pub fn mount_kernel_filesystems() -> Result<()> {
    super::devfs::register();
    super::devpts::register();
    super::procfs::register();
    super::sysfs::register();
    super::ext2::init();
    let fs = super::FsContext::default();
    // The flags a Linux system's init mounts them with.
    let hardened = ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RELATIME;
    let mounts = [
        ("dev", "devtmpfs", "devtmpfs", ST_NOSUID | ST_RELATIME),
        ("proc", "proc", "proc", hardened),
        ("sys", "sysfs", "sysfs", hardened),
    ];
    for (dir, fstype, source, flags) in mounts {
        let mountpoint = super::ensure_dir(fs.root(), dir, 0o755)?;
        mount(
            &mountpoint,
            make_filesystem(fstype, source, "")?,
            source,
            fstype,
            flags,
        )?;
    }
    let shm = super::lookup(&fs, fs.root(), "/dev/shm", true)?;
    mount(
        &shm,
        make_filesystem("tmpfs", "tmpfs", "")?,
        "tmpfs",
        "tmpfs",
        ST_RELATIME,
    )?;
    let pts = super::lookup(&fs, fs.root(), "/dev/pts", true)?;
    mount(
        &pts,
        make_filesystem("devpts", "devpts", "")?,
        "devpts",
        "devpts",
        ST_NOSUID | ST_NOEXEC | ST_RELATIME,
    )
}
