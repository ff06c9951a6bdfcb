//! The instruction layer: privileged CPU instructions (port I/O, control
//! registers, MSRs, the interrupt flag, descriptor tables, FXSAVE) and the
//! entry points of frame's assembly routines (trap entry, user entry,
//! context switch). Nothing here is exported outside `frame`.
//!
//! This is the one part of frame that Miri cannot run: every `unsafe` here
//! wraps inline assembly. Host tests compile `sim::cpu` in its place, a
//! model of the CPU with the same interface, so that everything above this
//! layer runs under Miri. Keep logic out of this file: what is not an
//! instruction belongs in the callers, where the tests reach it.

use core::arch::asm;

use super::fpu::FpuState;
pub use super::regs::*;
use super::trap::{IdtEntry, TrapFrame};

pub fn outb(port: u16, value: u8) {
    // MIRI: not reached: inline assembly (`out`); the host tests' CPU
    // model routes port writes to simulated devices.
    // SAFETY: port I/O has no memory-safety effect on Rust state; callers in
    // frame only touch ports of devices frame owns (UART, PIC, PIT, CMOS, exit, reset).
    unsafe {
        asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack, preserves_flags))
    }
}

pub fn inb(port: u16) -> u8 {
    let value: u8;
    // MIRI: not reached: inline assembly (`in`); see `outb`.
    // SAFETY: see `outb`.
    unsafe {
        asm!("in al, dx", out("al") value, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    value
}

pub fn outw(port: u16, value: u16) {
    // MIRI: not reached: inline assembly (`out`); see `outb`.
    // SAFETY: as `outb`; the wider port accesses serve the PCI
    // configuration ports and device I/O BARs (`io::IoPort`, whose ranges
    // exclude every port frame owns).
    unsafe {
        asm!("out dx, ax", in("dx") port, in("ax") value, options(nomem, nostack, preserves_flags))
    }
}

pub fn outl(port: u16, value: u32) {
    // MIRI: not reached: inline assembly (`out`); see `outb`.
    // SAFETY: see `outw`.
    unsafe {
        asm!("out dx, eax", in("dx") port, in("eax") value, options(nomem, nostack, preserves_flags))
    }
}

pub fn inw(port: u16) -> u16 {
    let value: u16;
    // MIRI: not reached: inline assembly (`in`); see `outb`.
    // SAFETY: see `outw`.
    unsafe {
        asm!("in ax, dx", out("ax") value, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    value
}

pub fn inl(port: u16) -> u32 {
    let value: u32;
    // MIRI: not reached: inline assembly (`in`); see `outb`.
    // SAFETY: see `outw`.
    unsafe {
        asm!("in eax, dx", out("eax") value, in("dx") port, options(nomem, nostack, preserves_flags))
    }
    value
}

pub fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // MIRI: not reached: inline assembly (`rdmsr`); the model keeps MSRs
    // in a table.
    // SAFETY: frame reads only architectural MSRs that exist on every x86-64 CPU.
    unsafe {
        asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags))
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// # Safety
/// Writing an MSR can change kernel control flow (LSTAR) or memory
/// attributes; the caller must write a value that keeps the kernel sound.
// MIRI: not reached: the contract of `wrmsr` (inline assembly); host tests
// call the model's `wrmsr`, which has the same contract.
pub unsafe fn wrmsr(msr: u32, value: u64) {
    // MIRI: not reached: inline assembly (`wrmsr`).
    // SAFETY: the caller upholds this function's contract.
    unsafe {
        asm!("wrmsr", in("ecx") msr, in("eax") value as u32, in("edx") (value >> 32) as u32,
             options(nostack, preserves_flags))
    }
}

/// The FS selector in the low 16 bits, GS in the next 16 (one word, for
/// one comparison on the way back from user mode).
#[inline(always)]
pub fn read_fs_gs_packed() -> u32 {
    let sels: u32;
    // MIRI: not reached: inline assembly (`mov from gs`, `mov from fs`);
    // the model keeps the selectors user code loads.
    // SAFETY: reading segment registers has no side effects. The upper
    // half of a 32-bit destination is implementation dependent (Intel SDM
    // vol. 2, MOV), so GS's is shifted out and FS's is merged in with a
    // 16-bit `or` (the assembler encodes `mov r16, sreg` as the 32-bit
    // form, so that form cannot be used to keep the upper half).
    unsafe {
        asm!("mov {0:e}, gs", "shl {0:e}, 16", "mov {1:e}, fs", "or {0:x}, {1:x}",
             out(reg) sels, out(reg) _, options(nomem, nostack))
    }
    sels
}

/// Loads FS and GS with `fs` and `gs` where each is null or one of the
/// user segments of gdt.rs, else with null (`gdt::user_selector_or_null`):
/// a selector that user code could load is loadable here too, and nothing
/// else is tried, so the load cannot fault.
pub fn load_fs_gs_selectors(fs: u16, gs: u16) {
    use super::gdt::user_selector_or_null;
    let (fs, gs) = (user_selector_or_null(fs), user_selector_or_null(gs));
    // MIRI: not reached: inline assembly (`mov to fs`, `mov to gs`); the
    // model loads them (and checks the descriptors) instead.
    // SAFETY: null or a present DPL-3 data/readable-code descriptor, which
    // CPL 0 may load; the kernel itself uses neither FS nor GS.
    unsafe {
        asm!("mov fs, {0:x}", "mov gs, {1:x}", in(reg) fs, in(reg) gs,
             options(nomem, nostack, preserves_flags))
    }
}

pub fn read_cr2() -> u64 {
    let v: u64;
    // MIRI: not reached: inline assembly (`mov from cr2`).
    // SAFETY: reading CR2 has no side effects.
    unsafe { asm!("mov {}, cr2", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// # Safety
/// `pml4_paddr` must be the root of a page table that maps the kernel image,
/// the current stack and the direct map exactly as the current one does.
// MIRI: not reached: the contract of `write_cr3` (inline assembly); the
// model's `write_cr3` checks it on every switch.
pub unsafe fn write_cr3(pml4_paddr: u64) {
    // MIRI: not reached: inline assembly (`mov to cr3`).
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr3, {}", in(reg) pml4_paddr, options(nostack, preserves_flags)) }
}

pub fn read_cr0() -> u64 {
    let v: u64;
    // MIRI: not reached: inline assembly (`mov from cr0`).
    // SAFETY: reading CR0 has no side effects.
    unsafe { asm!("mov {}, cr0", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

pub fn read_cr4() -> u64 {
    let v: u64;
    // MIRI: not reached: inline assembly (`mov from cr4`).
    // SAFETY: reading CR4 has no side effects.
    unsafe { asm!("mov {}, cr4", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

/// # Safety
/// The caller must only set or clear feature bits the kernel is prepared for.
// MIRI: not reached: the contract of `write_cr0` (inline assembly).
pub unsafe fn write_cr0(v: u64) {
    // MIRI: not reached: inline assembly (`mov to cr0`).
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr0, {}", in(reg) v, options(nostack, preserves_flags)) }
}

/// # Safety
/// The caller must only set or clear feature bits the kernel is prepared for.
// MIRI: not reached: the contract of `write_cr4` (inline assembly).
pub unsafe fn write_cr4(v: u64) {
    // MIRI: not reached: inline assembly (`mov to cr4`).
    // SAFETY: the caller upholds this function's contract.
    unsafe { asm!("mov cr4, {}", in(reg) v, options(nostack, preserves_flags)) }
}

pub fn flush_tlb_page(vaddr: usize) {
    // MIRI: not reached: inline assembly (`invlpg`); the model has no TLB.
    // SAFETY: invalidating a TLB entry only forces a fresh page walk.
    unsafe { asm!("invlpg [{}]", in(reg) vaddr, options(nostack, preserves_flags)) }
}

pub fn rflags() -> u64 {
    let flags: u64;
    // MIRI: not reached: inline assembly (`pushfq; pop`).
    // SAFETY: reading RFLAGS has no side effects.
    unsafe { asm!("pushfq; pop {}", out(reg) flags, options(nomem, preserves_flags)) }
    flags
}

pub fn interrupts_enabled() -> bool {
    rflags() & (1 << 9) != 0
}

pub fn disable_interrupts() {
    // MIRI: not reached: inline assembly (`cli`).
    // SAFETY: masking interrupts cannot break memory safety.
    unsafe { asm!("cli", options(nomem, nostack)) }
}

pub fn enable_interrupts() {
    // MIRI: not reached: inline assembly (`sti`); the model delivers
    // pending interrupts at this point.
    // SAFETY: frame installs the IDT before anything enables interrupts.
    unsafe { asm!("sti", options(nomem, nostack)) }
}

/// Enables interrupts and halts until the next one, atomically (the `sti`
/// shadow covers the `hlt`), so a wake-up cannot be lost in between.
pub fn enable_interrupts_and_halt() {
    // MIRI: not reached: inline assembly (`sti; hlt`); the model waits for
    // a simulated interrupt.
    // SAFETY: see `enable_interrupts`.
    unsafe { asm!("sti; hlt", options(nomem, nostack)) }
}

pub fn halt_forever() -> ! {
    loop {
        disable_interrupts();
        // MIRI: not reached: inline assembly (`hlt`).
        // SAFETY: halting with interrupts masked just parks the CPU.
        unsafe { asm!("hlt", options(nomem, nostack)) }
    }
}

pub fn rdtsc() -> u64 {
    let (lo, hi): (u32, u32);
    // MIRI: not reached: inline assembly (`rdtsc`); the model's clock is
    // simulated time.
    // SAFETY: reading the time-stamp counter has no side effects.
    unsafe { asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) }
    (u64::from(hi) << 32) | u64::from(lo)
}

pub use crate::cpu::CpuidResult;

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
    // MIRI: not reached: inline assembly (`mov from rbp`).
    // SAFETY: reading RBP has no side effects.
    unsafe { asm!("mov {}, rbp", out(reg) rbp, options(nomem, nostack, preserves_flags)) }
    rbp
}

/// Saves the FPU/SSE registers into `state`.
pub fn fxsave(state: &mut FpuState) {
    // MIRI: not reached: inline assembly (`fxsave64`); the model keeps an
    // FXSAVE image as its FPU.
    // SAFETY: `state` is a valid, 16-byte-aligned 512-byte area.
    unsafe { asm!("fxsave64 [{}]", in(reg) state.0.as_mut_ptr(), options(nostack)) }
}

/// Loads the FPU/SSE registers from `state`. Reserved MXCSR bits make it
/// fault (#GP in ring 0), so `state` must come from a checked source.
pub fn fxrstor(state: &FpuState) {
    // MIRI: not reached: inline assembly (`fxrstor64`); the model checks
    // MXCSR as the CPU does.
    // SAFETY: `state` is 16-byte aligned; FXRSTOR faults on reserved MXCSR
    // bits, so `UserContext` never lets clients write raw FPU bytes.
    unsafe { asm!("fxrstor64 [{}]", in(reg) state.0.as_ptr(), options(nostack)) }
}

/// [`fxrstor`] from an image in a byte array, which must be 16-byte
/// aligned (checked: FXRSTOR of an unaligned operand is #GP in ring 0).
pub fn fxrstor_bytes(image: &[u8; 512]) {
    assert!(
        image.as_ptr().addr().is_multiple_of(16),
        "invariant: an FXRSTOR image is 16-byte aligned"
    );
    // MIRI: not reached: inline assembly (`fxrstor64`); the model checks
    // the alignment and MXCSR as the CPU does.
    // SAFETY: `image` is 512 readable bytes, 16-byte aligned (checked);
    // the caller checked its MXCSR, as for `fxrstor`.
    unsafe { asm!("fxrstor64 [{}]", in(reg) image.as_ptr(), options(nostack)) }
}

#[repr(C, packed)]
struct DescriptorPointer {
    limit: u16,
    base: u64,
}

/// Loads `gdt` into GDTR, reloads CS with `code` and DS, ES, SS with
/// `data`, and loads the task register with `tss`.
///
/// # Safety
/// `gdt` must hold a 64-bit kernel code descriptor at `code`, a data
/// descriptor at `data` and an available 64-bit TSS descriptor at `tss`
/// whose TSS lives as long as the kernel.
// MIRI: not reached: the contract of `load_gdt` (inline assembly); the
// model's `load_gdt` decodes the table and checks it.
pub unsafe fn load_gdt(gdt: &'static [u64], code: u16, data: u16, tss: u16) {
    let ptr = DescriptorPointer {
        limit: (size_of_val(gdt) - 1) as u16,
        base: gdt.as_ptr() as u64,
    };
    // MIRI: not reached: inline assembly (`lgdt`, a far return into the
    // new CS, segment loads, `ltr`).
    // SAFETY: the caller vouches for the table; the selectors reloaded
    // below index its kernel code/data descriptors and the TSS descriptor.
    unsafe {
        asm!(
            "lgdt [{ptr}]",
            "push {cs}",
            "lea {tmp}, [rip + 2f]",
            "push {tmp}",
            "retfq",
            "2:",
            "mov ds, {ds:x}",
            "mov es, {ds:x}",
            "mov ss, {ds:x}",
            "ltr {tss:x}",
            ptr = in(reg) &ptr,
            cs = in(reg) u64::from(code),
            tmp = out(reg) _,
            ds = in(reg) data,
            tss = in(reg) tss,
        );
    }
}

/// Loads `idt` into IDTR.
///
/// # Safety
/// Every present gate of `idt` must lead to a handler that can take that
/// vector, on a stack the gate's IST index (if any) provides.
// MIRI: not reached: the contract of `load_idt` (inline assembly); the
// model's `load_idt` checks every gate.
pub unsafe fn load_idt(idt: &'static [IdtEntry; 256]) {
    let ptr = DescriptorPointer {
        limit: (size_of_val(idt) - 1) as u16,
        base: idt.as_ptr() as u64,
    };
    // MIRI: not reached: inline assembly (`lidt`).
    // SAFETY: the caller vouches for the gates; the table is 'static.
    unsafe { asm!("lidt [{}]", in(reg) &ptr, options(nostack)) };
}

// MIRI: not reached: the assembly routines of trap.rs and switch.rs, which
// host tests replace with the model's trap and context-switch machinery.
unsafe extern "C" {
    static __trellis_trap_stubs: u8;
    fn __trellis_syscall_entry();
    /// Not an `extern "C"` function: it preserves only RBX, RBP and RSP
    /// and returns the ticks spent in user mode in RAX (called through
    /// [`enter_user`]'s `asm!`, which says so).
    fn __trellis_enter_user(frame: *mut TrapFrame);
    fn __trellis_context_switch(save_rsp: *mut usize, next_rsp: usize);
    fn __trellis_task_trampoline();
    fn __trellis_isolated_call(
        rec: *mut crate::domain::Recovery,
        stack_top: usize,
        entry: extern "C-unwind" fn(*mut u8),
        ctx: *mut u8,
    ) -> u64;
    fn __trellis_isolated_abort(saved_rsp: usize) -> !;
}

/// Where the 256 trap stubs start (16 bytes each).
pub fn trap_stubs() -> u64 {
    &raw const __trellis_trap_stubs as u64
}

/// The `syscall` entry point (for MSR LSTAR).
pub fn syscall_entry() -> u64 {
    __trellis_syscall_entry as *const () as u64
}

/// Where a new task starts: the return address of its initial stack frame.
pub fn task_trampoline() -> u64 {
    __trellis_task_trampoline as *const () as u64
}

/// Runs `frame` in user mode (`sysretq` when RCX = RIP, R11 = RFLAGS and
/// TF is clear, else `iretq`) until the next trap or `syscall` from ring
/// 3, which the entry code saves into `frame`; then returns.
///
/// # Safety
/// `frame` must be a sanitised user state (user CS/SS, canonical RIP/RSP,
/// RFLAGS with IF and no privileged bit), TSS.RSP0 and the syscall entry's
/// context pointer must point just past it, and interrupts must be off.
// MIRI: not reached: the contract of the user-mode entry (assembly); the model's `enter_user` checks it.
#[inline(always)]
pub unsafe fn enter_user(frame: &mut TrapFrame) -> u64 {
    // MIRI: not reached: calls the assembly routine that does `iretq`.
    // The routine (trap.rs) saves RBX and RBP on this stack and restores them, with
    // RSP, when the next trap or system call from user mode resumes it at
    // `__trellis_return_to_kernel`; every other general register, the
    // vector registers and the flags hold whatever user mode or the entry
    // path left in them, which the clobbers below declare (`clobber_abi`
    // for the caller-saved ones and the FPU/SSE state, R12-R15 by name), so
    // the compiler keeps nothing live in them across the call. Memory is
    // not declared untouched: the CPU writes the next trap into `frame`.
    // The routine pushes below RSP (no `nostack`), and leaves DF clear
    // (SFMASK on `syscall`, `popfq` of 0x2 on a trap). The x87 control
    // word and MXCSR may be user mode's, as they always were after a
    // return from user mode: the kernel is built soft-float and never
    // uses them. RAX returns the ticks spent in user mode.
    let user_cycles: u64;
    // SAFETY: the caller upholds this function's contract; the clobbers
    // declare every register the routine does not preserve (above).
    unsafe {
        core::arch::asm!(
            "call {entry}",
            entry = sym __trellis_enter_user,
            in("rdi") frame as *mut TrapFrame,
            lateout("rax") user_cycles,
            out("r12") _,
            out("r13") _,
            out("r14") _,
            out("r15") _,
            clobber_abi("C"),
        )
    }
    user_cycles
}

/// Saves the current task's stack pointer into `*save_rsp` and resumes the
/// task whose saved stack pointer is `next_rsp`.
///
/// # Safety
/// `next_rsp` must be a stack pointer saved by this function (or built by
/// `switch::initial_stack`) on a live stack that no CPU is running on, and
/// `save_rsp` must stay valid until this task is resumed.
// MIRI: not reached: the contract of the context switch (assembly); the
// model's `context_switch` checks it.
pub unsafe fn context_switch(save_rsp: *mut usize, next_rsp: usize) {
    // MIRI: not reached: calls the assembly routine that swaps stacks.
    // SAFETY: the caller upholds this function's contract.
    unsafe { __trellis_context_switch(save_rsp, next_rsp) }
}

/// Calls `entry(ctx)` on the stack whose top is `stack_top`, after saving
/// the callee-saved registers on this stack and this stack pointer in
/// `rec.saved_rsp`; returns false when `entry` returns, true when
/// [`isolated_abort`] resumed the saved state instead.
///
/// # Safety
/// `stack_top` must be the 16-byte-aligned top of a mapped stack nothing
/// else uses during the call; `rec` must stay valid until this returns;
/// `entry` must be safe to call with `ctx`.
// MIRI: not reached: the contract of the isolated call (assembly); the
// model's `isolated_call` checks it.
pub unsafe fn isolated_call(
    rec: *mut crate::domain::Recovery,
    stack_top: usize,
    entry: extern "C-unwind" fn(*mut u8),
    ctx: *mut u8,
) -> bool {
    // MIRI: not reached: calls the assembly routine that swaps stacks.
    // SAFETY: the caller upholds this function's contract.
    unsafe { __trellis_isolated_call(rec, stack_top, entry, ctx) != 0 }
}

/// Resumes the state an [`isolated_call`] saved at `saved_rsp`, making
/// that call return true; the frames in between are abandoned.
///
/// # Safety
/// `saved_rsp` must be the value an [`isolated_call`] that has not
/// returned yet stored, on the current task; nothing in the abandoned
/// frames may need to run (destructors, unlocks).
// MIRI: not reached: the contract of the abort (assembly); the model
// unwinds instead.
pub unsafe fn isolated_abort(saved_rsp: usize) -> ! {
    // MIRI: not reached: calls the assembly routine that swaps stacks.
    // SAFETY: the caller upholds this function's contract.
    unsafe { __trellis_isolated_abort(saved_rsp) }
}
