//! The interface ioctls every socket answers (netdevice(7)): SIOCGIFCONF
//! and the SIOC[GS]IF* requests on a `struct ifreq`, what ifconfig and
//! older tools use instead of netlink. Getting needs nothing; setting
//! needs CAP_NET_ADMIN (EPERM), as on Linux.

use alloc::vec::Vec;

use super::AF_INET;
use super::ifconf::{self, IFNAMSIZ, Iface, Ip};
use super::netlink::CAP_NET_ADMIN;
use crate::error::{Errno, Error, Result};
use crate::fs::stream::Caller;

const SIOCADDRT: u32 = 0x890b;
const SIOCDELRT: u32 = 0x890c;
const SIOCGIFNAME: u32 = 0x8910;
const SIOCGIFCONF: u32 = 0x8912;
const SIOCGIFFLAGS: u32 = 0x8913;
const SIOCSIFFLAGS: u32 = 0x8914;
const SIOCGIFADDR: u32 = 0x8915;
const SIOCSIFADDR: u32 = 0x8916;
const SIOCGIFDSTADDR: u32 = 0x8917;
const SIOCGIFBRDADDR: u32 = 0x8919;
const SIOCGIFNETMASK: u32 = 0x891b;
const SIOCSIFNETMASK: u32 = 0x891c;
const SIOCGIFMETRIC: u32 = 0x891d;
const SIOCGIFMTU: u32 = 0x8921;
const SIOCSIFMTU: u32 = 0x8922;
const SIOCGIFHWADDR: u32 = 0x8927;
const SIOCGIFINDEX: u32 = 0x8933;
const SIOCGIFTXQLEN: u32 = 0x8942;
const SIOCGIFMAP: u32 = 0x8970;

/// `sizeof(struct ifreq)`: the name, then a 24-byte union.
const IFREQ_LEN: usize = 40;
/// `sizeof(struct ifconf)` on x86-64: ifc_len, padding, the buffer pointer.
const IFCONF_LEN: usize = 16;

/// Handles `cmd` on a socket of `family` if it is an interface ioctl;
/// None lets the socket's family have it. The IPv4 address requests are
/// AF_INET's (Linux's devinet_ioctl): other families leave them to their
/// own ioctl, which refuses them (ENOTTY).
pub fn ioctl(family: i32, cmd: u32, arg: u64, caller: &dyn Caller) -> Option<Result<isize>> {
    let ipv4 = matches!(
        cmd,
        SIOCADDRT
            | SIOCDELRT
            | SIOCGIFADDR
            | SIOCSIFADDR
            | SIOCGIFDSTADDR
            | SIOCGIFBRDADDR
            | SIOCGIFNETMASK
            | SIOCSIFNETMASK
    );
    if ipv4 && family != AF_INET {
        return None;
    }
    let r = match cmd {
        SIOCGIFCONF => ifconf_list(arg, caller),
        SIOCADDRT | SIOCDELRT => route_ioctl(cmd == SIOCADDRT, arg, caller),
        SIOCGIFNAME => get_name(arg, caller),
        SIOCGIFFLAGS | SIOCSIFFLAGS | SIOCGIFADDR | SIOCSIFADDR | SIOCGIFDSTADDR
        | SIOCGIFBRDADDR | SIOCGIFNETMASK | SIOCSIFNETMASK | SIOCGIFMETRIC | SIOCGIFMTU
        | SIOCSIFMTU | SIOCGIFHWADDR | SIOCGIFINDEX | SIOCGIFTXQLEN | SIOCGIFMAP => {
            by_name(cmd, arg, caller)
        }
        _ => return None,
    };
    Some(r.map(|()| 0))
}

fn read_ifreq(arg: u64, caller: &dyn Caller) -> Result<[u8; IFREQ_LEN]> {
    let mut req = [0u8; IFREQ_LEN];
    caller.read_bytes(arg, &mut req)?;
    Ok(req)
}

/// The name in an ifreq: up to its NUL, at most IFNAMSIZ - 1 bytes
/// (Linux terminates it there).
fn name_of(req: &[u8; IFREQ_LEN]) -> &[u8] {
    let name = &req[..IFNAMSIZ - 1];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    &name[..end]
}

/// A `struct sockaddr_in` for the union.
fn sockaddr_in(addr: [u8; 4]) -> [u8; 16] {
    let mut sa = [0u8; 16];
    sa[..2].copy_from_slice(&(AF_INET as u16).to_ne_bytes());
    sa[4..8].copy_from_slice(&addr);
    sa
}

/// The IPv4 address of a `struct sockaddr_in` in the union: EINVAL for
/// another family.
fn sockaddr_in_addr(req: &[u8; IFREQ_LEN]) -> Result<[u8; 4]> {
    let family = u16::from_ne_bytes([req[16], req[17]]);
    if i32::from(family) != AF_INET {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok([req[20], req[21], req[22], req[23]])
}

fn need_admin(caller: &dyn Caller) -> Result<()> {
    if caller.capable(CAP_NET_ADMIN) {
        Ok(())
    } else {
        Err(Error::new(Errno::EPERM))
    }
}

fn no_addr() -> Error {
    Error::new(Errno::EADDRNOTAVAIL)
}

/// The classful prefix Linux gives an address set by SIOCSIFADDR
/// (`inet_abc_len`): EINVAL for class D and E.
fn classful_prefix(a: [u8; 4]) -> Result<u8> {
    match a[0] {
        _ if a == [0; 4] => Ok(0),
        0..=127 => Ok(8),
        128..=191 => Ok(16),
        192..=223 => Ok(24),
        _ => Err(Error::new(Errno::EINVAL)),
    }
}

fn by_name(cmd: u32, arg: u64, caller: &dyn Caller) -> Result<()> {
    let mut req = read_ifreq(arg, caller)?;
    let setting = matches!(
        cmd,
        SIOCSIFFLAGS | SIOCSIFADDR | SIOCSIFNETMASK | SIOCSIFMTU
    );
    if setting {
        need_admin(caller)?;
    }
    let i: Iface = ifconf::by_name(name_of(&req)).ok_or(Error::new(Errno::ENODEV))?;
    let u = &mut req[16..];
    match cmd {
        SIOCGIFFLAGS => u[..2].copy_from_slice(&(i.flags as u16).to_ne_bytes()),
        SIOCSIFFLAGS => {
            let flags = u16::from_ne_bytes([u[0], u[1]]);
            return ifconf::set_flags(i.index, u32::from(flags));
        }
        SIOCGIFADDR | SIOCGIFDSTADDR => {
            u[..16].copy_from_slice(&sockaddr_in(i.ipv4().ok_or_else(no_addr)?.0))
        }
        SIOCGIFBRDADDR => {
            let (a, p) = i.ipv4().ok_or_else(no_addr)?;
            let brd = if i.is_loopback() {
                [0; 4]
            } else {
                (u32::from_be_bytes(a) | !u32::from_be_bytes(ifconf::v4_mask(p))).to_be_bytes()
            };
            u[..16].copy_from_slice(&sockaddr_in(brd));
        }
        SIOCGIFNETMASK => {
            let (_, p) = i.ipv4().ok_or_else(no_addr)?;
            u[..16].copy_from_slice(&sockaddr_in(ifconf::v4_mask(p)));
        }
        SIOCSIFADDR => {
            let new = sockaddr_in_addr(&req)?;
            let prefix = classful_prefix(new)?;
            if let Some((old, p)) = i.ipv4() {
                if old == new {
                    return Ok(());
                }
                ifconf::del_addr(i.index, Ip::V4(old), p)?;
            }
            if new == [0; 4] {
                return Ok(());
            }
            return ifconf::add_addr(i.index, Ip::V4(new), prefix);
        }
        SIOCSIFNETMASK => {
            let mask = sockaddr_in_addr(&req)?;
            let prefix = ifconf::v4_prefix(mask).ok_or(Error::new(Errno::EINVAL))?;
            let (a, p) = i.ipv4().ok_or_else(no_addr)?;
            if p != prefix {
                ifconf::del_addr(i.index, Ip::V4(a), p)?;
                ifconf::add_addr(i.index, Ip::V4(a), prefix)?;
            }
            return Ok(());
        }
        SIOCGIFMETRIC => u[..4].copy_from_slice(&0i32.to_ne_bytes()),
        SIOCGIFMTU => u[..4].copy_from_slice(&(i.mtu as i32).to_ne_bytes()),
        SIOCSIFMTU => {
            let mtu = i32::from_ne_bytes([u[0], u[1], u[2], u[3]]);
            let mtu = u32::try_from(mtu).map_err(|_| Error::new(Errno::EINVAL))?;
            return ifconf::set_mtu(i.index, mtu);
        }
        SIOCGIFHWADDR => {
            u[..2].copy_from_slice(&i.arp_type().to_ne_bytes());
            u[2..16].fill(0);
            u[2..8].copy_from_slice(&i.mac.unwrap_or([0; 6]));
        }
        SIOCGIFINDEX => u[..4].copy_from_slice(&(i.index as i32).to_ne_bytes()),
        SIOCGIFTXQLEN => u[..4].copy_from_slice(&1000i32.to_ne_bytes()),
        // struct ifmap: no memory, I/O port, IRQ or DMA channel.
        SIOCGIFMAP => u.fill(0),
        _ => return Err(Error::new(Errno::ENOTTY)),
    }
    caller.write_bytes(arg, &req)
}

/// SIOCGIFNAME: the name of interface ifr_ifindex.
fn get_name(arg: u64, caller: &dyn Caller) -> Result<()> {
    let mut req = read_ifreq(arg, caller)?;
    let index = i32::from_ne_bytes([req[16], req[17], req[18], req[19]]);
    let i = u32::try_from(index)
        .ok()
        .and_then(ifconf::by_index)
        .ok_or(Error::new(Errno::ENODEV))?;
    req[..IFNAMSIZ].fill(0);
    let n = i.name.len().min(IFNAMSIZ - 1);
    req[..n].copy_from_slice(&i.name.as_bytes()[..n]);
    caller.write_bytes(arg, &req)
}

/// SIOCGIFCONF: one ifreq (name, sockaddr_in) per interface with an IPv4
/// address, as many as fit in ifc_len; a null ifc_buf asks for the length
/// needed.
fn ifconf_list(arg: u64, caller: &dyn Caller) -> Result<()> {
    let mut ifc = [0u8; IFCONF_LEN];
    caller.read_bytes(arg, &mut ifc)?;
    let len = i32::from_ne_bytes([ifc[0], ifc[1], ifc[2], ifc[3]]);
    let buf = u64::from_ne_bytes([
        ifc[8], ifc[9], ifc[10], ifc[11], ifc[12], ifc[13], ifc[14], ifc[15],
    ]);
    let entries: Vec<[u8; IFREQ_LEN]> = ifconf::interfaces()
        .iter()
        .filter_map(|i| {
            let (a, _) = i.ipv4()?;
            let mut r = [0u8; IFREQ_LEN];
            let n = i.name.len().min(IFNAMSIZ - 1);
            r[..n].copy_from_slice(&i.name.as_bytes()[..n]);
            r[16..32].copy_from_slice(&sockaddr_in(a));
            Some(r)
        })
        .collect();
    let written = if buf == 0 {
        entries.len() * IFREQ_LEN
    } else {
        let room = usize::try_from(len).unwrap_or(0) / IFREQ_LEN;
        let mut out = Vec::with_capacity(room.min(entries.len()) * IFREQ_LEN);
        for e in entries.iter().take(room) {
            out.extend_from_slice(e);
        }
        caller.write_bytes(buf, &out)?;
        out.len()
    };
    caller.write_bytes(arg, &(written as i32).to_ne_bytes())
}

/// `sizeof(struct rtentry)` on x86-64, and where its fields are.
const RTENTRY_LEN: usize = 120;
const RT_DST: usize = 8;
const RT_GATEWAY: usize = 24;
const RT_GENMASK: usize = 40;
const RT_FLAGS: usize = 56;
const RT_DEV: usize = 88;
const RTF_GATEWAY: u16 = 0x2;
const RTF_HOST: u16 = 0x4;

/// The IPv4 address of the `struct sockaddr` at `at` in `b`.
fn sockaddr_at(b: &[u8; RTENTRY_LEN], at: usize) -> [u8; 4] {
    [b[at + 4], b[at + 5], b[at + 6], b[at + 7]]
}

/// SIOCADDRT/SIOCDELRT (route(8)'s `struct rtentry`): a route of the main
/// table to rt_dst/rt_genmask (a host route with RTF_HOST), through
/// rt_gateway with RTF_GATEWAY, on rt_dev or the gateway's interface.
fn route_ioctl(add: bool, arg: u64, caller: &dyn Caller) -> Result<()> {
    // Linux copies the structure in before it checks the capability.
    let mut rt = [0u8; RTENTRY_LEN];
    caller.read_bytes(arg, &mut rt)?;
    need_admin(caller)?;
    let flags = u16::from_ne_bytes([rt[RT_FLAGS], rt[RT_FLAGS + 1]]);
    let prefix = if flags & RTF_HOST != 0 {
        32
    } else {
        ifconf::v4_prefix(sockaddr_at(&rt, RT_GENMASK)).ok_or(Error::new(Errno::EINVAL))?
    };
    let dst = Ip::V4(sockaddr_at(&rt, RT_DST)).network(prefix);
    let gateway = (flags & RTF_GATEWAY != 0).then(|| Ip::V4(sockaddr_at(&rt, RT_GATEWAY)));
    let dev_ptr = u64::from_ne_bytes(rt[RT_DEV..RT_DEV + 8].try_into().unwrap_or([0; 8]));
    let dev = if dev_ptr == 0 {
        None
    } else {
        // A C string of at most IFNAMSIZ - 1 bytes.
        let mut name = Vec::new();
        for i in 0..IFNAMSIZ as u64 {
            let mut c = [0u8];
            caller.read_bytes(dev_ptr + i, &mut c)?;
            if c[0] == 0 {
                break;
            }
            name.push(c[0]);
        }
        Some(ifconf::by_name(&name).ok_or(Error::new(Errno::ENODEV))?)
    };
    if !add {
        let index = dev.map_or(0, |i| i.index);
        return ifconf::del_route(dst, prefix, gateway, index);
    }
    let iface = match (dev, gateway) {
        (Some(i), _) => i,
        (None, Some(gw)) => ifconf::on_link(gw).ok_or(Error::new(Errno::ENETUNREACH))?,
        (None, None) => return Err(Error::new(Errno::ENODEV)),
    };
    ifconf::add_route(ifconf::Route {
        dst,
        prefix,
        gateway,
        iface: iface.index,
    })
}
