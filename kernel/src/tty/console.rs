//! The console terminal on the serial port: the driver of the terminal
//! behind /dev/console, init's fds 0-2 and, for the sessions it controls,
//! /dev/tty (terminal.rs has what all terminals share).
//!
//! A kernel task runs the line discipline on every received byte, woken by
//! the UART receive interrupt (or, where that is missing, every 10 ms):
//! ^C, ^Z and ^\ reach the foreground process group even while nobody
//! reads. Output goes to the UART as soon as it is queued. The terminal
//! controls init's session from boot.

use alloc::boxed::Box;
use alloc::sync::Arc;

use frame::sync::Once;

use crate::fs::devices;
use crate::fs::FileOps;
use super::terminal::{Tty, TtyDriver, TtyFile};
use super::termios::*;
use super::job::Owner;

/// How often input is polled when the UART interrupt is not available,
/// and (rarely) when it is, in case one is lost.
const POLL_NS: u64 = 10_000_000;
const IRQ_POLL_NS: u64 = 1_000_000_000;

static CONSOLE: Once<Arc<Tty>> = Once::new();

/// The UART side of the console.
struct Serial;

impl TtyDriver for Serial {
    fn device(&self) -> u64 {
        devices::CONSOLE
    }

    /// Output never waits: it is written out as soon as it is queued.
    fn output_capacity(&self) -> usize {
        usize::MAX
    }

    fn output_queued(&self, tty: &Tty) {
        let out = core::mem::take(&mut tty.lock().output);
        let (a, b) = out.as_slices();
        frame::console::write_bytes(a);
        frame::console::write_bytes(b);
    }
}

/// The terminal, created (with its input task) on first use. It starts as
/// the controlling terminal of init's session.
fn console() -> &'static Arc<Tty> {
    let mut created = false;
    let tty = CONSOLE.call_once(|| {
        created = true;
        let init = crate::process::INIT_PID;
        let winsize = WinSize {
            ws_row: 24,
            ws_col: 80,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let owner = Owner {
            session: init,
            fg_pgrp: init,
        };
        Arc::new(Tty::new(
            Termios::serial_console(),
            winsize,
            owner,
            Box::new(Serial),
        ))
    });
    if created && frame::task::TaskOptions::new(input_task).spawn().is_err() {
        frame::log_warn!("console: no input task; typed input is lost");
    }
    tty
}

/// The console terminal, if it is in use.
pub fn existing() -> Option<Arc<Tty>> {
    CONSOLE.get().cloned()
}

/// A new open file on the console (/dev/console).
pub fn open() -> Arc<dyn FileOps> {
    TtyFile::new(console().clone(), false)
}

/// Runs the line discipline on received bytes, forever.
fn input_task() {
    let rx = frame::console::input_wait_queue();
    loop {
        let period = if frame::console::input_interrupts_enabled() {
            IRQ_POLL_NS
        } else {
            POLL_NS
        };
        let deadline = frame::timer::monotonic_ns().saturating_add(period);
        if let Some(first) = rx.wait_until_or_deadline(frame::console::try_read_byte, deadline) {
            // What else has arrived, in a bounded batch so that echo is
            // not held back for long; what does not fit is dropped.
            let more = core::iter::from_fn(frame::console::try_read_byte);
            let mut bytes = core::iter::once(first).chain(more).take(256);
            console().receive(&mut bytes, false);
        }
    }
}
