//! Configuration-space access (ECAM, legacy ports), bus enumeration with
//! BAR sizing and capability walking, and frame's own configuration
//! writes (command register, MSI-X).

use alloc::vec::Vec;

use super::{BarInfo, Bdf, Function, MsixInfo, PciDeviceInfo};
use super::{CMD_INTX_DISABLE, CMD_IO, CMD_MEMORY, COMMAND};
use crate::Error;
use crate::io::IoMem;
use crate::mm::Paddr;
use crate::sync::{Once, SpinLock};

/// One way to reach configuration space. Offsets are dword-aligned.
pub(crate) trait ConfigAccess: Send + Sync {
    fn name(&self) -> &'static str;
    /// Bytes of configuration space per function (4096 ECAM, 256 legacy).
    fn space_size(&self) -> u16;
    fn read32(&self, bdf: Bdf, offset: u16) -> u32;
    fn write32(&self, bdf: Bdf, offset: u16, value: u32);
}

/// The PCI Express enhanced configuration mechanism: a memory window of
/// 4 KiB per function, 1 MiB per bus. Each bus's part is mapped (uncached,
/// frame-owned) the first time it is used.
pub(crate) struct Ecam {
    base: Paddr,
    start_bus: u8,
    end_bus: u8,
    buses: SpinLock<[Option<IoMem>; 256]>,
}

impl Ecam {
    fn window(&self, bus: u8) -> Option<IoMem> {
        if bus < self.start_bus || bus > self.end_bus {
            return None;
        }
        if let Some(w) = &self.buses.lock_irq_disabled()[usize::from(bus)] {
            return Some(w.clone());
        }
        // Mapped outside the (leaf) lock; a racing mapping of the same bus
        // is dropped again. Enumeration maps every bus it scans, so the
        // interrupt path (INTx status reads) only ever takes the clone.
        let pa = self.base + (usize::from(bus - self.start_bus) << 20);
        let w = IoMem::new_frame_owned(pa, 1 << 20).ok()?;
        let mut buses = self.buses.lock_irq_disabled();
        let slot = &mut buses[usize::from(bus)];
        if slot.is_none() {
            *slot = Some(w);
            return slot.clone();
        }
        let kept = slot.clone();
        drop(buses);
        drop(w);
        kept
    }
}

pub(crate) fn ecam_offset(bdf: Bdf, offset: u16) -> usize {
    (usize::from(bdf.device & 31) << 15)
        | (usize::from(bdf.function & 7) << 12)
        | usize::from(offset & 0xffc)
}

impl ConfigAccess for Ecam {
    fn name(&self) -> &'static str {
        "ecam"
    }
    fn space_size(&self) -> u16 {
        4096
    }
    fn read32(&self, bdf: Bdf, offset: u16) -> u32 {
        self.window(bdf.bus)
            .and_then(|w| w.read_u32(ecam_offset(bdf, offset)).ok())
            .unwrap_or(u32::MAX)
    }
    fn write32(&self, bdf: Bdf, offset: u16, value: u32) {
        if let Some(w) = self.window(bdf.bus) {
            let _ = w.write_u32(ecam_offset(bdf, offset), value);
        }
    }
}

/// Configuration mechanism #1: address to port 0xcf8, data at 0xcfc.
pub(crate) struct Legacy {
    lock: SpinLock<()>,
}

pub(crate) fn legacy_address(bdf: Bdf, offset: u16) -> u32 {
    0x8000_0000
        | u32::from(bdf.bus) << 16
        | u32::from(bdf.device & 31) << 11
        | u32::from(bdf.function & 7) << 8
        | u32::from(offset & 0xfc)
}

impl ConfigAccess for Legacy {
    fn name(&self) -> &'static str {
        "legacy"
    }
    fn space_size(&self) -> u16 {
        256
    }
    fn read32(&self, bdf: Bdf, offset: u16) -> u32 {
        if offset >= 256 {
            return u32::MAX;
        }
        let _g = self.lock.lock_irq_disabled();
        crate::arch::cpu::outl(0xcf8, legacy_address(bdf, offset));
        crate::arch::cpu::inl(0xcfc)
    }
    fn write32(&self, bdf: Bdf, offset: u16, value: u32) {
        if offset >= 256 {
            return;
        }
        let _g = self.lock.lock_irq_disabled();
        crate::arch::cpu::outl(0xcf8, legacy_address(bdf, offset));
        crate::arch::cpu::outl(0xcfc, value);
    }
}

static ECAM: Once<Ecam> = Once::new();
static LEGACY: Legacy = Legacy {
    lock: SpinLock::new(()),
};

/// Picks the configuration mechanism: ECAM from the ACPI MCFG table if
/// there is one (and it answers), else the legacy ports.
pub(crate) fn probe() -> &'static dyn ConfigAccess {
    if let Some((base, start_bus, end_bus)) = super::acpi::find_mcfg() {
        let end = base + ((usize::from(end_bus - start_bus) + 1) << 20);
        crate::io::reserve_frame_mmio(base, end);
        let ecam = ECAM.call_once(|| Ecam {
            base,
            start_bus,
            end_bus,
            buses: SpinLock::new([const { None }; 256]),
        });
        let host = Bdf {
            bus: start_bus,
            device: 0,
            function: 0,
        };
        if ecam.read32(host, 0) & 0xffff != 0xffff {
            return ecam;
        }
        crate::log_warn!("pci: the MCFG window does not answer; using ports 0xcf8/0xcfc");
    }
    &LEGACY
}

fn read8(a: &dyn ConfigAccess, bdf: Bdf, offset: u16) -> u8 {
    (a.read32(bdf, offset & !3) >> (8 * (offset & 3))) as u8
}

fn read16(a: &dyn ConfigAccess, bdf: Bdf, offset: u16) -> u16 {
    (a.read32(bdf, offset & !3) >> (8 * (offset & 2))) as u16
}

/// Sets and clears command-register bits (the status half is written as
/// zeros: its error bits are write-1-to-clear).
pub(crate) fn update_command(a: &dyn ConfigAccess, bdf: Bdf, set: u16, clear: u16) {
    let cmd = read16(a, bdf, COMMAND);
    a.write32(bdf, COMMAND, u32::from((cmd | set) & !clear));
}

/// Sizes the six BARs of a type-0 function by the write-all-ones
/// protocol, with decoding turned off meanwhile; restores every BAR.
pub(crate) fn size_bars(a: &dyn ConfigAccess, bdf: Bdf) -> [BarInfo; 6] {
    let mut bars = [BarInfo::None; 6];
    let cmd = read16(a, bdf, COMMAND);
    a.write32(bdf, COMMAND, u32::from(cmd & !(CMD_IO | CMD_MEMORY)));
    let mut i = 0;
    while i < 6 {
        let reg = 0x10 + 4 * i as u16;
        let orig = a.read32(bdf, reg);
        a.write32(bdf, reg, u32::MAX);
        let probe = a.read32(bdf, reg);
        a.write32(bdf, reg, orig);
        if orig & 1 == 1 {
            let mut mask = probe & !3;
            if probe >> 16 == 0 {
                mask |= 0xffff_0000; // 16-bit I/O decoder
            }
            if mask & 0xffff != 0 {
                bars[i] = BarInfo::Io {
                    base: orig & !3,
                    size: (!mask).wrapping_add(1),
                };
            }
            i += 1;
            continue;
        }
        let is64 = (orig >> 1) & 3 == 2 && i < 5;
        let prefetchable = orig & 8 != 0;
        let (base, mask) = if is64 {
            let reg_hi = reg + 4;
            let orig_hi = a.read32(bdf, reg_hi);
            a.write32(bdf, reg_hi, u32::MAX);
            let probe_hi = a.read32(bdf, reg_hi);
            a.write32(bdf, reg_hi, orig_hi);
            (
                u64::from(orig_hi) << 32 | u64::from(orig & !0xf),
                u64::from(probe_hi) << 32 | u64::from(probe & !0xf),
            )
        } else {
            (
                u64::from(orig & !0xf),
                0xffff_ffff_0000_0000 | u64::from(probe & !0xf),
            )
        };
        if mask as u32 != 0 || (is64 && mask >> 32 != 0) {
            bars[i] = BarInfo::Mem {
                base,
                size: (!mask).wrapping_add(1),
                prefetchable,
                is64,
            };
        }
        i += if is64 { 2 } else { 1 };
    }
    a.write32(bdf, COMMAND, u32::from(cmd));
    bars
}

/// Walks the capabilities list: `(id, offset)` pairs. A list that loops
/// or points below the header ends the walk (at most 48 entries).
pub(crate) fn capabilities(a: &dyn ConfigAccess, bdf: Bdf) -> Vec<(u8, u16)> {
    let mut caps = Vec::new();
    if read16(a, bdf, 0x06) & (1 << 4) == 0 {
        return caps;
    }
    let mut ptr = u16::from(read8(a, bdf, 0x34) & 0xfc);
    while ptr >= 0x40 && caps.len() < 48 {
        if caps.iter().any(|&(_, o)| o == ptr) {
            break;
        }
        let d = a.read32(bdf, ptr);
        caps.push((d as u8, ptr));
        ptr = u16::from((d >> 8) as u8 & 0xfc);
    }
    caps
}

pub(crate) const CAP_MSIX: u8 = 0x11;

/// The MSI-X capability, if present and well-formed.
pub(crate) fn msix(a: &dyn ConfigAccess, bdf: Bdf, caps: &[(u8, u16)]) -> Option<MsixInfo> {
    let &(_, cap) = caps.iter().find(|(id, _)| *id == CAP_MSIX)?;
    let ctrl = (a.read32(bdf, cap) >> 16) as u16;
    let table = a.read32(bdf, cap + 4);
    let pba = a.read32(bdf, cap + 8);
    let (table_bar, pba_bar) = ((table & 7) as u8, (pba & 7) as u8);
    if table_bar > 5 || pba_bar > 5 {
        return None;
    }
    Some(MsixInfo {
        cap,
        table_size: (ctrl & 0x7ff) + 1,
        table_bar,
        table_offset: table & !7,
        pba_bar,
        pba_offset: pba & !7,
    })
}

fn read_function(a: &dyn ConfigAccess, bdf: Bdf) -> Option<Function> {
    let id = a.read32(bdf, 0);
    if id & 0xffff == 0xffff || id & 0xffff == 0 {
        return None;
    }
    let class = a.read32(bdf, 0x08);
    let header_type = read8(a, bdf, 0x0e) & 0x7f;
    let (subsys, pin, bars) = if header_type == 0 {
        (a.read32(bdf, 0x2c), read8(a, bdf, 0x3d), size_bars(a, bdf))
    } else {
        (0, 0, [BarInfo::None; 6])
    };
    let caps = capabilities(a, bdf);
    let msix = if header_type == 0 {
        msix(a, bdf, &caps)
    } else {
        None
    };
    Some(Function {
        info: PciDeviceInfo {
            bdf,
            vendor_id: id as u16,
            device_id: (id >> 16) as u16,
            class: (class >> 24) as u8,
            subclass: (class >> 16) as u8,
            prog_if: (class >> 8) as u8,
            revision: class as u8,
            subsystem_vendor_id: subsys as u16,
            subsystem_id: (subsys >> 16) as u16,
            header_type,
            interrupt_pin: if pin <= 4 { pin } else { 0 },
        },
        bars,
        caps,
        msix,
    })
}

/// Every function reachable from bus 0 (through bridges), each bus once.
/// Type-0 functions get INTx disabled until a client asks for their line.
pub(crate) fn enumerate(a: &dyn ConfigAccess) -> Vec<Function> {
    let mut out = Vec::new();
    let mut seen = [false; 256];
    let mut todo = Vec::from([0u8]);
    while let Some(bus) = todo.pop() {
        if core::mem::replace(&mut seen[usize::from(bus)], true) {
            continue;
        }
        for device in 0..32u8 {
            let f0 = Bdf {
                bus,
                device,
                function: 0,
            };
            if a.read32(f0, 0) & 0xffff == 0xffff {
                continue;
            }
            let nfunc = if read8(a, f0, 0x0e) & 0x80 != 0 { 8 } else { 1 };
            for function in 0..nfunc {
                let bdf = Bdf {
                    bus,
                    device,
                    function,
                };
                let Some(f) = read_function(a, bdf) else {
                    continue;
                };
                if f.info.header_type == 1 {
                    let secondary = (a.read32(bdf, 0x18) >> 8) as u8;
                    if secondary != 0 {
                        todo.push(secondary);
                    }
                } else if f.info.header_type == 0 {
                    update_command(a, bdf, CMD_INTX_DISABLE, 0);
                }
                out.push(f);
            }
        }
    }
    out.sort_by_key(|f| f.info.bdf);
    out
}

/// The MSI-X table of a function, mapped for frame alone.
pub(crate) struct MsixTable {
    mem: IoMem,
    size: u16,
}

/// Where MSI messages go: the local APIC's message window, boot CPU (id 0).
const MSI_ADDRESS: u32 = 0xfee0_0000;

impl MsixTable {
    pub(crate) fn map(f: &Function, m: MsixInfo) -> Result<MsixTable, Error> {
        let (s, e) = *f
            .msix_phys_ranges()
            .first()
            .filter(|_| f.msix_phys_ranges().len() == 2)
            .ok_or(Error::InvalidArgs)?;
        Ok(MsixTable {
            mem: IoMem::new_frame_owned(s, e - s)?,
            size: m.table_size,
        })
    }

    /// Points entry `entry` at `vector` on the boot CPU, masked.
    pub(crate) fn program(&self, entry: u16, vector: u8) {
        if entry >= self.size {
            return;
        }
        let at = 16 * usize::from(entry);
        let _ = self.mem.write_u32(at + 12, 1);
        let _ = self.mem.write_u32(at, MSI_ADDRESS);
        let _ = self.mem.write_u32(at + 4, 0);
        let _ = self.mem.write_u32(at + 8, u32::from(vector));
    }

    pub(crate) fn set_masked(&self, entry: u16, masked: bool) {
        if entry >= self.size {
            return;
        }
        let _ = self
            .mem
            .write_u32(16 * usize::from(entry) + 12, u32::from(masked));
    }

    #[allow(dead_code)]
    pub(crate) fn is_masked(&self, entry: u16) -> bool {
        self.mem
            .read_u32(16 * usize::from(entry) + 12)
            .is_ok_and(|v| v & 1 != 0)
    }
}

/// Turns MSI-X on (function mask clear); entries keep their own masks.
pub(crate) fn enable_msix(a: &dyn ConfigAccess, bdf: Bdf, m: MsixInfo) {
    let d = a.read32(bdf, m.cap);
    let ctrl = ((d >> 16) as u16 | 1 << 15) & !(1 << 14);
    a.write32(bdf, m.cap, (d & 0xffff) | u32::from(ctrl) << 16);
}

/// The vector all legacy PCI INTx lines share. On q35 the chipset routes
/// PIRQ A–H to I/O APIC pins 16–23 (level-triggered, active high, as the
/// ACPI tables QEMU builds say); which pin a function's INTx reaches
/// depends on its slot, so all eight pins go to this vector and the
/// dispatcher calls the callbacks of the functions whose status register
/// shows an asserted INTx.
pub(crate) fn intx_vector() -> Result<u8, Error> {
    static VECTOR: Once<Result<u8, Error>> = Once::new();
    *VECTOR.call_once(|| {
        let v = crate::irq::alloc_vector()?;
        for gsi in 16..24 {
            crate::arch::ioapic::route_level(gsi, v);
        }
        Ok(v)
    })
}
