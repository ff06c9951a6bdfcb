//! Kernel stacks: contiguous frames mapped in a dedicated kernel region with
//! an unmapped guard page below each, so an overflow faults (and is reported
//! by the double-fault handler) instead of corrupting memory.

use crate::Error;
use crate::index_pool::IndexPool;
use crate::mm::frame::Segment;
use crate::mm::frame_alloc::FrameUsage;
use crate::mm::{PAGE_SIZE, PageFlags, kspace};
use crate::sync::SpinLock;

pub const STACK_PAGES: usize = 16;
const SLOT_SIZE: usize = (STACK_PAGES + 1) * PAGE_SIZE;

const MAX_SLOTS: usize = kspace::KSTACK_REGION_SIZE / SLOT_SIZE;

/// Slots of the kernel-stack region, reused once their stack is gone.
static SLOTS: SpinLock<IndexPool> = SpinLock::new(IndexPool::new(MAX_SLOTS));

pub(crate) struct KernelStack {
    segment: Segment,
    slot: usize,
    base: usize,
}

impl KernelStack {
    pub(crate) fn new() -> Result<KernelStack, Error> {
        let segment =
            Segment::alloc(STACK_PAGES, FrameUsage::KernelStack).ok_or(Error::NoMemory)?;
        let slot = SLOTS.lock_irq_disabled().claim().ok_or(Error::NoMemory)?;
        // Page 0 of the slot is the guard and stays unmapped.
        let base = kspace::KSTACK_REGION_BASE + slot * SLOT_SIZE + PAGE_SIZE;
        // From here on, dropping the stack unmaps whatever was mapped and
        // gives the slot back.
        let stack = KernelStack {
            segment,
            slot,
            base,
        };
        for i in 0..STACK_PAGES {
            kspace::map_kernel_page(
                base + i * PAGE_SIZE,
                stack.segment.paddr() + i * PAGE_SIZE,
                PageFlags::RW,
            )?;
        }
        Ok(stack)
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
        unsafe {
            core::ptr::copy_nonoverlapping(
                words.as_ptr(),
                crate::mm::linear_ptr::<u64>(addr),
                words.len(),
            )
        };
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        // Unmapping flushes each page from the TLB, so the slot holds no
        // stale translation when it is handed out again.
        for i in 0..STACK_PAGES {
            kspace::unmap_kernel_page(self.base + i * PAGE_SIZE);
        }
        SLOTS.lock_irq_disabled().release(self.slot);
        let _ = &self.segment; // frames are freed when the segment drops
    }
}

/// Whether `addr` lies in the guard page of some kernel stack.
pub(crate) fn is_guard_page(addr: usize) -> bool {
    (kspace::KSTACK_REGION_BASE..kspace::KSTACK_REGION_BASE + kspace::KSTACK_REGION_SIZE)
        .contains(&addr)
        && (addr - kspace::KSTACK_REGION_BASE) % SLOT_SIZE < PAGE_SIZE
}
