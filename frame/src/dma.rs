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
//!
//! A buffer made while a driver domain runs is *owned by frame on the
//! domain's behalf*: its pages sit in a table on the kernel heap and the
//! buffer only names them. When the domain dies, its buffers (forgotten on
//! its freed heap) are taken back from the table ([`revoke_domain`]) and
//! freed only after the device has been reset (docs/domains.md).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::{Ordering, fence};

use crate::mm::{PAGE_SIZE, Paddr, UFrame, USegment, paddr_to_ptr};
use crate::sync::{SpinLock, level};
use crate::{Error, Pod};

/// The pages of buffers made inside driver domains, by buffer id, with the
/// heap tag of the domain that made each.
struct DomainDma {
    next: u64,
    owned: BTreeMap<u64, (u8, Backing)>,
}

static DOMAIN_DMA: SpinLock<DomainDma, { level::HEAP - 3 }> = SpinLock::new(DomainDma {
    next: 1,
    owned: BTreeMap::new(),
});

/// A buffer's pages held in [`DOMAIN_DMA`]: they stay there (alive) until
/// the buffer is dropped or its domain is revoked, after which the buffer
/// is never used (it is forgotten on the dead domain's heap).
#[derive(Debug)]
struct Lent {
    paddr: Paddr,
    len: usize,
    /// 0 once the pages were taken back out (`into_frames`).
    id: u64,
}

impl Lent {
    /// The pages, out of the table.
    fn take(mut self) -> Option<Backing> {
        let id = core::mem::replace(&mut self.id, 0);
        DOMAIN_DMA
            .lock_irq_disabled()
            .owned
            .remove(&id)
            .map(|(_, b)| b)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.id != 0 {
            let pages = DOMAIN_DMA.lock_irq_disabled().owned.remove(&self.id);
            drop(pages);
        }
    }
}

/// `backing` as the buffer's own, or, inside a driver domain, kept in the
/// table on the domain's behalf.
fn owned(backing: Backing) -> Backing {
    let tag = crate::domain::heap::current_tag();
    if tag == 0 {
        return backing;
    }
    let (paddr, len) = (backing.paddr(), backing.len());
    let id = crate::domain::heap::with_kernel_heap(|| {
        let mut t = DOMAIN_DMA.lock_irq_disabled();
        let id = t.next;
        t.next += 1;
        t.owned.insert(id, (tag, backing));
        id
    });
    Backing::Lent(Lent { paddr, len, id })
}

/// The pages of a dead domain's DMA buffers: freed when this is dropped,
/// which its owner does only once the device cannot reach them any more.
pub(crate) struct RevokedDma(Vec<Backing>);

impl RevokedDma {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Takes back the pages of every buffer the domain with heap tag `tag`
/// made and did not drop: called when it dies, before its heap (where the
/// buffers' handles live) is freed.
pub(crate) fn revoke_domain(tag: u8) -> RevokedDma {
    crate::domain::heap::with_kernel_heap(|| {
        let mut t = DOMAIN_DMA.lock_irq_disabled();
        let ids: Vec<u64> = t
            .owned
            .iter()
            .filter(|(_, (o, _))| *o == tag)
            .map(|(id, _)| *id)
            .collect();
        RevokedDma(
            ids.iter()
                .filter_map(|id| t.owned.remove(id).map(|(_, b)| b))
                .collect(),
        )
    })
}

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
    /// Pages kept in [`DOMAIN_DMA`] for a driver domain.
    Lent(Lent),
}

impl Backing {
    fn paddr(&self) -> Paddr {
        match self {
            Backing::Segment(s) => s.paddr(),
            Backing::Frame(f) => f.paddr(),
            Backing::Lent(l) => l.paddr,
        }
    }

    fn len(&self) -> usize {
        match self {
            Backing::Segment(s) => s.size(),
            Backing::Frame(_) => PAGE_SIZE,
            Backing::Lent(l) => l.len,
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
            // buffer (checked above; for `Lent`, pages held in DOMAIN_DMA
            // until the buffer is dropped or its domain is revoked, after
            // which the buffer is never used), RAM in the direct map;
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
            backing: owned(Backing::Segment(USegment::alloc_zeroed(nframes)?)),
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
            backing: owned(Backing::Frame(frame)),
            dir,
        }
    }

    /// `nframes` new zeroed contiguous untyped pages.
    pub fn alloc(nframes: usize, dir: DmaDirection) -> Result<DmaStream, Error> {
        if nframes == 0 {
            return Err(Error::InvalidArgs);
        }
        Ok(DmaStream {
            backing: owned(Backing::Segment(USegment::alloc_zeroed(nframes)?)),
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
        Self::frames_of(self.backing)
    }

    fn frames_of(backing: Backing) -> Vec<UFrame> {
        match backing {
            Backing::Frame(f) => Vec::from([f]),
            Backing::Segment(s) => (0..s.size() / PAGE_SIZE)
                .filter_map(|i| s.frame(i))
                .collect(),
            Backing::Lent(l) => l.take().map(Self::frames_of).unwrap_or_default(),
        }
    }

    /// The page of a one-page stream (the page [`DmaStream::map`] took).
    pub fn into_frame(self) -> Result<UFrame, Error> {
        Self::frame_of(self.backing)
    }

    fn frame_of(backing: Backing) -> Result<UFrame, Error> {
        match backing {
            Backing::Frame(f) => Ok(f),
            Backing::Segment(s) if s.size() == PAGE_SIZE => s.frame(0).ok_or(Error::InvalidArgs),
            Backing::Segment(_) => Err(Error::InvalidArgs),
            Backing::Lent(l) => l.take().map_or(Err(Error::InvalidArgs), Self::frame_of),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::frame_alloc::FrameUsage;
    use crate::sim;

    /// The root of a driver domain: a ring it made and a stream of a page
    /// the kernel lent it.
    struct RingDriver {
        ring: DmaCoherent,
        _stream: Option<DmaStream>,
    }

    fn start_ring(n: usize) -> RingDriver {
        let ring = DmaCoherent::alloc(n).unwrap();
        ring.write_val(0, &0x5au32).unwrap();
        RingDriver {
            ring,
            _stream: Some(DmaStream::alloc(1, DmaDirection::FromDevice).unwrap()),
        }
    }

    fn read_ring(d: &mut RingDriver, off: u64) -> u32 {
        d.ring.read_val(off as usize).unwrap()
    }

    fn drop_stream(d: &mut RingDriver, _: u8) -> u8 {
        d._stream = None;
        0
    }

    fn crash_ring(_: &mut RingDriver, _: u8) -> u8 {
        panic!("injected")
    }

    static RESETS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
    static FREE_AT_RESET: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

    #[test]
    fn a_dead_domain_s_dma_memory_is_freed_after_the_device_reset() {
        sim::run(|| {
            use crate::domain::{Domain, Fault};
            use crate::mm::frame_alloc::free_frames;
            let before = free_frames();
            let reset = || {
                RESETS.fetch_add(1, Ordering::Relaxed);
                FREE_AT_RESET.store(free_frames(), Ordering::Relaxed);
            };
            let d = Domain::new_device("test-dma", alloc::boxed::Box::new(reset), start_ring, 3)
                .unwrap();
            assert_eq!(d.call(read_ring, 0), Ok(0x5a), "the ring works inside");
            assert_eq!(DOMAIN_DMA.lock().owned.len(), 2);
            assert_eq!(d.call(drop_stream, 0), Ok(0));
            assert_eq!(
                DOMAIN_DMA.lock().owned.len(),
                1,
                "a dropped buffer leaves the table"
            );
            assert_eq!(d.call(crash_ring, 0), Err(Fault::Panic));
            assert_eq!(RESETS.load(Ordering::Relaxed), 1, "the device was reset");
            assert!(
                FREE_AT_RESET.load(Ordering::Relaxed) < before,
                "the ring was still allocated when the device was reset"
            );
            assert_eq!(DOMAIN_DMA.lock().owned.len(), 0);
            drop(d);
            assert_eq!(
                RESETS.load(Ordering::Relaxed),
                1,
                "a dead domain is not reset twice"
            );
            assert_eq!(
                free_frames(),
                before,
                "ring, stream, heap and stack went back"
            );
            // A domain without a reset: its DMA memory is leaked, never
            // freed under a device.
            let d = Domain::new("test-dma-noreset", start_ring, 1).unwrap();
            assert_eq!(d.call(crash_ring, 0), Err(Fault::Panic));
            assert_eq!(DOMAIN_DMA.lock().owned.len(), 0);
            drop(d);
            assert_eq!(
                free_frames(),
                before - 2,
                "its ring and stream page stay allocated"
            );
        });
    }

    fn usage(pa: Paddr) -> u8 {
        crate::mm::meta::slot(pa)
            .unwrap()
            .usage
            .load(core::sync::atomic::Ordering::Relaxed)
    }

    crate::pod_struct! {
        struct Desc { addr: u64, len: u32, flags: u16, next: u16 }
    }

    #[test]
    fn coherent_buffers_are_zeroed_untyped_frames_with_checked_copies() {
        sim::run(|| {
            assert_eq!(DmaCoherent::alloc(0).err(), Some(Error::InvalidArgs));
            let d = DmaCoherent::alloc(2).unwrap();
            assert_eq!(d.len(), 2 * PAGE_SIZE);
            let pa = d.bus_addr() as Paddr;
            for p in [pa, pa + PAGE_SIZE] {
                assert_eq!(usage(p), FrameUsage::Untyped as u8, "invariant 6");
            }
            let mut buf = [0xffu8; 64];
            d.read_bytes(PAGE_SIZE - 32, &mut buf).unwrap();
            assert_eq!(buf, [0u8; 64], "zeroed, across the page boundary");
            let desc = Desc {
                addr: 0x1234_5678_9abc,
                len: 512,
                flags: 3,
                next: 7,
            };
            d.write_val(16, &desc).unwrap();
            assert_eq!(d.read_val::<Desc>(16).unwrap().addr, desc.addr);
            assert_eq!(d.read_val::<u16>(16 + 14), Ok(7));
            // Unaligned values go byte by byte.
            d.write_val(PAGE_SIZE - 3, &0x1122_3344_5566_7788u64)
                .unwrap();
            assert_eq!(d.read_val::<u64>(PAGE_SIZE - 3), Ok(0x1122_3344_5566_7788));
            let mut b = [0u8; 2];
            d.read_bytes(PAGE_SIZE - 3, &mut b).unwrap();
            assert_eq!(b, [0x88, 0x77]);
            // What the "device" writes at the bus address, the CPU reads.
            let seg_frame = crate::mm::UFrame::clone_from_paddr(pa + PAGE_SIZE);
            seg_frame.write_bytes(100, b"device").unwrap();
            let mut got = [0u8; 6];
            d.read_bytes(PAGE_SIZE + 100, &mut got).unwrap();
            assert_eq!(&got, b"device");
            drop(seg_frame);
            // Bounds.
            assert_eq!(
                d.read_val::<u32>(2 * PAGE_SIZE - 3),
                Err(Error::InvalidArgs)
            );
            assert_eq!(d.write_bytes(2 * PAGE_SIZE, &[1]), Err(Error::InvalidArgs));
            assert_eq!(
                d.read_bytes(usize::MAX, &mut [0u8; 2]),
                Err(Error::InvalidArgs)
            );
            assert!(d.write_bytes(2 * PAGE_SIZE, &[]).is_ok());
        })
    }

    #[test]
    fn a_mapped_page_is_held_for_the_device_and_comes_back() {
        sim::run(|| {
            let free0 = crate::mm::frame_alloc::free_frames();
            let page = UFrame::alloc_zeroed().unwrap();
            page.write_bytes(0, b"page-cache data").unwrap();
            let pa = page.paddr();
            let s = DmaStream::map(page.clone(), DmaDirection::ToDevice);
            assert_eq!((s.bus_addr(), s.len()), (pa as u64, PAGE_SIZE));
            assert_eq!(s.direction(), DmaDirection::ToDevice);
            assert_eq!(page.ref_count(), 2, "the stream holds the page");
            drop(page);
            // The page survives its last other handle while lent out.
            s.sync_for_device();
            let mut b = [0u8; 15];
            s.read_bytes(0, &mut b).unwrap();
            assert_eq!(&b, b"page-cache data");
            // A "device" write (FromDevice) is seen after sync_for_cpu.
            s.write_bytes(PAGE_SIZE - 4, b"DONE").unwrap();
            s.sync_for_cpu();
            let back = s.into_frame().unwrap();
            assert_eq!(back.paddr(), pa);
            assert_eq!(back.ref_count(), 1);
            let mut t = [0u8; 4];
            back.read_bytes(PAGE_SIZE - 4, &mut t).unwrap();
            assert_eq!(&t, b"DONE");
            drop(back);
            assert_eq!(
                crate::mm::frame_alloc::free_frames(),
                free0,
                "nothing leaked"
            );
            // Allocated streams: zeroed untyped pages, given back in order.
            let s = DmaStream::alloc(3, DmaDirection::FromDevice).unwrap();
            assert_eq!(usage(s.bus_addr() as Paddr), FrameUsage::Untyped as u8);
            assert_eq!(
                s.write_bytes(3 * PAGE_SIZE - 1, &[1, 2]),
                Err(Error::InvalidArgs)
            );
            let base = s.bus_addr() as Paddr;
            let frames = s.into_frames();
            let pas: alloc::vec::Vec<Paddr> = frames.iter().map(UFrame::paddr).collect();
            assert_eq!(pas, [base, base + PAGE_SIZE, base + 2 * PAGE_SIZE]);
            assert!(frames.iter().all(|f| f.ref_count() == 1));
            drop(frames);
            let one = DmaStream::alloc(1, DmaDirection::Bidirectional).unwrap();
            assert!(one.into_frame().is_ok());
            let two = DmaStream::alloc(2, DmaDirection::Bidirectional).unwrap();
            assert_eq!(two.into_frame().err(), Some(Error::InvalidArgs));
            assert_eq!(
                DmaStream::alloc(0, DmaDirection::ToDevice).err(),
                Some(Error::InvalidArgs)
            );
            assert_eq!(
                crate::mm::frame_alloc::free_frames(),
                free0,
                "nothing leaked"
            );
        })
    }
}
