//! /sys/block: one directory per disk (size in 512-byte sectors, ro, dev,
//! removable, queue/logical_block_size, queue/hw_sector_size ...) with one
//! directory per partition (size, start, partition, dev, ro), built from
//! the registry each time it is looked at.

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::BlockDevice;
use crate::error::{Errno, Error, Result};
use crate::fs::attr_tree::{self, AttrNode};
use crate::fs::inode::{Inode, dev_major, dev_minor};

/// /sys/block itself.
pub fn block_dir(dev: u64, ino: u64, parent: Arc<dyn Inode>) -> Arc<dyn Inode> {
    attr_tree::root(dev, ino, parent, Kind::Root)
}

#[derive(Clone)]
enum Kind {
    Root,
    Disk(Arc<BlockDevice>),
    Queue(Arc<BlockDevice>),
    Partition(Arc<BlockDevice>),
}

/// An attribute: its name and its text.
type AttrFile = (&'static str, String);

fn device_attrs(d: &BlockDevice) -> Vec<AttrFile> {
    let mut v = Vec::new();
    v.push((
        "dev",
        format!("{}:{}\n", dev_major(d.devt()), dev_minor(d.devt())),
    ));
    v.push(("size", format!("{}\n", d.capacity_sectors())));
    v.push(("ro", format!("{}\n", u8::from(d.read_only()))));
    if d.partno() == 0 {
        v.push(("removable", String::from("0\n")));
    } else {
        v.push(("partition", format!("{}\n", d.partno())));
        v.push(("start", format!("{}\n", d.start_sector())));
    }
    v
}

fn queue_attrs(d: &BlockDevice) -> Vec<AttrFile> {
    let lbs = d.logical_block_size();
    alloc::vec![
        ("hw_sector_size", format!("{lbs}\n")),
        ("logical_block_size", format!("{lbs}\n")),
        ("physical_block_size", format!("{lbs}\n")),
        ("read_ahead_kb", String::from("128\n")),
        ("rotational", String::from("0\n")),
    ]
}

fn attr_names(attrs: Vec<AttrFile>) -> Vec<(String, Option<Kind>)> {
    attrs.into_iter().map(|(n, _)| (String::from(n), None)).collect()
}

impl AttrNode for Kind {
    fn entries(&self) -> Vec<(String, Option<Kind>)> {
        match self {
            Kind::Root => super::devices()
                .into_iter()
                .filter(|d| d.partno() == 0)
                .map(|d| (String::from(d.name()), Some(Kind::Disk(d))))
                .collect(),
            Kind::Disk(d) => {
                let mut v = attr_names(device_attrs(d));
                v.push((String::from("queue"), Some(Kind::Queue(d.clone()))));
                for p in d.partitions() {
                    v.push((String::from(p.name()), Some(Kind::Partition(p))));
                }
                v
            }
            Kind::Queue(d) => attr_names(queue_attrs(d)),
            Kind::Partition(p) => attr_names(device_attrs(p)),
        }
    }

    fn read_attr(&self, name: &str) -> Result<Vec<u8>> {
        let attrs = match self {
            Kind::Root => return Err(Error::new(Errno::ENOENT)),
            Kind::Disk(d) | Kind::Partition(d) => device_attrs(d),
            Kind::Queue(d) => queue_attrs(d),
        };
        let text = attrs.into_iter().find(|(n, _)| *n == name).map(|(_, t)| t);
        Ok(text.unwrap_or_default().into_bytes())
    }
}
