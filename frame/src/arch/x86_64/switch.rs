//! Kernel task context switch: callee-saved registers live on the task's own
//! stack; a task's context is just its saved stack pointer.
//!
//! The isolated call of driver domains uses the same idea: it saves the
//! callee-saved registers on the caller's stack and the stack pointer in the
//! caller's recovery record (offset 0), calls the entry on the domain stack
//! (rbx, callee-saved, keeps the record), and switches back. The abort
//! path restores that saved state from anywhere and returns 1 instead of 0.

#[cfg(target_os = "none")]
core::arch::global_asm!(
    r#"
    .section .text.switch, "ax"
    .global __trellis_context_switch
__trellis_context_switch:
    push rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
    mov [rdi], rsp
    mov rsp, rsi
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    ret

    .global __trellis_isolated_call
__trellis_isolated_call:
    push rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
    mov [rdi], rsp
    mov rbx, rdi
    mov rsp, rsi
    xor ebp, ebp
    mov rdi, rcx
    call rdx
    mov rsp, [rbx]
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    xor eax, eax
    ret

    .global __trellis_isolated_abort
__trellis_isolated_abort:
    mov rsp, rdi
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    mov eax, 1
    ret

    .global __trellis_task_trampoline
__trellis_task_trampoline:
    xor ebp, ebp
    call {entry}
    ud2
    "#,
    entry = sym crate::task::task_entry,
);

/// Number of bytes `initial_stack` writes below the stack top.
pub const INITIAL_FRAME_WORDS: usize = 8;

/// Lays out a new task's stack so that switching to it "returns" into the
/// task trampoline; returns the saved stack pointer to switch to.
pub fn initial_stack(frame: &mut [u64; INITIAL_FRAME_WORDS], frame_addr: usize) -> usize {
    // r15, r14, r13, r12, rbx, rbp, return address, alignment pad.
    *frame = [0, 0, 0, 0, 0, 0, super::cpu::task_trampoline(), 0];
    frame_addr
}
