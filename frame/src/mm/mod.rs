//! Physical memory: the direct map, frame metadata, typed and untyped frames,
//! page tables, user address spaces, and the kernel heap mechanism.

pub(crate) mod frame;
pub mod frame_alloc;
pub mod heap;
#[cfg(any(target_os = "none", test))]
pub(crate) mod image;
#[cfg(any(target_os = "none", test))]
pub(crate) mod kspace;
pub(crate) mod meta;
pub(crate) mod page_table;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
pub(crate) mod vm_space;

use core::sync::atomic::{AtomicUsize, Ordering};

pub use self::frame::{UFrame, USegment};
pub use self::frame_alloc::FrameAllocPolicy;
pub use self::heap::{HeapPolicy, HeapSlot, Slab, SlabList};
pub use self::page_table::PageFlags;
pub use self::vm_space::{USER_SPACE_END, UserFault, VmSpace};

pub type Paddr = usize;
pub type Vaddr = usize;

pub const PAGE_SIZE: usize = 4096;

/// Base of the direct map: physical address `pa` is visible at
/// `KERNEL_LINEAR_BASE + pa`, on bare metal and in host tests alike.
pub(crate) const KERNEL_LINEAR_BASE: usize = 0xffff_8000_0000_0000;

/// The direct-map address of a physical address.
pub(crate) fn paddr_to_vaddr(pa: Paddr) -> Vaddr {
    KERNEL_LINEAR_BASE + pa
}

/// A raw pointer to the kernel virtual address `va` (the direct map, the
/// kernel image or a kernel stack). Creating it is safe; dereferencing it
/// needs the usual justification. On bare metal this is the address
/// itself; host tests translate it the way the MMU would, through the
/// simulated kernel page table into the simulated RAM (`sim::kernel_ptr`).
pub(crate) fn linear_ptr<T>(va: Vaddr) -> *mut T {
    #[cfg(test)]
    {
        crate::sim::kernel_ptr(va)
    }
    #[cfg(not(test))]
    {
        va as *mut T
    }
}

/// The kernel virtual address a pointer from [`linear_ptr`] stands for
/// (the address itself on bare metal; host tests map it back from the
/// simulated RAM).
pub(crate) fn ptr_to_vaddr<T>(ptr: *const T) -> Vaddr {
    #[cfg(test)]
    {
        crate::sim::kernel_vaddr(ptr.cast())
    }
    #[cfg(not(test))]
    {
        ptr.addr()
    }
}

/// A raw pointer to physical address `pa` through the direct map.
pub(crate) fn paddr_to_ptr<T>(pa: Paddr) -> *mut T {
    linear_ptr(paddr_to_vaddr(pa))
}

/// The physical address behind a direct-map address, if it is one.
pub(crate) fn vaddr_to_paddr(va: Vaddr) -> Option<Paddr> {
    va.checked_sub(KERNEL_LINEAR_BASE)
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
    #[cfg(any(target_os = "none", test))]
    crate::arch::cpu::flush_tlb_page(va);
    #[cfg(not(any(target_os = "none", test)))]
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
#[cfg(any(target_os = "none", test))]
pub(crate) fn kernel_addr_mapped(va: Vaddr) -> bool {
    kspace::is_mapped(va)
}
