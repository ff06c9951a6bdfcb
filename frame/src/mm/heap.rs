//! The kernel heap mechanism: slabs of equal-sized slots, large blocks of
//! whole frames, and the `GlobalAlloc` that delegates to an injected safe
//! [`HeapPolicy`] (size classes, caching) and checks what it returns.
//!
//! Invariant 9: a slot never outlives its slab — a slab whose slots are not
//! all free is never returned to the frame allocator. Invariant 10: an object
//! goes into a slot only if the slot's size and alignment fit its layout.

use core::alloc::Layout;
use core::sync::atomic::{AtomicU64, Ordering};

use super::frame_alloc::{FrameUsage, alloc_frames, free_frame};
use super::meta::{MetaSlot, slot as meta_slot, slot_of_owned};
use super::{PAGE_SIZE, Paddr, linear_ptr, paddr_to_vaddr, vaddr_to_paddr};
use crate::Error;

const NO_SLOT: u32 = u32::MAX;
/// Smallest and largest slab slot sizes.
pub const MIN_SLOT: usize = 16;
pub const MAX_SLOT: usize = PAGE_SIZE / 2;

/// A heap slot: memory for one object, handed out by a [`Slab`] or as a
/// large block of frames. Clients only move slots around; frame turns them
/// into pointers.
#[derive(Debug)]
pub struct HeapSlot {
    addr: usize,
    size: usize,
    large: bool,
}

impl HeapSlot {
    pub fn size(&self) -> usize {
        self.size
    }

    pub fn is_large(&self) -> bool {
        self.large
    }

    /// Allocates a block of whole frames of at least `size` bytes.
    pub fn alloc_large(size: usize) -> Result<HeapSlot, Error> {
        let nframes = size.div_ceil(PAGE_SIZE).max(1);
        let pa = alloc_frames(nframes, FrameUsage::HeapLarge).ok_or(Error::NoMemory)?;
        let meta = slot_of_owned(pa);
        meta.aux_size.store(nframes as u32, Ordering::Relaxed);
        meta.owner.store(0, Ordering::Relaxed);
        Ok(HeapSlot {
            addr: paddr_to_vaddr(pa),
            size: nframes * PAGE_SIZE,
            large: true,
        })
    }

    /// Returns a large block to the frame allocator.
    pub fn free_large(self) {
        assert!(self.large, "free_large on a slab slot");
        let pa = vaddr_to_paddr(self.addr).expect("large heap block outside the direct map");
        for i in 0..self.size / PAGE_SIZE {
            let s = slot_of_owned(pa + i * PAGE_SIZE);
            if s.ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
                free_frame(pa + i * PAGE_SIZE);
            }
        }
    }

    /// The large block whose first page is `pa` (a page of usage
    /// `HeapLarge` that the caller owns, e.g. a domain heap's list).
    pub(crate) fn large_at(pa: Paddr) -> HeapSlot {
        let n = slot_of_owned(pa).aux_size.load(Ordering::Relaxed) as usize;
        HeapSlot {
            addr: paddr_to_vaddr(pa),
            size: n * PAGE_SIZE,
            large: true,
        }
    }

    /// The physical address of the page the slot starts in.
    pub(crate) fn paddr(&self) -> Paddr {
        self.page_paddr()
    }

    /// Reconstructs the slot of a pointer returned by `GlobalAlloc::alloc`.
    fn from_allocated(ptr: usize) -> HeapSlot {
        let pa = vaddr_to_paddr(ptr).expect("heap pointer outside the direct map");
        let meta = slot_of_owned(pa);
        match meta.usage.load(Ordering::Acquire) {
            u if u == FrameUsage::Slab as u8 => {
                let size = meta.aux_size.load(Ordering::Relaxed) as usize;
                assert!(
                    size != 0 && (ptr % PAGE_SIZE).is_multiple_of(size),
                    "freed pointer is not a slot start"
                );
                HeapSlot {
                    addr: ptr,
                    size,
                    large: false,
                }
            }
            u if u == FrameUsage::HeapLarge as u8 && ptr.is_multiple_of(PAGE_SIZE) => {
                let n = meta.aux_size.load(Ordering::Relaxed) as usize;
                HeapSlot {
                    addr: ptr,
                    size: n * PAGE_SIZE,
                    large: true,
                }
            }
            _ => panic!("heap: freed pointer {ptr:#x} is not a heap allocation"),
        }
    }

    fn page_paddr(&self) -> Paddr {
        vaddr_to_paddr(self.addr & !(PAGE_SIZE - 1)).expect("slot outside the direct map")
    }
}

/// One page of equal-sized slots. The free list lives inside the free slots;
/// counts and the list head live in the page's metadata.
#[derive(Debug)]
pub struct Slab {
    paddr: Paddr,
}

impl Slab {
    /// A new slab of `slot_size`-byte slots (a power of two in
    /// `MIN_SLOT..=MAX_SLOT`, so every slot is aligned to its size).
    pub fn new(slot_size: usize) -> Result<Slab, Error> {
        if !slot_size.is_power_of_two() || !(MIN_SLOT..=MAX_SLOT).contains(&slot_size) {
            return Err(Error::InvalidArgs);
        }
        let paddr = alloc_frames(1, FrameUsage::Slab).ok_or(Error::NoMemory)?;
        let base = paddr_to_vaddr(paddr);
        let n = PAGE_SIZE / slot_size;
        for i in 0..n {
            let next = if i + 1 < n {
                ((i + 1) * slot_size) as u32
            } else {
                NO_SLOT
            };
            // SAFETY: the page is freshly allocated and owned; each free slot
            // starts with a 4-byte aligned link word inside the page.
            unsafe { linear_ptr::<u32>(base + i * slot_size).write(next) };
        }
        let meta = slot_of_owned(paddr);
        meta.aux_size.store(slot_size as u32, Ordering::Relaxed);
        meta.aux_free.store(n as u16, Ordering::Relaxed);
        meta.aux_head.store(0, Ordering::Relaxed);
        meta.prev.store(0, Ordering::Relaxed);
        meta.next.store(0, Ordering::Relaxed);
        meta.owner.store(0, Ordering::Relaxed);
        Ok(Slab { paddr })
    }

    /// The page of this slab.
    pub(crate) fn paddr(&self) -> Paddr {
        self.paddr
    }

    /// Returns the page to the frame allocator *with* live slots: only for
    /// a driver domain's heap freed wholesale, whose slots nothing outside
    /// the dead domain can reach any more (invariant 11, docs/soundness.md).
    pub(crate) fn free_wholesale(self) {
        let meta = self.meta();
        meta.owner.store(0, Ordering::Relaxed);
        meta.aux_list.store(0, Ordering::Relaxed);
        let pa = self.paddr;
        core::mem::forget(self);
        if meta.ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
            free_frame(pa);
        }
    }

    fn meta(&self) -> &'static MetaSlot {
        slot_of_owned(self.paddr)
    }

    pub fn slot_size(&self) -> usize {
        self.meta().aux_size.load(Ordering::Relaxed) as usize
    }

    pub fn capacity(&self) -> usize {
        PAGE_SIZE / self.slot_size()
    }

    pub fn nr_free(&self) -> usize {
        self.meta().aux_free.load(Ordering::Relaxed) as usize
    }

    pub fn is_full(&self) -> bool {
        self.nr_free() == 0
    }

    pub fn is_empty(&self) -> bool {
        self.nr_free() == self.capacity()
    }

    /// Takes a free slot.
    pub fn alloc(&mut self) -> Option<HeapSlot> {
        let meta = self.meta();
        let head = meta.aux_head.load(Ordering::Relaxed);
        if head == NO_SLOT {
            return None;
        }
        let addr = paddr_to_vaddr(self.paddr) + head as usize;
        // SAFETY: `head` is the offset of a free slot of this owned page
        // (only this slab writes the list), holding a link word.
        let next = unsafe { linear_ptr::<u32>(addr).read() };
        meta.aux_head.store(next, Ordering::Relaxed);
        meta.aux_free.fetch_sub(1, Ordering::Relaxed);
        Some(HeapSlot {
            addr,
            size: self.slot_size(),
            large: false,
        })
    }

    /// Whether `slot` belongs to this slab.
    pub fn contains(&self, slot: &HeapSlot) -> bool {
        !slot.large && slot.page_paddr() == self.paddr && slot.size == self.slot_size()
    }

    /// Puts a slot back; gives it back if it belongs to another slab.
    pub fn dealloc(&mut self, slot: HeapSlot) -> Result<(), HeapSlot> {
        if !self.contains(&slot) {
            return Err(slot);
        }
        let meta = self.meta();
        // SAFETY: the slot is inside this owned page and no longer in use
        // (its HeapSlot was surrendered); it becomes a free-list node.
        unsafe { linear_ptr::<u32>(slot.addr).write(meta.aux_head.load(Ordering::Relaxed)) };
        meta.aux_head
            .store((slot.addr % PAGE_SIZE) as u32, Ordering::Relaxed);
        meta.aux_free.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        if !self.is_empty() {
            // Invariant 9: live slots pin the page; leak it rather than free.
            crate::log_warn!(
                "slab {:#x} dropped with live slots; page leaked",
                self.paddr
            );
            return;
        }
        if self.meta().ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
            free_frame(self.paddr);
        }
    }
}

/// The id the next [`SlabList`] takes when its first slab is pushed.
///
/// Invariant 9 depends on it: `take_containing` trusts a slab's recorded
/// list id to decide that the slab is linked into *this* list, and unlinks
/// it through this list's head. Two live lists with one id would let one
/// list unlink (and free) a slab the other still links, and hand out slots
/// in a page that has been reused. So ids are never reused: a 64-bit
/// counter would take centuries to run out at one new list per
/// nanosecond, and if it ever does, taking an id panics rather than wrap.
/// (Identity by address would need every list pinned, a burden on
/// policies for no gain.)
static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

fn new_list_id() -> u64 {
    match NEXT_LIST_ID.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1)) {
        Ok(id) => id,
        Err(_) => panic!("SlabList ids exhausted (invariant 9: a list id is never reused)"),
    }
}

/// Test hook: the id the next new list will take.
#[cfg(test)]
pub(crate) fn next_list_id() -> u64 {
    NEXT_LIST_ID.load(Ordering::Relaxed)
}

/// Test hook: pretends that many lists were created (sets the next id).
#[cfg(test)]
pub(crate) fn set_next_list_id(id: u64) {
    NEXT_LIST_ID.store(id, Ordering::Relaxed);
}

/// An intrusive list of slabs linked through their page metadata, so a
/// policy can keep any number of slabs without allocating.
#[derive(Debug)]
pub struct SlabList {
    /// 0 until the first push; then unique for good (see `NEXT_LIST_ID`).
    id: u64,
    head: usize,
    len: usize,
}

impl Default for SlabList {
    fn default() -> Self {
        Self::new()
    }
}

impl SlabList {
    pub const fn new() -> SlabList {
        SlabList {
            id: 0,
            head: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn id(&mut self) -> u64 {
        if self.id == 0 {
            self.id = new_list_id();
        }
        self.id
    }

    fn meta_of(link: usize) -> &'static MetaSlot {
        slot_of_owned((link - 1) * PAGE_SIZE)
    }

    pub fn push(&mut self, slab: Slab) {
        let id = self.id();
        let link = slab.paddr / PAGE_SIZE + 1;
        let meta = slab.meta();
        core::mem::forget(slab);
        meta.aux_list.store(id, Ordering::Relaxed);
        meta.prev.store(0, Ordering::Relaxed);
        meta.next.store(self.head, Ordering::Relaxed);
        if self.head != 0 {
            Self::meta_of(self.head).prev.store(link, Ordering::Relaxed);
        }
        self.head = link;
        self.len += 1;
    }

    fn unlink(&mut self, link: usize) -> Slab {
        let meta = Self::meta_of(link);
        let prev = meta.prev.load(Ordering::Relaxed);
        let next = meta.next.load(Ordering::Relaxed);
        if prev != 0 {
            Self::meta_of(prev).next.store(next, Ordering::Relaxed);
        } else {
            self.head = next;
        }
        if next != 0 {
            Self::meta_of(next).prev.store(prev, Ordering::Relaxed);
        }
        meta.aux_list.store(0, Ordering::Relaxed);
        self.len -= 1;
        Slab {
            paddr: (link - 1) * PAGE_SIZE,
        }
    }

    pub fn pop(&mut self) -> Option<Slab> {
        (self.head != 0).then(|| self.unlink(self.head))
    }

    /// Allocates from the first slab; `true` means that slab is now full.
    /// One metadata lookup, and the slab stays where it is in the list.
    pub fn alloc_front(&mut self) -> Option<(HeapSlot, bool)> {
        if self.head == 0 {
            return None;
        }
        let paddr = (self.head - 1) * PAGE_SIZE;
        let meta = slot_of_owned(paddr);
        let head = meta.aux_head.load(Ordering::Relaxed);
        if head == NO_SLOT {
            return None;
        }
        let addr = paddr_to_vaddr(paddr) + head as usize;
        // SAFETY: the list owns the slab at `paddr` (pushed, not yet
        // unlinked), and `head` is the offset of one of its free slots
        // (only the slab's owner writes its free list), holding a link word.
        let next = unsafe { linear_ptr::<u32>(addr).read() };
        meta.aux_head.store(next, Ordering::Relaxed);
        let free = meta.aux_free.load(Ordering::Relaxed).wrapping_sub(1);
        meta.aux_free.store(free, Ordering::Relaxed);
        let slot = HeapSlot {
            addr,
            size: meta.aux_size.load(Ordering::Relaxed) as usize,
            large: false,
        };
        Some((slot, free == 0))
    }

    /// Puts `slot` back into its slab, which must be linked into this list;
    /// the slab keeps its place (no unlink and relink). If the slab is then
    /// empty and `release_if_empty` holds, it is unlinked and returned, for
    /// the caller to drop (back to the frame allocator) or keep. A slot of
    /// a slab this list does not hold, or whose size is not its slab's, is
    /// given back untouched.
    ///
    /// The check is the one of [`SlabList::take_containing`] plus the slot
    /// size: the list id in the page metadata (invariant 9, ids are never
    /// reused) and the page's usage. The slot's offset is a multiple of the
    /// slot size by construction (`HeapSlot`s are made only by frame).
    pub fn dealloc_in(
        &mut self,
        slot: HeapSlot,
        release_if_empty: bool,
    ) -> Result<Option<Slab>, HeapSlot> {
        if slot.large || self.id == 0 {
            return Err(slot);
        }
        let Some(pa) = vaddr_to_paddr(slot.addr & !(PAGE_SIZE - 1)) else {
            return Err(slot);
        };
        let Some(meta) = meta_slot(pa) else {
            return Err(slot);
        };
        let size = meta.aux_size.load(Ordering::Relaxed) as usize;
        if meta.aux_list.load(Ordering::Relaxed) != self.id
            || meta.usage.load(Ordering::Relaxed) != FrameUsage::Slab as u8
            || slot.size != size
        {
            return Err(slot);
        }
        // SAFETY: the slot lies inside the page `pa`, a slab this list owns
        // (its metadata names this list); the slot is no longer in use (its
        // HeapSlot was surrendered) and becomes a free-list node.
        unsafe { linear_ptr::<u32>(slot.addr).write(meta.aux_head.load(Ordering::Relaxed)) };
        meta.aux_head
            .store((slot.addr % PAGE_SIZE) as u32, Ordering::Relaxed);
        let free = meta.aux_free.load(Ordering::Relaxed).wrapping_add(1);
        meta.aux_free.store(free, Ordering::Relaxed);
        if release_if_empty && usize::from(free) * size == PAGE_SIZE {
            return Ok(Some(self.unlink(pa / PAGE_SIZE + 1)));
        }
        Ok(None)
    }

    /// Removes and returns the slab that holds `slot`, if it is in this list.
    pub fn take_containing(&mut self, slot: &HeapSlot) -> Option<Slab> {
        if slot.large {
            return None;
        }
        let pa = slot.page_paddr();
        let meta = meta_slot(pa)?;
        if self.id == 0
            || meta.aux_list.load(Ordering::Relaxed) != self.id
            || meta.usage.load(Ordering::Relaxed) != FrameUsage::Slab as u8
        {
            return None;
        }
        Some(self.unlink(pa / PAGE_SIZE + 1))
    }
}

/// The injected heap policy: which slab serves a request, when to grow and
/// shrink. Safe code; frame checks every slot it returns.
pub trait HeapPolicy: Sync {
    fn alloc(&self, layout: Layout) -> Option<HeapSlot>;
    fn dealloc(&self, slot: HeapSlot);
}

static POLICY: crate::sync::Once<&'static dyn HeapPolicy> = crate::sync::Once::new();

pub(crate) fn inject_policy(policy: &'static dyn HeapPolicy) {
    POLICY.call_once(|| policy);
}

#[cfg(any(target_os = "none", test))]
pub(crate) mod global {
    use super::*;
    use core::alloc::GlobalAlloc;

    /// The kernel's global allocator (host tests call it directly: the
    /// test binary keeps the host's allocator).
    pub(crate) struct FrameHeap;

    // SAFETY: `alloc` returns only slots whose size and alignment fit the
    // layout (invariant 10) and that no one else owns (a slot is handed out
    // once by its slab or is a fresh large block); `dealloc` reconstructs the
    // slot from frame metadata, not from the caller's word.
    unsafe impl GlobalAlloc for FrameHeap {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if let Some(heap) = crate::domain::heap::current_heap() {
                // A driver domain is running: its own heap serves it.
                return match crate::domain::heap::alloc(heap, layout) {
                    Some(slot) if slot.size >= layout.size() && slot.addr % layout.align() == 0 => {
                        linear_ptr(slot.addr)
                    }
                    Some(slot) => {
                        crate::domain::heap::dealloc(slot);
                        core::ptr::null_mut()
                    }
                    None => core::ptr::null_mut(),
                };
            }
            let Some(policy) = POLICY.get() else {
                return core::ptr::null_mut();
            };
            match policy.alloc(layout) {
                Some(slot) if slot.size >= layout.size() && slot.addr % layout.align() == 0 => {
                    linear_ptr(slot.addr)
                }
                Some(slot) => {
                    crate::log_warn!("heap policy returned an unfit slot; refused");
                    policy.dealloc(slot);
                    core::ptr::null_mut()
                }
                None => core::ptr::null_mut(),
            }
        }

        // SAFETY: (the trait's contract) `ptr` came from `alloc`; the slot
        // is rebuilt from frame metadata and handed back to the policy.
        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            let slot = HeapSlot::from_allocated(crate::mm::ptr_to_vaddr(ptr));
            if slot_of_owned(slot.page_paddr())
                .owner
                .load(Ordering::Relaxed)
                != 0
            {
                // A driver domain's slot, whatever domain runs now.
                crate::domain::heap::dealloc(slot);
                return;
            }
            if let Some(policy) = POLICY.get() {
                policy.dealloc(slot);
            }
        }
    }

    #[cfg(target_os = "none")]
    #[global_allocator]
    static HEAP: FrameHeap = FrameHeap;
}
