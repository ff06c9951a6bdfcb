//! virtio-blk disks: finds virtio block functions on PCI, drives each with
//! the `virtio-blk` driver crate and registers it with the block layer as
//! /dev/vda, /dev/vdb ... in PCI address order.
//!
//! This file only adapts: frame's device types to the driver crate's
//! traits, `Bio`s to owned `Request`s, and completions back to the block
//! layer's callbacks. The driver keeps all device state; the one lock here
//! (`Disk::inner`, taken with interrupts off) serialises calls into it and
//! guards the table of callbacks. Callbacks run after the lock is dropped.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering, fence};

use frame::dma::{DmaCoherent, DmaDirection, DmaStream};
use frame::io::IoMem;
use frame::irq::IrqLine;
use frame::mm::PAGE_SIZE;
use frame::pci::{self, Bar, PciDevice};
use frame::sync::SpinLock;
use virtio::pci::{CapRegion, ConfigSpace, device_type, device_type_of, find_caps};
use virtio::{AccessError, DeviceMemory, Registers, Transport};
use virtio_blk::{BlkDevice, BlkError, DiskInfo, DmaBuffer, Op, Request, Submitted, Vectors};

use super::{Bio, BioDone, BioOp, BlockDriver};
use crate::error::{Errno, Error, Result};

/// Lock level of a disk's driver state. The queue interrupt takes it on
/// top of whatever the interrupted code holds with interrupts enabled (the
/// futex table's 46, for one: frame's level check does not reset in
/// interrupt context), so it sits above every such kernel lock; inside it
/// only the heap (58) and the frame allocator (60) are taken. Completion
/// callbacks, which wake wait queues (50), run after it is dropped.
const DISK_LOCK: u8 = 56;
/// PCI capability id of MSI-X.
pub(crate) const CAP_MSIX: u8 = 0x11;

/// A register window of a memory BAR (virtio-net uses it too).
pub(crate) struct Mmio(pub(crate) IoMem);

impl Registers for Mmio {
    fn read_u8(&self, offset: usize) -> core::result::Result<u8, AccessError> {
        self.0.read_u8(offset).map_err(|_| AccessError)
    }
    fn read_u16(&self, offset: usize) -> core::result::Result<u16, AccessError> {
        self.0.read_u16(offset).map_err(|_| AccessError)
    }
    fn read_u32(&self, offset: usize) -> core::result::Result<u32, AccessError> {
        self.0.read_u32(offset).map_err(|_| AccessError)
    }
    fn write_u8(&self, offset: usize, value: u8) -> core::result::Result<(), AccessError> {
        self.0.write_u8(offset, value).map_err(|_| AccessError)
    }
    fn write_u16(&self, offset: usize, value: u16) -> core::result::Result<(), AccessError> {
        self.0.write_u16(offset, value).map_err(|_| AccessError)
    }
    fn write_u32(&self, offset: usize, value: u32) -> core::result::Result<(), AccessError> {
        self.0.write_u32(offset, value).map_err(|_| AccessError)
    }
}

/// Ring and header memory.
pub(crate) struct Coherent(pub(crate) DmaCoherent);

impl DeviceMemory for Coherent {
    fn bus_addr(&self) -> u64 {
        self.0.bus_addr()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn read_u16(&self, offset: usize) -> core::result::Result<u16, AccessError> {
        self.0.read_val(offset).map_err(|_| AccessError)
    }
    fn read_u32(&self, offset: usize) -> core::result::Result<u32, AccessError> {
        self.0.read_val(offset).map_err(|_| AccessError)
    }
    fn write_u16(&self, offset: usize, value: u16) -> core::result::Result<(), AccessError> {
        self.0.write_val(offset, &value).map_err(|_| AccessError)
    }
    fn write_u32(&self, offset: usize, value: u32) -> core::result::Result<(), AccessError> {
        self.0.write_val(offset, &value).map_err(|_| AccessError)
    }
    fn write_u64(&self, offset: usize, value: u64) -> core::result::Result<(), AccessError> {
        self.0.write_val(offset, &value).map_err(|_| AccessError)
    }
    fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> core::result::Result<(), AccessError> {
        self.0.read_bytes(offset, buf).map_err(|_| AccessError)
    }
    fn write_bytes(&self, offset: usize, buf: &[u8]) -> core::result::Result<(), AccessError> {
        self.0.write_bytes(offset, buf).map_err(|_| AccessError)
    }
    fn fence(&self) {
        fence(Ordering::SeqCst);
    }
}

/// One bio segment: `len` bytes at `offset` of a page mapped for the device.
struct Segment {
    stream: DmaStream,
    offset: usize,
    len: usize,
}

impl DmaBuffer for Segment {
    fn bus_addr(&self) -> u64 {
        self.stream.bus_addr() + self.offset as u64
    }
    fn len(&self) -> usize {
        self.len
    }
    fn sync_for_device(&self) {
        self.stream.sync_for_device();
    }
    fn sync_for_cpu(&self) {
        self.stream.sync_for_cpu();
    }
}

pub(crate) struct Config<'a>(pub(crate) &'a PciDevice);

impl ConfigSpace for Config<'_> {
    fn read_u8(&self, offset: u16) -> core::result::Result<u8, AccessError> {
        self.0.config_read_u8(offset).map_err(|_| AccessError)
    }
    fn read_u32(&self, offset: u16) -> core::result::Result<u32, AccessError> {
        self.0.config_read_u32(offset).map_err(|_| AccessError)
    }
}

type Driver = BlkDevice<Mmio, Coherent, Segment>;

struct Inner {
    driver: Driver,
    /// Completion callbacks by request id (the index); ids are reused.
    pending: Vec<Option<BioDone>>,
    free_ids: Vec<u64>,
}

/// One virtio-blk disk.
pub struct Disk {
    inner: SpinLock<Inner, DISK_LOCK>,
    info: DiskInfo,
    /// Most requests seen in flight at once (logged each time it grows).
    peak_in_flight: AtomicUsize,
    /// "MSI-X" or "INTx", for the boot log.
    irq_mode: &'static str,
    /// Interrupt lines, dropped (unregistered) with the disk.
    _irqs: Vec<IrqLine>,
    _pci: PciDevice,
}

fn errno_of(e: BlkError) -> Error {
    match e {
        BlkError::Busy => Error::new(Errno::EAGAIN),
        BlkError::Invalid => Error::with_message(Errno::EINVAL, "virtio-blk: request refused"),
        BlkError::ReadOnly => Error::new(Errno::EROFS),
        BlkError::Unsupported => Error::new(Errno::EOPNOTSUPP),
        BlkError::Io | BlkError::DeviceBroken => {
            Error::with_message(Errno::EIO, "virtio-blk: device error")
        }
    }
}

impl Disk {
    /// Finishes what the device completed: called from the queue's
    /// interrupt. The callbacks run after the lock is dropped.
    fn complete(&self) {
        let finished: Vec<(BioDone, core::result::Result<(), BlkError>)> = {
            let mut inner = self.inner.lock_irq_disabled();
            let completions = inner.driver.poll();
            let mut out = Vec::with_capacity(completions.len());
            for c in completions {
                let slot = inner.pending.get_mut(c.id as usize).and_then(Option::take);
                if let Some(done) = slot {
                    inner.free_ids.push(c.id);
                    out.push((done, c.status));
                }
                // The DMA mappings (c.buffers) end here, under the lock; the
                // frames stay alive through the bio's own references.
            }
            out
        };
        for (done, status) in finished {
            done(status.map_err(errno_of));
        }
    }
}

impl BlockDriver for Disk {
    fn capacity_sectors(&self) -> u64 {
        self.info.capacity_sectors
    }

    fn logical_block_size(&self) -> u32 {
        self.info.block_size
    }

    fn read_only(&self) -> bool {
        self.info.read_only
    }

    fn submit(&self, bio: Bio, done: BioDone) -> Result<()> {
        let (op, dir) = match bio.op {
            BioOp::Read => (Op::Read, DmaDirection::FromDevice),
            BioOp::Write => (Op::Write, DmaDirection::ToDevice),
            BioOp::Flush => (Op::Flush, DmaDirection::ToDevice),
        };
        if bio
            .segments
            .iter()
            .any(|s| s.offset.checked_add(s.len).is_none_or(|e| e > PAGE_SIZE))
        {
            return Err(Error::new(Errno::EINVAL));
        }
        let buffers = bio
            .segments
            .into_iter()
            .map(|s| Segment {
                stream: DmaStream::map(s.frame, dir),
                offset: s.offset,
                len: s.len,
            })
            .collect();
        let mut inner = self.inner.lock_irq_disabled();
        let Some(id) = inner.free_ids.pop() else {
            return Err(Error::new(Errno::EAGAIN));
        };
        match inner.driver.submit(Request {
            id,
            op,
            sector: bio.sector,
            buffers,
        }) {
            Ok(Submitted::Queued) => {
                if let Some(slot) = inner.pending.get_mut(id as usize) {
                    *slot = Some(done);
                }
                let n = inner.driver.in_flight_requests();
                drop(inner);
                if n > self.peak_in_flight.fetch_max(n, Ordering::Relaxed)
                    && n.is_power_of_two()
                    && n > 1
                {
                    frame::log_info!("virtio-blk: {n} requests in flight");
                }
                Ok(())
            }
            Ok(Submitted::Completed(c)) => {
                inner.free_ids.push(id);
                drop(inner);
                done(c.status.map_err(errno_of));
                Ok(())
            }
            Err(rejected) => {
                inner.free_ids.push(id);
                Err(errno_of(rejected.error))
            }
        }
    }
}

/// Maps one capability's window: `region.length` bytes at `region.offset`
/// of its memory BAR (each BAR mapped once, in `bars`).
pub(crate) fn window(pci: &PciDevice, bars: &mut [Option<IoMem>; 6], region: CapRegion) -> Result<Mmio> {
    let i = usize::from(region.bar);
    if bars[i].is_none() {
        match pci.bar(i)? {
            Bar::Mem(m) => bars[i] = Some(m),
            Bar::Port(_) => {
                return Err(Error::with_message(
                    Errno::ENODEV,
                    "virtio: capability in an I/O BAR",
                ));
            }
        }
    }
    let bar = bars[i].as_ref().ok_or(Error::new(Errno::ENODEV))?;
    Ok(Mmio(
        bar.slice(region.offset as usize, region.length as usize)?,
    ))
}

/// Brings up one virtio-blk function.
fn probe(pci: PciDevice) -> Result<Arc<Disk>> {
    let caps = pci.capabilities();
    let found = find_caps(&Config(&pci), &caps).map_err(|_| {
        Error::with_message(
            Errno::ENODEV,
            "virtio: no modern capabilities (legacy-only device)",
        )
    })?;
    pci.enable_memory_space();
    pci.enable_bus_master();
    let mut bars: [Option<IoMem>; 6] = Default::default();
    let common = window(&pci, &mut bars, found.common)?;
    let notify = window(&pci, &mut bars, found.notify)?;
    let isr = window(&pci, &mut bars, found.isr)?;
    let device = found
        .device
        .map(|r| window(&pci, &mut bars, r))
        .transpose()?;
    let transport = Transport::new(common, notify, found.notify_off_multiplier, isr, device);

    // MSI-X: vector 0 for configuration changes, 1 for the queue; with one
    // entry only, the queue's. Without MSI-X: INTx, and poll reads the ISR.
    let has_msix = caps.iter().any(|&(id, _)| id == CAP_MSIX);
    let (irqs, vectors) = if has_msix {
        match pci.irq_lines(2) {
            Ok(l) => (
                l,
                Some(Vectors {
                    config: 0,
                    queue: 1,
                }),
            ),
            Err(_) => (
                pci.irq_lines(1)?,
                Some(Vectors {
                    config: virtio::transport::NO_VECTOR,
                    queue: 0,
                }),
            ),
        }
    } else {
        (pci.irq_lines(1)?, None)
    };
    let alloc = |bytes: usize| {
        DmaCoherent::alloc(bytes.div_ceil(PAGE_SIZE))
            .ok()
            .map(Coherent)
    };
    let driver = BlkDevice::new(transport, alloc, vectors)
        .map_err(|_| Error::with_message(Errno::EIO, "virtio-blk: device initialisation failed"))?;
    let info = driver.info();
    let slots = driver.max_requests();
    let queue_irq = if vectors.is_some_and(|v| v.config != virtio::transport::NO_VECTOR) {
        1
    } else {
        0
    };
    let disk = Arc::new(Disk {
        inner: SpinLock::new(Inner {
            driver,
            pending: (0..slots).map(|_| None).collect(),
            free_ids: (0..slots as u64).rev().collect(),
        }),
        info,
        peak_in_flight: AtomicUsize::new(0),
        irq_mode: if vectors.is_some() { "MSI-X" } else { "INTx" },
        _irqs: irqs,
        _pci: pci,
    });
    let weak = Arc::downgrade(&disk);
    if let Some(line) = disk._irqs.get(queue_irq) {
        line.on_active(move || {
            if let Some(d) = weak.upgrade() {
                d.complete();
            }
        });
    }
    Ok(disk)
}

/// Finds every virtio-blk function (modern 0x1042, or transitional 0x1001
/// with modern capabilities) in PCI address order and registers each as
/// the next /dev/vdX.
pub fn probe_all() {
    let mut functions: Vec<_> = pci::devices()
        .into_iter()
        .filter(|d| device_type_of(d.vendor_id, d.device_id) == Some(device_type::BLOCK))
        .collect();
    functions.sort_by_key(|d| d.bdf);
    for info in functions {
        let disk = pci::claim(info.bdf).map_err(Error::from).and_then(probe);
        match disk {
            Ok(disk) => {
                let i = disk.info;
                let mode = disk.irq_mode;
                match super::register_disk("vd", disk) {
                    Ok(dev) => frame::log_info!(
                        "virtio-blk {}: {} ({} sectors, block size {}{}{}, {})",
                        info.bdf,
                        dev.name(),
                        i.capacity_sectors,
                        i.block_size,
                        if i.read_only { ", read-only" } else { "" },
                        if i.flush { ", write cache" } else { "" },
                        mode,
                    ),
                    Err(e) => frame::log_info!("virtio-blk {}: not registered: {e:?}", info.bdf),
                }
            }
            Err(e) => frame::log_info!("virtio-blk {}: {e:?}", info.bdf),
        }
    }
}
