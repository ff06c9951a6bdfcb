//! virtio-net (virtio 1.x §5.1) in safe Rust: one receive and one transmit
//! queue, no offloads.
//!
//! Ownership: [`NetDevice`] owns the transport, both queues and the memory
//! of every packet slot. A frame to send is copied into a free transmit
//! slot behind a zeroed `virtio_net_hdr`; a received frame is copied out of
//! its receive slot, which goes straight back to the device. So no buffer
//! the device may still write is ever visible outside the driver, and the
//! caller deals only in plain byte slices and vectors.
//!
//! All driver state lives here and it takes no lock: its owner serialises
//! calls (the kernel adapter with one spin lock).
//!
//! Nothing the device writes is trusted: a used element with a bad id, a
//! length shorter than the header plus an Ethernet header, or longer than
//! the buffer is counted ([`NetStats`]) and the frame dropped; a device
//! that breaks the queue protocol is reset and the device reports no link.

#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

use alloc::vec;
use alloc::vec::Vec;

use virtio::transport::{NO_VECTOR, Notifier, TransportError};
use virtio::{
    AddError, Buffer, DeviceMemory, QueueLayout, Registers, SplitQueue, Transport, UsedError,
};

/// virtio-net feature bits (§5.1.3).
pub mod feature {
    pub const CSUM: u64 = 1 << 0;
    pub const GUEST_CSUM: u64 = 1 << 1;
    pub const MTU: u64 = 1 << 3;
    pub const MAC: u64 = 1 << 5;
    pub const GUEST_TSO4: u64 = 1 << 7;
    pub const HOST_TSO4: u64 = 1 << 11;
    pub const MRG_RXBUF: u64 = 1 << 15;
    pub const STATUS: u64 = 1 << 16;
    pub const CTRL_VQ: u64 = 1 << 17;
    pub const MQ: u64 = 1 << 22;
}

/// The features this driver asks for: the MAC address, the link status
/// and event-index notification suppression. No checksum or segmentation
/// offload, no mergeable receive buffers (every receive buffer holds a
/// whole frame), one queue pair, no control queue.
pub const WANTED_FEATURES: u64 = feature::MAC | feature::STATUS | virtio::feature::RING_EVENT_IDX;

/// Device configuration offsets (§5.1.4).
mod config {
    pub const MAC: usize = 0;
    pub const STATUS: usize = 6;
}
/// `VIRTIO_NET_S_LINK_UP` in the status field.
const S_LINK_UP: u16 = 1;

/// Queue indices (§5.1.2): receiveq1, transmitq1.
const RX_QUEUE: u16 = 0;
const TX_QUEUE: u16 = 1;

/// `struct virtio_net_hdr` with VIRTIO_F_VERSION_1: flags, gso_type,
/// hdr_len, gso_size, csum_start, csum_offset, num_buffers (§5.1.6).
pub const HDR_LEN: usize = 12;
/// Destination, source, EtherType.
pub const ETH_HLEN: usize = 14;
/// Room for one 802.1Q tag.
const VLAN_HLEN: usize = 4;
/// The MTU without VIRTIO_NET_F_MTU.
pub const MTU: usize = 1500;
/// Bytes per packet slot: the header and the largest frame, rounded up.
/// A receive buffer is a whole slot (§5.1.6.3.1 asks for at least
/// 12 + 1514 bytes without mergeable buffers and guest offloads).
pub const SLOT_SIZE: usize = 2048;
/// Slot memory is allocated a chunk at a time (one page each), so no large
/// physically contiguous allocation is needed.
const CHUNK_SIZE: usize = 4096;
const SLOTS_PER_CHUNK: usize = CHUNK_SIZE / SLOT_SIZE;
/// Queue entries used at most.
pub const MAX_RX_QUEUE: u16 = 128;
pub const MAX_TX_QUEUE: u16 = 64;

/// The fewest entries per queue the driver works with.
const MIN_QUEUE: u16 = 2;

/// MSI-X vectors for configuration changes and the two queues; `None`
/// means INTx, where [`NetDevice::ack_interrupt`] reads the ISR status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vectors {
    pub config: u16,
    pub rx: u16,
    pub tx: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeError {
    Transport(TransportError),
    /// DMA memory for a queue or the slots could not be allocated.
    NoMemory,
    /// A queue the device offers is too small to be useful.
    QueueTooSmall,
    Queue(AddError),
}

impl From<TransportError> for ProbeError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}

/// Why a frame was not queued for sending; nothing was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxError {
    /// Every transmit slot is in flight: try again after the next
    /// interrupt (EAGAIN).
    Full,
    /// Shorter than an Ethernet header or longer than MTU + headers.
    BadLength,
    /// The device broke the queue protocol and was reset.
    Broken,
}

/// Counters, as Linux keeps them per interface (`/proc/net/dev`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Received frames thrown away: the device reported a length shorter
    /// than the header and an Ethernet header, or longer than the buffer.
    pub rx_dropped: u64,
    /// Of those, the ones with a bad length (Linux's rx_length_errors).
    pub rx_length_errors: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Frames refused by `transmit` for their length.
    pub tx_dropped: u64,
    /// Used elements the device got wrong: ids not in flight, lengths on a
    /// transmit chain, a used index that jumped.
    pub device_errors: u64,
}

/// Packet slots of `SLOT_SIZE` bytes in chunks of driver-owned DMA memory.
struct Slots<M: DeviceMemory> {
    chunks: Vec<M>,
    count: u16,
}

impl<M: DeviceMemory> Slots<M> {
    fn new(count: u16, alloc: &mut impl FnMut(usize) -> Option<M>) -> Option<Self> {
        let chunks = (0..usize::from(count).div_ceil(SLOTS_PER_CHUNK))
            .map(|_| alloc(CHUNK_SIZE).filter(|m| m.len() >= CHUNK_SIZE))
            .collect::<Option<Vec<M>>>()?;
        Some(Self { chunks, count })
    }

    /// The chunk and the offset in it of slot `i`.
    fn at(&self, i: u16) -> Option<(&M, usize)> {
        if i >= self.count {
            return None;
        }
        let i = usize::from(i);
        let chunk = self.chunks.get(i / SLOTS_PER_CHUNK)?;
        Some((chunk, (i % SLOTS_PER_CHUNK) * SLOT_SIZE))
    }

    fn bus_addr(&self, i: u16) -> Option<u64> {
        self.at(i).map(|(m, off)| m.bus_addr() + off as u64)
    }
}

/// A virtio-net device with one queue pair.
pub struct NetDevice<R: Registers, M: DeviceMemory> {
    transport: Transport<R>,
    rx: SplitQueue<M, u16>,
    tx: SplitQueue<M, u16>,
    rx_notifier: Notifier,
    tx_notifier: Notifier,
    rx_slots: Slots<M>,
    tx_slots: Slots<M>,
    /// Transmit slots not in flight.
    tx_free: Vec<u16>,
    /// Receive slots not on the device (posting failed); retried on the
    /// next `receive`.
    rx_unposted: Vec<u16>,
    mac: [u8; 6],
    features: u64,
    intx: bool,
    broken: bool,
    stats: NetStats,
}

impl<R: Registers, M: DeviceMemory> NetDevice<R, M> {
    /// Initialises the device (§3.1.1, §5.1.5): features, the MAC address
    /// (`fallback_mac` when the device has none), both queues with memory
    /// from `alloc` (zeroed, DMA-coherent, at least the given number of
    /// bytes), every receive slot posted, vectors, DRIVER_OK. On error the
    /// device is marked FAILED (or, once receive buffers were posted, reset)
    /// and left alone.
    pub fn new(
        transport: Transport<R>,
        mut alloc: impl FnMut(usize) -> Option<M>,
        vectors: Option<Vectors>,
        fallback_mac: [u8; 6],
    ) -> Result<Self, ProbeError> {
        let features = transport.negotiate(WANTED_FEATURES)?;
        match Self::setup(transport, &mut alloc, vectors, features, fallback_mac) {
            Ok(d) => Ok(d),
            Err((e, t)) => {
                // Without the transport, the half-built driver was dropped,
                // which reset the device (buffers were already posted).
                if let Some(t) = t {
                    t.fail();
                }
                Err(e)
            }
        }
    }

    fn setup(
        transport: Transport<R>,
        alloc: &mut impl FnMut(usize) -> Option<M>,
        vectors: Option<Vectors>,
        features: u64,
        fallback_mac: [u8; 6],
    ) -> Result<Self, (ProbeError, Option<Transport<R>>)> {
        macro_rules! tryt {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => return Err((ProbeError::from(e), Some(transport))),
                }
            };
        }
        let mac = if features & feature::MAC != 0 {
            tryt!(transport.read_config(|r| {
                let mut mac = [0u8; 6];
                for (i, b) in mac.iter_mut().enumerate() {
                    *b = r.read_u8(config::MAC + i)?;
                }
                Ok(mac)
            }))
        } else {
            fallback_mac
        };
        let rx_size = tryt!(transport.max_queue_size(RX_QUEUE)).min(MAX_RX_QUEUE);
        let tx_size = tryt!(transport.max_queue_size(TX_QUEUE)).min(MAX_TX_QUEUE);
        if rx_size < MIN_QUEUE || tx_size < MIN_QUEUE {
            return Err((ProbeError::QueueTooSmall, Some(transport)));
        }
        let (Some(rx_layout), Some(tx_layout)) =
            (QueueLayout::new(rx_size), QueueLayout::new(tx_size))
        else {
            return Err((ProbeError::QueueTooSmall, Some(transport)));
        };
        let (Some(rx_ring), Some(tx_ring)) = (alloc(rx_layout.total), alloc(tx_layout.total))
        else {
            return Err((ProbeError::NoMemory, Some(transport)));
        };
        let (Some(rx_slots), Some(tx_slots)) =
            (Slots::new(rx_size, alloc), Slots::new(tx_size, alloc))
        else {
            return Err((ProbeError::NoMemory, Some(transport)));
        };
        let event_idx = features & virtio::feature::RING_EVENT_IDX != 0;
        let rx = match SplitQueue::new(rx_ring, rx_size, event_idx) {
            Ok(q) => q,
            Err(e) => return Err((ProbeError::Queue(e), Some(transport))),
        };
        let tx = match SplitQueue::new(tx_ring, tx_size, event_idx) {
            Ok(q) => q,
            Err(e) => return Err((ProbeError::Queue(e), Some(transport))),
        };
        let v = vectors.unwrap_or(Vectors {
            config: NO_VECTOR,
            rx: NO_VECTOR,
            tx: NO_VECTOR,
        });
        tryt!(transport.set_config_vector(v.config));
        let rx_notifier =
            tryt!(transport.setup_queue(RX_QUEUE, rx_size, rx.ring_addresses(), v.rx));
        let tx_notifier =
            tryt!(transport.setup_queue(TX_QUEUE, tx_size, tx.ring_addresses(), v.tx));
        let mut dev = Self {
            transport,
            rx,
            tx,
            rx_notifier,
            tx_notifier,
            rx_slots,
            tx_slots,
            tx_free: (0..tx_size).rev().collect(),
            rx_unposted: (0..rx_size).rev().collect(),
            mac,
            features,
            intx: vectors.is_none(),
            broken: false,
            stats: NetStats::default(),
        };
        // §5.1.5: fill the receive queue before DRIVER_OK (the device may
        // start delivering at once).
        dev.post_rx();
        if dev.rx.in_flight() == 0 {
            return Err((ProbeError::Queue(AddError::Invalid), None));
        }
        if let Err(e) = dev.transport.driver_ok() {
            return Err((ProbeError::from(e), None));
        }
        dev.kick_rx();
        Ok(dev)
    }

    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    pub fn mtu(&self) -> usize {
        MTU
    }

    pub fn features(&self) -> u64 {
        self.features
    }

    pub fn stats(&self) -> NetStats {
        self.stats
    }

    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Receive buffers on the device now.
    pub fn rx_posted(&self) -> usize {
        self.rx.in_flight()
    }

    /// Frames handed to the device and not yet reclaimed.
    pub fn tx_in_flight(&self) -> usize {
        self.tx.in_flight()
    }

    pub fn tx_capacity(&self) -> usize {
        usize::from(self.tx.size())
    }

    /// Whether the link is up: the status field with VIRTIO_NET_F_STATUS,
    /// else always (§5.1.4.2); never on a broken device.
    pub fn link_up(&self) -> bool {
        if self.broken {
            return false;
        }
        if self.features & feature::STATUS == 0 {
            return true;
        }
        self.transport
            .read_config(|r| r.read_u16(config::STATUS))
            .is_ok_and(|s| s & S_LINK_UP != 0)
    }

    /// Acknowledges an interrupt. With INTx it reads the ISR status (which
    /// deasserts the line) and returns it; with MSI-X there is nothing to
    /// acknowledge and it returns 0.
    pub fn ack_interrupt(&self) -> u8 {
        if self.intx {
            self.transport.read_isr().unwrap_or(0)
        } else {
            0
        }
    }

    /// Copies `frame` (an Ethernet frame without FCS) into a free transmit
    /// slot behind a zeroed header and hands it to the device.
    pub fn transmit(&mut self, frame: &[u8]) -> Result<(), TxError> {
        if self.broken {
            return Err(TxError::Broken);
        }
        if frame.len() < ETH_HLEN || frame.len() > MTU + ETH_HLEN + VLAN_HLEN {
            self.stats.tx_dropped += 1;
            return Err(TxError::BadLength);
        }
        if self.tx_free.is_empty() {
            self.reclaim_tx();
            if self.broken {
                return Err(TxError::Broken);
            }
        }
        let Some(slot) = self.tx_free.pop() else {
            return Err(TxError::Full);
        };
        let Some((mem, off)) = self.tx_slots.at(slot) else {
            return Err(TxError::Broken);
        };
        let written = mem
            .write_bytes(off, &[0u8; HDR_LEN])
            .and_then(|_| mem.write_bytes(off + HDR_LEN, frame));
        let addr = mem.bus_addr() + off as u64;
        if written.is_err() {
            self.tx_free.push(slot);
            return Err(TxError::Broken);
        }
        let buf = Buffer {
            addr,
            len: (HDR_LEN + frame.len()) as u32,
            device_writable: false,
        };
        if let Err((e, slot)) = self.tx.add(&[buf], slot) {
            self.tx_free.push(slot);
            if self.tx.is_broken() {
                self.break_device();
                return Err(TxError::Broken);
            }
            return Err(match e {
                AddError::Full => TxError::Full,
                _ => TxError::Broken,
            });
        }
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += frame.len() as u64;
        if self.tx.kick_needed() && self.transport.notify(self.tx_notifier).is_err() {
            self.stats.device_errors += 1;
        }
        Ok(())
    }

    /// Takes back the transmit slots the device has finished with;
    /// returns how many.
    pub fn reclaim_tx(&mut self) -> usize {
        let mut n = 0;
        while let Some(used) = self.tx.pop_used() {
            match used {
                Ok(u) => {
                    self.tx_free.push(u.token);
                    n += 1;
                }
                // A transmit chain has no writable bytes, so any length is
                // wrong (§2.7.8: the device writes 0); the frame was sent
                // all the same.
                Err(UsedError::BadLength { token, .. }) => {
                    self.stats.device_errors += 1;
                    self.tx_free.push(token);
                    n += 1;
                }
                Err(UsedError::UnknownId { .. }) => self.stats.device_errors += 1,
                Err(UsedError::IndexJump { .. } | UsedError::Memory(_)) => {
                    self.stats.device_errors += 1;
                    self.break_device();
                    break;
                }
            }
        }
        n
    }

    /// Whether a received frame (or a bad element) is waiting.
    pub fn rx_pending(&self) -> bool {
        self.rx.has_used()
    }

    /// Takes the next good received frame (without the virtio header), if
    /// one is waiting. Bad elements before it are counted and skipped;
    /// every buffer the device returns is posted again.
    pub fn receive(&mut self) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; SLOT_SIZE - HDR_LEN];
        let n = self.receive_into(&mut buf)?;
        buf.truncate(n);
        Some(buf)
    }

    /// As [`NetDevice::receive`], copying the frame into `out` (which must
    /// hold `SLOT_SIZE - HDR_LEN` bytes to take any frame; a longer frame
    /// is dropped and counted) and returning its length. No allocation: a
    /// driver in a domain copies straight into the caller's buffer.
    pub fn receive_into(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.broken {
            return None;
        }
        let mut frame = None;
        while frame.is_none() {
            let Some(used) = self.rx.pop_used() else {
                break;
            };
            match used {
                Ok(u) => {
                    let len = u.len as usize;
                    if len < HDR_LEN + ETH_HLEN {
                        self.drop_rx_length();
                    } else {
                        frame = self.copy_out(u.token, len, out);
                    }
                    self.rx_unposted.push(u.token);
                }
                Err(UsedError::BadLength { token, .. }) => {
                    self.drop_rx_length();
                    self.rx_unposted.push(token);
                }
                Err(UsedError::UnknownId { .. }) => self.stats.device_errors += 1,
                Err(UsedError::IndexJump { .. } | UsedError::Memory(_)) => {
                    self.stats.device_errors += 1;
                    self.break_device();
                    return None;
                }
            }
        }
        self.post_rx();
        self.kick_rx();
        frame
    }

    fn drop_rx_length(&mut self) {
        self.stats.rx_dropped += 1;
        self.stats.rx_length_errors += 1;
    }

    /// Copies the frame out of receive slot `slot`, whose used length `len`
    /// the queue checked against the buffer.
    fn copy_out(&mut self, slot: u16, len: usize, out: &mut [u8]) -> Option<usize> {
        let (mem, off) = self.rx_slots.at(slot)?;
        let n = len - HDR_LEN;
        let Some(frame) = out.get_mut(..n) else {
            self.drop_rx_length();
            return None;
        };
        if mem.read_bytes(off + HDR_LEN, frame).is_err() {
            self.stats.rx_dropped += 1;
            return None;
        }
        self.stats.rx_packets += 1;
        self.stats.rx_bytes += n as u64;
        Some(n)
    }

    /// Posts every receive slot that is not on the device.
    fn post_rx(&mut self) {
        while let Some(slot) = self.rx_unposted.pop() {
            let Some(addr) = self.rx_slots.bus_addr(slot) else {
                continue;
            };
            let buf = Buffer {
                addr,
                len: SLOT_SIZE as u32,
                device_writable: true,
            };
            if let Err((_, slot)) = self.rx.add(&[buf], slot) {
                self.rx_unposted.push(slot);
                if self.rx.is_broken() {
                    self.break_device();
                }
                break;
            }
        }
    }

    fn kick_rx(&mut self) {
        if self.rx.kick_needed() && self.transport.notify(self.rx_notifier).is_err() {
            self.stats.device_errors += 1;
        }
    }

    /// Resets the device, after which it touches no slot, and takes every
    /// slot back. The device stays down (no link) until it is probed again.
    fn break_device(&mut self) {
        if self.broken {
            return;
        }
        self.broken = true;
        if self.transport.reset().is_err() {
            // The device may still write the receive slots: keep them out
            // of use (they stay owned here, so no memory is reused).
            return;
        }
        self.rx_unposted.extend(self.rx.drain_in_flight());
        self.tx_free.extend(self.tx.drain_in_flight());
    }
}

impl<R: Registers, M: DeviceMemory> Drop for NetDevice<R, M> {
    /// Resets the device before the slot memory goes back to the allocator,
    /// so it cannot write a received frame into memory reused for
    /// something else. If the reset fails, the slot memory is leaked
    /// instead of freed.
    fn drop(&mut self) {
        if self.transport.reset().is_err() {
            core::mem::forget(core::mem::take(&mut self.rx_slots.chunks));
            core::mem::forget(core::mem::take(&mut self.tx_slots.chunks));
        }
    }
}

#[cfg(test)]
mod tests;
