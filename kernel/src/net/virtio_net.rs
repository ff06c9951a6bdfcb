//! virtio-net interfaces: finds virtio network functions on PCI, drives
//! each with the `virtio-net` driver crate and registers it with the
//! network stack (`net::device::register_netdev`) as eth0, eth1 ... in PCI
//! address order.
//!
//! This file only adapts: frame's device types to the driver crate's
//! traits (the register and DMA wrappers of the virtio-blk adapter), the
//! driver to `NetDriver`, and the device's interrupts to the stack's
//! `NetDevHandle::notify`. The driver keeps all device state; one spin
//! lock (interrupts off) serialises calls into it.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use frame::dma::DmaCoherent;
use frame::io::IoMem;
use frame::irq::IrqLine;
use frame::mm::PAGE_SIZE;
use frame::pci::{self, PciDevice};
use frame::sync::{Once, SpinLock};
use virtio::Transport;
use virtio::pci::{device_type, device_type_of, find_caps};
use virtio_net::{NetDevice, NetStats, TxError, Vectors};

use super::device::{NetDevHandle, NetDriver, register_netdev};
use crate::block::virtio_blk::{CAP_MSIX, Coherent, Config, Mmio, window};
use crate::error::{Errno, Error, Result};

/// Lock level of a NIC's driver state: above the stack (34), which calls
/// in with its own lock held; with INTx the interrupt takes it on top of
/// whatever the interrupted code holds, like the disks' 56. Only the heap
/// (58) and the frame allocator (60) are taken inside.
const NIC_LOCK: u8 = 56;

type Driver = NetDevice<Mmio, Coherent>;

/// One virtio-net function.
pub struct Nic {
    inner: SpinLock<Driver, NIC_LOCK>,
    mac: [u8; 6],
    intx: bool,
    /// The stack's handle, once registered: interrupts call its `notify`.
    handle: Once<NetDevHandle>,
    /// Device errors already reported in the log.
    reported_errors: AtomicU64,
    /// Frames dropped for their length, already reported.
    reported_drops: AtomicU64,
    /// Interrupts taken (the ktest checks that frames arrive with one).
    interrupts: AtomicU64,
    /// "MSI-X" or "INTx", for the boot log.
    irq_mode: &'static str,
    _irqs: Vec<IrqLine>,
    _pci: PciDevice,
}

impl Nic {
    /// The device interrupted (a queue or its configuration): acknowledge
    /// it with INTx, then wake the stack. Interrupt context: only wakes.
    fn interrupt(&self) {
        self.interrupts.fetch_add(1, Ordering::Relaxed);
        if self.intx {
            self.inner.lock_irq_disabled().ack_interrupt();
        }
        if let Some(h) = self.handle.get() {
            h.notify();
        }
    }

    pub fn stats(&self) -> NetStats {
        self.inner.lock_irq_disabled().stats()
    }

    /// Logs device errors and dropped frames when their counts reach a new
    /// power of two (so a hostile device cannot flood the log).
    fn report(&self, s: &NetStats) {
        for (count, seen, what) in [
            (
                s.device_errors,
                &self.reported_errors,
                "bad used elements from the device",
            ),
            (
                s.rx_length_errors,
                &self.reported_drops,
                "received frames dropped for their length",
            ),
        ] {
            let old = seen.load(Ordering::Relaxed);
            if count > old && count.is_power_of_two() {
                seen.store(count, Ordering::Relaxed);
                frame::log_info!("virtio-net {}: {count} {what}", mac_string(self.mac));
            }
        }
    }
}

impl NetDriver for Nic {
    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn mtu(&self) -> usize {
        virtio_net::MTU
    }

    fn link_up(&self) -> bool {
        self.inner.lock_irq_disabled().link_up()
    }

    fn transmit(&self, frame: &[u8]) -> Result<()> {
        let r = self.inner.lock_irq_disabled().transmit(frame);
        r.map_err(|e| match e {
            TxError::Full => Error::new(Errno::EAGAIN),
            TxError::BadLength => Error::new(Errno::EMSGSIZE),
            TxError::Broken => Error::with_message(Errno::ENETDOWN, "virtio-net: device broken"),
        })
    }

    fn receive(&self) -> Option<Vec<u8>> {
        let (frame, stats) = {
            let mut d = self.inner.lock_irq_disabled();
            let f = d.receive();
            (f, d.stats())
        };
        self.report(&stats);
        frame
    }
}

pub fn mac_string(m: [u8; 6]) -> String {
    alloc::format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0],
        m[1],
        m[2],
        m[3],
        m[4],
        m[5]
    )
}

/// Brings up one virtio-net function; `index` picks the fallback MAC of a
/// device without VIRTIO_NET_F_MAC (52:54:00:12:34:56 + index).
fn probe(pci: PciDevice, index: u8) -> Result<Arc<Nic>> {
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

    // MSI-X: entry 0 for configuration changes (the link), entry 1 for both
    // queues; with one entry, everything on it. Without MSI-X: INTx, and
    // the interrupt reads the ISR status.
    let has_msix = caps.iter().any(|&(id, _)| id == CAP_MSIX);
    let (irqs, vectors) = if has_msix {
        match pci.irq_lines(2) {
            Ok(l) => (
                l,
                Some(Vectors {
                    config: 0,
                    rx: 1,
                    tx: 1,
                }),
            ),
            Err(_) => (
                pci.irq_lines(1)?,
                Some(Vectors {
                    config: 0,
                    rx: 0,
                    tx: 0,
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
    let fallback = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56u8.wrapping_add(index)];
    let driver = NetDevice::new(transport, alloc, vectors, fallback)
        .map_err(|_| Error::with_message(Errno::EIO, "virtio-net: device initialisation failed"))?;
    let nic = Arc::new(Nic {
        mac: driver.mac(),
        inner: SpinLock::new(driver),
        intx: vectors.is_none(),
        handle: Once::new(),
        reported_errors: AtomicU64::new(0),
        reported_drops: AtomicU64::new(0),
        interrupts: AtomicU64::new(0),
        irq_mode: if vectors.is_some() { "MSI-X" } else { "INTx" },
        _irqs: irqs,
        _pci: pci,
    });
    for line in &nic._irqs {
        let weak = Arc::downgrade(&nic);
        line.on_active(move || {
            if let Some(n) = weak.upgrade() {
                n.interrupt();
            }
        });
    }
    Ok(nic)
}

/// Every virtio-net function found at boot, registered or not: they live
/// as long as the kernel (a device is never dropped while it may still
/// write its receive buffers).
static NICS: SpinLock<Vec<Arc<Nic>>, NIC_LOCK> = SpinLock::new(Vec::new());

/// The virtio-net functions in PCI address order.
fn functions() -> Vec<pci::PciDeviceInfo> {
    let mut f: Vec<_> = pci::devices()
        .into_iter()
        .filter(|d| device_type_of(d.vendor_id, d.device_id) == Some(device_type::NET))
        .collect();
    f.sort_by_key(|d| d.bdf);
    f
}

/// Finds every virtio-net function (modern 0x1041, or transitional 0x1000
/// with modern capabilities) in PCI address order, brings it up and
/// registers it with the stack as the next ethN.
pub fn probe_all() {
    for (i, info) in functions().into_iter().enumerate() {
        let nic = pci::claim(info.bdf)
            .map_err(Error::from)
            .and_then(|p| probe(p, i as u8));
        let nic = match nic {
            Ok(n) => n,
            Err(e) => {
                frame::log_info!("virtio-net {}: {e:?}", info.bdf);
                continue;
            }
        };
        let (mac, mode) = (mac_string(nic.mac), nic.irq_mode);
        match register_netdev(nic.clone()) {
            Ok(handle) => {
                let index = handle.index;
                nic.handle.call_once(|| handle);
                frame::log_info!(
                    "virtio-net {}: interface {index}, MAC {mac}, {mode}",
                    info.bdf
                );
                // Frames may have arrived before the handle was there.
                if let Some(h) = nic.handle.get() {
                    h.notify();
                }
            }
            Err(e) => frame::log_info!(
                "virtio-net {}: MAC {mac}, {mode}; not registered: {e:?}",
                info.bdf
            ),
        }
        NICS.lock_irq_disabled().push(nic);
    }
}

/// For the `virtio_net` ktest: brings up the first virtio-net function
/// without registering it, so the test alone sees its frames.
pub fn probe_first_unregistered() -> Result<Arc<Nic>> {
    let info = functions()
        .into_iter()
        .next()
        .ok_or(Error::with_message(Errno::ENODEV, "no virtio-net function"))?;
    let nic = probe(pci::claim(info.bdf).map_err(Error::from)?, 0)?;
    NICS.lock_irq_disabled().push(nic.clone());
    Ok(nic)
}

impl Nic {
    /// Frames waiting to be received (the ktest polls this).
    pub fn rx_pending(&self) -> bool {
        self.inner.lock_irq_disabled().rx_pending()
    }

    pub fn tx_in_flight(&self) -> usize {
        self.inner.lock_irq_disabled().tx_in_flight()
    }

    pub fn interrupts(&self) -> u64 {
        self.interrupts.load(Ordering::Relaxed)
    }

    pub fn irq_mode(&self) -> &'static str {
        self.irq_mode
    }
}
