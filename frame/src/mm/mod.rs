//! Physical memory: the direct map, frame metadata, typed and untyped frames,
//! page tables, user address spaces, and the kernel heap mechanism.

pub(crate) mod frame;
pub mod frame_alloc;
pub mod heap;
#[cfg(target_os = "none")]
pub(crate) mod kspace;
pub(crate) mod meta;
pub(crate) mod page_table;
#[cfg(test)]
mod proptests;
#[cfg(test)]
pub mod sim;
#[cfg(test)]
mod tests;
pub(crate) mod vm_space;

#[cfg(test)]
use core::sync::atomic::AtomicPtr;
use core::sync::atomic::{AtomicUsize, Ordering};

pub use self::frame::{UFrame, USegment};
pub use self::frame_alloc::FrameAllocPolicy;
pub use self::heap::{HeapPolicy, HeapSlot, Slab, SlabList};
pub use self::page_table::PageFlags;
pub use self::vm_space::{USER_SPACE_END, UserFault, VmSpace};

pub type Paddr = usize;
pub type Vaddr = usize;

pub const PAGE_SIZE: usize = 4096;

/// Base of the direct map: physical address `pa` is visible at `LINEAR_BASE + pa`.
/// On bare metal it is fixed; host tests point it at a simulated RAM buffer.
pub(crate) const KERNEL_LINEAR_BASE: usize = 0xffff_8000_0000_0000;
static LINEAR_BASE: AtomicUsize = AtomicUsize::new(KERNEL_LINEAR_BASE);

/// Host tests: the simulated RAM allocation, from which every direct-map
/// pointer is derived so that it keeps the allocation's provenance (Miri then
/// checks each access against the simulated RAM, with no integer-to-pointer
/// casts). Holding it in a static also keeps the allocation reachable.
#[cfg(test)]
static LINEAR_PTR: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());

#[cfg(test)]
pub(crate) fn set_linear_base(base: *mut u8) {
    LINEAR_PTR.store(base, Ordering::Relaxed);
    LINEAR_BASE.store(base.addr(), Ordering::Relaxed);
}

/// The direct-map address of a physical address.
pub(crate) fn paddr_to_vaddr(pa: Paddr) -> Vaddr {
    LINEAR_BASE.load(Ordering::Relaxed) + pa
}

/// A raw pointer to the direct-map address `va`. Creating it is safe;
/// dereferencing it needs the usual justification.
pub(crate) fn linear_ptr<T>(va: Vaddr) -> *mut T {
    #[cfg(test)]
    {
        let base = LINEAR_PTR.load(Ordering::Relaxed);
        base.wrapping_add(va.wrapping_sub(base.addr())).cast()
    }
    #[cfg(not(test))]
    {
        va as *mut T
    }
}

/// A raw pointer to physical address `pa` through the direct map.
pub(crate) fn paddr_to_ptr<T>(pa: Paddr) -> *mut T {
    linear_ptr(paddr_to_vaddr(pa))
}

/// The physical address behind a direct-map address, if it is one.
pub(crate) fn vaddr_to_paddr(va: Vaddr) -> Option<Paddr> {
    va.checked_sub(LINEAR_BASE.load(Ordering::Relaxed))
        .filter(|pa| *pa < meta::max_paddr())
}

pub const fn align_down(v: usize, align: usize) -> usize {
    v & !(align - 1)
}

pub const fn align_up(v: usize, align: usize) -> usize {
    (v + align - 1) & !(align - 1)
}

/// Invalidates a TLB entry for `va` (a no-op on the host).
pub(crate) fn flush_tlb(va: Vaddr) {
    #[cfg(target_os = "none")]
    crate::arch::cpu::flush_tlb_page(va);
    #[cfg(not(target_os = "none"))]
    let _ = va;
}

/// Root of the kernel page table once built (0 before, and on the host).
static KERNEL_ROOT: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn kernel_root() -> Option<Paddr> {
    match KERNEL_ROOT.load(Ordering::Acquire) {
        0 => None,
        pa => Some(pa),
    }
}

pub(crate) fn set_kernel_root(pa: Paddr) {
    KERNEL_ROOT.store(pa, Ordering::Release);
}

/// Whether a kernel virtual address is mapped (best effort, for backtraces).
#[cfg(target_os = "none")]
pub(crate) fn kernel_addr_mapped(va: Vaddr) -> bool {
    kspace::is_mapped(va)
}
