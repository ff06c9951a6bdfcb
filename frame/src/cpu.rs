//! Read-only facts about the CPU, for /proc/cpuinfo and friends.

/// The registers `cpuid` returns for a leaf and sub-leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuidResult {
    pub eax: u32,
    pub ebx: u32,
    pub ecx: u32,
    pub edx: u32,
}

/// Executes `cpuid`: no side effects, any leaf may be asked.
pub fn cpuid(leaf: u32, subleaf: u32) -> CpuidResult {
    crate::arch::cpu::cpuid(leaf, subleaf)
}

/// The time-stamp counter's frequency, calibrated at boot (0 before).
pub fn tsc_hz() -> u64 {
    crate::arch::apic::tsc_hz()
}
