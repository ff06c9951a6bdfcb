//! Pure-data kernel policies: allocation and scheduling decisions kept free
//! of hardware access so they can be unit- and model-tested on the host.

#![forbid(unsafe_code)]
#![no_std]

#[cfg(test)]
extern crate std;

pub mod frame_alloc;
#[cfg(target_os = "none")]
pub mod heap;
#[cfg(target_os = "none")]
pub mod sched;

extern crate alloc;
