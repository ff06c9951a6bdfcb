// expect: module `arch` is private
// Privileged instructions (port I/O, MSRs, the interrupt flag, FPU state
// restore, I/O APIC routing, TSS.RSP0, EOI) stay inside frame.
pub fn f() {
    frame::arch::cpu::outb(0x80, 0);
}
