//! Network devices: what a NIC driver gives the IP stack, and how it
//! registers (the interface registry itself is in [`super::iface`]).

use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::error::Result;

/// A network interface card's driver, as the stack sees it.
pub trait NetDriver: Send + Sync {
    /// The station (MAC) address.
    fn mac(&self) -> [u8; 6];
    /// Largest payload of one Ethernet frame (1500 without the MTU feature).
    fn mtu(&self) -> usize;
    fn link_up(&self) -> bool;
    /// Queues one Ethernet frame (no FCS); EAGAIN when the transmit ring is
    /// full (the stack counts it dropped; TCP retransmits).
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
    /// Frames arrived or transmit space freed: wakes the stack's poll task.
    /// May be called in interrupt context (it only sets a flag and wakes).
    pub fn notify(&self) {
        super::iface::kick();
    }
}

/// Adds `driver` as the next "ethN" interface (down, unless the kernel
/// command line's `ip=` configures it: then up with that address and
/// default route).
pub fn register_netdev(driver: Arc<dyn NetDriver>) -> Result<NetDevHandle> {
    let index = super::iface::register_eth(driver)?;
    Ok(NetDevHandle { index })
}
