//! The virtual file system: inodes, path resolution, open files and file
//! descriptor tables, the in-memory root file system (ramfs, filled from
//! the initramfs), the mount table, and the character devices (null, zero,
//! full, random, urandom; the terminals behind /dev/console, /dev/tty,
//! /dev/ptmx and devpts are in `crate::tty`).
//!
//! Ownership: directories own their entries' inodes (`Arc<dyn Inode>`);
//! open files, working directories and mappings hold further references,
//! so an unlinked file lives on until the last of them goes. A process owns
//! a [`FileTable`] (descriptors → shared [`File`]s) and an [`FsContext`]
//! (root, cwd, umask).

mod anon;
pub(crate) mod attr_tree;
pub(crate) mod devfs;
pub(crate) mod devices;
pub(crate) mod devpts;
pub mod epoll;
pub mod eventfd;
pub mod ext2;
pub mod signalfd;
pub mod timerfd;
mod fifo;
mod file;
mod file_table;
mod initramfs;
pub(crate) mod inode;
pub mod lock;
pub mod memfd;
pub mod mount;
pub mod name;
mod namespace;
mod open;
mod path;
mod perm;
pub mod pipe;
mod procfs;
pub(crate) mod pseudo;
mod ramfs;
pub mod readiness;
mod stat;
pub(crate) mod stream;
mod sysfs;
pub mod xattr;
mod write_access;

use alloc::sync::Arc;

use frame::sync::Once;

pub use self::anon::{anon_inode, socket_inode};
pub use self::file::*;
pub use self::file_table::{FileTable, HARD_MAX_FDS, MmapSource};
pub use self::inode::{
    Allocate, FileType, Inode, NewNode, NodeKind, RenameFlags, Timespec, dev_major, dev_minor, makedev,
};
pub use self::namespace::{link, mkdir, mknod, rename, rmdir, symlink, unlink};
pub use self::open::open;
pub use self::path::{canonical_path, lookup, path_of};
pub use self::perm::{Cred, MAY_EXEC, MAY_READ, MAY_WRITE};
pub use self::stat::{STATX_RESERVED, Stat, StatFs, Statx};
pub use self::write_access::{DenyWrite, WriteAccess};
pub use self::stream::*;
use crate::error::{Errno, Error, Result};

/// Device number of the root ramfs (an anonymous device, as for tmpfs).
const ROOT_DEV: u64 = makedev(0, 1);

static ROOT: Once<Arc<dyn Inode>> = Once::new();

/// The root directory of the root file system.
fn root_inode() -> Arc<dyn Inode> {
    ROOT.get()
        .expect("fs::init must run before the root file system is used")
        .clone()
}

/// Per-process file-system state: root, working directory, umask; and the
/// credentials that lookups and checks made through it use (root unless
/// the caller sets them: the syscall layer does, per call).
#[derive(Clone)]
pub struct FsContext {
    root: Arc<dyn Inode>,
    cwd: Arc<dyn Inode>,
    umask: u32,
    cred: Cred,
}

impl Default for FsContext {
    /// Root and cwd at "/", umask 022. Panics before [`init`].
    fn default() -> Self {
        let root = root_inode();
        FsContext {
            cwd: root.clone(),
            root,
            umask: 0o022,
            cred: Cred::root(),
        }
    }
}

impl FsContext {
    pub fn root(&self) -> &Arc<dyn Inode> {
        &self.root
    }

    pub fn cwd(&self) -> &Arc<dyn Inode> {
        &self.cwd
    }

    pub fn cred(&self) -> &Cred {
        &self.cred
    }

    /// A copy of this context acting for `cred` (the system calls' snapshot
    /// of the caller's context): shares the root and cwd, and does not
    /// copy this context's own credentials only to drop them.
    pub fn snapshot_for(&self, cred: Cred) -> Self {
        FsContext {
            root: self.root.clone(),
            cwd: self.cwd.clone(),
            umask: self.umask,
            cred,
        }
    }

    /// The same context acting for `cred`.
    pub fn with_cred(mut self, cred: Cred) -> Self {
        self.cred = cred;
        self
    }

    pub fn umask(&self) -> u32 {
        self.umask
    }

    /// Sets the umask (permission bits only); returns the old one.
    pub fn set_umask(&mut self, mask: u32) -> u32 {
        core::mem::replace(&mut self.umask, mask & 0o777)
    }

    /// Changes the working directory; `dir` must be a directory.
    pub fn set_cwd(&mut self, dir: Arc<dyn Inode>) {
        self.cwd = dir;
    }

    /// chroot(2): changes the root directory.
    pub fn set_root(&mut self, dir: Arc<dyn Inode>) {
        self.root = dir;
    }
}

/// Builds the root file system and unpacks the initramfs into it, then adds
/// /dev (null, zero, full, random, urandom, console, tty, ptmx) and /tmp if the archive lacks them.
///
/// With `disk_root` (the kernel's `root=`), that file system is the root
/// instead and the initramfs is not unpacked; /dev and /tmp are added only
/// if it is writable.
pub fn init(initrd: Option<&[u8]>, disk_root: Option<Arc<dyn Inode>>) -> Result<()> {
    if ROOT.get().is_some() {
        return Err(Error::with_message(Errno::EBUSY, "fs::init called twice"));
    }
    ramfs::set_page_limit(frame::mm::frame_alloc::free_frames() / 2);
    if let Some(root) = disk_root {
        ROOT.call_once(|| root);
        if let Err(e) = populate(&FsContext::default()) {
            frame::log_info!("root: /dev or /tmp not added: {e:?}");
        }
        return Ok(());
    }
    // The root file system is a tmpfs of the default size, as Linux's
    // rootfs: /tmp on it fills up at half the RAM, and statfs says so.
    let root: Arc<dyn Inode> = ramfs::RamFs::new_root_with(ROOT_DEV, mount::default_tmpfs_limits());
    ROOT.call_once(|| root);
    let fs = FsContext::default();
    if let Some(data) = initrd {
        let n = initramfs::unpack(&fs, data);
        frame::log_info!("initramfs: {n} members unpacked ({} bytes)", data.len());
    }
    populate(&fs)
}

fn ensure_dir(parent: &Arc<dyn Inode>, name: &str, perm: u32) -> Result<Arc<dyn Inode>> {
    match parent.lookup(name) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(Error::with_message(Errno::ENOTDIR, "expected a directory")),
        Err(_) => parent.create(
            name,
            NewNode {
                kind: NodeKind::Directory,
                perm,
                uid: 0,
                gid: 0,
            },
        ),
    }
}

fn populate(fs: &FsContext) -> Result<()> {
    let dev = ensure_dir(fs.root(), "dev", 0o755)?;
    let nodes = [
        ("null", devices::NULL, 0o666),
        ("zero", devices::ZERO, 0o666),
        ("full", devices::FULL, 0o666),
        ("random", devices::RANDOM, 0o666),
        ("urandom", devices::URANDOM, 0o666),
        ("console", devices::CONSOLE, 0o600),
        ("tty", devices::TTY, 0o666),
        ("ptmx", devices::PTMX, 0o666),
    ];
    for (name, rdev, perm) in nodes {
        let node = NewNode {
            kind: NodeKind::Special(FileType::CharDevice, rdev),
            perm,
            uid: 0,
            gid: 0,
        };
        match dev.create(name, node) {
            Ok(_) => {}
            Err(e) if e.errno() == Errno::EEXIST => {}
            Err(e) => return Err(e),
        }
    }
    ensure_dir(fs.root(), "tmp", 0o1777)?;
    Ok(())
}

/// Releases what an exiting process holds outside its descriptors: its
/// record locks, and the controlling terminal if it led the session.
pub fn on_process_exit(pid: u32, sid: u32) {
    lock::release_process(pid);
    if pid == sid {
        crate::tty::terminal::session_ended(sid);
    }
}

/// Resolves `path` for execve with `fs`'s credentials: ENOENT, ENOTDIR,
/// ELOOP, ENAMETOOLONG, and EACCES for anything but a regular file the
/// caller may execute on a file system not mounted noexec.
pub fn open_exec(fs: &FsContext, path: &str) -> Result<Arc<dyn Inode>> {
    Ok(open_exec_at(fs, fs.cwd(), path, true)?.0)
}

/// [`open_exec`] with relative paths taken from `start` (execveat's
/// dirfd); without `follow` a final symlink is ELOOP. Also returns the
/// absolute path the file was found under, symlinks resolved (what
/// /proc/pid/exe shows), if known.
pub fn open_exec_at(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    follow: bool,
) -> Result<(Arc<dyn Inode>, Option<alloc::string::String>)> {
    let found = path::lookup_found(fs, start, path, follow)?;
    check_exec(fs, &found.node)?;
    let where_ = found.parent.and_then(|(dir, name)| {
        let mut p = path_of(fs, &dir).ok()?;
        if !p.ends_with('/') {
            p.push('/');
        }
        p.push_str(&name);
        Some(p)
    });
    Ok((found.node, where_))
}

/// Whether `fs`'s caller may execute `node`: ELOOP for a symlink (it was
/// not to be followed), EACCES for anything but a regular file it may
/// execute on a file system not mounted noexec.
pub fn check_exec(fs: &FsContext, node: &Arc<dyn Inode>) -> Result<()> {
    let meta = node.metadata();
    if meta.file_type == FileType::Symlink {
        return Err(Error::new(Errno::ELOOP));
    }
    if meta.file_type != FileType::Regular
        || !fs.cred().may(&meta, MAY_EXEC)
        || !mount::allows_exec(node)
    {
        return Err(Error::new(Errno::EACCES));
    }
    Ok(())
}
