//! Process exit, zombies, reaping and wait4(2).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::{find_process, remove_from_table, Pid, Process, Usage, INIT_PID};
use crate::error::{Errno, Error, Result};

/// Encodes a normal exit for wait(2): status in bits 8..16.
pub fn exit_status_code(code: i32) -> i32 {
    (code & 0xff) << 8
}

/// Encodes death by a signal (plus the core-dump bit 0x80).
pub fn signal_status_code(sig: i32, core: bool) -> i32 {
    (sig & 0x7f) | if core { 0x80 } else { 0 }
}

/// Ends `process` with wait status `status`: releases its memory and files,
/// hands its children to init, and wakes its parent.
pub fn do_exit(process: &Arc<Process>, status: i32) {
    if process.exit_status.compare_exchange(-1, status, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return; // already exiting
    }
    // Teardown allocates nothing: one thread at a time, off the list lock.
    while let Some(t) = process.take_thread_to_stop() {
        clear_child_tid(process, &t);
        t.wake();
    }
    process.files().release();
    process.signals.timers.clear();
    super::itimer::cancel_real(process);
    crate::ipc::on_exit(process.pid());
    crate::fs::on_process_exit(process.pid(), process.sid());
    // The shared sealed placeholder: no page table to allocate per exit.
    if let Ok(empty) = crate::mm::Vmar::placeholder() {
        drop(process.replace_vm(empty));
    }
    super::fork::release_vfork_parent(process);
    process.exit_readiness.notify(crate::fs::POLLIN);

    if process.pid() == INIT_PID {
        let code = if status & 0x7f == 0 { (status >> 8) & 0xff } else { 128 + (status & 0x7f) };
        crate::system::power_off(code as u32);
    }
    // Re-parent children to the nearest subreaper ancestor, else init.
    let children = core::mem::take(&mut *process.children.lock());
    if !children.is_empty() {
        let mut reaper = process.parent();
        while let Some(r) = reaper.clone() {
            if r.subreaper.load(Ordering::Relaxed) && r.exit_status().is_none() {
                break;
            }
            reaper = r.parent();
        }
        if let Some(init) = reaper.or_else(|| find_process(INIT_PID)) {
            for c in &children {
                c.set_parent(&init);
                let sig = c.pdeathsig.load(Ordering::Relaxed) as usize;
                if sig != 0 {
                    super::signal::send_to_process(c, super::signal::SigInfo::new(sig, super::signal::SI_KERNEL));
                }
            }
            // The one allocation left in exit: the reaper's child list
            // may have to grow (docs/robustness.md, infallible sites).
            init.children.lock().extend(children.iter().cloned());
            init.child_wait.wake_all();
        }
    }
    // Groups this exit may orphan: our own and our children's, each once
    // (a group is checked at its first child), without a list of them.
    super::signal::hup_if_orphaned_and_stopped(process.pgid());
    for (i, c) in children.iter().enumerate() {
        let g = c.pgid();
        if g != process.pgid() && !children[..i].iter().any(|d| d.pgid() == g) {
            super::signal::hup_if_orphaned_and_stopped(g);
        }
    }
    drop(children);
    // The parent hears of it when the last thread is gone: here if there
    // is none (left), else in `thread_exited`.
    if process.threads.lock().live.is_empty() {
        notify_exit(process);
    }
}

/// Tells the parent of `process`'s exit, once: the exit signal, a wake-up
/// of wait(2), or the reaping itself for a parent that ignores SIGCHLD.
/// Called when the process has exited and its last thread is gone (Linux
/// notifies the parent of a thread group leader only when the group is
/// empty, so wait(2) does not return while threads still run).
fn notify_exit(process: &Arc<Process>) {
    let Some(status) = process.exit_status() else { return };
    if process.exit_notified.swap(true, Ordering::AcqRel) {
        return;
    }
    let (code, info_status) = match status & 0x7f {
        0 => (super::signal::CLD_EXITED, (status >> 8) & 0xff),
        sig if status & 0x80 != 0 => (super::signal::CLD_DUMPED, sig),
        sig => (super::signal::CLD_KILLED, sig),
    };
    // The parent hears of the exit through the clone's exit signal
    // (SIGCHLD for fork; any signal, or none, for clone).
    super::signal::notify_parent_with(process, process.exit_signal.load(Ordering::Relaxed), code, info_status);
    // A parent ignoring SIGCHLD (SIG_IGN or SA_NOCLDWAIT) gets no zombies:
    // the child is reaped at once (wait(2) NOTES).
    const SA_NOCLDWAIT: u64 = 2;
    if let Some(parent) = process.parent() {
        let act = parent.signals.action(super::signal::SIGCHLD);
        if act.handler == super::signal::SIG_IGN || act.flags & SA_NOCLDWAIT != 0 {
            parent.children.lock().retain(|c| !Arc::ptr_eq(c, process));
            remove_from_table(process.pid());
            process.exit_readiness.notify(crate::fs::POLLHUP);
            parent.child_wait.wake_all();
        }
    }
}

/// CLONE_CHILD_CLEARTID / set_tid_address: zero the word and wake a futex
/// waiter on it (pthread_join).
pub(super) fn clear_child_tid(process: &Process, t: &super::Thread) {
    // First the robust futexes the thread still holds (Linux's
    // exit_robust_list runs before the tid is cleared).
    let head = t.robust_list.swap(0, Ordering::AcqRel);
    if head != 0 {
        super::futex::exit_robust_list(&process.vm(), head as usize, t.tid());
    }
    let addr = t.clear_child_tid.swap(0, Ordering::AcqRel);
    if addr != 0 {
        let vm = process.vm();
        if vm.write_bytes(addr as usize, &0u32.to_le_bytes()).is_ok() {
            super::futex::wake_address(&vm, addr as usize);
        }
    }
}

/// exit(2) of one thread: the process ends with its last thread.
pub fn exit_thread(process: &Arc<Process>, thread: &Arc<super::Thread>, status: i32) {
    if process.other_running_threads(thread) == 0 {
        return do_exit(process, status);
    }
    thread.exiting.store(true, Ordering::Release);
    clear_child_tid(process, thread);
}

/// Called when a thread's task leaves its user loop.
pub(crate) fn thread_exited(process: &Arc<Process>, thread: &Arc<super::Thread>) {
    process.retire_thread(thread);
    process.threads_changed.wake_all();
    if process.exit_status().is_some() && process.threads.lock().live.is_empty() {
        notify_exit(process);
    }
    // A stop may have been waiting for this thread only.
    super::signal_frame::complete_stop(process);
}

/// Which children wait4 is interested in.
#[derive(Clone, Copy, Debug)]
pub enum WaitTarget {
    Any,
    Pid(Pid),
    Pgid(Pid),
}

impl WaitTarget {
    /// From wait4's `pid` argument, relative to the caller.
    pub fn from_arg(pid: i32, caller: &Process) -> WaitTarget {
        match pid {
            -1 => WaitTarget::Any,
            0 => WaitTarget::Pgid(caller.pgid()),
            p if p > 0 => WaitTarget::Pid(p as Pid),
            p => WaitTarget::Pgid(p.unsigned_abs()),
        }
    }

    fn matches(&self, p: &Process) -> bool {
        self.matches_id(p)
    }

    fn matches_id(&self, p: &Process) -> bool {
        match *self {
            WaitTarget::Any => true,
            WaitTarget::Pid(pid) => p.pid() == pid,
            WaitTarget::Pgid(g) => p.pgid() == g,
        }
    }
}

/// What wait4/waitid report.
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitOptions {
    pub nohang: bool,
    pub exited: bool,
    pub stopped: bool,
    pub continued: bool,
    /// Leave the child waitable (WNOWAIT).
    pub nowait: bool,
    /// Which children count: `Some(true)` only clone children (whose exit
    /// signal is not SIGCHLD, __WCLONE), `Some(false)` only ordinary ones,
    /// `None` all (__WALL).
    pub clone_children: Option<bool>,
}

/// The first matching child with something to report: `(child, wait
/// status, reaped)`. An exited child is taken off the children list
/// (reaped) unless `opts.nowait`.
fn find_event(parent: &Process, target: WaitTarget, opts: WaitOptions) -> Result<Option<(Arc<Process>, i32, bool)>> {
    let mut children = parent.children.lock();
    let wanted = |c: &Process| {
        target.matches(c)
            && opts.clone_children.is_none_or(|clone| clone == (c.exit_signal.load(Ordering::Relaxed) != super::signal::SIGCHLD as u32))
    };
    if !children.iter().any(|c| wanted(c)) {
        return Err(Error::new(Errno::ECHILD));
    }
    for i in 0..children.len() {
        let c = &children[i];
        if !wanted(c) {
            continue;
        }
        if let Some(status) = c.exit_status().filter(|_| opts.exited && c.exit_reported()) {
            if opts.nowait {
                return Ok(Some((c.clone(), status, false)));
            }
            return Ok(Some((children.remove(i), status, true)));
        }
        if opts.stopped {
            let sig = if opts.nowait { c.signals.stop_event.load(Ordering::Acquire) } else { c.signals.stop_event.swap(0, Ordering::AcqRel) };
            if sig != 0 {
                return Ok(Some((c.clone(), 0x7f | ((sig as i32) << 8), false)));
            }
        }
        if opts.continued {
            let cont = if opts.nowait { c.signals.cont_event.load(Ordering::Acquire) } else { c.signals.cont_event.swap(false, Ordering::AcqRel) };
            if cont {
                return Ok(Some((c.clone(), 0xffff, false)));
            }
        }
    }
    Ok(None)
}

/// Waits for a matching child to change state. Returns `(pid, wait status,
/// the child's resource usage)` (its reaped descendants' included, as
/// wait4(2) reports it), or `None` with `nohang` if nothing is ready.
pub fn wait_child(
    parent: &Arc<Process>,
    thread: &super::Thread,
    target: WaitTarget,
    opts: WaitOptions,
) -> Result<Option<(Pid, i32, Usage)>> {
    let check = || -> Result<Option<(Pid, i32, Usage)>> {
        let Some((child, status, reaped)) = find_event(parent, target, opts)? else {
            return Ok(None);
        };
        // Outside the children lock: the child's usage takes its own
        // process-level locks.
        let usage = child.total_usage();
        if reaped {
            parent.add_child_usage(&usage);
            // The table lock ranks above (outside) process locks.
            remove_from_table(child.pid());
            child.exit_readiness.notify(crate::fs::POLLHUP);
        }
        Ok(Some((child.pid(), status, usage)))
    };
    if opts.nohang {
        return check();
    }
    super::signal::wait_interruptible(parent, thread, &parent.child_wait, || match check() {
        Ok(None) => None,
        other => Some(other),
    })?
}
