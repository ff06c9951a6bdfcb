//! Building blocks of synthetic file systems (procfs, sysfs): files whose
//! contents are generated when read, symbolic links whose target is
//! computed when read, and directories whose entries are computed when
//! listed or looked up.
//!
//! Such file systems hand out a fresh inode object on every lookup; the VFS
//! identifies inodes by (device, inode number), so each node's number must
//! be stable for as long as the thing it describes exists. Nothing here
//! holds a lock while it calls a generator, so generators may take any
//! lock (process table, file tables, address spaces).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use frame::sync::{SpinLock, level};

use super::inode::{
    DirEntry, FileType, Inode, MagicLink, Metadata, NewNode, RenameFlags, Timespec,
};
use crate::error::{Errno, Error, Result};

/// Identity, owner and permissions of a synthetic node.
#[derive(Clone, Copy, Debug)]
pub struct Attr {
    pub dev: u64,
    pub ino: u64,
    pub perm: u32,
    pub uid: u32,
    pub gid: u32,
    pub time: Timespec,
}

impl Attr {
    /// A node owned by root, stamped with the boot time.
    pub fn root_owned(dev: u64, ino: u64, perm: u32) -> Attr {
        Attr {
            dev,
            ino,
            perm,
            uid: 0,
            gid: 0,
            time: boot_time(),
        }
    }

    pub fn metadata(&self, file_type: FileType, nlink: u32, size: u64) -> Metadata {
        Metadata {
            dev: self.dev,
            ino: self.ino,
            file_type,
            perm: self.perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            size,
            blksize: 1024,
            blocks: 0,
            atime: self.time,
            mtime: self.time,
            ctime: self.time,
        }
    }
}

/// The wall-clock time the system booted.
pub fn boot_time() -> Timespec {
    let ns = crate::time::realtime_at_boot_ns();
    Timespec {
        sec: (ns / 1_000_000_000) as i64,
        nsec: (ns % 1_000_000_000) as u32,
    }
}

/// Produces a file's contents.
pub type Generate = Box<dyn Fn() -> Result<Vec<u8>> + Send + Sync>;

/// Decides whether the caller may open a file (see [`Inode::check_open`]).
pub type OpenCheck = Box<dyn Fn() -> Result<()> + Send + Sync>;

/// The size a generated file reports to the VFS's read path: its real
/// length is unknown until it is generated, so readers read until a read
/// returns 0 (`stat` reports 0, as for Linux's /proc files).
pub const UNKNOWN_SIZE: usize = i64::MAX as usize;

/// A read-only file whose contents are generated on demand. Like Linux's
/// seq_file, a read at offset 0 generates a fresh snapshot and reads at
/// other offsets continue in the snapshot, so a reader that reads the file
/// in pieces sees one consistent text.
pub struct GenFile {
    attr: Attr,
    generate: Generate,
    write: Option<Store>,
    open_check: Option<OpenCheck>,
    snapshot: SpinLock<Option<Arc<Vec<u8>>>, { level::INODE }>,
}

/// Takes what a write(2) to a generated file says (each write on its own).
pub type Store = Box<dyn Fn(&[u8]) -> Result<()> + Send + Sync>;

impl GenFile {
    pub fn new(attr: Attr, generate: Generate) -> Arc<GenFile> {
        Arc::new(GenFile {
            attr,
            generate,
            write: None,
            open_check: None,
            snapshot: SpinLock::new(None),
        })
    }

    /// A generated file that open(2) first asks `check` about.
    pub fn checked(attr: Attr, generate: Generate, check: OpenCheck) -> Arc<GenFile> {
        Arc::new(GenFile {
            attr,
            generate,
            write: None,
            open_check: Some(check),
            snapshot: SpinLock::new(None),
        })
    }

    /// A generated file that writes change (/proc/pid/comm).
    pub fn writable(attr: Attr, generate: Generate, write: Store) -> Arc<GenFile> {
        Arc::new(GenFile {
            attr,
            generate,
            write: Some(write),
            open_check: None,
            snapshot: SpinLock::new(None),
        })
    }
}

impl Inode for GenFile {
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        let cached = if offset == 0 {
            None
        } else {
            self.snapshot.lock().clone()
        };
        let data = match cached {
            Some(data) => data,
            None => {
                let data = Arc::new((self.generate)()?);
                *self.snapshot.lock() = Some(data.clone());
                data
            }
        };
        let Some(rest) = data.get(offset..) else {
            return Ok(0);
        };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }

    fn size(&self) -> usize {
        UNKNOWN_SIZE
    }

    fn metadata(&self) -> Metadata {
        self.attr.metadata(FileType::Regular, 1, 0)
    }

    fn check_open(&self) -> Result<()> {
        self.open_check.as_ref().map_or(Ok(()), |check| check())
    }

    fn file_type(&self) -> FileType {
        FileType::Regular
    }

    fn write_at(&self, _offset: usize, buf: &[u8]) -> Result<usize> {
        match &self.write {
            Some(store) => {
                store(buf)?;
                Ok(buf.len())
            }
            // What Linux's proc_reg_write answers for entries without a
            // writer.
            None => Err(Error::new(Errno::EIO)),
        }
    }

    fn append(&self, buf: &[u8]) -> Result<(usize, usize)> {
        let n = self.write_at(0, buf)?;
        Ok((n, n))
    }

    /// O_TRUNC on a writable file (`echo 1 > /proc/sys/...`) changes
    /// nothing, as on Linux; the others cannot be truncated.
    fn resize(&self, _size: usize) -> Result<()> {
        if self.write.is_some() { Ok(()) } else { Err(Error::new(Errno::EACCES)) }
    }

    fn can_mmap(&self) -> bool {
        false
    }
}

/// Produces a symbolic link's target.
pub type Target = Box<dyn Fn() -> Result<String> + Send + Sync>;

/// Produces what a magic link leads to.
pub type Magic = Box<dyn Fn() -> Result<MagicLink> + Send + Sync>;

/// A symbolic link whose target is computed each time it is read; a magic
/// one also leads straight to an inode when followed.
pub struct GenLink {
    attr: Attr,
    target: Target,
    magic: Option<Magic>,
}

impl GenLink {
    pub fn new(attr: Attr, target: Target) -> Arc<GenLink> {
        Arc::new(GenLink {
            attr,
            target,
            magic: None,
        })
    }

    pub fn magic(attr: Attr, target: Target, magic: Magic) -> Arc<GenLink> {
        Arc::new(GenLink {
            attr,
            target,
            magic: Some(magic),
        })
    }
}

impl Inode for GenLink {
    fn read_at(&self, _offset: usize, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn size(&self) -> usize {
        0
    }

    fn metadata(&self) -> Metadata {
        self.attr.metadata(FileType::Symlink, 1, 0)
    }

    fn file_type(&self) -> FileType {
        FileType::Symlink
    }

    fn read_link(&self) -> Result<String> {
        (self.target)()
    }

    fn follow_magic(&self) -> Option<Result<MagicLink>> {
        self.magic.as_ref().map(|m| m())
    }
}

/// One entry of a synthetic directory listing. `key` orders the listing
/// and is the position a listing resumes from: it must be unique, at
/// least [`FIRST_KEY`], and stay the same while the entry exists (a pid
/// directory uses its pid), so that entries coming and going between two
/// getdents calls neither repeat nor hide the others.
pub struct Item {
    pub key: u64,
    pub name: String,
    pub ino: u64,
    pub file_type: FileType,
}

/// The smallest key: cookies 0 and 1 are "." and "..".
pub const FIRST_KEY: u64 = 2;

/// What a synthetic directory computes.
pub trait DirSource: Send + Sync + 'static {
    /// The entries (without "." and ".."), in increasing key order.
    fn list(&self) -> Result<Vec<Item>>;
    /// The inode `name` (never "." or "..") names in `this` directory:
    /// ENOENT if none.
    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>>;
    /// The directory ".." names in `this`; a file system's root returns
    /// `this`.
    fn parent(&self, this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>>;
}

/// A directory whose entries come from a [`DirSource`].
pub struct GenDir<S: DirSource> {
    attr: Attr,
    source: S,
    this: Weak<GenDir<S>>,
}

impl<S: DirSource> GenDir<S> {
    pub fn new(attr: Attr, source: S) -> Arc<GenDir<S>> {
        Arc::new_cyclic(|this| GenDir {
            attr,
            source,
            this: this.clone(),
        })
    }
}

impl<S: DirSource> GenDir<S> {
    fn this(&self) -> Result<Arc<dyn Inode>> {
        let this = self.this.upgrade().ok_or(Error::new(Errno::ENOENT))?;
        Ok(this)
    }
}

impl<S: DirSource> Inode for GenDir<S> {
    fn read_at(&self, _offset: usize, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::new(Errno::EISDIR))
    }

    fn size(&self) -> usize {
        0
    }

    fn metadata(&self) -> Metadata {
        self.attr.metadata(FileType::Directory, 2, 0)
    }

    fn file_type(&self) -> FileType {
        FileType::Directory
    }

    fn lookup(&self, name: &str) -> Result<Arc<dyn Inode>> {
        let this = self.this()?;
        match name {
            "." => Ok(this),
            ".." => self.source.parent(&this),
            _ => self.source.find(&this, name),
        }
    }

    fn read_dir(&self, cookie: u64, sink: &mut dyn FnMut(DirEntry<'_>) -> bool) -> Result<()> {
        if cookie == 0 {
            let dot = DirEntry {
                ino: self.attr.ino,
                name: ".",
                file_type: FileType::Directory,
                next_cookie: 1,
            };
            if !sink(dot) {
                return Ok(());
            }
        }
        if cookie <= 1 {
            let dotdot = DirEntry {
                ino: self.source.parent(&self.this()?)?.metadata().ino,
                name: "..",
                file_type: FileType::Directory,
                next_cookie: FIRST_KEY,
            };
            if !sink(dotdot) {
                return Ok(());
            }
        }
        for item in self.source.list()?.iter().filter(|i| i.key >= cookie) {
            let e = DirEntry {
                ino: item.ino,
                name: &item.name,
                file_type: item.file_type,
                next_cookie: item.key + 1,
            };
            if !sink(e) {
                break;
            }
        }
        Ok(())
    }

    // What Linux's /proc answers: names cannot be created, removed or
    // moved.
    fn create(&self, _name: &str, _node: NewNode) -> Result<Arc<dyn Inode>> {
        Err(Error::new(Errno::ENOENT))
    }

    fn link(&self, _name: &str, _target: &Arc<dyn Inode>) -> Result<()> {
        Err(Error::new(Errno::EXDEV))
    }

    fn unlink(&self, _name: &str) -> Result<()> {
        Err(Error::new(Errno::EPERM))
    }

    fn rmdir(&self, _name: &str) -> Result<()> {
        Err(Error::new(Errno::EPERM))
    }

    fn rename(
        &self,
        _old_name: &str,
        _new_dir: &Arc<dyn Inode>,
        _new_name: &str,
        _flags: RenameFlags,
    ) -> Result<()> {
        Err(Error::new(Errno::EXDEV))
    }
}

/// A node of a fixed tree (sysfs, /proc/sys): a directory with its
/// entries, or a file with its contents.
pub enum Node {
    Dir(&'static [(&'static str, Node)]),
    File(fn() -> String),
    /// A tunable: its value, and writable by root (mode 0644).
    Value(&'static crate::sysctl::Sysctl),
    /// A directory built when looked up, from (dev, ino, parent): its
    /// entries change at run time (/sys/block).
    Dynamic(fn(u64, u64, Arc<dyn Inode>) -> Arc<dyn Inode>),
}

/// The inode number of entry `name` of directory `parent` in a fixed tree:
/// a hash of the path, with the top bit set to keep it apart from numbers
/// a file system hands out otherwise (FNV-1a).
pub fn tree_ino(parent: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parent.to_le_bytes().iter().chain(name.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h | (1 << 63)
}

/// A directory of a fixed tree; `parent` is what ".." names (the
/// directory itself at a file system's root).
pub struct TreeDir {
    pub dev: u64,
    pub ino: u64,
    pub entries: &'static [(&'static str, Node)],
    pub parent: Option<Arc<dyn Inode>>,
    /// Permissions of the tree's directories and of its files.
    pub dir_perm: u32,
    pub file_perm: u32,
}

impl TreeDir {
    pub fn into_inode(self) -> Arc<dyn Inode> {
        let attr = Attr::root_owned(self.dev, self.ino, self.dir_perm);
        GenDir::new(attr, self)
    }
}

impl DirSource for TreeDir {
    fn list(&self) -> Result<Vec<Item>> {
        let items = self.entries.iter().zip(FIRST_KEY..);
        Ok(items
            .map(|((name, node), key)| Item {
                key,
                name: String::from(*name),
                ino: tree_ino(self.ino, name),
                file_type: match node {
                    Node::Dir(_) | Node::Dynamic(_) => FileType::Directory,
                    Node::File(_) | Node::Value(_) => FileType::Regular,
                },
            })
            .collect())
    }

    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let (_, node) = self
            .entries
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or(Error::new(Errno::ENOENT))?;
        let ino = tree_ino(self.ino, name);
        Ok(match node {
            Node::Dir(entries) => TreeDir {
                dev: self.dev,
                ino,
                entries,
                parent: Some(this.clone()),
                dir_perm: self.dir_perm,
                file_perm: self.file_perm,
            }
            .into_inode(),
            Node::File(f) => {
                let f = *f;
                let attr = Attr::root_owned(self.dev, ino, self.file_perm);
                GenFile::new(attr, Box::new(move || Ok(f().into_bytes())))
            }
            Node::Dynamic(make) => make(self.dev, ino, this.clone()),
            Node::Value(v) => {
                let v = *v;
                let attr = Attr::root_owned(self.dev, ino, 0o644);
                GenFile::writable(
                    attr,
                    Box::new(move || Ok(alloc::format!("{}\n", v.get()).into_bytes())),
                    Box::new(move |data| v.write_text(data)),
                )
            }
        })
    }

    fn parent(&self, this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone().unwrap_or_else(|| this.clone()))
    }
}
