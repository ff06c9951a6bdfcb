//! x86-64 specifics. Everything outside `arch` uses only this module's small
//! interface, so another architecture can slot in later.

pub mod apic;
pub mod boot;
pub mod cpu;
pub mod gdt;
pub mod serial;
pub mod trap;
pub mod qemu;
pub mod cmos;
pub mod fpu;
pub mod switch;
