//! futex(2): wait queues keyed by user addresses.
//!
//! A private futex is keyed by (address space, address); a shared one by the
//! physical address of the word, so processes mapping the same page meet.
//! The value check and the enqueue are not atomic with respect to user
//! memory (reading it may fault, which may sleep), so a waiter enqueues
//! first and re-reads the word: a waker changes the word before waking, so
//! either the re-read sees the change or the wake finds the waiter queued.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use frame::sync::{SpinLock, WaitQueue};

use super::signal::wait_interruptible_deadline;
use super::{Process, Thread};
use crate::error::{Errno, Error, Result};
use crate::mm::Vmar;

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_REQUEUE: u64 = 3;
const FUTEX_CMP_REQUEUE: u64 = 4;
const FUTEX_WAKE_OP: u64 = 5;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
const FUTEX_PRIVATE_FLAG: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;
const FUTEX_BITSET_MATCH_ANY: u32 = u32::MAX;

/// Lock level of the futex table: above the address-space locks it never
/// holds, below the wait queues it wakes.
const FUTEX_LEVEL: u8 = 46;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    Private(usize, usize),
    Shared(usize),
}

struct Waiter {
    key: Key,
    bitset: u32,
    woken: Arc<AtomicBool>,
    thread: Arc<Thread>,
}

static WAITERS: SpinLock<Vec<Waiter>, FUTEX_LEVEL> = SpinLock::new(Vec::new());
/// Futex sleepers park here and re-check their own flag when woken.
static SLEEP: WaitQueue = WaitQueue::new();

fn key_of(vm: &Arc<Vmar>, uaddr: usize, private: bool) -> Result<Key> {
    if uaddr % 4 != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if private {
        return Ok(Key::Private(Arc::as_ptr(vm) as usize, uaddr));
    }
    // Make sure the page is present, then key by its physical address.
    let mut word = [0u8; 4];
    vm.read_bytes(uaddr, &mut word)?;
    let (frame, _) = vm.space().query(uaddr & !0xfff).ok_or(Error::new(Errno::EFAULT))?;
    Ok(Key::Shared(frame.paddr() + (uaddr & 0xfff)))
}

fn read_u32(vm: &Vmar, uaddr: usize) -> Result<u32> {
    let mut b = [0u8; 4];
    vm.read_bytes(uaddr, &mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Wakes up to `n` waiters on `key` whose bitset overlaps `bitset`.
fn wake_key(key: Key, bitset: u32, n: usize) -> usize {
    let mut woken = Vec::new();
    {
        let mut list = WAITERS.lock();
        let mut i = 0;
        while i < list.len() && woken.len() < n {
            if list[i].key == key && list[i].bitset & bitset != 0 {
                let w = list.remove(i);
                w.woken.store(true, Ordering::Release);
                woken.push(w.thread);
            } else {
                i += 1;
            }
        }
    }
    let count = woken.len();
    for t in woken {
        t.wake();
    }
    count
}

/// Wakes one waiter on a private futex word (thread exit, CLONE_CHILD_CLEARTID).
pub fn wake_address(vm: &Arc<Vmar>, uaddr: usize) {
    if let Ok(k) = key_of(vm, uaddr, true) {
        wake_key(k, FUTEX_BITSET_MATCH_ANY, 1);
    }
    if let Ok(k) = key_of(vm, uaddr, false) {
        wake_key(k, FUTEX_BITSET_MATCH_ANY, 1);
    }
}

fn wait(process: &Arc<Process>, thread: &Arc<Thread>, key: Key, uaddr: usize, val: u32, bitset: u32, deadline: u64) -> Result<isize> {
    let vm = process.vm();
    if read_u32(&vm, uaddr)? != val {
        return Err(Error::new(Errno::EAGAIN));
    }
    let woken = Arc::new(AtomicBool::new(false));
    WAITERS.lock().push(Waiter { key, bitset, woken: woken.clone(), thread: thread.clone() });
    let dequeue = || WAITERS.lock().retain(|w| !Arc::ptr_eq(&w.woken, &woken));
    match read_u32(&vm, uaddr) {
        Ok(v) if v == val => {}
        Ok(_) => {
            dequeue();
            return Err(Error::new(Errno::EAGAIN));
        }
        Err(e) => {
            dequeue();
            return Err(e);
        }
    }
    let r = wait_interruptible_deadline(process, thread, &SLEEP, || woken.load(Ordering::Acquire).then_some(()), deadline);
    dequeue();
    match r {
        Ok(Some(())) => Ok(0),
        Ok(None) => Err(Error::new(Errno::ETIMEDOUT)),
        // Interrupted (signal(7)): without a timeout the wait restarts
        // after a handler with SA_RESTART, or when no handler ran (a stop
        // and continue); with one it restarts only in the latter case
        // (Linux restarts it with the time left; here with the same
        // arguments: exact for FUTEX_WAIT_BITSET's absolute timeout, the
        // full relative timeout again for FUTEX_WAIT), else EINTR.
        Err(_) if deadline == u64::MAX => Err(Error::new(Errno::ERESTARTSYS)),
        Err(_) => Err(Error::new(Errno::ERESTARTNOHAND)),
    }
}

/// Moves up to `n` waiters from `from` to `to`.
fn requeue(from: Key, to: Key, n: usize) -> usize {
    let mut list = WAITERS.lock();
    let mut moved = 0;
    for w in list.iter_mut() {
        if moved == n {
            break;
        }
        if w.key == from {
            w.key = to;
            moved += 1;
        }
    }
    moved
}

/// Deadline (monotonic ns) from a timeout argument, or u64::MAX.
pub type TimeoutFn<'a> = &'a dyn Fn(bool /*absolute*/, bool /*realtime*/) -> Result<u64>;

/// futex(uaddr, op, val, timeout/val2, uaddr2, val3).
pub fn futex(process: &Arc<Process>, thread: &Arc<Thread>, args: &[u64; 6], timeout: TimeoutFn) -> Result<isize> {
    let (uaddr, op, val, uaddr2, val3) = (args[0] as usize, args[1], args[2] as u32, args[4] as usize, args[5] as u32);
    let private = op & FUTEX_PRIVATE_FLAG != 0;
    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
    let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    if realtime && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT {
        return Err(Error::new(Errno::ENOSYS));
    }
    let vm = process.vm();
    match cmd {
        FUTEX_WAIT => {
            let key = key_of(&vm, uaddr, private)?;
            let deadline = timeout(false, realtime)?;
            wait(process, thread, key, uaddr, val, FUTEX_BITSET_MATCH_ANY, deadline)
        }
        FUTEX_WAIT_BITSET => {
            if val3 == 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            let key = key_of(&vm, uaddr, private)?;
            let deadline = timeout(true, realtime)?;
            wait(process, thread, key, uaddr, val, val3, deadline)
        }
        FUTEX_WAKE => Ok(wake_key(key_of(&vm, uaddr, private)?, FUTEX_BITSET_MATCH_ANY, val as usize) as isize),
        FUTEX_WAKE_BITSET => {
            if val3 == 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            Ok(wake_key(key_of(&vm, uaddr, private)?, val3, val as usize) as isize)
        }
        FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
            let n2 = args[3] as u32 as usize; // val2 travels in the timeout slot
            if (val as i32) < 0 || (n2 as i32) < 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            let from = key_of(&vm, uaddr, private)?;
            let to = key_of(&vm, uaddr2, private)?;
            if cmd == FUTEX_CMP_REQUEUE && read_u32(&vm, uaddr)? != val3 {
                return Err(Error::new(Errno::EAGAIN));
            }
            let woken = wake_key(from, FUTEX_BITSET_MATCH_ANY, val as usize);
            let moved = requeue(from, to, n2);
            Ok((woken + moved) as isize)
        }
        FUTEX_WAKE_OP => Err(Error::with_message(Errno::ENOSYS, "FUTEX_WAKE_OP")),
        _ => Err(Error::new(Errno::ENOSYS)),
    }
}
