//! Networking: the socket layer and the address families behind it.
//!
//! - [`socket`]: the [`Socket`](socket::Socket) trait every family
//!   implements, the open file that holds a socket, the shared options;
//! - [`addr`]: socket addresses decoded at the system-call boundary;
//! - [`unix`]: AF_UNIX; [`inet`]: AF_INET and AF_INET6 (TCP, UDP) over the
//!   interfaces of [`device`]; [`netlink`]: AF_NETLINK (NETLINK_ROUTE);
//!   [`virtio_net`]: the virtio-net NICs behind [`device`].
//!
//! The system calls are in `syscall/net.rs`; data flows syscall → socket
//! layer → family → (device driver → frame). docs/net.md has the design.

pub mod addr;
pub mod device;
pub mod iface;
pub(crate) mod iface_ktest;
pub mod ifconf;
pub mod ifioctl;
pub mod inet;
pub mod netlink;
pub mod socket;
pub mod sysfs;
pub mod unix;
pub mod virtio_net;

use alloc::sync::Arc;

use self::socket::Socket;
use crate::error::{Errno, Error, Result};
use crate::fs::stream::Caller;

pub const AF_UNSPEC: i32 = 0;
pub const AF_UNIX: i32 = 1;
pub const AF_INET: i32 = 2;
pub const AF_INET6: i32 = 10;
pub const AF_NETLINK: i32 = 16;
pub const AF_PACKET: i32 = 17;
/// One past the largest address family Linux knows.
pub const AF_MAX: i32 = 46;

pub const SOCK_STREAM: i32 = 1;
pub const SOCK_DGRAM: i32 = 2;
pub const SOCK_RAW: i32 = 3;
pub const SOCK_RDM: i32 = 4;
pub const SOCK_SEQPACKET: i32 = 5;
pub const SOCK_TYPE_MASK: i32 = 0xf;
pub const SOCK_NONBLOCK: i32 = 0o4000;
pub const SOCK_CLOEXEC: i32 = 0o2000000;

pub const MSG_OOB: u32 = 0x1;
pub const MSG_PEEK: u32 = 0x2;
pub const MSG_DONTROUTE: u32 = 0x4;
pub const MSG_CTRUNC: u32 = 0x8;
pub const MSG_TRUNC: u32 = 0x20;
pub const MSG_DONTWAIT: u32 = 0x40;
pub const MSG_EOR: u32 = 0x80;
pub const MSG_WAITALL: u32 = 0x100;
pub const MSG_CONFIRM: u32 = 0x800;
pub const MSG_ERRQUEUE: u32 = 0x2000;
pub const MSG_NOSIGNAL: u32 = 0x4000;
pub const MSG_MORE: u32 = 0x8000;
pub const MSG_WAITFORONE: u32 = 0x10000;
pub const MSG_ZEROCOPY: u32 = 0x400_0000;
pub const MSG_FASTOPEN: u32 = 0x2000_0000;
pub const MSG_CMSG_CLOEXEC: u32 = 0x4000_0000;

pub const SHUT_RD: u32 = 0;
pub const SHUT_WR: u32 = 1;
pub const SHUT_RDWR: u32 = 2;

pub const SOL_IP: i32 = 0;
pub const SOL_SOCKET: i32 = 1;
pub const SOL_TCP: i32 = 6;
pub const SOL_UDP: i32 = 17;
pub const SOL_IPV6: i32 = 41;

pub const IPPROTO_IP: i32 = 0;
pub const IPPROTO_ICMP: i32 = 1;
pub const IPPROTO_TCP: i32 = 6;
pub const IPPROTO_UDP: i32 = 17;
pub const IPPROTO_IPV6: i32 = 41;
pub const IPPROTO_ICMPV6: i32 = 58;

pub const SCM_RIGHTS: i32 = 1;
pub const SCM_CREDENTIALS: i32 = 2;
/// Most descriptors one SCM_RIGHTS message may carry.
pub const SCM_MAX_FD: usize = 253;

pub const SO_DEBUG: i32 = 1;
pub const SO_REUSEADDR: i32 = 2;
pub const SO_TYPE: i32 = 3;
pub const SO_ERROR: i32 = 4;
pub const SO_DONTROUTE: i32 = 5;
pub const SO_BROADCAST: i32 = 6;
pub const SO_SNDBUF: i32 = 7;
pub const SO_RCVBUF: i32 = 8;
pub const SO_KEEPALIVE: i32 = 9;
pub const SO_OOBINLINE: i32 = 10;
pub const SO_PRIORITY: i32 = 12;
pub const SO_LINGER: i32 = 13;
pub const SO_REUSEPORT: i32 = 15;
pub const SO_PASSCRED: i32 = 16;
pub const SO_PEERCRED: i32 = 17;
pub const SO_RCVLOWAT: i32 = 18;
pub const SO_SNDLOWAT: i32 = 19;
pub const SO_RCVTIMEO_OLD: i32 = 20;
pub const SO_SNDTIMEO_OLD: i32 = 21;
pub const SO_BINDTODEVICE: i32 = 25;
pub const SO_ACCEPTCONN: i32 = 30;
pub const SO_SNDBUFFORCE: i32 = 32;
pub const SO_RCVBUFFORCE: i32 = 33;
pub const SO_MARK: i32 = 36;
pub const SO_PROTOCOL: i32 = 38;
pub const SO_DOMAIN: i32 = 39;
pub const SO_PEEK_OFF: i32 = 42;
pub const SO_RCVTIMEO_NEW: i32 = 66;
pub const SO_SNDTIMEO_NEW: i32 = 67;

/// socket(2)'s type argument split: the type and its SOCK_NONBLOCK /
/// SOCK_CLOEXEC flags; EINVAL for other flag bits.
pub fn split_type(type_and_flags: i32) -> Result<(i32, i32)> {
    let flags = type_and_flags & !SOCK_TYPE_MASK;
    if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok((type_and_flags & SOCK_TYPE_MASK, flags))
}

/// socket(2): a new socket of `family`, `sock_type` (without flags) and
/// `protocol`. EAFNOSUPPORT for a family Trellis lacks; the family
/// refuses types (ESOCKTNOSUPPORT/EPROTOTYPE) and protocols
/// (EPROTONOSUPPORT) it does not have.
pub fn create_socket(family: i32, sock_type: i32, protocol: i32, caller: &dyn Caller) -> Result<Arc<dyn Socket>> {
    match family {
        AF_UNIX => unix::create(sock_type, protocol, caller),
        AF_INET | AF_INET6 => inet::create(family, sock_type, protocol, caller),
        AF_NETLINK => netlink::create(sock_type, protocol, caller),
        _ => Err(Error::new(Errno::EAFNOSUPPORT)),
    }
}
