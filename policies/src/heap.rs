//! The kernel heap policy: power-of-two size classes served from slabs,
//! larger requests from whole frames. Each class keeps a list of slabs with
//! free slots and a list of full ones; an emptied slab is returned to the
//! frame allocator once the class has another partially free slab.

use core::alloc::Layout;
use core::sync::atomic::{AtomicUsize, Ordering};

use frame::mm::heap::{MAX_SLOT, MIN_SLOT};
use frame::mm::{HeapPolicy, HeapSlot, PAGE_SIZE, Slab, SlabList};
use frame::sync::{SpinLock, level};

/// Number of size classes (caches): slots of 16, 32, ... 2048 bytes.
pub const NR_CLASSES: usize = (MAX_SLOT / MIN_SLOT).trailing_zeros() as usize + 1;

struct SizeClass {
    partial: SlabList,
    full: SlabList,
    /// Slots handed out and not yet returned.
    active: usize,
}

pub struct SlabHeap {
    classes: [SpinLock<SizeClass, { level::HEAP }>; NR_CLASSES],
    /// Large blocks (whole frames) handed out, and their frames.
    large_blocks: AtomicUsize,
    large_frames: AtomicUsize,
}

/// The usage of one cache, in the terms of /proc/slabinfo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Object (slot) size in bytes.
    pub obj_size: usize,
    /// Objects in use.
    pub active_objs: usize,
    /// Objects the cache's slabs hold, used or free.
    pub num_objs: usize,
    /// Slabs (one page each) the cache holds.
    pub num_slabs: usize,
}

impl Default for SlabHeap {
    fn default() -> Self {
        Self::new()
    }
}

impl SlabHeap {
    pub const fn new() -> Self {
        SlabHeap {
            classes: [const {
                SpinLock::new(SizeClass {
                    partial: SlabList::new(),
                    full: SlabList::new(),
                    active: 0,
                })
            }; NR_CLASSES],
            large_blocks: AtomicUsize::new(0),
            large_frames: AtomicUsize::new(0),
        }
    }

    /// Usage of each slab cache, smallest objects first.
    pub fn caches(&self) -> [CacheUsage; NR_CLASSES] {
        let mut out = [CacheUsage::default(); NR_CLASSES];
        for (i, (class, u)) in self.classes.iter().zip(out.iter_mut()).enumerate() {
            let class = class.lock_irq_disabled();
            let obj_size = MIN_SLOT << i;
            let num_slabs = class.partial.len() + class.full.len();
            *u = CacheUsage {
                obj_size,
                active_objs: class.active,
                num_objs: num_slabs * (PAGE_SIZE / obj_size),
                num_slabs,
            };
        }
        out
    }

    /// Large allocations (whole frames): `(blocks, frames)` in use.
    pub fn large(&self) -> (usize, usize) {
        (
            self.large_blocks.load(Ordering::Relaxed),
            self.large_frames.load(Ordering::Relaxed),
        )
    }
}

/// Slot size and class index for a request, or `None` if it needs frames.
fn class_of(size: usize) -> Option<(usize, usize)> {
    let slot = size.max(MIN_SLOT).checked_next_power_of_two()?;
    (slot <= MAX_SLOT).then(|| (slot, (slot / MIN_SLOT).trailing_zeros() as usize))
}

impl HeapPolicy for SlabHeap {
    fn alloc(&self, layout: Layout) -> Option<HeapSlot> {
        let size = layout.size().max(layout.align());
        let Some((slot_size, idx)) = class_of(size) else {
            let slot = HeapSlot::alloc_large(size).ok()?;
            self.large_blocks.fetch_add(1, Ordering::Relaxed);
            self.large_frames
                .fetch_add(slot.size() / PAGE_SIZE, Ordering::Relaxed);
            return Some(slot);
        };
        let mut class = self.classes.get(idx)?.lock_irq_disabled();
        if class.partial.is_empty() {
            let slab = Slab::new(slot_size).ok()?;
            class.partial.push(slab);
        }
        let (slot, now_full) = class.partial.alloc_front()?;
        if now_full && let Some(slab) = class.partial.pop() {
            class.full.push(slab);
        }
        class.active += 1;
        Some(slot)
    }

    fn dealloc(&self, slot: HeapSlot) {
        if slot.is_large() {
            self.large_blocks.fetch_sub(1, Ordering::Relaxed);
            self.large_frames
                .fetch_sub(slot.size() / PAGE_SIZE, Ordering::Relaxed);
            slot.free_large();
            return;
        }
        let Some((_, idx)) = class_of(slot.size()) else {
            return;
        };
        let Some(class) = self.classes.get(idx) else {
            return;
        };
        let mut class = class.lock_irq_disabled();
        let class = &mut *class;
        // Usually the slot's slab has other free slots: it is freed in
        // place. An emptied slab goes back to the frame allocator if the
        // class keeps another partial one.
        let release = class.partial.len() > 1;
        let slot = match class.partial.dealloc_in(slot, release) {
            Ok(emptied) => {
                class.active = class.active.saturating_sub(1);
                drop(emptied); // back to the frame allocator
                return;
            }
            Err(slot) => slot,
        };
        // Otherwise the slab was full: it moves to the partial list.
        let Some(mut slab) = class.full.take_containing(&slot) else {
            frame::log_warn!("heap: freed a slot of no known slab; leaked");
            return;
        };
        if slab.dealloc(slot).is_err() {
            frame::log_warn!("heap: slot does not belong to its slab; leaked");
        } else {
            class.active = class.active.saturating_sub(1);
        }
        if slab.is_empty() && !class.partial.is_empty() {
            drop(slab); // back to the frame allocator
        } else {
            class.partial.push(slab);
        }
    }
}
