//! Finding a virtio device's register windows in its PCI capabilities
//! (virtio 1.x §4.1.4: vendor-specific capabilities, cap id 0x09).

use crate::AccessError;

/// PCI vendor id of every virtio device.
pub const VENDOR_ID: u16 = 0x1af4;
/// Capability id of vendor-specific capabilities.
pub const CAP_ID_VENDOR: u8 = 0x09;

/// Virtio device type numbers (§5).
pub mod device_type {
    pub const NET: u16 = 1;
    pub const BLOCK: u16 = 2;
}

/// The device type of a virtio PCI function: 0x1040 + type for modern
/// devices, 0x1000..=0x103f for transitional ones (§4.1.2.1; the
/// transitional ids map through their subsystem device id, which for the
/// block device is 0x1001 → 2).
pub fn device_type_of(vendor: u16, device: u16) -> Option<u16> {
    if vendor != VENDOR_ID {
        return None;
    }
    match device {
        0x1041..=0x107f => Some(device - 0x1040),
        0x1000 => Some(device_type::NET),
        0x1001 => Some(device_type::BLOCK),
        _ => None,
    }
}

/// Read access to a function's configuration space.
pub trait ConfigSpace {
    fn read_u8(&self, offset: u16) -> Result<u8, AccessError>;
    fn read_u32(&self, offset: u16) -> Result<u32, AccessError>;
}

/// `cfg_type` values of the virtio capability.
const COMMON_CFG: u8 = 1;
const NOTIFY_CFG: u8 = 2;
const ISR_CFG: u8 = 3;
const DEVICE_CFG: u8 = 4;

/// One register window: `length` bytes at `offset` in memory BAR `bar`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapRegion {
    pub bar: u8,
    pub offset: u32,
    pub length: u32,
}

/// The windows of a modern virtio device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtioCaps {
    pub common: CapRegion,
    pub notify: CapRegion,
    pub notify_off_multiplier: u32,
    pub isr: CapRegion,
    pub device: Option<CapRegion>,
}

/// Why a function has no usable modern interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapError {
    /// No common, notify or ISR capability (a legacy-only device).
    Missing,
    /// A capability too short for its structure.
    Malformed,
    Access(AccessError),
}

/// Size of the common configuration this driver uses (through queue_device).
const COMMON_CFG_LEN: u32 = 56;

/// Picks the first usable capability of each type from `caps` (the
/// function's capability list as `(id, offset)` pairs), as §4.1.4 asks: a
/// later one of the same type is an alternative the driver may ignore, and
/// one naming a reserved BAR (> 5) is skipped.
pub fn find_caps(cfg: &impl ConfigSpace, caps: &[(u8, u16)]) -> Result<VirtioCaps, CapError> {
    let (mut common, mut notify, mut isr, mut device) = (None, None, None, None);
    for &(id, off) in caps {
        if id != CAP_ID_VENDOR {
            continue;
        }
        let rd8 = |o: u16| cfg.read_u8(off.wrapping_add(o)).map_err(CapError::Access);
        let rd32 = |o: u16| cfg.read_u32(off.wrapping_add(o)).map_err(CapError::Access);
        let cap_len = rd8(2)?;
        let cfg_type = rd8(3)?;
        if !(COMMON_CFG..=DEVICE_CFG).contains(&cfg_type) {
            continue; // PCI_CFG, shared memory, vendor data: not used here
        }
        if cap_len < 16 {
            return Err(CapError::Malformed);
        }
        let bar = rd8(4)?;
        if bar > 5 {
            continue;
        }
        let region = CapRegion {
            bar,
            offset: rd32(8)?,
            length: rd32(12)?,
        };
        match cfg_type {
            COMMON_CFG if common.is_none() => {
                if region.length < COMMON_CFG_LEN {
                    return Err(CapError::Malformed);
                }
                common = Some(region);
            }
            NOTIFY_CFG if notify.is_none() => {
                if cap_len < 20 || region.length < 2 {
                    return Err(CapError::Malformed);
                }
                notify = Some((region, rd32(16)?));
            }
            ISR_CFG if isr.is_none() => {
                if region.length < 1 {
                    return Err(CapError::Malformed);
                }
                isr = Some(region);
            }
            DEVICE_CFG if device.is_none() => device = Some(region),
            _ => {}
        }
    }
    let (Some(common), Some((notify, notify_off_multiplier)), Some(isr)) = (common, notify, isr)
    else {
        return Err(CapError::Missing);
    };
    Ok(VirtioCaps {
        common,
        notify,
        notify_off_multiplier,
        isr,
        device,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    struct Cfg(Vec<u8>);
    impl ConfigSpace for Cfg {
        fn read_u8(&self, o: u16) -> Result<u8, AccessError> {
            self.0.get(o as usize).copied().ok_or(AccessError)
        }
        fn read_u32(&self, o: u16) -> Result<u32, AccessError> {
            let b = self.0.get(o as usize..o as usize + 4).ok_or(AccessError)?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn put_cap(
        cfg: &mut [u8],
        at: usize,
        len: u8,
        ty: u8,
        bar: u8,
        off: u32,
        length: u32,
        mult: Option<u32>,
    ) {
        cfg[at] = CAP_ID_VENDOR;
        cfg[at + 2] = len;
        cfg[at + 3] = ty;
        cfg[at + 4] = bar;
        cfg[at + 8..at + 12].copy_from_slice(&off.to_le_bytes());
        cfg[at + 12..at + 16].copy_from_slice(&length.to_le_bytes());
        if let Some(m) = mult {
            cfg[at + 16..at + 20].copy_from_slice(&m.to_le_bytes());
        }
    }

    #[test]
    fn caps_of_a_qemu_like_device_are_found() {
        let mut c = vec![0u8; 256];
        put_cap(&mut c, 0x40, 16, 5, 0, 0, 0, None); // PCI_CFG: ignored
        put_cap(&mut c, 0x50, 16, 1, 4, 0x0, 0x1000, None);
        put_cap(&mut c, 0x60, 16, 3, 4, 0x1000, 0x1000, None);
        put_cap(&mut c, 0x70, 16, 4, 4, 0x2000, 0x1000, None);
        put_cap(&mut c, 0x80, 20, 2, 4, 0x3000, 0x1000, Some(4));
        put_cap(&mut c, 0x98, 16, 1, 2, 0x0, 0x1000, None); // second common: ignored
        let caps = [
            (0x11, 0x30),
            (9, 0x40),
            (9, 0x50),
            (9, 0x60),
            (9, 0x70),
            (9, 0x80),
            (9, 0x98),
        ];
        let found = find_caps(&Cfg(c), &caps).unwrap();
        assert_eq!(
            found.common,
            CapRegion {
                bar: 4,
                offset: 0,
                length: 0x1000
            }
        );
        assert_eq!(
            found.isr,
            CapRegion {
                bar: 4,
                offset: 0x1000,
                length: 0x1000
            }
        );
        assert_eq!(
            found.device,
            Some(CapRegion {
                bar: 4,
                offset: 0x2000,
                length: 0x1000
            })
        );
        assert_eq!(
            found.notify,
            CapRegion {
                bar: 4,
                offset: 0x3000,
                length: 0x1000
            }
        );
        assert_eq!(found.notify_off_multiplier, 4);
    }

    #[test]
    fn legacy_only_and_malformed_caps_are_refused() {
        let mut c = vec![0u8; 256];
        put_cap(&mut c, 0x50, 16, 1, 4, 0, 0x1000, None);
        assert_eq!(
            find_caps(&Cfg(c.clone()), &[(9, 0x50)]),
            Err(CapError::Missing)
        );
        put_cap(&mut c, 0x60, 16, 2, 4, 0x3000, 0x1000, None); // notify cap without multiplier
        put_cap(&mut c, 0x80, 16, 3, 4, 0x1000, 0x1000, None);
        assert_eq!(
            find_caps(&Cfg(c.clone()), &[(9, 0x50), (9, 0x60), (9, 0x80)]),
            Err(CapError::Malformed)
        );
        // A capability list pointing past config space is an access error, not a panic.
        assert_eq!(
            find_caps(&Cfg(c), &[(9, 0xfff0)]),
            Err(CapError::Access(AccessError))
        );
    }

    #[test]
    fn device_ids_map_to_types() {
        assert_eq!(device_type_of(0x1af4, 0x1042), Some(device_type::BLOCK));
        assert_eq!(device_type_of(0x1af4, 0x1001), Some(device_type::BLOCK));
        assert_eq!(device_type_of(0x1af4, 0x1041), Some(device_type::NET));
        assert_eq!(device_type_of(0x8086, 0x1042), None);
        assert_eq!(device_type_of(0x1af4, 0x1100), None);
    }
}
