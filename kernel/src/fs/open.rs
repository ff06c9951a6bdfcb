//! open(2): resolve or create the file, apply O_TRUNC, pick its operations.

use alloc::string::String;
use alloc::sync::Arc;

use super::FsContext;
use super::devices;
use super::file::*;
use super::inode::{FileType, Inode, NewNode, NodeKind};
use super::path::{self, Found, Last, MAX_SYMLINKS};
use super::perm::{MAY_EXEC, MAY_READ, MAY_WRITE};
use crate::error::{Errno, Error, Result};

/// Opens `path` (relative ones from `start`) with open(2) `flags`; `mode`
/// is the permission of a file O_CREAT creates (before the umask).
pub fn open(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    flags: u32,
    mode: u32,
) -> Result<Arc<File>> {
    if flags & (O_TMPFILE & !O_DIRECTORY) != 0 {
        return super::namespace::open_tmpfile(fs, start, path, flags, mode);
    }
    let path_only = flags & O_PATH != 0;
    if flags & O_CREAT != 0 && flags & O_DIRECTORY != 0 && !path_only {
        return Err(Error::new(Errno::EINVAL));
    }
    let follow = flags & O_NOFOLLOW == 0;
    let (found, created) = if flags & O_CREAT != 0 && !path_only {
        open_or_create(fs, start, path, flags, mode)?
    } else {
        (path::lookup_found(fs, start, path, follow)?, false)
    };
    let Found { node, parent, file } = found;
    if let Some(open) = file.filter(|_| !path_only) {
        return reopen(fs, node, &open, flags);
    }
    let file = open_node(fs, node, created, flags)?;
    if let Some((dir, name)) = parent
        && !file.node().is_dir()
    {
        file.set_origin(dir, name);
    }
    Ok(file)
}

/// Opens the file a descriptor's /proc link led to: a stream (pipe,
/// terminal, eventfd ...) is shared, as Linux reopens the same pipe; a
/// file is opened afresh, keeping the name it was opened under. EACCES for
/// an access mode the descriptor does not have on a stream.
fn reopen(fs: &FsContext, node: Arc<dyn Inode>, open: &Arc<File>, flags: u32) -> Result<Arc<File>> {
    let Some(ops) = open.ops() else {
        let file = open_node(fs, node, false, flags)?;
        if let Some((dir, name)) = open.origin() {
            file.set_origin(dir.clone(), name.clone());
        }
        return Ok(file);
    };
    let reads = matches!(flags & O_ACCMODE, O_RDONLY | O_RDWR);
    let writes = matches!(flags & O_ACCMODE, O_WRONLY | O_RDWR);
    if (reads && !open.can_read()) || (writes && !open.can_write()) {
        return Err(Error::new(Errno::EACCES));
    }
    Ok(File::new(node, Some(ops.clone()), flags))
}

/// The open part of open(2), once the path is resolved (or created).
fn open_node(fs: &FsContext, node: Arc<dyn Inode>, created: bool, flags: u32) -> Result<Arc<File>> {
    let path_only = flags & O_PATH != 0;
    let file_type = node.file_type();
    if flags & O_DIRECTORY != 0 && file_type != FileType::Directory {
        // O_NOFOLLOW|O_DIRECTORY on a symlink: ENOTDIR, as on Linux.
        return Err(Error::new(Errno::ENOTDIR));
    }
    if path_only {
        // O_PATH keeps only these flags (open(2)).
        return Ok(File::new(
            node,
            None,
            flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW),
        ));
    }
    let writes = matches!(flags & O_ACCMODE, O_WRONLY | O_RDWR);
    // Linux's may_open: a device on a nodev mount, then a regular file
    // to be changed on a read-only one, before the permission check.
    match file_type {
        FileType::CharDevice | FileType::BlockDevice if !super::mount::allows_devices(&node) => {
            return Err(Error::new(Errno::EACCES));
        }
        FileType::Regular if writes || flags & O_TRUNC != 0 => {
            super::mount::check_writable(&node)?;
        }
        _ => {}
    }
    if !created {
        let reads = matches!(flags & O_ACCMODE, O_RDONLY | O_RDWR);
        let want = if reads { MAY_READ } else { 0 }
            | if writes || flags & O_TRUNC != 0 {
                MAY_WRITE
            } else {
                0
            };
        if file_type != FileType::Symlink && !(file_type == FileType::Directory && writes) {
            fs.cred().check(&*node, want)?;
        }
    }
    node.check_open()?;
    // O_NOATIME: only the owner (or CAP_FOWNER) may ask (open(2), EPERM).
    if flags & O_NOATIME != 0 && !fs.cred().owns(&node.metadata()) {
        return Err(Error::new(Errno::EPERM));
    }
    let ops = match file_type {
        FileType::Symlink => return Err(Error::new(Errno::ELOOP)),
        FileType::Directory if writes || flags & O_TRUNC != 0 => {
            return Err(Error::new(Errno::EISDIR));
        }
        FileType::Directory => None,
        FileType::Regular => {
            // A writer, or a truncation, of a running program: ETXTBSY.
            let access = if writes || flags & O_TRUNC != 0 { Some(super::WriteAccess::get(&*node)?) } else { None };
            if flags & O_TRUNC != 0 && !created {
                node.resize(0)?;
            }
            let file = File::new(node, None, flags);
            if let Some(access) = access.filter(|_| writes) {
                file.hold_write_access(access);
            }
            return Ok(file);
        }
        FileType::CharDevice => Some(devices::char_device(node.metadata().rdev)?),
        FileType::Fifo => Some(super::fifo::open_fifo(&node, flags)?),
        FileType::BlockDevice => {
            let dev = crate::block::devfile::open(node)?;
            return Ok(File::new(dev, None, flags));
        }
        FileType::Socket => {
            return Err(Error::with_message(
                Errno::ENXIO,
                "no driver for this kind of file",
            ));
        }
    };
    Ok(File::new(node, ops, flags))
}

/// The O_CREAT part of open: returns what was found or created, and
/// whether it was created.
fn open_or_create(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    flags: u32,
    mode: u32,
) -> Result<(Found, bool)> {
    let mut parent = path::lookup_parent(fs, start, path)?;
    let mut links = 0;
    loop {
        let name = match &parent.last {
            Last::Name(name) => String::from(name.as_str()),
            // "/", "." and "..": an existing directory.
            _ => return Err(Error::new(Errno::EISDIR)),
        };
        match parent.dir.lookup(&name) {
            Ok(_) if flags & O_EXCL != 0 => return Err(Error::new(Errno::EEXIST)),
            Ok(node) if node.is_symlink() => {
                if flags & O_NOFOLLOW != 0 {
                    return Err(Error::new(Errno::ELOOP));
                }
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(Error::new(Errno::ELOOP));
                }
                fs.cred().may_follow_link(&*parent.dir, &*node)?;
                if let Some(magic) = node.follow_magic() {
                    let magic = magic?;
                    let found = Found {
                        node: magic.node,
                        parent: None,
                        file: magic.file,
                    };
                    return Ok((found, false));
                }
                // A dangling link creates its target (open(2), O_CREAT).
                let target = node.read_link()?;
                let trailing = parent.trailing_slash;
                parent = path::lookup_parent(fs, &parent.dir, &target)?;
                parent.trailing_slash |= trailing;
            }
            // O_CREAT never opens a directory (open(2), EISDIR).
            Ok(node) if node.is_dir() => return Err(Error::new(Errno::EISDIR)),
            Ok(node) => {
                if parent.trailing_slash {
                    return Err(Error::new(Errno::ENOTDIR));
                }
                let found = Found {
                    node,
                    parent: Some((parent.dir, name)),
                    file: None,
                };
                return Ok((found, false));
            }
            Err(e) if e.errno() == Errno::ENOENT => {
                if parent.trailing_slash {
                    return Err(Error::new(Errno::EISDIR));
                }
                super::mount::check_writable(&parent.dir)?;
                fs.cred().check(&*parent.dir, MAY_WRITE | MAY_EXEC)?;
                let perm = mode & 0o7777 & !fs.umask();
                let cred = fs.cred();
                let node = NewNode {
                    kind: NodeKind::Regular,
                    perm,
                    uid: cred.uid,
                    gid: cred.gid,
                };
                match parent.dir.create(&name, node) {
                    Ok(node) => {
                        let found = Found {
                            node,
                            parent: Some((parent.dir, name)),
                            file: None,
                        };
                        return Ok((found, true));
                    }
                    // Someone else created it meanwhile: open theirs.
                    Err(e) if e.errno() == Errno::EEXIST && flags & O_EXCL == 0 => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}
