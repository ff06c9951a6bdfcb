//! The kernel console (COM1) and log macros.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU8, Ordering};

use crate::sync::{SpinLock, level};

struct Serial;

impl Write for Serial {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                write_raw(b'\r');
            }
            write_raw(b);
        }
        Ok(())
    }
}

fn write_raw(b: u8) {
    #[cfg(any(target_os = "none", test))]
    crate::arch::serial::write_byte(b);
    #[cfg(not(any(target_os = "none", test)))]
    let _ = b;
}

/// Size of the kernel message ring (what syslog(2) and dmesg read).
pub const LOG_RING_SIZE: usize = 16 * 1024;

/// The most recent kernel messages: a ring of bytes, and how many were
/// ever written (so a reader can tell what it has not seen yet).
struct Ring {
    buf: [u8; LOG_RING_SIZE],
    written: u64,
}

impl Ring {
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.buf[(self.written % LOG_RING_SIZE as u64) as usize] = b;
            self.written += 1;
        }
    }
}

/// Writes kernel messages to the serial port and the ring.
struct Logger<'a>(&'a mut Ring);

impl Write for Logger<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.push(s.as_bytes());
        Serial.write_str(s)
    }
}

static CONSOLE: SpinLock<Ring, { level::LOG }> = SpinLock::new(Ring {
    buf: [0; LOG_RING_SIZE],
    written: 0,
});

#[doc(hidden)]
pub fn _print(args: fmt::Arguments) {
    let mut ring = CONSOLE.lock_irq_disabled();
    let _ = Logger(&mut ring).write_fmt(args);
}

/// The kernel messages written after message byte `from` that the ring
/// still holds, oldest first, and the count of bytes ever written.
/// `from` 0 (or anything older than the ring) reads all it holds.
pub fn read_log(from: u64) -> (alloc::vec::Vec<u8>, u64) {
    // Allocate before taking the log lock, which ranks above the heap's.
    let mut out = alloc::vec::Vec::with_capacity(LOG_RING_SIZE);
    let ring = CONSOLE.lock_irq_disabled();
    let oldest = ring.written.saturating_sub(LOG_RING_SIZE as u64);
    let start = from.clamp(oldest, ring.written);
    out.extend((start..ring.written).map(|i| ring.buf[(i % LOG_RING_SIZE as u64) as usize]));
    (out, ring.written)
}

/// Prints without taking the console lock (panic and fault paths only).
pub(crate) fn print_unlocked(args: fmt::Arguments) {
    let _ = Serial.write_fmt(args);
}

/// Writes raw bytes to the console (user output: no newline translation,
/// the TTY layer above decides).
pub fn write_bytes(bytes: &[u8]) {
    let _guard = CONSOLE.lock_irq_disabled();
    for &b in bytes {
        write_raw(b);
    }
}

/// Tasks waiting for console input sleep here; the UART receive interrupt
/// wakes them. Drain input with [`try_read_byte`] after waking.
#[cfg(any(target_os = "none", test))]
pub fn input_wait_queue() -> &'static crate::sync::WaitQueue {
    static RX: crate::sync::WaitQueue = crate::sync::WaitQueue::new();
    &RX
}

/// Whether input arrives by interrupt (else readers must poll).
pub fn input_interrupts_enabled() -> bool {
    INPUT_IRQ.load(Ordering::Relaxed)
}

static INPUT_IRQ: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

#[cfg(any(target_os = "none", test))]
pub(crate) fn on_input_interrupt() {
    input_wait_queue().wake_all();
}

/// Routes the UART receive interrupt (called once the timer is up).
#[cfg(any(target_os = "none", test))]
pub(crate) fn enable_input_interrupt() {
    crate::arch::ioapic::route(4, crate::arch::apic::SERIAL_VECTOR);
    crate::arch::serial::enable_rx_interrupt();
    INPUT_IRQ.store(true, Ordering::Relaxed);
}

/// Reads one byte of console input if one is waiting.
pub fn try_read_byte() -> Option<u8> {
    #[cfg(any(target_os = "none", test))]
    return crate::arch::serial::try_read_byte();
    #[cfg(not(any(target_os = "none", test)))]
    None
}

/// 0 = errors only, 1 = warnings, 2 = info (default), 3 = debug.
static LOG_LEVEL: AtomicU8 = AtomicU8::new(2);

pub fn set_log_level(level: u8) {
    LOG_LEVEL.store(level, Ordering::Relaxed);
}

pub fn log_enabled(level: u8) -> bool {
    level <= LOG_LEVEL.load(Ordering::Relaxed)
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::_print(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::console::_print(format_args!("{}\n", format_args!($($arg)*))) };
}

#[macro_export]
macro_rules! log_warn {
    ($($arg:tt)*) => { if $crate::console::log_enabled(1) { $crate::println!("[warn] {}", format_args!($($arg)*)) } };
}

#[macro_export]
macro_rules! log_info {
    ($($arg:tt)*) => { if $crate::console::log_enabled(2) { $crate::println!("[info] {}", format_args!($($arg)*)) } };
}

#[macro_export]
macro_rules! log_debug {
    ($($arg:tt)*) => { if $crate::console::log_enabled(3) { $crate::println!("[debug] {}", format_args!($($arg)*)) } };
}

#[cfg(test)]
mod tests {
    use alloc::sync::Arc;
    use alloc::vec::Vec;

    use super::*;
    use crate::arch::apic::SERIAL_VECTOR;
    use crate::sim;
    use crate::task::{TaskOptions, TaskState, yield_now};

    #[test]
    fn console_input_interrupt_wakes_a_waiting_reader() {
        sim::run(|| {
            let got: Arc<SpinLock<Vec<u8>>> = Arc::new(SpinLock::new(Vec::new()));
            let reader = {
                let got = got.clone();
                TaskOptions::new(move || {
                    let b = input_wait_queue().wait_until(try_read_byte);
                    got.lock().push(b);
                })
                .spawn()
                .unwrap()
            };
            yield_now();
            assert_eq!(reader.state(), TaskState::Sleeping, "no input yet");
            sim::devices::PORTS.lock().unwrap().uart_in.extend(b"hi");
            // The UART's receive interrupt, through the I/O APIC; taken when
            // this task next enables interrupts.
            sim::cpu::raise(SERIAL_VECTOR);
            while reader.state() != TaskState::Exited {
                yield_now();
            }
            assert_eq!(*got.lock(), b"h");
            assert_eq!(try_read_byte(), Some(b'i'));
            assert_eq!(try_read_byte(), None);
            assert!(input_interrupts_enabled());
        });
    }

    #[test]
    fn user_output_goes_to_the_serial_port_but_not_the_log() {
        let (log_before, log_after) = sim::run(|| {
            let (_, before) = read_log(0);
            write_bytes(b"raw\nbytes");
            crate::println!("logged {}", 42);
            let (log, after) = read_log(before);
            (before, (log, after))
        });
        let (log, after) = log_after;
        assert_eq!(log, b"logged 42\n");
        assert_eq!(after, log_before + 10);
        // No newline translation for user output; the log's gets a CR.
        assert!(sim::serial_output().contains("raw\nbyteslogged 42\r\n"));
    }
}
