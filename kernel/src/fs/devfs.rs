//! devtmpfs: /dev as a tmpfs filled with the device nodes the kernel
//! provides (null, zero, full, random, urandom, tty, console, ptmx), the
//! directories user space expects (pts, shm), and the /proc/self/fd links
//! (fd, stdin, stdout, stderr) that init scripts usually add.

use alloc::string::String;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use frame::sync::SpinLock;

use super::devices;
use super::inode::{FileType, Inode, NewNode, NodeKind};
use super::mount;
use super::ramfs::RamFs;
use crate::error::{Errno, Result};

/// Makes "devtmpfs" mountable.
pub fn register() {
    mount::register_filesystem("devtmpfs", make);
}

/// Every devtmpfs instance, so that a disk registered later appears in
/// each.
static INSTANCES: SpinLock<Vec<Weak<dyn Inode>>, 35> = SpinLock::new(Vec::new());

fn make(_source: &str, _data: &str) -> Result<Arc<dyn Inode>> {
    let root: Arc<dyn Inode> = RamFs::new_root(mount::anon_dev());
    populate(&root)?;
    for dev in crate::block::devices() {
        add_block_node(&root, &dev)?;
    }
    let mut all = INSTANCES.lock();
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(&root));
    Ok(root)
}

fn instances() -> Vec<Arc<dyn Inode>> {
    INSTANCES.lock().iter().filter_map(Weak::upgrade).collect()
}

/// Block device nodes are root's alone (0600), as devtmpfs creates them.
fn add_block_node(dir: &Arc<dyn Inode>, dev: &crate::block::BlockDevice) -> Result<()> {
    add(dir, dev.name(), NodeKind::Special(FileType::BlockDevice, dev.devt()), 0o600)
}

/// Adds /dev/<name> for a block device registered after /dev was mounted.
pub fn add_block_device(dev: &crate::block::BlockDevice) {
    for root in instances() {
        let _ = add_block_node(&root, dev);
    }
}

/// Removes /dev/<name> of a partition that went away (BLKRRPART), if it
/// is still the node devtmpfs made.
pub fn remove_block_device(dev: &crate::block::BlockDevice) {
    for root in instances() {
        if let Ok(node) = root.lookup(dev.name())
            && node.file_type() == FileType::BlockDevice
            && node.metadata().rdev == dev.devt()
        {
            let _ = root.unlink(dev.name());
        }
    }
}

/// Creates `name` in `dir` owned by root; an existing entry is kept.
fn add(dir: &Arc<dyn Inode>, name: &str, kind: NodeKind, perm: u32) -> Result<()> {
    let node = NewNode {
        kind,
        perm,
        uid: 0,
        gid: 0,
    };
    match dir.create(name, node) {
        Err(e) if e.errno() != Errno::EEXIST => Err(e),
        _ => Ok(()),
    }
}

/// Fills a fresh /dev.
fn populate(dev: &Arc<dyn Inode>) -> Result<()> {
    let chars = [
        ("console", devices::CONSOLE, 0o600),
        ("full", devices::FULL, 0o666),
        ("loop-control", crate::block::loop_dev::LOOP_CONTROL, 0o600),
        ("null", devices::NULL, 0o666),
        ("ptmx", devices::PTMX, 0o666),
        ("random", devices::RANDOM, 0o666),
        ("tty", devices::TTY, 0o666),
        ("urandom", devices::URANDOM, 0o666),
        ("zero", devices::ZERO, 0o666),
    ];
    for (name, rdev, perm) in chars {
        let kind = NodeKind::Special(FileType::CharDevice, rdev);
        add(dev, name, kind, perm)?;
    }
    add(dev, "pts", NodeKind::Directory, 0o755)?;
    add(dev, "shm", NodeKind::Directory, 0o1777)?;
    let links = [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ];
    for (name, target) in links {
        add(dev, name, NodeKind::Symlink(String::from(target)), 0o777)?;
    }
    Ok(())
}
