//! AF_NETLINK sockets (netlink(7)): a program talks to the kernel in
//! datagrams of `struct nlmsghdr` messages. Only NETLINK_ROUTE exists
//! (rtnetlink(7), answered by [`route`]); other protocols are
//! EPROTONOSUPPORT.
//!
//! A socket has a port id (nl_pid): the one it binds, or one chosen on
//! first use (autobind: the process id if free, else a negative number,
//! as Linux does). A request is handled while sendmsg runs; its replies
//! are queued on the sender as datagrams that recvmsg takes one at a time
//! (a short buffer truncates one, MSG_TRUNC). Unicast between user ports
//! delivers the datagram as it is. Multicast groups are remembered but no
//! notifications are sent.

mod route;

use alloc::collections::{BTreeMap, VecDeque};
use alloc::sync::{Arc, Weak};
use alloc::vec;
use alloc::vec::Vec;

use frame::sync::{SpinLock, level};

use super::addr::SockAddr;
use super::socket::{RecvBuf, RecvMeta, SendBuf, SendMeta, SockOpts, Socket};
use super::*;
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::stream::{Caller, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};

pub const NETLINK_ROUTE: i32 = 0;
pub const SOL_NETLINK: i32 = 270;
const NETLINK_ADD_MEMBERSHIP: i32 = 1;
const NETLINK_DROP_MEMBERSHIP: i32 = 2;
const NETLINK_PKTINFO: i32 = 3;
const NETLINK_BROADCAST_ERROR: i32 = 4;
const NETLINK_NO_ENOBUFS: i32 = 5;
const NETLINK_CAP_ACK: i32 = 10;
const NETLINK_EXT_ACK: i32 = 11;
const NETLINK_GET_STRICT_CHK: i32 = 12;
/// rtnetlink's multicast groups (RTNLGRP_MAX).
const GROUPS_MAX: u32 = 36;
/// CAP_NET_ADMIN (capabilities(7)): changing interfaces, addresses, routes.
pub(crate) const CAP_NET_ADMIN: u32 = 12;

/// socket(AF_NETLINK, type, protocol).
pub fn create(sock_type: i32, protocol: i32, _caller: &dyn Caller) -> Result<Arc<dyn Socket>> {
    if sock_type != SOCK_RAW && sock_type != SOCK_DGRAM {
        return Err(Error::new(Errno::ESOCKTNOSUPPORT));
    }
    if protocol != NETLINK_ROUTE {
        return Err(Error::new(Errno::EPROTONOSUPPORT));
    }
    Ok(Arc::new_cyclic(|me| NetlinkSocket {
        me: me.clone(),
        sock_type,
        state: SpinLock::new(State::default()),
        opts: SockOpts::new(),
        readiness: Readiness::new(),
    }))
}

#[derive(Default)]
struct State {
    /// The port id; 0 until bound.
    port: u32,
    /// Multicast groups joined (bit n-1 for group n up to 32; more in
    /// `extra_groups`).
    groups: u32,
    extra_groups: u64,
    /// connect(2)'s destination (port, groups).
    dst: (u32, u32),
    /// Datagrams waiting for recvmsg, and their total size.
    queue: VecDeque<Vec<u8>>,
    queued: usize,
    cap_ack: bool,
    ext_ack: bool,
    strict: bool,
    pktinfo: bool,
    broadcast_error: bool,
    no_enobufs: bool,
}

pub struct NetlinkSocket {
    me: Weak<NetlinkSocket>,
    sock_type: i32,
    state: SpinLock<State, { level::SOCKET }>,
    opts: SockOpts,
    readiness: Readiness,
}

/// Bound ports of NETLINK_ROUTE sockets.
static PORTS: SpinLock<BTreeMap<u32, Weak<NetlinkSocket>>, { level::SOCKET }> =
    SpinLock::new(BTreeMap::new());

/// Where autobind looks for a free negative port next (Linux starts at
/// -4096 and counts down).
static ROVER: SpinLock<i32, { level::SOCKET }> = SpinLock::new(-4096);

impl NetlinkSocket {
    fn port(&self) -> u32 {
        self.state.lock().port
    }

    /// Claims `port` for this socket: EADDRINUSE if another live socket
    /// holds it.
    fn claim(&self, port: u32) -> Result<()> {
        let mut ports = PORTS.lock();
        if ports
            .get(&port)
            .is_some_and(|other| other.strong_count() > 0)
        {
            return Err(Error::new(Errno::EADDRINUSE));
        }
        ports.insert(port, self.me.clone());
        Ok(())
    }

    /// The socket's port, binding one first if it has none.
    fn autobind(&self, caller: &dyn Caller) -> Result<u32> {
        let port = self.port();
        if port != 0 {
            return Ok(port);
        }
        let pid = caller.ucred().0;
        let mut candidate = pid;
        loop {
            if candidate != 0 && self.claim(candidate).is_ok() {
                break;
            }
            let mut rover = ROVER.lock();
            candidate = *rover as u32;
            *rover = if *rover <= i32::MIN + 1 {
                -4096
            } else {
                *rover - 1
            };
        }
        let mut st = self.state.lock();
        if st.port != 0 {
            // Another thread bound it meanwhile: keep theirs.
            let theirs = st.port;
            drop(st);
            PORTS.lock().remove(&candidate);
            return Ok(theirs);
        }
        st.port = candidate;
        Ok(candidate)
    }

    /// Queues a datagram for recvmsg and wakes readers. A full receive
    /// buffer drops it with ENOBUFS on the socket, as Linux does.
    fn deliver(&self, datagram: Vec<u8>) {
        let rcvbuf = self.opts.get().rcvbuf;
        {
            let mut st = self.state.lock();
            if st.queued + datagram.len() > rcvbuf && !st.queue.is_empty() {
                let quiet = st.no_enobufs;
                drop(st);
                if !quiet {
                    self.opts.set_error(Errno::ENOBUFS);
                }
                return;
            }
            st.queued += datagram.len();
            st.queue.push_back(datagram);
        }
        self.readiness.notify(POLLIN | POLLRDNORM);
    }

    fn set_group(&self, group: u32, on: bool) -> Result<()> {
        if group == 0 || group > GROUPS_MAX {
            return Err(Error::new(Errno::EINVAL));
        }
        let mut st = self.state.lock();
        if group <= 32 {
            let bit = 1u32 << (group - 1);
            st.groups = if on {
                st.groups | bit
            } else {
                st.groups & !bit
            };
        } else {
            let bit = 1u64 << (group - 33);
            st.extra_groups = if on {
                st.extra_groups | bit
            } else {
                st.extra_groups & !bit
            };
        }
        Ok(())
    }
}

impl Drop for NetlinkSocket {
    fn drop(&mut self) {
        let port = self.state.get_mut().port;
        if port != 0 {
            let mut ports = PORTS.lock();
            if ports.get(&port).is_some_and(|w| w.strong_count() == 0) {
                ports.remove(&port);
            }
        }
    }
}

fn netlink_addr(addr: &SockAddr) -> Result<(u32, u32)> {
    match *addr {
        SockAddr::Netlink { pid, groups } => Ok((pid, groups)),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn read_all(data: &dyn SendBuf) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; data.len()];
    data.read_at(0, &mut buf)?;
    Ok(buf)
}

impl Socket for NetlinkSocket {
    fn family(&self) -> i32 {
        AF_NETLINK
    }

    fn sock_type(&self) -> i32 {
        self.sock_type
    }

    fn protocol(&self) -> i32 {
        NETLINK_ROUTE
    }

    fn bind(&self, addr: &SockAddr, caller: &dyn Caller) -> Result<()> {
        let (pid, groups) = netlink_addr(addr)?;
        let bound = self.port();
        if bound != 0 && pid != 0 && pid != bound {
            return Err(Error::new(Errno::EINVAL));
        }
        if bound == 0 {
            if pid != 0 {
                self.claim(pid)?;
                let mut st = self.state.lock();
                if st.port != 0 {
                    drop(st);
                    PORTS.lock().remove(&pid);
                    return Err(Error::new(Errno::EINVAL));
                }
                st.port = pid;
            } else {
                self.autobind(caller)?;
            }
        }
        // rtnetlink lets anyone listen to its groups (NL_CFG_F_NONROOT_RECV).
        self.state.lock().groups = groups;
        Ok(())
    }

    fn connect(&self, addr: &SockAddr, _nonblocking: bool, caller: &dyn Caller) -> Result<()> {
        if *addr == SockAddr::Unspec {
            self.state.lock().dst = (0, 0);
            return Ok(());
        }
        let (pid, groups) = netlink_addr(addr)?;
        if groups != 0 && !caller.capable(CAP_NET_ADMIN) {
            return Err(Error::new(Errno::EPERM));
        }
        self.autobind(caller)?;
        self.state.lock().dst = (pid, groups);
        Ok(())
    }

    fn listen(&self, _backlog: i32) -> Result<()> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    fn accept(
        &self,
        _nonblocking: bool,
        _caller: &dyn Caller,
    ) -> Result<(Arc<dyn Socket>, SockAddr)> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    fn send(
        &self,
        data: &dyn SendBuf,
        meta: SendMeta,
        flags: u32,
        _nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<usize> {
        if flags & MSG_OOB != 0 {
            return Err(Error::new(Errno::EOPNOTSUPP));
        }
        let (dst_pid, dst_groups) = match &meta.addr {
            Some(a) => netlink_addr(a)?,
            None => self.state.lock().dst,
        };
        if dst_groups != 0 && !caller.capable(CAP_NET_ADMIN) {
            return Err(Error::new(Errno::EPERM));
        }
        // Linux: a message larger than the send buffer is EMSGSIZE.
        if data.len() > self.opts.get().sndbuf.saturating_sub(32) {
            return Err(Error::new(Errno::EMSGSIZE));
        }
        let port = self.autobind(caller)?;
        let bytes = read_all(data)?;
        if dst_pid != 0 {
            let peer = PORTS.lock().get(&dst_pid).and_then(Weak::upgrade);
            let peer = peer.ok_or(Error::new(Errno::ECONNREFUSED))?;
            peer.deliver(bytes);
            return Ok(data.len());
        }
        let cap_ack = self.state.lock().cap_ack;
        route::handle(&bytes, port, cap_ack, caller, &mut |d| self.deliver(d));
        Ok(data.len())
    }

    fn recv(
        &self,
        data: &mut dyn RecvBuf,
        flags: u32,
        nonblocking: bool,
        caller: &dyn Caller,
    ) -> Result<RecvMeta> {
        if flags & MSG_OOB != 0 {
            return Err(Error::new(Errno::EOPNOTSUPP));
        }
        if let Some(e) = self.opts.take_error() {
            return Err(Error::new(e));
        }
        let nonblocking = nonblocking || flags & MSG_DONTWAIT != 0;
        let deadline = self.opts.deadline(false, nonblocking);
        let datagram = loop {
            {
                let mut st = self.state.lock();
                if flags & MSG_PEEK != 0 {
                    if let Some(d) = st.queue.front() {
                        break d.clone();
                    }
                } else if let Some(d) = st.queue.pop_front() {
                    st.queued -= d.len();
                    break d;
                }
            }
            if deadline == 0 {
                return Err(Error::new(Errno::EAGAIN));
            }
            let ready = caller.wait(
                self.readiness.queue(),
                &mut || !self.state.lock().queue.is_empty(),
                deadline,
            )?;
            if !ready {
                return Err(Error::new(Errno::EAGAIN));
            }
        };
        let len = datagram.len().min(data.len());
        data.write_at(0, &datagram[..len])?;
        Ok(RecvMeta {
            len,
            full_len: datagram.len(),
            addr: Some(SockAddr::Netlink { pid: 0, groups: 0 }),
            control: Vec::new(),
            flags: if len < datagram.len() { MSG_TRUNC } else { 0 },
        })
    }

    fn shutdown(&self, _how: u32) -> Result<()> {
        Err(Error::new(Errno::EOPNOTSUPP))
    }

    fn local_addr(&self) -> Result<SockAddr> {
        let st = self.state.lock();
        Ok(SockAddr::Netlink {
            pid: st.port,
            groups: st.groups,
        })
    }

    fn peer_addr(&self) -> Result<SockAddr> {
        let (pid, groups) = self.state.lock().dst;
        Ok(SockAddr::Netlink { pid, groups })
    }

    fn setsockopt(&self, level: i32, name: i32, value: &[u8], caller: &dyn Caller) -> Result<()> {
        if level == SOL_SOCKET {
            return self.opts.set(name, value, caller);
        }
        if level != SOL_NETLINK {
            return Err(Error::new(Errno::ENOPROTOOPT));
        }
        let b = value.get(..4).ok_or(Error::new(Errno::EINVAL))?;
        let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        let mut st = self.state.lock();
        match name {
            NETLINK_ADD_MEMBERSHIP | NETLINK_DROP_MEMBERSHIP => {
                drop(st);
                return self.set_group(v, name == NETLINK_ADD_MEMBERSHIP);
            }
            NETLINK_PKTINFO => st.pktinfo = v != 0,
            NETLINK_BROADCAST_ERROR => st.broadcast_error = v != 0,
            NETLINK_NO_ENOBUFS => st.no_enobufs = v != 0,
            NETLINK_CAP_ACK => st.cap_ack = v != 0,
            NETLINK_EXT_ACK => st.ext_ack = v != 0,
            NETLINK_GET_STRICT_CHK => st.strict = v != 0,
            _ => return Err(Error::new(Errno::ENOPROTOOPT)),
        }
        Ok(())
    }

    fn getsockopt(&self, level: i32, name: i32, _caller: &dyn Caller) -> Result<Vec<u8>> {
        let int = |v: i32| v.to_ne_bytes().to_vec();
        if level == SOL_SOCKET {
            return match name {
                SO_TYPE => Ok(int(self.sock_type)),
                SO_PROTOCOL => Ok(int(NETLINK_ROUTE)),
                SO_DOMAIN => Ok(int(AF_NETLINK)),
                _ => self.opts.get_opt(name),
            };
        }
        if level != SOL_NETLINK {
            return Err(Error::new(Errno::ENOPROTOOPT));
        }
        let st = self.state.lock();
        Ok(int(match name {
            NETLINK_PKTINFO => st.pktinfo as i32,
            NETLINK_BROADCAST_ERROR => st.broadcast_error as i32,
            NETLINK_NO_ENOBUFS => st.no_enobufs as i32,
            NETLINK_CAP_ACK => st.cap_ack as i32,
            NETLINK_EXT_ACK => st.ext_ack as i32,
            NETLINK_GET_STRICT_CHK => st.strict as i32,
            _ => return Err(Error::new(Errno::ENOPROTOOPT)),
        }))
    }

    fn poll(&self) -> u16 {
        let mut events = POLLOUT | POLLWRNORM;
        if !self.state.lock().queue.is_empty() {
            events |= POLLIN | POLLRDNORM;
        }
        events
    }

    fn readiness(&self) -> &Readiness {
        &self.readiness
    }
}
