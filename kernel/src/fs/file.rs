//! Open file descriptions: what a file descriptor refers to.
//!
//! A [`File`] is created by open(2) and shared (`Arc`) by every descriptor
//! that dup(2) or fork(2) derives from it, so they share the file position
//! and the status flags (O_APPEND, O_NONBLOCK). Regular files and
//! directories are read through their inode at the file position; device
//! files (and later pipes and sockets) are streams with their own
//! [`FileOps`].

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use frame::sync::Once;

use super::inode::{FileType, Inode};
use super::stream::*;
use crate::error::{Errno, Error, Result};
use crate::mm::page_cache::{PageRunSink, PageSource};

pub const O_ACCMODE: u32 = 0o3;
pub const O_RDONLY: u32 = 0o0;
pub const O_WRONLY: u32 = 0o1;
pub const O_RDWR: u32 = 0o2;
pub const O_CREAT: u32 = 0o100;
pub const O_EXCL: u32 = 0o200;
pub const O_NOCTTY: u32 = 0o400;
pub const O_TRUNC: u32 = 0o1000;
pub const O_APPEND: u32 = 0o2000;
pub const O_NONBLOCK: u32 = 0o4000;
pub const O_LARGEFILE: u32 = 0o100000;
pub const O_DIRECTORY: u32 = 0o200000;
pub const O_NOFOLLOW: u32 = 0o400000;
pub const O_CLOEXEC: u32 = 0o2000000;
pub const O_PATH: u32 = 0o10000000;
pub const O_NOATIME: u32 = 0o1000000;
pub const O_DIRECT: u32 = 0o40000;
pub const O_TMPFILE: u32 = 0o20200000;

/// Flags that only matter while opening and are not kept in the file.
const OPEN_ONLY_FLAGS: u32 = O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC;
/// Flags F_SETFL may change (the rest of F_SETFL's argument is ignored).
pub const SETFL_MASK: u32 = O_APPEND | O_NONBLOCK | O_NOATIME;

pub const SEEK_SET: u32 = 0;
pub const SEEK_CUR: u32 = 1;
pub const SEEK_END: u32 = 2;
pub const SEEK_DATA: u32 = 3;
pub const SEEK_HOLE: u32 = 4;

/// Largest kernel buffer used for one step of a read or write; longer
/// transfers loop.
pub const IO_CHUNK: usize = 64 * 1024;

/// Transfers up to this size use a buffer on the stack instead of the
/// heap.
const SMALL_IO: usize = 128;

/// A zeroed kernel buffer, or ENOMEM (never an allocation panic).
pub fn kernel_buffer(len: usize) -> Result<Vec<u8>> {
    crate::fallible::zeroed(len)
}

/// `offset`, if a transfer of `len` bytes there stays within the largest
/// file offset; EINVAL otherwise (Linux's `rw_verify_area`).
fn check_range(offset: usize, len: usize) -> Result<usize> {
    match offset.checked_add(len) {
        Some(end) if end <= i64::MAX as usize => Ok(offset),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

const SIGXFSZ: u32 = 25;

/// RLIMIT_FSIZE for a write of `len` bytes at `offset` of a regular file
/// (Linux's generic_write_check_limits): starting at or beyond the limit
/// raises SIGXFSZ and fails with EFBIG (if the signal does not kill);
/// otherwise the length is cut to end at the limit.
pub fn file_size_check(offset: usize, len: usize, caller: &dyn Caller) -> Result<usize> {
    let limit = usize::try_from(caller.file_size_limit()).unwrap_or(usize::MAX);
    if len == 0 || limit == usize::MAX {
        return Ok(len);
    }
    if offset >= limit {
        caller.raise_thread(SIGXFSZ);
        return Err(Error::with_message(Errno::EFBIG, "RLIMIT_FSIZE"));
    }
    Ok(len.min(limit - offset))
}

/// RLIMIT_FSIZE for growing a file from `old` to `new` bytes (truncate,
/// fallocate; Linux's inode_newsize_ok): beyond the limit, SIGXFSZ and
/// EFBIG.
pub fn file_size_grow_check(old: usize, new: usize, caller: &dyn Caller) -> Result<()> {
    let limit = usize::try_from(caller.file_size_limit()).unwrap_or(usize::MAX);
    if new > old && new > limit {
        caller.raise_thread(SIGXFSZ);
        return Err(Error::with_message(Errno::EFBIG, "RLIMIT_FSIZE"));
    }
    Ok(())
}

/// Per-call options of preadv2/pwritev2: RWF_NOWAIT (a stream fails
/// with EAGAIN instead of blocking) and RWF_APPEND (write at the end).
#[derive(Clone, Copy, Default)]
pub struct RwFlags {
    pub nowait: bool,
    pub append: bool,
    /// RWF_NOAPPEND: a positional write goes to its offset even on an
    /// O_APPEND file.
    pub noappend: bool,
}

pub struct File {
    node: Arc<dyn Inode>,
    ops: Option<Arc<dyn FileOps>>,
    /// Access mode and status flags, as F_GETFL reports them.
    flags: AtomicU32,
    /// The file offset; for a directory, the listing cookie.
    pos: AtomicU64,
    /// The directory and name open(2) found a non-directory under, for
    /// /proc/pid/fd (directories find their own path).
    origin: Once<(Arc<dyn Inode>, String)>,
    /// F_SETOWN/F_SETOWN_EX: (owner type << 32) | pid; F_SETSIG: the
    /// signal. Recorded and reported back (no I/O signals are sent).
    owner: AtomicU64,
    io_signal: AtomicU32,
    /// A regular file open for writing counts as a writer (ETXTBSY for
    /// executing it meanwhile).
    write_access: Once<super::WriteAccess>,
}

impl File {
    /// An open file on `node`; `ops` makes it a stream. `flags` are open(2)'s.
    pub fn new(node: Arc<dyn Inode>, ops: Option<Arc<dyn FileOps>>, flags: u32) -> Arc<File> {
        // Like Linux on 64-bit, every file is opened O_LARGEFILE.
        let flags = (flags & !OPEN_ONLY_FLAGS) | O_LARGEFILE;
        Arc::new(File {
            node,
            ops,
            flags: AtomicU32::new(flags),
            pos: AtomicU64::new(0),
            origin: Once::new(),
            owner: AtomicU64::new(0),
            io_signal: AtomicU32::new(0),
            write_access: Once::new(),
        })
    }

    /// Makes the file a writer of its inode until it is closed.
    pub fn hold_write_access(&self, access: super::WriteAccess) {
        self.write_access.call_once(|| access);
    }

    /// The F_SETOWN_EX owner: (type, pid).
    pub fn owner(&self) -> (u32, u32) {
        let v = self.owner.load(Ordering::Relaxed);
        ((v >> 32) as u32, v as u32)
    }

    pub fn set_owner(&self, kind: u32, pid: u32) {
        self.owner.store((u64::from(kind) << 32) | u64::from(pid), Ordering::Relaxed);
    }

    /// The F_SETSIG signal (0: SIGIO).
    pub fn io_signal(&self) -> u32 {
        self.io_signal.load(Ordering::Relaxed)
    }

    pub fn set_io_signal(&self, sig: u32) {
        self.io_signal.store(sig, Ordering::Relaxed);
    }

    /// Records the directory and name the file was opened under.
    pub fn set_origin(&self, dir: Arc<dyn Inode>, name: String) {
        self.origin.call_once(|| (dir, name));
    }

    /// The directory and name the file was opened under, if recorded.
    pub fn origin(&self) -> Option<&(Arc<dyn Inode>, String)> {
        self.origin.get()
    }

    pub fn node(&self) -> &Arc<dyn Inode> {
        &self.node
    }

    pub fn ops(&self) -> Option<&Arc<dyn FileOps>> {
        self.ops.as_ref()
    }

    /// F_GETFL: the access mode and status flags.
    pub fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// F_SETFL: changes the flags in [`SETFL_MASK`] (and O_DIRECT of a
    /// pipe, its packet mode), keeps the rest.
    pub fn set_status_flags(&self, flags: u32) {
        let mask = if let Some(end) = super::pipe::pipe_end(self) {
            end.set_packet(flags & O_DIRECT != 0);
            SETFL_MASK | O_DIRECT
        } else {
            SETFL_MASK
        };
        let _ = self
            .flags
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | (flags & mask))
            });
    }

    /// Opened with O_PATH: usable only as a dirfd and for fstat/fchdir.
    pub fn is_path_only(&self) -> bool {
        self.flags() & O_PATH != 0
    }

    pub fn can_read(&self) -> bool {
        let f = self.flags();
        f & O_PATH == 0 && matches!(f & O_ACCMODE, O_RDONLY | O_RDWR)
    }

    pub fn can_write(&self) -> bool {
        let f = self.flags();
        f & O_PATH == 0 && matches!(f & O_ACCMODE, O_WRONLY | O_RDWR)
    }

    pub fn is_nonblocking(&self) -> bool {
        self.flags() & O_NONBLOCK != 0
    }

    pub fn position(&self) -> u64 {
        self.pos.load(Ordering::Relaxed)
    }

    pub fn set_position(&self, pos: u64) {
        self.pos.store(pos, Ordering::Relaxed);
    }

    fn check_readable(&self) -> Result<()> {
        if !self.can_read() {
            return Err(Error::new(Errno::EBADF));
        }
        if self.ops.is_none() && self.node.file_type() == FileType::Directory {
            return Err(Error::new(Errno::EISDIR));
        }
        Ok(())
    }

    fn check_writable(&self) -> Result<()> {
        if !self.can_write() {
            return Err(Error::new(Errno::EBADF));
        }
        Ok(())
    }

    /// read(2): up to `len` bytes from the file position (or the stream),
    /// handed to `sink(done_so_far, bytes)` chunk by chunk. The position
    /// advances only past bytes the sink accepted; if the sink fails on the
    /// first chunk its error is returned.
    pub fn read(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        caller: &dyn Caller,
    ) -> Result<usize> {
        self.read_with(len, sink, caller, RwFlags::default())
    }

    /// [`File::read`] with preadv2's per-call flags.
    pub fn read_with(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.read_paged(len, sink, None, caller, rw)
    }

    /// [`File::read_with`]; a file with a page cache hands its pages to
    /// `pages` (read(2): a copy straight to user memory) instead of bytes
    /// to `sink`.
    pub fn read_paged(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        pages: Option<&mut PageRunSink<'_>>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.check_readable()?;
        if let Some(ops) = &self.ops {
            // What `read_stream` does first for a stream that copies
            // straight to the caller (/dev/zero, pipes, sockets), without
            // its bounce-buffer frame.
            if len != 0
                && let Some(r) = ops.read_direct(len, sink, rw.nowait || self.is_nonblocking(), caller)
            {
                return r;
            }
            return self.read_stream(ops, len, sink, caller, rw.nowait);
        }
        let pos = self.position();
        let offset = check_range(pos as usize, len)?;
        let n = self.read_inode(offset, len, sink, pages)?;
        self.set_position(pos + n as u64);
        Ok(n)
    }

    /// pread(2): like `read` at `offset`, without moving the position.
    /// Streams fail with ESPIPE unless they allow positional I/O (the
    /// memory devices), which ignore the offset.
    pub fn read_at(
        &self,
        offset: usize,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        caller: &dyn Caller,
    ) -> Result<usize> {
        self.read_at_with(offset, len, sink, caller, RwFlags::default())
    }

    /// [`File::read_at`] with preadv2's per-call flags.
    pub fn read_at_with(
        &self,
        offset: usize,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.read_at_paged(offset, len, sink, None, caller, rw)
    }

    /// [`File::read_at_with`] with [`File::read_paged`]'s `pages`.
    pub fn read_at_paged(
        &self,
        offset: usize,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        pages: Option<&mut PageRunSink<'_>>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.check_readable()?;
        if let Some(ops) = &self.ops {
            if !ops.allows_positional_io() {
                return Err(Error::new(Errno::ESPIPE));
            }
            check_range(offset, len)?;
            return self.read_stream(ops, len, sink, caller, rw.nowait);
        }
        self.read_inode(check_range(offset, len)?, len, sink, pages)
    }

    fn read_stream(
        &self,
        ops: &Arc<dyn FileOps>,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        caller: &dyn Caller,
        nowait: bool,
    ) -> Result<usize> {
        let nonblocking = nowait || self.is_nonblocking();
        if len == 0 {
            // The device still decides (eventfd: EINVAL; a terminal:
            // job control), as Linux passes empty reads on.
            return match ops.read(&mut [], caller) {
                Err(e) if e.errno() == Errno::EAGAIN => Ok(0),
                r => r,
            };
        }
        if let Some(r) = ops.read_direct(len, sink, nonblocking, caller) {
            return r;
        }
        // Short reads (a terminal's line, a socket's message) go through
        // the stack, long ones through the heap.
        let mut small = [0u8; SMALL_IO];
        let mut heap;
        let buf: &mut [u8] = if len <= SMALL_IO {
            &mut small[..len]
        } else {
            heap = kernel_buffer(len.min(IO_CHUNK))?;
            &mut heap
        };
        let n = match ops.read_blocking(buf, nonblocking, caller) {
            Some(r) => r?,
            None => self.blocking(ops, caller, POLLIN, nonblocking, &mut || {
                ops.read(buf, caller)
            })?,
        };
        let n = n.min(buf.len());
        sink(0, &buf[..n])?;
        if !ops.fills_whole_reads() {
            return Ok(n);
        }
        // A device that never runs dry fills the whole count, chunk by
        // chunk, stopping early only for a signal or a failing sink.
        let mut done = n;
        while done < len && n == buf.len() && !caller.signal_pending() {
            let want = (len - done).min(buf.len());
            let got = match ops.read(&mut buf[..want], caller) {
                Ok(got) => got.min(want),
                Err(_) => break,
            };
            if got == 0 || sink(done, &buf[..got]).is_err() {
                break;
            }
            done += got;
        }
        Ok(done)
    }

    /// Runs the non-blocking `op` until it stops failing with EAGAIN,
    /// sleeping in between until `ops` reports `want` (or an error or
    /// hang-up), unless the file is O_NONBLOCK.
    fn blocking<R>(
        &self,
        ops: &Arc<dyn FileOps>,
        caller: &dyn Caller,
        want: u16,
        nonblocking: bool,
        op: &mut dyn FnMut() -> Result<R>,
    ) -> Result<R> {
        loop {
            match op() {
                Err(e) if e.errno() == Errno::EAGAIN && !nonblocking => {
                    let deadline = match ops.readiness() {
                        Some(_) => u64::MAX,
                        None => frame::timer::monotonic_ns().saturating_add(RECHECK_NS),
                    };
                    let mut ready = || ops.poll(caller) & (want | POLLERR | POLLHUP) != 0;
                    caller.wait(ops.wait_queue(), &mut ready, deadline)?;
                }
                r => return r,
            }
        }
    }

    /// poll(2) readiness: POLLNVAL for O_PATH descriptors.
    pub fn poll(&self, caller: &dyn Caller) -> u16 {
        if self.is_path_only() {
            return POLLNVAL;
        }
        match &self.ops {
            Some(ops) => ops.poll(caller),
            None => DEFAULT_POLLMASK,
        }
    }

    /// [`FileOps::poll_light`] for any file: an O_PATH descriptor
    /// (POLLNVAL) and a file without stream operations (always ready both
    /// ways) answer lightly, a stream as its operations say.
    #[inline]
    pub fn poll_light(&self) -> Option<u16> {
        if self.is_path_only() {
            return Some(POLLNVAL);
        }
        match &self.ops {
            Some(ops) => ops.poll_light(),
            None => Some(DEFAULT_POLLMASK),
        }
    }

    fn read_inode(
        &self,
        offset: usize,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        pages: Option<&mut PageRunSink<'_>>,
    ) -> Result<usize> {
        if let Some(pages) = pages
            && let Some(r) = self.node.read_pages(offset, len, pages)
        {
            let n = r?;
            self.accessed();
            return Ok(n);
        }
        let avail = self.node.size().saturating_sub(offset);
        let chunk = len.min(IO_CHUNK).min(avail);
        if chunk == 0 {
            self.accessed();
            return Ok(0);
        }
        let mut buf = kernel_buffer(chunk)?;
        let mut done = 0;
        while done < len {
            let want = (len - done).min(buf.len());
            let Some(at) = offset.checked_add(done) else {
                break;
            };
            let n = match self.node.read_at(at, &mut buf[..want]) {
                Ok(n) => n,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            if n == 0 {
                break;
            }
            if let Err(e) = sink(done, &buf[..n]) {
                done += accepted_prefix(sink, done, &buf[..n], &e);
                if done == 0 {
                    return Err(e);
                }
                break;
            }
            done += n;
            if n < want {
                break;
            }
        }
        self.accessed();
        Ok(done)
    }

    /// The file's data was read (or mapped): its access time moves, unless
    /// it was opened with O_NOATIME or its mount says otherwise.
    pub fn accessed(&self) {
        if self.flags() & O_NOATIME == 0 {
            super::mount::touch_atime(&*self.node);
        }
    }

    /// write(2): up to `len` bytes, fetched chunk by chunk with
    /// `source(done_so_far, buf)`, at the file position (at the end with
    /// O_APPEND) or into the stream.
    pub fn write(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        caller: &dyn Caller,
    ) -> Result<usize> {
        self.write_with(len, source, caller, RwFlags::default())
    }

    /// [`File::write`] with pwritev2's per-call flags.
    pub fn write_with(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.write_paged(len, source, None, caller, rw)
    }

    /// [`File::write_with`]; a file with a page cache has `pages` fill its
    /// pages instead of taking bytes from `source`: `pages.copy` runs with
    /// the page claimed (busy) and must not resolve faults (one on a mapping
    /// of the same page would wait for itself), `pages.fetch` brings in what
    /// it could not reach with no page claimed
    /// ([`crate::mm::page_cache::PageCache::write_pages_nofault`]).
    pub fn write_paged(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        pages: Option<&mut PageSource<'_, '_>>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.check_writable()?;
        // What `write_common` does first for a stream that takes the bytes
        // itself (/dev/null, pipes, sockets), without its bounce-buffer
        // frame.
        if let Some(ops) = &self.ops
            && len != 0
            && let Some(r) = ops.write_direct(len, source, rw.nowait || self.is_nonblocking(), caller)
        {
            return r;
        }
        if self.ops.is_some() || rw.append || self.flags() & O_APPEND != 0 {
            return self.write_common(None, len, source, pages, caller, rw.nowait);
        }
        let pos = self.position();
        let offset = check_range(pos as usize, len)?;
        let n = self.write_common(Some(offset), len, source, pages, caller, false)?;
        self.set_position(pos + n as u64);
        Ok(n)
    }

    /// pwrite(2) at `offset` (but, as on Linux, at the end with O_APPEND).
    pub fn write_at(
        &self,
        offset: usize,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        caller: &dyn Caller,
    ) -> Result<usize> {
        self.write_at_with(offset, len, source, caller, RwFlags::default())
    }

    /// [`File::write_at`] with pwritev2's per-call flags (RWF_APPEND
    /// writes at the end, as O_APPEND does).
    pub fn write_at_with(
        &self,
        offset: usize,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.write_at_paged(offset, len, source, None, caller, rw)
    }

    /// [`File::write_at_with`] with [`File::write_paged`]'s `pages`.
    pub fn write_at_paged(
        &self,
        offset: usize,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        pages: Option<&mut PageSource<'_, '_>>,
        caller: &dyn Caller,
        rw: RwFlags,
    ) -> Result<usize> {
        self.check_writable()?;
        if let Some(ops) = &self.ops {
            if !ops.allows_positional_io() {
                return Err(Error::new(Errno::ESPIPE));
            }
            check_range(offset, len)?;
            return self.write_common(None, len, source, pages, caller, rw.nowait);
        }
        check_range(offset, len)?;
        let at = if rw.append || (self.flags() & O_APPEND != 0 && !rw.noappend) {
            None
        } else {
            Some(offset)
        };
        self.write_common(at, len, source, pages, caller, false)
    }

    /// Writes at `offset`, or appends / writes the stream when None.
    fn write_common(
        &self,
        offset: Option<usize>,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        pages: Option<&mut PageSource<'_, '_>>,
        caller: &dyn Caller,
        nowait: bool,
    ) -> Result<usize> {
        if len == 0 {
            return match (&self.ops, offset) {
                (Some(ops), _) => match ops.write(&[], caller) {
                    Err(e) if e.errno() == Errno::EAGAIN => Ok(0),
                    r => r,
                },
                _ => Ok(0),
            };
        }
        let len = match (&self.ops, offset) {
            (None, Some(off)) => file_size_check(off, len, caller)?,
            (None, None) => file_size_check(self.node.size(), len, caller)?,
            (Some(_), _) => len,
        };
        if self.ops.is_none()
            && let Some(pages) = pages
            && let Some(r) = self.node.write_pages(offset, len, pages)
        {
            let (n, end) = r?;
            if offset.is_none() {
                self.set_position(end as u64);
            }
            return Ok(n);
        }
        if let Some(ops) = &self.ops
            && let Some(r) = ops.write_direct(len, source, nowait || self.is_nonblocking(), caller)
        {
            return r;
        }
        let mut small = [0u8; SMALL_IO];
        let mut heap;
        let buf: &mut [u8] = if len <= SMALL_IO {
            &mut small[..len]
        } else {
            heap = kernel_buffer(len.min(IO_CHUNK))?;
            &mut heap
        };
        let mut done = 0;
        while done < len {
            let want = (len - done).min(buf.len());
            // A source that faults part way (a user buffer running into an
            // unmapped page) gives what comes before the fault: a short
            // write, as on Linux.
            let have = match source(done, &mut buf[..want]) {
                Ok(()) => Ok(want),
                Err(e) if e.errno() == Errno::EFAULT => readable_prefix(source, done, &mut buf[..want]).ok_or(e),
                Err(e) => Err(e),
            };
            let step = have.and_then(|have| {
                let chunk = &buf[..have];
                match (&self.ops, offset) {
                    (Some(ops), _) => self.write_stream(ops, chunk, caller, nowait),
                    (None, Some(off)) => {
                        let at = off.checked_add(done).ok_or(Error::new(Errno::EFBIG))?;
                        self.node.write_at(at, chunk)
                    }
                    (None, None) => {
                        let (n, end) = self.node.append(chunk)?;
                        self.set_position(end as u64);
                        Ok(n)
                    }
                }
            });
            let n = match step {
                Ok(n) => n,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            done += n;
            if n < want {
                break;
            }
        }
        Ok(done)
    }

    /// Writes all of `buf` to a stream, sleeping while it is full (a
    /// non-blocking file stops at the first EAGAIN).
    fn write_stream(
        &self,
        ops: &Arc<dyn FileOps>,
        buf: &[u8],
        caller: &dyn Caller,
        nowait: bool,
    ) -> Result<usize> {
        let nonblocking = nowait || self.is_nonblocking();
        if let Some(r) = ops.write_blocking(buf, nonblocking, caller) {
            return r;
        }
        let mut done = 0;
        while done < buf.len() {
            match self.blocking(ops, caller, POLLOUT, nonblocking, &mut || {
                ops.write(&buf[done..], caller)
            }) {
                Ok(0) => break,
                Ok(n) if ops.writes_whole_messages() => return Ok(n),
                Ok(n) => done += n,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(done)
    }

    /// lseek(2).
    pub fn seek(&self, offset: i64, whence: u32) -> Result<u64> {
        if self.is_path_only() {
            return Err(Error::new(Errno::EBADF));
        }
        if let Some(ops) = &self.ops {
            return if ops.is_seekable() {
                Ok(0)
            } else {
                Err(Error::new(Errno::ESPIPE))
            };
        }
        let is_dir = self.node.file_type() == FileType::Directory;
        let size = i64::try_from(self.node.size()).unwrap_or(i64::MAX);
        let cur = i64::try_from(self.position()).unwrap_or(i64::MAX);
        let new = match whence {
            SEEK_SET => Some(offset),
            SEEK_CUR => cur.checked_add(offset),
            SEEK_END if !is_dir => size.checked_add(offset),
            SEEK_DATA | SEEK_HOLE if !is_dir => {
                let offset = usize::try_from(offset).map_err(|_| Error::new(Errno::ENXIO))?;
                let found = self.node.seek_data(offset, whence == SEEK_DATA)?;
                Some(i64::try_from(found).unwrap_or(i64::MAX))
            }
            _ => return Err(Error::new(Errno::EINVAL)),
        };
        let new = new.filter(|n| *n >= 0).ok_or(Error::new(Errno::EINVAL))?;
        self.set_position(new as u64);
        Ok(new as u64)
    }

    /// An identity for the open file description while it lives (flock
    /// and OFD locks belong to it).
    pub fn id(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// ioctl(2) on the file's device: ENOTTY for anything else.
    pub fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        if self.is_path_only() {
            return Err(Error::new(Errno::EBADF));
        }
        match &self.ops {
            Some(ops) => ops.ioctl(cmd, arg, caller),
            None => self.node.ioctl(cmd, arg, caller),
        }
    }
}

impl Drop for File {
    /// The last descriptor is gone: its flock and OFD locks go with it.
    fn drop(&mut self) {
        super::lock::release_file(self);
    }
}

/// The longest prefix of `chunk` that `source` can fill, when all of it
/// faulted: faults are monotone in the length (a prefix that can be read
/// makes every shorter one readable), so a binary search finds it; the
/// prefix is filled on return. `None` when not even one byte can be had.
/// Only the error path of a write pays for the search.
fn readable_prefix(
    source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
    done: usize,
    chunk: &mut [u8],
) -> Option<usize> {
    let (mut ok, mut bad) = (0, chunk.len());
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if source(done, &mut chunk[..mid]).is_ok() {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    (ok > 0 && source(done, &mut chunk[..ok]).is_ok()).then_some(ok)
}
