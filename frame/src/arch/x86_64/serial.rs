//! The 16550 UART at COM1 (port 0x3f8): the kernel console.

use super::cpu::{inb, outb};

const COM1: u16 = 0x3f8;
const LSR_DATA_READY: u8 = 1 << 0;
const LSR_THR_EMPTY: u8 = 1 << 5;

pub fn init() {
    outb(COM1 + 1, 0x00); // no interrupts yet
    outb(COM1 + 3, 0x80); // DLAB
    outb(COM1, 0x01); // 115200 baud
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03); // 8N1
    outb(COM1 + 2, 0xC7); // FIFO on, cleared
    outb(COM1 + 4, 0x0B); // DTR | RTS | OUT2
}

/// Enables the "received data available" interrupt (IRQ 4).
pub fn enable_rx_interrupt() {
    outb(COM1 + 1, 0x01);
}

pub fn write_byte(b: u8) {
    while inb(COM1 + 5) & LSR_THR_EMPTY == 0 {
        core::hint::spin_loop();
    }
    outb(COM1, b);
}

pub fn try_read_byte() -> Option<u8> {
    if inb(COM1 + 5) & LSR_DATA_READY != 0 {
        Some(inb(COM1))
    } else {
        None
    }
}
