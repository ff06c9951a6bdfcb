//! Local interrupt control, and whether the CPU is running an interrupt
//! handler (in which nothing may sleep, yield or exit).

use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(any(target_os = "none", test))]
use crate::arch::cpu;

/// Interrupts stay disabled on this CPU while the guard lives; dropping it
/// restores the previous state.
pub struct DisabledLocalIrqGuard {
    was_enabled: bool,
    _not_send: core::marker::PhantomData<*const ()>,
}

pub fn disable_local() -> DisabledLocalIrqGuard {
    #[cfg(any(target_os = "none", test))]
    let was_enabled = {
        let e = cpu::interrupts_enabled();
        cpu::disable_interrupts();
        e
    };
    #[cfg(not(any(target_os = "none", test)))]
    let was_enabled = false;
    DisabledLocalIrqGuard {
        was_enabled,
        _not_send: core::marker::PhantomData,
    }
}

impl Drop for DisabledLocalIrqGuard {
    fn drop(&mut self) {
        #[cfg(any(target_os = "none", test))]
        if self.was_enabled {
            cpu::enable_interrupts();
        }
    }
}

/// Enables interrupts on this CPU (kernel code runs with them on).
pub fn enable_local() {
    #[cfg(any(target_os = "none", test))]
    cpu::enable_interrupts();
}

/// Interrupt handlers running on this CPU (single CPU for now).
static IRQ_DEPTH: AtomicU32 = AtomicU32::new(0);

/// Runs `f` as an interrupt handler: [`in_interrupt`] is true meanwhile.
pub(crate) fn run_handler(f: impl FnOnce()) {
    IRQ_DEPTH.fetch_add(1, Ordering::Relaxed);
    f();
    IRQ_DEPTH.fetch_sub(1, Ordering::Relaxed);
}

/// Whether an interrupt handler (or a timer callback it runs) is executing.
pub(crate) fn in_interrupt() -> bool {
    IRQ_DEPTH.load(Ordering::Relaxed) != 0
}
