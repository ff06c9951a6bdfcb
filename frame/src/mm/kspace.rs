//! The kernel page table: a direct map of all physical memory (NX), the
//! kernel image with per-section rights (text RX, rodata R, data RW+NX), and
//! a region for guarded kernel stacks. Every upper-half root entry is
//! allocated up front so that user page tables can share them.

use super::page_table::{CachePolicy, PageTable, Privilege};
use super::{KERNEL_LINEAR_BASE, PAGE_SIZE, Paddr, PageFlags, Vaddr, set_kernel_root};
use crate::Error;
use crate::sync::{Once, SpinLock};

pub const KSTACK_REGION_BASE: Vaddr = 0xffff_c000_0000_0000;
pub const KSTACK_REGION_SIZE: usize = 1 << 39;
const KERNEL_VMA: usize = 0xffff_ffff_8000_0000;

static KERNEL_PT: Once<SpinLock<PageTable, 59>> = Once::new();

unsafe extern "C" {
    static __kernel_text_start: u8;
    static __kernel_text_end: u8;
    static __kernel_rodata_start: u8;
    static __kernel_rodata_end: u8;
    static __kernel_data_start: u8;
    static __kernel_end: u8;
}

fn sym(s: &u8) -> usize {
    s as *const u8 as usize
}

/// Builds the kernel page table and switches to it.
pub(crate) fn init(max_paddr: Paddr) -> Result<(), Error> {
    let pt = PageTable::new_empty()?;
    for i in 256..512usize {
        let va = 0xffff_0000_0000_0000 | (i << 39);
        pt.ensure_root_entry(va)?;
    }
    // Direct map: at least the low 4 GiB (MMIO of the APIC and friends lives
    // there), and all of RAM.
    let end = max_paddr.max(1 << 32);
    const HUGE: usize = 2 * 1024 * 1024;
    let mut pa = 0;
    while pa < end {
        pt.map_huge_kernel(KERNEL_LINEAR_BASE + pa, pa, PageFlags::RW)?;
        pa += HUGE;
    }
    // SAFETY: taking addresses of linker-script symbols.
    let (ts, te, rs, re, ds, de) = unsafe {
        (
            sym(&__kernel_text_start),
            sym(&__kernel_text_end),
            sym(&__kernel_rodata_start),
            sym(&__kernel_rodata_end),
            sym(&__kernel_data_start),
            sym(&__kernel_end),
        )
    };
    for (start, end, flags) in [
        (ts, te, PageFlags::RX),
        (rs, re, PageFlags::R),
        (ds, de, PageFlags::RW),
    ] {
        let mut va = start;
        while va < end {
            pt.map(
                va,
                va - KERNEL_VMA,
                flags,
                Privilege::Kernel,
                CachePolicy::WriteBack,
            )?;
            va += PAGE_SIZE;
        }
    }
    let root = pt.root_paddr();
    // SAFETY: the new table maps the kernel image at the same addresses, the
    // direct map (where the boot stack's frames are also visible) and the
    // current boot stack (in .bss), so execution continues unchanged.
    unsafe { crate::arch::cpu::write_cr3(root as u64) };
    set_kernel_root(root);
    KERNEL_PT.call_once(|| SpinLock::new(pt));
    Ok(())
}

fn kernel_pt() -> &'static SpinLock<PageTable, 59> {
    KERNEL_PT.get().expect("kernel page table not built yet")
}

/// Maps one kernel page (stacks, I/O memory) at `va`.
pub(crate) fn map_kernel_page(va: Vaddr, pa: Paddr, flags: PageFlags) -> Result<(), Error> {
    let old = kernel_pt().lock_irq_disabled().map(
        va,
        pa,
        flags,
        Privilege::Kernel,
        CachePolicy::WriteBack,
    )?;
    assert!(old.is_none(), "kernel mapping at {va:#x} replaced silently");
    Ok(())
}

pub(crate) fn unmap_kernel_page(va: Vaddr) {
    kernel_pt().lock_irq_disabled().unmap(va);
}

/// Whether `va` is mapped in the kernel page table (best effort: a held
/// lock or a huge mapping in the direct map count as "mapped" only for the
/// direct map and the image).
pub(crate) fn is_mapped(va: Vaddr) -> bool {
    if (KERNEL_LINEAR_BASE..KERNEL_LINEAR_BASE + super::meta::max_paddr()).contains(&va)
        || va >= KERNEL_VMA
    {
        return true;
    }
    match KERNEL_PT.get().and_then(|pt| pt.try_lock()) {
        Some(pt) => pt.query(va & !(PAGE_SIZE - 1)).is_some(),
        None => false,
    }
}
