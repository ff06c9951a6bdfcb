//! Socket addresses: the `struct sockaddr_*` a program passes to bind(2),
//! connect(2) and sendto(2), decoded once at the system-call boundary.

use alloc::vec::Vec;

use super::{AF_INET, AF_INET6, AF_NETLINK, AF_UNIX, AF_UNSPEC};
use crate::error::{Errno, Error, Result};

/// Size of `struct sockaddr_un`'s `sun_path`.
pub const UNIX_PATH_MAX: usize = 108;
/// `sizeof(struct sockaddr_in)` and `sizeof(struct sockaddr_in6)`.
pub const SOCKADDR_IN_LEN: usize = 16;
pub const SOCKADDR_IN6_LEN: usize = 28;
/// `sizeof(struct sockaddr_nl)`.
pub const SOCKADDR_NL_LEN: usize = 12;
/// Largest address a caller may pass (`sizeof(struct sockaddr_storage)`).
pub const SOCKADDR_MAX: usize = 128;

/// An AF_UNIX address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnixAddr {
    /// No name (an unbound socket, or autobind not done yet).
    Unnamed,
    /// A file-system path, without the terminating NUL.
    Path(Vec<u8>),
    /// A name in the abstract namespace (`sun_path[0] == 0`), without
    /// that leading NUL; may contain NULs.
    Abstract(Vec<u8>),
}

/// An IPv4 address and port (host byte order in the fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InetAddr {
    pub addr: [u8; 4],
    pub port: u16,
}

/// An IPv6 address, port, flow label and scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inet6Addr {
    pub addr: [u8; 16],
    pub port: u16,
    pub flowinfo: u32,
    pub scope_id: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SockAddr {
    /// AF_UNSPEC: connect(2) to it dissolves a datagram association.
    Unspec,
    Unix(UnixAddr),
    Inet(InetAddr),
    Inet6(Inet6Addr),
    Netlink { pid: u32, groups: u32 },
}

fn einval(why: &'static str) -> Error {
    Error::with_message(Errno::EINVAL, why)
}

impl SockAddr {
    /// The address family the bytes name (their first two bytes), if there
    /// are at least two.
    pub fn family_of(bytes: &[u8]) -> Option<i32> {
        (bytes.len() >= 2).then(|| u16::from_ne_bytes([bytes[0], bytes[1]]) as i32)
    }

    /// Decodes a `struct sockaddr` of `bytes.len()` bytes (the caller's
    /// addrlen). EINVAL when too short for its family, EAFNOSUPPORT for a
    /// family Trellis has no sockets of.
    pub fn parse(bytes: &[u8]) -> Result<SockAddr> {
        let family = Self::family_of(bytes).ok_or(einval("sockaddr shorter than its family"))?;
        match family {
            AF_UNSPEC => Ok(SockAddr::Unspec),
            AF_UNIX => Ok(SockAddr::Unix(parse_unix(&bytes[2..])?)),
            AF_INET => {
                if bytes.len() < SOCKADDR_IN_LEN {
                    return Err(einval("short sockaddr_in"));
                }
                Ok(SockAddr::Inet(InetAddr {
                    port: u16::from_be_bytes([bytes[2], bytes[3]]),
                    addr: [bytes[4], bytes[5], bytes[6], bytes[7]],
                }))
            }
            AF_INET6 => {
                // Linux accepts the old 24-byte form without sin6_scope_id.
                if bytes.len() < 24 {
                    return Err(einval("short sockaddr_in6"));
                }
                let mut addr = [0u8; 16];
                addr.copy_from_slice(&bytes[8..24]);
                let scope_id = match bytes.get(24..28) {
                    Some(s) => u32::from_ne_bytes([s[0], s[1], s[2], s[3]]),
                    None => 0,
                };
                Ok(SockAddr::Inet6(Inet6Addr {
                    port: u16::from_be_bytes([bytes[2], bytes[3]]),
                    flowinfo: u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
                    addr,
                    scope_id,
                }))
            }
            AF_NETLINK => {
                if bytes.len() < SOCKADDR_NL_LEN {
                    return Err(einval("short sockaddr_nl"));
                }
                let word = |i: usize| u32::from_ne_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
                Ok(SockAddr::Netlink { pid: word(4), groups: word(8) })
            }
            _ => Err(Error::new(Errno::EAFNOSUPPORT)),
        }
    }

    /// The address family (AF_*).
    pub fn family(&self) -> i32 {
        match self {
            SockAddr::Unspec => AF_UNSPEC,
            SockAddr::Unix(_) => AF_UNIX,
            SockAddr::Inet(_) => AF_INET,
            SockAddr::Inet6(_) => AF_INET6,
            SockAddr::Netlink { .. } => AF_NETLINK,
        }
    }

    /// The `struct sockaddr_*` bytes getsockname(2), accept(2) and
    /// recvfrom(2) report; its length is the addrlen they return (an
    /// unnamed AF_UNIX socket is just the family, a path includes its
    /// NUL, an abstract name does not, as on Linux).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SOCKADDR_IN6_LEN);
        out.extend_from_slice(&(self.family() as u16).to_ne_bytes());
        match self {
            SockAddr::Unspec => {}
            SockAddr::Unix(UnixAddr::Unnamed) => {}
            SockAddr::Unix(UnixAddr::Path(p)) => {
                out.extend_from_slice(p);
                out.push(0);
            }
            SockAddr::Unix(UnixAddr::Abstract(name)) => {
                out.push(0);
                out.extend_from_slice(name);
            }
            SockAddr::Inet(a) => {
                out.extend_from_slice(&a.port.to_be_bytes());
                out.extend_from_slice(&a.addr);
                out.extend_from_slice(&[0; 8]);
            }
            SockAddr::Inet6(a) => {
                out.extend_from_slice(&a.port.to_be_bytes());
                out.extend_from_slice(&a.flowinfo.to_be_bytes());
                out.extend_from_slice(&a.addr);
                out.extend_from_slice(&a.scope_id.to_ne_bytes());
            }
            SockAddr::Netlink { pid, groups } => {
                out.extend_from_slice(&[0; 2]);
                out.extend_from_slice(&pid.to_ne_bytes());
                out.extend_from_slice(&groups.to_ne_bytes());
            }
        }
        out
    }
}

/// `sun_path` and what follows the family, `path.len()` bytes of it.
fn parse_unix(path: &[u8]) -> Result<UnixAddr> {
    if path.len() > UNIX_PATH_MAX {
        return Err(einval("sun_path longer than 108 bytes"));
    }
    match path.first() {
        None => Ok(UnixAddr::Unnamed),
        Some(0) => Ok(UnixAddr::Abstract(path[1..].to_vec())),
        Some(_) => {
            // A path ends at its first NUL (Linux accepts an addrlen that
            // does not count it, or counts trailing bytes after it).
            let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
            Ok(UnixAddr::Path(path[..end].to_vec()))
        }
    }
}
