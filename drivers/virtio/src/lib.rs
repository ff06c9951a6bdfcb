//! virtio 1.x in safe Rust: the modern PCI transport (virtio 1.x §4.1) and
//! split virtqueues (§2.7).
//!
//! The crate never touches hardware itself. Everything it shares with a
//! device goes through two small traits, so that the same code runs in the
//! kernel (over `frame::io::IoMem` and `frame::dma::DmaCoherent`) and on the
//! host against the simulated device of [`sim`]:
//! - [`DeviceMemory`]: memory the device reads and writes by bus address
//!   (the rings);
//! - [`Registers`]: a window of device registers (one capability's range of
//!   a memory BAR).
//!
//! Data buffers are only ever named by bus address and length
//! ([`queue::Buffer`]); their owner keeps them alive until the device is done.
//! Nothing here trusts the device: an index, id or length it writes is
//! checked, and a bad one is reported as an error, never a panic.

#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(test, feature = "sim"))]
extern crate std;

pub mod pci;
pub mod queue;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod transport;

pub use queue::{AddError, Buffer, QueueLayout, SplitQueue, Used, UsedError};
pub use transport::{Transport, TransportError};

/// A device-memory or register access outside its window or misaligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

/// Memory shared with the device (DMA-coherent), addressed by offset.
///
/// Each access must be a single, untorn, volatile access of its width (the
/// device may read or write the same bytes at any time). [`fence`] orders
/// every access before it against every access after it, as seen by the
/// device: the places where the virtio spec asks for a memory barrier call it.
///
/// [`fence`]: DeviceMemory::fence
pub trait DeviceMemory {
    /// The address the device uses for offset 0.
    fn bus_addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn read_u16(&self, offset: usize) -> Result<u16, AccessError>;
    fn read_u32(&self, offset: usize) -> Result<u32, AccessError>;
    fn write_u16(&self, offset: usize, value: u16) -> Result<(), AccessError>;
    fn write_u32(&self, offset: usize, value: u32) -> Result<(), AccessError>;
    fn write_u64(&self, offset: usize, value: u64) -> Result<(), AccessError>;
    fn read_bytes(&self, offset: usize, buf: &mut [u8]) -> Result<(), AccessError>;
    fn write_bytes(&self, offset: usize, buf: &[u8]) -> Result<(), AccessError>;
    fn fence(&self);
}

/// A window of device registers (MMIO), addressed by offset; every access is
/// a single volatile access of its width.
pub trait Registers {
    fn read_u8(&self, offset: usize) -> Result<u8, AccessError>;
    fn read_u16(&self, offset: usize) -> Result<u16, AccessError>;
    fn read_u32(&self, offset: usize) -> Result<u32, AccessError>;
    fn write_u8(&self, offset: usize, value: u8) -> Result<(), AccessError>;
    fn write_u16(&self, offset: usize, value: u16) -> Result<(), AccessError>;
    fn write_u32(&self, offset: usize, value: u32) -> Result<(), AccessError>;
}

/// Feature bits common to every device type (virtio 1.x §6).
pub mod feature {
    pub const INDIRECT_DESC: u64 = 1 << 28;
    pub const RING_EVENT_IDX: u64 = 1 << 29;
    pub const VERSION_1: u64 = 1 << 32;
    pub const ACCESS_PLATFORM: u64 = 1 << 33;
    pub const RING_PACKED: u64 = 1 << 34;
}
