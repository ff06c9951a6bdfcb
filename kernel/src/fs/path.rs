//! Path resolution (path_resolution(7)).
//!
//! A path is walked one component at a time from the process's root (for an
//! absolute path) or a starting directory (the cwd or a dirfd). Symbolic
//! links in the middle of a path are always followed; the last component's
//! link only when the caller asks. At most [`MAX_SYMLINKS`] links are
//! followed per resolution (ELOOP beyond). ".." never climbs above the
//! process's root. A trailing slash requires the result to be a directory
//! (and so follows a final symlink).
//!
//! The walker keeps the components still to visit on a stack, pushing a
//! link's target in front of the rest, so link chains need no recursion.

use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::inode::{FileType, Inode, same_inode};
use super::perm::{Cred, MAY_EXEC};
use super::ramfs::NAME_MAX;
use super::{File, FsContext};
use super::{mount, name};
use crate::error::{Errno, Error, Result};

/// Longest chain of symbolic links followed in one resolution (Linux's MAXSYMLINKS).
pub const MAX_SYMLINKS: u32 = 40;
/// Longest path, including the terminating NUL (PATH_MAX).
pub const PATH_MAX: usize = 4096;

/// The final component of a path, as the parent-resolving calls see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Last {
    /// The path was "/" (or only slashes): there is no name.
    Root,
    Dot,
    DotDot,
    Name(String),
}

/// The directory holding a path's final component, and that component.
pub struct Parent {
    pub dir: Arc<dyn Inode>,
    pub last: Last,
    /// The path ended in '/': the final component must be a directory.
    pub trailing_slash: bool,
}

struct Walk<'a> {
    root: &'a Arc<dyn Inode>,
    cred: &'a Cred,
    cur: Arc<dyn Inode>,
    /// Components still to visit, the next one last.
    rest: Vec<String>,
    must_be_dir: bool,
    links: u32,
    /// The open file a final magic link led to.
    file: Option<Arc<File>>,
    /// Whether magic links lead to their inodes (else they are followed
    /// by their text, like any link).
    magic: bool,
}

impl<'a> Walk<'a> {
    fn new(fs: &'a FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::new(Errno::ENOENT));
        }
        if name::user_len(path) >= PATH_MAX {
            return Err(Error::new(Errno::ENAMETOOLONG));
        }
        let mut walk = Walk {
            root: fs.root(),
            cred: fs.cred(),
            cur: start.clone(),
            rest: Vec::new(),
            must_be_dir: path.ends_with('/'),
            links: 0,
            file: None,
            magic: true,
        };
        walk.push(path)?;
        if walk.cur.file_type() != FileType::Directory {
            return Err(Error::new(Errno::ENOTDIR));
        }
        Ok(walk)
    }

    /// Puts `path`'s components in front of the remaining ones; an absolute
    /// path restarts from the root.
    fn push(&mut self, path: &str) -> Result<()> {
        if path.starts_with('/') {
            self.cur = self.root.clone();
        }
        let first = self.rest.len();
        for comp in path.split('/').filter(|c| !c.is_empty()) {
            if name::user_len(comp) > NAME_MAX {
                return Err(Error::new(Errno::ENAMETOOLONG));
            }
            self.rest.push(comp.to_string());
        }
        self.rest[first..].reverse();
        Ok(())
    }

    /// Looks up one component in the current directory, which the caller
    /// must be allowed to search.
    fn step(&self, name: &str) -> Result<Arc<dyn Inode>> {
        self.cred.check(&*self.cur, MAY_EXEC)?;
        match name {
            "." => Ok(self.cur.clone()),
            ".." => parent_of(self.root, &self.cur),
            _ => Ok(mount::covering(self.cur.lookup(name)?)),
        }
    }

    /// Continues with the target of the symlink `link`, found in
    /// `self.cur`: a magic link's inode is returned (and its open file
    /// kept), an ordinary link's target is pushed in front of the rest.
    fn follow(&mut self, link: &Arc<dyn Inode>) -> Result<Option<Arc<dyn Inode>>> {
        self.links += 1;
        if self.links > MAX_SYMLINKS {
            return Err(Error::new(Errno::ELOOP));
        }
        self.cred.may_follow_link(&*self.cur, &**link)?;
        // (Asking a link for its magic target computes it: only when
        // magic links are taken.)
        if self.magic
            && let Some(magic) = link.follow_magic()
        {
            let magic = magic?;
            self.file = magic.file;
            return Ok(Some(magic.node));
        }
        let target = link.read_link()?;
        if target.is_empty() {
            return Err(Error::new(Errno::ENOENT));
        }
        if self.rest.is_empty() && target.ends_with('/') {
            self.must_be_dir = true;
        }
        self.push(&target)?;
        Ok(None)
    }

    /// Walks every component but the last, which stays on the stack.
    fn walk_to_parent(&mut self) -> Result<()> {
        while self.rest.len() > 1 {
            let Some(name) = self.rest.pop() else { break };
            let next = self.step(&name)?;
            match next.file_type() {
                FileType::Directory => self.cur = next,
                FileType::Symlink => {
                    if let Some(dir) = self.follow(&next)? {
                        if !dir.is_dir() {
                            return Err(Error::new(Errno::ENOTDIR));
                        }
                        self.cur = dir;
                        self.file = None;
                    }
                }
                _ => return Err(Error::new(Errno::ENOTDIR)),
            }
        }
        Ok(())
    }

    fn resolve(mut self, follow: bool) -> Result<Found> {
        loop {
            self.walk_to_parent()?;
            let Some(name) = self.rest.pop() else {
                return Ok(Found {
                    node: self.cur,
                    parent: None,
                    file: None,
                });
            };
            let mut node = self.step(&name)?;
            let mut parent = (name != "." && name != "..").then_some((self.cur.clone(), name));
            if node.file_type() == FileType::Symlink && (follow || self.must_be_dir) {
                match self.follow(&node)? {
                    Some(target) => {
                        node = target;
                        parent = None;
                    }
                    None => continue,
                }
            }
            if self.must_be_dir && node.file_type() != FileType::Directory {
                return Err(Error::new(Errno::ENOTDIR));
            }
            return Ok(Found {
                node,
                parent,
                file: self.file,
            });
        }
    }

    fn parent(mut self) -> Result<Parent> {
        self.walk_to_parent()?;
        let last = match self.rest.pop() {
            None => Last::Root,
            Some(n) if n == "." => Last::Dot,
            Some(n) if n == ".." => Last::DotDot,
            Some(n) => Last::Name(n),
        };
        Ok(Parent {
            dir: self.cur,
            last,
            trailing_slash: self.must_be_dir,
        })
    }
}

/// The directory ".." names in `dir`: `dir` itself at the process's root,
/// and out of a mounted file system's root through its mount point.
fn parent_of(root: &Arc<dyn Inode>, dir: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
    let mut dir = dir.clone();
    // Stacked mounts are climbed one per step; the bound only guards the
    // walk against a cycle the mount table should never hold.
    for _ in 0..MAX_MOUNT_CLIMB {
        if same_inode(&dir, root) {
            return Ok(dir);
        }
        match mount::mounted_on(&dir) {
            Some(mountpoint) => dir = mountpoint,
            None => break,
        }
    }
    Ok(mount::covering(dir.lookup("..")?))
}

/// Most mount points ".." climbs through in one step.
const MAX_MOUNT_CLIMB: usize = 4096;

/// The directory and name an inode was found under.
pub type Origin = (Arc<dyn Inode>, String);

/// A resolved path: the inode, where it was found (None when the path
/// ended in "/", "." or "..", or in a magic link), and the open file a
/// final magic link (/proc/pid/fd/N) led to.
pub struct Found {
    pub node: Arc<dyn Inode>,
    pub parent: Option<Origin>,
    pub file: Option<Arc<File>>,
}

/// Resolves `path` (relative ones from `start`); `follow` follows a
/// symlink in the last component.
pub fn lookup(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    follow: bool,
) -> Result<Arc<dyn Inode>> {
    Ok(Walk::new(fs, start, path)?.resolve(follow)?.node)
}

/// [`lookup`] following magic links by their text. Resolving a magic
/// link's own target uses it, so that a link whose text leads back
/// through magic links (a process whose program is "/proc/self/exe")
/// ends in ELOOP instead of recursing.
pub fn lookup_text_only(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
) -> Result<Arc<dyn Inode>> {
    let mut walk = Walk::new(fs, start, path)?;
    walk.magic = false;
    Ok(walk.resolve(true)?.node)
}

/// The absolute path, with every symbolic link resolved, of what `path`
/// names (realpath(3)), as `fs` sees it: for recording which program a
/// process runs (/proc/pid/exe).
pub fn canonical_path(fs: &FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<String> {
    // Magic links (/proc/self/exe) are followed by their text, so that the
    // result is a real path.
    let mut walk = Walk::new(fs, start, path)?;
    walk.magic = false;
    let found = walk.resolve(true)?;
    match found.parent {
        Some((dir, name)) => {
            let mut path = path_of(fs, &dir)?;
            if !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(&name);
            Ok(path)
        }
        None if found.node.is_dir() => path_of(fs, &found.node),
        None => Err(Error::new(Errno::ENOENT)),
    }
}

/// [`lookup`], also returning where the inode was found.
pub fn lookup_found(
    fs: &FsContext,
    start: &Arc<dyn Inode>,
    path: &str,
    follow: bool,
) -> Result<Found> {
    Walk::new(fs, start, path)?.resolve(follow)
}

/// Resolves all but the last component of `path`.
pub fn lookup_parent(fs: &FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<Parent> {
    Walk::new(fs, start, path)?.parent()
}

/// The absolute path of directory `dir` as seen from the process's root
/// (getcwd(2)): ENOENT if it was removed. Each step climbs ".." and finds
/// the child's name by its inode number in the parent's listing.
pub fn path_of(fs: &FsContext, dir: &Arc<dyn Inode>) -> Result<String> {
    let meta = dir.metadata();
    if meta.nlink == 0 {
        return Err(Error::with_message(Errno::ENOENT, "directory was removed"));
    }
    let mut names: Vec<String> = Vec::new();
    let mut cur = dir.clone();
    let mut cur_ino = meta.ino;
    let mut len = 1;
    while !same_inode(&cur, fs.root()) {
        if let Some(mountpoint) = mount::mounted_on(&cur) {
            cur_ino = mountpoint.metadata().ino;
            cur = mountpoint;
            continue;
        }
        let parent = cur.lookup("..")?;
        if same_inode(&parent, &cur) {
            // The top of a file system outside the process's root (after
            // chroot): Linux prefixes such paths with "(unreachable)".
            names.push(String::from("(unreachable)"));
            break;
        }
        let mut found = None;
        parent.read_dir(0, &mut |e| {
            if e.ino == cur_ino && e.name != "." && e.name != ".." {
                found = Some(e.name.to_string());
                return false;
            }
            true
        })?;
        let name = found.ok_or(Error::with_message(
            Errno::ENOENT,
            "directory not found in its parent",
        ))?;
        len += name.len() + 1;
        if len >= PATH_MAX {
            return Err(Error::new(Errno::ENAMETOOLONG));
        }
        names.push(name);
        cur_ino = parent.metadata().ino;
        cur = parent;
    }
    if names.is_empty() {
        return Ok(String::from("/"));
    }
    let mut path = String::with_capacity(len);
    for name in names.iter().rev() {
        path.push('/');
        path.push_str(name);
    }
    Ok(path)
}
