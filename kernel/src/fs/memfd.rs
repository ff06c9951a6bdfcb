//! memfd_create(2): anonymous regular files in a tmpfs of their own that
//! is mounted nowhere. /proc/pid/fd shows them as "/memfd:NAME (deleted)",
//! as on Linux. They can be sealed (fcntl(2) F_ADD_SEALS): the seals live
//! in the ramfs inode, which enforces them on writes, truncation and
//! fallocate.

use alloc::format;
use alloc::sync::Arc;

use frame::sync::Once;

use super::file::{File, O_RDWR};
use super::inode::{Inode, NewNode, NodeKind};
use super::ramfs::{RamFs, RamInode, seal};
use super::perm::Cred;
use crate::error::Result;

pub use super::ramfs::seal::{
    EXEC as F_SEAL_EXEC, FUTURE_WRITE as F_SEAL_FUTURE_WRITE, GROW as F_SEAL_GROW,
    SEAL as F_SEAL_SEAL, SHRINK as F_SEAL_SHRINK, WRITE as F_SEAL_WRITE,
};

/// Every seal fcntl(F_ADD_SEALS) knows.
pub const F_ALL_SEALS: u32 =
    seal::SEAL | seal::SHRINK | seal::GROW | seal::WRITE | seal::FUTURE_WRITE | seal::EXEC;

static ROOT: Once<Arc<RamInode>> = Once::new();

fn root() -> &'static Arc<RamInode> {
    ROOT.call_once(|| RamFs::new_root(super::mount::anon_dev()))
}

/// A new memfd named "memfd:`name`", open for reading and writing, owned
/// by `cred`, mode 0777 (0666 with `noexec`), starting with `seals`.
pub fn create(name: &str, cred: &Cred, noexec: bool, seals: u32) -> Result<Arc<File>> {
    let perm = if noexec { 0o666 } else { 0o777 };
    let node = NewNode {
        kind: NodeKind::Regular,
        perm,
        uid: cred.uid,
        gid: cred.gid,
    };
    let root = root();
    let inode: Arc<dyn Inode> = RamFs::new_memfd(root, node, seals);
    let file = File::new(inode, None, O_RDWR);
    let dir: Arc<dyn Inode> = root.clone();
    file.set_origin(dir, format!("memfd:{name}"));
    Ok(file)
}
