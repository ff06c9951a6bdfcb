//! DMA buffers: memory a device reads and writes by bus address.
//!
//! Every buffer is made of *untyped* frames (invariant 6): no Rust object
//! ever lives in memory a device can write, so whatever a device does to a
//! buffer can only change bytes. Clients never get a pointer into a buffer,
//! only its bus address (for the device) and copies in and out (for the
//! CPU): `read_bytes`/`write_bytes` and `read_val`/`write_val` of [`Pod`]
//! types, all volatile (the device may change the memory at any time).
//!
//! There is no IOMMU yet: the bus address is the physical address, and a
//! device can reach all memory. Invariant 3 (a device touches only its DMA
//! buffers) arrives with the IOMMU; until then the driver is trusted to
//! program only addresses it got from these types.
//!
//! * [`DmaCoherent`]: device-shared memory (virtqueues, descriptors); CPU
//!   and device access it concurrently; writes are followed by a full
//!   fence, reads preceded by one, so the order of accesses is the order
//!   the device sees (x86 DMA is cache-coherent).
//! * [`DmaStream`]: a buffer handed over for one transfer in one direction;
//!   `sync_for_device` before starting the device, `sync_for_cpu` after it
//!   completed. It can wrap an existing page ([`DmaStream::map`]), so a
//!   page-cache page goes to the device without a copy; the stream holds a
//!   reference, so the page cannot be freed while the device uses it.

use alloc::vec::Vec;
use core::sync::atomic::{Ordering, fence};

use crate::mm::{PAGE_SIZE, Paddr, UFrame, USegment, paddr_to_ptr};
use crate::{Error, Pod};

/// Which way the data of a [`DmaStream`] flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaDirection {
    /// The device reads the buffer (a disk write).
    ToDevice,
    /// The device writes the buffer (a disk read).
    FromDevice,
    Bidirectional,
}

/// Where a buffer's bytes are: one contiguous run of owned untyped pages.
#[derive(Debug)]
enum Backing {
    Segment(USegment),
    Frame(UFrame),
}

impl Backing {
    fn paddr(&self) -> Paddr {
        match self {
            Backing::Segment(s) => s.paddr(),
            Backing::Frame(f) => f.paddr(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Backing::Segment(s) => s.size(),
            Backing::Frame(_) => PAGE_SIZE,
        }
    }

    fn check(&self, offset: usize, len: usize) -> Result<Paddr, Error> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len() => Ok(self.paddr() + offset),
            _ => Err(Error::InvalidArgs),
        }
    }

    fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), Error> {
        let pa = self.check(offset, buf.len())?;
        fence(Ordering::SeqCst);
        for (i, b) in buf.iter_mut().enumerate() {
            // SAFETY: `pa + i` lies inside the owned untyped pages of this
            // buffer (checked above), RAM reachable through the direct map;
            // untyped pages hold only bytes, so a concurrent device write
            // can only change the byte read.
            *b = unsafe { core::ptr::read_volatile(paddr_to_ptr::<u8>(pa + i)) };
        }
        Ok(())
    }

    fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), Error> {
        let pa = self.check(offset, buf.len())?;
        for (i, b) in buf.iter().enumerate() {
            // SAFETY: see `read_bytes`.
            unsafe { core::ptr::write_volatile(paddr_to_ptr::<u8>(pa + i), *b) };
        }
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn read_val<T: Pod>(&self, offset: usize) -> Result<T, Error> {
        let size = core::mem::size_of::<T>();
        let pa = self.check(offset, size)?;
        if pa.is_multiple_of(core::mem::align_of::<T>()) {
            fence(Ordering::SeqCst);
            // SAFETY: `pa..pa + size` is inside this buffer's owned untyped
            // pages (checked) and aligned for T (checked); T is Pod, so any
            // bytes the device left there are a valid T; the read is a
            // single volatile access for primitive T (a u16 ring index is
            // read whole).
            return Ok(unsafe { core::ptr::read_volatile(paddr_to_ptr::<T>(pa)) });
        }
        let mut v = T::new_zeroed();
        self.read_bytes(offset, v.as_bytes_mut())?;
        Ok(v)
    }

    fn write_val<T: Pod>(&self, offset: usize, value: &T) -> Result<(), Error> {
        let size = core::mem::size_of::<T>();
        let pa = self.check(offset, size)?;
        if pa.is_multiple_of(core::mem::align_of::<T>()) {
            // SAFETY: see `read_val`; T is Pod, so all its bytes are
            // initialised and the device may see them.
            unsafe { core::ptr::write_volatile(paddr_to_ptr::<T>(pa), *value) };
            fence(Ordering::SeqCst);
            return Ok(());
        }
        self.write_bytes(offset, value.as_bytes())
    }
}

/// Zero-filled, physically contiguous memory shared with a device for its
/// whole life (rings, descriptor tables, request headers).
#[derive(Debug)]
pub struct DmaCoherent {
    backing: Backing,
}

impl DmaCoherent {
    /// `nframes` zeroed, contiguous untyped pages.
    pub fn alloc(nframes: usize) -> Result<DmaCoherent, Error> {
        if nframes == 0 {
            return Err(Error::InvalidArgs);
        }
        Ok(DmaCoherent {
            backing: Backing::Segment(USegment::alloc_zeroed(nframes)?),
        })
    }

    /// The address the device uses for the first byte.
    pub fn bus_addr(&self) -> u64 {
        self.backing.paddr() as u64
    }

    pub fn len(&self) -> usize {
        self.backing.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), Error> {
        self.backing.read_bytes(offset, buf)
    }

    pub fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), Error> {
        self.backing.write_bytes(offset, buf)
    }

    /// Reads a `T` at `offset` (one volatile access when aligned).
    pub fn read_val<T: Pod>(&self, offset: usize) -> Result<T, Error> {
        self.backing.read_val(offset)
    }

    /// Writes `value` at `offset` (one volatile access when aligned),
    /// then a full fence: later accesses (a doorbell write) come after it.
    pub fn write_val<T: Pod>(&self, offset: usize, value: &T) -> Result<(), Error> {
        self.backing.write_val(offset, value)
    }
}

/// A buffer lent to a device for a transfer in one direction.
#[derive(Debug)]
pub struct DmaStream {
    backing: Backing,
    dir: DmaDirection,
}

impl DmaStream {
    /// Lends an existing untyped page (e.g. a page-cache page) to a device.
    /// The stream holds the page's reference until [`into_frame`] or drop.
    ///
    /// [`into_frame`]: DmaStream::into_frame
    pub fn map(frame: UFrame, dir: DmaDirection) -> DmaStream {
        DmaStream {
            backing: Backing::Frame(frame),
            dir,
        }
    }

    /// `nframes` new zeroed contiguous untyped pages.
    pub fn alloc(nframes: usize, dir: DmaDirection) -> Result<DmaStream, Error> {
        if nframes == 0 {
            return Err(Error::InvalidArgs);
        }
        Ok(DmaStream {
            backing: Backing::Segment(USegment::alloc_zeroed(nframes)?),
            dir,
        })
    }

    pub fn bus_addr(&self) -> u64 {
        self.backing.paddr() as u64
    }

    pub fn len(&self) -> usize {
        self.backing.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn direction(&self) -> DmaDirection {
        self.dir
    }

    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), Error> {
        self.backing.read_bytes(offset, buf)
    }

    pub fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), Error> {
        self.backing.write_bytes(offset, buf)
    }

    /// Makes the CPU's writes visible to the device before it starts
    /// (a fence: x86 DMA is cache-coherent and there is no bounce buffer).
    pub fn sync_for_device(&self) {
        fence(Ordering::SeqCst);
    }

    /// Makes the device's writes visible to the CPU after it completed.
    pub fn sync_for_cpu(&self) {
        fence(Ordering::SeqCst);
    }

    /// Gives the page back (for a stream made by [`DmaStream::map`] or of
    /// one page); a multi-page stream returns its pages in order.
    pub fn into_frames(self) -> Vec<UFrame> {
        match self.backing {
            Backing::Frame(f) => Vec::from([f]),
            Backing::Segment(s) => (0..s.size() / PAGE_SIZE)
                .filter_map(|i| s.frame(i))
                .collect(),
        }
    }

    /// The page of a one-page stream (the page [`DmaStream::map`] took).
    pub fn into_frame(self) -> Result<UFrame, Error> {
        match self.backing {
            Backing::Frame(f) => Ok(f),
            Backing::Segment(s) if s.size() == PAGE_SIZE => s.frame(0).ok_or(Error::InvalidArgs),
            Backing::Segment(_) => Err(Error::InvalidArgs),
        }
    }
}
