//! Memory commit accounting (Linux's overcommit rules, proc(5)
//! /proc/sys/vm/overcommit_memory and the kernel's
//! Documentation/mm/overcommit-accounting).
//!
//! What is charged is what Linux marks VM_ACCOUNT: private writable
//! mappings (anonymous memory, the heap, the stack, writable private file
//! mappings), unless mapped with MAP_NORESERVE outside mode 2. Each
//! address space keeps the sum of its charged areas and
//! settles the difference with the global total after every change of
//! its areas ([`crate::mm::Vmar`]), and gives it all back when it is
//! dropped, so the total cannot drift from the areas that exist.
//!
//! Not charged here (Linux charges them per object): shared anonymous
//! memory, System V segments and tmpfs pages.

use core::sync::atomic::{AtomicUsize, Ordering};

use frame::mm::PAGE_SIZE;

use crate::error::{Errno, Error, Result};
use crate::sysctl::{OVERCOMMIT_KBYTES, OVERCOMMIT_MEMORY, OVERCOMMIT_RATIO};

/// vm.overcommit_memory values.
pub const OVERCOMMIT_GUESS: u64 = 0;
pub const OVERCOMMIT_ALWAYS: u64 = 1;
pub const OVERCOMMIT_NEVER: u64 = 2;

/// Pages charged by every address space (Committed_AS).
static COMMITTED: AtomicUsize = AtomicUsize::new(0);

/// Pages charged now.
pub fn committed_pages() -> usize {
    COMMITTED.load(Ordering::Relaxed)
}

/// Pages of RAM (totalram_pages; there is no swap).
pub fn total_pages() -> usize {
    frame::boot::total_ram() / PAGE_SIZE
}

/// CommitLimit in pages: vm.overcommit_kbytes if set, else RAM times
/// vm.overcommit_ratio percent (plus swap, of which there is none).
pub fn commit_limit_pages() -> usize {
    let kbytes = OVERCOMMIT_KBYTES.get();
    if kbytes != 0 {
        return usize::try_from(kbytes / (PAGE_SIZE as u64 / 1024)).unwrap_or(usize::MAX);
    }
    let ratio = usize::try_from(OVERCOMMIT_RATIO.get()).unwrap_or(usize::MAX);
    total_pages().saturating_mul(ratio) / 100
}

/// Whether an area with these properties is charged (VM_ACCOUNT):
/// private and writable, and not MAP_NORESERVE unless in mode 2, which
/// ignores that flag.
pub fn accountable(shared: bool, write: bool, noreserve: bool) -> bool {
    !shared && write && (!noreserve || OVERCOMMIT_MEMORY.get() == OVERCOMMIT_NEVER)
}

/// Linux's __vm_enough_memory: may `pages` more be committed by a
/// process whose address space already charges `own_pages`? `admin`:
/// the caller is privileged (it may use the admin reserve). ENOMEM if
/// not. Mode 0 refuses only a single request larger than RAM and swap;
/// mode 1 refuses nothing; mode 2 refuses what would pass CommitLimit,
/// less the admin reserve (unprivileged callers) and the user reserve.
pub fn may_commit(pages: usize, own_pages: usize, admin: bool) -> Result<()> {
    if pages == 0 {
        return Ok(());
    }
    match OVERCOMMIT_MEMORY.get() {
        OVERCOMMIT_ALWAYS => Ok(()),
        OVERCOMMIT_NEVER => {
            let mut allowed = commit_limit_pages();
            let reserve = |max_kb: usize| (RESERVE_BASE_PAGES.load(Ordering::Relaxed) / 32).min(max_kb / 4);
            if !admin {
                allowed = allowed.saturating_sub(reserve(ADMIN_RESERVE_MAX_KB));
            }
            allowed = allowed.saturating_sub((own_pages / 32).min(reserve(USER_RESERVE_MAX_KB)));
            if committed_pages().saturating_add(pages) < allowed {
                Ok(())
            } else {
                Err(Error::with_message(Errno::ENOMEM, "vm.overcommit_memory=2: beyond CommitLimit"))
            }
        }
        _ => {
            if pages > total_pages() {
                Err(Error::with_message(Errno::ENOMEM, "mapping larger than RAM and swap"))
            } else {
                Ok(())
            }
        }
    }
}

/// The admin and user reserves (Linux's admin_reserve_kbytes,
/// user_reserve_kbytes): 1/32 of the memory free at boot, at most 8 MiB
/// and 128 MiB.
const ADMIN_RESERVE_MAX_KB: usize = 8 * 1024;
const USER_RESERVE_MAX_KB: usize = 128 * 1024;
static RESERVE_BASE_PAGES: AtomicUsize = AtomicUsize::new(0);

/// Records the free memory the reserves are computed from (at boot).
pub fn init() {
    RESERVE_BASE_PAGES.store(frame::mm::frame_alloc::free_frames(), Ordering::Relaxed);
}

/// Settles an address space's charge that went from `old` to `new`
/// pages.
pub fn settle(old: usize, new: usize) {
    if new >= old {
        COMMITTED.fetch_add(new - old, Ordering::Relaxed);
    } else {
        let _ = COMMITTED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some(c.saturating_sub(old - new)));
    }
}
