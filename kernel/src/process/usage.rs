//! Resource usage: CPU time, page faults, context switches and peak memory
//! of threads, processes and reaped children (getrusage(2), times(2),
//! wait4(2), the CPU-time clocks).
//!
//! A thread's CPU time is its frame task's (`Task::cpu_time_ns`, sleeping
//! and idling excluded); the part spent in user mode is measured around
//! each return to user mode with two raw cycle-counter reads (no clock
//! arithmetic on the system-call path), the rest is system time. A process's usage is
//! the sum over its live threads plus what its exited threads left behind
//! (`ThreadList::exited`), so the process clock always includes the
//! calling thread's running time. A parent adds a child's usage, its
//! reaped descendants' included, when it reaps the child.

use alloc::sync::{Arc, Weak};
use core::sync::atomic::{AtomicU64, Ordering};

use super::{Process, Thread};

/// Usage figures, as `struct rusage` reports them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Peak resident set in KiB (a maximum, not a sum).
    pub maxrss_kb: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
}

impl Usage {
    /// User plus system time.
    pub fn cpu_ns(&self) -> u64 {
        self.utime_ns.saturating_add(self.stime_ns)
    }

    /// Adds `other`'s counters; the peak RSS is the larger of the two.
    pub fn add(&mut self, other: &Usage) {
        self.utime_ns = self.utime_ns.saturating_add(other.utime_ns);
        self.stime_ns = self.stime_ns.saturating_add(other.stime_ns);
        self.maxrss_kb = self.maxrss_kb.max(other.maxrss_kb);
        self.minflt = self.minflt.saturating_add(other.minflt);
        self.majflt = self.majflt.saturating_add(other.majflt);
        self.nvcsw = self.nvcsw.saturating_add(other.nvcsw);
        self.nivcsw = self.nivcsw.saturating_add(other.nivcsw);
    }
}

/// Counters a thread keeps about itself.
#[derive(Default)]
pub struct ThreadCounters {
    /// Time spent in user mode, in clock cycles (`frame::timer::cycles`):
    /// two counter reads per stay in user mode, converted when read.
    pub(super) utime_cycles: AtomicU64,
    pub(super) minflt: AtomicU64,
}

/// Which CPU time a CPU-time clock measures (clock_getcpuclockid(3)'s
/// encoding: PROF, VIRT, SCHED).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuKind {
    /// User plus system time.
    Prof,
    /// User time only.
    Virt,
    /// Time on the CPU (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID).
    Sched,
}

impl CpuKind {
    fn of(u: &Usage) -> impl Fn(CpuKind) -> u64 + '_ {
        move |kind| match kind {
            CpuKind::Virt => u.utime_ns,
            CpuKind::Prof | CpuKind::Sched => u.cpu_ns(),
        }
    }
}

impl Thread {
    /// This thread's usage so far (no peak RSS: that is the process's).
    pub fn usage(&self) -> Usage {
        let task = self.task.get().and_then(Weak::upgrade);
        let total = task.as_ref().map_or(0, |t| t.cpu_time_ns());
        let (nvcsw, nivcsw) = task.as_ref().map_or((0, 0), |t| t.context_switches());
        // User time is measured separately; it never exceeds the total.
        let user = frame::timer::cycles_to_ns(self.counters.utime_cycles.load(Ordering::Relaxed)).min(total);
        Usage {
            utime_ns: user,
            stime_ns: total - user,
            maxrss_kb: 0,
            minflt: self.counters.minflt.load(Ordering::Relaxed),
            majflt: 0,
            nvcsw,
            nivcsw,
        }
    }

    /// The value of this thread's CPU-time clock of `kind`.
    pub fn cpu_clock_ns(&self, kind: CpuKind) -> u64 {
        CpuKind::of(&self.usage())(kind)
    }

    /// Records time spent in user mode, in clock cycles.
    pub(super) fn add_user_cycles(&self, cycles: u64) {
        self.counters.utime_cycles.fetch_add(cycles, Ordering::Relaxed);
    }
}

/// The current thread took (and resolved) a page fault.
pub fn count_minor_fault() {
    if let Some(t) = super::current_thread() {
        t.counters.minflt.fetch_add(1, Ordering::Relaxed);
    }
}

/// KiB in `pages` pages.
fn pages_kb(pages: usize) -> u64 {
    (pages * frame::mm::PAGE_SIZE / 1024) as u64
}

impl Process {
    /// RUSAGE_SELF: every thread, live or exited, and the peak RSS of this
    /// and earlier address spaces (before execve).
    pub fn self_usage(&self) -> Usage {
        let mut u = self.self_usage_cpu();
        u.maxrss_kb = self.maxrss_kb.load(Ordering::Relaxed).max(pages_kb(self.vm().hiwater_pages()));
        u
    }

    /// RUSAGE_CHILDREN: reaped children and what they had reaped.
    pub fn children_usage(&self) -> Usage {
        *self.children_usage.lock()
    }

    /// What wait4(2) reports for this child: its own usage plus its
    /// reaped children's (Linux's RUSAGE_BOTH).
    pub fn total_usage(&self) -> Usage {
        let mut u = self.self_usage();
        u.add(&self.children_usage());
        u
    }

    /// (user, system) CPU time of all threads.
    pub fn cpu_times(&self) -> (u64, u64) {
        let u = self.self_usage_cpu();
        (u.utime_ns, u.stime_ns)
    }

    /// The value of this process's CPU-time clock of `kind`.
    pub fn cpu_clock_ns(&self, kind: CpuKind) -> u64 {
        CpuKind::of(&self.self_usage_cpu())(kind)
    }

    /// `self_usage` without the address-space part (the peak RSS).
    fn self_usage_cpu(&self) -> Usage {
        let list = self.threads.lock();
        let mut u = list.exited;
        for t in &list.live {
            u.add(&t.usage());
        }
        u
    }

    /// Remembers the peak RSS of an address space the process stops
    /// using (execve, exit).
    pub(super) fn note_vm_peak(&self, pages: usize) {
        self.maxrss_kb.fetch_max(pages_kb(pages), Ordering::Relaxed);
    }

    /// A child was reaped: its usage (descendants included) joins ours.
    pub(super) fn add_child_usage(&self, child: &Usage) {
        self.children_usage.lock().add(child);
    }

    /// `thread` leaves the process: its usage stays with the process.
    pub(super) fn retire_thread(&self, thread: &Arc<Thread>) {
        let mut list = self.threads.lock();
        if let Some(i) = list.live.iter().position(|t| Arc::ptr_eq(t, thread)) {
            let t = list.live.remove(i);
            super::NR_THREADS.fetch_sub(1, Ordering::Relaxed);
            let u = t.usage();
            list.exited.add(&u);
        }
    }
}
