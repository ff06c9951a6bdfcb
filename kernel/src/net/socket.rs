//! The socket layer: what every address family implements ([`Socket`]),
//! where a message's bytes come from and go to ([`SendBuf`], [`RecvBuf`]),
//! the options all families share ([`SockOpts`]), and the open file that
//! holds a socket ([`SocketFile`]).
//!
//! Sockets do their own blocking: each call gets `nonblocking` (O_NONBLOCK
//! or MSG_DONTWAIT) and the [`Caller`], sleeps with `caller.wait` until its
//! condition, its SO_RCVTIMEO/SO_SNDTIMEO deadline (EAGAIN) or a signal
//! (ERESTARTSYS), and wakes its waiters through its [`Readiness`].

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;
use core::cell::RefCell;

use frame::sync::{level, SpinLock};

use super::addr::SockAddr;
use super::*;
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::stream::{Caller, FileOps};
use crate::fs::{File, O_NONBLOCK, O_RDWR};

/// The bytes of a message being sent: the caller's memory (write(2)), its
/// iovecs (sendmsg(2)) or a kernel slice, read straight from where they are.
pub trait SendBuf {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `out.len()` bytes starting `offset` bytes into the message;
    /// EFAULT for unreadable user memory.
    fn read_at(&self, offset: usize, out: &mut [u8]) -> Result<()>;
    /// The bytes themselves when they are in kernel memory: a family can
    /// append them to its queue without zeroing a buffer first.
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }
}

/// Where a received message goes: the caller's memory (read(2)), its
/// iovecs (recvmsg(2)) or a kernel slice.
pub trait RecvBuf {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stores `data` `offset` bytes into the buffer (the caller never
    /// passes more than `len() - offset` bytes); EFAULT for unwritable
    /// user memory.
    fn write_at(&mut self, offset: usize, data: &[u8]) -> Result<()>;
}

impl SendBuf for &[u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn read_at(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let src = offset
            .checked_add(out.len())
            .and_then(|end| self.get(offset..end))
            .ok_or(Error::new(Errno::EFAULT))?;
        out.copy_from_slice(src);
        Ok(())
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl RecvBuf for &mut [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn write_at(&mut self, offset: usize, data: &[u8]) -> Result<()> {
        let dst = offset
            .checked_add(data.len())
            .and_then(|end| self.get_mut(offset..end))
            .ok_or(Error::new(Errno::EFAULT))?;
        dst.copy_from_slice(data);
        Ok(())
    }
}

/// How [`FileOps::write_direct`] fetches the caller's bytes.
type Source<'a> = &'a mut dyn FnMut(usize, &mut [u8]) -> Result<()>;

/// write(2)'s bytes, fetched from the caller's memory as the family asks
/// for them ([`FileOps::write_direct`]'s source): no kernel bounce buffer.
struct SourceBuf<'a> {
    len: usize,
    source: RefCell<Source<'a>>,
}

impl SendBuf for SourceBuf<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn read_at(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        if offset.checked_add(out.len()).is_none_or(|end| end > self.len) {
            return Err(Error::new(Errno::EFAULT));
        }
        // Never re-entered: a family reads one range at a time.
        let mut source = self.source.try_borrow_mut().map_err(|_| Error::new(Errno::EFAULT))?;
        (*source)(offset, out)
    }
}

/// read(2)'s destination, the caller's memory ([`FileOps::read_direct`]'s
/// sink).
struct SinkBuf<'a> {
    len: usize,
    sink: &'a mut dyn FnMut(usize, &[u8]) -> Result<()>,
}

impl RecvBuf for SinkBuf<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&mut self, offset: usize, data: &[u8]) -> Result<()> {
        if offset.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return Err(Error::new(Errno::EFAULT));
        }
        (self.sink)(offset, data)
    }
}

/// An ancillary message (cmsg(3)), decoded.
pub enum ControlMsg {
    /// SCM_RIGHTS: open files in flight.
    Rights(Vec<Arc<File>>),
    /// SCM_CREDENTIALS: `struct ucred`.
    Credentials { pid: u32, uid: u32, gid: u32 },
    /// Another (level, type) the family understands (IP_PKTINFO...).
    Other { level: i32, kind: i32, data: Vec<u8> },
}

/// What accompanies the bytes of sendmsg(2).
#[derive(Default)]
pub struct SendMeta {
    /// The destination (sendto(2)); None for a connected socket.
    pub addr: Option<SockAddr>,
    pub control: Vec<ControlMsg>,
}

/// What recvmsg(2) reports besides the bytes.
#[derive(Default)]
pub struct RecvMeta {
    /// Bytes stored in the buffer.
    pub len: usize,
    /// The datagram's whole length (MSG_TRUNC returns it); `len` for streams.
    pub full_len: usize,
    /// The sender (datagram sockets; None when unknown or connected stream).
    pub addr: Option<SockAddr>,
    pub control: Vec<ControlMsg>,
    /// msg_flags: MSG_TRUNC, MSG_EOR, MSG_OOB... (MSG_CTRUNC is the
    /// syscall layer's).
    pub flags: u32,
}

/// A socket of some family. Every method that may wait honours
/// `nonblocking` and the caller's signals (see the module comment).
pub trait Socket: Any + Send + Sync {
    /// AF_* of the socket.
    fn family(&self) -> i32;
    /// SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET or SOCK_RAW (no flags).
    fn sock_type(&self) -> i32;
    /// The protocol number getsockopt(SO_PROTOCOL) reports.
    fn protocol(&self) -> i32;

    fn bind(&self, addr: &SockAddr, caller: &dyn Caller) -> Result<()>;
    /// connect(2): EINPROGRESS for a non-blocking stream connect that has
    /// not finished yet.
    fn connect(&self, addr: &SockAddr, nonblocking: bool, caller: &dyn Caller) -> Result<()>;
    fn listen(&self, backlog: i32) -> Result<()>;
    /// Takes the next connection: the new socket and its peer's address.
    fn accept(&self, nonblocking: bool, caller: &dyn Caller) -> Result<(Arc<dyn Socket>, SockAddr)>;
    /// Sends (part of) `data`; a blocking stream socket sends it all unless
    /// interrupted after some was sent. `flags` are MSG_*. Raises SIGPIPE
    /// with EPIPE unless MSG_NOSIGNAL.
    fn send(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize>;
    /// Receives into `data` (MSG_PEEK, MSG_WAITALL, MSG_TRUNC...); 0 bytes
    /// at end of stream.
    fn recv(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta>;
    /// SHUT_RD, SHUT_WR or SHUT_RDWR; ENOTCONN if not connected.
    fn shutdown(&self, how: u32) -> Result<()>;
    fn local_addr(&self) -> Result<SockAddr>;
    /// ENOTCONN if not connected.
    fn peer_addr(&self) -> Result<SockAddr>;
    /// Options of any level, SOL_SOCKET included (families usually pass
    /// SOL_SOCKET ones to their [`SockOpts`]); ENOPROTOOPT if unknown.
    fn setsockopt(&self, level: i32, name: i32, value: &[u8], caller: &dyn Caller) -> Result<()>;
    /// The option's value, at most its natural size (the syscall layer
    /// truncates to the caller's optlen).
    fn getsockopt(&self, level: i32, name: i32, caller: &dyn Caller) -> Result<Vec<u8>>;
    /// Current POLL* bits.
    fn poll(&self) -> u16;
    /// Notified on every readiness change.
    fn readiness(&self) -> &Readiness;
    /// Whether listen(2) succeeded (SO_ACCEPTCONN).
    fn is_listening(&self) -> bool {
        false
    }
    /// Socket ioctls (FIONREAD, SIOCOUTQ...); ENOTTY otherwise.
    fn ioctl(&self, _cmd: u32, _arg: u64, _caller: &dyn Caller) -> Result<isize> {
        Err(Error::new(Errno::ENOTTY))
    }
}

/// The open file of a socket: read(2) and write(2) are recv and send
/// without flags.
pub struct SocketFile {
    socket: Arc<dyn Socket>,
}

impl SocketFile {
    pub fn socket(&self) -> &Arc<dyn Socket> {
        &self.socket
    }

    /// Whether read(2) and write(2) skip the file layer's buffer: the IP
    /// and unix families (netlink keeps the buffer).
    fn direct(&self) -> bool {
        matches!(self.socket.family(), AF_INET | AF_INET6 | AF_UNIX)
    }
}

impl FileOps for SocketFile {
    fn read(&self, mut buf: &mut [u8], caller: &dyn Caller) -> Result<usize> {
        self.socket.recv(&mut buf, 0, true, caller).map(|m| m.len)
    }

    fn write(&self, buf: &[u8], caller: &dyn Caller) -> Result<usize> {
        self.socket.send(&buf, SendMeta::default(), 0, true, caller)
    }

    fn read_blocking(&self, mut buf: &mut [u8], nonblocking: bool, caller: &dyn Caller) -> Option<Result<usize>> {
        Some(self.socket.recv(&mut buf, 0, nonblocking, caller).map(|m| m.len))
    }

    fn write_blocking(&self, buf: &[u8], nonblocking: bool, caller: &dyn Caller) -> Option<Result<usize>> {
        Some(self.socket.send(&buf, SendMeta::default(), 0, nonblocking, caller))
    }

    /// read(2) of a socket: recv(2) without flags, storing straight into
    /// the caller's memory.
    fn read_direct(
        &self,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        if !self.direct() {
            return None;
        }
        let mut buf = SinkBuf { len, sink };
        Some(self.socket.recv(&mut buf, 0, nonblocking, caller).map(|m| m.len))
    }

    /// write(2) of a socket: send(2) without flags, reading straight from
    /// the caller's memory (a datagram is the whole count, as on Linux).
    fn write_direct(
        &self,
        len: usize,
        source: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Option<Result<usize>> {
        if !self.direct() {
            return None;
        }
        let buf = SourceBuf {
            len,
            source: RefCell::new(source),
        };
        Some(self.socket.send(&buf, SendMeta::default(), 0, nonblocking, caller))
    }

    fn poll(&self, _caller: &dyn Caller) -> u16 {
        self.socket.poll()
    }

    fn readiness(&self) -> Option<&Readiness> {
        Some(self.socket.readiness())
    }

    fn writes_whole_messages(&self) -> bool {
        self.socket.sock_type() != SOCK_STREAM
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        if let Some(r) = super::ifioctl::ioctl(self.socket.family(), cmd, arg, caller) {
            return r;
        }
        self.socket.ioctl(cmd, arg, caller)
    }
}

/// A new open file holding `socket`, with O_NONBLOCK if `flags` has it,
/// whose inode belongs to `owner` (the creator's fs uid and gid).
pub fn socket_file(socket: Arc<dyn Socket>, flags: u32, owner: (u32, u32)) -> Arc<File> {
    let node = crate::fs::socket_inode(owner);
    File::new(node, Some(Arc::new(SocketFile { socket })), O_RDWR | (flags & O_NONBLOCK))
}

/// The socket `file` holds; None (ENOTSOCK for the caller) otherwise.
pub fn socket_of(file: &File) -> Option<&Arc<dyn Socket>> {
    file.ops()
        .and_then(|ops| (ops.as_ref() as &dyn Any).downcast_ref::<SocketFile>())
        .map(SocketFile::socket)
}

/// Default and largest buffer sizes (net.core.[rw]mem_default and _max).
pub const BUF_DEFAULT: usize = 212_992;
pub const BUF_MAX: usize = 212_992;
/// Smallest SO_RCVBUF and SO_SNDBUF (Linux's SOCK_MIN_RCVBUF/SNDBUF).
pub const MIN_RCVBUF: usize = 2304;
pub const MIN_SNDBUF: usize = 4608;

/// The SOL_SOCKET options every family shares.
#[derive(Clone, Copy, Debug)]
pub struct Opts {
    /// SO_RCVTIMEO/SO_SNDTIMEO in ns: None waits forever, Some(0) never waits.
    pub rcvtimeo: Option<u64>,
    pub sndtimeo: Option<u64>,
    /// SO_RCVBUF/SO_SNDBUF as getsockopt reports them (twice what was set).
    pub rcvbuf: usize,
    pub sndbuf: usize,
    pub rcvlowat: usize,
    pub reuseaddr: bool,
    pub reuseport: bool,
    pub keepalive: bool,
    pub broadcast: bool,
    pub passcred: bool,
    pub oobinline: bool,
    pub dontroute: bool,
    /// SO_LINGER: Some(seconds) when on.
    pub linger: Option<u32>,
    pub priority: i32,
    pub mark: u32,
}

impl Opts {
    /// A new socket's options.
    pub const DEFAULT: Opts = Opts {
        rcvtimeo: None,
        sndtimeo: None,
        rcvbuf: BUF_DEFAULT,
        sndbuf: BUF_DEFAULT,
        rcvlowat: 1,
        reuseaddr: false,
        reuseport: false,
        keepalive: false,
        broadcast: false,
        passcred: false,
        oobinline: false,
        dontroute: false,
        linger: None,
        priority: 0,
        mark: 0,
    };
}

impl Default for Opts {
    fn default() -> Self {
        Opts::DEFAULT
    }
}

/// [`Opts`] behind a lock, with the pending error (SO_ERROR).
pub struct SockOpts {
    opts: SpinLock<(Opts, Option<Errno>), { level::SOCKET }>,
}

impl Default for SockOpts {
    fn default() -> Self {
        SockOpts::new()
    }
}

fn int_arg(value: &[u8]) -> Result<i32> {
    let b = value.get(..4).ok_or(Error::new(Errno::EINVAL))?;
    Ok(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn timeval_arg(value: &[u8]) -> Result<Option<u64>> {
    let b = value.get(..16).ok_or(Error::new(Errno::EINVAL))?;
    let sec = i64::from_ne_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let usec = i64::from_ne_bytes(b[8..16].try_into().unwrap_or([0; 8]));
    if !(0..1_000_000).contains(&usec) {
        return Err(Error::new(Errno::EDOM));
    }
    if sec < 0 {
        // Linux: a negative time makes the socket never wait.
        return Ok(Some(0));
    }
    if sec == 0 && usec == 0 {
        return Ok(None);
    }
    Ok(Some((sec as u64).saturating_mul(1_000_000_000).saturating_add(usec as u64 * 1000)))
}

fn timeval_bytes(t: Option<u64>) -> Vec<u8> {
    let ns = t.unwrap_or(0);
    let mut v = Vec::with_capacity(16);
    v.extend_from_slice(&((ns / 1_000_000_000) as i64).to_ne_bytes());
    v.extend_from_slice(&(((ns % 1_000_000_000) / 1000) as i64).to_ne_bytes());
    v
}

fn int_bytes(v: i32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

impl SockOpts {
    pub const fn new() -> Self {
        SockOpts {
            opts: SpinLock::new((
                Opts::DEFAULT,
                None,
            )),
        }
    }

    /// A copy of the current options.
    pub fn get(&self) -> Opts {
        self.opts.lock().0
    }

    /// Changes options directly (a family's own defaults, accept copying
    /// the listener's).
    pub fn update(&self, f: impl FnOnce(&mut Opts)) {
        f(&mut self.opts.lock().0)
    }

    /// Records an asynchronous error for SO_ERROR (a refused connect).
    pub fn set_error(&self, e: Errno) {
        self.opts.lock().1 = Some(e);
    }

    /// Whether an error is pending (POLLERR).
    pub fn has_error(&self) -> bool {
        self.opts.lock().1.is_some()
    }

    /// Takes the pending error (SO_ERROR reads and clears it).
    pub fn take_error(&self) -> Option<Errno> {
        self.opts.lock().1.take()
    }

    /// The monotonic deadline of a receive (`send` false) or send that
    /// may wait: 0 if it must not, u64::MAX without a timeout.
    pub fn deadline(&self, send: bool, nonblocking: bool) -> u64 {
        if nonblocking {
            return 0;
        }
        let o = self.get();
        match if send { o.sndtimeo } else { o.rcvtimeo } {
            None => u64::MAX,
            Some(ns) => frame::timer::monotonic_ns().saturating_add(ns),
        }
    }

    /// setsockopt(SOL_SOCKET, name): Ok if `name` is a shared option,
    /// ENOPROTOOPT if it is not (the family may know it), EINVAL for a
    /// short value, EPERM for the privileged *FORCE variants.
    pub fn set(&self, name: i32, value: &[u8], caller: &dyn Caller) -> Result<()> {
        const CAP_NET_ADMIN: u32 = 12;
        let mut g = self.opts.lock();
        let o = &mut g.0;
        match name {
            SO_RCVTIMEO_OLD | SO_RCVTIMEO_NEW => o.rcvtimeo = timeval_arg(value)?,
            SO_SNDTIMEO_OLD | SO_SNDTIMEO_NEW => o.sndtimeo = timeval_arg(value)?,
            SO_LINGER => {
                let on = int_arg(value)?;
                let secs = int_arg(value.get(4..).unwrap_or(&[]))?;
                o.linger = (on != 0).then_some(secs.max(0) as u32);
            }
            _ => {
                let v = int_arg(value)?;
                let on = v != 0;
                match name {
                    SO_RCVBUF | SO_RCVBUFFORCE | SO_SNDBUF | SO_SNDBUFFORCE => {
                        let force = name == SO_RCVBUFFORCE || name == SO_SNDBUFFORCE;
                        if force && !caller.capable(CAP_NET_ADMIN) {
                            return Err(Error::new(Errno::EPERM));
                        }
                        let mut size = (v.max(0) as usize).min(i32::MAX as usize / 2);
                        if !force {
                            size = size.min(BUF_MAX);
                        }
                        if name == SO_RCVBUF || name == SO_RCVBUFFORCE {
                            o.rcvbuf = (size * 2).max(MIN_RCVBUF);
                        } else {
                            o.sndbuf = (size * 2).max(MIN_SNDBUF);
                        }
                    }
                    SO_RCVLOWAT => o.rcvlowat = (v.max(1) as usize).min(i32::MAX as usize),
                    SO_REUSEADDR => o.reuseaddr = on,
                    SO_REUSEPORT => o.reuseport = on,
                    SO_KEEPALIVE => o.keepalive = on,
                    SO_BROADCAST => o.broadcast = on,
                    SO_PASSCRED => o.passcred = on,
                    SO_OOBINLINE => o.oobinline = on,
                    SO_DONTROUTE => o.dontroute = on,
                    SO_PRIORITY => {
                        if !(0..=6).contains(&v) && !caller.capable(CAP_NET_ADMIN) {
                            return Err(Error::new(Errno::EPERM));
                        }
                        o.priority = v;
                    }
                    SO_MARK => {
                        if !caller.capable(CAP_NET_ADMIN) {
                            return Err(Error::new(Errno::EPERM));
                        }
                        o.mark = v as u32;
                    }
                    _ => return Err(Error::new(Errno::ENOPROTOOPT)),
                }
            }
        }
        Ok(())
    }

    /// getsockopt(SOL_SOCKET, name) of a shared option; ENOPROTOOPT if
    /// it is not one.
    pub fn get_opt(&self, name: i32) -> Result<Vec<u8>> {
        if name == SO_ERROR {
            return Ok(int_bytes(self.take_error().map_or(0, |e| e as i32)));
        }
        let o = self.get();
        Ok(match name {
            SO_RCVTIMEO_OLD | SO_RCVTIMEO_NEW => timeval_bytes(o.rcvtimeo),
            SO_SNDTIMEO_OLD | SO_SNDTIMEO_NEW => timeval_bytes(o.sndtimeo),
            SO_LINGER => {
                let mut v = int_bytes(o.linger.is_some() as i32);
                v.extend_from_slice(&(o.linger.unwrap_or(0) as i32).to_ne_bytes());
                v
            }
            SO_RCVBUF => int_bytes(o.rcvbuf as i32),
            SO_SNDBUF => int_bytes(o.sndbuf as i32),
            SO_RCVLOWAT => int_bytes(o.rcvlowat as i32),
            SO_REUSEADDR => int_bytes(o.reuseaddr as i32),
            SO_REUSEPORT => int_bytes(o.reuseport as i32),
            SO_KEEPALIVE => int_bytes(o.keepalive as i32),
            SO_BROADCAST => int_bytes(o.broadcast as i32),
            SO_PASSCRED => int_bytes(o.passcred as i32),
            SO_OOBINLINE => int_bytes(o.oobinline as i32),
            SO_DONTROUTE => int_bytes(o.dontroute as i32),
            SO_PRIORITY => int_bytes(o.priority),
            SO_MARK => int_bytes(o.mark as i32),
            _ => return Err(Error::new(Errno::ENOPROTOOPT)),
        })
    }
}
