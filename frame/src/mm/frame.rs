//! Owned physical frames.
//!
//! * [`Frame`] / [`Segment`] are *typed*: frame itself decides what lives in
//!   them (page tables, kernel stacks); clients can hold them but never see
//!   their contents.
//! * [`UFrame`] / [`USegment`] are *untyped*: user pages, file data, DMA
//!   buffers. Their contents are only ever copied in or out as bytes, so no
//!   Rust object can be corrupted through them (invariant 4).
//!
//! Every page carries a reference count in its metadata; cloning a handle
//! increments it, dropping decrements it, and the last drop returns the page
//! to the allocator policy.

use core::sync::atomic::Ordering;

use super::frame_alloc::{FrameUsage, alloc_frames, free_frame};
use super::meta::slot_of_owned;
use super::{PAGE_SIZE, Paddr, paddr_to_ptr};

/// One owned, typed physical page.
#[derive(Debug)]
pub struct Frame {
    paddr: Paddr,
}

impl Frame {
    /// Allocates a zeroed typed frame for frame-internal `usage`.
    pub(crate) fn alloc_zeroed(usage: FrameUsage) -> Option<Frame> {
        let paddr = alloc_frames(1, usage)?;
        let frame = Frame { paddr };
        frame.fill_zero();
        Some(frame)
    }

    pub fn paddr(&self) -> Paddr {
        self.paddr
    }

    /// The page's current reference count.
    pub fn ref_count(&self) -> u32 {
        slot_of_owned(self.paddr).ref_count.load(Ordering::Acquire)
    }

    fn fill_zero(&self) {
        // SAFETY: this handle owns a reference to the page, which is RAM
        // reachable through the direct map for PAGE_SIZE bytes.
        unsafe { core::ptr::write_bytes(paddr_to_ptr::<u8>(self.paddr), 0, PAGE_SIZE) }
    }

    /// Turns the handle into its address without dropping the reference.
    pub(crate) fn into_raw(self) -> Paddr {
        let pa = self.paddr;
        core::mem::forget(self);
        pa
    }

    /// Re-creates a handle from [`Frame::into_raw`].
    ///
    /// # Safety
    /// `pa` must come from `into_raw` and its reference must not have been
    /// reclaimed already.
    pub(crate) unsafe fn from_raw(pa: Paddr) -> Frame {
        Frame { paddr: pa }
    }

    /// Takes an extra reference to the page at `pa`, which must be owned
    /// (reference count >= 1) by someone who keeps it alive meanwhile.
    pub(crate) fn clone_from_paddr(pa: Paddr) -> Frame {
        let slot = slot_of_owned(pa);
        let old = slot.ref_count.fetch_add(1, Ordering::AcqRel);
        assert!(old > 0, "cloned a reference to a free frame");
        Frame { paddr: pa }
    }
}

impl Clone for Frame {
    fn clone(&self) -> Self {
        Frame::clone_from_paddr(self.paddr)
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        if slot_of_owned(self.paddr)
            .ref_count
            .fetch_sub(1, Ordering::AcqRel)
            == 1
        {
            free_frame(self.paddr);
        }
    }
}

/// Contiguous owned typed frames.
#[derive(Debug)]
pub struct Segment {
    paddr: Paddr,
    nframes: usize,
}

impl Segment {
    pub(crate) fn alloc(nframes: usize, usage: FrameUsage) -> Option<Segment> {
        let paddr = alloc_frames(nframes, usage)?;
        Some(Segment { paddr, nframes })
    }

    pub fn paddr(&self) -> Paddr {
        self.paddr
    }

    pub fn size(&self) -> usize {
        self.nframes * PAGE_SIZE
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        for i in 0..self.nframes {
            let pa = self.paddr + i * PAGE_SIZE;
            if slot_of_owned(pa).ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
                free_frame(pa);
            }
        }
    }
}

/// One owned untyped page whose contents are plain bytes.
#[derive(Debug, Clone)]
pub struct UFrame(Frame);

impl UFrame {
    /// Allocates a zero-filled untyped page.
    pub fn alloc_zeroed() -> Result<UFrame, crate::Error> {
        Frame::alloc_zeroed(FrameUsage::Untyped)
            .map(UFrame)
            .ok_or(crate::Error::NoMemory)
    }

    /// Allocates a new page holding a copy of `src` (copy-on-write breaks).
    pub fn alloc_copy_of(src: &UFrame) -> Result<UFrame, crate::Error> {
        let paddr = alloc_frames(1, FrameUsage::Untyped).ok_or(crate::Error::NoMemory)?;
        let dst = UFrame(Frame { paddr });
        // SAFETY: both pages are owned, distinct RAM pages in the direct map;
        // untyped pages hold no Rust objects, so a byte copy is always valid.
        unsafe {
            core::ptr::copy_nonoverlapping(
                paddr_to_ptr::<u8>(src.0.paddr),
                paddr_to_ptr::<u8>(dst.0.paddr),
                PAGE_SIZE,
            )
        };
        Ok(dst)
    }

    pub fn paddr(&self) -> Paddr {
        self.0.paddr
    }

    /// Number of handles (including page-table mappings) sharing the page.
    pub fn ref_count(&self) -> u32 {
        self.0.ref_count()
    }

    /// Copies `buf.len()` bytes starting at `offset` out of the page.
    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), crate::Error> {
        untyped_read(self.0.paddr, PAGE_SIZE, offset, buf)
    }

    /// Copies `buf` into the page at `offset`.
    pub fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), crate::Error> {
        untyped_write(self.0.paddr, PAGE_SIZE, offset, buf)
    }

    /// Zero-fills `len` bytes at `offset`.
    pub fn fill_zero(&self, offset: usize, len: usize) -> Result<(), crate::Error> {
        check_range(offset, len, PAGE_SIZE)?;
        // SAFETY: see `read_bytes`.
        unsafe { core::ptr::write_bytes(paddr_to_ptr::<u8>(self.0.paddr + offset), 0, len) };
        Ok(())
    }

    pub(crate) fn into_raw(self) -> Paddr {
        self.0.into_raw()
    }

    /// # Safety
    /// `pa` must come from [`UFrame::into_raw`] and not be reclaimed twice.
    pub(crate) unsafe fn from_raw(pa: Paddr) -> UFrame {
        // SAFETY: the caller upholds this function's contract.
        UFrame(unsafe { Frame::from_raw(pa) })
    }

    /// A new handle to an untyped page that a page table currently maps.
    pub(crate) fn clone_from_paddr(pa: Paddr) -> UFrame {
        UFrame(Frame::clone_from_paddr(pa))
    }
}

/// Contiguous untyped pages (DMA buffers, large file data).
#[derive(Debug)]
pub struct USegment(Segment);

impl USegment {
    pub fn alloc_zeroed(nframes: usize) -> Result<USegment, crate::Error> {
        let seg = Segment::alloc(nframes, FrameUsage::Untyped).ok_or(crate::Error::NoMemory)?;
        // SAFETY: freshly allocated, owned RAM pages in the direct map.
        unsafe { core::ptr::write_bytes(paddr_to_ptr::<u8>(seg.paddr), 0, seg.size()) };
        Ok(USegment(seg))
    }

    pub fn paddr(&self) -> Paddr {
        self.0.paddr
    }

    pub fn size(&self) -> usize {
        self.0.size()
    }

    pub fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), crate::Error> {
        untyped_read(self.0.paddr, self.size(), offset, buf)
    }

    pub fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), crate::Error> {
        untyped_write(self.0.paddr, self.size(), offset, buf)
    }

    /// A handle to the `i`-th page of the segment.
    pub fn frame(&self, i: usize) -> Option<UFrame> {
        (i < self.0.nframes).then(|| UFrame::clone_from_paddr(self.0.paddr + i * PAGE_SIZE))
    }
}

/// Copies out of `size` bytes of owned untyped memory starting at `base`.
fn untyped_read(
    base: Paddr,
    size: usize,
    offset: usize,
    buf: &mut [u8],
) -> Result<(), crate::Error> {
    check_range(offset, buf.len(), size)?;
    // SAFETY: the caller owns the untyped pages `base..base+size` (a UFrame
    // or USegment handle), and the range is inside them (checked above).
    // Untyped pages hold plain bytes that other handles may change
    // concurrently: a race on bytes only (as with user memory), never on
    // Rust objects.
    unsafe {
        core::ptr::copy(
            paddr_to_ptr::<u8>(base + offset),
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    Ok(())
}

/// Copies into `size` bytes of owned untyped memory starting at `base`.
fn untyped_write(base: Paddr, size: usize, offset: usize, buf: &[u8]) -> Result<(), crate::Error> {
    check_range(offset, buf.len(), size)?;
    // SAFETY: see `untyped_read`.
    unsafe { core::ptr::copy(buf.as_ptr(), paddr_to_ptr::<u8>(base + offset), buf.len()) };
    Ok(())
}

fn check_range(offset: usize, len: usize, size: usize) -> Result<(), crate::Error> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(crate::Error::InvalidArgs),
    }
}
