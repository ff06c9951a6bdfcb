//! Signals: dispositions, pending sets, generation and the decision of
//! what to do with a pending signal (signal(7)). Building the handler frame
//! and rt_sigreturn live in `signal_frame.rs`.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::sync::{level, SpinLock, WaitQueue};

use super::sig_actions::Dispositions;
use super::{Process, Thread};
use crate::error::{Errno, Error, Result};

pub const NSIG: usize = 64;
pub const SIGHUP: usize = 1;
pub const SIGINT: usize = 2;
pub const SIGQUIT: usize = 3;
pub const SIGILL: usize = 4;
pub const SIGTRAP: usize = 5;
pub const SIGABRT: usize = 6;
pub const SIGBUS: usize = 7;
pub const SIGFPE: usize = 8;
pub const SIGKILL: usize = 9;
pub const SIGSEGV: usize = 11;
pub const SIGPIPE: usize = 13;
pub const SIGALRM: usize = 14;
pub const SIGCHLD: usize = 17;
pub const SIGCONT: usize = 18;
pub const SIGSTOP: usize = 19;
pub const SIGTSTP: usize = 20;
pub const SIGTTIN: usize = 21;
pub const SIGTTOU: usize = 22;

/// Bits that can never be blocked.
pub const UNBLOCKABLE: u64 = bit(SIGKILL) | bit(SIGSTOP);

pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

pub const SA_SIGINFO: u64 = 0x4;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_RESTART: u64 = 0x1000_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;
pub const SA_RESTORER: u64 = 0x0400_0000;

/// si_code values.
pub const SI_USER: i32 = 0;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TKILL: i32 = -6;
pub const CLD_EXITED: i32 = 1;
pub const CLD_KILLED: i32 = 2;
pub const CLD_DUMPED: i32 = 3;
pub const CLD_STOPPED: i32 = 5;
pub const CLD_CONTINUED: i32 = 6;

pub const fn bit(sig: usize) -> u64 {
    1 << (sig - 1)
}

frame::pod_struct! {
    /// The kernel's `struct sigaction` on x86-64.
    #[derive(Debug, Default, PartialEq, Eq)]
    pub struct SigAction {
        pub handler: u64,
        pub flags: u64,
        pub restorer: u64,
        pub mask: u64,
    }
}
const _: () = assert!(core::mem::size_of::<SigAction>() == 32);

frame::pod_struct! {
    /// `siginfo_t` (128 bytes). The union after the header is laid out as
    /// the kill/child variants use it: pid, uid, then status/addr words.
    #[derive(Debug)]
    pub struct SigInfo {
        pub signo: i32,
        pub errno: i32,
        pub code: i32,
        pub pad0: i32,
        pub pid: i32,
        pub uid: u32,
        /// CLD_*: exit status; SIGSEGV etc. use `addr` (overlapping pid/uid).
        pub status: i32,
        pub pad1: i32,
        pub rest: [u64; 12],
    }
}
const _: () = assert!(core::mem::size_of::<SigInfo>() == 128);

impl SigInfo {
    pub fn new(sig: usize, code: i32) -> SigInfo {
        let mut i = <SigInfo as frame::Pod>::new_zeroed();
        i.signo = sig as i32;
        i.code = code;
        i
    }

    pub fn from_sender(sig: usize, code: i32, pid: u32) -> SigInfo {
        let mut i = SigInfo::new(sig, code);
        i.pid = pid as i32;
        i
    }

    /// A fault signal with `si_addr` (which overlaps pid/uid in the union).
    pub fn fault(sig: usize, code: i32, addr: u64) -> SigInfo {
        let mut i = SigInfo::new(sig, code);
        i.pid = addr as u32 as i32;
        i.uid = (addr >> 32) as u32;
        i
    }
}

/// A set of pending signals. Standard signals (1-31) do not queue: one
/// siginfo each. Real-time signals (32-64) queue every instance, in order.
pub struct Pending {
    mask: u64,
    info: [Option<SigInfo>; NSIG],
    rt_queue: alloc::collections::VecDeque<SigInfo>,
}

/// Most queued real-time signals per pending set; a sender that asks for
/// queueing (sigqueue, tgkill) is held to the target's RLIMIT_SIGPENDING
/// too, counted per pending set rather than per user as Linux does.
pub const RT_QUEUE_MAX: usize = 1024;

impl Pending {
    pub const fn new() -> Self {
        Pending { mask: 0, info: [None; NSIG], rt_queue: alloc::collections::VecDeque::new() }
    }

    /// Adds a signal; false if it is a real-time one that did not fit (a
    /// full queue, or no memory for it): it is dropped.
    pub fn add(&mut self, info: SigInfo) -> bool {
        self.add_limited(info, RT_QUEUE_MAX)
    }

    /// [`Pending::add`] with at most `limit` real-time signals queued.
    pub fn add_limited(&mut self, info: SigInfo, limit: usize) -> bool {
        let sig = info.signo as usize;
        if sig >= 32 {
            if self.rt_queue.len() < limit.min(RT_QUEUE_MAX) && crate::fallible::push_back(&mut self.rt_queue, info).is_ok() {
                self.mask |= bit(sig);
                return true;
            }
            return false;
        }
        if self.mask & bit(sig) == 0 {
            self.mask |= bit(sig);
            self.info[sig - 1] = Some(info);
        }
        true
    }

    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// Real-time signals queued.
    pub fn rt_queued(&self) -> usize {
        self.rt_queue.len()
    }

    /// Applies `f` to the queued signal of POSIX timer `id`, if one is
    /// still pending; returns whether there was one.
    pub fn update_timer(&mut self, id: i32, f: impl FnOnce(&mut SigInfo)) -> bool {
        let is_it = |i: &SigInfo| i.code == super::posix_timer::SI_TIMER && i.pid == id;
        let found = self.info.iter_mut().flatten().chain(self.rt_queue.iter_mut()).find(|i| is_it(i));
        match found {
            Some(info) => {
                f(info);
                true
            }
            None => false,
        }
    }

    #[inline]
    pub fn take(&mut self, sig: usize) -> Option<SigInfo> {
        if self.mask & bit(sig) == 0 {
            return None;
        }
        if sig >= 32 {
            let pos = self.rt_queue.iter().position(|i| i.signo as usize == sig)?;
            let info = self.rt_queue.remove(pos);
            if !self.rt_queue.iter().any(|i| i.signo as usize == sig) {
                self.mask &= !bit(sig);
            }
            return info;
        }
        self.mask &= !bit(sig);
        self.info[sig - 1].take()
    }

    pub fn remove_mask(&mut self, m: u64) {
        for sig in 1..=NSIG {
            if m & bit(sig) != 0 {
                while self.take(sig).is_some() {}
                self.mask &= !bit(sig);
            }
        }
    }
}

impl Default for Pending {
    fn default() -> Self {
        Self::new()
    }
}

/// A pending set behind its lock, with a copy of its mask that is read
/// without the lock: the return to user mode and interruptible sleeps ask
/// "is anything deliverable?" far more often than signals arrive, and the
/// answer takes one load per set (Linux's TIF_SIGPENDING plays this role).
/// The copy is written under the lock whenever a guard is dropped, so it
/// equals the mask whenever the lock is free.
pub struct PendingSet {
    inner: SpinLock<Pending, { level::PROCESS }>,
    hint: AtomicU64,
}

impl PendingSet {
    pub const fn new() -> Self {
        PendingSet { inner: SpinLock::new(Pending::new()), hint: AtomicU64::new(0) }
    }

    pub fn lock(&self) -> PendingGuard<'_> {
        PendingGuard { guard: self.inner.lock(), hint: &self.hint }
    }

    /// The mask as of the last unlock.
    pub fn mask(&self) -> u64 {
        self.hint.load(Ordering::Acquire)
    }
}

impl Default for PendingSet {
    fn default() -> Self {
        Self::new()
    }
}

pub struct PendingGuard<'a> {
    guard: frame::sync::SpinLockGuard<'a, Pending, { level::PROCESS }>,
    hint: &'a AtomicU64,
}

impl core::ops::Deref for PendingGuard<'_> {
    type Target = Pending;
    fn deref(&self) -> &Pending {
        &self.guard
    }
}

impl core::ops::DerefMut for PendingGuard<'_> {
    fn deref_mut(&mut self) -> &mut Pending {
        &mut self.guard
    }
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        // Still under the lock: the field guard is dropped after this.
        self.hint.store(self.guard.mask(), Ordering::Release);
    }
}

/// rt_sigsuspend's and ppoll's mask to restore on the way back to user
/// mode; only the thread itself sets and takes it.
#[derive(Default)]
pub struct SavedMask {
    set: AtomicBool,
    mask: AtomicU64,
}

impl SavedMask {
    pub fn set(&self, mask: u64) {
        self.mask.store(mask, Ordering::Relaxed);
        self.set.store(true, Ordering::Release);
    }

    pub fn take(&self) -> Option<u64> {
        self.set.swap(false, Ordering::AcqRel).then(|| self.mask.load(Ordering::Relaxed))
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }
}

/// Process-wide signal state.
pub struct SignalState {
    /// The dispositions (shared under CLONE_SIGHAND): one lock.
    actions: super::sig_actions::Dispositions,
    pub(crate) shared: PendingSet,
    /// ITIMER_REAL / alarm fired (set from the timer interrupt).
    pub(crate) alarm_fired: Arc<AtomicBool>,
    /// (timer id, deadline ns, interval ns) of the armed real timer.
    pub(crate) real_timer: SpinLock<(u64, u64, u64), { level::PROCESS }>,
    /// ITIMER_VIRTUAL and ITIMER_PROF: (expiry on the process's CPU
    /// clock, 0 if disarmed; interval), in ns; and whether one is armed.
    pub(crate) cpu_itimers: SpinLock<[(u64, u64); 2], { level::PROCESS }>,
    pub(crate) cpu_itimers_armed: AtomicBool,
    /// RLIMIT_CPU was made finite at some point (set by setrlimit and
    /// inherited, never cleared): the return to user mode then looks at
    /// the CPU clocks once a tick.
    pub(crate) cpu_watch: AtomicBool,
    /// The jiffy of the last look at them (they are looked at once a tick).
    pub(crate) cpu_itimers_checked: AtomicU64,
    /// POSIX timers (timer_create).
    pub(crate) timers: super::posix_timer::Timers,
    /// Job control: the process is stopped; threads park on `stop_wq`.
    pub(crate) stopped: AtomicBool,
    pub(crate) stop_wq: WaitQueue,
    /// Unreported state changes for the parent's wait (WUNTRACED/WCONTINUED).
    pub(crate) stop_event: AtomicU64,
    pub(crate) cont_event: AtomicBool,
    /// The signal of a stop not yet reported (some thread is not parked).
    pub(crate) stop_sig: AtomicU64,
}

impl Default for SignalState {
    fn default() -> Self {
        Self::new()
    }
}

impl SignalState {
    pub fn new() -> Self {
        Self::with_actions(Dispositions::new([SigAction::default(); NSIG]))
    }

    /// A fresh state with the dispositions `actions`.
    fn with_actions(actions: Dispositions) -> Self {
        SignalState {
            actions,
            shared: PendingSet::new(),
            alarm_fired: Arc::new(AtomicBool::new(false)),
            real_timer: SpinLock::new((0, 0, 0)),
            cpu_itimers: SpinLock::new([(0, 0); 2]),
            cpu_itimers_armed: AtomicBool::new(false),
            cpu_watch: AtomicBool::new(false),
            cpu_itimers_checked: AtomicU64::new(u64::MAX),
            timers: super::posix_timer::Timers::new(),
            stopped: AtomicBool::new(false),
            stop_wq: WaitQueue::new(),
            stop_event: AtomicU64::new(0),
            cont_event: AtomicBool::new(false),
            stop_sig: AtomicU64::new(0),
        }
    }

    /// Runs `f` on the disposition table, locked.
    #[inline]
    fn with_table<R>(&self, f: impl FnOnce(&mut [SigAction; NSIG]) -> R) -> R {
        self.actions.with(f)
    }

    /// Disposition of `sig` (1-based, already validated).
    pub fn action(&self, sig: usize) -> SigAction {
        self.with_table(|t| t[sig - 1])
    }

    /// rt_sigaction: the disposition of `sig` before the call, and `new`
    /// installed in its place if given, in one critical section, with
    /// whether the new disposition ignores `sig`. A disposition that
    /// ignores the signal discards it where pending (POSIX), here for the
    /// process-wide set; the caller drops the thread-directed copies with
    /// `discard_threads_pending`.
    #[inline]
    pub fn swap_action(&self, sig: usize, new: Option<SigAction>) -> (SigAction, bool) {
        let Some(mut act) = new else {
            return (self.action(sig), false);
        };
        act.mask &= !UNBLOCKABLE;
        let old = self.with_table(|t| core::mem::replace(&mut t[sig - 1], act));
        let ignored = is_ignored(sig, &act);
        if ignored {
            self.shared.lock().take(sig);
        }
        (old, ignored)
    }

    /// SA_RESETHAND at delivery: the handler becomes SIG_DFL, the flags
    /// and mask stay (Linux's SA_ONESHOT handling).
    pub fn reset_handler(&self, sig: usize) {
        self.with_table(|t| t[sig - 1].handler = SIG_DFL);
    }

    pub fn set_action(&self, sig: usize, mut act: SigAction) {
        act.mask &= !UNBLOCKABLE;
        self.with_table(|t| t[sig - 1] = act);
        // Setting a signal to be ignored discards it if pending (POSIX);
        // the thread-directed copies are dropped by `discard_threads_pending`.
        if is_ignored(sig, &act) {
            self.shared.lock().take(sig);
        }
    }

    /// fork without CLONE_SIGHAND: a fresh state with a copy of this
    /// one's dispositions (pending signals are not inherited), handlers
    /// reset to SIG_DFL if `clear_handlers` (clone3's CLONE_CLEAR_SIGHAND;
    /// ignored signals stay ignored).
    pub fn copy_of(&self, clear_handlers: bool) -> SignalState {
        let mut acts = self.with_table(|t| *t);
        if clear_handlers {
            for a in acts.iter_mut().filter(|a| a.handler != SIG_IGN) {
                *a = SigAction::default();
            }
        }
        Self::with_actions(Dispositions::new(acts))
    }

    /// fork with CLONE_SIGHAND: a fresh state using this one's disposition
    /// table itself, so that sigaction in either process changes both.
    pub fn sharing(&self) -> Result<SignalState> {
        Ok(Self::with_actions(Dispositions::sharing(&self.actions)?))
    }

    /// execve: a table shared with other processes is copied first (Linux's
    /// unshare_sighand); handlers go back to the default; ignored signals
    /// stay ignored; POSIX timers are deleted.
    pub fn reset_for_exec(&self) {
        self.timers.clear();
        self.actions.unshare_with(|t| {
            for a in t.iter_mut().filter(|a| a.handler != SIG_IGN) {
                *a = SigAction::default();
            }
        });
    }
}

/// Per-thread signal state.
pub struct ThreadSignals {
    pub(crate) pending: PendingSet,
    /// sigaltstack: (sp, flags as set, size); a size of 0 means disabled.
    pub(crate) altstack: SpinLock<(u64, i32, u64), { level::PROCESS }>,
    /// Mask to restore after rt_sigsuspend's handler runs.
    pub(crate) saved_mask: SavedMask,
    /// The CPU exception behind this thread's last fault signal.
    pub(crate) fault: FaultRecord,
    /// Parked in a job-control stop.
    pub(crate) parked: AtomicBool,
    /// How restart_syscall continues a call that returned
    /// ERESTART_RESTARTBLOCK.
    pub(crate) restart: SpinLock<Option<RestartBlock>, { level::PROCESS }>,
    /// rt_sigreturn's copy of the frame.
    pub(crate) sigreturn_buf: super::signal_frame::SigReturnBuf,
}

/// The state of an interrupted call that restart_syscall resumes.
#[derive(Clone, Copy, Debug)]
pub enum RestartBlock {
    /// A relative nanosleep/clock_nanosleep: sleep until the same monotonic
    /// deadline; `rem` is where to store the remaining time.
    Sleep { deadline: u64, rem: u64 },
    /// poll(2): the same descriptors until the same deadline (None: none).
    Poll { fds: u64, nfds: u64, deadline: Option<u64> },
}

/// Vector, error code and (for page faults) CR2 of the exception that last
/// raised a fault signal in a thread. Signal frames report them as
/// sigcontext trapno/err/cr2; like Linux (thread.trap_nr, error_code,
/// cr2), the values stay for later signals until the next fault.
#[derive(Default)]
pub struct FaultRecord {
    pub trapno: AtomicU64,
    pub err: AtomicU64,
    pub cr2: AtomicU64,
}

impl Default for ThreadSignals {
    fn default() -> Self {
        ThreadSignals {
            pending: PendingSet::new(),
            altstack: SpinLock::new((0, SS_DISABLE, 0)),
            saved_mask: SavedMask::default(),
            fault: FaultRecord::default(),
            parked: AtomicBool::new(false),
            restart: SpinLock::new(None),
            sigreturn_buf: Default::default(),
        }
    }
}

pub const SS_ONSTACK: i32 = 1;
pub const SS_DISABLE: i32 = 2;
/// The alternate stack is disabled while a handler runs (restored by
/// rt_sigreturn from the frame's copy).
pub const SS_AUTODISARM: i32 = 1 << 31;
pub const MINSIGSTKSZ: u64 = 2048;

/// Whether `sp` lies on the alternate stack `(ss_sp, flags, size)`. With
/// SS_AUTODISARM the answer is always no (the stack is disarmed while in
/// use), as on Linux.
pub(crate) fn on_stack(&(ss_sp, flags, size): &(u64, i32, u64), sp: u64) -> bool {
    flags & SS_AUTODISARM == 0 && sp > ss_sp && sp - ss_sp <= size
}

impl ThreadSignals {
    /// Whether `sp` lies on the alternate stack.
    pub fn on_altstack(&self, sp: u64) -> bool {
        on_stack(&self.altstack.lock(), sp)
    }

    /// The ss_flags sigaltstack(2) reports for a thread whose stack pointer
    /// is `sp`.
    pub fn altstack_flags(&self, sp: u64) -> i32 {
        let cur = *self.altstack.lock();
        let mode = if cur.2 == 0 {
            SS_DISABLE
        } else if on_stack(&cur, sp) {
            SS_ONSTACK
        } else {
            0
        };
        mode | (cur.1 & SS_AUTODISARM)
    }

    /// Installs a new alternate stack (sigaltstack(2), and rt_sigreturn
    /// restoring the frame's copy); `sp` is the thread's stack pointer.
    /// One critical section: the check that the thread is not on the
    /// current stack and the change.
    pub fn set_altstack(&self, sp: u64, ss_sp: u64, ss_flags: i32, ss_size: u64) -> Result<()> {
        let mut cur = self.altstack.lock();
        if on_stack(&cur, sp) {
            return Err(Error::new(Errno::EPERM));
        }
        let mode = ss_flags & !SS_AUTODISARM;
        if mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK {
            return Err(Error::new(Errno::EINVAL));
        }
        let new = if mode == SS_DISABLE {
            (0, ss_flags, 0)
        } else if ss_size < MINSIGSTKSZ {
            return Err(Error::new(Errno::ENOMEM));
        } else {
            (ss_sp, ss_flags, ss_size)
        };
        *cur = new;
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAction {
    Terminate,
    Core,
    Stop,
    Continue,
    Ignore,
}

/// signal(7): the default action of each signal.
pub fn default_action(sig: usize) -> DefaultAction {
    match sig {
        SIGCHLD | SIGCONT | 23 /* SIGURG */ | 28 /* SIGWINCH */ => {
            if sig == SIGCONT { DefaultAction::Continue } else { DefaultAction::Ignore }
        }
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Stop,
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | 24 /* SIGXCPU */ | 25 /* SIGXFSZ */
        | 31 /* SIGSYS */ => DefaultAction::Core,
        _ => DefaultAction::Terminate,
    }
}

pub fn is_ignored(sig: usize, act: &SigAction) -> bool {
    act.handler == SIG_IGN || (act.handler == SIG_DFL && default_action(sig) == DefaultAction::Ignore)
}

/// Checks a signal number from user space (0 allowed where `allow_zero`).
pub fn check_signo(sig: u64, allow_zero: bool) -> Result<usize> {
    match sig {
        0 if allow_zero => Ok(0),
        1..=64 => Ok(sig as usize),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

/// Wakes every thread of `p` so that it notices a new signal, but `sender`:
/// the thread making the system call that sent it is running and looks at
/// its pending signals on its way back to user mode.
fn kick(p: &Process, sender: Option<&Thread>) {
    p.for_each_thread_locked(|t| {
        if !sender.is_some_and(|s| core::ptr::eq(s, &**t)) {
            t.wake();
        }
    });
}

/// Generates a process-directed signal (kill(2), SIGCHLD, alarms, ...).
pub fn send_to_process(p: &Arc<Process>, info: SigInfo) {
    queue_to_process(p, info, RT_QUEUE_MAX);
}

/// [`send_to_process`] with at most `limit` real-time signals queued;
/// false if a real-time signal found the queue full (sigqueue(3)'s EAGAIN).
pub fn queue_to_process(p: &Arc<Process>, info: SigInfo, limit: usize) -> bool {
    queue_from(p, info, limit, None)
}

/// [`queue_to_process`] by `sender`, a thread in a system call (kill(2)):
/// it is not woken.
pub fn queue_to_process_from(p: &Arc<Process>, info: SigInfo, limit: usize, sender: &Thread) -> bool {
    queue_from(p, info, limit, Some(sender))
}

fn queue_from(p: &Arc<Process>, info: SigInfo, limit: usize, sender: Option<&Thread>) -> bool {
    let sig = info.signo as usize;
    // Blocked by every thread (walked only when the answer matters).
    let blocked = || {
        let (mut any, mut all) = (false, true);
        p.for_each_thread_locked(|t| {
            any = true;
            all &= t.sigmask.load(Ordering::Relaxed) & bit(sig) != 0;
        });
        any && all
    };
    if generate(p, &info, blocked) {
        // The limit counts what the threads have queued too.
        let mut in_threads = 0;
        if limit < RT_QUEUE_MAX {
            p.for_each_thread(|t| in_threads += t.signals.pending.lock().rt_queued());
        }
        if !p.signals.shared.lock().add_limited(info, limit.saturating_sub(in_threads)) {
            return false;
        }
        kick(p, sender);
        crate::fs::signalfd::signal_queued();
    }
    true
}

/// The common part of generating a signal: stop/continue side effects, and
/// whether the signal must be queued at all (an ignored one is discarded at
/// generation, signal(7)).
/// A blocked signal is never discarded: its disposition may change before
/// it is unblocked (Linux's sig_ignored). `blocked` says whether the target
/// blocks it; it is asked only where the answer changes the outcome (an
/// ignored signal, or init's default disposition), not for a caught one.
fn generate(p: &Arc<Process>, info: &SigInfo, blocked: impl FnOnce() -> bool) -> bool {
    let sig = info.signo as usize;
    if sig == 0 || p.exit_status().is_some() {
        return false;
    }
    let act = p.signals.action(sig);
    let ignored = is_ignored(sig, &act);
    // init only gets the signals it has handlers for (signal(7)); like
    // any blocked signal, one init blocks is queued all the same.
    let init_default = p.pid() == crate::process::INIT_PID && act.handler == SIG_DFL;
    let blocked = (ignored || init_default) && blocked();
    if init_default && !blocked {
        return false;
    }
    prepare(p, sig);
    blocked || !ignored || sig == SIGKILL || sig == SIGSTOP
}

/// Drops `sig` from the thread-directed pending sets of `p` (it became
/// ignored; `SignalState::swap_action` has dropped the process-wide copy).
pub fn discard_threads_pending(p: &Process, sig: usize) {
    p.for_each_thread(|t| {
        t.signals.pending.lock().take(sig);
    });
}

/// Generates a thread-directed signal (tkill, tgkill, faults).
pub fn send_to_thread(p: &Arc<Process>, t: &Thread, info: SigInfo) {
    queue_to_thread(p, t, info, RT_QUEUE_MAX);
}

/// [`send_to_thread`] with at most `limit` real-time signals queued; false
/// if a real-time signal found the queue full.
pub fn queue_to_thread(p: &Arc<Process>, t: &Thread, info: SigInfo, limit: usize) -> bool {
    let blocked = || info.signo > 0 && t.sigmask.load(Ordering::Relaxed) & bit(info.signo as usize) != 0;
    if generate(p, &info, blocked) {
        // The limit counts what the process has queued too.
        let shared = if limit < RT_QUEUE_MAX { p.signals.shared.lock().rt_queued() } else { 0 };
        if !t.signals.pending.lock().add_limited(info, limit.saturating_sub(shared)) {
            return false;
        }
        t.wake();
        crate::fs::signalfd::signal_queued();
    }
    true
}

/// A fault signal cannot be blocked or ignored: Linux forces the default
/// action in that case (force_sig_info).
pub fn force_fault_signal(process: &Arc<Process>, thread: &Thread, info: SigInfo) {
    let sig = info.signo as usize;
    let act = process.signals.action(sig);
    let blocked = thread.sigmask.load(Ordering::Relaxed) & bit(sig) != 0;
    if blocked || act.handler == SIG_IGN {
        process.signals.set_action(sig, SigAction::default());
        thread.sigmask.fetch_and(!bit(sig), Ordering::Relaxed);
    }
    // init drops signals it has no handler for, but a fault it cannot
    // handle must not return to the faulting instruction forever: it dies
    // (Linux then panics; Trellis powers off with the signal's status).
    if process.pid() == crate::process::INIT_PID && process.signals.action(sig).handler == SIG_DFL {
        let core = matches!(default_action(sig), DefaultAction::Core);
        super::exit::do_exit(process, super::exit::signal_status_code(sig as i32, core));
        return;
    }
    send_to_thread(process, thread, info);
}

/// Stop and continue signals cancel each other at generation (signal(7)):
/// SIGCONT discards pending stop signals and resumes a stopped process, a
/// stop signal discards a pending SIGCONT (process- and thread-directed).
fn prepare(p: &Arc<Process>, sig: usize) {
    let stops = bit(SIGSTOP) | bit(SIGTSTP) | bit(SIGTTIN) | bit(SIGTTOU);
    let discard = |m: u64| {
        p.signals.shared.lock().remove_mask(m);
        p.for_each_thread(|t| {
            t.signals.pending.lock().remove_mask(m);
        });
    };
    if sig == SIGCONT {
        discard(stops);
        p.signals.stop_sig.store(0, Ordering::Release);
        if p.signals.stopped.swap(false, Ordering::AcqRel) {
            // An unreported stop is no longer reportable once continued.
            p.signals.stop_event.store(0, Ordering::Release);
            p.signals.cont_event.store(true, Ordering::Release);
            p.signals.stop_wq.wake_all();
            notify_parent(p, CLD_CONTINUED, SIGCONT as i32);
        }
    } else if sig == SIGKILL {
        // Parked threads wake up to die (the stop is not reported as a
        // continue).
        discard(stops);
        p.signals.stop_wq.wake_all();
    } else if stops & bit(sig) != 0 {
        discard(bit(SIGCONT));
    }
}

/// Tells the parent about a state change: SIGCHLD and its wait queue.
pub fn notify_parent(p: &Arc<Process>, code: i32, status: i32) {
    notify_parent_with(p, SIGCHLD as u32, code, status);
}

/// Like [`notify_parent`] with signal `sig` (0: wake the parent only).
pub fn notify_parent_with(p: &Arc<Process>, sig: u32, code: i32, status: i32) {
    const SA_NOCLDSTOP: u64 = 1;
    if let Some(parent) = p.parent() {
        let stop_or_cont = code == CLD_STOPPED || code == CLD_CONTINUED;
        let nocldstop = sig as usize == SIGCHLD && parent.signals.action(SIGCHLD).flags & SA_NOCLDSTOP != 0;
        // An exit signal that is no signal (clone's CSIGNAL byte allows up
        // to 255) is not sent, as on Linux; the parent is still woken.
        let valid = (1..=NSIG as u32).contains(&sig);
        if valid && !(stop_or_cont && nocldstop) {
            let mut info = SigInfo::from_sender(sig as usize, code, p.pid());
            info.status = status;
            send_to_process(&parent, info);
        }
        parent.child_wait.wake_all();
    }
}

/// Unblocked pending signals of `t`.
pub fn deliverable(p: &Process, t: &Thread) -> u64 {
    let pending = p.signals.shared.mask() | t.signals.pending.mask();
    pending & !(t.sigmask.load(Ordering::Relaxed) & !UNBLOCKABLE)
}

/// Whether `t` has to leave an interruptible sleep: a deliverable signal,
/// its exit, or a job-control stop it must join. Expired timers are turned
/// into signals first, so a timer whose signal is blocked does not
/// interrupt a sleep.
pub fn has_deliverable(p: &Arc<Process>, t: &Thread) -> bool {
    if t.exiting.load(Ordering::Acquire) || p.signals.stopped.load(Ordering::Acquire) {
        return true;
    }
    super::signal_frame::run_timers(p);
    deliverable(p, t) != 0
}

/// Pending signals of `t` and its process, blocked or not (after turning
/// expired timers into signals).
pub fn pending_mask(p: &Arc<Process>, t: &Thread) -> u64 {
    super::signal_frame::run_timers(p);
    p.signals.shared.mask() | t.signals.pending.mask()
}

/// Dequeues the next pending signal of `t` in `set` whether or not it is
/// blocked (sigtimedwait, signalfd).
pub fn dequeue_in(p: &Arc<Process>, t: &Thread, set: u64) -> Option<SigInfo> {
    let set = set & !UNBLOCKABLE;
    if pending_mask(p, t) & set == 0 {
        return None;
    }
    let old = t.sigmask.swap(!set, Ordering::Relaxed);
    let info = dequeue(p, t);
    t.sigmask.store(old, Ordering::Relaxed);
    info
}

/// Removes the lowest-numbered deliverable signal.
pub fn dequeue(p: &Process, t: &Thread) -> Option<SigInfo> {
    let ready = deliverable(p, t);
    if ready == 0 {
        return None;
    }
    // SIGKILL first, then lowest number (Linux prefers synchronous signals;
    // fault signals are thread-directed and checked first below).
    let own = t.signals.pending.mask() & ready;
    let pick = |m: u64| if m & bit(SIGKILL) != 0 { SIGKILL } else { m.trailing_zeros() as usize + 1 };
    let info = if own != 0 {
        t.signals.pending.lock().take(pick(own))
    } else {
        p.signals.shared.lock().take(pick(ready))
    };
    if let Some(i) = &info
        && i.code == super::posix_timer::SI_TIMER
    {
        super::posix_timer::delivered(p, i);
    }
    info
}

/// Sleeps on `wq` until `cond` holds; a deliverable signal interrupts the
/// wait with `ERESTARTSYS` (turned into EINTR or a restart on delivery).
pub fn wait_interruptible<R>(
    p: &Arc<Process>,
    t: &Thread,
    wq: &WaitQueue,
    mut cond: impl FnMut() -> Option<R>,
) -> Result<R> {
    wq.wait_until(|| {
        if let Some(r) = cond() {
            return Some(Ok(r));
        }
        has_deliverable(p, t).then(|| Err(Error::new(Errno::ERESTARTSYS)))
    })
}

/// Like [`wait_interruptible`] with a monotonic deadline: `Ok(None)` on
/// timeout.
pub fn wait_interruptible_deadline<R>(
    p: &Arc<Process>,
    t: &Thread,
    wq: &WaitQueue,
    mut cond: impl FnMut() -> Option<R>,
    deadline: u64,
) -> Result<Option<R>> {
    let r = wq.wait_until_or_deadline(
        || {
            if let Some(r) = cond() {
                return Some(Ok(r));
            }
            has_deliverable(p, t).then(|| Err(Error::new(Errno::ERESTARTSYS)))
        },
        deadline,
    );
    r.transpose()
}

/// Whether process group `pgid` is orphaned: no live member has a parent in
/// another group of the same session (POSIX; credentials(7)).
pub fn is_orphaned_pgrp(pgid: u32) -> bool {
    let mut orphaned = true;
    crate::process::for_each_process(|p| {
        if p.pgid() == pgid
            && p.exit_status().is_none()
            && p.parent().is_some_and(|q| q.exit_status().is_none() && q.pgid() != pgid && q.sid() == p.sid())
        {
            orphaned = false;
        }
        orphaned
    });
    orphaned
}

/// A group that just became orphaned and has a stopped member gets SIGHUP
/// then SIGCONT (POSIX: _exit). Exit calls it: it allocates nothing.
pub fn hup_if_orphaned_and_stopped(pgid: u32) {
    let member = |p: &Process| p.pgid() == pgid && p.exit_status().is_none();
    let mut stopped = false;
    crate::process::for_each_process(|p| {
        stopped |= member(p) && p.signals.stopped.load(Ordering::Acquire);
        !stopped
    });
    if !stopped || !is_orphaned_pgrp(pgid) {
        return;
    }
    crate::process::for_each_process(|p| {
        if member(p) {
            send_to_process(p, SigInfo::new(SIGHUP, SI_KERNEL));
            send_to_process(p, SigInfo::new(SIGCONT, SI_KERNEL));
        }
        true
    });
}
