//! /proc/<pid>/net (and /proc/net, a link to self/net): the interface,
//! route and socket tables in Linux's text formats (proc(5); the column
//! layouts are those of net/core/net-procfs.c, net/ipv4/fib_trie.c,
//! net/ipv4/tcp_ipv4.c, net/ipv4/udp.c, net/ipv6/addrconf.c and
//! net/unix/af_unix.c).

use alloc::format;
use alloc::string::String;
use core::fmt::Write;

use crate::fs::pseudo::Node;
use crate::net::ifconf::{self, Ip};
use crate::net::inet;

pub(super) const NET: &[(&str, Node)] = &[
    ("dev", Node::File(dev)),
    ("if_inet6", Node::File(if_inet6)),
    ("route", Node::File(route)),
    ("tcp", Node::File(tcp)),
    ("tcp6", Node::File(tcp6)),
    ("udp", Node::File(udp)),
    ("udp6", Node::File(udp6)),
    ("unix", Node::File(unix)),
];

/// `line` padded with spaces to `width` characters, then a newline
/// (Linux's seq_setwidth/seq_pad for the fixed-width tables).
fn padded(out: &mut String, line: &str, width: usize) {
    let _ = writeln!(out, "{line:<width$}");
}

fn dev() -> String {
    let mut out = String::from(
        "Inter-|   Receive                                                |  Transmit\n \
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n",
    );
    for i in ifconf::interfaces() {
        let s = i.stats;
        let _ = writeln!(
            out,
            "{:>6}:{:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>10} {:>9} {:>8} {:>7} {:>4} {:>4} {:>4} {:>5} {:>7} {:>10}",
            i.name,
            s.rx_bytes,
            s.rx_packets,
            s.rx_errors,
            s.rx_dropped,
            0,
            0,
            0,
            0,
            s.tx_bytes,
            s.tx_packets,
            s.tx_errors,
            s.tx_dropped,
            0,
            0,
            0,
            0
        );
    }
    out
}

/// An IPv4 address as /proc/net prints it: its bytes in memory (network
/// order) read as a little-endian number.
fn hex4(a: [u8; 4]) -> u32 {
    u32::from_le_bytes(a)
}

fn hex16(a: &[u8; 16]) -> String {
    let mut s = String::with_capacity(32);
    for w in a.chunks_exact(4) {
        let _ = write!(s, "{:08X}", u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    }
    s
}

fn if_inet6() -> String {
    let mut out = String::new();
    for i in ifconf::interfaces() {
        for (ip, prefix) in &i.addrs {
            let Ip::V6(a) = ip else { continue };
            // IPV6_ADDR_LOOPBACK 0x10, IPV6_ADDR_LINKLOCAL 0x20, global 0.
            let scope = if ip.is_loopback() {
                0x10
            } else if ip.is_link_local() {
                0x20
            } else {
                0
            };
            let hex: String = a.iter().map(|b| format!("{b:02x}")).collect();
            let _ = writeln!(
                out,
                "{hex} {:02x} {prefix:02x} {scope:02x} {:02x} {:>8}",
                i.index, 0x80, i.name
            );
        }
    }
    out
}

fn route() -> String {
    let mut out = String::new();
    padded(
        &mut out,
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT",
        127,
    );
    for (r, _) in ifconf::main_table() {
        let Ip::V4(dst) = r.dst else { continue };
        let gw = match r.gateway {
            Some(Ip::V4(g)) => Some(g),
            _ => None,
        };
        let Some(iface) = ifconf::by_index(r.iface) else {
            continue;
        };
        // RTF_UP, RTF_GATEWAY, and RTF_HOST for a /32 (fib_flag_trans).
        let flags = 0x1 | if gw.is_some() { 0x2 } else { 0 } | if r.prefix == 32 { 0x4 } else { 0 };
        let line = format!(
            "{}\t{:08X}\t{:08X}\t{:04X}\t{}\t{}\t{}\t{:08X}\t{}\t{}\t{}",
            iface.name,
            hex4(dst),
            hex4(gw.unwrap_or([0; 4])),
            flags,
            0,
            0,
            0,
            hex4(ifconf::v4_mask(r.prefix)),
            0,
            0,
            0
        );
        padded(&mut out, &line, 127);
    }
    out
}

fn endpoint(out: &mut String, (ip, port): (Ip, u16)) {
    match ip {
        Ip::V4(a) => {
            let _ = write!(out, "{:08X}:{port:04X}", hex4(a));
        }
        Ip::V6(a) => {
            let _ = write!(out, "{}:{port:04X}", hex16(&a));
        }
    }
}

fn inet_table(tcp: bool, v6: bool) -> String {
    let head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
    let head6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
    let mut out = String::new();
    match (tcp, v6) {
        (true, false) => padded(&mut out, head, 149),
        (false, false) => padded(&mut out, &format!(" {head} ref pointer drops"), 127),
        (true, true) => {
            out.push_str(head6);
            out.push('\n');
        }
        (false, true) => {
            out.push_str(head6);
            out.push_str(" ref pointer drops\n");
        }
    }
    let proto = match (tcp, v6) {
        (true, false) => "tcp",
        (true, true) => "tcp6",
        (false, false) => "udp",
        (false, true) => "udp6",
    };
    let rows = inet::sockets().into_iter().filter(|r| r.proto == proto);
    for (sl, r) in rows.enumerate() {
        let mut line = if tcp {
            format!("{sl:4}: ")
        } else {
            format!("{sl:5}: ")
        };
        endpoint(&mut line, (ifconf::ip_of(&r.local.0), r.local.1));
        line.push(' ');
        endpoint(&mut line, (ifconf::ip_of(&r.remote.0), r.remote.1));
        let _ = write!(
            line,
            " {:02X} {:08X}:{:08X} 00:00000000 00000000 {:5} {:8} {}",
            r.state, r.tx_queue, r.rx_queue, r.uid, 0, r.inode
        );
        if tcp {
            line.push_str(" 1 0000000000000000 100 0 0 10 0");
        } else {
            line.push_str(" 2 0000000000000000 0");
        }
        match (tcp, v6) {
            (true, false) => padded(&mut out, &line, 149),
            (false, false) => padded(&mut out, &line, 127),
            _ => {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

fn tcp() -> String {
    inet_table(true, false)
}

fn tcp6() -> String {
    inet_table(true, true)
}

fn udp() -> String {
    inet_table(false, false)
}

fn udp6() -> String {
    inet_table(false, true)
}

fn unix() -> String {
    let mut out = String::from("Num       RefCount Protocol Flags    Type St Inode Path\n");
    for r in crate::net::unix::sockets() {
        // The kernel address is hidden from readers (%pK): zeros.
        let _ = write!(
            out,
            "0000000000000000: {:08X} {:08X} {:08X} {:04X} {:02X} {:5}",
            r.refcount, 0, r.flags, r.sock_type, r.state, r.inode
        );
        if let Some(p) = &r.path {
            out.push(' ');
            out.push_str(p);
        }
        out.push('\n');
    }
    out
}
