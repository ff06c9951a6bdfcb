//! Pipes (pipe(7)): a bounded byte buffer shared by read and write ends.
//!
//! Ownership: a [`Pipe`] is shared (`Arc`) by its ends. Each open file
//! description holds one [`PipeEnd`] (its `FileOps`), so the reader and
//! writer counts drop exactly when the last descriptor of a description is
//! closed — the `PipeEnd` is dropped with its `File`. Anonymous pipes get
//! their two ends from [`new_pipe`]; a FIFO's pipe is found through its
//! inode (see `fifo.rs`).
//!
//! Locking: the pipe state is one spin lock, never held while copying to
//! or from user memory, while notifying, or while signalling. read(2) and
//! write(2) copy once ([`PipeEnd::read_pages`], [`PipeEnd::write_pages`]):
//! pages are taken out of the ring under the lock, copied to or from user
//! memory without it, and put back (or kept as spares) under it. poll(2)
//! takes no lock: the state is locked only through `Pipe::lock`, whose
//! guard publishes a word of what poll needs before it unlocks.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;

use core::sync::atomic::{AtomicU64, Ordering};

use frame::sync::{SpinLock, SpinLockGuard, level};

use super::file::{File, O_DIRECT, O_NONBLOCK, O_RDONLY, O_WRONLY, kernel_buffer};
use super::readiness::Readiness;
use super::stream::*;
use crate::error::{Errno, Error, Result};
use crate::tty::termios::FIONREAD;

/// The unit of pipe buffering; writes up to this size (PIPE_BUF) are
/// atomic (pipe(7)).
const PAGE_SIZE: usize = 4096;
/// Capacity of a new pipe (pipe(7), "Pipe capacity").
const DEFAULT_CAPACITY: usize = 65536;
/// Largest F_SETPIPE_SZ (the default /proc/sys/fs/pipe-max-size).
const MAX_CAPACITY: usize = 1 << 20;
const SIGPIPE: u32 = 13;

pub struct Pipe {
    /// Taken only through [`Pipe::lock`], whose guard republishes `word`.
    state: SpinLock<Shared, { level::FILE }>,
    /// What poll needs of `state`, as it was when the lock was last
    /// released: see [`Shared::poll_word`].
    word: AtomicU64,
    readiness: Readiness,
}

/// Bits of [`Pipe::word`]: the ring has unread bytes, the ring has a free
/// page, no reader, no writer; `writer_opens` from bit 4 on.
const HAS_DATA: u64 = 1 << 0;
const HAS_ROOM: u64 = 1 << 1;
const NO_READERS: u64 = 1 << 2;
const NO_WRITERS: u64 = 1 << 3;
const OPENS_SHIFT: u32 = 4;

/// The pipe's state, locked. Dropping it stores the state's poll word
/// while the lock is still held, so every change made under the lock is
/// published before the unlock, and before the notification that follows
/// it: a poller that reads the readiness epoch, then the word (both
/// acquire), sees either the change or a later epoch (no lost wake-up).
struct StateGuard<'a> {
    word: &'a AtomicU64,
    guard: SpinLockGuard<'a, Shared, { level::FILE }>,
}

impl core::ops::Deref for StateGuard<'_> {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.guard
    }
}

impl core::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut Shared {
        &mut self.guard
    }
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        // Runs before the field `guard` is dropped (the unlock).
        self.word.store(self.guard.poll_word(), Ordering::Release);
    }
}

struct Shared {
    ring: Ring,
    readers: usize,
    writers: usize,
    /// Opens of each end so far (Linux's r_counter/w_counter): a FIFO
    /// opener waiting for the other end is released by any open of it,
    /// even one that is closed again at once.
    reader_opens: u64,
    writer_opens: u64,
}

/// A page of pipe data (Linux's pipe_buffer): bytes `start..end` of
/// `page` are unread. A packet (written in O_DIRECT mode) is never merged
/// into and is read by one read(2), whose excess is discarded.
struct Slot {
    page: Vec<u8>,
    start: usize,
    end: usize,
    packet: bool,
}

/// The pipe's buffer as Linux keeps it: up to `max_slots` pages, each
/// filled by one write or merged into by small ones. Occupancy is counted
/// in pages, which is what the capacity, POLLOUT and atomic writes of
/// PIPE_BUF bytes are defined by (pipe(7)).
struct Ring {
    slots: VecDeque<Slot>,
    max_slots: usize,
    /// Unread bytes in all slots.
    len: usize,
    /// Pages freed by readers, kept for the next writes (at most
    /// `max_slots` pages are ever held).
    spare: Vec<Vec<u8>>,
}

impl Ring {
    fn is_full(&self) -> bool {
        self.slots.len() >= self.max_slots
    }

    fn new_page(&mut self) -> Result<Vec<u8>> {
        match self.spare.pop() {
            Some(page) => Ok(page),
            None => kernel_buffer(PAGE_SIZE),
        }
    }

    /// Copies in what fits, as pipe_write does: first the part of `src`
    /// beyond whole pages into the last page if it has room, then page by
    /// page into free slots. So up to PIPE_BUF bytes go in whole or not at
    /// all. With `packet` (pipe2 O_DIRECT) every page is a packet of its
    /// own.
    fn push(&mut self, src: &[u8], packet: bool) -> Result<usize> {
        let mut done = 0;
        let chars = src.len() % PAGE_SIZE;
        if chars != 0
            && !packet
            && let Some(last) = self.slots.back_mut()
            && !last.packet
            && last.end + chars <= PAGE_SIZE
        {
            last.page[last.end..last.end + chars].copy_from_slice(&src[..chars]);
            last.end += chars;
            done = chars;
        }
        while done < src.len() && !self.is_full() {
            let n = (src.len() - done).min(PAGE_SIZE);
            let mut page = match self.new_page() {
                Ok(page) => page,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            if let Err(e) = crate::fallible::reserve(&mut self.slots, 1) {
                if done == 0 {
                    return Err(e);
                }
                break;
            }
            page[..n].copy_from_slice(&src[done..done + n]);
            self.slots.push_back(Slot {
                page,
                start: 0,
                end: n,
                packet,
            });
            done += n;
        }
        self.len += done;
        Ok(done)
    }

    /// Moves up to `dst.len()` bytes out, freeing the pages emptied. A
    /// packet ends the read, the part of it that did not fit discarded.
    fn pop(&mut self, dst: &mut [u8]) -> usize {
        let mut done = 0;
        while done < dst.len() {
            let Some(slot) = self.slots.front_mut() else {
                break;
            };
            let n = (slot.end - slot.start).min(dst.len() - done);
            dst[done..done + n].copy_from_slice(&slot.page[slot.start..slot.start + n]);
            done += n;
            let packet = slot.packet;
            if packet {
                self.len -= slot.end - slot.start - n;
                slot.start = slot.end;
            } else {
                slot.start += n;
            }
            // An emptied page is freed, or kept for the next write.
            if slot.start == slot.end
                && let Some(slot) = self.slots.pop_front()
                && self.spare.len() + self.slots.len() < self.max_slots
                && self.spare.try_reserve(1).is_ok()
            {
                self.spare.push(slot.page);
            }
            if packet {
                break;
            }
        }
        self.len -= done;
        done
    }
}

impl Shared {
    /// The state poll(2) reads, in one word (see [`Pipe::word`]).
    fn poll_word(&self) -> u64 {
        let mut w = self.writer_opens << OPENS_SHIFT;
        if self.ring.len > 0 {
            w |= HAS_DATA;
        }
        if !self.ring.is_full() {
            w |= HAS_ROOM;
        }
        if self.readers == 0 {
            w |= NO_READERS;
        }
        if self.writers == 0 {
            w |= NO_WRITERS;
        }
        w
    }
}

impl Pipe {
    /// Locks the state; the guard republishes the poll word when dropped.
    fn lock(&self) -> StateGuard<'_> {
        StateGuard {
            word: &self.word,
            guard: self.state.lock(),
        }
    }

    pub fn new() -> Arc<Pipe> {
        Arc::new(Pipe {
            state: SpinLock::new(Shared {
                ring: Ring {
                    slots: VecDeque::new(),
                    max_slots: DEFAULT_CAPACITY / PAGE_SIZE,
                    len: 0,
                    spare: Vec::new(),
                },
                readers: 0,
                writers: 0,
                reader_opens: 0,
                writer_opens: 0,
            }),
            // Empty, with room, no reader and no writer yet.
            word: AtomicU64::new(HAS_ROOM | NO_READERS | NO_WRITERS),
            readiness: Readiness::new(),
        })
    }
}

/// Which ends an open file description holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    Read,
    Write,
    Both,
}

impl Ends {
    /// From open(2)'s access mode (a FIFO opened O_RDWR holds both).
    pub fn from_flags(flags: u32) -> Ends {
        match flags & 0o3 {
            O_RDONLY => Ends::Read,
            O_WRONLY => Ends::Write,
            _ => Ends::Both,
        }
    }

    fn reads(self) -> bool {
        self != Ends::Write
    }

    fn writes(self) -> bool {
        self != Ends::Read
    }
}

/// One open file description's hold on a pipe.
pub struct PipeEnd {
    pipe: Arc<Pipe>,
    ends: Ends,
    /// `writer_opens` when this end was opened: no POLLHUP for a FIFO
    /// reader until some writer has come (and gone) since (Linux's
    /// f_version check in pipe_poll).
    writers_seen: u64,
    /// A FIFO end that waits in open(2) for its other end.
    fifo_wait: bool,
    /// Packet mode (O_DIRECT): each write's pages are packets.
    packet: core::sync::atomic::AtomicBool,
}

impl PipeEnd {
    /// The end's poll events, from the word the last holder of the lock
    /// published.
    #[inline]
    fn events(&self) -> u16 {
        let w = self.pipe.word.load(Ordering::Acquire);
        let mut events = 0;
        if self.ends.reads() {
            if w & HAS_DATA != 0 {
                events |= POLLIN | POLLRDNORM;
            }
            if w & NO_WRITERS != 0 && w >> OPENS_SHIFT != self.writers_seen {
                events |= POLLHUP;
            }
        }
        if self.ends.writes() {
            if w & HAS_ROOM != 0 {
                events |= POLLOUT | POLLWRNORM;
            }
            if w & NO_READERS != 0 {
                events |= POLLERR;
            }
        }
        events
    }

    /// Attaches `ends` to `pipe`. For a FIFO opened O_WRONLY|O_NONBLOCK
    /// without readers, ENXIO (fifo(7)).
    pub fn attach(pipe: Arc<Pipe>, ends: Ends, fifo: bool, nonblocking: bool) -> Result<PipeEnd> {
        let writers_seen = {
            let mut st = pipe.lock();
            if fifo && ends == Ends::Write && nonblocking && st.readers == 0 {
                return Err(Error::new(Errno::ENXIO));
            }
            let seen = if fifo { st.writer_opens } else { 0 };
            if ends.reads() {
                st.readers += 1;
                st.reader_opens += 1;
            }
            if ends.writes() {
                st.writers += 1;
                st.writer_opens += 1;
            }
            seen
        };
        // Wakes openers waiting for this end.
        pipe.readiness.notify(0);
        Ok(PipeEnd {
            pipe,
            ends,
            writers_seen,
            fifo_wait: fifo && ends != Ends::Both && !nonblocking,
            packet: core::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Turns packet mode (O_DIRECT) on or off for this end's writes.
    pub fn set_packet(&self, on: bool) {
        self.packet.store(on, core::sync::atomic::Ordering::Relaxed);
    }

    /// F_GETPIPE_SZ, and F_SETPIPE_SZ with `set` (rounded up to a power of
    /// two of pages: EBUSY if the pages in use would not fit, EPERM above
    /// the maximum).
    pub fn capacity(&self, set: Option<u64>) -> Result<usize> {
        let Some(size) = set else {
            return Ok(self.pipe.lock().ring.max_slots * PAGE_SIZE);
        };
        let size = usize::try_from(size).map_err(|_| Error::new(Errno::EINVAL))?;
        if size > MAX_CAPACITY {
            return Err(Error::new(Errno::EPERM));
        }
        let size = size.max(PAGE_SIZE).next_power_of_two();
        let mut st = self.pipe.lock();
        if st.ring.slots.len() > size / PAGE_SIZE {
            return Err(Error::new(Errno::EBUSY));
        }
        st.ring.max_slots = size / PAGE_SIZE;
        st.ring.spare.clear();
        drop(st);
        self.pipe.readiness.notify(POLLOUT);
        Ok(size)
    }
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        {
            let mut st = self.pipe.lock();
            if self.ends.reads() {
                st.readers -= 1;
            }
            if self.ends.writes() {
                st.writers -= 1;
            }
        }
        let mut events = 0;
        if self.ends.reads() {
            events |= POLLERR | POLLOUT;
        }
        if self.ends.writes() {
            events |= POLLHUP | POLLIN;
        }
        self.pipe.readiness.notify(events);
    }
}

impl FileOps for PipeEnd {
    fn read(&self, buf: &mut [u8], _caller: &dyn Caller) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut st = self.pipe.lock();
        if st.ring.len == 0 {
            return if st.writers == 0 {
                Ok(0)
            } else {
                Err(Error::new(Errno::EAGAIN))
            };
        }
        let was_full = st.ring.is_full();
        let n = st.ring.pop(buf);
        let now_full = st.ring.is_full();
        drop(st);
        // Only a full pipe has blocked writers (and only then does Linux
        // wake them and edge-triggered EPOLLOUT watchers).
        if was_full && !now_full {
            self.pipe.readiness.notify(POLLOUT);
        }
        Ok(n)
    }

    fn write(&self, buf: &[u8], caller: &dyn Caller) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut st = self.pipe.lock();
        if st.readers == 0 {
            drop(st);
            caller.raise(SIGPIPE);
            return Err(Error::new(Errno::EPIPE));
        }
        let n = st
            .ring
            .push(buf, self.packet.load(core::sync::atomic::Ordering::Relaxed))?;
        drop(st);
        if n == 0 {
            return Err(Error::new(Errno::EAGAIN));
        }
        self.pipe.readiness.notify(POLLIN);
        Ok(n)
    }

    fn read_direct(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        Some(self.read_pages(len, sink, nonblocking, caller))
    }

    fn write_direct(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        Some(self.write_pages(len, source, nonblocking, caller))
    }

    /// Without the lock: the word the last holder of the lock published
    /// (see [`StateGuard`]).
    fn poll(&self, _caller: &dyn Caller) -> u16 {
        self.events()
    }

    /// Light (see [`FileOps::poll_light`]): one atomic load, no lock; the
    /// end holds its pipe, so nothing is dropped; the pipe has a notifier.
    fn poll_light(&self) -> Option<u16> {
        Some(self.events())
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(&self.pipe.readiness)
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        match cmd {
            FIONREAD => {
                let n = self.pipe.lock().ring.len;
                caller.write_bytes(arg, &(n as i32).to_ne_bytes())?;
                Ok(0)
            }
            _ => Err(Error::new(Errno::ENOTTY)),
        }
    }

    /// A FIFO opened for reading (writing) alone waits until a writer
    /// (reader) opens it, unless one is there (fifo(7)).
    fn opened(&self, _flags: u32, caller: &dyn Caller) -> Result<()> {
        if !self.fifo_wait {
            return Ok(());
        }
        let partner = |st: &Shared| {
            if self.ends.reads() {
                (st.writers, st.writer_opens)
            } else {
                (st.readers, st.reader_opens)
            }
        };
        let (present, opens) = partner(&self.pipe.lock());
        if present > 0 {
            return Ok(());
        }
        let mut ready = || partner(&self.pipe.lock()).1 != opens;
        caller.wait(self.pipe.readiness.queue(), &mut ready, u64::MAX)?;
        Ok(())
    }
}

/// Most pages a direct read or write takes out of (or puts into) the ring
/// per round of the lock.
const BATCH: usize = 16;

/// A page taken out of the ring by a direct read: bytes `start..end` are
/// the reader's.
#[derive(Default)]
struct Taken {
    page: Vec<u8>,
    start: usize,
    end: usize,
    packet: bool,
}

/// How a direct write's next piece goes in.
enum Plan {
    /// Merged into the last page (the part of the write beyond whole
    /// pages, as Ring::push does).
    Merge(usize),
    /// Into this many fresh pages.
    Pages(usize),
}

impl PipeEnd {
    /// Sleeps until the pipe reports one of `want` (or an error or a
    /// hang-up), or a signal comes (ERESTARTSYS).
    fn wait_for(&self, want: u16, caller: &dyn Caller) -> Result<()> {
        let mut ready = || self.poll(caller) & (want | POLLERR | POLLHUP) != 0;
        caller.wait(self.pipe.readiness.queue(), &mut ready, u64::MAX)?;
        Ok(())
    }

    /// read(2) of a pipe with one copy: whole pages are taken out of the
    /// ring and copied to the reader's memory without the lock (the
    /// user copy may fault and sleep), then kept as spares; a part of a
    /// page is copied out under the lock through a small buffer. Data the
    /// sink refuses goes back to the front of the ring.
    fn read_pages(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let mut done = 0;
        let mut taken: [Taken; BATCH] = Default::default();
        let mut spent = 0;
        loop {
            let mut st = self.pipe.lock();
            // Pages the last round copied out become spares.
            for t in &mut taken[..spent] {
                let page = core::mem::take(&mut t.page);
                if st.ring.spare.len() + st.ring.slots.len() < st.ring.max_slots
                    && st.ring.spare.try_reserve(1).is_ok()
                {
                    st.ring.spare.push(page);
                }
            }
            spent = 0;
            if st.ring.len == 0 {
                let writers = st.writers;
                drop(st);
                if done > 0 || writers == 0 {
                    return Ok(done);
                }
                if nonblocking {
                    return Err(Error::new(Errno::EAGAIN));
                }
                self.wait_for(POLLIN, caller)?;
                continue;
            }
            let ring = &mut st.ring;
            let was_full = ring.is_full();
            let mut ntaken = 0;
            let mut got = 0;
            let mut packet_end = false;
            let mut small = [0u8; 256];
            let mut part = 0;
            while done + got < len && ntaken < BATCH {
                let want = len - done - got;
                let Some(slot) = ring.slots.front_mut() else {
                    break;
                };
                let avail = slot.end - slot.start;
                if avail <= want && !(ntaken == 0 && want <= small.len()) {
                    // The whole page is the reader's.
                    if let Some(slot) = ring.slots.pop_front() {
                        ring.len -= avail;
                        got += avail;
                        packet_end = slot.packet;
                        taken[ntaken] = Taken {
                            page: slot.page,
                            start: slot.start,
                            end: slot.end,
                            packet: slot.packet,
                        };
                        ntaken += 1;
                    }
                } else if ntaken == 0 && want <= small.len() {
                    // A short read: copied out here, in one round of the
                    // lock; a packet's rest is discarded.
                    let n = want.min(avail);
                    small[part..part + n].copy_from_slice(&slot.page[slot.start..slot.start + n]);
                    part += n;
                    got += n;
                    packet_end = slot.packet;
                    let consumed = if slot.packet { avail } else { n };
                    slot.start += consumed;
                    ring.len -= consumed;
                    if slot.start == slot.end
                        && let Some(slot) = ring.slots.pop_front()
                        && ring.spare.len() + ring.slots.len() < ring.max_slots
                        && ring.spare.try_reserve(1).is_ok()
                    {
                        ring.spare.push(slot.page);
                    }
                    if !packet_end && n < want && !ring.slots.is_empty() {
                        continue;
                    }
                    break;
                } else if ntaken == 0 {
                    // A larger part of a page: through the ring's own copy.
                    let n = want.min(PAGE_SIZE);
                    let mut bounce = match ring.spare.pop() {
                        Some(p) => p,
                        None => match kernel_buffer(PAGE_SIZE) {
                            Ok(p) => p,
                            Err(e) => return if done > 0 { Ok(done) } else { Err(e) },
                        },
                    };
                    let n = ring.pop(&mut bounce[..n]);
                    got += n;
                    taken[0] = Taken {
                        page: bounce,
                        start: 0,
                        end: n,
                        packet: false,
                    };
                    ntaken = 1;
                    packet_end = true;
                } else {
                    break;
                }
                if packet_end {
                    break;
                }
            }
            let now_full = st.ring.is_full();
            drop(st);
            if was_full && !now_full {
                self.pipe.readiness.notify(POLLOUT);
            }
            // Copy out without the lock.
            let mut failed = None;
            let mut part_failed = false;
            if part > 0 {
                if let Err(e) = sink(done, &small[..part]) {
                    failed = Some(e);
                    part_failed = true;
                } else {
                    done += part;
                }
            }
            let mut i = 0;
            while failed.is_none() && i < ntaken {
                let t = &taken[i];
                if t.end > t.start {
                    if let Err(e) = sink(done, &t.page[t.start..t.end]) {
                        failed = Some(e);
                        break;
                    }
                    done += t.end - t.start;
                }
                i += 1;
            }
            if let Some(e) = failed {
                // What was not copied goes back in front, in order.
                let mut st = self.pipe.lock();
                for t in taken[i..ntaken].iter_mut().rev() {
                    if t.end > t.start && crate::fallible::reserve(&mut st.ring.slots, 1).is_ok() {
                        st.ring.len += t.end - t.start;
                        st.ring.slots.push_front(Slot {
                            page: core::mem::take(&mut t.page),
                            start: t.start,
                            end: t.end,
                            packet: t.packet,
                        });
                    }
                }
                // A part copied out under the lock goes back as a page of
                // its own, in front (pipe_read keeps what it could not
                // copy).
                if part_failed && crate::fallible::reserve(&mut st.ring.slots, 1).is_ok() {
                    let page = match st.ring.spare.pop() {
                        Some(p) => Some(p),
                        None => kernel_buffer(PAGE_SIZE).ok(),
                    };
                    if let Some(mut page) = page {
                        page[..part].copy_from_slice(&small[..part]);
                        st.ring.len += part;
                        st.ring.slots.push_front(Slot {
                            page,
                            start: 0,
                            end: part,
                            packet: false,
                        });
                    }
                }
                drop(st);
                self.pipe.readiness.notify(POLLIN);
                return if done > 0 { Ok(done) } else { Err(e) };
            }
            spent = ntaken;
            if done >= len || packet_end {
                let mut st = self.pipe.lock();
                for t in &mut taken[..spent] {
                    let page = core::mem::take(&mut t.page);
                    if st.ring.spare.len() + st.ring.slots.len() < st.ring.max_slots
                        && st.ring.spare.try_reserve(1).is_ok()
                    {
                        st.ring.spare.push(page);
                    }
                }
                return Ok(done);
            }
        }
    }

    /// write(2) to a pipe with one copy: fresh pages (spares) are taken
    /// out of the ring, filled from the writer's memory without the lock,
    /// and put in under it if there is still room (else the bytes are
    /// fetched again later). The part of a write beyond whole pages is
    /// merged into the last page when it fits, as Ring::push does, so up
    /// to PIPE_BUF bytes go in whole or not at all.
    fn write_pages(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let packet = self.packet.load(core::sync::atomic::Ordering::Relaxed);
        let mut small = [0u8; 256];
        if len <= small.len() {
            // A short write: fetched first, then in whole (merged into the
            // last page or on a page of its own) in one round of the lock.
            let buf = &mut small[..len];
            source(0, buf)?;
            loop {
                let mut st = self.pipe.lock();
                if st.readers == 0 {
                    drop(st);
                    caller.raise(SIGPIPE);
                    return Err(Error::new(Errno::EPIPE));
                }
                let n = st.ring.push(buf, packet)?;
                drop(st);
                if n > 0 {
                    self.pipe.readiness.notify(POLLIN);
                    return Ok(n);
                }
                if nonblocking {
                    return Err(Error::new(Errno::EAGAIN));
                }
                self.wait_for(POLLOUT, caller)?;
            }
        }
        let mut done = 0;
        let mut pages: [Vec<u8>; BATCH] = Default::default();
        while done < len {
            let rem = len - done;
            let chars = rem % PAGE_SIZE;
            let mut st = self.pipe.lock();
            if st.readers == 0 {
                drop(st);
                caller.raise(SIGPIPE);
                return if done > 0 {
                    Ok(done)
                } else {
                    Err(Error::new(Errno::EPIPE))
                };
            }
            let can_merge = |ring: &Ring, n: usize| {
                !packet
                    && ring
                        .slots
                        .back()
                        .is_some_and(|last| !last.packet && last.end + n <= PAGE_SIZE)
            };
            let plan = if chars != 0 && can_merge(&st.ring, chars) {
                Plan::Merge(chars)
            } else {
                let free = st.ring.max_slots.saturating_sub(st.ring.slots.len());
                Plan::Pages(free.min(rem.div_ceil(PAGE_SIZE)).min(BATCH))
            };
            let npages = match plan {
                Plan::Merge(n) if n <= small.len() => 0,
                Plan::Merge(_) => 1,
                Plan::Pages(k) => k,
            };
            if npages == 0 && matches!(plan, Plan::Pages(_)) {
                drop(st);
                if done > 0 && nonblocking {
                    return Ok(done);
                }
                if nonblocking {
                    return Err(Error::new(Errno::EAGAIN));
                }
                if let Err(e) = self.wait_for(POLLOUT, caller) {
                    return if done > 0 { Ok(done) } else { Err(e) };
                }
                continue;
            }
            let mut fetched = 0;
            for page in &mut pages[..npages] {
                *page = match st.ring.spare.pop() {
                    Some(p) => p,
                    None => match kernel_buffer(PAGE_SIZE) {
                        Ok(p) => p,
                        Err(e) if done == 0 && fetched == 0 => return Err(e),
                        Err(_) => break,
                    },
                };
                fetched += 1;
            }
            drop(st);
            let npages = fetched;
            if npages == 0 && !matches!(plan, Plan::Merge(n) if n <= small.len()) {
                return Ok(done);
            }
            // Fetch the bytes without the lock.
            let mut filled = 0;
            let mut bytes = 0;
            let mut fault = None;
            match plan {
                Plan::Merge(n) => {
                    let dst = if n <= small.len() {
                        &mut small[..n]
                    } else {
                        &mut pages[0][..n]
                    };
                    match source(done, dst) {
                        Ok(()) => {
                            bytes = n;
                            filled = npages;
                        }
                        Err(e) => fault = Some(e),
                    }
                }
                Plan::Pages(_) => {
                    for page in &mut pages[..npages] {
                        let n = (rem - bytes).min(PAGE_SIZE);
                        if let Err(e) = source(done + bytes, &mut page[..n]) {
                            fault = Some(e);
                            break;
                        }
                        bytes += n;
                        filled += 1;
                    }
                }
            }
            // Put them in, as far as there is still room.
            let mut st = self.pipe.lock();
            let mut added = 0;
            if st.readers == 0 {
                // Nothing goes in; the top of the loop raises SIGPIPE.
                bytes = 0;
                filled = 0;
            }
            match plan {
                Plan::Merge(n) if bytes == n => {
                    let src = if n <= small.len() {
                        &small[..n]
                    } else {
                        &pages[0][..n]
                    };
                    if can_merge(&st.ring, n) {
                        if let Some(last) = st.ring.slots.back_mut() {
                            last.page[last.end..last.end + n].copy_from_slice(src);
                            last.end += n;
                            added = n;
                        }
                    } else if !st.ring.is_full()
                        && crate::fallible::reserve(&mut st.ring.slots, 1).is_ok()
                    {
                        let mut page = match st.ring.spare.pop() {
                            Some(p) => p,
                            None => kernel_buffer(PAGE_SIZE).unwrap_or_default(),
                        };
                        if page.len() == PAGE_SIZE {
                            page[..n].copy_from_slice(src);
                            st.ring.slots.push_back(Slot {
                                page,
                                start: 0,
                                end: n,
                                packet,
                            });
                            added = n;
                        }
                    }
                }
                Plan::Merge(_) => {}
                Plan::Pages(_) => {
                    let mut off = 0;
                    for page in &mut pages[..filled] {
                        let n = (bytes - off).min(PAGE_SIZE);
                        if st.ring.is_full()
                            || crate::fallible::reserve(&mut st.ring.slots, 1).is_err()
                        {
                            break;
                        }
                        st.ring.slots.push_back(Slot {
                            page: core::mem::take(page),
                            start: 0,
                            end: n,
                            packet,
                        });
                        off += n;
                        added += n;
                    }
                }
            }
            st.ring.len += added;
            // Pages left over go back as spares.
            for page in &mut pages[..npages] {
                if page.len() == PAGE_SIZE {
                    let page = core::mem::take(page);
                    if st.ring.spare.len() + st.ring.slots.len() < st.ring.max_slots
                        && st.ring.spare.try_reserve(1).is_ok()
                    {
                        st.ring.spare.push(page);
                    }
                }
            }
            let readers = st.readers;
            drop(st);
            if added > 0 {
                self.pipe.readiness.notify(POLLIN);
            }
            done += added;
            if readers == 0 {
                continue; // raises SIGPIPE above
            }
            // A fault ends the write once what was fetched before it is in
            // (else the rest is fetched again, and faults again, later).
            if let Some(e) = fault
                && added == bytes
            {
                return if done > 0 { Ok(done) } else { Err(e) };
            }
        }
        Ok(done)
    }
}

/// What splice(2), tee(2) and vmsplice(2) see of a pipe at one moment.
#[derive(Clone, Copy)]
pub struct PipeState {
    /// Unread bytes.
    pub len: usize,
    /// Bytes a write of fresh pages could add now (free slots).
    pub space: usize,
    pub readers: usize,
    pub writers: usize,
}

impl PipeEnd {
    /// The pipe's state now.
    pub fn state(&self) -> PipeState {
        let st = self.pipe.lock();
        PipeState {
            len: st.ring.len,
            space: (st.ring.max_slots.saturating_sub(st.ring.slots.len())) * PAGE_SIZE,
            readers: st.readers,
            writers: st.writers,
        }
    }

    /// Whether both ends belong to one pipe.
    pub fn same_pipe(&self, other: &PipeEnd) -> bool {
        Arc::ptr_eq(&self.pipe, &other.pipe)
    }

    /// Copies up to `buf.len()` unread bytes without consuming them (tee).
    pub fn peek(&self, buf: &mut [u8]) -> usize {
        let st = self.pipe.lock();
        let mut done = 0;
        for slot in &st.ring.slots {
            if done == buf.len() {
                break;
            }
            let n = (slot.end - slot.start).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&slot.page[slot.start..slot.start + n]);
            done += n;
        }
        done
    }

    /// The queue woken when the pipe's state changes.
    pub fn queue(&self) -> &frame::sync::WaitQueue {
        self.pipe.readiness.queue()
    }
}

/// The pipe end `file` holds, if it is a pipe or FIFO.
pub fn pipe_end(file: &File) -> Option<&PipeEnd> {
    file.ops()
        .and_then(|ops| (ops.as_ref() as &dyn core::any::Any).downcast_ref::<PipeEnd>())
}

/// pipe2(2): a new pipe's read and write ends, with `flags` (O_NONBLOCK;
/// O_DIRECT, kept by the write end, for packet mode; the caller applies
/// O_CLOEXEC to the descriptors), owned by `owner` (the creator's fs uid
/// and gid).
pub fn new_pipe(flags: u32, owner: (u32, u32)) -> Result<(Arc<File>, Arc<File>)> {
    // The pipe, its inode and two files are small fixed-size objects made
    // infallibly (docs/robustness.md); injection still tests the callers.
    // Linux's create_pipe_files reports a failed allocation as ENFILE.
    crate::fallible::check().map_err(|_| Error::new(Errno::ENFILE))?;
    let pipe = Pipe::new();
    let node = super::anon::pipe_inode(owner);
    let nonblock = flags & O_NONBLOCK;
    let reader = PipeEnd::attach(pipe.clone(), Ends::Read, false, false)?;
    let writer = PipeEnd::attach(pipe, Ends::Write, false, false)?;
    writer.set_packet(flags & O_DIRECT != 0);
    Ok((
        File::new(node.clone(), Some(Arc::new(reader)), O_RDONLY | nonblock),
        File::new(
            node,
            Some(Arc::new(writer)),
            O_WRONLY | nonblock | (flags & O_DIRECT),
        ),
    ))
}

/// F_GETPIPE_SZ / F_SETPIPE_SZ on `file`: EBADF unless it is a pipe.
pub fn pipe_capacity(file: &File, set: Option<u64>) -> Result<isize> {
    let end = file
        .ops()
        .and_then(|ops| (ops.as_ref() as &dyn core::any::Any).downcast_ref::<PipeEnd>())
        .ok_or(Error::new(Errno::EBADF))?;
    Ok(end.capacity(set)? as isize)
}
