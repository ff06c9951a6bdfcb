//! Symbolized backtraces from frame pointers (the kernel is built with
//! `-C force-frame-pointers=yes`). Names come from the `.ksyms` section that
//! `xtask` fills after linking: "KSYM", u32 count, `count` entries of
//! {u64 addr, u32 name offset, u32 name length} sorted by address, then names.

use crate::console::print_unlocked;

/// Room for the symbol table, filled in by `xtask` after linking.
pub const KSYMS_SIZE: usize = 2 * 1024 * 1024;

#[used]
#[unsafe(link_section = ".ksyms")]
static KSYMS_SPACE: [u8; KSYMS_SIZE] = [0; KSYMS_SIZE];

unsafe extern "C" {
    static __ksyms_start: u8;
    static __ksyms_end: u8;
    static __kernel_text_start: u8;
    static __kernel_text_end: u8;
}

fn ksyms() -> &'static [u8] {
    // SAFETY: the linker script brackets the read-only `.ksyms` section with
    // these symbols; it is mapped for the kernel's lifetime.
    unsafe {
        let start = &__ksyms_start as *const u8;
        let end = &__ksyms_end as *const u8;
        core::slice::from_raw_parts(start, end as usize - start as usize)
    }
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The symbol containing `addr` and the offset into it.
pub fn symbolize(addr: u64) -> Option<(&'static str, u64)> {
    // SAFETY: addresses of linker-script symbols.
    let (ts, te) = unsafe {
        (
            &__kernel_text_start as *const u8 as u64,
            &__kernel_text_end as *const u8 as u64,
        )
    };
    if !(ts..te).contains(&addr) {
        return None;
    }
    let t = ksyms();
    if t.get(..4)? != b"KSYM" {
        return None;
    }
    let count = le_u32(t, 4)? as usize;
    let names = 8 + count.checked_mul(16)?;
    let entry = |i: usize| le_u64(t, 8 + i * 16);
    // Last entry with entry.addr <= addr.
    let (mut lo, mut hi) = (0usize, count);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if entry(mid)? <= addr {
            lo = mid + 1
        } else {
            hi = mid
        }
    }
    let i = lo.checked_sub(1)?;
    let sym_addr = entry(i)?;
    let off = le_u32(t, 8 + i * 16 + 8)? as usize;
    let len = le_u32(t, 8 + i * 16 + 12)? as usize;
    let name = t.get(names + off..names + off + len)?;
    Some((core::str::from_utf8(name).ok()?, addr - sym_addr))
}

fn print_frame(n: usize, pc: u64) {
    match symbolize(pc) {
        Some((name, off)) => print_unlocked(format_args!("  #{n:<2} {pc:#018x} {name}+{off:#x}\n")),
        None => print_unlocked(format_args!("  #{n:<2} {pc:#018x} <unknown>\n")),
    }
}

fn plausible_frame(rbp: u64) -> bool {
    rbp.is_multiple_of(8)
        && rbp >= 0xffff_8000_0000_0000
        && crate::mm::kernel_addr_mapped(rbp as usize)
        && crate::mm::kernel_addr_mapped(rbp as usize + 8)
}

/// Prints the chain of return addresses starting at `pc` (if known) and
/// frame `rbp`.
pub fn print_backtrace(pc: Option<u64>, mut rbp: u64) {
    print_unlocked(format_args!("backtrace:\n"));
    if let Some(pc) = pc {
        print_frame(0, pc);
    }
    for n in 1..48 {
        if !plausible_frame(rbp) {
            break;
        }
        // SAFETY: `rbp` is 8-aligned and both words are mapped kernel memory
        // (checked above); a frame record is {saved rbp, return address}.
        let (next, ret) = unsafe { (*(rbp as *const u64), *((rbp + 8) as *const u64)) };
        if ret == 0 {
            break;
        }
        print_frame(n, ret.wrapping_sub(1));
        if next <= rbp {
            break;
        }
        rbp = next;
    }
}
