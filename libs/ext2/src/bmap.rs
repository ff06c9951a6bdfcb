//! The block map: 12 direct pointers, then single, double and triple
//! indirect blocks. Mapping, allocation along the path, and freeing from a
//! logical block onwards (truncate).

use alloc::vec;
use alloc::vec::Vec;

use crate::fs::Fs;
use crate::inode::DiskInode;
use crate::{BlockIo, Error, Result, le32, put32};

/// Slot in `i_block` and indices inside each indirect level.
struct Path {
    depth: usize,
    idx: [u32; 4],
}

impl<D: BlockIo> Fs<D> {
    pub(crate) fn ptrs_per_block(&self) -> u64 {
        u64::from(self.bs / 4)
    }

    /// Largest logical block count the map can address.
    pub(crate) fn max_blocks(&self) -> u64 {
        let p = self.ptrs_per_block();
        12 + p + p * p + p * p * p
    }

    fn path(&self, lblk: u64) -> Option<Path> {
        let p = self.ptrs_per_block();
        let mut l = lblk;
        if l < 12 {
            return Some(Path {
                depth: 0,
                idx: [l as u32, 0, 0, 0],
            });
        }
        l -= 12;
        if l < p {
            return Some(Path {
                depth: 1,
                idx: [12, l as u32, 0, 0],
            });
        }
        l -= p;
        if l < p * p {
            return Some(Path {
                depth: 2,
                idx: [13, (l / p) as u32, (l % p) as u32, 0],
            });
        }
        l -= p * p;
        if l < p * p * p {
            return Some(Path {
                depth: 3,
                idx: [
                    14,
                    (l / (p * p)) as u32,
                    ((l / p) % p) as u32,
                    (l % p) as u32,
                ],
            });
        }
        None
    }

    fn read_ptr(&self, blk: u32, i: u32) -> Result<u32> {
        self.check_block(blk)?;
        let mut b = [0u8; 4];
        self.dev.read(
            u64::from(blk) * u64::from(self.bs) + u64::from(i) * 4,
            &mut b,
        )?;
        Ok(u32::from_le_bytes(b))
    }

    fn write_ptr(&self, blk: u32, i: u32, v: u32) -> Result<()> {
        self.check_block(blk)?;
        self.dev.write(
            u64::from(blk) * u64::from(self.bs) + u64::from(i) * 4,
            &v.to_le_bytes(),
        )
    }

    /// Physical block of logical block `lblk`, `None` for a hole.
    pub(crate) fn map(&self, inode: &DiskInode, lblk: u64) -> Result<Option<u32>> {
        let Some(p) = self.path(lblk) else {
            return Ok(None);
        };
        let mut b = inode.block(p.idx[0] as usize);
        for level in 1..=p.depth {
            if b == 0 {
                return Ok(None);
            }
            b = self.read_ptr(b, p.idx[level])?;
        }
        if b == 0 {
            return Ok(None);
        }
        self.check_block(b).map(Some)
    }

    fn zero_block(&self, b: u32) -> Result<()> {
        let z = vec![0u8; self.bs as usize];
        self.write_block(b, &z)
    }

    fn add_blocks(&self, inode: &mut DiskInode, n: i64) {
        let per = i64::from(self.bs / 512);
        let v = i64::from(inode.blocks()) + n * per;
        inode.set_blocks(v.clamp(0, i64::from(u32::MAX)) as u32);
    }

    /// Physical block of `lblk`, allocating it (and any missing indirect
    /// block on the way) if it is a hole. Returns `(block, newly allocated)`;
    /// a new data block is zeroed when `zero` is set. The caller writes the
    /// inode back.
    pub(crate) fn map_alloc(
        &mut self,
        ino: u32,
        inode: &mut DiskInode,
        lblk: u64,
        zero: bool,
    ) -> Result<(u32, bool)> {
        let Some(p) = self.path(lblk) else {
            return Err(Error::FileTooBig);
        };
        let mut goal = self.sb.group_start(self.group_of_ino(ino));
        if lblk > 0
            && let Some(prev) = self.map(inode, lblk - 1)?
        {
            goal = prev + 1;
        }
        let slot = p.idx[0] as usize;
        let mut b = inode.block(slot);
        let mut new = false;
        if b == 0 {
            b = self.alloc_block(goal)?;
            self.add_blocks(inode, 1);
            inode.set_block(slot, b);
            new = true;
            if p.depth > 0 || zero {
                self.zero_block(b)?;
            }
        }
        for level in 1..=p.depth {
            let parent = b;
            b = self.read_ptr(parent, p.idx[level])?;
            if b == 0 {
                b = self.alloc_block(parent + 1)?;
                self.add_blocks(inode, 1);
                if level < p.depth || zero {
                    self.zero_block(b)?;
                }
                self.write_ptr(parent, p.idx[level], b)?;
                new = true;
            } else {
                self.check_block(b)?;
                new = false;
            }
        }
        Ok((b, new))
    }

    /// Frees every block mapped at logical block `first` or above, and the
    /// indirect blocks left empty. The caller writes the inode back.
    pub(crate) fn free_from(&mut self, inode: &mut DiskInode, first: u64) -> Result<()> {
        let p = self.ptrs_per_block();
        // Each freed block must have been allocated, so a cycle or a shared
        // block fails at its second visit ("freeing a free block"); the
        // budget also bounds a walk over garbage pointers.
        let mut budget = u64::from(self.sb.blocks_count) * 2;
        for i in 0..12u64 {
            let b = inode.block(i as usize);
            if i >= first && b != 0 {
                self.free_block(b)?;
                self.add_blocks(inode, -1);
                inode.set_block(i as usize, 0);
            }
        }
        let mut base = 12u64;
        let mut span = p;
        for (slot, level) in [(12usize, 1u32), (13, 2), (14, 3)] {
            let b = inode.block(slot);
            if b != 0 && base + span > first {
                let from = first.saturating_sub(base);
                if self.free_tree(inode, b, level, from, &mut budget)? {
                    inode.set_block(slot, 0);
                }
            }
            base += span;
            span = span.saturating_mul(p);
        }
        Ok(())
    }

    /// Frees the part of the subtree at indirect block `blk` (of `level`)
    /// from relative logical block `from`; true if `blk` itself was freed.
    fn free_tree(
        &mut self,
        inode: &mut DiskInode,
        blk: u32,
        level: u32,
        from: u64,
        budget: &mut u64,
    ) -> Result<bool> {
        if *budget == 0 {
            return Err(Error::Corrupt("indirect block walk too long"));
        }
        *budget -= 1;
        let mut buf = vec![0u8; self.bs as usize];
        self.read_block(blk, &mut buf)?;
        let p = self.ptrs_per_block();
        let span = p.pow(level - 1);
        let mut changed = false;
        let mut left = false;
        let entries: Vec<u32> = (0..p as usize).map(|i| le32(&buf, i * 4)).collect();
        for (i, &e) in entries.iter().enumerate() {
            if e == 0 {
                continue;
            }
            let start = i as u64 * span;
            if start + span <= from {
                left = true;
                continue;
            }
            let freed = if level == 1 {
                self.free_block(e)?;
                self.add_blocks(inode, -1);
                true
            } else {
                self.free_tree(inode, e, level - 1, from.saturating_sub(start), budget)?
            };
            if freed {
                put32(&mut buf, i * 4, 0);
                changed = true;
            } else {
                left = true;
            }
        }
        if !left {
            self.free_block(blk)?;
            self.add_blocks(inode, -1);
            return Ok(true);
        }
        if changed {
            self.write_block(blk, &buf)?;
        }
        Ok(false)
    }
}

/// Pointers of one indirect block read at a time by [`Mapper`].
const WINDOW: usize = 128;

/// Walks the block map of one inode for a run of logical blocks: the
/// pointers of the current leaf indirect block are read [`WINDOW`] at a
/// time (one device read) and the path above them is kept, so a
/// sequential run costs one small read per window instead of a read per
/// level per block.
struct Mapper {
    /// The path of the last block looked up and the block holding its
    /// leaf pointer (0: none yet, or the leaf is in the inode).
    last: Option<(Path, u32)>,
    /// Pointers `win_start..win_start + win_len` of block `win_blk`.
    win_blk: u32,
    win_start: u32,
    win_len: u32,
    win: [u32; WINDOW],
}

impl Mapper {
    fn new() -> Mapper {
        Mapper {
            last: None,
            win_blk: 0,
            win_start: 0,
            win_len: 0,
            win: [0; WINDOW],
        }
    }

    /// Forgets what was read (the map changed).
    fn reset(&mut self) {
        self.last = None;
        self.win_len = 0;
    }

    /// The physical block of `lblk` (`None`: a hole on the way), reading
    /// only what the last lookup did not leave.
    fn map<D: BlockIo>(&mut self, fs: &Fs<D>, inode: &DiskInode, lblk: u64) -> Result<Option<u32>> {
        let Some(p) = fs.path(lblk) else {
            return Ok(None);
        };
        if p.depth == 0 {
            let b = inode.block(p.idx[0] as usize);
            return if b == 0 { Ok(None) } else { fs.check_block(b).map(Some) };
        }
        // The block holding the leaf pointer: the same as last time if the
        // path agrees above the leaf.
        let parent = match &self.last {
            Some((lp, blk)) if lp.depth == p.depth && lp.idx[..p.depth] == p.idx[..p.depth] => *blk,
            _ => {
                let mut b = inode.block(p.idx[0] as usize);
                for level in 1..p.depth {
                    if b == 0 {
                        break;
                    }
                    b = fs.read_ptr(b, p.idx[level])?;
                }
                b
            }
        };
        let leaf = p.idx[p.depth];
        self.last = Some((p, parent));
        if parent == 0 {
            return Ok(None);
        }
        if self.win_blk != parent || leaf < self.win_start || leaf >= self.win_start + self.win_len {
            fs.check_block(parent)?;
            let n = (fs.ptrs_per_block() as u32 - leaf).min(WINDOW as u32);
            let mut raw = [0u8; WINDOW * 4];
            let raw = &mut raw[..n as usize * 4];
            fs.dev.read(
                u64::from(parent) * u64::from(fs.bs) + u64::from(leaf) * 4,
                raw,
            )?;
            for (i, c) in raw.chunks_exact(4).enumerate() {
                self.win[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            self.win_blk = parent;
            self.win_start = leaf;
            self.win_len = n;
        }
        let b = self.win[(leaf - self.win_start) as usize];
        if b == 0 { Ok(None) } else { fs.check_block(b).map(Some) }
    }
}

impl<D: BlockIo> Fs<D> {
    /// [`Fs::bmap_alloc`] for logical blocks `first..=last` of a regular
    /// file, in order: every hole is allocated (not zeroed), mapped blocks
    /// are only looked up, a run of pointers at a time. Stops at the first
    /// error; what was allocated before it stays (the inode is written
    /// back either way).
    pub fn bmap_alloc_range(&mut self, ino: u32, first: u64, last: u64) -> Result<()> {
        let r = (|| {
            self.writable()?;
            let mut i = self.live_inode(ino)?;
            if !i.is_reg() {
                return Err(Error::Invalid);
            }
            let limit = self.max_file_size().div_ceil(u64::from(self.bs));
            let mut m = Mapper::new();
            let mut changed = false;
            let mut r = Ok(());
            for lblk in first..=last {
                if lblk >= limit {
                    r = Err(Error::FileTooBig);
                    break;
                }
                match m.map(self, &i, lblk) {
                    Ok(Some(_)) => continue,
                    Ok(None) => {}
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
                match self.map_alloc(ino, &mut i, lblk, false) {
                    Ok((_, new)) => changed |= new,
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
                m.reset();
            }
            if changed {
                self.write_inode(ino, &i)?;
            }
            r
        })();
        self.check(r)
    }

    /// [`Fs::bmap`] for logical blocks `first..first + out.len()`:
    /// `out[k]` is the physical block of `first + k`, `None` for a hole.
    pub fn bmap_run(&mut self, ino: u32, first: u64, out: &mut [Option<u64>]) -> Result<()> {
        let r = (|| {
            let i = self.live_inode(ino)?;
            let mut m = Mapper::new();
            for (k, slot) in out.iter_mut().enumerate() {
                *slot = m.map(self, &i, first + k as u64)?.map(u64::from);
            }
            Ok(())
        })();
        self.check(r)
    }
}
