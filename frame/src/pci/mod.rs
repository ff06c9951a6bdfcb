//! PCI: enumeration, configuration space, BARs, capabilities, claiming a
//! function, and its interrupts (MSI-X, else legacy INTx).
//!
//! Configuration space is reached through ECAM (the window the ACPI MCFG
//! table describes; q35 has one) or, when there is no MCFG, through the
//! legacy ports 0xcf8/0xcfc. Frame enumerates every bus once at
//! [`init`], sizes each BAR then (the write-all-ones protocol, with
//! decoding off), and records the MSI-X table and PBA of every function as
//! frame-owned (invariant 7: no `IoMem` covers them). Clients see the
//! configuration space read-only; frame alone writes it (command register,
//! MSI-X control).
//!
//! A client claims a function once ([`claim`]); a second claim is refused
//! with `AccessDenied` until the first claimant's `PciDevice` and every
//! `IrqLine` taken from it are gone.

mod acpi;
mod config;
#[cfg(test)]
mod tests;

use alloc::sync::Arc;
use alloc::vec::Vec;

use self::config::ConfigAccess;
use crate::Error;
use crate::io::{IoMem, IoPort};
use crate::irq::{IrqLine, IrqSource};
use crate::mm::Paddr;
use crate::sync::{Once, SpinLock};

/// Bus, device, function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bdf {
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl core::fmt::Display for Bdf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:02x}:{:02x}.{}", self.bus, self.device, self.function)
    }
}

/// What enumeration found about a function (identity, class, interrupt pin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciDeviceInfo {
    pub bdf: Bdf,
    pub vendor_id: u16,
    pub device_id: u16,
    pub class: u8,
    pub subclass: u8,
    pub prog_if: u8,
    pub revision: u8,
    pub subsystem_vendor_id: u16,
    pub subsystem_id: u16,
    /// Header type without the multi-function bit (0: device, 1: bridge).
    pub header_type: u8,
    /// Legacy interrupt pin: 0 none, 1..=4 INTA..INTD.
    pub interrupt_pin: u8,
}

/// A BAR as sized at enumeration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarInfo {
    None,
    Mem {
        base: u64,
        size: u64,
        prefetchable: bool,
        is64: bool,
    },
    Io {
        base: u32,
        size: u32,
    },
}

/// The MSI-X capability of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MsixInfo {
    /// Capability offset in configuration space.
    pub cap: u16,
    pub table_size: u16,
    pub table_bar: u8,
    pub table_offset: u32,
    pub pba_bar: u8,
    pub pba_offset: u32,
}

impl MsixInfo {
    /// Byte ranges `(bar, offset, len)` of the table and the PBA.
    pub(crate) fn ranges(&self) -> [(u8, u64, u64); 2] {
        let n = u64::from(self.table_size);
        [
            (self.table_bar, u64::from(self.table_offset), 16 * n),
            (self.pba_bar, u64::from(self.pba_offset), 8 * n.div_ceil(64)),
        ]
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub info: PciDeviceInfo,
    pub bars: [BarInfo; 6],
    pub caps: Vec<(u8, u16)>,
    pub msix: Option<MsixInfo>,
}

impl Function {
    /// Physical ranges of the MSI-X table and PBA (frame's own).
    pub(crate) fn msix_phys_ranges(&self) -> Vec<(Paddr, Paddr)> {
        let Some(m) = self.msix else {
            return Vec::new();
        };
        m.ranges()
            .iter()
            .filter_map(|&(bar, off, len)| match self.bars.get(usize::from(bar)) {
                Some(BarInfo::Mem { base, .. }) => {
                    let s = base.checked_add(off)? as Paddr;
                    Some((s, s.checked_add(len as Paddr)?))
                }
                _ => None,
            })
            .collect()
    }
}

struct Bus {
    access: &'static dyn ConfigAccess,
    functions: Vec<Function>,
}

static BUS: Once<Bus> = Once::new();
static CLAIMED: SpinLock<Vec<Bdf>> = SpinLock::new(Vec::new());

/// Enumerates PCI (once; `frame::init` calls it). Later calls do nothing.
pub(crate) fn init() {
    BUS.call_once(|| {
        let access = config::probe();
        let functions = config::enumerate(access);
        for f in &functions {
            for (s, e) in f.msix_phys_ranges() {
                crate::io::reserve_frame_mmio(s, e);
            }
        }
        Bus { access, functions }
    });
}

fn bus() -> Option<&'static Bus> {
    BUS.get()
}

/// Every function found at boot, in bus order.
pub fn devices() -> Vec<PciDeviceInfo> {
    bus().map_or_else(Vec::new, |b| b.functions.iter().map(|f| f.info).collect())
}

/// How configuration space is reached: `"ecam"` or `"legacy"` (or `"none"`
/// before enumeration).
pub fn config_mechanism() -> &'static str {
    bus().map_or("none", |b| b.access.name())
}

/// Releases the claim on `bdf` when the last holder goes.
#[derive(Debug)]
struct Claim(Bdf);

impl Drop for Claim {
    fn drop(&mut self) {
        CLAIMED.lock_irq_disabled().retain(|b| *b != self.0);
    }
}

/// Claims function `bdf` for exclusive use. A function is claimed once at
/// a time: `AccessDenied` while another claim lives; `InvalidArgs` when no
/// such function exists.
pub fn claim(bdf: Bdf) -> Result<PciDevice, Error> {
    let bus = bus().ok_or(Error::InvalidArgs)?;
    let f = bus
        .functions
        .iter()
        .find(|f| f.info.bdf == bdf)
        .ok_or(Error::InvalidArgs)?;
    {
        let mut c = CLAIMED.lock_irq_disabled();
        if c.contains(&bdf) {
            return Err(Error::AccessDenied);
        }
        c.try_reserve(1).map_err(|_| Error::NoMemory)?;
        c.push(bdf);
    }
    Ok(PciDevice {
        func: f,
        access: bus.access,
        claim: Arc::new(Claim(bdf)),
        irqs_taken: SpinLock::new(false),
    })
}

/// A claimed PCI function.
pub struct PciDevice {
    func: &'static Function,
    access: &'static dyn ConfigAccess,
    claim: Arc<Claim>,
    irqs_taken: SpinLock<bool>,
}

impl core::fmt::Debug for PciDevice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PciDevice")
            .field("bdf", &self.func.info.bdf)
            .finish()
    }
}

/// A BAR handed to a client.
#[derive(Debug)]
pub enum Bar {
    Mem(IoMem),
    Port(IoPort),
}

const COMMAND: u16 = 0x04;
const CMD_IO: u16 = 1 << 0;
const CMD_MEMORY: u16 = 1 << 1;
const CMD_BUS_MASTER: u16 = 1 << 2;
const CMD_INTX_DISABLE: u16 = 1 << 10;
const STATUS: u16 = 0x06;
const STATUS_INTX: u16 = 1 << 3;

impl PciDevice {
    pub fn info(&self) -> &PciDeviceInfo {
        &self.func.info
    }

    fn bdf(&self) -> Bdf {
        self.func.info.bdf
    }

    /// Reads configuration space (0..4096 with ECAM, 0..256 legacy).
    pub fn config_read_u32(&self, offset: u16) -> Result<u32, Error> {
        if !offset.is_multiple_of(4) || offset >= self.access.space_size() {
            return Err(Error::InvalidArgs);
        }
        Ok(self.access.read32(self.bdf(), offset))
    }

    pub fn config_read_u16(&self, offset: u16) -> Result<u16, Error> {
        if !offset.is_multiple_of(2) {
            return Err(Error::InvalidArgs);
        }
        let v = self.config_read_u32(offset & !3)?;
        Ok((v >> (8 * (offset & 2))) as u16)
    }

    pub fn config_read_u8(&self, offset: u16) -> Result<u8, Error> {
        let v = self.config_read_u32(offset & !3)?;
        Ok((v >> (8 * (offset & 3))) as u8)
    }

    /// The capabilities list: `(id, offset)` in list order.
    pub fn capabilities(&self) -> Vec<(u8, u16)> {
        self.func.caps.clone()
    }

    /// BAR `i` (0..6) as an `IoMem` (memory BAR; an MSI-X table or PBA
    /// inside it stays frame's: accesses there are refused) or an `IoPort`.
    pub fn bar(&self, i: usize) -> Result<Bar, Error> {
        match self.func.bars.get(i).ok_or(Error::InvalidArgs)? {
            BarInfo::None => Err(Error::InvalidArgs),
            &BarInfo::Mem { base, size, .. } => {
                if base == 0 {
                    return Err(Error::InvalidArgs); // never assigned
                }
                let base = usize::try_from(base).map_err(|_| Error::InvalidArgs)?;
                let size = usize::try_from(size).map_err(|_| Error::InvalidArgs)?;
                let holes = self.func.msix_phys_ranges();
                Ok(Bar::Mem(IoMem::new(base, size, &holes)?))
            }
            &BarInfo::Io { base, size } => {
                if base == 0 {
                    return Err(Error::InvalidArgs);
                }
                Ok(Bar::Port(IoPort::new(base, size)?))
            }
        }
    }

    fn update_command(&self, set: u16, clear: u16) {
        config::update_command(self.access, self.bdf(), set, clear);
    }

    /// Lets the function master the bus (DMA, MSI writes).
    pub fn enable_bus_master(&self) {
        self.update_command(CMD_BUS_MASTER, 0);
    }

    /// Lets the function decode its memory BARs.
    pub fn enable_memory_space(&self) {
        self.update_command(CMD_MEMORY, 0);
    }

    /// Lets the function decode its I/O BARs.
    pub fn enable_io_space(&self) {
        self.update_command(CMD_IO, 0);
    }

    /// Up to `n` interrupt lines: `n` MSI-X vectors (table entries 0..n) if
    /// the function has MSI-X, else its one legacy INTx line (shared with
    /// other functions on the same I/O APIC pins). Once per claim.
    pub fn irq_lines(&self, n: usize) -> Result<Vec<IrqLine>, Error> {
        if n == 0 {
            return Err(Error::InvalidArgs);
        }
        {
            let mut taken = self.irqs_taken.lock_irq_disabled();
            if *taken {
                return Err(Error::AccessDenied);
            }
            *taken = true;
        }
        let r = match self.func.msix {
            Some(m) => self.msix_lines(m, n),
            None => self.intx_line(),
        };
        if r.is_err() {
            *self.irqs_taken.lock_irq_disabled() = false;
        }
        r
    }

    /// The function's legacy INTx line even if it has MSI-X (which stays
    /// off): what `irq_lines` falls back to. Once per claim, like
    /// `irq_lines` (the two share the permission).
    pub fn legacy_irq_line(&self) -> Result<IrqLine, Error> {
        {
            let mut taken = self.irqs_taken.lock_irq_disabled();
            if *taken {
                return Err(Error::AccessDenied);
            }
            *taken = true;
        }
        match self.intx_line() {
            Ok(mut v) => Ok(v.pop().expect("one INTx line")),
            Err(e) => {
                *self.irqs_taken.lock_irq_disabled() = false;
                Err(e)
            }
        }
    }

    fn msix_lines(&self, m: MsixInfo, n: usize) -> Result<Vec<IrqLine>, Error> {
        if n > usize::from(m.table_size) {
            return Err(Error::InvalidArgs);
        }
        let table = Arc::new(config::MsixTable::map(self.func, m)?);
        let mut lines = Vec::new();
        lines.try_reserve(n).map_err(|_| Error::NoMemory)?;
        for entry in 0..n {
            let vector = crate::irq::alloc_vector()?;
            table.program(entry as u16, vector);
            let source = Arc::new(MsixSource {
                table: table.clone(),
                entry: entry as u16,
                _claim: self.claim.clone(),
            });
            match IrqLine::new(vector, source, true) {
                Ok(l) => lines.push(l),
                Err(e) => {
                    crate::irq::free_vector(vector);
                    return Err(e);
                }
            }
        }
        // Every entry is masked; MSI-X on (INTx off), function mask clear.
        config::enable_msix(self.access, self.bdf(), m);
        self.update_command(CMD_INTX_DISABLE, 0);
        Ok(lines)
    }

    fn intx_line(&self) -> Result<Vec<IrqLine>, Error> {
        if self.func.info.interrupt_pin == 0 {
            return Err(Error::InvalidArgs);
        }
        let vector = config::intx_vector()?;
        let source = Arc::new(IntxSource {
            access: self.access,
            bdf: self.bdf(),
            _claim: self.claim.clone(),
        });
        Ok(Vec::from([IrqLine::new(vector, source, false)?]))
    }
}

struct MsixSource {
    table: Arc<config::MsixTable>,
    entry: u16,
    _claim: Arc<Claim>,
}

impl IrqSource for MsixSource {
    fn mask(&self) {
        self.table.set_masked(self.entry, true);
    }
    fn unmask(&self) {
        self.table.set_masked(self.entry, false);
    }
}

struct IntxSource {
    access: &'static dyn ConfigAccess,
    bdf: Bdf,
    _claim: Arc<Claim>,
}

impl IrqSource for IntxSource {
    fn mask(&self) {
        config::update_command(self.access, self.bdf, CMD_INTX_DISABLE, 0);
    }
    fn unmask(&self) {
        config::update_command(self.access, self.bdf, 0, CMD_INTX_DISABLE);
    }
    fn pending(&self) -> bool {
        self.access.read32(self.bdf, COMMAND) >> 16 & u32::from(STATUS_INTX) != 0
    }
}

const _: () = assert!(STATUS == COMMAND + 2);
