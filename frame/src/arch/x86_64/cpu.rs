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

/// The FS and GS selectors (user code may load them).
pub fn read_fs_gs_selectors() -> (u16, u16) {
    let (fs, gs): (u16, u16);
    // SAFETY: reading segment registers has no side effects.
    unsafe {
        asm!("mov {0:x}, fs", "mov {1:x}, gs", out(reg) fs, out(reg) gs,
             options(nomem, nostack, preserves_flags))
    }
    (fs, gs)
}

/// Loads FS and GS with `fs` and `gs` if each is null or one of the user
/// segments of gdt.rs (any RPL), else with null: a selector that user code
/// could load is loadable here too, and nothing else is tried, so the load
/// cannot fault.
pub fn load_fs_gs_selectors(fs: u16, gs: u16) {
    let ok = |s: u16| {
        let index = s & !3;
        if index == super::gdt::USER_DS & !3 || index == super::gdt::USER_CS & !3 {
            s
        } else {
            0
        }
    };
    let (fs, gs) = (ok(fs), ok(gs));
    // SAFETY: null or a present DPL-3 data/readable-code descriptor, which
    // CPL 0 may load; the kernel itself uses neither FS nor GS.
    unsafe {
        asm!("mov fs, {0:x}", "mov gs, {1:x}", in(reg) fs, in(reg) gs,
             options(nomem, nostack, preserves_flags))
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

pub fn rflags() -> u64 {
    let flags: u64;
    // SAFETY: reading RFLAGS has no side effects.
    unsafe { asm!("pushfq; pop {}", out(reg) flags, options(nomem, preserves_flags)) }
    flags
}

pub fn interrupts_enabled() -> bool {
    rflags() & (1 << 9) != 0
}

/// Entry hygiene (docs/soundness.md), checked on every entry to ring 0:
/// no user-controlled flag — TF, DF, IOPL, NT, AC — is set in the kernel.
pub fn assert_entry_flags() {
    const USER_CONTROLLED: u64 = (1 << 8) | (1 << 10) | (3 << 12) | (1 << 14) | (1 << 18);
    let f = rflags();
    assert!(
        f & USER_CONTROLLED == 0,
        "invariant: ring 0 runs with TF, DF, IOPL, NT and AC clear (RFLAGS {f:#x})"
    );
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
