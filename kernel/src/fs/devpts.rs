//! devpts (pts(4)): the file system of the pty slaves, mounted on
//! /dev/pts. It holds `ptmx` (5:2, like /dev/ptmx: opening it makes a
//! pair) and, while a pair's master is open, its slave `N` (136:N), owned
//! by whoever opened the master, mode 0600 unless mount options say
//! otherwise. Inode numbers are Linux's: 1 for the root, 2 for ptmx, N+3
//! for slave N.
//!
//! There is one instance, like Linux's devpts before per-mount instances:
//! every devpts mount shows the same ptys, and mounting it again with
//! options (`mode=`, `ptmxmode=`, `uid=`, `gid=`) sets them for the nodes
//! made afterwards, as a remount did there.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use frame::sync::{Once, SpinLock, level};

use super::devices::{PTMX, PTS_MAJOR};
use super::inode::{FileType, Inode, Metadata, Timespec, makedev};
use super::mount;
use super::pseudo::{Attr, DirSource, GenDir, Item, boot_time};
use crate::tty::pty::{self, NodeAttr};
use crate::tty::terminal::Tty;
use crate::error::{Errno, Error, Result};

const ROOT_INO: u64 = 1;
const PTMX_INO: u64 = 2;

#[derive(Clone, Copy)]
struct Options {
    /// Mode of new slave nodes.
    mode: u32,
    /// Mode of the ptmx node.
    ptmxmode: u32,
    /// Owner and group of new slave nodes (else the opener's).
    uid: Option<u32>,
    gid: Option<u32>,
}

/// Without options: slaves 0600 and owned by their opener, ptmx 000.
const DEFAULTS: Options = Options {
    mode: 0o600,
    ptmxmode: 0,
    uid: None,
    gid: None,
};

static OPTIONS: SpinLock<Options, { level::INODE }> = SpinLock::new(DEFAULTS);
static ROOT: Once<Arc<dyn Inode>> = Once::new();
static DEV: Once<u64> = Once::new();

/// Makes "devpts" mountable.
pub fn register() {
    mount::register_filesystem("devpts", make);
}

fn dev() -> u64 {
    *DEV.call_once(mount::anon_dev)
}

/// The root of the one instance.
fn root() -> Arc<dyn Inode> {
    ROOT.call_once(|| GenDir::new(Attr::root_owned(dev(), ROOT_INO, 0o755), PtsDir))
        .clone()
}

fn make(_source: &str, data: &str) -> Result<Arc<dyn Inode>> {
    let mut opts = DEFAULTS;
    for opt in data.split(',').filter(|o| !o.is_empty()) {
        let (key, value) = opt.split_once('=').unwrap_or((opt, ""));
        let bad = || Error::with_message(Errno::EINVAL, "bad devpts option");
        let mode = |v: &str| {
            u32::from_str_radix(v, 8)
                .ok()
                .filter(|m| *m <= 0o777)
                .ok_or_else(bad)
        };
        let id = |v: &str| v.parse::<u32>().map_err(|_| bad());
        match key {
            "mode" => opts.mode = mode(value)?,
            "ptmxmode" => opts.ptmxmode = mode(value)?,
            "uid" => opts.uid = Some(id(value)?),
            "gid" => opts.gid = Some(id(value)?),
            // The only instance is always the new one.
            "newinstance" | "max" => {}
            _ => return Err(bad()),
        }
    }
    *OPTIONS.lock() = opts;
    Ok(root())
}

/// The options /proc/mounts shows after the flags.
pub fn mount_options() -> String {
    let o = *OPTIONS.lock();
    let mut s = String::new();
    if let Some(uid) = o.uid {
        s.push_str(&format!(",uid={uid}"));
    }
    if let Some(gid) = o.gid {
        s.push_str(&format!(",gid={gid}"));
    }
    s + &format!(",mode={:03o},ptmxmode={:03o}", o.mode, o.ptmxmode)
}

/// Mode and owner of a new slave node opened by (`uid`, `gid`).
pub fn new_slave_attr(uid: u32, gid: u32) -> NodeAttr {
    let o = *OPTIONS.lock();
    NodeAttr {
        perm: o.mode,
        uid: o.uid.unwrap_or(uid),
        gid: o.gid.unwrap_or(gid),
    }
}

/// The devpts root and the node of slave `index` (for TIOCGPTPEER).
pub fn slave_node(index: u32) -> Result<(Arc<dyn Inode>, Arc<dyn Inode>)> {
    let tty = pty::find(index).ok_or(Error::new(Errno::EIO))?;
    Ok((root(), slave(index, &tty)))
}

fn slave(index: u32, tty: &Arc<Tty>) -> Arc<dyn Inode> {
    Arc::new(DevNode {
        ino: u64::from(index) + 3,
        rdev: makedev(PTS_MAJOR, index),
        tty: Some(Arc::downgrade(tty)),
    })
}

struct PtsDir;

impl DirSource for PtsDir {
    fn list(&self) -> Result<Vec<Item>> {
        let mut items = alloc::vec![Item {
            key: PTMX_INO,
            name: String::from("ptmx"),
            ino: PTMX_INO,
            file_type: FileType::CharDevice,
        }];
        for (index, _) in pty::visible() {
            let ino = u64::from(index) + 3;
            items.push(Item {
                key: ino,
                name: index.to_string(),
                ino,
                file_type: FileType::CharDevice,
            });
        }
        Ok(items)
    }

    fn find(&self, _this: &Arc<dyn Inode>, name: &str) -> Result<Arc<dyn Inode>> {
        if name == "ptmx" {
            return Ok(Arc::new(DevNode {
                ino: PTMX_INO,
                rdev: PTMX,
                tty: None,
            }));
        }
        // Only the canonical spelling of a number names a slave.
        let index: u32 = name
            .parse()
            .ok()
            .filter(|i: &u32| i.to_string() == name)
            .ok_or(Error::new(Errno::ENOENT))?;
        let tty = pty::find(index).ok_or(Error::new(Errno::ENOENT))?;
        Ok(slave(index, &tty))
    }

    fn parent(&self, this: &Arc<dyn Inode>) -> Result<Arc<dyn Inode>> {
        Ok(this.clone())
    }
}

/// ptmx, or a slave's node (which does not keep its pty alive).
struct DevNode {
    ino: u64,
    rdev: u64,
    tty: Option<Weak<Tty>>,
}

impl DevNode {
    /// Mode, owner and creation time.
    fn attr(&self) -> (NodeAttr, Timespec) {
        let Some(weak) = &self.tty else {
            let perm = OPTIONS.lock().ptmxmode;
            return (
                NodeAttr {
                    perm,
                    uid: 0,
                    gid: 0,
                },
                boot_time(),
            );
        };
        match weak.upgrade().as_deref().and_then(pty::link) {
            Some(link) => (link.attr(), link.created()),
            None => (new_slave_attr(0, 0), boot_time()),
        }
    }

    fn change(&self, f: impl FnOnce(&mut NodeAttr)) -> Result<()> {
        match &self.tty {
            None => {
                let mut a = NodeAttr {
                    perm: OPTIONS.lock().ptmxmode,
                    uid: 0,
                    gid: 0,
                };
                f(&mut a);
                OPTIONS.lock().ptmxmode = a.perm & 0o777;
            }
            Some(weak) => {
                let tty = weak.upgrade().ok_or(Error::new(Errno::ENOENT))?;
                let link = pty::link(&tty).ok_or(Error::new(Errno::ENOENT))?;
                link.set_attr(f);
            }
        }
        Ok(())
    }
}

impl Inode for DevNode {
    fn read_at(&self, _offset: usize, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::new(Errno::EINVAL))
    }

    fn size(&self) -> usize {
        0
    }

    fn metadata(&self) -> Metadata {
        let (a, time) = self.attr();
        Metadata {
            dev: dev(),
            ino: self.ino,
            file_type: FileType::CharDevice,
            perm: a.perm,
            nlink: 1,
            uid: a.uid,
            gid: a.gid,
            rdev: self.rdev,
            size: 0,
            blksize: 1024,
            blocks: 0,
            atime: time,
            mtime: time,
            ctime: time,
        }
    }

    fn file_type(&self) -> FileType {
        FileType::CharDevice
    }

    fn id(&self) -> (u64, u64) {
        (dev(), self.ino)
    }

    fn set_perm(&self, perm: u32) -> Result<()> {
        self.change(|a| a.perm = perm & 0o7777)
    }

    fn set_owner(&self, uid: Option<u32>, gid: Option<u32>) -> Result<()> {
        self.change(|a| {
            if let Some(uid) = uid {
                a.uid = uid;
            }
            if let Some(gid) = gid {
                a.gid = gid;
            }
        })
    }

    fn set_times(&self, _atime: Option<Timespec>, _mtime: Option<Timespec>) -> Result<()> {
        Ok(())
    }
}
