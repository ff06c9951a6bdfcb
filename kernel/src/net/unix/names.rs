//! Where AF_UNIX sockets are found: every live socket (for /proc/net/unix
//! and the garbage collector), and the bound names (abstract names, and
//! socket files by their inode's (device, inode number)).

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use frame::sync::{SpinLock, level};

use super::UnixSocket;
use crate::error::{Errno, Error, Result};

/// Level of the tables here: above a socket's own lock, but never taken
/// while one is held (nor one while the other is held).
pub(super) const TABLE_LEVEL: u8 = level::SOCKET + 1;

/// A bound name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Abstract(Vec<u8>),
    /// A socket file: its (device, inode number).
    Inode(u64, u64),
}

static NAMES: SpinLock<BTreeMap<Key, Weak<UnixSocket>>, TABLE_LEVEL> =
    SpinLock::new(BTreeMap::new());
static ALL: SpinLock<BTreeMap<u64, Weak<UnixSocket>>, TABLE_LEVEL> = SpinLock::new(BTreeMap::new());

/// Binds `key` to `sock`: EADDRINUSE if a live socket has it.
pub(super) fn insert(key: Key, sock: Weak<UnixSocket>) -> Result<()> {
    let mut names = NAMES.lock();
    if names.get(&key).is_some_and(|w| w.strong_count() > 0) {
        return Err(Error::new(Errno::EADDRINUSE));
    }
    names.insert(key, sock);
    Ok(())
}

/// Forgets `key` if it still names the socket at `sock` (or a dead one).
pub(super) fn remove(key: &Key, sock: *const UnixSocket) {
    let mut names = NAMES.lock();
    let stale = names
        .get(key)
        .is_some_and(|w| core::ptr::eq(w.as_ptr(), sock) || w.strong_count() == 0);
    if stale {
        names.remove(key);
    }
}

/// The live socket bound to `key`.
pub(super) fn find(key: &Key) -> Option<Arc<UnixSocket>> {
    NAMES.lock().get(key).and_then(Weak::upgrade)
}

/// Records a new socket.
pub(super) fn register(id: u64, sock: Weak<UnixSocket>) {
    ALL.lock().insert(id, sock);
}

/// Forgets a released socket.
pub(super) fn unregister(id: u64) {
    ALL.lock().remove(&id);
}

/// Every live socket (drop the result outside any socket lock).
pub(super) fn all() -> Vec<Arc<UnixSocket>> {
    ALL.lock().values().filter_map(Weak::upgrade).collect()
}
