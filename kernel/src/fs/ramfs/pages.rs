//! The contents of a ramfs regular file: a sparse map of untyped 4 KiB
//! frames. Holes (never-written pages) read as zeros and cost nothing, so a
//! write at a large offset does not allocate the bytes before it.

use alloc::sync::Arc;
use alloc::collections::BTreeMap;
use alloc::collections::btree_map::Entry;
use core::sync::atomic::{AtomicUsize, Ordering};

use frame::mm::UFrame;

use crate::error::{Errno, Error, Result};

const PAGE: usize = 4096;

/// Largest file size (Linux's `MAX_LFS_FILESIZE` on 64-bit).
pub const MAX_FILE_SIZE: usize = i64::MAX as usize;

/// Pages held by all ramfs files, and the most they may hold (like tmpfs's
/// default `size=50%` of memory), so a user cannot exhaust the kernel's
/// frames by writing files: past the limit writes fail with ENOSPC.
static PAGES_USED: AtomicUsize = AtomicUsize::new(0);
static PAGE_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Sets the page budget of all ramfs files.
pub fn set_page_limit(pages: usize) {
    PAGE_LIMIT.store(pages, Ordering::Relaxed);
}

/// Pages held by all ramfs files, and their budget (statfs, /proc/meminfo).
pub fn page_usage() -> (usize, usize) {
    (
        PAGES_USED.load(Ordering::Relaxed),
        PAGE_LIMIT.load(Ordering::Relaxed),
    )
}

/// The pages one file system instance may hold (tmpfs's `size=`), on top
/// of the global budget.
pub struct Budget {
    used: AtomicUsize,
    limit: AtomicUsize,
}

impl Budget {
    /// A budget of `limit` pages (`usize::MAX`: only the global one).
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget { used: AtomicUsize::new(0), limit: AtomicUsize::new(limit) })
    }

    /// (pages used, limit).
    pub fn usage(&self) -> (usize, usize) {
        (self.used.load(Ordering::Relaxed), self.limit.load(Ordering::Relaxed))
    }

    /// A remount's new limit (`usize::MAX`: none): EINVAL if it is below
    /// what is used, or would limit an unlimited instance (Linux's
    /// shmem_reconfigure).
    pub fn set_limit(&self, limit: usize) -> Result<()> {
        let old = self.limit.load(Ordering::Relaxed);
        if limit != usize::MAX && old == usize::MAX {
            return Err(Error::with_message(Errno::EINVAL, "cannot retroactively limit size"));
        }
        if self.used.load(Ordering::Relaxed) > limit {
            return Err(Error::with_message(Errno::EINVAL, "too small size for current use"));
        }
        self.limit.store(limit, Ordering::Relaxed);
        Ok(())
    }
}

/// Takes one page from `counter` unless that would pass `limit`.
fn take(counter: &AtomicUsize, limit: usize) -> Result<()> {
    if counter.fetch_add(1, Ordering::Relaxed) >= limit {
        counter.fetch_sub(1, Ordering::Relaxed);
        return Err(Error::with_message(Errno::ENOSPC, "ramfs page budget exhausted"));
    }
    Ok(())
}

fn charge_page(budget: &Budget) -> Result<UFrame> {
    take(&budget.used, budget.limit.load(Ordering::Relaxed))?;
    if let Err(e) = take(&PAGES_USED, PAGE_LIMIT.load(Ordering::Relaxed)) {
        budget.used.fetch_sub(1, Ordering::Relaxed);
        return Err(e);
    }
    crate::fallible::frame().map_err(|_| {
        // Out of frames: the OOM killer runs when the writer is back in
        // its user loop (mm/oom.rs).
        crate::mm::oom::note_allocation_failure();
        uncharge(budget, 1);
        Error::new(Errno::ENOSPC)
    })
}

fn uncharge(budget: &Budget, pages: usize) {
    PAGES_USED.fetch_sub(pages, Ordering::Relaxed);
    budget.used.fetch_sub(pages, Ordering::Relaxed);
}

fn io_error(_: frame::Error) -> Error {
    Error::with_message(Errno::EIO, "ramfs page access out of bounds")
}

pub struct FileData {
    pages: BTreeMap<usize, UFrame>,
    size: usize,
    budget: Arc<Budget>,
}

impl FileData {
    pub fn new(budget: Arc<Budget>) -> FileData {
        FileData { pages: BTreeMap::new(), size: 0, budget }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Storage in 512-byte blocks.
    pub fn blocks(&self) -> u64 {
        (self.pages.len() as u64) * (PAGE as u64 / 512)
    }

    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<usize> {
        if offset >= self.size {
            return Ok(0);
        }
        let len = buf.len().min(self.size - offset);
        let mut done = 0;
        while done < len {
            let pos = offset + done;
            let in_page = pos % PAGE;
            let n = (PAGE - in_page).min(len - done);
            let dst = &mut buf[done..done + n];
            match self.pages.get(&(pos / PAGE)) {
                Some(page) => page.read_bytes(in_page, dst).map_err(io_error)?,
                None => dst.fill(0),
            }
            done += n;
        }
        Ok(len)
    }

    /// Writes `data` at `offset`. When the page budget runs out part way,
    /// the write is short: the bytes up to the first page that could not
    /// be had are stored and counted (tmpfs, write(2)); with none stored
    /// it fails (ENOSPC) without changing the size.
    pub fn write(&mut self, offset: usize, data: &[u8]) -> Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let end = offset
            .checked_add(data.len())
            .filter(|&e| e <= MAX_FILE_SIZE)
            .ok_or(Error::new(Errno::EFBIG))?;
        let mut done = 0;
        while done < data.len() {
            let pos = offset + done;
            let in_page = pos % PAGE;
            let n = (PAGE - in_page).min(data.len() - done);
            let index = pos / PAGE;
            let page = match self.pages.entry(index) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => match charge_page(&self.budget) {
                    Ok(page) => e.insert(page),
                    Err(_) if done > 0 => break,
                    Err(err) => return Err(err),
                },
            };
            page.write_bytes(in_page, &data[done..done + n])
                .map_err(io_error)?;
            done += n;
        }
        self.size = self.size.max(if done == data.len() { end } else { offset + done });
        Ok(done)
    }

    /// The page at `index` if the file has one there (not a hole).
    pub fn existing_page(&self, index: usize) -> Option<UFrame> {
        self.pages.get(&index).cloned()
    }

    /// The page at `index`, backed with memory first if it is a hole
    /// (shared file mappings map the file's own pages).
    pub fn page_for_mapping(&mut self, index: usize) -> Result<UFrame> {
        let page = match self.pages.entry(index) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(charge_page(&self.budget)?),
        };
        Ok(page.clone())
    }

    pub fn resize(&mut self, size: usize) -> Result<()> {
        if size > MAX_FILE_SIZE {
            return Err(Error::new(Errno::EFBIG));
        }
        if size < self.size {
            // Drop whole pages past the end, and zero the tail of the last
            // one so that growing the file again reads zeros there.
            let first_dropped = size.div_ceil(PAGE);
            let dropped = self.pages.split_off(&first_dropped);
            uncharge(&self.budget, dropped.len());
            let in_page = size % PAGE;
            if in_page != 0
                && let Some(page) = self.pages.get(&(size / PAGE))
            {
                page.fill_zero(in_page, PAGE - in_page).map_err(io_error)?;
            }
        }
        self.size = size;
        Ok(())
    }
}

impl FileData {
    /// fallocate(2) modes 0 and FALLOC_FL_KEEP_SIZE: backs every page of
    /// `[offset, end)` with memory, or fails with ENOSPC having allocated
    /// nothing; mode 0 also grows the file to `end`.
    pub fn allocate(&mut self, offset: usize, end: usize, keep_size: bool) -> Result<()> {
        let (first, last) = (offset / PAGE, (end - 1) / PAGE);
        let mut added = alloc::vec::Vec::new();
        for index in first..=last {
            if let Entry::Vacant(e) = self.pages.entry(index) {
                match charge_page(&self.budget) {
                    Ok(page) => {
                        e.insert(page);
                        added.push(index);
                    }
                    Err(err) => {
                        for index in &added {
                            self.pages.remove(index);
                        }
                        uncharge(&self.budget, added.len());
                        return Err(err);
                    }
                }
            }
        }
        if !keep_size {
            self.size = self.size.max(end);
        }
        Ok(())
    }

    /// FALLOC_FL_PUNCH_HOLE: `[offset, end)` reads as zeros afterwards;
    /// whole pages in it are freed. The size does not change.
    pub fn punch_hole(&mut self, offset: usize, end: usize) -> Result<()> {
        let whole = offset.div_ceil(PAGE)..end / PAGE;
        // Freeing needs no memory: one page at a time, no list.
        let mut freed = 0;
        while let Some(index) = self.pages.range(whole.clone()).next().map(|(i, _)| *i) {
            self.pages.remove(&index);
            freed += 1;
        }
        uncharge(&self.budget, freed);
        // Partial pages at either end keep their other bytes.
        let zero = |index: usize, from: usize, len: usize| match self.pages.get(&index) {
            Some(page) => page.fill_zero(from, len).map_err(io_error),
            None => Ok(()),
        };
        if !offset.is_multiple_of(PAGE) {
            let len = (PAGE - offset % PAGE).min(end - offset);
            zero(offset / PAGE, offset % PAGE, len)?;
        }
        if !end.is_multiple_of(PAGE) && end / PAGE * PAGE >= offset {
            zero(end / PAGE, 0, end % PAGE)?;
        }
        Ok(())
    }

    /// lseek(2) SEEK_DATA (`data`) or SEEK_HOLE from `offset`: the first
    /// offset in a backed page, or in a hole (the end of the file counts
    /// as one); None (ENXIO) at or past the end.
    pub fn seek_data(&self, offset: usize, data: bool) -> Option<usize> {
        if offset >= self.size {
            return None;
        }
        let first = offset / PAGE;
        let found = if data {
            let (index, _) = self.pages.range(first..).next()?;
            (index * PAGE).max(offset)
        } else {
            let mut expected = first;
            for (index, _) in self.pages.range(first..) {
                if *index != expected {
                    break;
                }
                expected += 1;
            }
            (expected * PAGE).max(offset)
        };
        if data {
            (found < self.size).then_some(found)
        } else {
            Some(found.min(self.size))
        }
    }
}

impl Drop for FileData {
    fn drop(&mut self) {
        uncharge(&self.budget, self.pages.len());
    }
}
