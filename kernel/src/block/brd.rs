//! The RAM disk driver (Linux's brd): /dev/ram0 ... of a fixed size, its
//! sectors in pages allocated on first write (an unwritten sector reads as
//! zeros). `brd.rd_nr=N brd.rd_size=KiB` on the command line creates them
//! at boot (none by default). Requests complete before `submit` returns.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;

use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::SpinLock;

use super::{Bio, BioDone, BioOp, BlockDriver};
use crate::error::{Errno, Error, Result};
use crate::mm::page_cache::SECTOR_SIZE;

/// Largest RAM disk accepted (1 GiB), in KiB.
const MAX_SIZE_KIB: u64 = 1 << 20;
/// Most RAM disks (brd's rd_nr is a u32; Linux caps minors at 256).
const MAX_DISKS: u32 = 16;

pub struct RamDisk {
    sectors: u64,
    /// Page index -> the page holding those 8 sectors.
    pages: SpinLock<BTreeMap<u64, UFrame>, 37>,
}

impl RamDisk {
    pub fn new(size_kib: u64) -> Arc<RamDisk> {
        Arc::new(RamDisk {
            sectors: size_kib.min(MAX_SIZE_KIB) * 2,
            pages: SpinLock::new(BTreeMap::new()),
        })
    }

    fn page(&self, index: u64, create: bool) -> Result<Option<UFrame>> {
        if let Some(f) = self.pages.lock().get(&index) {
            return Ok(Some(f.clone()));
        }
        if !create {
            return Ok(None);
        }
        let f = crate::fallible::frame()?;
        Ok(Some(self.pages.lock().entry(index).or_insert(f).clone()))
    }

    fn transfer(&self, bio: &Bio) -> Result<()> {
        let mut sector = bio.sector;
        let mut buf = [0u8; SECTOR_SIZE];
        for seg in &bio.segments {
            for off in (seg.offset..seg.offset + seg.len).step_by(SECTOR_SIZE) {
                let pos = sector * SECTOR_SIZE as u64;
                let (index, in_page) = (pos / PAGE_SIZE as u64, (pos % PAGE_SIZE as u64) as usize);
                match bio.op {
                    BioOp::Read => {
                        match self.page(index, false)? {
                            Some(f) => f.read_bytes(in_page, &mut buf)?,
                            None => buf.fill(0),
                        }
                        seg.frame.write_bytes(off, &buf)?;
                    }
                    BioOp::Write => {
                        seg.frame.read_bytes(off, &mut buf)?;
                        let f = self.page(index, true)?.ok_or(Error::new(Errno::ENOMEM))?;
                        f.write_bytes(in_page, &buf)?;
                    }
                    BioOp::Flush => {}
                }
                sector += 1;
            }
        }
        Ok(())
    }
}

impl BlockDriver for RamDisk {
    fn capacity_sectors(&self) -> u64 {
        self.sectors
    }

    fn logical_block_size(&self) -> u32 {
        SECTOR_SIZE as u32
    }

    fn read_only(&self) -> bool {
        false
    }

    fn submit(&self, bio: Bio, done: BioDone) -> Result<()> {
        if bio
            .sector
            .checked_add(bio.sectors())
            .is_none_or(|e| e > self.sectors)
        {
            done(Err(Error::new(Errno::EIO)));
            return Ok(());
        }
        // A page that cannot be had for a write is a device error.
        let r = self.transfer(&bio).map_err(|_| Error::new(Errno::EIO));
        done(r);
        Ok(())
    }
}

/// Creates the RAM disks `brd.rd_nr=N brd.rd_size=KiB` ask for (rd_size
/// defaults to 4096 KiB, as Linux's CONFIG_BLK_DEV_RAM_SIZE).
pub fn init(cmdline: &str) {
    let mut nr = 0u32;
    let mut size = 4096u64;
    for w in cmdline.split_ascii_whitespace() {
        if w == "--" {
            break;
        }
        match w.split_once('=') {
            Some(("brd.rd_nr", v)) => nr = v.parse().unwrap_or(0).min(MAX_DISKS),
            Some(("brd.rd_size", v)) => size = v.parse().unwrap_or(size),
            _ => {}
        }
    }
    for _ in 0..nr {
        if let Err(e) = super::register_disk("ram", RamDisk::new(size)) {
            frame::log_info!("brd: cannot register a RAM disk: {e:?}");
        }
    }
}
