//! The frame allocator mechanism. The *policy* (which free range to hand out)
//! is injected from safe code and can only propose addresses; [`alloc_frames`]
//! turns a proposal into owned frames only after checking each page's
//! metadata (invariant 1).

use core::sync::atomic::Ordering;

use super::meta::{self, slot};
use super::{PAGE_SIZE, Paddr};
use crate::sync::Once;

/// What a physical page is used for, recorded in its metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum FrameUsage {
    /// Free: may be handed out by the allocator.
    Unused = 0,
    /// Firmware, kernel image, initrd, metadata: never allocated.
    Reserved = 1,
    PageTable = 2,
    KernelStack = 3,
    /// User pages, page cache, DMA buffers: contents are plain bytes.
    Untyped = 4,
    Slab = 5,
    HeapLarge = 6,
}

/// A physical frame allocator policy. Frame numbers are `paddr / 4096`.
///
/// Implementations are safe code: a wrong answer cannot break memory safety,
/// because every proposal is checked against the frame metadata.
pub trait FrameAllocPolicy: Sync {
    /// Adds `count` free frames starting at `start_pfn`.
    fn add_free(&self, start_pfn: usize, count: usize);
    /// Proposes `count` contiguous free frames whose first frame number is a
    /// multiple of `align` (a power of two).
    fn alloc(&self, count: usize, align: usize) -> Option<usize>;
    /// Returns frames previously proposed by `alloc`.
    fn dealloc(&self, start_pfn: usize, count: usize);
    /// Number of free frames.
    fn free_count(&self) -> usize;
}

static POLICY: Once<&'static dyn FrameAllocPolicy> = Once::new();

pub(crate) fn inject_policy(policy: &'static dyn FrameAllocPolicy) {
    POLICY.call_once(|| policy);
}

fn policy() -> &'static dyn FrameAllocPolicy {
    *POLICY
        .get()
        .expect("frame allocator used before a policy was injected")
}

/// Hands `[start, end)` (page-aligned) to the policy as free memory.
pub(crate) fn add_free_range(start: Paddr, end: Paddr) {
    if end <= start {
        return;
    }
    meta::mark_unused(start, end);
    policy().add_free(start / PAGE_SIZE, (end - start) / PAGE_SIZE);
}

/// Allocates `count` contiguous frames for `usage`, each with a reference
/// count of 1. Returns the first physical address.
pub(crate) fn alloc_frames(count: usize, usage: FrameUsage) -> Option<Paddr> {
    debug_assert!(usage != FrameUsage::Unused && usage != FrameUsage::Reserved);
    if count == 0 {
        return None;
    }
    let pfn = policy().alloc(count, 1)?;
    let start = pfn.checked_mul(PAGE_SIZE)?;
    // Invariant 1: claim every page, or none.
    for i in 0..count {
        let ok = slot(start + i * PAGE_SIZE).is_some_and(|s| {
            s.usage.load(Ordering::Acquire) == FrameUsage::Unused as u8
                && s.ref_count
                    .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
        });
        if !ok {
            for j in 0..i {
                meta::slot_of_owned(start + j * PAGE_SIZE)
                    .ref_count
                    .store(0, Ordering::Release);
            }
            crate::log_warn!(
                "frame allocator policy proposed a used frame {:#x}; refused",
                start + i * PAGE_SIZE
            );
            return None;
        }
    }
    for i in 0..count {
        meta::slot_of_owned(start + i * PAGE_SIZE)
            .usage
            .store(usage as u8, Ordering::Release);
    }
    Some(start)
}

/// Returns one frame whose reference count has dropped to zero.
pub(crate) fn free_frame(pa: Paddr) {
    let s = meta::slot_of_owned(pa);
    debug_assert_eq!(s.ref_count.load(Ordering::Acquire), 0);
    s.usage.store(FrameUsage::Unused as u8, Ordering::Release);
    policy().dealloc(pa / PAGE_SIZE, 1);
}

/// Free frames according to the policy.
pub fn free_frames() -> usize {
    POLICY.get().map_or(0, |p| p.free_count())
}
