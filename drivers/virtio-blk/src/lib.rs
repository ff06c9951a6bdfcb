//! virtio-blk (virtio 1.x §5.2) in safe Rust, behind a message-style
//! interface: a [`Request`] is an owned value carrying its DMA buffers in,
//! a [`Completion`] carries them back out with the status.
//!
//! Ownership: [`BlkDevice`] owns the transport, the request queue and a page
//! of request headers and status bytes; all driver state lives here and it
//! takes no lock. Its owner serialises calls (the kernel adapter with one
//! spin lock, later an isolated domain's proxy). A request's buffers stay in
//! the driver from `submit` until its completion, so they cannot be freed
//! while the device may still write them.

#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

use alloc::vec::Vec;

use virtio::transport::{NO_VECTOR, Notifier, TransportError};
use virtio::{
    AddError, Buffer, DeviceMemory, QueueLayout, Registers, SplitQueue, Transport, UsedError,
};

/// Bytes per sector in requests and in `capacity`, whatever the block size (§5.2.6).
pub const SECTOR_SIZE: usize = 512;

/// virtio-blk feature bits (§5.2.3).
pub mod feature {
    pub const SIZE_MAX: u64 = 1 << 1;
    pub const SEG_MAX: u64 = 1 << 2;
    pub const RO: u64 = 1 << 5;
    pub const BLK_SIZE: u64 = 1 << 6;
    pub const FLUSH: u64 = 1 << 9;
}

/// The features this driver asks for.
pub const WANTED_FEATURES: u64 = feature::SIZE_MAX
    | feature::SEG_MAX
    | feature::RO
    | feature::BLK_SIZE
    | feature::FLUSH
    | virtio::feature::RING_EVENT_IDX;

/// Device configuration offsets (§5.2.4).
mod config {
    pub const CAPACITY: usize = 0;
    pub const SIZE_MAX: usize = 8;
    pub const SEG_MAX: usize = 12;
    pub const BLK_SIZE: usize = 20;
}

/// Request types and status values (§5.2.6).
const T_IN: u32 = 0;
const T_OUT: u32 = 1;
const T_FLUSH: u32 = 4;
const S_OK: u8 = 0;
const S_IOERR: u8 = 1;
const S_UNSUPP: u8 = 2;
/// Written into the status byte before submission: a device that completes
/// without writing the status is caught.
const S_UNWRITTEN: u8 = 0xff;
/// Bytes per header slot: 16-byte header, status byte at 16, padding.
const SLOT_SIZE: usize = 32;
const HEADER_LEN: u32 = 16;
/// Queue entries used at most (memory for the ring and headers: 2 pages).
const MAX_QUEUE_SIZE: u16 = 128;

/// A buffer the device reads or writes by bus address. Its owner keeps the
/// memory alive and mapped for as long as the value exists.
pub trait DmaBuffer {
    fn bus_addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Makes CPU writes visible to the device (before a write request).
    fn sync_for_device(&self);
    /// Makes device writes visible to the CPU (after a read request).
    fn sync_for_cpu(&self);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
}

/// One block request: `buffers` are read into or written from, back to
/// back, starting at `sector` (512-byte units). `id` is the caller's.
pub struct Request<B> {
    pub id: u64,
    pub op: Op,
    pub sector: u64,
    pub buffers: Vec<B>,
}

/// The end of a request: its id, the outcome and the buffers handed back.
pub struct Completion<B> {
    pub id: u64,
    pub status: Result<(), BlkError>,
    pub buffers: Vec<B>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlkError {
    /// The device reported an I/O error, or misbehaved on this request
    /// (bad length, status not written): EIO.
    Io,
    /// The device does not support the request type (VIRTIO_BLK_S_UNSUPP).
    Unsupported,
    /// A write to a read-only device.
    ReadOnly,
    /// Empty, misaligned, too many or too large buffers, or past the end.
    Invalid,
    /// No room in the queue now: try again after a completion (EAGAIN).
    Busy,
    /// The device broke the queue protocol and was reset; every request in
    /// flight failed with this. A restart is the next issue's business.
    DeviceBroken,
}

/// A request `submit` did not queue, handed back whole.
pub struct Rejected<B> {
    pub error: BlkError,
    pub request: Request<B>,
}

/// What `submit` did with a request.
pub enum Submitted<B> {
    /// On the device; its completion comes from [`BlkDevice::poll`].
    Queued,
    /// Done without the device (a flush on a write-through device).
    Completed(Completion<B>),
}

/// Device facts read once at probe time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskInfo {
    pub capacity_sectors: u64,
    /// Logical block size (BLK_SIZE, else 512).
    pub block_size: u32,
    pub read_only: bool,
    /// The device has a write cache that FLUSH empties.
    pub flush: bool,
    /// Most data buffers per request.
    pub seg_max: u32,
    /// Largest data buffer in bytes.
    pub size_max: u32,
    pub features: u64,
}

/// MSI-X vectors for configuration changes and the request queue; `None`
/// means INTx, where [`BlkDevice::poll`] reads the ISR status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vectors {
    pub config: u16,
    pub queue: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeError {
    Transport(TransportError),
    /// DMA memory for the queue could not be allocated.
    NoMemory,
    /// Queue setup refused by the queue logic (should not happen).
    Queue(AddError),
}

impl From<TransportError> for ProbeError {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}

struct InFlight<B> {
    request: Request<B>,
    slot: u16,
}

/// A virtio-blk device with one request queue.
pub struct BlkDevice<R, M, B> {
    transport: Transport<R>,
    queue: SplitQueue<M, InFlight<B>>,
    notifier: Notifier,
    headers: M,
    free_slots: Vec<u16>,
    info: DiskInfo,
    intx: bool,
    broken: bool,
    /// Used elements the device got wrong (bad id, bad length).
    device_errors: u64,
}

impl<R: Registers, M: DeviceMemory, B: DmaBuffer> BlkDevice<R, M, B> {
    /// Initialises the device (§3.1.1): features, configuration, queue 0
    /// with memory from `alloc` (zeroed, DMA-coherent, at least the given
    /// number of bytes), vectors, DRIVER_OK. On error the device is marked
    /// FAILED and left alone.
    pub fn new(
        transport: Transport<R>,
        mut alloc: impl FnMut(usize) -> Option<M>,
        vectors: Option<Vectors>,
    ) -> Result<Self, ProbeError> {
        let features = transport.negotiate(WANTED_FEATURES)?;
        let r = Self::setup(transport, &mut alloc, vectors, features);
        if let Err((e, t)) = r {
            t.fail();
            return Err(e);
        }
        r.map_err(|(e, _)| e)
    }

    fn setup(
        transport: Transport<R>,
        alloc: &mut impl FnMut(usize) -> Option<M>,
        vectors: Option<Vectors>,
        features: u64,
    ) -> Result<Self, (ProbeError, Transport<R>)> {
        macro_rules! tryt {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => return Err((ProbeError::from(e), transport)),
                }
            };
        }
        let has = |f: u64| features & f != 0;
        let info = tryt!(transport.read_config(|r| {
            let capacity = u64::from(r.read_u32(config::CAPACITY)?)
                | (u64::from(r.read_u32(config::CAPACITY + 4)?) << 32);
            let size_max = if has(feature::SIZE_MAX) {
                r.read_u32(config::SIZE_MAX)?
            } else {
                0
            };
            let seg_max = if has(feature::SEG_MAX) {
                r.read_u32(config::SEG_MAX)?
            } else {
                0
            };
            let blk_size = if has(feature::BLK_SIZE) {
                r.read_u32(config::BLK_SIZE)?
            } else {
                0
            };
            Ok((capacity, size_max, seg_max, blk_size))
        }));
        let (capacity_sectors, size_max, seg_max, blk_size) = info;
        let size = tryt!(transport.max_queue_size(0)).min(MAX_QUEUE_SIZE);
        // A block size that is not a power of two in 512..=64 KiB is not one
        // Linux would use either; such a device is driven with 512.
        let block_size = if blk_size.is_power_of_two() && (512..=65536).contains(&blk_size) {
            blk_size
        } else {
            512
        };
        let info = DiskInfo {
            capacity_sectors,
            block_size,
            read_only: has(feature::RO),
            flush: has(feature::FLUSH),
            // Room for the header and status descriptors.
            seg_max: if seg_max == 0 {
                u32::from(size) - 2
            } else {
                seg_max.min(u32::from(size) - 2)
            },
            size_max: if size_max == 0 { u32::MAX } else { size_max },
            features,
        };
        if size < 4 {
            return Err((ProbeError::Transport(TransportError::NoQueue), transport));
        }
        let Some(layout) = QueueLayout::new(size) else {
            return Err((ProbeError::Transport(TransportError::NoQueue), transport));
        };
        let (Some(ring), Some(headers)) =
            (alloc(layout.total), alloc(usize::from(size) * SLOT_SIZE))
        else {
            return Err((ProbeError::NoMemory, transport));
        };
        let queue = match SplitQueue::new(ring, size, has(virtio::feature::RING_EVENT_IDX)) {
            Ok(q) => q,
            Err(e) => return Err((ProbeError::Queue(e), transport)),
        };
        let (config_vector, queue_vector) =
            vectors.map_or((NO_VECTOR, NO_VECTOR), |v| (v.config, v.queue));
        tryt!(transport.set_config_vector(config_vector));
        let notifier = tryt!(transport.setup_queue(0, size, queue.ring_addresses(), queue_vector));
        tryt!(transport.driver_ok());
        Ok(Self {
            transport,
            queue,
            notifier,
            headers,
            free_slots: (0..size).rev().collect(),
            info,
            intx: vectors.is_none(),
            broken: false,
            device_errors: 0,
        })
    }

    pub fn info(&self) -> DiskInfo {
        self.info
    }

    /// Descriptors in use.
    pub fn in_flight(&self) -> usize {
        self.queue.in_flight()
    }

    /// Requests on the device now.
    pub fn in_flight_requests(&self) -> usize {
        usize::from(self.queue.size()) - self.free_slots.len()
    }

    /// Most requests that can be in flight at once (each needs a header
    /// slot and at least two descriptors): ids below this suffice.
    pub fn max_requests(&self) -> usize {
        usize::from(self.queue.size())
    }

    pub fn device_errors(&self) -> u64 {
        self.device_errors
    }

    pub fn is_broken(&self) -> bool {
        self.broken
    }

    fn check(&self, req: &Request<B>) -> Result<(), BlkError> {
        if self.broken {
            return Err(BlkError::DeviceBroken);
        }
        match req.op {
            Op::Flush => {
                return if req.buffers.is_empty() {
                    Ok(())
                } else {
                    Err(BlkError::Invalid)
                };
            }
            Op::Write if self.info.read_only => return Err(BlkError::ReadOnly),
            _ => {}
        }
        if req.buffers.is_empty() || req.buffers.len() > self.info.seg_max as usize {
            return Err(BlkError::Invalid);
        }
        let mut bytes: u64 = 0;
        for b in &req.buffers {
            let len = b.len();
            if len == 0 || len % SECTOR_SIZE != 0 || len > self.info.size_max as usize {
                return Err(BlkError::Invalid);
            }
            bytes += len as u64;
        }
        let end = req
            .sector
            .checked_add(bytes / SECTOR_SIZE as u64)
            .ok_or(BlkError::Invalid)?;
        if end > self.info.capacity_sectors {
            return Err(BlkError::Invalid);
        }
        Ok(())
    }

    /// Queues `req` as one descriptor chain (header, data buffers, status
    /// byte) and notifies the device if it wants it. A request that is not
    /// queued comes back in `Rejected` untouched.
    pub fn submit(&mut self, req: Request<B>) -> Result<Submitted<B>, Rejected<B>> {
        if let Err(error) = self.check(&req) {
            return Err(Rejected {
                error,
                request: req,
            });
        }
        if req.op == Op::Flush && !self.info.flush {
            // Without VIRTIO_BLK_F_FLUSH the device writes through (§5.2.6.2).
            return Ok(Submitted::Completed(Completion {
                id: req.id,
                status: Ok(()),
                buffers: req.buffers,
            }));
        }
        if usize::from(self.queue.num_free()) < req.buffers.len() + 2 {
            return Err(Rejected {
                error: BlkError::Busy,
                request: req,
            });
        }
        let Some(slot) = self.free_slots.pop() else {
            return Err(Rejected {
                error: BlkError::Busy,
                request: req,
            });
        };
        let base = usize::from(slot) * SLOT_SIZE;
        let kind = match req.op {
            Op::Read => T_IN,
            Op::Write => T_OUT,
            Op::Flush => T_FLUSH,
        };
        let mut header = [0u8; 16];
        header[0..4].copy_from_slice(&kind.to_le_bytes());
        let sector = if req.op == Op::Flush { 0 } else { req.sector };
        header[8..16].copy_from_slice(&sector.to_le_bytes());
        let written = self
            .headers
            .write_bytes(base, &header)
            .and_then(|_| self.headers.write_bytes(base + 16, &[S_UNWRITTEN]));
        if written.is_err() {
            self.free_slots.push(slot);
            return Err(Rejected {
                error: BlkError::Io,
                request: req,
            });
        }

        let hdr_addr = self.headers.bus_addr() + base as u64;
        let mut chain = Vec::with_capacity(req.buffers.len() + 2);
        chain.push(Buffer {
            addr: hdr_addr,
            len: HEADER_LEN,
            device_writable: false,
        });
        for b in &req.buffers {
            if req.op == Op::Write {
                b.sync_for_device();
            }
            // len was checked against size_max (<= u32::MAX) in `check`.
            let len = u32::try_from(b.len()).unwrap_or(u32::MAX);
            chain.push(Buffer {
                addr: b.bus_addr(),
                len,
                device_writable: req.op == Op::Read,
            });
        }
        chain.push(Buffer {
            addr: hdr_addr + 16,
            len: 1,
            device_writable: true,
        });

        if let Err((e, back)) = self.queue.add(&chain, InFlight { request: req, slot }) {
            self.free_slots.push(slot);
            let error = match e {
                AddError::Full => BlkError::Busy,
                AddError::Broken | AddError::Memory(_) => BlkError::DeviceBroken,
                AddError::Invalid | AddError::TooLong => BlkError::Invalid,
            };
            if self.queue.is_broken() {
                self.broken = true;
            }
            return Err(Rejected {
                error,
                request: back.request,
            });
        }
        if self.queue.kick_needed() && self.transport.notify(self.notifier).is_err() {
            self.device_errors += 1;
        }
        Ok(Submitted::Queued)
    }

    /// Collects the requests the device has finished, in the order it
    /// finished them (call on each queue interrupt). A request the device
    /// got wrong completes with `Io`; a device that breaks the queue
    /// protocol is reset and everything in flight completes with
    /// `DeviceBroken`.
    pub fn poll(&mut self) -> Vec<Completion<B>> {
        let mut done = Vec::new();
        if self.intx {
            // Reading the ISR status deasserts the INTx line (§4.1.4.5).
            let _ = self.transport.read_isr();
        }
        while let Some(used) = self.queue.pop_used() {
            match used {
                Ok(u) => {
                    let status = self.status_of(&u.token, u.len);
                    done.push(self.finish(u.token, status));
                }
                Err(UsedError::BadLength { token, .. }) => {
                    self.device_errors += 1;
                    done.push(self.finish(token, Err(BlkError::Io)));
                }
                Err(UsedError::UnknownId { .. }) => self.device_errors += 1,
                Err(UsedError::IndexJump { .. } | UsedError::Memory(_)) => {
                    self.device_errors += 1;
                    self.break_device(&mut done);
                    break;
                }
            }
        }
        done
    }

    /// The outcome of a chain the device returned with `len` bytes written.
    fn status_of(&self, f: &InFlight<B>, len: u32) -> Result<(), BlkError> {
        let mut status = [S_UNWRITTEN];
        if self
            .headers
            .read_bytes(usize::from(f.slot) * SLOT_SIZE + 16, &mut status)
            .is_err()
        {
            return Err(BlkError::Io);
        }
        // The status byte is the last one written: a device claiming fewer
        // bytes than the status (0) did not finish the request.
        if len == 0 {
            return Err(BlkError::Io);
        }
        match status[0] {
            S_OK => Ok(()),
            S_UNSUPP => Err(BlkError::Unsupported),
            S_IOERR | S_UNWRITTEN => Err(BlkError::Io),
            _ => Err(BlkError::Io),
        }
    }

    fn finish(&mut self, f: InFlight<B>, status: Result<(), BlkError>) -> Completion<B> {
        self.free_slots.push(f.slot);
        if f.request.op == Op::Read {
            for b in &f.request.buffers {
                b.sync_for_cpu();
            }
        }
        Completion {
            id: f.request.id,
            status,
            buffers: f.request.buffers,
        }
    }

    /// Resets the device (after which it touches no queue memory) and fails
    /// every request in flight.
    fn break_device(&mut self, done: &mut Vec<Completion<B>>) {
        self.broken = true;
        if self.transport.reset().is_err() {
            // Nothing more can be done from here; the buffers stay with the
            // driver so the device cannot write into reused memory.
            return;
        }
        for f in self.queue.drain_in_flight() {
            done.push(self.finish(f, Err(BlkError::DeviceBroken)));
        }
    }
}

#[cfg(test)]
mod tests;
