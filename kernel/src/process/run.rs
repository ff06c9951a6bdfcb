//! The life of a user thread: run user code, serve its syscalls and faults.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use frame::task::TaskOptions;
use frame::user::{CpuException, ReturnReason, UserContext};

use super::signal::{self, SigInfo, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP, SI_KERNEL};
use super::signal_frame::handle_signals;
use super::{Pid, Process, Thread};
use crate::error::{Errno, Error, Result};
use crate::syscall::{dispatch, Context};


/// Starts the first thread of `process` with registers `user`.
pub fn spawn_user_thread(process: &Arc<Process>, tid: Pid, user: UserContext) -> Result<Arc<Thread>> {
    spawn_user_thread_inner(process, tid, user, 0, 0)
}

pub(crate) fn spawn_user_thread_inner(
    process: &Arc<Process>,
    tid: Pid,
    user: UserContext,
    sigmask: u64,
    clear_child_tid: u64,
) -> Result<Arc<Thread>> {
    let thread = process.add_thread(tid);
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

/// The signal and si_code a CPU exception raises (signal(7), sigaction(2)).
/// `rip` is the faulting instruction (si_addr of SIGILL/SIGFPE/SIGBUS);
/// `fpu` the FXSAVE image, whose status words say which FP exception it was.
fn exception_signal(e: &CpuException, rip: u64, fpu: &[u8; 512]) -> SigInfo {
    const SEGV_MAPERR: i32 = 1;
    const SEGV_ACCERR: i32 = 2;
    const FPE_INTDIV: i32 = 1;
    const ILL_ILLOPN: i32 = 2;
    const BUS_ADRALN: i32 = 1;
    const TRAP_BRKPT: i32 = 1;
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
        // int3 reports the address after the instruction, like Linux.
        CpuException::DEBUG | CpuException::BREAKPOINT => SigInfo::fault(SIGTRAP, TRAP_BRKPT, rip),
        CpuException::ALIGNMENT => SigInfo::fault(SIGBUS, BUS_ADRALN, rip),
        CpuException::PAGE_FAULT => {
            let code = if e.is_protection() { SEGV_ACCERR } else { SEGV_MAPERR };
            SigInfo::fault(SIGSEGV, code, e.fault_addr)
        }
        _ => SigInfo::fault(SIGSEGV, SI_KERNEL, 0),
    }
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

/// A fault signal cannot be blocked or ignored: Linux forces the default
/// action in that case (force_sig_info).
fn force_fault_signal(process: &Arc<Process>, thread: &Thread, info: SigInfo) {
    let sig = info.signo as usize;
    let act = process.signals.action(sig);
    let blocked = thread.sigmask.load(Ordering::Relaxed) & signal::bit(sig) != 0;
    if blocked || act.handler == signal::SIG_IGN {
        process.signals.set_action(sig, signal::SigAction::default());
        thread.sigmask.fetch_and(!signal::bit(sig), Ordering::Relaxed);
    }
    signal::send_to_thread(process, thread, info);
}

fn user_loop(process: Arc<Process>, thread: Arc<Thread>, mut user: UserContext) {
    let mut restart = None;
    loop {
        handle_signals(&process, &thread, &mut user, restart.take());
        if thread.exiting.load(Ordering::Acquire) {
            break;
        }
        let vm = process.vm();
        // User time: the time in user mode, which only a trap ends (the task
        // is never switched away while there). The rest of the task's CPU
        // time is system time (usage.rs).
        let t0 = frame::timer::monotonic_ns();
        let reason = user.execute(vm.space());
        thread.add_user_time(frame::timer::monotonic_ns().saturating_sub(t0));
        match reason {
            ReturnReason::Syscall => {
                drop(vm);
                let nr = user.syscall().0;
                let mut ctx = Context { process: &process, thread: &thread, user: &mut user };
                dispatch(&mut ctx);
                let rax = user.rax() as i64;
                if rax == -(Errno::ERESTARTSYS as i64) || rax == -(Errno::ERESTARTNOHAND as i64) {
                    restart = Some(nr);
                }
            }
            ReturnReason::Exception(e) => {
                let fault = if e.vector == CpuException::PAGE_FAULT {
                    vm.handle_page_fault(e.fault_addr as usize, e.is_write(), e.is_instruction_fetch()).err()
                } else {
                    Some(Error::new(Errno::EFAULT))
                };
                if let Some(err) = fault {
                    frame::log_debug!("pid {} ({}): {:?} at rip {:#x}", process.pid(), process.name(), e, user.rip());
                    let info = if err.errno() == Errno::EIO {
                        const BUS_ADRERR: i32 = 2;
                        SigInfo::fault(SIGBUS, BUS_ADRERR, e.fault_addr)
                    } else {
                        exception_signal(&e, user.rip(), &user.fpu_bytes())
                    };
                    force_fault_signal(&process, &thread, info);
                }
            }
            ReturnReason::Interrupt => {}
        }
        if thread.exiting.load(Ordering::Acquire) {
            break;
        }
        frame::task::preempt_point();
    }
    super::exit::thread_exited(&process, &thread);
}
