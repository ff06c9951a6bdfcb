//! User-mode execution.
//!
//! [`UserContext`] is the *insensitive* part of the CPU state: general
//! registers, the user FS/GS bases, the safe RFLAGS bits and the FPU/SSE
//! state. Clients may set any of it; [`UserContext::execute`] re-establishes
//! user segment selectors, forces interrupts on, strips privileged RFLAGS
//! bits and refuses non-canonical addresses before entering ring 3
//! (invariant 2).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::cpu;
use crate::arch::fpu::{self, FpuState};
use crate::arch::gdt::{USER_CS, USER_DS};
use crate::arch::trap::{
    RFLAGS_FIXED, RFLAGS_IF, SYSCALL_VECTOR, TrapFrame, USER_RFLAGS_MASK, enter_user,
};
use crate::irq::disable_local;
use crate::mm::VmSpace;
use crate::sync::SpinLock;

/// Why user mode was left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReturnReason {
    /// The program executed `syscall`; number and arguments are in the context.
    Syscall,
    /// A CPU exception (page fault, invalid opcode, ...).
    Exception(CpuException),
    /// A device or timer interrupt; the program can simply be resumed.
    Interrupt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuException {
    pub vector: u8,
    pub error_code: u64,
    /// CR2 for a page fault, else 0.
    pub fault_addr: u64,
}

impl CpuException {
    pub const DIVIDE: u8 = 0;
    pub const DEBUG: u8 = 1;
    pub const BREAKPOINT: u8 = 3;
    pub const OVERFLOW: u8 = 4;
    pub const INVALID_OPCODE: u8 = 6;
    pub const GENERAL_PROTECTION: u8 = 13;
    pub const STACK_FAULT: u8 = 12;
    pub const PAGE_FAULT: u8 = 14;
    pub const X87: u8 = 16;
    pub const ALIGNMENT: u8 = 17;
    pub const SIMD: u8 = 19;

    /// For a page fault: the access was a write.
    pub fn is_write(&self) -> bool {
        self.error_code & 2 != 0
    }

    /// For a page fault: the page was present (a protection violation).
    pub fn is_protection(&self) -> bool {
        self.error_code & 1 != 0
    }

    pub fn is_instruction_fetch(&self) -> bool {
        self.error_code & 16 != 0
    }
}

/// General-purpose registers of a user thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct GeneralRegs {
    pub rax: u64,
    pub rbx: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    pub rbp: u64,
    pub rsp: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rip: u64,
    pub rflags: u64,
}

#[repr(C, align(16))]
pub struct UserContext {
    frame: TrapFrame,
    fs_base: u64,
    gs_base: u64,
    /// The FS and GS selectors user code left loaded (`mov %eax,%fs`),
    /// FS in the low 16 bits and GS above, as [`cpu::read_fs_gs_packed`]
    /// reads them back on every exit from user mode; 0 unless it loaded
    /// one.
    seg_sels: u32,
    /// Names this FS/GS state (selectors and bases): a fresh value whenever
    /// a setter changes it, and for every copy.
    seg_tag: u64,
    /// Names this FPU state: a fresh value whenever the kernel changes it
    /// (execve, signal delivery, rt_sigreturn), and for every copy.
    fpu_tag: u64,
    /// The FXSAVE image, in an area of its own whose address does not
    /// change when the context moves: while the registers hold a newer
    /// state ([`FPU_OWNER`]), the next load of another image saves them
    /// here first.
    fpu: Arc<FpuArea>,
    /// See [`UserContext::user_cycles`].
    user_cycles: u64,
}

/// A context's FXSAVE image. Only touched with interrupts off: by the
/// context itself, and by the save of the registers into the area of the
/// context that ran last ([`save_owner`]), which may run from any context.
struct FpuArea(SpinLock<FpuImage>);

/// The FXSAVE image, or the initial state (`init`: what execve and signal
/// delivery install, loaded from [`fpu::INIT`] without copying it here).
#[derive(Clone, Copy)]
struct FpuImage {
    state: FpuState,
    init: bool,
}

impl FpuImage {
    /// The state the image stands for.
    fn current(&self) -> &FpuState {
        if self.init { &fpu::INIT } else { &self.state }
    }
}

impl FpuArea {
    fn new(state: FpuState) -> Arc<FpuArea> {
        Arc::new(FpuArea(SpinLock::new(FpuImage { state, init: false })))
    }

    fn new_init() -> Arc<FpuArea> {
        Arc::new(FpuArea(SpinLock::new(FpuImage {
            state: fpu::INIT,
            init: true,
        })))
    }
}

/// The tag of the FPU state the FPU/SSE registers hold now (0: none known).
/// The kernel is soft-float and nothing but user mode changes these
/// registers, and nothing but [`UserContext::execute`] loads them, so while
/// the tag matches, the state need not be loaded again: a thread that
/// makes system calls restores its FPU state only when another context ran
/// in between (Linux too reloads the registers only after a switch, never
/// per system call). One CPU; per-CPU with SMP.
static FPU_LOADED: AtomicU64 = AtomicU64::new(0);
/// The tag of the context whose user mode ran last and changed the
/// registers (0: none), so that they are newer than its image; its image
/// area is [`FPU_OWNER`]. The registers are saved only when something needs
/// them: before another context's image is loaded (the first entry to
/// user mode after a switch to another thread), and when the kernel reads
/// or replaces this context's image (signal delivery, fork, rt_sigreturn,
/// execve). A system call saves nothing (Linux too saves the registers at
/// a context switch, never per system call). The other context's image is
/// always loaded before its user mode runs (no `#NM` trap, no lazy
/// restore: the registers of one program are never visible to another).
/// Nonzero only while `FPU_LOADED` holds the same tag.
static FPU_OWNER_TAG: AtomicU64 = AtomicU64::new(0);
static FPU_OWNER: SpinLock<Option<Arc<FpuArea>>> = SpinLock::new(None);
/// The tag of the FS/GS state the CPU holds now (0: none known). Like the
/// FPU registers, nothing but [`UserContext::execute`] loads FS and GS, and
/// what user code does to them is read back on every exit (a selector load
/// is recorded in the context), so while the tag matches, the context's
/// state is what the CPU has: a system call makes no segment or MSR write
/// (Linux does none on that path either).
static SEG_LOADED: AtomicU64 = AtomicU64::new(0);
static NEXT_FPU_TAG: AtomicU64 = AtomicU64::new(1);

fn fresh_fpu_tag() -> u64 {
    NEXT_FPU_TAG.fetch_add(1, Ordering::Relaxed)
}

impl Clone for UserContext {
    fn clone(&self) -> Self {
        UserContext {
            frame: self.frame,
            fs_base: self.fs_base,
            gs_base: self.gs_base,
            seg_sels: self.seg_sels,
            seg_tag: fresh_fpu_tag(),
            fpu_tag: fresh_fpu_tag(),
            fpu: FpuArea::new(self.fpu_state()),
            user_cycles: 0,
        }
    }
}

impl Drop for UserContext {
    fn drop(&mut self) {
        let _irq = disable_local();
        disown_fpu(self.fpu_tag);
    }
}

/// Saves the FPU/SSE registers into the image of the context that ran
/// last, if they are newer than it. Interrupts must be off (the caller's
/// guard) so that no other context runs in between.
fn save_owner() {
    if FPU_OWNER_TAG.load(Ordering::Relaxed) == 0 {
        return;
    }
    FPU_OWNER_TAG.store(0, Ordering::Relaxed);
    if let Some(area) = FPU_OWNER.lock().as_ref() {
        let mut image = area.0.lock();
        fpu::save(&mut image.state);
        image.init = false;
    }
}

/// Forgets that the registers are newer than the image of the context
/// tagged `tag` (its state is being replaced or dropped). Interrupts off.
/// The area stays referenced from [`FPU_OWNER`] until another context
/// owns the registers (so that a context that owns them again need not
/// take a new reference); with the tag cleared nothing is saved into it.
fn disown_fpu(tag: u64) {
    if FPU_OWNER_TAG.load(Ordering::Relaxed) == tag {
        FPU_OWNER_TAG.store(0, Ordering::Relaxed);
    }
}

impl Default for UserContext {
    fn default() -> Self {
        Self::new()
    }
}

fn canonical_user(addr: u64) -> bool {
    addr < 0x0000_8000_0000_0000
}

impl UserContext {
    pub fn new() -> Self {
        let frame = TrapFrame {
            cs: u64::from(USER_CS),
            ss: u64::from(USER_DS),
            rflags: RFLAGS_IF | RFLAGS_FIXED,
            ..TrapFrame::default()
        };
        UserContext {
            frame,
            fs_base: 0,
            gs_base: 0,
            seg_sels: 0,
            seg_tag: fresh_fpu_tag(),
            fpu_tag: fresh_fpu_tag(),
            fpu: FpuArea::new_init(),
            user_cycles: 0,
        }
    }

    pub fn general_regs(&self) -> GeneralRegs {
        let f = &self.frame;
        GeneralRegs {
            rax: f.rax,
            rbx: f.rbx,
            rcx: f.rcx,
            rdx: f.rdx,
            rsi: f.rsi,
            rdi: f.rdi,
            rbp: f.rbp,
            rsp: f.rsp,
            r8: f.r8,
            r9: f.r9,
            r10: f.r10,
            r11: f.r11,
            r12: f.r12,
            r13: f.r13,
            r14: f.r14,
            r15: f.r15,
            rip: f.rip,
            rflags: f.rflags & USER_RFLAGS_MASK,
        }
    }

    pub fn set_general_regs(&mut self, r: &GeneralRegs) {
        let f = &mut self.frame;
        (f.rax, f.rbx, f.rcx, f.rdx, f.rsi, f.rdi, f.rbp, f.rsp) =
            (r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp);
        (f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15) =
            (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15);
        f.rip = r.rip;
        f.rflags = (r.rflags & USER_RFLAGS_MASK) | RFLAGS_IF | RFLAGS_FIXED;
    }

    pub fn rip(&self) -> u64 {
        self.frame.rip
    }
    pub fn set_rip(&mut self, v: u64) {
        self.frame.rip = v
    }
    pub fn rsp(&self) -> u64 {
        self.frame.rsp
    }
    pub fn set_rsp(&mut self, v: u64) {
        self.frame.rsp = v
    }
    pub fn rax(&self) -> u64 {
        self.frame.rax
    }
    pub fn set_rax(&mut self, v: u64) {
        self.frame.rax = v
    }
    pub fn set_rdi(&mut self, v: u64) {
        self.frame.rdi = v
    }
    pub fn set_rsi(&mut self, v: u64) {
        self.frame.rsi = v
    }
    pub fn set_rdx(&mut self, v: u64) {
        self.frame.rdx = v
    }
    pub fn fs_base(&self) -> u64 {
        self.fs_base
    }
    pub fn gs_base(&self) -> u64 {
        self.gs_base
    }

    /// Sets the FS base (TLS), and the FS selector to null (as Linux's
    /// `arch_prctl(ARCH_SET_FS)`); a non-canonical or kernel address is
    /// refused.
    pub fn set_fs_base(&mut self, v: u64) -> Result<(), crate::Error> {
        if !canonical_user(v) {
            return Err(crate::Error::InvalidArgs);
        }
        self.fs_base = v;
        self.seg_sels &= 0xffff_0000;
        self.seg_tag = fresh_fpu_tag();
        Ok(())
    }

    pub fn set_gs_base(&mut self, v: u64) -> Result<(), crate::Error> {
        if !canonical_user(v) {
            return Err(crate::Error::InvalidArgs);
        }
        self.gs_base = v;
        self.seg_sels &= 0x0000_ffff;
        self.seg_tag = fresh_fpu_tag();
        Ok(())
    }

    /// Syscall number (rax) and the six arguments (rdi, rsi, rdx, r10, r8, r9).
    pub fn syscall(&self) -> (u64, [u64; 6]) {
        let f = &self.frame;
        (f.rax, [f.rdi, f.rsi, f.rdx, f.r10, f.r8, f.r9])
    }

    /// Resets the FPU/SSE state to the initial one (execve, and a signal
    /// handler's start): loaded into the registers at once, from the
    /// static initial image (nothing is copied).
    pub fn reset_fpu(&mut self) {
        let _irq = disable_local();
        self.install_fpu(|| fpu::restore(&fpu::INIT));
    }

    /// Makes the state `load` puts into the FPU/SSE registers this
    /// context's, replacing its old one: what the registers held for it
    /// is dropped, another context's newer state is saved first, and the
    /// registers, newer than the image from then on, are this context's
    /// (saved when something needs them, as after a return from user
    /// mode). The state is loaded now rather than at the next entry: the
    /// kernel replaces a context's state on its own way back to user mode
    /// (execve, signal delivery, rt_sigreturn), so the copy into the
    /// image and the load from it are both saved. Interrupts off.
    fn install_fpu(&mut self, load: impl FnOnce()) {
        if FPU_OWNER_TAG.load(Ordering::Relaxed) == self.fpu_tag {
            disown_fpu(self.fpu_tag);
        } else {
            save_owner();
        }
        load();
        self.fpu_tag = fresh_fpu_tag();
        FPU_LOADED.store(self.fpu_tag, Ordering::Relaxed);
        self.own_fpu();
    }

    /// The FXSAVE image of the FPU/SSE state (for signal frames): saved
    /// from the registers first if this context ran last (they stay
    /// loaded).
    pub fn fpu_bytes(&self) -> [u8; 512] {
        let _irq = disable_local();
        if FPU_OWNER_TAG.load(Ordering::Relaxed) == self.fpu_tag {
            save_owner();
        }
        // Copied once, straight into the caller's array (through
        // `fpu_state` the image went to a temporary first).
        self.fpu.0.lock().current().0
    }

    /// The current FPU/SSE state (see [`UserContext::fpu_bytes`]).
    fn fpu_state(&self) -> FpuState {
        let _irq = disable_local();
        if FPU_OWNER_TAG.load(Ordering::Relaxed) == self.fpu_tag {
            save_owner();
        }
        *self.fpu.0.lock().current()
    }

    /// Loads an FXSAVE image supplied by user code (rt_sigreturn). An MXCSR
    /// with reserved bits set would make FXRSTOR fault in kernel mode, so
    /// such an image is refused (`InvalidArgs`) and the state is unchanged
    /// (invariant 2: user input cannot crash kernel control flow).
    pub fn set_fpu_bytes(&mut self, bytes: &[u8; 512]) -> Result<(), crate::Error> {
        let _irq = disable_local();
        let image = self.fpu.0.lock();
        // The mask is the CPU's: every FXSAVE writes the same one, so the
        // image has it (or 0, never saved yet) even while the registers
        // are newer than the rest of it.
        let mask = {
            let s = &image.state.0;
            u32::from_le_bytes([s[28], s[29], s[30], s[31]])
        };
        let mask = if mask == 0 {
            fpu::DEFAULT_MXCSR_MASK
        } else {
            mask
        };
        let mxcsr = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
        if mxcsr & !mask != 0 {
            return Err(crate::Error::InvalidArgs);
        }
        drop(image);
        // FXRSTOR ignores the image's MXCSR_MASK field; the next save
        // writes the CPU's.
        if bytes.as_ptr().addr().is_multiple_of(16) {
            self.install_fpu(|| cpu::fxrstor_bytes(bytes));
        } else {
            let state = FpuState(*bytes);
            self.install_fpu(|| fpu::restore(&state));
        }
        Ok(())
    }

    /// The cycle-counter ticks ([`crate::timer::cycles`]) the last
    /// [`UserContext::execute`] spent in user mode: read by the entry
    /// assembly just before it loads the user registers and just after a
    /// trap or system call saved them (one read per crossing, no kernel
    /// work in between); 0 if it refused to enter, and for a new context
    /// or a copy. For user-time accounting ([`crate::timer::cycles_to_ns`]).
    pub fn user_cycles(&self) -> u64 {
        self.user_cycles
    }

    /// Runs the context in user mode in `vm` until it traps back.
    ///
    /// Inlined into the kernel's thread loop: a system call's round trip
    /// takes the straight path through here (the address space, FS/GS and
    /// FPU state already loaded, no selector loaded by user code); what
    /// only a switch between contexts or a change of state needs is out of
    /// line. `inline(always)`: with a plain `#[inline]` whether it is
    /// inlined depended on how the kernel crate happened to be split into
    /// codegen units (adding one unrelated module cost every system call
    /// ~19 instructions).
    #[inline(always)]
    pub fn execute(&mut self, vm: &VmSpace) -> ReturnReason {
        // From an interrupt handler (a timer callback), user mode would run
        // on top of the interrupted context, which cannot be resumed until
        // it returns.
        assert!(
            !crate::irq::in_interrupt(),
            "invariant: user mode is not entered from interrupt context"
        );
        let irq = disable_local();
        vm.activate();
        if SEG_LOADED.load(Ordering::Relaxed) != self.seg_tag
            || FPU_LOADED.load(Ordering::Relaxed) != self.fpu_tag
        {
            self.load_state();
        }
        let Some(cycles) = enter_user(&mut self.frame, &irq) else {
            // iretq would fault in kernel mode; report what the CPU would.
            self.user_cycles = 0;
            return ReturnReason::Exception(CpuException {
                vector: CpuException::GENERAL_PROTECTION,
                error_code: 0,
                fault_addr: 0,
            });
        };
        self.user_cycles = cycles;
        crate::arch::trap::assert_entry_flags();
        // Not saved here: the registers stay this context's until another
        // image is loaded or the kernel reads this one (`save_owner`).
        if FPU_OWNER_TAG.load(Ordering::Relaxed) != self.fpu_tag {
            self.own_fpu();
        }
        let sels = cpu::read_fs_gs_packed();
        if sels != self.seg_sels {
            self.note_user_segments(sels);
        }
        let vector = self.frame.vector;
        let reason = if vector == SYSCALL_VECTOR {
            ReturnReason::Syscall
        } else {
            self.trap_reason(vector)
        };
        drop(irq);
        reason
    }

    /// Loads the FS/GS and FPU state of this context where the CPU holds
    /// another's (or an older one of its own). Interrupts are off.
    #[cold]
    #[inline(never)]
    fn load_state(&mut self) {
        if SEG_LOADED.load(Ordering::Relaxed) != self.seg_tag {
            load_user_segments(self);
            SEG_LOADED.store(self.seg_tag, Ordering::Relaxed);
        }
        if FPU_LOADED.load(Ordering::Relaxed) != self.fpu_tag {
            // The registers may hold the newer state of the context that
            // ran last: into its image before they are overwritten.
            save_owner();
            fpu::restore(self.fpu.0.lock().current());
            FPU_LOADED.store(self.fpu_tag, Ordering::Relaxed);
        }
    }

    /// Records that the FPU/SSE registers now hold this context's state,
    /// newer than its image (its first return after a load). Interrupts
    /// are off.
    #[cold]
    #[inline(never)]
    fn own_fpu(&mut self) {
        let mut owner = FPU_OWNER.lock();
        if !owner.as_ref().is_some_and(|a| Arc::ptr_eq(a, &self.fpu)) {
            *owner = Some(self.fpu.clone());
        }
        FPU_OWNER_TAG.store(self.fpu_tag, Ordering::Relaxed);
    }

    /// Records what user code did to FS and GS, as Linux does at a
    /// context switch: a non-null selector means the base came from its
    /// descriptor (base 0 for every user descriptor of gdt.rs); a null
    /// one leaves the saved base as it was. Called only when the
    /// selectors differ from the recorded ones; a selector unchanged
    /// since the last exit had its base recorded then, and user code
    /// cannot change a base without loading a selector (no FSGSBASE).
    #[cold]
    #[inline(never)]
    fn note_user_segments(&mut self, sels: u32) {
        self.seg_sels = sels;
        if sels & 0xffff != 0 {
            self.fs_base = 0;
        }
        if sels >> 16 != 0 {
            self.gs_base = 0;
        }
    }

    /// The reason of a return other than a system call. Interrupts are
    /// off; a device or timer interrupt is handled here.
    #[inline(never)]
    fn trap_reason(&self, vector: u64) -> ReturnReason {
        if vector < 32 {
            let fault_addr = if vector == u64::from(CpuException::PAGE_FAULT) {
                cpu::read_cr2()
            } else {
                0
            };
            ReturnReason::Exception(CpuException {
                vector: vector as u8,
                error_code: self.frame.error_code,
                fault_addr,
            })
        } else {
            crate::trap::handle_irq(vector);
            ReturnReason::Interrupt
        }
    }
}

/// Loads the FS and GS state of the context about to run: its selectors,
/// then its bases. Skipped while the CPU holds this context's state
/// (`SEG_LOADED`): user code can change FS and GS behind our back only
/// with a segment load (`mov %eax,%fs` replaces the base with the
/// descriptor's), which the exit path records in the context.
fn load_user_segments(ctx: &UserContext) {
    cpu::load_fs_gs_selectors(ctx.seg_sels as u16, (ctx.seg_sels >> 16) as u16);
    // SAFETY: the bases are canonical user addresses (checked by the
    // setters, or 0); no kernel code depends on the FS or GS base.
    unsafe {
        cpu::wrmsr(cpu::MSR_FS_BASE, ctx.fs_base);
        cpu::wrmsr(cpu::MSR_GS_BASE, ctx.gs_base);
    }
}

#[cfg(test)]
mod tests {
    use alloc::sync::Arc;
    use core::sync::atomic::{AtomicU64, Ordering};

    use super::*;
    use crate::arch::apic::TIMER_VECTOR;
    use crate::mm::{PageFlags, UFrame};
    use crate::sim::{self, cpu::UserExit};

    const RFLAGS_IOPL3: u64 = 3 << 12;
    const RFLAGS_TF: u64 = 1 << 8;
    const RFLAGS_NT: u64 = 1 << 14;
    const RFLAGS_AC: u64 = 1 << 18;

    fn vm() -> VmSpace {
        let vm = VmSpace::new().unwrap();
        vm.map(0x40_0000, UFrame::alloc_zeroed().unwrap(), PageFlags::RX)
            .unwrap();
        vm
    }

    fn user_context(rip: u64) -> UserContext {
        let mut ctx = UserContext::new();
        ctx.set_rip(rip);
        ctx.set_rsp(0x7fff_0000);
        ctx
    }

    #[test]
    fn user_mode_is_entered_with_sanitised_state_and_syscalls_come_back() {
        sim::run(|| {
            let vm = vm();
            let mut ctx = user_context(0x40_0000);
            // A client asks for every flag; only the user's may reach ring 3.
            let mut regs = ctx.general_regs();
            regs.rflags = u64::MAX;
            regs.rax = 39;
            ctx.set_general_regs(&regs);
            ctx.set_fs_base(0x1000_0000).unwrap();
            ctx.set_gs_base(0x2000_0000).unwrap();
            sim::cpu::set_user_program(|u| {
                // getpid() -> 7
                assert_eq!(u.regs.rax, 39);
                u.regs.rax = 7;
                UserExit::Syscall
            });
            assert_eq!(ctx.user_cycles(), 0, "never ran");
            let t0 = crate::timer::cycles();
            assert_eq!(ctx.execute(&vm), ReturnReason::Syscall);
            let t1 = crate::timer::cycles();
            // The stay in user mode, counted inside the round trip.
            assert!(ctx.user_cycles() > 0 && ctx.user_cycles() < t1 - t0);
            let entry = sim::cpu::state().last_user_entry.unwrap();
            assert_eq!(entry.rflags & (RFLAGS_IOPL3 | RFLAGS_IF), RFLAGS_IF);
            assert_eq!(
                entry.rflags & (RFLAGS_TF | RFLAGS_NT | RFLAGS_AC),
                RFLAGS_TF | RFLAGS_NT | RFLAGS_AC,
                "the user's own flags pass"
            );
            assert_eq!((entry.rip, entry.rsp), (0x40_0000, 0x7fff_0000));
            assert_eq!((entry.fs_base, entry.gs_base), (0x1000_0000, 0x2000_0000));
            // The program's address space is the one loaded.
            let (code, _) = vm.query(0x40_0000).unwrap();
            assert_eq!(
                crate::mm::page_table::translate(entry.cr3 as usize, 0x40_0000),
                Some(code.paddr())
            );
            let (nr, _) = ctx.syscall();
            assert_eq!(nr, 7);
            // `syscall` leaves the return address in RCX, past the instruction.
            assert_eq!((ctx.rip(), ctx.general_regs().rcx), (0x40_0002, 0x40_0002));
        });
    }

    #[test]
    fn user_faults_and_interrupts_are_reported() {
        sim::run(|| {
            let vm = vm();
            let mut ctx = user_context(0x40_0000);
            sim::cpu::set_user_program(|_| UserExit::Exception {
                vector: 14,
                error_code: 6,
                cr2: 0xdead_b000,
            });
            let ReturnReason::Exception(e) = ctx.execute(&vm) else {
                panic!("not an exception");
            };
            assert_eq!((e.vector, e.fault_addr), (14, 0xdead_b000));
            assert!(e.is_write() && !e.is_protection());
            // An interrupt that arrives meanwhile is taken as soon as user
            // mode runs, and handled before execute returns.
            let i0 = crate::timer::interrupts();
            sim::cpu::raise(TIMER_VECTOR);
            assert_eq!(ctx.execute(&vm), ReturnReason::Interrupt);
            assert_eq!(crate::timer::interrupts(), i0 + 1);
            // A non-canonical RIP is refused before `iretq` could fault in
            // ring 0.
            let entries = sim::cpu::state().user_entries;
            ctx.set_rip(0x8000_0000_0000);
            let ReturnReason::Exception(e) = ctx.execute(&vm) else {
                panic!("not an exception");
            };
            assert_eq!(e.vector, CpuException::GENERAL_PROTECTION);
            assert_eq!(sim::cpu::state().user_entries, entries, "never entered");
            assert_eq!(ctx.user_cycles(), 0, "no time in user mode");
            // So is a non-canonical RSP with a good RIP (one test covers
            // both), and one just past the end of user space.
            for rsp in [0x8000_0000_0000, u64::MAX] {
                ctx.set_rip(0x40_0000);
                ctx.set_rsp(rsp);
                let ReturnReason::Exception(e) = ctx.execute(&vm) else {
                    panic!("not an exception");
                };
                assert_eq!(e.vector, CpuException::GENERAL_PROTECTION);
                assert_eq!(sim::cpu::state().user_entries, entries, "never entered");
            }
            ctx.set_rsp(0x7fff_f000);
            sim::cpu::set_user_program(|_| UserExit::Syscall);
            assert_eq!(
                ctx.execute(&vm),
                ReturnReason::Syscall,
                "the highest page is fine"
            );
        });
    }

    #[test]
    fn fpu_state_and_segment_bases_survive_user_mode_as_the_context_says() {
        sim::run(|| {
            let vm = vm();
            // Two contexts with the same FS base: the second loads a user
            // selector into FS (`mov $0x2b,%eax; mov %eax,%fs`), which makes
            // the base the descriptor's (0) for it, and for it only.
            let mut parent = user_context(0x40_0000);
            let mut child = user_context(0x40_0010);
            parent.set_fs_base(0x5000).unwrap();
            child.set_fs_base(0x5000).unwrap();
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            sim::cpu::set_user_program(move |u| {
                s.store(u.fs_base << 16 | u64::from(u.fs_sel), Ordering::Relaxed);
                if u.regs.rip == 0x40_0010 {
                    u.fs_sel = 0x2b;
                    u.fs_base = 0;
                }
                u.fpu[160] = 0xab;
                UserExit::Syscall
            });
            child.execute(&vm);
            assert_eq!(child.fs_base(), 0, "the base came from the descriptor");
            parent.execute(&vm);
            assert_eq!(
                seen.load(Ordering::Relaxed),
                0x5000 << 16,
                "parent's base, null FS"
            );
            child.set_rip(0x40_0010);
            child.execute(&vm);
            assert_eq!(
                seen.load(Ordering::Relaxed),
                0x2b,
                "child keeps its selector"
            );
            let ctx = &mut parent;
            assert_eq!(ctx.fpu_bytes()[160], 0xab, "FPU state saved after the trap");
            // An FXSAVE image with a reserved MXCSR bit would fault in ring 0:
            // refused, and the state is unchanged.
            let mut bad = ctx.fpu_bytes();
            bad[24..28].copy_from_slice(&0x1_0000u32.to_le_bytes());
            assert_eq!(ctx.set_fpu_bytes(&bad), Err(crate::Error::InvalidArgs));
            assert_eq!(ctx.fpu_bytes()[160], 0xab);
            assert!(ctx.set_fs_base(0xffff_8000_0000_0000).is_err());
            ctx.reset_fpu();
            ctx.execute(&vm);
            assert_eq!(sim::cpu::state().fpu[24..26], [0x80, 0x1f], "MXCSR reset");
        });
    }

    #[test]
    fn segment_state_is_loaded_only_when_another_context_ran_or_a_setter_changed_it() {
        sim::run(|| {
            let vm = vm();
            let mut a = user_context(0x40_0000);
            let mut b = user_context(0x40_0010);
            a.set_fs_base(0x5000).unwrap();
            b.set_fs_base(0x6000).unwrap();
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            sim::cpu::set_user_program(move |u| {
                s.store(u.fs_base, Ordering::Relaxed);
                UserExit::Syscall
            });
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x5000);
            // The CPU still holds A's state: a second entry writes nothing
            // (a base changed behind frame's back stays as the CPU has it).
            sim::cpu::state().msrs.insert(cpu::MSR_FS_BASE, 0x7777);
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x7777, "no reload for the same context");
            // A setter names a new state: loaded at the next entry.
            a.set_fs_base(0x5100).unwrap();
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x5100);
            // Another context in between: each runs with its own base.
            b.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x6000);
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x5100);
            // A copy (fork) loads its state even right after the original.
            let mut c = a.clone();
            sim::cpu::state().msrs.insert(cpu::MSR_FS_BASE, 0x8888);
            c.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x5100);
        });
    }

    #[test]
    fn fpu_registers_are_reloaded_only_when_another_image_ran_in_between() {
        sim::run(|| {
            let vm = vm();
            let mut a = user_context(0x40_0000);
            let mut b = user_context(0x40_0010);
            // Each program sees its own byte 160 and leaves its mark there.
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            sim::cpu::set_user_program(move |u| {
                s.store(u64::from(u.fpu[160]), Ordering::Relaxed);
                u.fpu[160] = if u.regs.rip < 0x40_0010 { 0xa } else { 0xb };
                UserExit::Syscall
            });
            a.execute(&vm);
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0xa, "A's registers kept");
            b.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0, "B starts from its own image");
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0xa, "A's image reloaded after B");
            // An image changed by the kernel (sigreturn, execve) is loaded
            // even though this context ran last.
            let mut img = a.fpu_bytes();
            img[160] = 0x5;
            a.set_fpu_bytes(&img).unwrap();
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x5);
            // A copy (fork) runs with the image as it was copied.
            let mut c = a.clone();
            b.execute(&vm);
            c.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0xa);
            a.reset_fpu();
            a.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0, "reset image loaded");
        });
    }

    #[test]
    fn fpu_registers_are_saved_only_when_another_image_is_loaded_or_the_kernel_reads_them() {
        sim::run(|| {
            let vm = vm();
            let mut a = user_context(0x40_0000);
            let mut b = user_context(0x40_0010);
            sim::cpu::set_user_program(move |u| {
                u.fpu[160] = u.fpu[160].wrapping_add(if u.regs.rip < 0x40_0010 { 1 } else { 0x10 });
                UserExit::Syscall
            });
            let counts = || {
                let c = sim::cpu::state();
                (c.fxsaves, c.fxrstors)
            };
            a.execute(&vm);
            let (s0, r0) = counts();
            // System calls of the same context: no save, no load.
            for _ in 0..3 {
                a.execute(&vm);
            }
            assert_eq!(counts(), (s0, r0));
            // Another context: A's registers go into A's image first.
            b.execute(&vm);
            assert_eq!(counts(), (s0 + 1, r0 + 1));
            assert_eq!(a.fpu_bytes()[160], 4, "A's four runs, saved when B loaded");
            assert_eq!(counts(), (s0 + 1, r0 + 1), "A's image is up to date");
            // Reading the image of the context that ran last saves it (the
            // registers stay loaded: no reload at its next entry).
            assert_eq!(b.fpu_bytes()[160], 0x10);
            assert_eq!(counts(), (s0 + 2, r0 + 1));
            b.execute(&vm);
            assert_eq!(counts(), (s0 + 2, r0 + 1));
            // A copy made while the registers are newer than the image
            // gets the registers' state.
            let mut c = b.clone();
            assert_eq!(c.fpu_bytes()[160], 0x20);
            // Replacing the image of the context that ran last drops what
            // the registers hold for it (never saved) and loads the new
            // state at once: its next entry loads nothing.
            b.execute(&vm);
            let mut img = c.fpu_bytes();
            img[160] = 0x70;
            let (s1, r1) = counts();
            b.set_fpu_bytes(&img).unwrap();
            assert_eq!(counts(), (s1, r1 + 1));
            b.execute(&vm);
            assert_eq!(counts(), (s1, r1 + 1));
            // The registers are B's from then on: saved when another image
            // is loaded.
            a.execute(&vm);
            assert_eq!(counts(), (s1 + 1, r1 + 2));
            assert_eq!(b.fpu_bytes()[160], 0x80);
            // Dropping the context that ran last: nothing to save.
            drop(a);
            c.execute(&vm);
            assert_eq!(counts(), (s1 + 1, r1 + 3));
            assert_eq!(c.fpu_bytes()[160], 0x30);
            // A reset loads the initial state at once (C's registers went
            // into its image with the read just above: nothing to save).
            let (s2, r2) = counts();
            b.reset_fpu();
            assert_eq!(counts(), (s2, r2 + 1));
            b.execute(&vm);
            assert_eq!(counts(), (s2, r2 + 1));
            assert_eq!(b.fpu_bytes()[160], 0x10);
            assert_eq!(b.fpu_bytes()[24..26], [0x80, 0x1f], "MXCSR reset");
        });
    }

    #[test]
    fn an_fpu_image_loads_from_aligned_and_unaligned_bytes() {
        sim::run(|| {
            let vm = vm();
            let mut ctx = user_context(0x40_0000);
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            sim::cpu::set_user_program(move |u| {
                s.store(u64::from(u.fpu[200]), Ordering::Relaxed);
                UserExit::Syscall
            });
            // FXRSTOR needs 16-byte alignment: an unaligned image is
            // copied first, an aligned one loaded where it is.
            let mut aligned = crate::arch::fpu::INIT;
            aligned.0[200] = 0x11;
            ctx.set_fpu_bytes(&aligned.0).unwrap();
            ctx.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x11);
            let mut buf = [0u8; 528];
            let at = (16 - buf.as_ptr().addr() % 16) % 16 + 1;
            buf[at..at + 512].copy_from_slice(&crate::arch::fpu::INIT.0);
            buf[at + 200] = 0x22;
            let unaligned: &[u8; 512] = buf[at..at + 512].try_into().unwrap();
            ctx.set_fpu_bytes(unaligned).unwrap();
            ctx.execute(&vm);
            assert_eq!(seen.load(Ordering::Relaxed), 0x22);
            assert_eq!(ctx.fpu_bytes()[200], 0x22);
        });
    }

    #[test]
    fn a_system_call_returns_with_sysret_only_when_rcx_and_r11_hold_rip_and_rflags() {
        sim::run(|| {
            let vm = vm();
            let mut ctx = user_context(0x40_0000);
            sim::cpu::set_user_program(|_| UserExit::Syscall);
            let sysrets = || sim::cpu::state().sysret_entries;
            // A fresh context: RCX is not its RIP.
            ctx.execute(&vm);
            let n = sysrets();
            // After a system call that changed nothing but RAX: sysretq.
            ctx.set_rax(0);
            ctx.execute(&vm);
            assert_eq!(sysrets(), n + 1);
            // A new RIP (signal delivery, sigreturn, execve): iretq.
            ctx.set_rip(0x40_0100);
            ctx.execute(&vm);
            assert_eq!(sysrets(), n + 1);
            // The trap flag: iretq, so the trap comes where it would.
            let mut regs = ctx.general_regs();
            regs.rflags |= RFLAGS_TF;
            regs.r11 = regs.rflags | RFLAGS_IF | (1 << 1);
            ctx.set_general_regs(&regs);
            ctx.execute(&vm);
            assert_eq!(sysrets(), n + 1);
            // RFLAGS changed by the kernel (R11 differs): iretq.
            let mut regs = ctx.general_regs();
            regs.rflags &= !RFLAGS_TF;
            ctx.set_general_regs(&regs);
            ctx.execute(&vm);
            assert_eq!(sysrets(), n + 1);
            ctx.execute(&vm);
            assert_eq!(sysrets(), n + 2);
        });
    }
}
