//! x86-64 specifics. Everything outside `arch` uses only this module's small
//! interface, so another architecture can slot in later.
//!
//! `cpu` is the instruction layer. Host tests replace it with the CPU model
//! of `sim::cpu` (same interface), and leave out the boot stub, which is
//! assembly only; everything else here runs on the host, under Miri.

pub mod apic;
#[cfg(target_os = "none")]
pub mod boot;
pub mod cmos;
#[cfg(target_os = "none")]
pub mod cpu;
#[cfg(not(target_os = "none"))]
pub use crate::sim::cpu;
pub mod fpu;
pub mod gdt;
pub mod ioapic;
pub mod qemu;
pub mod regs;
pub mod serial;
pub mod switch;
#[cfg(test)]
mod tests;
pub mod trap;
#[cfg(target_os = "none")]
pub mod usercopy;
