//! Operations on names: mkdir, mknod, symlink, link, unlink, rmdir, rename.
//! Each resolves the parent directory, applies the rules for the final
//! component that the man pages give, checks permissions (write and search
//! on the directories changed, the sticky bit), and asks the file system.

use alloc::string::String;
use alloc::sync::Arc;

use super::file::{File, O_ACCMODE, O_CREAT, O_EXCL, O_RDWR, O_TMPFILE, O_WRONLY};
use super::inode::{FileType, Inode, NewNode, NodeKind, RenameFlags, S_IFMT, same_inode};
use super::path::{self, Last, PATH_MAX, Parent};
use super::perm::{MAY_EXEC, MAY_WRITE};
use super::{FsContext, mount};
use crate::error::{Errno, Error, Result};

/// The name a new node gets: EEXIST when the path names "/", "." or "..",
/// and ENOENT for a non-directory with a trailing slash that does not exist
/// yet (Linux's `filename_create`).
fn new_name(parent: &Parent, is_dir: bool) -> Result<&str> {
    match &parent.last {
        Last::Name(name) => {
            if parent.trailing_slash && !is_dir && parent.dir.lookup(name).is_err() {
                return Err(Error::new(Errno::ENOENT));
            }
            Ok(name.as_str())
        }
        _ => Err(Error::new(Errno::EEXIST)),
    }
}

/// May the caller add `name` to `parent.dir`? EEXIST first, then EROFS,
/// then the permission check, as on Linux.
fn check_create(fs: &FsContext, parent: &Parent, name: &str) -> Result<()> {
    if parent.dir.lookup(name).is_ok() {
        return Err(Error::new(Errno::EEXIST));
    }
    mount::check_writable(&parent.dir)?;
    fs.cred().check(&*parent.dir, MAY_WRITE | MAY_EXEC)
}

/// Creates `kind` at the final component of `path`, owned by the caller.
fn create(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    kind: NodeKind,
    perm: u32,
) -> Result<()> {
    let parent = path::lookup_parent(fs, start, path)?;
    let name = new_name(&parent, matches!(kind, NodeKind::Directory))?;
    check_create(fs, &parent, name)?;
    let (uid, gid) = (fs.cred().uid, fs.cred().gid);
    parent.dir.create(
        name,
        NewNode {
            kind,
            perm,
            uid,
            gid,
        },
    )?;
    Ok(())
}

/// mkdir(2): `mode` before the umask.
pub fn mkdir(fs: &FsContext, start: &Arc<dyn Inode>, path: &str, mode: u32) -> Result<()> {
    let perm = mode & 0o1777 & !fs.umask();
    create(fs, start, path, NodeKind::Directory, perm)
}

/// mknod(2): regular files, device nodes (root only), FIFOs and sockets.
pub fn mknod(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    mode: u32,
    rdev: u64,
) -> Result<()> {
    let kind = match FileType::from_mode(mode) {
        _ if mode & S_IFMT == 0 => NodeKind::Regular,
        Some(FileType::Regular) => NodeKind::Regular,
        Some(t @ (FileType::CharDevice | FileType::BlockDevice)) => {
            if !fs.cred().capable(crate::caps::CAP_MKNOD) {
                return Err(Error::new(Errno::EPERM));
            }
            NodeKind::Special(t, rdev)
        }
        Some(t @ (FileType::Fifo | FileType::Socket)) => NodeKind::Special(t, 0),
        Some(FileType::Directory) => return Err(Error::new(Errno::EPERM)),
        _ => return Err(Error::new(Errno::EINVAL)),
    };
    create(fs, start, path, kind, mode & 0o7777 & !fs.umask())
}

/// symlink(2): a link at `path` holding `target`.
pub fn symlink(fs: &FsContext, target: &str, start: &Arc<dyn Inode>, path: &str) -> Result<()> {
    if target.is_empty() {
        return Err(Error::new(Errno::ENOENT));
    }
    if super::name::user_len(target) >= PATH_MAX {
        return Err(Error::new(Errno::ENAMETOOLONG));
    }
    create(
        fs,
        start,
        path,
        NodeKind::Symlink(String::from(target)),
        0o777,
    )
}

/// link(2): a new name at `path` for `node`.
pub fn link(
    fs: &FsContext,
    node: &Arc<dyn Inode>,
    start: &Arc<dyn Inode>,
    path: &str,
) -> Result<()> {
    if node.is_dir() {
        return Err(Error::new(Errno::EPERM));
    }
    let parent = path::lookup_parent(fs, start, path)?;
    let name = new_name(&parent, false)?;
    // Linux's order: EEXIST, EROFS, then fs.protected_hardlinks (EPERM),
    // then the directory's permission (EACCES).
    if parent.dir.lookup(name).is_ok() {
        return Err(Error::new(Errno::EEXIST));
    }
    mount::check_writable(&parent.dir)?;
    fs.cred().may_link(&**node)?;
    check_create(fs, &parent, name)?;
    parent.dir.link(name, node)
}

/// unlink(2).
pub fn unlink(fs: &FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<()> {
    let parent = path::lookup_parent(fs, start, path)?;
    let Last::Name(name) = &parent.last else {
        return Err(Error::new(Errno::EISDIR));
    };
    let name = name.as_str();
    mount::check_writable(&parent.dir)?;
    // One lookup of the name: the file system shows the inode it found to
    // these checks and removes that entry.
    parent.dir.unlink_checked(name, &|node| {
        if node.is_dir() {
            return Err(Error::new(Errno::EISDIR));
        }
        if parent.trailing_slash {
            return Err(Error::new(Errno::ENOTDIR));
        }
        fs.cred().check_delete(&*parent.dir, node)
    })
}

/// rmdir(2).
pub fn rmdir(fs: &FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<()> {
    let parent = path::lookup_parent(fs, start, path)?;
    match &parent.last {
        Last::Root => Err(Error::new(Errno::EBUSY)),
        Last::Dot => Err(Error::new(Errno::EINVAL)),
        Last::DotDot => Err(Error::new(Errno::ENOTEMPTY)),
        Last::Name(name) => {
            let name = name.as_str();
            mount::check_writable(&parent.dir)?;
            let node = parent.dir.lookup(name)?;
            if same_inode(&node, fs.root()) || mount::is_mountpoint(&node) {
                return Err(Error::new(Errno::EBUSY));
            }
            if node.is_dir() {
                fs.cred().check_delete(&*parent.dir, &*node)?;
            }
            parent.dir.rmdir(name)
        }
    }
}

/// rename(2) / renameat2(2) with flags 0, RENAME_NOREPLACE or
/// RENAME_EXCHANGE.
pub fn rename(
    fs: &FsContext,
    old_start: &Arc<dyn Inode>,
    old_path: &str,
    new_start: &Arc<dyn Inode>,
    new_path: &str,
    flags: RenameFlags,
) -> Result<()> {
    let old = path::lookup_parent(fs, old_start, old_path)?;
    let new = path::lookup_parent(fs, new_start, new_path)?;
    let Last::Name(old_name) = &old.last else {
        return Err(Error::new(Errno::EBUSY));
    };
    let Last::Name(new_name) = &new.last else {
        return Err(Error::new(if flags.noreplace {
            Errno::EEXIST
        } else {
            Errno::EBUSY
        }));
    };
    let (old_name, new_name) = (old_name.as_str(), new_name.as_str());
    mount::check_writable(&old.dir)?;
    let src = old.dir.lookup(old_name)?;
    if flags.exchange {
        return exchange(fs, &old, old_name, &src, &new, new_name, flags);
    }
    if (old.trailing_slash || new.trailing_slash) && !src.is_dir() {
        return Err(Error::new(Errno::ENOTDIR));
    }
    let cred = fs.cred();
    cred.check_delete(&*old.dir, &*src)?;
    let dst = new.dir.lookup(new_name).ok();
    match &dst {
        Some(dst) => cred.check_delete(&*new.dir, &**dst)?,
        None => cred.check(&*new.dir, MAY_WRITE | MAY_EXEC)?,
    }
    if mount::is_mountpoint(&src) || dst.as_ref().is_some_and(mount::is_mountpoint) {
        return Err(Error::new(Errno::EBUSY));
    }
    // A directory changing parents gets a new "..": write access to it.
    if src.is_dir() && !same_inode(&old.dir, &new.dir) {
        cred.check(&*src, MAY_WRITE)?;
    }
    old.dir.rename(old_name, &new.dir, new_name, flags)
}

/// renameat2(2) with RENAME_EXCHANGE: both names must exist; each moves
/// into the other's place, with the checks a rename in each direction needs.
fn exchange(
    fs: &FsContext,
    old: &Parent,
    old_name: &str,
    src: &Arc<dyn Inode>,
    new: &Parent,
    new_name: &str,
    flags: RenameFlags,
) -> Result<()> {
    let dst = new.dir.lookup(new_name)?;
    if (old.trailing_slash && !src.is_dir()) || (new.trailing_slash && !dst.is_dir()) {
        return Err(Error::new(Errno::ENOTDIR));
    }
    let cred = fs.cred();
    cred.check_delete(&*old.dir, &**src)?;
    cred.check_delete(&*new.dir, &*dst)?;
    if mount::is_mountpoint(src) || mount::is_mountpoint(&dst) {
        return Err(Error::new(Errno::EBUSY));
    }
    if !same_inode(&old.dir, &new.dir) {
        for node in [src, &dst] {
            if node.is_dir() {
                cred.check(&**node, MAY_WRITE)?;
            }
        }
    }
    old.dir.rename(old_name, &new.dir, new_name, flags)
}

/// open(2) with O_TMPFILE: an unnamed regular file in the directory `path`
/// names, which linkat(2) can name later unless O_EXCL is given. EINVAL
/// without write access or with O_CREAT (build_open_flags), ENOTDIR if
/// `path` is not a directory, EOPNOTSUPP if its file system cannot.
pub fn open_tmpfile(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    flags: u32,
    mode: u32,
) -> Result<Arc<File>> {
    let writes = matches!(flags & O_ACCMODE, O_WRONLY | O_RDWR);
    if flags & (O_TMPFILE | O_CREAT) != O_TMPFILE || !writes {
        return Err(Error::new(Errno::EINVAL));
    }
    let dir = path::lookup(fs, start, path, true)?;
    if !dir.is_dir() {
        return Err(Error::new(Errno::ENOTDIR));
    }
    mount::check_writable(&dir)?;
    fs.cred().check(&*dir, MAY_WRITE | MAY_EXEC)?;
    let node = NewNode {
        kind: NodeKind::Regular,
        perm: mode & 0o7777 & !fs.umask(),
        uid: fs.cred().uid,
        gid: fs.cred().gid,
    };
    let node = dir.create_tmpfile(node, flags & O_EXCL == 0)?;
    let access = super::WriteAccess::get(&*node)?;
    let file = File::new(node, None, flags & !O_TMPFILE);
    file.hold_write_access(access);
    let (dir_part, name) = (dir, alloc::format!("#{}", file.node().metadata().ino));
    file.set_origin(dir_part, name);
    Ok(file)
}
