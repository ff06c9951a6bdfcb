//! The superblock (1024 bytes at byte 1024) and the group descriptor table,
//! parsed and validated once at mount.

use alloc::vec;
use alloc::vec::Vec;

use crate::{BlockIo, Error, Result, le16, le32, put16, put32};

pub const MAGIC: u16 = 0xEF53;
pub const SB_OFFSET: u64 = 1024;
pub const SB_SIZE: usize = 1024;

// Field offsets inside the superblock.
pub const S_INODES_COUNT: usize = 0;
pub const S_BLOCKS_COUNT: usize = 4;
pub const S_R_BLOCKS_COUNT: usize = 8;
pub const S_FREE_BLOCKS: usize = 12;
pub const S_FREE_INODES: usize = 16;
pub const S_FIRST_DATA_BLOCK: usize = 20;
pub const S_LOG_BLOCK_SIZE: usize = 24;
pub const S_BLOCKS_PER_GROUP: usize = 32;
pub const S_INODES_PER_GROUP: usize = 40;
pub const S_MTIME: usize = 44;
pub const S_WTIME: usize = 48;
pub const S_MNT_COUNT: usize = 52;
pub const S_MAGIC: usize = 56;
pub const S_STATE: usize = 58;
pub const S_ERRORS: usize = 60;
pub const S_REV_LEVEL: usize = 76;
pub const S_FIRST_INO: usize = 84;
pub const S_INODE_SIZE: usize = 88;
pub const S_FEATURE_COMPAT: usize = 92;
pub const S_FEATURE_INCOMPAT: usize = 96;
pub const S_FEATURE_RO_COMPAT: usize = 100;
pub const S_UUID: usize = 104;
pub const S_RESERVED_GDT_BLOCKS: usize = 206;

pub const STATE_VALID: u16 = 1;
pub const STATE_ERROR: u16 = 2;

pub const COMPAT_RESIZE_INODE: u32 = 0x10;
pub const INCOMPAT_FILETYPE: u32 = 0x2;
pub const INCOMPAT_SUPPORTED: u32 = INCOMPAT_FILETYPE;
pub const RO_COMPAT_SPARSE_SUPER: u32 = 0x1;
pub const RO_COMPAT_LARGE_FILE: u32 = 0x2;
pub const RO_COMPAT_SUPPORTED: u32 = RO_COMPAT_SPARSE_SUPER | RO_COMPAT_LARGE_FILE;

/// Size of one group descriptor (ext2 has no 64-bit descriptors).
pub const DESC_SIZE: usize = 32;
const BG_BLOCK_BITMAP: usize = 0;
const BG_INODE_BITMAP: usize = 4;
const BG_INODE_TABLE: usize = 8;
const BG_FREE_BLOCKS: usize = 12;
const BG_FREE_INODES: usize = 14;
const BG_USED_DIRS: usize = 16;

/// The superblock: the raw bytes (so fields this code does not know are
/// written back unchanged) and the geometry derived from them.
pub struct Superblock {
    pub raw: Vec<u8>,
    pub block_size: u32,
    pub blocks_count: u32,
    pub inodes_count: u32,
    pub first_data_block: u32,
    pub blocks_per_group: u32,
    pub inodes_per_group: u32,
    pub inode_size: u32,
    pub first_ino: u32,
    pub rev: u32,
    pub groups: u32,
    /// Blocks of one group's inode table.
    pub itable_blocks: u32,
    /// Blocks of the descriptor table (without the reserved ones).
    pub gdt_blocks: u32,
    pub reserved_gdt: u32,
    /// Unknown RO_COMPAT features: the file system must stay read-only.
    pub ro_only: bool,
}

impl Superblock {
    pub fn read(dev: &dyn BlockIo) -> Result<Superblock> {
        let mut raw = vec![0u8; SB_SIZE];
        if dev.size() < SB_OFFSET + SB_SIZE as u64 {
            return Err(Error::BadSuperblock("device smaller than a superblock"));
        }
        dev.read(SB_OFFSET, &mut raw)?;
        Self::parse(raw, dev.size())
    }

    pub fn parse(raw: Vec<u8>, dev_size: u64) -> Result<Superblock> {
        if le16(&raw, S_MAGIC) != MAGIC {
            return Err(Error::BadSuperblock("bad magic"));
        }
        let log = le32(&raw, S_LOG_BLOCK_SIZE);
        if log > 2 {
            return Err(Error::BadSuperblock("block size above 4096"));
        }
        let block_size = 1024u32 << log;
        let rev = le32(&raw, S_REV_LEVEL);
        if rev > 1 {
            return Err(Error::Unsupported("revision above 1"));
        }
        let (inode_size, first_ino) = if rev == 0 {
            (128, 11)
        } else {
            (le16(&raw, S_INODE_SIZE) as u32, le32(&raw, S_FIRST_INO))
        };
        if inode_size < 128 || !inode_size.is_power_of_two() || inode_size > block_size {
            return Err(Error::BadSuperblock("bad inode size"));
        }
        let incompat = if rev == 0 {
            0
        } else {
            le32(&raw, S_FEATURE_INCOMPAT)
        };
        if incompat & !INCOMPAT_SUPPORTED != 0 {
            return Err(Error::Unsupported("unknown incompatible feature"));
        }
        let ro_compat = if rev == 0 {
            0
        } else {
            le32(&raw, S_FEATURE_RO_COMPAT)
        };
        let ro_only = ro_compat & !RO_COMPAT_SUPPORTED != 0;
        let blocks_count = le32(&raw, S_BLOCKS_COUNT);
        let inodes_count = le32(&raw, S_INODES_COUNT);
        let first_data_block = le32(&raw, S_FIRST_DATA_BLOCK);
        if first_data_block != u32::from(block_size == 1024) {
            return Err(Error::BadSuperblock("bad first data block"));
        }
        let bpg = le32(&raw, S_BLOCKS_PER_GROUP);
        let ipg = le32(&raw, S_INODES_PER_GROUP);
        if bpg == 0 || bpg > block_size * 8 || ipg == 0 || ipg > block_size * 8 {
            return Err(Error::BadSuperblock("bad blocks or inodes per group"));
        }
        if blocks_count <= first_data_block + 1 {
            return Err(Error::BadSuperblock("too few blocks"));
        }
        if u64::from(blocks_count) * u64::from(block_size) > dev_size {
            return Err(Error::BadSuperblock("file system larger than the device"));
        }
        let groups = (blocks_count - first_data_block).div_ceil(bpg);
        if u64::from(groups) * u64::from(ipg) != u64::from(inodes_count) {
            return Err(Error::BadSuperblock(
                "inode count does not match the groups",
            ));
        }
        if first_ino < 11 || first_ino >= inodes_count {
            return Err(Error::BadSuperblock("bad first inode"));
        }
        if le32(&raw, S_R_BLOCKS_COUNT) > blocks_count {
            return Err(Error::BadSuperblock("reserved blocks above block count"));
        }
        let itable_blocks = (ipg * inode_size).div_ceil(block_size);
        let gdt_blocks = (groups as usize * DESC_SIZE).div_ceil(block_size as usize) as u32;
        let compat = if rev == 0 {
            0
        } else {
            le32(&raw, S_FEATURE_COMPAT)
        };
        let reserved_gdt = if compat & COMPAT_RESIZE_INODE != 0 {
            le16(&raw, S_RESERVED_GDT_BLOCKS) as u32
        } else {
            0
        };
        // The descriptor table (and its reserve) sits in group 0 right after
        // the superblock; it must fit there.
        if 1 + gdt_blocks + reserved_gdt >= bpg.min(blocks_count - first_data_block) {
            return Err(Error::BadSuperblock(
                "descriptor table does not fit in group 0",
            ));
        }
        Ok(Superblock {
            raw,
            block_size,
            blocks_count,
            inodes_count,
            first_data_block,
            blocks_per_group: bpg,
            inodes_per_group: ipg,
            inode_size,
            first_ino,
            rev,
            groups,
            itable_blocks,
            gdt_blocks,
            reserved_gdt,
            ro_only,
        })
    }

    pub fn get16(&self, off: usize) -> u16 {
        le16(&self.raw, off)
    }
    pub fn get32(&self, off: usize) -> u32 {
        le32(&self.raw, off)
    }
    pub fn set16(&mut self, off: usize, v: u16) {
        put16(&mut self.raw, off, v)
    }
    pub fn set32(&mut self, off: usize, v: u32) {
        put32(&mut self.raw, off, v)
    }

    pub fn has_ro_compat(&self, f: u32) -> bool {
        self.rev >= 1 && self.get32(S_FEATURE_RO_COMPAT) & f != 0
    }

    pub fn filetype(&self) -> bool {
        self.rev >= 1 && self.get32(S_FEATURE_INCOMPAT) & INCOMPAT_FILETYPE != 0
    }

    /// First block of group `g`.
    pub fn group_start(&self, g: u32) -> u32 {
        self.first_data_block + g * self.blocks_per_group
    }

    /// One past the last block of group `g`.
    pub fn group_end(&self, g: u32) -> u32 {
        (self.group_start(g) as u64 + self.blocks_per_group as u64).min(self.blocks_count as u64)
            as u32
    }

    /// Whether group `g` holds a copy of the superblock and descriptors.
    pub fn has_super(&self, g: u32) -> bool {
        if g <= 1 || !self.has_ro_compat(RO_COMPAT_SPARSE_SUPER) {
            return true;
        }
        [3u32, 5, 7].iter().any(|&p| {
            let mut n = g;
            while n.is_multiple_of(p) {
                n /= p;
            }
            n == 1
        })
    }

    /// Blocks at the start of group `g` taken by the superblock copy, the
    /// descriptors and their reserve.
    pub fn super_overhead(&self, g: u32) -> u32 {
        if self.has_super(g) {
            1 + self.gdt_blocks + self.reserved_gdt
        } else {
            0
        }
    }
}

/// One group's descriptor, decoded.
#[derive(Clone, Copy, Debug)]
pub struct GroupDesc {
    pub block_bitmap: u32,
    pub inode_bitmap: u32,
    pub inode_table: u32,
    pub free_blocks: u16,
    pub free_inodes: u16,
    pub used_dirs: u16,
}

/// The descriptor table: raw bytes (written back block by block) and the
/// decoded, validated descriptors.
pub struct GroupTable {
    pub raw: Vec<u8>,
    pub descs: Vec<GroupDesc>,
}

impl GroupTable {
    pub fn read(dev: &dyn BlockIo, sb: &Superblock) -> Result<GroupTable> {
        let bs = sb.block_size as usize;
        let mut raw = vec![0u8; sb.gdt_blocks as usize * bs];
        let start = u64::from(sb.first_data_block + 1) * bs as u64;
        dev.read(start, &mut raw)?;
        let mut descs = Vec::new();
        for g in 0..sb.groups {
            let o = g as usize * DESC_SIZE;
            let d = GroupDesc {
                block_bitmap: le32(&raw, o + BG_BLOCK_BITMAP),
                inode_bitmap: le32(&raw, o + BG_INODE_BITMAP),
                inode_table: le32(&raw, o + BG_INODE_TABLE),
                free_blocks: le16(&raw, o + BG_FREE_BLOCKS),
                free_inodes: le16(&raw, o + BG_FREE_INODES),
                used_dirs: le16(&raw, o + BG_USED_DIRS),
            };
            // As Linux's ext2_check_descriptors: bitmaps and inode table
            // inside their own group, past its superblock copy.
            let lo = sb.group_start(g) + sb.super_overhead(g);
            let hi = sb.group_end(g);
            let inside = |b: u32| b >= lo && b < hi;
            if !inside(d.block_bitmap) || !inside(d.inode_bitmap) {
                return Err(Error::Corrupt("group bitmap outside its group"));
            }
            let it_end = d.inode_table as u64 + sb.itable_blocks as u64;
            if !inside(d.inode_table) || it_end > hi as u64 {
                return Err(Error::Corrupt("inode table outside its group"));
            }
            let in_table = |b: u32| b >= d.inode_table && (b as u64) < it_end;
            if d.block_bitmap == d.inode_bitmap
                || in_table(d.block_bitmap)
                || in_table(d.inode_bitmap)
            {
                return Err(Error::Corrupt("group metadata overlaps"));
            }
            if u32::from(d.free_blocks) > hi - sb.group_start(g)
                || u32::from(d.free_inodes) > sb.inodes_per_group
                || u32::from(d.used_dirs) > sb.inodes_per_group
            {
                return Err(Error::Corrupt("group free counts out of range"));
            }
            descs.push(d);
        }
        Ok(GroupTable { raw, descs })
    }

    /// Encodes descriptor `g` into the raw table; returns the index of the
    /// table block that changed.
    pub fn store(&mut self, g: u32, bs: u32) -> usize {
        let Some(d) = self.descs.get(g as usize).copied() else {
            return 0;
        };
        let o = g as usize * DESC_SIZE;
        put16(&mut self.raw, o + BG_FREE_BLOCKS, d.free_blocks);
        put16(&mut self.raw, o + BG_FREE_INODES, d.free_inodes);
        put16(&mut self.raw, o + BG_USED_DIRS, d.used_dirs);
        o / bs as usize
    }
}
