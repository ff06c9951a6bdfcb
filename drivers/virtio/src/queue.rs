//! Split virtqueues (virtio 1.x §2.7).
//!
//! Ownership: a [`SplitQueue`] owns its ring memory and a private copy of
//! everything it needs to free a chain (the `next` links and each chain's
//! length), so a device that scribbles over the descriptor table cannot make
//! the driver free the wrong descriptors. Each chain in flight carries a
//! token `T` of the caller (its request); the token comes back with the used
//! element, in whatever order the device completes chains.

use alloc::vec::Vec;

use crate::{AccessError, DeviceMemory};

/// `VIRTQ_DESC_F_NEXT`: the chain continues in `next`.
const DESC_F_NEXT: u16 = 1;
/// `VIRTQ_DESC_F_WRITE`: the device writes this buffer.
const DESC_F_WRITE: u16 = 2;
/// `VIRTQ_USED_F_NO_NOTIFY` in the used ring's flags.
const USED_F_NO_NOTIFY: u16 = 1;
/// Size of one descriptor: addr u64, len u32, flags u16, next u16.
const DESC_SIZE: usize = 16;
/// The largest queue size the spec allows.
pub const MAX_QUEUE_SIZE: u16 = 32768;

/// Where the three parts of a split queue of `size` entries lie in its
/// memory (§2.7: descriptor table aligned to 16, available ring to 2, used
/// ring to 4; all three are placed in one allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLayout {
    pub size: u16,
    pub desc: usize,
    pub avail: usize,
    pub used: usize,
    /// Bytes needed, from offset 0 to the end of the used ring.
    pub total: usize,
}

impl QueueLayout {
    /// `None` unless `size` is a power of two in 1..=32768.
    pub fn new(size: u16) -> Option<Self> {
        if size == 0 || !size.is_power_of_two() || size > MAX_QUEUE_SIZE {
            return None;
        }
        let n = size as usize;
        // avail: flags, idx, ring[n], used_event; used: flags, idx,
        // ring[n] of {id u32, len u32}, avail_event.
        let avail = DESC_SIZE * n;
        let used = (avail + 6 + 2 * n).next_multiple_of(4);
        Some(Self {
            size,
            desc: 0,
            avail,
            used,
            total: used + 6 + 8 * n,
        })
    }

    fn avail_ring(&self, slot: u16) -> usize {
        self.avail + 4 + 2 * slot as usize
    }

    fn used_event(&self) -> usize {
        self.avail + 4 + 2 * self.size as usize
    }

    fn used_ring(&self, slot: u16) -> usize {
        self.used + 4 + 8 * slot as usize
    }

    fn avail_event(&self) -> usize {
        self.used + 4 + 8 * self.size as usize
    }
}

/// One buffer of a chain, as the device sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub addr: u64,
    pub len: u32,
    /// The device writes it (device-writable buffers follow every readable one).
    pub device_writable: bool,
}

/// Why a chain was not added; the queue is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// No buffers, a zero-length buffer, a readable buffer after a writable
    /// one, or more bytes than a chain may hold (2^32).
    Invalid,
    /// More buffers than free descriptors right now (`Full`) ...
    Full,
    /// ... or than the whole queue has: it can never fit.
    TooLong,
    /// The queue saw a broken device and takes nothing more.
    Broken,
    Memory(AccessError),
}

/// A chain the device has finished with.
#[derive(Debug, PartialEq, Eq)]
pub struct Used<T> {
    pub head: u16,
    /// Bytes the device says it wrote into the chain's writable buffers.
    pub len: u32,
    pub token: T,
}

/// A used element the driver refuses. After `UnknownId` and `BadLength` the
/// queue goes on; after `IndexJump` and `Memory` it is broken (the device
/// must be reset) and every later call reports `Broken` or `None`.
#[derive(Debug, PartialEq, Eq)]
pub enum UsedError<T> {
    /// The id is not the head of a chain in flight (out of range, or already
    /// completed). The element is skipped.
    UnknownId {
        id: u32,
    },
    /// The length exceeds the chain's writable bytes. The chain is freed and
    /// its token handed back so the caller can fail that request only.
    BadLength {
        head: u16,
        len: u32,
        token: T,
    },
    /// The used index moved by more than the queue size.
    IndexJump {
        used_idx: u16,
        last_seen: u16,
    },
    Memory(AccessError),
}

struct InFlight<T> {
    token: T,
    descriptors: u16,
    writable_len: u64,
}

/// A split virtqueue: the driver side of its three rings.
pub struct SplitQueue<M, T> {
    mem: M,
    layout: QueueLayout,
    /// Private copy of each descriptor's `next` link (free list and chains).
    next: Vec<u16>,
    free_head: u16,
    num_free: u16,
    /// Indexed by head descriptor.
    in_flight: Vec<Option<InFlight<T>>>,
    /// Our copy of `avail.idx` (the device only reads it).
    avail_idx: u16,
    /// `avail.idx` when the device was last notified.
    notified_idx: u16,
    /// Next used-ring slot to look at.
    last_used: u16,
    event_idx: bool,
    broken: bool,
}

impl<M: DeviceMemory, T> SplitQueue<M, T> {
    /// A queue of `size` entries over `mem` (zeroed by the caller: both
    /// rings start with index 0). `event_idx` says VIRTIO_F_RING_EVENT_IDX
    /// was negotiated.
    pub fn new(mem: M, size: u16, event_idx: bool) -> Result<Self, AddError> {
        let layout = QueueLayout::new(size).ok_or(AddError::Invalid)?;
        if mem.len() < layout.total {
            return Err(AddError::Invalid);
        }
        let queue = Self {
            mem,
            layout,
            next: (1..=size).collect(),
            free_head: 0,
            num_free: size,
            in_flight: (0..size).map(|_| None).collect(),
            avail_idx: 0,
            notified_idx: 0,
            last_used: 0,
            event_idx,
            broken: false,
        };
        // Interrupts stay wanted: used_event = 0 asks for one on the first
        // used element.
        queue
            .mem
            .write_u16(layout.avail, 0)
            .map_err(AddError::Memory)?;
        Ok(queue)
    }

    pub fn layout(&self) -> QueueLayout {
        self.layout
    }

    /// Bus addresses of the descriptor table, available and used rings, for
    /// the transport's queue_desc, queue_driver and queue_device.
    pub fn ring_addresses(&self) -> (u64, u64, u64) {
        let base = self.mem.bus_addr();
        (
            base + self.layout.desc as u64,
            base + self.layout.avail as u64,
            base + self.layout.used as u64,
        )
    }

    pub fn size(&self) -> u16 {
        self.layout.size
    }

    pub fn num_free(&self) -> u16 {
        self.num_free
    }

    pub fn in_flight(&self) -> usize {
        (self.layout.size - self.num_free) as usize
    }

    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Places `buffers` as one chain and makes it available to the device;
    /// returns its head. Call [`kick_needed`](Self::kick_needed) afterwards
    /// (once for a batch) to learn whether to notify the device. On error
    /// the token comes back and the rings are unchanged (unless the error is
    /// `Memory`, which breaks the queue).
    pub fn add(&mut self, buffers: &[Buffer], token: T) -> Result<u16, (AddError, T)> {
        if let Err(e) = self.check_chain(buffers) {
            return Err((e, token));
        }
        match self.place(buffers) {
            Ok(head) => {
                let count = buffers.len() as u16;
                let writable_len = buffers
                    .iter()
                    .filter(|b| b.device_writable)
                    .map(|b| u64::from(b.len))
                    .sum();
                self.in_flight[head as usize] = Some(InFlight {
                    token,
                    descriptors: count,
                    writable_len,
                });
                Ok(head)
            }
            Err(e) => {
                self.broken = true;
                Err((AddError::Memory(e), token))
            }
        }
    }

    fn check_chain(&self, buffers: &[Buffer]) -> Result<(), AddError> {
        if self.broken {
            return Err(AddError::Broken);
        }
        let count = u16::try_from(buffers.len()).map_err(|_| AddError::TooLong)?;
        if count > self.layout.size {
            return Err(AddError::TooLong);
        }
        if count == 0 {
            return Err(AddError::Invalid);
        }
        let mut total: u64 = 0;
        let mut seen_writable = false;
        for b in buffers {
            if b.len == 0 || (seen_writable && !b.device_writable) {
                return Err(AddError::Invalid);
            }
            seen_writable |= b.device_writable;
            total += u64::from(b.len);
        }
        if total > u64::from(u32::MAX) + 1 {
            return Err(AddError::Invalid);
        }
        if count > self.num_free {
            return Err(AddError::Full);
        }
        Ok(())
    }

    /// Writes the descriptors of a checked chain and publishes its head.
    fn place(&mut self, buffers: &[Buffer]) -> Result<u16, AccessError> {
        let head = self.free_head;
        let mut index = head;
        for (i, b) in buffers.iter().enumerate() {
            let last = i + 1 == buffers.len();
            let next = self.next[index as usize];
            let mut flags = if b.device_writable { DESC_F_WRITE } else { 0 };
            if !last {
                flags |= DESC_F_NEXT;
            }
            let off = self.layout.desc + DESC_SIZE * index as usize;
            self.mem.write_u64(off, b.addr)?;
            self.mem.write_u32(off + 8, b.len)?;
            self.mem.write_u16(off + 12, flags)?;
            self.mem.write_u16(off + 14, if last { 0 } else { next })?;
            if last {
                self.free_head = next;
            } else {
                index = next;
            }
        }
        self.num_free -= buffers.len() as u16;

        let slot = self.avail_idx & (self.layout.size - 1);
        self.mem.write_u16(self.layout.avail_ring(slot), head)?;
        // §2.7.13.3.1: the ring entry before the index that publishes it.
        self.mem.fence();
        self.avail_idx = self.avail_idx.wrapping_add(1);
        self.mem.write_u16(self.layout.avail + 2, self.avail_idx)?;
        Ok(head)
    }

    /// Whether the device wants a notification for the chains added since
    /// the last one (§2.7.10: the avail_event of VIRTIO_F_RING_EVENT_IDX, or
    /// else the used ring's NO_NOTIFY flag). Counts as notified.
    pub fn kick_needed(&mut self) -> bool {
        let old = self.notified_idx;
        let new = self.avail_idx;
        if old == new || self.broken {
            return false;
        }
        self.notified_idx = new;
        // §2.7.13.4: the index must be visible before reading the device's
        // suppression state.
        self.mem.fence();
        if self.event_idx {
            match self.mem.read_u16(self.layout.avail_event()) {
                // vring_need_event: notify if `event` lies in [old, new).
                Ok(event) => new.wrapping_sub(event).wrapping_sub(1) < new.wrapping_sub(old),
                Err(_) => true,
            }
        } else {
            match self.mem.read_u16(self.layout.used) {
                Ok(flags) => flags & USED_F_NO_NOTIFY == 0,
                Err(_) => true,
            }
        }
    }

    /// Whether the used ring holds an element not yet popped.
    pub fn has_used(&self) -> bool {
        !self.broken
            && self
                .mem
                .read_u16(self.layout.used + 2)
                .is_ok_and(|idx| idx != self.last_used)
    }

    /// Takes the next used element, if any. Call it until `None` on each
    /// interrupt: the device may complete chains in any order.
    pub fn pop_used(&mut self) -> Option<Result<Used<T>, UsedError<T>>> {
        if self.broken {
            return None;
        }
        let used_idx = match self.mem.read_u16(self.layout.used + 2) {
            Ok(idx) => idx,
            Err(e) => return Some(Err(self.break_with(UsedError::Memory(e)))),
        };
        if used_idx == self.last_used {
            return None;
        }
        if used_idx.wrapping_sub(self.last_used) > self.layout.size {
            let last_seen = self.last_used;
            return Some(Err(self.break_with(UsedError::IndexJump {
                used_idx,
                last_seen,
            })));
        }
        // §2.7.14: read the index before the element it covers.
        self.mem.fence();
        let slot = self.last_used & (self.layout.size - 1);
        let off = self.layout.used_ring(slot);
        let elem = self
            .mem
            .read_u32(off)
            .and_then(|id| Ok((id, self.mem.read_u32(off + 4)?)));
        let (id, len) = match elem {
            Ok(e) => e,
            Err(e) => return Some(Err(self.break_with(UsedError::Memory(e)))),
        };
        self.last_used = self.last_used.wrapping_add(1);
        if self.event_idx {
            // Ask for an interrupt at the next used element. A failed write
            // only costs an interrupt, never correctness.
            let _ = self.mem.write_u16(self.layout.used_event(), self.last_used);
            // §2.7.10: the device must see the new used_event before the
            // next read of the used index, or an element it adds in between
            // could go without an interrupt and unseen.
            self.mem.fence();
        }
        let Some(head) = u16::try_from(id).ok().filter(|&h| h < self.layout.size) else {
            return Some(Err(UsedError::UnknownId { id }));
        };
        let Some(chain) = self.in_flight[head as usize].take() else {
            return Some(Err(UsedError::UnknownId { id }));
        };
        self.free_chain(head, chain.descriptors);
        if u64::from(len) > chain.writable_len {
            return Some(Err(UsedError::BadLength {
                head,
                len,
                token: chain.token,
            }));
        }
        Some(Ok(Used {
            head,
            len,
            token: chain.token,
        }))
    }

    /// Returns a chain's descriptors to the free list, following the private
    /// links (never the device-visible table).
    fn free_chain(&mut self, head: u16, descriptors: u16) {
        let mut tail = head;
        for _ in 1..descriptors {
            tail = self.next[tail as usize];
        }
        self.next[tail as usize] = self.free_head;
        self.free_head = head;
        self.num_free += descriptors;
    }

    fn break_with(&mut self, e: UsedError<T>) -> UsedError<T> {
        self.broken = true;
        e
    }

    /// Takes back every token still in flight (after the device was reset,
    /// so it no longer touches their buffers), and makes the queue empty.
    pub fn drain_in_flight(&mut self) -> Vec<T> {
        let tokens = self
            .in_flight
            .iter_mut()
            .filter_map(|c| c.take().map(|c| c.token))
            .collect();
        self.next = (1..=self.layout.size).collect();
        self.free_head = 0;
        self.num_free = self.layout.size;
        tokens
    }
}

#[cfg(test)]
mod tests;
