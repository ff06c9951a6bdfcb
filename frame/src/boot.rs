//! Boot: the PVH start-info structure (command line, memory map, initrd),
//! early CPU setup, and the hand-over to the kernel's `main`.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch::{cpu, fpu, gdt, serial, trap};
use crate::mm::{self, PAGE_SIZE, Paddr, paddr_to_ptr};
use crate::sync::Once;

/// `hvm_start_info.magic` (Xen public header `arch-x86/hvm/start_info.h`).
pub(crate) const PVH_MAGIC: u32 = 0x336e_c578;
/// E820 type of usable RAM.
pub(crate) const E820_RAM: u32 = 1;
const MAX_REGIONS: usize = 64;
const MAX_CMDLINE: usize = 4096;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MemoryRegion {
    pub start: Paddr,
    pub end: Paddr,
    pub usable: bool,
}

struct BootInfo {
    cmdline: [u8; MAX_CMDLINE],
    cmdline_len: usize,
    regions: [MemoryRegion; MAX_REGIONS],
    nregions: usize,
    initrd: Option<(Paddr, usize)>,
    rsdp: Option<Paddr>,
}

static BOOT_INFO: Once<BootInfo> = Once::new();
static TOTAL_RAM: AtomicUsize = AtomicUsize::new(0);

fn read_u32(pa: Paddr) -> u32 {
    // SAFETY: during early boot the boot page tables map the low 4 GiB at the
    // direct-map base; `pa` lies inside the start-info structures QEMU built.
    unsafe { core::ptr::read_unaligned(paddr_to_ptr::<u32>(pa)) }
}

fn read_u64(pa: Paddr) -> u64 {
    // SAFETY: see `read_u32`.
    unsafe { core::ptr::read_unaligned(paddr_to_ptr::<u64>(pa)) }
}

fn parse_start_info(pa: Paddr) -> BootInfo {
    let mut info = BootInfo {
        cmdline: [0; MAX_CMDLINE],
        cmdline_len: 0,
        regions: [MemoryRegion::default(); MAX_REGIONS],
        nregions: 0,
        initrd: None,
        rsdp: None,
    };
    assert!(
        read_u32(pa) == PVH_MAGIC,
        "not booted through PVH (bad start-info magic)"
    );
    let version = read_u32(pa + 4);
    let nr_modules = read_u32(pa + 12);
    let modlist = read_u64(pa + 16) as Paddr;
    let cmdline = read_u64(pa + 24) as Paddr;
    info.rsdp = Some(read_u64(pa + 32) as Paddr).filter(|&r| r != 0);
    if cmdline != 0 {
        while info.cmdline_len < MAX_CMDLINE - 1 {
            // SAFETY: see `read_u32`; the command line is NUL-terminated.
            let b = unsafe { *paddr_to_ptr::<u8>(cmdline + info.cmdline_len) };
            if b == 0 {
                break;
            }
            info.cmdline[info.cmdline_len] = b;
            info.cmdline_len += 1;
        }
    }
    if nr_modules > 0 && modlist != 0 {
        let (start, size) = (read_u64(modlist) as Paddr, read_u64(modlist + 8) as usize);
        if size > 0 {
            info.initrd = Some((start, size));
        }
    }
    assert!(version >= 1, "PVH start info without a memory map");
    let memmap = read_u64(pa + 40) as Paddr;
    let entries = read_u32(pa + 48) as usize;
    for i in 0..entries.min(MAX_REGIONS) {
        let e = memmap + i * 24;
        let start = read_u64(e) as Paddr;
        let size = read_u64(e + 8) as usize;
        let usable = read_u32(e + 16) == E820_RAM;
        info.regions[info.nregions] = MemoryRegion {
            start,
            end: start.saturating_add(size),
            usable,
        };
        info.nregions += 1;
    }
    info
}

/// Reads the PVH start-info structure at physical address `start_info`
/// (once; the boot CPU's first act).
pub(crate) fn init_boot_info(start_info: Paddr) {
    BOOT_INFO.call_once(|| parse_start_info(start_info));
}

fn boot_info() -> &'static BootInfo {
    BOOT_INFO.get().expect("boot info not parsed")
}

/// The kernel command line.
pub fn cmdline() -> &'static str {
    let info = boot_info();
    core::str::from_utf8(&info.cmdline[..info.cmdline_len]).unwrap_or("")
}

/// The initial RAM disk passed with `-initrd`. Its pages are reserved and
/// never reused, so the slice stays valid.
pub fn initrd() -> Option<&'static [u8]> {
    let (pa, size) = boot_info().initrd?;
    // SAFETY: the initrd pages are marked Reserved in the frame metadata and
    // never handed out; the direct map covers them for the kernel's lifetime.
    Some(unsafe { core::slice::from_raw_parts(paddr_to_ptr::<u8>(pa), size) })
}

/// The ACPI RSDP address the loader passed, if any.
pub(crate) fn rsdp_paddr() -> Option<Paddr> {
    boot_info().rsdp
}

/// The firmware memory map.
pub(crate) fn memory_regions() -> &'static [MemoryRegion] {
    let info = boot_info();
    &info.regions[..info.nregions]
}

/// Bytes of usable RAM reported by the firmware.
pub fn total_ram() -> usize {
    TOTAL_RAM.load(Ordering::Relaxed)
}

// The simulated machine of the host tests boots through it:
// MIRI: relied on by arch::x86_64::tests::boot_cpu_tables_are_loaded_and_checked
unsafe extern "Rust" {
    /// Defined by the kernel through `frame::main!`.
    fn __trellis_main() -> !;
}

/// The boot CPU's first Rust code, called by the PVH entry stub
/// (`arch::x86_64::boot`) with the start-info address from `ebx`; host
/// tests call it on the simulated machine's boot thread.
pub(crate) extern "C" fn rust_entry(start_info: u32) -> ! {
    serial::init();
    init_boot_info(start_info as Paddr);
    gdt::init();
    trap::init();
    fpu::init();
    enable_protection_features();
    crate::println!("trellis: framekernel booting, cmdline \"{}\"", cmdline());
    // SAFETY: `__trellis_main` is provided by the kernel crate through
    // `frame::main!`, with exactly this signature.
    unsafe { __trellis_main() }
}

fn enable_protection_features() {
    let leaf7 = cpu::cpuid(7, 0);
    let mut cr4 = cpu::read_cr4();
    if leaf7.ebx & (1 << 7) != 0 {
        cr4 |= 1 << 20; // SMEP
    }
    if leaf7.ebx & (1 << 20) != 0 {
        cr4 |= 1 << 21; // SMAP: the kernel never touches user pages directly
    }
    // SAFETY: SMEP/SMAP only restrict the kernel; frame touches user
    // memory only through the direct map or the user-copy routine, which
    // lifts SMAP itself (`stac`) and only once `enable_direct_copy` has
    // seen SMAP on.
    unsafe { cpu::write_cr4(cr4) };
    // User copies may go through the user address only with SMAP on (the
    // routine's `stac`/`clac` exist) and CR0.WP set (a kernel write to a
    // read-only user page faults): see `mm::vm_space`.
    let (_, smap) = smep_smap_enabled();
    crate::mm::vm_space::enable_direct_copy(smap, cpu::read_cr0() & (1 << 16) != 0);
}

/// Whether SMEP and SMAP are active.
pub fn smep_smap_enabled() -> (bool, bool) {
    let cr4 = cpu::read_cr4();
    (cr4 & (1 << 20) != 0, cr4 & (1 << 21) != 0)
}

/// Reserved physical ranges: the first MiB, the kernel image, the initrd.
fn reserved_ranges() -> [(Paddr, Paddr); 3] {
    let kernel_end = mm::image::sections().phys_end();
    let initrd = boot_info().initrd.map_or((0, 0), |(s, n)| {
        (mm::align_down(s, PAGE_SIZE), mm::align_up(s + n, PAGE_SIZE))
    });
    [
        (0, 0x10_0000),
        (0x10_0000, mm::align_up(kernel_end, PAGE_SIZE)),
        initrd,
    ]
}

/// Calls `f` for each free range of RAM (page-aligned), minus `extra`.
fn for_each_free(extra: (Paddr, Paddr), mut f: impl FnMut(Paddr, Paddr)) {
    let reserved = reserved_ranges();
    for r in memory_regions().iter().filter(|r| r.usable) {
        let mut cuts = [(0usize, 0usize); 4];
        cuts[..3].copy_from_slice(&reserved);
        cuts[3] = extra;
        cuts.sort_unstable();
        let mut cur = mm::align_up(r.start, PAGE_SIZE);
        let end = mm::align_down(r.end, PAGE_SIZE);
        for (cs, ce) in cuts {
            if ce <= cur || cs >= end || cs == ce {
                continue;
            }
            if cs > cur {
                f(cur, cs.min(end));
            }
            cur = cur.max(ce);
        }
        if cur < end {
            f(cur, end);
        }
    }
}

/// Sets up physical memory: metadata, the allocator policy, the kernel page
/// table. Called from `frame::init`.
pub(crate) fn init_memory() {
    let max_paddr = memory_regions()
        .iter()
        .filter(|r| r.usable)
        .map(|r| r.end)
        .max()
        .expect("no usable RAM in the memory map");
    TOTAL_RAM.store(
        memory_regions()
            .iter()
            .filter(|r| r.usable)
            .map(|r| r.end - r.start)
            .sum(),
        Ordering::Relaxed,
    );
    let meta_bytes = mm::align_up(mm::meta::bytes_needed(max_paddr), PAGE_SIZE);
    // The metadata must be reachable through the boot direct map (< 4 GiB).
    let mut meta_at = None;
    for_each_free((0, 0), |s, e| {
        if meta_at.is_none() && e - s >= meta_bytes && s + meta_bytes <= 1 << 32 {
            meta_at = Some(s);
        }
    });
    let meta_at = meta_at.expect("no room for the frame metadata array");
    mm::meta::init(max_paddr, meta_at);
    const LOW: Paddr = 1 << 32;
    let extra = (meta_at, meta_at + meta_bytes);
    for_each_free(extra, |s, e| mm::frame_alloc::add_free_range(s, e.min(LOW)));
    mm::kspace::init(max_paddr).expect("cannot build the kernel page table");
    for_each_free(extra, |s, e| mm::frame_alloc::add_free_range(s.max(LOW), e));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::frame_alloc::FrameUsage;
    use crate::mm::{USegment, meta};
    use crate::sim;

    #[test]
    fn boot_info_comes_from_the_pvh_start_info() {
        sim::run(move || {
            assert_eq!(cmdline(), sim::CMDLINE);
            let regions: Vec<(Paddr, Paddr, bool)> = memory_regions()
                .iter()
                .map(|r| (r.start, r.end, r.usable))
                .collect();
            let expected: Vec<(Paddr, Paddr, bool)> = sim::MEMORY_MAP
                .iter()
                .map(|&(start, size, kind)| (start, start + size, kind == E820_RAM))
                .collect();
            assert_eq!(regions, expected);
            assert_eq!(total_ram(), 0x9_fc00 + sim::SIM_BYTES - 0x10_0000);
            let initrd = initrd().expect("the loader passed an initrd");
            assert_eq!(initrd.len(), sim::INITRD_LEN);
            assert!(
                initrd
                    .iter()
                    .enumerate()
                    .all(|(i, &b)| b == sim::initrd_byte(i))
            );
        })
    }

    fn usage(pa: Paddr) -> u8 {
        meta::slot(pa).unwrap().usage.load(Ordering::Relaxed)
    }

    #[test]
    fn boot_reserves_firmware_image_initrd_and_metadata() {
        sim::run(move || {
            let reserved = FrameUsage::Reserved as u8;
            let image_end = mm::image::sections().phys_end();
            let meta_bytes = mm::align_up(meta::bytes_needed(sim::SIM_BYTES), PAGE_SIZE);
            // The metadata goes into the first free range big enough for it:
            // right after the initrd's last page.
            let meta_at = mm::align_up(sim::INITRD_AT + sim::INITRD_LEN, PAGE_SIZE);
            for pa in (0..meta_at + meta_bytes).step_by(PAGE_SIZE) {
                let free_gap = (image_end..mm::align_down(sim::INITRD_AT, PAGE_SIZE)).contains(&pa);
                assert_eq!(
                    usage(pa) == reserved,
                    !free_gap,
                    "page {pa:#x}: reserved is {}",
                    usage(pa) == reserved
                );
            }
            for pa in [meta_at + meta_bytes, sim::SIM_BYTES - PAGE_SIZE] {
                assert_ne!(usage(pa), reserved, "page {pa:#x} should be RAM");
            }
            assert_eq!(meta::max_paddr(), sim::SIM_BYTES);
        })
    }

    /// Writes a start-info structure into `seg` and returns its address.
    fn start_info(seg: &USegment, magic: u32, cmdline: &[u8], nregions: usize) -> Paddr {
        let base = seg.paddr();
        let (cmd_at, map_at) = (base + 0x100, base + PAGE_SIZE);
        let mut hdr = [0u8; 56];
        hdr[0..4].copy_from_slice(&magic.to_le_bytes());
        hdr[4..8].copy_from_slice(&1u32.to_le_bytes());
        hdr[24..32].copy_from_slice(&(cmd_at as u64).to_le_bytes());
        hdr[40..48].copy_from_slice(&(map_at as u64).to_le_bytes());
        hdr[48..52].copy_from_slice(&(nregions as u32).to_le_bytes());
        seg.write_bytes(0, &hdr).unwrap();
        seg.write_bytes(0x100, cmdline).unwrap();
        for i in 0..nregions {
            let mut e = [0u8; 24];
            e[0..8].copy_from_slice(&((i as u64) << 20).to_le_bytes());
            e[8..16].copy_from_slice(&(1u64 << 20).to_le_bytes());
            e[16..20].copy_from_slice(&(1 + (i as u32 % 2)).to_le_bytes());
            seg.write_bytes(PAGE_SIZE + i * 24, &e).unwrap();
        }
        base
    }

    #[test]
    fn start_info_parsing_is_bounded() {
        sim::run(move || {
            let seg = USegment::alloc_zeroed(2).unwrap();
            // A command line without a NUL in the first 4 KiB, more regions
            // than the table holds, and no modules.
            let long = vec![b'x'; MAX_CMDLINE + 100];
            let info =
                parse_start_info(start_info(&seg, PVH_MAGIC, &long[..PAGE_SIZE - 0x100], 70));
            assert_eq!(info.cmdline_len, PAGE_SIZE - 0x100);
            assert_eq!(info.nregions, MAX_REGIONS);
            assert!(info.initrd.is_none());
            let last = info.regions[MAX_REGIONS - 1];
            assert_eq!(
                (last.start, last.end, last.usable),
                (63 << 20, 64 << 20, false)
            );
            let seg2 = USegment::alloc_zeroed(3).unwrap();
            seg2.write_bytes(0x100, &long).unwrap();
            let info = parse_start_info(start_info(&seg2, PVH_MAGIC, &long[..1], 0));
            assert_eq!(info.cmdline_len, MAX_CMDLINE - 1);
            assert_eq!(info.nregions, 0);
        })
    }

    #[test]
    #[should_panic(expected = "not booted through PVH")]
    fn start_info_with_a_bad_magic_is_refused() {
        sim::run(move || {
            let seg = USegment::alloc_zeroed(2).unwrap();
            parse_start_info(start_info(&seg, 0x1bad_b002, b"", 1));
        })
    }
}
