//! Signal delivery on the way back to user mode: default actions, the
//! x86-64 `rt_sigframe` (pretcode, ucontext, siginfo, FXSAVE area) and
//! rt_sigreturn.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use frame::user::{GeneralRegs, UserContext};

use super::exit::{do_exit, signal_status_code};
use super::signal::{
    default_action, dequeue, force_fault_signal, notify_parent, send_to_process, DefaultAction, SigAction, SigInfo, CLD_STOPPED,
    SA_NODEFER, SA_ONSTACK, SA_RESETHAND, SA_RESTART, SIGALRM, SIGKILL, SIG_DFL, SIG_IGN, SIGSEGV, SI_KERNEL,
    SS_AUTODISARM, SS_DISABLE, UNBLOCKABLE, bit,
};
use super::{Process, Thread};
use crate::error::{Errno, Error, Result};

frame::pod_struct! {
    /// `struct sigcontext` (x86-64), 256 bytes.
    #[derive(Debug)]
    pub struct SigContext {
        pub r8: u64, pub r9: u64, pub r10: u64, pub r11: u64,
        pub r12: u64, pub r13: u64, pub r14: u64, pub r15: u64,
        pub rdi: u64, pub rsi: u64, pub rbp: u64, pub rbx: u64,
        pub rdx: u64, pub rax: u64, pub rcx: u64, pub rsp: u64,
        pub rip: u64, pub eflags: u64,
        pub cs_gs_fs_ss: u64,
        pub err: u64, pub trapno: u64, pub oldmask: u64, pub cr2: u64,
        pub fpstate: u64,
        pub reserved: [u64; 8],
    }
}
const _: () = assert!(core::mem::size_of::<SigContext>() == 256);

frame::pod_struct! {
    /// The kernel's `struct ucontext` (x86-64), 304 bytes.
    pub struct UContext {
        pub flags: u64,
        pub link: u64,
        pub ss_sp: u64,
        pub ss_flags: i32,
        pub ss_pad: i32,
        pub ss_size: u64,
        pub mcontext: SigContext,
        pub sigmask: u64,
    }
}
const _: () = assert!(core::mem::size_of::<UContext>() == 304);

frame::pod_struct! {
    /// What delivery writes, from pretcode to the end of the FPU state, as
    /// `setup_frame` lays it out: the FPU state is 64-byte aligned and the
    /// ucontext 16 bytes below pretcode + ucontext + siginfo under it, so
    /// the gap between siginfo and the FPU state is always 16 bytes.
    struct SigFrameImage {
        pretcode: u64,
        uc: UContext,
        info: SigInfo,
        gap: [u64; 2],
        fpu: [u8; 512],
    }
}

frame::pod_struct! {
    /// What rt_sigreturn reads in one copy when the frame is where
    /// delivery put it: [`SigFrameImage`] without pretcode. Aligned so
    /// that the FPU state (at 448) is, and is loaded where it is.
    #[repr(align(16))]
    struct SigReturnImage {
        uc: UContext,
        info: SigInfo,
        gap: [u64; 2],
        fpu: [u8; 512],
    }
}
const _: () = assert!(core::mem::offset_of!(SigReturnImage, fpu) as u64 == FPSTATE_FROM_UC);

/// A thread's buffer for rt_sigreturn's copy of the frame, allocated at
/// its first rt_sigreturn and kept: a fresh one on the stack would be
/// zeroed (960 bytes) on every call only to be overwritten by the copy.
/// What a call leaves in it is never read by the next: each call uses only
/// the bytes its own copies filled. Only the thread itself locks it, from
/// its own rt_sigreturn, so the lock is never contended and cannot take
/// part in a deadlock although it is held across the user copies (which
/// may sleep to resolve a fault): hence unranked.
pub(crate) struct SigReturnBuf(frame::sync::Mutex<Vec<SigReturnImage>>);

impl Default for SigReturnBuf {
    fn default() -> Self {
        SigReturnBuf(frame::sync::Mutex::new(Vec::new()))
    }
}

const UC_SIZE: usize = core::mem::size_of::<UContext>();
const INFO_SIZE: usize = core::mem::size_of::<SigInfo>();
/// Where `setup_frame` puts the FPU state, from the ucontext: the FPU
/// state is 64-byte aligned and the ucontext 16 bytes below
/// pretcode + ucontext + siginfo under it, so the distance is fixed.
const FPSTATE_FROM_UC: u64 = 448;
const _: () = assert!((8 + UC_SIZE + INFO_SIZE) as u64 + 8 == FPSTATE_FROM_UC);
const _: () = assert!(core::mem::offset_of!(SigFrameImage, fpu) as u64 == 8 + FPSTATE_FROM_UC);

/// Linux skips this much below the interrupted stack pointer (the red zone).
const RED_ZONE: u64 = 128;
const FPU_SIZE: u64 = 512;
/// The most a signal frame takes on the stack past the red zone: the FPU
/// state with its 64-byte alignment, the return address, the ucontext
/// and the siginfo with the handler's alignment (AT_MINSIGSTKSZ, Linux's
/// get_sigframe_size).
pub const MAX_FRAME_SIZE: u64 = FPU_SIZE + 63 + 8 + core::mem::size_of::<UContext>() as u64 + core::mem::size_of::<SigInfo>() as u64 + 15 + 8;
/// uc_flags: UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS.
const UC_FLAGS: u64 = 0x6;
const UC_STRICT_RESTORE_SS: u64 = 0x4;
/// User code and stack selectors (the only ones a 64-bit program can use).
const USER_CS: u64 = 0x33;
const USER_SS: u64 = 0x2b;
/// RFLAGS bits that are always set in user mode (IF and the fixed bit 1);
/// the saved context shows them as Linux's does.
const RFLAGS_IF: u64 = 1 << 9;
const RFLAGS_FIXED: u64 = 1 << 1;
const RFLAGS_TF: u64 = 1 << 8;
const RFLAGS_DF: u64 = 1 << 10;
/// RFLAGS bits rt_sigreturn takes from the signal frame: CF PF AF ZF SF TF
/// DF OF AC (and RF, which frame does not keep), as Linux's FIX_EFLAGS.
const SIGRETURN_RFLAGS: u64 = 0x4_0dd5;

/// Turns expired timers (ITIMER_REAL, POSIX timers), which the timer
/// interrupt only marked, and expired CPU-time itimers into signals.
/// Each kind is looked at only if its flag says there may be work, as
/// `work_pending` does (a POSIX timer's expiry sets `timers.fired`; the
/// CPU clocks matter only under a finite RLIMIT_CPU or an armed itimer).
pub fn run_timers(process: &Arc<Process>) {
    let s = &process.signals;
    if s.alarm_fired.swap(false, Ordering::AcqRel) {
        super::itimer::on_alarm(process);
        send_to_process(process, SigInfo::new(SIGALRM, SI_KERNEL));
    }
    if s.timers.fired.load(Ordering::Acquire) {
        super::posix_timer::run_expired(process);
    }
    if s.cpu_watch.load(Ordering::Acquire) || s.cpu_itimers_armed.load(Ordering::Acquire) {
        super::itimer::run_cpu(process);
    }
}

/// Whether the return to user mode has anything to do for signals:
/// expired timers to turn into signals, CPU-time limits or itimers to
/// look at, a stop to join, a deliverable signal or a mask to restore.
/// Lock-free: the common return from a system call takes only loads here.
pub fn work_pending(process: &Process, thread: &Thread) -> bool {
    let s = &process.signals;
    // Looked at together, without a branch per flag: on the common return
    // (nothing to do) every one of them is read anyway.
    let flags = u8::from(s.alarm_fired.load(Ordering::Acquire))
        | u8::from(s.timers.fired.load(Ordering::Acquire))
        | u8::from(s.cpu_itimers_armed.load(Ordering::Acquire))
        | u8::from(s.cpu_watch.load(Ordering::Acquire))
        | u8::from(s.stopped.load(Ordering::Acquire))
        | u8::from(thread.signals.saved_mask.is_set());
    flags != 0 || super::signal::deliverable(process, thread) != 0
}

/// Handles pending signals before `user` resumes. `restart` carries the
/// syscall number if the last syscall was interrupted (rax holds
/// -ERESTARTSYS / -ERESTARTNOHAND). `vm` is the address space `user` runs
/// in, where signal frames go.
pub fn handle_signals(
    process: &Arc<Process>,
    thread: &Arc<Thread>,
    vm: &crate::mm::Vmar,
    user: &mut UserContext,
    restart: Option<u64>,
) {
    let mut restart = restart;
    let mut delivered = false;
    run_timers(process);
    // Another thread stopped the process: join the stop.
    if process.signals.stopped.load(Ordering::Acquire) {
        park(process, thread);
    }
    while let Some(info) = dequeue(process, thread) {
        let sig = info.signo as usize;
        let act = process.signals.action(sig);
        if sig == SIGKILL || act.handler == SIG_DFL {
            match default_action(sig) {
                DefaultAction::Ignore | DefaultAction::Continue => continue,
                DefaultAction::Terminate => return do_exit(process, signal_status_code(sig as i32, false)),
                DefaultAction::Core => return do_exit(process, signal_status_code(sig as i32, true)),
                DefaultAction::Stop => {
                    // Job-control stops are discarded in an orphaned group.
                    if sig != super::signal::SIGSTOP && super::signal::is_orphaned_pgrp(process.pgid()) {
                        continue;
                    }
                    stop(process, thread, sig);
                    if process.exit_status().is_some() || thread.exiting.load(Ordering::Acquire) {
                        return;
                    }
                    continue;
                }
            }
        }
        if act.handler == SIG_IGN {
            continue;
        }
        if let Some(nr) = restart.take() {
            fix_interrupted_syscall(user, nr, Some(act.flags & SA_RESTART != 0));
        }
        if setup_frame(process, thread, vm, user, &info, &act).is_err() {
            // The stack is unusable: Linux forces SIGSEGV (force_sigsegv),
            // whose handler may still run on an alternate stack; if it was
            // SIGSEGV's own frame that failed, the process dies.
            if sig == SIGSEGV {
                return do_exit(process, signal_status_code(SIGSEGV as i32, true));
            }
            force_fault_signal(process, thread, SigInfo::fault(SIGSEGV, SI_KERNEL, 0));
            continue;
        }
        delivered = true;
        // Keep going: every signal still deliverable gets a frame on top,
        // so the last one set up runs first (as on Linux).
    }
    if delivered {
        return;
    }
    // No handler ran: an interrupted syscall restarts transparently.
    if let Some(nr) = restart {
        fix_interrupted_syscall(user, nr, None);
    }
    if let Some(m) = thread.signals.saved_mask.take() {
        thread.sigmask.store(m, Ordering::Relaxed);
    }
}

/// What an interrupted syscall returns. `handler` is `Some(SA_RESTART set)`
/// when a handler runs: then ERESTARTSYS restarts only under SA_RESTART and
/// ERESTARTNOHAND (pause, sigsuspend, poll, select) and
/// ERESTART_RESTARTBLOCK (relative sleeps) fail with EINTR. Without a
/// handler (a stop and continue, say) all restart transparently, the last
/// through restart_syscall.
fn fix_interrupted_syscall(user: &mut UserContext, nr: u64, handler: Option<bool>) {
    let rax = user.rax() as i64;
    const RESTART_SYSCALL: u64 = 219;
    let (restart, nr) = match rax {
        r if r == -(Errno::ERESTARTSYS as i64) => (handler.unwrap_or(true), nr),
        r if r == -(Errno::ERESTARTNOINTR as i64) => (true, nr),
        r if r == -(Errno::ERESTARTNOHAND as i64) => (handler.is_none(), nr),
        r if r == -(Errno::ERESTART_RESTARTBLOCK as i64) => (handler.is_none(), RESTART_SYSCALL),
        _ => return,
    };
    if restart {
        user.set_rax(nr);
        user.set_rip(user.rip().wrapping_sub(2)); // back onto the `syscall` instruction
    } else {
        user.set_rax(-(Errno::EINTR as i64) as u64);
    }
}

/// A job-control stop of the whole process (signal(7)): the thread that
/// takes the stop signal starts it and wakes the others, every thread parks
/// on its way back to user mode, and the parent hears of the stop once all
/// of them are parked.
fn stop(process: &Arc<Process>, thread: &Arc<Thread>, sig: usize) {
    let s = &process.signals;
    if !s.stopped.swap(true, Ordering::AcqRel) {
        // A continue not yet collected by wait is superseded.
        s.cont_event.store(false, Ordering::Release);
        s.stop_sig.store(sig as u64, Ordering::Release);
        for t in process.threads() {
            if !core::ptr::eq(&*t, &**thread) {
                t.wake();
            }
        }
    }
    park(process, thread);
}

/// Keeps `thread` off the CPU while its process is stopped (until SIGCONT,
/// SIGKILL or the thread's exit).
fn park(process: &Arc<Process>, thread: &Thread) {
    let s = &process.signals;
    thread.signals.parked.store(true, Ordering::Release);
    complete_stop(process);
    s.stop_wq.wait_until(|| {
        let killed = super::signal::deliverable(process, thread) & bit(SIGKILL) != 0;
        (!s.stopped.load(Ordering::Acquire) || killed || thread.exiting.load(Ordering::Acquire)).then_some(())
    });
    thread.signals.parked.store(false, Ordering::Release);
}

/// Reports a stop in progress to the parent once every live thread of
/// `process` is parked (also called when a thread leaves).
pub(crate) fn complete_stop(process: &Arc<Process>) {
    let s = &process.signals;
    if !s.stopped.load(Ordering::Acquire) || s.stop_sig.load(Ordering::Acquire) == 0 {
        return;
    }
    let all_parked = process
        .threads()
        .iter()
        .all(|t| t.signals.parked.load(Ordering::Acquire) || t.exiting.load(Ordering::Acquire));
    if !all_parked {
        return;
    }
    let sig = s.stop_sig.swap(0, Ordering::AcqRel);
    if sig != 0 && s.stopped.load(Ordering::Acquire) {
        s.stop_event.store(sig, Ordering::Release);
        notify_parent(process, CLD_STOPPED, sig as i32);
    }
}

fn setup_frame(
    process: &Process,
    thread: &Thread,
    vm: &crate::mm::Vmar,
    user: &mut UserContext,
    info: &SigInfo,
    act: &SigAction,
) -> Result<()> {
    let regs = user.general_regs();
    let altstack = *thread.signals.altstack.lock();
    let (ss_sp, ss_flags, ss_size) = altstack;
    let nested = super::signal::on_stack(&altstack, regs.rsp);
    let entering = act.flags & SA_ONSTACK != 0 && ss_size != 0 && !nested;
    // The stack pointer is the program's to choose: wrap instead of
    // overflowing (an unusable address then fails the writes below).
    let mut sp = if entering { ss_sp.wrapping_add(ss_size) } else { regs.rsp.wrapping_sub(RED_ZONE) };
    sp = sp.wrapping_sub(FPU_SIZE) & !63;
    let fpstate = sp;
    let frame_size = 8 + core::mem::size_of::<UContext>() as u64 + core::mem::size_of::<SigInfo>() as u64;
    sp = (sp.wrapping_sub(frame_size) & !15).wrapping_sub(8); // handler entry: rsp + 8 is 16-aligned
    let uc_addr = sp + 8;
    // A frame that does not fit on the alternate stack is an overflow of
    // it (Linux's get_sigframe).
    if (nested || entering) && !(sp > ss_sp && sp - ss_sp <= ss_size) {
        return Err(Error::new(Errno::EFAULT));
    }
    let info_addr = uc_addr + core::mem::size_of::<UContext>() as u64;

    let old_mask = thread.signals.saved_mask.take().unwrap_or(thread.sigmask.load(Ordering::Relaxed));
    let fault = &thread.signals.fault;
    let (trapno, err, cr2) =
        (fault.trapno.load(Ordering::Relaxed), fault.err.load(Ordering::Relaxed), fault.cr2.load(Ordering::Relaxed));
    // The whole frame, pretcode to FPU state, goes out in one copy, built
    // in place (no zeroed buffer to copy the parts into). The layout is
    // fixed by the arithmetic above (mod 2^64: the program chose rsp).
    debug_assert_eq!(fpstate.wrapping_sub(sp), 8 + FPSTATE_FROM_UC);
    let image = SigFrameImage {
        pretcode: act.restorer,
        uc: UContext {
            flags: UC_FLAGS,
            link: 0,
            ss_sp,
            ss_flags,
            ss_pad: 0,
            ss_size,
            mcontext: SigContext {
                r8: regs.r8, r9: regs.r9, r10: regs.r10, r11: regs.r11,
                r12: regs.r12, r13: regs.r13, r14: regs.r14, r15: regs.r15,
                rdi: regs.rdi, rsi: regs.rsi, rbp: regs.rbp, rbx: regs.rbx,
                rdx: regs.rdx, rax: regs.rax, rcx: regs.rcx, rsp: regs.rsp,
                rip: regs.rip, eflags: regs.rflags | RFLAGS_IF | RFLAGS_FIXED,
                cs_gs_fs_ss: USER_CS | (USER_SS << 48),
                err, trapno, oldmask: old_mask, cr2,
                fpstate,
                reserved: [0; 8],
            },
            sigmask: old_mask,
        },
        info: *info,
        gap: [0; 2],
        fpu: user.fpu_bytes(),
    };
    vm.write_bytes(sp as usize, frame::Pod::as_bytes(&image))?;
    if ss_flags & SS_AUTODISARM != 0 {
        *thread.signals.altstack.lock() = (0, SS_DISABLE, 0);
    }

    let sig = info.signo as usize;
    let mut new_mask = old_mask | act.mask;
    if act.flags & SA_NODEFER == 0 {
        new_mask |= bit(sig);
    }
    thread.sigmask.store(new_mask & !UNBLOCKABLE, Ordering::Relaxed);
    if act.flags & SA_RESETHAND != 0 {
        process.signals.reset_handler(sig);
    }
    // The handler starts with a clean FPU/SSE state (the interrupted one
    // is in the frame and comes back with rt_sigreturn).
    user.reset_fpu();
    let mut r = regs;
    r.rsp = sp;
    r.rip = act.handler;
    r.rdi = sig as u64;
    r.rsi = info_addr;
    r.rdx = uc_addr;
    r.rax = 0;
    // As Linux: DF clear on entry (the ABI), and TF clear so a program
    // single-stepping itself does not trap again in its SIGTRAP handler.
    r.rflags &= !(RFLAGS_DF | RFLAGS_TF);
    user.set_general_regs(&r);
    Ok(())
}

/// rt_sigreturn: restores the context saved by `setup_frame` (or built by
/// the program). Returns the restored rax so the dispatcher leaves it in
/// place. A frame that cannot be read or restored gets the caller a
/// SIGSEGV, as on Linux (its `badframe` path).
/// `vm` is the caller's address space (the system call's).
pub fn sigreturn(process: &Arc<Process>, thread: &Thread, vm: &crate::mm::Vmar, user: &mut UserContext) -> Result<isize> {
    match restore_frame(thread, vm, user) {
        Ok(rax) => Ok(rax as isize),
        Err(_) => {
            frame::log_debug!("pid {} ({}): bad rt_sigreturn frame", process.pid(), process.name());
            force_fault_signal(process, thread, SigInfo::fault(SIGSEGV, SI_KERNEL, 0));
            Ok(0)
        }
    }
}

fn restore_frame(thread: &Thread, vm: &crate::mm::Vmar, user: &mut UserContext) -> Result<u64> {
    let mut buf = thread.signals.sigreturn_buf.0.lock();
    if buf.is_empty() {
        // Without memory for the buffer, a zeroed one on the stack serves.
        let _ = crate::fallible::push(&mut buf, <SigReturnImage as frame::Pod>::new_zeroed());
    }
    match buf.first_mut() {
        Some(image) => restore_frame_via(thread, vm, user, image),
        None => restore_frame_via(thread, vm, user, &mut <SigReturnImage as frame::Pod>::new_zeroed()),
    }
}

/// [`restore_frame`] with `image` as the buffer for the copies (its
/// previous contents are not read).
fn restore_frame_via(thread: &Thread, vm: &crate::mm::Vmar, user: &mut UserContext, image: &mut SigReturnImage) -> Result<u64> {
    let uc_addr = user.rsp(); // the handler's `ret` popped pretcode
    // A frame built by `setup_frame` comes back in one copy: ucontext,
    // siginfo and the FPU state where setup_frame put it. A frame the
    // program built itself (or one that ends where memory does) is read
    // in two, as the ucontext says.
    let whole = vm.read_bytes(uc_addr as usize, frame::Pod::as_bytes_mut(image)).is_ok();
    if !whole {
        vm.read_bytes(uc_addr as usize, frame::Pod::as_bytes_mut(&mut image.uc))?;
    }
    let uc = &image.uc;
    thread.sigmask.store(uc.sigmask & !UNBLOCKABLE, Ordering::Relaxed);
    let m = &uc.mcontext;
    let regs = GeneralRegs {
        rax: m.rax, rbx: m.rbx, rcx: m.rcx, rdx: m.rdx, rsi: m.rsi, rdi: m.rdi, rbp: m.rbp, rsp: m.rsp,
        r8: m.r8, r9: m.r9, r10: m.r10, r11: m.r11, r12: m.r12, r13: m.r13, r14: m.r14, r15: m.r15,
        rip: m.rip, rflags: (user.general_regs().rflags & !SIGRETURN_RFLAGS) | (m.eflags & SIGRETURN_RFLAGS),
    };
    // Only the arithmetic flags, DF, TF and AC come from the frame (Linux's
    // FIX_EFLAGS); the others (NT, ID) keep their value at the call. frame
    // drops the privileged ones (IOPL, IF, VM, ...) whatever we pass.
    user.set_general_regs(&regs);
    // Linux loads CS and SS with RPL 3 forced; any code segment but the
    // 64-bit user one makes the return to user mode fault (the 32-bit one
    // would need compat mode, which Trellis does not have). A bad SS is
    // replaced unless the frame asks for a strict restore.
    let cs = (m.cs_gs_fs_ss & 0xffff) | 3;
    let ss = (m.cs_gs_fs_ss >> 48) | 3;
    if cs != USER_CS || (uc.flags & UC_STRICT_RESTORE_SS != 0 && ss != USER_SS) {
        return Err(Error::new(Errno::EINVAL));
    }
    if m.fpstate == 0 {
        user.reset_fpu();
    } else {
        // FXRSTOR needs a 16-byte aligned image.
        if m.fpstate % 16 != 0 {
            return Err(Error::new(Errno::EINVAL));
        }
        let fpu = if whole && m.fpstate == uc_addr.wrapping_add(FPSTATE_FROM_UC) {
            &image.fpu
        } else {
            vm.read_bytes(m.fpstate as usize, &mut image.fpu)?;
            &image.fpu
        };
        user.set_fpu_bytes(fpu).map_err(|_| Error::new(Errno::EINVAL))?;
    }
    // The alternate stack as the frame has it (the handler may have changed
    // it, and SS_AUTODISARM disarmed it); errors other than a bad address
    // are ignored, as Linux does.
    let _ = thread.signals.set_altstack(m.rsp, uc.ss_sp, uc.ss_flags, uc.ss_size);
    Ok(m.rax)
}
