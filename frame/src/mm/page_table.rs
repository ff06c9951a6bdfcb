//! x86-64 four-level page tables, manipulated through the direct map.
//!
//! A [`PageTable`] owns its intermediate tables (typed frames with usage
//! `PageTable`). It does not own what leaf entries point to: `VmSpace` owns
//! the untyped frames it maps and the kernel owns its own image.

use super::frame::Frame;
use super::frame_alloc::FrameUsage;
use super::{PAGE_SIZE, Paddr, Vaddr, flush_tlb};
use crate::Error;
use core::sync::atomic::{AtomicU64, Ordering};

const ENTRIES: usize = 512;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

const P: u64 = 1 << 0;
const W: u64 = 1 << 1;
const U: u64 = 1 << 2;
const PWT: u64 = 1 << 3;
const PCD: u64 = 1 << 4;
const HUGE: u64 = 1 << 7;
const G: u64 = 1 << 8;
const AVAIL_SHIFT: u64 = 9;
const NX: u64 = 1 << 63;

/// Entries per group of the user-half summary: a table's 512 entries form
/// eight groups of 64.
const GROUP: usize = 64;
/// Where an entry that points to a table keeps that table's summary: bit
/// `SUMMARY_SHIFT + g` is set if group `g` of the table may hold a present
/// entry (set when one is made present, not cleared when it goes: a clear
/// bit is exact, a set one only a hint). The processor ignores bits 52..62
/// of entries that reference a table (Intel SDM vol. 3, tables 4-15, 4-17
/// and 4-19), and `ADDR_MASK` leaves them out. fork, teardown and the walk
/// of all leaves skip the groups whose bit is clear: a small process's
/// tables are nearly empty, and scanning them whole cost fork+exit ~30,000
/// instructions.
const SUMMARY_SHIFT: u64 = 52;
const SUMMARY: u64 = 0xff << SUMMARY_SHIFT;

/// The summary bit of the group holding entry `i`.
fn group_bit(i: usize) -> u64 {
    1 << (i / GROUP)
}

/// The summary of the table that entry `e` points to.
fn groups_of(e: u64) -> u64 {
    (e & SUMMARY) >> SUMMARY_SHIFT
}

/// Records in the entry `table[i]` (which points to a table) that the
/// entry `child_index` of that table may be present.
fn mark(table: Paddr, i: usize, child_index: usize) {
    let e = read_entry(table, i);
    let bit = group_bit(child_index) << SUMMARY_SHIFT;
    if e & bit == 0 {
        write_entry(table, i, e | bit);
    }
}

/// Access rights of a mapping. Readability is implied by presence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PageFlags {
    pub write: bool,
    pub exec: bool,
    /// Three bits the client may use freely (e.g. to mark copy-on-write).
    pub avail: u8,
}

impl PageFlags {
    pub const R: PageFlags = PageFlags {
        write: false,
        exec: false,
        avail: 0,
    };
    pub const RW: PageFlags = PageFlags {
        write: true,
        exec: false,
        avail: 0,
    };
    pub const RX: PageFlags = PageFlags {
        write: false,
        exec: true,
        avail: 0,
    };
    pub const RWX: PageFlags = PageFlags {
        write: true,
        exec: true,
        avail: 0,
    };

    fn to_bits(self) -> u64 {
        let mut bits = P;
        if self.write {
            bits |= W;
        }
        if !self.exec {
            bits |= NX;
        }
        bits | (u64::from(self.avail & 7) << AVAIL_SHIFT)
    }

    fn from_bits(bits: u64) -> PageFlags {
        PageFlags {
            write: bits & W != 0,
            exec: bits & NX == 0,
            avail: ((bits >> AVAIL_SHIFT) & 7) as u8,
        }
    }
}

/// Memory type of a kernel mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    WriteBack,
    Uncacheable,
}

/// Who may use a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Privilege {
    Kernel,
    User,
}

pub(crate) struct PageTable {
    root: Frame,
    /// The summary of the root's entries (see `SUMMARY_SHIFT`); only the
    /// user half's groups (0..4) are kept.
    root_groups: AtomicU64,
}

fn entries(table_pa: Paddr) -> *mut u64 {
    super::paddr_to_ptr(table_pa)
}

pub(crate) fn read_entry(table_pa: Paddr, index: usize) -> u64 {
    debug_assert!(index < ENTRIES);
    // SAFETY: `table_pa` is a page-table frame owned by this page table (or
    // the kernel's), reachable through the direct map; `index` < 512.
    unsafe { entries(table_pa).add(index).read_volatile() }
}

fn write_entry(table_pa: Paddr, index: usize, value: u64) {
    debug_assert!(index < ENTRIES);
    // SAFETY: see `read_entry`; callers hold the lock that serialises
    // updates of this page table.
    unsafe { entries(table_pa).add(index).write_volatile(value) }
}

fn index(va: Vaddr, level: usize) -> usize {
    (va >> (12 + 9 * (level - 1))) & (ENTRIES - 1)
}

/// The first index in `from..limit` whose entry is present, looking only
/// in the groups set in `groups` (the table's summary). Within a group,
/// eight entries are tested per step (one branch, not eight).
fn next_present(table: Paddr, from: usize, limit: usize, groups: u64) -> Option<usize> {
    debug_assert!(limit <= ENTRIES);
    let mut i = from;
    while i < limit {
        let g = i / GROUP;
        let group_end = ((g + 1) * GROUP).min(limit);
        if groups & (1 << g) == 0 {
            i = group_end;
            continue;
        }
        while i + 8 <= group_end {
            let mut any = 0;
            for k in 0..8 {
                any |= read_entry(table, i + k);
            }
            if any & P != 0 {
                break;
            }
            i += 8;
        }
        if let Some(j) = (i..group_end).find(|&j| read_entry(table, j) & P != 0) {
            return Some(j);
        }
        i = group_end;
    }
    None
}

impl PageTable {
    /// An empty table: all 512 root entries clear.
    pub(crate) fn new_empty() -> Result<PageTable, Error> {
        Ok(PageTable {
            root: Frame::alloc_zeroed(FrameUsage::PageTable).ok_or(Error::NoMemory)?,
            root_groups: AtomicU64::new(0),
        })
    }

    /// A table whose upper half shares the kernel's mappings (the kernel
    /// pre-allocates every upper-half root entry, so sharing stays exact).
    pub(crate) fn new_with_kernel_half(kernel_root: Option<Paddr>) -> Result<PageTable, Error> {
        let pt = PageTable::new_empty()?;
        if let Some(kroot) = kernel_root {
            for i in ENTRIES / 2..ENTRIES {
                write_entry(pt.root.paddr(), i, read_entry(kroot, i));
            }
        }
        Ok(pt)
    }

    pub(crate) fn root_paddr(&self) -> Paddr {
        self.root.paddr()
    }

    /// Walks to the last-level table for `va`, creating tables if `create`.
    /// A walk that creates also marks, on the way down, the groups that
    /// the entries for `va` fall in (see `SUMMARY_SHIFT`): the caller is
    /// about to make the leaf present.
    fn walk(&self, va: Vaddr, create: bool, privilege: Privilege) -> Result<Option<Paddr>, Error> {
        if create {
            self.mark_root(index(va, 4));
        }
        let mut table = self.root.paddr();
        for level in (2..=4).rev() {
            let i = index(va, level);
            let e = read_entry(table, i);
            if e & P == 0 {
                if !create {
                    return Ok(None);
                }
                let child = Frame::alloc_zeroed(FrameUsage::PageTable).ok_or(Error::NoMemory)?;
                let mut bits = child.into_raw() as u64 | P | W;
                if privilege == Privilege::User {
                    bits |= U;
                }
                bits |= group_bit(index(va, level - 1)) << SUMMARY_SHIFT;
                write_entry(table, i, bits);
                table = (bits & ADDR_MASK) as Paddr;
            } else {
                if e & HUGE != 0 {
                    return Err(Error::InvalidArgs);
                }
                if create {
                    mark(table, i, index(va, level - 1));
                }
                table = (e & ADDR_MASK) as Paddr;
            }
        }
        Ok(Some(table))
    }

    /// Records that root entry `i` may be present.
    fn mark_root(&self, i: usize) {
        let bit = group_bit(i);
        if self.root_groups.load(Ordering::Relaxed) & bit == 0 {
            self.root_groups.fetch_or(bit, Ordering::Relaxed);
        }
    }

    fn root_summary(&self) -> u64 {
        self.root_groups.load(Ordering::Relaxed)
    }

    /// Maps the 4 KiB page at `va` to `pa`; returns the physical address
    /// previously mapped there, if any (whose ownership passes to the caller).
    pub(crate) fn map(
        &self,
        va: Vaddr,
        pa: Paddr,
        flags: PageFlags,
        privilege: Privilege,
        cache: CachePolicy,
    ) -> Result<Option<Paddr>, Error> {
        if !va.is_multiple_of(PAGE_SIZE) || !pa.is_multiple_of(PAGE_SIZE) {
            return Err(Error::InvalidArgs);
        }
        let table = self.walk(va, true, privilege)?.ok_or(Error::NoMemory)?;
        let mut bits = pa as u64 | flags.to_bits();
        match privilege {
            Privilege::User => bits |= U,
            Privilege::Kernel => bits |= G,
        }
        if cache == CachePolicy::Uncacheable {
            bits |= PCD | PWT;
        }
        let i = index(va, 1);
        let old = read_entry(table, i);
        write_entry(table, i, bits);
        if old & P != 0 {
            flush_tlb(va);
            return Ok(Some((old & ADDR_MASK) as Paddr));
        }
        Ok(None)
    }

    /// Maps a 2 MiB kernel page (direct map only).
    pub(crate) fn map_huge_kernel(
        &self,
        va: Vaddr,
        pa: Paddr,
        flags: PageFlags,
    ) -> Result<(), Error> {
        const HUGE_SIZE: usize = 2 * 1024 * 1024;
        if !va.is_multiple_of(HUGE_SIZE) || !pa.is_multiple_of(HUGE_SIZE) {
            return Err(Error::InvalidArgs);
        }
        self.mark_root(index(va, 4));
        let mut table = self.root.paddr();
        for level in [4, 3] {
            let i = index(va, level);
            let e = read_entry(table, i);
            let next = if e & P == 0 {
                let child = Frame::alloc_zeroed(FrameUsage::PageTable).ok_or(Error::NoMemory)?;
                let pa = child.into_raw();
                write_entry(table, i, pa as u64 | P | W);
                pa
            } else {
                (e & ADDR_MASK) as Paddr
            };
            mark(table, i, index(va, level - 1));
            table = next;
        }
        write_entry(table, index(va, 2), pa as u64 | flags.to_bits() | HUGE | G);
        Ok(())
    }

    /// Makes sure the root entry covering `va` exists (kernel half sharing).
    pub(crate) fn ensure_root_entry(&self, va: Vaddr) -> Result<(), Error> {
        let i = index(va, 4);
        if read_entry(self.root.paddr(), i) & P == 0 {
            let child = Frame::alloc_zeroed(FrameUsage::PageTable).ok_or(Error::NoMemory)?;
            write_entry(self.root.paddr(), i, child.into_raw() as u64 | P | W);
            self.mark_root(i);
        }
        Ok(())
    }

    /// Removes the mapping at `va`; returns what it mapped.
    pub(crate) fn unmap(&self, va: Vaddr) -> Option<(Paddr, PageFlags)> {
        let table = self.walk(va, false, Privilege::Kernel).ok()??;
        let i = index(va, 1);
        let old = read_entry(table, i);
        if old & P == 0 {
            return None;
        }
        write_entry(table, i, 0);
        flush_tlb(va);
        Some(((old & ADDR_MASK) as Paddr, PageFlags::from_bits(old)))
    }

    /// Removes every mapping in `[start, end)` (page-aligned), handing each
    /// one's address and frame to `f` after its entry is cleared and its TLB
    /// entry flushed. One walk per last-level table, and ranges with no
    /// table are skipped whole: munmap of a large area costs per page
    /// mapped, not per page of the range.
    pub(crate) fn unmap_range(&self, start: Vaddr, end: Vaddr, mut f: impl FnMut(Vaddr, Paddr)) {
        let mut va = start;
        while va < end {
            // The last-level table for `va`, or the end of the span that the
            // first missing entry on the way down covers.
            let mut table = self.root.paddr();
            let mut next_table = None;
            for level in (2..=4).rev() {
                let e = read_entry(table, index(va, level));
                let span = PAGE_SIZE << (9 * (level - 1));
                if e & P == 0 || e & HUGE != 0 {
                    next_table = Some((va & !(span - 1)).saturating_add(span));
                    break;
                }
                table = (e & ADDR_MASK) as Paddr;
            }
            const L1_SPAN: usize = PAGE_SIZE * ENTRIES;
            if next_table.is_none() {
                let next = (va & !(L1_SPAN - 1)).saturating_add(L1_SPAN);
                next_table = Some(next);
                let stop = next.min(end);
                while va < stop {
                    let i = index(va, 1);
                    let old = read_entry(table, i);
                    if old & P != 0 {
                        write_entry(table, i, 0);
                        flush_tlb(va);
                        f(va, (old & ADDR_MASK) as Paddr);
                    }
                    va += PAGE_SIZE;
                }
            }
            va = next_table.unwrap_or(end);
        }
    }

    /// Changes the rights of an existing mapping; returns the old rights.
    pub(crate) fn protect(&self, va: Vaddr, flags: PageFlags) -> Option<PageFlags> {
        let table = self.walk(va, false, Privilege::Kernel).ok()??;
        let i = index(va, 1);
        let old = read_entry(table, i);
        if old & P == 0 {
            return None;
        }
        let keep = old & (ADDR_MASK | U | G | PCD | PWT);
        write_entry(table, i, keep | flags.to_bits());
        flush_tlb(va);
        Some(PageFlags::from_bits(old))
    }

    /// What `va` maps to.
    pub(crate) fn query(&self, va: Vaddr) -> Option<(Paddr, PageFlags)> {
        let table = self.walk(va, false, Privilege::Kernel).ok()??;
        let e = read_entry(table, index(va, 1));
        (e & P != 0).then(|| ((e & ADDR_MASK) as Paddr, PageFlags::from_bits(e)))
    }

    /// The last-level table that maps the 2 MiB region holding `va` (for a
    /// user copy: see [`translate_in_leaf`]), if
    /// the three levels above it are present (and none is a huge page).
    /// It stays a table of this page table as long as the borrow of `self`
    /// (the caller's lock) lasts: tables are freed only through `&mut self`
    /// or under the lock by `unmap_range`, which a caller holding the lock
    /// for a copy does not call.
    pub(crate) fn leaf_table(&self, va: Vaddr) -> Option<Paddr> {
        let mut table = self.root.paddr();
        for level in (2..=4).rev() {
            let e = read_entry(table, index(va, level));
            // Absent, or a huge page (which `walk` refuses too).
            if e & (P | HUGE) != P {
                return None;
            }
            table = (e & ADDR_MASK) as Paddr;
        }
        Some(table)
    }

    /// Visits every present leaf mapping in the user half in address order.
    pub(crate) fn for_each_user_leaf(&self, f: impl FnMut(Vaddr, Paddr, PageFlags)) {
        self.walk_user_leaves(false, f);
    }

    /// Removes every user leaf, handing each one's frame to `f`, and frees
    /// the user half's intermediate tables, in one walk, without allocating
    /// (teardown must not need memory) and without TLB flushes: the caller
    /// makes sure the table is not loaded on any CPU.
    pub(crate) fn take_user_leaves(&mut self, mut f: impl FnMut(Paddr)) {
        self.walk_user_leaves(true, |_, pa, _| f(pa));
    }

    /// Copies every user leaf of this table into `child` (an empty user
    /// half) in one walk, for fork. For each present leaf, `leaf(va, pa,
    /// writable)` is called just before the child's entry is written (so the
    /// caller can take the reference the new entry owns); it returns whether
    /// a writable page stays writable in both tables (shared memory). A
    /// writable page it does not keep writable becomes read-only in both
    /// (copy-on-write), and its stale TLB entry here is flushed. The child's
    /// intermediate tables are created as needed; on `NoMemory` the leaves
    /// copied so far stay in `child` (and are owned by it).
    pub(crate) fn fork_user_leaves(
        &self,
        child: &mut PageTable,
        mut leaf: impl FnMut(Vaddr, Paddr, bool) -> bool,
    ) -> Result<(), Error> {
        // Makes the table under `parent[i]`, whose summary starts empty,
        // and records in `parent`'s own summary (the entry `up[k]`, or the
        // child's root summary) that entry `i` is present.
        fn child_table(parent: Paddr, i: usize, up: Option<(Paddr, usize)>) -> Result<Paddr, Error> {
            let t = Frame::alloc_zeroed(FrameUsage::PageTable).ok_or(Error::NoMemory)?;
            let pa = t.into_raw();
            write_entry(parent, i, pa as u64 | P | W | U);
            if let Some((table, k)) = up {
                mark(table, k, i);
            }
            Ok(pa)
        }
        let root = self.root.paddr();
        let croot = child.root.paddr();
        let mut i4 = 0;
        while let Some(j4) = next_present(root, i4, ENTRIES / 2, self.root_summary()) {
            i4 = j4 + 1;
            let e4 = read_entry(root, j4);
            let t3 = (e4 & ADDR_MASK) as Paddr;
            let mut c3 = None;
            let mut i3 = 0;
            while let Some(j3) = next_present(t3, i3, ENTRIES, groups_of(e4)) {
                i3 = j3 + 1;
                let e3 = read_entry(t3, j3);
                if e3 & HUGE != 0 {
                    continue;
                }
                let t2 = (e3 & ADDR_MASK) as Paddr;
                let mut c2 = None;
                let mut i2 = 0;
                while let Some(j2) = next_present(t2, i2, ENTRIES, groups_of(e3)) {
                    i2 = j2 + 1;
                    let e2 = read_entry(t2, j2);
                    if e2 & HUGE != 0 {
                        continue;
                    }
                    let t1 = (e2 & ADDR_MASK) as Paddr;
                    let mut c1 = None;
                    // Groups of `ct1` already marked in `ct2[j2]`.
                    let mut marked = 0;
                    let mut i1 = 0;
                    while let Some(j1) = next_present(t1, i1, ENTRIES, groups_of(e2)) {
                        i1 = j1 + 1;
                        let mut e1 = read_entry(t1, j1);
                        // Tables are made only for a table holding a leaf,
                        // so the child has no empty intermediate tables.
                        let (ct2, ct1) = match c1 {
                            Some(t) => t,
                            None => {
                                let ct3 = match c3 {
                                    Some(t) => t,
                                    None => {
                                        let t = child_table(croot, j4, None)?;
                                        child.mark_root(j4);
                                        *c3.insert(t)
                                    }
                                };
                                let ct2 = match c2 {
                                    Some(t) => t,
                                    None => *c2.insert(child_table(ct3, j3, Some((croot, j4)))?),
                                };
                                *c1.insert((ct2, child_table(ct2, j2, Some((ct3, j3)))?))
                            }
                        };
                        // The summary covers the leaf before it is written,
                        // so a fork that fails later leaves every copied
                        // leaf reachable by the child's teardown.
                        if marked & group_bit(j1) == 0 {
                            mark(ct2, j2, j1);
                            marked |= group_bit(j1);
                        }
                        let va = (j4 << 39) | (j3 << 30) | (j2 << 21) | (j1 << 12);
                        let writable = e1 & W != 0;
                        let keep = leaf(va, (e1 & ADDR_MASK) as Paddr, writable);
                        if writable && !keep {
                            e1 &= !W;
                            write_entry(t1, j1, e1);
                            flush_tlb(va);
                        }
                        write_entry(ct1, j1, e1);
                    }
                }
            }
        }
        Ok(())
    }

    /// Visits the user leaves in address order; with `teardown`, clears
    /// each one before `f` sees it and frees every table once it is done
    /// with it.
    fn walk_user_leaves(&self, teardown: bool, mut f: impl FnMut(Vaddr, Paddr, PageFlags)) {
        // Takes the table an entry points to (and clears the entry) once the
        // walk below it is over.
        fn release(table: Paddr, i: usize, teardown: bool) {
            if teardown {
                let child = (read_entry(table, i) & ADDR_MASK) as Paddr;
                write_entry(table, i, 0);
                // SAFETY: intermediate tables of the user half were created
                // by `walk`/`fork_user_leaves` via `Frame::into_raw` and are
                // referenced only by this entry, which is gone.
                drop(unsafe { Frame::from_raw(child) });
            }
        }
        let root = self.root.paddr();
        let mut i4 = 0;
        while let Some(j4) = next_present(root, i4, ENTRIES / 2, self.root_summary()) {
            let e4 = read_entry(root, j4);
            let t3 = (e4 & ADDR_MASK) as Paddr;
            let mut i3 = 0;
            while let Some(j3) = next_present(t3, i3, ENTRIES, groups_of(e4)) {
                let e3 = read_entry(t3, j3);
                if e3 & HUGE == 0 {
                    let t2 = (e3 & ADDR_MASK) as Paddr;
                    let mut i2 = 0;
                    while let Some(j2) = next_present(t2, i2, ENTRIES, groups_of(e3)) {
                        let e2 = read_entry(t2, j2);
                        if e2 & HUGE == 0 {
                            let t1 = (e2 & ADDR_MASK) as Paddr;
                            let mut i1 = 0;
                            while let Some(j1) = next_present(t1, i1, ENTRIES, groups_of(e2)) {
                                let e1 = read_entry(t1, j1);
                                let va = (j4 << 39) | (j3 << 30) | (j2 << 21) | (j1 << 12);
                                if teardown {
                                    write_entry(t1, j1, 0);
                                }
                                f(va, (e1 & ADDR_MASK) as Paddr, PageFlags::from_bits(e1));
                                i1 = j1 + 1;
                            }
                            release(t2, j2, teardown);
                        }
                        i2 = j2 + 1;
                    }
                    release(t3, j3, teardown);
                }
                i3 = j3 + 1;
            }
            release(root, j4, teardown);
            i4 = j4 + 1;
        }
        if teardown {
            self.root_groups.store(0, Ordering::Relaxed);
        }
    }
}

/// What the MMU does with `va` under the table rooted at `root`: the
/// physical address it reaches (4 KiB, 2 MiB and 1 GiB pages), if mapped.
/// Reads the entries without taking the table's lock, as the hardware
/// walker does: the caller keeps the tables alive.
pub(crate) fn translate(root: Paddr, va: Vaddr) -> Option<Paddr> {
    let mut table = root;
    for level in (1..=4).rev() {
        let e = read_entry(table, index(va, level));
        if e & P == 0 {
            return None;
        }
        let size = 1usize << (12 + 9 * (level - 1));
        if level == 1 || (level <= 3 && e & HUGE != 0) {
            let base = (e & ADDR_MASK) as Paddr & !(size - 1);
            return Some(base + (va & (size - 1)));
        }
        table = (e & ADDR_MASK) as Paddr;
    }
    None
}

/// The physical address of `va` through `leaf`, the last-level table
/// [`PageTable::leaf_table`] returned for an address in the same 2 MiB
/// region (under the same lock), if its page is present (and writable,
/// for `write`).
pub(crate) fn translate_in_leaf(leaf: Paddr, va: Vaddr, write: bool) -> Option<Paddr> {
    let need = if write { P | W } else { P };
    let e = read_entry(leaf, index(va, 1));
    (e & need == need).then_some((e & ADDR_MASK) as Paddr + (va & (PAGE_SIZE - 1)))
}

/// Whether the 4 KiB mapping of `va` under `root` is uncached (PCD|PWT).
#[cfg(test)]
pub(crate) fn is_uncached(root: Paddr, va: Vaddr) -> bool {
    let mut table = root;
    for level in (2..=4).rev() {
        let e = read_entry(table, index(va, level));
        if e & P == 0 || e & HUGE != 0 {
            return false;
        }
        table = (e & ADDR_MASK) as Paddr;
    }
    let e = read_entry(table, index(va, 1));
    e & P != 0 && e & (PCD | PWT) == PCD | PWT && e & NX != 0
}

impl Drop for PageTable {
    /// Frees the intermediate tables of the user half. Leaf frames must have
    /// been unmapped (and released) by the owner before.
    fn drop(&mut self) {
        fn free_level(table: Paddr, level: usize, limit: usize, groups: u64) {
            let mut next = 0;
            while let Some(i) = next_present(table, next, limit, groups) {
                next = i + 1;
                let e = read_entry(table, i);
                if e & HUGE != 0 {
                    continue;
                }
                let child = (e & ADDR_MASK) as Paddr;
                if level > 2 {
                    free_level(child, level - 1, ENTRIES, groups_of(e));
                }
                write_entry(table, i, 0);
                // SAFETY: intermediate tables of the user half were created by
                // `walk` via `Frame::into_raw` and are referenced only here.
                drop(unsafe { Frame::from_raw(child) });
            }
        }
        free_level(self.root.paddr(), 4, ENTRIES / 2, self.root_summary());
    }
}
