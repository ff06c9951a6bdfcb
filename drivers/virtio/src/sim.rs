//! A simulated virtio device for host tests: bus memory, the device side of
//! split queues and a modern PCI register file. Test code only (feature
//! `sim`); it uses `std`'s `Mutex` and panics on misuse by the test.

use alloc::vec;
use alloc::vec::Vec;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{AccessError, DeviceMemory, QueueLayout, Registers};

/// Bus addresses of the simulated memory start here, so 0 is never valid.
pub const BUS_BASE: u64 = 0x1000_0000;

/// The simulated physical memory, shared by the driver's regions and the
/// device model. Regions are carved out of it one after another.
#[derive(Clone)]
pub struct SimBus {
    inner: Arc<Mutex<BusInner>>,
}

struct BusInner {
    bytes: Vec<u8>,
    next: usize,
}

impl SimBus {
    pub fn new(size: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(BusInner {
                bytes: vec![0; size],
                next: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BusInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh zeroed region of `len` bytes, 4096-aligned.
    pub fn alloc(&self, len: usize) -> SimRegion {
        let mut b = self.lock();
        let base = b.next;
        b.next = (base + len).next_multiple_of(4096);
        assert!(b.next <= b.bytes.len(), "sim bus out of memory");
        SimRegion {
            bus: self.clone(),
            base,
            len,
        }
    }

    /// Device-side access by bus address; `None` outside the bus.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Option<()> {
        let b = self.lock();
        let start = usize::try_from(addr.checked_sub(BUS_BASE)?).ok()?;
        buf.copy_from_slice(b.bytes.get(start..start.checked_add(buf.len())?)?);
        Some(())
    }

    pub fn write(&self, addr: u64, data: &[u8]) -> Option<()> {
        let mut b = self.lock();
        let start = usize::try_from(addr.checked_sub(BUS_BASE)?).ok()?;
        b.bytes
            .get_mut(start..start.checked_add(data.len())?)?
            .copy_from_slice(data);
        Some(())
    }

    pub fn read_u16(&self, addr: u64) -> u16 {
        let mut v = [0; 2];
        self.read(addr, &mut v)
            .expect("sim: device read outside the bus");
        u16::from_le_bytes(v)
    }

    pub fn read_u32(&self, addr: u64) -> u32 {
        let mut v = [0; 4];
        self.read(addr, &mut v)
            .expect("sim: device read outside the bus");
        u32::from_le_bytes(v)
    }

    pub fn read_u64(&self, addr: u64) -> u64 {
        let mut v = [0; 8];
        self.read(addr, &mut v)
            .expect("sim: device read outside the bus");
        u64::from_le_bytes(v)
    }

    pub fn write_u16(&self, addr: u64, v: u16) {
        self.write(addr, &v.to_le_bytes())
            .expect("sim: device write outside the bus");
    }

    pub fn write_u32(&self, addr: u64, v: u32) {
        self.write(addr, &v.to_le_bytes())
            .expect("sim: device write outside the bus");
    }
}

/// A window of the bus handed to the driver: its DMA-coherent memory or a
/// data buffer.
#[derive(Clone)]
pub struct SimRegion {
    bus: SimBus,
    base: usize,
    len: usize,
}

impl SimRegion {
    fn range(&self, offset: usize, len: usize, align: usize) -> Result<usize, AccessError> {
        let end = offset.checked_add(len).ok_or(AccessError)?;
        if end > self.len || !offset.is_multiple_of(align) {
            return Err(AccessError);
        }
        Ok(self.base + offset)
    }

    fn read_n<const N: usize>(&self, offset: usize) -> Result<[u8; N], AccessError> {
        let start = self.range(offset, N, N)?;
        let mut v = [0; N];
        v.copy_from_slice(&self.bus.lock().bytes[start..start + N]);
        Ok(v)
    }

    fn write_n(&self, offset: usize, v: &[u8]) -> Result<(), AccessError> {
        let start = self.range(offset, v.len(), v.len())?;
        self.bus.lock().bytes[start..start + v.len()].copy_from_slice(v);
        Ok(())
    }
}

impl DeviceMemory for SimRegion {
    fn bus_addr(&self) -> u64 {
        BUS_BASE + self.base as u64
    }
    fn len(&self) -> usize {
        self.len
    }
    fn read_u16(&self, offset: usize) -> Result<u16, AccessError> {
        self.read_n(offset).map(u16::from_le_bytes)
    }
    fn read_u32(&self, offset: usize) -> Result<u32, AccessError> {
        self.read_n(offset).map(u32::from_le_bytes)
    }
    fn write_u16(&self, offset: usize, value: u16) -> Result<(), AccessError> {
        self.write_n(offset, &value.to_le_bytes())
    }
    fn write_u32(&self, offset: usize, value: u32) -> Result<(), AccessError> {
        self.write_n(offset, &value.to_le_bytes())
    }
    fn write_u64(&self, offset: usize, value: u64) -> Result<(), AccessError> {
        self.write_n(offset, &value.to_le_bytes())
    }
    fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), AccessError> {
        let start = self.range(offset, buf.len(), 1)?;
        buf.copy_from_slice(&self.bus.lock().bytes[start..start + buf.len()]);
        Ok(())
    }
    fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), AccessError> {
        let start = self.range(offset, buf.len(), 1)?;
        self.bus.lock().bytes[start..start + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn fence(&self) {}
}

/// One descriptor as the device read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimDesc {
    pub addr: u64,
    pub len: u32,
    pub writable: bool,
}

/// A chain the device took from the available ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimChain {
    pub head: u16,
    pub descs: Vec<SimDesc>,
}

/// The device side of one split queue: it reads the available ring and
/// descriptor table by bus address and writes the used ring, as a device
/// would, including wrong things when a test asks it to.
pub struct SimQueue {
    bus: SimBus,
    layout: QueueLayout,
    desc: u64,
    avail: u64,
    used: u64,
    last_avail: u16,
    used_idx: u16,
}

impl SimQueue {
    pub fn new(bus: &SimBus, size: u16, (desc, avail, used): (u64, u64, u64)) -> Self {
        let layout = QueueLayout::new(size).expect("sim: bad queue size");
        Self {
            bus: bus.clone(),
            layout,
            desc,
            avail,
            used,
            last_avail: 0,
            used_idx: 0,
        }
    }

    /// The next available chain, if the driver published one.
    pub fn pop_avail(&mut self) -> Option<SimChain> {
        let idx = self.bus.read_u16(self.avail + 2);
        if idx == self.last_avail {
            return None;
        }
        let slot = self.last_avail & (self.layout.size - 1);
        let head = self.bus.read_u16(self.avail + 4 + 2 * u64::from(slot));
        self.last_avail = self.last_avail.wrapping_add(1);
        let mut descs = Vec::new();
        let mut i = head;
        loop {
            assert!(
                i < self.layout.size,
                "sim: descriptor index {i} out of range"
            );
            assert!(
                descs.len() < self.layout.size as usize,
                "sim: descriptor loop"
            );
            let d = self.desc + 16 * u64::from(i);
            let flags = self.bus.read_u16(d + 12);
            descs.push(SimDesc {
                addr: self.bus.read_u64(d),
                len: self.bus.read_u32(d + 8),
                writable: flags & 2 != 0,
            });
            if flags & 1 == 0 {
                break;
            }
            i = self.bus.read_u16(d + 14);
        }
        Some(SimChain { head, descs })
    }

    /// Puts `{id, len}` in the used ring and publishes it.
    pub fn push_used(&mut self, id: u32, len: u32) {
        let slot = self.used_idx & (self.layout.size - 1);
        let e = self.used + 4 + 8 * u64::from(slot);
        self.bus.write_u32(e, id);
        self.bus.write_u32(e + 4, len);
        self.used_idx = self.used_idx.wrapping_add(1);
        self.bus.write_u16(self.used + 2, self.used_idx);
    }

    /// Writes the used index directly (a broken device).
    pub fn set_used_idx(&mut self, idx: u16) {
        self.used_idx = idx;
        self.bus.write_u16(self.used + 2, idx);
    }

    pub fn set_no_notify(&self, on: bool) {
        self.bus.write_u16(self.used, u16::from(on));
    }

    /// The device's avail_event (VIRTIO_F_RING_EVENT_IDX).
    pub fn set_avail_event(&self, idx: u16) {
        self.bus
            .write_u16(self.used + 4 + 8 * u64::from(self.layout.size), idx);
    }

    /// The driver's used_event.
    pub fn used_event(&self) -> u16 {
        self.bus
            .read_u16(self.avail + 4 + 2 * u64::from(self.layout.size))
    }

    pub fn bus(&self) -> &SimBus {
        &self.bus
    }
}

/// The register file of a simulated modern virtio PCI device: common
/// configuration, notification, ISR and device-specific configuration, each
/// a [`SimRegs`] window.
#[derive(Clone)]
pub struct SimPciDevice {
    state: Arc<Mutex<PciState>>,
}

/// What the simulated device recorded about one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimQueueRegs {
    pub max_size: u16,
    /// Reads as the maximum after reset (§4.1.4.3), then as written.
    pub size: u16,
    pub msix_vector: u16,
    pub enabled: bool,
    pub desc: u64,
    pub driver: u64,
    pub device: u64,
    pub notify_off: u16,
}

struct PciState {
    device_features: u64,
    driver_features: u64,
    device_feature_select: u32,
    driver_feature_select: u32,
    status: u8,
    config_msix: u16,
    queue_select: u16,
    queues: Vec<SimQueueRegs>,
    /// Highest MSI-X vector the device accepts (others read back NO_VECTOR).
    msix_vectors: u16,
    /// Refuse FEATURES_OK (the device cannot work with the subset).
    refuse_features: bool,
    notifications: Vec<u16>,
    isr: u8,
    device_cfg: Vec<u8>,
    generation: u8,
}

/// Which window of [`SimPciDevice`] a [`SimRegs`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimWindow {
    Common,
    Notify,
    Isr,
    Device,
}

/// The notify_off_multiplier of the simulated device.
pub const SIM_NOTIFY_MULTIPLIER: u32 = 4;

impl SimPciDevice {
    pub fn new(
        device_features: u64,
        queue_max_sizes: &[u16],
        msix_vectors: u16,
        device_cfg: Vec<u8>,
    ) -> Self {
        let queues = queue_max_sizes
            .iter()
            .enumerate()
            .map(|(i, &max)| SimQueueRegs {
                max_size: max,
                size: max,
                notify_off: i as u16,
                msix_vector: 0xffff,
                ..Default::default()
            })
            .collect();
        Self {
            state: Arc::new(Mutex::new(PciState {
                device_features,
                driver_features: 0,
                device_feature_select: 0,
                driver_feature_select: 0,
                status: 0,
                config_msix: 0xffff,
                queue_select: 0,
                queues,
                msix_vectors,
                refuse_features: false,
                notifications: Vec::new(),
                isr: 0,
                device_cfg,
                generation: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PciState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn regs(&self, window: SimWindow) -> SimRegs {
        SimRegs {
            dev: self.clone(),
            window,
        }
    }

    pub fn status(&self) -> u8 {
        self.lock().status
    }
    pub fn driver_features(&self) -> u64 {
        self.lock().driver_features
    }
    pub fn queue(&self, i: usize) -> SimQueueRegs {
        self.lock().queues[i]
    }
    pub fn config_msix(&self) -> u16 {
        self.lock().config_msix
    }
    pub fn take_notifications(&self) -> Vec<u16> {
        core::mem::take(&mut self.lock().notifications)
    }
    pub fn set_refuse_features(&self, on: bool) {
        self.lock().refuse_features = on;
    }
    pub fn set_isr(&self, v: u8) {
        self.lock().isr = v;
    }
    pub fn set_device_cfg(&self, offset: usize, bytes: &[u8]) {
        let mut s = self.lock();
        s.device_cfg[offset..offset + bytes.len()].copy_from_slice(bytes);
        s.generation = s.generation.wrapping_add(1);
    }

    fn read(&self, window: SimWindow, offset: usize, width: usize) -> Result<u64, AccessError> {
        if !offset.is_multiple_of(width) {
            return Err(AccessError);
        }
        let mut s = self.lock();
        let q = s.queue_select as usize;
        let v = match window {
            SimWindow::Common => match (offset, width) {
                (0, 4) => u64::from(s.device_feature_select),
                (4, 4) => match s.device_feature_select {
                    0 => s.device_features & 0xffff_ffff,
                    1 => s.device_features >> 32,
                    _ => 0,
                },
                (8, 4) => u64::from(s.driver_feature_select),
                (12, 4) => match s.driver_feature_select {
                    0 => s.driver_features & 0xffff_ffff,
                    1 => s.driver_features >> 32,
                    _ => 0,
                },
                (16, 2) => u64::from(s.config_msix),
                (18, 2) => s.queues.len() as u64,
                (20, 1) => u64::from(s.status),
                (21, 1) => u64::from(s.generation),
                (22, 2) => u64::from(s.queue_select),
                (24, 2) => s.queues.get(q).map_or(0, |r| u64::from(r.size)),
                (26, 2) => s.queues.get(q).map_or(0xffff, |r| u64::from(r.msix_vector)),
                (28, 2) => s.queues.get(q).map_or(0, |r| u64::from(r.enabled)),
                (30, 2) => s.queues.get(q).map_or(0, |r| u64::from(r.notify_off)),
                (32 | 36 | 40 | 44 | 48 | 52, 4) => {
                    let r = s.queues.get(q).copied().unwrap_or_default();
                    let full = [r.desc, r.driver, r.device][(offset - 32) / 8];
                    if offset.is_multiple_of(8) {
                        full & 0xffff_ffff
                    } else {
                        full >> 32
                    }
                }
                _ => return Err(AccessError),
            },
            SimWindow::Isr => {
                // Reading the ISR status acknowledges it (§4.1.4.5).
                let v = s.isr;
                s.isr = 0;
                u64::from(v)
            }
            SimWindow::Notify => return Err(AccessError),
            SimWindow::Device => {
                let b = s
                    .device_cfg
                    .get(offset..offset + width)
                    .ok_or(AccessError)?;
                let mut v = [0u8; 8];
                v[..width].copy_from_slice(b);
                u64::from_le_bytes(v)
            }
        };
        Ok(v)
    }

    fn write(
        &self,
        window: SimWindow,
        offset: usize,
        width: usize,
        v: u64,
    ) -> Result<(), AccessError> {
        if !offset.is_multiple_of(width) {
            return Err(AccessError);
        }
        let mut s = self.lock();
        let q = s.queue_select as usize;
        match window {
            SimWindow::Common => match (offset, width) {
                (0, 4) => s.device_feature_select = v as u32,
                (8, 4) => s.driver_feature_select = v as u32,
                (12, 4) => match s.driver_feature_select {
                    0 => s.driver_features = (s.driver_features & !0xffff_ffff) | v,
                    1 => s.driver_features = (s.driver_features & 0xffff_ffff) | (v << 32),
                    _ => {}
                },
                (16, 2) => {
                    s.config_msix = if (v as u16) < s.msix_vectors {
                        v as u16
                    } else {
                        0xffff
                    }
                }
                (20, 1) => {
                    let mut status = v as u8;
                    if status == 0 {
                        // Reset.
                        s.driver_features = 0;
                        s.config_msix = 0xffff;
                        for r in &mut s.queues {
                            *r = SimQueueRegs {
                                max_size: r.max_size,
                                size: r.max_size,
                                notify_off: r.notify_off,
                                msix_vector: 0xffff,
                                ..Default::default()
                            };
                        }
                    }
                    let features_ok = 8;
                    if status & features_ok != 0
                        && (s.refuse_features || s.driver_features & !s.device_features != 0)
                    {
                        status &= !features_ok;
                    }
                    s.status = status;
                }
                (22, 2) => s.queue_select = v as u16,
                (24, 2) => {
                    if let Some(r) = s.queues.get_mut(q) {
                        r.size = v as u16;
                    }
                }
                (26, 2) => {
                    let max = s.msix_vectors;
                    if let Some(r) = s.queues.get_mut(q) {
                        r.msix_vector = if (v as u16) < max { v as u16 } else { 0xffff };
                    }
                }
                (28, 2) => {
                    if let Some(r) = s.queues.get_mut(q) {
                        r.enabled = v == 1;
                    }
                }
                (32 | 36 | 40 | 44 | 48 | 52, 4) => {
                    if let Some(r) = s.queues.get_mut(q) {
                        let field = match (offset - 32) / 8 {
                            0 => &mut r.desc,
                            1 => &mut r.driver,
                            _ => &mut r.device,
                        };
                        *field = if offset.is_multiple_of(8) {
                            (*field & !0xffff_ffff) | v
                        } else {
                            (*field & 0xffff_ffff) | (v << 32)
                        };
                    }
                }
                _ => return Err(AccessError),
            },
            SimWindow::Notify => {
                if width != 2 || !offset.is_multiple_of(SIM_NOTIFY_MULTIPLIER as usize) {
                    return Err(AccessError);
                }
                // notify_off of queue i is i, so the offset names the queue.
                let queue = (offset / SIM_NOTIFY_MULTIPLIER as usize) as u16;
                if v as u16 != queue {
                    return Err(AccessError);
                }
                s.notifications.push(queue);
            }
            SimWindow::Isr | SimWindow::Device => return Err(AccessError),
        }
        Ok(())
    }
}

/// One window of a [`SimPciDevice`].
#[derive(Clone)]
pub struct SimRegs {
    dev: SimPciDevice,
    window: SimWindow,
}

impl Registers for SimRegs {
    fn read_u8(&self, offset: usize) -> Result<u8, AccessError> {
        self.dev.read(self.window, offset, 1).map(|v| v as u8)
    }
    fn read_u16(&self, offset: usize) -> Result<u16, AccessError> {
        self.dev.read(self.window, offset, 2).map(|v| v as u16)
    }
    fn read_u32(&self, offset: usize) -> Result<u32, AccessError> {
        self.dev.read(self.window, offset, 4).map(|v| v as u32)
    }
    fn write_u8(&self, offset: usize, value: u8) -> Result<(), AccessError> {
        self.dev.write(self.window, offset, 1, value.into())
    }
    fn write_u16(&self, offset: usize, value: u16) -> Result<(), AccessError> {
        self.dev.write(self.window, offset, 2, value.into())
    }
    fn write_u32(&self, offset: usize, value: u32) -> Result<(), AccessError> {
        self.dev.write(self.window, offset, 4, value.into())
    }
}
