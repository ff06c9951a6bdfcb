//! The life of a user thread: run user code, serve its syscalls and faults.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use frame::task::TaskOptions;
use frame::user::{CpuException, ReturnReason, UserContext};

use super::signal::{self, SigInfo, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, SI_KERNEL};
use super::signal_frame::{handle_signals, work_pending};
use super::{Pid, Process, Thread};
use crate::error::{Errno, Error, Result};
use crate::mm::Vmar;
use crate::syscall::{dispatch, Context};


/// Whether `rax` is one of the -ERESTART* codes a syscall returns when a
/// signal interrupted it (they lie in -516..=-512).
#[inline(always)]
fn is_restart_request(rax: i64) -> bool {
    // One range test on the common path (any other result).
    (-(Errno::ERESTART_RESTARTBLOCK as i64)..=-(Errno::ERESTARTSYS as i64)).contains(&rax)
        && [Errno::ERESTARTSYS, Errno::ERESTARTNOINTR, Errno::ERESTARTNOHAND, Errno::ERESTART_RESTARTBLOCK]
            .iter()
            .any(|&e| rax == -(e as i64))
}

/// Starts the first thread of `process` with registers `user`.
pub fn spawn_user_thread(process: &Arc<Process>, tid: Pid, user: UserContext) -> Result<Arc<Thread>> {
    spawn_user_thread_inner(process, tid, user, 0, 0, None)
}

pub(crate) fn spawn_user_thread_inner(
    process: &Arc<Process>,
    tid: Pid,
    user: UserContext,
    sigmask: u64,
    clear_child_tid: u64,
    altstack: Option<(u64, i32, u64)>,
) -> Result<Arc<Thread>> {
    let thread = process.add_thread(tid)?;
    if let Some(a) = altstack {
        *thread.signals.altstack.lock() = a;
    }
    thread.sigmask.store(sigmask, Ordering::Relaxed);
    thread.clear_child_tid.store(clear_child_tid, Ordering::Relaxed);
    let (p, t) = (process.clone(), thread.clone());
    let task = match TaskOptions::new(move || user_loop(p, t, user)).data(thread.clone()).build() {
        Ok(task) => task,
        Err(e) => {
            process.retire_thread(&thread);
            return Err(e.into());
        }
    };
    task.set_weight(crate::syscall::weight_of_nice(process.nice()));
    thread.task.call_once(|| Arc::downgrade(&task));
    frame::task::spawn_built(task);
    Ok(thread)
}

/// The signal and si_code a CPU exception raises (signal(7), sigaction(2)),
/// as Linux's trap handlers choose them. `rip` is the faulting instruction
/// (si_addr of SIGILL/SIGFPE); `fpu` the FXSAVE image, whose status words
/// say which FP exception it was. For a page fault, `pf_errno` is why it
/// could not be resolved (see [`crate::mm::Vmar::handle_page_fault`]).
fn exception_signal(e: &CpuException, pf_errno: Errno, rip: u64, fpu: &[u8; 512]) -> SigInfo {
    const SEGV_MAPERR: i32 = 1;
    const SEGV_ACCERR: i32 = 2;
    const FPE_INTDIV: i32 = 1;
    const ILL_ILLOPN: i32 = 2;
    const BUS_ADRALN: i32 = 1;
    const BUS_ADRERR: i32 = 2;
    const TRAP_TRACE: i32 = 2;
    const SEGMENT_NOT_PRESENT: u8 = 11;
    match e.vector {
        CpuException::DIVIDE => SigInfo::fault(SIGFPE, FPE_INTDIV, rip),
        CpuException::X87 => {
            // Raised and unmasked: FSW flags against the FCW masks.
            let (fcw, fsw) = (u16::from_le_bytes([fpu[0], fpu[1]]), u16::from_le_bytes([fpu[2], fpu[3]]));
            SigInfo::fault(SIGFPE, fp_code(u32::from(fsw & !fcw & 0x3f)), rip)
        }
        CpuException::SIMD => {
            let mxcsr = u32::from_le_bytes([fpu[24], fpu[25], fpu[26], fpu[27]]);
            SigInfo::fault(SIGFPE, fp_code(mxcsr & !(mxcsr >> 7) & 0x3f), rip)
        }
        CpuException::INVALID_OPCODE => SigInfo::fault(SIGILL, ILL_ILLOPN, rip),
        // Single-step (TF set by popf): the address of the next instruction.
        CpuException::DEBUG => SigInfo::fault(SIGTRAP, TRAP_TRACE, rip),
        // int3 is a plain kernel-sent SIGTRAP on Linux: SI_KERNEL, no address.
        CpuException::BREAKPOINT => SigInfo::fault(SIGTRAP, SI_KERNEL, 0),
        CpuException::ALIGNMENT => SigInfo::fault(SIGBUS, BUS_ADRALN, 0),
        CpuException::STACK_FAULT | SEGMENT_NOT_PRESENT => SigInfo::fault(SIGBUS, SI_KERNEL, 0),
        CpuException::PAGE_FAULT => match pf_errno {
            Errno::EIO => SigInfo::fault(SIGBUS, BUS_ADRERR, e.fault_addr),
            // The area exists but forbids this access (PROT_NONE, read-only, NX).
            Errno::EACCES => SigInfo::fault(SIGSEGV, SEGV_ACCERR, e.fault_addr),
            _ => SigInfo::fault(SIGSEGV, SEGV_MAPERR, e.fault_addr),
        },
        // #GP and the rest.
        _ => SigInfo::fault(SIGSEGV, SI_KERNEL, 0),
    }
}

/// Remembers the exception behind a fault signal for the signal frame's
/// trapno/err/cr2. A page fault's error code gets the user bit and, for
/// an address above user space, the protection bit (as Linux reports it).
fn record_fault(thread: &Thread, e: &CpuException) {
    let f = &thread.signals.fault;
    let mut err = e.error_code;
    if e.vector == CpuException::PAGE_FAULT {
        const PF_PROT: u64 = 1;
        const PF_USER: u64 = 4;
        err |= PF_USER;
        if e.fault_addr >= frame::mm::USER_SPACE_END as u64 {
            err |= PF_PROT;
        }
        f.cr2.store(e.fault_addr, Ordering::Relaxed);
    }
    f.trapno.store(u64::from(e.vector), Ordering::Relaxed);
    f.err.store(err, Ordering::Relaxed);
}

/// si_code of an x87/SSE exception from its flag bits (IE, DE, ZE, OE, UE,
/// PE), in the order Linux tests them.
fn fp_code(flags: u32) -> i32 {
    const FPE_FLTDIV: i32 = 3;
    const FPE_FLTOVF: i32 = 4;
    const FPE_FLTUND: i32 = 5;
    const FPE_FLTRES: i32 = 6;
    const FPE_FLTINV: i32 = 7;
    if flags & 0x01 != 0 {
        FPE_FLTINV
    } else if flags & 0x04 != 0 {
        FPE_FLTDIV
    } else if flags & 0x08 != 0 {
        FPE_FLTOVF
    } else if flags & 0x12 != 0 {
        FPE_FLTUND
    } else if flags & 0x20 != 0 {
        FPE_FLTRES
    } else {
        0
    }
}

/// Why [`run_generation`] returned to [`user_loop`].
enum Leave {
    /// The thread is to exit: its loop ends.
    Exit,
    /// execve or exit installed another address space or descriptor
    /// table (the process's vm generation moved): fetch them again.
    Refetch,
    /// A user page could not be allocated: the OOM killer runs with the
    /// address space and descriptor table dropped.
    OutOfMemory,
}

fn user_loop(process: Arc<Process>, thread: Arc<Thread>, mut user: UserContext) {
    let mut restart = None;
    // The thread is checked for an exit request before it first runs, and
    // after each place it can be made to exit while not running: handling
    // signals, and the system call and preemption point at the end of
    // each round (on one CPU nothing else runs while it is in user mode).
    while !thread.exiting.load(Ordering::Acquire) {
        // The address space and descriptor table are held from one system
        // call to the next, without the process's locks or a
        // reference-count update per call, and so is the `Context` the
        // handlers get (built once, not per call): tagged with the
        // generation they were fetched at (read first, so that a change
        // made meanwhile leaves an older one); execve, exit and unsharing
        // the table bump it, and they are dropped before the thread is
        // retired or the OOM killer runs.
        let (vm, files, generation) = process.vm_files_and_generation();
        let mut ctx = Context {
            process: &process,
            thread: &thread,
            vm: &vm,
            files: &files,
            user: &mut user,
        };
        match run_generation(&mut ctx, generation, &mut restart) {
            Leave::Exit => break,
            Leave::Refetch => {}
            Leave::OutOfMemory => {
                drop((vm, files));
                crate::mm::oom::out_of_memory(&process, &thread);
                frame::task::preempt_point();
            }
        }
    }
    super::exit::thread_exited(&process, &thread);
}

/// Runs the thread in user mode and serves its system calls and faults
/// for as long as the address space and descriptor table in `ctx` are the
/// process's (vm generation `generation`). `restart` carries a system call
/// interrupted by a signal from one round to the next (and across a
/// refetch).
///
/// One round of a system call that needs nothing else is: the generation
/// check, `work_pending`, user mode (`execute`, which counts the cycles
/// spent there), the table lookup and the handler, the restart and OOM checks,
/// the preemption point and the exit flag.
#[inline(never)]
fn run_generation(ctx: &mut Context, generation: u64, restart: &mut Option<u64>) -> Leave {
    let (process, thread) = (ctx.process, ctx.thread);
    loop {
        if process.vm_generation() != generation {
            return Leave::Refetch;
        }
        if restart.is_some() || work_pending(process, thread) {
            // A stop parks the thread with the address space and table
            // held (its process's own, which stay alive while it is
            // stopped anyway); after a fatal signal the thread leaves the
            // loop and drops them before its exit is reported.
            handle_signals(process, thread, ctx.vm, ctx.user, restart.take());
            if thread.exiting.load(Ordering::Acquire) {
                return Leave::Exit;
            }
            if process.vm_generation() != generation {
                return Leave::Refetch;
            }
        }
        // User time: the time in user mode, which only a trap ends (the task
        // is never switched away while there), as the entry assembly counts
        // it. The rest of the task's CPU time is system time (usage.rs).
        let reason = ctx.user.execute(ctx.vm.space());
        thread.add_user_cycles(ctx.user.user_cycles());
        match reason {
            ReturnReason::Syscall => {
                let nr = ctx.user.syscall().0;
                dispatch(ctx);
                // rt_sigreturn's result is the restored rax, never a restart
                // request (Linux clears orig_ax there).
                const RT_SIGRETURN: u64 = 15;
                if is_restart_request(ctx.user.rax() as i64) && nr != RT_SIGRETURN {
                    *restart = Some(nr);
                }
                // A user page the syscall needed could not be allocated.
                if crate::mm::oom::take_pending() {
                    return Leave::OutOfMemory;
                }
            }
            ReturnReason::Exception(e) => {
                if handle_exception(process, thread, ctx.user, ctx.vm, &e) {
                    // No memory for the page: the OOM killer (Linux's
                    // pagefault_out_of_memory), then the instruction runs
                    // again, or the thread dies of a pending SIGKILL.
                    crate::mm::oom::take_pending();
                    return Leave::OutOfMemory;
                }
            }
            ReturnReason::Interrupt => {}
        }
        frame::task::preempt_point();
        if thread.exiting.load(Ordering::Acquire) {
            return Leave::Exit;
        }
    }
}

/// A CPU exception in user mode: a page fault resolved, or the signal it
/// raises queued. True if a page fault found no memory.
#[inline(never)]
fn handle_exception(process: &Arc<Process>, thread: &Arc<Thread>, user: &UserContext, vm: &Vmar, e: &CpuException) -> bool {
    let fault = if e.vector == CpuException::PAGE_FAULT {
        vm.handle_page_fault(e.fault_addr as usize, e.is_write(), e.is_instruction_fetch()).err()
    } else {
        Some(Error::new(Errno::EFAULT))
    };
    let Some(err) = fault else { return false };
    if e.vector == CpuException::PAGE_FAULT && err.errno() == Errno::ENOMEM {
        return true;
    }
    frame::log_debug!("pid {} ({}): {:?} at rip {:#x}", process.pid(), process.name(), e, user.rip());
    let info = exception_signal(e, err.errno(), user.rip(), &user.fpu_bytes());
    record_fault(thread, e);
    signal::force_fault_signal(process, thread, info);
    false
}
