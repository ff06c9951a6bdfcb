//! The frame allocator mechanism. The *policy* (which free range to hand out)
//! is injected from safe code and can only propose addresses; [`alloc_frames`]
//! turns a proposal into owned frames only after checking each page's
//! metadata (invariant 1).

use core::sync::atomic::{AtomicUsize, Ordering};

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

/// Frames handed out, per [`FrameUsage`] (indexed by its value).
static IN_USE: [AtomicUsize; FrameUsage::HeapLarge as usize + 1] =
    [const { AtomicUsize::new(0) }; FrameUsage::HeapLarge as usize + 1];

fn in_use(usage: FrameUsage) -> usize {
    IN_USE[usage as usize].load(Ordering::Relaxed)
}

/// Frames the kernel holds for itself, by purpose: what /proc/meminfo's
/// Slab, KernelStack and PageTables lines report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelFrames {
    /// Heap slabs (one frame each).
    pub slab: usize,
    /// Heap allocations too large for a slab (whole frames).
    pub heap_large: usize,
    /// Kernel stacks, guard pages included.
    pub kernel_stack: usize,
    /// Page tables of the kernel and of every address space.
    pub page_table: usize,
}

/// The frames the kernel holds now (a snapshot of counters kept by the
/// allocator itself, whatever the policies do).
pub fn kernel_frames() -> KernelFrames {
    KernelFrames {
        slab: in_use(FrameUsage::Slab),
        heap_large: in_use(FrameUsage::HeapLarge),
        kernel_stack: in_use(FrameUsage::KernelStack),
        page_table: in_use(FrameUsage::PageTable),
    }
}

/// Free frames that untyped allocations leave alone (see
/// [`set_untyped_reserve`]).
static UNTYPED_RESERVE: AtomicUsize = AtomicUsize::new(0);

/// Keeps `frames` free frames for the kernel: an untyped allocation
/// ([`crate::mm::UFrame`], [`crate::mm::USegment`]: user and file pages)
/// fails when it would leave fewer free, while the kernel's own
/// allocations (heap slabs and large blocks, kernel stacks, page tables)
/// may use them. This is Linux's min watermark: when user memory runs
/// out, the kernel can still allocate what it needs to kill a process and
/// take its memory back. The check is made before the policy is asked,
/// so concurrent allocations may overshoot it by a few frames.
pub fn set_untyped_reserve(frames: usize) {
    UNTYPED_RESERVE.store(frames, Ordering::Relaxed);
}

/// The reserve set by [`set_untyped_reserve`] (0 at boot).
pub fn untyped_reserve() -> usize {
    UNTYPED_RESERVE.load(Ordering::Relaxed)
}

/// Frames of untyped memory (user pages, file pages) handed out.
#[cfg(test)]
pub(crate) fn untyped_frames() -> usize {
    in_use(FrameUsage::Untyped)
}

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
    if usage == FrameUsage::Untyped
        && policy().free_count() < count.saturating_add(untyped_reserve())
    {
        return None;
    }
    let pfn = policy().alloc(count, 1)?;
    let start = pfn.checked_mul(PAGE_SIZE)?;
    // A proposal running off the end of the address space is refused here,
    // so that no address below wraps (the pages past the metadata array are
    // refused by `slot` in the loop).
    start.checked_add(count.checked_mul(PAGE_SIZE)?)?;
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
    IN_USE[usage as usize].fetch_add(count, Ordering::Relaxed);
    Some(start)
}

/// Returns one frame whose reference count has dropped to zero.
pub(crate) fn free_frame(pa: Paddr) {
    let s = meta::slot_of_owned(pa);
    debug_assert_eq!(s.ref_count.load(Ordering::Acquire), 0);
    let usage = s.usage.swap(FrameUsage::Unused as u8, Ordering::AcqRel);
    if let Some(n) = IN_USE.get(usize::from(usage)) {
        n.fetch_sub(1, Ordering::Relaxed);
    }
    policy().dealloc(pa / PAGE_SIZE, 1);
}

/// Free frames according to the policy.
pub fn free_frames() -> usize {
    POLICY.get().map_or(0, |p| p.free_count())
}
