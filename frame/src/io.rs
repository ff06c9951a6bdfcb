//! Device registers: [`IoMem`] (memory-mapped I/O) and [`IoPort`] (x86 I/O
//! ports).
//!
//! Both are created only inside frame, for ranges a PCI function decodes
//! (its BARs), and only after checking the range against what must never
//! become a device window (invariant 7): RAM (the firmware memory map and
//! the frame metadata), and the ranges frame itself drives — the local APIC
//! and MSI window, the I/O APIC, the HPET, the PCI configuration window
//! (ECAM), every MSI-X table and PBA, the first MiB; for ports the PICs,
//! the PIT, the CMOS, the serial console, the PCI configuration ports and
//! QEMU's exit port. Clients get bounds- and alignment-checked volatile
//! reads and writes, never an address.
//!
//! MMIO is mapped uncached (PCD|PWT) into its own kernel region, at virtual
//! addresses that are never reused, so a stale translation can never reach
//! another window.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;
use crate::mm::{PAGE_SIZE, Paddr, Vaddr, align_down, align_up};
use crate::sync::SpinLock;

/// Kernel virtual region for MMIO windows (one top-level entry, 512 GiB).
pub(crate) const MMIO_REGION_BASE: Vaddr = 0xffff_d000_0000_0000;
pub(crate) const MMIO_REGION_SIZE: usize = 1 << 39;
/// Next free virtual address of the MMIO region (bump: never reused).
static MMIO_NEXT: AtomicUsize = AtomicUsize::new(MMIO_REGION_BASE);

/// Physical ranges `[start, end)` that frame drives itself and that no
/// `IoMem` may ever cover. Fixed ones below; the ECAM window and every
/// MSI-X table/PBA are added at PCI enumeration.
static FRAME_MMIO: SpinLock<Vec<(Paddr, Paddr)>> = SpinLock::new(Vec::new());

/// Fixed frame-owned MMIO: the first MiB (BIOS data, VGA, option ROMs, the
/// ACPI tables frame reads), the I/O APIC, the HPET, the local APIC and
/// the whole MSI address window (0xfee0_0000..0xfeff_ffff).
const FIXED_FRAME_MMIO: [(Paddr, Paddr); 4] = [
    (0, 0x10_0000),
    (0xfec0_0000, 0xfec0_1000),
    (0xfed0_0000, 0xfed0_1000),
    (0xfee0_0000, 0xfef0_0000),
];

/// I/O ports frame owns: PIC 1, PIT and speaker gate, CMOS, QEMU exit,
/// PIC 2, ELCR, serial COM1, PCI configuration.
const FRAME_PORTS: [(u16, u16); 9] = [
    (0x20, 0x22),
    (0x40, 0x44),
    (0x61, 0x62),
    (0x70, 0x72),
    (0xf4, 0xf8),
    (0xa0, 0xa2),
    (0x4d0, 0x4d2),
    (0x3f8, 0x400),
    (0xcf8, 0xd00),
];

/// Marks `[start, end)` as frame's own: no `IoMem` will ever cover it.
pub(crate) fn reserve_frame_mmio(start: Paddr, end: Paddr) {
    if start < end {
        FRAME_MMIO.lock_irq_disabled().push((start, end));
    }
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether physical range `[start, end)` may become an `IoMem` (invariant
/// 7): not RAM, not frame's own registers. `ram` lists the usable RAM of
/// the firmware memory map; `is_managed` tells whether a page is tracked by
/// the frame metadata as anything but firmware-reserved.
pub(crate) fn check_mmio_range(
    start: Paddr,
    end: Paddr,
    ram: &[(Paddr, Paddr)],
    frame_owned: &[(Paddr, Paddr)],
    is_managed: impl Fn(Paddr) -> bool,
) -> Result<(), Error> {
    if start >= end {
        return Err(Error::InvalidArgs);
    }
    let r = (start, end);
    if ram.iter().any(|&m| overlaps(r, m)) {
        return Err(Error::AccessDenied);
    }
    if FIXED_FRAME_MMIO
        .iter()
        .chain(frame_owned.iter())
        .any(|&m| overlaps(r, m))
    {
        return Err(Error::AccessDenied);
    }
    let mut pa = align_down(start, PAGE_SIZE);
    while pa < end {
        if is_managed(pa) {
            return Err(Error::AccessDenied);
        }
        pa += PAGE_SIZE;
    }
    Ok(())
}

/// Whether I/O ports `[start, end)` may become an `IoPort`.
pub(crate) fn check_port_range(start: u32, end: u32) -> Result<(), Error> {
    if start >= end || end > 0x1_0000 {
        return Err(Error::InvalidArgs);
    }
    if FRAME_PORTS
        .iter()
        .any(|&(s, e)| overlaps((start as usize, end as usize), (s as usize, e as usize)))
    {
        return Err(Error::AccessDenied);
    }
    Ok(())
}

fn check_mmio_live(start: Paddr, end: Paddr, holes: &[(Paddr, Paddr)]) -> Result<(), Error> {
    use crate::mm::frame_alloc::FrameUsage;
    let ram: Vec<(Paddr, Paddr)> = crate::boot::memory_regions()
        .iter()
        .filter(|r| r.usable)
        .map(|r| (r.start, r.end))
        .collect();
    // The caller's holes (the function's own MSI-X table and PBA) stay
    // frame's: accesses there are refused by `IoMem::check`.
    let owned: Vec<(Paddr, Paddr)> = FRAME_MMIO
        .lock_irq_disabled()
        .iter()
        .filter(|r| !holes.contains(r))
        .copied()
        .collect();
    check_mmio_range(start, end, &ram, &owned, |pa| {
        crate::mm::meta::slot(pa)
            .is_some_and(|s| s.usage.load(Ordering::Relaxed) != FrameUsage::Reserved as u8)
    })
}

/// An uncached kernel mapping of a device window; unmapped when the last
/// `IoMem` over it goes away (its virtual range is never reused).
#[derive(Debug)]
struct MmioMapping {
    /// Virtual address of the first mapped page.
    va: Vaddr,
    /// Physical address of the first mapped page.
    pa: Paddr,
    pages: usize,
}

impl Drop for MmioMapping {
    fn drop(&mut self) {
        for i in 0..self.pages {
            crate::mm::kspace::unmap_kernel_page(self.va + i * PAGE_SIZE);
        }
    }
}

/// A window of device registers (part of a PCI memory BAR). Reads and
/// writes are volatile, bounds-checked and naturally aligned; accesses that
/// touch a hole (an MSI-X table or PBA inside the BAR, which frame owns)
/// are refused with `AccessDenied`.
#[derive(Clone, Debug)]
pub struct IoMem {
    map: Arc<MmioMapping>,
    /// Offset of this window's first byte from `map.va`.
    start: usize,
    len: usize,
    /// Forbidden sub-ranges, as offsets from `map.va`.
    holes: Arc<[(usize, usize)]>,
}

impl IoMem {
    /// Maps physical `[pa, pa + len)` (checked against invariant 7) with
    /// `holes` (physical ranges inside it) refused.
    pub(crate) fn new(pa: Paddr, len: usize, holes: &[(Paddr, Paddr)]) -> Result<IoMem, Error> {
        let end = pa.checked_add(len).ok_or(Error::InvalidArgs)?;
        check_mmio_live(pa, end, holes)?;
        IoMem::map(pa, len, holes)
    }

    fn map(pa: Paddr, len: usize, holes: &[(Paddr, Paddr)]) -> Result<IoMem, Error> {
        let end = pa.checked_add(len).ok_or(Error::InvalidArgs)?;
        if len == 0 {
            return Err(Error::InvalidArgs);
        }
        let first = align_down(pa, PAGE_SIZE);
        let pages = (align_up(end, PAGE_SIZE) - first) / PAGE_SIZE;
        let va = MMIO_NEXT.fetch_add(pages * PAGE_SIZE, Ordering::Relaxed);
        if va + pages * PAGE_SIZE > MMIO_REGION_BASE + MMIO_REGION_SIZE {
            return Err(Error::NoMemory);
        }
        let mut map = MmioMapping {
            va,
            pa: first,
            pages: 0,
        };
        for i in 0..pages {
            crate::mm::kspace::map_kernel_mmio_page(va + i * PAGE_SIZE, first + i * PAGE_SIZE)?;
            map.pages += 1;
        }
        let holes: Vec<(usize, usize)> = holes
            .iter()
            .filter(|&&(s, e)| s < e)
            .map(|&(s, e)| (s.saturating_sub(first), e.saturating_sub(first)))
            .collect();
        Ok(IoMem {
            map: Arc::new(map),
            start: pa - first,
            len,
            holes: holes.into(),
        })
    }

    /// Maps frame's own registers `[pa, pa + len)` (ECAM, an MSI-X
    /// table): refused over RAM, but allowed over frame-owned ranges.
    pub(crate) fn new_frame_owned(pa: Paddr, len: usize) -> Result<IoMem, Error> {
        let end = pa.checked_add(len).ok_or(Error::InvalidArgs)?;
        let ram: Vec<(Paddr, Paddr)> = crate::boot::memory_regions()
            .iter()
            .filter(|r| r.usable)
            .map(|r| (r.start, r.end))
            .collect();
        if ram.iter().any(|&m| overlaps((pa, end), m)) {
            return Err(Error::AccessDenied);
        }
        IoMem::map(pa, len, &[])
    }

    /// Length of the window in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Physical (bus) address of the window's first byte, for diagnostics.
    pub fn paddr(&self) -> Paddr {
        self.map.pa + self.start
    }

    /// A sub-window `[offset, offset + len)` of this one.
    pub fn slice(&self, offset: usize, len: usize) -> Result<IoMem, Error> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(IoMem {
                map: self.map.clone(),
                start: self.start + offset,
                len,
                holes: self.holes.clone(),
            }),
            _ => Err(Error::InvalidArgs),
        }
    }

    /// The virtual address for an access of `size` bytes at `offset`.
    fn check(&self, offset: usize, size: usize) -> Result<Vaddr, Error> {
        match offset.checked_add(size) {
            Some(end) if end <= self.len => {}
            _ => return Err(Error::InvalidArgs),
        }
        // Natural alignment of the bus address (a slice may start anywhere).
        if !(self.start + offset).is_multiple_of(size) {
            return Err(Error::InvalidArgs);
        }
        let at = self.start + offset;
        if self.holes.iter().any(|&h| overlaps((at, at + size), h)) {
            return Err(Error::AccessDenied);
        }
        Ok(self.map.va + at)
    }

    pub fn read_u8(&self, offset: usize) -> Result<u8, Error> {
        self.read(offset)
    }
    pub fn read_u16(&self, offset: usize) -> Result<u16, Error> {
        self.read(offset)
    }
    pub fn read_u32(&self, offset: usize) -> Result<u32, Error> {
        self.read(offset)
    }
    pub fn read_u64(&self, offset: usize) -> Result<u64, Error> {
        self.read(offset)
    }
    pub fn write_u8(&self, offset: usize, value: u8) -> Result<(), Error> {
        self.write(offset, value)
    }
    pub fn write_u16(&self, offset: usize, value: u16) -> Result<(), Error> {
        self.write(offset, value)
    }
    pub fn write_u32(&self, offset: usize, value: u32) -> Result<(), Error> {
        self.write(offset, value)
    }
    pub fn write_u64(&self, offset: usize, value: u64) -> Result<(), Error> {
        self.write(offset, value)
    }

    fn read<T: Copy + crate::Pod>(&self, offset: usize) -> Result<T, Error> {
        let va = self.check(offset, core::mem::size_of::<T>())?;
        // SAFETY: `va` lies inside this window's uncached mapping (kept
        // alive by `self.map`), naturally aligned for T (checked above); the
        // window is device memory, never RAM or frame-owned registers
        // (checked when it was created), so the access cannot alias a Rust
        // object; T is a primitive integer, valid for any bits.
        Ok(unsafe { core::ptr::read_volatile(crate::mm::linear_ptr::<T>(va)) })
    }

    fn write<T: Copy + crate::Pod>(&self, offset: usize, value: T) -> Result<(), Error> {
        let va = self.check(offset, core::mem::size_of::<T>())?;
        // SAFETY: see `read`.
        unsafe { core::ptr::write_volatile(crate::mm::linear_ptr::<T>(va), value) };
        Ok(())
    }
}

/// A range of x86 I/O ports (a PCI I/O BAR). Accesses are checked against
/// the range; the range never includes a port frame owns.
#[derive(Clone, Debug)]
pub struct IoPort {
    base: u16,
    len: u16,
}

impl IoPort {
    /// Ports `[base, base + len)`, checked against frame's own ports.
    pub(crate) fn new(base: u32, len: u32) -> Result<IoPort, Error> {
        check_port_range(base, base.checked_add(len).ok_or(Error::InvalidArgs)?)?;
        Ok(IoPort {
            base: base as u16,
            len: len as u16,
        })
    }

    pub fn base(&self) -> u16 {
        self.base
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn port(&self, offset: u16, size: u16) -> Result<u16, Error> {
        match offset.checked_add(size) {
            Some(end) if end <= self.len => Ok(self.base + offset),
            _ => Err(Error::InvalidArgs),
        }
    }

    pub fn read_u8(&self, offset: u16) -> Result<u8, Error> {
        let p = self.port(offset, 1)?;
        Ok(port_in8(p))
    }
    pub fn read_u16(&self, offset: u16) -> Result<u16, Error> {
        let p = self.port(offset, 2)?;
        Ok(port_in16(p))
    }
    pub fn read_u32(&self, offset: u16) -> Result<u32, Error> {
        let p = self.port(offset, 4)?;
        Ok(port_in32(p))
    }
    pub fn write_u8(&self, offset: u16, value: u8) -> Result<(), Error> {
        let p = self.port(offset, 1)?;
        port_out8(p, value);
        Ok(())
    }
    pub fn write_u16(&self, offset: u16, value: u16) -> Result<(), Error> {
        let p = self.port(offset, 2)?;
        port_out16(p, value);
        Ok(())
    }
    pub fn write_u32(&self, offset: u16, value: u32) -> Result<(), Error> {
        let p = self.port(offset, 4)?;
        port_out32(p, value);
        Ok(())
    }
}

use crate::arch::cpu::{
    inb as port_in8, inl as port_in32, inw as port_in16, outb as port_out8, outl as port_out32,
    outw as port_out16,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim;
    use crate::sim::devices::{DEVICE_BAR, DEVICE_BAR_PADDR};

    const RAM: [(Paddr, Paddr); 2] = [(0, 0x9_fc00), (0x10_0000, 0x100_0000)];

    #[test]
    fn mmio_ranges_over_ram_or_frame_registers_are_refused() {
        let none = |_| false;
        let ok = |s, e| check_mmio_range(s, e, &RAM, &[], none);
        assert_eq!(ok(0xfe00_0000, 0xfe00_1000), Ok(()));
        assert_eq!(ok(0x20_0000, 0x20_1000), Err(Error::AccessDenied), "RAM");
        assert_eq!(
            ok(0xff_f000, 0x101_0000),
            Err(Error::AccessDenied),
            "straddles RAM's end"
        );
        assert_eq!(
            ok(0xa_0000, 0xb_0000),
            Err(Error::AccessDenied),
            "the first MiB"
        );
        assert_eq!(
            ok(0xfec0_0000, 0xfec0_0004),
            Err(Error::AccessDenied),
            "I/O APIC"
        );
        assert_eq!(
            ok(0xfed0_0000, 0xfed0_0400),
            Err(Error::AccessDenied),
            "HPET"
        );
        assert_eq!(
            ok(0xfedf_f000, 0xfee0_0001),
            Err(Error::AccessDenied),
            "local APIC"
        );
        assert_eq!(
            ok(0xfeef_f000, 0xfef0_0000),
            Err(Error::AccessDenied),
            "MSI window"
        );
        assert_eq!(
            ok(0xfe00_1000, 0xfe00_1000),
            Err(Error::InvalidArgs),
            "empty"
        );
        // Ranges frame recorded (ECAM, MSI-X tables) and pages the frame
        // metadata manages are refused too.
        let owned = [(0xb000_0000, 0xc000_0000), (0xfeb0_0000, 0xfeb0_0030)];
        let chk = |s, e| check_mmio_range(s, e, &RAM, &owned, none);
        assert_eq!(chk(0xbfff_fffc, 0xc000_0000), Err(Error::AccessDenied));
        assert_eq!(chk(0xfeb0_002c, 0xfeb0_0030), Err(Error::AccessDenied));
        assert_eq!(chk(0xfeb0_0030, 0xfeb0_1000), Ok(()));
        let managed = |pa: Paddr| pa == 0x1_2000_0000;
        assert_eq!(
            check_mmio_range(0x1_1fff_f000, 0x1_2000_0008, &RAM, &[], managed),
            Err(Error::AccessDenied),
            "a page the allocator manages"
        );
    }

    #[test]
    fn port_ranges_never_include_frame_ports() {
        assert_eq!(check_port_range(0xc040, 0xc060), Ok(()));
        for (s, e) in [
            (0x20, 0x21),
            (0x3f0, 0x3f9),
            (0xcfc, 0xd00),
            (0xf4, 0xf5),
            (0x70, 0x72),
            (0x40, 0x44),
            (0xa1, 0xa2),
        ] {
            assert_eq!(check_port_range(s, e), Err(Error::AccessDenied), "{s:#x}");
        }
        assert_eq!(check_port_range(0xfff0, 0x1_0001), Err(Error::InvalidArgs));
        assert!(IoPort::new(0xcf0, 0x10).is_err());
        let p = IoPort::new(0xc040, 0x20).unwrap();
        assert_eq!((p.base(), p.len()), (0xc040, 0x20));
        assert_eq!(p.read_u8(0x20), Err(Error::InvalidArgs));
        assert_eq!(p.read_u32(0x1e), Err(Error::InvalidArgs));
        assert_eq!(p.write_u16(0xffff, 0), Err(Error::InvalidArgs));
        // Nothing answers in the simulated machine: the bus floats high.
        assert_eq!(p.read_u32(0x1c), Ok(u32::MAX));
    }

    #[test]
    fn io_mem_reads_and_writes_device_registers_with_checks() {
        sim::run(|| {
            let bar = IoMem::new(
                DEVICE_BAR_PADDR,
                0x2000,
                &[(DEVICE_BAR_PADDR + 0x1800, DEVICE_BAR_PADDR + 0x1830)],
            )
            .unwrap();
            assert_eq!((bar.len(), bar.paddr()), (0x2000, DEVICE_BAR_PADDR));
            bar.write_u32(0x10, 0xdead_beef).unwrap();
            assert_eq!(DEVICE_BAR[0].reg(0x10).load(Ordering::Relaxed), 0xdead_beef);
            DEVICE_BAR[1]
                .reg(0x7f0)
                .store(0x1234_5678, Ordering::Relaxed);
            DEVICE_BAR[1]
                .reg(0x7f4)
                .store(0x9abc_def0, Ordering::Relaxed);
            assert_eq!(bar.read_u64(0x17f0), Ok(0x9abc_def0_1234_5678));
            assert_eq!(bar.read_u16(0x17f2), Ok(0x1234));
            assert_eq!(bar.read_u8(0x17f3), Ok(0x12));
            bar.write_u8(0x11, 0x55).unwrap();
            bar.write_u16(0x12, 0x6677).unwrap();
            assert_eq!(bar.read_u32(0x10), Ok(0x6677_55ef));
            bar.write_u64(0x1000, u64::MAX).unwrap();
            assert_eq!(DEVICE_BAR[1].reg(4).load(Ordering::Relaxed), u32::MAX);
            // Bounds, alignment, holes.
            assert_eq!(bar.read_u32(0x2000), Err(Error::InvalidArgs));
            assert_eq!(bar.read_u64(0x1ffc), Err(Error::InvalidArgs));
            assert_eq!(bar.read_u32(usize::MAX - 1), Err(Error::InvalidArgs));
            assert_eq!(bar.read_u32(0x12), Err(Error::InvalidArgs));
            assert_eq!(bar.write_u16(0x13, 0), Err(Error::InvalidArgs));
            assert_eq!(bar.read_u32(0x1800), Err(Error::AccessDenied));
            assert_eq!(bar.write_u32(0x182c, 0), Err(Error::AccessDenied));
            assert_eq!(bar.read_u64(0x17f8), Ok(0), "just below the hole");
            assert_eq!(bar.read_u64(0x1828), Err(Error::AccessDenied));
            assert_eq!(bar.read_u32(0x1830), Ok(0), "just past the hole");
            // Slices keep the holes and check their own bounds.
            let s = bar.slice(0x1800, 0x40).unwrap();
            assert_eq!(s.read_u32(0), Err(Error::AccessDenied));
            assert_eq!(s.read_u32(0x30), Ok(0));
            assert_eq!(s.read_u32(0x40), Err(Error::InvalidArgs));
            assert!(bar.slice(0x1ff0, 0x11).is_err());
            assert!(bar.slice(usize::MAX, 2).is_err());
            let odd = bar.slice(0x11, 8).unwrap();
            assert_eq!(
                odd.read_u16(1),
                Ok(0x6677),
                "alignment is of the bus address"
            );
            assert_eq!(odd.read_u16(0), Err(Error::InvalidArgs));
            // The mapping is uncached, and goes away with the last handle.
            let va = bar.map.va;
            let root = crate::mm::kernel_root().unwrap();
            assert!(crate::mm::page_table::is_uncached(root, va));
            drop((bar, s));
            assert!(crate::mm::kspace::is_mapped(va), "a slice keeps it");
            drop(odd);
            assert!(!crate::mm::kspace::is_mapped(va));
        })
    }

    #[test]
    fn io_mem_is_never_made_over_ram_or_frame_registers() {
        sim::run(|| {
            let frame = crate::mm::UFrame::alloc_zeroed().unwrap();
            assert_eq!(
                IoMem::new(frame.paddr(), 0x1000, &[]).err(),
                Some(Error::AccessDenied),
                "an allocated page"
            );
            assert_eq!(
                IoMem::new(0x1000, 0x1000, &[]).err(),
                Some(Error::AccessDenied),
                "the first MiB"
            );
            assert_eq!(
                IoMem::new_frame_owned(0x20_0000, 0x1000).err(),
                Some(Error::AccessDenied),
                "RAM, even for frame"
            );
            for pa in [0xfee0_0000, 0xfec0_0000] {
                assert_eq!(
                    IoMem::new(pa, 4, &[]).err(),
                    Some(Error::AccessDenied),
                    "{pa:#x}"
                );
            }
            // A range frame reserves (another function's MSI-X table) is
            // refused, except as a hole of the BAR that holds it.
            let table = (DEVICE_BAR_PADDR + 0x1000, DEVICE_BAR_PADDR + 0x1040);
            reserve_frame_mmio(table.0, table.1);
            assert_eq!(
                IoMem::new(DEVICE_BAR_PADDR, 0x2000, &[]).err(),
                Some(Error::AccessDenied)
            );
            let bar = IoMem::new(DEVICE_BAR_PADDR, 0x2000, &[table]).unwrap();
            assert_eq!(bar.read_u32(0x1000), Err(Error::AccessDenied));
            FRAME_MMIO.lock().retain(|r| *r != table);
            assert_eq!(IoMem::new(0, 0, &[]).err(), Some(Error::InvalidArgs));
            assert_eq!(
                IoMem::new(usize::MAX, 2, &[]).err(),
                Some(Error::InvalidArgs)
            );
        })
    }
}
