//! What the virtio PCI adapters (kernel/src/block/virtio_blk.rs,
//! kernel/src/net/virtio_net.rs) share: frame's device types wrapped in
//! the `virtio` crate's traits, the capability windows of a function, and
//! the choice of interrupt lines (MSI-X with two entries, with one, or
//! INTx).
//!

use alloc::vec::Vec;
use core::sync::atomic::{Ordering, fence};

use frame::dma::DmaCoherent;
use frame::io::IoMem;
use frame::irq::IrqLine;
use frame::pci::{Bar, PciDevice};
use virtio::pci::{CapRegion, ConfigSpace, find_caps};
use virtio::{AccessError, DeviceMemory, Registers, Transport};

use crate::error::{Errno, Error, Result};

/// PCI capability id of MSI-X.
pub(crate) const CAP_MSIX: u8 = 0x11;

/// A register window of a memory BAR.
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

/// Ring, header and packet-slot memory.
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

/// A function's configuration space, as `virtio::pci` reads it.
pub(crate) struct Config<'a>(pub(crate) &'a PciDevice);

impl ConfigSpace for Config<'_> {
    fn read_u8(&self, offset: u16) -> core::result::Result<u8, AccessError> {
        self.0.config_read_u8(offset).map_err(|_| AccessError)
    }
    fn read_u32(&self, offset: u16) -> core::result::Result<u32, AccessError> {
        self.0.config_read_u32(offset).map_err(|_| AccessError)
    }
}

/// Maps one capability's window: `region.length` bytes at `region.offset`
/// of its memory BAR (each BAR mapped once, in `bars`).
fn window(pci: &PciDevice, bars: &mut [Option<IoMem>; 6], region: CapRegion) -> Result<Mmio> {
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

/// The register windows of a modern virtio function.
pub(crate) struct Windows {
    pub(crate) common: Mmio,
    pub(crate) notify: Mmio,
    pub(crate) notify_off_multiplier: u32,
    pub(crate) isr: Mmio,
    pub(crate) device: Option<Mmio>,
}

impl Windows {
    /// Clones of the windows, which a driver domain can be given (and a
    /// restarted one again).
    pub(crate) fn regs(&self) -> Regs {
        Regs {
            common: self.common.0.clone(),
            notify: self.notify.0.clone(),
            notify_off_multiplier: self.notify_off_multiplier,
            isr: self.isr.0.clone(),
            device: self.device.as_ref().map(|m| m.0.clone()),
        }
    }

    /// A transport over the windows.
    pub(crate) fn into_transport(self) -> Transport<Mmio> {
        Transport::new(
            self.common,
            self.notify,
            self.notify_off_multiplier,
            self.isr,
            self.device,
        )
    }
}

/// The register windows as plain clones: what the hand-off table of a
/// shadow driver keeps so that every new driver domain can reach the
/// device, and what the shadow's device reset uses.
#[derive(Clone)]
pub(crate) struct Regs {
    common: IoMem,
    notify: IoMem,
    notify_off_multiplier: u32,
    isr: IoMem,
    device: Option<IoMem>,
}

impl Regs {
    /// A transport of its own over the same windows.
    pub(crate) fn transport(&self) -> Transport<Mmio> {
        Transport::new(
            Mmio(self.common.clone()),
            Mmio(self.notify.clone()),
            self.notify_off_multiplier,
            Mmio(self.isr.clone()),
            self.device.clone().map(Mmio),
        )
    }
}

/// Finds the modern capabilities of `pci`, enables memory decoding and bus
/// mastering, and maps the windows. ENODEV for a legacy-only device.
pub(crate) fn map_windows(pci: &PciDevice) -> Result<Windows> {
    let caps = pci.capabilities();
    let found = find_caps(&Config(pci), &caps).map_err(|_| {
        Error::with_message(
            Errno::ENODEV,
            "virtio: no modern capabilities (legacy-only device)",
        )
    })?;
    pci.enable_memory_space();
    pci.enable_bus_master();
    let mut bars: [Option<IoMem>; 6] = Default::default();
    Ok(Windows {
        common: window(pci, &mut bars, found.common)?,
        notify: window(pci, &mut bars, found.notify)?,
        notify_off_multiplier: found.notify_off_multiplier,
        isr: window(pci, &mut bars, found.isr)?,
        device: found
            .device
            .map(|r| window(pci, &mut bars, r))
            .transpose()?,
    })
}

/// Which interrupt lines a function got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IrqPlan {
    /// Two MSI-X entries: 0 for configuration changes, 1 for the queues.
    MsixTwo,
    /// One MSI-X entry only.
    MsixOne,
    /// No MSI-X capability: the INTx line, whose handler must read the ISR
    /// status to deassert it.
    Intx,
}

impl IrqPlan {
    pub(crate) fn name(self) -> &'static str {
        match self {
            IrqPlan::MsixTwo | IrqPlan::MsixOne => "MSI-X",
            IrqPlan::Intx => "INTx",
        }
    }
}

/// The interrupt lines of `pci`: two MSI-X entries if it has MSI-X and two
/// can be had, else one; INTx without MSI-X.
pub(crate) fn irq_lines(pci: &PciDevice) -> Result<(Vec<IrqLine>, IrqPlan)> {
    let has_msix = pci.capabilities().iter().any(|&(id, _)| id == CAP_MSIX);
    if !has_msix {
        return Ok((pci.irq_lines(1)?, IrqPlan::Intx));
    }
    match pci.irq_lines(2) {
        Ok(l) => Ok((l, IrqPlan::MsixTwo)),
        Err(_) => Ok((pci.irq_lines(1)?, IrqPlan::MsixOne)),
    }
}
