//! FPU/SSE: enabled for user programs; the kernel itself is soft-float and
//! never touches the registers, so user state is saved and restored around
//! each stay in user mode.

use super::cpu::{read_cr0, read_cr4, write_cr0, write_cr4};

/// The 512-byte FXSAVE area.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct FpuState(pub [u8; 512]);

/// The initial state: FCW = 0x037f (all exceptions masked), MXCSR =
/// 0x1f80, everything else 0; the reset values Linux gives a new process
/// and a signal handler.
pub static INIT: FpuState = {
    let mut area = [0u8; 512];
    area[0] = 0x7f;
    area[1] = 0x03;
    area[24] = 0x80;
    area[25] = 0x1f;
    FpuState(area)
};

/// The MXCSR_MASK to assume before the CPU has reported its own (an
/// FXSAVE image never saved yet): every MXCSR bit but DAZ (bit 6) and
/// the reserved ones from bit 16 up.
pub const DEFAULT_MXCSR_MASK: u32 = 0xffbf;

impl Default for FpuState {
    fn default() -> Self {
        INIT
    }
}

pub fn init() {
    // SAFETY: CR0.EM=0 and MP=1 enable x87/SSE; CR0.NE reports x87 errors
    // as #MF (not the legacy FERR#/IRQ 13 path); CR4.OSFXSR/OSXMMEXCPT
    // enable FXSAVE and SSE exceptions. The kernel is compiled soft-float,
    // so no kernel code depends on these registers.
    unsafe {
        write_cr0((read_cr0() & !(1 << 2)) | (1 << 1) | (1 << 5));
        write_cr4(read_cr4() | (1 << 9) | (1 << 10));
    }
}

pub fn save(state: &mut FpuState) {
    super::cpu::fxsave(state);
}

pub fn restore(state: &FpuState) {
    super::cpu::fxrstor(state);
}
