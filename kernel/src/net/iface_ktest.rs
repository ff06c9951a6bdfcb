//! `ktest=net_iface`: the interface registry and the stack's device path
//! against a fake NIC: `lo` as boot leaves it, `ip=` parsing, registering
//! `eth0`, flags, addresses, routes, MTU and their errors, an ARP request
//! leaving through the driver, and hostile frames (runts, giants, garbage)
//! counted and dropped without a panic. Each failed check prints a line.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use frame::sync::SpinLock;
use smoltcp::wire::{IpAddress, Ipv4Address, Ipv6Address};

use super::device::{NetDriver, register_netdev};
use super::iface::{self, IFF_LOOPBACK, IFF_RUNNING, IFF_UP, IpParam, Route};
use crate::error::{Errno, Error, Result};

struct FakeNic {
    sent: SpinLock<Vec<Vec<u8>>, 38>,
    inbox: SpinLock<VecDeque<Vec<u8>>, 38>,
}

impl NetDriver for FakeNic {
    fn mac(&self) -> [u8; 6] {
        [0x52, 0x54, 0, 0x12, 0x34, 0x56]
    }
    fn mtu(&self) -> usize {
        1500
    }
    fn link_up(&self) -> bool {
        true
    }
    fn transmit(&self, frame: &[u8]) -> Result<()> {
        let mut s = self.sent.lock();
        if s.len() >= 64 {
            return Err(Error::new(Errno::EAGAIN));
        }
        s.push(frame.to_vec());
        Ok(())
    }
    fn receive(&self) -> Option<Vec<u8>> {
        self.inbox.lock().pop_front()
    }
}

/// A caller for socket calls made from kernel code: no user memory, no
/// signals.
struct KCaller;

impl crate::fs::stream::Caller for KCaller {
    fn read_bytes(&self, _addr: u64, _buf: &mut [u8]) -> Result<()> {
        Err(Error::new(Errno::EFAULT))
    }
    fn write_bytes(&self, _addr: u64, _data: &[u8]) -> Result<()> {
        Err(Error::new(Errno::EFAULT))
    }
    fn pgid(&self) -> u32 {
        0
    }
    fn sid(&self) -> u32 {
        0
    }
    fn wait(
        &self,
        queue: &frame::sync::WaitQueue,
        ready: &mut dyn FnMut() -> bool,
        deadline_ns: u64,
    ) -> Result<bool> {
        Ok(queue
            .wait_until_or_deadline(|| ready().then_some(()), deadline_ns)
            .is_some())
    }
    fn raise(&self, _signo: u32) {}
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddress {
    IpAddress::Ipv4(Ipv4Address::new(a, b, c, d))
}

/// Runs the checks; returns how many failed.
pub fn run() -> usize {
    let mut failed = 0;
    let mut check = |ok: bool, what: &str| {
        if !ok {
            frame::println!("  check failed: {what}");
            failed += 1;
        }
    };
    let errno = |r: Result<()>| r.err().map(|e| e.errno());

    // lo at boot.
    let ifs = iface::interfaces();
    let lo = ifs.iter().find(|i| i.name == "lo");
    check(lo.is_some_and(|l| l.index == 1), "lo has index 1");
    if let Some(lo) = lo {
        check(
            lo.flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING) == IFF_UP | IFF_LOOPBACK | IFF_RUNNING,
            "lo is up, loopback, running",
        );
        check(
            lo.addrs.contains(&(v4(127, 0, 0, 1), 8)),
            "lo has 127.0.0.1/8",
        );
        check(
            lo.addrs
                .contains(&(IpAddress::Ipv6(Ipv6Address::LOCALHOST), 128)),
            "lo has ::1/128",
        );
        check(lo.mtu == 65536, "lo's MTU is 65536");
    }
    check(iface::index_of("lo") == Some(1), "if_nametoindex(lo)");

    // ip= parsing (Linux's static form).
    let p = IpParam::parse("10.0.2.15::10.0.2.2:255.255.255.0::eth0:off");
    check(
        p == Some(IpParam {
            addr: Some(Ipv4Address::new(10, 0, 2, 15)),
            gateway: Some(Ipv4Address::new(10, 0, 2, 2)),
            prefix: 24,
            device: Some("eth0".into()),
        }),
        "ip= static form",
    );
    check(IpParam::parse("dhcp").is_none(), "ip=dhcp is not static");
    check(
        IpParam::parse("10.0.2.15::10.0.2.2:255.0.255.0::eth0:off").is_none(),
        "ip= with a non-contiguous mask",
    );
    check(
        IpParam::parse("300.1.1.1").is_none(),
        "ip= with a bad address",
    );
    check(
        IpParam::parse("192.168.1.9").is_some_and(|p| p.prefix == 24 && p.device.is_none()),
        "ip= class default mask",
    );
    check(
        IpParam::from_cmdline("console=ttyS0 ip=10.1.2.3:::255.255.0.0::eth1:off -- ip=9.9.9.9")
            .is_some_and(|p| p.prefix == 16),
        "ip= from a command line",
    );

    // Registry errors on lo and unknown interfaces.
    check(
        errno(iface::set_flags(999, IFF_UP)) == Some(Errno::ENODEV),
        "set_flags on an unknown index: ENODEV",
    );
    check(
        errno(iface::add_addr(1, v4(127, 0, 0, 1), 8)) == Some(Errno::EEXIST),
        "add_addr duplicate: EEXIST",
    );
    check(
        errno(iface::add_addr(1, v4(127, 0, 0, 9), 33)) == Some(Errno::EINVAL),
        "add_addr prefix 33: EINVAL",
    );
    check(
        errno(iface::del_addr(1, v4(127, 9, 9, 9), 8)) == Some(Errno::EADDRNOTAVAIL),
        "del_addr missing: EADDRNOTAVAIL",
    );
    check(
        errno(iface::set_mtu(1, 10)) == Some(Errno::EINVAL),
        "MTU 10: EINVAL",
    );
    check(
        errno(iface::set_mtu(1, 70000)) == Some(Errno::EINVAL),
        "MTU 70000 on lo: EINVAL",
    );
    check(
        errno(iface::set_mac(1, [2, 0, 0, 0, 0, 1])) == Some(Errno::EOPNOTSUPP),
        "set_mac on lo: EOPNOTSUPP",
    );

    // A fake NIC becomes eth0, down and unconfigured (no ip= here).
    let nic = Arc::new(FakeNic {
        sent: SpinLock::new(Vec::new()),
        inbox: SpinLock::new(VecDeque::new()),
    });
    let h = match register_netdev(nic.clone()) {
        Ok(h) => h,
        Err(e) => {
            frame::println!("  check failed: register_netdev: {e:?}");
            return failed + 1;
        }
    };
    let eth = iface::interfaces().into_iter().find(|i| i.index == h.index);
    check(
        eth.as_ref()
            .is_some_and(|e| e.name == "eth0" && e.mac == Some(nic.mac()) && e.mtu == 1500),
        "eth0 registered with its MAC and MTU",
    );
    check(
        eth.as_ref().is_some_and(|e| e.flags & IFF_UP == 0),
        "eth0 starts down",
    );
    check(
        iface::add_addr(h.index, v4(10, 0, 2, 15), 24).is_ok(),
        "add 10.0.2.15/24",
    );
    check(iface::set_flags(h.index, IFF_UP).is_ok(), "eth0 up");
    let r = iface::routes();
    check(
        r.iter().any(|r| {
            r.dst == v4(10, 0, 2, 0) && r.prefix == 24 && r.gateway.is_none() && r.iface == h.index
        }),
        "connected route 10.0.2.0/24",
    );
    let default = Route {
        dst: v4(0, 0, 0, 0),
        prefix: 0,
        gateway: Some(v4(10, 0, 2, 2)),
        iface: h.index,
    };
    check(iface::add_route(default).is_ok(), "add default route");
    check(
        errno(iface::add_route(default)) == Some(Errno::EEXIST),
        "duplicate route: EEXIST",
    );
    check(
        errno(iface::add_route(Route {
            gateway: Some(IpAddress::Ipv6(Ipv6Address::LOCALHOST)),
            ..default
        })) == Some(Errno::EINVAL),
        "route with a v6 gateway for a v4 net: EINVAL",
    );
    check(
        errno(iface::add_route(Route {
            iface: 77,
            ..default
        })) == Some(Errno::ENODEV),
        "route on an unknown interface: ENODEV",
    );
    check(iface::routes().contains(&default), "default route listed");
    check(iface::set_mtu(h.index, 1400).is_ok(), "eth0 MTU 1400");
    check(
        errno(iface::set_mtu(h.index, 9000)) == Some(Errno::EINVAL),
        "eth0 MTU above the driver's: EINVAL",
    );
    check(
        iface::set_mtu(h.index, 1500).is_ok(),
        "eth0 MTU back to 1500",
    );

    // Hostile frames: a runt, a giant, and 40 bytes of garbage with an
    // Ethernet header. All are dropped; the first two are counted errors.
    {
        let mut inbox = nic.inbox.lock();
        inbox.push_back(vec![0xff; 5]);
        inbox.push_back(vec![0xab; 4000]);
        let mut junk = vec![0xff; 6];
        junk.extend_from_slice(&[2, 0, 0, 0, 0, 9, 0x08, 0x00]);
        junk.extend_from_slice(&[0x45; 40]);
        inbox.push_back(junk);
    }
    h.notify();
    iface::poll_now();
    let eth = iface::interfaces().into_iter().find(|i| i.index == h.index);
    check(
        eth.as_ref()
            .is_some_and(|e| e.stats.rx_errors == 2 && e.stats.rx_packets == 1),
        "runt and giant counted as errors, the rest received",
    );
    check(nic.inbox.lock().is_empty(), "every hostile frame consumed");

    // A UDP datagram to the gateway's network needs ARP: a request for
    // 10.0.2.2 leaves through the driver.
    let sent_before = nic.sent.lock().len();
    {
        let caller = KCaller;
        if let Ok(s) = super::create_socket(super::AF_INET, super::SOCK_DGRAM, 0, &caller) {
            let to = super::addr::SockAddr::Inet(super::addr::InetAddr {
                addr: [10, 0, 2, 2],
                port: 9,
            });
            let meta = super::socket::SendMeta {
                addr: Some(to),
                control: Vec::new(),
            };
            let data: &[u8] = b"x";
            check(
                s.send(&data, meta, 0, true, &caller).is_ok(),
                "UDP send to 10.0.2.2",
            );
        } else {
            check(false, "UDP socket");
        }
    }
    iface::poll_now();
    let sent = nic.sent.lock();
    let arp = sent[sent_before.min(sent.len())..]
        .iter()
        .any(|f| f.len() >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[38..42] == [10, 0, 2, 2]);
    drop(sent);
    check(arp, "ARP request for 10.0.2.2 transmitted");

    // Down again: no route through eth0.
    check(iface::del_route(&default).is_ok(), "delete default route");
    check(
        errno(iface::del_route(&default)) == Some(Errno::ESRCH),
        "delete it again: ESRCH",
    );
    check(
        iface::del_addr(h.index, v4(10, 0, 2, 15), 24).is_ok(),
        "delete 10.0.2.15",
    );
    check(iface::set_flags(h.index, 0).is_ok(), "eth0 down");
    check(
        !iface::routes().iter().any(|r| r.iface == h.index),
        "no routes through a down eth0",
    );
    failed
}
