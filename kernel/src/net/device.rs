//! Network devices: what a NIC driver gives the IP stack.

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::error::{Errno, Error, Result};

/// A network interface card's driver, as the stack sees it.
pub trait NetDriver: Send + Sync {
    /// The station (MAC) address.
    fn mac(&self) -> [u8; 6];
    /// Largest payload of one Ethernet frame (1500 without the MTU feature).
    fn mtu(&self) -> usize;
    fn link_up(&self) -> bool;
    /// Queues one Ethernet frame (no FCS); EAGAIN when the transmit ring is
    /// full (the stack retries after the next notification).
    fn transmit(&self, frame: &[u8]) -> Result<()>;
    /// Takes one received Ethernet frame if one is waiting; the driver
    /// refills its receive ring itself.
    fn receive(&self) -> Option<Vec<u8>>;
}

/// The stack's side of a registered device.
pub struct NetDevHandle {
    /// The interface index (if_nametoindex).
    pub index: u32,
}

impl NetDevHandle {
    /// Frames arrived or transmit space freed: wakes the stack. May be
    /// called in interrupt context (it only wakes).
    pub fn notify(&self) {}
}

/// Adds `driver` as the next "ethN" interface.
pub fn register_netdev(_driver: Arc<dyn NetDriver>) -> Result<NetDevHandle> {
    Err(Error::new(Errno::ENODEV))
}
