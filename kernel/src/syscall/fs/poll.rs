//! poll(2), ppoll(2), select(2) and pselect6(2).
//!
//! Readiness comes from each file's `poll`. A round walks the descriptors
//! with the descriptor table locked and asks each file for its answer
//! lightly (`File::poll_light`: regular files, pipes); a file that cannot
//! answer so (a signalfd, a pidfd, an epoll instance, a socket...) is
//! referenced and polled after the table is unlocked, so no `poll` that
//! takes a lower-ranked lock, sleeps or drops a last reference runs under
//! it. The waiter sleeps on the global poll queue that every notifying
//! stream wakes (see `fs::readiness`), and rechecks every `RECHECK_NS`
//! only when some file cannot wake it. ppoll and pselect6 run with their
//! signal mask in place; if a signal interrupts them, the caller's mask
//! comes back only after its handler ran.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::{CallerCtx, fd_limit};
use crate::error::{Errno, Error, Result};
use crate::fs::readiness;
use crate::fs::{File, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT, POLLPRI, RECHECK_NS};
use crate::process::signal::UNBLOCKABLE;
use crate::syscall::{Context, SyscallArgs};

/// Size of the kernel's sigset_t.
const SIGSET_SIZE: u64 = 8;

/// A deadline `ns` nanoseconds from now.
fn deadline_after(ns: u64) -> u64 {
    frame::timer::monotonic_ns().saturating_add(ns)
}

/// Reads a `struct timespec` (or, with `micro`, a `struct timeval`) timeout:
/// None for a NULL pointer (wait forever). EINVAL if malformed.
pub(super) fn read_timeout(ctx: &Context, addr: u64, micro: bool) -> Result<Option<u64>> {
    if addr == 0 {
        return Ok(None);
    }
    let [sec, frac]: [i64; 2] = ctx.read_val(addr)?;
    let unit = if micro { 1_000 } else { 1 };
    let limit = 1_000_000_000 / unit;
    if sec < 0 || !(0..limit).contains(&frac) {
        return Err(Error::new(Errno::EINVAL));
    }
    let ns = (sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(frac as u64 * unit as u64);
    Ok(Some(deadline_after(ns)))
}

/// A signal mask argument at `addr` of `size` bytes (None for NULL);
/// EINVAL unless `size` is the kernel's sigset size.
pub(super) fn read_sigmask(ctx: &Context, addr: u64, size: u64) -> Result<Option<u64>> {
    if addr == 0 {
        return Ok(None);
    }
    if size != SIGSET_SIZE {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok(Some(ctx.read_val::<u64>(addr)?))
}

/// Runs `f` with the thread's signal mask set to `mask` (if given). When
/// `f` is interrupted, the old mask is restored only after the signal is
/// handled (as rt_sigsuspend does); otherwise at once.
pub(super) fn with_sigmask<R>(
    ctx: &Context,
    mask: Option<u64>,
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let Some(mask) = mask else {
        return f();
    };
    let sigmask = &ctx.thread.sigmask;
    let old = sigmask.swap(mask & !UNBLOCKABLE, Ordering::Relaxed);
    let r = f();
    let interrupted = matches!(
        &r,
        Err(e) if matches!(e.errno(), Errno::EINTR | Errno::ERESTARTNOHAND | Errno::ERESTARTSYS)
    );
    if interrupted {
        ctx.thread.signals.saved_mask.set(old);
    } else {
        sigmask.store(old, Ordering::Relaxed);
    }
    r
}

/// Files that cannot be polled lightly, referenced under the table lock
/// and polled after it, each with its place (a poll entry's index, a
/// select descriptor). Allocates only when there is one.
type Deferred = Vec<(usize, Arc<File>)>;

/// Whether some deferred file cannot wake a sleeper (light ones all can).
fn any_silent(deferred: &Deferred) -> bool {
    deferred
        .iter()
        .filter_map(|(_, f)| f.ops())
        .any(|o| o.readiness().is_none())
}

/// Sleeps until a readiness notification after `seen`, or until
/// `deadline` (None: forever). With `silent` (some file cannot wake a
/// sleeper) it rechecks every `RECHECK_NS`. False once the deadline has
/// passed; ERESTARTNOHAND if a signal comes first.
fn wait_round(ctx: &Context, silent: bool, seen: u64, deadline: Option<u64>) -> Result<bool> {
    let now = frame::timer::monotonic_ns();
    if deadline.is_some_and(|d| now >= d) {
        return Ok(false);
    }
    let mut until = deadline.unwrap_or(u64::MAX);
    if silent {
        until = until.min(now.saturating_add(RECHECK_NS));
    }
    match readiness::wait_for_change(&CallerCtx(ctx), seen, until) {
        Ok(_) => Ok(true),
        Err(_) => Err(Error::new(Errno::ERESTARTNOHAND)),
    }
}

fn do_poll(ctx: &Context, addr: u64, nfds: u64, deadline: Option<u64>) -> Result<isize> {
    // nfds is an unsigned int.
    let nfds = nfds as u32 as u64;
    if nfds > fd_limit(ctx) as u64 {
        return Err(Error::new(Errno::EINVAL));
    }
    let nfds = nfds as usize;
    let mut raw = ctx.read_bytes(addr, nfds * 8)?;
    let entry = |raw: &[u8], i: usize| -> (i32, u16) {
        let b = &raw[i * 8..i * 8 + 8];
        (
            i32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
            u16::from_ne_bytes([b[4], b[5]]),
        )
    };
    let caller = CallerCtx(ctx);
    loop {
        let seen = readiness::epoch();
        let mut ready = 0;
        let mut revents_at = |raw: &mut [u8], i: usize, revents: u16| {
            raw[i * 8 + 6..i * 8 + 8].copy_from_slice(&revents.to_ne_bytes());
            if revents != 0 {
                ready += 1;
            }
        };
        let mut deferred = Deferred::new();
        {
            let table = ctx.files.lock();
            for i in 0..nfds {
                let (fd, events) = entry(&raw, i);
                let revents = if fd < 0 {
                    0
                } else {
                    match table.file(fd as usize) {
                        None => POLLNVAL,
                        Some(f) => match f.poll_light() {
                            Some(r) => r & (events | POLLERR | POLLHUP | POLLNVAL),
                            None => {
                                crate::fallible::push(&mut deferred, (i, f.clone()))?;
                                continue;
                            }
                        },
                    }
                };
                revents_at(&mut raw, i, revents);
            }
        }
        for (i, f) in &deferred {
            let events = entry(&raw, *i).1;
            let revents = f.poll(&caller) & (events | POLLERR | POLLHUP | POLLNVAL);
            revents_at(&mut raw, *i, revents);
        }
        if ready > 0 || !wait_round(ctx, any_silent(&deferred), seen, deadline)? {
            // Even an empty array must lie in user space (access_ok).
            if !crate::syscall::access_ok(addr, raw.len() as u64) {
                return Err(Error::new(Errno::EFAULT));
            }
            ctx.write_bytes(addr, &raw)?;
            return Ok(ready);
        }
    }
}

pub fn sys_poll(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let timeout_ms = args[2] as i32;
    let deadline = (timeout_ms >= 0).then(|| deadline_after(timeout_ms as u64 * 1_000_000));
    restartable_poll(ctx, args[0], args[1], deadline)
}

/// poll, and its continuation by restart_syscall(2): interrupted, it
/// records where it was so that a restart (no handler ran) waits only for
/// the time left; after a handler it is EINTR.
pub fn restartable_poll(ctx: &Context, fds: u64, nfds: u64, deadline: Option<u64>) -> Result<isize> {
    match do_poll(ctx, fds, nfds, deadline) {
        Err(e) if e.errno() == Errno::ERESTARTNOHAND => {
            *ctx.thread.signals.restart.lock() =
                Some(crate::process::signal::RestartBlock::Poll { fds, nfds, deadline });
            Err(Error::new(Errno::ERESTART_RESTARTBLOCK))
        }
        r => r,
    }
}

pub fn sys_ppoll(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    // The timeout is read and checked before the signal mask (Linux).
    let deadline = read_timeout(ctx, args[2], false)?;
    let mask = read_sigmask(ctx, args[3], args[4])?;
    let r = with_sigmask(ctx, mask, || do_poll(ctx, args[0], args[1], deadline));
    finish(ctx, args[2], deadline, false, r)
}

/// Bytes of an `fd_set` kept on the stack: FD_SETSIZE (1024) bits, what
/// every C library's `fd_set` holds. Larger sets go on the heap.
const INLINE_SET: usize = 128;

/// The bits of an `fd_set`, as user memory holds them (bit `fd % 8` of
/// byte `fd / 8`: a little-endian array of longs).
struct FdSet {
    inline: [u8; INLINE_SET],
    heap: Vec<u8>,
    len: usize,
}

impl FdSet {
    fn zeroed(len: usize) -> Result<FdSet> {
        let heap = if len > INLINE_SET { crate::fallible::zeroed(len)? } else { Vec::new() };
        Ok(FdSet { inline: [0; INLINE_SET], heap, len })
    }

    /// The set at `addr` (None for NULL), `len` bytes, with the bits from
    /// `nfds` on cleared (select ignores them).
    fn read(ctx: &Context, addr: u64, len: usize, nfds: usize) -> Result<Option<FdSet>> {
        if addr == 0 {
            return Ok(None);
        }
        let mut set = FdSet::zeroed(len)?;
        ctx.read_into(addr, set.bytes_mut())?;
        let bytes = set.bytes_mut();
        if nfds % 8 != 0 {
            bytes[nfds / 8] &= (1u8 << (nfds % 8)) - 1;
        }
        let whole = nfds.div_ceil(8);
        if whole < bytes.len() {
            bytes[whole..].fill(0);
        }
        Ok(Some(set))
    }

    fn bytes(&self) -> &[u8] {
        if self.len > INLINE_SET { &self.heap } else { &self.inline[..self.len] }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len > INLINE_SET { &mut self.heap } else { &mut self.inline[..self.len] }
    }
}

/// The descriptors in a set, in increasing order.
struct SetBits<'a> {
    bytes: &'a [u8],
    /// Index of the next byte to load.
    next: usize,
    /// Bits of the current byte not yet returned, and its first fd.
    cur: u8,
    base: usize,
}

impl<'a> SetBits<'a> {
    fn new(set: &'a FdSet) -> SetBits<'a> {
        SetBits { bytes: set.bytes(), next: 0, cur: 0, base: 0 }
    }
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            // Whole zero words at a time: sets are mostly empty.
            while self.next % 8 == 0
                && let Some(w) = self.bytes.get(self.next..self.next + 8)
                && w == [0u8; 8]
            {
                self.next += 8;
            }
            self.cur = *self.bytes.get(self.next)?;
            self.base = self.next * 8;
            self.next += 1;
        }
        let bit = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.base + bit)
    }
}

/// select(2): the sets are read into stack buffers and walked a byte at a
/// time, once per round, with the descriptor table locked: a file that
/// answers lightly costs no reference (see the module doc); the others
/// are polled after the walk.
fn do_select(ctx: &Context, nfds: u64, sets: [u64; 3], deadline: Option<u64>) -> Result<isize> {
    let nfds = usize::try_from(nfds as i32).map_err(|_| Error::new(Errno::EINVAL))?;
    // Like Linux, bits past the descriptor table are ignored.
    let nfds = nfds.min(ctx.files.lock().max_fds());
    // Whole longs, as Linux reads and writes them.
    let len = nfds.div_ceil(64) * 8;
    let inputs = [
        FdSet::read(ctx, sets[0], len, nfds)?,
        FdSet::read(ctx, sets[1], len, nfds)?,
        FdSet::read(ctx, sets[2], len, nfds)?,
    ];
    let mut wanted = FdSet::zeroed(len)?;
    for set in inputs.iter().flatten() {
        for (w, b) in wanted.bytes_mut().iter_mut().zip(set.bytes()) {
            *w |= b;
        }
    }
    let caller = CallerCtx(ctx);
    loop {
        let seen = readiness::epoch();
        let mut outputs = [None, None, None];
        for (out, input) in outputs.iter_mut().zip(inputs.iter()) {
            if input.is_some() {
                *out = Some(FdSet::zeroed(len)?);
            }
        }
        let mut ready = 0;
        let mut deferred = Deferred::new();
        {
            // The sets' bytes, sliced once for the whole walk.
            let ins = [0, 1, 2].map(|k| inputs[k].as_ref().map(FdSet::bytes));
            let mut outs = outputs.each_mut().map(|o| o.as_mut().map(FdSet::bytes_mut));
            {
                let table = ctx.files.lock();
                for fd in SetBits::new(&wanted) {
                    let Some(file) = table.file(fd) else {
                        return Err(Error::new(Errno::EBADF));
                    };
                    match file.poll_light() {
                        Some(revents) => ready += report(&ins, &mut outs, fd, revents),
                        None => crate::fallible::push(&mut deferred, (fd, file.clone()))?,
                    }
                }
            }
            for (fd, file) in &deferred {
                ready += report(&ins, &mut outs, *fd, file.poll(&caller));
            }
        }
        if ready > 0 || !wait_round(ctx, any_silent(&deferred), seen, deadline)? {
            for (addr, out) in sets.iter().zip(outputs.iter()) {
                if let Some(out) = out {
                    ctx.write_bytes(*addr, out.bytes())?;
                }
            }
            return Ok(ready);
        }
    }
}

/// Sets `fd`'s bit in each output set whose input set has it and whose
/// events `revents` holds; how many it set. Inlined into both of
/// `do_select`'s loops (as a closure it was a call per descriptor).
#[inline(always)]
fn report(
    ins: &[Option<&[u8]>; 3],
    outs: &mut [Option<&mut [u8]>; 3],
    fd: usize,
    revents: u16,
) -> isize {
    const HITS: [u16; 3] = [POLLIN | POLLHUP | POLLERR, POLLOUT | POLLERR, POLLPRI];
    let (byte, bit) = (fd / 8, 1u8 << (fd % 8));
    let mut n = 0;
    for k in 0..3 {
        if revents & HITS[k] != 0
            && ins[k].is_some_and(|s| s.get(byte).is_some_and(|b| b & bit != 0))
            && let Some(out) = outs[k].as_deref_mut().and_then(|o| o.get_mut(byte))
        {
            *out |= bit;
            n += 1;
        }
    }
    n
}

/// Writes the time left until `deadline` back to the timeout at `addr`
/// (a timespec, or with `micro` a timeval), as Linux does for select,
/// pselect6 and ppoll whether they succeed or are interrupted (select(2),
/// NOTES). If that fails, an interrupted call is not restarted.
fn finish<R>(
    ctx: &Context,
    addr: u64,
    deadline: Option<u64>,
    micro: bool,
    r: Result<R>,
) -> Result<R> {
    let Some(deadline) = deadline.filter(|_| addr != 0) else {
        return r;
    };
    let left = deadline.saturating_sub(frame::timer::monotonic_ns());
    let frac = left % 1_000_000_000;
    let tv = [
        (left / 1_000_000_000) as i64,
        if micro { frac / 1_000 } else { frac } as i64,
    ];
    match (ctx.write_val(addr, &tv), r) {
        (Err(_), Err(e)) if e.errno() == Errno::ERESTARTNOHAND => Err(Error::new(Errno::EINTR)),
        (_, r) => r,
    }
}

pub fn sys_select(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let deadline = read_timeout(ctx, args[4], true)?;
    let r = do_select(ctx, args[0], [args[1], args[2], args[3]], deadline);
    finish(ctx, args[4], deadline, true, r)
}

pub fn sys_pselect6(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    // The sixth argument points at { const sigset_t *ss; size_t ss_len; },
    // read first; then the timeout, then the mask itself (Linux's order).
    let pack: Option<[u64; 2]> = if args[5] == 0 { None } else { Some(ctx.read_val(args[5])?) };
    let deadline = read_timeout(ctx, args[4], false)?;
    let mask = match pack {
        None => None,
        Some([set, size]) => read_sigmask(ctx, set, size)?,
    };
    let sets = [args[1], args[2], args[3]];
    let r = with_sigmask(ctx, mask, || do_select(ctx, args[0], sets, deadline));
    finish(ctx, args[4], deadline, false, r)
}
