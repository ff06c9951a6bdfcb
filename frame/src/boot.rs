//! Boot: the PVH start-info structure (command line, memory map, initrd),
//! early CPU setup, and the hand-over to the kernel's `main`.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::arch::{cpu, fpu, gdt, serial, trap};
use crate::mm::{self, PAGE_SIZE, Paddr, paddr_to_vaddr};
use crate::sync::Once;

const PVH_MAGIC: u32 = 0x336e_c578;
const E820_RAM: u32 = 1;
const MAX_REGIONS: usize = 64;
const MAX_CMDLINE: usize = 4096;
const KERNEL_VMA: usize = 0xffff_ffff_8000_0000;

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
}

static BOOT_INFO: Once<BootInfo> = Once::new();
static TOTAL_RAM: AtomicUsize = AtomicUsize::new(0);

fn read_u32(pa: Paddr) -> u32 {
    // SAFETY: during early boot the boot page tables map the low 4 GiB at the
    // direct-map base; `pa` lies inside the start-info structures QEMU built.
    unsafe { core::ptr::read_unaligned(paddr_to_vaddr(pa) as *const u32) }
}

fn read_u64(pa: Paddr) -> u64 {
    // SAFETY: see `read_u32`.
    unsafe { core::ptr::read_unaligned(paddr_to_vaddr(pa) as *const u64) }
}

fn parse_start_info(pa: Paddr) -> BootInfo {
    let mut info = BootInfo {
        cmdline: [0; MAX_CMDLINE],
        cmdline_len: 0,
        regions: [MemoryRegion::default(); MAX_REGIONS],
        nregions: 0,
        initrd: None,
    };
    assert!(
        read_u32(pa) == PVH_MAGIC,
        "not booted through PVH (bad start-info magic)"
    );
    let version = read_u32(pa + 4);
    let nr_modules = read_u32(pa + 12);
    let modlist = read_u64(pa + 16) as Paddr;
    let cmdline = read_u64(pa + 24) as Paddr;
    if cmdline != 0 {
        while info.cmdline_len < MAX_CMDLINE - 1 {
            // SAFETY: see `read_u32`; the command line is NUL-terminated.
            let b = unsafe { *(paddr_to_vaddr(cmdline + info.cmdline_len) as *const u8) };
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
    Some(unsafe { core::slice::from_raw_parts(paddr_to_vaddr(pa) as *const u8, size) })
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

unsafe extern "Rust" {
    /// Defined by the kernel through `frame::main!`.
    fn __trellis_main() -> !;
}

unsafe extern "C" {
    static __kernel_end: u8;
}

#[unsafe(no_mangle)]
extern "C" fn __trellis_rust_entry(start_info: u32) -> ! {
    serial::init();
    BOOT_INFO.call_once(|| parse_start_info(start_info as Paddr));
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
    // SAFETY: SMEP/SMAP only restrict the kernel; frame copies user memory
    // through the direct map, never through user addresses.
    unsafe { cpu::write_cr4(cr4) };
}

/// Whether SMEP and SMAP are active.
pub fn smep_smap_enabled() -> (bool, bool) {
    let cr4 = cpu::read_cr4();
    (cr4 & (1 << 20) != 0, cr4 & (1 << 21) != 0)
}

/// Reserved physical ranges: the first MiB, the kernel image, the initrd.
fn reserved_ranges() -> [(Paddr, Paddr); 3] {
    // SAFETY: address of a linker-script symbol.
    let kernel_end = unsafe { &__kernel_end as *const u8 as usize } - KERNEL_VMA;
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
