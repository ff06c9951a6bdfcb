//! The kernel heap policy: power-of-two size classes served from slabs,
//! larger requests from whole frames. Each class keeps a list of slabs with
//! free slots and a list of full ones; an emptied slab is returned to the
//! frame allocator once the class has another partially free slab.

use core::alloc::Layout;

use frame::mm::heap::{MAX_SLOT, MIN_SLOT};
use frame::mm::{HeapPolicy, HeapSlot, Slab, SlabList};
use frame::sync::{SpinLock, level};

const NR_CLASSES: usize = (MAX_SLOT / MIN_SLOT).trailing_zeros() as usize + 1;

struct SizeClass {
    partial: SlabList,
    full: SlabList,
}

pub struct SlabHeap {
    classes: [SpinLock<SizeClass, { level::HEAP }>; NR_CLASSES],
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
                })
            }; NR_CLASSES],
        }
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
            return HeapSlot::alloc_large(size).ok();
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
        Some(slot)
    }

    fn dealloc(&self, slot: HeapSlot) {
        if slot.is_large() {
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
        let slab = class
            .full
            .take_containing(&slot)
            .or_else(|| class.partial.take_containing(&slot));
        let Some(mut slab) = slab else {
            frame::log_warn!("heap: freed a slot of no known slab; leaked");
            return;
        };
        if slab.dealloc(slot).is_err() {
            frame::log_warn!("heap: slot does not belong to its slab; leaked");
        }
        if slab.is_empty() && !class.partial.is_empty() {
            drop(slab); // back to the frame allocator
        } else {
            class.partial.push(slab);
        }
    }
}
