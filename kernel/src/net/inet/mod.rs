//! AF_INET and AF_INET6 sockets (owner: the `inet` work; not built yet).

use alloc::sync::Arc;

use super::socket::Socket;
use crate::error::{Errno, Error, Result};
use crate::fs::stream::Caller;

/// socket(AF_INET or AF_INET6, ...).
pub fn create(_family: i32, _sock_type: i32, _protocol: i32, _caller: &dyn Caller) -> Result<Arc<dyn Socket>> {
    Err(Error::new(Errno::EAFNOSUPPORT))
}
