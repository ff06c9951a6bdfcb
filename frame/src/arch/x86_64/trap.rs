//! Trap entry: the IDT, one 16-byte stub per vector, the common save/restore
//! path, the `syscall` entry, and the switch into user mode.
//!
//! A trap from user mode lands directly in the current [`TrapFrame`] inside
//! the `UserContext` (TSS.RSP0 points just past it), and control returns to
//! the kernel code that called [`enter_user`], on the kernel stack it left.
//! A trap from kernel mode saves a `TrapFrame` on the current kernel stack and
//! calls [`kernel_trap`].

use core::cell::UnsafeCell;
use core::mem::size_of;

use super::cpu;
use super::gdt::{IST_DEBUG, IST_DOUBLE_FAULT, KERNEL_CS, USER_CS, USER_DS};
use crate::sync::Once;

/// Pseudo-vector recorded in the frame for a `syscall` instruction.
pub const SYSCALL_VECTOR: u64 = 0x100;

/// RFLAGS bits `syscall` clears (MSR SFMASK): every defined flag (CF PF AF
/// ZF SF TF IF DF OF IOPL NT RF AC ID), the set Linux masks, so the kernel
/// never runs with a user's AC (SMAP off), DF, TF, NT or IOPL.
pub const SYSCALL_RFLAGS_MASK: u64 = 0x25_7fd5;

/// RFLAGS bits user code may control: CF PF AF ZF SF TF DF OF NT AC ID.
/// TF is delivered as a single-step trap in user mode; NT only matters to
/// an `iretq` executed while it is set, and the kernel's entry paths clear
/// it before any `iretq` of ours runs. IOPL, IF, VM, VIF and VIP are never
/// the user's.
pub const USER_RFLAGS_MASK: u64 = 0x24_4dd5;
pub const RFLAGS_IF: u64 = 1 << 9;
pub const RFLAGS_FIXED: u64 = 1 << 1;

/// Register state saved on a trap; the layout is fixed by the assembly below.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct TrapFrame {
    pub rax: u64,
    pub rbx: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    pub rbp: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub vector: u64,
    pub error_code: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}
const _: () = assert!(size_of::<TrapFrame>() == 22 * 8);

#[cfg(target_os = "none")]
core::arch::global_asm!(
    r#"
    .section .text.trap, "ax"
    .balign 16
    .global __trellis_trap_stubs
__trellis_trap_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if vec == 8 || vec == 10 || vec == 11 || vec == 12 || vec == 13 || vec == 14 || vec == 17 || vec == 21 || vec == 29 || vec == 30
    .else
    push 0
    .endif
    push vec
    jmp __trellis_trap_common
    .set vec, vec + 1
    .endr

__trellis_trap_common:
    /* Entry hygiene (docs/soundness.md): whatever user or kernel code was
       running, the handler starts with RFLAGS = 0x2 — IF off (the gate
       already cleared it), and AC, DF, TF, NT and IOPL clear. AC would turn
       SMAP off in ring 0; DF would make memcpy run backwards. A plain popfq
       works whether or not the CPU has SMAP (clac would #UD without it). */
    push 2
    popfq
    push r15
    push r14
    push r13
    push r12
    push r11
    push r10
    push r9
    push r8
    push rbp
    push rdi
    push rsi
    push rdx
    push rcx
    push rbx
    push rax
    test byte ptr [rsp + 18 * 8], 3
    jnz __trellis_trap_from_user
    mov rdi, rsp
    call {kernel_trap}
    pop rax
    pop rbx
    pop rcx
    pop rdx
    pop rsi
    pop rdi
    pop rbp
    pop r8
    pop r9
    pop r10
    pop r11
    pop r12
    pop r13
    pop r14
    pop r15
    add rsp, 16
    iretq

    /* A trap from user mode normally lands in the UserContext (TSS.RSP0
       points just past its frame). The vectors with an IST stack (#DB, NMI,
       #MC, #DF) land on that stack instead: copy the frame into the
       context (DF is clear, see above) before going back to the kernel. */
__trellis_trap_from_user:
    mov rdi, [rip + {ctx_top}]
    sub rdi, {frame_size}
    cmp rdi, rsp
    je __trellis_return_to_kernel
    mov rsi, rsp
    mov ecx, {frame_words}
    rep movsq

    /* A trap or syscall from user mode: the user registers are saved in the
       UserContext; resume the kernel code that called __trellis_enter_user. */
    /* Only RBX and RBP are restored: the caller's inline `asm!` (cpu.rs
       `enter_user`) declares every other register clobbered, so the
       compiler keeps nothing it needs in them across the round trip. RAX
       returns the cycle-counter ticks since the entry read it: the stay
       in user mode, for the kernel's user-time accounting. */
__trellis_return_to_kernel:
    rdtsc
    shl rdx, 32
    or rax, rdx
    sub rax, [rip + {user_tsc}]
    mov rsp, [rip + {kernel_rsp}]
    pop rbx
    pop rbp
    ret

    /* SFMASK (see `init`) has already cleared every RFLAGS bit but the
       fixed one, so no user flag (AC, DF, TF, NT, IOPL) survives into ring 0. */
    .global __trellis_syscall_entry
__trellis_syscall_entry:
    mov [rip + {user_rsp}], rsp
    mov rsp, [rip + {ctx_top}]
    push {user_ds}
    push qword ptr [rip + {user_rsp}]
    push r11
    push {user_cs}
    push rcx
    push 0
    push {syscall_vector}
    push r15
    push r14
    push r13
    push r12
    push r11
    push r10
    push r9
    push r8
    push rbp
    push rdi
    push rsi
    push rdx
    push rcx
    push rbx
    push rax
    jmp __trellis_return_to_kernel

    /* fn(frame: *mut TrapFrame): runs the user context until the next trap.
       Called only from the inline `asm!` of cpu.rs `enter_user`, which
       declares every register but RBX, RBP and RSP clobbered (it is not
       an `extern "C"` function: R12-R15 are not preserved).
       How it returns is decided here, on the registers just loaded:
       `sysretq` when RCX is the frame's RIP, R11 its RFLAGS and the trap
       flag is clear (what `syscall` left, when the kernel changed neither
       RIP nor RFLAGS), else `iretq`. `sysretq` takes RIP from RCX and
       RFLAGS from R11 and loads STAR's fixed user CS and SS, instead of
       `iretq`'s five loads and two descriptor fetches; with TF set it
       would trap after the first user instruction, not at once as `iretq`
       does. The frame was sanitised just before (`enter_user`): CS and
       SS are the user ones STAR names, RFLAGS has IF and no privileged
       bit, RIP is a canonical user address, so `sysretq` cannot fault in
       ring 0. Interrupts stay off until `sysretq` sets IF from R11, so
       nothing runs on the user stack in between; NMI, #DB and #MC have
       stacks of their own (IST). The compares change RFLAGS: both returns
       load them. */
    .global __trellis_enter_user
__trellis_enter_user:
    push rbp
    push rbx
    mov [rip + {kernel_rsp}], rsp
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rip + {user_tsc}], rax
    mov rsp, rdi
    pop rax
    pop rbx
    pop rcx
    pop rdx
    pop rsi
    pop rdi
    pop rbp
    pop r8
    pop r9
    pop r10
    pop r11
    pop r12
    pop r13
    pop r14
    pop r15
    cmp rcx, [rsp + {rip_after_pops}]
    jne 2f
    cmp r11, [rsp + {rflags_after_pops}]
    jne 2f
    test r11d, {rflags_tf}
    jnz 2f
    mov rsp, [rsp + {rsp_after_pops}]
    sysretq
2:
    add rsp, 16
    iretq
    "#,
    kernel_trap = sym kernel_trap_entry,
    rip_after_pops = const 2 * 8,
    rflags_after_pops = const 4 * 8,
    rsp_after_pops = const 5 * 8,
    rflags_tf = const RFLAGS_TF,
    kernel_rsp = sym KERNEL_RSP,
    user_rsp = sym USER_RSP_SCRATCH,
    user_tsc = sym USER_ENTRY_TSC,
    ctx_top = sym USER_CTX_TOP,
    user_ds = const USER_DS,
    user_cs = const USER_CS,
    syscall_vector = const SYSCALL_VECTOR,
    frame_size = const size_of::<TrapFrame>(),
    frame_words = const size_of::<TrapFrame>() / 8,
);

/// Per-CPU scratch words used by the assembly (single CPU for now).
#[repr(transparent)]
struct AsmWord(UnsafeCell<u64>);
// SAFETY: only the assembly above and `enter_user` (interrupts disabled, one
// CPU) touch these words.
// MIRI: relied on by user::tests::user_mode_is_entered_with_sanitised_state_and_syscalls_come_back
unsafe impl Sync for AsmWord {}

static KERNEL_RSP: AsmWord = AsmWord(UnsafeCell::new(0));
static USER_RSP_SCRATCH: AsmWord = AsmWord(UnsafeCell::new(0));
static USER_CTX_TOP: AsmWord = AsmWord(UnsafeCell::new(0));
/// The cycle counter when `__trellis_enter_user` last left for user mode.
static USER_ENTRY_TSC: AsmWord = AsmWord(UnsafeCell::new(0));

/// An IDT gate (Intel SDM vol. 3, 6.14.1).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct IdtEntry {
    pub offset_low: u16,
    pub selector: u16,
    pub ist: u8,
    pub type_attr: u8,
    pub offset_mid: u16,
    pub offset_high: u32,
    pub _zero: u32,
}

impl IdtEntry {
    /// The handler address the gate leads to (the CPU model checks it).
    #[cfg(test)]
    pub(crate) fn handler(&self) -> u64 {
        u64::from(self.offset_low)
            | u64::from(self.offset_mid) << 16
            | u64::from(self.offset_high) << 32
    }
}

/// The IDT: built once at boot, never changed after.
static IDT: Once<[IdtEntry; 256]> = Once::new();

pub fn init() {
    let stubs = cpu::trap_stubs();
    let idt = IDT.call_once(|| {
        core::array::from_fn(|vector| {
            let handler = stubs + 16 * vector as u64;
            let dpl: u8 = if vector == 3 { 3 } else { 0 };
            IdtEntry {
                offset_low: handler as u16,
                selector: KERNEL_CS,
                // #DB, NMI and #MC can arrive on the first instruction of the
                // syscall entry, before it has left the user stack: they get a
                // known-good stack of their own, like #DF.
                ist: match vector {
                    1 | 2 | 18 => IST_DEBUG,
                    8 => IST_DOUBLE_FAULT,
                    _ => 0,
                },
                type_attr: 0x8e | (dpl << 5), // present interrupt gate
                offset_mid: (handler >> 16) as u16,
                offset_high: (handler >> 32) as u32,
                _zero: 0,
            }
        })
    });
    // SAFETY: every gate is a present interrupt gate to the stub of its
    // vector in `.text.trap`, through the kernel code segment; the IST
    // slots named are set up by `gdt::init`, which runs first.
    unsafe { cpu::load_idt(idt) };

    use super::cpu::*;
    // SAFETY: enables `syscall` and points it at the entry above; STAR holds
    // the selector bases documented in gdt.rs; SFMASK clears every RFLAGS
    // bit (IF, TF, DF, AC, NT, IOPL included) on entry, so the entry code
    // runs with interrupts off and with no user-controlled flag.
    unsafe {
        wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1);
        wrmsr(
            MSR_STAR,
            (u64::from(KERNEL_CS) << 32) | (u64::from(USER_DS & !3) - 8) << 48,
        );
        wrmsr(MSR_LSTAR, syscall_entry());
        wrmsr(MSR_SFMASK, SYSCALL_RFLAGS_MASK);
    }
}

/// Entry hygiene (docs/soundness.md), checked on every entry to ring 0:
/// no user-controlled flag — TF, DF, IOPL, NT, AC — is set in the kernel.
/// Inlined: it runs on every return from user mode.
#[inline(always)]
pub(crate) fn assert_entry_flags() {
    const USER_CONTROLLED: u64 = (1 << 8) | (1 << 10) | (3 << 12) | (1 << 14) | (1 << 18);
    let f = cpu::rflags();
    assert!(
        f & USER_CONTROLLED == 0,
        "invariant: ring 0 runs with TF, DF, IOPL, NT and AC clear (RFLAGS {f:#x})"
    );
}

pub(crate) extern "C" fn kernel_trap_entry(frame: &mut TrapFrame) {
    assert_entry_flags();
    crate::trap::handle_kernel_trap(frame);
}

/// Runs `frame` in user mode until the next trap or syscall, which is saved
/// back into `frame`, and returns the cycle-counter ticks of the stay in
/// user mode (read by the assembly just before it loads the user registers
/// and just after the trap saved them); `None` (and nothing run) if its RIP
/// or RSP is not a canonical user address, which `iretq` would fault on in
/// ring 0.
///
/// Invariant 2 rests here, so the frame is made safe to enter right
/// before the assembly, whatever the caller left in it: CS and SS are set
/// to the user selectors, RFLAGS keeps only the bits user code may
/// control and gets IF, and RIP and RSP are checked. The assembly decides
/// between `sysretq` and `iretq` from the sanitised frame. `_irq` proves
/// that interrupts are off: between the sanitising and the return to
/// user mode nothing may run, and TSS.RSP0 may only change then.
/// Inlined into its one caller, `execute`.
#[inline(always)]
pub(crate) fn enter_user(
    frame: &mut TrapFrame,
    _irq: &crate::irq::DisabledLocalIrqGuard,
) -> Option<u64> {
    debug_assert!(
        !cpu::interrupts_enabled(),
        "invariant: user mode is entered with interrupts disabled"
    );
    // One test for both: the end is a power of two, so an address lies
    // at or above it exactly when it has a bit at or above the end's, and
    // then so does the OR of the two.
    if (frame.rip | frame.rsp) >= USER_ADDR_END {
        return None;
    }
    frame.cs = u64::from(USER_CS);
    frame.ss = u64::from(USER_DS);
    frame.rflags = (frame.rflags & USER_RFLAGS_MASK) | RFLAGS_IF | RFLAGS_FIXED;
    // `UserContext` is 16-byte aligned with the frame at its start, and
    // the frame is a multiple of 16 bytes long (asserted below the type).
    let top = frame as *mut TrapFrame as u64 + size_of::<TrapFrame>() as u64;
    super::gdt::set_kernel_stack(top, _irq);
    // SAFETY: single CPU, interrupts disabled (`_irq`); the syscall entry
    // reads it.
    unsafe { *USER_CTX_TOP.0.get() = top };
    // SAFETY: `frame` is a valid, 16-byte-aligned user state, sanitised
    // above, that outlives the call: the CPU writes the next trap into it
    // through TSS.RSP0 / USER_CTX_TOP (both set just above) and the stub
    // returns here; interrupts are off (`_irq`).
    Some(unsafe { cpu::enter_user(frame) })
}

/// The end of the canonical lower half: user RIP and RSP lie below it.
const USER_ADDR_END: u64 = 0x0000_8000_0000_0000;
const _: () = assert!(USER_ADDR_END.is_power_of_two());
const RFLAGS_TF: u64 = 1 << 8;
const _: () = assert!(size_of::<TrapFrame>().is_multiple_of(16));

/// Whether the assembly of `__trellis_enter_user` returns to `frame` with
/// `sysretq`: RIP in RCX and RFLAGS in R11, as `syscall` leaves them when
/// the kernel changed neither (a signal frame, `rt_sigreturn`, `execve` or
/// ptrace-like changes take the `iretq` path), and no trap flag. The CPU
/// model makes the same choice with it.
#[cfg(test)]
pub(crate) fn sysret_restores(frame: &TrapFrame) -> bool {
    frame.rcx == frame.rip && frame.r11 == frame.rflags && frame.rflags & RFLAGS_TF == 0
}
