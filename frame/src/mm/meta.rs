//! Per-physical-page metadata: one [`MetaSlot`] for every 4 KiB page below
//! the highest usable physical address, stored in a region carved out of RAM
//! at boot and reached through the direct map.
//!
//! The reference count is the single source of truth for "is this page in
//! use" (invariant 1): a page may become a `Frame` only by moving its count
//! from 0 to 1 while its usage is [`FrameUsage::Unused`].

use core::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::frame_alloc::FrameUsage;
use super::{PAGE_SIZE, Paddr, linear_ptr, paddr_to_vaddr};

#[repr(C)]
pub(crate) struct MetaSlot {
    pub ref_count: AtomicU32,
    pub usage: AtomicU8,
    /// Heap pages (slab or first page of a large block): the driver
    /// domain heap that owns the page, as its table index + 1, or 0 for the
    /// kernel heap (`domain::heap`). Deallocation is routed by it.
    pub owner: AtomicU8,
    /// Slab: number of free slots (at most `PAGE_SIZE / MIN_SLOT` = 256).
    pub aux_free: AtomicU16,
    /// Slab: slot size. Large heap block: number of frames.
    pub aux_size: AtomicU32,
    /// Slab: byte offset of the first free slot, or `NO_SLOT`.
    pub aux_head: AtomicU32,
    /// Slab: id of the `SlabList` holding it, or 0 (ids are never reused,
    /// see `heap::NEXT_LIST_ID`).
    pub aux_list: AtomicU64,
    /// Slab list links: page frame number + 1, or 0 for none.
    pub prev: AtomicUsize,
    pub next: AtomicUsize,
}
pub(crate) const META_SLOT_SIZE: usize = core::mem::size_of::<MetaSlot>();
const _: () = assert!(META_SLOT_SIZE == 40);

static META_BASE: AtomicUsize = AtomicUsize::new(0);
static META_FRAMES: AtomicUsize = AtomicUsize::new(0);

/// Bytes of metadata needed to describe physical memory up to `max_paddr`.
pub(crate) fn bytes_needed(max_paddr: Paddr) -> usize {
    max_paddr.div_ceil(PAGE_SIZE) * META_SLOT_SIZE
}

/// Places the metadata array at `meta_paddr` (which must have room for
/// [`bytes_needed`]`(max_paddr)` bytes of otherwise unused RAM) and marks
/// every page as reserved; the boot code then marks the free ones unused.
pub(crate) fn init(max_paddr: Paddr, meta_paddr: Paddr) {
    let nframes = max_paddr.div_ceil(PAGE_SIZE);
    let base = paddr_to_vaddr(meta_paddr);
    assert!(
        base.is_multiple_of(core::mem::align_of::<MetaSlot>()),
        "metadata array misaligned"
    );
    for i in 0..nframes {
        let slot = linear_ptr::<MetaSlot>(base + i * META_SLOT_SIZE);
        // SAFETY: the caller gave us `bytes_needed(max_paddr)` bytes of unused
        // RAM at `meta_paddr`, reachable through the direct map; nothing else
        // references it, and the slot is aligned (checked above).
        unsafe {
            slot.write(MetaSlot {
                ref_count: AtomicU32::new(0),
                usage: AtomicU8::new(FrameUsage::Reserved as u8),
                owner: AtomicU8::new(0),
                aux_free: AtomicU16::new(0),
                aux_size: AtomicU32::new(0),
                aux_head: AtomicU32::new(0),
                aux_list: AtomicU64::new(0),
                prev: AtomicUsize::new(0),
                next: AtomicUsize::new(0),
            })
        };
    }
    META_BASE.store(base, Ordering::Release);
    META_FRAMES.store(nframes, Ordering::Release);
}

/// One past the highest physical address that has metadata.
pub fn max_paddr() -> Paddr {
    META_FRAMES.load(Ordering::Acquire) * PAGE_SIZE
}

/// The metadata of the page containing `pa`, if `pa` is covered.
pub(crate) fn slot(pa: Paddr) -> Option<&'static MetaSlot> {
    let pfn = pa / PAGE_SIZE;
    if pfn >= META_FRAMES.load(Ordering::Acquire) {
        return None;
    }
    let addr = META_BASE.load(Ordering::Acquire) + pfn * META_SLOT_SIZE;
    // SAFETY: `init` initialised every slot below META_FRAMES, the array is
    // never freed, and all mutable state in a slot is atomic.
    Some(unsafe { &*linear_ptr::<MetaSlot>(addr) })
}

/// Like [`slot`] for a page that frame code already owns.
pub(crate) fn slot_of_owned(pa: Paddr) -> &'static MetaSlot {
    slot(pa).expect("owned frame outside the metadata array")
}

/// Marks `[start, end)` as unused (free) during boot.
pub(crate) fn mark_unused(start: Paddr, end: Paddr) {
    let mut pa = start;
    while pa < end {
        if let Some(s) = slot(pa) {
            s.usage.store(FrameUsage::Unused as u8, Ordering::Relaxed);
        }
        pa += PAGE_SIZE;
    }
}
