//! Running out of memory: the kernel's reserve and the OOM killer.
//!
//! * The reserve. Untyped (user and file) frame allocations leave
//!   `vm.min_free_kbytes` of memory free ([`frame::mm::frame_alloc::
//!   set_untyped_reserve`]); the kernel's own allocations may use it, so
//!   the kernel can still allocate while it kills a process and takes its
//!   memory back.
//! * When a user page cannot be had (a user fault, or a fault taken by a
//!   kernel copy or a populate on behalf of a syscall), the allocation
//!   fails with ENOMEM and [`out_of_memory`] runs where no lock is held:
//!   in the user loop right after the fault or the syscall. It first
//!   reclaims what is reclaimable (clean, unmapped page-cache pages of
//!   files on disks; tmpfs pages are their file's only copy), then, unless an earlier victim is
//!   still giving its memory back, kills the process with the highest
//!   badness (Linux's oom_badness), logs it as Linux does, and waits
//!   (killably) for the victim's address space to go. The faulting
//!   thread then retries, or dies if it was the victim.
//! * A victim that has not released its memory within [`VICTIM_GRACE_NS`]
//!   is passed over (Linux's MMF_OOM_SKIP after the OOM reaper), so one
//!   stuck victim cannot stop the system. With no process left to kill,
//!   the faulting process itself is killed: never a panic, never a hang.

use alloc::sync::{Arc, Weak};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::mm::PAGE_SIZE;
use frame::sync::{SpinLock, WaitQueue};

use super::Vmar;
use crate::process::signal::{self, SIGKILL, SigInfo, SI_KERNEL};
use crate::process::{Process, Thread, INIT_PID};

pub const OOM_SCORE_ADJ_MIN: i32 = -1000;
pub const OOM_SCORE_ADJ_MAX: i32 = 1000;

/// How long a victim may take to give its memory back before another
/// one may be chosen.
const VICTIM_GRACE_NS: u64 = 2_000_000_000;

/// Free frames above the reserve that make a retry worth it without
/// killing anything (the failed allocation may have wanted several).
const RETRY_MARGIN: usize = 16;

/// vm.min_free_kbytes (Linux's rule: sqrt(lowmem_kbytes * 16), between
/// 128 kB and 256 MiB), set at boot.
static MIN_FREE_KBYTES: AtomicU64 = AtomicU64::new(0);

/// Sets the kernel's reserve from the size of RAM (at boot).
pub fn init() {
    let lowmem_kb = frame::boot::total_ram() as u64 / 1024;
    let kb = isqrt(lowmem_kb.saturating_mul(16)).clamp(128, 256 * 1024);
    MIN_FREE_KBYTES.store(kb, Ordering::Relaxed);
    frame::mm::frame_alloc::set_untyped_reserve((kb / (PAGE_SIZE as u64 / 1024)) as usize);
}

/// vm.min_free_kbytes (read-only here).
pub fn min_free_kbytes() -> u64 {
    MIN_FREE_KBYTES.load(Ordering::Relaxed)
}

fn isqrt(n: u64) -> u64 {
    let mut x = 0u64;
    let mut bit = 1u64 << 62;
    let mut n = n;
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if n >= x + bit {
            n -= x + bit;
            x = (x >> 1) + bit;
        } else {
            x >>= 1;
        }
        bit >>= 2;
    }
    x
}

/// A kernel-driven allocation of a user page failed: the OOM killer runs
/// when the thread is back in its user loop.
static PENDING: AtomicBool = AtomicBool::new(false);

/// Notes a failed user-page allocation (see [`take_pending`]).
pub fn note_allocation_failure() {
    PENDING.store(true, Ordering::Release);
}

/// Whether an allocation failed since the last call.
pub fn take_pending() -> bool {
    // A load first: every system call asks, and almost never finds one.
    PENDING.load(Ordering::Relaxed) && PENDING.swap(false, Ordering::AcqRel)
}

/// The process killed last, until its address space is gone.
struct Victim {
    vm: Weak<Vmar>,
    pid: u32,
    killed_ns: u64,
}

static VICTIM: SpinLock<Option<Victim>> = SpinLock::new(None);
/// Woken whenever an address space is dropped while a victim is pending.
static RELEASED: WaitQueue = WaitQueue::new();
/// One OOM kill decision at a time (Linux's oom_lock).
static IN_PROGRESS: AtomicBool = AtomicBool::new(false);

/// Called when an address space is dropped.
pub(super) fn address_space_released() {
    if VICTIM.lock().is_some() {
        RELEASED.wake_all();
    }
}

/// Pages of RAM and swap (Linux's totalpages of the OOM killer).
pub fn total_pages() -> usize {
    super::commit::total_pages().max(1)
}

/// Page-table pages of an address space with `rss` resident pages: one
/// last-level table per 512 pages at least (an estimate; the frame does
/// not count tables per address space).
fn pgtable_pages(rss: usize) -> usize {
    rss.div_ceil(512) + 3
}

/// Linux's oom_badness: resident pages, page tables and swap, plus
/// oom_score_adj thousandths of all memory; None for a process that is
/// never killed (init, oom_score_adj -1000, no memory left: exiting).
pub fn badness(p: &Process, total: usize) -> Option<i64> {
    if p.pid() == INIT_PID || p.exit_status().is_some() || p.threads().is_empty() {
        return None;
    }
    let adj = p.oom_score_adj.load(Ordering::Relaxed);
    if adj == OOM_SCORE_ADJ_MIN {
        return None;
    }
    let rss = p.vm().rss_pages();
    let points = (rss + pgtable_pages(rss)) as i64;
    Some(points + i64::from(adj) * (total / 1000) as i64)
}

/// /proc/pid/oom_score: the badness scaled to 0..=1333 as Linux shows it
/// (1000 + badness in thousandths of memory, times 2/3); 0 if never killed.
pub fn oom_score(p: &Process) -> u64 {
    let total = total_pages() as i64;
    match badness(p, total as usize) {
        Some(b) => u64::try_from((1000 + b * 1000 / total) * 2 / 3).unwrap_or(0),
        None => 0,
    }
}

/// Whether `t` of `p` must stop waiting: it is being killed or exits.
fn dying(p: &Process, t: &Thread) -> bool {
    p.exit_status().is_some()
        || t.exiting.load(Ordering::Acquire)
        || signal::deliverable(p, t) & (1 << (SIGKILL - 1)) != 0
}

/// The OOM killer, run by thread `t` of `current` whose user-page
/// allocation failed, with no lock held. Returns when the thread may
/// retry (memory came back, or a victim went) or must die (a SIGKILL is
/// pending for it).
pub fn out_of_memory(current: &Arc<Process>, t: &Thread) {
    if dying(current, t) {
        return;
    }
    // Memory came back meanwhile (a process exited): just retry.
    if frame::mm::frame_alloc::free_frames() >= frame::mm::frame_alloc::untyped_reserve() + RETRY_MARGIN {
        return;
    }
    // Reclaim clean page-cache pages first: no process dies while the
    // cache can give memory back.
    if reclaim() > 0 {
        return;
    }
    // An earlier victim still giving its memory back: wait for it.
    if let Some((vm, killed_ns)) = pending_victim() {
        wait_for(current, t, &vm, killed_ns);
        return;
    }
    if IN_PROGRESS.swap(true, Ordering::AcqRel) {
        // Another thread is choosing; wait for its victim.
        RELEASED.wait_until_or_deadline(
            || (!IN_PROGRESS.load(Ordering::Acquire) || dying(current, t)).then_some(()),
            frame::timer::monotonic_ns().saturating_add(VICTIM_GRACE_NS),
        );
        return;
    }
    let chosen = select_victim();
    match chosen {
        Some(victim) => {
            let vm = victim.vm();
            kill(&victim, &vm, "Out of memory");
            let weak = Arc::downgrade(&vm);
            let killed_ns = frame::timer::monotonic_ns();
            *VICTIM.lock() = Some(Victim { vm: weak.clone(), pid: victim.pid(), killed_ns });
            drop(vm);
            IN_PROGRESS.store(false, Ordering::Release);
            RELEASED.wake_all();
            if !Arc::ptr_eq(&victim, current) {
                drop(victim);
                wait_for(current, t, &weak, killed_ns);
            }
        }
        None => {
            IN_PROGRESS.store(false, Ordering::Release);
            // Nothing else can give memory back: the faulting process
            // goes (Linux would panic here).
            frame::log_warn!("Out of memory and no killable processes; killing the faulting process");
            if current.pid() == INIT_PID {
                // init cannot be sent SIGKILL; its death powers off.
                crate::process::do_exit(current, crate::process::signal_status_code(SIGKILL as i32, false));
                return;
            }
            let vm = current.vm();
            kill(current, &vm, "Out of memory (no other victim)");
        }
    }
}

/// Evicts clean, unmapped page-cache pages (writing dirty ones back
/// first if clean ones are not enough): enough to get back above the
/// reserve with a margin. There is no swap, and tmpfs pages are their
/// file's only copy. Returns the pages freed.
fn reclaim() -> usize {
    let free = frame::mm::frame_alloc::free_frames();
    let want = (frame::mm::frame_alloc::untyped_reserve() + 4 * RETRY_MARGIN).saturating_sub(free).max(RETRY_MARGIN);
    let mut freed = super::page_cache::reclaim(want);
    if freed < want && super::page_cache::stats().1 > 0 {
        let _ = super::page_cache::sync_all();
        freed += super::page_cache::reclaim(want - freed);
    }
    freed
}

/// The last victim, if its address space still exists and its grace
/// period has not run out (then it is passed over).
fn pending_victim() -> Option<(Weak<Vmar>, u64)> {
    let mut v = VICTIM.lock();
    let (alive, expired) = match v.as_ref() {
        Some(victim) => (
            victim.vm.strong_count() > 0,
            frame::timer::monotonic_ns().saturating_sub(victim.killed_ns) >= VICTIM_GRACE_NS,
        ),
        None => return None,
    };
    if !alive || expired {
        if alive && let Some(victim) = v.as_ref() {
            frame::log_warn!("oom: pid {} has not released its memory; choosing another victim", victim.pid);
        }
        *v = None;
        return None;
    }
    v.as_ref().map(|victim| (victim.vm.clone(), victim.killed_ns))
}

/// Sleeps until the victim's address space is gone, its grace period
/// ends, or `t` is killed.
fn wait_for(current: &Process, t: &Thread, vm: &Weak<Vmar>, killed_ns: u64) {
    RELEASED.wait_until_or_deadline(
        || (vm.strong_count() == 0 || dying(current, t)).then_some(()),
        killed_ns.saturating_add(VICTIM_GRACE_NS),
    );
}

/// The killable process with the highest badness (the first in pid order
/// on a tie), or None.
fn select_victim() -> Option<Arc<Process>> {
    let total = total_pages();
    let mut best: Option<(i64, Arc<Process>)> = None;
    for p in crate::process::all_processes() {
        // Processes already dying are giving their memory back.
        if p.signals.shared.lock().mask() & (1 << (SIGKILL - 1)) != 0 {
            continue;
        }
        if let Some(points) = badness(&p, total)
            && best.as_ref().is_none_or(|(b, _)| points > *b)
        {
            best = Some((points, p));
        }
    }
    best.map(|(_, p)| p)
}

/// Sends SIGKILL to `victim` (and to every other process sharing its
/// address space, as Linux does), logging Linux's line.
fn kill(victim: &Arc<Process>, vm: &Arc<Vmar>, why: &str) {
    let rss_kb = vm.rss_pages() * (PAGE_SIZE / 1024);
    let total_vm_kb = vm.areas().iter().map(|a| a.end - a.start).sum::<usize>() / 1024;
    frame::log_warn!(
        "{}: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB, UID:{} pgtables:{}kB oom_score_adj:{}",
        why,
        victim.pid(),
        victim.name(),
        total_vm_kb,
        rss_kb,
        0,
        0,
        victim.creds().ruid,
        pgtable_pages(vm.rss_pages()) * (PAGE_SIZE / 1024),
        victim.oom_score_adj.load(Ordering::Relaxed)
    );
    signal::send_to_process(victim, SigInfo::new(SIGKILL, SI_KERNEL));
    // An exited process holds the shared sealed placeholder, which every
    // zombie "shares": it owns no memory, so there is nobody else to kill.
    if vm.is_sealed() {
        return;
    }
    for p in crate::process::all_processes() {
        if !Arc::ptr_eq(&p, victim) && p.pid() != INIT_PID && Arc::ptr_eq(&p.vm(), vm) {
            signal::send_to_process(&p, SigInfo::new(SIGKILL, SI_KERNEL));
        }
    }
}
