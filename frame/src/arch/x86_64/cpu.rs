//! Privileged CPU instructions: port I/O, control registers, MSRs, interrupt
//! flag. Nothing here is exported outside `frame`.

use core::arch::asm;

pub const MSR_EFER: u32 = 0xC000_0080;
pub const MSR_STAR: u32 = 0xC000_0081;
pub const MSR_LSTAR: u32 = 0xC000_0082;
pub const MSR_SFMASK: u32 = 0xC000_0084;
pub const MSR_FS_BASE: u32 = 0xC000_0100;
pub const MSR_GS_BASE: u32 = 0xC000_0101;
pub const MSR_APIC_BASE: u32 = 0x1B;

pub fn outb(port: u16, value: u8) {
    // SAFETY: port I/O has no memory-safety effect on Rust state; callers in
    // frame only touch ports of devices frame owns (UART, PIC, PIT, CMOS, exit).
    unsafe {
        asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack, preserves_flags))
    }
}

pub fn inb(port: u16) -> u8 {
    let value: u8;
    // SAFETY: see `outb`.
    unsafe {
        asm!("in al, dx", out("al") value, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    value
}

pub fn outl(port: u16, value: u32) {
    // SAFETY: see `outb`.
    unsafe {
        asm!("out dx, eax", in("dx") port, in("eax") value, options(nomem, nostack, preserves_flags))
    }
}

pub fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: frame reads only architectural MSRs that exist on every x86-64 CPU.
    unsafe {
        asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags))
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// # Safety
/// Writing an MSR can change kernel control flow (LSTAR) or memory
/// attributes; the caller must write a value that keeps the kernel sound.
pub unsafe fn wrmsr(msr: u32, value: u64) {
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        asm!("wrmsr", in("ecx") msr, in("eax") value as u32, in("edx") (value >> 32) as u32,
             options(nostack, preserves_flags))
    }
}

pub fn read_cr2() -> u64 {
    let v: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { asm!("mov {}, cr2", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// # Safety
/// `pml4_paddr` must be the root of a page table that maps the kernel image,
/// the current stack and the direct map exactly as the current one does.
pub unsafe fn write_cr3(pml4_paddr: u64) {
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr3, {}", in(reg) pml4_paddr, options(nostack, preserves_flags)) }
}

pub fn read_cr0() -> u64 {
    let v: u64;
    // SAFETY: reading CR0 has no side effects.
    unsafe { asm!("mov {}, cr0", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

pub fn read_cr4() -> u64 {
    let v: u64;
    // SAFETY: reading CR4 has no side effects.
    unsafe { asm!("mov {}, cr4", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// # Safety
/// The caller must only set or clear feature bits the kernel is prepared for.
pub unsafe fn write_cr0(v: u64) {
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr0, {}", in(reg) v, options(nostack, preserves_flags)) }
}

/// # Safety
/// The caller must only set or clear feature bits the kernel is prepared for.
pub unsafe fn write_cr4(v: u64) {
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr4, {}", in(reg) v, options(nostack, preserves_flags)) }
}

pub fn flush_tlb_page(vaddr: usize) {
    // SAFETY: invalidating a TLB entry only forces a fresh page walk.
    unsafe { asm!("invlpg [{}]", in(reg) vaddr, options(nostack, preserves_flags)) }
}

pub fn interrupts_enabled() -> bool {
    let flags: u64;
    // SAFETY: reading RFLAGS has no side effects.
    unsafe { asm!("pushfq; pop {}", out(reg) flags, options(nomem, preserves_flags)) }
    flags & (1 << 9) != 0
}

pub fn disable_interrupts() {
    // SAFETY: masking interrupts cannot break memory safety.
    unsafe { asm!("cli", options(nomem, nostack)) }
}

pub fn enable_interrupts() {
    // SAFETY: frame installs the IDT before anything enables interrupts.
    unsafe { asm!("sti", options(nomem, nostack)) }
}

/// Enables interrupts and halts until the next one, atomically (the `sti`
/// shadow covers the `hlt`), so a wake-up cannot be lost in between.
pub fn enable_interrupts_and_halt() {
    // SAFETY: see `enable_interrupts`.
    unsafe { asm!("sti; hlt", options(nomem, nostack)) }
}

pub fn halt_forever() -> ! {
    loop {
        disable_interrupts();
        // SAFETY: halting with interrupts masked just parks the CPU.
        unsafe { asm!("hlt", options(nomem, nostack)) }
    }
}

pub fn rdtsc() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: reading the time-stamp counter has no side effects.
    unsafe { asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) }
    (u64::from(hi) << 32) | u64::from(lo)
}

pub struct CpuidResult {
    pub eax: u32,
    pub ebx: u32,
    pub ecx: u32,
    pub edx: u32,
}

pub fn cpuid(leaf: u32, subleaf: u32) -> CpuidResult {
    let r = core::arch::x86_64::__cpuid_count(leaf, subleaf);
    CpuidResult {
        eax: r.eax,
        ebx: r.ebx,
        ecx: r.ecx,
        edx: r.edx,
    }
}

/// Reads the caller's frame pointer, for backtraces.
pub fn frame_pointer() -> usize {
    let rbp: usize;
    // SAFETY: reading RBP has no side effects.
    unsafe { asm!("mov {}, rbp", out(reg) rbp, options(nomem, nostack, preserves_flags)) }
    rbp
}
