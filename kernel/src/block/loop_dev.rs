//! The loop device (Linux's loop(4)): /dev/loopN is a block device whose
//! sectors are the bytes of a file (a regular file or another block
//! device), from `offset` for `sizelimit` bytes; /dev/loop-control hands
//! out, adds and removes the devices.
//!
//! - /dev/loop-control (10:237): `LOOP_CTL_GET_FREE` (the number of an
//!   unbound device, creating one if none is free), `LOOP_CTL_ADD` (N,
//!   EEXIST if it exists), `LOOP_CTL_REMOVE` (N: ENODEV if there is none,
//!   EBUSY while it is bound or open).
//! - /dev/loopN (7:N): `LOOP_SET_FD` and `LOOP_CONFIGURE` bind a file
//!   (EBUSY if bound, EBADF for a bad descriptor, EINVAL for a file that is
//!   neither regular nor a block device, for a loop of loops, and for
//!   unknown flags, block sizes or non-zero reserved fields);
//!   `LOOP_CLR_FD` unbinds (ENXIO if unbound; while someone else still
//!   has the device open or mounted it only sets AUTOCLEAR, as Linux
//!   does); `LOOP_GET_STATUS64`/`LOOP_SET_STATUS64` (and the old 32-bit
//!   `LOOP_GET_STATUS`/`LOOP_SET_STATUS`) read and change offset,
//!   sizelimit, file name and the AUTOCLEAR/PARTSCAN flags (ENXIO when
//!   unbound); `LOOP_SET_CAPACITY` re-reads the file's size;
//!   `LOOP_SET_BLOCK_SIZE` sets the logical block size.
//! - A device is read-only (`LO_FLAGS_READ_ONLY`) when asked for, or when
//!   the file or the loop device was opened without write access.
//! - AUTOCLEAR: an unused device (nobody has it open or mounted) with the
//!   flag is unbound. That is checked when a loop ioctl or umount(2) runs
//!   (not the moment the last user goes): what the caller can observe
//!   through the loop ioctls is Linux's behaviour.
//!
//! I/O goes through the file's own read_at/write_at (and so its page
//! cache); a flush request syncs the file; a failed file operation is EIO
//! for that request. As Linux's loop workqueue, each device has a worker
//! task that does the file I/O: `submit` only queues. The submitter may
//! hold locks of the file system mounted on the device (ext2 holds its own
//! while it reads a block), and the file's I/O takes locks of lower levels
//! (inode, page cache) that must not be taken under them; the worker holds
//! nothing. One worker per device, so a loop device whose file lives on
//! another loop device does not wait on itself.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use frame::mm::PAGE_SIZE;
use frame::sync::{Mutex, SpinLock, WaitQueue};

use super::{Bio, BioDone, BioOp, BlockDevice, BlockDriver};
use crate::error::{Errno, Error, Result};
use crate::fs::File;
use crate::fs::inode::{FileType, dev_major, dev_minor, makedev};
use crate::fs::stream::{Caller, FileOps};
use crate::mm::page_cache::SECTOR_SIZE;

/// LOOP_MAJOR.
pub const LOOP_MAJOR: u32 = 7;
/// /dev/loop-control: MISC_MAJOR 10, LOOP_CTRL_MINOR 237.
pub const LOOP_CONTROL: u64 = makedev(10, 237);
/// Devices made at boot (Linux's CONFIG_BLK_DEV_LOOP_MIN_COUNT default).
const MIN_COUNT: u32 = 8;
/// The most devices (minor numbers 0..256) handed out: each has a worker
/// task and a page cache, and Linux's minor space (2^20) would let a
/// program pin a lot of kernel memory.
const MAX_LOOPS: u32 = 256;

// ioctl numbers (linux/loop.h).
pub const LOOP_SET_FD: u32 = 0x4C00;
pub const LOOP_CLR_FD: u32 = 0x4C01;
pub const LOOP_SET_STATUS: u32 = 0x4C02;
pub const LOOP_GET_STATUS: u32 = 0x4C03;
pub const LOOP_SET_STATUS64: u32 = 0x4C04;
pub const LOOP_GET_STATUS64: u32 = 0x4C05;
pub const LOOP_CHANGE_FD: u32 = 0x4C06;
pub const LOOP_SET_CAPACITY: u32 = 0x4C07;
pub const LOOP_SET_DIRECT_IO: u32 = 0x4C08;
pub const LOOP_SET_BLOCK_SIZE: u32 = 0x4C09;
pub const LOOP_CONFIGURE: u32 = 0x4C0A;
pub const LOOP_CTL_ADD: u32 = 0x4C80;
pub const LOOP_CTL_REMOVE: u32 = 0x4C81;
pub const LOOP_CTL_GET_FREE: u32 = 0x4C82;

pub const LO_FLAGS_READ_ONLY: u32 = 1;
pub const LO_FLAGS_AUTOCLEAR: u32 = 4;
pub const LO_FLAGS_PARTSCAN: u32 = 8;
pub const LO_FLAGS_DIRECT_IO: u32 = 16;
/// What LOOP_SET_STATUS may set and clear.
const SETTABLE: u32 = LO_FLAGS_AUTOCLEAR | LO_FLAGS_PARTSCAN;
const CLEARABLE: u32 = LO_FLAGS_AUTOCLEAR;
/// What LOOP_CONFIGURE accepts.
const CONFIGURABLE: u32 =
    LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR | LO_FLAGS_PARTSCAN | LO_FLAGS_DIRECT_IO;

const LO_NAME_SIZE: usize = 64;
/// sizeof(struct loop_info64).
const INFO64_SIZE: usize = 232;
/// sizeof(struct loop_config): fd, block_size, info, __reserved[8].
const CONFIG_SIZE: usize = 8 + INFO64_SIZE + 64;
/// sizeof(struct loop_info) on x86-64.
const INFO_SIZE: usize = 168;

/// What a bound device reads and writes.
struct Backing {
    file: Arc<File>,
    offset: u64,
    sizelimit: u64,
    flags: u32,
    name: [u8; LO_NAME_SIZE],
}

/// The driver of one loop device.
pub struct LoopDisk {
    backing: SpinLock<Option<Arc<Backing>>>,
    block_size: AtomicU32,
    /// Requests for the worker.
    queue: SpinLock<VecDeque<(Bio, BioDone)>>,
    work: WaitQueue,
    /// LOOP_CTL_REMOVE: the worker ends once the queue is empty.
    removed: AtomicBool,
}

impl LoopDisk {
    fn backing(&self) -> Option<Arc<Backing>> {
        self.backing.lock().clone()
    }

    /// Replaces the binding; the old one is dropped outside the lock
    /// (closing a file takes locks of its own).
    fn set_backing(&self, new: Option<Arc<Backing>>) {
        let old = core::mem::replace(&mut *self.backing.lock(), new);
        drop(old);
    }

    /// The worker: runs each queued request against the binding of the
    /// moment, holding no lock.
    fn worker(self: Arc<Self>) {
        loop {
            let next = self.work.wait_until(|| {
                let item = self.queue.lock().pop_front();
                match item {
                    Some(item) => Some(Some(item)),
                    None if self.removed.load(Ordering::Acquire) => Some(None),
                    None => None,
                }
            });
            let Some((bio, done)) = next else { return };
            let r = match self.backing() {
                None => Err(Error::new(Errno::EIO)),
                Some(b) => {
                    let end = bio.sector.checked_add(bio.sectors());
                    if bio.op != BioOp::Flush && end.is_none_or(|e| e > capacity(&b)) {
                        Err(Error::new(Errno::EIO))
                    } else {
                        Self::transfer(&b, &bio).map_err(|_| Error::new(Errno::EIO))
                    }
                }
            };
            done(r);
        }
    }

    fn transfer(b: &Backing, bio: &Bio) -> Result<()> {
        let node = b.file.node();
        let mut pos = b
            .offset
            .checked_add(
                bio.sector
                    .checked_mul(SECTOR_SIZE as u64)
                    .ok_or(Error::new(Errno::EIO))?,
            )
            .ok_or(Error::new(Errno::EIO))?;
        let mut buf = vec![0u8; PAGE_SIZE];
        for seg in &bio.segments {
            let buf = &mut buf[..seg.len];
            let at = usize::try_from(pos).map_err(|_| Error::new(Errno::EIO))?;
            match bio.op {
                BioOp::Read => {
                    let mut done = 0;
                    while done < buf.len() {
                        let n = node.read_at(at + done, &mut buf[done..])?;
                        if n == 0 {
                            break;
                        }
                        done += n;
                    }
                    // Past the file's end (it shrank): zeros, as Linux.
                    buf[done..].fill(0);
                    seg.frame.write_bytes(seg.offset, buf)?;
                }
                BioOp::Write => {
                    seg.frame.read_bytes(seg.offset, buf)?;
                    let mut done = 0;
                    while done < buf.len() {
                        let n = node.write_at(at + done, &buf[done..])?;
                        if n == 0 {
                            return Err(Error::new(Errno::EIO));
                        }
                        done += n;
                    }
                }
                BioOp::Flush => {}
            }
            pos += seg.len as u64;
        }
        if bio.op == BioOp::Flush {
            node.sync(false)?;
        }
        Ok(())
    }
}

impl BlockDriver for LoopDisk {
    fn capacity_sectors(&self) -> u64 {
        self.backing().map_or(0, |b| capacity(&b))
    }

    fn logical_block_size(&self) -> u32 {
        self.block_size.load(Ordering::Relaxed)
    }

    fn read_only(&self) -> bool {
        self.backing()
            .is_some_and(|b| b.flags & LO_FLAGS_READ_ONLY != 0)
    }

    /// Queues the request for the worker (see the module comment).
    fn submit(&self, bio: Bio, done: BioDone) -> Result<()> {
        if self.removed.load(Ordering::Acquire) {
            return Err(Error::new(Errno::ENXIO));
        }
        self.queue.lock().push_back((bio, done));
        self.work.wake_all();
        Ok(())
    }
}

/// Sectors a binding exposes: the file from `offset`, at most `sizelimit`
/// bytes (0: no limit), in whole sectors.
fn capacity(b: &Backing) -> u64 {
    let size = b.file.node().size() as u64;
    let mut bytes = size.saturating_sub(b.offset);
    if b.sizelimit != 0 && b.sizelimit < bytes {
        bytes = b.sizelimit;
    }
    bytes / SECTOR_SIZE as u64
}

/// One /dev/loopN.
struct Loop {
    number: u32,
    driver: Arc<LoopDisk>,
    dev: Arc<BlockDevice>,
    /// Serializes binding changes (held across write-back: sleeps).
    config: Mutex<()>,
}

impl Loop {
    /// Open files and mounts of the device, besides `own` (the caller's
    /// open file, if the caller has the device open).
    fn users(&self, own: usize) -> usize {
        self.dev.holders().saturating_sub(own)
    }
}

static LOOPS: SpinLock<Vec<Arc<Loop>>> = SpinLock::new(Vec::new());

fn find(number: u32) -> Option<Arc<Loop>> {
    LOOPS.lock().iter().find(|l| l.number == number).cloned()
}

fn all() -> Vec<Arc<Loop>> {
    LOOPS.lock().clone()
}

/// Creates /dev/loop`number` (EEXIST if it exists).
fn add(number: u32) -> Result<Arc<Loop>> {
    if number >= MAX_LOOPS {
        return Err(Error::new(Errno::EINVAL));
    }
    if find(number).is_some() {
        return Err(Error::new(Errno::EEXIST));
    }
    let driver = Arc::new(LoopDisk {
        backing: SpinLock::new(None),
        block_size: AtomicU32::new(SECTOR_SIZE as u32),
        queue: SpinLock::new(VecDeque::new()),
        work: WaitQueue::new(),
        removed: AtomicBool::new(false),
    });
    let worker = driver.clone();
    frame::task::TaskOptions::new(move || worker.worker())
        .spawn()
        .map_err(|_| Error::new(Errno::ENOMEM))?;
    let dev = match super::register_named_disk(
        format!("loop{number}"),
        makedev(LOOP_MAJOR, number),
        driver.clone(),
    ) {
        Ok(dev) => dev,
        Err(e) => {
            driver.removed.store(true, Ordering::Release);
            driver.work.wake_all();
            return Err(e);
        }
    };
    let l = Arc::new(Loop {
        number,
        driver,
        dev,
        config: Mutex::new(()),
    });
    let mut loops = LOOPS.lock();
    if loops.iter().any(|o| o.number == number) {
        drop(loops);
        super::unregister_disk(&l.dev);
        l.driver.removed.store(true, Ordering::Release);
        l.driver.work.wake_all();
        return Err(Error::new(Errno::EEXIST));
    }
    loops.push(l.clone());
    Ok(l)
}

/// Makes loop0..loop7 at boot.
pub fn init() {
    for n in 0..MIN_COUNT {
        if let Err(e) = add(n) {
            frame::log_info!("loop: cannot create loop{n}: {e:?}");
        }
    }
}

/// Whether `file` is an open /dev/loopN.
pub fn is_loop_file(file: &File) -> bool {
    if file.ops().is_some() {
        return false;
    }
    let m = file.node().metadata();
    m.file_type == FileType::BlockDevice && dev_major(m.rdev) == LOOP_MAJOR
}

/// The loop device a device number names.
fn by_devt(devt: u64) -> Option<Arc<Loop>> {
    (dev_major(devt) == LOOP_MAJOR)
        .then(|| find(dev_minor(devt)))
        .flatten()
}

/// Unbinds every AUTOCLEAR device nobody uses any more. `own` is the
/// device the caller has open (its reference does not count).
fn reap(own: Option<u32>) {
    for l in all() {
        let Some(b) = l.driver.backing() else {
            continue;
        };
        let mine = usize::from(own == Some(l.number));
        if b.flags & LO_FLAGS_AUTOCLEAR != 0 && l.users(mine) == 0 {
            let _guard = l.config.lock();
            if l.driver.backing().is_some() && l.users(mine) == 0 {
                let _ = unbind(&l);
            }
        }
    }
}

/// After umount(2): a `mount -o loop` device (AUTOCLEAR) goes away.
pub fn after_umount() {
    reap(None);
}

/// Drops what the device's page cache holds for the old binding (written
/// back first) and publishes the new size.
fn rebind(l: &Loop, new: Option<Arc<Backing>>) -> Result<()> {
    let cache = l.dev.page_cache();
    let synced = if l.driver.backing().is_some() {
        cache.sync_and_flush()
    } else {
        Ok(())
    };
    cache.truncate(0);
    let ro = new
        .as_ref()
        .is_some_and(|b| b.flags & LO_FLAGS_READ_ONLY != 0);
    let sectors = new.as_ref().map_or(0, |b| capacity(b));
    l.driver.set_backing(new);
    l.dev.set_read_only(ro);
    l.dev.set_capacity(sectors);
    synced
}

fn unbind(l: &Loop) -> Result<()> {
    let r = rebind(l, None);
    l.driver
        .block_size
        .store(SECTOR_SIZE as u32, Ordering::Relaxed);
    r
}

/// struct loop_info64, the fields Trellis uses.
#[derive(Clone)]
struct Info {
    device: u64,
    inode: u64,
    rdevice: u64,
    offset: u64,
    sizelimit: u64,
    number: u32,
    encrypt_type: u32,
    encrypt_key_size: u32,
    flags: u32,
    file_name: [u8; LO_NAME_SIZE],
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(v)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut v = [0u8; 4];
    v.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(v)
}

impl Info {
    fn parse64(b: &[u8]) -> Info {
        let mut file_name = [0u8; LO_NAME_SIZE];
        file_name.copy_from_slice(&b[56..56 + LO_NAME_SIZE]);
        Info {
            device: u64_at(b, 0),
            inode: u64_at(b, 8),
            rdevice: u64_at(b, 16),
            offset: u64_at(b, 24),
            sizelimit: u64_at(b, 32),
            number: u32_at(b, 40),
            encrypt_type: u32_at(b, 44),
            encrypt_key_size: u32_at(b, 48),
            flags: u32_at(b, 52),
            file_name,
        }
    }

    fn bytes64(&self) -> [u8; INFO64_SIZE] {
        let mut b = [0u8; INFO64_SIZE];
        b[0..8].copy_from_slice(&self.device.to_ne_bytes());
        b[8..16].copy_from_slice(&self.inode.to_ne_bytes());
        b[16..24].copy_from_slice(&self.rdevice.to_ne_bytes());
        b[24..32].copy_from_slice(&self.offset.to_ne_bytes());
        b[32..40].copy_from_slice(&self.sizelimit.to_ne_bytes());
        b[40..44].copy_from_slice(&self.number.to_ne_bytes());
        b[52..56].copy_from_slice(&self.flags.to_ne_bytes());
        b[56..56 + LO_NAME_SIZE].copy_from_slice(&self.file_name);
        b
    }

    /// struct loop_info (x86-64): int lo_number (0); unsigned long
    /// lo_device (8), lo_inode (16), lo_rdevice (24); int lo_offset (32),
    /// lo_encrypt_type (36), lo_encrypt_key_size (40), lo_flags (44);
    /// char lo_name[64] (48); unsigned char lo_encrypt_key[32];
    /// unsigned long lo_init[2]; char reserved[4]: 168 bytes.
    fn parse32(b: &[u8]) -> Info {
        let mut file_name = [0u8; LO_NAME_SIZE];
        file_name.copy_from_slice(&b[48..48 + LO_NAME_SIZE]);
        Info {
            number: u32_at(b, 0),
            device: u64_at(b, 8),
            inode: u64_at(b, 16),
            rdevice: u64_at(b, 24),
            offset: u64::from(u32_at(b, 32) as i32 as u32),
            sizelimit: 0,
            encrypt_type: u32_at(b, 36),
            encrypt_key_size: u32_at(b, 40),
            flags: u32_at(b, 44),
            file_name,
        }
    }

    fn bytes32(&self) -> Result<[u8; INFO_SIZE]> {
        // Linux: EOVERFLOW when a field does not fit the old structure.
        let offset = i32::try_from(self.offset).map_err(|_| Error::new(Errno::EOVERFLOW))?;
        let mut b = [0u8; INFO_SIZE];
        b[0..4].copy_from_slice(&self.number.to_ne_bytes());
        b[8..16].copy_from_slice(&self.device.to_ne_bytes());
        b[16..24].copy_from_slice(&self.inode.to_ne_bytes());
        b[24..32].copy_from_slice(&self.rdevice.to_ne_bytes());
        b[32..36].copy_from_slice(&offset.to_ne_bytes());
        b[44..48].copy_from_slice(&self.flags.to_ne_bytes());
        b[48..48 + LO_NAME_SIZE].copy_from_slice(&self.file_name);
        Ok(b)
    }
}

fn status(l: &Loop) -> Result<Info> {
    let b = l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
    let m = b.file.node().metadata();
    Ok(Info {
        device: m.dev,
        inode: m.ino,
        rdevice: m.rdev,
        offset: b.offset,
        sizelimit: b.sizelimit,
        number: l.number,
        encrypt_type: 0,
        encrypt_key_size: 0,
        flags: b.flags,
        file_name: b.name,
    })
}

/// Linux's loop_validate_file: following a chain of loop devices, `l`
/// itself is EBADF and an unbound one EINVAL; a file that is neither
/// regular nor a block device is EINVAL. Trellis also refuses (EINVAL) a
/// file kept on a file system whose device is `l` or a loop device leading
/// back to it, where Linux would recurse.
fn check_file(l: &Loop, file: &File) -> Result<()> {
    if file.is_path_only() {
        return Err(Error::new(Errno::EBADF));
    }
    let mut node = file.node().clone();
    // Devices whose file systems hold a file of the chain.
    let mut fs_devs = Vec::new();
    for _ in 0..=MAX_LOOPS {
        let m = node.metadata();
        fs_devs.push(m.dev);
        if m.file_type != FileType::BlockDevice || dev_major(m.rdev) != LOOP_MAJOR {
            break;
        }
        if m.rdev == l.dev.devt() {
            return Err(Error::new(Errno::EBADF));
        }
        let other = by_devt(m.rdev).ok_or(Error::new(Errno::EINVAL))?;
        let b = other.driver.backing().ok_or(Error::new(Errno::EINVAL))?;
        node = b.file.node().clone();
    }
    match node.metadata().file_type {
        FileType::Regular | FileType::BlockDevice => {}
        _ => return Err(Error::new(Errno::EINVAL)),
    }
    // The file systems the chain's files live on, and the loop devices
    // under those.
    for _ in 0..=MAX_LOOPS {
        let Some(dev) = fs_devs.pop() else {
            return Ok(());
        };
        let Some(other) = by_devt(dev) else { continue };
        if other.number == l.number {
            return Err(Error::new(Errno::EINVAL));
        }
        if let Some(b) = other.driver.backing() {
            fs_devs.push(b.file.node().metadata().dev);
        }
    }
    Err(Error::new(Errno::EINVAL))
}

/// Linux's loop_set_status_from_info checks: a key of at most 32 bytes,
/// no encryption (xor and cryptoloop are gone since 5.19), offset and size
/// limit that fit a signed 64-bit value (EOVERFLOW).
fn check_info(info: &Info) -> Result<()> {
    if info.encrypt_key_size > 32 || info.encrypt_type != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if info.offset > i64::MAX as u64 || info.sizelimit > i64::MAX as u64 {
        return Err(Error::new(Errno::EOVERFLOW));
    }
    Ok(())
}

fn valid_block_size(bs: u32) -> bool {
    (SECTOR_SIZE as u32..=PAGE_SIZE as u32).contains(&bs) && bs.is_power_of_two()
}

/// LOOP_SET_FD and LOOP_CONFIGURE.
fn bind(l: &Loop, own: &File, file: Arc<File>, info: &Info, block_size: u32) -> Result<()> {
    let _guard = l.config.lock();
    if l.driver.backing().is_some() {
        return Err(Error::new(Errno::EBUSY));
    }
    check_file(l, &file)?;
    if info.flags & !CONFIGURABLE != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    check_info(info)?;
    if block_size != 0 && !valid_block_size(block_size) {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut flags = info.flags & !LO_FLAGS_DIRECT_IO;
    if !file.can_write() || !own.can_write() {
        flags |= LO_FLAGS_READ_ONLY;
    }
    let mut name = info.file_name;
    name[LO_NAME_SIZE - 1] = 0;
    let b = Backing {
        file,
        offset: info.offset,
        sizelimit: info.sizelimit,
        flags,
        name,
    };
    l.driver.block_size.store(
        if block_size == 0 {
            SECTOR_SIZE as u32
        } else {
            block_size
        },
        Ordering::Relaxed,
    );
    rebind(l, Some(Arc::new(b)))
}

/// LOOP_SET_STATUS(64).
fn set_status(l: &Loop, info: &Info) -> Result<()> {
    let _guard = l.config.lock();
    let old = l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
    check_info(info)?;
    let mut flags = old.flags;
    flags &= !(CLEARABLE & !info.flags);
    flags |= info.flags & SETTABLE;
    let mut name = info.file_name;
    name[LO_NAME_SIZE - 1] = 0;
    let b = Backing {
        file: old.file.clone(),
        offset: info.offset,
        sizelimit: info.sizelimit,
        flags,
        name,
    };
    if b.offset == old.offset && b.sizelimit == old.sizelimit {
        // Nothing cached changes meaning: keep the page cache.
        l.driver.set_backing(Some(Arc::new(b)));
        return Ok(());
    }
    rebind(l, Some(Arc::new(b)))
}

/// ioctl(2) on an open /dev/loopN. `get_file` resolves the caller's
/// descriptors (LOOP_SET_FD, LOOP_CONFIGURE). Other requests go to the
/// block device (BLKGETSIZE64 ...).
pub fn ioctl(
    own: &Arc<File>,
    cmd: u32,
    arg: u64,
    caller: &dyn Caller,
    get_file: &dyn Fn(i32) -> Result<Arc<File>>,
) -> Result<isize> {
    let rdev = own.node().metadata().rdev;
    let Some(l) = by_devt(rdev) else {
        return own.ioctl(cmd, arg, caller);
    };
    match cmd {
        LOOP_SET_FD | LOOP_CONFIGURE | LOOP_CLR_FD | LOOP_SET_STATUS | LOOP_GET_STATUS
        | LOOP_SET_STATUS64 | LOOP_GET_STATUS64 | LOOP_SET_CAPACITY | LOOP_SET_BLOCK_SIZE
        | LOOP_SET_DIRECT_IO | LOOP_CHANGE_FD => reap(Some(l.number)),
        _ => return own.ioctl(cmd, arg, caller),
    }
    match cmd {
        LOOP_SET_FD => {
            let file = get_file(arg as i32)?;
            let info = Info {
                device: 0,
                inode: 0,
                rdevice: 0,
                offset: 0,
                sizelimit: 0,
                number: 0,
                encrypt_type: 0,
                encrypt_key_size: 0,
                flags: 0,
                file_name: [0; LO_NAME_SIZE],
            };
            bind(&l, own, file, &info, 0)?;
        }
        LOOP_CONFIGURE => {
            let mut raw = [0u8; CONFIG_SIZE];
            caller.read_bytes(arg, &mut raw)?;
            let file = get_file(u32_at(&raw, 0) as i32)?;
            let info = Info::parse64(&raw[8..8 + INFO64_SIZE]);
            bind(&l, own, file, &info, u32_at(&raw, 4))?;
        }
        LOOP_CLR_FD => {
            let _guard = l.config.lock();
            let b = l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
            if l.users(1) > 0 {
                // Busy (mounted or open elsewhere): unbind when the last
                // user goes.
                let mut b2 = Backing {
                    file: b.file.clone(),
                    offset: b.offset,
                    sizelimit: b.sizelimit,
                    flags: b.flags,
                    name: b.name,
                };
                b2.flags |= LO_FLAGS_AUTOCLEAR;
                l.driver.set_backing(Some(Arc::new(b2)));
                return Ok(0);
            }
            unbind(&l)?;
        }
        LOOP_GET_STATUS64 => {
            let info = status(&l)?;
            caller.write_bytes(arg, &info.bytes64())?;
        }
        LOOP_SET_STATUS64 => {
            let mut raw = [0u8; INFO64_SIZE];
            caller.read_bytes(arg, &mut raw)?;
            set_status(&l, &Info::parse64(&raw))?;
        }
        LOOP_GET_STATUS => {
            let info = status(&l)?;
            caller.write_bytes(arg, &info.bytes32()?)?;
        }
        LOOP_SET_STATUS => {
            let mut raw = [0u8; INFO_SIZE];
            caller.read_bytes(arg, &mut raw)?;
            // The old structure has no size limit: it becomes 0, as on Linux.
            set_status(&l, &Info::parse32(&raw))?;
        }
        LOOP_SET_CAPACITY => {
            let _guard = l.config.lock();
            let b = l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
            l.dev.set_capacity(capacity(&b));
        }
        LOOP_SET_BLOCK_SIZE => {
            let _guard = l.config.lock();
            l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
            let bs = u32::try_from(arg).map_err(|_| Error::new(Errno::EINVAL))?;
            if !valid_block_size(bs) {
                return Err(Error::new(Errno::EINVAL));
            }
            l.driver.block_size.store(bs, Ordering::Relaxed);
        }
        LOOP_SET_DIRECT_IO => {
            // Direct I/O to the file is not offered: Linux's answer when
            // the file's block size does not allow it.
            l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
            if arg != 0 {
                return Err(Error::new(Errno::EINVAL));
            }
        }
        // LOOP_CHANGE_FD: only for read-only devices, to a file of the
        // same size.
        _ => {
            let _guard = l.config.lock();
            let old = l.driver.backing().ok_or(Error::new(Errno::ENXIO))?;
            if old.flags & LO_FLAGS_READ_ONLY == 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            let file = get_file(arg as i32)?;
            check_file(&l, &file)?;
            if file.node().size() != old.file.node().size() {
                return Err(Error::new(Errno::EINVAL));
            }
            let b = Backing {
                file,
                offset: old.offset,
                sizelimit: old.sizelimit,
                flags: old.flags,
                name: old.name,
            };
            rebind(&l, Some(Arc::new(b)))?;
        }
    }
    Ok(0)
}

/// /dev/loop-control.
pub struct LoopControl;

/// open(2) of /dev/loop-control.
pub fn open_control() -> Arc<dyn FileOps> {
    Arc::new(LoopControl)
}

impl FileOps for LoopControl {
    fn read(&self, _buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn write(&self, _buf: &[u8], _caller: &dyn Caller) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn ioctl(&self, cmd: u32, arg: u64, _caller: &dyn Caller) -> Result<isize> {
        match cmd {
            LOOP_CTL_GET_FREE => {
                reap(None);
                for l in all() {
                    if l.driver.backing().is_none() {
                        return Ok(l.number as isize);
                    }
                }
                let next = all().iter().map(|l| l.number + 1).max().unwrap_or(0);
                Ok(add(next)?.number as isize)
            }
            LOOP_CTL_ADD => {
                // A negative number asks for any free one.
                let n = arg as i32;
                if n < 0 {
                    let next = all().iter().map(|l| l.number + 1).max().unwrap_or(0);
                    return Ok(add(next)?.number as isize);
                }
                Ok(add(n as u32)?.number as isize)
            }
            LOOP_CTL_REMOVE => {
                let n = arg as i32;
                if n < 0 {
                    return Err(Error::new(Errno::EINVAL));
                }
                reap(None);
                let l = find(n as u32).ok_or(Error::new(Errno::ENODEV))?;
                let _guard = l.config.lock();
                if l.driver.backing().is_some() || l.users(0) > 0 {
                    return Err(Error::new(Errno::EBUSY));
                }
                LOOPS.lock().retain(|o| o.number != l.number);
                super::unregister_disk(&l.dev);
                l.driver.removed.store(true, Ordering::Release);
                l.driver.work.wake_all();
                Ok(0)
            }
            _ => Err(Error::new(Errno::ENOTTY)),
        }
    }
}
