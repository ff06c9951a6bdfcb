//! Process exit, zombies, reaping and wait4(2).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::{find_process, remove_from_table, Pid, Process, INIT_PID};
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
    for t in process.threads() {
        t.exiting.store(true, Ordering::Release);
        // CLONE_CHILD_CLEARTID / set_tid_address: zero the word (the futex
        // wake comes with futexes).
        let addr = t.clear_child_tid.swap(0, Ordering::AcqRel);
        if addr != 0 {
            let _ = process.vm().write_bytes(addr as usize, &0u32.to_le_bytes());
        }
    }
    *process.files().lock() = crate::fs::FileTable::default();
    if let Ok(empty) = crate::mm::Vmar::new() {
        drop(process.replace_vm(Arc::new(empty)));
    }
    super::fork::release_vfork_parent(process);

    if process.pid() == INIT_PID {
        let code = if status & 0x7f == 0 { (status >> 8) & 0xff } else { 128 + (status & 0x7f) };
        frame::println!("trellis: poweroff status={code}");
        frame::power_off(code as u32);
    }
    // Re-parent children to init.
    let children = core::mem::take(&mut *process.children.lock());
    if !children.is_empty() {
        if let Some(init) = find_process(INIT_PID) {
            for c in &children {
                *c.parent.lock() = Arc::downgrade(&init);
            }
            init.children.lock().extend(children);
            init.child_wait.wake_all();
        }
    }
    if let Some(parent) = process.parent() {
        parent.child_wait.wake_all();
    }
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
        match *self {
            WaitTarget::Any => true,
            WaitTarget::Pid(pid) => p.pid() == pid,
            WaitTarget::Pgid(g) => p.pgid() == g,
        }
    }
}

/// Waits for a matching child to become a zombie and reaps it. Returns
/// `(pid, wait status)`, or `None` with `nohang` if none is ready yet.
pub fn wait_child(parent: &Arc<Process>, target: WaitTarget, nohang: bool) -> Result<Option<(Pid, i32)>> {
    let reap = || -> Result<Option<(Pid, i32)>> {
        let mut children = parent.children.lock();
        if !children.iter().any(|c| target.matches(c)) {
            return Err(Error::new(Errno::ECHILD));
        }
        let pos = children.iter().position(|c| target.matches(c) && c.exit_status().is_some());
        Ok(pos.map(|i| {
            let child = children.remove(i);
            let status = child.exit_status().unwrap_or(0);
            remove_from_table(child.pid());
            (child.pid(), status)
        }))
    };
    if nohang {
        return reap();
    }
    parent.child_wait.wait_until(|| match reap() {
        Ok(None) => None,
        other => Some(other),
    })
}
