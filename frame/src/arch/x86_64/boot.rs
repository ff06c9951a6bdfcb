//! The PVH entry: QEMU `-kernel` finds the `XEN_ELFNOTE_PHYS32_ENTRY` note and
//! enters `__trellis_pvh_entry` in 32-bit protected mode with paging off and
//! `ebx` holding the physical address of the `hvm_start_info` structure
//! (Xen public header `arch-x86/hvm/start_info.h`).
//!
//! The stub builds temporary page tables that identity-map the first 4 GiB,
//! map them again at the direct-map base, and map the first 1 GiB at
//! `0xffffffff80000000` where the kernel is linked; it then enables long mode
//! and calls `crate::boot::rust_entry`. The real kernel page table is
//! built later in Rust.

use core::arch::global_asm;

/// Size of the boot stack (in `.bss`). The first kernel task later gets its
/// own guarded stack.
pub const BOOT_STACK_SIZE: usize = 256 * 1024;

global_asm!(
    r#"
    .section .note.Xen, "a"
    .balign 4
    .long 4
    .long 4
    .long 18
    .asciz "Xen"
    .balign 4
    .long __trellis_pvh_entry
    .balign 4

    .section .boot.text, "awx"
    .code32
    .global __trellis_pvh_entry
__trellis_pvh_entry:
    cli
    cld
    mov %ebx, %edi

    /* PML4[0] and PML4[256] -> boot_pdpt (identity + direct map of 4 GiB). */
    mov $boot_pdpt, %eax
    or $3, %eax
    mov %eax, boot_pml4
    mov %eax, boot_pml4 + 256 * 8
    /* PML4[511] -> boot_pdpt_high; its entry 510 maps -2 GiB to phys 0. */
    mov $boot_pdpt_high, %eax
    or $3, %eax
    mov %eax, boot_pml4 + 511 * 8
    mov $boot_pd, %eax
    or $3, %eax
    mov %eax, boot_pdpt_high + 510 * 8

    /* boot_pdpt[0..4] -> the four page directories. */
    xor %ecx, %ecx
1:
    mov %eax, boot_pdpt(,%ecx,8)
    add $4096, %eax
    inc %ecx
    cmp $4, %ecx
    jne 1b

    /* 2048 2-MiB pages: present | writable | huge. */
    xor %ecx, %ecx
2:
    mov %ecx, %eax
    shl $21, %eax
    or $0x83, %eax
    mov %eax, boot_pd(,%ecx,8)
    mov %ecx, %eax
    shr $11, %eax
    mov %eax, boot_pd + 4(,%ecx,8)
    inc %ecx
    cmp $2048, %ecx
    jne 2b

    mov $boot_pml4, %eax
    mov %eax, %cr3
    mov %cr4, %eax
    or $(1 << 5), %eax          /* PAE */
    mov %eax, %cr4
    mov $0xC0000080, %ecx       /* EFER */
    rdmsr
    or $((1 << 8) | (1 << 11)), %eax   /* LME | NXE */
    wrmsr
    mov %cr0, %eax
    or $((1 << 31) | (1 << 16) | 1), %eax  /* PG | WP | PE */
    mov %eax, %cr0
    lgdt boot_gdt_ptr
    ljmp $0x08, $boot_long_mode

    .code64
boot_long_mode:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %ax, %ax
    mov %ax, %fs
    mov %ax, %gs
    movabs $__trellis_boot_stack_top, %rsp
    xor %ebp, %ebp
    mov %edi, %edi
    movabs ${entry}, %rax
    call *%rax
3:
    hlt
    jmp 3b

    .section .boot.data, "aw"
    .balign 4096
boot_pml4:
    .fill 4096, 1, 0
boot_pdpt:
    .fill 4096, 1, 0
boot_pdpt_high:
    .fill 4096, 1, 0
boot_pd:
    .fill 4096 * 4, 1, 0
    .balign 8
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff
    .quad 0x00cf92000000ffff
boot_gdt_ptr:
    .word boot_gdt_ptr - boot_gdt - 1
    .long boot_gdt

    .section .bss.boot_stack, "aw", @nobits
    .balign 4096
__trellis_boot_stack_bottom:
    .skip {stack_size}
    .global __trellis_boot_stack_top
__trellis_boot_stack_top:
    "#,
    stack_size = const BOOT_STACK_SIZE,
    entry = sym crate::boot::rust_entry,
    options(att_syntax)
);
