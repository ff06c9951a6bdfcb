//! The ext2 file system's on-disk logic (revisions 0 and 1; 1, 2 and 4 KiB
//! blocks), independent of any kernel: superblock and group descriptors,
//! inodes, bitmaps and allocation, the indirect block map, directories,
//! links, symlinks, device nodes, rename and truncate.
//!
//! Storage is reached through [`BlockIo`], so the same code runs in the
//! kernel (over the block device's cache) and in host tests (over an image
//! file). Every value read from the disk is checked before it is used: a
//! damaged image yields [`Error::Corrupt`] (or [`Error::BadSuperblock`] at
//! mount), never a panic or an unbounded loop.
//!
//! Layout reference: the "Second Extended File System" documentation
//! (Poirier) and Linux's Documentation/filesystems/ext2.rst; the field
//! offsets are facts of the format.
//!
//! Concurrency: [`Fs`] takes `&mut self` for every change; the caller
//! serialises (the kernel holds one lock per mounted file system).

#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;

#[cfg(test)]
extern crate std;

mod alloc_map;
mod bmap;
mod dir;
mod fs;
mod inode;
mod namei;
mod names;
mod superblock;

pub use dir::DirEntry;
pub use fs::{ErrorsPolicy, Fs, MountOptions, StatFs};
pub use inode::{Attrs, DiskInode, FileKind};
pub use namei::{NewInode, SetAttr};
pub use superblock::Superblock;

/// Root directory inode number.
pub const ROOT_INO: u32 = 2;
/// Longest name in a directory entry.
pub const NAME_MAX: usize = 255;
/// Most hard links an inode may have (Linux's `EXT2_LINK_MAX`).
pub const LINK_MAX: u16 = 32000;

/// Why an operation failed. The kernel maps each to an errno
/// ([`Error::errno`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The device failed the request.
    Io,
    /// The superblock or group descriptors are unusable: mount fails.
    BadSuperblock(&'static str),
    /// The image uses a feature this implementation does not know.
    Unsupported(&'static str),
    /// A structure read from the disk is inconsistent.
    Corrupt(&'static str),
    NotFound,
    Exists,
    NotDir,
    IsDir,
    NotEmpty,
    NameTooLong,
    NoSpace,
    ReadOnly,
    TooManyLinks,
    FileTooBig,
    /// An argument the caller passed is invalid.
    Invalid,
}

impl Error {
    /// The Linux errno for this error. `at_mount` selects EUCLEAN for a
    /// corrupt structure found while mounting (EIO afterwards, as Linux).
    pub fn errno(self, at_mount: bool) -> i32 {
        match self {
            Error::Io => 5,
            Error::BadSuperblock(_) | Error::Unsupported(_) | Error::Invalid => 22,
            Error::Corrupt(_) if at_mount => 117,
            Error::Corrupt(_) => 5,
            Error::NotFound => 2,
            Error::Exists => 17,
            Error::NotDir => 20,
            Error::IsDir => 21,
            Error::NotEmpty => 39,
            Error::NameTooLong => 36,
            Error::NoSpace => 28,
            Error::ReadOnly => 30,
            Error::TooManyLinks => 31,
            Error::FileTooBig => 27,
        }
    }
}

pub type Result<T> = core::result::Result<T, Error>;

/// Byte-addressed storage holding the file system. Offsets and lengths are
/// multiples of 128 bytes (inodes) or of the block size; the implementation
/// must reject ranges past the end of the device with [`Error::Io`].
pub trait BlockIo {
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    fn write(&self, offset: u64, buf: &[u8]) -> Result<()>;
    /// Size of the device in bytes.
    fn size(&self) -> u64;
    /// The block at `offset..offset+len` was freed: a cache must drop its
    /// copy (and not write it back), because the block may next be written
    /// by another path (a file's data cache).
    fn forget(&self, _offset: u64, _len: usize) {}
}

pub(crate) fn le16(b: &[u8], off: usize) -> u16 {
    match b.get(off..off + 2) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}

pub(crate) fn le32(b: &[u8], off: usize) -> u32 {
    match b.get(off..off + 4) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

pub(crate) fn put16(b: &mut [u8], off: usize, v: u16) {
    if let Some(s) = b.get_mut(off..off + 2) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

pub(crate) fn put32(b: &mut [u8], off: usize, v: u32) {
    if let Some(s) = b.get_mut(off..off + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}
