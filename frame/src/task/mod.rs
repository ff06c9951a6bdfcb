//! Kernel tasks: a stack, a saved context and an entry closure. Scheduling
//! *policy* is injected ([`Scheduler`]); the mechanism here switches stacks
//! and enforces that a task runs on at most one CPU at a time (invariant 8),
//! whatever the policy returns.
//!
//! Preemption happens at the boundary to user mode: the timer tick (which
//! runs while a task runs, and stops while the CPU idles) marks the
//! current task for rescheduling and the kernel calls [`preempt_point`]
//! before returning to user space. Kernel code is not preempted.

mod stack;
pub(crate) use self::stack::KernelStack;
#[cfg(test)]
mod tests;

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::any::Any;
use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

use crate::Error;
use crate::arch::cpu::context_switch;
use crate::arch::switch::{INITIAL_FRAME_WORDS, initial_stack};
use crate::irq::{DisabledLocalIrqGuard, disable_local};
use crate::sync::Once;

/// The injected scheduling policy.
pub trait Scheduler: Sync {
    /// Makes a runnable task eligible to run.
    fn enqueue(&self, task: Arc<Task>);
    /// Removes and returns the next task to run, if any.
    fn pick_next(&self) -> Option<Arc<Task>>;
    /// Timer tick while `current` runs; `true` asks to preempt it.
    fn tick(&self, current: &Task) -> bool;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskState {
    Runnable = 0,
    Sleeping = 1,
    Exited = 2,
}

pub struct Task {
    id: u64,
    saved_rsp: UnsafeCell<usize>,
    state: AtomicU8,
    /// Invariant 8: set while a CPU runs (or is switching to) this task.
    on_cpu: AtomicBool,
    /// Handed to the scheduler once (spawn).
    started: AtomicBool,
    /// Scheduling weight for the policy (1024 = nice 0).
    weight: core::sync::atomic::AtomicU32,
    /// CPU time consumed in earlier runs, and when the current run began.
    cpu_ns: AtomicU64,
    run_start_ns: AtomicU64,
    /// Context switches away from this task: voluntary (it slept or
    /// exited) and involuntary (preempted or yielded while runnable).
    voluntary_switches: AtomicU64,
    involuntary_switches: AtomicU64,
    /// A wake-up arrived while the task was still deciding to sleep.
    woken: AtomicBool,
    /// The domain whose call this task runs (`domain::Owner`: 0 for the
    /// kernel), set by `Domain::call` for the call: what `RRef::new`
    /// records as the owner.
    domain_owner: AtomicU64,
    entry: UnsafeCell<Option<Box<dyn FnOnce() + Send>>>,
    data: Box<dyn Any + Send + Sync>,
    held_locks: Cell<(u64, u32)>,
    /// The innermost `domain::call_isolated` running on this task: the
    /// address of its recovery record, 0 if none.
    recovery: Cell<usize>,
    /// The domain heap serving this task's allocations while it is
    /// switched away (`domain::heap`; 0: the kernel heap).
    heap: Cell<u8>,
    _stack: Option<KernelStack>,
}

// MIRI: relied on by task::tests::spawned_tasks_run_when_the_current_task_yields_and_exit_cleanly,
// task::tests::wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them
// SAFETY: the non-`Sync` fields (`saved_rsp`, `entry`, `held_locks`,
// `recovery`) are touched only by the switch code and by the task itself
// (its entry, `domain::call_isolated`, the panic handler it runs), on the
// one CPU running it (invariant 8, claimed through `on_cpu`). Every other
// field is atomic or immutable after `build`; what a client attaches
// (`entry`, `data`) must be `Send` (`data` also `Sync`).
unsafe impl Sync for Task {}
// SAFETY: as above; a `Task` owns nothing tied to the CPU that created it.
// MIRI: relied on by task::tests::spawned_tasks_run_when_the_current_task_yields_and_exit_cleanly,
// task::tests::wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them
unsafe impl Send for Task {}

const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Task>();
    send_sync::<Arc<Task>>();
};

impl Task {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The data attached at spawn time (the kernel's thread structure).
    pub fn data(&self) -> &(dyn Any + Send + Sync) {
        &*self.data
    }

    /// CPU time this task has used (nanoseconds), including the current run.
    pub fn cpu_time_ns(&self) -> u64 {
        let base = self.cpu_ns.load(Ordering::Relaxed);
        if self.on_cpu.load(Ordering::Acquire) {
            let start = self.run_start_ns.load(Ordering::Relaxed);
            base + crate::timer::monotonic_ns().saturating_sub(start)
        } else {
            base
        }
    }

    /// Context switches away from this task so far: (voluntary,
    /// involuntary), as getrusage(2) counts them. Waiting for an interrupt
    /// because nothing else is runnable counts as a voluntary switch.
    pub fn context_switches(&self) -> (u64, u64) {
        (
            self.voluntary_switches.load(Ordering::Relaxed),
            self.involuntary_switches.load(Ordering::Relaxed),
        )
    }

    /// Scheduling weight (1024 = default); policies may give heavier tasks
    /// a larger share.
    pub fn weight(&self) -> u32 {
        self.weight.load(Ordering::Relaxed)
    }

    pub fn set_weight(&self, w: u32) {
        self.weight.store(w.max(1), Ordering::Relaxed);
    }

    /// The recovery record of the innermost isolated call running on this
    /// task (0: none). Only the task itself reads and sets it.
    pub(crate) fn recovery(&self) -> usize {
        self.recovery.get()
    }

    pub(crate) fn set_recovery(&self, addr: usize) {
        self.recovery.set(addr);
    }

    /// The domain this task runs a call of (0: the kernel).
    pub(crate) fn domain_owner(&self) -> u64 {
        self.domain_owner.load(Ordering::Relaxed)
    }

    /// Enters (or leaves) a domain's call; returns the previous owner.
    pub(crate) fn swap_domain_owner(&self, owner: u64) -> u64 {
        self.domain_owner.swap(owner, Ordering::Relaxed)
    }

    pub fn state(&self) -> TaskState {
        match self.state.load(Ordering::Acquire) {
            0 => TaskState::Runnable,
            1 => TaskState::Sleeping,
            _ => TaskState::Exited,
        }
    }

    /// Makes a sleeping task runnable again; a no-op for a running task
    /// except that its next attempt to sleep returns at once.
    pub fn wake(self: &Arc<Self>) {
        let _irq = disable_local();
        self.woken.store(true, Ordering::Release);
        if self
            .state
            .compare_exchange(
                TaskState::Sleeping as u8,
                TaskState::Runnable as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            // The run queue is the kernel's, even when a driver domain wakes.
            crate::domain::heap::with_kernel_heap(|| scheduler().enqueue(self.clone()));
        }
    }
}

pub struct TaskOptions {
    entry: Box<dyn FnOnce() + Send>,
    data: Option<Box<dyn Any + Send + Sync>>,
}

impl TaskOptions {
    pub fn new(entry: impl FnOnce() + Send + 'static) -> Self {
        TaskOptions {
            entry: Box::new(entry),
            data: None,
        }
    }

    pub fn data(mut self, data: impl Any + Send + Sync) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// Creates the task without running it. `AccessDenied` inside a driver
    /// domain: a task (and its entry closure, on the domain's heap) would
    /// outlive the domain.
    pub fn build(self) -> Result<Arc<Task>, Error> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        if crate::domain::heap::current_tag() != 0 {
            return Err(Error::AccessDenied);
        }
        let stack = KernelStack::new()?;
        let top = stack.top();
        // See arch::switch: the frame sits 72 bytes below the 16-aligned top
        // so the trampoline's call leaves the ABI-required alignment.
        let frame_addr = top - 72;
        let mut frame = [0u64; INITIAL_FRAME_WORDS];
        let rsp = initial_stack(&mut frame, frame_addr);
        stack.write_words(frame_addr, &frame);
        Ok(Arc::new(Task {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            saved_rsp: UnsafeCell::new(rsp),
            state: AtomicU8::new(TaskState::Runnable as u8),
            on_cpu: AtomicBool::new(false),
            started: AtomicBool::new(false),
            weight: core::sync::atomic::AtomicU32::new(1024),
            cpu_ns: AtomicU64::new(0),
            run_start_ns: AtomicU64::new(0),
            voluntary_switches: AtomicU64::new(0),
            involuntary_switches: AtomicU64::new(0),
            woken: AtomicBool::new(false),
            domain_owner: AtomicU64::new(0),
            entry: UnsafeCell::new(Some(self.entry)),
            data: self.data.unwrap_or_else(|| Box::new(())),
            held_locks: Cell::new((0, 0)),
            recovery: Cell::new(0),
            heap: Cell::new(0),
            _stack: Some(stack),
        }))
    }

    /// Creates the task and makes it runnable.
    pub fn spawn(self) -> Result<Arc<Task>, Error> {
        let task = self.build()?;
        spawn_built(task.clone());
        Ok(task)
    }
}

/// Makes a task created with [`TaskOptions::build`] runnable (once; later
/// calls are ignored).
pub fn spawn_built(task: Arc<Task>) {
    if !task.started.swap(true, Ordering::AcqRel) {
        crate::domain::heap::with_kernel_heap(|| scheduler().enqueue(task));
    }
}

static SCHEDULER: Once<&'static dyn Scheduler> = Once::new();

pub(crate) fn inject_scheduler(s: &'static dyn Scheduler) {
    SCHEDULER.call_once(|| s);
}

fn scheduler() -> &'static dyn Scheduler {
    *SCHEDULER.get().expect("scheduler used before injection")
}

/// Per-CPU scheduling state (single CPU for now).
struct CpuState {
    current: UnsafeCell<Option<Arc<Task>>>,
    /// The task we just switched away from, finished by the next task.
    prev: UnsafeCell<Option<Arc<Task>>>,
    boot_rsp: UnsafeCell<usize>,
}
// SAFETY: accessed only with interrupts disabled on the owning CPU.
// MIRI: relied on by task::tests::spawned_tasks_run_when_the_current_task_yields_and_exit_cleanly,
// task::tests::wait_queues_and_the_mutex_put_tasks_to_sleep_and_wake_them
unsafe impl Sync for CpuState {}

static CPU: CpuState = CpuState {
    current: UnsafeCell::new(None),
    prev: UnsafeCell::new(None),
    boot_rsp: UnsafeCell::new(0),
};
static NEED_RESCHED: AtomicBool = AtomicBool::new(false);

/// Device requests in flight whose completion interrupt is due soon
/// ([`IoPending`]).
static IO_PENDING: AtomicUsize = AtomicUsize::new(0);
/// How long an idle CPU polls for an interrupt before it halts, while a
/// device request is in flight (monotonic-clock nanoseconds).
const IDLE_POLL_NS: u64 = 1_000_000;
/// Spin-loop hints per round of that poll (interrupts are taken between
/// rounds), and the most rounds, whatever the clock says.
const IDLE_POLL_SPINS: u32 = 200;
const IDLE_POLL_ROUNDS: u32 = 20_000;

/// A device request in flight whose completion interrupt is expected
/// soon (a disk request given to its device): while one exists, a CPU with
/// nothing to run polls for up to a millisecond before it halts, so the
/// completion is taken at once. A halt would add the wake-up latency of
/// the halt and, under QEMU's `-icount sleep=off`, a jump of the guest
/// clock to the next timer deadline (however far it is) for every wait.
/// Dropping it ends the request's claim.
#[must_use = "the claim ends when it is dropped"]
pub struct IoPending(());

impl IoPending {
    pub fn new() -> IoPending {
        IO_PENDING.fetch_add(1, Ordering::Relaxed);
        IoPending(())
    }
}

impl Default for IoPending {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for IoPending {
    fn drop(&mut self) {
        IO_PENDING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Device requests in flight ([`IoPending`] claims alive).
pub fn io_pending() -> usize {
    IO_PENDING.load(Ordering::Relaxed)
}

/// The running task. Panics before the first task starts.
pub fn current() -> Arc<Task> {
    try_current().expect("no current task")
}

pub fn try_current() -> Option<Arc<Task>> {
    let _irq = disable_local();
    // SAFETY: interrupts are off; only this CPU touches CPU.current.
    unsafe { (*CPU.current.get()).clone() }
}

/// Switches to the next task. `put_back`: the current task stays runnable.
fn reschedule(_irq: &DisabledLocalIrqGuard, put_back: bool) {
    // Kernel code is not preempted: user copies through the user address
    // rely on no switch (and so no other page table) between their check
    // of the loaded space and their end (mm::vm_space).
    assert!(
        !crate::irq::in_interrupt(),
        "invariant: no task switch from an interrupt handler"
    );
    // SAFETY: interrupts are off for the whole function (the guard).
    let cur = unsafe { (*CPU.current.get()).clone() }.expect("reschedule without a current task");
    // The scheduler's queues are the kernel's: from here on, whatever
    // domain this task was running, allocations go to the kernel heap. The
    // task's own heap comes back when it runs again (`finish_switch`).
    cur.heap.set(crate::domain::heap::switch_to(0));
    if put_back {
        scheduler().enqueue(cur.clone());
    }
    let mut idled = false;
    // Idle polling (see `IoPending`): when it started, rounds so far.
    let mut poll_since: Option<u64> = None;
    let mut poll_rounds = 0u32;
    let next = loop {
        match scheduler().pick_next() {
            // The policy may hand back the current task only if it is still
            // runnable (it yielded, or was woken before it slept); an exited
            // or sleeping task it returns is stale, whatever the policy
            // thinks, and must not run again.
            Some(next) if Arc::ptr_eq(&next, &cur) => {
                if cur.state() == TaskState::Runnable {
                    if idled {
                        crate::timer::idle_exit();
                    }
                    crate::domain::heap::switch_to(cur.heap.get());
                    return;
                }
            }
            Some(next) if next.state() != TaskState::Runnable => continue,
            Some(next) if next.on_cpu.swap(true, Ordering::AcqRel) => {
                crate::log_warn!(
                    "scheduler picked task {} that is already running; skipped",
                    next.id
                );
            }
            Some(next) => break next,
            None => {
                // Nothing to run: wait for an interrupt to wake someone,
                // with the tick stopped (the timer comes at the next
                // deadline only). The idle time is not the current task's
                // CPU time.
                if !idled {
                    idled = true;
                    cur.voluntary_switches.fetch_add(1, Ordering::Relaxed);
                }
                let idle_from = crate::timer::monotonic_ns();
                let ran = idle_from.saturating_sub(cur.run_start_ns.load(Ordering::Relaxed));
                cur.cpu_ns.fetch_add(ran, Ordering::Relaxed);
                let poll_from = *poll_since.get_or_insert(idle_from);
                let poll = IO_PENDING.load(Ordering::Relaxed) > 0
                    && poll_rounds < IDLE_POLL_ROUNDS
                    && idle_from.saturating_sub(poll_from) < IDLE_POLL_NS;
                // Stop the tick before the first poll round and before every
                // halt, not at each round: re-arming the APIC timer once per
                // round (thousands a millisecond) slowed QEMU's device
                // emulation enough to cut a writer's wall throughput 20-fold.
                if !poll || poll_rounds == 0 {
                    crate::timer::idle_enter();
                }
                if poll {
                    // A device interrupt is due soon: poll for it (one
                    // round, interrupts on) rather than halt.
                    poll_rounds += 1;
                    crate::arch::cpu::enable_interrupts();
                    for _ in 0..IDLE_POLL_SPINS {
                        core::hint::spin_loop();
                    }
                } else {
                    crate::arch::cpu::enable_interrupts_and_halt();
                }
                crate::arch::cpu::disable_interrupts();
                cur.run_start_ns
                    .store(crate::timer::monotonic_ns(), Ordering::Relaxed);
            }
        }
    };
    NEED_RESCHED.store(false, Ordering::Relaxed);
    if idled {
        crate::timer::idle_exit();
    }
    if !idled {
        let switches = if put_back {
            &cur.involuntary_switches
        } else {
            &cur.voluntary_switches
        };
        switches.fetch_add(1, Ordering::Relaxed);
    }
    let now = crate::timer::monotonic_ns();
    cur.cpu_ns.fetch_add(
        now.saturating_sub(cur.run_start_ns.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
    next.run_start_ns.store(now, Ordering::Relaxed);
    cur.held_locks.set(crate::sync::take_held_state());
    let next_rsp = {
        // SAFETY: `next` is not running anywhere (on_cpu claimed above), so
        // its saved stack pointer is stable.
        unsafe { *next.saved_rsp.get() }
    };
    let save = cur.saved_rsp.get();
    // SAFETY: interrupts off; the Arcs keep both tasks alive across the switch.
    unsafe {
        *CPU.prev.get() = Some(cur);
        *CPU.current.get() = Some(next);
        context_switch(save, next_rsp);
    }
    finish_switch();
}

/// Runs on the new task right after a switch.
fn finish_switch() {
    // SAFETY: called with interrupts disabled, right after a context switch.
    let prev = unsafe { (*CPU.prev.get()).take() };
    if let Some(prev) = prev {
        prev.on_cpu.store(false, Ordering::Release);
        drop(prev); // an exited task's stack is freed here, off that stack
    }
    // SAFETY: as above.
    if let Some(cur) = unsafe { (*CPU.current.get()).as_ref() } {
        crate::sync::restore_held_state(cur.held_locks.get());
        crate::domain::heap::switch_to(cur.heap.get());
        cur.woken.store(false, Ordering::Relaxed);
        cur.state
            .store(TaskState::Runnable as u8, Ordering::Release);
    }
}

/// Entry of every new task (called by the assembly trampoline).
pub(crate) extern "C" fn task_entry() -> ! {
    finish_switch();
    let cur = current();
    // SAFETY: the entry is taken exactly once, by the task itself, which is
    // the only code touching it (invariant 8).
    let entry = unsafe { (*cur.entry.get()).take() };
    drop(cur);
    crate::irq::enable_local();
    if let Some(f) = entry {
        f();
    }
    exit_current()
}

/// Lets other runnable tasks run.
pub fn yield_now() {
    crate::sync::might_sleep();
    let irq = disable_local();
    reschedule(&irq, true);
}

/// Puts the current task to sleep until [`Task::wake`]. Interrupts must be
/// disabled by the caller (who has queued the task somewhere to be woken).
pub(crate) fn sleep_current(irq: &DisabledLocalIrqGuard) {
    let cur = current();
    if cur.woken.swap(false, Ordering::AcqRel) {
        return;
    }
    cur.state
        .store(TaskState::Sleeping as u8, Ordering::Release);
    drop(cur);
    reschedule(irq, false);
}

/// Ends the current task. Like any switch away, it must not happen in
/// interrupt context or with a spin lock held.
pub fn exit_current() -> ! {
    crate::sync::might_sleep();
    let irq = disable_local();
    current()
        .state
        .store(TaskState::Exited as u8, Ordering::Release);
    reschedule(&irq, false);
    unreachable!("an exited task was scheduled again");
}

/// Called by the timer interrupt.
pub(crate) fn on_tick() {
    // SAFETY: interrupt context, interrupts disabled.
    if let Some(cur) = unsafe { (*CPU.current.get()).as_ref() }
        && scheduler().tick(cur)
    {
        NEED_RESCHED.store(true, Ordering::Relaxed);
    }
}

/// Yields if the timer asked for it. The kernel calls this on its way back
/// to user mode.
#[inline]
pub fn preempt_point() {
    if NEED_RESCHED.load(Ordering::Relaxed) {
        yield_now();
    }
}

/// Checks that the first task is being started from the boot context, once:
/// a running task that did this would have its stack abandoned while still
/// referenced.
pub(crate) fn claim_first_run() {
    static CLAIMED: AtomicBool = AtomicBool::new(false);
    assert!(
        try_current().is_none() && !CLAIMED.swap(true, Ordering::AcqRel),
        "invariant: run_first_task runs once, from the boot context"
    );
}

/// Starts the first task; the boot stack is abandoned.
pub(crate) fn run_first(task: Arc<Task>) -> ! {
    let _irq = disable_local();
    task.on_cpu.store(true, Ordering::Release);
    task.started.store(true, Ordering::Release);
    task.run_start_ns
        .store(crate::timer::monotonic_ns(), Ordering::Relaxed);
    // SAFETY: nothing runs yet; interrupts are disabled.
    let next_rsp = unsafe { *task.saved_rsp.get() };
    // SAFETY: interrupts off; the boot context is never resumed.
    unsafe {
        *CPU.current.get() = Some(task);
        context_switch(CPU.boot_rsp.get(), next_rsp);
    }
    unreachable!("returned to the boot stack");
}

/// Whether `addr` is inside some kernel stack's guard page.
pub(crate) fn is_stack_guard(addr: usize) -> bool {
    stack::is_guard_page(addr)
}
