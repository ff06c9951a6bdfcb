//! The virtio 1.x modern PCI transport (§4.1.4): the common configuration
//! (status handshake, features, queues, MSI-X vectors), notification, the
//! ISR status and the device-specific configuration.
//!
//! The transport owns the register windows; it keeps no other state than
//! where they are, so the driver above it is the one owner of the device.

use crate::{AccessError, Registers, feature};

/// Offsets in the common configuration structure (§4.1.4.3).
mod common {
    pub const DEVICE_FEATURE_SELECT: usize = 0;
    pub const DEVICE_FEATURE: usize = 4;
    pub const DRIVER_FEATURE_SELECT: usize = 8;
    pub const DRIVER_FEATURE: usize = 12;
    pub const CONFIG_MSIX_VECTOR: usize = 16;
    pub const NUM_QUEUES: usize = 18;
    pub const DEVICE_STATUS: usize = 20;
    pub const CONFIG_GENERATION: usize = 21;
    pub const QUEUE_SELECT: usize = 22;
    pub const QUEUE_SIZE: usize = 24;
    pub const QUEUE_MSIX_VECTOR: usize = 26;
    pub const QUEUE_ENABLE: usize = 28;
    pub const QUEUE_NOTIFY_OFF: usize = 30;
    pub const QUEUE_DESC: usize = 32;
    pub const QUEUE_DRIVER: usize = 40;
    pub const QUEUE_DEVICE: usize = 48;
}

/// Device status bits (§2.1).
pub mod status {
    pub const ACKNOWLEDGE: u8 = 1;
    pub const DRIVER: u8 = 2;
    pub const DRIVER_OK: u8 = 4;
    pub const FEATURES_OK: u8 = 8;
    pub const DEVICE_NEEDS_RESET: u8 = 64;
    pub const FAILED: u8 = 128;
}

/// "No vector" for config_msix_vector and queue_msix_vector.
pub const NO_VECTOR: u16 = 0xffff;
/// ISR status bits (§4.1.4.5), for INTx.
pub const ISR_QUEUE: u8 = 1;
pub const ISR_CONFIG: u8 = 2;

/// How many times reset polls for the status to read back 0.
const RESET_POLLS: u32 = 1_000_000;
/// How many times a config read retries on a changing generation.
const CONFIG_RETRIES: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportError {
    Access(AccessError),
    /// The device does not offer VIRTIO_F_VERSION_1 (legacy only).
    NoVersion1,
    /// The device cleared FEATURES_OK: it cannot work with what we accepted.
    FeaturesRefused,
    /// The device did not come out of reset.
    ResetTimeout,
    /// The queue does not exist or has size 0.
    NoQueue,
    /// The queue is already enabled.
    QueueInUse,
    /// The device did not accept the MSI-X vector (read back NO_VECTOR).
    VectorRefused,
    /// The device-specific configuration kept changing, or is absent.
    Config,
}

impl From<AccessError> for TransportError {
    fn from(e: AccessError) -> Self {
        Self::Access(e)
    }
}

/// Where to write to notify one queue (the notify window offset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notifier {
    pub queue: u16,
    pub offset: usize,
}

/// A modern virtio PCI device's register windows.
pub struct Transport<R> {
    common: R,
    notify: R,
    notify_off_multiplier: u32,
    isr: R,
    device: Option<R>,
}

impl<R: Registers> Transport<R> {
    pub fn new(
        common: R,
        notify: R,
        notify_off_multiplier: u32,
        isr: R,
        device: Option<R>,
    ) -> Self {
        Self {
            common,
            notify,
            notify_off_multiplier,
            isr,
            device,
        }
    }

    pub fn status(&self) -> Result<u8, TransportError> {
        Ok(self.common.read_u8(common::DEVICE_STATUS)?)
    }

    fn set_status(&self, s: u8) -> Result<(), TransportError> {
        Ok(self.common.write_u8(common::DEVICE_STATUS, s)?)
    }

    /// Resets the device (§4.1.4.3.2: write 0, then wait until 0 reads back).
    /// After it the device no longer touches any queue memory.
    pub fn reset(&self) -> Result<(), TransportError> {
        self.set_status(0)?;
        for _ in 0..RESET_POLLS {
            if self.status()? == 0 {
                return Ok(());
            }
            core::hint::spin_loop();
        }
        Err(TransportError::ResetTimeout)
    }

    /// Tells the device the driver gave up (status FAILED).
    pub fn fail(&self) {
        let s = self.status().unwrap_or(0);
        let _ = self.set_status(s | status::FAILED);
    }

    /// Steps 1–6 of §3.1.1: reset, ACKNOWLEDGE, DRIVER, feature negotiation
    /// (`wanted` ∩ offered, VERSION_1 required), FEATURES_OK checked. Returns
    /// the negotiated features. On error the device is marked FAILED.
    pub fn negotiate(&self, wanted: u64) -> Result<u64, TransportError> {
        self.reset()?;
        self.set_status(status::ACKNOWLEDGE)?;
        self.set_status(status::ACKNOWLEDGE | status::DRIVER)?;
        let r = self.negotiate_features(wanted);
        if r.is_err() {
            self.fail();
        }
        r
    }

    fn negotiate_features(&self, wanted: u64) -> Result<u64, TransportError> {
        let offered = self.device_features()?;
        if offered & feature::VERSION_1 == 0 {
            return Err(TransportError::NoVersion1);
        }
        let accepted = offered & (wanted | feature::VERSION_1);
        for half in 0..2u32 {
            self.common.write_u32(common::DRIVER_FEATURE_SELECT, half)?;
            self.common
                .write_u32(common::DRIVER_FEATURE, (accepted >> (32 * half)) as u32)?;
        }
        let s = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK;
        self.set_status(s)?;
        if self.status()? & status::FEATURES_OK == 0 {
            return Err(TransportError::FeaturesRefused);
        }
        Ok(accepted)
    }

    pub fn device_features(&self) -> Result<u64, TransportError> {
        let mut f = 0u64;
        for half in 0..2u32 {
            self.common.write_u32(common::DEVICE_FEATURE_SELECT, half)?;
            f |= u64::from(self.common.read_u32(common::DEVICE_FEATURE)?) << (32 * half);
        }
        Ok(f)
    }

    pub fn num_queues(&self) -> Result<u16, TransportError> {
        Ok(self.common.read_u16(common::NUM_QUEUES)?)
    }

    /// The largest size queue `index` accepts, rounded down to a power of
    /// two (split queues need one).
    pub fn max_queue_size(&self, index: u16) -> Result<u16, TransportError> {
        if index >= self.num_queues()? {
            return Err(TransportError::NoQueue);
        }
        self.common.write_u16(common::QUEUE_SELECT, index)?;
        let max = self.common.read_u16(common::QUEUE_SIZE)?;
        if max == 0 {
            return Err(TransportError::NoQueue);
        }
        Ok(1 << (15 - max.leading_zeros()))
    }

    /// Sets the MSI-X vector for configuration changes (`NO_VECTOR` for none).
    pub fn set_config_vector(&self, vector: u16) -> Result<(), TransportError> {
        self.common.write_u16(common::CONFIG_MSIX_VECTOR, vector)?;
        if vector != NO_VECTOR && self.common.read_u16(common::CONFIG_MSIX_VECTOR)? != vector {
            return Err(TransportError::VectorRefused);
        }
        Ok(())
    }

    /// Step 7 of §3.1.1 for one queue: size, MSI-X vector, ring addresses
    /// (from [`SplitQueue::ring_addresses`](crate::SplitQueue::ring_addresses)),
    /// then enable. Returns where to notify it.
    pub fn setup_queue(
        &self,
        index: u16,
        size: u16,
        (desc, driver, device): (u64, u64, u64),
        vector: u16,
    ) -> Result<Notifier, TransportError> {
        if size == 0 || size > self.max_queue_size(index)? {
            return Err(TransportError::NoQueue);
        }
        // max_queue_size selected the queue.
        if self.common.read_u16(common::QUEUE_ENABLE)? != 0 {
            return Err(TransportError::QueueInUse);
        }
        self.common.write_u16(common::QUEUE_SIZE, size)?;
        self.common.write_u16(common::QUEUE_MSIX_VECTOR, vector)?;
        if vector != NO_VECTOR && self.common.read_u16(common::QUEUE_MSIX_VECTOR)? != vector {
            return Err(TransportError::VectorRefused);
        }
        for (off, addr) in [
            (common::QUEUE_DESC, desc),
            (common::QUEUE_DRIVER, driver),
            (common::QUEUE_DEVICE, device),
        ] {
            self.common.write_u32(off, addr as u32)?;
            self.common.write_u32(off + 4, (addr >> 32) as u32)?;
        }
        let notify_off = self.common.read_u16(common::QUEUE_NOTIFY_OFF)?;
        let offset = usize::from(notify_off)
            .checked_mul(self.notify_off_multiplier as usize)
            .ok_or(TransportError::NoQueue)?;
        self.common.write_u16(common::QUEUE_ENABLE, 1)?;
        Ok(Notifier {
            queue: index,
            offset,
        })
    }

    /// Step 8 of §3.1.1: the device is live.
    pub fn driver_ok(&self) -> Result<(), TransportError> {
        let s = self.status()?;
        self.set_status(s | status::DRIVER_OK)
    }

    /// Notifies the device that queue `n.queue` has new buffers (§4.1.4.4:
    /// the queue index written at the queue's notify address).
    pub fn notify(&self, n: Notifier) -> Result<(), TransportError> {
        Ok(self.notify.write_u16(n.offset, n.queue)?)
    }

    /// Reads (and so acknowledges) the ISR status; only needed with INTx.
    pub fn read_isr(&self) -> Result<u8, TransportError> {
        Ok(self.isr.read_u8(0)?)
    }

    /// Reads device-specific configuration consistently: `read` is retried
    /// until config_generation is the same before and after (§4.1.4.3.1).
    pub fn read_config<T>(
        &self,
        read: impl Fn(&R) -> Result<T, AccessError>,
    ) -> Result<T, TransportError> {
        let device = self.device.as_ref().ok_or(TransportError::Config)?;
        for _ in 0..CONFIG_RETRIES {
            let before = self.common.read_u8(common::CONFIG_GENERATION)?;
            let v = read(device)?;
            if self.common.read_u8(common::CONFIG_GENERATION)? == before {
                return Ok(v);
            }
        }
        Err(TransportError::Config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{SIM_NOTIFY_MULTIPLIER, SimPciDevice, SimRegs, SimWindow};
    use alloc::vec;

    fn transport(dev: &SimPciDevice) -> Transport<SimRegs> {
        Transport::new(
            dev.regs(SimWindow::Common),
            dev.regs(SimWindow::Notify),
            SIM_NOTIFY_MULTIPLIER,
            dev.regs(SimWindow::Isr),
            Some(dev.regs(SimWindow::Device)),
        )
    }

    #[test]
    fn negotiation_accepts_the_common_subset_with_version_1() {
        let dev = SimPciDevice::new(feature::VERSION_1 | 0b1010_0110, &[128], 2, vec![0; 16]);
        let t = transport(&dev);
        let got = t.negotiate(0b0000_0110 | (1 << 40)).unwrap();
        assert_eq!(got, feature::VERSION_1 | 0b0110);
        assert_eq!(dev.driver_features(), got);
        assert_eq!(
            dev.status(),
            status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK
        );
        t.driver_ok().unwrap();
        assert_eq!(dev.status() & status::DRIVER_OK, status::DRIVER_OK);
    }

    #[test]
    fn legacy_device_and_refused_features_fail_the_device() {
        let dev = SimPciDevice::new(0b110, &[128], 2, vec![]);
        assert_eq!(
            transport(&dev).negotiate(0b110),
            Err(TransportError::NoVersion1)
        );
        assert_eq!(dev.status() & status::FAILED, status::FAILED);

        let dev = SimPciDevice::new(feature::VERSION_1, &[128], 2, vec![]);
        dev.set_refuse_features(true);
        assert_eq!(
            transport(&dev).negotiate(0),
            Err(TransportError::FeaturesRefused)
        );
        assert_eq!(dev.status() & status::FAILED, status::FAILED);
    }

    #[test]
    fn queue_setup_writes_size_vector_addresses_and_enables() {
        let dev = SimPciDevice::new(feature::VERSION_1, &[256, 0, 100], 2, vec![]);
        let t = transport(&dev);
        t.negotiate(0).unwrap();
        assert_eq!(t.num_queues().unwrap(), 3);
        assert_eq!(t.max_queue_size(0).unwrap(), 256);
        assert_eq!(t.max_queue_size(1), Err(TransportError::NoQueue));
        assert_eq!(
            t.max_queue_size(2).unwrap(),
            64,
            "rounded down to a power of two"
        );
        assert_eq!(t.max_queue_size(3), Err(TransportError::NoQueue));

        t.set_config_vector(0).unwrap();
        assert_eq!(dev.config_msix(), 0);
        let addrs = (0x1_2345_6000, 0x1_2345_7000, 0x2_0000_0040);
        let n = t.setup_queue(2, 64, addrs, 1).unwrap();
        assert_eq!(
            n,
            Notifier {
                queue: 2,
                offset: 2 * SIM_NOTIFY_MULTIPLIER as usize
            }
        );
        let q = dev.queue(2);
        assert_eq!((q.size, q.msix_vector, q.enabled), (64, 1, true));
        assert_eq!((q.desc, q.driver, q.device), addrs);
        assert_eq!(
            t.setup_queue(2, 64, addrs, 1),
            Err(TransportError::QueueInUse)
        );
        assert_eq!(
            t.setup_queue(0, 512, addrs, 1),
            Err(TransportError::NoQueue)
        );

        t.notify(n).unwrap();
        assert_eq!(dev.take_notifications(), vec![2]);
    }

    #[test]
    fn a_vector_the_device_refuses_is_an_error() {
        let dev = SimPciDevice::new(feature::VERSION_1, &[16], 1, vec![]);
        let t = transport(&dev);
        t.negotiate(0).unwrap();
        assert_eq!(t.set_config_vector(1), Err(TransportError::VectorRefused));
        assert_eq!(
            t.setup_queue(0, 16, (0x1000, 0x2000, 0x3000), 5),
            Err(TransportError::VectorRefused)
        );
        t.set_config_vector(NO_VECTOR).unwrap();
    }

    #[test]
    fn isr_read_acknowledges_and_config_reads_are_consistent() {
        let dev = SimPciDevice::new(feature::VERSION_1, &[16], 1, vec![0; 8]);
        let t = transport(&dev);
        dev.set_isr(ISR_QUEUE);
        assert_eq!(t.read_isr().unwrap(), ISR_QUEUE);
        assert_eq!(t.read_isr().unwrap(), 0);
        dev.set_device_cfg(0, &0x1234_5678_9abc_def0u64.to_le_bytes());
        let v = t
            .read_config(|r| Ok(u64::from(r.read_u32(0)?) | (u64::from(r.read_u32(4)?) << 32)))
            .unwrap();
        assert_eq!(v, 0x1234_5678_9abc_def0);
    }
}
