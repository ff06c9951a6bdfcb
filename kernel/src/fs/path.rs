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
use crate::caps::CAP_DAC_OVERRIDE;
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
    Name(Name),
}

/// Bytes of a final component held without an allocation.
const INLINE_NAME: usize = 55;

/// A path's final component as [`Last::Name`] holds it: inline when
/// short (almost always: unlink, mkdir, rename and the creating open then
/// make no allocation for it), on the heap otherwise. Derefs to `str`.
/// (Inline bytes past `len` are zeros, so the derived equality is the
/// names'.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    Inline { len: u8, buf: [u8; INLINE_NAME] },
    Heap(String),
}

impl Name {
    pub fn new(s: &str) -> Name {
        let mut buf = [0u8; INLINE_NAME];
        match buf.get_mut(..s.len()) {
            Some(b) => {
                b.copy_from_slice(s.as_bytes());
                Name::Inline {
                    len: s.len() as u8,
                    buf,
                }
            }
            None => Name::Heap(s.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // The bytes were copied from a `str` whole: always UTF-8.
            Name::Inline { len, buf } => buf
                .get(..usize::from(*len))
                .and_then(|b| core::str::from_utf8(b).ok())
                .unwrap_or(""),
            Name::Heap(s) => s,
        }
    }
}

impl core::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// The directory holding a path's final component, and that component.
pub struct Parent {
    pub dir: Arc<dyn Inode>,
    pub last: Last,
    /// The path ended in '/': the final component must be a directory.
    pub trailing_slash: bool,
}

/// Most texts a walk reads components from: the path and the targets of
/// the links it follows.
const MAX_TEXTS: usize = MAX_SYMLINKS as usize + 1;

/// Where a walk's remaining components are: the rest of one text, from a
/// byte offset. The rest always starts with a component (never a slash)
/// and the texts above it on the stack come first.
#[derive(Clone, Copy)]
struct Segment {
    text: u8,
    at: u16,
}

/// A path walk. Components are read in place from the path (and from
/// link targets, kept in `links`), so walking a path allocates nothing
/// per component: only a followed link's target is a new string.
struct Walk<'a> {
    root: &'a Arc<dyn Inode>,
    cred: &'a Cred,
    cur: Arc<dyn Inode>,
    /// Text 0: the path being resolved.
    path: &'a str,
    /// Texts 1..: the targets of the links followed so far.
    links: Vec<String>,
    /// Where the rest of the path (text 0) starts, if any is left: the
    /// bottom of the stack of parts still to visit.
    path_at: Option<u16>,
    /// The parts of link targets still to visit, above the path's, the
    /// next one last (empty, so not allocated, until a link is followed).
    link_segs: Vec<Segment>,
    must_be_dir: bool,
    links_followed: u32,
    /// The open file a final magic link led to.
    file: Option<Arc<File>>,
    /// Whether magic links lead to their inodes (else they are followed
    /// by their text, like any link).
    magic: bool,
}

/// The byte range of the first component of `rest` (which starts with
/// one), and whether another component follows it.
fn first_component(rest: &str) -> (usize, bool) {
    // Bytes, not chars: '/' is never part of a longer UTF-8 sequence.
    let bytes = rest.as_bytes();
    match bytes.iter().position(|&b| b == b'/') {
        Some(end) => (end, bytes[end..].iter().any(|&b| b != b'/')),
        None => (rest.len(), false),
    }
}

/// How many slashes `text` starts with.
fn leading_slashes(text: &str) -> usize {
    text.bytes().take_while(|&b| b == b'/').count()
}

impl<'a> Walk<'a> {
    fn new(fs: &'a FsContext, start: &Arc<dyn Inode>, path: &'a str) -> Result<Self> {
        if path.is_empty() {
            return Err(Error::new(Errno::ENOENT));
        }
        // (A stored path is never shorter in bytes than user space sees it.)
        if path.len() >= PATH_MAX && name::user_len(path) >= PATH_MAX {
            return Err(Error::new(Errno::ENAMETOOLONG));
        }
        let mut walk = Walk {
            root: fs.root(),
            cred: fs.cred(),
            // An absolute path starts at the root (as `push` reports).
            cur: if path.starts_with('/') {
                fs.root().clone()
            } else {
                start.clone()
            },
            path,
            links: Vec::new(),
            path_at: None,
            link_segs: Vec::new(),
            must_be_dir: path.ends_with('/'),
            links_followed: 0,
            file: None,
            magic: true,
        };
        walk.push(0)?;
        if walk.cur.file_type() != FileType::Directory {
            return Err(Error::new(Errno::ENOTDIR));
        }
        Ok(walk)
    }

    fn text(&self, text: u8) -> &str {
        match text {
            0 => self.path,
            n => self
                .links
                .get(usize::from(n) - 1)
                .map_or("", String::as_str),
        }
    }

    /// Puts the components of text `text` in front of the remaining ones;
    /// true if the text is absolute (the caller restarts from the root).
    /// Every component is checked against NAME_MAX first, as a whole path
    /// is.
    fn push(&mut self, text: u8) -> Result<bool> {
        let t = self.text(text);
        // (A text no longer than NAME_MAX cannot hold a longer name.)
        if t.len() > NAME_MAX && t.split('/').any(|c| name::user_len(c) > NAME_MAX) {
            return Err(Error::new(Errno::ENAMETOOLONG));
        }
        let skip = leading_slashes(t);
        let (absolute, empty) = (skip > 0, skip == t.len());
        // Texts are shorter than PATH_MAX (u16) and at most MAX_TEXTS.
        let at = u16::try_from(skip).map_err(|_| Error::new(Errno::ENAMETOOLONG))?;
        if !empty {
            if text == 0 {
                self.path_at = Some(at);
            } else if self.link_segs.len() + 1 < MAX_TEXTS {
                self.link_segs.push(Segment { text, at });
            } else {
                return Err(Error::new(Errno::ELOOP));
            }
        }
        Ok(absolute)
    }

    /// Whether no component is left to visit.
    fn done(&self) -> bool {
        self.link_segs.is_empty() && self.path_at.is_none()
    }

    /// Takes the next component: (text, start, end).
    fn next(&mut self) -> Option<(u8, usize, usize)> {
        let s = match self.link_segs.last() {
            Some(s) => *s,
            None => Segment {
                text: 0,
                at: self.path_at?,
            },
        };
        let start = usize::from(s.at);
        let rest = &self.text(s.text)[start..];
        let (len, more) = first_component(rest);
        let end = start + len;
        if more {
            let skip = leading_slashes(&rest[len..]);
            // Within the text, so within u16 as the text is.
            let at = (end + skip) as u16;
            match self.link_segs.last_mut() {
                Some(top) => top.at = at,
                None => self.path_at = Some(at),
            }
        } else if self.link_segs.pop().is_none() {
            self.path_at = None;
        }
        Some((s.text, start, end))
    }

    /// Looks up one component in the current directory, which the caller
    /// must be allowed to search; true with an inode the directory's own
    /// lookup found, whose mounts the caller applies ([`covered`]) once it
    /// knows the inode is a directory.
    fn step(&self, name: &str) -> Result<(Arc<dyn Inode>, bool)> {
        // `cur` is a directory, which CAP_DAC_OVERRIDE may always search
        // (Cred::may): then its mode need not be read.
        if !self.cred.capable(CAP_DAC_OVERRIDE) {
            self.cred.check(&*self.cur, MAY_EXEC)?;
        }
        match name {
            "." => Ok((self.cur.clone(), false)),
            ".." => Ok((parent_of(self.root, &self.cur)?, false)),
            _ => Ok((self.cur.lookup(name)?, true)),
        }
    }

    /// [`Walk::step`] for the component at `text[start..end]`.
    fn step_at(&self, (text, start, end): (u8, usize, usize)) -> Result<(Arc<dyn Inode>, bool)> {
        self.step(&self.text(text)[start..end])
    }

    /// Continues with the target of the symlink `link`, found in
    /// `self.cur`: a magic link's inode is returned (and its open file
    /// kept), an ordinary link's target is pushed in front of the rest.
    fn follow(&mut self, link: &Arc<dyn Inode>) -> Result<Option<Arc<dyn Inode>>> {
        self.links_followed += 1;
        if self.links_followed > MAX_SYMLINKS {
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
        if self.done() && target.ends_with('/') {
            self.must_be_dir = true;
        }
        if self.links.len() + 1 >= MAX_TEXTS {
            return Err(Error::new(Errno::ELOOP));
        }
        self.links.push(target);
        // At most MAX_SYMLINKS links, so the index fits.
        if self.push(self.links.len() as u8)? {
            self.cur = self.root.clone();
        }
        Ok(None)
    }

    /// Walks every component but the last, which it returns (None when no
    /// component is left: the path, or the rest of it, was only slashes).
    /// Each component is scanned once: the last is the one after which
    /// the stack is empty.
    fn walk_to_parent(&mut self) -> Result<Option<(u8, usize, usize)>> {
        loop {
            let Some(comp) = self.next() else {
                return Ok(None);
            };
            if self.done() {
                return Ok(Some(comp));
            }
            let (next, found) = self.step_at(comp)?;
            match next.file_type() {
                FileType::Directory => self.cur = covered(next, found),
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
    }

    /// Resolves the whole path; `origin` asks for where the result was
    /// found (which costs a copy of its name).
    fn resolve(mut self, follow: bool, origin: bool) -> Result<Found> {
        loop {
            let Some(comp) = self.walk_to_parent()? else {
                return Ok(Found {
                    node: self.cur,
                    parent: None,
                    file: None,
                });
            };
            let (mut node, found) = self.step_at(comp)?;
            let name = &self.text(comp.0)[comp.1..comp.2];
            let mut parent = (origin && name != "." && name != "..")
                .then(|| (self.cur.clone(), name.to_string()));
            let file_type = node.file_type();
            if file_type == FileType::Directory {
                node = covered(node, found);
            } else if file_type == FileType::Symlink && (follow || self.must_be_dir) {
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
        let last = match self.walk_to_parent()? {
            None => Last::Root,
            Some((t, s, e)) => match &self.text(t)[s..e] {
                "." => Last::Dot,
                ".." => Last::DotDot,
                n => Last::Name(Name::new(n)),
            },
        };
        Ok(Parent {
            dir: self.cur,
            last,
            trailing_slash: self.must_be_dir,
        })
    }
}

/// `dir` as the walk goes on from it: the root mounted on it if `found` (a
/// directory's lookup found it), else `dir` (".", "..", already covered).
/// Only directories are mount points (`mount::mount` refuses anything
/// else), so the walk asks only for those.
fn covered(dir: Arc<dyn Inode>, found: bool) -> Arc<dyn Inode> {
    if found { mount::covering(dir) } else { dir }
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
    Ok(Walk::new(fs, start, path)?.resolve(follow, false)?.node)
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
    Ok(walk.resolve(true, false)?.node)
}

/// The absolute path, with every symbolic link resolved, of what `path`
/// names (realpath(3)), as `fs` sees it: for recording which program a
/// process runs (/proc/pid/exe).
pub fn canonical_path(fs: &FsContext, start: &Arc<dyn Inode>, path: &str) -> Result<String> {
    // Magic links (/proc/self/exe) are followed by their text, so that the
    // result is a real path.
    let mut walk = Walk::new(fs, start, path)?;
    walk.magic = false;
    let found = walk.resolve(true, true)?;
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
    Walk::new(fs, start, path)?.resolve(follow, true)
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
