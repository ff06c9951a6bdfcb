//! The kernel page table: a direct map of all physical memory (NX), the
//! kernel image with per-section rights (text RX, rodata R, data RW+NX), and
//! a region for guarded kernel stacks. Every upper-half root entry is
//! allocated up front so that user page tables can share them.

use super::image::{self, KERNEL_VMA};
use super::page_table::{CachePolicy, PageTable, Privilege, translate};
use super::{KERNEL_LINEAR_BASE, PAGE_SIZE, Paddr, PageFlags, Vaddr, set_kernel_root};
use crate::Error;
use crate::sync::{Once, SpinLock};

pub const KSTACK_REGION_BASE: Vaddr = 0xffff_c000_0000_0000;
pub const KSTACK_REGION_SIZE: usize = 1 << 39;

static KERNEL_PT: Once<SpinLock<PageTable, 59>> = Once::new();

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
    let image = image::sections();
    for ((start, end), flags) in [
        (image.text, PageFlags::RX),
        (image.rodata, PageFlags::R),
        (image.data, PageFlags::RW),
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

/// Maps one page of device registers at `va`, uncached (PCD|PWT) and
/// never executable; for `io::IoMem` and frame's own MMIO (MSI-X tables).
pub(crate) fn map_kernel_mmio_page(va: Vaddr, pa: Paddr) -> Result<(), Error> {
    let old = kernel_pt().lock_irq_disabled().map(
        va,
        pa,
        PageFlags::RW,
        Privilege::Kernel,
        CachePolicy::Uncacheable,
    )?;
    assert!(
        old.is_none(),
        "kernel MMIO mapping at {va:#x} replaced silently"
    );
    Ok(())
}

pub(crate) fn unmap_kernel_page(va: Vaddr) {
    kernel_pt().lock_irq_disabled().unmap(va);
}

/// Whether `va` is mapped in the kernel page table (best effort: while the
/// table's lock is held elsewhere only the direct map of RAM and the image
/// count as mapped).
pub(crate) fn is_mapped(va: Vaddr) -> bool {
    if (KERNEL_LINEAR_BASE..KERNEL_LINEAR_BASE + super::meta::max_paddr()).contains(&va)
        || va >= KERNEL_VMA
    {
        return true;
    }
    match KERNEL_PT.get().and_then(|pt| pt.try_lock()) {
        // The lock keeps the tables from being freed during the walk.
        Some(pt) => translate(pt.root_paddr(), va).is_some(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::kernel_root;
    use super::*;
    use crate::sim;

    #[test]
    fn kernel_page_table_maps_image_sections_with_their_rights() {
        sim::run(move || {
            let image = image::sections();
            let pt = kernel_pt().lock();
            for ((start, end), flags) in [
                (image.text, PageFlags::RX),
                (image.rodata, PageFlags::R),
                (image.data, PageFlags::RW),
            ] {
                for va in [start, end - PAGE_SIZE] {
                    assert_eq!(pt.query(va), Some((va - KERNEL_VMA, flags)), "{va:#x}");
                }
            }
            assert_eq!(pt.query(image.data.1), None, "past the image");
            assert_eq!(pt.query(image.text.0 - PAGE_SIZE), None, "boot stub");
        })
    }

    #[test]
    fn kernel_page_table_direct_maps_the_low_4_gib_and_shares_its_top_half() {
        sim::run(move || {
            let root = kernel_root().unwrap();
            for pa in [0, 0x1234_5678, sim::SIM_BYTES, (1 << 32) - 1] {
                assert_eq!(translate(root, KERNEL_LINEAR_BASE + pa), Some(pa));
                assert!(is_mapped(KERNEL_LINEAR_BASE + pa));
            }
            assert_eq!(translate(root, KERNEL_LINEAR_BASE + (1 << 32)), None);
            // Every top-half root entry exists, so user page tables that copy
            // them see later kernel mappings too.
            let va = KSTACK_REGION_BASE + KSTACK_REGION_SIZE - PAGE_SIZE;
            assert!(!is_mapped(va));
            let vm = PageTable::new_with_kernel_half(Some(root)).unwrap();
            map_kernel_page(va, 0x5000, PageFlags::RW).unwrap();
            assert_eq!(translate(vm.root_paddr(), va + 8), Some(0x5008));
            assert!(is_mapped(va));
            unmap_kernel_page(va);
            assert_eq!(translate(vm.root_paddr(), va), None);
        })
    }
}
