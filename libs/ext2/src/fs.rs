//! A mounted file system: mount-time validation, inode I/O, the `errors=`
//! policy, `statfs`, sync and the clean/unclean state.

use core::cell::RefCell;

use crate::inode::{CORE_SIZE, DiskInode};
use crate::superblock::{
    GroupTable, S_ERRORS, S_FREE_BLOCKS, S_FREE_INODES, S_MNT_COUNT, S_MTIME, S_R_BLOCKS_COUNT,
    S_STATE, S_UUID, S_WTIME, SB_OFFSET, STATE_ERROR, STATE_VALID, Superblock,
};
use crate::{BlockIo, Error, NAME_MAX, Result};

/// What to do when the file system finds damage (`errors=`, or the
/// superblock's `s_errors` when not given). `Panic` never stops the kernel:
/// it acts as `RemountRo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorsPolicy {
    Continue,
    RemountRo,
    Panic,
}

#[derive(Clone, Copy, Debug)]
pub struct MountOptions {
    pub read_only: bool,
    pub errors: Option<ErrorsPolicy>,
    /// Seconds since the epoch, for timestamps.
    pub now: fn() -> u32,
}

/// `statfs` figures (Linux ext2's: overhead excluded from `blocks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatFs {
    pub block_size: u32,
    pub blocks: u64,
    pub free_blocks: u64,
    pub avail_blocks: u64,
    pub files: u64,
    pub free_files: u64,
    pub name_max: u32,
    pub fsid: u64,
}

/// A mounted ext2 file system over `D`.
pub struct Fs<D: BlockIo> {
    pub(crate) dev: D,
    pub(crate) sb: Superblock,
    pub(crate) gt: GroupTable,
    pub(crate) bs: u32,
    read_only: bool,
    policy: ErrorsPolicy,
    /// `s_state` as found at mount; written back at a clean unmount.
    mount_state: u16,
    errored: bool,
    pub(crate) now: fn() -> u32,
    pub(crate) next_generation: u32,
    /// What lookups found (crate::names).
    pub(crate) names: crate::names::NameCache,
    /// A block-sized buffer kept between directory operations (its
    /// contents mean nothing between them).
    scratch: alloc::vec::Vec<u8>,
    /// Copies of the inodes last read or written ([`InodeCache`]).
    icache: RefCell<InodeCache>,
}

/// Slots of the inode cache.
const ICACHE_SLOTS: usize = 256;

/// Copies of inodes, write-through: every inode write of this crate goes
/// through [`Fs::write_inode`], which updates the copy, so a copy is what
/// the disk (its cache) holds. A slot per `ino % ICACHE_SLOTS`; inode 0
/// (no inode) marks an empty slot. Saves the device-cache lookup and copy
/// of the inodes an operation reads again and again (a directory and the
/// file it names, read by the lookup, the permission checks, the change
/// itself and the eviction).
struct InodeCache {
    slots: alloc::vec::Vec<(u32, DiskInode)>,
}

impl InodeCache {
    fn new() -> InodeCache {
        InodeCache {
            slots: alloc::vec![(0, DiskInode::zeroed()); ICACHE_SLOTS],
        }
    }

    fn get(&self, ino: u32) -> Option<&DiskInode> {
        match self.slots.get(ino as usize % ICACHE_SLOTS) {
            Some((i, d)) if *i == ino && ino != 0 => Some(d),
            _ => None,
        }
    }

    fn put(&mut self, ino: u32, d: &DiskInode) {
        if let Some(s) = self.slots.get_mut(ino as usize % ICACHE_SLOTS) {
            *s = (ino, *d);
        }
    }

    fn forget(&mut self, ino: u32) {
        if let Some(s) = self.slots.get_mut(ino as usize % ICACHE_SLOTS)
            && s.0 == ino
        {
            s.0 = 0;
        }
    }
}

impl<D: BlockIo> Fs<D> {
    /// Reads and validates the superblock and descriptors. A read-write
    /// mount marks the file system "not clean" until [`Fs::unmount`].
    pub fn mount(dev: D, opts: MountOptions) -> Result<Fs<D>> {
        let sb = Superblock::read(&dev)?;
        let gt = GroupTable::read(&dev, &sb)?;
        let policy = opts.errors.unwrap_or(match sb.get16(S_ERRORS) {
            2 => ErrorsPolicy::RemountRo,
            3 => ErrorsPolicy::Panic,
            _ => ErrorsPolicy::Continue,
        });
        let bs = sb.block_size;
        let mount_state = sb.get16(S_STATE);
        let read_only = opts.read_only || sb.ro_only;
        let mut fs = Fs {
            dev,
            bs,
            gt,
            read_only,
            policy,
            mount_state,
            errored: mount_state & STATE_ERROR != 0,
            now: opts.now,
            next_generation: (opts.now)(),
            names: crate::names::NameCache::default(),
            scratch: alloc::vec::Vec::new(),
            icache: RefCell::new(InodeCache::new()),
            sb,
        };
        // The root must be a directory.
        let root = fs.read_inode(crate::ROOT_INO)?;
        if !root.is_dir() || root.links() == 0 {
            return Err(Error::Corrupt("root inode is not a directory"));
        }
        if !fs.read_only {
            fs.start_rw()?;
        }
        Ok(fs)
    }

    fn start_rw(&mut self) -> Result<()> {
        let t = (self.now)();
        let state = self.sb.get16(S_STATE);
        self.sb.set16(S_STATE, state & !STATE_VALID);
        self.sb
            .set16(S_MNT_COUNT, self.sb.get16(S_MNT_COUNT).wrapping_add(1));
        self.sb.set32(S_MTIME, t);
        self.write_super()
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether damage was found (now or recorded in the superblock).
    pub fn has_errors(&self) -> bool {
        self.errored
    }

    pub fn device(&self) -> &D {
        &self.dev
    }

    pub fn block_size(&self) -> u32 {
        self.bs
    }

    /// Switches between read-only and read-write (`mount -o remount`).
    pub fn remount(&mut self, read_only: bool) -> Result<()> {
        if read_only == self.read_only {
            return Ok(());
        }
        if read_only {
            self.finish()?;
            self.read_only = true;
            Ok(())
        } else {
            if self.sb.ro_only {
                return Err(Error::ReadOnly);
            }
            self.mount_state = self.sb.get16(S_STATE);
            self.read_only = false;
            self.start_rw()
        }
    }

    /// Writes the superblock with the current free counts.
    pub fn sync(&mut self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.write_super()
    }

    /// Clean unmount: writes everything back and restores the state found
    /// at mount (valid unless it was not), plus the error flag if damage was
    /// found meanwhile.
    pub fn unmount(&mut self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        let mut state = self.mount_state;
        if self.errored {
            state |= STATE_ERROR;
        }
        self.sb.set16(S_STATE, state);
        self.write_super()
    }

    pub(crate) fn write_super(&mut self) -> Result<()> {
        let (fb, fi) = self.gt.descs.iter().fold((0u32, 0u32), |(b, i), d| {
            (
                b.saturating_add(d.free_blocks.into()),
                i.saturating_add(d.free_inodes.into()),
            )
        });
        self.sb.set32(S_FREE_BLOCKS, fb);
        self.sb.set32(S_FREE_INODES, fi);
        self.sb.set32(S_WTIME, (self.now)());
        self.dev.write(SB_OFFSET, &self.sb.raw)
    }

    /// Fails with `ReadOnly` unless writes are allowed.
    pub(crate) fn writable(&self) -> Result<()> {
        if self.read_only {
            Err(Error::ReadOnly)
        } else {
            Ok(())
        }
    }

    /// Applies the `errors=` policy to a corruption found by an operation
    /// and passes the result on.
    pub(crate) fn check<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(Error::Corrupt(_)) = r {
            self.report_damage();
        }
        r
    }

    fn report_damage(&mut self) {
        let first = !self.errored;
        self.errored = true;
        if self.read_only {
            return;
        }
        if first {
            let s = self.sb.get16(S_STATE);
            self.sb.set16(S_STATE, s | STATE_ERROR);
            // Best effort: the damage is already being reported.
            let _ = self.write_super();
        }
        if self.policy != ErrorsPolicy::Continue {
            let _ = self.finish();
            self.read_only = true;
        }
    }

    pub fn statfs(&self) -> StatFs {
        let sb = &self.sb;
        let mut overhead = u64::from(sb.first_data_block);
        for g in 0..sb.groups {
            overhead += u64::from(sb.super_overhead(g)) + 2 + u64::from(sb.itable_blocks);
        }
        let free_blocks: u64 = self.gt.descs.iter().map(|d| u64::from(d.free_blocks)).sum();
        let free_files: u64 = self.gt.descs.iter().map(|d| u64::from(d.free_inodes)).sum();
        let r = u64::from(sb.get32(S_R_BLOCKS_COUNT));
        let uuid = &sb.raw[S_UUID..S_UUID + 16];
        let mut fsid = 0u64;
        for (i, b) in uuid.iter().enumerate() {
            fsid ^= u64::from(*b) << ((i % 8) * 8);
        }
        StatFs {
            block_size: self.bs,
            blocks: u64::from(sb.blocks_count).saturating_sub(overhead),
            free_blocks,
            avail_blocks: free_blocks.saturating_sub(r),
            files: u64::from(sb.inodes_count),
            free_files,
            name_max: NAME_MAX as u32,
            fsid,
        }
    }

    pub(crate) fn check_ino(&self, ino: u32) -> Result<()> {
        if ino == 0 || ino > self.sb.inodes_count {
            return Err(Error::Corrupt("inode number out of range"));
        }
        Ok(())
    }

    fn inode_offset(&self, ino: u32) -> Result<u64> {
        self.check_ino(ino)?;
        let g = (ino - 1) / self.sb.inodes_per_group;
        let idx = (ino - 1) % self.sb.inodes_per_group;
        let d = self
            .gt
            .descs
            .get(g as usize)
            .ok_or(Error::Corrupt("inode group"))?;
        Ok(u64::from(d.inode_table) * u64::from(self.bs)
            + u64::from(idx) * u64::from(self.sb.inode_size))
    }

    pub(crate) fn read_inode(&self, ino: u32) -> Result<DiskInode> {
        if let Some(i) = self.icache.borrow().get(ino) {
            return Ok(*i);
        }
        self.read_inode_uncached(ino)
    }

    /// `f` of inode `ino`, looked at in place when a copy is cached (no
    /// copy of the inode made).
    pub(crate) fn with_inode<R>(&self, ino: u32, f: impl FnOnce(&DiskInode) -> R) -> Result<R> {
        if let Some(i) = self.icache.borrow().get(ino) {
            return Ok(f(i));
        }
        self.read_inode_uncached(ino).map(|i| f(&i))
    }

    fn read_inode_uncached(&self, ino: u32) -> Result<DiskInode> {
        let off = self.inode_offset(ino)?;
        let mut i = DiskInode::zeroed();
        self.dev.read(off, &mut i.raw)?;
        self.icache.borrow_mut().put(ino, &i);
        Ok(i)
    }

    /// Writes the inode's first [`CORE_SIZE`] bytes (the rest of a larger
    /// inode is left as it is on disk).
    pub(crate) fn write_inode(&mut self, ino: u32, i: &DiskInode) -> Result<()> {
        self.writable()?;
        let off = self.inode_offset(ino)?;
        let r = self.dev.write(off, &i.raw);
        let cache = self.icache.get_mut();
        match r {
            Ok(()) => cache.put(ino, i),
            // What the device holds is unknown: read it next time.
            Err(_) => cache.forget(ino),
        }
        r
    }

    /// Zeroes the bytes of a new inode past [`CORE_SIZE`] (the extra
    /// fields of a large inode), as Linux does for a new inode.
    pub(crate) fn zero_inode_tail(&mut self, ino: u32) -> Result<()> {
        let size = self.sb.inode_size as usize;
        if size <= CORE_SIZE {
            return Ok(());
        }
        let off = self.inode_offset(ino)? + CORE_SIZE as u64;
        let zeros = [0u8; 256];
        let mut done = 0;
        while done < size - CORE_SIZE {
            let n = (size - CORE_SIZE - done).min(zeros.len());
            self.dev.write(off + done as u64, &zeros[..n])?;
            done += n;
        }
        Ok(())
    }

    /// Reads a whole block after checking it lies inside the file system.
    pub(crate) fn read_block(&self, b: u32, buf: &mut [u8]) -> Result<()> {
        self.check_block(b)?;
        self.dev.read(u64::from(b) * u64::from(self.bs), buf)
    }

    pub(crate) fn write_block(&self, b: u32, buf: &[u8]) -> Result<()> {
        self.check_block(b)?;
        self.dev.write(u64::from(b) * u64::from(self.bs), buf)
    }

    pub(crate) fn check_block(&self, b: u32) -> Result<u32> {
        if b < self.sb.first_data_block || b >= self.sb.blocks_count {
            return Err(Error::Corrupt("block number outside the file system"));
        }
        Ok(b)
    }

    /// A block-sized buffer of unspecified contents; give it back with
    /// [`Fs::put_scratch`].
    pub(crate) fn take_scratch(&mut self) -> alloc::vec::Vec<u8> {
        let b = core::mem::take(&mut self.scratch);
        if b.len() == self.bs as usize {
            b
        } else {
            alloc::vec![0u8; self.bs as usize]
        }
    }

    pub(crate) fn put_scratch(&mut self, b: alloc::vec::Vec<u8>) {
        self.scratch = b;
    }

    /// The inode's group (allocation goal).
    pub(crate) fn group_of_ino(&self, ino: u32) -> u32 {
        (ino.saturating_sub(1) / self.sb.inodes_per_group).min(self.sb.groups - 1)
    }
}
