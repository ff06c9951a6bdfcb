//! The I/O APIC: routes legacy ISA interrupts (here: COM1 on IRQ 4) to
//! local-APIC vectors. QEMU's q35/pc place it at 0xfec00000 and identity-map
//! ISA IRQ 4 to GSI 4 (no MADT override), edge-triggered, active high.

use crate::mm::{linear_ptr, paddr_to_vaddr};

pub(crate) const IOAPIC_PADDR: usize = 0xfec0_0000;
const IOREGSEL: usize = 0x00;
const IOWIN: usize = 0x10;

fn write(reg: u32, value: u32) {
    let base = paddr_to_vaddr(IOAPIC_PADDR);
    // SAFETY: the direct map covers the low 4 GiB, which includes the
    // I/O APIC's MMIO window; IOREGSEL/IOWIN is its register interface.
    unsafe {
        core::ptr::write_volatile(linear_ptr::<u32>(base + IOREGSEL), reg);
        core::ptr::write_volatile(linear_ptr::<u32>(base + IOWIN), value);
    }
}

/// Routes GSI `gsi` to `vector` on the boot CPU (APIC id 0), unmasked.
pub fn route(gsi: u32, vector: u8) {
    write(0x10 + 2 * gsi + 1, 0); // destination: APIC id 0
    write(0x10 + 2 * gsi, u32::from(vector)); // fixed, physical, edge, high
}

/// Routes GSI `gsi` to `vector` on the boot CPU, level-triggered, active
/// high, unmasked (PCI INTx on q35: PIRQ A–H reach pins 16–23).
pub fn route_level(gsi: u32, vector: u8) {
    write(0x10 + 2 * gsi + 1, 0);
    write(0x10 + 2 * gsi, u32::from(vector) | 1 << 15);
}
