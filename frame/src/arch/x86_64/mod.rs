//! x86-64 specifics. Everything outside `arch` uses only this module's small
//! interface, so another architecture can slot in later.

pub mod apic;
pub mod boot;
pub mod cmos;
pub mod cpu;
pub mod fpu;
pub mod gdt;
pub mod ioapic;
pub mod qemu;
pub mod serial;
pub mod switch;
pub mod trap;
