//! AF_INET and AF_INET6 sockets (TCP and UDP) over the smoltcp stack of
//! [`super::iface`].
//!
//! A socket's state lives in the stack's [`Table`], under the stack lock,
//! because the stack's poll (in any thread, or the poll task) changes it;
//! the socket object keeps only what never needs that lock (its
//! [`Readiness`] and the shared [`SockOpts`], whose SOCKET-level lock is
//! always taken *before* the stack's, never inside it). No lock is held
//! across a user copy: sends copy the user's bytes into a chunk first,
//! receives copy out of one after.
//!
//! TCP listeners: smoltcp accepts one connection per listening socket, so a
//! listener keeps several smoltcp sockets in LISTEN on its port (on every
//! interface it is bound to) and refills them after each poll; connections
//! that completed wait in those sockets until accept(2) takes them.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec;
use alloc::vec::Vec;

use frame::sync::{SpinLock, level};
use smoltcp::iface::SocketHandle;
use smoltcp::socket::{tcp, udp};
use smoltcp::time::Duration;
use smoltcp::wire::{IpAddress, IpEndpoint, IpListenEndpoint, Ipv4Address, Ipv6Address};

use super::addr::{Inet6Addr, InetAddr, SockAddr};
use super::iface::{self, Stack, poll_now, with_stack};
use super::socket::{RecvBuf, RecvMeta, SendBuf, SendMeta, SockOpts, Socket};
use super::*;
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::stream::{Caller, POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
use crate::mm::NoFaults;

const POLLRDHUP: u16 = 0x2000;

pub const TCP_NODELAY: i32 = 1;
pub const TCP_MAXSEG: i32 = 2;
pub const TCP_CORK: i32 = 3;
pub const TCP_KEEPIDLE: i32 = 4;
pub const TCP_KEEPINTVL: i32 = 5;
pub const TCP_KEEPCNT: i32 = 6;
pub const TCP_SYNCNT: i32 = 7;
pub const TCP_LINGER2: i32 = 8;
pub const TCP_DEFER_ACCEPT: i32 = 9;
pub const TCP_INFO: i32 = 11;
pub const TCP_QUICKACK: i32 = 12;
pub const TCP_CONGESTION: i32 = 13;
pub const TCP_USER_TIMEOUT: i32 = 18;
pub const IP_TOS: i32 = 1;
pub const IP_TTL: i32 = 2;
pub const IP_RECVERR: i32 = 11;
pub const IPV6_UNICAST_HOPS: i32 = 16;
pub const IPV6_V6ONLY: i32 = 26;
pub const SO_ZEROCOPY: i32 = 60;

pub const FIONREAD: u32 = 0x541b;
pub const SIOCOUTQ: u32 = 0x5411;
pub const SIOCOUTQNSD: u32 = 0x894b;

const SIGPIPE: u32 = 13;
const CAP_NET_BIND_SERVICE: u32 = 10;

/// net.ipv4.ip_local_port_range.
pub const EPHEMERAL_FIRST: u16 = 32768;
pub const EPHEMERAL_LAST: u16 = 60999;
/// Largest UDP payload (65535 - 8 - 20).
const UDP_MAX_PAYLOAD: usize = 65507;
/// smoltcp socket buffers: bytes per direction of a TCP connection (half
/// of SO_RCVBUF/SO_SNDBUF, as Linux keeps half for overhead; the default
/// 212,992 gives 104 KiB rings). Above 64 KiB a sender may have more
/// than one loopback segment (MSS 65,495) unacknowledged, and smoltcp's
/// receiver then ACKs at once instead of after a read or its delayed-ACK
/// timer (our reading of tcp_bw going from 736 to 818 MB/s, icount pass,
/// when this went from 64 to 256 KiB).
const TCP_BUF_MIN: usize = 4096;
const TCP_BUF_MAX: usize = 256 * 1024;
/// Datagrams a UDP socket queues each way.
const UDP_PACKETS: usize = 64;
/// LISTEN sockets a listener keeps ready (per interface).
const LISTEN_SPARES: usize = 8;
/// Closed TCP sockets kept for reuse (each holds its two rings, 208 KiB
/// with the default buffer sizes): a connection takes two (the connecting
/// socket and the listener's new spare) and gives two back.
const TCP_POOL: usize = 4;
/// Connections a listener holds for accept(2) at most (the backlog is
/// raised to this floor so a burst of connects does not see RSTs: smoltcp
/// answers a SYN nobody listens for with RST, where Linux drops it).
const ACCEPT_QUEUE_FLOOR: usize = 512;
const SOMAXCONN: usize = 4096;
/// Copy chunk between user memory and the stack.
const CHUNK: usize = 64 * 1024;
/// A connect gives up after this long without an answer (Linux: about
/// 127 s with 6 SYN retries).
const CONNECT_TIMEOUT_MS: u64 = 127_000;
/// Keep-alive defaults (tcp_keepalive_time, _intvl, _probes).
const KEEPIDLE_S: u32 = 7200;
const KEEPINTVL_S: u32 = 75;
const KEEPCNT: u32 = 9;

fn err(e: Errno) -> Error {
    Error::new(e)
}

/// Copy buffers between user memory and the stack, kept for reuse: a send
/// or a receive then neither allocates nor zero-fills one. A buffer's
/// length only grows (to CHUNK at most), so a reused one is never
/// zero-filled again. A leaf lock (it may be taken under the stack's, and
/// nothing is taken or allocated under it), so unranked.
static CHUNKS: SpinLock<[Vec<u8>; CHUNKS_KEPT], { level::UNRANKED }> =
    SpinLock::new([const { Vec::new() }; CHUNKS_KEPT]);
/// Buffers CHUNKS keeps (one per task copying at a time is enough).
const CHUNKS_KEPT: usize = 4;

/// A copy buffer from CHUNKS, given back when dropped.
#[derive(Default)]
struct Chunk(Vec<u8>);

impl Chunk {
    /// The first `n` bytes (`n` at most CHUNK) of the buffer, taken from
    /// the pool on first use.
    fn get(&mut self, n: usize) -> &mut [u8] {
        if self.0.len() < n {
            if self.0.is_empty() {
                let mut pool = CHUNKS.lock();
                if let Some(c) = pool.iter_mut().find(|c| !c.is_empty()) {
                    self.0 = core::mem::take(c);
                }
            }
            if self.0.len() < n {
                self.0.resize(n, 0);
            }
        }
        &mut self.0[..n]
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let mut pool = CHUNKS.lock();
        if let Some(slot) = pool.iter_mut().find(|c| c.is_empty()) {
            core::mem::swap(slot, &mut self.0);
        }
        drop(pool);
        // A buffer the pool had no room for is freed with self, unlocked.
    }
}

/// An address and port, the address None when unspecified (wildcard).
type Ep = (Option<IpAddress>, u16);

/// What a TCP socket is doing.
enum Kind {
    /// Never connected, or its connect failed (it may connect again).
    Unconnected,
    Connecting {
        iface: u32,
        handle: SocketHandle,
    },
    Connected {
        iface: u32,
        handle: SocketHandle,
    },
    Listening {
        backlog: usize,
        handles: Vec<(u32, SocketHandle)>,
    },
    /// UDP: one smoltcp socket per interface it is bound on.
    Udp {
        handles: Vec<(u32, SocketHandle)>,
        peer: Option<(IpAddress, u16)>,
    },
}

/// Per-socket protocol options kept with the state.
#[derive(Clone, Copy)]
struct TcpOpts {
    nodelay: bool,
    keepalive: bool,
    keepidle: u32,
    keepintvl: u32,
    keepcnt: u32,
    maxseg: u32,
    ttl: u8,
    tos: u8,
}

impl Default for TcpOpts {
    fn default() -> Self {
        TcpOpts {
            nodelay: false,
            keepalive: false,
            keepidle: KEEPIDLE_S,
            keepintvl: KEEPINTVL_S,
            keepcnt: KEEPCNT,
            maxseg: 0,
            ttl: 64,
            tos: 0,
        }
    }
}

/// One socket's state in the stack.
struct SockState {
    inner: Weak<Inner>,
    tcp: bool,
    v6: bool,
    v6only: bool,
    /// Bound address and port (None: not bound yet).
    bound: Option<Ep>,
    /// The local address a UDP connect picked (getsockname).
    conn_local: Option<IpAddress>,
    reuseaddr: bool,
    reuseport: bool,
    kind: Kind,
    /// SO_ERROR of an asynchronous failure (refused connect, reset).
    err: Option<Errno>,
    /// A reset or time-out ended the connection: reads and writes fail.
    dead: Option<Errno>,
    shut_rd: bool,
    shut_wr: bool,
    opts: TcpOpts,
    rcvbuf: usize,
    sndbuf: usize,
    connect_started_ms: i64,
    /// Readiness signature at the last notification.
    sig: u64,
    uid: u32,
}

/// A closed TCP connection still finishing (FIN exchange, TIME-WAIT).
struct Orphan {
    iface: u32,
    handle: SocketHandle,
    port: u16,
}

/// The inet sockets' state, kept inside the stack's lock.
#[derive(Default)]
pub(crate) struct Table {
    /// Each socket's state, boxed so that [`InetSocket::with`] takes it
    /// out and puts it back by moving a pointer (None meanwhile).
    socks: BTreeMap<u64, Option<Box<SockState>>>,
    orphans: Vec<Orphan>,
    /// Closed TCP sockets kept for reuse ([`new_tcp`]).
    tcp_pool: Vec<tcp::Socket<'static>>,
    next_id: u64,
    next_port: u16,
}

/// What the socket object holds itself.
struct Inner {
    id: u64,
    family: i32,
    tcp: bool,
    readiness: Readiness,
    opts: SockOpts,
}

/// Something to notify after a poll.
pub(crate) struct Wake(Arc<Inner>);

impl Wake {
    pub fn notify_all(&self) {
        self.0
            .readiness
            .notify(POLLIN | POLLOUT | POLLERR | POLLHUP);
    }
}

/// An AF_INET or AF_INET6 socket.
pub struct InetSocket {
    inner: Arc<Inner>,
}

fn tcp_sock(s: &mut Stack, iface: u32, h: SocketHandle) -> &mut tcp::Socket<'static> {
    s.iface_mut(iface)
        .expect("interfaces are never removed")
        .sockets
        .get_mut::<tcp::Socket>(h)
}

fn udp_sock(s: &mut Stack, iface: u32, h: SocketHandle) -> &mut udp::Socket<'static> {
    s.iface_mut(iface)
        .expect("interfaces are never removed")
        .sockets
        .get_mut::<udp::Socket>(h)
}

/// Removes a smoltcp socket from its interface; a TCP one goes to the
/// table's pool of closed sockets for reuse.
fn remove_handle(s: &mut Stack, iface: u32, h: SocketHandle) {
    let Ok(i) = s.iface_mut(iface) else { return };
    if let smoltcp::socket::Socket::Tcp(mut t) = i.sockets.remove(h)
        && s.inet.tcp_pool.len() < TCP_POOL
    {
        // Closed at once (from TIME-WAIT too): out of the set it never
        // sends again, and connect/listen reset it before reuse.
        t.abort();
        s.inet.tcp_pool.push(t);
    }
}

/// A closed TCP socket with rings of `rcv` and `snd` bytes: a pooled one
/// when one has those sizes (no allocation, no zero-filling of its rings),
/// a new one otherwise.
///
/// A pooled socket's rings still hold an earlier connection's bytes, but
/// smoltcp reads from a ring only what was queued into it since its last
/// reset (connect and listen reset it: both rings emptied, the reassembly
/// state, timers and sequence numbers cleared). What smoltcp's reset leaves
/// is its duplicate-ACK and SACK hints (compared with the new connection's
/// random sequence numbers, so at worst one early retransmission) and the
/// options [`apply_tcp_opts`] sets again here; the kernel changes no other
/// smoltcp option (ACK delay, timestamps, congestion control keep their
/// defaults).
fn new_tcp(table: &mut Table, rcv: usize, snd: usize, o: &TcpOpts) -> tcp::Socket<'static> {
    let pooled = table
        .tcp_pool
        .iter()
        .position(|p| p.recv_capacity() == rcv && p.send_capacity() == snd)
        .map(|i| table.tcp_pool.swap_remove(i));
    let mut t = pooled.unwrap_or_else(|| {
        let rx = tcp::SocketBuffer::new(vec![0u8; rcv]);
        let tx = tcp::SocketBuffer::new(vec![0u8; snd]);
        tcp::Socket::new(rx, tx)
    });
    apply_tcp_opts(&mut t, o);
    t
}

fn apply_tcp_opts(t: &mut tcp::Socket<'static>, o: &TcpOpts) {
    t.set_nagle_enabled(!o.nodelay);
    t.set_keep_alive(
        o.keepalive
            .then(|| Duration::from_secs(o.keepintvl.max(1) as u64)),
    );
    t.set_hop_limit(Some(o.ttl.max(1)));
    // A live connection without keep-alive never times out (Linux keeps
    // retransmitting for ~15 minutes); with keep-alive it dies after the
    // probes go unanswered.
    let timeout = if o.keepalive {
        Some(Duration::from_secs(
            (o.keepidle + o.keepintvl * o.keepcnt) as u64,
        ))
    } else {
        None
    };
    if t.state() != tcp::State::SynSent {
        t.set_timeout(timeout);
    }
}

fn new_udp(rcvbuf: usize, sndbuf: usize) -> udp::Socket<'static> {
    let rx = udp::PacketBuffer::new(
        vec![udp::PacketMetadata::EMPTY; UDP_PACKETS],
        vec![0u8; rcvbuf.clamp(UDP_MAX_PAYLOAD + 1, 256 * 1024)],
    );
    let tx = udp::PacketBuffer::new(
        vec![udp::PacketMetadata::EMPTY; UDP_PACKETS],
        vec![0u8; sndbuf.clamp(UDP_MAX_PAYLOAD + 1, 256 * 1024)],
    );
    udp::Socket::new(rx, tx)
}

fn same_family(a: &IpAddress, b: &IpAddress) -> bool {
    matches!(
        (a, b),
        (IpAddress::Ipv4(_), IpAddress::Ipv4(_)) | (IpAddress::Ipv6(_), IpAddress::Ipv6(_))
    )
}

fn unspecified_v4() -> IpAddress {
    IpAddress::Ipv4(Ipv4Address::UNSPECIFIED)
}

/// `::ffff:a.b.c.d` as the IPv4 address.
fn unmap(a: &[u8; 16]) -> Option<Ipv4Address> {
    (a[..10].iter().all(|&b| b == 0) && a[10] == 0xff && a[11] == 0xff)
        .then(|| Ipv4Address::new(a[12], a[13], a[14], a[15]))
}

fn mapped(a: Ipv4Address) -> Ipv6Address {
    let o = a.octets();
    Ipv6Address::new(
        0,
        0,
        0,
        0,
        0,
        0xffff,
        u16::from_be_bytes([o[0], o[1]]),
        u16::from_be_bytes([o[2], o[3]]),
    )
}

impl SockState {
    fn covers_v4(&self) -> bool {
        match self.bound {
            Some((Some(IpAddress::Ipv4(_)), _)) => true,
            Some((Some(IpAddress::Ipv6(_)), _)) => false,
            _ => !self.v6 || !self.v6only,
        }
    }

    fn covers_v6(&self) -> bool {
        self.v6 && !matches!(self.bound, Some((Some(IpAddress::Ipv4(_)), _)))
    }

    fn is_listening(&self) -> bool {
        matches!(self.kind, Kind::Listening { .. })
    }
}

impl Table {
    /// Whether binding a socket described by `new` to `ep` clashes.
    fn clashes(&self, me: u64, new: &SockState, ep: Ep) -> bool {
        let (addr, port) = ep;
        for (&id, o) in &self.socks {
            let Some(o) = o else { continue };
            if id == me || o.tcp != new.tcp {
                continue;
            }
            let Some((oaddr, oport)) = o.bound else {
                continue;
            };
            if oport != port {
                continue;
            }
            let fam = (o.covers_v4() && new.covers_v4()) || (o.covers_v6() && new.covers_v6());
            let addr_overlap = addr.is_none() || oaddr.is_none() || addr == oaddr;
            if !fam || !addr_overlap {
                continue;
            }
            if new.reuseport && o.reuseport {
                continue;
            }
            // SO_REUSEADDR: TCP shares a port unless a listener holds it;
            // UDP shares it when both sockets ask.
            if new.reuseaddr
                && o.reuseaddr
                && (!new.tcp || (!o.is_listening() && !new.is_listening()))
            {
                continue;
            }
            return true;
        }
        // Connections still closing hold their port unless SO_REUSEADDR.
        new.tcp && !new.reuseaddr && self.orphans.iter().any(|o| o.port == port)
    }

    fn port_free(&self, me: u64, new: &SockState, addr: Option<IpAddress>, port: u16) -> bool {
        !self.clashes(me, new, (addr, port))
    }

    /// An ephemeral port free for `new` (EADDRINUSE when all are taken).
    fn ephemeral(&mut self, me: u64, new: &SockState, addr: Option<IpAddress>) -> Result<u16> {
        let span = (EPHEMERAL_LAST - EPHEMERAL_FIRST + 1) as u32;
        if self.next_port == 0 {
            self.next_port = EPHEMERAL_FIRST + (frame::timer::monotonic_ns() % span as u64) as u16;
        }
        for _ in 0..span {
            let p = self.next_port;
            self.next_port = if p >= EPHEMERAL_LAST {
                EPHEMERAL_FIRST
            } else {
                p + 1
            };
            // A fresh connection must not meet its port's previous
            // incarnation, still in the stack: skip ports in any use.
            let used = self
                .socks
                .values()
                .flatten()
                .any(|o| o.tcp == new.tcp && o.bound.is_some_and(|b| b.1 == p))
                || self.orphans.iter().any(|o| o.port == p);
            if !used && self.port_free(me, new, addr, p) {
                return Ok(p);
            }
        }
        Err(err(Errno::EADDRINUSE))
    }
}

/// Interfaces whose sockets should carry a socket bound to `addr`: all
/// that are up for a wildcard, else those that own it (`lo` owns all).
fn ifaces_for(s: &Stack, addr: Option<IpAddress>) -> Vec<u32> {
    s.ifaces
        .iter()
        .filter(|i| i.is_up())
        .filter(|i| match addr {
            None => true,
            Some(a) => i.is_loopback() || i.addrs.iter().any(|x| x.0 == a),
        })
        .map(|i| i.index)
        .collect()
}

/// The stack's view of a TCP socket for poll(2) and wake-ups.
fn tcp_poll(s: &mut Stack, st: &SockState) -> (u16, u64) {
    match &st.kind {
        Kind::Unconnected => {
            let mut m = POLLOUT | POLLWRNORM | POLLHUP;
            if st.err.is_some() {
                m |= POLLERR | POLLIN | POLLRDNORM | POLLRDHUP;
            }
            (m, 1)
        }
        Kind::Connecting { iface, handle } => {
            let t = tcp_sock(s, *iface, *handle);
            (0, 2 | ((t.state() as u64) << 8))
        }
        Kind::Connected { iface, handle } => {
            let t = tcp_sock(s, *iface, *handle);
            let mut m = 0;
            if st.dead.is_some() {
                m |= POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM | POLLHUP | POLLRDHUP;
                if st.err.is_some() {
                    m |= POLLERR;
                }
            } else {
                if t.can_recv() || !t.may_recv() || st.shut_rd {
                    m |= POLLIN | POLLRDNORM;
                }
                if !t.may_recv() {
                    m |= POLLRDHUP;
                }
                if st.shut_wr
                    || (t.may_send() && t.send_queue() < t.send_capacity())
                    || !t.is_open()
                {
                    m |= POLLOUT | POLLWRNORM;
                }
                if (st.shut_wr || !t.may_send()) && !t.may_recv() {
                    m |= POLLHUP;
                }
            }
            let sig = 3
                | ((t.state() as u64) << 8)
                | ((t.recv_queue() as u64) << 16)
                | ((t.send_queue() as u64) << 40);
            (m, sig)
        }
        Kind::Listening { handles, .. } => {
            let mut ready = 0u64;
            for &(i, h) in handles {
                let t = tcp_sock(s, i, h);
                if !matches!(t.state(), tcp::State::Listen | tcp::State::SynReceived) {
                    ready += 1;
                }
            }
            let m = if ready > 0 { POLLIN | POLLRDNORM } else { 0 };
            (m, 4 | (ready << 8) | ((handles.len() as u64) << 32))
        }
        Kind::Udp { .. } => (0, 0),
    }
}

fn udp_poll(s: &mut Stack, st: &SockState) -> (u16, u64) {
    let Kind::Udp { handles, .. } = &st.kind else {
        return (0, 0);
    };
    let mut m = 0;
    let (mut rq, mut sq) = (0u64, 0u64);
    let mut can_send = handles.is_empty();
    for &(i, h) in handles {
        let u = udp_sock(s, i, h);
        if u.can_recv() {
            m |= POLLIN | POLLRDNORM;
        }
        if u.can_send() {
            can_send = true;
        }
        rq += u.recv_queue() as u64;
        sq += u.send_queue() as u64;
    }
    if can_send {
        m |= POLLOUT | POLLWRNORM;
    }
    if st.err.is_some() {
        m |= POLLERR;
    }
    (m, 5 | (rq << 8) | (sq << 36) | ((m as u64) << 56))
}

fn poll_state(s: &mut Stack, st: &SockState) -> (u16, u64) {
    if st.tcp {
        tcp_poll(s, st)
    } else {
        udp_poll(s, st)
    }
}

/// After a poll: moves TCP sockets through their transitions (connect
/// done or refused, reset), refills listeners, reaps finished orphans,
/// and returns the sockets whose readiness changed.
pub(crate) fn collect_wakeups(s: &mut Stack) -> Vec<Wake> {
    let now_ms = iface::now().total_millis();
    let mut wake = Vec::new();
    // The table is set aside while its sockets are visited: nothing below
    // looks sockets up (they only reach smoltcp's sockets and the orphans).
    let mut socks = core::mem::take(&mut s.inet.socks);
    for st in socks.values_mut().flatten() {
        transition(s, st, now_ms);
        let (_, sig) = poll_state(s, st);
        if sig != st.sig {
            st.sig = sig;
            if let Some(inner) = st.inner.upgrade() {
                wake.push(Wake(inner));
            }
        }
    }
    s.inet.socks = socks;
    // Orphans leave once smoltcp has closed them, or as they enter
    // TIME-WAIT: smoltcp would hold the connection's buffers for its 10 s
    // there (a late duplicate FIN is answered with a reset instead).
    let orphans = core::mem::take(&mut s.inet.orphans);
    for o in orphans {
        if matches!(
            tcp_sock(s, o.iface, o.handle).state(),
            tcp::State::Closed | tcp::State::TimeWait
        ) {
            remove_handle(s, o.iface, o.handle);
        } else {
            s.inet.orphans.push(o);
        }
    }
    wake
}

fn transition(s: &mut Stack, st: &mut SockState, now_ms: i64) {
    match st.kind {
        Kind::Connecting { iface, handle } => {
            let t = tcp_sock(s, iface, handle);
            match t.state() {
                tcp::State::SynSent | tcp::State::SynReceived => {}
                tcp::State::Closed => {
                    let timed_out = now_ms - st.connect_started_ms >= CONNECT_TIMEOUT_MS as i64;
                    st.err = Some(if timed_out {
                        Errno::ETIMEDOUT
                    } else {
                        Errno::ECONNREFUSED
                    });
                    remove_handle(s, iface, handle);
                    st.kind = Kind::Unconnected;
                }
                _ => {
                    let o = st.opts;
                    apply_tcp_opts(tcp_sock(s, iface, handle), &o);
                    st.kind = Kind::Connected { iface, handle };
                }
            }
        }
        Kind::Connected { iface, handle } => {
            let t = tcp_sock(s, iface, handle);
            // Closed without our FIN having gone through the exchange:
            // the peer reset it or it timed out.
            if st.dead.is_none() && t.state() == tcp::State::Closed && !st.shut_wr {
                let e = if st.opts.keepalive {
                    Errno::ETIMEDOUT
                } else {
                    Errno::ECONNRESET
                };
                st.dead = Some(e);
                st.err = Some(e);
            }
        }
        Kind::Listening { .. } => refill(s, st),
        _ => {}
    }
}

/// Keeps LISTEN_SPARES smoltcp sockets listening on each interface of a
/// listener, while its accept queue has room; drops connections of the
/// wrong family (an AF_INET listener and a v6 peer, or IPV6_V6ONLY and a
/// v4 one) with a reset.
fn refill(s: &mut Stack, st: &mut SockState) {
    let Some((addr, port)) = st.bound else { return };
    let Kind::Listening { backlog, handles } = &mut st.kind else {
        return;
    };
    // Runs after every poll: no allocation unless a connection came or
    // went (handles are dropped in place, in order, for accept's FIFO).
    let mut queued = 0;
    let mut k = 0;
    while k < handles.len() {
        let (i, h) = handles[k];
        let t = tcp_sock(s, i, h);
        match t.state() {
            tcp::State::Listen | tcp::State::SynReceived => {}
            tcp::State::Closed => {
                remove_handle(s, i, h);
                handles.remove(k);
                continue;
            }
            _ => {
                let v4 = matches!(
                    t.remote_endpoint(),
                    Some(IpEndpoint {
                        addr: IpAddress::Ipv4(_),
                        ..
                    })
                );
                let ok = if st.v6 { !(v4 && st.v6only) } else { v4 };
                if !ok {
                    t.abort();
                    s.inet.orphans.push(Orphan {
                        iface: i,
                        handle: h,
                        port,
                    });
                    handles.remove(k);
                    continue;
                }
                queued += 1;
            }
        }
        k += 1;
    }
    if queued >= *backlog {
        return;
    }
    let ep = IpListenEndpoint { addr, port };
    let want = LISTEN_SPARES.min(*backlog);
    for n in 0..s.ifaces.len() {
        let ifc = &s.ifaces[n];
        let serves = ifc.is_up()
            && match addr {
                None => true,
                Some(a) => ifc.is_loopback() || ifc.addrs.iter().any(|x| x.0 == a),
            };
        if !serves {
            continue;
        }
        let i = ifc.index;
        let have = handles
            .iter()
            .filter(|&&(hi, h)| hi == i && tcp_sock(s, hi, h).state() == tcp::State::Listen)
            .count();
        for _ in have..want {
            let mut t = new_tcp(&mut s.inet, st.rcvbuf, st.sndbuf, &st.opts);
            if t.listen(ep).is_err() {
                break;
            }
            let Ok(ifc) = s.iface_mut(i) else { break };
            let h = ifc.sockets.add(t);
            handles.push((i, h));
        }
    }
}

/// Linux's TCP state numbers (/proc/net/tcp).
fn linux_state(t: tcp::State) -> u8 {
    match t {
        tcp::State::Established => 1,
        tcp::State::SynSent => 2,
        tcp::State::SynReceived => 3,
        tcp::State::FinWait1 => 4,
        tcp::State::FinWait2 => 5,
        tcp::State::TimeWait => 6,
        tcp::State::Closed => 7,
        tcp::State::CloseWait => 8,
        tcp::State::LastAck => 9,
        tcp::State::Listen => 10,
        tcp::State::Closing => 11,
    }
}

/// One socket for /proc/net/{tcp,udp,tcp6,udp6}.
#[derive(Clone, Debug)]
pub struct InetSockInfo {
    /// "tcp", "udp", "tcp6" or "udp6".
    pub proto: &'static str,
    /// Local and remote address and port (unspecified when none).
    pub local: (IpAddress, u16),
    pub remote: (IpAddress, u16),
    /// Linux's state number (TCP_ESTABLISHED = 1 ... TCP_LISTEN = 10;
    /// UDP: 7 unconnected, 1 connected).
    pub state: u8,
    pub tx_queue: usize,
    pub rx_queue: usize,
    pub uid: u32,
    /// An id unique among inet sockets (not the socket file's inode).
    pub inode: u64,
}

/// Every inet socket, for /proc/net.
pub fn sockets() -> Vec<InetSockInfo> {
    with_stack(|s| {
        let ids: Vec<u64> = s.inet.socks.keys().copied().collect();
        let mut out = Vec::new();
        for id in ids {
            let Some(st) = s.inet.socks.get_mut(&id).and_then(Option::take) else {
                continue;
            };
            let unspec = if st.v6 {
                IpAddress::Ipv6(Ipv6Address::UNSPECIFIED)
            } else {
                unspecified_v4()
            };
            let (baddr, bport) = st.bound.unwrap_or((None, 0));
            let mut info = InetSockInfo {
                proto: match (st.tcp, st.v6) {
                    (true, false) => "tcp",
                    (true, true) => "tcp6",
                    (false, false) => "udp",
                    (false, true) => "udp6",
                },
                local: (baddr.or(st.conn_local).unwrap_or(unspec), bport),
                remote: (unspec, 0),
                state: 7,
                tx_queue: 0,
                rx_queue: 0,
                uid: st.uid,
                inode: id,
            };
            match &st.kind {
                Kind::Connecting { iface, handle } | Kind::Connected { iface, handle } => {
                    let t = tcp_sock(s, *iface, *handle);
                    if let Some(l) = t.local_endpoint() {
                        info.local = (l.addr, l.port);
                    }
                    if let Some(r) = t.remote_endpoint() {
                        info.remote = (r.addr, r.port);
                    }
                    info.state = linux_state(t.state());
                    info.tx_queue = t.send_queue();
                    info.rx_queue = t.recv_queue();
                }
                Kind::Listening { .. } => info.state = 10,
                Kind::Udp { handles, peer } => {
                    if let Some(p) = peer {
                        info.remote = *p;
                        info.state = 1;
                    }
                    for &(i, h) in handles {
                        let u = udp_sock(s, i, h);
                        info.tx_queue += u.send_queue();
                        info.rx_queue += u.recv_queue();
                    }
                }
                Kind::Unconnected => {}
            }
            s.inet.socks.insert(id, Some(st));
            out.push(info);
        }
        out
    })
}

/// socket(AF_INET or AF_INET6, ...).
pub fn create(
    family: i32,
    sock_type: i32,
    protocol: i32,
    caller: &dyn Caller,
) -> Result<Arc<dyn Socket>> {
    let tcp = match (sock_type, protocol) {
        (SOCK_STREAM, 0 | IPPROTO_TCP) => true,
        (SOCK_DGRAM, 0 | IPPROTO_UDP) => false,
        (SOCK_STREAM | SOCK_DGRAM, _) => return Err(err(Errno::EPROTONOSUPPORT)),
        _ => return Err(err(Errno::ESOCKTNOSUPPORT)),
    };
    Ok(Arc::new(InetSocket::new(family, tcp, caller.ucred().1)))
}

/// Where socket `id`'s state is kept in the table.
fn slot(s: &mut Stack, id: u64) -> &mut Option<Box<SockState>> {
    s.inet
        .socks
        .get_mut(&id)
        .expect("an open inet socket is in the table")
}

impl InetSocket {
    fn new(family: i32, tcp: bool, uid: u32) -> InetSocket {
        Self::register(family, tcp, uid, super::socket::Opts::DEFAULT, |_| {})
    }

    /// A new socket in the table, with SOL_SOCKET options `opts`; `f`
    /// adjusts its state before it is inserted.
    fn register(
        family: i32,
        tcp: bool,
        uid: u32,
        opts: super::socket::Opts,
        f: impl FnOnce(&mut SockState),
    ) -> InetSocket {
        let id = with_stack(|s| {
            s.inet.next_id += 1;
            s.inet.next_id
        });
        let inner = Arc::new(Inner {
            id,
            family,
            tcp,
            readiness: Readiness::new(),
            opts: SockOpts::new(),
        });
        inner.opts.update(|x| *x = opts);
        let mut st = SockState {
            inner: Arc::downgrade(&inner),
            tcp,
            v6: family == AF_INET6,
            v6only: false,
            bound: None,
            conn_local: None,
            reuseaddr: opts.reuseaddr,
            reuseport: opts.reuseport,
            kind: if tcp {
                Kind::Unconnected
            } else {
                Kind::Udp {
                    handles: Vec::new(),
                    peer: None,
                }
            },
            err: None,
            dead: None,
            shut_rd: false,
            shut_wr: false,
            opts: TcpOpts::default(),
            rcvbuf: (opts.rcvbuf / 2).clamp(TCP_BUF_MIN, TCP_BUF_MAX),
            sndbuf: (opts.sndbuf / 2).clamp(TCP_BUF_MIN, TCP_BUF_MAX),
            connect_started_ms: 0,
            sig: u64::MAX,
            uid,
        };
        f(&mut st);
        let st = Some(Box::new(st));
        with_stack(|s| {
            s.inet.socks.insert(id, st);
        });
        InetSocket { inner }
    }

    fn id(&self) -> u64 {
        self.inner.id
    }

    /// Runs `f` on this socket's state and the stack.
    fn with<R>(&self, f: impl FnOnce(&mut Stack, &mut SockState) -> R) -> R {
        with_stack(|s| {
            let id = self.id();
            let mut st = slot(s, id).take().expect("never re-entered");
            let r = f(s, &mut st);
            *slot(s, id) = Some(st);
            r
        })
    }

    /// Refreshes the SOL_SOCKET options the stack needs (taken before the
    /// stack lock: SockOpts has the lower lock level).
    fn sync_opts(&self) {
        let o = self.inner.opts.get();
        self.with(|_, st| {
            st.reuseaddr = o.reuseaddr;
            st.reuseport = o.reuseport;
            st.rcvbuf = (o.rcvbuf / 2).clamp(TCP_BUF_MIN, TCP_BUF_MAX);
            st.sndbuf = (o.sndbuf / 2).clamp(TCP_BUF_MIN, TCP_BUF_MAX);
            st.opts.keepalive = o.keepalive;
        });
    }

    /// A socket address of this socket's family as (address, port); the
    /// unspecified address as None. v4-mapped IPv6 addresses become IPv4.
    fn endpoint_of(&self, addr: &SockAddr, v6only: bool) -> Result<Ep> {
        match (self.inner.family, addr) {
            (AF_INET, SockAddr::Inet(a)) => {
                let ip = Ipv4Address::from_octets(a.addr);
                Ok((
                    (!ip.is_unspecified()).then_some(IpAddress::Ipv4(ip)),
                    a.port,
                ))
            }
            (AF_INET6, SockAddr::Inet6(a)) => {
                if let Some(v4) = unmap(&a.addr) {
                    if v6only {
                        return Err(err(Errno::EADDRNOTAVAIL));
                    }
                    return Ok((
                        (!v4.is_unspecified()).then_some(IpAddress::Ipv4(v4)),
                        a.port,
                    ));
                }
                let ip = Ipv6Address::from_octets(a.addr);
                Ok((
                    (!ip.is_unspecified()).then_some(IpAddress::Ipv6(ip)),
                    a.port,
                ))
            }
            (AF_INET6, SockAddr::Inet(_)) => Err(err(Errno::EINVAL)),
            _ => Err(err(Errno::EAFNOSUPPORT)),
        }
    }

    fn sockaddr(&self, addr: Option<IpAddress>, port: u16) -> SockAddr {
        sockaddr_for(self.inner.family, addr, port)
    }

    /// Sleeps until `check` answers, honouring the deadline (EAGAIN, or
    /// `timeout_errno`) and signals.
    fn wait<T>(
        &self,
        caller: &dyn Caller,
        deadline: u64,
        timeout_errno: Errno,
        mut check: impl FnMut(&mut Stack, &mut SockState) -> Option<Result<T>>,
    ) -> Result<T> {
        loop {
            let seen = self.inner.readiness.generation(POLLIN | POLLOUT);
            if let Some(r) = self.with(&mut check) {
                return r;
            }
            if deadline == 0 {
                return Err(err(timeout_errno));
            }
            let r = &self.inner.readiness;
            if !caller.wait(
                r.queue(),
                &mut || r.generation(POLLIN | POLLOUT) != seen,
                deadline,
            )? {
                // One last look after the deadline.
                if let Some(r) = self.with(&mut check) {
                    return r;
                }
                return Err(err(timeout_errno));
            }
        }
    }

    fn epipe(&self, flags: u32, caller: &dyn Caller) -> Error {
        if flags & MSG_NOSIGNAL == 0 {
            caller.raise(SIGPIPE);
        }
        err(Errno::EPIPE)
    }

    fn bind_locked(
        &self,
        s: &mut Stack,
        st: &mut SockState,
        ep: Ep,
        caller_may_low: bool,
    ) -> Result<()> {
        if st.bound.is_some() {
            return Err(err(Errno::EINVAL));
        }
        let (addr, mut port) = ep;
        if let Some(a) = addr
            && !s.is_local_addr(&a)
        {
            return Err(err(Errno::EADDRNOTAVAIL));
        }
        if port != 0 && port < 1024 && !caller_may_low {
            return Err(err(Errno::EACCES));
        }
        // The family coverage depends on the address being bound.
        st.bound = Some((addr, 0));
        if port == 0 {
            match s.inet.ephemeral(self.id(), st, addr) {
                Ok(p) => port = p,
                Err(e) => {
                    st.bound = None;
                    return Err(e);
                }
            }
        } else if s.inet.clashes(self.id(), st, (addr, port)) {
            st.bound = None;
            return Err(err(Errno::EADDRINUSE));
        }
        st.bound = Some((addr, port));
        if !st.tcp {
            let mut hs = Vec::new();
            for i in ifaces_for(s, addr) {
                let mut u = new_udp(st.rcvbuf * 2, st.sndbuf * 2);
                u.set_hop_limit(Some(st.opts.ttl.max(1)));
                if u.bind(IpListenEndpoint { addr, port }).is_err() {
                    continue;
                }
                if let Ok(ifc) = s.iface_mut(i) {
                    hs.push((i, ifc.sockets.add(u)));
                }
            }
            if let Kind::Udp { handles, .. } = &mut st.kind {
                *handles = hs;
            }
        }
        Ok(())
    }

    /// The smoltcp UDP socket to send through interface `iface`, made if
    /// the socket was bound before that interface came up.
    fn udp_handle(s: &mut Stack, st: &mut SockState, iface: u32) -> Option<SocketHandle> {
        let (addr, port) = st.bound?;
        let Kind::Udp { handles, .. } = &mut st.kind else {
            return None;
        };
        if let Some(&(_, h)) = handles.iter().find(|(i, _)| *i == iface) {
            return Some(h);
        }
        let mut u = new_udp(st.rcvbuf * 2, st.sndbuf * 2);
        u.bind(IpListenEndpoint { addr, port }).ok()?;
        let h = s.iface_mut(iface).ok()?.sockets.add(u);
        handles.push((iface, h));
        Some(h)
    }

    fn tcp_connect(&self, addr: &SockAddr, nonblocking: bool, caller: &dyn Caller) -> Result<()> {
        if matches!(addr, SockAddr::Unspec) {
            // AF_UNSPEC disconnects (tcp_disconnect): the connection is
            // aborted and the socket may connect again.
            self.with(|s, st| {
                if let Kind::Connecting { iface, handle } | Kind::Connected { iface, handle } =
                    st.kind
                {
                    tcp_sock(s, iface, handle).abort();
                    s.inet.orphans.push(Orphan {
                        iface,
                        handle,
                        port: st.bound.map_or(0, |b| b.1),
                    });
                    st.kind = Kind::Unconnected;
                    st.dead = None;
                    st.shut_rd = false;
                    st.shut_wr = false;
                }
            });
            poll_now();
            return Ok(());
        }
        let v6only = self.with(|_, st| st.v6only);
        let (raddr, rport) = self.endpoint_of(addr, v6only)?;
        self.sync_opts();
        let may_low = caller.capable(CAP_NET_BIND_SERVICE);
        let started = self.with(|s, st| -> Result<bool> {
            match st.kind {
                Kind::Connected { .. } if st.connect_started_ms != 0 => {
                    // The first connect after a non-blocking one completed
                    // reports the success.
                    st.connect_started_ms = 0;
                    return Ok(false);
                }
                Kind::Connected { .. } => return Err(err(Errno::EISCONN)),
                Kind::Listening { .. } => return Err(err(Errno::EISCONN)),
                Kind::Connecting { .. } => {
                    return if nonblocking {
                        Err(err(Errno::EALREADY))
                    } else {
                        Ok(false)
                    };
                }
                _ => {}
            }
            if let Some(e) = st.err.take() {
                // A failed non-blocking connect reports its error once.
                if st.connect_started_ms != 0 {
                    st.connect_started_ms = 0;
                    return Err(err(e));
                }
            }
            // Linux: connecting to the unspecified address reaches this host.
            let raddr = raddr.unwrap_or(match (self.inner.family, &addr) {
                (AF_INET6, SockAddr::Inet6(a)) if unmap(&a.addr).is_none() => {
                    IpAddress::Ipv6(Ipv6Address::LOCALHOST)
                }
                _ => IpAddress::Ipv4(Ipv4Address::new(127, 0, 0, 1)),
            });
            if rport == 0 {
                return Err(err(Errno::ECONNREFUSED));
            }
            let (iface, src) = s.route(&raddr)?;
            if st.bound.is_none() {
                self.bind_locked(s, st, (None, 0), may_low)?;
            }
            let (baddr, bport) = st.bound.unwrap_or((None, 0));
            let src = baddr.filter(|b| same_family(b, &raddr)).unwrap_or(src);
            let mut t = new_tcp(&mut s.inet, st.rcvbuf, st.sndbuf, &st.opts);
            t.set_timeout(Some(Duration::from_millis(CONNECT_TIMEOUT_MS)));
            let ifc = s.iface_mut(iface)?;
            t.connect(
                ifc.iface.context(),
                IpEndpoint::new(raddr, rport),
                IpListenEndpoint {
                    addr: Some(src),
                    port: bport,
                },
            )
            .map_err(|_| err(Errno::EADDRNOTAVAIL))?;
            let handle = ifc.sockets.add(t);
            st.kind = Kind::Connecting { iface, handle };
            st.err = None;
            st.dead = None;
            st.shut_rd = false;
            st.shut_wr = false;
            st.connect_started_ms = iface::now().total_millis().max(1);
            Ok(true)
        })?;
        poll_now();
        if started && nonblocking {
            // As on Linux, even over loopback: the result comes through
            // poll(2), SO_ERROR and the next connect(2).
            return Err(err(Errno::EINPROGRESS));
        }
        let deadline = self.inner.opts.deadline(true, nonblocking);
        self.wait(caller, deadline, Errno::EINPROGRESS, |_, st| {
            match st.kind {
                Kind::Connecting { .. } => None,
                Kind::Connected { .. } => {
                    st.connect_started_ms = 0;
                    Some(Ok(()))
                }
                _ => {
                    st.connect_started_ms = 0;
                    Some(Err(err(st.err.take().unwrap_or(Errno::ECONNABORTED))))
                }
            }
        })
    }

    fn udp_connect(&self, addr: &SockAddr, caller: &dyn Caller) -> Result<()> {
        if matches!(addr, SockAddr::Unspec) {
            self.with(|_, st| {
                if let Kind::Udp { peer, .. } = &mut st.kind {
                    *peer = None;
                }
                st.conn_local = None;
            });
            return Ok(());
        }
        let v6only = self.with(|_, st| st.v6only);
        let (raddr, rport) = self.endpoint_of(addr, v6only)?;
        self.sync_opts();
        let may_low = caller.capable(CAP_NET_BIND_SERVICE);
        self.with(|s, st| {
            let raddr = raddr.unwrap_or(match raddr {
                _ if matches!(addr, SockAddr::Inet6(a) if unmap(&a.addr).is_none()) => {
                    IpAddress::Ipv6(Ipv6Address::LOCALHOST)
                }
                _ => IpAddress::Ipv4(Ipv4Address::new(127, 0, 0, 1)),
            });
            let (_, src) = s.route(&raddr)?;
            if st.bound.is_none() {
                self.bind_locked(s, st, (None, 0), may_low)?;
            }
            st.conn_local = Some(st.bound.and_then(|b| b.0).unwrap_or(src));
            if let Kind::Udp { peer, .. } = &mut st.kind {
                *peer = Some((raddr, rport));
            }
            Ok(())
        })
    }

    fn tcp_send(
        &self,
        data: &dyn SendBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let total = data.len();
        let deadline = self.inner.opts.deadline(true, nonblocking);
        let mut sent = 0usize;
        let mut chunk = Chunk::default();
        loop {
            // Wait for room (or the connection).
            let room = self.wait(
                caller,
                if sent > 0 { 0 } else { deadline },
                Errno::EAGAIN,
                |s, st| match st.kind {
                    Kind::Connecting { .. } => None,
                    Kind::Connected { iface, handle } => {
                        if let Some(e) = st.dead {
                            st.dead = Some(Errno::EPIPE);
                            st.err = None;
                            return Some(Err(err(e)));
                        }
                        let t = tcp_sock(s, iface, handle);
                        if st.shut_wr || !t.may_send() {
                            return Some(Err(err(Errno::EPIPE)));
                        }
                        let room = t.send_capacity() - t.send_queue();
                        (room > 0).then_some(Ok(room))
                    }
                    _ => Some(Err(err(st
                        .err
                        .take()
                        .map_or(Errno::EPIPE, |_| Errno::EPIPE)))),
                },
            );
            let room = match room {
                Ok(r) => r,
                Err(e) if sent > 0 && e.errno() == Errno::EAGAIN => {
                    if nonblocking || deadline != u64::MAX {
                        return Ok(sent);
                    }
                    // Blocking: wait for room for the rest.
                    match self.wait(caller, deadline, Errno::EAGAIN, |s, st| match st.kind {
                        Kind::Connected { iface, handle } => {
                            let t = tcp_sock(s, iface, handle);
                            if st.dead.is_some() || st.shut_wr || !t.may_send() {
                                return Some(Ok(0));
                            }
                            let room = t.send_capacity() - t.send_queue();
                            (room > 0).then_some(Ok(room))
                        }
                        _ => Some(Ok(0)),
                    }) {
                        Ok(0) | Err(_) => return Ok(sent),
                        Ok(r) => r,
                    }
                }
                Err(e) if e.errno() == Errno::EPIPE => {
                    if sent > 0 {
                        return Ok(sent);
                    }
                    return Err(self.epipe(flags, caller));
                }
                Err(e) => {
                    if sent > 0 {
                        return Ok(sent);
                    }
                    return Err(e);
                }
            };
            if total == 0 {
                return Ok(0);
            }
            let n = room.min(total - sent);
            let done = match data.as_slice().and_then(|b| b.get(sent..sent + n)) {
                // Kernel bytes go to the stack as they are.
                Some(bytes) => self.with(|s, st| match st.kind {
                    Kind::Connected { iface, handle } => {
                        tcp_sock(s, iface, handle).send_slice(bytes).unwrap_or(0)
                    }
                    _ => 0,
                }),
                // The caller's bytes go straight into smoltcp's send ring,
                // copied under the stack lock with faults off; a piece
                // whose copy would fault goes through a chunk filled with
                // the lock let go (which resolves the fault).
                None => match self.send_direct(data, sent, n) {
                    Some(done) => done,
                    None => {
                        let c = chunk.get(n.min(CHUNK));
                        let have = match data.read_at(sent, c) {
                            Ok(()) => c.len(),
                            Err(e) if e.errno() == Errno::EFAULT => readable_prefix(data, sent, c),
                            Err(e) => return if sent > 0 { Ok(sent) } else { Err(e) },
                        };
                        if have == 0 {
                            // Nothing readable: the bytes before it count
                            // (Linux's tcp_sendmsg returns what it copied).
                            return if sent > 0 {
                                Ok(sent)
                            } else {
                                Err(err(Errno::EFAULT))
                            };
                        }
                        let bytes = &c[..have];
                        self.with(|s, st| match st.kind {
                            Kind::Connected { iface, handle } => {
                                tcp_sock(s, iface, handle).send_slice(bytes).unwrap_or(0)
                            }
                            _ => 0,
                        })
                    }
                },
            };
            poll_now();
            sent += done;
            if sent >= total {
                return Ok(sent);
            }
            if done == 0 && sent > 0 && nonblocking {
                return Ok(sent);
            }
            if caller.signal_pending() && sent > 0 {
                return Ok(sent);
            }
        }
    }

    /// Copies up to `n` bytes of `data` from `offset` straight into the
    /// connection's send ring (at most two pieces: the ring's free space
    /// may wrap), under the stack lock with faults off. The bytes queued;
    /// None if the first copy would have had to resolve a fault (nothing
    /// queued: the caller copies through a chunk instead).
    fn send_direct(&self, data: &dyn SendBuf, offset: usize, n: usize) -> Option<usize> {
        self.with(|s, st| {
            let Kind::Connected { iface, handle } = st.kind else {
                return Some(0);
            };
            let t = tcp_sock(s, iface, handle);
            let (done, faulted) = ring_copies(n, |done, faulted| {
                t.send(|ring| {
                    let k = ring.len().min(n - done);
                    ring_piece(k, faulted, data.read_at(offset + done, &mut ring[..k]))
                })
            });
            (done > 0 || !faulted).then_some(done)
        })
    }

    /// Moves up to `n` received bytes straight from the connection's
    /// receive ring to `data` at `offset` (at most two pieces: the ring
    /// may wrap), under the stack lock with faults off; only the bytes
    /// stored are taken from the ring. Returns the bytes moved and whether
    /// a copy stopped at a fault.
    fn recv_direct(
        t: &mut tcp::Socket<'static>,
        data: &mut dyn RecvBuf,
        offset: usize,
        n: usize,
    ) -> (usize, bool) {
        ring_copies(n, |done, faulted| {
            t.recv(|ring| {
                let k = ring.len().min(n - done);
                ring_piece(k, faulted, data.write_at(offset + done, &ring[..k]))
            })
        })
    }

    fn udp_send(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        let len = data.len();
        if len > UDP_MAX_PAYLOAD {
            return Err(err(Errno::EMSGSIZE));
        }
        let v6only = self.with(|_, st| st.v6only);
        let dst = match &meta.addr {
            Some(SockAddr::Unspec) | None => None,
            Some(a) => {
                let (addr, port) = self.endpoint_of(a, v6only)?;
                if port == 0 {
                    return Err(err(Errno::EINVAL));
                }
                let addr = addr.unwrap_or(match a {
                    SockAddr::Inet6(x) if unmap(&x.addr).is_none() => {
                        IpAddress::Ipv6(Ipv6Address::LOCALHOST)
                    }
                    _ => IpAddress::Ipv4(Ipv4Address::new(127, 0, 0, 1)),
                });
                Some((addr, port))
            }
        };
        let mut chunk = Chunk::default();
        let buf: &[u8] = match data.as_slice() {
            Some(b) => b,
            None => {
                let c = chunk.get(len);
                data.read_at(0, c)?;
                c
            }
        };
        self.sync_opts();
        let may_low = caller.capable(CAP_NET_BIND_SERVICE);
        let deadline = self.inner.opts.deadline(true, nonblocking);
        let r = self.wait(caller, deadline, Errno::EAGAIN, |s, st| {
            let peer = match &st.kind {
                Kind::Udp { peer, .. } => *peer,
                _ => None,
            };
            let Some((raddr, rport)) = dst.or(peer) else {
                return Some(Err(err(Errno::EDESTADDRREQ)));
            };
            if st.v6only && matches!(raddr, IpAddress::Ipv4(_)) {
                return Some(Err(err(Errno::ENETUNREACH)));
            }
            let (iface, src) = match s.route(&raddr) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            if st.bound.is_none()
                && let Err(e) = self.bind_locked(s, st, (None, 0), may_low)
            {
                return Some(Err(e));
            }
            let src = st
                .bound
                .and_then(|b| b.0)
                .filter(|b| same_family(b, &raddr))
                .unwrap_or(src);
            let Some(h) = Self::udp_handle(s, st, iface) else {
                return Some(Err(err(Errno::ENETUNREACH)));
            };
            let u = udp_sock(s, iface, h);
            let mut md = udp::UdpMetadata::from(IpEndpoint::new(raddr, rport));
            md.local_address = Some(src);
            match u.send_slice(buf, md) {
                Ok(()) => Some(Ok(len)),
                Err(udp::SendError::BufferFull) => None,
                Err(udp::SendError::Unaddressable) => Some(Err(err(Errno::EINVAL))),
            }
        });
        poll_now();
        r
    }

    fn tcp_recv(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        /// Direct copies retried after their fault was resolved, without
        /// progress, before the read gives up (a racing munmap).
        const MAX_STALLS: u32 = 4;
        let want = data.len();
        let peek = flags & MSG_PEEK != 0;
        let waitall = flags & MSG_WAITALL != 0 && !peek;
        let deadline = self.inner.opts.deadline(false, nonblocking);
        let mut got = 0usize;
        let mut chunk = Chunk::default();
        // At most this many bytes go in the next direct copy: after a
        // fault, the bytes the destination was found to take.
        let mut limit = usize::MAX;
        let mut stalls = 0;
        let done = |got: usize| RecvMeta {
            len: got,
            full_len: got,
            ..Default::default()
        };
        loop {
            let mut crowded = false;
            // Bytes copied into the chunk and left in the ring (MSG_PEEK,
            // or a direct copy that met a fault).
            let mut in_chunk = false;
            let r = self.wait(
                caller,
                if got > 0 && !waitall { 0 } else { deadline },
                Errno::EAGAIN,
                |s, st| match st.kind {
                    Kind::Connected { iface, handle } => {
                        if st.shut_rd {
                            return Some(Ok(0));
                        }
                        let t = tcp_sock(s, iface, handle);
                        if t.can_recv() {
                            // Only a read that frees a crowded buffer must
                            // tell the peer now (a window update); the
                            // delayed ACK covers the rest.
                            crowded = t.recv_queue() * 2 >= t.recv_capacity();
                            let n = (want - got).min(t.recv_queue()).min(limit);
                            if !peek {
                                let (k, faulted) = Self::recv_direct(t, data, got, n);
                                if k > 0 || !faulted {
                                    return Some(Ok(k));
                                }
                            }
                            let c = chunk.get(n.min(CHUNK));
                            in_chunk = true;
                            return Some(Ok(t.peek_slice(c).unwrap_or(0)));
                        }
                        if let Some(e) = st.dead {
                            // The reset is reported once; then end of stream.
                            if e != Errno::EPIPE {
                                st.dead = Some(Errno::EPIPE);
                                st.err = None;
                                return Some(Err(err(e)));
                            }
                            return Some(Ok(0));
                        }
                        if !t.may_recv() {
                            return Some(Ok(0));
                        }
                        if want == got {
                            return Some(Ok(0));
                        }
                        None
                    }
                    Kind::Connecting { .. } => None,
                    _ => Some(Err(err(Errno::ENOTCONN))),
                },
            );
            match r {
                Ok(0) => break,
                Ok(n) if in_chunk => {
                    // Copied with the lock let go, so the destination's
                    // faults are resolved (or found unresolvable).
                    let c = chunk.get(n);
                    let w = match data.write_at(got, c) {
                        Ok(()) => n,
                        Err(e) if e.errno() == Errno::EFAULT => writable_prefix(data, got, c),
                        Err(e) => return if got > 0 { Ok(done(got)) } else { Err(e) },
                    };
                    if peek && w > 0 {
                        got += w;
                        break;
                    }
                    stalls += 1;
                    if w == 0 || stalls > MAX_STALLS {
                        // Nothing more can be stored: what was read counts,
                        // the rest stays queued.
                        if got > 0 {
                            break;
                        }
                        return Err(err(Errno::EFAULT));
                    }
                    // Take the bytes from the ring again, straight into the
                    // destination, now that it can hold `w` of them.
                    limit = w;
                }
                Ok(n) => {
                    got += n;
                    let limited = limit != usize::MAX;
                    limit = usize::MAX;
                    if !peek && crowded {
                        // The window opened: let the peer know.
                        poll_now();
                    }
                    // One look takes all the ring holds (up to the count):
                    // a read without MSG_WAITALL is done.
                    if got >= want || !waitall && !limited {
                        break;
                    }
                    if caller.signal_pending() {
                        break;
                    }
                }
                Err(e)
                    if got > 0
                        && matches!(
                            e.errno(),
                            Errno::EAGAIN | Errno::ERESTARTSYS | Errno::EINTR
                        ) =>
                {
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(done(got))
    }

    fn udp_recv(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        let peek = flags & MSG_PEEK != 0;
        let deadline = self.inner.opts.deadline(false, nonblocking);
        let cap = data.len();
        let family = self.inner.family;
        let mut chunk = Chunk::default();
        let mut in_chunk = false;
        let (n, full, from) = self.wait(caller, deadline, Errno::EAGAIN, |s, st| {
            let Kind::Udp { handles, peer } = &st.kind else {
                return Some(Err(err(Errno::ENOTCONN)));
            };
            let peer = *peer;
            for &(i, h) in handles.iter() {
                let u = udp_sock(s, i, h);
                while let Ok((bytes, md)) = u.peek() {
                    let md = *md;
                    let from = (md.endpoint.addr, md.endpoint.port);
                    // A connected socket drops datagrams from others; an
                    // AF_INET socket ignores v6, IPV6_V6ONLY ignores v4.
                    let wrong_family = match md.endpoint.addr {
                        IpAddress::Ipv4(_) => family == AF_INET6 && st.v6only,
                        IpAddress::Ipv6(_) => family == AF_INET,
                    };
                    if wrong_family || peer.is_some_and(|p| p != from) {
                        let _ = u.recv();
                        continue;
                    }
                    let full = bytes.len();
                    let n = full.min(cap);
                    // Straight to the caller under the lock with faults
                    // off; a copy that would fault goes through the chunk,
                    // copied out with the lock let go.
                    let direct = {
                        let _nofault = NoFaults::enter();
                        data.write_at(0, &bytes[..n]).is_ok()
                    };
                    if !direct {
                        chunk.get(n).copy_from_slice(&bytes[..n]);
                        in_chunk = true;
                    }
                    if !peek {
                        let _ = u.recv();
                    }
                    return Some(Ok((n, full, from)));
                }
            }
            None
        })?;
        if in_chunk {
            // The datagram is consumed either way (Linux's udp_recvmsg
            // drops it on EFAULT too).
            data.write_at(0, chunk.get(n))?;
        }
        let mut meta = RecvMeta {
            len: n,
            full_len: full,
            addr: Some(sockaddr_for(family, Some(from.0), from.1)),
            ..Default::default()
        };
        if full > n {
            meta.flags |= MSG_TRUNC;
        }
        Ok(meta)
    }

    fn close(&self) {
        let linger0 = self.inner.opts.get().linger == Some(0);
        let id = self.id();
        with_stack(|s| {
            let Some(st) = s.inet.socks.remove(&id).flatten() else {
                return;
            };
            let port = st.bound.map_or(0, |b| b.1);
            match st.kind {
                Kind::Connecting { iface, handle } => {
                    tcp_sock(s, iface, handle).abort();
                    s.inet.orphans.push(Orphan {
                        iface,
                        handle,
                        port,
                    });
                }
                Kind::Connected { iface, handle } => {
                    let t = tcp_sock(s, iface, handle);
                    // Unread data or SO_LINGER 0: reset (RFC 2525 2.17).
                    if t.recv_queue() > 0 || linger0 {
                        t.abort();
                    } else {
                        t.close();
                    }
                    s.inet.orphans.push(Orphan {
                        iface,
                        handle,
                        port,
                    });
                }
                Kind::Listening { handles, .. } => {
                    for (i, h) in handles {
                        let t = tcp_sock(s, i, h);
                        if t.state() == tcp::State::Listen {
                            remove_handle(s, i, h);
                        } else {
                            t.abort();
                            s.inet.orphans.push(Orphan {
                                iface: i,
                                handle: h,
                                port,
                            });
                        }
                    }
                }
                Kind::Udp { handles, .. } => {
                    for (i, h) in handles {
                        remove_handle(s, i, h);
                    }
                }
                Kind::Unconnected => {}
            }
        });
        poll_now();
    }

    fn fionread(&self) -> usize {
        self.with(|s, st| match &st.kind {
            Kind::Connected { iface, handle } => tcp_sock(s, *iface, *handle).recv_queue(),
            Kind::Udp { handles, .. } => {
                // The size of the next datagram.
                for &(i, h) in handles {
                    if let Ok((b, _)) = udp_sock(s, i, h).peek() {
                        return b.len();
                    }
                }
                0
            }
            _ => 0,
        })
    }

    fn outq(&self) -> usize {
        self.with(|s, st| match &st.kind {
            Kind::Connected { iface, handle } => tcp_sock(s, *iface, *handle).send_queue(),
            Kind::Udp { handles, .. } => handles
                .iter()
                .map(|&(i, h)| udp_sock(s, i, h).send_queue())
                .sum(),
            _ => 0,
        })
    }
}

/// How many bytes of `data` from `offset` (at most `buf.len()`) can be
/// read, the faults resolved: a binary search, for the rare send whose
/// source runs into memory that cannot be read; they end up in `buf`.
fn readable_prefix(data: &dyn SendBuf, offset: usize, buf: &mut [u8]) -> usize {
    let (mut ok, mut bad) = (0, buf.len());
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if data.read_at(offset, &mut buf[..mid]).is_ok() {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    if ok > 0 && data.read_at(offset, &mut buf[..ok]).is_ok() {
        ok
    } else {
        0
    }
}

/// How many bytes of `bytes` `data` takes at `offset`, the faults
/// resolved (they are stored): [`readable_prefix`] for receives.
fn writable_prefix(data: &mut dyn RecvBuf, offset: usize, bytes: &[u8]) -> usize {
    let (mut ok, mut bad) = (0, bytes.len());
    while bad - ok > 1 {
        let mid = ok + (bad - ok) / 2;
        if data.write_at(offset, &bytes[..mid]).is_ok() {
            ok = mid;
        } else {
            bad = mid;
        }
    }
    if ok > 0 && data.write_at(offset, &bytes[..ok]).is_ok() {
        ok
    } else {
        0
    }
}

/// A `SockAddr` of `family` for an address and port (v4 addresses in an
/// AF_INET6 socket are v4-mapped).
fn sockaddr_for(family: i32, addr: Option<IpAddress>, port: u16) -> SockAddr {
    match (family, addr) {
        (AF_INET, Some(IpAddress::Ipv4(a))) => SockAddr::Inet(InetAddr {
            addr: a.octets(),
            port,
        }),
        (AF_INET, _) => SockAddr::Inet(InetAddr { addr: [0; 4], port }),
        (_, Some(IpAddress::Ipv4(a))) => SockAddr::Inet6(Inet6Addr {
            addr: mapped(a).octets(),
            port,
            flowinfo: 0,
            scope_id: 0,
        }),
        (_, Some(IpAddress::Ipv6(a))) => SockAddr::Inet6(Inet6Addr {
            addr: a.octets(),
            port,
            flowinfo: 0,
            scope_id: 0,
        }),
        (_, None) => SockAddr::Inet6(Inet6Addr {
            addr: [0; 16],
            port,
            flowinfo: 0,
            scope_id: 0,
        }),
    }
}

fn int_of(v: &[u8]) -> Result<i32> {
    let b = v.get(..4).ok_or(err(Errno::EINVAL))?;
    Ok(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn int_bytes(v: i32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

impl Drop for InetSocket {
    fn drop(&mut self) {
        self.close();
    }
}

impl Socket for InetSocket {
    fn family(&self) -> i32 {
        self.inner.family
    }

    fn sock_type(&self) -> i32 {
        if self.inner.tcp {
            SOCK_STREAM
        } else {
            SOCK_DGRAM
        }
    }

    fn protocol(&self) -> i32 {
        if self.inner.tcp {
            IPPROTO_TCP
        } else {
            IPPROTO_UDP
        }
    }

    fn bind(&self, addr: &SockAddr, caller: &dyn Caller) -> Result<()> {
        let v6only = self.with(|_, st| st.v6only);
        let ep = self.endpoint_of(addr, v6only)?;
        self.sync_opts();
        let may_low = caller.capable(CAP_NET_BIND_SERVICE);
        self.with(|s, st| self.bind_locked(s, st, ep, may_low))
    }

    fn connect(&self, addr: &SockAddr, nonblocking: bool, caller: &dyn Caller) -> Result<()> {
        if self.inner.tcp {
            self.tcp_connect(addr, nonblocking, caller)
        } else {
            self.udp_connect(addr, caller)
        }
    }

    fn listen(&self, backlog: i32) -> Result<()> {
        if !self.inner.tcp {
            return Err(err(Errno::EOPNOTSUPP));
        }
        self.sync_opts();
        let backlog = (backlog.max(0) as usize).clamp(ACCEPT_QUEUE_FLOOR, SOMAXCONN);
        self.with(|s, st| {
            match &mut st.kind {
                Kind::Listening { backlog: b, .. } => {
                    *b = backlog;
                    return Ok(());
                }
                Kind::Unconnected => {}
                _ => return Err(err(Errno::EINVAL)),
            }
            if st.bound.is_none() {
                self.bind_locked(s, st, (None, 0), true)?;
            } else if let Some((a, p)) = st.bound {
                // Another listener may have taken the port since bind.
                st.kind = Kind::Listening {
                    backlog,
                    handles: Vec::new(),
                };
                if s.inet.clashes(self.id(), st, (a, p)) {
                    st.kind = Kind::Unconnected;
                    return Err(err(Errno::EADDRINUSE));
                }
            }
            st.kind = Kind::Listening {
                backlog,
                handles: Vec::new(),
            };
            refill(s, st);
            Ok(())
        })?;
        poll_now();
        Ok(())
    }

    fn is_listening(&self) -> bool {
        self.with(|_, st| st.is_listening())
    }

    fn accept(
        &self,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<(Arc<dyn Socket>, SockAddr)> {
        if !self.inner.tcp {
            return Err(err(Errno::EOPNOTSUPP));
        }
        let deadline = self.inner.opts.deadline(false, nonblocking);
        let family = self.inner.family;
        let (iface, handle, remote, opts, v6only) =
            self.wait(caller, deadline, Errno::EAGAIN, |s, st| {
                let (v6only, opts) = (st.v6only, st.opts);
                let Kind::Listening { handles, .. } = &mut st.kind else {
                    return Some(Err(err(Errno::EINVAL)));
                };
                let pos = handles.iter().position(|&(i, h)| {
                    let t = tcp_sock(s, i, h);
                    !matches!(
                        t.state(),
                        tcp::State::Listen | tcp::State::SynReceived | tcp::State::Closed
                    )
                })?;
                let (i, h) = handles.remove(pos);
                let remote = tcp_sock(s, i, h).remote_endpoint();
                refill(s, st);
                Some(Ok((i, h, remote, opts, v6only)))
            })?;
        poll_now();
        let remote = remote
            .map(|r| (r.addr, r.port))
            .unwrap_or((unspecified_v4(), 0));
        let lopts = self.inner.opts.get();
        let sock = Self::register(family, true, caller.ucred().1, lopts, |st| {
            st.v6only = v6only;
            st.opts = opts;
            st.kind = Kind::Connected { iface, handle };
        });
        // The accepted socket's local address is the connection's.
        sock.with(|s, st| {
            let l = tcp_sock(s, iface, handle).local_endpoint();
            st.bound = l.map(|l| (Some(l.addr), l.port));
        });
        let addr = sockaddr_for(family, Some(remote.0), remote.1);
        Ok((Arc::new(sock), addr))
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
        let nonblocking = nonblocking || flags & MSG_DONTWAIT != 0;
        if self.inner.tcp {
            // sendto(2) with an address on a connected stream ignores it
            // (Linux returns EISCONN only when not connected... it ignores).
            self.tcp_send(data, flags, nonblocking, caller)
        } else {
            self.udp_send(data, meta, nonblocking, caller)
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
            return Err(err(Errno::EINVAL));
        }
        if flags & MSG_ERRQUEUE != 0 {
            return Err(err(Errno::EAGAIN));
        }
        let nonblocking = nonblocking || flags & MSG_DONTWAIT != 0;
        if self.inner.tcp {
            self.tcp_recv(data, flags, nonblocking, caller)
        } else {
            self.udp_recv(data, flags, nonblocking, caller)
        }
    }

    fn shutdown(&self, how: u32) -> Result<()> {
        if how > SHUT_RDWR {
            return Err(err(Errno::EINVAL));
        }
        let rd = how == SHUT_RD || how == SHUT_RDWR;
        let wr = how == SHUT_WR || how == SHUT_RDWR;
        self.with(|s, st| match st.kind {
            Kind::Connected { iface, handle } => {
                if rd {
                    st.shut_rd = true;
                }
                if wr && !st.shut_wr {
                    st.shut_wr = true;
                    tcp_sock(s, iface, handle).close();
                }
                Ok(())
            }
            Kind::Listening { .. } if rd => {
                // Linux: shutting a listener down stops it.
                Ok(())
            }
            Kind::Udp { peer: Some(_), .. } => {
                st.shut_rd |= rd;
                st.shut_wr |= wr;
                Ok(())
            }
            _ => Err(err(Errno::ENOTCONN)),
        })?;
        poll_now();
        self.inner.readiness.notify(POLLIN | POLLOUT | POLLHUP);
        Ok(())
    }

    fn local_addr(&self) -> Result<SockAddr> {
        let (addr, port) = self.with(|s, st| match st.kind {
            Kind::Connecting { iface, handle } | Kind::Connected { iface, handle } => {
                match tcp_sock(s, iface, handle).local_endpoint() {
                    Some(l) => (Some(l.addr), l.port),
                    None => st.bound.unwrap_or((None, 0)),
                }
            }
            _ => {
                let (a, p) = st.bound.unwrap_or((None, 0));
                (a.or(st.conn_local), p)
            }
        });
        Ok(self.sockaddr(addr, port))
    }

    fn peer_addr(&self) -> Result<SockAddr> {
        let peer = self.with(|s, st| match &st.kind {
            Kind::Connected { iface, handle } => {
                if st.dead.is_some() {
                    return None;
                }
                tcp_sock(s, *iface, *handle)
                    .remote_endpoint()
                    .map(|r| (r.addr, r.port))
            }
            Kind::Udp { peer, .. } => *peer,
            _ => None,
        });
        let (a, p) = peer.ok_or(err(Errno::ENOTCONN))?;
        Ok(self.sockaddr(Some(a), p))
    }

    fn setsockopt(&self, level: i32, name: i32, value: &[u8], caller: &dyn Caller) -> Result<()> {
        match level {
            SOL_SOCKET => {
                if name == SO_ZEROCOPY {
                    return Err(err(Errno::EOPNOTSUPP));
                }
                if name == SO_BINDTODEVICE {
                    return Ok(());
                }
                self.inner.opts.set(name, value, caller)?;
                self.sync_opts();
                if name == SO_KEEPALIVE {
                    self.with(|s, st| {
                        if let Kind::Connected { iface, handle } = st.kind {
                            let o = st.opts;
                            apply_tcp_opts(tcp_sock(s, iface, handle), &o);
                        }
                    });
                }
                Ok(())
            }
            SOL_TCP if self.inner.tcp => {
                let v = int_of(value)?;
                self.with(|s, st| {
                    match name {
                        TCP_NODELAY => st.opts.nodelay = v != 0,
                        TCP_KEEPIDLE | TCP_KEEPINTVL => {
                            if !(1..=32767).contains(&v) {
                                return Err(err(Errno::EINVAL));
                            }
                            if name == TCP_KEEPIDLE {
                                st.opts.keepidle = v as u32;
                            } else {
                                st.opts.keepintvl = v as u32;
                            }
                        }
                        TCP_KEEPCNT => {
                            if !(1..=127).contains(&v) {
                                return Err(err(Errno::EINVAL));
                            }
                            st.opts.keepcnt = v as u32;
                        }
                        TCP_MAXSEG => {
                            if v != 0 && !(88..=32767).contains(&v) {
                                return Err(err(Errno::EINVAL));
                            }
                            st.opts.maxseg = v as u32;
                        }
                        // Accepted and without effect here.
                        TCP_CORK | TCP_QUICKACK | TCP_DEFER_ACCEPT | TCP_SYNCNT | TCP_LINGER2
                        | TCP_USER_TIMEOUT => {}
                        _ => return Err(err(Errno::ENOPROTOOPT)),
                    }
                    if let Kind::Connected { iface, handle } = st.kind {
                        let o = st.opts;
                        apply_tcp_opts(tcp_sock(s, iface, handle), &o);
                    }
                    Ok(())
                })
            }
            SOL_IP => {
                let v = int_of(value)
                    .or_else(|_| value.first().map(|&b| b as i32).ok_or(err(Errno::EINVAL)))?;
                self.with(|_, st| match name {
                    IP_TTL => {
                        if v == -1 {
                            st.opts.ttl = 64;
                        } else if !(1..=255).contains(&v) {
                            return Err(err(Errno::EINVAL));
                        } else {
                            st.opts.ttl = v as u8;
                        }
                        Ok(())
                    }
                    IP_TOS => {
                        st.opts.tos = v as u8;
                        Ok(())
                    }
                    IP_RECVERR => Ok(()),
                    _ => Err(err(Errno::ENOPROTOOPT)),
                })
            }
            SOL_IPV6 if self.inner.family == AF_INET6 => {
                let v = int_of(value)?;
                self.with(|_, st| match name {
                    IPV6_V6ONLY => {
                        if st.bound.is_some() {
                            return Err(err(Errno::EINVAL));
                        }
                        st.v6only = v != 0;
                        Ok(())
                    }
                    IPV6_UNICAST_HOPS => {
                        if !(-1..=255).contains(&v) {
                            return Err(err(Errno::EINVAL));
                        }
                        st.opts.ttl = if v == -1 { 64 } else { v as u8 };
                        Ok(())
                    }
                    _ => Err(err(Errno::ENOPROTOOPT)),
                })
            }
            SOL_UDP if !self.inner.tcp => Err(err(Errno::ENOPROTOOPT)),
            _ => Err(err(Errno::ENOPROTOOPT)),
        }
    }

    fn getsockopt(&self, level: i32, name: i32, _caller: &dyn Caller) -> Result<Vec<u8>> {
        match level {
            SOL_SOCKET => match name {
                SO_ERROR => {
                    let e = self.with(|_, st| st.err.take());
                    match e {
                        Some(e) => Ok(int_bytes(e as i32)),
                        None => self.inner.opts.get_opt(name),
                    }
                }
                SO_ZEROCOPY => Ok(int_bytes(0)),
                _ => self.inner.opts.get_opt(name),
            },
            SOL_TCP if self.inner.tcp => {
                let (o, state, mss) = self.with(|s, st| {
                    let (state, mss) = match st.kind {
                        Kind::Connected { iface, handle } | Kind::Connecting { iface, handle } => {
                            let mtu = s.iface(iface).map_or(1500, |i| i.mtu());
                            (
                                linux_state(tcp_sock(s, iface, handle).state()),
                                mtu.saturating_sub(40),
                            )
                        }
                        Kind::Listening { .. } => (10, 536),
                        _ => (7, 536),
                    };
                    (st.opts, state, mss)
                });
                Ok(match name {
                    TCP_NODELAY => int_bytes(o.nodelay as i32),
                    TCP_KEEPIDLE => int_bytes(o.keepidle as i32),
                    TCP_KEEPINTVL => int_bytes(o.keepintvl as i32),
                    TCP_KEEPCNT => int_bytes(o.keepcnt as i32),
                    TCP_MAXSEG => int_bytes(if o.maxseg != 0 {
                        o.maxseg as i32
                    } else {
                        mss.min(65495) as i32
                    }),
                    TCP_CORK | TCP_QUICKACK | TCP_DEFER_ACCEPT | TCP_LINGER2 | TCP_USER_TIMEOUT => {
                        int_bytes(0)
                    }
                    TCP_SYNCNT => int_bytes(6),
                    TCP_INFO => {
                        // struct tcp_info: only tcpi_state is filled in.
                        let mut v = vec![0u8; 104];
                        v[0] = state;
                        v
                    }
                    TCP_CONGESTION => b"reno\0".to_vec(),
                    _ => return Err(err(Errno::ENOPROTOOPT)),
                })
            }
            SOL_IP => {
                let o = self.with(|_, st| st.opts);
                match name {
                    IP_TTL => Ok(int_bytes(o.ttl as i32)),
                    IP_TOS => Ok(int_bytes(o.tos as i32)),
                    _ => Err(err(Errno::ENOPROTOOPT)),
                }
            }
            SOL_IPV6 if self.inner.family == AF_INET6 => {
                let (v6only, ttl) = self.with(|_, st| (st.v6only, st.opts.ttl));
                match name {
                    IPV6_V6ONLY => Ok(int_bytes(v6only as i32)),
                    IPV6_UNICAST_HOPS => Ok(int_bytes(ttl as i32)),
                    _ => Err(err(Errno::ENOPROTOOPT)),
                }
            }
            _ => Err(err(Errno::ENOPROTOOPT)),
        }
    }

    fn poll(&self) -> u16 {
        self.with(|s, st| poll_state(s, st).0)
    }

    fn readiness(&self) -> &Readiness {
        &self.inner.readiness
    }

    fn ioctl(&self, cmd: u32, arg: u64, caller: &dyn Caller) -> Result<isize> {
        let v = match cmd {
            FIONREAD => self.fionread(),
            SIOCOUTQ | SIOCOUTQNSD => self.outq(),
            _ => return Err(err(Errno::ENOTTY)),
        };
        caller.write_bytes(arg, &(v.min(i32::MAX as usize) as i32).to_ne_bytes())?;
        Ok(0)
    }
}

/// Runs `copy(done, faulted)`, one copy between user memory and a
/// smoltcp ring (`send` or `recv` with [`ring_piece`] as its closure),
/// with faults off until `n` bytes have moved, a copy moves nothing (the
/// ring is full or empty) or one faults. Returns the bytes moved and
/// whether a copy stopped at a fault.
fn ring_copies<E>(
    n: usize,
    mut copy: impl FnMut(usize, &mut bool) -> core::result::Result<usize, E>,
) -> (usize, bool) {
    let _nofault = NoFaults::enter();
    let mut done = 0;
    let mut faulted = false;
    while done < n {
        match copy(done, &mut faulted) {
            Ok(k) if k > 0 => done += k,
            _ => break,
        }
    }
    (done, faulted)
}

/// What a ring closure returns for a copy of `k` bytes that gave `copied`:
/// all `k` taken from (or given to) the ring, or none and `faulted` set.
fn ring_piece<E>(
    k: usize,
    faulted: &mut bool,
    copied: core::result::Result<(), E>,
) -> (usize, usize) {
    match copied {
        Ok(()) => (k, k),
        Err(_) => {
            *faulted = true;
            (0, 0)
        }
    }
}
