//! FIFOs (fifo(7)): named pipes. The pipe of a FIFO lives as long as some
//! file has it open; every open of the same inode, whichever object the
//! file system hands out for it, finds the same pipe through its
//! (device, inode number).

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};

use frame::sync::{SpinLock, level};

use super::file::O_NONBLOCK;
use super::inode::Inode;
use super::pipe::{Ends, Pipe, PipeEnd};
use super::stream::FileOps;
use crate::error::Result;

static FIFOS: SpinLock<BTreeMap<(u64, u64), Weak<Pipe>>, { level::INODE }> =
    SpinLock::new(BTreeMap::new());

/// The operations of a FIFO opened with open(2) `flags`: ENXIO for
/// O_WRONLY|O_NONBLOCK without a reader. Opens that must wait for the
/// other end do so in [`FileOps::opened`].
pub fn open_fifo(node: &Arc<dyn Inode>, flags: u32) -> Result<Arc<dyn FileOps>> {
    let key = node.id();
    let mut fifos = FIFOS.lock();
    let pipe = match fifos.get(&key).and_then(Weak::upgrade) {
        Some(pipe) => pipe,
        None => {
            // Forget FIFOs nobody has open any more.
            fifos.retain(|_, p| p.strong_count() > 0);
            let pipe = Pipe::new();
            fifos.insert(key, Arc::downgrade(&pipe));
            pipe
        }
    };
    let nonblocking = flags & O_NONBLOCK != 0;
    let end = PipeEnd::attach(pipe, Ends::from_flags(flags), true, nonblocking);
    drop(fifos);
    Ok(Arc::new(end?))
}
