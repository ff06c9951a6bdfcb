//! Interface configuration as the tool interfaces see it (netlink, the
//! SIOC* ioctls, /proc/net, /sys/class/net): plain copies of the
//! interfaces, addresses and routes of the registry, and the changes a
//! tool may ask for. This is the one place that knows the registry's
//! types, so netlink and the ioctls do not.
//!
//! Until the IP stack's registry (`net::iface`) is merged, a small table
//! here stands in for it: the loopback interface with 127.0.0.1/8 and ::1.

use alloc::string::String;
use alloc::vec::Vec;

use frame::sync::{SpinLock, level};

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

// ---- the stand-in registry (replaced by net::iface when it merges) ----

struct Table {
    ifaces: Vec<Iface>,
    routes: Vec<Route>,
}

static TABLE: SpinLock<Option<Table>, { level::NET_STACK }> = SpinLock::new(None);

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock();
    let t = g.get_or_insert_with(|| Table {
        ifaces: alloc::vec![Iface {
            index: 1,
            name: String::from("lo"),
            mac: None,
            mtu: 65536,
            flags: IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP,
            addrs: alloc::vec![(Ip::V4([127, 0, 0, 1]), 8), (Ip::V6(LOOPBACK6), 128)],
            stats: Stats::default(),
        }],
        routes: Vec::new(),
    });
    f(t)
}

const LOOPBACK6: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

fn enodev() -> Error {
    Error::new(Errno::ENODEV)
}

/// Every interface, by index.
pub fn interfaces() -> Vec<Iface> {
    with_table(|t| t.ifaces.clone())
}

/// Every route of the main table.
pub fn routes() -> Vec<Route> {
    with_table(|t| t.routes.clone())
}

/// Turns IFF_UP on or off (the other bits are the interface's own).
pub fn set_up(index: u32, up: bool) -> Result<()> {
    with_table(|t| {
        let i = t
            .ifaces
            .iter_mut()
            .find(|i| i.index == index)
            .ok_or_else(enodev)?;
        let link = IFF_UP | IFF_RUNNING | IFF_LOWER_UP;
        i.flags = if up { i.flags | link } else { i.flags & !link };
        Ok(())
    })
}

/// Sets the MTU: EINVAL outside 68 (IPv4's minimum) .. 65536.
pub fn set_mtu(index: u32, mtu: u32) -> Result<()> {
    if !(68..=65536).contains(&mtu) {
        return Err(Error::new(Errno::EINVAL));
    }
    with_table(|t| {
        let i = t
            .ifaces
            .iter_mut()
            .find(|i| i.index == index)
            .ok_or_else(enodev)?;
        i.mtu = mtu;
        Ok(())
    })
}

/// Adds an address: EEXIST if the interface has it.
pub fn add_addr(index: u32, ip: Ip, prefix: u8) -> Result<()> {
    with_table(|t| {
        let i = t
            .ifaces
            .iter_mut()
            .find(|i| i.index == index)
            .ok_or_else(enodev)?;
        if i.addrs.iter().any(|(a, _)| *a == ip) {
            return Err(Error::new(Errno::EEXIST));
        }
        let at = match ip {
            Ip::V4(_) => i
                .addrs
                .iter()
                .position(|(a, _)| matches!(a, Ip::V6(_)))
                .unwrap_or(i.addrs.len()),
            Ip::V6(_) => i.addrs.len(),
        };
        i.addrs.insert(at, (ip, prefix));
        Ok(())
    })
}

/// Removes an address: EADDRNOTAVAIL if the interface does not have it.
pub fn del_addr(index: u32, ip: Ip, _prefix: u8) -> Result<()> {
    with_table(|t| {
        let i = t
            .ifaces
            .iter_mut()
            .find(|i| i.index == index)
            .ok_or_else(enodev)?;
        let at = i
            .addrs
            .iter()
            .position(|(a, _)| *a == ip)
            .ok_or(Error::new(Errno::EADDRNOTAVAIL))?;
        i.addrs.remove(at);
        Ok(())
    })
}

/// Adds a route: EEXIST for the same destination.
pub fn add_route(r: Route) -> Result<()> {
    with_table(|t| {
        if !t.ifaces.iter().any(|i| i.index == r.iface) {
            return Err(enodev());
        }
        if t.routes
            .iter()
            .any(|x| x.dst == r.dst && x.prefix == r.prefix)
        {
            return Err(Error::new(Errno::EEXIST));
        }
        t.routes.push(r);
        Ok(())
    })
}

/// Removes the route to `dst/prefix`: ESRCH if there is none.
pub fn del_route(dst: Ip, prefix: u8) -> Result<()> {
    with_table(|t| {
        let at = t
            .routes
            .iter()
            .position(|x| x.dst == dst && x.prefix == prefix)
            .ok_or(Error::new(Errno::ESRCH))?;
        t.routes.remove(at);
        Ok(())
    })
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

/// The main routing table as tools see it: the prefix routes of the
/// addresses of interfaces that are up (Linux adds them as "proto
/// kernel"; `true`), then the table's own routes (`false`).
pub fn main_table() -> Vec<(Route, bool)> {
    let table = routes();
    let mut out = Vec::new();
    for i in interfaces() {
        if i.is_loopback() || i.flags & IFF_UP == 0 {
            continue;
        }
        for (ip, prefix) in &i.addrs {
            let r = Route {
                dst: ip.network(*prefix),
                prefix: *prefix,
                gateway: None,
                iface: i.index,
            };
            let listed = table.iter().any(|x| x.dst == r.dst && x.prefix == r.prefix);
            if !ip.is_link_local() && !listed && !out.iter().any(|(x, _)| *x == r) {
                out.push((r, true));
            }
        }
    }
    out.extend(table.into_iter().map(|r| (r, false)));
    out
}
