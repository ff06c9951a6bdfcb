//! Local interrupt control.

#[cfg(target_os = "none")]
use crate::arch::cpu;

/// Interrupts stay disabled on this CPU while the guard lives; dropping it
/// restores the previous state.
pub struct DisabledLocalIrqGuard {
    was_enabled: bool,
    _not_send: core::marker::PhantomData<*const ()>,
}

pub fn disable_local() -> DisabledLocalIrqGuard {
    #[cfg(target_os = "none")]
    let was_enabled = {
        let e = cpu::interrupts_enabled();
        cpu::disable_interrupts();
        e
    };
    #[cfg(not(target_os = "none"))]
    let was_enabled = false;
    DisabledLocalIrqGuard {
        was_enabled,
        _not_send: core::marker::PhantomData,
    }
}

impl Drop for DisabledLocalIrqGuard {
    fn drop(&mut self) {
        #[cfg(target_os = "none")]
        if self.was_enabled {
            cpu::enable_interrupts();
        }
    }
}

/// Enables interrupts on this CPU (kernel code runs with them on).
pub fn enable_local() {
    #[cfg(target_os = "none")]
    cpu::enable_interrupts();
}
