//! AF_INET and AF_INET6 sockets over the smoltcp stack of [`super::iface`].

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::socket::Socket;
use crate::error::{Errno, Error, Result};
use crate::fs::readiness::Readiness;
use crate::fs::stream::Caller;

/// The inet sockets' state, kept inside the stack's lock.
#[derive(Default)]
pub(crate) struct Table {}

/// Something to notify after a poll.
pub(crate) struct Wake(Arc<Readiness>);

impl Wake {
    pub fn notify_all(&self) {
        self.0.notify(0xffff);
    }
}

/// The sockets whose readiness changed since the last call.
pub(crate) fn collect_wakeups(_stack: &mut super::iface::Stack) -> Vec<Wake> {
    Vec::new()
}

/// socket(AF_INET or AF_INET6, ...).
pub fn create(
    _family: i32,
    _sock_type: i32,
    _protocol: i32,
    _caller: &dyn Caller,
) -> Result<Arc<dyn Socket>> {
    Err(Error::new(Errno::EAFNOSUPPORT))
}
