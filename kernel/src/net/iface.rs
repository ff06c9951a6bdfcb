//! Network interfaces and the IP stack that runs over them.
//!
//! Every interface (`lo`, then `eth0`, `eth1`... as NIC drivers register)
//! is one smoltcp [`Interface`] with its own device and its own socket set:
//! smoltcp sends a socket's packets through whichever interface polls it,
//! so a socket lives in the set of the interface its route goes through
//! (listeners and wildcard UDP sockets have one smoltcp socket per
//! interface). Everything is behind one lock, [`level::NET_STACK`]; the
//! inet sockets keep their own state in the same lock (see inet/).
//!
//! The stack is polled inline by the socket calls that change it (a send,
//! a connect...) and otherwise by one kernel task that sleeps until a
//! device notifies it ([`kick`]) or smoltcp's next timer is due
//! (`poll_delay`): nothing polls while the stack is idle.
//!
//! `IpAddress` in this API is smoltcp's `wire::IpAddress`.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use frame::sync::{SpinLock, WaitQueue, level};
use smoltcp::iface::{Config, Interface, SocketSet};
use smoltcp::phy::{self, ChecksumCapabilities, DeviceCapabilities, Medium};
use smoltcp::time::{Duration, Instant};
pub use smoltcp::wire::IpAddress;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Address, Ipv6Address};

use super::device::NetDriver;
use crate::error::{Errno, Error, Result};

pub const IFF_UP: u32 = 0x1;
pub const IFF_BROADCAST: u32 = 0x2;
pub const IFF_LOOPBACK: u32 = 0x8;
pub const IFF_RUNNING: u32 = 0x40;
pub const IFF_NOARP: u32 = 0x80;
pub const IFF_PROMISC: u32 = 0x100;
pub const IFF_ALLMULTI: u32 = 0x200;
pub const IFF_MULTICAST: u32 = 0x1000;
/// Reported by netlink only (not in the 16-bit SIOCGIFFLAGS).
pub const IFF_LOWER_UP: u32 = 0x10000;
/// Flags `set_flags` may change; the others follow from the device.
const IFF_SETTABLE: u32 = IFF_UP | IFF_PROMISC | IFF_ALLMULTI | IFF_NOARP;

/// Index of `lo`.
pub const LOOPBACK_INDEX: u32 = 1;
/// The MTU of `lo` (Linux: 65536).
pub const LOOPBACK_MTU: usize = 65536;
/// Packets `lo` holds between two polls before it drops.
const LOOPBACK_QUEUE: usize = 4096;
/// Smallest MTU an interface accepts (IPv4's 68; IPv6 needs 1280).
const MIN_MTU: usize = 68;
const ETH_HEADER: usize = 14;

/// Interface counters (/proc/net/dev, RTM_NEWLINK stats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IfaceStats {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

/// What `interfaces()` reports about one interface.
#[derive(Clone, Debug)]
pub struct IfaceInfo {
    pub index: u32,
    pub name: String,
    /// None for `lo` (its all-zero address is reported by the callers).
    pub mac: Option<[u8; 6]>,
    pub mtu: usize,
    /// IFF_* (IFF_RUNNING and IFF_LOWER_UP when up with the link up).
    pub flags: u32,
    pub addrs: Vec<(IpAddress, u8)>,
    pub stats: IfaceStats,
}

/// A route of the main table. Routes to the networks of the interfaces'
/// addresses (Linux's "proto kernel" routes) are listed by [`routes`] with
/// no gateway; [`add_route`] adds others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub dst: IpAddress,
    pub prefix: u8,
    pub gateway: Option<IpAddress>,
    pub iface: u32,
}

/// A frame queue that hands every packet sent back to the receiver: each
/// entry is a buffer and the length of the packet in it.
pub(crate) struct LoopDev {
    queue: VecDeque<(Vec<u8>, usize)>,
}

pub(crate) enum DevKind {
    Loop(LoopDev),
    Eth(Arc<dyn NetDriver>),
}

/// Packet buffers kept for reuse: a send takes one (no allocation, and no
/// zero-filling of bytes smoltcp is about to write), a receive gives back
/// the one it read from.
const SPARE_BUFFERS: usize = 4;
/// Bytes of a reused buffer cleared before smoltcp writes a packet into
/// it: at least the largest IP header plus the largest TCP header, so no
/// header field can carry bytes of an earlier packet even if it were left
/// unwritten (smoltcp writes every byte it is given; this is a backstop).
const HEADER_CLEAR: usize = 128;

/// The sending side of a device (what a [`TxTok`] borrows).
pub(crate) struct DevTx {
    kind: DevKind,
    mtu: usize,
    stats: IfaceStats,
    spare: Vec<Vec<u8>>,
}

/// The smoltcp device of one interface, with its counters.
pub(crate) struct Dev {
    tx: DevTx,
    /// The packet being received (what an [`RxTok`] borrows); its buffer
    /// goes back to the spares on the next receive.
    rx: (Vec<u8>, usize),
}

pub(crate) struct RxTok<'a>(&'a [u8]);
pub(crate) struct TxTok<'a>(&'a mut DevTx);

impl phy::RxToken for RxTok<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.0)
    }
}

impl DevTx {
    /// A buffer of at least `len` bytes, whose first `HEADER_CLEAR` are zero.
    /// A spare that already holds `len` bytes is taken first (the
    /// smallest such: an ACK does not take a full segment's buffer), else
    /// the largest spare, grown.
    fn buffer(&mut self, len: usize) -> Vec<u8> {
        let fits = self
            .spare
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len() >= len)
            .min_by_key(|(_, b)| b.len())
            .map(|(i, _)| i);
        let largest = || {
            self.spare
                .iter()
                .enumerate()
                .max_by_key(|(_, b)| b.len())
                .map(|(i, _)| i)
        };
        let mut buf = match fits.or_else(largest) {
            Some(i) => self.spare.swap_remove(i),
            None => Vec::new(),
        };
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let clear = len.min(HEADER_CLEAR);
        buf[..clear].fill(0);
        buf
    }

    /// Keeps `buf` as a spare; with the spares full, in place of the
    /// smallest one if `buf` is larger (large buffers are the ones worth
    /// keeping: growing one zero-fills it).
    fn recycle(&mut self, buf: Vec<u8>) {
        if buf.is_empty() {
            return;
        }
        if self.spare.len() < SPARE_BUFFERS {
            self.spare.push(buf);
            return;
        }
        if let Some(small) = self.spare.iter_mut().min_by_key(|b| b.len())
            && small.len() < buf.len()
        {
            *small = buf;
        }
    }
}

impl phy::TxToken for TxTok<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let dev = self.0;
        let mut buf = dev.buffer(len);
        let r = f(&mut buf[..len]);
        let ok = match &mut dev.kind {
            DevKind::Loop(l) => {
                if l.queue.len() < LOOPBACK_QUEUE {
                    l.queue.push_back((buf, len));
                    true
                } else {
                    dev.recycle(buf);
                    false
                }
            }
            DevKind::Eth(d) => {
                let ok = d.transmit(&buf[..len]).is_ok();
                dev.recycle(buf);
                ok
            }
        };
        if ok {
            dev.stats.tx_packets += 1;
            dev.stats.tx_bytes += len as u64;
        } else {
            dev.stats.tx_dropped += 1;
        }
        r
    }
}

impl phy::Device for Dev {
    type RxToken<'a> = RxTok<'a>;
    type TxToken<'a> = TxTok<'a>;

    fn receive(&mut self, _ts: Instant) -> Option<(RxTok<'_>, TxTok<'_>)> {
        let tx = &mut self.tx;
        let frame = match &mut tx.kind {
            DevKind::Loop(l) => l.queue.pop_front()?,
            DevKind::Eth(d) => loop {
                let f = d.receive()?;
                // Runts and giants are counted and dropped here; smoltcp
                // drops (silently) whatever else is malformed.
                if f.len() < ETH_HEADER || f.len() > tx.mtu + ETH_HEADER + 4 {
                    tx.stats.rx_errors += 1;
                    continue;
                }
                let len = f.len();
                break (f, len);
            },
        };
        tx.stats.rx_packets += 1;
        tx.stats.rx_bytes += frame.1 as u64;
        let old = core::mem::replace(&mut self.rx, frame);
        tx.recycle(old.0);
        let (buf, len) = &self.rx;
        Some((RxTok(&buf[..*len]), TxTok(tx)))
    }

    fn transmit(&mut self, _ts: Instant) -> Option<TxTok<'_>> {
        if let DevKind::Loop(l) = &self.tx.kind
            && l.queue.len() >= LOOPBACK_QUEUE
        {
            return None;
        }
        Some(TxTok(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        match self.tx.kind {
            DevKind::Loop(_) => {
                caps.medium = Medium::Ip;
                caps.max_transmission_unit = self.tx.mtu.min(65535);
                // Nothing corrupts a packet between two kernel buffers.
                caps.checksum = ChecksumCapabilities::ignored();
            }
            DevKind::Eth(_) => {
                caps.medium = Medium::Ethernet;
                caps.max_transmission_unit = self.tx.mtu + ETH_HEADER;
            }
        }
        caps
    }
}

impl Dev {
    fn new(kind: DevKind, mtu: usize) -> Dev {
        Dev {
            tx: DevTx {
                kind,
                mtu,
                stats: IfaceStats::default(),
                spare: Vec::new(),
            },
            rx: (Vec::new(), 0),
        }
    }
}

/// One interface: its registry entry, smoltcp interface, device and sockets.
pub(crate) struct Iface {
    pub index: u32,
    pub name: String,
    pub mac: Option<[u8; 6]>,
    pub flags: u32,
    pub addrs: Vec<(IpAddress, u8)>,
    pub iface: Interface,
    pub dev: Dev,
    pub sockets: SocketSet<'static>,
}

impl Iface {
    pub fn is_up(&self) -> bool {
        self.flags & IFF_UP != 0
    }

    pub fn mtu(&self) -> usize {
        self.dev.tx.mtu
    }

    pub fn is_loopback(&self) -> bool {
        matches!(self.dev.tx.kind, DevKind::Loop(_))
    }

    fn info(&self) -> IfaceInfo {
        let mut flags = self.flags;
        let link = match &self.dev.tx.kind {
            DevKind::Loop(_) => true,
            DevKind::Eth(d) => d.link_up(),
        };
        if self.is_up() && link {
            flags |= IFF_RUNNING | IFF_LOWER_UP;
        }
        IfaceInfo {
            index: self.index,
            name: self.name.clone(),
            mac: self.mac,
            mtu: self.dev.tx.mtu,
            flags,
            addrs: self.addrs.clone(),
            stats: self.dev.tx.stats,
        }
    }
}

/// The whole IP stack.
pub(crate) struct Stack {
    pub ifaces: Vec<Iface>,
    /// Routes added by add_route (the connected ones are implicit).
    pub routes: Vec<Route>,
    /// The inet sockets' state.
    pub inet: super::inet::Table,
    next_index: u32,
}

static STACK: SpinLock<Option<Stack>, { level::NET_STACK }> = SpinLock::new(None);
/// Where the poll task sleeps.
static POLL_QUEUE: WaitQueue = WaitQueue::new();
static KICKED: AtomicBool = AtomicBool::new(false);
static TASK_STARTED: AtomicBool = AtomicBool::new(false);
/// When the poll task will next poll by itself (u64::MAX: only on a kick).
static TASK_DEADLINE: AtomicU64 = AtomicU64::new(u64::MAX);

pub(crate) fn now() -> Instant {
    Instant::from_micros((frame::timer::monotonic_ns() / 1000) as i64)
}

fn seed() -> u64 {
    // Initial sequence numbers and ephemeral choices: the clock's low bits
    // mixed (splitmix64).
    let mut z = frame::timer::monotonic_ns().wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn cidr(addr: IpAddress, prefix: u8) -> IpCidr {
    IpCidr::new(addr, prefix)
}

/// The network of `addr`/`prefix` (the address with the host bits clear).
pub fn network(addr: IpAddress, prefix: u8) -> IpAddress {
    match addr {
        IpAddress::Ipv4(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix.min(32) as u32)
            };
            IpAddress::Ipv4(Ipv4Address::from_bits(a.to_bits() & m))
        }
        IpAddress::Ipv6(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix.min(128) as u32)
            };
            IpAddress::Ipv6(Ipv6Address::from_bits(a.to_bits() & m))
        }
    }
}

/// 127.0.0.0/8 or ::1.
pub fn is_loopback(addr: &IpAddress) -> bool {
    match addr {
        IpAddress::Ipv4(a) => a.octets()[0] == 127,
        IpAddress::Ipv6(a) => *a == Ipv6Address::LOCALHOST,
    }
}

fn max_prefix(addr: &IpAddress) -> u8 {
    match addr {
        IpAddress::Ipv4(_) => 32,
        IpAddress::Ipv6(_) => 128,
    }
}

impl Stack {
    fn new() -> Stack {
        let mut dev = Dev::new(
            DevKind::Loop(LoopDev {
                queue: VecDeque::new(),
            }),
            LOOPBACK_MTU,
        );
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = seed();
        let iface = Interface::new(config, &mut dev, now());
        let mut s = Stack {
            ifaces: Vec::new(),
            routes: Vec::new(),
            inet: Default::default(),
            next_index: 2,
        };
        s.ifaces.push(Iface {
            index: LOOPBACK_INDEX,
            name: String::from("lo"),
            mac: None,
            flags: IFF_UP | IFF_LOOPBACK,
            addrs: vec![
                (IpAddress::Ipv4(Ipv4Address::new(127, 0, 0, 1)), 8),
                (IpAddress::Ipv6(Ipv6Address::LOCALHOST), 128),
            ],
            iface,
            dev,
            sockets: SocketSet::new(Vec::new()),
        });
        s.sync();
        s
    }

    pub fn iface(&self, index: u32) -> Option<&Iface> {
        self.ifaces.iter().find(|i| i.index == index)
    }

    pub fn iface_mut(&mut self, index: u32) -> Result<&mut Iface> {
        self.ifaces
            .iter_mut()
            .find(|i| i.index == index)
            .ok_or(Error::new(Errno::ENODEV))
    }

    /// Gives smoltcp the addresses and gateways of each interface: `lo`
    /// also owns every other interface's addresses (a packet to one of our
    /// own addresses goes through `lo`, as on Linux).
    fn sync(&mut self) {
        let others: Vec<IpAddress> = self
            .ifaces
            .iter()
            .filter(|i| !i.is_loopback() && i.is_up())
            .flat_map(|i| i.addrs.iter().map(|a| a.0))
            .collect();
        let routes = self.routes.clone();
        for i in self.ifaces.iter_mut() {
            let mut list: Vec<IpCidr> = i.addrs.iter().map(|&(a, p)| cidr(a, p)).collect();
            if i.is_loopback() {
                for a in &others {
                    list.push(cidr(*a, max_prefix(a)));
                }
            }
            i.iface.update_ip_addrs(|v| {
                v.clear();
                for c in list {
                    if v.push(c).is_err() {
                        break;
                    }
                }
            });
            let index = i.index;
            i.iface.routes_mut().update(|v| {
                v.clear();
                for r in routes.iter().filter(|r| r.iface == index) {
                    if let Some(gw) = r.gateway {
                        let _ = v.push(smoltcp::iface::Route {
                            cidr: cidr(r.dst, r.prefix),
                            via_router: gw,
                            preferred_until: None,
                            expires_at: None,
                        });
                    }
                }
            });
        }
    }

    /// Whether `addr` is one of our addresses (any interface, up or not).
    pub fn is_local_addr(&self, addr: &IpAddress) -> bool {
        if is_loopback(addr) {
            return true;
        }
        self.ifaces
            .iter()
            .any(|i| i.addrs.iter().any(|a| a.0 == *addr))
    }

    /// The interface a packet to `dst` leaves through, and the source
    /// address to use (EHOSTUNREACH/ENETUNREACH when there is none).
    pub fn route(&self, dst: &IpAddress) -> Result<(u32, IpAddress)> {
        if self.is_local_addr(dst) {
            return Ok((LOOPBACK_INDEX, *dst));
        }
        let mut best: Option<(u8, u32)> = None;
        for r in self.all_routes() {
            if core::mem::discriminant(&r.dst) != core::mem::discriminant(dst) {
                continue;
            }
            if cidr(r.dst, r.prefix).contains_addr(dst) && best.is_none_or(|(p, _)| r.prefix > p) {
                best = Some((r.prefix, r.iface));
            }
        }
        let (_, index) = best.ok_or(Error::new(Errno::ENETUNREACH))?;
        let i = self
            .iface(index)
            .filter(|i| i.is_up())
            .ok_or(Error::new(Errno::ENETUNREACH))?;
        let src = i
            .addrs
            .iter()
            .find(|a| core::mem::discriminant(&a.0) == core::mem::discriminant(dst))
            .map(|a| a.0)
            .ok_or(Error::new(Errno::EADDRNOTAVAIL))?;
        Ok((index, src))
    }

    fn all_routes(&self) -> Vec<Route> {
        let mut v = Vec::new();
        for i in self.ifaces.iter().filter(|i| !i.is_loopback() && i.is_up()) {
            for &(a, p) in &i.addrs {
                let dst = network(a, p);
                v.push(Route {
                    dst,
                    prefix: p,
                    gateway: None,
                    iface: i.index,
                });
            }
        }
        v.extend(
            self.routes
                .iter()
                .filter(|r| self.iface(r.iface).is_some_and(Iface::is_up))
                .copied(),
        );
        v
    }

    /// Polls every interface that is up until no packet is left in flight
    /// on `lo`; returns whether a socket may have changed.
    pub fn poll(&mut self) -> bool {
        let ts = now();
        let mut changed = false;
        for i in self.ifaces.iter_mut().filter(|i| i.is_up()) {
            // Loopback: what one round sends is received by the next.
            for _ in 0..64 {
                if i.iface.poll(ts, &mut i.dev, &mut i.sockets)
                    == smoltcp::iface::PollResult::SocketStateChanged
                {
                    changed = true;
                }
                match &i.dev.tx.kind {
                    DevKind::Loop(l) if !l.queue.is_empty() => {}
                    _ => break,
                }
            }
        }
        changed
    }

    /// How long until smoltcp next needs a poll (None: only on events).
    fn poll_delay(&mut self) -> Option<Duration> {
        // Packets still queued on `lo` (a poll stops after 64 rounds) are
        // invisible to smoltcp's timers: poll again at once.
        if self
            .ifaces
            .iter()
            .any(|i| i.is_up() && matches!(&i.dev.tx.kind, DevKind::Loop(l) if !l.queue.is_empty()))
        {
            return Some(Duration::ZERO);
        }
        let ts = now();
        let mut best: Option<Duration> = None;
        for i in self.ifaces.iter_mut().filter(|i| i.is_up()) {
            if let Some(d) = i.iface.poll_delay(ts, &i.sockets) {
                best = Some(best.map_or(d, |b| b.min(d)));
            }
        }
        best
    }
}

/// Runs `f` on the stack (created with `lo` on first use). Never call it
/// holding a lock of level NET_STACK or above; `f` copies user memory only
/// inside a [`crate::mm::NoFaults`] section (a fault may not be resolved
/// under this spin lock: such a copy fails instead, and the caller copies
/// again with the lock let go).
pub(crate) fn with_stack<R>(f: impl FnOnce(&mut Stack) -> R) -> R {
    start_task();
    let mut g = STACK.lock();
    let s = g.get_or_insert_with(Stack::new);
    f(s)
}

/// Polls the stack now and wakes the sockets that changed (the socket
/// calls do this after changing a socket).
pub(crate) fn poll_now() {
    let (wake, delay) = with_stack(|s| {
        s.poll();
        (super::inet::collect_wakeups(s), s.poll_delay())
    });
    for r in wake {
        r.notify_all();
    }
    // A timer this poll armed (a delayed ACK, a retransmission) that is
    // due before the poll task would wake: wake it to re-arm.
    if let Some(d) = delay
        && deadline_after(d) < TASK_DEADLINE.load(Ordering::Acquire)
    {
        kick();
    }
}

fn deadline_after(d: Duration) -> u64 {
    frame::timer::monotonic_ns().saturating_add(d.total_micros().saturating_mul(1000))
}

/// Wakes the poll task (frames arrived, transmit space freed, a timer is
/// due). Interrupt-safe.
pub fn kick() {
    KICKED.store(true, Ordering::Release);
    POLL_QUEUE.wake_all();
}

fn start_task() {
    if TASK_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    if frame::task::TaskOptions::new(poll_task).spawn().is_err() {
        TASK_STARTED.store(false, Ordering::Release);
    }
}

fn poll_task() {
    loop {
        let (deadline, wake) = {
            let mut g = STACK.lock();
            let s = g.get_or_insert_with(Stack::new);
            s.poll();
            let wake = super::inet::collect_wakeups(s);
            // Published under the stack lock, so a socket call's poll
            // either comes before this one or sees this deadline.
            let deadline = s.poll_delay().map_or(u64::MAX, deadline_after);
            TASK_DEADLINE.store(deadline, Ordering::Release);
            (deadline, wake)
        };
        for r in wake {
            r.notify_all();
        }
        if deadline <= frame::timer::monotonic_ns() {
            // Due now: poll again, but let others run first.
            frame::task::yield_now();
            continue;
        }
        let _ = POLL_QUEUE.wait_until_or_deadline(
            || KICKED.swap(false, Ordering::AcqRel).then_some(()),
            deadline,
        );
    }
}

/// Every interface, by index.
pub fn interfaces() -> Vec<IfaceInfo> {
    with_stack(|s| s.ifaces.iter().map(Iface::info).collect())
}

/// The index of interface `name` (if_nametoindex).
pub fn index_of(name: &str) -> Option<u32> {
    with_stack(|s| s.ifaces.iter().find(|i| i.name == name).map(|i| i.index))
}

/// Sets the settable IFF_* flags (IFF_UP...) of interface `index`: the
/// others are ignored, as Linux does. ENODEV for an unknown index.
pub fn set_flags(index: u32, flags: u32) -> Result<()> {
    with_stack(|s| {
        let i = s.iface_mut(index)?;
        i.flags = (i.flags & !IFF_SETTABLE) | (flags & IFF_SETTABLE);
        s.sync();
        Ok::<(), Error>(())
    })?;
    kick();
    Ok(())
}

fn check_prefix(addr: &IpAddress, prefix: u8) -> Result<()> {
    if prefix > max_prefix(addr) {
        return Err(Error::with_message(
            Errno::EINVAL,
            "prefix longer than the address",
        ));
    }
    Ok(())
}

/// Adds an address; EEXIST if the interface has it, ENOSPC past smoltcp's
/// 8 addresses per interface.
pub fn add_addr(index: u32, addr: IpAddress, prefix: u8) -> Result<()> {
    check_prefix(&addr, prefix)?;
    if addr.is_unspecified() || addr.is_multicast() {
        return Err(Error::new(Errno::EINVAL));
    }
    with_stack(|s| {
        let i = s.iface_mut(index)?;
        if i.addrs.iter().any(|a| a.0 == addr) {
            return Err(Error::new(Errno::EEXIST));
        }
        if i.addrs.len() >= 8 {
            return Err(Error::new(Errno::ENOSPC));
        }
        i.addrs.push((addr, prefix));
        s.sync();
        Ok(())
    })
}

/// Removes an address; EADDRNOTAVAIL if the interface does not have it.
pub fn del_addr(index: u32, addr: IpAddress, prefix: u8) -> Result<()> {
    let _ = prefix;
    with_stack(|s| {
        let i = s.iface_mut(index)?;
        let before = i.addrs.len();
        i.addrs.retain(|a| a.0 != addr);
        if i.addrs.len() == before {
            return Err(Error::new(Errno::EADDRNOTAVAIL));
        }
        s.sync();
        Ok(())
    })
}

/// The main routing table: the networks of the interfaces' addresses,
/// then the routes added.
pub fn routes() -> Vec<Route> {
    with_stack(|s| s.all_routes())
}

/// Adds a route; EEXIST for a duplicate, ENODEV for an unknown interface,
/// EINVAL for mixed families or a bad prefix.
pub fn add_route(route: Route) -> Result<()> {
    check_prefix(&route.dst, route.prefix)?;
    if let Some(gw) = route.gateway
        && core::mem::discriminant(&gw) != core::mem::discriminant(&route.dst)
    {
        return Err(Error::new(Errno::EINVAL));
    }
    with_stack(|s| {
        s.iface_mut(route.iface)?;
        // The destination is stored as its network.
        let mut route = route;
        route.dst = network(route.dst, route.prefix);
        if s.routes
            .iter()
            .any(|r| r.dst == route.dst && r.prefix == route.prefix && r.iface == route.iface)
        {
            return Err(Error::new(Errno::EEXIST));
        }
        if s.routes.len() >= 16 {
            return Err(Error::new(Errno::ENOSPC));
        }
        s.routes.push(route);
        s.sync();
        Ok(())
    })
}

/// Removes a route added by add_route; ESRCH if there is none.
pub fn del_route(route: &Route) -> Result<()> {
    with_stack(|s| {
        let before = s.routes.len();
        s.routes.retain(|r| {
            !(r.dst == route.dst
                && r.prefix == route.prefix
                && (route.gateway.is_none() || r.gateway == route.gateway)
                && (route.iface == 0 || r.iface == route.iface))
        });
        if s.routes.len() == before {
            return Err(Error::new(Errno::ESRCH));
        }
        s.sync();
        Ok(())
    })
}

/// Sets the MTU: EINVAL below 68 or above what the device carries
/// (65536 for `lo`, the driver's MTU for a NIC).
pub fn set_mtu(index: u32, mtu: usize) -> Result<()> {
    with_stack(|s| {
        let i = s.iface_mut(index)?;
        let max = match &i.dev.tx.kind {
            DevKind::Loop(_) => LOOPBACK_MTU,
            DevKind::Eth(d) => d.mtu(),
        };
        if !(MIN_MTU..=max).contains(&mtu) {
            return Err(Error::new(Errno::EINVAL));
        }
        i.dev.tx.mtu = mtu;
        Ok(())
    })
}

/// Sets a NIC's station address as the stack sees it (EOPNOTSUPP for
/// `lo`, EADDRNOTAVAIL for a multicast or zero address).
pub fn set_mac(index: u32, mac: [u8; 6]) -> Result<()> {
    let ea = EthernetAddress(mac);
    if !ea.is_unicast() {
        return Err(Error::new(Errno::EADDRNOTAVAIL));
    }
    with_stack(|s| {
        let i = s.iface_mut(index)?;
        if i.is_loopback() {
            return Err(Error::new(Errno::EOPNOTSUPP));
        }
        i.mac = Some(mac);
        i.iface.set_hardware_addr(HardwareAddress::Ethernet(ea));
        Ok(())
    })
}

/// Adds a NIC as the next `ethN`; returns its index. Configured from the
/// kernel command line's `ip=` if that names it (or names no device).
pub(crate) fn register_eth(driver: Arc<dyn NetDriver>) -> Result<u32> {
    let mac = driver.mac();
    let mtu = driver.mtu();
    let index = with_stack(|s| {
        let index = s.next_index;
        s.next_index += 1;
        let eth_count = s.ifaces.iter().filter(|i| !i.is_loopback()).count();
        let mut dev = Dev::new(DevKind::Eth(driver), mtu);
        let mut config = Config::new(HardwareAddress::Ethernet(EthernetAddress(mac)));
        config.random_seed = seed();
        let iface = Interface::new(config, &mut dev, now());
        s.ifaces.push(Iface {
            index,
            name: alloc::format!("eth{eth_count}"),
            mac: Some(mac),
            flags: IFF_BROADCAST | IFF_MULTICAST,
            addrs: Vec::new(),
            iface,
            dev,
            sockets: SocketSet::new(Vec::new()),
        });
        if let Some(conf) = IpParam::from_cmdline(frame::boot::cmdline()) {
            let name = alloc::format!("eth{eth_count}");
            if conf.device.as_deref().is_none_or(|d| d == name)
                && (conf.device.is_some() || eth_count == 0)
            {
                conf.apply(s, index);
            }
        }
        s.sync();
        index
    });
    kick();
    Ok(index)
}

/// Linux's `ip=` parameter, static form:
/// `ip=<client>:<server>:<gateway>:<netmask>:<hostname>:<device>:<autoconf>`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct IpParam {
    pub addr: Option<Ipv4Address>,
    pub gateway: Option<Ipv4Address>,
    pub prefix: u8,
    pub device: Option<String>,
}

fn parse_v4(s: &str) -> Option<Ipv4Address> {
    let mut b = [0u8; 4];
    let mut parts = s.split('.');
    for byte in b.iter_mut() {
        *byte = parts.next()?.parse().ok()?;
    }
    parts.next().is_none().then(|| Ipv4Address::from_octets(b))
}

impl IpParam {
    /// The `ip=` word of a kernel command line, if it has a static one.
    pub fn from_cmdline(cmdline: &str) -> Option<IpParam> {
        let w = cmdline
            .split_ascii_whitespace()
            .take_while(|w| *w != "--")
            .find_map(|w| w.strip_prefix("ip="))?;
        Self::parse(w)
    }

    /// Parses the value; None for the DHCP forms (`dhcp`, `on`...) and
    /// for one without a client address.
    pub fn parse(v: &str) -> Option<IpParam> {
        let f: Vec<&str> = v.split(':').collect();
        let addr = parse_v4(f.first()?)?;
        let gateway = f.get(2).and_then(|g| parse_v4(g));
        let prefix = match f.get(3).and_then(|m| parse_v4(m)) {
            Some(mask) => {
                let m = u32::from_be_bytes(mask.octets());
                if m.leading_ones() + m.trailing_zeros() != 32 {
                    return None;
                }
                m.leading_ones() as u8
            }
            // The class's mask, as Linux picks.
            None => match addr.octets()[0] {
                0..=127 => 8,
                128..=191 => 16,
                _ => 24,
            },
        };
        let device = f.get(5).filter(|d| !d.is_empty()).map(|d| String::from(*d));
        Some(IpParam {
            addr: Some(addr),
            gateway,
            prefix,
            device,
        })
    }

    fn apply(&self, s: &mut Stack, index: u32) {
        let Some(addr) = self.addr else { return };
        if let Ok(i) = s.iface_mut(index) {
            i.addrs.push((IpAddress::Ipv4(addr), self.prefix));
            i.flags |= IFF_UP;
        }
        if let Some(gw) = self.gateway {
            s.routes.push(Route {
                dst: IpAddress::Ipv4(Ipv4Address::UNSPECIFIED),
                prefix: 0,
                gateway: Some(IpAddress::Ipv4(gw)),
                iface: index,
            });
        }
    }
}
