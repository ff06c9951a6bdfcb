//! The life of a user thread: run user code, serve its syscalls and faults.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use frame::task::TaskOptions;
use frame::user::{CpuException, ReturnReason, UserContext};

use super::exit::{do_exit, signal_status_code};
use super::{Pid, Process, Thread};
use crate::error::Result;
use crate::syscall::{dispatch, Context};

const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGBUS: i32 = 7;
const SIGFPE: i32 = 8;
const SIGSEGV: i32 = 11;

/// Starts the first thread of `process` with registers `user`.
pub fn spawn_user_thread(process: &Arc<Process>, tid: Pid, user: UserContext) -> Result<Arc<Thread>> {
    spawn_user_thread_inner(process, tid, user, 0)
}

pub(crate) fn spawn_user_thread_inner(process: &Arc<Process>, tid: Pid, user: UserContext, sigmask: u64) -> Result<Arc<Thread>> {
    let thread = process.add_thread(tid);
    thread.sigmask.store(sigmask, Ordering::Relaxed);
    let (p, t) = (process.clone(), thread.clone());
    TaskOptions::new(move || user_loop(p, t, user)).data(thread.clone()).spawn()?;
    Ok(thread)
}

/// The signal a fatal CPU exception raises (delivery comes later: for now
/// the process dies of it, as with the default action).
fn exception_signal(e: &CpuException) -> (i32, bool) {
    match e.vector {
        CpuException::DIVIDE => (SIGFPE, true),
        CpuException::X87 | CpuException::SIMD => (SIGFPE, true),
        CpuException::INVALID_OPCODE => (SIGILL, true),
        CpuException::DEBUG | CpuException::BREAKPOINT => (SIGTRAP, true),
        CpuException::ALIGNMENT => (SIGBUS, true),
        _ => (SIGSEGV, true),
    }
}

fn user_loop(process: Arc<Process>, thread: Arc<Thread>, mut user: UserContext) {
    loop {
        let vm = process.vm();
        let t0 = frame::timer::monotonic_ns();
        let reason = user.execute(vm.space());
        let t1 = frame::timer::monotonic_ns();
        process.utime_ns.fetch_add(t1 - t0, Ordering::Relaxed);
        match reason {
            ReturnReason::Syscall => {
                drop(vm);
                let mut ctx = Context { process: &process, thread: &thread, user: &mut user };
                dispatch(&mut ctx);
            }
            ReturnReason::Exception(e) => {
                let handled = e.vector == CpuException::PAGE_FAULT
                    && vm.handle_page_fault(e.fault_addr as usize, e.is_write(), e.is_instruction_fetch()).is_ok();
                if !handled {
                    let (sig, core) = exception_signal(&e);
                    frame::log_info!(
                        "pid {} ({}) killed by signal {sig}: {:?} at rip {:#x}",
                        process.pid(),
                        process.name(),
                        e,
                        user.rip()
                    );
                    do_exit(&process, signal_status_code(sig, core));
                }
            }
            ReturnReason::Interrupt => {}
        }
        process.stime_ns.fetch_add(frame::timer::monotonic_ns() - t1, Ordering::Relaxed);
        if thread.exiting.load(Ordering::Acquire) {
            break;
        }
        frame::task::preempt_point();
    }
}
