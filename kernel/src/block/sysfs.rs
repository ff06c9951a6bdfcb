//! /sys/block: one directory per disk (size in 512-byte sectors, ro, dev,
//! removable, queue/logical_block_size, queue/hw_sector_size ...) with one
//! directory per partition (size, start, partition, dev, ro), built from
//! the registry each time it is looked at.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::BlockDevice;
use crate::error::{Errno, Error, Result};
use crate::fs::inode::{FileType, Inode, dev_major, dev_minor};
use crate::fs::pseudo::{Attr, DirSource, FIRST_KEY, GenDir, GenFile, Item, tree_ino};

/// /sys/block itself.
pub fn block_dir(dev: u64, ino: u64, parent: Arc<dyn Inode>) -> Arc<dyn Inode> {
    GenDir::new(
        Attr::root_owned(dev, ino, 0o755),
        Dir {
            dev,
            ino,
            parent,
            kind: Kind::Root,
        },
    )
}

#[derive(Clone)]
enum Kind {
    Root,
    Disk(Arc<BlockDevice>),
    Queue(Arc<BlockDevice>),
    Partition(Arc<BlockDevice>),
}

struct Dir {
    dev: u64,
    ino: u64,
    parent: Arc<dyn Inode>,
    kind: Kind,
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

impl Dir {
    /// (name, directory kind or None for an attribute file).
    fn entries(&self) -> Vec<(String, Option<Kind>)> {
        match &self.kind {
            Kind::Root => super::devices()
                .into_iter()
                .filter(|d| d.partno() == 0)
                .map(|d| (String::from(d.name()), Some(Kind::Disk(d))))
                .collect(),
            Kind::Disk(d) => {
                let mut v: Vec<(String, Option<Kind>)> = device_attrs(d)
                    .into_iter()
                    .map(|(n, _)| (String::from(n), None))
                    .collect();
                v.push((String::from("queue"), Some(Kind::Queue(d.clone()))));
                for p in d.partitions() {
                    v.push((String::from(p.name()), Some(Kind::Partition(p))));
                }
                v
            }
            Kind::Queue(d) => queue_attrs(d)
                .into_iter()
                .map(|(n, _)| (String::from(n), None))
                .collect(),
            Kind::Partition(p) => device_attrs(p)
                .into_iter()
                .map(|(n, _)| (String::from(n), None))
                .collect(),
        }
    }

    fn attr_text(&self, name: &str) -> Option<String> {
        let attrs = match &self.kind {
            Kind::Root => return None,
            Kind::Disk(d) | Kind::Partition(d) => device_attrs(d),
            Kind::Queue(d) => queue_attrs(d),
        };
        attrs.into_iter().find(|(n, _)| *n == name).map(|(_, t)| t)
    }
}

impl DirSource for Dir {
    fn list(&self) -> Result<Vec<Item>> {
        Ok(self
            .entries()
            .into_iter()
            .zip(FIRST_KEY..)
            .map(|((name, kind), key)| Item {
                key,
                ino: tree_ino(self.ino, &name),
                file_type: if kind.is_some() {
                    FileType::Directory
                } else {
                    FileType::Regular
                },
                name,
            })
            .collect())
    }

    fn find(&self, this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        let ino = tree_ino(self.ino, name);
        let (_, kind) = self
            .entries()
            .into_iter()
            .find(|(n, _)| n == name)
            .ok_or(Error::new(Errno::ENOENT))?;
        Ok(match kind {
            Some(kind) => GenDir::new(
                Attr::root_owned(self.dev, ino, 0o755),
                Dir {
                    dev: self.dev,
                    ino,
                    parent: this.clone(),
                    kind,
                },
            ),
            None => {
                // The value is read when the file is read, not when found.
                let me = Dir {
                    dev: self.dev,
                    ino: self.ino,
                    parent: self.parent.clone(),
                    kind: self.kind.clone(),
                };
                let name = String::from(name);
                GenFile::new(
                    Attr::root_owned(self.dev, ino, 0o444),
                    Box::new(move || Ok(me.attr_text(&name).unwrap_or_default().into_bytes())),
                )
            }
        })
    }

    fn parent(&self, _this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(self.parent.clone())
    }
}
