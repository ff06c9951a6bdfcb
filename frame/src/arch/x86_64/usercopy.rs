//! Copies to and from the user half through the user virtual address, with
//! an exception fixup: the instruction layer behind `VmSpace`'s copies when
//! the space is the one loaded in CR3 (see `mm::vm_space`, "Copies to and
//! from user memory", for why that is sound).
//!
//! Each routine lifts SMAP (`stac`) for the length of one string
//! instruction pair, `rep movsq`/`rep stosq` for the whole quadwords and
//! `rep movsb`/`rep stosb` for the tail, and lowers it (`clac`) on every way
//! out. The two `rep` instructions of each routine are the only
//! instructions here that touch user memory, and they are listed in
//! [`FIXUPS`]. A page fault in ring 0 whose RIP is one of them and whose
//! address is in the user half resumes at its fixup ([`fixup`], called from
//! the kernel trap handler); every other ring-0 fault stays fatal.
//!
//! A `rep` instruction that faults leaves RCX, RSI and RDI at the element
//! it could not move (string instructions are restartable, Intel SDM vol. 1,
//! 7.3.9.3), so the fixups know exactly how much is left:
//! - a fault in the quadword loop goes back to the byte loop with all the
//!   bytes left (`8 * RCX + tail`): a quadword that straddles into a bad
//!   page moved nothing, and the byte loop copies its good bytes and
//!   faults again at the first bad one;
//! - a fault in the byte loop returns RCX, the bytes not copied.
//!
//! So the count returned is exact: every byte below `len - returned` was
//! copied, and the byte at `len - returned` is one the CPU refused.

#[cfg(target_os = "none")]
core::arch::global_asm!(
    r#"
    .section .text.usercopy, "ax"

    /* usize __trellis_user_copy(u8 *dst, const u8 *src, usize len):
       copies len bytes, returns how many were not copied (0: all). One
       side is user memory, checked by the caller to lie below
       USER_SPACE_END; DF is clear in ring 0 (entry hygiene). */
    .balign 16
    .global __trellis_user_copy
__trellis_user_copy:
    stac
    mov rcx, rdx
    shr rcx, 3
    and edx, 7
    .global __trellis_user_copy_q
__trellis_user_copy_q:
    rep movsq
    mov ecx, edx
    .global __trellis_user_copy_b
__trellis_user_copy_b:
    rep movsb
    clac
    xor eax, eax
    ret
    .global __trellis_user_copy_q_fix
__trellis_user_copy_q_fix:
    lea rcx, [rdx + rcx * 8]
    jmp __trellis_user_copy_b
    .global __trellis_user_copy_b_fix
__trellis_user_copy_b_fix:
    clac
    mov rax, rcx
    ret

    /* usize __trellis_user_zero(u8 *dst, usize len): zero-fills len bytes
       of user memory, returns how many were not written. */
    .balign 16
    .global __trellis_user_zero
__trellis_user_zero:
    stac
    xor eax, eax
    mov rcx, rsi
    shr rcx, 3
    and esi, 7
    .global __trellis_user_zero_q
__trellis_user_zero_q:
    rep stosq
    mov ecx, esi
    .global __trellis_user_zero_b
__trellis_user_zero_b:
    rep stosb
    clac
    ret
    .global __trellis_user_zero_q_fix
__trellis_user_zero_q_fix:
    lea rcx, [rsi + rcx * 8]
    jmp __trellis_user_zero_b
    .global __trellis_user_zero_b_fix
__trellis_user_zero_b_fix:
    clac
    mov rax, rcx
    ret
    "#
);

// MIRI: not reached: the assembly routines above (bare metal only; host
// builds copy through the page-table walk).
unsafe extern "C" {
    fn __trellis_user_copy(dst: *mut u8, src: *const u8, len: usize) -> usize;
    fn __trellis_user_copy_q();
    fn __trellis_user_copy_b();
    fn __trellis_user_copy_q_fix();
    fn __trellis_user_copy_b_fix();
    fn __trellis_user_zero(dst: *mut u8, len: usize) -> usize;
    fn __trellis_user_zero_q();
    fn __trellis_user_zero_b();
    fn __trellis_user_zero_q_fix();
    fn __trellis_user_zero_b_fix();
}

/// Copies `len` bytes from `src` to `dst`, one of which is user memory,
/// through the current page table; returns how many bytes at the end were
/// not copied because a page fault stopped it (0: all were).
///
/// # Safety
/// - Exactly one of the two ranges is in the user half, wholly below
///   `USER_SPACE_END` (so a fault there is a user-page fault the trap
///   handler resolves through [`fixup`], never a fatal one); the other is
///   kernel memory valid for `len` bytes of reads (`src`) or writes (`dst`)
///   that no Rust reference aliases during the call.
/// - SMAP is enabled (so `stac`/`clac` exist) and CR0.WP is set (so a
///   write to a read-only user page faults instead of landing).
/// - The page table loaded in CR3 is the one the caller means, and no
///   frame it maps at the user range can be freed during the call (single
///   CPU, kernel code not preempted: see `mm::vm_space`).
// MIRI: not reached: the contract of the assembly routine (bare metal
// only; host builds copy through the page-table walk).
// SAFETY: callers uphold the `# Safety` list above.
pub unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) -> usize {
    // MIRI: not reached: assembly.
    // SAFETY: the caller upholds the contract above; the routine follows
    // the C calling convention, touches only RAX, RCX, RDX, RSI, RDI, the
    // two ranges and RFLAGS.AC (set and cleared on every way out), and a
    // fault in it is turned into a return by `fixup`.
    unsafe { __trellis_user_copy(dst, src, len) }
}

/// Zero-fills `len` bytes of user memory at `dst`; returns how many at the
/// end were not written.
///
/// # Safety
/// As [`copy`], with `dst` the user range and no kernel range.
// MIRI: not reached: as `copy`.
pub unsafe fn zero(dst: *mut u8, len: usize) -> usize {
    // MIRI: not reached: assembly.
    // SAFETY: as in `copy`.
    unsafe { __trellis_user_zero(dst, len) }
}

/// Where a ring-0 page fault at `rip` resumes: the fixup of one of the
/// `rep` instructions above, or `None` (the fault is a kernel bug).
pub fn fixup(rip: u64) -> Option<u64> {
    [
        (
            __trellis_user_copy_q as *const () as u64,
            __trellis_user_copy_q_fix as *const () as u64,
        ),
        (
            __trellis_user_copy_b as *const () as u64,
            __trellis_user_copy_b_fix as *const () as u64,
        ),
        (
            __trellis_user_zero_q as *const () as u64,
            __trellis_user_zero_q_fix as *const () as u64,
        ),
        (
            __trellis_user_zero_b as *const () as u64,
            __trellis_user_zero_b_fix as *const () as u64,
        ),
    ]
    .into_iter()
    .find(|(at, _)| *at == rip)
    .map(|(_, fix)| fix)
}
