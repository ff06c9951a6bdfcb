//! User address spaces.
//!
//! A [`VmSpace`] maps only untyped frames ([`UFrame`]) into the user half
//! (invariant 5). Each mapped page keeps one reference to its frame, owned by
//! the page-table entry.
//!
//! # Copies to and from user memory
//!
//! Kernel access to user memory goes through [`VmSpace::read_bytes`],
//! [`VmSpace::write_bytes`] and their frame and zero-fill variants, which
//! report the first byte they could not copy as a [`UserFault`] (so the
//! kernel can fault the page in and retry, or return `EFAULT`). A range that
//! does not lie wholly below [`USER_SPACE_END`] is refused first, with
//! overflow-safe arithmetic, before any byte moves. Then one of two paths:
//!
//! - **Through the user address** (bare metal, when this space is the one
//!   loaded in CR3 and boot found SMAP and CR0.WP on): a small assembly
//!   routine (`arch::x86_64::usercopy`) lifts SMAP with `stac`, copies with
//!   `rep movsq`/`rep movsb` through the user virtual address, and lowers
//!   it with `clac`. A page fault at one of its two `rep` instructions, on
//!   a user-half address, resumes at a fixup that returns the bytes left;
//!   any other ring-0 fault stays fatal (`trap::handle_kernel_trap`). This
//!   takes no lock and walks nothing in software. Why it is sound:
//!   - *Rights.* The MMU checks each access as the walk below does: present
//!     for reads, present and writable for writes. CR0.WP is set (checked
//!     before the path is enabled), so a kernel write to a read-only
//!     (copy-on-write) page faults instead of landing. Only user pages are
//!     reachable: the range is below `USER_SPACE_END`.
//!   - *AC never leaks.* AC is set only between the routine's `stac` and
//!     the `clac` on each of its exits (the fixups included). An interrupt
//!     or exception taken inside it enters through the common trap stub,
//!     which loads RFLAGS = 0x2 before anything else runs, so no handler
//!     runs with SMAP lifted; `iretq` gives the copy its AC back. `syscall`
//!     cannot happen in ring 0, and SFMASK clears AC anyway.
//!   - *The right page table.* The path is taken only when `ACTIVE_ROOT`
//!     (what CR3 holds: `activate` and `Drop` are the only writers of a
//!     user root) is this space's root. One CPU, and kernel code is not
//!     preempted (`task`: switches happen only when a task blocks or
//!     yields, never from an interrupt handler, which `reschedule` asserts),
//!     so nothing can load another table between that check and the end of
//!     the routine.
//!   - *No frame freed under the copy.* Every path that takes a frame out
//!     of a user mapping (`unmap`, `unmap_range`, `map` replacing a page,
//!     a copy-on-write break, which replaces through `map`) clears the
//!     entry and flushes the TLB entry on this CPU before the frame
//!     reference is released; `Drop` switches CR3 away first. A task that
//!     sleeps between two copies rechecks `ACTIVE_ROOT` at the next one,
//!     and a thread of the same process that unmaps a page meanwhile has
//!     flushed it: the next copy faults and reports it. Within one copy no
//!     other code runs but interrupt handlers, which do not change user
//!     mappings.
//!   - *Kernel side.* It is a Rust slice the caller owns, or bytes of a
//!     [`UFrame`] the caller holds, through the direct map; user pages map
//!     only untyped frames, so no Rust object is reached through the user
//!     address. The user bytes are copied as bytes: nothing assumes they
//!     are initialised or stable.
//! - **Through the page table** (a space not loaded, e.g. a copy from a
//!   kernel task into another process, and every host and Miri build):
//!   walk the page table under its lock and copy through the direct map,
//!   page by page ([`VmSpace::copy`]). SMAP is never lifted on this path.
//!
//! Both report the same fault: the first byte not copied, and `write` for
//! the direction of the copy.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::frame::UFrame;
use super::page_table::{CachePolicy, PageFlags, PageTable, Privilege, translate_in_leaf};
use super::{PAGE_SIZE, Paddr, Vaddr, paddr_to_ptr};
use crate::Error;
#[cfg(target_os = "none")]
use crate::arch::usercopy;
use crate::sync::{SpinLock, level};

/// One past the highest user virtual address (the top page below the
/// canonical hole is left unmapped, as on Linux).
pub const USER_SPACE_END: Vaddr = 0x0000_7fff_ffff_f000;

/// What one last-level page table maps (2 MiB).
const LEAF_REGION: usize = PAGE_SIZE * 512;

/// Root of the page table currently loaded in CR3 (single CPU for now).
static ACTIVE_ROOT: AtomicUsize = AtomicUsize::new(0);

/// Whether copies may go through the user address (see the module docs):
/// set once at boot when SMAP and CR0.WP are found on.
static DIRECT_COPY: AtomicBool = AtomicBool::new(false);

/// Lets copies into the loaded space go through the user address. Boot
/// calls it after turning SMAP on; it does nothing unless SMAP (for
/// `stac`/`clac`) and CR0.WP (kernel writes honour read-only pages) are
/// both set.
pub(crate) fn enable_direct_copy(smap: bool, cr0_wp: bool) {
    DIRECT_COPY.store(smap && cr0_wp, Ordering::Relaxed);
}

/// Refuses a range that does not lie wholly below [`USER_SPACE_END`] (or
/// whose end overflows), with a fault at `max(va, USER_SPACE_END)`.
#[inline]
fn check_user_range(va: Vaddr, len: usize, write: bool) -> Result<(), UserFault> {
    match va.checked_add(len) {
        Some(end) if end <= USER_SPACE_END => Ok(()),
        _ => Err(UserFault {
            addr: va.max(USER_SPACE_END),
            write,
        }),
    }
}

/// The result of a copy of `len` bytes at user address `va` that left
/// `left` bytes at the end (see `usercopy`: exact).
#[cfg(target_os = "none")]
#[inline]
fn direct_result(va: Vaddr, len: usize, left: usize, write: bool) -> Result<(), UserFault> {
    if left == 0 {
        return Ok(());
    }
    debug_assert!(left <= len);
    Err(UserFault {
        addr: va + (len - left.min(len)),
        write,
    })
}

/// A user address as a pointer for the copy routine only (never
/// dereferenced by Rust).
#[cfg(target_os = "none")]
#[inline]
fn user_ptr(va: Vaddr) -> *mut u8 {
    core::ptr::without_provenance_mut(va)
}

/// A user access that hit a missing or read-only page, or left user space.
///
/// `addr` is the first address of the access that faulted; the bytes of the
/// access below it were copied. An `addr` at or above [`USER_SPACE_END`]
/// means the range leaves user space: nothing was copied and no mapping can
/// make the access succeed (Linux's `access_ok()` failing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserFault {
    pub addr: Vaddr,
    pub write: bool,
}

impl UserFault {
    /// Whether the access left user space (`EFAULT`, never resolvable).
    pub fn is_outside_user_space(&self) -> bool {
        self.addr >= USER_SPACE_END
    }
}

pub struct VmSpace {
    pt: SpinLock<PageTable, { level::VM_SPACE }>,
    /// The root table's address, fixed for the life of the page table:
    /// kept outside the lock so that entering user mode takes none.
    root: Paddr,
}

fn check_user_page(va: Vaddr) -> Result<(), Error> {
    if !va.is_multiple_of(PAGE_SIZE) || va >= USER_SPACE_END {
        return Err(Error::InvalidArgs);
    }
    Ok(())
}

impl VmSpace {
    pub fn new() -> Result<VmSpace, Error> {
        let pt = PageTable::new_with_kernel_half(super::kernel_root())?;
        let root = pt.root_paddr();
        Ok(VmSpace {
            pt: SpinLock::new(pt),
            root,
        })
    }

    /// Maps `frame` at the user page `va`; returns the frame it replaces.
    pub fn map(&self, va: Vaddr, frame: UFrame, flags: PageFlags) -> Result<Option<UFrame>, Error> {
        check_user_page(va)?;
        let pa = frame.paddr();
        let pt = self.pt.lock();
        let old = pt.map(va, pa, flags, Privilege::User, CachePolicy::WriteBack)?;
        let _ = frame.into_raw();
        // SAFETY: the previous entry owned one reference to its frame, taken
        // by `into_raw` when it was mapped; the entry is gone now.
        Ok(old.map(|pa| unsafe { UFrame::from_raw(pa) }))
    }

    /// Maps `frames[i]` at `first + i * PAGE_SIZE`, under one lock, where
    /// the slot holds a frame and nothing is mapped yet; what is mapped
    /// already stays as it is (fault-around must never replace a page, a
    /// private copy-on-write copy for one). Each frame mapped is taken out
    /// of its slot, the others stay. Returns how many were mapped; on an
    /// error (a page outside user space, no memory for a table) the pages
    /// mapped before it stay mapped.
    pub fn map_absent(
        &self,
        first: Vaddr,
        frames: &mut [Option<UFrame>],
        flags: PageFlags,
    ) -> Result<usize, Error> {
        let pt = self.pt.lock();
        let mut mapped = 0;
        for (i, slot) in frames.iter_mut().enumerate() {
            if slot.is_none() {
                continue;
            }
            let va = i
                .checked_mul(PAGE_SIZE)
                .and_then(|off| first.checked_add(off))
                .ok_or(Error::InvalidArgs)?;
            check_user_page(va)?;
            if pt.query(va).is_some() {
                continue;
            }
            let Some(frame) = slot.take() else {
                continue;
            };
            // Absent (checked under the same lock): nothing is replaced.
            pt.map(
                va,
                frame.paddr(),
                flags,
                Privilege::User,
                CachePolicy::WriteBack,
            )?;
            // The entry owns this reference now (see `map`).
            let _ = frame.into_raw();
            mapped += 1;
        }
        Ok(mapped)
    }

    /// Unmaps the user page `va`; returns the frame it mapped.
    pub fn unmap(&self, va: Vaddr) -> Option<UFrame> {
        check_user_page(va).ok()?;
        let (pa, _) = self.pt.lock().unmap(va)?;
        // SAFETY: the entry owned one reference (see `map`) and is removed.
        Some(unsafe { UFrame::from_raw(pa) })
    }

    /// Unmaps every page in `[start, end)` (page-aligned, in user space) in
    /// one pass; returns how many were mapped. The frames are released.
    pub fn unmap_range(&self, start: Vaddr, end: Vaddr) -> usize {
        if check_user_page(start).is_err() || !end.is_multiple_of(PAGE_SIZE) || end > USER_SPACE_END
        {
            return 0;
        }
        let mut n = 0;
        self.pt.lock().unmap_range(start, end, |_, pa| {
            n += 1;
            // SAFETY: the entry owned one reference (see `map`) and is gone.
            drop(unsafe { UFrame::from_raw(pa) });
        });
        n
    }

    /// Changes the rights of the page at `va`; returns the old rights.
    pub fn protect(&self, va: Vaddr, flags: PageFlags) -> Option<PageFlags> {
        check_user_page(va).ok()?;
        self.pt.lock().protect(va, flags)
    }

    /// The frame mapped at `va` (a new handle) and its rights.
    pub fn query(&self, va: Vaddr) -> Option<(UFrame, PageFlags)> {
        check_user_page(va).ok()?;
        let pt = self.pt.lock();
        let (pa, flags) = pt.query(va)?;
        Some((UFrame::clone_from_paddr(pa), flags))
    }

    /// Every user mapping as `(va, frame, flags)`, in address order.
    pub fn mappings(&self) -> Vec<(Vaddr, UFrame, PageFlags)> {
        let mut out = Vec::new();
        self.pt.lock().for_each_user_leaf(|va, pa, flags| {
            out.push((va, UFrame::clone_from_paddr(pa), flags))
        });
        out
    }

    /// A copy of this address space for fork, made in one walk of the page
    /// table: every user page is mapped in the copy too (one more reference
    /// each). A writable page for which `shared(va)` is false becomes
    /// read-only in both spaces (copy-on-write); shared ones stay writable.
    pub fn fork(&self, mut shared: impl FnMut(Vaddr) -> bool) -> Result<VmSpace, Error> {
        let mut child = VmSpace::new()?;
        let pt = self.pt.lock();
        pt.fork_user_leaves(child.pt.get_mut(), |va, pa, writable| {
            // The new entry owns this reference (see `map`); it is written
            // right after, and `Drop` releases it with the entry.
            let _ = UFrame::clone_from_paddr(pa).into_raw();
            writable && shared(va)
        })?;
        Ok(child)
    }

    /// Loads this address space into the MMU.
    pub(crate) fn activate(&self) {
        let root = self.root;
        if ACTIVE_ROOT.swap(root, Ordering::AcqRel) != root {
            #[cfg(any(target_os = "none", test))]
            // SAFETY: the root shares the kernel half with the kernel page
            // table, so the kernel stays mapped; it lives as long as `self`,
            // and `Drop` switches away before freeing it.
            unsafe {
                crate::arch::cpu::write_cr3(root as u64)
            };
        }
    }

    /// Walks `[va, va + len)` page by page and calls `f(offset, paddr, n)`
    /// for each piece, front to back.
    ///
    /// A range that does not lie wholly below [`USER_SPACE_END`] (or whose
    /// end overflows) is refused before anything is copied, with a fault at
    /// `max(va, USER_SPACE_END)`: an address no fault handling can make
    /// valid. Otherwise the fault names the first byte of the first page
    /// that is missing (or read-only, for writes); every byte before it has
    /// been copied. Never reporting an address that did not fault keeps a
    /// caller that resolves faults and retries from spinning.
    fn copy(
        &self,
        va: Vaddr,
        len: usize,
        write: bool,
        mut f: impl FnMut(usize, Paddr, usize),
    ) -> Result<(), UserFault> {
        check_user_range(va, len, write)?;
        let end = va + len;
        let pt = self.pt.lock();
        let mut cur = va;
        // The last-level table of the 2 MiB region `cur` is in: the upper
        // three levels are walked once per region, not once per page. The
        // lock held across the loop keeps the table alive (`leaf_table`).
        let mut leaf: Option<(Vaddr, Paddr)> = None;
        while cur < end {
            let chunk = ((cur | (PAGE_SIZE - 1)) + 1).min(end) - cur;
            let region = cur & !(LEAF_REGION - 1);
            let table = match leaf {
                Some((r, t)) if r == region => Some(t),
                _ => pt.leaf_table(cur).inspect(|t| leaf = Some((region, *t))),
            };
            match table.and_then(|t| translate_in_leaf(t, cur, write)) {
                Some(pa) => f(cur - va, pa, chunk),
                None => return Err(UserFault { addr: cur, write }),
            }
            cur += chunk;
        }
        Ok(())
    }

    /// Whether copies may go through the user address: this space is the
    /// one loaded in CR3 and boot enabled the path (module docs).
    #[cfg(target_os = "none")]
    #[inline]
    fn loaded(&self) -> bool {
        ACTIVE_ROOT.load(Ordering::Relaxed) == self.root && DIRECT_COPY.load(Ordering::Relaxed)
    }

    /// Copies user memory at `va` into `buf`.
    pub fn read_bytes(&self, va: Vaddr, buf: &mut [u8]) -> Result<(), UserFault> {
        #[cfg(target_os = "none")]
        if self.loaded() {
            check_user_range(va, buf.len(), false)?;
            let (dst, len) = (buf.as_mut_ptr(), buf.len());
            // MIRI: not reached: bare metal only (host builds copy through
            // the page-table walk).
            // SAFETY: the user range is below USER_SPACE_END (checked just
            // above); `buf` is a kernel slice the caller lends us mutably,
            // valid for `buf.len()` bytes; SMAP and CR0.WP are on and this
            // space is loaded with no switch possible until the routine
            // returns, and no frame it reaches can be freed meanwhile
            // (`loaded`, module docs, "Copies to and from user memory").
            let left = unsafe { usercopy::copy(dst, user_ptr(va), len) };
            return direct_result(va, len, left, false);
        }
        let dst = buf.as_mut_ptr();
        self.copy(va, buf.len(), false, |off, pa, n| {
            // SAFETY: `pa..pa+n` lies inside one mapped untyped page that the
            // page table (locked) keeps alive; `off + n <= buf.len()`.
            unsafe { core::ptr::copy(paddr_to_ptr::<u8>(pa), dst.add(off), n) }
        })
    }

    /// Copies `buf` into user memory at `va`; fails on read-only pages.
    pub fn write_bytes(&self, va: Vaddr, buf: &[u8]) -> Result<(), UserFault> {
        #[cfg(target_os = "none")]
        if self.loaded() {
            check_user_range(va, buf.len(), true)?;
            let (src, len) = (buf.as_ptr(), buf.len());
            // MIRI: not reached: bare metal only (host builds copy through
            // the page-table walk).
            // SAFETY: as in `read_bytes`, the other way round: `buf` is a
            // kernel slice valid for `buf.len()` bytes of reads; the user
            // range is below USER_SPACE_END, and a read-only page faults
            // (CR0.WP).
            let left = unsafe { usercopy::copy(user_ptr(va), src, len) };
            return direct_result(va, len, left, true);
        }
        let src = buf.as_ptr();
        self.copy(va, buf.len(), true, |off, pa, n| {
            // SAFETY: see `read_bytes`; the page is mapped writable.
            unsafe { core::ptr::copy(src.add(off), paddr_to_ptr::<u8>(pa), n) }
        })
    }

    /// Copies `len` bytes of `frame`, from `offset` in it, to user memory
    /// at `va` (read(2) from the page cache with no kernel buffer between).
    /// Faults as [`VmSpace::write_bytes`] does: the bytes below the
    /// reported address were copied.
    ///
    /// Panics if `offset + len` leaves the page (a caller's broken
    /// invariant: it names a part of one page).
    pub fn write_from_frame(
        &self,
        va: Vaddr,
        frame: &UFrame,
        offset: usize,
        len: usize,
    ) -> Result<(), UserFault> {
        let src = frame_part(frame, offset, len);
        #[cfg(target_os = "none")]
        if self.loaded() {
            check_user_range(va, len, true)?;
            // MIRI: not reached: bare metal only (host builds copy through
            // the page-table walk).
            // SAFETY: source: bytes `offset..offset + len` of the untyped
            // page `frame` keeps alive (`frame_part` asserts they are in
            // it), plain bytes other handles may change concurrently (a
            // race on bytes, never on Rust objects); destination: the user
            // range, as in `write_bytes`.
            let left = unsafe { usercopy::copy(user_ptr(va), src, len) };
            return direct_result(va, len, left, true);
        }
        self.copy(va, len, true, |off, pa, n| {
            // SAFETY: source: bytes `offset + off..+n` of the untyped page
            // `frame` keeps alive (in it: `frame_part` asserts it, `off + n <= len`);
            // destination: one mapped, writable untyped page the locked page
            // table keeps alive. Both hold plain bytes other handles may
            // change concurrently (a race on bytes, never on Rust objects).
            unsafe { core::ptr::copy(src.add(off), paddr_to_ptr::<u8>(pa), n) }
        })
    }

    /// Copies `len` bytes of the pages `frames` taken back to back, from
    /// byte `offset` of the first, to user memory at `va`, under one round
    /// of the page-table lock (read(2) of a run of page-cache pages).
    /// Faults as [`VmSpace::write_bytes`] does: the bytes below the
    /// reported address were copied.
    ///
    /// Panics if `offset + len` leaves the pages (a caller's broken
    /// invariant: it names a part of the run).
    pub fn write_from_frames(
        &self,
        va: Vaddr,
        frames: &[UFrame],
        offset: usize,
        len: usize,
    ) -> Result<(), UserFault> {
        assert!(
            offset
                .checked_add(len)
                .is_some_and(|end| end <= frames.len().saturating_mul(PAGE_SIZE)),
            "a frame-run copy stays inside its pages"
        );
        #[cfg(target_os = "none")]
        if self.loaded() {
            // Each page's piece goes straight to the user address.
            check_user_range(va, len, true)?;
            let mut done = 0;
            while done < len {
                let at = offset + done;
                let (frame, in_page) = (&frames[at / PAGE_SIZE], at % PAGE_SIZE);
                let k = (len - done).min(PAGE_SIZE - in_page);
                let src = paddr_to_ptr::<u8>(frame.paddr() + in_page);
                // MIRI: not reached: bare metal only (host builds copy through
                // the page-table walk).
                // SAFETY: source: bytes `in_page..in_page + k` of the page
                // `frame` keeps alive (`k <= PAGE_SIZE - in_page`; the
                // assert keeps `at / PAGE_SIZE` in `frames`), plain bytes;
                // destination: `[va + done, va + done + k)`, inside the
                // user range checked above (`done + k <= len`), as in
                // `write_bytes`.
                let left = unsafe { usercopy::copy(user_ptr(va + done), src, k) };
                direct_result(va + done, k, left, true)?;
                done += k;
            }
            return Ok(());
        }
        self.copy(va, len, true, |off, mut pa, mut n| {
            let mut at = offset + off;
            while n > 0 {
                let (frame, in_page) = (&frames[at / PAGE_SIZE], at % PAGE_SIZE);
                let k = n.min(PAGE_SIZE - in_page);
                let src = paddr_to_ptr::<u8>(frame.paddr() + in_page);
                // SAFETY: source: bytes `in_page..in_page + k` of the page
                // `frame` keeps alive (`k <= PAGE_SIZE - in_page`; the assert
                // keeps `at / PAGE_SIZE` in `frames`); destination: `k <= n`
                // bytes of the mapped, writable untyped user page the locked
                // page table keeps alive. Plain bytes (see `write_from_frame`).
                unsafe { core::ptr::copy(src, paddr_to_ptr::<u8>(pa), k) };
                (at, pa, n) = (at + k, pa + k, n - k);
            }
        })
    }

    /// Copies `len` bytes of user memory at `va` into `frame` at `offset`
    /// (write(2) into the page cache with no kernel buffer between). Faults
    /// as [`VmSpace::read_bytes`] does: the bytes below the reported
    /// address were copied.
    ///
    /// Panics if `offset + len` leaves the page.
    pub fn read_into_frame(
        &self,
        va: Vaddr,
        frame: &UFrame,
        offset: usize,
        len: usize,
    ) -> Result<(), UserFault> {
        let dst = frame_part(frame, offset, len);
        #[cfg(target_os = "none")]
        if self.loaded() {
            check_user_range(va, len, false)?;
            // MIRI: not reached: bare metal only (host builds copy through
            // the page-table walk).
            // SAFETY: as in `write_from_frame`, the other way round: the
            // destination is bytes `offset..offset + len` of `frame`, the
            // source the user range (as in `read_bytes`).
            let left = unsafe { usercopy::copy(dst, user_ptr(va), len) };
            return direct_result(va, len, left, false);
        }
        self.copy(va, len, false, |off, pa, n| {
            // SAFETY: see `write_from_frame`, the other way round: the
            // source is a mapped user page, the destination bytes
            // `offset + off .. offset + off + n` of `frame`.
            unsafe { core::ptr::copy(paddr_to_ptr::<u8>(pa), dst.add(off), n) }
        })
    }

    /// Zero-fills user memory at `va`.
    pub fn fill_zero(&self, va: Vaddr, len: usize) -> Result<(), UserFault> {
        #[cfg(target_os = "none")]
        if self.loaded() {
            check_user_range(va, len, true)?;
            // MIRI: not reached: bare metal only (host builds copy through
            // the page-table walk).
            // SAFETY: the user range is below USER_SPACE_END (checked just
            // above), SMAP and CR0.WP are on and this space is loaded, as in
            // `write_bytes`; no kernel memory is touched.
            let left = unsafe { usercopy::zero(user_ptr(va), len) };
            return direct_result(va, len, left, true);
        }
        self.copy(va, len, true, |_, pa, n| {
            // SAFETY: see `write_bytes`.
            unsafe { core::ptr::write_bytes(paddr_to_ptr::<u8>(pa), 0, n) }
        })
    }
}

/// Where bytes `offset..offset + len` of `frame` are in the direct map.
/// Panics if they leave the page (a caller's broken invariant: a frame
/// copy names a part of one page).
fn frame_part(frame: &UFrame, offset: usize, len: usize) -> *mut u8 {
    assert!(
        offset <= PAGE_SIZE && len <= PAGE_SIZE - offset,
        "a frame copy stays inside its page"
    );
    paddr_to_ptr::<u8>(frame.paddr() + offset)
}

impl Drop for VmSpace {
    fn drop(&mut self) {
        let pt = self.pt.get_mut();
        if ACTIVE_ROOT.load(Ordering::Acquire) == pt.root_paddr() {
            #[cfg(any(target_os = "none", test))]
            if let Some(kroot) = super::kernel_root() {
                // SAFETY: the kernel page table maps everything the kernel
                // needs and lives forever.
                unsafe { crate::arch::cpu::write_cr3(kroot as u64) };
                ACTIVE_ROOT.store(kroot, Ordering::Release);
            }
        }
        // No longer loaded (switched away above; single CPU), so the leaves
        // can go without TLB flushes, and without a list: freeing an address
        // space must not need memory.
        pt.take_user_leaves(|pa| {
            // SAFETY: each user leaf owned one frame reference (see `map`),
            // and `take_user_leaves` has removed the entry (and frees the
            // tables as it goes).
            drop(unsafe { UFrame::from_raw(pa) });
        });
    }
}
