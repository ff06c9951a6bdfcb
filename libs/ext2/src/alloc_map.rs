//! Block and inode allocation through the per-group bitmaps, keeping the
//! group descriptors' free counts right (the superblock's are summed from
//! them when it is written).

use alloc::vec;

use crate::fs::Fs;
use crate::{BlockIo, Error, Result};

fn bit(map: &[u8], i: u32) -> bool {
    map.get((i / 8) as usize)
        .is_some_and(|b| b & (1 << (i % 8)) != 0)
}

fn set_bit(map: &mut [u8], i: u32, v: bool) {
    if let Some(b) = map.get_mut((i / 8) as usize) {
        if v {
            *b |= 1 << (i % 8);
        } else {
            *b &= !(1 << (i % 8));
        }
    }
}

/// First clear bit in `from..to`, skipping full bytes.
fn find_zero(map: &[u8], from: u32, to: u32) -> Option<u32> {
    let mut i = from;
    while i < to {
        if i.is_multiple_of(8) && i + 8 <= to && map.get((i / 8) as usize) == Some(&0xff) {
            i += 8;
            continue;
        }
        if !bit(map, i) {
            return Some(i);
        }
        i += 1;
    }
    None
}

impl<D: BlockIo> Fs<D> {
    /// Whether `b` is a superblock copy, descriptor (reserve), bitmap or
    /// inode-table block: never handed out, never freed.
    pub(crate) fn is_meta_block(&self, b: u32) -> bool {
        if b < self.sb.first_data_block || b >= self.sb.blocks_count {
            return true;
        }
        let g = (b - self.sb.first_data_block) / self.sb.blocks_per_group;
        let start = self.sb.group_start(g);
        if b < start + self.sb.super_overhead(g) {
            return true;
        }
        let Some(d) = self.gt.descs.get(g as usize) else {
            return true;
        };
        b == d.block_bitmap
            || b == d.inode_bitmap
            || (b >= d.inode_table
                && u64::from(b) < u64::from(d.inode_table) + u64::from(self.sb.itable_blocks))
    }

    fn store_desc(&mut self, g: u32) -> Result<()> {
        let idx = self.gt.store(g, self.bs);
        let bs = self.bs as usize;
        let blk = self.sb.first_data_block + 1 + idx as u32;
        let Some(bytes) = self.gt.raw.get(idx * bs..(idx + 1) * bs) else {
            return Err(Error::Corrupt("descriptor table index"));
        };
        self.dev.write(u64::from(blk) * u64::from(self.bs), bytes)
    }

    /// Allocates one block, preferring `goal` and then the blocks after it.
    pub(crate) fn alloc_block(&mut self, goal: u32) -> Result<u32> {
        self.writable()?;
        let sb = &self.sb;
        let goal = if goal < sb.first_data_block || goal >= sb.blocks_count {
            sb.first_data_block
        } else {
            goal
        };
        let g0 = (goal - sb.first_data_block) / sb.blocks_per_group;
        let groups = sb.groups;
        let mut map = vec![0u8; self.bs as usize];
        for k in 0..=groups {
            let g = (g0 + k) % groups;
            let Some(d) = self.gt.descs.get(g as usize).copied() else {
                continue;
            };
            if d.free_blocks == 0 {
                continue;
            }
            let start = self.sb.group_start(g);
            let n = self.sb.group_end(g) - start;
            self.read_block(d.block_bitmap, &mut map)?;
            // A bitmap that does not mark its own group's metadata as used
            // is damaged: trusting it would overwrite the inode table.
            for m in [d.block_bitmap, d.inode_bitmap, d.inode_table] {
                if !bit(&map, m - start) {
                    return Err(Error::Corrupt("block bitmap does not cover group metadata"));
                }
            }
            let from = if k == 0 { goal - start } else { 0 };
            let Some(i) = find_zero(&map, from, n).or_else(|| find_zero(&map, 0, from)) else {
                continue;
            };
            let b = start + i;
            if self.is_meta_block(b) {
                return Err(Error::Corrupt("block bitmap marks metadata free"));
            }
            set_bit(&mut map, i, true);
            self.write_block(d.block_bitmap, &map)?;
            if let Some(dm) = self.gt.descs.get_mut(g as usize) {
                dm.free_blocks -= 1;
            }
            self.store_desc(g)?;
            return Ok(b);
        }
        Err(Error::NoSpace)
    }

    /// Frees block `b`; a block already free means damage.
    pub(crate) fn free_block(&mut self, b: u32) -> Result<()> {
        self.writable()?;
        self.check_block(b)?;
        if self.is_meta_block(b) {
            return Err(Error::Corrupt("freeing a metadata block"));
        }
        let g = (b - self.sb.first_data_block) / self.sb.blocks_per_group;
        let Some(d) = self.gt.descs.get(g as usize).copied() else {
            return Err(Error::Corrupt("block group"));
        };
        let i = b - self.sb.group_start(g);
        let mut map = vec![0u8; self.bs as usize];
        self.read_block(d.block_bitmap, &mut map)?;
        if !bit(&map, i) {
            return Err(Error::Corrupt("freeing a free block"));
        }
        set_bit(&mut map, i, false);
        self.write_block(d.block_bitmap, &map)?;
        if let Some(dm) = self.gt.descs.get_mut(g as usize) {
            dm.free_blocks = dm.free_blocks.saturating_add(1);
        }
        self.store_desc(g)?;
        self.dev
            .forget(u64::from(b) * u64::from(self.bs), self.bs as usize);
        Ok(())
    }

    /// Allocates an inode: a directory goes to the group with the most free
    /// inodes (spreading the tree), anything else near its parent.
    pub(crate) fn alloc_inode(&mut self, parent: u32, dir: bool) -> Result<u32> {
        self.writable()?;
        let groups = self.sb.groups;
        let g0 = if dir {
            let mut best = self.group_of_ino(parent);
            for (g, d) in self.gt.descs.iter().enumerate() {
                let cur = self
                    .gt
                    .descs
                    .get(best as usize)
                    .map_or(0, |b| b.free_inodes);
                if d.free_inodes > cur {
                    best = g as u32;
                }
            }
            best
        } else {
            self.group_of_ino(parent)
        };
        let ipg = self.sb.inodes_per_group;
        let mut map = vec![0u8; self.bs as usize];
        for k in 0..groups {
            let g = (g0 + k) % groups;
            let Some(d) = self.gt.descs.get(g as usize).copied() else {
                continue;
            };
            if d.free_inodes == 0 {
                continue;
            }
            self.read_block(d.inode_bitmap, &mut map)?;
            let base = g * ipg;
            // Reserved inodes (below s_first_ino) are never handed out.
            let from = self
                .sb
                .first_ino
                .saturating_sub(1)
                .saturating_sub(base)
                .min(ipg);
            let Some(i) = find_zero(&map, from, ipg) else {
                continue;
            };
            set_bit(&mut map, i, true);
            self.write_block(d.inode_bitmap, &map)?;
            if let Some(dm) = self.gt.descs.get_mut(g as usize) {
                dm.free_inodes -= 1;
                if dir {
                    dm.used_dirs = dm.used_dirs.saturating_add(1);
                }
            }
            self.store_desc(g)?;
            return Ok(base + i + 1);
        }
        Err(Error::NoSpace)
    }

    pub(crate) fn free_inode_bit(&mut self, ino: u32, dir: bool) -> Result<()> {
        self.writable()?;
        self.check_ino(ino)?;
        if ino < self.sb.first_ino {
            return Err(Error::Corrupt("freeing a reserved inode"));
        }
        let g = (ino - 1) / self.sb.inodes_per_group;
        let i = (ino - 1) % self.sb.inodes_per_group;
        let Some(d) = self.gt.descs.get(g as usize).copied() else {
            return Err(Error::Corrupt("inode group"));
        };
        let mut map = vec![0u8; self.bs as usize];
        self.read_block(d.inode_bitmap, &mut map)?;
        if !bit(&map, i) {
            return Err(Error::Corrupt("freeing a free inode"));
        }
        set_bit(&mut map, i, false);
        self.write_block(d.inode_bitmap, &map)?;
        if let Some(dm) = self.gt.descs.get_mut(g as usize) {
            dm.free_inodes = dm.free_inodes.saturating_add(1);
            if dir {
                dm.used_dirs = dm.used_dirs.saturating_sub(1);
            }
        }
        self.store_desc(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_zero_skips_full_bytes_and_respects_bounds() {
        let map = [0xff, 0xff, 0b1110_1111, 0];
        assert_eq!(find_zero(&map, 0, 32), Some(20));
        assert_eq!(find_zero(&map, 0, 20), None);
        assert_eq!(find_zero(&map, 21, 32), Some(24));
    }
}
