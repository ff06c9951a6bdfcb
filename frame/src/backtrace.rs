//! Symbolized backtraces from frame pointers (the kernel is built with
//! `-C force-frame-pointers=yes`). Names come from the `.ksyms` section that
//! `xtask` fills after linking: "KSYM", u32 count, `count` entries of
//! {u64 addr, u32 name offset, u32 name length} sorted by address, then names.

use crate::console::print_unlocked;
use crate::mm::{image, linear_ptr};

/// Room for the symbol table, filled in by `xtask` after linking.
pub const KSYMS_SIZE: usize = 2 * 1024 * 1024;

// MIRI: not reached: places the symbol table's room in the kernel image's
// `.ksyms` section; host tests read a simulated image, whose
// table the simulated loader wrote (sim/mod.rs).
#[cfg(target_os = "none")]
#[used]
#[unsafe(link_section = ".ksyms")]
static KSYMS_SPACE: [u8; KSYMS_SIZE] = [0; KSYMS_SIZE];

fn ksyms() -> &'static [u8] {
    let (start, end) = image::sections().ksyms;
    // SAFETY: the linker script brackets the read-only `.ksyms` section of
    // the kernel image with these addresses; the image is mapped for the
    // kernel's lifetime and nothing writes the section after linking.
    unsafe { core::slice::from_raw_parts(linear_ptr::<u8>(start), end - start) }
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The symbol containing `addr` and the offset into it.
pub fn symbolize(addr: u64) -> Option<(&'static str, u64)> {
    let (ts, te) = image::sections().text;
    if !(ts as u64..te as u64).contains(&addr) {
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

/// Walks the frame-pointer chain from frame `rbp`: calls `f(n, pc)` for the
/// call site of each return address, innermost first (`n` from 1). Stops at
/// an implausible or unmapped frame, a zero return address, a chain that
/// does not go up the stack, or after 47 frames.
fn walk(mut rbp: u64, mut f: impl FnMut(usize, u64)) {
    for n in 1..48 {
        if !plausible_frame(rbp) {
            break;
        }
        // SAFETY: `rbp` is 8-aligned and both words are mapped kernel memory
        // (checked above); a frame record is {saved rbp, return address}.
        let (next, ret) = unsafe {
            (
                linear_ptr::<u64>(rbp as usize).read(),
                linear_ptr::<u64>(rbp as usize + 8).read(),
            )
        };
        if ret == 0 {
            break;
        }
        f(n, ret.wrapping_sub(1));
        if next <= rbp {
            break;
        }
        rbp = next;
    }
}

/// Prints the chain of return addresses starting at `pc` (if known) and
/// frame `rbp`.
pub fn print_backtrace(pc: Option<u64>, rbp: u64) {
    print_unlocked(format_args!("backtrace:\n"));
    if let Some(pc) = pc {
        print_frame(0, pc);
    }
    walk(rbp, print_frame);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::kspace::{KSTACK_REGION_BASE, map_kernel_page, unmap_kernel_page};
    use crate::mm::{PAGE_SIZE, PageFlags, USegment};
    use crate::sim;

    #[test]
    fn symbols_come_from_the_image_table() {
        sim::run(move || {
            let [(entry, _), (resched, _), (main, _)] = sim::SYMBOLS;
            let (entry, resched, main) = (entry as u64, resched as u64, main as u64);
            assert_eq!(symbolize(entry), Some(("__trellis_rust_entry", 0)));
            assert_eq!(
                symbolize(resched + 0x3ff),
                Some(("frame::task::reschedule", 0x3ff))
            );
            assert_eq!(symbolize(main + 0x10), Some(("kernel::main", 0x10)));
            let (text_start, text_end) = image::sections().text;
            assert_eq!(
                symbolize(text_end as u64 - 1).map(|s| s.0),
                Some("kernel::main")
            );
            assert_eq!(symbolize(text_end as u64), None, "past .text");
            assert_eq!(symbolize(text_start as u64 - 1), None, "before .text");
        })
    }

    /// A two-page "stack" mapped in the kernel-stack region above an
    /// unmapped guard page, as kernel stacks are; dropped with the mapping.
    struct Stack {
        seg: USegment,
        base: usize,
    }

    impl Stack {
        fn new() -> Stack {
            let seg = USegment::alloc_zeroed(2).unwrap();
            let base = KSTACK_REGION_BASE + (1 << 30) + PAGE_SIZE;
            for i in 0..2 {
                map_kernel_page(
                    base + i * PAGE_SIZE,
                    seg.paddr() + i * PAGE_SIZE,
                    PageFlags::RW,
                )
                .unwrap();
            }
            Stack { seg, base }
        }

        /// Writes the frame record {saved rbp, return address} at `va`.
        fn record(&self, va: usize, next: u64, ret: u64) {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&next.to_le_bytes());
            b[8..].copy_from_slice(&ret.to_le_bytes());
            self.seg.write_bytes(va - self.base, &b).unwrap();
        }
    }

    impl Drop for Stack {
        fn drop(&mut self) {
            for i in 0..2 {
                unmap_kernel_page(self.base + i * PAGE_SIZE);
            }
        }
    }

    fn frames(rbp: usize) -> Vec<(usize, Option<(&'static str, u64)>)> {
        let mut out = Vec::new();
        walk(rbp as u64, |n, pc| out.push((n, symbolize(pc))));
        out
    }

    #[test]
    fn walker_follows_frame_records_up_the_stack() {
        sim::run(move || {
            let s = Stack::new();
            let [(entry, _), (resched, _), (main, _)] = sim::SYMBOLS.map(|(a, n)| (a as u64, n));
            let (f1, f2, f3) = (s.base + 0x100, s.base + 0x1200, s.base + 0x1ff0);
            s.record(f1, f2 as u64, resched + 0x21);
            s.record(f2, f3 as u64, main + 5);
            s.record(f3, 0, entry + 0x41);
            assert_eq!(
                frames(f1),
                [
                    (1, Some(("frame::task::reschedule", 0x20))),
                    (2, Some(("kernel::main", 4))),
                    (3, Some(("__trellis_rust_entry", 0x40))),
                ]
            );
            // A record whose return address is 0 ends the chain (the first
            // task's entry frame).
            s.record(f3, 0, 0);
            assert_eq!(frames(f1).len(), 2);
            // A chain that points down the stack (a loop, or garbage) ends.
            s.record(f2, f1 as u64, main + 5);
            assert_eq!(frames(f1).len(), 2);
            // A frame pointer into unmapped memory (here above the stack), into
            // the guard page below it, misaligned or in the user half is never
            // read.
            s.record(f1, (s.base + 2 * PAGE_SIZE + 16) as u64, resched + 1);
            assert_eq!(frames(f1).len(), 1);
            for bad in [s.base - 8, s.base + 2 * PAGE_SIZE, f1 + 4, 0x40_0000] {
                assert!(frames(bad).is_empty(), "{bad:#x}");
            }
            // The last word of the stack cannot hold a whole record.
            assert!(frames(s.base + 2 * PAGE_SIZE - 8).is_empty());
        })
    }
}
