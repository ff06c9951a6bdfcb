//! /sys/class/net: one directory per interface with the attributes tools
//! read (address, mtu, flags, operstate, ifindex, type...) and its
//! statistics/ counters, built from the interfaces each time it is looked
//! at (sysfs-class-net in Linux's Documentation/ABI).

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::ifconf::{self, Iface};
use crate::error::{Errno, Error, Result};
use crate::fs::attr_tree::{self, AttrNode};
use crate::fs::inode::Inode;

/// /sys/class/net itself.
pub fn class_net_dir(dev: u64, ino: u64, parent: Arc<dyn Inode>) -> Arc<dyn Inode> {
    attr_tree::root(dev, ino, parent, Kind::Root)
}

#[derive(Clone, Copy)]
enum Kind {
    Root,
    /// An interface's directory, by index.
    Iface(u32),
    /// Its statistics/ directory.
    Stats(u32),
}

fn mac_text(mac: [u8; 6]) -> String {
    let parts: Vec<String> = mac.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}\n", parts.join(":"))
}

const IFACE_ATTRS: &[&str] = &[
    "addr_len",
    "address",
    "broadcast",
    "flags",
    "ifindex",
    "iflink",
    "mtu",
    "operstate",
    "tx_queue_len",
    "type",
];
const STATS_ATTRS: &[&str] = &[
    "rx_bytes",
    "rx_dropped",
    "rx_errors",
    "rx_packets",
    "tx_bytes",
    "tx_dropped",
    "tx_errors",
    "tx_packets",
];

fn iface_attr(i: &Iface, name: &str) -> Option<String> {
    let up = i.flags & ifconf::IFF_UP != 0;
    Some(match name {
        "addr_len" => String::from("6\n"),
        "address" => mac_text(i.mac.unwrap_or([0; 6])),
        "broadcast" => mac_text(if i.is_loopback() { [0; 6] } else { [0xff; 6] }),
        // Only the bits of the classic 16-bit flags word (net_device.flags).
        "flags" => format!("{:#x}\n", i.flags & 0xffff & !ifconf::IFF_RUNNING),
        "ifindex" | "iflink" => format!("{}\n", i.index),
        "mtu" => format!("{}\n", i.mtu),
        "operstate" => String::from(match (up, i.is_loopback()) {
            (false, _) => "down\n",
            (true, true) => "unknown\n",
            (true, false) => "up\n",
        }),
        "tx_queue_len" => String::from("1000\n"),
        "type" => format!("{}\n", i.arp_type()),
        _ => return None,
    })
}

fn stats_attr(i: &Iface, name: &str) -> Option<String> {
    let s = &i.stats;
    let v = match name {
        "rx_bytes" => s.rx_bytes,
        "rx_dropped" => s.rx_dropped,
        "rx_errors" => s.rx_errors,
        "rx_packets" => s.rx_packets,
        "tx_bytes" => s.tx_bytes,
        "tx_dropped" => s.tx_dropped,
        "tx_errors" => s.tx_errors,
        "tx_packets" => s.tx_packets,
        _ => return None,
    };
    Some(format!("{v}\n"))
}

impl AttrNode for Kind {
    fn entries(&self) -> Vec<(String, Option<Kind>)> {
        let files = |names: &[&str]| {
            names
                .iter()
                .map(|n| (String::from(*n), None))
                .collect::<Vec<_>>()
        };
        match *self {
            Kind::Root => ifconf::interfaces()
                .into_iter()
                .map(|i| (i.name, Some(Kind::Iface(i.index))))
                .collect(),
            Kind::Iface(index) => {
                let mut v = files(IFACE_ATTRS);
                v.push((String::from("statistics"), Some(Kind::Stats(index))));
                v
            }
            Kind::Stats(_) => files(STATS_ATTRS),
        }
    }

    /// ENODEV once the interface is gone.
    fn read_attr(&self, name: &str) -> Result<Vec<u8>> {
        let (index, stats) = match *self {
            Kind::Root => return Err(Error::new(Errno::ENOENT)),
            Kind::Iface(i) => (i, false),
            Kind::Stats(i) => (i, true),
        };
        let i = ifconf::by_index(index).ok_or(Error::new(Errno::ENODEV))?;
        let text = if stats { stats_attr(&i, name) } else { iface_attr(&i, name) };
        Ok(text.unwrap_or_default().into_bytes())
    }
}
