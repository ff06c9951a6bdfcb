//! AF_UNIX sockets (unix(7)): SOCK_STREAM, SOCK_DGRAM and SOCK_SEQPACKET,
//! named by file-system paths, abstract names or not at all.
//!
//! Every socket has one lock (level SOCKET) over its state: its name, its
//! peer, its receive queue, its shutdown flags, its listen queue. No code
//! holds two of them: a sender locks its own state to find its peer,
//! releases it, then locks the peer's to queue the message. Bytes are
//! copied from the sender's buffer into a new message before any lock is
//! taken, and a receiver takes a message out of its queue, copies it to
//! the caller unlocked, and puts back what it did not consume (receivers
//! of one socket take turns on its `reader` mutex, so the order holds).
//!
//! Flow control: a message is charged to its sender (`wmem`: its length
//! plus [`MSG_OVERHEAD`]) until the receiver consumes it; a sender waits
//! while its charge reaches SO_SNDBUF. A datagram to an unconnected
//! receiver also waits while that receiver holds more than
//! [`MAX_DGRAM_QLEN`] datagrams, as on Linux.
//!
//! Descriptors in flight (SCM_RIGHTS) are collected by [`gc`].

mod gc;
mod names;

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use frame::sync::{Mutex, SpinLock, level};

use self::names::Key;
use super::addr::{SockAddr, UnixAddr};
use super::socket::{ControlMsg, RecvBuf, RecvMeta, SendBuf, SendMeta, SockOpts, Socket};
use super::*;
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::stream::{Caller, POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
use crate::fs::{File, FileType, MAY_WRITE};

pub use self::gc::collect;

/// What a queued message costs its sender besides its bytes (Linux
/// charges an skb's true size).
const MSG_OVERHEAD: usize = 256;
/// Datagrams an unconnected receiver queues (net.unix.max_dgram_qlen).
const MAX_DGRAM_QLEN: usize = 10;
/// Largest piece of a stream send queued as one message.
const STREAM_CHUNK: usize = 64 * 1024;
const POLLRDHUP: u16 = 0x2000;
const POLLWRBAND: u16 = 0x200;
const SIGPIPE: u32 = 13;
const FIONREAD: u32 = 0x541B;
const SIOCOUTQ: u32 = 0x5411;
/// Credentials of a socket that has no peer (overflow uid and gid).
const NO_CRED: Ucred = Ucred {
    pid: 0,
    uid: 65534,
    gid: 65534,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ucred {
    pid: u32,
    uid: u32,
    gid: u32,
}

impl Ucred {
    fn of(caller: &dyn Caller) -> Ucred {
        let (pid, uid, gid) = caller.ucred();
        Ucred { pid, uid, gid }
    }
}

/// A queued message (a datagram, or a piece of a stream).
struct Msg {
    data: MsgBuf,
    /// Bytes of a stream piece already read.
    read: usize,
    /// The sender's name when sent.
    from: UnixAddr,
    rights: Vec<Arc<File>>,
    cred: Ucred,
    /// Charged `charge` bytes until the message is consumed.
    sender: Weak<UnixSocket>,
    charge: usize,
}

impl Drop for Msg {
    fn drop(&mut self) {
        gc::defer(core::mem::take(&mut self.rights));
        if let Some(s) = self.sender.upgrade() {
            let old = s.wmem.fetch_sub(self.charge, Ordering::Relaxed);
            s.out_bytes.fetch_sub(self.data.len(), Ordering::Relaxed);
            // Wake only a sender that may wait or poll for room (it is
            // writable at a quarter of its buffer, and waits at all of it).
            if old * 4 > s.sndbuf() {
                s.readiness.notify(POLLOUT);
            }
            // The sender may have been released meanwhile: its last
            // reference can be this one, dropped here, outside any lock.
            drop(s);
        }
    }
}

enum Conn {
    None,
    /// Connected (stream, seqpacket), or a datagram socket's default
    /// destination. The peer may be gone.
    Peer(Weak<UnixSocket>),
}

struct Listen {
    backlog: usize,
    /// Connections not accepted yet (their server-side sockets).
    pending: VecDeque<Arc<UnixSocket>>,
}

struct State {
    addr: UnixAddr,
    key: Option<Key>,
    conn: Conn,
    peer_addr: UnixAddr,
    peer_cred: Option<Ucred>,
    listen: Option<Listen>,
    /// Credentials listen(2) recorded, given to connecting clients.
    listen_cred: Ucred,
    queue: VecDeque<Msg>,
    /// Unread bytes in `queue`.
    queued: usize,
    /// RCV_SHUTDOWN and SEND_SHUTDOWN.
    rcv_shut: bool,
    snd_shut: bool,
    /// A server-side socket of a connection not accepted yet.
    embryo: bool,
}

impl State {
    fn new() -> State {
        State {
            addr: UnixAddr::Unnamed,
            key: None,
            conn: Conn::None,
            peer_addr: UnixAddr::Unnamed,
            peer_cred: None,
            listen: None,
            listen_cred: NO_CRED,
            queue: VecDeque::new(),
            queued: 0,
            rcv_shut: false,
            snd_shut: false,
            embryo: false,
        }
    }

    fn peer(&self) -> Option<Arc<UnixSocket>> {
        match &self.conn {
            Conn::Peer(w) => w.upgrade(),
            Conn::None => None,
        }
    }

    fn is_connected(&self) -> bool {
        matches!(self.conn, Conn::Peer(_))
    }
}

/// Copies of the options every send and receive reads (kept in step by
/// setsockopt).
struct Fast {
    sndbuf: AtomicUsize,
    rcvlowat: AtomicUsize,
    passcred: AtomicBool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_AUTOBIND: AtomicU64 = AtomicU64::new(0);
/// Live AF_UNIX sockets (ktest and /proc counters).
static LIVE: AtomicUsize = AtomicUsize::new(0);

pub struct UnixSocket {
    this: Weak<UnixSocket>,
    id: u64,
    kind: i32,
    /// The inode number of its open file (fstat's st_ino), once known.
    ino: AtomicU64,
    state: SpinLock<State, { level::SOCKET }>,
    opts: SockOpts,
    readiness: Readiness,
    /// Bytes charged for this socket's messages still queued somewhere.
    wmem: AtomicUsize,
    /// The data bytes of those messages (SIOCOUTQ).
    out_bytes: AtomicUsize,
    /// Its creator's credentials (what listen(2) records).
    cred: Ucred,
    /// What the data path reads of `opts`, without its lock.
    fast: Fast,
    /// Serializes bind, connect and listen.
    op: Mutex<()>,
    /// Receivers take turns (see the module comment).
    reader: Mutex<()>,
}

fn err(e: Errno) -> Error {
    Error::new(e)
}

/// socket(AF_UNIX, ...). SOCK_RAW is SOCK_DGRAM, as on Linux.
pub fn create(sock_type: i32, protocol: i32, _caller: &dyn Caller) -> Result<Arc<dyn Socket>> {
    Ok(UnixSocket::new(
        check_type(sock_type, protocol)?,
        Ucred::of(_caller),
    ))
}

fn check_type(sock_type: i32, protocol: i32) -> Result<i32> {
    if protocol != 0 && protocol != AF_UNIX {
        return Err(err(Errno::EPROTONOSUPPORT));
    }
    match sock_type {
        SOCK_STREAM | SOCK_DGRAM | SOCK_SEQPACKET => Ok(sock_type),
        SOCK_RAW => Ok(SOCK_DGRAM),
        _ => Err(err(Errno::ESOCKTNOSUPPORT)),
    }
}

/// socketpair(AF_UNIX, ...): two sockets connected to each other, each
/// with the creator's credentials as its peer's.
pub fn socketpair(
    sock_type: i32,
    protocol: i32,
    caller: &dyn Caller,
) -> Result<(Arc<dyn Socket>, Arc<dyn Socket>)> {
    let kind = check_type(sock_type, protocol)?;
    let cred = Ucred::of(caller);
    let (a, b) = (UnixSocket::new(kind, cred), UnixSocket::new(kind, cred));
    for (s, p) in [(&a, &b), (&b, &a)] {
        let mut st = s.state.lock();
        st.conn = Conn::Peer(Arc::downgrade(p));
        st.peer_cred = Some(cred);
    }
    Ok((a, b))
}

/// Records the inode number of `sock`'s open file (for /proc/net/unix).
pub fn note_inode(sock: &Arc<dyn Socket>, ino: u64) {
    if let Some(u) = (sock.as_ref() as &dyn Any).downcast_ref::<UnixSocket>() {
        u.ino.store(ino, Ordering::Relaxed);
    }
}

/// What /proc/net/unix shows of a socket.
#[derive(Clone, Debug)]
pub struct UnixSockInfo {
    /// The name: a path, or "@" and an abstract name; None if unbound.
    pub path: Option<String>,
    /// SOCK_STREAM, SOCK_DGRAM or SOCK_SEQPACKET.
    pub sock_type: i32,
    /// SS_UNCONNECTED (1), SS_CONNECTING (2) or SS_CONNECTED (3).
    pub state: u8,
    pub inode: u64,
    /// __SO_ACCEPTCON (0x10000) for a listening socket.
    pub flags: u32,
    pub refcount: usize,
}

/// Every AF_UNIX socket, for /proc/net/unix (collecting unreachable
/// sockets in flight first).
pub fn sockets() -> Vec<UnixSockInfo> {
    gc::maybe_collect();
    let all = names::all();
    let mut out = Vec::with_capacity(all.len());
    for s in &all {
        let st = s.state.lock();
        let path = match &st.addr {
            UnixAddr::Unnamed => None,
            UnixAddr::Path(p) => Some(String::from_utf8_lossy(p).into_owned()),
            UnixAddr::Abstract(n) => {
                let mut p = String::from("@");
                p.push_str(&String::from_utf8_lossy(n));
                Some(p)
            }
        };
        let listening = st.listen.is_some();
        let state = if listening || !st.is_connected() {
            1
        } else {
            3
        };
        out.push(UnixSockInfo {
            path,
            sock_type: s.kind,
            state,
            inode: s.ino.load(Ordering::Relaxed),
            flags: if listening { 0x10000 } else { 0 },
            refcount: Arc::strong_count(s).saturating_sub(1),
        });
    }
    drop(all);
    out
}

/// How many AF_UNIX sockets exist (leak checks).
pub fn live_count() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// A path name relative to the caller's cwd or root.
fn path_start(fs: &crate::fs::FsContext, path: &str) -> Arc<dyn crate::fs::Inode> {
    if path.starts_with('/') {
        fs.root().clone()
    } else {
        fs.cwd().clone()
    }
}

/// The socket a connect(2) or sendto(2) address names: ECONNREFUSED if no
/// socket is bound there, EACCES without write permission on a socket
/// file, the path walk's errors (ENOENT, ENOTDIR...), EINVAL for an
/// address with no name.
fn lookup(addr: &SockAddr, caller: &dyn Caller) -> Result<Arc<UnixSocket>> {
    let ua = match addr {
        SockAddr::Unix(a) => a,
        _ => return Err(err(Errno::EINVAL)),
    };
    match ua {
        UnixAddr::Unnamed => Err(err(Errno::EINVAL)),
        UnixAddr::Abstract(n) => {
            names::find(&Key::Abstract(n.clone())).ok_or(err(Errno::ECONNREFUSED))
        }
        UnixAddr::Path(p) => {
            let fs = caller.fs_context().ok_or(err(Errno::ECONNREFUSED))?;
            let path = crate::fs::name::from_user(p.clone());
            let start = path_start(&fs, &path);
            let node = crate::fs::lookup(&fs, &start, &path, true)?;
            fs.cred().check(&*node, MAY_WRITE)?;
            if node.file_type() != FileType::Socket {
                return Err(err(Errno::ECONNREFUSED));
            }
            let (dev, ino) = node.id();
            names::find(&Key::Inode(dev, ino)).ok_or(err(Errno::ECONNREFUSED))
        }
    }
}

/// Full-size ([`STREAM_CHUNK`]) message buffers kept for reuse: a large
/// stream piece then neither allocates nor zero-fills its buffer. A leaf
/// lock (taken under a socket's state lock when a queue is dropped;
/// nothing is taken or allocated under it), so unranked.
static BUFS: SpinLock<[Vec<u8>; BUFS_KEPT], { level::UNRANKED }> =
    SpinLock::new([const { Vec::new() }; BUFS_KEPT]);
/// Buffers BUFS keeps (a stream sender with the default SO_SNDBUF has at
/// most four full pieces queued).
const BUFS_KEPT: usize = 4;
/// Pieces from this size up go in a pooled buffer (at most half of one is
/// then unused while queued); smaller ones get a buffer of their size.
const POOLED_MIN: usize = STREAM_CHUNK / 2;

/// A message's bytes: the first `len` of `buf`. A full-size buffer goes
/// back to [`BUFS`] when the message is dropped; what it held is never
/// read again (a reuse exposes only the bytes written into it anew).
struct MsgBuf {
    buf: Vec<u8>,
    len: usize,
}

impl core::ops::Deref for MsgBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for MsgBuf {
    fn drop(&mut self) {
        if self.buf.len() != STREAM_CHUNK {
            return;
        }
        let mut pool = BUFS.lock();
        if let Some(slot) = pool.iter_mut().find(|b| b.is_empty()) {
            core::mem::swap(slot, &mut self.buf);
        }
        drop(pool);
        // A buffer the pool had no room for is freed with self, unlocked.
    }
}

/// A full-size buffer: a pooled one, else a new zero-filled one.
fn full_buffer() -> Result<Vec<u8>> {
    let pooled = {
        let mut pool = BUFS.lock();
        pool.iter_mut().find(|b| !b.is_empty()).map(core::mem::take)
    };
    match pooled {
        Some(b) => Ok(b),
        None => crate::fallible::zeroed(STREAM_CHUNK),
    }
}

/// `n` bytes of `data` from `offset`, in a message buffer (copied straight
/// from a kernel slice, read from user memory otherwise).
fn read_bytes(data: &dyn SendBuf, offset: usize, n: usize) -> Result<MsgBuf> {
    let src = data.as_slice().and_then(|s| s.get(offset..offset + n));
    if (POOLED_MIN..=STREAM_CHUNK).contains(&n) {
        // The length is set once the bytes are in: a failed read leaves
        // nothing of the buffer's earlier contents visible.
        let mut m = MsgBuf {
            buf: full_buffer()?,
            len: 0,
        };
        match src {
            Some(src) => m.buf[..n].copy_from_slice(src),
            None => data.read_at(offset, &mut m.buf[..n])?,
        }
        m.len = n;
        return Ok(m);
    }
    let buf = match src {
        Some(src) => {
            let mut v = crate::fallible::with_capacity(n)?;
            v.extend_from_slice(src);
            v
        }
        None => {
            let mut v = crate::fallible::zeroed(n)?;
            data.read_at(offset, &mut v)?;
            v
        }
    };
    Ok(MsgBuf { buf, len: n })
}

impl UnixSocket {
    fn new(kind: i32, cred: Ucred) -> Arc<UnixSocket> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let s = Arc::new_cyclic(|this| UnixSocket {
            this: this.clone(),
            id,
            kind,
            ino: AtomicU64::new(0),
            state: SpinLock::new(State::new()),
            opts: SockOpts::new(),
            readiness: Readiness::new(),
            wmem: AtomicUsize::new(0),
            out_bytes: AtomicUsize::new(0),
            cred,
            fast: Fast {
                sndbuf: AtomicUsize::new(super::socket::Opts::DEFAULT.sndbuf),
                rcvlowat: AtomicUsize::new(super::socket::Opts::DEFAULT.rcvlowat),
                passcred: AtomicBool::new(super::socket::Opts::DEFAULT.passcred),
            },
            op: Mutex::new(()),
            reader: Mutex::new(()),
        });
        LIVE.fetch_add(1, Ordering::Relaxed);
        names::register(id, Arc::downgrade(&s));
        s
    }

    fn is_conn_type(&self) -> bool {
        self.kind != SOCK_DGRAM
    }

    /// Binds `key` (already checked free or created) and records `addr`.
    fn set_name(&self, key: Key, addr: UnixAddr) -> Result<()> {
        names::insert(key.clone(), self.this.clone())?;
        let mut st = self.state.lock();
        if !matches!(st.addr, UnixAddr::Unnamed) {
            drop(st);
            names::remove(&key, self as *const UnixSocket);
            return Err(err(Errno::EINVAL));
        }
        st.addr = addr;
        st.key = Some(key);
        Ok(())
    }

    /// Gives an unbound socket an abstract name of five hex digits.
    fn autobind(&self) -> Result<()> {
        if !matches!(self.state.lock().addr, UnixAddr::Unnamed) {
            return Ok(());
        }
        for _ in 0..0x100000 {
            let n = NEXT_AUTOBIND.fetch_add(1, Ordering::Relaxed) & 0xfffff;
            let name = alloc::format!("{n:05x}").into_bytes();
            match self.set_name(Key::Abstract(name.clone()), UnixAddr::Abstract(name)) {
                Ok(()) => return Ok(()),
                Err(e) if e.errno() == Errno::EADDRINUSE => continue,
                Err(e) if e.errno() == Errno::EINVAL => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Err(err(Errno::ENOSPC))
    }

    fn passcred(&self) -> bool {
        self.fast.passcred.load(Ordering::Relaxed)
    }

    /// Copies the options the data path reads into [`Fast`].
    fn refresh_fast(&self) {
        let o = self.opts.get();
        self.fast.sndbuf.store(o.sndbuf, Ordering::Relaxed);
        self.fast.rcvlowat.store(o.rcvlowat, Ordering::Relaxed);
        self.fast.passcred.store(o.passcred, Ordering::Relaxed);
    }

    fn deadline(&self, send: bool, nonblocking: bool) -> u64 {
        self.opts.deadline(send, nonblocking)
    }

    /// Sleeps on `queue` until `ready()`: EAGAIN if the call must not
    /// wait or its timeout passes, ERESTARTSYS on a signal.
    fn wait_on(
        queue: &Readiness,
        deadline: u64,
        caller: &dyn Caller,
        ready: &mut dyn FnMut() -> bool,
    ) -> Result<()> {
        if deadline == 0 {
            return Err(err(Errno::EAGAIN));
        }
        if caller.wait(queue.queue(), ready, deadline)? {
            Ok(())
        } else {
            Err(err(Errno::EAGAIN))
        }
    }

    fn sndbuf(&self) -> usize {
        self.fast.sndbuf.load(Ordering::Relaxed)
    }

    fn has_room(&self) -> bool {
        self.wmem.load(Ordering::Relaxed) < self.sndbuf()
    }

    /// Waits until this socket may queue another message, or `stop()`.
    fn wait_room(&self, deadline: u64, caller: &dyn Caller, stop: &dyn Fn() -> bool) -> Result<()> {
        if self.has_room() {
            return Ok(());
        }
        Self::wait_on(&self.readiness, deadline, caller, &mut || {
            self.has_room() || stop()
        })
    }

    fn new_msg(&self, data: MsgBuf, cred: Ucred, rights: Vec<Arc<File>>, from: UnixAddr) -> Msg {
        let charge = data.len() + MSG_OVERHEAD;
        self.wmem.fetch_add(charge, Ordering::Relaxed);
        self.out_bytes.fetch_add(data.len(), Ordering::Relaxed);
        gc::IN_FLIGHT.fetch_add(rights.len(), Ordering::Relaxed);
        Msg {
            data,
            read: 0,
            from,
            rights,
            cred,
            sender: self.this.clone(),
            charge,
        }
    }

    /// Raises SIGPIPE unless MSG_NOSIGNAL; EPIPE.
    fn epipe(flags: u32, caller: &dyn Caller) -> Error {
        if flags & MSG_NOSIGNAL == 0 {
            caller.raise(SIGPIPE);
        }
        err(Errno::EPIPE)
    }

    /// Queues `msg` on `target`: checks under its lock, with `check`
    /// returning an error (nothing queued) or Ok(false) when the receiver
    /// is full (the message comes back to wait and retry).
    // The message comes back on failure, to wait and retry without a copy.
    #[allow(clippy::result_large_err)]
    fn deliver(
        target: &UnixSocket,
        msg: Msg,
        check: &dyn Fn(&State) -> Result<bool>,
    ) -> core::result::Result<(), (Msg, Option<Error>)> {
        let gc_guard = (!msg.rights.is_empty()).then(gc::lock);
        let mut st = target.state.lock();
        match check(&st) {
            Err(e) => return Err((msg, Some(e))),
            Ok(false) => return Err((msg, None)),
            Ok(true) => {}
        }
        st.queued += msg.data.len();
        st.queue.push_back(msg);
        drop(st);
        drop(gc_guard);
        target.readiness.notify(POLLIN | POLLRDNORM);
        Ok(())
    }

    /// Splits `meta.control` into credentials (the caller's own when not
    /// given) and rights.
    fn control(meta: SendMeta, caller: &dyn Caller) -> (Ucred, Vec<Arc<File>>) {
        let mut cred = Ucred::of(caller);
        let mut rights = Vec::new();
        for c in meta.control {
            match c {
                ControlMsg::Rights(f) => rights.extend(f),
                ControlMsg::Credentials { pid, uid, gid } => cred = Ucred { pid, uid, gid },
                ControlMsg::Other { .. } => {}
            }
        }
        (cred, rights)
    }

    fn send_stream(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let peer = {
            let st = self.state.lock();
            if meta.addr.is_some() {
                return Err(err(if st.is_connected() {
                    Errno::EISCONN
                } else {
                    Errno::EOPNOTSUPP
                }));
            }
            if !st.is_connected() {
                return Err(err(Errno::ENOTCONN));
            }
            if st.snd_shut {
                drop(st);
                return Err(Self::epipe(flags, caller));
            }
            st.peer()
        };
        let Some(peer) = peer else {
            return Err(Self::epipe(flags, caller));
        };
        let (cred, mut rights) = Self::control(meta, caller);
        let deadline = self.deadline(true, nonblocking);
        let len = data.len();
        let chunk_max = (self.sndbuf() / 2)
            .saturating_sub(64)
            .clamp(1024, STREAM_CHUNK);
        let mut sent = 0;
        while sent < len {
            let stop = || self.state.lock().snd_shut;
            if let Err(e) = self.wait_room(deadline, caller, &stop) {
                return if sent > 0 { Ok(sent) } else { Err(e) };
            }
            if self.state.lock().snd_shut {
                return if sent > 0 {
                    Ok(sent)
                } else {
                    Err(Self::epipe(flags, caller))
                };
            }
            let n = (len - sent).min(chunk_max);
            let buf = match read_bytes(data, sent, n) {
                Ok(b) => b,
                Err(e) => return if sent > 0 { Ok(sent) } else { Err(e) },
            };
            let msg = self.new_msg(buf, cred, core::mem::take(&mut rights), UnixAddr::Unnamed);
            let check = |st: &State| {
                if st.rcv_shut {
                    Err(err(Errno::EPIPE))
                } else {
                    Ok(true)
                }
            };
            if let Err((msg, _)) = Self::deliver(&peer, msg, &check) {
                drop(msg);
                gc::drain();
                return if sent > 0 {
                    Ok(sent)
                } else {
                    Err(Self::epipe(flags, caller))
                };
            }
            sent += n;
        }
        Ok(sent)
    }

    fn send_dgram(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        _flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let len = data.len();
        let mut addr = meta.addr.clone();
        if self.kind == SOCK_SEQPACKET {
            // Linux ignores a seqpacket destination.
            addr = None;
            if !self.state.lock().is_connected() {
                return Err(err(Errno::ENOTCONN));
            }
        }
        if len > self.sndbuf().saturating_sub(32) {
            return Err(err(Errno::EMSGSIZE));
        }
        let target = match &addr {
            Some(a) => lookup(a, caller)?,
            None => {
                let st = self.state.lock();
                if st.snd_shut {
                    drop(st);
                    // No SIGPIPE for datagrams and seqpackets (as on Linux).
                    return Err(err(Errno::EPIPE));
                }
                match &st.conn {
                    Conn::None => return Err(err(Errno::ENOTCONN)),
                    Conn::Peer(w) => match w.upgrade() {
                        Some(p) => p,
                        None => {
                            drop(st);
                            return Err(err(if self.kind == SOCK_SEQPACKET {
                                Errno::EPIPE
                            } else {
                                Errno::ECONNREFUSED
                            }));
                        }
                    },
                }
            }
        };
        if target.kind != self.kind {
            return Err(err(Errno::EPROTOTYPE));
        }
        if self.state.lock().snd_shut {
            return Err(err(Errno::EPIPE));
        }
        if self.passcred() || target.passcred() {
            self.autobind()?;
        }
        let (cred, rights) = Self::control(meta, caller);
        let deadline = self.deadline(true, nonblocking);
        self.wait_room(deadline, caller, &|| false)?;
        let buf = read_bytes(data, 0, len)?;
        let from = self.state.lock().addr.clone();
        let mut msg = self.new_msg(buf, cred, rights, from);
        let me = self as *const UnixSocket;
        let to_self = core::ptr::eq(Arc::as_ptr(&target), me);
        let check = |st: &State| -> Result<bool> {
            // Another socket's connected peer only takes from it.
            let back = match &st.conn {
                Conn::Peer(w) => {
                    if !core::ptr::eq(w.as_ptr(), me) && !to_self {
                        if w.strong_count() > 0 {
                            return Err(err(Errno::EPERM));
                        }
                        false
                    } else {
                        true
                    }
                }
                Conn::None => false,
            };
            if st.rcv_shut {
                return Err(err(Errno::EPIPE));
            }
            Ok(back || st.queue.len() < MAX_DGRAM_QLEN || self.kind != SOCK_DGRAM)
        };
        loop {
            match Self::deliver(&target, msg, &check) {
                Ok(()) => return Ok(len),
                Err((m, Some(e))) => {
                    drop(m);
                    gc::drain();
                    return Err(e);
                }
                Err((m, None)) => {
                    msg = m;
                    let full = || {
                        let st = target.state.lock();
                        st.queue.len() < MAX_DGRAM_QLEN || st.rcv_shut
                    };
                    let mut ready = full;
                    if let Err(e) = Self::wait_on(&target.readiness, deadline, caller, &mut ready) {
                        drop(msg);
                        gc::drain();
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Takes the front message for a receive, with [`gc::GC_LOCK`] when it
    /// carries descriptors; None if the queue is empty.
    fn take_front(&self) -> Option<Msg> {
        let mut st = self.state.lock();
        let has_rights = !st.queue.front()?.rights.is_empty();
        if !has_rights {
            return st.queue.pop_front();
        }
        drop(st);
        let _g = gc::lock();
        self.state.lock().queue.pop_front()
    }

    /// Puts back messages taken for a receive, in order, at the front.
    fn put_back(&self, msgs: Vec<Msg>) {
        if msgs.is_empty() {
            return;
        }
        let rights: usize = msgs.iter().map(|m| m.rights.len()).sum();
        let _g = (rights > 0).then(gc::lock);
        let mut st = self.state.lock();
        for m in msgs.into_iter().rev() {
            st.queue.push_front(m);
        }
    }

    /// Marks bytes consumed and, when the queue emptied some room, wakes
    /// datagram senders waiting on it.
    fn consumed(&self, n: usize) {
        let mut st = self.state.lock();
        st.queued = st.queued.saturating_sub(n);
        let was_full = st.queue.len() + 1 >= MAX_DGRAM_QLEN;
        drop(st);
        if self.kind == SOCK_DGRAM && was_full {
            self.readiness.notify(POLLOUT);
        }
    }

    /// Why a receive with nothing queued cannot wait: Some(Ok(0)) at end of
    /// file, Some(Err) for a pending error; None to wait.
    fn empty_outcome(&self) -> Option<Result<usize>> {
        if let Some(e) = self.opts.take_error() {
            return Some(Err(err(e)));
        }
        let st = self.state.lock();
        if st.rcv_shut {
            return Some(Ok(0));
        }
        if self.is_conn_type() && !st.is_connected() {
            return Some(Err(err(if self.kind == SOCK_STREAM {
                Errno::EINVAL
            } else {
                Errno::ENOTCONN
            })));
        }
        None
    }

    fn readable(&self) -> bool {
        let st = self.state.lock();
        !st.queue.is_empty() || st.rcv_shut
    }

    fn control_out(&self, cred: Option<Ucred>, rights: Vec<Arc<File>>, meta: &mut RecvMeta) {
        if let Some(c) = cred.filter(|_| self.passcred()) {
            meta.control.push(ControlMsg::Credentials {
                pid: c.pid,
                uid: c.uid,
                gid: c.gid,
            });
        }
        if !rights.is_empty() {
            meta.control.push(ControlMsg::Rights(rights));
        }
    }

    fn recv_stream(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        let peek = flags & MSG_PEEK != 0;
        let want = data.len();
        let target = if flags & MSG_WAITALL != 0 && !peek {
            want
        } else {
            self.fast.rcvlowat.load(Ordering::Relaxed).min(want).max(1)
        };
        let deadline = self.deadline(false, nonblocking);
        let passcred = self.passcred();
        let mut meta = RecvMeta::default();
        let mut copied = 0usize;
        let mut cred: Option<Ucred> = None;
        let mut rights: Vec<Arc<File>> = Vec::new();
        loop {
            let guard = self.reader.lock();
            let mut held: Vec<Msg> = Vec::new();
            let mut stop = false;
            let mut fault = None;
            while copied < want {
                let Some(mut m) = self.take_front() else {
                    break;
                };
                // A read ends before descriptors or other credentials.
                if copied > 0
                    && (!m.rights.is_empty() || (passcred && cred.is_some_and(|c| c != m.cred)))
                {
                    held.push(m);
                    stop = true;
                    break;
                }
                let n = (m.data.len() - m.read).min(want - copied);
                if let Err(e) = data.write_at(copied, &m.data[m.read..m.read + n]) {
                    held.push(m);
                    fault = Some(e);
                    break;
                }
                cred.get_or_insert(m.cred);
                let had_rights = !m.rights.is_empty();
                if had_rights {
                    if peek {
                        rights.extend(m.rights.iter().cloned());
                    } else {
                        gc::IN_FLIGHT.fetch_sub(m.rights.len(), Ordering::Relaxed);
                        rights.append(&mut m.rights);
                    }
                }
                copied += n;
                if peek {
                    // The bytes stay; a peek goes on into the next message.
                    let whole = m.read + n == m.data.len();
                    held.push(m);
                    if !whole {
                        stop = true;
                    }
                } else {
                    m.read += n;
                    self.consumed(n);
                    if m.read < m.data.len() {
                        held.push(m);
                    } else {
                        drop(m);
                    }
                }
                if had_rights {
                    stop = true;
                }
                if stop {
                    break;
                }
            }
            self.put_back(held);
            drop(guard);
            if let Some(e) = fault {
                if copied == 0 {
                    return Err(e);
                }
                break;
            }
            if stop || copied >= target || (copied == want && want > 0) || (peek && copied > 0) {
                break;
            }
            // An empty read returns at once when data waits (as on Linux).
            if want == 0 && !self.state.lock().queue.is_empty() {
                break;
            }
            if copied == 0 {
                if let Some(r) = self.empty_outcome() {
                    match r {
                        Ok(_) => break,
                        Err(e) => return Err(e),
                    }
                }
            } else if self.state.lock().rcv_shut {
                break;
            }
            if let Err(e) =
                Self::wait_on(&self.readiness, deadline, caller, &mut || self.readable())
            {
                if copied > 0 {
                    break;
                }
                return Err(e);
            }
        }
        meta.len = copied;
        meta.full_len = copied;
        self.control_out(cred, rights, &mut meta);
        Ok(meta)
    }

    fn recv_dgram(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        let peek = flags & MSG_PEEK != 0;
        let deadline = self.deadline(false, nonblocking);
        loop {
            let guard = self.reader.lock();
            if let Some(mut m) = self.take_front() {
                let n = m.data.len().min(data.len());
                if let Err(e) = data.write_at(0, &m.data[..n]) {
                    self.put_back(alloc::vec![m]);
                    return Err(e);
                }
                let mut meta = RecvMeta {
                    len: n,
                    full_len: m.data.len(),
                    ..RecvMeta::default()
                };
                if m.data.len() > n {
                    meta.flags |= MSG_TRUNC;
                }
                if !matches!(m.from, UnixAddr::Unnamed) {
                    meta.addr = Some(SockAddr::Unix(m.from.clone()));
                }
                let rights = if peek {
                    m.rights.clone()
                } else {
                    core::mem::take(&mut m.rights)
                };
                if !peek {
                    gc::IN_FLIGHT.fetch_sub(rights.len(), Ordering::Relaxed);
                }
                let cred = m.cred;
                if peek {
                    self.put_back(alloc::vec![m]);
                } else {
                    let len = m.data.len();
                    drop(m);
                    self.consumed(len);
                }
                drop(guard);
                self.control_out(Some(cred), rights, &mut meta);
                return Ok(meta);
            }
            drop(guard);
            if let Some(r) = self.empty_outcome() {
                r?;
                return Ok(RecvMeta::default());
            }
            Self::wait_on(&self.readiness, deadline, caller, &mut || self.readable())?;
        }
    }

    fn connect_stream(
        &self,
        addr: &SockAddr,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<()> {
        {
            let st = self.state.lock();
            if st.listen.is_some() {
                return Err(err(Errno::EINVAL));
            }
            if st.is_connected() {
                return Err(err(Errno::EISCONN));
            }
        }
        let target = lookup(addr, caller)?;
        if target.kind != self.kind {
            return Err(err(Errno::EPROTOTYPE));
        }
        if self.passcred() {
            self.autobind()?;
        }
        let my_addr = self.state.lock().addr.clone();
        let my_cred = Ucred::of(caller);
        let server = UnixSocket::new(self.kind, target.cred);
        {
            let mut st = server.state.lock();
            st.conn = Conn::Peer(self.this.clone());
            st.peer_addr = my_addr;
            st.peer_cred = Some(my_cred);
            st.embryo = true;
        }
        // The new socket inherits the listener's options (no two option
        // locks at once).
        let listener_opts = target.opts.get();
        server.opts.update(|o| *o = listener_opts);
        server.refresh_fast();
        let listen_addr = target.state.lock().addr.clone();
        server.state.lock().addr = listen_addr.clone();
        let deadline = self.deadline(true, nonblocking);
        let queued = loop {
            let mut st = target.state.lock();
            let Some(l) = st.listen.as_mut() else {
                drop(st);
                break Err(err(Errno::ECONNREFUSED));
            };
            if l.pending.len() <= l.backlog {
                l.pending.push_back(server.clone());
                break Ok(st.listen_cred);
            }
            drop(st);
            let has_room = || {
                let st = target.state.lock();
                st.listen
                    .as_ref()
                    .is_none_or(|l| l.pending.len() <= l.backlog)
            };
            let mut ready = has_room;
            if let Err(e) = Self::wait_on(&target.readiness, deadline, caller, &mut ready) {
                break Err(e);
            }
        };
        let listen_cred = match queued {
            Ok(c) => c,
            Err(e) => {
                // Not a connection: its release must not hang us up.
                server.state.lock().conn = Conn::None;
                return Err(e);
            }
        };
        {
            let mut st = self.state.lock();
            st.conn = Conn::Peer(Arc::downgrade(&server));
            st.peer_addr = listen_addr;
            st.peer_cred = Some(listen_cred);
        }
        drop(server);
        target.readiness.notify(POLLIN | POLLRDNORM);
        Ok(())
    }
}

impl Socket for UnixSocket {
    fn family(&self) -> i32 {
        AF_UNIX
    }

    fn sock_type(&self) -> i32 {
        self.kind
    }

    fn protocol(&self) -> i32 {
        0
    }

    fn bind(&self, addr: &SockAddr, caller: &dyn Caller) -> Result<()> {
        let _op = self.op.lock();
        let ua = match addr {
            SockAddr::Unix(a) => a,
            _ => return Err(err(Errno::EINVAL)),
        };
        match ua {
            UnixAddr::Unnamed => self.autobind(),
            _ if !matches!(self.state.lock().addr, UnixAddr::Unnamed) => Err(err(Errno::EINVAL)),
            UnixAddr::Abstract(n) => self.set_name(Key::Abstract(n.clone()), ua.clone()),
            UnixAddr::Path(p) => {
                let fs = caller.fs_context().ok_or(err(Errno::EOPNOTSUPP))?;
                let path = crate::fs::name::from_user(p.clone());
                let start = path_start(&fs, &path);
                // A socket file, like mknod(S_IFSOCK | 0777) minus the umask.
                crate::fs::mknod(&fs, &start, &path, 0o140_777, 0).map_err(|e| {
                    if e.errno() == Errno::EEXIST {
                        err(Errno::EADDRINUSE)
                    } else {
                        e
                    }
                })?;
                let node = crate::fs::lookup(&fs, &start, &path, false)?;
                let (dev, ino) = node.id();
                self.set_name(Key::Inode(dev, ino), ua.clone())
            }
        }
    }

    fn connect(&self, addr: &SockAddr, nonblocking: bool, caller: &dyn Caller) -> Result<()> {
        let _op = self.op.lock();
        if self.kind != SOCK_DGRAM {
            return self.connect_stream(addr, nonblocking, caller);
        }
        if matches!(addr, SockAddr::Unspec) {
            // Dissolves the association.
            let mut st = self.state.lock();
            st.conn = Conn::None;
            st.peer_addr = UnixAddr::Unnamed;
            st.peer_cred = None;
            return Ok(());
        }
        let target = lookup(addr, caller)?;
        if target.kind != self.kind {
            return Err(err(Errno::EPROTOTYPE));
        }
        if self.passcred() {
            self.autobind()?;
        }
        let (taddr, tcred) = {
            let st = target.state.lock();
            (st.addr.clone(), st.listen_cred)
        };
        let mut st = self.state.lock();
        st.conn = Conn::Peer(Arc::downgrade(&target));
        st.peer_addr = taddr;
        st.peer_cred = Some(tcred);
        drop(st);
        drop(target);
        Ok(())
    }

    fn listen(&self, backlog: i32) -> Result<()> {
        let _op = self.op.lock();
        if self.kind == SOCK_DGRAM {
            return Err(err(Errno::EOPNOTSUPP));
        }
        let mut st = self.state.lock();
        if matches!(st.addr, UnixAddr::Unnamed) || st.is_connected() {
            return Err(err(Errno::EINVAL));
        }
        let backlog = backlog.max(0) as usize;
        match st.listen.as_mut() {
            Some(l) => l.backlog = backlog,
            None => {
                st.listen = Some(Listen {
                    backlog,
                    pending: VecDeque::new(),
                });
                st.listen_cred = self.cred;
            }
        }
        drop(st);
        self.readiness.notify(POLLOUT);
        Ok(())
    }

    fn accept(
        &self,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<(Arc<dyn Socket>, SockAddr)> {
        if self.kind == SOCK_DGRAM {
            return Err(err(Errno::EOPNOTSUPP));
        }
        let deadline = self.deadline(false, nonblocking);
        loop {
            let got = {
                let mut st = self.state.lock();
                let Some(l) = st.listen.as_mut() else {
                    return Err(err(Errno::EINVAL));
                };
                l.pending.pop_front()
            };
            if let Some(s) = got {
                let peer = {
                    let mut st = s.state.lock();
                    st.embryo = false;
                    st.peer_addr.clone()
                };
                self.readiness.notify(POLLOUT);
                return Ok((s, SockAddr::Unix(peer)));
            }
            let ready = || {
                let st = self.state.lock();
                st.listen.as_ref().is_none_or(|l| !l.pending.is_empty())
            };
            let mut ready = ready;
            Self::wait_on(&self.readiness, deadline, caller, &mut ready)?;
        }
    }

    fn send(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        if flags & MSG_OOB != 0 {
            return Err(err(Errno::EOPNOTSUPP));
        }
        if self.kind == SOCK_STREAM {
            self.send_stream(data, meta, flags, nonblocking, caller)
        } else {
            self.send_dgram(data, meta, flags, nonblocking, caller)
        }
    }

    fn recv(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        if flags & MSG_OOB != 0 {
            return Err(err(Errno::EOPNOTSUPP));
        }
        let nonblocking = nonblocking || flags & MSG_DONTWAIT != 0;
        if self.kind == SOCK_STREAM {
            if self.state.lock().listen.is_some() {
                return Err(err(Errno::EINVAL));
            }
            self.recv_stream(data, flags, nonblocking, caller)
        } else {
            self.recv_dgram(data, flags, nonblocking, caller)
        }
    }

    fn shutdown(&self, how: u32) -> Result<()> {
        let (rd, wr) = (how != SHUT_WR, how != SHUT_RD);
        let peer = {
            // Linux lets any socket shut down, connected or not.
            let mut st = self.state.lock();
            st.rcv_shut |= rd;
            st.snd_shut |= wr;
            if self.is_conn_type() { st.peer() } else { None }
        };
        self.readiness.notify(POLLIN | POLLOUT | POLLHUP);
        if let Some(p) = peer {
            {
                let mut st = p.state.lock();
                st.snd_shut |= rd;
                st.rcv_shut |= wr;
            }
            p.readiness.notify(POLLIN | POLLOUT | POLLHUP);
        }
        Ok(())
    }

    fn local_addr(&self) -> Result<SockAddr> {
        Ok(SockAddr::Unix(self.state.lock().addr.clone()))
    }

    fn peer_addr(&self) -> Result<SockAddr> {
        let st = self.state.lock();
        if !st.is_connected() {
            return Err(err(Errno::ENOTCONN));
        }
        Ok(SockAddr::Unix(st.peer_addr.clone()))
    }

    fn setsockopt(&self, level: i32, name: i32, value: &[u8], caller: &dyn Caller) -> Result<()> {
        if level != SOL_SOCKET {
            return Err(err(Errno::EOPNOTSUPP));
        }
        self.opts.set(name, value, caller)?;
        self.refresh_fast();
        if matches!(name, SO_SNDBUF | SO_SNDBUFFORCE) {
            self.readiness.notify(POLLOUT);
        }
        Ok(())
    }

    fn getsockopt(&self, level: i32, name: i32, _caller: &dyn Caller) -> Result<Vec<u8>> {
        if level != SOL_SOCKET {
            return Err(err(Errno::EOPNOTSUPP));
        }
        match name {
            SO_PEERCRED => {
                let c = self.state.lock().peer_cred.unwrap_or(NO_CRED);
                let mut v = Vec::with_capacity(12);
                v.extend_from_slice(&c.pid.to_ne_bytes());
                v.extend_from_slice(&c.uid.to_ne_bytes());
                v.extend_from_slice(&c.gid.to_ne_bytes());
                Ok(v)
            }
            _ => self.opts.get_opt(name),
        }
    }

    fn poll(&self) -> u16 {
        let st = self.state.lock();
        let mut mask = 0;
        if let Some(l) = &st.listen {
            if !l.pending.is_empty() {
                mask |= POLLIN | POLLRDNORM;
            }
            return mask;
        }
        if !st.queue.is_empty() {
            mask |= POLLIN | POLLRDNORM;
        }
        if st.rcv_shut {
            mask |= POLLIN | POLLRDNORM | POLLRDHUP;
        }
        if st.rcv_shut && st.snd_shut {
            mask |= POLLHUP;
        }
        let connected = st.is_connected();
        // A datagram socket connected to a full receiver is not writable.
        let peer_full = if self.kind == SOCK_DGRAM {
            match &st.conn {
                Conn::Peer(w) => Some(w.clone()),
                Conn::None => None,
            }
        } else {
            None
        };
        drop(st);
        if self.opts.has_error() {
            mask |= POLLERR;
        }
        if self.is_conn_type() && !connected {
            mask |= POLLHUP;
        }
        let mut writable = self.wmem.load(Ordering::Relaxed) * 4 <= self.sndbuf()
            || self.wmem.load(Ordering::Relaxed) == 0;
        if let Some(w) = peer_full.and_then(|w| w.upgrade()) {
            let full = {
                let st = w.state.lock();
                let back = matches!(&st.conn, Conn::Peer(b) if core::ptr::eq(b.as_ptr(), self as *const UnixSocket));
                !back && st.queue.len() >= MAX_DGRAM_QLEN
            };
            if full {
                writable = false;
            }
            drop(w);
        }
        if writable {
            mask |= POLLOUT | POLLWRNORM | POLLWRBAND;
        }
        mask
    }

    fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    fn is_listening(&self) -> bool {
        self.state.lock().listen.is_some()
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        let v: usize = match cmd {
            FIONREAD => {
                let st = self.state.lock();
                if st.listen.is_some() {
                    return Err(err(Errno::EINVAL));
                }
                if self.kind == SOCK_DGRAM {
                    st.queue.front().map_or(0, |m| m.data.len())
                } else {
                    st.queued
                }
            }
            SIOCOUTQ => self.wmem_bytes(),
            _ => return Err(err(Errno::ENOTTY)),
        };
        caller.write_bytes(arg, &(v.min(i32::MAX as usize) as i32).to_ne_bytes())?;
        Ok(0)
    }
}

impl UnixSocket {
    /// Bytes of this socket's messages not yet consumed by their receiver.
    fn wmem_bytes(&self) -> usize {
        self.out_bytes.load(Ordering::Relaxed)
    }
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
        names::unregister(self.id);
        let me = self as *const UnixSocket;
        let st = core::mem::replace(self.state.get_mut(), State::new());
        if let Some(key) = &st.key {
            names::remove(key, me);
        }
        let unread = !st.queue.is_empty();
        if let Some(peer) = st.peer() {
            if self.kind != SOCK_DGRAM {
                {
                    let mut pst = peer.state.lock();
                    pst.rcv_shut = true;
                    pst.snd_shut = true;
                }
                if unread || st.embryo {
                    peer.opts.set_error(Errno::ECONNRESET);
                }
            }
            peer.readiness.notify(POLLIN | POLLOUT | POLLHUP | POLLERR);
            drop(peer);
        }
        // Nothing else can reach the queue now: the collector only sees
        // sockets it can still upgrade.
        let State { queue, listen, .. } = st;
        drop(queue);
        drop(listen);
        gc::drain();
        gc::maybe_collect();
    }
}
