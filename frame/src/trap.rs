//! Arch-neutral trap handling: interrupts and fatal kernel faults.

use crate::arch::apic::{self, PIC_BASE_VECTOR, SERIAL_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};
use crate::arch::cpu;
use crate::arch::trap::TrapFrame;
use crate::console::print_unlocked;

pub(crate) const EXCEPTION_NAMES: [&str; 32] = [
    "divide error (#DE)",
    "debug (#DB)",
    "NMI",
    "breakpoint (#BP)",
    "overflow (#OF)",
    "bound range (#BR)",
    "invalid opcode (#UD)",
    "device not available (#NM)",
    "double fault (#DF)",
    "coprocessor segment overrun",
    "invalid TSS (#TS)",
    "segment not present (#NP)",
    "stack fault (#SS)",
    "general protection (#GP)",
    "page fault (#PF)",
    "reserved",
    "x87 FP error (#MF)",
    "alignment check (#AC)",
    "machine check (#MC)",
    "SIMD FP error (#XM)",
    "virtualization (#VE)",
    "control protection (#CP)",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "hypervisor injection (#HV)",
    "VMM communication (#VC)",
    "security (#SX)",
    "reserved",
];

/// Dispatches a device or timer interrupt (from kernel or user mode).
pub(crate) fn handle_irq(vector: u64) {
    crate::irq::run_handler(|| dispatch_irq(vector));
}

fn dispatch_irq(vector: u64) {
    match vector {
        v if v == u64::from(TIMER_VECTOR) => {
            apic::eoi();
            crate::timer::on_interrupt();
        }
        v if v == u64::from(SERIAL_VECTOR) => {
            apic::eoi();
            crate::console::on_input_interrupt();
        }
        v if v == u64::from(SPURIOUS_VECTOR) => {}
        v if (u64::from(PIC_BASE_VECTOR)..u64::from(PIC_BASE_VECTOR) + 16).contains(&v) => {} // masked PICs
        v if (u64::from(crate::irq::DEVICE_VECTOR_BASE)
            ..u64::from(crate::irq::DEVICE_VECTOR_END))
            .contains(&v) =>
        {
            // Callbacks first: a level-triggered INTx source must be quiet
            // (its driver read its status) before the EOI re-arms the pin.
            crate::irq::dispatch(v as u8);
            apic::eoi();
        }
        _ => apic::eoi(),
    }
}

/// A trap taken while the CPU was in kernel mode.
pub(crate) fn handle_kernel_trap(frame: &mut TrapFrame) {
    if frame.vector >= 32 {
        handle_irq(frame.vector);
        return;
    }
    if frame.vector == 14 && resume_user_copy(frame) {
        return;
    }
    if frame.vector == 1 {
        // A debug trap in ring 0 can only be a single step left over from a
        // user's TF (the entry paths clear TF); it needs nothing.
        return;
    }
    kernel_fault(frame)
}

/// A page fault inside a user copy (`arch::x86_64::usercopy`): resumes at
/// the copy's fixup, which returns the bytes left to its caller. Only a
/// fault at one of the copy's `rep` instructions, on a user-half address,
/// that is not a reserved-bit violation (a corrupt page table) qualifies;
/// every other ring-0 fault stays fatal.
#[cfg(target_os = "none")]
fn resume_user_copy(frame: &mut TrapFrame) -> bool {
    const PF_RESERVED: u64 = 1 << 3;
    let Some(fix) = crate::arch::x86_64::usercopy::fixup(frame.rip) else {
        return false;
    };
    if frame.error_code & PF_RESERVED != 0 || cpu::read_cr2() >= crate::mm::USER_SPACE_END as u64 {
        return false;
    }
    frame.rip = fix;
    true
}

/// Host builds copy through the page-table walk only: no fixups.
#[cfg(not(target_os = "none"))]
fn resume_user_copy(_frame: &mut TrapFrame) -> bool {
    false
}

fn kernel_fault(f: &TrapFrame) -> ! {
    let cr2 = cpu::read_cr2();
    let name = EXCEPTION_NAMES
        .get(f.vector as usize)
        .copied()
        .unwrap_or("?");
    print_unlocked(format_args!(
        "\ntrellis: KERNEL PANIC: CPU exception in kernel mode: {name}\n"
    ));
    if f.vector == 8 && crate::task::is_stack_guard(cr2 as usize) {
        print_unlocked(format_args!(
            "  kernel stack overflow: touched the guard page at {cr2:#x}\n"
        ));
    }
    print_unlocked(format_args!(
        "  vector {} error code {:#x} RIP {:#018x} CS {:#x} RFLAGS {:#x}\n",
        f.vector, f.error_code, f.rip, f.cs, f.rflags
    ));
    if f.vector == 14 || f.vector == 8 {
        let e = f.error_code;
        print_unlocked(format_args!(
            "  CR2 {cr2:#018x} ({}, {}, {})\n",
            if e & 1 != 0 {
                "protection violation"
            } else {
                "not present"
            },
            if e & 2 != 0 { "write" } else { "read" },
            if e & 16 != 0 {
                "instruction fetch"
            } else {
                "data"
            }
        ));
    }
    print_unlocked(format_args!(
        "  RAX {:#018x} RBX {:#018x} RCX {:#018x} RDX {:#018x}\n  RSI {:#018x} RDI {:#018x} RBP {:#018x} RSP {:#018x}\n",
        f.rax, f.rbx, f.rcx, f.rdx, f.rsi, f.rdi, f.rbp, f.rsp
    ));
    print_unlocked(format_args!(
        "  R8  {:#018x} R9  {:#018x} R10 {:#018x} R11 {:#018x}\n  R12 {:#018x} R13 {:#018x} R14 {:#018x} R15 {:#018x}\n",
        f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15
    ));
    crate::backtrace::print_backtrace(Some(f.rip), f.rbp);
    crate::power_off_after_panic()
}
