//! NETLINK_ROUTE (rtnetlink(7)): links, addresses and routes, read by
//! dumps and changed by RTM_NEW*/RTM_DEL*/RTM_SETLINK, over the interface
//! view of [`ifconf`](crate::net::ifconf).
//!
//! The walk over a request follows Linux's `netlink_rcv_skb`: messages
//! without NLM_F_REQUEST and control messages are acknowledged without
//! action, every failure is answered by an NLMSG_ERROR carrying the
//! request, success by one only with NLM_F_ACK; a header whose length is
//! short or runs past the datagram ends the walk silently.

use alloc::vec::Vec;

use nlmsg::{
    Builder, Message, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_MULTI, NLM_F_REQUEST,
};

use super::CAP_NET_ADMIN;
use crate::error::{Errno, Error, Result};
use crate::fs::stream::Caller;
use crate::net::ifconf::{self, Iface, Ip, Route};
use crate::net::{AF_INET, AF_INET6, AF_UNSPEC};

const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_SETLINK: u16 = 19;
const RTM_NEWADDR: u16 = 20;
const RTM_DELADDR: u16 = 21;
const RTM_GETADDR: u16 = 22;
const RTM_NEWROUTE: u16 = 24;
const RTM_DELROUTE: u16 = 25;
const RTM_GETROUTE: u16 = 26;

const IFLA_ADDRESS: u16 = 1;
const IFLA_BROADCAST: u16 = 2;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_QDISC: u16 = 6;
const IFLA_STATS: u16 = 7;
const IFLA_TXQLEN: u16 = 13;
const IFLA_OPERSTATE: u16 = 16;
const IFLA_LINKMODE: u16 = 17;
const IFLA_STATS64: u16 = 23;
const IFLA_GROUP: u16 = 27;
const IFLA_PROMISCUITY: u16 = 30;
const IFLA_NUM_TX_QUEUES: u16 = 31;
const IFLA_NUM_RX_QUEUES: u16 = 32;
const IFLA_CARRIER: u16 = 33;
const IFLA_MIN_MTU: u16 = 50;
const IFLA_MAX_MTU: u16 = 51;

const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_LABEL: u16 = 3;
const IFA_BROADCAST: u16 = 4;
const IFA_CACHEINFO: u16 = 6;
const IFA_FLAGS: u16 = 8;
const IFA_F_PERMANENT: u32 = 0x80;

const RTA_DST: u16 = 1;
const RTA_OIF: u16 = 4;
const RTA_GATEWAY: u16 = 5;
const RTA_PRIORITY: u16 = 6;
const RTA_PREFSRC: u16 = 7;
const RTA_TABLE: u16 = 15;

const RT_TABLE_MAIN: u8 = 254;
const RTPROT_BOOT: u8 = 3;
const RTPROT_KERNEL: u8 = 2;
const RT_SCOPE_UNIVERSE: u8 = 0;
const RT_SCOPE_LINK: u8 = 253;
const RT_SCOPE_HOST: u8 = 254;
const RTN_UNICAST: u8 = 1;

/// IF_OPER_UP and IF_OPER_DOWN (RFC 2863 operstate, as IFLA_OPERSTATE).
const IF_OPER_DOWN: u8 = 2;
const IF_OPER_UP: u8 = 6;
/// IF_OPER_UNKNOWN: what Linux reports for loopback.
const IF_OPER_UNKNOWN: u8 = 0;

/// `sizeof(struct ifinfomsg)`, `struct ifaddrmsg`, `struct rtmsg`.
const IFINFOMSG_LEN: usize = 16;
const IFADDRMSG_LEN: usize = 8;
const RTMSG_LEN: usize = 12;

/// Bytes of messages one dump datagram holds (Linux's NLMSG_GOODSIZE on
/// 4 KiB pages is about this).
const DUMP_DATAGRAM: usize = 3776;

/// Answers the messages of one datagram sent by port `port`, handing
/// each reply datagram to `deliver` as soon as its message is done (so a
/// datagram of many requests never holds all their answers at once).
pub fn handle(
    request: &[u8],
    port: u32,
    cap_ack: bool,
    caller: &dyn Caller,
    deliver: &mut dyn FnMut(Vec<u8>),
) {
    for m in nlmsg::messages(request) {
        let h = m.header;
        let mut out = Vec::new();
        let err = if h.flags & NLM_F_REQUEST == 0 || h.ty < nlmsg::NLMSG_MIN_TYPE {
            0
        } else {
            match dispatch(&m, port, caller, &mut out) {
                Ok(()) => 0,
                Err(e) => -(e.errno() as i32),
            }
        };
        if h.flags & NLM_F_ACK != 0 || err != 0 {
            out.push(nlmsg::ack(&m, port, err, cap_ack));
        }
        for datagram in out {
            deliver(datagram);
        }
    }
}

fn einval() -> Error {
    Error::new(Errno::EINVAL)
}

fn dispatch(m: &Message<'_>, port: u32, caller: &dyn Caller, out: &mut Vec<Vec<u8>>) -> Result<()> {
    let ty = m.header.ty;
    if !(RTM_NEWLINK..=RTM_GETROUTE).contains(&ty) || ty == 23 {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    // rtnetlink: every kind but GET (type & 3 == 2) changes something.
    let get = (ty - RTM_NEWLINK) & 3 == 2;
    if !get && !caller.capable(CAP_NET_ADMIN) {
        return Err(Error::new(Errno::EPERM));
    }
    if get && m.header.flags & NLM_F_DUMP == NLM_F_DUMP {
        // Linux ignores a dump request without even its family byte.
        let Some(&family) = m.payload.first() else {
            return Ok(());
        };
        let family = i32::from(family);
        let replies = match ty {
            RTM_GETLINK => ifconf::interfaces()
                .iter()
                .map(|i| link_msg(i, m, port, NLM_F_MULTI))
                .collect(),
            RTM_GETADDR => addr_msgs(family, m, port),
            _ => route_msgs(family, m, port),
        };
        dump(replies, m, port, out);
        return Ok(());
    }
    match ty {
        RTM_GETLINK => {
            let iface = find_link(m)?;
            out.push(link_msg(&iface, m, port, 0));
            Ok(())
        }
        RTM_NEWLINK | RTM_SETLINK => set_link(m),
        RTM_NEWADDR | RTM_DELADDR => change_addr(m, ty == RTM_NEWADDR),
        RTM_NEWROUTE | RTM_DELROUTE => change_route(m, ty == RTM_NEWROUTE),
        // DELLINK, and GETADDR/GETROUTE of one object.
        _ => Err(Error::new(Errno::EOPNOTSUPP)),
    }
}

/// Packs the messages of a dump into datagrams, and NLMSG_DONE after
/// them (in the last datagram when it fits, as Linux does).
fn dump(replies: Vec<Vec<u8>>, m: &Message<'_>, port: u32, out: &mut Vec<Vec<u8>>) {
    let mut done = Builder::new();
    done.begin(nlmsg::NLMSG_DONE, NLM_F_MULTI, m.header.seq, port)
        .bytes(&0i32.to_ne_bytes())
        .end();
    let mut current: Vec<u8> = Vec::new();
    for r in replies.into_iter().chain(core::iter::once(done.finish())) {
        if !current.is_empty() && current.len() + r.len() > DUMP_DATAGRAM {
            out.push(core::mem::take(&mut current));
        }
        current.extend_from_slice(&r);
    }
    out.push(current);
}

/// A request's attributes: (type, data).
type Attrs<'a> = Vec<(u16, &'a [u8])>;

/// The fixed header of a request's payload, EINVAL if it is short.
fn fixed<'a>(m: &Message<'a>, len: usize) -> Result<(&'a [u8], Attrs<'a>)> {
    let head = m.payload.get(..len).ok_or_else(einval)?;
    let attrs = nlmsg::parse_attrs(m.payload.get(nlmsg::align(len)..).unwrap_or(&[]))
        .map_err(|_| einval())?;
    Ok((head, attrs))
}

fn attr<'a>(attrs: &[(u16, &'a [u8])], ty: u16) -> Option<&'a [u8]> {
    attrs.iter().rev().find(|(t, _)| *t == ty).map(|(_, d)| *d)
}

fn u32_of(b: &[u8]) -> Result<u32> {
    let b = b.get(..4).ok_or_else(einval)?;
    Ok(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

/// A string attribute without its NUL (and anything after one).
fn str_of(b: &[u8]) -> &[u8] {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    &b[..end]
}

// ---- links ----

fn link_msg(i: &Iface, m: &Message<'_>, port: u32, flags: u16) -> Vec<u8> {
    let mut b = Builder::new();
    b.begin(RTM_NEWLINK, flags, m.header.seq, port);
    let mut head = [0u8; IFINFOMSG_LEN];
    head[0] = AF_UNSPEC as u8;
    head[2..4].copy_from_slice(&i.arp_type().to_ne_bytes());
    head[4..8].copy_from_slice(&(i.index as i32).to_ne_bytes());
    head[8..12].copy_from_slice(&i.flags.to_ne_bytes());
    b.bytes(&head);
    b.attr_str(IFLA_IFNAME, &i.name);
    b.attr_u32(IFLA_TXQLEN, 1000);
    let up = i.flags & ifconf::IFF_UP != 0;
    let oper = match (i.is_loopback(), up) {
        (_, false) => IF_OPER_DOWN,
        (true, true) => IF_OPER_UNKNOWN,
        (false, true) => IF_OPER_UP,
    };
    b.attr_u8(IFLA_OPERSTATE, oper);
    b.attr_u8(IFLA_LINKMODE, 0);
    b.attr_u32(IFLA_MTU, i.mtu);
    b.attr_u32(IFLA_MIN_MTU, if i.is_loopback() { 0 } else { 68 });
    b.attr_u32(IFLA_MAX_MTU, if i.is_loopback() { 0 } else { 65535 });
    b.attr_u32(IFLA_GROUP, 0);
    b.attr_u32(IFLA_PROMISCUITY, 0);
    b.attr_u32(IFLA_NUM_TX_QUEUES, 1);
    b.attr_u32(IFLA_NUM_RX_QUEUES, 1);
    b.attr_u8(IFLA_CARRIER, u8::from(up));
    b.attr_str(IFLA_QDISC, "noqueue");
    let mac = i.mac.unwrap_or([0; 6]);
    b.attr(IFLA_ADDRESS, &mac);
    b.attr(
        IFLA_BROADCAST,
        &if i.is_loopback() { [0; 6] } else { [0xff; 6] },
    );
    let s = &i.stats;
    // struct rtnl_link_stats64 and rtnl_link_stats: 24 counters, of
    // which the first eight are the ones kept.
    let counters = [
        s.rx_packets,
        s.tx_packets,
        s.rx_bytes,
        s.tx_bytes,
        s.rx_errors,
        s.tx_errors,
        s.rx_dropped,
        s.tx_dropped,
    ];
    let mut s64 = Vec::with_capacity(24 * 8);
    let mut s32 = Vec::with_capacity(24 * 4);
    for k in 0..24 {
        let v = counters.get(k).copied().unwrap_or(0);
        s64.extend_from_slice(&v.to_ne_bytes());
        s32.extend_from_slice(&(v as u32).to_ne_bytes());
    }
    b.attr(IFLA_STATS64, &s64);
    b.attr(IFLA_STATS, &s32);
    b.end();
    b.finish()
}

/// The interface a link request names: by ifi_index, else IFLA_IFNAME.
fn find_link(m: &Message<'_>) -> Result<Iface> {
    let (head, attrs) = fixed(m, IFINFOMSG_LEN)?;
    let index = i32::from_ne_bytes([head[4], head[5], head[6], head[7]]);
    if index > 0 {
        return ifconf::by_index(index as u32).ok_or(Error::new(Errno::ENODEV));
    }
    match attr(&attrs, IFLA_IFNAME) {
        Some(name) => ifconf::by_name(str_of(name)).ok_or(Error::new(Errno::ENODEV)),
        None => Err(einval()),
    }
}

/// RTM_NEWLINK/RTM_SETLINK on an existing interface: IFF_UP and the MTU.
fn set_link(m: &Message<'_>) -> Result<()> {
    let (head, attrs) = fixed(m, IFINFOMSG_LEN)?;
    let iface = match find_link(m) {
        Ok(i) => i,
        // Creating interfaces (IFLA_LINKINFO kinds) is not supported.
        Err(e) if e.errno() == Errno::ENODEV && m.header.flags & NLM_F_CREATE != 0 => {
            return Err(Error::new(Errno::EOPNOTSUPP));
        }
        Err(e) => return Err(e),
    };
    if m.header.ty == RTM_NEWLINK && m.header.flags & NLM_F_EXCL != 0 {
        return Err(Error::new(Errno::EEXIST));
    }
    let mtu = match attr(&attrs, IFLA_MTU) {
        Some(v) => Some(u32_of(v)?),
        None => None,
    };
    if attr(&attrs, IFLA_ADDRESS).is_some() {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    if let Some(mtu) = mtu {
        ifconf::set_mtu(iface.index, mtu)?;
    }
    let flags = u32::from_ne_bytes([head[8], head[9], head[10], head[11]]);
    let change = u32::from_ne_bytes([head[12], head[13], head[14], head[15]]);
    // Linux's rtnl_dev_combine_flags: ifi_change 0 means "all of ifi_flags".
    if flags != 0 || change != 0 {
        let combined = if change == 0 {
            flags
        } else {
            (flags & change) | (iface.flags & !change)
        };
        ifconf::set_flags(iface.index, combined)?;
    }
    Ok(())
}

// ---- addresses ----

fn scope_of(ip: &Ip) -> u8 {
    if ip.is_loopback() {
        RT_SCOPE_HOST
    } else if ip.is_link_local() {
        RT_SCOPE_LINK
    } else {
        RT_SCOPE_UNIVERSE
    }
}

fn addr_msgs(family: i32, m: &Message<'_>, port: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in ifconf::interfaces() {
        for (ip, prefix) in &i.addrs {
            if family != AF_UNSPEC && family != ip.family() {
                continue;
            }
            let mut b = Builder::new();
            b.begin(RTM_NEWADDR, NLM_F_MULTI, m.header.seq, port);
            let mut head = [0u8; IFADDRMSG_LEN];
            head[0] = ip.family() as u8;
            head[1] = *prefix;
            head[2] = IFA_F_PERMANENT as u8;
            head[3] = scope_of(ip);
            head[4..8].copy_from_slice(&i.index.to_ne_bytes());
            b.bytes(&head);
            b.attr(IFA_ADDRESS, ip.bytes());
            if let Ip::V4(a) = ip {
                b.attr(IFA_LOCAL, a);
                if !i.is_loopback() && *prefix < 31 {
                    let host = !u32::from_be_bytes(ifconf::v4_mask(*prefix));
                    b.attr(
                        IFA_BROADCAST,
                        &(u32::from_be_bytes(*a) | host).to_be_bytes(),
                    );
                }
                b.attr_str(IFA_LABEL, &i.name);
            }
            b.attr_u32(IFA_FLAGS, IFA_F_PERMANENT);
            // struct ifa_cacheinfo: preferred and valid lifetimes forever.
            let mut ci = [0u8; 16];
            ci[0..8].fill(0xff);
            b.attr(IFA_CACHEINFO, &ci);
            b.end();
            out.push(b.finish());
        }
    }
    out
}

/// RTM_NEWADDR/RTM_DELADDR: the address (IFA_LOCAL, else IFA_ADDRESS) of
/// the request's family and prefix on interface ifa_index.
fn change_addr(m: &Message<'_>, add: bool) -> Result<()> {
    let (head, attrs) = fixed(m, IFADDRMSG_LEN)?;
    let family = i32::from(head[0]);
    let prefix = head[1];
    let index = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]);
    if family != AF_INET && family != AF_INET6 {
        return Err(Error::new(Errno::EAFNOSUPPORT));
    }
    if prefix > Ip::max_prefix(family) {
        return Err(einval());
    }
    let raw = attr(&attrs, IFA_LOCAL)
        .or_else(|| attr(&attrs, IFA_ADDRESS))
        .ok_or_else(einval)?;
    let ip = Ip::from_bytes(family, raw).ok_or_else(einval)?;
    let iface = ifconf::by_index(index).ok_or(Error::new(Errno::ENODEV))?;
    // Linux refuses a 127/8 address of any scope but host.
    if add && matches!(ip, Ip::V4([127, ..])) && head[3] != RT_SCOPE_HOST {
        return Err(einval());
    }
    if add {
        match ifconf::add_addr(iface.index, ip, prefix) {
            // Without NLM_F_EXCL an existing address is "changed", which
            // here means left as it is.
            Err(e) if e.errno() == Errno::EEXIST && m.header.flags & NLM_F_EXCL == 0 => Ok(()),
            r => r,
        }
    } else {
        ifconf::del_addr(iface.index, ip, prefix)
    }
}

// ---- routes ----

fn route_msgs(family: i32, m: &Message<'_>, port: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (r, kernel) in ifconf::main_table() {
        if family != AF_UNSPEC && family != r.dst.family() {
            continue;
        }
        let mut b = Builder::new();
        b.begin(RTM_NEWROUTE, NLM_F_MULTI, m.header.seq, port);
        let head = [
            r.dst.family() as u8,
            r.prefix,
            0,
            0,
            RT_TABLE_MAIN,
            if kernel { RTPROT_KERNEL } else { RTPROT_BOOT },
            if r.gateway.is_some() {
                RT_SCOPE_UNIVERSE
            } else {
                RT_SCOPE_LINK
            },
            RTN_UNICAST,
            0,
            0,
            0,
            0,
        ];
        b.bytes(&head);
        b.attr_u32(RTA_TABLE, u32::from(RT_TABLE_MAIN));
        if r.prefix != 0 {
            b.attr(RTA_DST, r.dst.bytes());
        }
        if let Some(gw) = r.gateway {
            b.attr(RTA_GATEWAY, gw.bytes());
        }
        // The interface's own address on the network is the source.
        let src = ifconf::by_index(r.iface).and_then(|i| {
            i.addrs
                .iter()
                .copied()
                .find(|(a, p)| a.family() == r.dst.family() && a.network(*p) == r.dst)
        });
        if let (true, Some((a @ Ip::V4(_), _))) = (kernel, src) {
            b.attr(RTA_PREFSRC, a.bytes());
        }
        if r.dst.family() == AF_INET6 {
            b.attr_u32(RTA_PRIORITY, 256);
        }
        b.attr_u32(RTA_OIF, r.iface);
        b.end();
        out.push(b.finish());
    }
    out
}

/// RTM_NEWROUTE/RTM_DELROUTE of the main table: RTA_DST/rtm_dst_len,
/// RTA_GATEWAY, RTA_OIF (or the interface on the gateway's subnet).
fn change_route(m: &Message<'_>, add: bool) -> Result<()> {
    let (head, attrs) = fixed(m, RTMSG_LEN)?;
    let family = i32::from(head[0]);
    let prefix = head[1];
    if family != AF_INET && family != AF_INET6 {
        return Err(Error::new(Errno::EAFNOSUPPORT));
    }
    if prefix > Ip::max_prefix(family) {
        return Err(einval());
    }
    let zero = [0u8; 16];
    let dst = match attr(&attrs, RTA_DST) {
        Some(d) => Ip::from_bytes(family, d).ok_or_else(einval)?,
        None if prefix == 0 => Ip::from_bytes(family, &zero).ok_or_else(einval)?,
        None => return Err(einval()),
    };
    let gateway = match attr(&attrs, RTA_GATEWAY) {
        Some(g) => Some(Ip::from_bytes(family, g).ok_or_else(einval)?),
        None => None,
    };
    if !add {
        let index = match attr(&attrs, RTA_OIF) {
            Some(o) => u32_of(o)?,
            None => 0,
        };
        return ifconf::del_route(dst.network(prefix), prefix, gateway, index);
    }
    let iface = match attr(&attrs, RTA_OIF) {
        Some(o) => ifconf::by_index(u32_of(o)?).ok_or(Error::new(Errno::ENODEV))?,
        None => {
            let gw = gateway.ok_or(Error::new(Errno::ENODEV))?;
            ifconf::on_link(gw).ok_or(Error::new(Errno::ENETUNREACH))?
        }
    };
    let r = Route {
        dst: dst.network(prefix),
        prefix,
        gateway,
        iface: iface.index,
    };
    match ifconf::add_route(r) {
        Err(e) if e.errno() == Errno::EEXIST && m.header.flags & NLM_F_EXCL == 0 => {
            // NLM_F_REPLACE (ip route replace) or a plain add of the same.
            ifconf::del_route(r.dst, prefix, None, r.iface)?;
            ifconf::add_route(r)
        }
        res => res,
    }
}
