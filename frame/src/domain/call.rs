//! The continuation: [`call_isolated`] and the panic handler's way back
//! into it.

use core::panic::PanicInfo;
use core::sync::atomic::{AtomicU64, Ordering};

use super::{Exchangeable, Owner};
use crate::Error;
use crate::arch::cpu;
use crate::task::KernelStack;

/// Why an isolated call returned no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The code panicked (an explicit panic, a failed bounds check, an
    /// `unwrap` of nothing...).
    Panic,
    /// The domain died in an earlier call; nothing ran.
    Dead,
    /// The domain could not be set up (no memory for its stack).
    NoMemory,
    /// A domain was to be built from inside a domain: its bookkeeping
    /// would sit on a heap that dies with the builder.
    Nested,
}

/// The stack a domain runs on. It is reused by every call made with it;
/// after a fault nothing points into it any more (module comment).
pub struct DomainStack {
    stack: KernelStack,
}

impl DomainStack {
    pub fn new() -> Result<DomainStack, Error> {
        Ok(DomainStack {
            stack: KernelStack::new()?,
        })
    }
}

/// Where a fault returns to: filled by the assembly (`saved_rsp`) and by
/// [`call_isolated`] (the rest) on the caller's stack, and found by the
/// panic handler through the current task.
#[repr(C)]
pub(crate) struct Recovery {
    /// The caller's stack pointer, below its callee-saved registers
    /// (offset 0: the assembly stores it).
    saved_rsp: usize,
    /// The enclosing call's record (0: none), for nested calls.
    prev: usize,
    /// Lock bookkeeping and interrupt state at the call.
    held_levels: u64,
    spin_depth: u32,
    irq_enabled: bool,
    irq_depth: u32,
}

/// Faults recovered since boot.
static FAULTS: AtomicU64 = AtomicU64::new(0);

/// How many isolated calls have ended in a fault since boot.
pub fn faults() -> u64 {
    FAULTS.load(Ordering::Relaxed)
}

struct CallState<A, R> {
    f: fn(A) -> R,
    arg: Option<A>,
    ret: Option<R>,
}

/// Runs on the domain stack: takes the argument, calls the function and
/// stores its result.
extern "C-unwind" fn isolated_entry<A, R>(state: *mut u8) {
    // SAFETY: `call_isolated` passes a pointer to its own `CallState<A, R>`,
    // which lives (on the caller's stack) until the call returns, and does
    // not touch it meanwhile.
    let state = unsafe { &mut *state.cast::<CallState<A, R>>() };
    if let Some(arg) = state.arg.take() {
        state.ret = Some((state.f)(arg));
    }
}

/// Calls `f(arg)` on `stack`. A panic in `f` that can be recovered
/// (module comment) makes this return `Err(Fault::Panic)`; whatever `f`
/// owned then (its argument included) is leaked, never dropped.
pub fn call_isolated<A: Exchangeable, R: Exchangeable>(
    stack: &mut DomainStack,
    f: fn(A) -> R,
    arg: A,
) -> Result<R, Fault> {
    let mut state = CallState {
        f,
        arg: Some(arg),
        ret: None,
    };
    // SAFETY: `isolated_entry::<A, R>` reads its context as the
    // `CallState<A, R>` passed with it, which lives on this frame until
    // `run_on` returns.
    let (aborted, _) = unsafe {
        run_on(
            stack,
            None,
            None,
            isolated_entry::<A, R>,
            core::ptr::from_mut(&mut state).cast(),
        )
    };
    if aborted {
        // The argument was moved into the abandoned frames (or is still
        // here if the fault came first): either way it is leaked.
        core::mem::forget(state.arg.take());
        return Err(Fault::Panic);
    }
    state.ret.take().ok_or(Fault::Panic)
}

/// Runs `entry(ctx)` on `stack` with a recovery record, and says whether
/// the call was aborted by a recovered fault. With `heap` (a domain heap's
/// tag), allocations made meanwhile are charged to that heap; with `owner`,
/// the task runs as that owner of shared-heap objects meanwhile. The
/// caller's heap and owner are back once the call is over, normally or by
/// a fault; the owner it ran as before is returned (the kernel's without
/// `owner`).
///
/// # Safety
/// `entry` must treat `ctx` only as the context its caller built for it,
/// which must stay alive (and untouched by anything else) until this
/// returns.
pub(super) unsafe fn run_on(
    stack: &mut DomainStack,
    heap: Option<u8>,
    owner: Option<Owner>,
    entry: extern "C-unwind" fn(*mut u8),
    ctx: *mut u8,
) -> (bool, Owner) {
    let task = crate::task::current();
    let prev_owner = owner.map(|o| Owner(task.swap_domain_owner(o.0)));
    let prev_heap = heap.map(super::heap::switch_to);
    let (held_levels, spin_depth) = crate::sync::held_state();
    let mut rec = Recovery {
        saved_rsp: 0,
        prev: task.recovery(),
        held_levels,
        spin_depth,
        irq_enabled: crate::irq::local_enabled(),
        irq_depth: crate::irq::depth(),
    };
    task.set_recovery(core::ptr::from_mut(&mut rec).addr());
    let top = stack.stack.top();
    // SAFETY: `top` tops a mapped kernel stack nothing else runs on (`stack`
    // is borrowed mutably; a faulted call leaves nothing pointing into it);
    // `rec` (this frame) and `ctx` (the caller's promise) live until the
    // call returns, normally or through `isolated_abort` from
    // `recover_from_panic`, which restores exactly the registers saved here.
    let aborted = unsafe { cpu::isolated_call(&mut rec, top, entry, ctx) };
    if let Some(prev) = prev_heap {
        super::heap::switch_to(prev);
    }
    task.set_recovery(rec.prev);
    if let Some(prev) = prev_owner {
        task.swap_domain_owner(prev.0);
    }
    (aborted, prev_owner.unwrap_or(Owner::KERNEL))
}

/// Called by the panic handler before anything else (interrupts are off):
/// if the panic happened inside an isolated call and is recoverable, it
/// does not return: the call returns `Err(Fault::Panic)`.
pub(crate) fn recover_from_panic(info: &PanicInfo) {
    let Some(task) = crate::task::try_current() else {
        return;
    };
    let addr = task.recovery();
    if addr == 0 {
        return;
    }
    // MIRI: not reached: only the machine's panic handler calls this; on
    // the host a panic unwinds to the model's isolated call instead.
    // SAFETY: a non-zero recovery address is that of the live `Recovery`
    // of the innermost `call_isolated` still running on this task (set
    // before the switch to the domain stack, reset before that call
    // returns), on a frame below the panicking code's.
    let rec = unsafe { &*(addr as *const Recovery) };
    let in_frame = info
        .location()
        .is_some_and(|l| l.file().starts_with("frame/"));
    if in_frame
        || crate::irq::depth() != rec.irq_depth
        || crate::sync::held_state() != (rec.held_levels, rec.spin_depth)
    {
        // A fault in frame itself, in an interrupt handler that interrupted
        // the domain, or with a lock held: not the domain's alone.
        return;
    }
    crate::console::print_unlocked(format_args!("trellis: domain fault: {info}\n"));
    FAULTS.fetch_add(1, Ordering::Relaxed);
    task.set_recovery(rec.prev);
    let (saved_rsp, irq_enabled) = (rec.saved_rsp, rec.irq_enabled);
    // The frames from here up to the domain's are abandoned: nothing on
    // them may own anything that must be released.
    drop(task);
    if irq_enabled {
        crate::irq::enable_local();
    }
    // MIRI: not reached: as above (the abort is the machine's assembly).
    // SAFETY: `saved_rsp` was stored by `isolated_call` for a call that has
    // not returned (its record is the task's current one), so its frame
    // and saved registers are intact below the abandoned domain frames.
    unsafe { cpu::isolated_abort(saved_rsp) }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;
    use crate::mm::frame_alloc::free_frames;
    use crate::sim;

    fn triple(v: [u32; 2]) -> [u32; 2] {
        v.map(|x| x * 3)
    }

    fn fails(v: [u32; 1]) -> u32 {
        let v: Vec<u32> = v.to_vec();
        v[v.len()]
    }

    #[test]
    fn isolated_calls_return_values_and_faults_and_restore_the_record() {
        sim::run(|| {
            let before = free_frames();
            let mut stack = DomainStack::new().unwrap();
            let task = crate::task::current();
            assert_eq!(task.recovery(), 0);
            assert_eq!(
                call_isolated(&mut stack, triple, [1, 2]),
                Ok([3, 6])
            );
            assert_eq!(task.recovery(), 0, "the record is gone after the call");
            // The host unwinds the panic to the model's isolated call.
            assert_eq!(
                call_isolated(&mut stack, fails, [1]),
                Err(Fault::Panic)
            );
            assert_eq!(task.recovery(), 0, "and after a fault");
            assert_eq!(call_isolated(&mut stack, triple, [0, 5]), Ok([0, 15]));
            drop(stack);
            assert_eq!(free_frames(), before, "the domain stack went back");
        });
    }
}
