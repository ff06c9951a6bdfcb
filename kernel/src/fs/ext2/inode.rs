//! ext2 inodes as the VFS sees them: handles ([`Ext2Inode`]) over a shared
//! per-inode [`FileState`] whose page cache holds a regular file's data.

use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ::ext2 as disk;
use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::Mutex;

use super::{Ext2Mount, Volume, errno};
use crate::block::{Bio, BioOp, BioSegment};
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{
    DirEntry, FileType, Inode, Metadata, NewNode, NodeKind, RenameFlags, Timespec, dev_major,
    dev_minor, makedev,
};
use crate::mm::page_cache::{
    PageCache, PageIo, PageRunSink, PageSource, PageWrite, ReadDone, sector_runs,
};

/// Serialises writers and size changes of one file (below the volume).
const FILE_IO_LEVEL: u8 = 30;

/// What every handle of one inode shares.
pub(super) struct FileState {
    vol: Weak<Volume>,
    ino: u32,
    /// A regular file's data pages.
    cache: Option<Arc<PageCache>>,
    handles: AtomicUsize,
    io: Mutex<(), FILE_IO_LEVEL>,
    /// The inode's type (it never changes while the inode lives, and the
    /// state goes before the inode is freed: `Volume::reap`).
    ftype: FileType,
    /// The link count reached 0 (unlink, rmdir, a rename over it): the
    /// last handle's drop queues the inode for eviction.
    unlinked: AtomicBool,
}

impl FileState {
    pub(super) fn new(vol: Weak<Volume>, ino: u32, ftype: FileType) -> Arc<FileState> {
        let regular = ftype == FileType::Regular;
        Arc::new_cyclic(|me: &Weak<FileState>| {
            let io: Weak<dyn PageIo> = me.clone();
            FileState {
                vol,
                ino,
                cache: regular.then(|| PageCache::new(io)),
                handles: AtomicUsize::new(0),
                io: Mutex::new(()),
                ftype,
                unlinked: AtomicBool::new(false),
            }
        })
    }

    pub(super) fn set_unlinked(&self) {
        self.unlinked.store(true, Ordering::Release);
    }

    pub(super) fn add_handle(&self) {
        self.handles.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn handles(&self) -> usize {
        self.handles.load(Ordering::Acquire)
    }

    /// Nothing is lost if this state goes: no handle, the inode not
    /// unlinked, no page cached (the caller holds the table's lock, under
    /// which handles are added).
    pub(super) fn is_idle(&self) -> bool {
        self.handles() == 0
            && !self.unlinked.load(Ordering::Acquire)
            && self.cache.as_ref().is_none_or(|c| c.resident() == 0)
    }

    /// Forgets the cached pages, dirty ones too (the file is being freed).
    pub(super) fn drop_pages(&self) {
        if let Some(c) = &self.cache {
            c.truncate(0);
        }
    }

    pub(super) fn sync_pages(&self) -> Result<()> {
        match &self.cache {
            Some(c) => c.sync(),
            None => Ok(()),
        }
    }

    fn vol(&self) -> Result<Arc<Volume>> {
        self.vol.upgrade().ok_or(Error::new(Errno::EIO))
    }

    /// Appends to `bios` the requests moving the blocks of page `index`
    /// that intersect bytes `[from, to)` of the page, for a file of `size`
    /// bytes, merging what continues the last request on the disk (a run
    /// of pages builds its merged requests in place, with no list per
    /// page). Holes are
    /// zeroed in the frame (reads) or allocated (writes); a newly
    /// allocated block is written whole (the frame holds zeros where the
    /// file has none). `known` holds blocks already mapped for the batch.
    #[allow(clippy::too_many_arguments)]
    fn page_bios(
        &self,
        bios: &mut Vec<Bio>,
        fs: &mut disk::Fs<super::DevIo>,
        op: BioOp,
        index: u64,
        frame: &UFrame,
        from: usize,
        to: usize,
        size: u64,
        known: &BlockRun,
    ) -> Result<()> {
        let bs = fs.block_size() as usize;
        let page_start = index * PAGE_SIZE as u64;
        let mut off = 0;
        while off < PAGE_SIZE {
            let (bstart, bend) = (off, off + bs);
            off += bs;
            let pos = page_start + bstart as u64;
            if pos >= size {
                if op == BioOp::Read {
                    frame.fill_zero(bstart, PAGE_SIZE - bstart)?;
                }
                break;
            }
            let (s, e) = (from.max(bstart), to.min(bend));
            if s >= e {
                continue;
            }
            let lblk = pos / bs as u64;
            let (phys, s, e) = if op == BioOp::Read {
                let mapped = match known.get(lblk) {
                    Some(m) => m,
                    None => fs.bmap(self.ino, lblk).map_err(errno)?,
                };
                match mapped {
                    Some(p) => (p, bstart, bend),
                    None => {
                        frame.fill_zero(bstart, bs)?;
                        continue;
                    }
                }
            } else if let Some(Some(p)) = known.get(lblk) {
                (p, s, e)
            } else {
                let (p, new) = fs.bmap_alloc(self.ino, lblk).map_err(errno)?;
                if new { (p, bstart, bend) } else { (p, s, e) }
            };
            let sector = phys * (bs as u64 / 512) + ((s - bstart) / 512) as u64;
            push_segment(
                bios,
                op,
                sector,
                BioSegment {
                    frame: frame.clone(),
                    offset: s,
                    len: e - s,
                },
            );
        }
        Ok(())
    }

    /// The file's size and the mapping of the blocks behind pages
    /// `first..=last` (one walk of the block map for the run).
    fn map_pages(
        &self,
        fs: &mut disk::Fs<super::DevIo>,
        first: u64,
        last: u64,
    ) -> Result<(u64, BlockRun)> {
        let size = fs.inode(self.ino).map_err(errno)?.size();
        let bs = u64::from(fs.block_size());
        let per_page = (PAGE_SIZE as u64 / bs).max(1);
        let start = first * per_page;
        // Blocks at or past the end of the file are never looked up.
        let end = ((last + 1) * per_page).min(size.div_ceil(bs));
        let mut run = BlockRun {
            first: start,
            blocks: Vec::new(),
        };
        if end > start {
            let n = (end - start) as usize;
            run.blocks = crate::fallible::with_capacity(n)?;
            run.blocks.resize(n, None);
            fs.bmap_run(self.ino, start, &mut run.blocks).map_err(errno)?;
        }
        Ok((size, run))
    }
}

/// Physical blocks of a run of a file's logical blocks, looked up in one
/// walk of the block map (`None`: a hole).
struct BlockRun {
    first: u64,
    blocks: Vec<Option<u64>>,
}

impl BlockRun {
    const NONE: BlockRun = BlockRun {
        first: 0,
        blocks: Vec::new(),
    };

    /// `Some(lookup)` if `lblk` is in the run.
    fn get(&self, lblk: u64) -> Option<Option<u64>> {
        let k = usize::try_from(lblk.checked_sub(self.first)?).ok()?;
        self.blocks.get(k).copied()
    }
}

/// Most bytes one bio of a file's data carries.
const MAX_BIO_BYTES: usize = 128 * 1024;
/// Most segments in one bio (well under a virtqueue's descriptors).
const MAX_BIO_SEGMENTS: usize = 32;

/// Adds a segment for `sector`, extending the last bio when the segment
/// continues it on the disk (a file laid out contiguously moves in few
/// requests).
fn push_segment(bios: &mut Vec<Bio>, op: BioOp, sector: u64, seg: BioSegment) {
    if let Some(last) = bios.last_mut()
        && last.op == op
        && last.sector + last.sectors() == sector
        && last.len() + seg.len <= MAX_BIO_BYTES
    {
        // The next bytes of the same frame widen its last segment.
        if let Some(ls) = last.segments.last_mut()
            && ls.frame.paddr() == seg.frame.paddr()
            && ls.offset + ls.len == seg.offset
        {
            ls.len += seg.len;
            return;
        }
        if last.segments.len() < MAX_BIO_SEGMENTS {
            last.segments.push(seg);
            return;
        }
    }
    bios.push(Bio {
        op,
        sector,
        segments: alloc::vec![seg],
    });
}

impl FileState {
    /// The read requests of pages `first..first + frames.len()`: the
    /// blocks mapped under one hold of the volume lock, merged where the
    /// file is contiguous on the disk; holes are zeroed in the frames.
    fn read_bios(&self, first: u64, frames: &[UFrame]) -> Result<(Arc<Volume>, Vec<Bio>)> {
        let vol = self.vol()?;
        let mut bios = Vec::new();
        {
            let mut fs = vol.fs.lock();
            let last = first + frames.len().saturating_sub(1) as u64;
            let (size, known) = self.map_pages(&mut fs, first, last)?;
            for (i, f) in frames.iter().enumerate() {
                let index = first + i as u64;
                self.page_bios(
                    &mut bios,
                    &mut fs,
                    BioOp::Read,
                    index,
                    f,
                    0,
                    PAGE_SIZE,
                    size,
                    &known,
                )?;
            }
        }
        Ok((vol, bios))
    }
}

impl PageIo for FileState {
    fn read_page(&self, index: u64, frame: &UFrame) -> Result<()> {
        let vol = self.vol()?;
        let mut fs = vol.fs.lock();
        let size = fs.inode(self.ino).map_err(errno)?.size();
        let mut bios = Vec::new();
        self.page_bios(
            &mut bios,
            &mut fs,
            BioOp::Read,
            index,
            frame,
            0,
            PAGE_SIZE,
            size,
            &BlockRun::NONE,
        )?;
        drop(fs);
        if bios.is_empty() {
            return Ok(());
        }
        vol.bdev.submit_all(bios)
    }

    fn read_pages(&self, first: u64, frames: &[UFrame]) -> Result<()> {
        let (vol, bios) = self.read_bios(first, frames)?;
        if bios.is_empty() {
            return Ok(());
        }
        vol.bdev.submit_all(bios)
    }

    /// The same requests as `read_pages`, not waited for (background
    /// readahead): the blocks are mapped under the volume lock, which is
    /// let go before the requests are queued.
    fn start_read_pages(&self, first: u64, frames: Vec<UFrame>, done: ReadDone) {
        match self.read_bios(first, &frames) {
            Ok((_, bios)) if bios.is_empty() => done(Ok(())),
            Ok((vol, bios)) => vol.bdev.submit_group(bios, done),
            Err(e) => done(Err(e)),
        }
    }

    fn write_page(&self, index: u64, frame: &UFrame, len: usize) -> Result<()> {
        self.write_range(index, frame, 0, len)
    }

    /// The volume lock is held until the writes complete: a truncate or
    /// an unlink cannot free (and another file reuse) a block between the
    /// mapping and the write.
    fn write_range(&self, index: u64, frame: &UFrame, offset: usize, len: usize) -> Result<()> {
        let vol = self.vol()?;
        let from = offset / 512 * 512;
        let to = (offset + len).div_ceil(512) * 512;
        let mut fs = vol.fs.lock();
        let size = fs.inode(self.ino).map_err(errno)?.size();
        let to = to.min(PAGE_SIZE);
        let mut bios = Vec::new();
        self.page_bios(
            &mut bios,
            &mut fs,
            BioOp::Write,
            index,
            frame,
            from,
            to,
            size,
            &BlockRun::NONE,
        )?;
        if bios.is_empty() {
            return Ok(());
        }
        let r = vol.bdev.submit_all(bios);
        drop(fs);
        r
    }

    /// A write-back batch: the blocks of every page, mapped (and
    /// allocated) under one hold of the volume lock, merged into requests
    /// of up to [`MAX_BIO_BYTES`] where the file is contiguous on the
    /// disk, all in flight together. The lock is held until they complete,
    /// as in `write_range`.
    fn write_pages(&self, pages: &[PageWrite]) -> Result<()> {
        let vol = self.vol()?;
        let mut fs = vol.fs.lock();
        let mut bios = Vec::new();
        // One walk of the block map for the batch's span (pages come in
        // ascending order); holes in it are allocated page by page.
        let (size, known) = match (pages.first(), pages.last()) {
            (Some(a), Some(b)) => self.map_pages(&mut fs, a.index, b.index)?,
            _ => return Ok(()),
        };
        for p in pages {
            for (start, len) in sector_runs(p.mask) {
                let (index, end) = (p.index, start + len);
                self.page_bios(
                    &mut bios,
                    &mut fs,
                    BioOp::Write,
                    index,
                    &p.frame,
                    start,
                    end,
                    size,
                    &known,
                )?;
            }
        }
        if bios.is_empty() {
            return Ok(());
        }
        let r = vol.bdev.submit_all(bios);
        drop(fs);
        r
    }

    fn flush(&self) -> Result<()> {
        self.vol()?.bdev.flush()
    }
}

/// A handle on an ext2 inode.
pub struct Ext2Inode {
    pub(super) mnt: Arc<Ext2Mount>,
    state: Arc<FileState>,
    ino: u32,
}

impl Drop for Ext2Inode {
    fn drop(&mut self) {
        if self.state.handles.fetch_sub(1, Ordering::AcqRel) == 1
            && self.state.unlinked.load(Ordering::Acquire)
        {
            self.mnt.vol.note_released(self.ino);
        }
    }
}

/// The ext2 inode behind `node`, if it is one.
pub fn downcast(node: &Arc<dyn Inode>) -> Option<Arc<Ext2Inode>> {
    let any: Arc<dyn Any + Send + Sync> = node.clone();
    any.downcast::<Ext2Inode>().ok()
}

fn file_type(k: disk::FileKind) -> FileType {
    match k {
        disk::FileKind::Regular => FileType::Regular,
        disk::FileKind::Directory => FileType::Directory,
        disk::FileKind::Symlink => FileType::Symlink,
        disk::FileKind::CharDev { .. } => FileType::CharDevice,
        disk::FileKind::BlockDev { .. } => FileType::BlockDevice,
        disk::FileKind::Fifo => FileType::Fifo,
        disk::FileKind::Socket => FileType::Socket,
    }
}

fn ts(sec: u32) -> Timespec {
    Timespec {
        sec: i64::from(sec),
        nsec: 0,
    }
}

fn secs(t: Timespec) -> u32 {
    t.sec.clamp(0, i64::from(u32::MAX)) as u32
}

impl Ext2Inode {
    /// A handle on inode `ino` as the VFS takes it.
    pub(super) fn handle(mnt: &Arc<Ext2Mount>, ino: u32) -> Result<Arc<dyn Inode>> {
        Ok(Self::new_typed(mnt, ino)?)
    }

    fn new_typed(mnt: &Arc<Ext2Mount>, ino: u32) -> Result<Arc<Ext2Inode>> {
        // An inode with a state is live and its type known: no read.
        let state = match mnt.vol.known_state(ino) {
            Some(s) => s,
            None => {
                let kind = mnt.vol.fs.lock().attrs(ino).map_err(errno)?.kind;
                let ftype = kind.map_or(FileType::Regular, file_type);
                mnt.vol.file_state(ino, ftype)?
            }
        };
        Ok(Arc::new(Ext2Inode {
            mnt: mnt.clone(),
            state,
            ino,
        }))
    }

    fn vol(&self) -> &Arc<Volume> {
        &self.mnt.vol
    }

    fn disk_inode(&self) -> Result<disk::DiskInode> {
        self.vol().fs.lock().inode(self.ino).map_err(errno)
    }

    fn cache(&self) -> Result<&Arc<PageCache>> {
        self.state.cache.as_ref().ok_or_else(|| self.not_regular())
    }

    fn other(&self, node: &Arc<dyn Inode>) -> Result<Arc<Ext2Inode>> {
        let o = downcast(node).ok_or(Error::new(Errno::EXDEV))?;
        if !Arc::ptr_eq(&o.mnt.vol, &self.mnt.vol) {
            return Err(Error::new(Errno::EXDEV));
        }
        Ok(o)
    }

    fn set_attr(&self, a: disk::SetAttr) -> Result<()> {
        self.vol().fs.lock().set_attr(self.ino, a).map_err(errno)
    }

    /// Writes `buf` at `offset` through the page cache, then allocates the
    /// blocks (after: the cache read the partial blocks as holes) and grows
    /// the size. Holds the file's I/O lock.
    fn write_locked(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        self.write_locked_with(offset, buf.len(), &mut |cache| cache.write(offset, buf))
    }

    /// [`Ext2Inode::write_locked`] of `len` bytes that `write` puts into the
    /// cache (from a buffer, or page by page from user memory).
    fn write_locked_with(
        &self,
        offset: usize,
        len: usize,
        write: &mut dyn FnMut(&PageCache) -> Result<usize>,
    ) -> Result<usize> {
        let cache = self.cache()?;
        let vol = self.vol();
        let end = offset
            .checked_add(len)
            .ok_or(Error::new(Errno::EFBIG))?;
        {
            let fs = vol.fs.lock();
            if fs.is_read_only() {
                return Err(Error::new(Errno::EROFS));
            }
            if end as u64 > fs.max_file_size() {
                return Err(Error::new(Errno::EFBIG));
            }
        }
        if len == 0 {
            return Ok(0);
        }
        let n = write(cache)?;
        if n == 0 {
            return Ok(0);
        }
        let bs = vol.block_size as u64;
        let mut fs = vol.fs.lock();
        let first = offset as u64 / bs;
        let last = (offset + n - 1) as u64 / bs;
        // Mapped blocks (an overwrite) are only looked up, a run of
        // pointers at a time.
        let alloc_err = fs.bmap_alloc_range(self.ino, first, last).err();
        let t = super::now();
        let size = fs.inode(self.ino).map_err(errno)?.size();
        if (offset + n) as u64 > size && alloc_err.is_none() {
            fs.set_size(self.ino, (offset + n) as u64).map_err(errno)?;
        }
        fs.set_attr(
            self.ino,
            disk::SetAttr {
                mtime: Some(t),
                ctime: Some(t),
                ..Default::default()
            },
        )
        .map_err(errno)?;
        if let Some(e) = alloc_err {
            drop(fs);
            // Nothing past the allocated part may stay cached as data.
            cache.truncate(size as usize);
            return Err(errno(e));
        }
        Ok(n)
    }

    fn entry_type(&self, fs: &mut disk::Fs<super::DevIo>, ino: u32, ft: u8) -> FileType {
        match ft {
            1 => FileType::Regular,
            2 => FileType::Directory,
            3 => FileType::CharDevice,
            4 => FileType::BlockDevice,
            5 => FileType::Fifo,
            6 => FileType::Socket,
            7 => FileType::Symlink,
            _ => fs
                .inode(ino)
                .ok()
                .and_then(|i| i.kind())
                .map_or(FileType::Regular, file_type),
        }
    }
}

impl Inode for Ext2Inode {
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        let cache = self.cache()?;
        let size = self.disk_inode()?.size();
        cache.read(offset, buf, usize::try_from(size).unwrap_or(usize::MAX))
    }

    fn size(&self) -> usize {
        self.disk_inode().map_or(0, |i| i.size() as usize)
    }

    fn metadata(&self) -> Metadata {
        let vol = self.vol();
        let i = match vol.fs.lock().attrs(self.ino).map_err(errno) {
            Ok(i) => i,
            Err(_) => {
                // Damage found after the handle was made: a dead inode.
                return Metadata {
                    dev: vol.devt,
                    ino: u64::from(self.ino),
                    file_type: FileType::Regular,
                    perm: 0,
                    nlink: 0,
                    uid: 0,
                    gid: 0,
                    rdev: 0,
                    size: 0,
                    blksize: vol.block_size,
                    blocks: 0,
                    atime: Timespec::default(),
                    mtime: Timespec::default(),
                    ctime: Timespec::default(),
                };
            }
        };
        let kind = i.kind.unwrap_or(disk::FileKind::Regular);
        let rdev = match kind {
            disk::FileKind::CharDev { major, minor }
            | disk::FileKind::BlockDev { major, minor } => makedev(major, minor),
            _ => 0,
        };
        Metadata {
            dev: vol.devt,
            ino: u64::from(self.ino),
            file_type: file_type(kind),
            perm: u32::from(i.perm),
            nlink: u32::from(i.links),
            uid: i.uid,
            gid: i.gid,
            rdev,
            size: i.size,
            blksize: vol.block_size,
            blocks: u64::from(i.blocks),
            atime: ts(i.atime),
            mtime: ts(i.mtime),
            ctime: ts(i.ctime),
        }
    }

    fn id(&self) -> (u64, u64) {
        (self.vol().devt, u64::from(self.ino))
    }

    fn file_type(&self) -> FileType {
        self.state.ftype
    }

    fn write_at(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        let _io = self.state.io.lock();
        self.write_locked(offset, buf)
    }

    fn read_pages(&self, offset: usize, len: usize, sink: &mut PageRunSink<'_>) -> Option<Result<usize>> {
        let cache = self.state.cache.as_ref()?;
        Some(self.disk_inode().and_then(|i| {
            cache.read_pages(offset, len, usize::try_from(i.size()).unwrap_or(usize::MAX), sink)
        }))
    }

    fn write_pages(
        &self,
        offset: Option<usize>,
        len: usize,
        source: &mut PageSource<'_, '_>,
    ) -> Option<Result<(usize, usize)>> {
        self.state.cache.as_ref()?;
        let _io = self.state.io.lock();
        let at = match offset {
            Some(at) => at,
            None => match self.disk_inode() {
                Ok(i) => i.size() as usize,
                Err(e) => return Some(Err(e)),
            },
        };
        Some(
            self.write_locked_with(at, len, &mut |cache| {
                cache.write_pages_nofault(at, len, source.copy, source.fetch)
            })
                .map(|n| (n, at + n)),
        )
    }

    fn append(&self, buf: &[u8]) -> Result<(usize, usize)> {
        let _io = self.state.io.lock();
        let size = self.disk_inode()?.size() as usize;
        let n = self.write_locked(size, buf)?;
        Ok((n, size + n))
    }

    fn resize(&self, size: usize) -> Result<()> {
        let cache = self.cache()?;
        let _io = self.state.io.lock();
        let vol = self.vol();
        let old = self.disk_inode()?.size() as usize;
        if vol.fs.lock().is_read_only() {
            return Err(Error::new(Errno::EROFS));
        }
        let bs = vol.block_size as usize;
        if size < old && !size.is_multiple_of(bs) {
            // The rest of the last block must read as zeros if the file
            // grows again: zero it through the cache (written back with the
            // page), never through the device cache.
            let n = (bs - size % bs).min(old - size);
            cache.write(size, &alloc::vec![0u8; n])?;
        }
        if size < old {
            cache.truncate(size);
        }
        vol.fs.lock().set_size(self.ino, size as u64).map_err(errno)
    }

    fn can_mmap(&self) -> bool {
        self.state.cache.is_some()
    }

    fn shared_page(&self, index: usize) -> Result<UFrame> {
        self.cache()?.page(index as u64)
    }

    fn page_cache(&self) -> Option<Arc<PageCache>> {
        self.state.cache.clone()
    }

    fn has_shared_pages(&self) -> bool {
        self.state.cache.is_some()
    }

    fn sync(&self, _data_only: bool) -> Result<()> {
        if let Some(c) = &self.state.cache {
            c.sync()?;
        }
        // The inode and the blocks it maps are in the device cache.
        let vol = self.vol();
        vol.fs.lock().sync().map_err(errno)?;
        vol.bdev.page_cache().sync_and_flush()
    }

    fn sync_fs(&self) -> Result<()> {
        self.vol().sync_all()
    }

    fn set_perm(&self, perm: u32) -> Result<()> {
        let t = super::now();
        self.set_attr(disk::SetAttr {
            perm: Some((perm & 0o7777) as u16),
            ctime: Some(t),
            ..Default::default()
        })
    }

    fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> Result<()> {
        let t = super::now();
        self.set_attr(disk::SetAttr {
            uid,
            gid,
            ctime: Some(t),
            ..Default::default()
        })
    }

    fn touch_atime(&self, strict: bool) {
        let vol = self.vol();
        let mut fs = vol.fs.lock();
        if fs.is_read_only() {
            return;
        }
        let Ok(i) = fs.inode(self.ino) else { return };
        let now = super::now();
        // relatime (mount(8)): only if not newer than the last change, or
        // a day old.
        let stale = i.atime() <= i.mtime()
            || i.atime() <= i.ctime()
            || now.saturating_sub(i.atime()) >= 86_400;
        if strict || stale {
            let _ = fs.set_attr(
                self.ino,
                disk::SetAttr {
                    atime: Some(now),
                    ..Default::default()
                },
            );
        }
    }

    fn set_times(&self, atime: Option<Timespec>, mtime: Option<Timespec>) -> Result<()> {
        let t = super::now();
        self.set_attr(disk::SetAttr {
            atime: atime.map(secs),
            mtime: mtime.map(secs),
            ctime: Some(t),
            ..Default::default()
        })
    }

    fn lookup(&self, name: &str) -> Result<Arc<dyn Inode>> {
        let ino = self
            .vol()
            .fs
            .lock()
            .lookup(self.ino, name.as_bytes())
            .map_err(errno)?;
        Ext2Inode::handle(&self.mnt, ino)
    }

    fn create(&self, name: &str, node: NewNode) -> Result<Arc<dyn Inode>> {
        let vol = self.vol();
        vol.reap();
        let perm = (node.perm & 0o7777) as u16;
        let ino = {
            let mut fs = vol.fs.lock();
            let kind = match &node.kind {
                NodeKind::Regular => disk::FileKind::Regular,
                NodeKind::Directory => disk::FileKind::Directory,
                NodeKind::Symlink(target) => {
                    let ino = fs.symlink(
                        self.ino,
                        name.as_bytes(),
                        target.as_bytes(),
                        node.uid,
                        node.gid,
                    );
                    drop(fs);
                    return Ext2Inode::handle(&self.mnt, ino.map_err(errno)?);
                }
                NodeKind::Special(t, rdev) => {
                    let (major, minor) = (dev_major(*rdev), dev_minor(*rdev));
                    match t {
                        FileType::CharDevice => disk::FileKind::CharDev { major, minor },
                        FileType::BlockDevice => disk::FileKind::BlockDev { major, minor },
                        FileType::Fifo => disk::FileKind::Fifo,
                        FileType::Socket => disk::FileKind::Socket,
                        _ => return Err(Error::new(Errno::EINVAL)),
                    }
                }
            };
            let new = disk::NewInode {
                kind,
                perm,
                uid: node.uid,
                gid: node.gid,
            };
            fs.create(self.ino, name.as_bytes(), new).map_err(errno)?
        };
        Ext2Inode::handle(&self.mnt, ino)
    }

    fn link(&self, name: &str, target: &Arc<dyn Inode>) -> Result<()> {
        let t = self.other(target)?;
        self.vol()
            .fs
            .lock()
            .link(self.ino, name.as_bytes(), t.ino)
            .map_err(errno)
    }

    fn unlink(&self, name: &str) -> Result<()> {
        let vol = self.vol();
        let (ino, links) = vol
            .fs
            .lock()
            .unlink(self.ino, name.as_bytes())
            .map_err(errno)?;
        if links == 0 {
            vol.mark_unlinked(ino);
            vol.reap();
        }
        Ok(())
    }

    fn rmdir(&self, name: &str) -> Result<()> {
        let vol = self.vol();
        let ino = vol
            .fs
            .lock()
            .rmdir(self.ino, name.as_bytes())
            .map_err(errno)?;
        vol.mark_unlinked(ino);
        vol.reap();
        Ok(())
    }

    fn rename(
        &self,
        old_name: &str,
        new_dir: &Arc<dyn Inode>,
        new_name: &str,
        flags: RenameFlags,
    ) -> Result<()> {
        if flags.exchange {
            return Err(Error::new(Errno::EINVAL));
        }
        let nd = self.other(new_dir)?;
        let vol = self.vol();
        let replaced = vol
            .fs
            .lock()
            .rename(
                self.ino,
                old_name.as_bytes(),
                nd.ino,
                new_name.as_bytes(),
                flags.noreplace,
            )
            .map_err(errno)?;
        if let Some((ino, 0)) = replaced {
            vol.mark_unlinked(ino);
            vol.reap();
        }
        Ok(())
    }

    fn read_dir(&self, cookie: u64, sink: &mut dyn FnMut(DirEntry<'_>) -> bool) -> Result<()> {
        // Entries are gathered a batch at a time under the volume lock and
        // handed to `sink` without it (it copies to user memory).
        let mut cookie = cookie;
        loop {
            let mut batch: Vec<(u32, Vec<u8>, FileType, u64)> = Vec::new();
            {
                let vol = self.vol();
                let mut fs = vol.fs.lock();
                let mut raw = Vec::new();
                fs.read_dir(self.ino, cookie, &mut |e| {
                    raw.push(e);
                    raw.len() < 64
                })
                .map_err(errno)?;
                for e in raw {
                    let t = self.entry_type(&mut fs, e.ino, e.file_type);
                    batch.push((e.ino, e.name, t, e.next));
                }
            }
            if batch.is_empty() {
                return Ok(());
            }
            for (ino, name, file_type, next) in batch {
                cookie = next;
                // Names that are not UTF-8 cannot be handed to the VFS.
                let Ok(name) = core::str::from_utf8(&name) else {
                    continue;
                };
                if !sink(DirEntry {
                    ino: u64::from(ino),
                    name,
                    file_type,
                    next_cookie: next,
                }) {
                    return Ok(());
                }
            }
        }
    }

    fn read_link(&self) -> Result<String> {
        let bytes = self.vol().fs.lock().read_link(self.ino).map_err(errno)?;
        String::from_utf8(bytes)
            .map_err(|_| Error::with_message(Errno::EIO, "symlink target is not UTF-8"))
    }
}
