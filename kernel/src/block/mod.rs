//! The block layer: disks registered by their drivers, their partitions,
//! and the requests (`Bio`s) that move sectors between them and memory.
//!
//! A driver implements [`BlockDriver`] and calls [`register_disk`]; the
//! disk then appears as /dev/<prefix><letter> (vda, vdb, ... ram0 ...) and
//! in /sys/block, its partition table is read (MBR or GPT) and each
//! partition becomes a [`BlockDevice`] of its own (vda1 ...). Every block
//! device has a page cache of its own over its sectors: what read(2),
//! write(2) and mmap(2) of /dev/vda go through, and the "buffer cache" a
//! file system keeps its metadata in.
//!
//! Requests are owned values: a [`Bio`] names whole frames, the driver
//! calls the completion exactly once, in task context (the worker thread of
//! virtio-blk and loop, or the submitter for brd; never an interrupt handler),
//! where it records the result and wakes the sleeper. It may take spin
//! locks but must not sleep.

pub mod brd;
pub mod devfile;
pub mod loop_dev;
pub mod partition;
pub mod sysfs;
pub mod virtio_blk;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::{SpinLock, WaitQueue};

use crate::error::{Errno, Error, Result};
use crate::fs::inode::makedev;
use crate::mm::page_cache::{PageCache, PageIo, PageWrite, ReadDone, SECTOR_SIZE, sector_runs};

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BioOp {
    Read,
    Write,
    /// Makes every completed write durable (a cache flush); no segments.
    Flush,
}

/// A piece of a request: `len` bytes at `offset` of `frame` (both
/// multiples of 512, within the frame).
#[derive(Clone, Debug)]
pub struct BioSegment {
    pub frame: UFrame,
    pub offset: usize,
    pub len: usize,
}

/// A request: `op` on the sectors starting at `sector` (512 bytes each),
/// the segments laid end to end.
#[derive(Clone, Debug)]
pub struct Bio {
    pub op: BioOp,
    pub sector: u64,
    pub segments: Vec<BioSegment>,
}

impl Bio {
    /// Bytes the request moves.
    pub fn len(&self) -> usize {
        self.segments.iter().map(|s| s.len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sectors the request moves.
    pub fn sectors(&self) -> u64 {
        (self.len() / SECTOR_SIZE) as u64
    }

    /// Whether every segment is sector aligned and inside its frame.
    fn is_well_formed(&self) -> bool {
        self.segments.iter().all(|s| {
            s.offset % SECTOR_SIZE == 0
                && s.len % SECTOR_SIZE == 0
                && s.len > 0
                && s.offset.checked_add(s.len).is_some_and(|e| e <= PAGE_SIZE)
        }) && (self.op == BioOp::Flush) == self.segments.is_empty()
    }
}

/// Completion callback of a request.
pub type BioDone = Box<dyn FnOnce(Result<()>) + Send>;

/// A disk driver (virtio-blk, the RAM disk).
pub trait BlockDriver: Send + Sync {
    fn capacity_sectors(&self) -> u64;
    /// Bytes per logical block (512 for virtio-blk unless its config says
    /// otherwise).
    fn logical_block_size(&self) -> u32;
    fn read_only(&self) -> bool;
    /// Queues `bio`; calls `done` exactly once, in task context (it may take
    /// spin locks, must not sleep), with Ok or EIO. Several bios may be in flight.
    /// Returns Err (EAGAIN when full, ...) without calling `done` if not
    /// queued.
    fn submit(&self, bio: Bio, done: BioDone) -> Result<()>;
}

/// Linux's major number of virtio-blk disks ("vd*": a dynamic major that
/// is 254 on a typical system), with 16 minors per disk.
pub const VIRTBLK_MAJOR: u32 = 254;
/// The RAM disk's major (RAMDISK_MAJOR), one minor per disk (brd's
/// default max_part=1): its partitions get BLOCK_EXT_MAJOR numbers.
pub const RAMDISK_MAJOR: u32 = 1;
/// Linux's BLOCK_EXT_MAJOR: partitions past a disk's 15 minors.
pub const BLOCK_EXT_MAJOR: u32 = 259;
pub const MINORS_PER_DISK: u32 = 16;

/// A whole disk or one of its partitions.
pub struct BlockDevice {
    name: String,
    devt: u64,
    driver: Arc<dyn BlockDriver>,
    /// First sector on the disk (0 for the disk itself).
    start: u64,
    sectors: AtomicU64,
    /// Partition number (0: the whole disk).
    partno: u32,
    read_only: AtomicBool,
    /// The disk of a partition.
    disk: Weak<BlockDevice>,
    partitions: SpinLock<Vec<Arc<BlockDevice>>, 35>,
    cache: Arc<PageCache>,
    /// Woken by every completion, for submitters waiting on a full queue.
    room: Arc<WaitQueue>,
    /// Completions so far (what a submitter waiting for room watches).
    completions: Arc<AtomicU64>,
    /// Open files and mounts using the device ([`Hold`]s): what makes it
    /// busy (Linux's bd_openers), unlike references held for a moment by
    /// write-back or a lookup.
    holders: AtomicUsize,
}

/// A use of a block device that makes it busy while it lives: an open
/// file of it, or a file system mounted on it (EBUSY for LOOP_CLR_FD's
/// immediate unbinding, BLKRRPART).
pub struct Hold(Arc<BlockDevice>);

impl Hold {
    pub fn device(&self) -> &Arc<BlockDevice> {
        &self.0
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.holders.fetch_sub(1, Ordering::AcqRel);
    }
}

impl core::fmt::Debug for BlockDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "BlockDevice({})", self.name)
    }
}

struct Registry {
    devices: Vec<Arc<BlockDevice>>,
    /// Disks registered so far, per name prefix (the next letter).
    next_index: Vec<(String, u32)>,
    /// Next free minor of BLOCK_EXT_MAJOR.
    next_ext_minor: u32,
}

static REGISTRY: SpinLock<Registry, 35> = SpinLock::new(Registry {
    devices: Vec::new(),
    next_index: Vec::new(),
    next_ext_minor: 0,
});

/// "a".."z", "aa".. (Linux's sd_format_disk_name).
fn disk_suffix(mut index: u32) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (index % 26) as u8);
        if index < 26 {
            break;
        }
        index = index / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

impl BlockDevice {
    fn new(
        name: String,
        devt: u64,
        driver: Arc<dyn BlockDriver>,
        start: u64,
        sectors: u64,
        partno: u32,
        disk: Weak<BlockDevice>,
    ) -> Arc<BlockDevice> {
        let read_only = driver.read_only();
        // A partition shares its disk's queue-room wait queue and counter.
        let (room, completions) = disk.upgrade().map_or_else(
            || (Arc::new(WaitQueue::new()), Arc::new(AtomicU64::new(0))),
            |d| (d.room.clone(), d.completions.clone()),
        );
        Arc::new_cyclic(|me: &Weak<BlockDevice>| {
            let io: Weak<dyn PageIo> = me.clone();
            BlockDevice {
                name,
                devt,
                driver,
                start,
                sectors: AtomicU64::new(sectors),
                partno,
                read_only: AtomicBool::new(read_only),
                disk,
                partitions: SpinLock::new(Vec::new()),
                cache: PageCache::new(io),
                room,
                completions,
                holders: AtomicUsize::new(0),
            }
        })
    }

    /// Takes a [`Hold`] on the device (an open, a mount).
    pub fn hold(self: &Arc<Self>) -> Hold {
        self.holders.fetch_add(1, Ordering::AcqRel);
        Hold(self.clone())
    }

    /// How many [`Hold`]s the device has.
    pub fn holders(&self) -> usize {
        self.holders.load(Ordering::Acquire)
    }

    /// "vda", "vda1", "ram0".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device number (/dev node's rdev).
    pub fn devt(&self) -> u64 {
        self.devt
    }

    /// Size in 512-byte sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.sectors.load(Ordering::Relaxed)
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.capacity_sectors().saturating_mul(SECTOR_SIZE as u64)
    }

    /// First sector on the disk (0 for a whole disk).
    pub fn start_sector(&self) -> u64 {
        self.start
    }

    /// Partition number (0 for a whole disk).
    pub fn partno(&self) -> u32 {
        self.partno
    }

    pub fn logical_block_size(&self) -> u32 {
        self.driver.logical_block_size()
    }

    pub fn read_only(&self) -> bool {
        self.read_only.load(Ordering::Relaxed)
    }

    /// BLKROSET.
    pub fn set_read_only(&self, ro: bool) {
        self.read_only.store(ro, Ordering::Relaxed);
    }

    /// A new size (a loop device bound to another file).
    pub fn set_capacity(&self, sectors: u64) {
        self.sectors.store(sectors, Ordering::Relaxed);
    }

    /// The whole disk this device is (part of).
    pub fn disk(self: &Arc<Self>) -> Arc<BlockDevice> {
        self.disk.upgrade().unwrap_or_else(|| self.clone())
    }

    /// The partitions of a whole disk.
    pub fn partitions(&self) -> Vec<Arc<BlockDevice>> {
        self.partitions.lock().clone()
    }

    /// The device's page cache: raw reads and writes of /dev/vda, and the
    /// metadata ("buffer") cache of a file system on it.
    pub fn page_cache(&self) -> &Arc<PageCache> {
        &self.cache
    }

    /// Queues `bio` (sectors relative to this device) and calls `done` when
    /// it completes. EIO for a request outside the device, EROFS for a
    /// write to a read-only one, EINVAL for a malformed one.
    pub fn submit(&self, mut bio: Bio, done: BioDone) -> Result<()> {
        if !bio.is_well_formed() {
            return Err(Error::with_message(Errno::EINVAL, "malformed bio"));
        }
        if bio.op == BioOp::Write && self.read_only() {
            return Err(Error::new(Errno::EROFS));
        }
        let end = bio
            .sector
            .checked_add(bio.sectors())
            .ok_or(Error::new(Errno::EIO))?;
        if bio.op != BioOp::Flush && end > self.capacity_sectors() {
            return Err(Error::with_message(
                Errno::EIO,
                "bio past the end of the device",
            ));
        }
        bio.sector += self.start;
        let room = self.room.clone();
        let completions = self.completions.clone();
        let done: BioDone = Box::new(move |r| {
            done(r);
            completions.fetch_add(1, Ordering::Release);
            room.wake_all();
        });
        self.driver.submit(bio, done)
    }

    /// Submits every bio, several in flight at once, and sleeps until all
    /// completed; the first error (EIO) is returned.
    pub fn submit_all(&self, bios: Vec<Bio>) -> Result<()> {
        let waiter = Arc::new(Completion::new(bios.len()));
        let mut result = Ok(());
        let mut queued = 0;
        for bio in bios {
            loop {
                let w = waiter.clone();
                match self.submit(bio.clone(), Box::new(move |r| w.complete(r))) {
                    Ok(()) => {
                        queued += 1;
                        break;
                    }
                    Err(e) if e.errno() == Errno::EAGAIN => {
                        // The queue is full: wait for a completion.
                        let seen = waiter.completed();
                        let deadline = frame::timer::monotonic_ns().saturating_add(10_000_000);
                        let _ = self.room.wait_until_or_deadline(
                            || (waiter.completed() != seen).then_some(()),
                            deadline,
                        );
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if result.is_err() {
                break;
            }
        }
        waiter.wait(queued);
        result.and(waiter.result())
    }

    /// Submits every bio, several in flight at once, without waiting for
    /// them: `done` is called once, when the last has completed, with the
    /// first error (EIO) if any failed (or could not be queued). Waits
    /// only while the driver's queue is full.
    pub fn submit_group(&self, bios: Vec<Bio>, done: ReadDone) {
        /// Shared by the bios' completions; the last one to let go of it
        /// calls `done` (from `Drop`: no lock, no counter to race on).
        struct Group {
            failed: AtomicBool,
            /// Only ever reached through `get_mut` (in `drop`): the lock
            /// is never taken, it only makes the group `Sync`.
            done: SpinLock<Option<ReadDone>, 57>,
        }
        impl Drop for Group {
            fn drop(&mut self) {
                if let Some(done) = self.done.get_mut().take() {
                    done(if self.failed.load(Ordering::Acquire) {
                        Err(Error::with_message(Errno::EIO, "device error"))
                    } else {
                        Ok(())
                    });
                }
            }
        }
        let group = Arc::new(Group {
            failed: AtomicBool::new(false),
            done: SpinLock::new(Some(done)),
        });
        for bio in bios {
            loop {
                let g = group.clone();
                let seen = self.completions.load(Ordering::Acquire);
                match self.submit(
                    bio.clone(),
                    Box::new(move |r| {
                        if r.is_err() {
                            g.failed.store(true, Ordering::Release);
                        }
                    }),
                ) {
                    Ok(()) => break,
                    Err(e) if e.errno() == Errno::EAGAIN => {
                        // The queue is full: wait for a completion.
                        let deadline = frame::timer::monotonic_ns().saturating_add(10_000_000);
                        let _ = self.room.wait_until_or_deadline(
                            || (self.completions.load(Ordering::Acquire) != seen).then_some(()),
                            deadline,
                        );
                    }
                    Err(_) => {
                        group.failed.store(true, Ordering::Release);
                        return; // the bios still in flight call `done`
                    }
                }
            }
        }
    }

    /// Makes completed writes durable (a Flush request).
    pub fn flush(&self) -> Result<()> {
        self.submit_all(alloc::vec![Bio {
            op: BioOp::Flush,
            sector: 0,
            segments: Vec::new()
        }])
    }

    /// Reads or writes whole sectors of one page: `len` bytes at byte
    /// `offset` of page `index` of this device, clipped to its end.
    fn page_io(
        &self,
        op: BioOp,
        index: u64,
        frame: &UFrame,
        offset: usize,
        len: usize,
    ) -> Result<usize> {
        let first = index * (PAGE_SIZE / SECTOR_SIZE) as u64 + (offset / SECTOR_SIZE) as u64;
        let cap = self.capacity_sectors();
        if first >= cap {
            return Ok(0);
        }
        let n = ((len / SECTOR_SIZE) as u64).min(cap - first) as usize * SECTOR_SIZE;
        if n == 0 {
            return Ok(0);
        }
        let seg = BioSegment {
            frame: frame.clone(),
            offset,
            len: n,
        };
        self.submit_all(alloc::vec![Bio {
            op,
            sector: first,
            segments: alloc::vec![seg]
        }])?;
        Ok(n)
    }
}

impl BlockDevice {
    /// The read requests of pages `first..first + frames.len()`: one bio
    /// per run of up to 16 pages, clipped to the device's end (the part
    /// of a page past it is zeroed).
    fn read_bios(&self, first: u64, frames: &[UFrame]) -> Result<Vec<Bio>> {
        let per_page = (PAGE_SIZE / SECTOR_SIZE) as u64;
        let cap = self.capacity_sectors();
        let mut bios = Vec::new();
        for (chunk_no, chunk) in frames.chunks(16).enumerate() {
            let chunk_first = first + (chunk_no * 16) as u64;
            let sector = chunk_first * per_page;
            let mut segments = Vec::new();
            for (i, f) in chunk.iter().enumerate() {
                let s = sector + i as u64 * per_page;
                if s >= cap {
                    break;
                }
                let n = (cap - s).min(per_page) as usize * SECTOR_SIZE;
                if n < PAGE_SIZE {
                    f.fill_zero(n, PAGE_SIZE - n)?;
                }
                segments.push(BioSegment {
                    frame: f.clone(),
                    offset: 0,
                    len: n,
                });
            }
            if !segments.is_empty() {
                bios.push(Bio {
                    op: BioOp::Read,
                    sector,
                    segments,
                });
            }
        }
        Ok(bios)
    }
}

impl PageIo for BlockDevice {
    fn read_page(&self, index: u64, frame: &UFrame) -> Result<()> {
        let n = self.page_io(BioOp::Read, index, frame, 0, PAGE_SIZE)?;
        if n < PAGE_SIZE {
            frame.fill_zero(n, PAGE_SIZE - n)?;
        }
        Ok(())
    }

    fn write_page(&self, index: u64, frame: &UFrame, len: usize) -> Result<()> {
        self.write_range(index, frame, 0, len)
    }

    fn write_range(&self, index: u64, frame: &UFrame, offset: usize, len: usize) -> Result<()> {
        let (s, e) = (
            offset / SECTOR_SIZE * SECTOR_SIZE,
            (offset + len).div_ceil(SECTOR_SIZE) * SECTOR_SIZE,
        );
        self.page_io(BioOp::Write, index, frame, s, e.min(PAGE_SIZE) - s)
            .map(|_| ())
    }

    /// One bio per run of up to 16 pages, all in flight together.
    fn read_pages(&self, first: u64, frames: &[UFrame]) -> Result<()> {
        self.submit_all(self.read_bios(first, frames)?)
    }

    /// The same bios as `read_pages`, not waited for (background readahead).
    fn start_read_pages(&self, first: u64, frames: Vec<UFrame>, done: ReadDone) {
        match self.read_bios(first, &frames) {
            Ok(bios) if bios.is_empty() => done(Ok(())),
            Ok(bios) => self.submit_group(bios, done),
            Err(e) => done(Err(e)),
        }
    }

    /// A write-back batch: every run of sectors as a segment, runs that
    /// continue each other on the device in one bio (up to 32 segments),
    /// clipped to the device's end, all in flight together.
    fn write_pages(&self, pages: &[PageWrite]) -> Result<()> {
        let per_page = (PAGE_SIZE / SECTOR_SIZE) as u64;
        let cap = self.capacity_sectors();
        let mut bios: Vec<Bio> = Vec::new();
        for p in pages {
            for (start, len) in sector_runs(p.mask) {
                let sector = p.index * per_page + (start / SECTOR_SIZE) as u64;
                if sector >= cap {
                    break;
                }
                let len = ((len / SECTOR_SIZE) as u64).min(cap - sector) as usize * SECTOR_SIZE;
                let seg = BioSegment {
                    frame: p.frame.clone(),
                    offset: start,
                    len,
                };
                match bios.last_mut() {
                    Some(b) if b.sector + b.sectors() == sector && b.segments.len() < 32 => {
                        b.segments.push(seg)
                    }
                    _ => bios.push(Bio {
                        op: BioOp::Write,
                        sector,
                        segments: alloc::vec![seg],
                    }),
                }
            }
        }
        if bios.is_empty() {
            return Ok(());
        }
        self.submit_all(bios)
    }

    fn flush(&self) -> Result<()> {
        BlockDevice::flush(self)
    }
}

/// Completion of a group of bios: the sleeper waits until all are done.
struct Completion {
    done: AtomicU64,
    /// 0: no error; 1: EIO.
    failed: AtomicU8,
    queue: WaitQueue,
}

impl Completion {
    fn new(_n: usize) -> Completion {
        Completion {
            done: AtomicU64::new(0),
            failed: AtomicU8::new(0),
            queue: WaitQueue::new(),
        }
    }

    /// Runs in the driver's completion context: only atomics and a wake-up.
    fn complete(&self, r: Result<()>) {
        if r.is_err() {
            self.failed.store(1, Ordering::Release);
        }
        self.done.fetch_add(1, Ordering::AcqRel);
        self.queue.wake_all();
    }

    fn completed(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    /// Sleeps (uninterruptibly, as disk waits are) until `n` completed.
    fn wait(&self, n: usize) {
        self.queue
            .wait_until(|| (self.completed() >= n as u64).then_some(()));
    }

    fn result(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) != 0 {
            return Err(Error::with_message(Errno::EIO, "device error"));
        }
        Ok(())
    }
}

/// Submits `bio` to `dev` and sleeps until it completes.
pub fn submit_wait(dev: &BlockDevice, bio: Bio) -> Result<()> {
    dev.submit_all(alloc::vec![bio])
}

/// Registers a disk driven by `driver` as the next free
/// `<name_prefix><letter>` ("vd": vda, vdb ...; "ram": ram0, ram1 ...),
/// reads its partition table, and adds it and its partitions to /dev and
/// /sys/block.
pub fn register_disk(name_prefix: &str, driver: Arc<dyn BlockDriver>) -> Result<Arc<BlockDevice>> {
    let numbered = name_prefix == "ram";
    let (name, devt) = {
        let mut reg = REGISTRY.lock();
        let slot = match reg.next_index.iter_mut().find(|(p, _)| p == name_prefix) {
            Some((_, n)) => n,
            None => {
                reg.next_index.push((String::from(name_prefix), 0));
                &mut reg
                    .next_index
                    .last_mut()
                    .ok_or(Error::new(Errno::ENOMEM))?
                    .1
            }
        };
        let index = *slot;
        *slot += 1;
        if numbered {
            (
                alloc::format!("{name_prefix}{index}"),
                makedev(RAMDISK_MAJOR, index),
            )
        } else {
            let major = VIRTBLK_MAJOR;
            (
                alloc::format!("{name_prefix}{}", disk_suffix(index)),
                makedev(major, index * MINORS_PER_DISK),
            )
        }
    };
    let sectors = driver.capacity_sectors();
    let disk = BlockDevice::new(name, devt, driver, 0, sectors, 0, Weak::new());
    REGISTRY.lock().devices.push(disk.clone());
    frame::log_info!("block: {} ({} sectors of 512 bytes)", disk.name, sectors);
    crate::mm::page_cache::start_writeback();
    if let Err(e) = rescan_partitions(&disk) {
        frame::log_info!("block: {}: partition table not read: {e:?}", disk.name);
    }
    crate::fs::devfs::add_block_device(&disk);
    Ok(disk)
}

/// Reads `disk`'s partition table again (boot, BLKRRPART): the old
/// partitions go (EBUSY while one is open or mounted), the new ones
/// appear.
pub fn rescan_partitions(disk: &Arc<BlockDevice>) -> Result<()> {
    if disk.partno != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // A partition in use (open, mounted) keeps the table: EBUSY, as
    // Linux's bdev_disk_changed with open partitions.
    if disk.partitions.lock().iter().any(|p| p.holders() > 0) {
        return Err(Error::new(Errno::EBUSY));
    }
    // Read through the disk's cache, so that a table just written with
    // write(2) is seen without a sync.
    let reader = |sector: u64, buf: &mut [u8]| -> Result<()> {
        let off = sector
            .checked_mul(SECTOR_SIZE as u64)
            .ok_or(Error::new(Errno::EIO))? as usize;
        let n = disk.cache.read(off, buf, disk.size() as usize)?;
        if n != buf.len() {
            return Err(Error::new(Errno::EIO));
        }
        Ok(())
    };
    let found = partition::read_table(disk.capacity_sectors(), &reader);
    let old = core::mem::take(&mut *disk.partitions.lock());
    {
        let mut reg = REGISTRY.lock();
        reg.devices
            .retain(|d| !old.iter().any(|o| Arc::ptr_eq(o, d)));
    }
    for p in &old {
        crate::fs::devfs::remove_block_device(p);
    }
    let mut new = Vec::new();
    for part in found {
        // A RAM disk has one minor (brd's max_part=1): its partitions, and
        // a disk's past its 15, get extended numbers, as on Linux.
        let own_minors = crate::fs::inode::dev_major(disk.devt) != RAMDISK_MAJOR;
        let devt = if own_minors && part.number < MINORS_PER_DISK {
            makedev(
                crate::fs::inode::dev_major(disk.devt),
                crate::fs::inode::dev_minor(disk.devt) + part.number,
            )
        } else {
            let mut reg = REGISTRY.lock();
            let m = reg.next_ext_minor;
            reg.next_ext_minor += 1;
            makedev(BLOCK_EXT_MAJOR, m)
        };
        let sep = if disk.name.ends_with(|c: char| c.is_ascii_digit()) {
            "p"
        } else {
            ""
        };
        let name = alloc::format!("{}{sep}{}", disk.name, part.number);
        let dev = BlockDevice::new(
            name,
            devt,
            disk.driver.clone(),
            part.start,
            part.sectors,
            part.number,
            Arc::downgrade(disk),
        );
        new.push(dev);
    }
    REGISTRY.lock().devices.extend(new.iter().cloned());
    *disk.partitions.lock() = new.clone();
    for p in &new {
        crate::fs::devfs::add_block_device(p);
    }
    Ok(())
}

/// The block device with device number `devt`.
pub fn lookup(devt: u64) -> Option<Arc<BlockDevice>> {
    REGISTRY
        .lock()
        .devices
        .iter()
        .find(|d| d.devt == devt)
        .cloned()
}

/// The block device called `name` ("vda", "vda1").
pub fn lookup_name(name: &str) -> Option<Arc<BlockDevice>> {
    REGISTRY
        .lock()
        .devices
        .iter()
        .find(|d| d.name == name)
        .cloned()
}

/// The block device a path names (mount(2)'s source): ENOTBLK if it is
/// not a block device node, ENXIO if no device has its number.
pub fn lookup_path(fs: &crate::fs::FsContext, path: &str) -> Result<Arc<BlockDevice>> {
    let node = crate::fs::lookup(fs, fs.root(), path, true)?;
    if node.file_type() != crate::fs::inode::FileType::BlockDevice {
        return Err(Error::new(Errno::ENOTBLK));
    }
    if !crate::fs::mount::allows_devices(&node) {
        return Err(Error::new(Errno::EACCES));
    }
    lookup(node.metadata().rdev).ok_or(Error::new(Errno::ENXIO))
}

/// Every registered device (disks and partitions), in registration order.
pub fn devices() -> Vec<Arc<BlockDevice>> {
    REGISTRY.lock().devices.clone()
}

/// Registers a disk under the name and number its driver chose (the loop
/// devices: loop0 is 7:0), without reading a partition table: EEXIST if
/// either is taken.
pub fn register_named_disk(name: String, devt: u64, driver: Arc<dyn BlockDriver>) -> Result<Arc<BlockDevice>> {
    let sectors = driver.capacity_sectors();
    let disk = BlockDevice::new(name, devt, driver, 0, sectors, 0, Weak::new());
    {
        let mut reg = REGISTRY.lock();
        if reg.devices.iter().any(|d| d.devt == devt || d.name == disk.name) {
            return Err(Error::new(Errno::EEXIST));
        }
        reg.devices.push(disk.clone());
    }
    crate::mm::page_cache::start_writeback();
    crate::fs::devfs::add_block_device(&disk);
    Ok(disk)
}

/// Removes a disk (and its partitions) from the registry, /dev and
/// /sys/block (LOOP_CTL_REMOVE).
pub fn unregister_disk(disk: &Arc<BlockDevice>) {
    let parts = core::mem::take(&mut *disk.partitions.lock());
    REGISTRY.lock().devices.retain(|d| !Arc::ptr_eq(d, disk) && !parts.iter().any(|p| Arc::ptr_eq(p, d)));
    for p in &parts {
        crate::fs::devfs::remove_block_device(p);
    }
    crate::fs::devfs::remove_block_device(disk);
}

/// sync(2): each mounted file system's metadata, every page cache, then
/// a flush of every disk. Errors are left for each file's fsync.
pub fn sync_all() {
    for m in crate::fs::mount::mounts() {
        let _ = m.root.sync_fs();
    }
    let _ = crate::mm::page_cache::sync_all();
    for d in devices() {
        if d.partno == 0 {
            let _ = d.flush();
        }
    }
}

/// Registers the devices the command line asks for (the RAM disks) and
/// the loop devices.
pub fn init(cmdline: &str) {
    virtio_blk::probe_all();
    brd::init(cmdline);
    loop_dev::init();
}
