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
const FUTEX_LOCK_PI: u64 = 6;
const FUTEX_UNLOCK_PI: u64 = 7;
const FUTEX_TRYLOCK_PI: u64 = 8;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_LOCK_PI2: u64 = 13;
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
    // get_futex_key's access_ok(): even a private key, which reads nothing,
    // must name a word in user space.
    if !crate::syscall::access_ok(uaddr as u64, 4) {
        return Err(Error::new(Errno::EFAULT));
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
    // Woken under the list lock (a task wake takes only higher-level
    // locks): thread exit wakes through here, and must not allocate.
    let mut count = 0;
    let mut list = WAITERS.lock();
    let mut i = 0;
    while i < list.len() && count < n {
        if list[i].key == key && list[i].bitset & bitset != 0 {
            let w = list.swap_remove(i);
            w.woken.store(true, Ordering::Release);
            w.thread.wake();
            count += 1;
        } else {
            i += 1;
        }
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
    crate::fallible::push(&mut WAITERS.lock(), Waiter { key, bitset, woken: woken.clone(), thread: thread.clone() })?;
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

fn write_u32(vm: &Vmar, uaddr: usize, v: u32) -> Result<()> {
    vm.write_bytes(uaddr, &v.to_le_bytes())
}

/// FUTEX_WAKE_OP's update of `uaddr2` (encoded in `val3`): applies the
/// operation and returns whether the old value passes the comparison.
/// The kernel is not preempted between the read and the write, so no
/// other thread runs in between (one CPU).
fn wake_op_update(vm: &Vmar, uaddr2: usize, val3: u32) -> Result<bool> {
    const OPARG_SHIFT: u32 = 8;
    let sext12 = |v: u32| ((v << 20) as i32) >> 20;
    let op = (val3 >> 28) & 0xf;
    let cmp = (val3 >> 24) & 0xf;
    let mut oparg = sext12((val3 >> 12) & 0xfff);
    let cmparg = sext12(val3 & 0xfff);
    if op & OPARG_SHIFT != 0 {
        if !(0..32).contains(&oparg) {
            // Linux warns and masks.
            oparg &= 31;
        }
        oparg = 1 << oparg;
    }
    let old = read_u32(vm, uaddr2)?;
    let arg = oparg as u32;
    let new = match op & !OPARG_SHIFT {
        0 => arg,
        1 => old.wrapping_add(arg),
        2 => old | arg,
        3 => old & !arg,
        4 => old ^ arg,
        _ => return Err(Error::new(Errno::ENOSYS)),
    };
    let old_s = old as i32;
    let pass = match cmp {
        0 => old_s == cmparg,
        1 => old_s != cmparg,
        2 => old_s < cmparg,
        3 => old_s <= cmparg,
        4 => old_s > cmparg,
        5 => old_s >= cmparg,
        _ => return Err(Error::new(Errno::ENOSYS)),
    };
    write_u32(vm, uaddr2, new)?;
    Ok(pass)
}

/// Whether anyone waits on `key`.
fn has_waiters(key: Key) -> bool {
    WAITERS.lock().iter().any(|w| w.key == key)
}

/// FUTEX_LOCK_PI / TRYLOCK_PI: takes the lock word at `uaddr` for the
/// caller (its tid), or sleeps until an unlock hands it over. Ownership
/// moves as on Linux (the unlocker writes the next owner's tid); there is
/// no priority boosting, as there are no real-time scheduling classes to
/// boost into.
fn lock_pi(process: &Arc<Process>, thread: &Arc<Thread>, key: Key, uaddr: usize, deadline: u64, try_only: bool) -> Result<isize> {
    let vm = process.vm();
    let me = thread.tid();
    loop {
        let v = read_u32(&vm, uaddr)?;
        let owner = v & FUTEX_TID_MASK;
        if owner == 0 {
            // Free, or left by a dead owner (OWNER_DIED stays for libc).
            let waiters = if has_waiters(key) { FUTEX_WAITERS } else { 0 };
            write_u32(&vm, uaddr, me | (v & FUTEX_OWNER_DIED) | waiters)?;
            return Ok(0);
        }
        if owner == me {
            return Err(Error::new(Errno::EDEADLK));
        }
        if v & FUTEX_OWNER_DIED == 0 && super::find_thread(owner).is_none() {
            return Err(Error::new(Errno::ESRCH));
        }
        if try_only {
            return Err(Error::new(Errno::EAGAIN));
        }
        if v & FUTEX_WAITERS == 0 {
            write_u32(&vm, uaddr, v | FUTEX_WAITERS)?;
        }
        let woken = Arc::new(AtomicBool::new(false));
        crate::fallible::push(
            &mut WAITERS.lock(),
            Waiter { key, bitset: FUTEX_BITSET_MATCH_ANY, woken: woken.clone(), thread: thread.clone() },
        )?;
        let r = wait_interruptible_deadline(process, thread, &SLEEP, || woken.load(Ordering::Acquire).then_some(()), deadline);
        WAITERS.lock().retain(|w| !Arc::ptr_eq(&w.woken, &woken));
        // Handed over by the unlocker?
        if read_u32(&vm, uaddr)? & FUTEX_TID_MASK == me {
            return Ok(0);
        }
        match r {
            Ok(Some(())) => continue,
            Ok(None) => return Err(Error::new(Errno::ETIMEDOUT)),
            // A signal: LOCK_PI is always restarted (Linux's ERESTARTNOINTR).
            Err(_) => return Err(Error::new(Errno::ERESTARTNOINTR)),
        }
    }
}

/// FUTEX_UNLOCK_PI: EPERM unless the caller owns the word; the first
/// waiter, if any, becomes the owner.
fn unlock_pi(vm: &Arc<Vmar>, thread: &Thread, key: Key, uaddr: usize) -> Result<isize> {
    let v = read_u32(vm, uaddr)?;
    if v & FUTEX_TID_MASK != thread.tid() {
        return Err(Error::new(Errno::EPERM));
    }
    let next = {
        let mut list = WAITERS.lock();
        let pos = list.iter().position(|w| w.key == key);
        pos.map(|i| list.remove(i))
    };
    match next {
        Some(w) => {
            let more = if has_waiters(key) { FUTEX_WAITERS } else { 0 };
            write_u32(vm, uaddr, w.thread.tid() | more)?;
            w.woken.store(true, Ordering::Release);
            w.thread.wake();
        }
        None => write_u32(vm, uaddr, 0)?,
    }
    Ok(0)
}

const FUTEX_WAITERS: u32 = 0x8000_0000;
const FUTEX_OWNER_DIED: u32 = 0x4000_0000;
const FUTEX_TID_MASK: u32 = 0x3fff_ffff;
/// Most entries walked on a robust list (ROBUST_LIST_LIMIT).
const ROBUST_LIST_LIMIT: usize = 2048;

/// Wakes one waiter on the word at `uaddr` whichever way it waits
/// (privately or shared).
fn wake_one_any(vm: &Arc<Vmar>, uaddr: usize) {
    let private = key_of(vm, uaddr, true).map(|k| wake_key(k, FUTEX_BITSET_MATCH_ANY, 1));
    if private.unwrap_or(0) == 0
        && let Ok(k) = key_of(vm, uaddr, false)
    {
        wake_key(k, FUTEX_BITSET_MATCH_ANY, 1);
    }
}

/// A robust futex whose owner `tid` died: mark it FUTEX_OWNER_DIED (the
/// next locker gets EOWNERDEAD from libc) and wake a waiter.
fn futex_death(vm: &Arc<Vmar>, uaddr: usize, tid: u32, pi: bool, pending: bool) -> Result<()> {
    let val = read_u32(vm, uaddr)?;
    if pending && !pi && val == 0 {
        // An unlock was in flight: a waiter may need the wake it missed.
        wake_one_any(vm, uaddr);
        return Ok(());
    }
    if val & FUTEX_TID_MASK != tid {
        return Ok(());
    }
    write_u32(vm, uaddr, (val & FUTEX_WAITERS) | FUTEX_OWNER_DIED)?;
    // A PI waiter retries and takes the word now that no tid is in it.
    if val & FUTEX_WAITERS != 0 {
        wake_one_any(vm, uaddr);
    }
    Ok(())
}

/// Walks a dying thread's robust list (set_robust_list(2)): every robust
/// mutex it still holds is marked as left by a dead owner. Bad pointers
/// just end the walk.
pub fn exit_robust_list(vm: &Arc<Vmar>, head: usize, tid: u32) {
    let word = |addr: usize| -> Result<u64> {
        let mut b = [0u8; 8];
        vm.read_bytes(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    };
    let Ok(first) = word(head) else { return };
    let Ok(offset) = word(head.wrapping_add(8)) else { return };
    let Ok(pending) = word(head.wrapping_add(16)) else { return };
    let offset = offset as i64;
    let at = |entry: u64| (entry & !1).wrapping_add_signed(offset) as usize;
    let pending_entry = pending & !1;
    let mut entry = first;
    for _ in 0..ROBUST_LIST_LIMIT {
        if entry & !1 == head as u64 {
            break;
        }
        let Ok(next) = word((entry & !1) as usize) else { break };
        // The pending entry is handled once, below.
        if entry & !1 != pending_entry {
            let _ = futex_death(vm, at(entry), tid, entry & 1 != 0, false);
        }
        entry = next;
    }
    if pending_entry != 0 {
        let _ = futex_death(vm, at(pending), tid, pending & 1 != 0, true);
    }
}

/// Deadline (monotonic ns) from a timeout argument, or u64::MAX.
pub type TimeoutFn<'a> = &'a dyn Fn(bool /*absolute*/, bool /*realtime*/) -> Result<u64>;

/// futex(uaddr, op, val, timeout/val2, uaddr2, val3).
pub fn futex(process: &Arc<Process>, thread: &Arc<Thread>, args: &[u64; 6], timeout: TimeoutFn) -> Result<isize> {
    let (uaddr, op, val, uaddr2, val3) = (args[0] as usize, args[1], args[2] as u32, args[4] as usize, args[5] as u32);
    let private = op & FUTEX_PRIVATE_FLAG != 0;
    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
    let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    if realtime && cmd != FUTEX_WAIT_BITSET && cmd != FUTEX_WAIT && cmd != FUTEX_LOCK_PI2 {
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
        FUTEX_LOCK_PI | FUTEX_LOCK_PI2 | FUTEX_TRYLOCK_PI => {
            let key = key_of(&vm, uaddr, private)?;
            // LOCK_PI's timeout is absolute on CLOCK_REALTIME; LOCK_PI2's
            // on CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME.
            let deadline = match cmd {
                FUTEX_TRYLOCK_PI => 0,
                FUTEX_LOCK_PI => timeout(true, true)?,
                _ => timeout(true, realtime)?,
            };
            lock_pi(process, thread, key, uaddr, deadline, cmd == FUTEX_TRYLOCK_PI)
        }
        FUTEX_UNLOCK_PI => unlock_pi(&vm, thread, key_of(&vm, uaddr, private)?, uaddr),
        FUTEX_WAKE_OP => {
            let n2 = args[3] as u32 as usize; // val2 travels in the timeout slot
            let k1 = key_of(&vm, uaddr, private)?;
            let k2 = key_of(&vm, uaddr2, private)?;
            let cond = wake_op_update(&vm, uaddr2, val3)?;
            let mut woken = wake_key(k1, FUTEX_BITSET_MATCH_ANY, val as usize);
            if cond {
                woken += wake_key(k2, FUTEX_BITSET_MATCH_ANY, n2);
            }
            Ok(woken as isize)
        }
        _ => Err(Error::new(Errno::ENOSYS)),
    }
}
