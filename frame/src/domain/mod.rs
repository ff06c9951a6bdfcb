//! Driver domains, the mechanism: a call that runs on a stack of its own
//! and comes back with [`Fault`] instead of bringing the kernel down if the
//! code it runs panics (the *continuation*, ARCHITECTURE §6), and the
//! [`Exchangeable`] values that may cross into and out of such a call.
//!
//! [`call_isolated`] records where it was called from (callee-saved
//! registers and the stack pointer, on the caller's stack) in a
//! [`Recovery`] that the current task keeps, then switches to the
//! [`DomainStack`] and calls the function there. If the function returns,
//! the call switches back and returns its value. If it panics, the panic
//! handler asks [`recover_from_panic`]: when the panic is recoverable it
//! restores the lock bookkeeping and the interrupt state saved at the call,
//! and jumps back to the recorded registers, so the call returns
//! `Err(Fault::Panic)`. No unwinding happens: the domain's frames are
//! abandoned, without running their destructors.
//!
//! Why abandoning frames is sound here (docs/domains.md has the long form):
//! - The function is a plain `fn` (no captured references) and its argument
//!   and result are [`Exchangeable`]: owned values that point at nothing
//!   outside themselves. Whatever the function was changing halfway is its
//!   own and is forgotten with it; a value forgotten (leaked) is always
//!   safe.
//! - Shared kernel state the function reaches through statics sits behind
//!   locks or atomics. A panic with a spin lock or a ranked lock held is not
//!   recovered (the bookkeeping says so): the kernel panics as before. A
//!   sleeping lock that is not ranked stays locked forever: a hang of its
//!   users, never a torn read.
//! - A panic inside frame/ itself, in interrupt context, or outside any
//!   isolated call is not recovered either.
//! - Nothing outside the domain stack points into it once the call is over:
//!   tasks sleep on wait queues through their `Arc<Task>`, never through
//!   nodes on their stack, and the stack is only reused by the next call.

mod exchange;

pub use self::exchange::{Exchangeable, Owner, assert_exchangeable};

#[cfg(any(target_os = "none", test))]
mod call;

#[cfg(any(target_os = "none", test))]
mod object;

pub(crate) mod heap;

#[cfg(any(target_os = "none", test))]
mod handle;

#[cfg(any(target_os = "none", test))]
mod rref;

#[cfg(any(target_os = "none", test))]
pub use self::call::{DomainStack, Fault, call_isolated, faults};
pub use self::heap::{HeapUsage, MAX_DOMAINS};
#[cfg(any(target_os = "none", test))]
pub use self::handle::Handle;
#[cfg(any(target_os = "none", test))]
pub use self::rref::{RRef, live_rrefs};
#[cfg(any(target_os = "none", test))]
pub use self::object::{DeviceReset, Domain, DomainInfo, DomainStats, domains};
#[cfg(any(target_os = "none", test))]
pub(crate) use self::call::{Recovery, recover_from_panic};
