//! Trellis frame: the privileged framework of the Trellis framekernel.
//!
//! This is the only crate of the kernel allowed to use `unsafe`. It owns
//! boot, CPU state, page tables, physical memory, interrupts and context
//! switches, and exports safe abstractions: untyped frames, user address
//! spaces, user-mode execution, tasks and locks. Everything built on top is
//! safe Rust; if a safe API here can be misused into undefined behaviour, the
//! bug is in this crate. See `docs/frame-api.md` for the invariants.

#![cfg_attr(not(test), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
// On the host only the memory core is built (for tests); the rest is idle.
#![cfg_attr(not(target_os = "none"), allow(dead_code, unused_imports))]

extern crate alloc;

#[cfg(any(target_os = "none", test))]
pub(crate) mod arch {
    pub mod x86_64;
    pub use self::x86_64::*;
}
#[cfg(any(target_os = "none", test))]
mod backtrace;
#[cfg(any(target_os = "none", test))]
pub mod boot;
pub mod console;
#[cfg(any(target_os = "none", test))]
pub mod cpu;
#[cfg(any(target_os = "none", test))]
pub mod dma;
pub mod domain;
mod index_pool;
#[cfg(any(target_os = "none", test))]
pub mod io;
pub mod irq;
pub mod mm;
#[cfg(any(target_os = "none", test))]
pub mod pci;
pub mod pod;
#[cfg(test)]
mod sim;
pub mod sync;
#[cfg(any(target_os = "none", test))]
pub mod task;
#[cfg(any(target_os = "none", test))]
pub mod timer;
#[cfg(any(target_os = "none", test))]
mod trap;
#[cfg(any(target_os = "none", test))]
pub mod user;

pub use pod::Pod;

/// Errors of frame APIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    NoMemory,
    InvalidArgs,
    AccessDenied,
}

/// Policies the kernel injects at boot (ARCHITECTURE §3).
#[cfg(any(target_os = "none", test))]
pub struct Policies {
    pub frame_alloc: &'static dyn mm::FrameAllocPolicy,
    pub heap: &'static dyn mm::HeapPolicy,
    pub scheduler: &'static dyn task::Scheduler,
}

/// Brings up memory, the heap, the timer and the scheduler. The kernel's
/// `main` calls this first, once: a second call would rebuild the frame
/// metadata and the kernel page table under pages in use, so it panics.
#[cfg(any(target_os = "none", test))]
pub fn init(policies: Policies) {
    static DONE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    assert!(
        !DONE.swap(true, core::sync::atomic::Ordering::AcqRel),
        "invariant: frame::init runs once"
    );
    mm::frame_alloc::inject_policy(policies.frame_alloc);
    boot::init_memory();
    mm::heap::inject_policy(policies.heap);
    task::inject_scheduler(policies.scheduler);
    timer::init();
    console::enable_input_interrupt();
    pci::init();
}

/// Turns the boot context into the first task; never returns. Only the boot
/// context may call it, once, after [`init`]: from a task it would abandon
/// (and later reuse) the stack that task runs on, so that panics.
#[cfg(any(target_os = "none", test))]
pub fn run_first_task(options: task::TaskOptions) -> ! {
    task::claim_first_run();
    let task = options.build().expect("cannot create the first task");
    task::run_first(task)
}

/// Powers the machine off, reporting `code` to the host (QEMU isa-debug-exit).
#[cfg(any(target_os = "none", test))]
pub fn power_off(code: u32) -> ! {
    arch::qemu::exit(code)
}

/// Restarts the machine (reset line; QEMU reboots, or exits under
/// `-no-reboot`).
#[cfg(any(target_os = "none", test))]
pub fn restart() -> ! {
    arch::qemu::reset()
}

/// Halts the machine for good, powered on (reboot(2)'s `HALT`).
#[cfg(any(target_os = "none", test))]
pub fn halt() -> ! {
    arch::qemu::halt()
}

#[cfg(any(target_os = "none", test))]
pub(crate) fn power_off_after_panic() -> ! {
    arch::qemu::exit(0x7f)
}

/// Declares the kernel's entry point: `frame::main!(my_main);` with
/// `fn my_main() -> !`.
#[macro_export]
macro_rules! main {
    ($f:path) => {
        // The simulated machine of the host tests has its `main` too:
        // MIRI: relied on by arch::x86_64::tests::boot_cpu_tables_are_loaded_and_checked
        #[unsafe(export_name = "__trellis_main")]
        extern "Rust" fn __trellis_main() -> ! {
            $f()
        }
    };
}

#[cfg(all(target_os = "none", not(test)))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    arch::cpu::disable_interrupts();
    // A recoverable fault of a driver domain returns to its caller.
    domain::recover_from_panic(info);
    console::print_unlocked(format_args!("\ntrellis: KERNEL PANIC: {info}\n"));
    backtrace::print_backtrace(None, arch::cpu::frame_pointer() as u64);
    power_off_after_panic()
}
