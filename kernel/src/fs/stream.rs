//! Stream files (devices, and later pipes and sockets): the operations
//! they implement, never blocking, and what they may ask of the calling
//! thread ([`Caller`]). [`super::File`] does the blocking.

use core::any::Any;

use frame::sync::WaitQueue;

use super::readiness::Readiness;
use crate::error::{Errno, Error, Result};

/// How many bytes of `data`, from its start, `sink` accepts, after
/// `sink(done, data)` failed with `err`: read(2) into a buffer that runs
/// into an unmapped or read-only page returns the bytes before that page,
/// as Linux does, and the user copy behind a sink stops exactly there. The
/// longest accepted prefix is found by bisection (each try copies the same
/// bytes to the same place again, so only the failing path pays). 0 unless
/// `err` is EFAULT. Only for a source that gives the same bytes when read
/// again (a file's, the zero page): a stream that consumes what it hands
/// out keeps the whole refused chunk instead.
pub fn accepted_prefix(sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>, done: usize, data: &[u8], err: &Error) -> usize {
    if err.errno() != Errno::EFAULT {
        return 0;
    }
    // `lo` bytes are accepted, `hi` bytes are not.
    let (mut lo, mut hi) = (0, data.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if sink(done, &data[..mid]).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// poll(2) events.
pub const POLLIN: u16 = 0x1;
pub const POLLPRI: u16 = 0x2;
pub const POLLOUT: u16 = 0x4;
pub const POLLERR: u16 = 0x8;
pub const POLLHUP: u16 = 0x10;
pub const POLLNVAL: u16 = 0x20;
pub const POLLRDNORM: u16 = 0x40;
pub const POLLWRNORM: u16 = 0x100;
/// What a file that never blocks reports (Linux's DEFAULT_POLLMASK).
pub const DEFAULT_POLLMASK: u16 = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

/// How long a blocked reader or writer sleeps before checking again, for
/// devices that cannot wake it (the polled UART).
pub const RECHECK_NS: u64 = 10_000_000;

/// The calling thread as file operations see it: its user memory and
/// identity, interruptible sleeping, and sending signals. The syscall layer
/// implements it.
pub trait Caller {
    fn read_bytes(&self, addr: u64, buf: &mut [u8]) -> Result<()>;
    fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<()>;
    /// The caller's process group.
    fn pgid(&self) -> u32;
    /// The caller's session.
    fn sid(&self) -> u32;
    /// Sleeps on `queue` until `ready()` holds (true) or the monotonic
    /// clock reaches `deadline_ns` (false); ERESTARTSYS if a signal comes
    /// first.
    fn wait(
        &self,
        queue: &WaitQueue,
        ready: &mut dyn FnMut() -> bool,
        deadline_ns: u64,
    ) -> Result<bool>;
    /// Sends signal `signo` to the caller's own process (SIGPIPE).
    fn raise(&self, signo: u32);
    /// Sends signal `signo` to the calling thread (SIGXFSZ).
    fn raise_thread(&self, signo: u32) {
        self.raise(signo);
    }
    /// The caller's RLIMIT_FSIZE in bytes (u64::MAX: none).
    fn file_size_limit(&self) -> u64 {
        u64::MAX
    }
    /// Whether the caller has capability `cap` (ioctls reserved to the
    /// administrator: BLKFLSBUF, BLKRRPART).
    fn capable(&self, _cap: u32) -> bool {
        false
    }
    /// Whether a signal waits to be handled: a long transfer that never
    /// blocks stops early (returning what it did) so the signal is seen.
    fn signal_pending(&self) -> bool {
        false
    }
    /// The caller's pending signals (its own and its process's).
    fn pending_signals(&self) -> u64 {
        0
    }
    /// Dequeues the caller's next pending signal in `mask` (signalfd).
    fn take_signal(&self, _mask: u64) -> Option<crate::process::signal::SigInfo> {
        None
    }
    /// The caller's process id, effective uid and effective gid
    /// (SO_PEERCRED, SCM_CREDENTIALS).
    fn ucred(&self) -> (u32, u32, u32) {
        (0, 0, 0)
    }
    /// The caller's root, cwd, umask and file-system credentials, for
    /// calls that walk paths (binding an AF_UNIX socket to a file);
    /// None where there is no calling process.
    fn fs_context(&self) -> Option<super::FsContext> {
        None
    }
}

/// Operations of a stream file (device, pipe, socket): no file position.
/// They never block: they fail with EAGAIN and [`File`] waits on
/// [`FileOps::wait_queue`] until [`FileOps::poll`] reports readiness.
pub trait FileOps: Any + Send + Sync {
    /// Reads what is available; EAGAIN if nothing is yet, 0 at end of file.
    fn read(&self, buf: &mut [u8], caller: &dyn Caller) -> Result<usize>;
    /// Writes what fits; EAGAIN if nothing does yet.
    fn write(&self, buf: &[u8], caller: &dyn Caller) -> Result<usize>;

    /// Current readiness (`POLL*` bits).
    fn poll(&self, _caller: &dyn Caller) -> u16 {
        DEFAULT_POLLMASK
    }

    /// [`FileOps::poll`]'s answer, if it can be given *lightly*; None (the
    /// default) otherwise. select(2) and poll(2) ask with the descriptor
    /// table locked (so that they need no reference of their own to each
    /// file), so an implementation that answers must:
    /// 1. take no lock ranked at or below `level::FILE_TABLE` (the process
    ///    table, a process's or a thread's signal state: a signalfd's or a
    ///    pidfd's poll does), nor any sleeping lock, and never sleep;
    /// 2. drop no reference that may be the last one to a file, a socket
    ///    or a process (whose release may take any lock: an epoll
    ///    instance's poll upgrades and drops its entries' files);
    /// 3. have a [`FileOps::readiness`] notifier, so that a caller about to
    ///    sleep needs to ask no more about this file (select's periodic
    ///    recheck is only for files without one).
    ///
    /// For a file that answers None, the callers take a reference under
    /// the table lock and call [`FileOps::poll`] after releasing it.
    fn poll_light(&self) -> Option<u16> {
        None
    }

    /// Woken when readiness may have changed; waiters also recheck every
    /// [`RECHECK_NS`].
    fn wait_queue(&self) -> &WaitQueue {
        self.readiness().map_or(&NEVER_WOKEN, Readiness::queue)
    }

    /// The notifier of a stream that wakes its waiters itself: blocked
    /// calls then sleep without rechecking every [`RECHECK_NS`], and
    /// edge-triggered epoll sees each new event.
    fn readiness(&self) -> Option<&Readiness> {
        None
    }

    /// A read that does its own blocking (a terminal's VMIN/VTIME timers),
    /// honouring `nonblocking`; None: [`File`] retries [`FileOps::read`].
    fn read_blocking(
        &self,
        _buf: &mut [u8],
        _nonblocking: bool,
        _caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        None
    }

    /// A write that does its own blocking (a socket's SO_SNDTIMEO),
    /// honouring `nonblocking`; None: [`File`] retries [`FileOps::write`].
    fn write_blocking(&self, _buf: &[u8], _nonblocking: bool, _caller: &dyn Caller) -> Option<Result<usize>> {
        None
    }

    /// A read of up to `len` bytes handed straight to the caller's
    /// memory with `sink(done_so_far, bytes)` (which fails with EFAULT),
    /// without [`File`]'s kernel buffer; blocking as [`FileOps::read`]
    /// would, honouring `nonblocking`. The stream copies from its own
    /// storage (pipe pages, a zero page) and keeps what the sink refused.
    /// None: [`File`] reads through a buffer.
    fn read_direct(
        &self,
        _len: usize,
        _sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        _nonblocking: bool,
        _caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        None
    }

    /// A write of up to `len` bytes fetched straight from the caller's
    /// memory with `source(done_so_far, buf)` (which fails with EFAULT
    /// and may be asked for the same bytes again), without [`File`]'s
    /// kernel buffer; blocking as [`FileOps::write`] would, honouring
    /// `nonblocking`. None: [`File`] writes through a buffer.
    fn write_direct(
        &self,
        _len: usize,
        _source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        _nonblocking: bool,
        _caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        None
    }

    /// Whether one write(2) is one call of [`FileOps::write`], never
    /// continued after a short count (eventfd's 8-byte values, datagrams).
    fn writes_whole_messages(&self) -> bool {
        false
    }

    /// Called by open(2) before the new file gets a descriptor, with
    /// open's flags: may block (a FIFO waits for its other end) or make a
    /// terminal the caller's controlling terminal.
    fn opened(&self, _flags: u32, _caller: &dyn Caller) -> Result<()> {
        Ok(())
    }

    fn ioctl(&self, _cmd: u32, _arg: u64, _caller: &dyn Caller) -> Result<isize> {
        Err(Error::new(Errno::ENOTTY))
    }

    /// Whether lseek succeeds (returning 0) instead of failing with ESPIPE.
    fn is_seekable(&self) -> bool {
        false
    }

    /// Whether pread/pwrite work (the offset is ignored) instead of
    /// failing with ESPIPE: Linux's memory devices allow them.
    fn allows_positional_io(&self) -> bool {
        false
    }

    /// Whether reads never run dry: one read(2) returns the whole count
    /// (/dev/zero, /dev/urandom), made of as many `read` calls as needed.
    fn fills_whole_reads(&self) -> bool {
        false
    }

    /// Whether mmap(2) gives anonymous memory (/dev/zero): zero-filled
    /// copy-on-write memory for MAP_PRIVATE, memory shared with fork
    /// children for MAP_SHARED. Other streams cannot be mapped (ENODEV).
    fn maps_as_anonymous(&self) -> bool {
        false
    }

    /// Whether the stream has a readiness of its own (Linux: a ->poll
    /// method) and so can be watched with epoll; poll(2) and select(2)
    /// see the others as always ready.
    fn can_poll(&self) -> bool {
        true
    }
}

static NEVER_WOKEN: WaitQueue = WaitQueue::new();
