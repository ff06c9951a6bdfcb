//! Processes and threads.
//!
//! A [`Process`] owns an address space, a file table, a file-system context,
//! signal dispositions and resource limits; a [`Thread`] is the unit the
//! scheduler runs (one frame `Task` each). The first thread's tid equals
//! the pid; after an execve only the exec'ing thread remains, with tid = pid.

mod access;
pub mod creds;
mod exec;
mod exit;
mod fork;
pub mod futex;
mod itimer;
pub mod pidfd;
pub mod posix_timer;
pub mod rlimit;
mod run;
pub mod sig_actions;
pub mod sig_actions_ktest;
pub mod signal;
pub mod signal_frame;
mod usage;

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use frame::sync::{level, Mutex, SpinLock, WaitQueue};

use crate::fs::{FileTable, FsContext};
use crate::mm::Vmar;

pub use self::access::{ptrace_may_access, AccessCreds};
pub use self::exec::{exec_fs, execve, load_init, read_whole, ExecFile, ARG_MAX, MAX_ARG_STRLEN};
pub use self::exit::{do_exit, exit_thread, exit_status_code as exit_status_for, signal_status_code, wait_child, WaitOptions, WaitTarget};
pub use self::fork::{clone_process, CloneArgs, CLONE_DETACHED, CLONE_PARENT, CLONE_SIGHAND, CLONE_THREAD, CLONE_VFORK, CLONE_VM};
pub use self::itimer::{get_cpu as get_cpu_timer, get_real as get_real_timer, set_cpu as set_cpu_timer, set_real as set_real_timer};
pub use self::run::spawn_user_thread;
pub use self::usage::{count_minor_fault, CpuKind, Usage};
pub(crate) use self::run::spawn_user_thread_inner;

pub type Pid = u32;

/// Lock level of a process's address-space pointer: above the file table and
/// inode locks, so syscalls may copy to user memory while holding those.
const PROCESS_VM: u8 = 30;

pub struct Process {
    pid: Pid,
    parent: SpinLock<Weak<Process>, { level::PROCESS }>,
    /// The parent's pid, written with `parent` (getppid without the lock).
    ppid: AtomicU32,
    children: SpinLock<Vec<Arc<Process>>, { level::PROCESS }>,
    vm: SpinLock<Arc<Vmar>, PROCESS_VM>,
    /// Bumped (under `vm`'s lock) whenever `vm` is replaced, and (under
    /// `files`' lock) whenever `files` is, so that a thread can keep using
    /// the address space and descriptor table it fetched last until they
    /// change, without the locks (run.rs).
    vm_generation: AtomicU64,
    /// The descriptor table, shared with CLONE_FILES relatives until one
    /// of them unshares it (close_range CLOSE_RANGE_UNSHARE).
    files: SpinLock<Arc<SharedFiles>, PROCESS_VM>,
    /// Root, cwd and umask, shared with CLONE_FS relatives.
    fs: Arc<Mutex<FsContext, { level::FS_CONTEXT }>>,
    pgid: AtomicU32,
    sid: AtomicU32,
    /// Wait status once the process has exited (a zombie), else -1.
    exit_status: AtomicI32,
    /// Parents sleep here in wait4 until a child changes state.
    pub(crate) child_wait: WaitQueue,
    /// Notified when the process exits and when it is reaped (what its
    /// pidfds poll).
    pub(crate) exit_readiness: crate::fs::readiness::Readiness,
    /// A vfork parent sleeps here until the child execs or exits.
    pub(crate) vfork_done: WaitQueue,
    pub(crate) vfork_released: core::sync::atomic::AtomicBool,
    pub signals: signal::SignalState,
    pub rlimits: SpinLock<rlimit::Limits, { level::PROCESS }>,
    name: SpinLock<String, { level::PROCESS }>,
    threads: SpinLock<ThreadList, { level::PROCESS }>,
    /// Usage of reaped children, their reaped descendants included.
    children_usage: SpinLock<Usage, { level::PROCESS }>,
    /// Peak RSS (KiB) of address spaces the process no longer uses.
    maxrss_kb: AtomicU64,
    /// Woken when a thread joins or leaves (execve waits here for the others).
    pub(crate) threads_changed: WaitQueue,
    /// A thread is in execve's takeover of the process (one at a time).
    pub(crate) exec_takeover: core::sync::atomic::AtomicBool,
    pub(crate) nice: AtomicI32,
    /// PR_SET_CHILD_SUBREAPER: orphaned descendants are re-parented here.
    pub(crate) subreaper: core::sync::atomic::AtomicBool,
    /// PR_SET_PDEATHSIG: signal sent when the parent exits.
    pub(crate) pdeathsig: AtomicU32,
    /// PR_SET_NO_NEW_PRIVS: execve never grants privileges (inherited,
    /// never cleared).
    pub(crate) no_new_privs: core::sync::atomic::AtomicBool,
    /// PR_SET_DUMPABLE (1, or 0 after a set-user-ID execve).
    pub(crate) dumpable: AtomicU32,
    /// PR_SET_TIMERSLACK, in ns (reported; timers here have no slack).
    pub(crate) timer_slack_ns: AtomicU64,
    /// personality(2): the execution domain and flags, kept across fork
    /// and execve.
    pub(crate) personality: AtomicU32,
    creds: SpinLock<creds::Credentials, { level::PROCESS }>,
    /// Signal sent to the parent at exit (clone's low byte; SIGCHLD for fork).
    pub(crate) exit_signal: AtomicU32,
    /// The parent has been told of the exit (the exit signal, a wake-up
    /// of wait): after the last thread is gone, as on Linux, where a
    /// zombie leader is not reaped while other threads still run.
    exit_notified: core::sync::atomic::AtomicBool,
    /// Set once the process has called execve (setpgid's EACCES rule).
    pub(crate) did_exec: core::sync::atomic::AtomicBool,
    /// Absolute path of the running program (/proc/pid/exe).
    exe: SpinLock<String, { level::PROCESS }>,
    /// Monotonic time at creation (/proc/pid/stat starttime).
    pub(crate) start_ns: u64,
    /// /proc/pid/make-it-fail: fault injection may fail this process's
    /// fallible allocations (crate::fallible); inherited by fork.
    make_it_fail: core::sync::atomic::AtomicBool,
    /// /proc/pid/oom_score_adj (-1000..=1000), and the lowest value an
    /// unprivileged writer may set (Linux's oom_score_adj_min, set by
    /// privileged writes): both inherited by fork, kept by execve.
    pub(crate) oom_score_adj: AtomicI32,
    pub(crate) oom_score_adj_min: AtomicI32,
}

/// A process's threads, and the usage its exited threads left behind.
#[derive(Default)]
struct ThreadList {
    live: Vec<Arc<Thread>>,
    exited: Usage,
}

/// A descriptor table and the number of processes using it: the table is
/// emptied (its files closed) when the last of them exits.
pub struct SharedFiles {
    table: Mutex<FileTable, { level::FILE_TABLE }>,
    users: AtomicU32,
}

impl core::ops::Deref for SharedFiles {
    type Target = Mutex<FileTable, { level::FILE_TABLE }>;

    fn deref(&self) -> &Self::Target {
        &self.table
    }
}

impl SharedFiles {
    pub fn new(table: FileTable) -> Arc<SharedFiles> {
        Arc::new(SharedFiles { table: Mutex::new(table), users: AtomicU32::new(1) })
    }

    /// Another process starts using the table (CLONE_FILES).
    pub(crate) fn share(self: &Arc<Self>) -> Arc<SharedFiles> {
        self.users.fetch_add(1, Ordering::Relaxed);
        self.clone()
    }

    /// A user exits (or unshares); the last one closes every descriptor.
    pub(crate) fn release(&self) {
        if self.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            let old = core::mem::take(&mut *self.table.lock());
            drop(old);
        }
    }
}

pub struct Thread {
    /// Changes once, when a non-leader thread execs and takes the pid.
    tid: AtomicU32,
    process: Weak<Process>,
    /// Blocked signals.
    pub sigmask: AtomicU64,
    /// set_tid_address / CLONE_CHILD_CLEARTID: zeroed at exit.
    pub clear_child_tid: AtomicU64,
    pub robust_list: AtomicU64,
    /// Set when the thread must leave its user loop (exit, exit_group).
    pub(crate) exiting: core::sync::atomic::AtomicBool,
    pub signals: signal::ThreadSignals,
    /// The frame task running this thread.
    pub(crate) task: frame::sync::Once<Weak<frame::task::Task>>,
    /// User time and page faults.
    counters: usage::ThreadCounters,
}

impl Thread {
    pub fn tid(&self) -> Pid {
        self.tid.load(Ordering::Relaxed)
    }

    pub fn process(&self) -> Option<Arc<Process>> {
        self.process.upgrade()
    }

    /// execve from a non-leader thread: it takes over the pid as its tid.
    pub(crate) fn set_tid(&self, tid: Pid) {
        self.tid.store(tid, Ordering::Relaxed);
    }

    /// Wakes the thread if it sleeps (to notice a signal).
    pub fn wake(&self) {
        if let Some(t) = self.task.get().and_then(Weak::upgrade) {
            t.wake();
        }
    }
}

static PROCESSES: SpinLock<BTreeMap<Pid, Weak<Process>>, { level::PROCESS_TABLE }> = SpinLock::new(BTreeMap::new());
/// The last pid handed out (Linux's pid_namespace last_pid).
static LAST_PID: AtomicU32 = AtomicU32::new(0);
/// Set once pids have wrapped at kernel.pid_max: from then on a pid is
/// checked to be free before it is handed out.
static PIDS_WRAPPED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
/// Linux's RESERVED_PIDS: after a wrap, allocation starts above these.
pub const RESERVED_PIDS: Pid = 300;

/// Threads that exist (added and not yet retired), against
/// kernel.threads-max (Linux's nr_threads).
static NR_THREADS: AtomicUsize = AtomicUsize::new(0);

/// fork and clone: EAGAIN once kernel.threads-max threads exist, for root
/// too (Linux's copy_process). Like Linux's, the check races with other
/// forks: at most one thread per CPU past the limit.
pub(crate) fn check_threads_max() -> crate::error::Result<()> {
    let max = usize::try_from(crate::sysctl::THREADS_MAX.get()).unwrap_or(usize::MAX);
    if NR_THREADS.load(Ordering::Relaxed) >= max {
        return Err(crate::error::Error::with_message(crate::error::Errno::EAGAIN, "kernel.threads-max reached"));
    }
    Ok(())
}

/// Process id of init.
pub const INIT_PID: Pid = 1;

/// A fresh pid/tid (they share one number space, as on Linux): the next
/// after the last one handed out, below kernel.pid_max; past it the count
/// starts again above RESERVED_PIDS, skipping pids in use (a process,
/// zombie or not, a thread, a process group or a session). EAGAIN if every
/// pid is taken (Linux's alloc_pid). It allocates nothing.
pub(crate) fn alloc_pid() -> crate::error::Result<Pid> {
    let max = Pid::try_from(crate::sysctl::PID_MAX.get()).unwrap_or(Pid::MAX);
    // Each candidate is claimed by one caller (compare-exchange on the
    // last pid); one round over the whole range at most.
    for _ in 0..max {
        let mut wrapped = false;
        let claimed = LAST_PID.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
            let next = last.saturating_add(1);
            wrapped = next >= max;
            Some(if wrapped { RESERVED_PIDS.min(max - 1) } else { next })
        });
        let Ok(last) = claimed else { continue };
        let pid = if wrapped { RESERVED_PIDS.min(max - 1) } else { last + 1 };
        if wrapped {
            PIDS_WRAPPED.store(true, Ordering::Relaxed);
        }
        if !PIDS_WRAPPED.load(Ordering::Relaxed) || !pid_in_use(pid) {
            return Ok(pid);
        }
    }
    Err(crate::error::Error::with_message(crate::error::Errno::EAGAIN, "no free pid below kernel.pid_max"))
}

/// Whether `pid` names a process (a zombie too), a thread, a process group
/// or a session.
fn pid_in_use(pid: Pid) -> bool {
    if find_process(pid).is_some() {
        return true;
    }
    let mut from = 0;
    while let Some(p) = next_process(from) {
        if p.pgid() == pid || p.sid() == pid || p.threads.lock().live.iter().any(|t| t.tid() == pid) {
            return true;
        }
        let Some(next) = p.pid().checked_add(1) else { break };
        from = next;
    }
    false
}

impl Process {
    fn new(
        parent: Weak<Process>,
        vm: Arc<Vmar>,
        files: Arc<SharedFiles>,
        fs: Arc<Mutex<FsContext, { level::FS_CONTEXT }>>,
        signals: signal::SignalState,
        pgid_sid: Option<(Pid, Pid)>,
        pid: Pid,
    ) -> Arc<Process> {
        let (pgid, sid) = pgid_sid.unwrap_or((pid, pid));
        let p = Arc::new(Process {
            pid,
            ppid: AtomicU32::new(parent.upgrade().map_or(0, |p| p.pid)),
            parent: SpinLock::new(parent),
            children: SpinLock::new(Vec::new()),
            vm: SpinLock::new(vm),
            vm_generation: AtomicU64::new(0),
            files: SpinLock::new(files),
            fs,
            pgid: AtomicU32::new(pgid),
            sid: AtomicU32::new(sid),
            exit_status: AtomicI32::new(-1),
            child_wait: WaitQueue::new(),
            exit_readiness: crate::fs::readiness::Readiness::new(),
            vfork_done: WaitQueue::new(),
            vfork_released: core::sync::atomic::AtomicBool::new(false),
            signals,
            rlimits: SpinLock::new(rlimit::Limits::default()),
            name: SpinLock::new(String::new()),
            threads: SpinLock::new(ThreadList::default()),
            children_usage: SpinLock::new(Usage::default()),
            maxrss_kb: AtomicU64::new(0),
            threads_changed: WaitQueue::new(),
            exec_takeover: core::sync::atomic::AtomicBool::new(false),
            nice: AtomicI32::new(0),
            subreaper: core::sync::atomic::AtomicBool::new(false),
            pdeathsig: AtomicU32::new(0),
            no_new_privs: core::sync::atomic::AtomicBool::new(false),
            dumpable: AtomicU32::new(1),
            timer_slack_ns: AtomicU64::new(50_000),
            personality: AtomicU32::new(0),
            creds: SpinLock::new(creds::Credentials::default()),
            exit_signal: AtomicU32::new(17),
            exit_notified: core::sync::atomic::AtomicBool::new(false),
            did_exec: core::sync::atomic::AtomicBool::new(false),
            exe: SpinLock::new(String::new()),
            start_ns: frame::timer::monotonic_ns(),
            make_it_fail: core::sync::atomic::AtomicBool::new(false),
            oom_score_adj: AtomicI32::new(0),
            oom_score_adj_min: AtomicI32::new(0),
        });
        PROCESSES.lock().insert(pid, Arc::downgrade(&p));
        p
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    pub fn parent(&self) -> Option<Arc<Process>> {
        self.parent.lock().upgrade()
    }

    /// Parent pid as getppid(2) reports it (0 for init).
    pub fn ppid(&self) -> Pid {
        self.ppid.load(Ordering::Relaxed)
    }

    /// Makes `parent` this process's parent (reparenting on exit).
    pub(super) fn set_parent(&self, parent: &Arc<Process>) {
        let mut p = self.parent.lock();
        *p = Arc::downgrade(parent);
        self.ppid.store(parent.pid, Ordering::Relaxed);
    }

    pub fn pgid(&self) -> Pid {
        self.pgid.load(Ordering::Relaxed)
    }

    pub fn set_pgid(&self, pgid: Pid) {
        self.pgid.store(pgid, Ordering::Relaxed);
    }

    pub fn sid(&self) -> Pid {
        self.sid.load(Ordering::Relaxed)
    }

    pub fn set_sid(&self, sid: Pid) {
        self.sid.store(sid, Ordering::Relaxed);
    }

    /// The shared root/cwd/umask cell (for CLONE_FS).
    pub(crate) fn fs_shared(&self) -> &Arc<Mutex<FsContext, { level::FS_CONTEXT }>> {
        &self.fs
    }

    pub(crate) fn files_shared(&self) -> Arc<SharedFiles> {
        self.files()
    }

    /// The current address space.
    pub fn vm(&self) -> Arc<Vmar> {
        self.vm.lock().clone()
    }

    /// The address space, the descriptor table and the generation both
    /// were fetched at: read first, so that a change made while they are
    /// fetched leaves a generation older than the current one.
    pub(crate) fn vm_files_and_generation(&self) -> (Arc<Vmar>, Arc<SharedFiles>, u64) {
        let g = self.vm_generation.load(Ordering::Acquire);
        let vm = self.vm.lock().clone();
        (vm, self.files(), g)
    }

    pub(crate) fn vm_generation(&self) -> u64 {
        self.vm_generation.load(Ordering::Acquire)
    }

    /// Installs a new address space (execve, exit); the old one's peak
    /// RSS stays in the process's ru_maxrss.
    pub(crate) fn replace_vm(&self, vm: Arc<Vmar>) -> Arc<Vmar> {
        let old = {
            let mut cur = self.vm.lock();
            self.vm_generation.fetch_add(1, Ordering::AcqRel);
            core::mem::replace(&mut *cur, vm)
        };
        self.note_vm_peak(old.hiwater_pages());
        old
    }

    /// The descriptor table (lock it with `.lock()`).
    pub fn files(&self) -> Arc<SharedFiles> {
        self.files.lock().clone()
    }

    /// Gives the process a private copy of its descriptor table if it
    /// shares it with CLONE_FILES relatives.
    pub fn unshare_files(&self) -> crate::error::Result<()> {
        let cur = self.files();
        if cur.users.load(Ordering::Acquire) <= 1 {
            return Ok(());
        }
        let copy = SharedFiles::new(cur.table.lock().try_clone()?);
        let old = {
            let mut cur = self.files.lock();
            self.vm_generation.fetch_add(1, Ordering::AcqRel);
            core::mem::replace(&mut *cur, copy)
        };
        old.release();
        Ok(())
    }

    pub fn fs(&self) -> &Mutex<FsContext, { level::FS_CONTEXT }> {
        &self.fs
    }

    pub fn children(&self) -> Vec<Arc<Process>> {
        self.children.lock().clone()
    }

    pub fn name(&self) -> String {
        self.name.lock().clone()
    }

    pub fn set_name(&self, name: &str) {
        *self.name.lock() = String::from(name);
    }

    pub fn threads(&self) -> Vec<Arc<Thread>> {
        self.threads.lock().live.clone()
    }

    /// Calls `f` on every live thread with the thread list locked (level
    /// PROCESS): `f` may take only locks of higher levels (waking a thread
    /// is fine). Allocates nothing.
    pub fn for_each_thread_locked(&self, mut f: impl FnMut(&Arc<Thread>)) {
        for t in self.threads.lock().live.iter() {
            f(t);
        }
    }

    /// The live thread with the lowest tid above `after` (the first one
    /// with `None`): walks whose steps take process-level locks use it, so
    /// that they need neither the list lock nor a copy of the list.
    pub fn thread_after(&self, after: Option<Pid>) -> Option<Arc<Thread>> {
        let threads = self.threads.lock();
        threads
            .live
            .iter()
            .filter(|t| after.is_none_or(|a| t.tid() > a))
            .min_by_key(|t| t.tid())
            .cloned()
    }

    /// Calls `f` on every live thread, one [`Process::thread_after`] step
    /// at a time (no lock held during `f`, nothing allocated).
    pub fn for_each_thread(&self, mut f: impl FnMut(&Arc<Thread>)) {
        let mut cursor = None;
        while let Some(t) = self.thread_after(cursor) {
            cursor = Some(t.tid());
            f(&t);
        }
    }

    /// Marks the first live thread not yet exiting as exiting and returns
    /// it (exit_group's walk: each thread is taken once, nothing allocated).
    pub(crate) fn take_thread_to_stop(&self) -> Option<Arc<Thread>> {
        let threads = self.threads.lock();
        let t = threads.live.iter().find(|t| !t.exiting.load(Ordering::Acquire))?;
        t.exiting.store(true, Ordering::Release);
        Some(t.clone())
    }

    /// How many live threads other than `me` are not exiting.
    pub(crate) fn other_running_threads(&self, me: &Arc<Thread>) -> usize {
        self.threads
            .lock()
            .live
            .iter()
            .filter(|t| !Arc::ptr_eq(t, me) && !t.exiting.load(Ordering::Acquire))
            .count()
    }

    /// Whether wait(2) may report the exit: the process has exited and
    /// its last thread is gone.
    pub fn exit_reported(&self) -> bool {
        self.exit_notified.load(Ordering::Acquire)
    }

    /// The wait status if the process is a zombie.
    pub fn exit_status(&self) -> Option<i32> {
        let s = self.exit_status.load(Ordering::Acquire);
        (s >= 0).then_some(s)
    }

    /// A new thread of the process: ENOMEM if the thread list cannot grow
    /// (clone(2): "cannot allocate sufficient memory").
    fn add_thread(self: &Arc<Self>, tid: Pid) -> crate::error::Result<Arc<Thread>> {
        // Room first, so that nothing is created that could not be listed.
        crate::fallible::reserve(&mut self.threads.lock().live, 1)?;
        // The Thread itself is a small fixed-size Arc, made infallibly
        // (docs/robustness.md); injection still tests the callers' undo.
        crate::fallible::check()?;
        let t = Arc::new(Thread {
            tid: AtomicU32::new(tid),
            process: Arc::downgrade(self),
            sigmask: AtomicU64::new(0),
            clear_child_tid: AtomicU64::new(0),
            robust_list: AtomicU64::new(0),
            exiting: core::sync::atomic::AtomicBool::new(false),
            signals: signal::ThreadSignals::default(),
            task: frame::sync::Once::new(),
            counters: usage::ThreadCounters::default(),
        });
        // Another clone may have taken the room: check again under the lock.
        crate::fallible::push(&mut self.threads.lock().live, t.clone())?;
        NR_THREADS.fetch_add(1, Ordering::Relaxed);
        self.threads_changed.wake_all();
        Ok(t)
    }
}

/// The most descriptors `p` may have open (its RLIMIT_NOFILE, within the
/// table's hard bound).
pub fn nofile_limit(p: &Process) -> usize {
    let cur = p.rlimits.lock().0[rlimit::RLIMIT_NOFILE].cur;
    usize::try_from(cur).unwrap_or(usize::MAX).min(crate::fs::HARD_MAX_FDS)
}

/// Looks up a live (or zombie, not yet reaped) process.
pub fn find_process(pid: Pid) -> Option<Arc<Process>> {
    PROCESSES.lock().get(&pid).and_then(Weak::upgrade)
}

/// Finds a thread by tid.
pub fn find_thread(tid: Pid) -> Option<(Arc<Process>, Arc<Thread>)> {
    // It allocates nothing: kill(2) and tgkill(2) must work when memory
    // is short (a fork bomb's parent kills its children). The process
    // whose pid is the tid first (a main thread), then every process.
    let in_process = |p: &Arc<Process>| p.threads.lock().live.iter().find(|t| t.tid() == tid).cloned();
    if let Some(p) = find_process(tid)
        && let Some(t) = in_process(&p)
    {
        return Some((p, t));
    }
    let mut from = 0;
    while let Some(p) = next_process(from) {
        if let Some(t) = in_process(&p) {
            return Some((p, t));
        }
        from = p.pid().checked_add(1)?;
    }
    None
}

/// Calls `f` on every process in the table, in pid order, until it
/// returns `false`. Allocates nothing (exit and signal delivery use it), and
/// holds the table lock only to find the next process, so `f` may take any
/// lock.
pub fn for_each_process(mut f: impl FnMut(&Arc<Process>) -> bool) {
    let mut from: Pid = 0;
    while let Some(p) = next_process(from) {
        if !f(&p) {
            return;
        }
        match p.pid().checked_add(1) {
            Some(n) => from = n,
            None => return,
        }
    }
}

/// The live (or zombie) process with the lowest pid at or above `from`,
/// without allocating.
pub fn next_process(from: Pid) -> Option<Arc<Process>> {
    PROCESSES.lock().range(from..).find_map(|(_, p)| p.upgrade())
}

/// Every process in the table, in pid order.
pub fn all_processes() -> Vec<Arc<Process>> {
    PROCESSES.lock().values().filter_map(Weak::upgrade).collect()
}

/// Finds the task with id `tid` as Linux's pid lookup does: a live
/// thread, or a process not yet reaped whose threads are gone (a zombie,
/// found by its pid, with no thread).
pub fn find_task(tid: Pid) -> Option<(Arc<Process>, Option<Arc<Thread>>)> {
    if let Some((p, t)) = find_thread(tid) {
        return Some((p, Some(t)));
    }
    find_process(tid).map(|p| (p, None))
}

/// Undoes a clone whose first thread never started: the process leaves
/// the table and gives up its share of the descriptor table.
pub(super) fn discard_unstarted(p: &Process) {
    p.files_shared().release();
    remove_from_table(p.pid());
}

pub(super) fn remove_from_table(pid: Pid) {
    PROCESSES.lock().remove(&pid);
}

/// The thread structure attached to the running frame task.
pub fn current_thread() -> Option<Arc<Thread>> {
    frame::task::try_current()?.data().downcast_ref::<Arc<Thread>>().cloned()
}

impl Process {
    /// Whether fault injection may fail this process's allocations.
    pub fn make_it_fail(&self) -> bool {
        self.make_it_fail.load(Ordering::Relaxed)
    }

    pub fn set_make_it_fail(&self, on: bool) {
        self.make_it_fail.store(on, Ordering::Relaxed);
    }

    pub fn exe(&self) -> String {
        self.exe.lock().clone()
    }

    pub fn set_exe(&self, path: String) {
        *self.exe.lock() = path;
    }

    /// Creation time in monotonic nanoseconds.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// The state letter of /proc/pid/stat: R (running or runnable),
    /// S (sleeping), T (stopped), Z (zombie).
    pub fn state_char(&self) -> char {
        if self.exit_status().is_some() {
            return 'Z';
        }
        if self.signals.stopped.load(Ordering::Acquire) {
            return 'T';
        }
        // The thread-group leader's state, as Linux's /proc/<pid>/stat
        // shows it (the others have /proc/<pid>/task/<tid>); any thread's
        // once the leader has exited.
        let threads = self.threads();
        let runnable = |t: &Arc<Thread>| {
            t.task.get().and_then(Weak::upgrade).is_some_and(|k| k.state() == frame::task::TaskState::Runnable)
        };
        let running = match threads.iter().find(|t| t.tid() == self.pid) {
            Some(leader) => runnable(leader),
            None => threads.iter().any(runnable),
        };
        if running { 'R' } else { 'S' }
    }

    /// A snapshot of the credentials (threads share one set).
    pub fn creds(&self) -> creds::Credentials {
        self.creds.lock().clone()
    }

    /// The file-system ids for permission checks ([`creds::Credentials::fs_cred`]),
    /// without copying the whole credentials.
    pub fn fs_cred(&self) -> crate::fs::Cred {
        self.creds.lock().fs_cred()
    }

    pub fn set_creds(&self, c: creds::Credentials) {
        *self.creds.lock() = c;
    }

    /// The set*id calls' change of credentials (Linux's commit_creds): a
    /// change of the effective or file-system user or group id makes the
    /// process non-dumpable (fs.suid_dumpable, 0) and clears its
    /// parent-death signal (prctl(2)).
    pub fn commit_creds(&self, c: creds::Credentials) {
        let changed = {
            let mut cur = self.creds.lock();
            let changed = cur.euid != c.euid || cur.egid != c.egid || cur.fsuid != c.fsuid || cur.fsgid != c.fsgid;
            *cur = c;
            changed
        };
        if changed {
            self.dumpable.store(0, Ordering::Relaxed);
            self.pdeathsig.store(0, Ordering::Relaxed);
        }
    }

    pub fn nice(&self) -> i32 {
        self.nice.load(Ordering::Relaxed)
    }

    /// Sets the nice value and gives every thread's task the matching weight.
    pub fn set_nice(&self, nice: i32, weight: u32) {
        self.nice.store(nice, Ordering::Relaxed);
        for t in self.threads() {
            if let Some(task) = t.task.get().and_then(Weak::upgrade) {
                task.set_weight(weight);
            }
        }
    }
}
