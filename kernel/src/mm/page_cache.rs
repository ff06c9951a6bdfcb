//! The page cache: one [`PageCache`] per file (or raw block device) holds
//! that file's pages between the programs that read, write and map it and
//! the [`PageIo`] backend that moves them to and from storage.
//!
//! Ownership: the cache owns one reference to each cached `UFrame`; a
//! shared mapping (`Inode::shared_page`) or a private mapping that has not
//! yet broken copy-on-write owns another, and an I/O in flight one more.
//! A page is evicted only while the cache's reference is the only one
//! (nobody maps it, no I/O uses it) and it holds no dirty data.
//!
//! Locking: the page map is a spin lock held only to look pages up and to
//! change their state bits; I/O runs with no lock held, the page being
//! marked `busy` meanwhile (others wait on the cache's wait queue), so the
//! backend may take any lock of its own (an ext2 inode's, the block
//! device's).
//!
//! Dirty data is tracked per 512-byte sector, so that a file system can
//! forget a freed block of the device cache ([`PageCache::invalidate_range`])
//! without losing its neighbours, and so that write-back writes only what
//! changed. Stores through a shared writable mapping bypass `write`: a page
//! handed out by [`PageCache::page`] is written back whenever its contents
//! differ from what was last written (a hash of the page is kept), at every
//! write-back pass, as long as it is mapped.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::{SpinLock, WaitQueue};

use crate::error::{Errno, Error, Result};

/// Moves bytes between a cached page and where they go or come from:
/// `(done, frame, in_page, n)` for bytes `in_page..in_page + n` of `frame`,
/// `done` bytes into the transfer; returns how many it moved.
pub type PageSink<'a> = dyn FnMut(usize, &UFrame, usize, usize) -> Result<usize> + 'a;

/// Moves bytes of a run of consecutive cached pages where they go (read(2):
/// straight to user memory, one round of the page-table lock for the run):
/// `(done, frames, in_first, n)` for `n` bytes of `frames` taken back to
/// back from byte `in_first` of the first, `done` bytes into the transfer;
/// returns how many it moved.
pub type PageRunSink<'a> = dyn FnMut(usize, &[UFrame], usize, usize) -> Result<usize> + 'a;

/// Where write(2) takes the bytes of each page from
/// ([`PageCache::write_pages_nofault`]): `copy` runs with the page claimed
/// and resolves no fault, `fetch` runs with no page claimed.
pub struct PageSource<'a, 'b> {
    pub copy: &'a mut PageSink<'b>,
    pub fetch: &'a mut PageSink<'b>,
}

/// Called once when an asynchronous read ([`PageIo::start_read_pages`])
/// has completed, with Ok or the first error. It runs in task context (the
/// block driver's worker, or the submitter for a synchronous backend) and
/// takes the cache's lock.
pub type ReadDone = Box<dyn FnOnce(Result<()>) + Send>;

/// Bytes per sector: the unit of dirty and up-to-date tracking.
pub const SECTOR_SIZE: usize = 512;
const SECTORS_PER_PAGE: usize = PAGE_SIZE / SECTOR_SIZE;
const ALL_SECTORS: u8 = 0xff;

/// The cache's own lock level: above the inode and file locks a file
/// system may hold when it calls in, below the frame allocator and heap.
const CACHE_LEVEL: u8 = 36;

/// A file's backing store (an ext2 file, a raw block device).
pub trait PageIo: Send + Sync {
    /// Fills `frame` with page `index`; holes and bytes past the end of the
    /// file read as zeros.
    fn read_page(&self, index: u64, frame: &UFrame) -> Result<()>;

    /// Writes the first `len` bytes (`len <= PAGE_SIZE`) of `frame` as page
    /// `index`. The backend clips what lies past the end of its file.
    fn write_page(&self, index: u64, frame: &UFrame, len: usize) -> Result<()>;

    /// Reads pages `first..first + frames.len()` (readahead), with several
    /// requests in flight if the backend can. By default one at a time.
    fn read_pages(&self, first: u64, frames: &[UFrame]) -> Result<()> {
        for (i, f) in frames.iter().enumerate() {
            self.read_page(first + i as u64, f)?;
        }
        Ok(())
    }

    /// Starts reading pages `first..first + frames.len()` without waiting
    /// (background readahead) and calls `done` exactly once when all of
    /// them are in (or one failed). The frames are the cache's and stay
    /// busy until then. By default the read is synchronous
    /// ([`PageIo::read_pages`]) and `done` is called before returning.
    fn start_read_pages(&self, first: u64, frames: Vec<UFrame>, done: ReadDone) {
        done(self.read_pages(first, &frames));
    }

    /// Writes bytes `[offset, offset + len)` of page `index` (sector
    /// aligned). By default the page is written from its start.
    fn write_range(&self, index: u64, frame: &UFrame, offset: usize, len: usize) -> Result<()> {
        self.write_page(index, frame, offset + len)
    }

    /// Writes back a batch of pages: for each, the sectors of its `mask`
    /// (bit n: bytes n*512..(n+1)*512), with several requests in flight if
    /// the backend can. Pages come in ascending index order. By default one
    /// run of sectors at a time (`write_range`); every run is tried and the
    /// first error is returned.
    fn write_pages(&self, pages: &[PageWrite]) -> Result<()> {
        write_runs(self, pages)
    }

    /// Makes what was written durable (a Flush request to the device).
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

struct Page {
    frame: UFrame,
    /// Sectors holding the file's data (bit n = bytes n*512..(n+1)*512).
    uptodate: u8,
    /// Sectors changed since they were last written.
    dirty: u8,
    /// I/O on the page is in progress; wait on the cache's queue.
    busy: bool,
    /// Used since the reclaim scan last passed (second chance).
    accessed: bool,
    /// Handed out for a mapping: stores may change it behind our back.
    mapped: bool,
    /// Hash of the contents last written (mapped pages).
    written_hash: u64,
    /// When the first still-dirty sector became dirty (monotonic ns).
    dirtied_at: u64,
}

impl Page {
    fn new(frame: UFrame) -> Page {
        Page {
            frame,
            uptodate: 0,
            dirty: 0,
            busy: true,
            accessed: true,
            mapped: false,
            written_hash: 0,
            dirtied_at: 0,
        }
    }
}

struct State {
    pages: BTreeMap<u64, Page>,
    /// The page after the last one read (sequential detection) and the
    /// current readahead window, in pages.
    ra_next: u64,
    ra_window: u64,
    /// Readahead of the current sequential stream has been started for
    /// the pages before this one (the "marker": a read that comes within
    /// half a window of it starts the next window).
    ra_end: u64,
    /// Bumped by every truncate: a background read started before one
    /// completes with its pages dropped, not made up to date (the blocks
    /// it read may no longer be the file's).
    epoch: u64,
}

/// One file's cached pages.
pub struct PageCache {
    io: Weak<dyn PageIo>,
    /// This cache, for the completions of background reads (which keep it
    /// alive until they ran).
    this: Weak<PageCache>,
    state: SpinLock<State, CACHE_LEVEL>,
    /// Woken when a page stops being busy.
    queue: WaitQueue,
    /// A write-back failed since the last fsync looked (errseq, simplified:
    /// the next `sync` of any opener reports EIO once).
    error: AtomicBool,
    /// Write-back errors so far (Linux's errseq_t counter): an opener that
    /// keeps its own sample ([`ErrSeq`]) sees each error once.
    error_seq: AtomicU64,
    /// Dirty pages of this cache (for the global count).
    dirty_pages: AtomicUsize,
}

/// One opener's view of a cache's write-back errors (`struct file`'s
/// f_wb_err).
pub struct ErrSeq(AtomicU64);

/// Every live cache, for reclaim and background write-back.
static CACHES: SpinLock<Vec<Weak<PageCache>>, CACHE_LEVEL> = SpinLock::new(Vec::new());
/// Dirty pages over all caches.
static DIRTY_PAGES: AtomicUsize = AtomicUsize::new(0);
/// Pages over all caches.
static CACHED_PAGES: AtomicUsize = AtomicUsize::new(0);
/// Pages evicted so far (a test checks that reclaim ran).
static EVICTED: AtomicU64 = AtomicU64::new(0);

const RA_MIN: u64 = 4;
const RA_MAX: u64 = 64;
/// Most pages a sequential read keeps in flight ahead of itself: the
/// window, or the size of the read (up to this) if that is larger.
const RA_AHEAD_MAX: u64 = 512;
/// Most pages of one background read request ([`PageIo::start_read_pages`]):
/// each completes on its own, so the first pages of a window can be used
/// before the last are in.
const RA_CHUNK: u64 = 32;
/// Most pages one write-back batch gives the backend at once (1 MiB).
const WB_BATCH: usize = 256;

/// What a read does besides copying ([`PageCache::readahead_plan`]).
enum Readahead {
    None,
    /// Read the absent pages of `[start, end)` now, in one batch.
    Now(u64, u64),
    /// Start the absent pages of `[start, end)` in the background.
    Background(u64, u64),
}

/// One page of a write-back batch ([`PageIo::write_pages`]).
pub struct PageWrite {
    pub index: u64,
    pub frame: UFrame,
    /// Sectors to write (bit n: bytes n*512..(n+1)*512); never 0.
    pub mask: u8,
}

/// Writes each run of sectors of `pages` with `io.write_range`, one at a
/// time (`PageIo::write_pages`'s default); every run is tried and the
/// first error is returned.
pub fn write_runs<I: PageIo + ?Sized>(io: &I, pages: &[PageWrite]) -> Result<()> {
    let mut result = Ok(());
    for p in pages {
        for (start, len) in sector_runs(p.mask) {
            if let Err(e) = io.write_range(p.index, &p.frame, start, len) {
                result = result.and(Err(e));
            }
        }
    }
    result
}

/// The runs of set bits of a sector mask, as (byte offset, byte length)
/// within the page, in order.
pub fn sector_runs(mask: u8) -> impl Iterator<Item = (usize, usize)> {
    let mut s = 0;
    core::iter::from_fn(move || {
        while s < SECTORS_PER_PAGE && mask & (1 << s) == 0 {
            s += 1;
        }
        if s >= SECTORS_PER_PAGE {
            return None;
        }
        let start = s;
        while s < SECTORS_PER_PAGE && mask & (1 << s) != 0 {
            s += 1;
        }
        Some((start * SECTOR_SIZE, (s - start) * SECTOR_SIZE))
    })
}

/// A page claimed for write-back: busy, its dirty bits taken.
struct Claimed {
    index: u64,
    frame: UFrame,
    /// Sectors to write (all of them for a mapped page that changed).
    mask: u8,
    was_mapped: bool,
    new_hash: u64,
}

/// What claiming a page for write-back found.
enum Claim {
    Got(Claimed),
    Busy,
    Gone,
}

fn hash(frame: &UFrame) -> u64 {
    let mut buf = [0u8; SECTOR_SIZE];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for s in 0..SECTORS_PER_PAGE {
        if frame.read_bytes(s * SECTOR_SIZE, &mut buf).is_err() {
            return 0;
        }
        for chunk in buf.chunks_exact(8) {
            let w = u64::from_le_bytes([
                chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
            ]);
            h = (h ^ w).wrapping_mul(0x100_0000_01b3).rotate_left(29);
        }
    }
    h
}

/// Sector bits covering bytes `[start, end)` of a page (partial sectors included).
fn sector_mask(start: usize, end: usize) -> u8 {
    if start >= end {
        return 0;
    }
    let first = start / SECTOR_SIZE;
    let last = (end - 1) / SECTOR_SIZE;
    let mut m = 0u8;
    for s in first..=last.min(SECTORS_PER_PAGE - 1) {
        m |= 1 << s;
    }
    m
}

/// Sector bits wholly inside bytes `[start, end)` of a page.
fn full_sector_mask(start: usize, end: usize) -> u8 {
    let first = start.div_ceil(SECTOR_SIZE);
    let last = end / SECTOR_SIZE;
    let mut m = 0u8;
    for s in first..last.min(SECTORS_PER_PAGE) {
        m |= 1 << s;
    }
    m
}

impl PageCache {
    pub fn new(io: Weak<dyn PageIo>) -> Arc<PageCache> {
        let cache = Arc::new_cyclic(|this| PageCache {
            io,
            this: this.clone(),
            state: SpinLock::new(State {
                pages: BTreeMap::new(),
                ra_next: u64::MAX,
                ra_window: RA_MIN,
                ra_end: 0,
                epoch: 0,
            }),
            queue: WaitQueue::new(),
            error: AtomicBool::new(false),
            error_seq: AtomicU64::new(0),
            dirty_pages: AtomicUsize::new(0),
        });
        let mut all = CACHES.lock();
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&cache));
        cache
    }

    fn io(&self) -> Result<Arc<dyn PageIo>> {
        self.io.upgrade().ok_or(Error::with_message(
            Errno::EIO,
            "page cache backend is gone",
        ))
    }

    /// Marks page `index` busy, waiting for others' I/O on it; creates it
    /// (not up to date) if absent. Returns its frame and up-to-date bits.
    fn lock_page(&self, index: u64) -> Result<(UFrame, u8)> {
        // The common case, an idle cached page: claimed in one round of
        // the lock, without the wait queue.
        {
            let mut st = self.state.lock();
            if let Some(p) = st.pages.get_mut(&index)
                && !p.busy
            {
                p.busy = true;
                p.accessed = true;
                return Ok((p.frame.clone(), p.uptodate));
            }
        }
        let mut fresh: Option<UFrame> = None;
        loop {
            let mut out = None;
            self.queue.wait_until(|| {
                let mut st = self.state.lock();
                match st.pages.get_mut(&index) {
                    Some(p) if p.busy => None,
                    Some(p) => {
                        p.busy = true;
                        p.accessed = true;
                        out = Some((p.frame.clone(), p.uptodate));
                        Some(())
                    }
                    None => Some(()),
                }
            });
            if let Some(r) = out {
                return Ok(r);
            }
            // Allocate outside the lock: allocation may reclaim.
            let frame = match fresh.take() {
                Some(f) => f,
                None => alloc_cache_frame()?,
            };
            let mut st = self.state.lock();
            if st.pages.contains_key(&index) {
                fresh = Some(frame);
                continue;
            }
            st.pages.insert(index, Page::new(frame.clone()));
            CACHED_PAGES.fetch_add(1, Ordering::Relaxed);
            return Ok((frame, 0));
        }
    }

    /// Ends I/O on a busy page: adds `uptodate` bits and `dirty` bits.
    fn unlock_page(&self, index: u64, uptodate: u8, dirty: u8) {
        let mut st = self.state.lock();
        if let Some(p) = st.pages.get_mut(&index) {
            p.busy = false;
            p.uptodate |= uptodate;
            if dirty != 0 {
                if p.dirty == 0 {
                    p.dirtied_at = frame::timer::monotonic_ns();
                    self.dirty_pages.fetch_add(1, Ordering::Relaxed);
                    DIRTY_PAGES.fetch_add(1, Ordering::Relaxed);
                }
                p.dirty |= dirty;
            }
            // A page that never became valid is dropped (a read error).
            if p.uptodate == 0 && p.dirty == 0 && !p.mapped {
                st.pages.remove(&index);
                CACHED_PAGES.fetch_sub(1, Ordering::Relaxed);
            }
        }
        drop(st);
        self.queue.wake_all();
    }

    /// Brings sectors `want` of a busy page up to date.
    fn fill(&self, io: &dyn PageIo, index: u64, frame: &UFrame, have: u8, want: u8) -> Result<u8> {
        if want & !have == 0 {
            return Ok(have);
        }
        if have == 0 {
            io.read_page(index, frame)?;
            return Ok(ALL_SECTORS);
        }
        // Some sectors hold newer data than the disk: read into a scratch
        // page and copy only the missing ones.
        let scratch = alloc_cache_frame()?;
        io.read_page(index, &scratch)?;
        let mut buf = [0u8; SECTOR_SIZE];
        for s in 0..SECTORS_PER_PAGE {
            if have & (1 << s) == 0 {
                scratch.read_bytes(s * SECTOR_SIZE, &mut buf)?;
                frame.write_bytes(s * SECTOR_SIZE, &buf)?;
            }
        }
        Ok(ALL_SECTORS)
    }

    /// Reads up to `buf.len()` bytes at `offset` of a file of `size` bytes;
    /// sequential reads trigger readahead.
    pub fn read(&self, offset: usize, buf: &mut [u8], size: usize) -> Result<usize> {
        self.read_pages(offset, buf.len(), size, &mut |done, frames, in_first, n| {
            let mut at = 0;
            while at < n {
                let (page, in_page) = ((in_first + at) / PAGE_SIZE, (in_first + at) % PAGE_SIZE);
                let k = (n - at).min(PAGE_SIZE - in_page);
                frames[page].read_bytes(in_page, &mut buf[done + at..done + at + k])?;
                at += k;
            }
            Ok(n)
        })
    }

    /// Reads up to `len` bytes at `offset` of a file of `size` bytes, a run
    /// of pages at a time: `sink(done, frames, in_first, n)` copies `n`
    /// bytes of the consecutive pages `frames` from byte `in_first` of the
    /// first (the file's bytes from `offset + done`) where they go (read(2): straight to user
    /// memory) and returns how many it copied; a short count ends the read
    /// there. No lock is held while it runs. Returns the bytes read; a
    /// failure past the first byte is a short read.
    pub fn read_pages(&self, offset: usize, len: usize, size: usize, sink: &mut PageRunSink<'_>) -> Result<usize> {
        if offset >= size || len == 0 {
            return Ok(0);
        }
        let len = len.min(size - offset);
        // A gone backend is EIO, even for cached pages.
        if self.io.strong_count() == 0 {
            self.io()?;
        }
        let first = (offset / PAGE_SIZE) as u64;
        let last = ((offset + len - 1) / PAGE_SIZE) as u64;
        let size_pages = size.div_ceil(PAGE_SIZE) as u64;
        // One round of the lock for the readahead bookkeeping and the first
        // page (a short read of a cached page: that round only).
        let (ra, mut first_frame) = {
            let mut st = self.state.lock();
            let ra = Self::readahead_plan(&mut st, first, last, size_pages);
            (ra, Self::uptodate_locked(&mut st, first))
        };
        // The backend is needed only to read (readahead, a missing page).
        let mut io = None;
        match ra {
            Readahead::None => {}
            Readahead::Now(start, end) => {
                if end > start + 1 {
                    let backend = self.io()?;
                    self.readahead_run(&*backend, start, end);
                    io = Some(backend);
                    // The first page may have come in with the run.
                    if first_frame.is_none() {
                        first_frame = self.lookup_uptodate(first);
                    }
                }
            }
            Readahead::Background(start, end) => {
                let backend = self.io()?;
                self.readahead_async(&backend, start, end);
                io = Some(backend);
            }
        }
        const BATCH: usize = 16;
        // Made only for a read of several pages (a short read does not
        // pay for setting up and dropping it).
        let mut batch: Option<[Option<UFrame>; BATCH]> = None;
        let (mut batch_first, mut batch_at, mut batch_len) = (0u64, 0usize, 0usize);
        // Pieces found but not yet handed to `sink`: `done` counts what it
        // took, `queued` what is waiting (both from `offset`).
        // The run is consecutive pages; only its first piece can start
        // inside its page (`run_at`). Its vector is made for a read of
        // several pages only.
        let mut run: Vec<UFrame> = Vec::new();
        let mut run_at = 0;
        let mut done = 0;
        let mut queued = 0;
        while done + queued < len {
            if run.len() == BATCH {
                match flush_run(sink, done, &mut run, run_at, queued)? {
                    (n, true) => done += n,
                    (n, false) => return Ok(done + n),
                }
                queued = 0;
            }
            let pos = offset + done + queued;
            let index = (pos / PAGE_SIZE) as u64;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done - queued);
            let cached = match first_frame.take() {
                Some(f) if index == first => Some(f),
                _ => {
                    // Later pages come in batches: one round of the lock
                    // for the next few.
                    let slots = batch.get_or_insert_with(Default::default);
                    if batch_at >= batch_len || batch_first + batch_at as u64 != index {
                        let want = (last - index + 1).min(BATCH as u64) as usize;
                        self.uptodate_run(index, &mut slots[..want]);
                        batch_first = index;
                        batch_at = 0;
                        batch_len = want;
                    }
                    batch_at += 1;
                    slots[batch_at - 1].take()
                }
            };
            let frame = match cached {
                Some(f) => f,
                None => {
                    if io.is_none() {
                        io = Some(self.io()?);
                    }
                    // What is found so far goes out before waiting for I/O.
                    if !run.is_empty() {
                        match flush_run(sink, done, &mut run, run_at, queued)? {
                            (n, true) => done += n,
                            (n, false) => return Ok(done + n),
                        }
                        queued = 0;
                    }
                    let Some(io) = io.as_deref() else {
                        return Ok(done);
                    };
                    let (frame, have) = match self.lock_page(index) {
                        Ok(p) => p,
                        Err(e) => return if done > 0 { Ok(done) } else { Err(e) },
                    };
                    match self.fill(io, index, &frame, have, ALL_SECTORS) {
                        Ok(up) => self.unlock_page(index, up, 0),
                        Err(e) => {
                            self.unlock_page(index, 0, 0);
                            return if done > 0 { Ok(done) } else { Err(e) };
                        }
                    }
                    frame
                }
            };
            if run.is_empty() {
                if n == len - done {
                    // The read's last page and nothing queued: no run to
                    // build (a one-page read allocates nothing).
                    let (copied, _) = sink_run(sink, done, core::slice::from_ref(&frame), in_page, n)?;
                    return Ok(done + copied);
                }
                run_at = in_page;
                if run.capacity() == 0 {
                    run.reserve_exact(BATCH);
                }
            }
            run.push(frame);
            queued += n;
        }
        if !run.is_empty() {
            let (n, _) = flush_run(sink, done, &mut run, run_at, queued)?;
            done += n;
        }
        Ok(done)
    }

    /// The frame of a fully up-to-date, idle page.
    fn lookup_uptodate(&self, index: u64) -> Option<UFrame> {
        Self::uptodate_locked(&mut self.state.lock(), index)
    }

    /// For each page `first + i`, its frame in `out[i]` if it is cached,
    /// idle and fully up to date (marked accessed), else `None`: one round
    /// of the lock for a run of a sequential read.
    fn uptodate_run(&self, first: u64, out: &mut [Option<UFrame>]) {
        for slot in out.iter_mut() {
            *slot = None;
        }
        let end = first.saturating_add(out.len() as u64);
        let mut st = self.state.lock();
        for (&i, p) in st.pages.range_mut(first..end) {
            if p.busy || p.uptodate != ALL_SECTORS {
                continue;
            }
            p.accessed = true;
            out[(i - first) as usize] = Some(p.frame.clone());
        }
    }

    /// [`PageCache::lookup_uptodate`] with the lock held.
    fn uptodate_locked(st: &mut State, index: u64) -> Option<UFrame> {
        let p = st.pages.get_mut(&index)?;
        if p.busy || p.uptodate != ALL_SECTORS {
            return None;
        }
        p.accessed = true;
        Some(p.frame.clone())
    }

    /// Readahead bookkeeping (under the lock) for a read of pages
    /// `first..=last`: moves the window and says what to read.
    ///
    /// A read that does not continue the last one (a random pattern)
    /// resets the window and reads only what it asked for, now
    /// ([`Readahead::Now`]). A read that continues it doubles the window
    /// (up to [`RA_MAX`] pages) and, when it comes within half a window of
    /// where readahead has been started so far (`ra_end`, the marker),
    /// starts the absent pages up to one window past its own end in the
    /// background ([`Readahead::Background`]): its own missing pages first,
    /// then the window it does not wait for. The window is at least the
    /// read's own size (up to [`RA_AHEAD_MAX`]), so the next read of the
    /// same size finds its pages in flight or in.
    fn readahead_plan(st: &mut State, first: u64, last: u64, size_pages: u64) -> Readahead {
        let sequential = first == st.ra_next || (first == 0 && st.ra_next == u64::MAX);
        st.ra_window = if sequential && first != 0 {
            (st.ra_window * 2).min(RA_MAX)
        } else {
            RA_MIN
        };
        st.ra_next = last + 1;
        let want_end = (last + 1).min(size_pages);
        if !sequential {
            st.ra_end = want_end;
            return Readahead::Now(first, want_end);
        }
        let ahead = st.ra_window.max((want_end - first).min(RA_AHEAD_MAX));
        let target = want_end.saturating_add(ahead).min(size_pages);
        let started = st.ra_end.max(first);
        if started >= target || started >= want_end + ahead / 2 {
            return Readahead::None;
        }
        st.ra_end = target;
        // Skip what is already cached at the front (one walk of the map,
        // under this round of the lock: a warm read stops here).
        let mut s = started;
        for (&i, _) in st.pages.range(started..target) {
            if i != s {
                break;
            }
            s += 1;
        }
        if s >= target {
            return Readahead::None;
        }
        Readahead::Background(s, target)
    }

    /// Starts background reads of the absent pages of `[start, end)`, in
    /// requests of up to [`RA_CHUNK`] pages, without waiting for them: the
    /// pages are in the map, busy (a reader that needs one waits on the
    /// queue as for any page under I/O), until their request completes
    /// ([`PageCache::readahead_done`]). Stops early when no frame is free
    /// (memory pressure: readahead is only a hint).
    fn readahead_async(&self, io: &Arc<dyn PageIo>, start: u64, mut end: u64) {
        let Some(me) = self.this.upgrade() else {
            return;
        };
        let mut index = start;
        let mut started = false;
        while index < end {
            // The next run of absent pages (one round of the lock).
            let run_len = {
                let st = self.state.lock();
                for (&i, _) in st.pages.range(index..end) {
                    if i != index {
                        break;
                    }
                    index += 1;
                }
                let next = st.pages.range(index..end).next().map_or(end, |(&i, _)| i);
                (next - index).min(RA_CHUNK) as usize
            };
            if run_len == 0 {
                break;
            }
            // Frames outside the lock (allocation may reclaim).
            let mut frames = Vec::new();
            if frames.try_reserve_exact(run_len).is_err() {
                break;
            }
            for _ in 0..run_len {
                match alloc_cache_frame() {
                    Ok(f) => frames.push(f),
                    Err(_) => {
                        end = index; // no more after this run
                        break;
                    }
                }
            }
            if frames.is_empty() {
                break;
            }
            // Claim them, unless someone else brought a page in meanwhile.
            let (run_first, epoch) = {
                let mut st = self.state.lock();
                let mut taken = 0;
                while taken < frames.len() && !st.pages.contains_key(&(index + taken as u64)) {
                    let mut page = Page::new(frames[taken].clone());
                    // Not used yet: the first to go under memory pressure.
                    page.accessed = false;
                    st.pages.insert(index + taken as u64, page);
                    taken += 1;
                }
                frames.truncate(taken);
                (index, st.epoch)
            };
            if frames.is_empty() {
                continue;
            }
            let count = frames.len() as u64;
            CACHED_PAGES.fetch_add(count as usize, Ordering::Relaxed);
            index += count;
            let cache = me.clone();
            io.start_read_pages(
                run_first,
                frames,
                Box::new(move |r| cache.readahead_done(run_first, count, epoch, r.is_ok())),
            );
            started = true;
        }
        if started {
            // A disk's requests reach the device from its driver's worker
            // task: let it run now, so that the device reads the window
            // while this task copies (on one CPU it would otherwise wait
            // until this task next sleeps).
            frame::task::yield_now();
        }
    }

    /// Completion of a background read of pages `first..first + count`:
    /// they become idle and up to date, or, if the read failed (or the
    /// file was truncated since it started), are dropped, so that the
    /// read that needs one reads it again and gets the error itself.
    fn readahead_done(&self, first: u64, count: u64, epoch: u64, ok: bool) {
        let mut st = self.state.lock();
        let keep = ok && st.epoch == epoch;
        let mut dropped = 0;
        for index in first..first + count {
            let Some(p) = st.pages.get_mut(&index) else {
                continue;
            };
            p.busy = false;
            if keep {
                p.uptodate = ALL_SECTORS;
            } else if p.uptodate == 0 && p.dirty == 0 && !p.mapped {
                st.pages.remove(&index);
                dropped += 1;
            }
        }
        drop(st);
        CACHED_PAGES.fetch_sub(dropped, Ordering::Relaxed);
        self.queue.wake_all();
    }

    /// Reads the absent pages of `[start, end)` in one batch (readahead).
    fn readahead_run(&self, io: &dyn PageIo, start: u64, end: u64) {
        if end <= start + 1 {
            return; // one page: the plain path reads it
        }
        // Claim the absent pages of [start, end) as a run.
        let mut frames = Vec::new();
        let mut claimed = Vec::new();
        for index in start..end {
            let Ok(frame) = alloc_cache_frame() else {
                break;
            };
            let mut st = self.state.lock();
            if st.pages.contains_key(&index) {
                break;
            }
            st.pages.insert(index, Page::new(frame.clone()));
            CACHED_PAGES.fetch_add(1, Ordering::Relaxed);
            drop(st);
            frames.push(frame);
            claimed.push(index);
        }
        if frames.is_empty() {
            return;
        }
        let ok = io.read_pages(start, &frames).is_ok();
        for index in claimed {
            self.unlock_page(index, if ok { ALL_SECTORS } else { 0 }, 0);
        }
    }

    /// Writes `buf` at `offset`; the data becomes dirty (only the sectors
    /// it touched). A partial sector of a page not yet read is read first.
    pub fn write(&self, offset: usize, buf: &[u8]) -> Result<usize> {
        self.write_pages(offset, buf.len(), &mut |done, frame, in_page, n| {
            frame.write_bytes(in_page, &buf[done..done + n])?;
            Ok(n)
        })
    }

    /// Writes `len` bytes at `offset` page by page: `source(done, frame,
    /// in_page, n)` fills bytes `in_page..in_page + n` of the page at
    /// `offset + done` (write(2): straight from user memory) and returns
    /// how many it filled; a short count ends the write there. The page is
    /// claimed (busy) meanwhile, no lock held. Returns the bytes written; a
    /// failure past the first byte is a short write.
    pub fn write_pages(&self, offset: usize, len: usize, source: &mut PageSink<'_>) -> Result<usize> {
        let io = self.io()?;
        let mut done = 0;
        while done < len {
            let n = match self.put_page(&*io, offset, done, len, source) {
                Ok(n) => n,
                Err(e) => return if done > 0 { Ok(done) } else { Err(e) },
            };
            done += n.0;
            if n.0 < n.1 {
                break;
            }
        }
        note_dirtied();
        Ok(done)
    }

    /// [`PageCache::write_pages`] from memory that may fault (write(2) from
    /// user memory). `copy` runs with the page claimed and must not wait
    /// for anything (it must not resolve a fault: the fault could be on a
    /// mapping of this very page): it copies what it can reach and returns
    /// a short count at the first byte it cannot. The page is then
    /// released (the bytes before the fault kept) and `fetch(done, scratch,
    /// in_page, n)` brings the rest of that page's part into the same bytes
    /// of a scratch page with no page claimed, resolving faults (a short
    /// count: an unresolvable fault part way, an error: none of it);
    /// the page is claimed again and filled from the scratch page. Returns
    /// the bytes written; a failure past the first byte is a short write.
    pub fn write_pages_nofault(
        &self,
        offset: usize,
        len: usize,
        copy: &mut PageSink<'_>,
        fetch: &mut PageSink<'_>,
    ) -> Result<usize> {
        let io = self.io()?;
        let mut scratch: Option<UFrame> = None;
        let mut done = 0;
        while done < len {
            let (n, want) = match self.put_page(&*io, offset, done, len, copy) {
                Ok(n) => n,
                Err(e) => {
                    note_dirtied();
                    return if done > 0 { Ok(done) } else { Err(e) };
                }
            };
            done += n;
            if n == want {
                continue;
            }
            // A fault: the rest of this page's part through the scratch
            // page, with no claim held while the fault is resolved.
            let rest = want - n;
            let pos = offset + done;
            let at = pos % PAGE_SIZE;
            let buf = match &scratch {
                Some(f) => f.clone(),
                None => match alloc_cache_frame() {
                    Ok(f) => scratch.insert(f).clone(),
                    Err(e) => {
                        note_dirtied();
                        return if done > 0 { Ok(done) } else { Err(e) };
                    }
                },
            };
            let got = match fetch(done, &buf, at, rest) {
                Ok(g) => g.min(rest),
                Err(e) => {
                    note_dirtied();
                    return if done > 0 { Ok(done) } else { Err(e) };
                }
            };
            if got == 0 {
                break;
            }
            let mut from_scratch = |_: usize, frame: &UFrame, in_page: usize, m: usize| -> Result<usize> {
                let mut chunk = [0u8; SECTOR_SIZE];
                let mut k = 0;
                while k < m {
                    let c = (m - k).min(SECTOR_SIZE);
                    buf.read_bytes(in_page + k, &mut chunk[..c])?;
                    frame.write_bytes(in_page + k, &chunk[..c])?;
                    k += c;
                }
                Ok(m)
            };
            let m = match self.put_page(&*io, offset, done, done + got, &mut from_scratch) {
                Ok((m, _)) => m,
                Err(e) => {
                    note_dirtied();
                    return if done > 0 { Ok(done) } else { Err(e) };
                }
            };
            done += m;
            if m < rest {
                break;
            }
        }
        note_dirtied();
        Ok(done)
    }

    /// Writes the part of one page at `offset + done` (up to `len` in all)
    /// from `source`, the page claimed meanwhile. Returns the bytes kept
    /// and the bytes asked of `source`: fewer kept means the write ends
    /// (or, for [`PageCache::write_pages_nofault`], faulted) there.
    fn put_page(
        &self,
        io: &dyn PageIo,
        offset: usize,
        done: usize,
        len: usize,
        source: &mut PageSink<'_>,
    ) -> Result<(usize, usize)> {
        let pos = offset.checked_add(done).ok_or(Error::new(Errno::EFBIG))?;
        let index = (pos / PAGE_SIZE) as u64;
        let in_page = pos % PAGE_SIZE;
        let n = (PAGE_SIZE - in_page).min(len - done);
        let (frame, have) = self.lock_page(index)?;
        // Sectors only partly overwritten must hold the file's data.
        let partial = sector_mask(in_page, in_page + n) & !full_sector_mask(in_page, in_page + n);
        let have = match self.fill(io, index, &frame, have, partial) {
            Ok(h) => h,
            Err(e) => {
                self.unlock_page(index, 0, 0);
                return Err(e);
            }
        };
        let copied = match source(done, &frame, in_page, n) {
            Ok(c) => c.min(n),
            Err(e) => {
                self.unlock_page(index, have, 0);
                return Err(e);
            }
        };
        // A short copy ends inside a sector: keep it only if that sector
        // held the file's data (else its rest is not known).
        let mut copied = copied;
        let end = in_page + copied;
        if copied < n && end % SECTOR_SIZE != 0 && have & (1 << (end / SECTOR_SIZE)) == 0 {
            copied = (end - end % SECTOR_SIZE).saturating_sub(in_page);
        }
        let touched = sector_mask(in_page, in_page + copied);
        self.unlock_page(index, have | touched, touched);
        Ok((copied, n))
    }

    /// The frame of page `index`, read in if needed: what a MAP_SHARED
    /// mapping maps (stores through it are written back), and the source a
    /// MAP_PRIVATE mapping shares until it breaks copy-on-write.
    pub fn page(&self, index: u64) -> Result<UFrame> {
        self.page_with(index, true)
    }

    /// The frame of page `index` for a mapping that never stores to it (a
    /// MAP_PRIVATE mapping maps it read-only and copies it at the first
    /// store): no write-back pass needs to look at it.
    pub fn page_readonly(&self, index: u64) -> Result<UFrame> {
        self.page_with(index, false)
    }

    fn page_with(&self, index: u64, writable: bool) -> Result<UFrame> {
        if let Some(frame) = self.cached_page(index, writable) {
            return Ok(frame);
        }
        let io = self.io()?;
        let (frame, have) = self.lock_page(index)?;
        let up = match self.fill(&*io, index, &frame, have, ALL_SECTORS) {
            Ok(up) => up,
            Err(e) => {
                self.unlock_page(index, 0, 0);
                return Err(e);
            }
        };
        if writable
            && let Some(p) = self.state.lock().pages.get_mut(&index)
            && !p.mapped
        {
            p.mapped = true;
            p.written_hash = if p.dirty == 0 { hash(&frame) } else { 0 };
        }
        self.unlock_page(index, up, 0);
        Ok(frame)
    }

    /// `page_with` for a page already cached, idle and fully up to date
    /// (a mapping of a file being read): one round of the lock, no page
    /// claim, no wake-up. `None` sends the caller down the slow path.
    fn cached_page(&self, index: u64, writable: bool) -> Option<UFrame> {
        // A gone backend is the slow path's EIO.
        if self.io.strong_count() == 0 {
            return None;
        }
        let mut st = self.state.lock();
        let p = st.pages.get_mut(&index)?;
        if p.busy || p.uptodate != ALL_SECTORS {
            return None;
        }
        p.accessed = true;
        if writable && !p.mapped {
            p.mapped = true;
            p.written_hash = if p.dirty == 0 { hash(&p.frame) } else { 0 };
        }
        Some(p.frame.clone())
    }

    /// Fault-around's source: for each page `first + i`, the frame in
    /// `out[i]` if the page is cached, idle and fully up to date, else
    /// `None` (and `None` for `skip`, the page the fault maps itself). It
    /// reads nothing, waits for nothing and marks nothing `mapped`: the
    /// caller maps these read-only, and a store through a shared mapping
    /// faults and goes through [`PageCache::page`].
    pub fn cached_run(&self, first: u64, skip: u64, out: &mut [Option<UFrame>]) {
        for slot in out.iter_mut() {
            *slot = None;
        }
        let Some(end) = first.checked_add(out.len() as u64) else {
            return;
        };
        let mut st = self.state.lock();
        for (&i, p) in st.pages.range_mut(first..end) {
            if i == skip || p.busy || p.uptodate != ALL_SECTORS {
                continue;
            }
            p.accessed = true;
            out[(i - first) as usize] = Some(p.frame.clone());
        }
    }

    /// Drops pages past `size` and zeroes the tail of the last one (their
    /// dirty data is forgotten: the file no longer has it).
    pub fn truncate(&self, size: usize) {
        let first_gone = size.div_ceil(PAGE_SIZE) as u64;
        let dropped: Vec<(u64, Page)> = {
            let mut st = self.state.lock();
            // Background reads in flight drop their pages when they end.
            st.epoch += 1;
            st.ra_end = 0;
            let gone: Vec<u64> = st
                .pages
                .range(first_gone..)
                .filter(|(_, p)| !p.busy)
                .map(|(&i, _)| i)
                .collect();
            gone.into_iter()
                .filter_map(|i| st.pages.remove(&i).map(|p| (i, p)))
                .collect()
        };
        for (_, p) in &dropped {
            self.forget_dirty(p.dirty);
            CACHED_PAGES.fetch_sub(1, Ordering::Relaxed);
        }
        if !size.is_multiple_of(PAGE_SIZE) {
            let index = (size / PAGE_SIZE) as u64;
            let frame = self.state.lock().pages.get(&index).map(|p| p.frame.clone());
            if let Some(f) = frame {
                let _ = f.fill_zero(size % PAGE_SIZE, PAGE_SIZE - size % PAGE_SIZE);
            }
        }
    }

    fn forget_dirty(&self, dirty: u8) {
        if dirty != 0 {
            self.dirty_pages.fetch_sub(1, Ordering::Relaxed);
            DIRTY_PAGES.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Forgets the cached and dirty data of `[offset, offset + len)`: the
    /// next read gets it from the backend, and no write-back writes it (a
    /// file system freed the block it belonged to).
    pub fn invalidate_range(&self, offset: usize, len: usize) {
        let Some(end) = offset.checked_add(len) else {
            return;
        };
        if len == 0 {
            return;
        }
        let first = (offset / PAGE_SIZE) as u64;
        let last = ((end - 1) / PAGE_SIZE) as u64;
        // Only cached pages matter: a huge range costs what it holds.
        let present: Vec<u64> = self
            .state
            .lock()
            .pages
            .range(first..=last)
            .map(|(&i, _)| i)
            .collect();
        for index in present {
            // Wait for I/O on the page, then clear its bits.
            self.queue.wait_until(|| {
                let mut st = self.state.lock();
                let Some(p) = st.pages.get_mut(&index) else {
                    return Some(());
                };
                if p.busy {
                    return None;
                }
                let page_start = index as usize * PAGE_SIZE;
                let s = offset.max(page_start) - page_start;
                let e = end.min(page_start + PAGE_SIZE) - page_start;
                let m = sector_mask(s, e);
                let was_dirty = p.dirty != 0;
                p.dirty &= !m;
                p.uptodate &= !m;
                let now_clean = was_dirty && p.dirty == 0;
                let drop_page = p.uptodate == 0 && p.dirty == 0 && p.frame.ref_count() == 1;
                if drop_page {
                    st.pages.remove(&index);
                    CACHED_PAGES.fetch_sub(1, Ordering::Relaxed);
                }
                if now_clean {
                    self.forget_dirty(1);
                }
                Some(())
            });
        }
    }

    /// Writes every dirty page (and every mapped page whose contents
    /// changed) and waits for it. The first write-back error since the
    /// last call is returned (EIO), then forgotten.
    pub fn sync(&self) -> Result<()> {
        let r = self.write_back(|_| true, true);
        if self.error.swap(false, Ordering::AcqRel) {
            return Err(Error::new(Errno::EIO));
        }
        r.map(|_| ())
    }

    /// `sync` followed by a flush of the backend (fsync): after it
    /// returns, the data is on the device.
    pub fn sync_and_flush(&self) -> Result<()> {
        self.sync()?;
        self.io()?.flush()
    }

    /// A sample of the error count for a new opener (open(2)): its
    /// [`PageCache::sync_and_flush_since`] reports only errors after it.
    pub fn error_sample(&self) -> ErrSeq {
        ErrSeq(AtomicU64::new(self.error_seq.load(Ordering::Acquire)))
    }

    /// fsync for an opener with its own sample (Linux's errseq): writes
    /// back and flushes; EIO if a write-back failed since the opener last
    /// looked, whoever's write it was. Each opener sees each error once.
    pub fn sync_and_flush_since(&self, seen: &ErrSeq) -> Result<()> {
        let r = self.write_back(|_| true, true);
        // The shared one-shot flag is for openers without a sample.
        let now = self.error_seq.load(Ordering::Acquire);
        if seen.0.swap(now, Ordering::AcqRel) != now {
            return Err(Error::new(Errno::EIO));
        }
        r?;
        self.io()?.flush()
    }

    /// Writes the pages `pick(dirtied_at)` selects; `mapped`: also mapped
    /// pages whose contents changed. Returns how many were written.
    ///
    /// The pages go to the backend in batches of up to [`WB_BATCH`]
    /// (`PageIo::write_pages`: a few large requests in flight at once, as
    /// Linux's writepages) instead of one request per page, each waited
    /// for. Only the first page of a batch is waited for if busy; a later
    /// one that is busy ends the batch (written first), so write-back
    /// never sleeps while it holds claimed pages.
    fn write_back(&self, pick: impl Fn(u64) -> bool, mapped: bool) -> Result<usize> {
        let io = self.io()?;
        let candidates: Vec<u64> = {
            let st = self.state.lock();
            st.pages
                .iter()
                // A busy page may be in write-back by another task (its
                // dirty bits already taken): wait for it too, so that
                // `sync` returns only once that write is done.
                .filter(|(_, p)| {
                    (p.dirty != 0 && pick(p.dirtied_at)) || (mapped && (p.mapped || p.busy))
                })
                .map(|(&i, _)| i)
                .collect()
        };
        let mut written = 0;
        let mut batch: Vec<Claimed> = Vec::new();
        for index in candidates {
            let claim = if batch.is_empty() {
                self.claim(index)
            } else if batch.len() >= WB_BATCH {
                written += self.write_batch(&*io, &mut batch);
                self.claim(index)
            } else {
                match self.try_claim(index) {
                    Claim::Got(c) => Some(c),
                    Claim::Gone => None,
                    Claim::Busy => {
                        written += self.write_batch(&*io, &mut batch);
                        self.claim(index)
                    }
                }
            };
            let Some(c) = claim else {
                continue;
            };
            if c.mask == 0 {
                // A mapped page that did not change: nothing to write.
                self.release(&c);
                self.queue.wake_all();
                continue;
            }
            batch.push(c);
        }
        written += self.write_batch(&*io, &mut batch);
        Ok(written)
    }

    /// A write-back failed: the data is lost for the device; the error is
    /// kept for the next fsync (errseq), before anyone waiting on the page
    /// can look.
    fn note_write_error(&self) {
        self.error.store(true, Ordering::Release);
        self.error_seq.fetch_add(1, Ordering::AcqRel);
    }

    /// Writes the claimed pages of `batch` in one `write_pages` call,
    /// releases them and empties `batch`. Returns how many were written.
    fn write_batch(&self, io: &dyn PageIo, batch: &mut Vec<Claimed>) -> usize {
        if batch.is_empty() {
            return 0;
        }
        let pages: Vec<PageWrite> = batch
            .iter()
            .map(|c| PageWrite {
                index: c.index,
                frame: c.frame.clone(),
                mask: c.mask,
            })
            .collect();
        if io.write_pages(&pages).is_err() {
            self.note_write_error();
        }
        drop(pages);
        for c in batch.iter() {
            self.release(c);
        }
        self.queue.wake_all();
        let n = batch.len();
        batch.clear();
        n
    }

    /// Claims page `index` for write-back, waiting while it is busy: marks
    /// it busy and takes its dirty bits (stores made while it is written
    /// make it dirty again). `None` if the page is gone.
    fn claim(&self, index: u64) -> Option<Claimed> {
        let mut claim = None;
        self.queue.wait_until(|| match self.try_claim(index) {
            Claim::Busy => None,
            Claim::Gone => Some(()),
            Claim::Got(c) => {
                claim = Some(c);
                Some(())
            }
        });
        claim
    }

    /// [`PageCache::claim`] without waiting.
    fn try_claim(&self, index: u64) -> Claim {
        let (frame, dirty, was_mapped, old_hash) = {
            let mut st = self.state.lock();
            let Some(p) = st.pages.get_mut(&index) else {
                return Claim::Gone;
            };
            if p.busy {
                return Claim::Busy;
            }
            p.busy = true;
            let c = (p.frame.clone(), p.dirty, p.mapped, p.written_hash);
            p.dirty = 0;
            c
        };
        self.forget_dirty(dirty);
        let mut mask = dirty;
        let mut new_hash = old_hash;
        if was_mapped {
            new_hash = hash(&frame);
            if new_hash != old_hash {
                mask = ALL_SECTORS;
            }
        }
        Claim::Got(Claimed {
            index,
            frame,
            mask,
            was_mapped,
            new_hash,
        })
    }

    /// Ends the write-back of a claimed page.
    fn release(&self, c: &Claimed) {
        let mut st = self.state.lock();
        if let Some(p) = st.pages.get_mut(&c.index) {
            p.busy = false;
            if c.was_mapped {
                p.written_hash = c.new_hash;
                // Unmapped since (only ours and the claim's handle left).
                if c.frame.ref_count() <= 2 {
                    p.mapped = false;
                }
            }
        }
    }

    /// Evicts up to `want` clean, unmapped, idle pages not used since the
    /// last scan (others get their second chance); returns how many.
    fn evict(&self, want: usize) -> usize {
        let mut freed: Vec<Page> = Vec::new();
        {
            let mut st = self.state.lock();
            // Reclaim runs when memory is short: its own lists are
            // allocated fallibly (nothing is evicted if they cannot be).
            let mut gone = Vec::new();
            if gone.try_reserve_exact(want.min(st.pages.len())).is_err()
                || freed.try_reserve_exact(want.min(st.pages.len())).is_err()
            {
                return 0;
            }
            for (&i, p) in st.pages.iter_mut() {
                if gone.len() >= want {
                    break;
                }
                if p.busy || p.dirty != 0 || p.mapped || p.frame.ref_count() != 1 {
                    continue;
                }
                if p.accessed {
                    p.accessed = false;
                    continue;
                }
                gone.push(i);
            }
            for i in gone {
                if let Some(p) = st.pages.remove(&i) {
                    freed.push(p);
                }
            }
        }
        let n = freed.len();
        CACHED_PAGES.fetch_sub(n, Ordering::Relaxed);
        EVICTED.fetch_add(n as u64, Ordering::Relaxed);
        drop(freed); // frames go back to the allocator outside the lock
        n
    }

    /// Drops every clean, idle, unmapped page (BLKFLSBUF, drop_caches).
    pub fn invalidate_clean(&self) {
        let freed: Vec<Page> = {
            let mut st = self.state.lock();
            let gone: Vec<u64> = st
                .pages
                .iter()
                .filter(|(_, p)| !p.busy && p.dirty == 0 && !p.mapped && p.frame.ref_count() == 1)
                .map(|(&i, _)| i)
                .collect();
            gone.into_iter()
                .filter_map(|i| st.pages.remove(&i))
                .collect()
        };
        CACHED_PAGES.fetch_sub(freed.len(), Ordering::Relaxed);
    }

    /// Pages cached (resident) in this cache.
    pub fn resident(&self) -> usize {
        self.state.lock().pages.len()
    }

    /// Whether page `index` is cached (mincore).
    pub fn contains(&self, index: u64) -> bool {
        self.state.lock().pages.contains_key(&index)
    }
}

impl Drop for PageCache {
    fn drop(&mut self) {
        let st = self.state.get_mut();
        let n = st.pages.len();
        let dirty = st.pages.values().filter(|p| p.dirty != 0).count();
        CACHED_PAGES.fetch_sub(n, Ordering::Relaxed);
        DIRTY_PAGES.fetch_sub(dirty, Ordering::Relaxed);
    }
}

/// A frame for the cache: if none is free, reclaim clean cache pages and
/// try again once.
fn alloc_cache_frame() -> Result<UFrame> {
    crate::fallible::frame()
}

fn live_caches() -> Vec<Arc<PageCache>> {
    let mut all = CACHES.lock();
    all.retain(|w| w.strong_count() > 0);
    let mut live = Vec::new();
    if live.try_reserve_exact(all.len()).is_err() {
        return live;
    }
    live.extend(all.iter().filter_map(Weak::upgrade));
    live
}

/// Evicts up to `want` clean, unmapped cache pages over all caches (two
/// passes: the first gives recently used pages a second chance). Returns
/// how many were freed. Called when memory runs out.
pub fn reclaim(want: usize) -> usize {
    let caches = live_caches();
    let mut freed = 0;
    for _pass in 0..2 {
        for c in &caches {
            if freed >= want {
                return freed;
            }
            freed += c.evict(want - freed);
        }
    }
    freed
}

/// Writes back every cache's dirty pages (sync(2)); the first error is
/// returned after all were tried.
pub fn sync_all() -> Result<()> {
    let mut result = Ok(());
    for c in live_caches() {
        if let Err(e) = c.write_back(|_| true, true) {
            result = result.and(Err(e));
        }
    }
    result
}

/// (cached pages, dirty pages) over all caches: /proc/meminfo's Cached
/// and Dirty.
pub fn stats() -> (usize, usize) {
    (
        CACHED_PAGES.load(Ordering::Relaxed),
        DIRTY_PAGES.load(Ordering::Relaxed),
    )
}

/// Pages evicted by reclaim since boot.
pub fn evicted() -> u64 {
    EVICTED.load(Ordering::Relaxed)
}

/// How long a page may stay dirty before the background task writes it
/// (Linux's dirty_expire_centisecs: 30 s; 5 s here, its write-back period).
const DIRTY_EXPIRE_NS: u64 = 5_000_000_000;
/// How often the background task looks.
const WRITEBACK_PERIOD_NS: u64 = 1_000_000_000;

static WRITEBACK_QUEUE: WaitQueue = WaitQueue::new();
static WRITEBACK_KICK: AtomicBool = AtomicBool::new(false);
static WRITEBACK_STARTED: AtomicBool = AtomicBool::new(false);

/// Dirty pages beyond which the background task writes everything
/// (Linux's dirty_background_ratio: 10% of memory).
fn dirty_threshold() -> usize {
    frame::boot::total_ram() / PAGE_SIZE / 10
}

/// Starts the background write-back task (once).
pub fn start_writeback() {
    if WRITEBACK_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    if frame::task::TaskOptions::new(writeback_task)
        .spawn()
        .is_err()
    {
        WRITEBACK_STARTED.store(false, Ordering::Release);
    }
}

/// Asks the background task to write now if dirty memory is too large.
fn note_dirtied() {
    if DIRTY_PAGES.load(Ordering::Relaxed) > dirty_threshold()
        && !WRITEBACK_KICK.swap(true, Ordering::AcqRel)
    {
        WRITEBACK_QUEUE.wake_all();
    }
}

fn writeback_task() {
    loop {
        let deadline = frame::timer::monotonic_ns().saturating_add(WRITEBACK_PERIOD_NS);
        let _ = WRITEBACK_QUEUE.wait_until_or_deadline(
            || WRITEBACK_KICK.load(Ordering::Acquire).then_some(()),
            deadline,
        );
        let forced = WRITEBACK_KICK.swap(false, Ordering::AcqRel);
        let now = frame::timer::monotonic_ns();
        for c in live_caches() {
            let over = forced || DIRTY_PAGES.load(Ordering::Relaxed) > dirty_threshold();
            let _ = c.write_back(|t| over || now.saturating_sub(t) >= DIRTY_EXPIRE_NS, true);
        }
    }
}

impl PageCache {
    /// Dirty pages of this cache.
    pub fn dirty(&self) -> usize {
        self.dirty_pages.load(Ordering::Relaxed)
    }

    /// Called after writes: wakes the background task past the threshold.
    pub fn balance_dirty(&self) {
        note_dirtied();
    }
}

/// Small in-page copies for a cache used as a block device's metadata
/// store (ext2's bitmaps, inode table and directory blocks): one round of
/// the lock, no readahead bookkeeping, no busy/wake cycle. Each falls back
/// (returns false, nothing copied) unless the page is cached, fully up to
/// date and idle, and the range lies inside it; the caller then takes the
/// general path ([`PageCache::read`] / [`PageCache::write`]).
impl PageCache {
    /// Copies bytes `[offset, offset + buf.len())` out of the cache.
    pub fn read_cached(&self, offset: usize, buf: &mut [u8]) -> bool {
        let mut st = self.state.lock();
        let Some((p, in_page)) = idle_page(&mut st, offset, buf.len()) else {
            return false;
        };
        p.accessed = true;
        p.frame.read_bytes(in_page, buf).is_ok()
    }

    /// Copies `buf` into the cache at `offset` and marks the sectors it
    /// touched dirty, as [`PageCache::write`] does. An idle page is not in
    /// write-back (write-back claims it busy before it takes the dirty
    /// bits), so the store is written by the next write-back pass.
    pub fn write_cached(&self, offset: usize, buf: &[u8]) -> bool {
        if buf.is_empty() {
            return false;
        }
        let mut st = self.state.lock();
        let Some((p, in_page)) = idle_page(&mut st, offset, buf.len()) else {
            return false;
        };
        if p.frame.write_bytes(in_page, buf).is_err() {
            return false;
        }
        p.accessed = true;
        if p.dirty == 0 {
            p.dirtied_at = frame::timer::monotonic_ns();
            self.dirty_pages.fetch_add(1, Ordering::Relaxed);
            DIRTY_PAGES.fetch_add(1, Ordering::Relaxed);
        }
        p.dirty |= sector_mask(in_page, in_page + buf.len());
        drop(st);
        note_dirtied();
        true
    }
}

/// The cached page holding `[offset, offset + len)` and the range's start
/// in it, if the range lies inside one page that is fully up to date and
/// idle (what `read_cached` and `write_cached` may touch under the lock).
fn idle_page(st: &mut State, offset: usize, len: usize) -> Option<(&mut Page, usize)> {
    let in_page = offset % PAGE_SIZE;
    if in_page + len > PAGE_SIZE {
        return None;
    }
    let p = st.pages.get_mut(&((offset / PAGE_SIZE) as u64))?;
    (!p.busy && p.uptodate == ALL_SECTORS).then_some((p, in_page))
}

/// Hands the `n` bytes of the consecutive pages `frames`, from byte `at` of
/// the first (the read's bytes from `done` on), to `sink`: `(copied, all)`,
/// where `all` says every byte went; an error only when nothing was read at
/// all (a failure past the first byte is a short read).
fn sink_run(sink: &mut PageRunSink<'_>, done: usize, frames: &[UFrame], at: usize, n: usize) -> Result<(usize, bool)> {
    let copied = match sink(done, frames, at, n) {
        Ok(c) => c.min(n),
        Err(e) if done == 0 => return Err(e),
        Err(_) => 0,
    };
    Ok((copied, copied == n))
}

/// [`sink_run`] for the queued run, which it empties.
fn flush_run(sink: &mut PageRunSink<'_>, done: usize, run: &mut Vec<UFrame>, at: usize, n: usize) -> Result<(usize, bool)> {
    let r = sink_run(sink, done, run, at, n);
    run.clear();
    r
}
