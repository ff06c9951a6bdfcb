//! Leaving the machine: QEMU's `isa-debug-exit` device (port 0xf4) for a
//! power-off with a status, and the reset lines for a restart.

use super::cpu::{halt_forever, outb};

/// QEMU exits with status `(code << 1) | 1`; a process exit status keeps
/// only the low byte of that, so writing the low byte of `code` loses
/// nothing (the device takes writes of any width).
pub fn exit(code: u32) -> ! {
    outb(0xf4, code as u8);
    // Without the device the write is ignored; park the CPU.
    halt_forever()
}

/// Resets the machine: the 8042 keyboard controller's "pulse reset line"
/// command (0xfe to port 0x64), then a hard reset through the PCI reset
/// control register (port 0xcf9: bit 1 asks for a system reset, bit 2
/// starts it). QEMU's PC machines honour both; with `-no-reboot` QEMU
/// exits instead of booting again.
pub fn reset() -> ! {
    outb(0x64, 0xfe);
    outb(0xcf9, 0x02);
    outb(0xcf9, 0x06);
    halt_forever()
}

/// Stops the machine without powering it off: interrupts masked, the CPU
/// halted for good (the guest stays up, doing nothing).
pub fn halt() -> ! {
    halt_forever()
}
