//! `ktest=page_cache`: the page cache against a backend that records what
//! it is asked to do: sector-precise write-back, `invalidate_range`,
//! write errors reported once by the next sync (errseq), write-back in
//! batches (`PageIo::write_pages`), truncate,
//! readahead batches that grow, background readahead (not waited for,
//! errors surfacing on the read that needs the page, dropped by a
//! truncate that overtakes it, not started by random reads, dropped under
//! memory pressure), eviction of clean pages only, and the
//! partition-table parser on hostile tables. Each check prints what failed;
//! the test passes only if none did.

use alloc::sync::{Arc, Weak};
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::mm::{PAGE_SIZE, UFrame};
use frame::sync::SpinLock;

use super::page_cache::{PageCache, PageIo, PageWrite, ReadDone, reclaim, write_runs};
use crate::error::{Errno, Error, Result};

/// A 64-page "file" in memory that logs writes and can fail them.
struct Store {
    data: SpinLock<Vec<u8>, 38>,
    /// (page, offset, len) of every write.
    writes: SpinLock<Vec<(u64, usize, usize)>, 38>,
    /// Sizes of read_pages batches.
    batches: SpinLock<Vec<usize>, 38>,
    /// (page, sector mask) of each write_pages batch.
    wb_batches: SpinLock<Vec<Vec<(u64, u8)>>, 38>,
    fail_writes: AtomicBool,
    /// (first page, pages) of each background read started.
    started: SpinLock<Vec<(u64, usize)>, 38>,
    /// Background reads are held here (not completed) while set.
    defer: AtomicBool,
    deferred: SpinLock<Vec<(u64, Vec<UFrame>, ReadDone)>, 38>,
    /// Reads of this page and later ones fail with EIO.
    fail_reads_from: AtomicU64,
}

impl Store {
    /// Completes the background reads held so far: their frames are filled
    /// and `done` gets Ok, or `done` gets EIO if `fail`.
    fn complete_deferred(&self, fail: bool) -> usize {
        let held = core::mem::take(&mut *self.deferred.lock());
        let n = held.len();
        for (first, frames, done) in held {
            if fail {
                done(Err(Error::new(Errno::EIO)));
            } else {
                done(self.read_pages(first, &frames));
            }
        }
        n
    }
}

const PAGES: usize = 64;

impl PageIo for Store {
    fn read_page(&self, index: u64, frame: &UFrame) -> Result<()> {
        if index >= self.fail_reads_from.load(Ordering::Relaxed) {
            return Err(Error::new(Errno::EIO));
        }
        let at = index as usize * PAGE_SIZE;
        let data = self.data.lock();
        let page = data.get(at..at + PAGE_SIZE).ok_or(Error::new(Errno::EIO))?;
        frame.write_bytes(0, page)?;
        Ok(())
    }

    fn write_page(&self, index: u64, frame: &UFrame, len: usize) -> Result<()> {
        self.write_range(index, frame, 0, len)
    }

    fn write_range(&self, index: u64, frame: &UFrame, offset: usize, len: usize) -> Result<()> {
        self.writes.lock().push((index, offset, len));
        if self.fail_writes.load(Ordering::Relaxed) {
            return Err(Error::new(Errno::EIO));
        }
        let mut buf = vec![0u8; len];
        frame.read_bytes(offset, &mut buf)?;
        let at = index as usize * PAGE_SIZE + offset;
        self.data.lock()[at..at + len].copy_from_slice(&buf);
        Ok(())
    }

    /// Records the batch, then writes each run of sectors as the default
    /// does (so the write log above stays sector-precise).
    fn write_pages(&self, pages: &[PageWrite]) -> Result<()> {
        self.wb_batches
            .lock()
            .push(pages.iter().map(|p| (p.index, p.mask)).collect());
        write_runs(self, pages)
    }

    fn read_pages(&self, first: u64, frames: &[UFrame]) -> Result<()> {
        self.batches.lock().push(frames.len());
        for (i, f) in frames.iter().enumerate() {
            self.read_page(first + i as u64, f)?;
        }
        Ok(())
    }

    fn start_read_pages(&self, first: u64, frames: Vec<UFrame>, done: ReadDone) {
        self.started.lock().push((first, frames.len()));
        if self.defer.load(Ordering::Relaxed) {
            self.deferred.lock().push((first, frames, done));
        } else {
            done(self.read_pages(first, &frames));
        }
    }
}

struct Checker {
    failed: usize,
}

impl Checker {
    fn check(&mut self, ok: bool, what: &str) {
        if !ok {
            frame::println!("ktest page_cache: FAILED: {what}");
            self.failed += 1;
        }
    }
}

fn byte(at: usize) -> u8 {
    (at * 7 + at / 4096) as u8
}

/// A store holding `byte(at)` at every offset, logging nothing yet.
fn new_store() -> Arc<Store> {
    Arc::new(Store {
        data: SpinLock::new((0..PAGES * PAGE_SIZE).map(byte).collect()),
        writes: SpinLock::new(Vec::new()),
        batches: SpinLock::new(Vec::new()),
        wb_batches: SpinLock::new(Vec::new()),
        fail_writes: AtomicBool::new(false),
        started: SpinLock::new(Vec::new()),
        defer: AtomicBool::new(false),
        deferred: SpinLock::new(Vec::new()),
        fail_reads_from: AtomicU64::new(u64::MAX),
    })
}

/// Runs every check; returns the number that failed.
pub fn run() -> usize {
    let mut c = Checker { failed: 0 };
    let store = new_store();
    let weak: Weak<dyn PageIo> = Arc::downgrade(&(store.clone() as Arc<dyn PageIo>));
    let cache = PageCache::new(weak);
    let size = PAGES * PAGE_SIZE;

    // A write inside sectors 1..=2 of page 0 writes back only those.
    let n = cache.write(1000, &[0xaa; 100]);
    c.check(n == Ok(100), "write returns its length");
    c.check(cache.dirty() == 1, "one dirty page");
    c.check(cache.sync().is_ok(), "sync succeeds");
    c.check(
        *store.writes.lock() == vec![(0, 512, 1024)],
        "only the dirty sectors were written",
    );
    {
        let data = store.data.lock();
        c.check(
            data[1000..1100].iter().all(|&b| b == 0xaa),
            "written bytes reached the store",
        );
        c.check(
            data[999] == byte(999) && data[1100] == byte(1100),
            "neighbours kept",
        );
    }
    c.check(cache.dirty() == 0, "clean after sync");

    // Write-back in batches: whole and partly dirty pages, with clean ones
    // between them, go to the backend in one call, each with its mask.
    store.writes.lock().clear();
    store.wb_batches.lock().clear();
    for p in 52..56usize {
        let _ = cache.write(p * PAGE_SIZE, &[0x5a; PAGE_SIZE]);
    }
    let _ = cache.write(58 * PAGE_SIZE + 1536, &[0x5b; 10]); // sector 3
    let _ = cache.write(60 * PAGE_SIZE, &[0x5c; PAGE_SIZE]);
    c.check(cache.dirty() == 6, "six dirty pages");
    c.check(cache.sync().is_ok(), "sync of a batch succeeds");
    c.check(
        *store.wb_batches.lock()
            == vec![vec![
                (52, 0xff),
                (53, 0xff),
                (54, 0xff),
                (55, 0xff),
                (58, 0x08),
                (60, 0xff),
            ]],
        "one batch, every dirty page with its sectors",
    );
    c.check(store.writes.lock().len() == 6, "six runs written");
    {
        let data = store.data.lock();
        c.check(
            data[52 * PAGE_SIZE..56 * PAGE_SIZE]
                .iter()
                .all(|&b| b == 0x5a)
                && data[60 * PAGE_SIZE..61 * PAGE_SIZE]
                    .iter()
                    .all(|&b| b == 0x5c),
            "the whole pages reached the store",
        );
        let at = 58 * PAGE_SIZE + 1536;
        c.check(
            data[at..at + 10].iter().all(|&b| b == 0x5b)
                && data[at - 1] == byte(at - 1)
                && data[56 * PAGE_SIZE] == byte(56 * PAGE_SIZE),
            "the partial page's bytes reached the store, its neighbours kept",
        );
    }
    c.check(cache.dirty() == 0, "clean after the batch");

    // invalidate_range forgets dirty data of a range, keeps the rest.
    store.writes.lock().clear();
    let _ = cache.write(4096, &[1; 512]); // page 1, sector 0
    let _ = cache.write(4096 + 2048, &[2; 512]); // page 1, sector 4
    cache.invalidate_range(4096, 512);
    c.check(cache.sync().is_ok(), "sync after invalidate");
    c.check(
        *store.writes.lock() == vec![(1, 2048, 512)],
        "the invalidated sector is not written",
    );
    let mut b = [0u8; 4];
    let _ = cache.read(4096, &mut b, size);
    c.check(
        b == [byte(4096), byte(4097), byte(4098), byte(4099)],
        "an invalidated sector is read again",
    );

    // A failed write-back: the next sync says EIO, once.
    store.fail_writes.store(true, Ordering::Relaxed);
    let _ = cache.write(3 * 4096, &[3; 10]);
    c.check(
        cache.sync().map_err(|e| e.errno()) == Err(Errno::EIO),
        "sync after a failed write-back is EIO",
    );
    store.fail_writes.store(false, Ordering::Relaxed);
    c.check(cache.sync().is_ok(), "the error is reported once");

    // Per-opener error samples: each opener sees the error once.
    let (a, b) = (cache.error_sample(), cache.error_sample());
    store.fail_writes.store(true, Ordering::Relaxed);
    let _ = cache.write(4 * 4096, &[4; 10]);
    let _ = cache.sync(); // another opener's fsync takes the write error
    store.fail_writes.store(false, Ordering::Relaxed);
    let eio = Err(Errno::EIO);
    c.check(
        cache.sync_and_flush_since(&a).map_err(|e| e.errno()) == eio,
        "opener a sees the error",
    );
    c.check(
        cache.sync_and_flush_since(&b).map_err(|e| e.errno()) == eio,
        "opener b sees it too",
    );
    c.check(
        cache.sync_and_flush_since(&a).is_ok(),
        "a sees it only once",
    );
    let late = cache.error_sample();
    c.check(
        cache.sync_and_flush_since(&late).is_ok(),
        "a later opener does not see an old error",
    );

    // Readahead: sequential reads read batches that grow.
    store.batches.lock().clear();
    let mut buf = vec![0u8; 4096];
    let mut ok = true;
    for p in 8..40usize {
        let got = cache.read(p * PAGE_SIZE, &mut buf, size);
        ok &= got == Ok(PAGE_SIZE)
            && buf
                .iter()
                .enumerate()
                .all(|(i, &x)| x == byte(p * PAGE_SIZE + i));
    }
    c.check(ok, "sequential reads return the store's bytes");
    let batches = store.batches.lock().clone();
    c.check(batches.len() >= 2, "readahead issued batches");
    c.check(batches.iter().any(|&n| n > 4), "the readahead window grew");
    // Reads past the end: 0; a read crossing it is short.
    c.check(
        cache.read(size, &mut buf, size) == Ok(0),
        "read at the end returns 0",
    );
    c.check(
        cache.read(size - 10, &mut buf, size) == Ok(10),
        "read crossing the end is short",
    );

    // Truncate drops pages past the size and zeroes the last one's tail.
    let _ = cache.write(5 * 4096, &[9; 4096]);
    let _ = cache.write(6 * 4096, &[9; 4096]);
    cache.truncate(5 * 4096 + 100);
    c.check(!cache.contains(6), "a page past the new size is gone");
    let mut t = [0u8; 2];
    let _ = cache.read(5 * 4096 + 99, &mut t, size);
    c.check(t == [9, 0], "the tail of the last page is zeroed");
    let _ = cache.sync();

    // Eviction: clean unmapped pages go; a mapped one stays.
    let mapped = cache.page(20);
    c.check(mapped.is_ok(), "page() returns the page");
    let before = cache.resident();
    let freed = reclaim(usize::MAX / 2);
    c.check(
        freed > 0 && cache.resident() < before,
        "reclaim evicts clean pages",
    );
    c.check(
        cache.contains(20),
        "a page handed out for mapping is not evicted",
    );
    // Stores through the mapping reach the store at the next sync.
    if let Ok(f) = &mapped {
        let _ = f.write_bytes(0, &[0x55; 8]);
    }
    let _ = cache.sync();
    c.check(
        store.data.lock()[20 * 4096..20 * 4096 + 8] == [0x55; 8],
        "a mapped page's stores are written back",
    );
    drop(mapped);
    // A page stored to through a mapping that is gone before write-back
    // ran is not evicted with its stores: they are written first.
    if let Ok(f) = cache.page(21) {
        let _ = f.write_bytes(8, &[0x66; 8]);
    }
    let _ = reclaim(usize::MAX / 2);
    let _ = reclaim(usize::MAX / 2);
    c.check(
        cache.contains(21),
        "an unmapped page with unwritten stores is not evicted",
    );
    let _ = cache.sync();
    c.check(
        store.data.lock()[21 * 4096 + 8..21 * 4096 + 16] == [0x66; 8],
        "its stores are written back",
    );
    let _ = reclaim(usize::MAX / 2);
    let _ = reclaim(usize::MAX / 2);
    c.check(!cache.contains(21), "once written, it may be evicted");

    nofault_checks(&mut c, &cache, &store, size);
    background_checks(&mut c, &new_store(), size);

    // Hostile partition tables never yield a partition past the end.
    c.failed += partition_checks();
    c.failed
}

/// Reads one page at `p` through `cache`: Ok if it returned the store's
/// bytes, else the error (EIO for a short or wrong read).
fn read_one(cache: &PageCache, p: u64, size: usize) -> core::result::Result<(), Errno> {
    let mut buf = vec![0u8; PAGE_SIZE];
    let at = p as usize * PAGE_SIZE;
    match cache.read(at, &mut buf, size) {
        Ok(n) if n == PAGE_SIZE && buf.iter().enumerate().all(|(i, &x)| x == byte(at + i)) => {
            Ok(())
        }
        Ok(_) => Err(Errno::EIO),
        Err(e) => Err(e.errno()),
    }
}

/// Background readahead: a sequential read starts the next window and
/// returns without waiting for it; its failure surfaces only on the read
/// that needs a failed page; a truncate overtaking it leaves no pages;
/// random reads start none; reclaim can drop pages read ahead but unused.
/// `store` is fresh: it holds `byte(at)` everywhere.
fn background_checks(c: &mut Checker, store: &Arc<Store>, size: usize) {
    let weak: Weak<dyn PageIo> = Arc::downgrade(&(store.clone() as Arc<dyn PageIo>));
    let cache = PageCache::new(weak.clone());
    store.started.lock().clear();
    let mut buf = vec![0u8; 4 * PAGE_SIZE];
    c.check(
        cache.read(0, &mut buf, size) == Ok(4 * PAGE_SIZE)
            && buf.iter().enumerate().all(|(i, &x)| x == byte(i)),
        "a first read of 4 pages returns the store's bytes",
    );
    c.check(
        !store.started.lock().is_empty() && cache.contains(5),
        "the first read started readahead past its own pages",
    );
    // The next sequential reads start the next window in the background:
    // held (never completed) by the store, the reads still return.
    store.defer.store(true, Ordering::Relaxed);
    let mut p = 4;
    let mut ok = true;
    while store.deferred.lock().is_empty() && p < 12 {
        ok &= read_one(&cache, p, size).is_ok();
        p += 1;
    }
    c.check(ok, "sequential reads return the store's bytes");
    let held: Vec<(u64, usize)> = store
        .deferred
        .lock()
        .iter()
        .map(|(f, v, _)| (*f, v.len()))
        .collect();
    c.check(
        !held.is_empty() && held.iter().all(|&(f, _)| f >= p),
        "a read returned while the readahead it started was in flight",
    );
    let (ra_first, ra_len) = held.first().copied().unwrap_or((0, 0));
    c.check(
        ra_len > 0 && cache.contains(ra_first),
        "pages in flight are in the cache",
    );
    // The background read fails: nothing is reported yet; the pages go.
    store.defer.store(false, Ordering::Relaxed);
    store.fail_reads_from.store(ra_first, Ordering::Relaxed);
    c.check(store.complete_deferred(true) > 0, "held reads completed");
    c.check(
        !cache.contains(ra_first),
        "pages of a failed readahead are dropped",
    );
    c.check(
        (p..ra_first).all(|q| read_one(&cache, q, size).is_ok()),
        "a failed readahead does not fail reads of the pages before it",
    );
    c.check(
        read_one(&cache, ra_first, size) == Err(Errno::EIO),
        "its error surfaces on the read that needs the page",
    );
    store.fail_reads_from.store(u64::MAX, Ordering::Relaxed);
    c.check(
        read_one(&cache, ra_first, size).is_ok(),
        "a read after the error reads the page again",
    );

    // Pages read ahead and never used are the first reclaim drops; the
    // pages that were read get their second chance.
    // Other caches are drained first, so that reclaim's first pass finds
    // only this one's pages.
    let _ = reclaim(usize::MAX / 2);
    let _ = reclaim(usize::MAX / 2);
    let cache = PageCache::new(weak.clone());
    let ok = read_one(&cache, 0, size).is_ok() && read_one(&cache, 1, size).is_ok();
    let ahead: Vec<u64> = (2..PAGES as u64).filter(|&q| cache.contains(q)).collect();
    let _ = reclaim(ahead.len());
    c.check(
        ok && !ahead.is_empty(),
        "two reads of a fresh cache read ahead",
    );
    c.check(
        ahead.iter().all(|&q| !cache.contains(q)),
        "reclaim drops pages read ahead but not used",
    );
    c.check(
        cache.contains(0) && cache.contains(1),
        "pages that were read stay for a second pass",
    );

    // A truncate overtaking a background read: its pages are dropped.
    let cache = PageCache::new(weak.clone());
    c.check(
        read_one(&cache, 0, size).is_ok(),
        "a fresh cache reads page 0",
    );
    store.defer.store(true, Ordering::Relaxed);
    c.check(read_one(&cache, 1, size).is_ok(), "and page 1");
    let held: Vec<u64> = store.deferred.lock().iter().map(|(f, _, _)| *f).collect();
    c.check(!held.is_empty(), "reading page 1 started readahead");
    store.defer.store(false, Ordering::Relaxed);
    let cut = held.first().copied().unwrap_or(0);
    cache.truncate(cut as usize * PAGE_SIZE + 100);
    store.complete_deferred(false);
    c.check(
        held.iter().all(|&f| !cache.contains(f)),
        "a background read overtaken by a truncate leaves no pages",
    );

    // Random reads start no readahead and read one page each.
    let cache = PageCache::new(weak);
    store.started.lock().clear();
    store.batches.lock().clear();
    let ok = [30u64, 3, 50, 17, 41, 9]
        .iter()
        .all(|&q| read_one(&cache, q, size).is_ok());
    c.check(ok, "random reads return the store's bytes");
    c.check(
        store.started.lock().is_empty() && store.batches.lock().is_empty(),
        "random reads start no readahead",
    );
    c.check(cache.resident() == 6, "random reads cache only their pages");
}

/// `write_pages_nofault`: a copy that stops at a fault part way has the
/// page released, the rest fetched with no page claimed, and the page
/// filled from the fetch; a fetch that stops short is a short write, one
/// that fails with nothing written is the error and leaves no page.
fn nofault_checks(c: &mut Checker, cache: &Arc<PageCache>, store: &Store, size: usize) {
    let src: Vec<u8> = (0..3 * PAGE_SIZE).map(|i| (i % 251) as u8 ^ 0x3c).collect();
    let offset = 30 * PAGE_SIZE + 1000;
    let len = 2 * PAGE_SIZE;
    // In the second page, inside its second sector.
    let fault_at = (PAGE_SIZE - 1000) + 700;
    let mut copy = |done: usize, frame: &UFrame, at: usize, n: usize| -> Result<usize> {
        let m = if done <= fault_at && fault_at < done + n {
            fault_at - done
        } else {
            n
        };
        frame.write_bytes(at, &src[done..done + m])?;
        Ok(m)
    };
    let mut fetches = Vec::new();
    let mut fetch_saw_page = true;
    let mut fetch = |done: usize, frame: &UFrame, at: usize, n: usize| -> Result<usize> {
        fetches.push((done, n));
        // The page must not be claimed while the fault is resolved: a
        // read of it would wait for the claim (this check would hang).
        let page = (offset + done) / PAGE_SIZE * PAGE_SIZE;
        let mut one = [0u8; 1];
        fetch_saw_page &= cache.read(page, &mut one, size) == Ok(1);
        frame.write_bytes(at, &src[done..done + n])?;
        Ok(n)
    };
    let r = cache.write_pages_nofault(offset, len, &mut copy, &mut fetch);
    c.check(r == Ok(len), "nofault: the whole write is done after a fault");
    c.check(fetch_saw_page, "nofault: the page is free while fetching");
    // The kept part ends at the sector boundary before the fault (that
    // sector did not hold the file's data yet); the fetch takes the rest
    // of that page's part.
    let kept = (PAGE_SIZE - 1000) + 512;
    c.check(
        fetches == vec![(kept, PAGE_SIZE - 512)],
        "nofault: one fetch, from the sector before the fault to the page end",
    );
    let mut back = vec![0u8; len];
    c.check(cache.read(offset, &mut back, size) == Ok(len), "nofault: read back");
    c.check(back[..] == src[..len], "nofault: the bytes are the source's");
    let _ = cache.sync();
    c.check(
        store.data.lock()[offset..offset + len] == src[..len],
        "nofault: written back as read",
    );

    // The fetch reaches only 100 bytes: a short write of those.
    let at = 40 * PAGE_SIZE;
    let r = cache.write_pages_nofault(
        at,
        PAGE_SIZE,
        &mut |_, _, _, _| Ok(0),
        &mut |done, frame, in_page, _| {
            frame.write_bytes(in_page, &src[done..done + 100])?;
            Ok(100)
        },
    );
    c.check(r == Ok(100), "nofault: a short fetch is a short write");
    let mut back = vec![0u8; 100];
    c.check(cache.read(at, &mut back, size) == Ok(100), "nofault: short write read back");
    c.check(back[..] == src[..100], "nofault: short write bytes");

    // Nothing reachable: the fetch's error, nothing dirtied or changed
    // (the page read in for the partial sector may stay cached, clean).
    let at = 50 * PAGE_SIZE;
    let dirty = cache.dirty();
    let r = cache.write_pages_nofault(
        at,
        10,
        &mut |_, _, _, _| Ok(0),
        &mut |_, _, _, _| Err(Error::new(Errno::EFAULT)),
    );
    c.check(
        r.map_err(|e| e.errno()) == Err(Errno::EFAULT),
        "nofault: nothing fetched is EFAULT",
    );
    c.check(cache.dirty() == dirty, "nofault: a failed write dirties nothing");
    let mut back = [0u8; 10];
    c.check(cache.read(at, &mut back, size) == Ok(10), "nofault: failed write read back");
    c.check(
        back.iter().enumerate().all(|(i, &b)| b == byte(at + i)),
        "nofault: a failed write changes nothing",
    );
}

fn partition_checks() -> usize {
    use crate::block::partition::{crc32, read_table};
    let mut c = Checker { failed: 0 };
    let cap = 1000u64;
    let disk = SpinLock::<Vec<u8>, 38>::new(vec![0u8; cap as usize * 512]);
    let read = |s: u64, buf: &mut [u8]| -> Result<()> {
        let d = disk.lock();
        let at = s as usize * 512;
        buf.copy_from_slice(d.get(at..at + buf.len()).ok_or(Error::new(Errno::EIO))?);
        Ok(())
    };
    let entry = |d: &mut Vec<u8>, sector: usize, i: usize, kind: u8, start: u32, len: u32| {
        let at = sector * 512 + 446 + 16 * i;
        d[at + 4] = kind;
        d[at + 8..at + 12].copy_from_slice(&start.to_le_bytes());
        d[at + 12..at + 16].copy_from_slice(&len.to_le_bytes());
        d[sector * 512 + 510] = 0x55;
        d[sector * 512 + 511] = 0xaa;
    };
    {
        let mut d = disk.lock();
        entry(&mut d, 0, 0, 0x83, 10, 100);
        entry(&mut d, 0, 1, 0x83, 990, 11); // one sector past the end
        entry(&mut d, 0, 2, 0x83, u32::MAX, u32::MAX);
        entry(&mut d, 0, 3, 0x05, 500, 400);
        entry(&mut d, 500, 0, 0x83, 10, 10);
        entry(&mut d, 500, 1, 0x05, 0, 10); // a link to itself
    }
    let parts = read_table(cap, &read);
    let numbers: Vec<u32> = parts.iter().map(|p| p.number).collect();
    c.check(
        numbers == vec![1, 4, 5],
        "MBR: valid entries kept, entries past the end ignored",
    );
    c.check(
        parts.iter().all(|p| p.start + p.sectors <= cap),
        "MBR: all inside",
    );
    // GPT header with a bad CRC: nothing.
    {
        let mut d = disk.lock();
        d.fill(0);
        entry(&mut d, 0, 0, 0xee, 1, 999);
        d[512..520].copy_from_slice(b"EFI PART");
    }
    c.check(
        read_table(cap, &read).is_empty(),
        "GPT: a bad header CRC gives no partitions",
    );
    c.check(crc32(b"123456789") == 0xcbf4_3926, "CRC-32 check value");
    c.failed
}
