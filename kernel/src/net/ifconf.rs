//! Interface configuration as the tool interfaces see it (netlink, the
//! SIOC* ioctls, /proc/net, /sys/class/net): plain copies of the
//! interfaces, addresses and routes of the registry, and the changes a
//! tool may ask for. This is the one place that knows the registry's
//! types, so netlink and the ioctls do not.

use alloc::string::String;
use alloc::vec::Vec;

use core::net::{Ipv4Addr, Ipv6Addr};

use smoltcp::wire::IpAddress;

use super::iface;
use crate::error::{Errno, Error, Result};

pub const IFF_UP: u32 = 0x1;
pub const IFF_BROADCAST: u32 = 0x2;
pub const IFF_LOOPBACK: u32 = 0x8;
pub const IFF_RUNNING: u32 = 0x40;
pub const IFF_NOARP: u32 = 0x80;
pub const IFF_PROMISC: u32 = 0x100;
pub const IFF_MULTICAST: u32 = 0x1000;
pub const IFF_LOWER_UP: u32 = 0x10000;

/// Linux's IFNAMSIZ: a name and its NUL.
pub const IFNAMSIZ: usize = 16;

/// An IP address of either family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ip {
    V4([u8; 4]),
    V6([u8; 16]),
}

impl Ip {
    /// AF_INET or AF_INET6.
    pub fn family(&self) -> i32 {
        match self {
            Ip::V4(_) => super::AF_INET,
            Ip::V6(_) => super::AF_INET6,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Ip::V4(a) => a,
            Ip::V6(a) => a,
        }
    }

    /// The address of `family` in `b` (4 or 16 bytes; more are ignored, as
    /// Linux reads only the address's size from an attribute).
    pub fn from_bytes(family: i32, b: &[u8]) -> Option<Ip> {
        match family {
            super::AF_INET => Some(Ip::V4(b.get(..4)?.try_into().ok()?)),
            super::AF_INET6 => Some(Ip::V6(b.get(..16)?.try_into().ok()?)),
            _ => None,
        }
    }

    /// Longest prefix of the family (32 or 128).
    pub fn max_prefix(family: i32) -> u8 {
        if family == super::AF_INET6 { 128 } else { 32 }
    }

    /// The address with everything past `prefix` bits cleared.
    pub fn network(&self, prefix: u8) -> Ip {
        fn mask<const N: usize>(mut a: [u8; N], prefix: u8) -> [u8; N] {
            for (i, b) in a.iter_mut().enumerate() {
                let bits = (prefix as usize).saturating_sub(i * 8).min(8);
                *b &= !(0xffu16 >> bits) as u8;
            }
            a
        }
        match *self {
            Ip::V4(a) => Ip::V4(mask(a, prefix)),
            Ip::V6(a) => Ip::V6(mask(a, prefix)),
        }
    }

    /// Whether the address is a loopback one (127/8, ::1).
    pub fn is_loopback(&self) -> bool {
        match self {
            Ip::V4(a) => a[0] == 127,
            Ip::V6(a) => *a == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        }
    }

    /// Whether the address is IPv6 link-local (fe80::/10).
    pub fn is_link_local(&self) -> bool {
        matches!(self, Ip::V6(a) if a[0] == 0xfe && a[1] & 0xc0 == 0x80)
    }
}

/// The 4-byte netmask of an IPv4 prefix length.
pub fn v4_mask(prefix: u8) -> [u8; 4] {
    let bits = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix.min(32)))
    };
    bits.to_be_bytes()
}

/// The prefix length of a netmask, if it is contiguous.
pub fn v4_prefix(mask: [u8; 4]) -> Option<u8> {
    let m = u32::from_be_bytes(mask);
    let ones = m.leading_ones();
    (m.checked_shl(ones).unwrap_or(0) == 0).then_some(ones as u8)
}

/// Traffic counters of an interface.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

/// An interface as it is now.
#[derive(Clone, Debug)]
pub struct Iface {
    pub index: u32,
    pub name: String,
    /// The hardware address; None for loopback (reported as zeros).
    pub mac: Option<[u8; 6]>,
    pub mtu: u32,
    /// IFF_* (with IFF_RUNNING and IFF_LOWER_UP when the link is up).
    pub flags: u32,
    /// (address, prefix length), IPv4 before IPv6.
    pub addrs: Vec<(Ip, u8)>,
    pub stats: Stats,
}

impl Iface {
    pub fn is_loopback(&self) -> bool {
        self.flags & IFF_LOOPBACK != 0
    }

    /// ARPHRD_LOOPBACK or ARPHRD_ETHER (the `type` of /sys/class/net).
    pub fn arp_type(&self) -> u16 {
        if self.is_loopback() { 772 } else { 1 }
    }

    /// The first IPv4 address and its prefix.
    pub fn ipv4(&self) -> Option<([u8; 4], u8)> {
        self.addrs.iter().find_map(|(ip, p)| match ip {
            Ip::V4(a) => Some((*a, *p)),
            Ip::V6(_) => None,
        })
    }
}

/// A route of the main table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub dst: Ip,
    pub prefix: u8,
    pub gateway: Option<Ip>,
    /// The outgoing interface's index.
    pub iface: u32,
}

// ---- the registry (net::iface), in these types ----

/// A registry (smoltcp) address in these terms.
pub fn ip_of(a: &IpAddress) -> Ip {
    match a {
        IpAddress::Ipv4(v4) => Ip::V4(v4.octets()),
        IpAddress::Ipv6(v6) => Ip::V6(v6.octets()),
    }
}

fn ip_to(ip: Ip) -> IpAddress {
    match ip {
        Ip::V4(a) => IpAddress::Ipv4(Ipv4Addr::from(a)),
        Ip::V6(a) => IpAddress::Ipv6(Ipv6Addr::from(a)),
    }
}

fn route_of(r: &iface::Route) -> Route {
    Route {
        dst: ip_of(&r.dst),
        prefix: r.prefix,
        gateway: r.gateway.as_ref().map(ip_of),
        iface: r.iface,
    }
}

/// Every interface, by index.
pub fn interfaces() -> Vec<Iface> {
    iface::interfaces()
        .into_iter()
        .map(|i| {
            let s = i.stats;
            Iface {
                index: i.index,
                name: i.name,
                mac: i.mac,
                mtu: u32::try_from(i.mtu).unwrap_or(u32::MAX),
                flags: i.flags,
                addrs: i.addrs.iter().map(|(a, p)| (ip_of(a), *p)).collect(),
                stats: Stats {
                    rx_packets: s.rx_packets,
                    tx_packets: s.tx_packets,
                    rx_bytes: s.rx_bytes,
                    tx_bytes: s.tx_bytes,
                    rx_errors: s.rx_errors,
                    tx_errors: s.tx_errors,
                    rx_dropped: s.rx_dropped,
                    tx_dropped: s.tx_dropped,
                },
            }
        })
        .collect()
}

/// The main routing table as tools see it, each route with whether it
/// is the prefix route of an interface's address (Linux's "proto
/// kernel", `true`) or was added (`false`).
pub fn main_table() -> Vec<(Route, bool)> {
    let ifaces = interfaces();
    iface::routes()
        .iter()
        .map(route_of)
        .map(|r| {
            let connected = r.gateway.is_none()
                && ifaces.iter().any(|i| {
                    i.index == r.iface
                        && i.addrs
                            .iter()
                            .any(|(a, p)| *p == r.prefix && a.network(*p) == r.dst)
                });
            (r, connected)
        })
        .collect()
}

/// Sets the settable IFF_* flags (IFF_UP, IFF_PROMISC...); the others
/// are the interface's own.
pub fn set_flags(index: u32, flags: u32) -> Result<()> {
    iface::set_flags(index, flags)
}

/// Turns IFF_UP on or off, keeping the other flags.
pub fn set_up(index: u32, up: bool) -> Result<()> {
    let i = by_index(index).ok_or_else(enodev)?;
    set_flags(
        index,
        if up {
            i.flags | IFF_UP
        } else {
            i.flags & !IFF_UP
        },
    )
}

/// Sets the MTU (EINVAL outside what the device carries).
pub fn set_mtu(index: u32, mtu: u32) -> Result<()> {
    iface::set_mtu(index, mtu as usize)
}

/// Adds an address: EEXIST if the interface has it.
pub fn add_addr(index: u32, ip: Ip, prefix: u8) -> Result<()> {
    iface::add_addr(index, ip_to(ip), prefix)
}

/// Removes an address: EADDRNOTAVAIL if the interface does not have it.
pub fn del_addr(index: u32, ip: Ip, prefix: u8) -> Result<()> {
    iface::del_addr(index, ip_to(ip), prefix)
}

/// Adds a route: EEXIST for the same destination on the interface.
pub fn add_route(r: Route) -> Result<()> {
    iface::add_route(iface::Route {
        dst: ip_to(r.dst),
        prefix: r.prefix,
        gateway: r.gateway.map(ip_to),
        iface: r.iface,
    })
}

/// Removes an added route to `dst/prefix` (through `gateway` and on
/// `index` when given): ESRCH if there is none.
pub fn del_route(dst: Ip, prefix: u8, gateway: Option<Ip>, index: u32) -> Result<()> {
    iface::del_route(&iface::Route {
        dst: ip_to(dst),
        prefix,
        gateway: gateway.map(ip_to),
        iface: index,
    })
}

fn enodev() -> Error {
    Error::new(Errno::ENODEV)
}

// ---- lookups shared by the interfaces ----

/// The interface named `name`.
pub fn by_name(name: &[u8]) -> Option<Iface> {
    interfaces().into_iter().find(|i| i.name.as_bytes() == name)
}

pub fn by_index(index: u32) -> Option<Iface> {
    interfaces().into_iter().find(|i| i.index == index)
}

/// The interface whose subnet holds `ip` (for a route given only a
/// gateway).
pub fn on_link(ip: Ip) -> Option<Iface> {
    interfaces().into_iter().find(|i| {
        i.addrs
            .iter()
            .any(|(a, p)| a.family() == ip.family() && a.network(*p) == ip.network(*p))
    })
}
