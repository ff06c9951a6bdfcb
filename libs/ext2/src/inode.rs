//! The on-disk inode: raw bytes with typed accessors, so fields this code
//! does not interpret (extra fields of large inodes, osd fields) survive a
//! read-modify-write unchanged.

use crate::{le16, le32, put16, put32};

const I_MODE: usize = 0;
const I_UID: usize = 2;
const I_SIZE: usize = 4;
const I_ATIME: usize = 8;
const I_CTIME: usize = 12;
const I_MTIME: usize = 16;
const I_DTIME: usize = 20;
const I_GID: usize = 24;
const I_LINKS: usize = 26;
const I_BLOCKS: usize = 28;
const I_FLAGS: usize = 32;
const I_BLOCK: usize = 40;
const I_GENERATION: usize = 100;
const I_FILE_ACL: usize = 104;
const I_SIZE_HIGH: usize = 108;
const I_UID_HIGH: usize = 120;
const I_GID_HIGH: usize = 122;

pub const S_IFMT: u16 = 0o170000;
pub const S_IFSOCK: u16 = 0o140000;
pub const S_IFLNK: u16 = 0o120000;
pub const S_IFREG: u16 = 0o100000;
pub const S_IFBLK: u16 = 0o060000;
pub const S_IFDIR: u16 = 0o040000;
pub const S_IFCHR: u16 = 0o020000;
pub const S_IFIFO: u16 = 0o010000;

/// `EXT2_INDEX_FL`: an htree index hides in the directory's blocks. This
/// code keeps directories linear, so it clears the flag on any change.
pub const INDEX_FL: u32 = 0x1000;

/// Number of block pointers in `i_block`.
pub const N_BLOCKS: usize = 15;

/// What an inode is, with the device number of a device node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory,
    Symlink,
    CharDev { major: u32, minor: u32 },
    BlockDev { major: u32, minor: u32 },
    Fifo,
    Socket,
}

impl FileKind {
    pub fn mode_bits(self) -> u16 {
        match self {
            FileKind::Regular => S_IFREG,
            FileKind::Directory => S_IFDIR,
            FileKind::Symlink => S_IFLNK,
            FileKind::CharDev { .. } => S_IFCHR,
            FileKind::BlockDev { .. } => S_IFBLK,
            FileKind::Fifo => S_IFIFO,
            FileKind::Socket => S_IFSOCK,
        }
    }

    /// The directory entry file type (`EXT2_FT_*`).
    pub fn dirent_type(self) -> u8 {
        match self {
            FileKind::Regular => 1,
            FileKind::Directory => 2,
            FileKind::CharDev { .. } => 3,
            FileKind::BlockDev { .. } => 4,
            FileKind::Fifo => 5,
            FileKind::Socket => 6,
            FileKind::Symlink => 7,
        }
    }
}

/// The bytes of an inode this code reads and writes: the 128 of the
/// revision 0 inode, which hold every field it interprets. The rest of a
/// larger inode (`inode_size` > 128: the extra fields) is never read and
/// never rewritten, so it survives on disk as it was; a new inode's rest
/// is zeroed once, when it is created.
pub const CORE_SIZE: usize = 128;

/// One inode's first [`CORE_SIZE`] bytes, held inline (a copy costs no
/// allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskInode {
    pub raw: [u8; CORE_SIZE],
}

/// What `stat` reads of an inode, small enough to be moved around in
/// registers (a [`DiskInode`] is copied with a `memcpy` call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attrs {
    /// `None`: a mode with an unknown file type.
    pub kind: Option<FileKind>,
    /// The permission bits (07777).
    pub perm: u16,
    pub links: u16,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// `i_blocks` (512-byte sectors).
    pub blocks: u32,
    pub atime: u32,
    pub mtime: u32,
    pub ctime: u32,
}

impl DiskInode {
    pub fn attrs(&self) -> Attrs {
        Attrs {
            kind: self.kind(),
            perm: self.mode() & 0o7777,
            links: self.links(),
            uid: self.uid(),
            gid: self.gid(),
            size: self.size(),
            blocks: self.blocks(),
            atime: self.atime(),
            mtime: self.mtime(),
            ctime: self.ctime(),
        }
    }

    pub fn zeroed() -> DiskInode {
        DiskInode {
            raw: [0; CORE_SIZE],
        }
    }

    pub fn mode(&self) -> u16 {
        le16(&self.raw, I_MODE)
    }
    pub fn set_mode(&mut self, m: u16) {
        put16(&mut self.raw, I_MODE, m)
    }
    pub fn is_dir(&self) -> bool {
        self.mode() & S_IFMT == S_IFDIR
    }
    pub fn is_reg(&self) -> bool {
        self.mode() & S_IFMT == S_IFREG
    }
    pub fn is_symlink(&self) -> bool {
        self.mode() & S_IFMT == S_IFLNK
    }

    /// The kind, or `None` for a mode with an unknown type.
    pub fn kind(&self) -> Option<FileKind> {
        let (major, minor) = self.rdev();
        Some(match self.mode() & S_IFMT {
            S_IFREG => FileKind::Regular,
            S_IFDIR => FileKind::Directory,
            S_IFLNK => FileKind::Symlink,
            S_IFCHR => FileKind::CharDev { major, minor },
            S_IFBLK => FileKind::BlockDev { major, minor },
            S_IFIFO => FileKind::Fifo,
            S_IFSOCK => FileKind::Socket,
            _ => return None,
        })
    }

    /// Whether the block pointers are real block numbers (not a fast
    /// symlink's text or a device number).
    pub fn has_block_map(&self, block_size: u32) -> bool {
        match self.mode() & S_IFMT {
            S_IFREG | S_IFDIR => true,
            S_IFLNK => !self.is_fast_symlink(block_size),
            _ => false,
        }
    }

    /// A symlink whose target lives in `i_block`: Linux's test is "no data
    /// blocks" (an extended-attribute block does not count).
    pub fn is_fast_symlink(&self, block_size: u32) -> bool {
        let acl_sectors = if self.file_acl() != 0 {
            block_size / 512
        } else {
            0
        };
        self.is_symlink() && self.blocks() == acl_sectors
    }

    pub fn uid(&self) -> u32 {
        u32::from(le16(&self.raw, I_UID)) | (u32::from(le16(&self.raw, I_UID_HIGH)) << 16)
    }
    pub fn set_uid(&mut self, v: u32) {
        put16(&mut self.raw, I_UID, v as u16);
        put16(&mut self.raw, I_UID_HIGH, (v >> 16) as u16);
    }
    pub fn gid(&self) -> u32 {
        u32::from(le16(&self.raw, I_GID)) | (u32::from(le16(&self.raw, I_GID_HIGH)) << 16)
    }
    pub fn set_gid(&mut self, v: u32) {
        put16(&mut self.raw, I_GID, v as u16);
        put16(&mut self.raw, I_GID_HIGH, (v >> 16) as u16);
    }

    /// File size; the high half (`i_size_high`, alias `i_dir_acl`) counts
    /// for regular files only, as in revision 1 with large_file.
    pub fn size(&self) -> u64 {
        let lo = u64::from(le32(&self.raw, I_SIZE));
        if self.is_reg() {
            lo | (u64::from(le32(&self.raw, I_SIZE_HIGH)) << 32)
        } else {
            lo
        }
    }
    pub fn set_size(&mut self, v: u64) {
        put32(&mut self.raw, I_SIZE, v as u32);
        if self.is_reg() {
            put32(&mut self.raw, I_SIZE_HIGH, (v >> 32) as u32);
        }
    }

    pub fn atime(&self) -> u32 {
        le32(&self.raw, I_ATIME)
    }
    pub fn set_atime(&mut self, t: u32) {
        put32(&mut self.raw, I_ATIME, t)
    }
    pub fn ctime(&self) -> u32 {
        le32(&self.raw, I_CTIME)
    }
    pub fn set_ctime(&mut self, t: u32) {
        put32(&mut self.raw, I_CTIME, t)
    }
    pub fn mtime(&self) -> u32 {
        le32(&self.raw, I_MTIME)
    }
    pub fn set_mtime(&mut self, t: u32) {
        put32(&mut self.raw, I_MTIME, t)
    }
    pub fn dtime(&self) -> u32 {
        le32(&self.raw, I_DTIME)
    }
    pub fn set_dtime(&mut self, t: u32) {
        put32(&mut self.raw, I_DTIME, t)
    }

    pub fn links(&self) -> u16 {
        le16(&self.raw, I_LINKS)
    }
    pub fn set_links(&mut self, n: u16) {
        put16(&mut self.raw, I_LINKS, n)
    }

    /// `i_blocks`: 512-byte sectors of data, indirect and xattr blocks.
    pub fn blocks(&self) -> u32 {
        le32(&self.raw, I_BLOCKS)
    }
    pub fn set_blocks(&mut self, n: u32) {
        put32(&mut self.raw, I_BLOCKS, n)
    }

    pub fn flags(&self) -> u32 {
        le32(&self.raw, I_FLAGS)
    }
    pub fn set_flags(&mut self, f: u32) {
        put32(&mut self.raw, I_FLAGS, f)
    }

    pub fn block(&self, i: usize) -> u32 {
        le32(&self.raw, I_BLOCK + 4 * i)
    }
    pub fn set_block(&mut self, i: usize, b: u32) {
        if i < N_BLOCKS {
            put32(&mut self.raw, I_BLOCK + 4 * i, b)
        }
    }
    /// The 60 bytes of `i_block` (a fast symlink's target).
    pub fn block_bytes(&self) -> &[u8] {
        self.raw.get(I_BLOCK..I_BLOCK + 60).unwrap_or(&[])
    }
    pub fn block_bytes_mut(&mut self) -> &mut [u8] {
        self.raw.get_mut(I_BLOCK..I_BLOCK + 60).unwrap_or(&mut [])
    }

    pub fn generation(&self) -> u32 {
        le32(&self.raw, I_GENERATION)
    }
    pub fn set_generation(&mut self, g: u32) {
        put32(&mut self.raw, I_GENERATION, g)
    }
    pub fn file_acl(&self) -> u32 {
        le32(&self.raw, I_FILE_ACL)
    }
    pub fn set_file_acl(&mut self, b: u32) {
        put32(&mut self.raw, I_FILE_ACL, b)
    }

    /// Device number as Linux's ext2 stores it: the old 16-bit encoding in
    /// `i_block[0]` when major and minor fit in 8 bits, else the new
    /// encoding in `i_block[1]`.
    pub fn rdev(&self) -> (u32, u32) {
        let old = self.block(0);
        if old != 0 {
            ((old >> 8) & 0xff, old & 0xff)
        } else {
            let new = self.block(1);
            ((new & 0xfff00) >> 8, (new & 0xff) | ((new >> 12) & 0xfff00))
        }
    }
    pub fn set_rdev(&mut self, major: u32, minor: u32) {
        if major < 256 && minor < 256 {
            self.set_block(0, (major << 8) | minor);
            self.set_block(1, 0);
        } else {
            self.set_block(0, 0);
            self.set_block(
                1,
                (minor & 0xff) | ((major & 0xfff) << 8) | ((minor & !0xff) << 12),
            );
        }
        self.set_block(2, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdev_uses_old_encoding_for_small_numbers_and_new_for_large() {
        let mut i = DiskInode::zeroed();
        i.set_mode(S_IFCHR | 0o600);
        i.set_rdev(1, 3);
        assert_eq!(i.block(0), 0x0103);
        assert_eq!(i.rdev(), (1, 3));
        i.set_rdev(259, 70000);
        assert_eq!(i.block(0), 0);
        assert_eq!(i.rdev(), (259, 70000));
    }

    #[test]
    fn uid_and_gid_keep_their_high_halves() {
        let mut i = DiskInode::zeroed();
        i.set_uid(0x1234_5678);
        i.set_gid(70000);
        assert_eq!(i.uid(), 0x1234_5678);
        assert_eq!(i.gid(), 70000);
        assert_eq!(le16(&i.raw, I_UID), 0x5678);
    }
}
