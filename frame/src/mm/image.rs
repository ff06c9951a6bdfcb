//! The kernel image in memory: where the linker script put its sections.
//!
//! The kernel proper is linked at [`KERNEL_VMA`] plus its physical load
//! address; the boot page tables and the kernel page table map it there.
//! Host tests get a simulated image with the same shape, placed in the
//! simulated RAM (`sim`).

use super::{Paddr, Vaddr};

/// Where the kernel proper is linked: physical address `pa` of the image
/// is at `KERNEL_VMA + pa`.
pub(crate) const KERNEL_VMA: Vaddr = 0xffff_ffff_8000_0000;

/// Section bounds of the kernel image (virtual addresses, page aligned;
/// `ksyms` lies inside `rodata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sections {
    pub text: (Vaddr, Vaddr),
    pub rodata: (Vaddr, Vaddr),
    /// `.data` and `.bss`: up to the end of the image.
    pub data: (Vaddr, Vaddr),
    /// The symbol table `xtask` fills after linking (see `backtrace`).
    pub ksyms: (Vaddr, Vaddr),
}

impl Sections {
    /// One past the last physical byte of the image.
    pub(crate) fn phys_end(&self) -> Paddr {
        self.data.1 - KERNEL_VMA
    }
}

/// The running kernel's sections, from the linker script's symbols.
#[cfg(not(test))]
pub(crate) fn sections() -> Sections {
    // Only the addresses of these symbols are used, never their contents,
    // so they are declared as bytes and taken with `&raw const` (safe).
    // MIRI: not reached: symbols of the linker script (linker.ld), which
    // the host tests' build has no counterpart of; they use the simulated
    // image of sim/mod.rs.
    unsafe extern "C" {
        static __kernel_text_start: u8;
        static __kernel_text_end: u8;
        static __kernel_rodata_start: u8;
        static __kernel_rodata_end: u8;
        static __kernel_data_start: u8;
        static __kernel_end: u8;
        static __ksyms_start: u8;
        static __ksyms_end: u8;
    }
    let a = |p: *const u8| p as Vaddr;
    Sections {
        text: (
            a(&raw const __kernel_text_start),
            a(&raw const __kernel_text_end),
        ),
        rodata: (
            a(&raw const __kernel_rodata_start),
            a(&raw const __kernel_rodata_end),
        ),
        data: (
            a(&raw const __kernel_data_start),
            a(&raw const __kernel_end),
        ),
        ksyms: (a(&raw const __ksyms_start), a(&raw const __ksyms_end)),
    }
}

/// Host tests: the simulated kernel image.
#[cfg(test)]
pub(crate) fn sections() -> Sections {
    crate::sim::IMAGE
}
