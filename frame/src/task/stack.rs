//! Kernel stacks: contiguous frames mapped in a dedicated kernel region with
//! an unmapped guard page below each, so an overflow faults (and is reported
//! by the double-fault handler) instead of corrupting memory.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;
use crate::mm::frame::Segment;
use crate::mm::frame_alloc::FrameUsage;
use crate::mm::{PAGE_SIZE, PageFlags, kspace};

pub const STACK_PAGES: usize = 16;
const SLOT_SIZE: usize = (STACK_PAGES + 1) * PAGE_SIZE;

static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

pub(crate) struct KernelStack {
    segment: Segment,
    base: usize,
}

impl KernelStack {
    pub(crate) fn new() -> Result<KernelStack, Error> {
        let segment =
            Segment::alloc(STACK_PAGES, FrameUsage::KernelStack).ok_or(Error::NoMemory)?;
        let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
        if slot >= kspace::KSTACK_REGION_SIZE / SLOT_SIZE {
            return Err(Error::NoMemory);
        }
        // Page 0 of the slot is the guard and stays unmapped.
        let base = kspace::KSTACK_REGION_BASE + slot * SLOT_SIZE + PAGE_SIZE;
        for i in 0..STACK_PAGES {
            kspace::map_kernel_page(
                base + i * PAGE_SIZE,
                segment.paddr() + i * PAGE_SIZE,
                PageFlags::RW,
            )?;
        }
        Ok(KernelStack { segment, base })
    }

    pub(crate) fn top(&self) -> usize {
        self.base + STACK_PAGES * PAGE_SIZE
    }

    /// Writes the initial switch frame of a new task.
    pub(crate) fn write_words(&self, addr: usize, words: &[u64]) {
        let end = addr + words.len() * 8;
        assert!(
            addr >= self.base && end <= self.top(),
            "initial frame outside the stack"
        );
        // SAFETY: the range lies inside this stack's mapped pages (checked),
        // which no task runs on yet.
        unsafe { core::ptr::copy_nonoverlapping(words.as_ptr(), addr as *mut u64, words.len()) };
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        for i in 0..STACK_PAGES {
            kspace::unmap_kernel_page(self.base + i * PAGE_SIZE);
        }
        let _ = &self.segment; // frames are freed when the segment drops
    }
}

/// Whether `addr` lies in the guard page of some kernel stack.
pub(crate) fn is_guard_page(addr: usize) -> bool {
    (kspace::KSTACK_REGION_BASE..kspace::KSTACK_REGION_BASE + kspace::KSTACK_REGION_SIZE)
        .contains(&addr)
        && (addr - kspace::KSTACK_REGION_BASE) % SLOT_SIZE < PAGE_SIZE
}
