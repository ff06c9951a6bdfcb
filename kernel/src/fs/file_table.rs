//! The file descriptor table of a process.
//!
//! Each slot holds a shared open file description (`Arc<File>`) and the
//! descriptor's own flag (FD_CLOEXEC). Cloning the table (fork) shares the
//! descriptions and copies the flags. The table lives behind the process's
//! `FILE_TABLE` mutex; callers clone the `Arc<File>` they need and release
//! the lock before doing I/O, and drop closed files after releasing it.
//! The one exception is `FileOps::poll_light`, which select(2) and poll(2)
//! call on borrowed files with the table locked: it promises to take no
//! lock ranked at or below the table's, never to sleep and never to drop a
//! last reference.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::devices;
use super::file::{File, O_RDWR};
use super::inode::Inode;
use crate::error::{Errno, Error, Result};

/// What a file mapping maps (`FileTable::mmap_source`); `writable`: the
/// file is open for writing, which a shared mapping needs to be shared.
pub enum MmapSource {
    /// `origin`: the directory and name it was opened by (for the
    /// mapping's name in /proc/pid/maps).
    File { inode: Arc<dyn Inode>, writable: bool, origin: Option<(Arc<dyn Inode>, alloc::string::String)> },
    /// /dev/zero: anonymous memory.
    Anonymous { writable: bool },
}

/// Descriptors above this are refused whatever the rlimit says, so a table
/// never grows beyond a bounded size: the largest fs.nr_open (RLIMIT_NOFILE
/// cannot be set higher).
pub const HARD_MAX_FDS: usize = crate::sysctl::NR_OPEN_MAX as usize;

#[derive(Clone)]
struct Slot {
    file: Arc<File>,
    cloexec: bool,
}

#[derive(Clone, Default)]
pub struct FileTable {
    slots: Vec<Option<Slot>>,
    /// Every descriptor below this is open (Linux's next_fd): searches
    /// for the lowest free one start here, so filling a large table one
    /// descriptor at a time is not quadratic.
    free_hint: usize,
}

fn index(fd: i32) -> Result<usize> {
    usize::try_from(fd).map_err(|_| Error::new(Errno::EBADF))
}

impl FileTable {
    /// A table with fds 0, 1 and 2 open on the console.
    pub fn new_with_console() -> Self {
        let console = devices::open_console(O_RDWR);
        let slot = Some(Slot {
            file: console,
            cloexec: false,
        });
        FileTable {
            slots: alloc::vec![slot.clone(), slot.clone(), slot],
            free_hint: 3,
        }
    }

    /// The file open on `fd`, or EBADF.
    pub fn get(&self, fd: i32) -> Result<Arc<File>> {
        let i = index(fd)?;
        match self.slots.get(i) {
            Some(Some(slot)) => Ok(slot.file.clone()),
            _ => Err(Error::new(Errno::EBADF)),
        }
    }

    /// The file open on `fd`, borrowed from the table (no reference
    /// taken: the caller keeps the table locked while it uses it).
    #[inline]
    pub fn file(&self, fd: usize) -> Option<&Arc<File>> {
        Some(&self.slots.get(fd)?.as_ref()?.file)
    }

    /// The open descriptors and their files, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &Arc<File>)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i as i32, &s.as_ref()?.file)))
    }

    /// One past the highest descriptor that may be open, rounded up the way
    /// Linux sizes its descriptor bitmaps (select(2) ignores fds beyond it).
    pub fn max_fds(&self) -> usize {
        self.slots.len().next_multiple_of(64).max(64)
    }

    /// The lowest free descriptor at or above `from` and below `limit`.
    fn find_free(&mut self, from: usize, limit: usize) -> Option<usize> {
        let start = from.max(self.free_hint);
        let free = (start..limit).find(|&i| self.slots.get(i).is_none_or(|s| s.is_none()));
        if from <= self.free_hint {
            // Everything from the hint to what was found is open.
            self.free_hint = free.unwrap_or(limit.max(self.free_hint));
        }
        free
    }

    /// Whether a descriptor below `limit` is free.
    pub fn has_free(&mut self, limit: usize) -> bool {
        let limit = limit.min(HARD_MAX_FDS);
        self.find_free(0, limit).is_some()
    }

    /// Installs `file` on the lowest free descriptor at or above `min_fd`
    /// and below `limit`: EMFILE if there is none.
    pub fn insert_from(
        &mut self,
        min_fd: usize,
        file: Arc<File>,
        cloexec: bool,
        limit: usize,
    ) -> Result<i32> {
        let limit = limit.min(HARD_MAX_FDS);
        let i = self.find_free(min_fd, limit).ok_or(Error::new(Errno::EMFILE))?;
        if i >= self.slots.len() {
            let more = i + 1 - self.slots.len();
            crate::fallible::reserve(&mut self.slots, more)?;
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(Slot { file, cloexec });
        Ok(i as i32)
    }

    /// A copy for fork(2) or unshare: ENOMEM if there is no room for it
    /// (the table may hold up to fs.nr_open descriptors).
    pub fn try_clone(&self) -> Result<FileTable> {
        Ok(FileTable { slots: crate::fallible::copy(&self.slots)?, free_hint: self.free_hint })
    }

    /// Installs `file` on the lowest free descriptor below `limit`.
    pub fn insert(&mut self, file: Arc<File>, cloexec: bool, limit: usize) -> Result<i32> {
        self.insert_from(0, file, cloexec, limit)
    }

    /// Puts `file` on `fd` (dup2), returning the file that was open there so
    /// the caller can drop it after releasing the table lock. EBADF if `fd`
    /// is negative or not below `limit`.
    pub fn install(
        &mut self,
        fd: i32,
        file: Arc<File>,
        cloexec: bool,
        limit: usize,
    ) -> Result<Option<Arc<File>>> {
        let i = index(fd)?;
        if i >= limit.min(HARD_MAX_FDS) {
            return Err(Error::new(Errno::EBADF));
        }
        if i >= self.slots.len() {
            let more = i + 1 - self.slots.len();
            crate::fallible::reserve(&mut self.slots, more)?;
            self.slots.resize(i + 1, None);
        }
        let old = self.slots[i].replace(Slot { file, cloexec });
        Ok(old.map(|s| s.file))
    }

    /// Closes `fd`, returning its file (to be dropped after the lock).
    pub fn remove(&mut self, fd: i32) -> Result<Arc<File>> {
        let i = index(fd)?;
        let slot = self
            .slots
            .get_mut(i)
            .and_then(Option::take)
            .ok_or(Error::new(Errno::EBADF))?;
        self.free_hint = self.free_hint.min(i);
        while self.slots.last().is_some_and(|s| s.is_none()) {
            self.slots.pop();
        }
        Ok(slot.file)
    }

    /// close_range(2) with CLOSE_RANGE_CLOEXEC on `[first, last]`: marks
    /// the open descriptors close-on-exec.
    pub fn set_cloexec_range(&mut self, first: usize, last: usize) {
        let end = last.saturating_add(1).min(self.slots.len());
        for s in self.slots.iter_mut().take(end).skip(first).flatten() {
            s.cloexec = true;
        }
    }

    /// Closes the lowest open descriptor in `[first, last]` (close_range(2)
    /// calls it until it returns `None`), returning it and its file, to be
    /// dropped after the lock. One at a time, so that closing needs no
    /// memory.
    pub fn take_next(&mut self, first: usize, last: usize) -> Option<(usize, Arc<File>)> {
        let end = last.saturating_add(1).min(self.slots.len());
        let i = (first..end).find(|&i| self.slots[i].is_some())?;
        let slot = self.slots[i].take()?;
        self.free_hint = self.free_hint.min(i);
        while self.slots.last().is_some_and(|s| s.is_none()) {
            self.slots.pop();
        }
        Some((i, slot.file))
    }

    /// FD_CLOEXEC of `fd`.
    pub fn cloexec(&self, fd: i32) -> Result<bool> {
        let i = index(fd)?;
        match self.slots.get(i) {
            Some(Some(slot)) => Ok(slot.cloexec),
            _ => Err(Error::new(Errno::EBADF)),
        }
    }

    pub fn set_cloexec(&mut self, fd: i32, cloexec: bool) -> Result<()> {
        let i = index(fd)?;
        match self.slots.get_mut(i) {
            Some(Some(slot)) => {
                slot.cloexec = cloexec;
                Ok(())
            }
            _ => Err(Error::new(Errno::EBADF)),
        }
    }

    /// Closes the lowest descriptor at or above `first` marked
    /// close-on-exec (execve calls it until it returns `None`), returning
    /// it and its file, to be dropped after the lock.
    pub fn take_next_cloexec(&mut self, first: usize) -> Option<(usize, Arc<File>)> {
        let i = (first..self.slots.len()).find(|&i| self.slots[i].as_ref().is_some_and(|s| s.cloexec))?;
        let slot = self.slots[i].take()?;
        self.free_hint = self.free_hint.min(i);
        while self.slots.last().is_some_and(|s| s.is_none()) {
            self.slots.pop();
        }
        Some((i, slot.file))
    }

    /// What mmap(2) of `fd` maps, checked as Linux's do_mmap does: EBADF
    /// if `fd` is not open (or is an O_PATH descriptor); EACCES for a
    /// shared writable mapping of a file not open for writing, or any
    /// mapping of a file not open for reading; ENODEV if the file cannot
    /// be mapped.
    pub fn mmap_source(&self, fd: i32, shared_write: bool) -> Result<MmapSource> {
        let file = self.get(fd)?;
        if file.is_path_only() {
            return Err(Error::new(Errno::EBADF));
        }
        if (shared_write && !file.can_write()) || !file.can_read() {
            return Err(Error::new(Errno::EACCES));
        }
        let writable = file.can_write();
        match file.ops() {
            Some(ops) if ops.maps_as_anonymous() => Ok(MmapSource::Anonymous { writable }),
            None if file.node().can_mmap() => Ok(MmapSource::File {
                inode: file.node().clone(),
                writable,
                origin: file.origin().cloned(),
            }),
            _ => Err(Error::new(Errno::ENODEV)),
        }
    }
}
