//! AF_UNIX sockets (owner: the `unix` work; not built yet).

use alloc::sync::Arc;

use super::socket::Socket;
use crate::error::{Errno, Error, Result};
use crate::fs::stream::Caller;

/// socket(AF_UNIX, ...).
pub fn create(_sock_type: i32, _protocol: i32, _caller: &dyn Caller) -> Result<Arc<dyn Socket>> {
    Err(Error::new(Errno::EAFNOSUPPORT))
}

/// socketpair(AF_UNIX, ...): two connected sockets.
pub fn socketpair(_sock_type: i32, _protocol: i32, _caller: &dyn Caller) -> Result<(Arc<dyn Socket>, Arc<dyn Socket>)> {
    Err(Error::new(Errno::EAFNOSUPPORT))
}
