//! An open block device (/dev/vda): the device node's identity and
//! permissions, the device's size and data. Reads, writes and mappings go
//! through the device's page cache; fsync writes it back and flushes the
//! disk. The BLK* ioctls report the geometry.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::BlockDevice;
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{Inode, MagicLink, Metadata, Timespec};
use crate::fs::stream::Caller;

/// The inode an open block device's file holds: the device node's
/// metadata, the device's contents.
pub struct BlockFile {
    node: Arc<dyn Inode>,
    dev: Arc<BlockDevice>,
    /// The open makes the device busy while the file lives.
    _hold: super::Hold,
    /// Write-back errors this open file has seen (each open file sees
    /// each error once at fsync, as Linux's errseq gives).
    seen: crate::mm::page_cache::ErrSeq,
}

/// open(2) of a block-device node: ENXIO if no device has its number.
pub fn open(node: Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
    let dev = super::lookup(node.metadata().rdev).ok_or(Error::with_message(
        Errno::ENXIO,
        "no block device with this number",
    ))?;
    let seen = dev.page_cache().error_sample();
    let _hold = dev.hold();
    Ok(Arc::new(BlockFile { node, dev, _hold, seen }))
}

// ioctl numbers (linux/fs.h).
const BLKROSET: u32 = 0x125d;
const BLKROGET: u32 = 0x125e;
const BLKRRPART: u32 = 0x125f;
const BLKGETSIZE: u32 = 0x1260;
const BLKFLSBUF: u32 = 0x1261;
const BLKSSZGET: u32 = 0x1268;
const BLKBSZGET: u32 = 0x8008_1270;
const BLKGETSIZE64: u32 = 0x8008_1272;
const BLKIOMIN: u32 = 0x1278;
const BLKIOOPT: u32 = 0x1279;
const BLKPBSZGET: u32 = 0x127b;

impl BlockFile {
    pub fn device(&self) -> &Arc<BlockDevice> {
        &self.dev
    }
}

impl Inode for BlockFile {
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        self.dev.page_cache().read(offset, buf, self.size())
    }

    /// The device's size (lseek SEEK_END, reads), while stat reports the
    /// node's (0), as Linux does.
    fn size(&self) -> usize {
        usize::try_from(self.dev.size()).unwrap_or(usize::MAX)
    }

    fn metadata(&self) -> Metadata {
        self.node.metadata()
    }

    fn id(&self) -> (u64, u64) {
        self.node.id()
    }

    fn check_open(&self) -> Result<()> {
        self.node.check_open()
    }

    /// Writes stop at the end of the device: a write starting there fails
    /// with ENOSPC, one crossing it is short (Linux's blkdev_write_iter).
    fn write_at(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        if self.dev.read_only() {
            return Err(Error::new(Errno::EPERM));
        }
        let size = self.size();
        if buf.is_empty() {
            return Ok(0);
        }
        if offset >= size {
            return Err(Error::new(Errno::ENOSPC));
        }
        let n = buf.len().min(size - offset);
        let cache = self.dev.page_cache();
        let done = cache.write(offset, &buf[..n])?;
        cache.balance_dirty();
        Ok(done)
    }

    /// O_APPEND writes at the end of the device: there is no room.
    fn append(&self, buf: &[u8]) -> Result<(usize, usize)> {
        let n = self.write_at(self.size(), buf)?;
        Ok((n, self.size()))
    }

    fn can_mmap(&self) -> bool {
        true
    }

    fn shared_page(&self, index: usize) -> Result<frame::mm::UFrame> {
        self.dev.page_cache().page(index as u64)
    }

    fn has_shared_pages(&self) -> bool {
        true
    }

    fn page_cache(&self) -> Option<Arc<crate::mm::page_cache::PageCache>> {
        Some(self.dev.page_cache().clone())
    }

    fn sync(&self, _data_only: bool) -> Result<()> {
        self.dev.page_cache().sync_and_flush_since(&self.seen)
    }

    fn sync_fs(&self) -> Result<()> {
        self.node.sync_fs()
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        let dev = &self.dev;
        let put = |bytes: &[u8]| caller.write_bytes(arg, bytes).map(|_| 0);
        match cmd {
            BLKGETSIZE64 => put(&dev.size().to_ne_bytes()),
            BLKGETSIZE => put(&dev.capacity_sectors().to_ne_bytes()),
            BLKSSZGET | BLKPBSZGET | BLKIOMIN => {
                put(&(dev.logical_block_size() as i32).to_ne_bytes())
            }
            BLKBSZGET => put(&(frame::mm::PAGE_SIZE as i32).to_ne_bytes()),
            BLKIOOPT => put(&0i32.to_ne_bytes()),
            BLKROGET => put(&i32::from(dev.read_only()).to_ne_bytes()),
            BLKROSET => {
                if !caller.capable(crate::caps::CAP_SYS_ADMIN) {
                    return Err(Error::new(Errno::EACCES));
                }
                let mut v = [0u8; 4];
                caller.read_bytes(arg, &mut v)?;
                dev.set_read_only(i32::from_ne_bytes(v) != 0);
                Ok(0)
            }
            BLKFLSBUF => {
                if !caller.capable(crate::caps::CAP_SYS_ADMIN) {
                    return Err(Error::new(Errno::EACCES));
                }
                // Write back, then drop the clean unmapped pages.
                let cache = dev.page_cache();
                cache.sync_and_flush()?;
                cache.invalidate_clean();
                Ok(0)
            }
            BLKRRPART => {
                if !caller.capable(crate::caps::CAP_SYS_ADMIN) {
                    return Err(Error::new(Errno::EACCES));
                }
                if dev.partno() != 0 {
                    return Err(Error::new(Errno::EINVAL));
                }
                super::rescan_partitions(dev)?;
                Ok(0)
            }
            _ => Err(Error::new(Errno::ENOTTY)),
        }
    }

    fn set_perm(&self, perm: u32) -> Result<()> {
        self.node.set_perm(perm)
    }

    fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> Result<()> {
        self.node.set_owner(uid, gid)
    }

    fn touch_atime(&self, strict: bool) {
        self.node.touch_atime(strict)
    }

    fn set_times(&self, atime: Option<Timespec>, mtime: Option<Timespec>) -> Result<()> {
        self.node.set_times(atime, mtime)
    }

    fn get_xattr(&self, name: &[u8]) -> Result<Vec<u8>> {
        self.node.get_xattr(name)
    }

    fn set_xattr(
        &self,
        name: &[u8],
        value: &[u8],
        flags: crate::fs::xattr::SetFlags,
    ) -> Result<()> {
        self.node.set_xattr(name, value, flags)
    }

    fn remove_xattr(&self, name: &[u8]) -> Result<()> {
        self.node.remove_xattr(name)
    }

    fn list_xattr(&self) -> Result<Vec<Vec<u8>>> {
        self.node.list_xattr()
    }

    fn read_link(&self) -> Result<String> {
        Err(Error::new(Errno::EINVAL))
    }

    fn follow_magic(&self) -> Option<Result<MagicLink>> {
        None
    }
}
