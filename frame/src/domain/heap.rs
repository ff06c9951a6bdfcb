//! Per-domain heaps: while a domain runs, the global allocator serves it
//! from slabs and large blocks that belong to that domain alone; a free is
//! routed by the owner tag of the page (`MetaSlot::owner`), whatever domain
//! runs at the time. When the domain dies its heap is freed wholesale:
//! every page goes back to the frame allocator, live slots included, and no
//! destructor runs (invariant 11, docs/soundness.md).
//!
//! The heaps live in a fixed table ([`MAX_DOMAINS`] entries), so that the
//! allocator never allocates to find one. An entry's tag is its index + 1
//! (0 is the kernel heap); each incarnation of an entry has a fresh `id`,
//! never reused, that its slabs (through their list ids) and large blocks
//! (through `aux_list`) carry, so a stale tag never reaches a new heap's
//! pages.
//!
//! Which heap serves an allocation is a per-task value: `run_on` sets it
//! for the call (and restores the caller's on return and on fault), the
//! scheduler saves it in the task at a switch away and restores it when the
//! task runs again. Interrupt handlers always allocate from the kernel heap,
//! and so does frame's own bookkeeping ([`with_kernel_heap`]).

use core::alloc::Layout;
use core::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};

use crate::mm::PAGE_SIZE;
use crate::mm::frame_alloc::FrameUsage;
use crate::mm::heap::{HeapSlot, MAX_SLOT, MIN_SLOT, Slab, SlabList};
use crate::mm::meta::slot_of_owned;
use crate::sync::{SpinLock, level};

/// How many domains may be alive at once (the owner tag is one byte).
pub const MAX_DOMAINS: usize = 64;

const NR_CLASSES: usize = (MAX_SLOT / MIN_SLOT).trailing_zeros() as usize + 1;

struct Class {
    partial: SlabList,
    full: SlabList,
}

struct HeapState {
    /// 0: the entry is free.
    id: u64,
    /// Most pages the heap may hold.
    quota_pages: usize,
    /// Pages the heap holds (slabs and large blocks).
    pages: usize,
    /// Bytes of slots handed out and not freed.
    live_bytes: usize,
    classes: [Class; NR_CLASSES],
    /// Large blocks, linked through the metadata of their first page
    /// (`prev`/`next`: page frame number + 1, 0 for none).
    large: usize,
}

static HEAPS: [SpinLock<HeapState, { level::HEAP }>; MAX_DOMAINS] = [const {
    SpinLock::new(HeapState {
        id: 0,
        quota_pages: 0,
        pages: 0,
        live_bytes: 0,
        classes: [const {
            Class {
                partial: SlabList::new(),
                full: SlabList::new(),
            }
        }; NR_CLASSES],
        large: 0,
    })
}; MAX_DOMAINS];

/// Each entry's `pages`, copied under its lock after every change, so that
/// [`DomainHeap::bytes`] (read after every domain call) takes no lock.
static PAGES: [AtomicUsize; MAX_DOMAINS] = [const { AtomicUsize::new(0) }; MAX_DOMAINS];

/// Publishes entry `index`'s page count (its lock is held).
fn publish_pages(index: usize, pages: usize) {
    PAGES[index].store(pages, Ordering::Relaxed);
}

/// Gives an emptied slab of heap `index` (whose page count is `pages`) back
/// to the frame allocator, untagged.
fn free_empty_slab(slab: Slab, pages: &mut usize, index: usize) {
    slot_of_owned(slab.paddr()).owner.store(0, Ordering::Relaxed);
    *pages -= 1;
    publish_pages(index, *pages);
    drop(slab);
}

/// Heap ids; never reused (a 64-bit counter).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The heap allocations go to on this CPU: table index + 1, 0 for the
/// kernel's. Part of the running task's context (saved at a switch).
static CURRENT: AtomicU8 = AtomicU8::new(0);

/// A domain's heap: its table entry and incarnation.
#[derive(Debug)]
pub(crate) struct DomainHeap {
    index: usize,
    id: u64,
}

/// Usage of one domain heap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapUsage {
    /// Pages (slab pages and large blocks) the heap holds.
    pub pages: usize,
    /// Bytes of slots handed out and not freed.
    pub live_bytes: usize,
}

impl DomainHeap {
    /// A new, empty heap that may hold at most `quota_bytes` (rounded up to
    /// whole pages); `None` if [`MAX_DOMAINS`] heaps are alive.
    pub(crate) fn new(quota_bytes: usize) -> Option<DomainHeap> {
        let quota_pages = quota_bytes.div_ceil(PAGE_SIZE);
        for (index, entry) in HEAPS.iter().enumerate() {
            let mut st = entry.lock_irq_disabled();
            if st.id == 0 {
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                assert!(id != u64::MAX, "domain heap ids exhausted");
                st.id = id;
                st.quota_pages = quota_pages;
                st.pages = 0;
                st.live_bytes = 0;
                st.large = 0;
                publish_pages(index, st.pages);
                return Some(DomainHeap { index, id });
            }
        }
        None
    }

    /// The owner tag of this heap's pages.
    pub(crate) fn tag(&self) -> u8 {
        (self.index + 1) as u8
    }

    pub(crate) fn usage(&self) -> HeapUsage {
        let st = HEAPS[self.index].lock_irq_disabled();
        if st.id != self.id {
            return HeapUsage::default();
        }
        HeapUsage {
            pages: st.pages,
            live_bytes: st.live_bytes,
        }
    }

    /// Bytes of memory the heap holds from the frame allocator.
    pub(crate) fn bytes(&self) -> u64 {
        (PAGES[self.index].load(Ordering::Relaxed) * PAGE_SIZE) as u64
    }
}

impl Drop for DomainHeap {
    /// Frees the heap wholesale: every page back to the frame allocator,
    /// live slots included, no destructor run. The caller (the domain)
    /// has made sure nothing outside the dead domain points into it.
    fn drop(&mut self) {
        assert!(
            CURRENT.load(Ordering::Relaxed) != self.tag(),
            "a domain heap freed while it serves allocations"
        );
        let mut st = HEAPS[self.index].lock_irq_disabled();
        if st.id != self.id {
            return;
        }
        for class in st.classes.iter_mut() {
            while let Some(slab) = class.partial.pop() {
                slab.free_wholesale();
            }
            while let Some(slab) = class.full.pop() {
                slab.free_wholesale();
            }
        }
        while st.large != 0 {
            let pa = (st.large - 1) * PAGE_SIZE;
            unlink_large(&mut st, pa);
            HeapSlot::large_at(pa).free_large();
        }
        st.id = 0;
        st.pages = 0;
        st.live_bytes = 0;
        publish_pages(self.index, st.pages);
    }
}

/// The heap that serves allocations right now, if it is a domain's: not in
/// interrupt context, where everything goes to the kernel heap.
pub(crate) fn current_heap() -> Option<usize> {
    let tag = CURRENT.load(Ordering::Relaxed);
    if tag == 0 || crate::irq::in_interrupt() {
        return None;
    }
    Some(usize::from(tag) - 1)
}

/// Makes `tag`'s heap (0: the kernel's) serve allocations; returns the
/// previous tag.
pub(crate) fn switch_to(tag: u8) -> u8 {
    CURRENT.swap(tag, Ordering::Relaxed)
}

/// Runs `f` with allocations charged to the kernel heap, whatever domain is
/// current: for frame's own bookkeeping (registrations, queues) made on a
/// domain's behalf, which must outlive the domain's heap. Not public: a
/// domain must not escape its heap and quota.
pub(crate) fn with_kernel_heap<R>(f: impl FnOnce() -> R) -> R {
    let prev = switch_to(0);
    let r = f();
    switch_to(prev);
    r
}

/// The tag of the domain whose heap serves allocations now (0: the kernel
/// heap, always in interrupt context).
pub(crate) fn current_tag() -> u8 {
    current_heap().map_or(0, |i| (i + 1) as u8)
}

fn class_of(size: usize) -> Option<(usize, usize)> {
    let slot = size.max(MIN_SLOT).checked_next_power_of_two()?;
    (slot <= MAX_SLOT).then(|| (slot, (slot / MIN_SLOT).trailing_zeros() as usize))
}

fn link_of(pa: usize) -> usize {
    pa / PAGE_SIZE + 1
}

fn unlink_large(st: &mut HeapState, pa: usize) {
    let meta = slot_of_owned(pa);
    let prev = meta.prev.swap(0, Ordering::Relaxed);
    let next = meta.next.swap(0, Ordering::Relaxed);
    if prev != 0 {
        slot_of_owned((prev - 1) * PAGE_SIZE)
            .next
            .store(next, Ordering::Relaxed);
    } else {
        st.large = next;
    }
    if next != 0 {
        slot_of_owned((next - 1) * PAGE_SIZE)
            .prev
            .store(prev, Ordering::Relaxed);
    }
    meta.aux_list.store(0, Ordering::Relaxed);
    meta.owner.store(0, Ordering::Relaxed);
    st.pages -= meta.aux_size.load(Ordering::Relaxed) as usize;
}

/// Serves `layout` from heap `index`; `None` if the quota or memory runs
/// out.
pub(crate) fn alloc(index: usize, layout: Layout) -> Option<HeapSlot> {
    let entry = HEAPS.get(index)?;
    let tag = (index + 1) as u8;
    let size = layout.size().max(layout.align());
    let mut st = entry.lock_irq_disabled();
    if st.id == 0 {
        return None;
    }
    let st = &mut *st;
    let Some((slot_size, c)) = class_of(size) else {
        let nframes = size.div_ceil(PAGE_SIZE).max(1);
        if st.pages.checked_add(nframes)? > st.quota_pages {
            return None;
        }
        let slot = HeapSlot::alloc_large(size).ok()?;
        let pa = slot.paddr();
        let meta = slot_of_owned(pa);
        meta.owner.store(tag, Ordering::Relaxed);
        meta.aux_list.store(st.id, Ordering::Relaxed);
        meta.prev.store(0, Ordering::Relaxed);
        meta.next.store(st.large, Ordering::Relaxed);
        if st.large != 0 {
            slot_of_owned((st.large - 1) * PAGE_SIZE)
                .prev
                .store(link_of(pa), Ordering::Relaxed);
        }
        st.large = link_of(pa);
        st.pages += nframes;
        st.live_bytes += slot.size();
        publish_pages(index, st.pages);
        return Some(slot);
    };
    let class = st.classes.get_mut(c)?;
    if class.partial.is_empty() {
        if st.pages >= st.quota_pages {
            return None;
        }
        let slab = Slab::new(slot_size).ok()?;
        slot_of_owned(slab.paddr())
            .owner
            .store(tag, Ordering::Relaxed);
        class.partial.push(slab);
        st.pages += 1;
        publish_pages(index, st.pages);
    }
    let (slot, now_full) = class.partial.alloc_front()?;
    if now_full && let Some(slab) = class.partial.pop() {
        class.full.push(slab);
    }
    st.live_bytes += slot.size();
    Some(slot)
}

/// Puts back a slot of a domain heap (found by its page's owner tag). A
/// slot of no live slab or block of that heap is leaked with a warning.
pub(crate) fn dealloc(slot: HeapSlot) {
    let pa = slot.paddr();
    let tag = slot_of_owned(pa).owner.load(Ordering::Relaxed);
    let Some(entry) = usize::from(tag).checked_sub(1).and_then(|i| HEAPS.get(i)) else {
        crate::log_warn!("domain heap: freed a slot of no domain heap; leaked");
        return;
    };
    let mut st = entry.lock_irq_disabled();
    let st = &mut *st;
    if slot.is_large() {
        let meta = slot_of_owned(pa);
        if st.id == 0
            || meta.aux_list.load(Ordering::Relaxed) != st.id
            || meta.usage.load(Ordering::Relaxed) != FrameUsage::HeapLarge as u8
        {
            crate::log_warn!("domain heap: freed a block of no live heap; leaked");
            return;
        }
        unlink_large(st, pa);
        publish_pages(usize::from(tag) - 1, st.pages);
        st.live_bytes -= slot.size();
        slot.free_large();
        return;
    }
    let Some(class) = class_of(slot.size()).and_then(|(_, c)| st.classes.get_mut(c)) else {
        return;
    };
    let size = slot.size();
    // Usually the slab has other free slots and stays in `partial`: the
    // slot goes back in place; an emptied slab is unlinked to be freed.
    let slot = match class.partial.dealloc_in(slot, true) {
        Ok(emptied) => {
            st.live_bytes -= size;
            if let Some(slab) = emptied {
                free_empty_slab(slab, &mut st.pages, usize::from(tag) - 1);
            }
            return;
        }
        Err(slot) => slot,
    };
    let Some(mut slab) = class.full.take_containing(&slot) else {
        crate::log_warn!("domain heap: freed a slot of no live slab; leaked");
        return;
    };
    // Cannot fail: `take_containing` matched the slot's page (a slot given
    // back would only be leaked).
    let _ = slab.dealloc(slot);
    st.live_bytes -= size;
    if slab.is_empty() {
        free_empty_slab(slab, &mut st.pages, usize::from(tag) - 1);
    } else {
        class.partial.push(slab);
    }
}

/// The tag of the heap that owns the page `pa` (0: the kernel's).
#[cfg(test)]
pub(crate) fn owner_of(pa: usize) -> u8 {
    slot_of_owned(pa).owner.load(Ordering::Relaxed)
}
