//! Socket system calls: socket(2) to getsockopt(2), sendmsg(2)/recvmsg(2)
//! and their multi-message forms. This layer decodes what user space
//! passes (addresses, iovecs, `struct msghdr`, control messages), checks it
//! with the errnos the man pages give, and calls the socket's family
//! through [`Socket`]. Message bytes are never staged here: [`UserSend`]
//! and [`UserRecv`] let the family copy straight from and to the caller's
//! iovecs.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::fs::CallerCtx;
use super::{Context, SyscallArgs, SyscallFn, access_ok};
use crate::error::{Errno, Error, Result};
use crate::fs::{File, O_NONBLOCK};
use crate::net::addr::{SOCKADDR_MAX, SockAddr};
use crate::net::socket::{
    ControlMsg, RecvBuf, RecvMeta, SendBuf, SendMeta, Socket, socket_file, socket_of,
};
use crate::net::*;

pub const SYSCALLS: &[(usize, &str, SyscallFn)] = &[
    (41, "socket", sys_socket),
    (42, "connect", sys_connect),
    (43, "accept", sys_accept),
    (44, "sendto", sys_sendto),
    (45, "recvfrom", sys_recvfrom),
    (46, "sendmsg", sys_sendmsg),
    (47, "recvmsg", sys_recvmsg),
    (48, "shutdown", sys_shutdown),
    (49, "bind", sys_bind),
    (50, "listen", sys_listen),
    (51, "getsockname", sys_getsockname),
    (52, "getpeername", sys_getpeername),
    (53, "socketpair", sys_socketpair),
    (54, "setsockopt", sys_setsockopt),
    (55, "getsockopt", sys_getsockopt),
    (288, "accept4", sys_accept4),
    (299, "recvmmsg", sys_recvmmsg),
    (307, "sendmmsg", sys_sendmmsg),
];

/// Most iovecs in one message (UIO_MAXIOV).
const UIO_MAXIOV: usize = 1024;
/// Largest byte count of one transfer (Linux's MAX_RW_COUNT).
const MAX_RW_COUNT: usize = 0x7fff_f000;
/// Largest listen(2) backlog (net.core.somaxconn).
const SOMAXCONN: i32 = 4096;
/// `sizeof(struct msghdr)`, `sizeof(struct mmsghdr)`, `sizeof(struct cmsghdr)`.
const MSGHDR_LEN: usize = 56;
const MMSGHDR_LEN: u64 = 64;
const CMSGHDR_LEN: usize = 16;
/// Largest control buffer sendmsg(2) takes (net.core.optmem_max).
const OPTMEM_MAX: usize = 131_072;
/// Largest option value setsockopt(2) reads.
const OPTVAL_MAX: usize = 4096;

fn err(e: Errno) -> Error {
    Error::new(e)
}

/// A descriptor argument (C `int`).
fn fd_arg(arg: u64) -> i32 {
    arg as u32 as i32
}

/// An `int` length argument.
fn int_arg(arg: u64) -> i32 {
    arg as u32 as i32
}

/// The open file on `fd` and its socket: EBADF, or ENOTSOCK for a file
/// that is not a socket.
fn socket_fd(ctx: &Context, fd: i32) -> Result<(Arc<File>, Arc<dyn Socket>)> {
    let file = ctx.process.files().lock().get(fd)?;
    if file.is_path_only() {
        return Err(err(Errno::EBADF));
    }
    let sock = socket_of(&file).ok_or(err(Errno::ENOTSOCK))?.clone();
    Ok((file, sock))
}

/// Installs a new socket file on the lowest free descriptor.
fn install_socket(ctx: &Context, sock: Arc<dyn Socket>, flags: i32) -> Result<i32> {
    let cred = ctx.process.creds().fs_cred();
    let file = socket_file(
        sock,
        if flags & SOCK_NONBLOCK != 0 {
            O_NONBLOCK
        } else {
            0
        },
        (cred.uid, cred.gid),
    );
    let limit = crate::process::nofile_limit(ctx.process);
    ctx.process
        .files()
        .lock()
        .insert(file, flags & SOCK_CLOEXEC != 0, limit)
}

/// Closes descriptors this call installed before failing.
fn uninstall(ctx: &Context, fds: &[i32]) {
    let files: Vec<_> = {
        let shared = ctx.process.files();
        let mut table = shared.lock();
        fds.iter().filter_map(|&fd| table.remove(fd).ok()).collect()
    };
    drop(files);
}

/// A `struct sockaddr` from user space (Linux's move_addr_to_kernel):
/// EINVAL for a negative length or one above `sizeof(struct
/// sockaddr_storage)`, EFAULT if unreadable. Length 0 gives no bytes.
fn read_sockaddr_bytes(ctx: &Context, addr: u64, len: i32) -> Result<Vec<u8>> {
    if len < 0 || len as usize > SOCKADDR_MAX {
        return Err(err(Errno::EINVAL));
    }
    if len == 0 {
        return Ok(Vec::new());
    }
    ctx.read_bytes(addr, len as usize)
}

/// Decodes address bytes for `sock`: an AF_UNIX socket refuses other
/// families with EINVAL (AF_UNSPEC aside, which connect(2) uses to
/// dissolve an association), as Linux's unix_validate_addr does.
fn parse_for(sock: &dyn Socket, bytes: &[u8]) -> Result<SockAddr> {
    if sock.family() == AF_UNIX {
        match SockAddr::family_of(bytes) {
            Some(AF_UNIX) | Some(AF_UNSPEC) => {}
            _ => return Err(err(Errno::EINVAL)),
        }
    }
    // AF_INET checks the length before the family (inet_bind,
    // inet_stream_connect): a foreign address of full length is
    // EAFNOSUPPORT, not a short sockaddr_in6.
    if sock.family() == AF_INET
        && let Some(f) = SockAddr::family_of(bytes)
        && f != AF_INET
        && f != AF_UNSPEC
    {
        return Err(err(if bytes.len() < 16 { Errno::EINVAL } else { Errno::EAFNOSUPPORT }));
    }
    SockAddr::parse(bytes)
}

/// Stores `addr` in the caller's buffer (Linux's move_addr_to_user): the
/// buffer's size is `*len_addr`; the address is cut to it, and the full
/// length is written back. EINVAL for a negative size.
fn write_sockaddr(ctx: &Context, addr: &[u8], buf: u64, len_addr: u64) -> Result<()> {
    let len: i32 = ctx.read_val(len_addr)?;
    write_sockaddr_sized(ctx, addr, buf, len, len_addr)
}

fn write_sockaddr_sized(
    ctx: &Context,
    addr: &[u8],
    buf: u64,
    len: i32,
    len_addr: u64,
) -> Result<()> {
    let len = len.min(addr.len() as i32);
    if len < 0 {
        return Err(err(Errno::EINVAL));
    }
    if len > 0 {
        ctx.write_bytes(buf, &addr[..len as usize])?;
    }
    ctx.write_val(len_addr, &(addr.len() as i32))
}

// ---------------------------------------------------------------------------
// User iovecs

/// A user iovec array, checked like Linux's import_iovec: EMSGSIZE (or
/// EINVAL for readv-style callers) for more than UIO_MAXIOV vectors,
/// EINVAL for a negative length, EFAULT for a vector outside user space;
/// the total is clamped to MAX_RW_COUNT by trimming the vectors.
struct IoVecs(Vec<(u64, usize)>);

impl IoVecs {
    fn read(ctx: &Context, addr: u64, count: u64, too_many: Errno) -> Result<IoVecs> {
        if count > UIO_MAXIOV as u64 {
            return Err(err(too_many));
        }
        if count == 0 {
            return Ok(IoVecs(Vec::new()));
        }
        let raw = ctx.read_bytes(addr, count as usize * 16)?;
        let mut iovs: Vec<(u64, usize)> = crate::fallible::with_capacity(count as usize)?;
        let mut total: usize = 0;
        for pair in raw.chunks_exact(16) {
            let base = u64::from_ne_bytes(pair[..8].try_into().unwrap_or([0; 8]));
            let len = u64::from_ne_bytes(pair[8..].try_into().unwrap_or([0; 8]));
            if len > isize::MAX as u64 {
                return Err(err(Errno::EINVAL));
            }
            let mut len = len as usize;
            if !access_ok(base, len as u64) {
                return Err(err(Errno::EFAULT));
            }
            len = len.min(MAX_RW_COUNT - total);
            total += len;
            iovs.push((base, len));
        }
        Ok(IoVecs(iovs))
    }

    fn single(base: u64, len: usize) -> Result<IoVecs> {
        let len = len.min(MAX_RW_COUNT);
        if !access_ok(base, len as u64) {
            return Err(err(Errno::EFAULT));
        }
        Ok(IoVecs(alloc::vec![(base, len)]))
    }

    fn total(&self) -> usize {
        self.0.iter().map(|(_, l)| *l).sum()
    }

    /// Calls `f(user address, offset into the chunk, length)` for the user
    /// ranges covering bytes `[at, at + len)`; EFAULT past the end.
    fn for_ranges(
        &self,
        mut at: usize,
        len: usize,
        mut f: impl FnMut(u64, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let mut done = 0;
        for &(base, iov_len) in &self.0 {
            if done == len {
                break;
            }
            if at >= iov_len {
                at -= iov_len;
                continue;
            }
            let n = (iov_len - at).min(len - done);
            f(base + at as u64, done, n)?;
            done += n;
            at = 0;
        }
        if done < len {
            return Err(err(Errno::EFAULT));
        }
        Ok(())
    }
}

/// The bytes of sendmsg(2): the caller's iovecs, read where they are.
pub struct UserSend<'a, 'b> {
    ctx: &'a Context<'b>,
    iovs: IoVecs,
    total: usize,
}

impl SendBuf for UserSend<'_, '_> {
    fn len(&self) -> usize {
        self.total
    }

    fn read_at(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.iovs.for_ranges(offset, out.len(), |addr, at, n| {
            self.ctx.read_into(addr, &mut out[at..at + n])
        })
    }
}

/// Where recvmsg(2) stores: the caller's iovecs.
pub struct UserRecv<'a, 'b> {
    ctx: &'a Context<'b>,
    iovs: IoVecs,
    total: usize,
}

impl RecvBuf for UserRecv<'_, '_> {
    fn len(&self) -> usize {
        self.total
    }

    fn write_at(&mut self, offset: usize, data: &[u8]) -> Result<()> {
        let ctx = self.ctx;
        self.iovs.for_ranges(offset, data.len(), |addr, at, n| {
            ctx.write_bytes(addr, &data[at..at + n])
        })
    }
}

// ---------------------------------------------------------------------------
// socket, socketpair, bind, connect, listen, accept

pub fn sys_socket(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (family, type_flags, protocol) = (int_arg(args[0]), int_arg(args[1]), int_arg(args[2]));
    let (sock_type, flags) = new_socket_args(family, type_flags)?;
    let sock = create_socket(family, sock_type, protocol, &CallerCtx(ctx))?;
    Ok(install_socket(ctx, sock, flags)? as isize)
}

/// socket(2)'s family and type checks: EAFNOSUPPORT for a family out of
/// range, EINVAL for unknown type flags or a type above SOCK_PACKET.
fn new_socket_args(family: i32, type_flags: i32) -> Result<(i32, i32)> {
    const SOCK_MAX: i32 = 11;
    let (sock_type, flags) = split_type(type_flags)?;
    if !(0..AF_MAX).contains(&family) {
        return Err(err(Errno::EAFNOSUPPORT));
    }
    if !(0..SOCK_MAX).contains(&sock_type) {
        return Err(err(Errno::EINVAL));
    }
    Ok((sock_type, flags))
}

pub fn sys_socketpair(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (family, type_flags, protocol) = (int_arg(args[0]), int_arg(args[1]), int_arg(args[2]));
    let (sock_type, flags) = new_socket_args(family, type_flags)?;
    let caller = CallerCtx(ctx);
    let (a, b) = if family == AF_UNIX {
        crate::net::unix::socketpair(sock_type, protocol, &caller)?
    } else {
        // Other families refuse pairs once the socket could be made.
        create_socket(family, sock_type, protocol, &caller)?;
        return Err(err(Errno::EOPNOTSUPP));
    };
    let fa = install_socket(ctx, a, flags)?;
    let fb = match install_socket(ctx, b, flags) {
        Ok(fd) => fd,
        Err(e) => {
            uninstall(ctx, &[fa]);
            return Err(e);
        }
    };
    let bytes = [fa.to_ne_bytes(), fb.to_ne_bytes()].concat();
    if let Err(e) = ctx.write_bytes(args[3], &bytes) {
        uninstall(ctx, &[fa, fb]);
        return Err(e);
    }
    Ok(0)
}

pub fn sys_bind(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let bytes = read_sockaddr_bytes(ctx, args[1], int_arg(args[2]))?;
    let addr = parse_for(&*sock, &bytes)?;
    sock.bind(&addr, &CallerCtx(ctx))?;
    Ok(0)
}

pub fn sys_connect(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let bytes = read_sockaddr_bytes(ctx, args[1], int_arg(args[2]))?;
    let addr = parse_for(&*sock, &bytes)?;
    sock.connect(&addr, file.is_nonblocking(), &CallerCtx(ctx))?;
    Ok(0)
}

pub fn sys_listen(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    // Linux compares the backlog as unsigned: a negative one is the most.
    let backlog = int_arg(args[1]);
    let backlog = if !(0..=SOMAXCONN).contains(&backlog) {
        SOMAXCONN
    } else {
        backlog
    };
    sock.listen(backlog)?;
    Ok(0)
}

fn accept4(ctx: &Context, fd: i32, addr: u64, len_addr: u64, flags: i32) -> Result<isize> {
    if flags & !(SOCK_CLOEXEC | SOCK_NONBLOCK) != 0 {
        return Err(err(Errno::EINVAL));
    }
    let (file, sock) = socket_fd(ctx, fd)?;
    let (new, peer) = sock.accept(file.is_nonblocking(), &CallerCtx(ctx))?;
    let fd = install_socket(ctx, new, flags)?;
    if addr != 0
        && let Err(e) = write_sockaddr(ctx, &peer.to_bytes(), addr, len_addr)
    {
        uninstall(ctx, &[fd]);
        return Err(e);
    }
    Ok(fd as isize)
}

pub fn sys_accept(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    accept4(ctx, fd_arg(args[0]), args[1], args[2], 0)
}

pub fn sys_accept4(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    accept4(ctx, fd_arg(args[0]), args[1], args[2], int_arg(args[3]))
}

pub fn sys_shutdown(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let how = int_arg(args[1]);
    if !(0..=SHUT_RDWR as i32).contains(&how) {
        return Err(err(Errno::EINVAL));
    }
    sock.shutdown(how as u32)?;
    Ok(0)
}

pub fn sys_getsockname(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let addr = sock.local_addr()?;
    write_sockaddr(ctx, &addr.to_bytes(), args[1], args[2])?;
    Ok(0)
}

pub fn sys_getpeername(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let addr = sock.peer_addr()?;
    write_sockaddr(ctx, &addr.to_bytes(), args[1], args[2])?;
    Ok(0)
}

// ---------------------------------------------------------------------------
// Options

pub fn sys_setsockopt(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let (level, name, optlen) = (int_arg(args[1]), int_arg(args[2]), int_arg(args[4]));
    if optlen < 0 {
        return Err(err(Errno::EINVAL));
    }
    let value = ctx.read_bytes(args[3], (optlen as usize).min(OPTVAL_MAX))?;
    if level == SOL_SOCKET {
        match name {
            // Read-only options.
            SO_TYPE | SO_DOMAIN | SO_PROTOCOL | SO_ACCEPTCONN | SO_ERROR | SO_PEERCRED => {
                return Err(err(Errno::ENOPROTOOPT));
            }
            _ => {}
        }
    }
    sock.setsockopt(level, name, &value, &CallerCtx(ctx))?;
    Ok(0)
}

pub fn sys_getsockopt(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (_, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let (level, name) = (int_arg(args[1]), int_arg(args[2]));
    let len_addr = args[4];
    let optlen: i32 = ctx.read_val(len_addr)?;
    if optlen < 0 {
        return Err(err(Errno::EINVAL));
    }
    let int = |v: i32| v.to_ne_bytes().to_vec();
    let value = match (level, name) {
        (SOL_SOCKET, SO_TYPE) => int(sock.sock_type()),
        (SOL_SOCKET, SO_DOMAIN) => int(sock.family()),
        (SOL_SOCKET, SO_PROTOCOL) => int(sock.protocol()),
        (SOL_SOCKET, SO_ACCEPTCONN) => int(sock.is_listening() as i32),
        _ => sock.getsockopt(level, name, &CallerCtx(ctx))?,
    };
    let n = value.len().min(optlen as usize);
    ctx.write_bytes(args[3], &value[..n])?;
    ctx.write_val(len_addr, &(n as i32))?;
    Ok(0)
}

// ---------------------------------------------------------------------------
// Control messages

/// CMSG_ALIGN: control messages are 8-byte aligned.
fn cmsg_align(len: usize) -> usize {
    (len + 7) & !7
}

/// Decodes a sendmsg(2) control buffer (Linux's __scm_send): EINVAL for a
/// header whose cmsg_len is short or runs past the buffer, for SCM_RIGHTS
/// on a socket that is not AF_UNIX or with more than SCM_MAX_FD
/// descriptors, for a malformed SCM_CREDENTIALS or an unknown SOL_SOCKET
/// type; EBADF for a descriptor that is not open; EPERM for credentials
/// the caller may not claim. Other levels go to the family as
/// [`ControlMsg::Other`].
fn parse_control(ctx: &Context, sock: &dyn Socket, buf: &[u8]) -> Result<Vec<ControlMsg>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let mut nfds = 0usize;
    while at + CMSGHDR_LEN <= buf.len() {
        let h = &buf[at..at + CMSGHDR_LEN];
        let cmsg_len = u64::from_ne_bytes(h[..8].try_into().unwrap_or([0; 8]));
        let level = i32::from_ne_bytes(h[8..12].try_into().unwrap_or([0; 4]));
        let kind = i32::from_ne_bytes(h[12..16].try_into().unwrap_or([0; 4]));
        if cmsg_len < CMSGHDR_LEN as u64 || cmsg_len > (buf.len() - at) as u64 {
            return Err(Error::with_message(
                Errno::EINVAL,
                "cmsg_len past the control buffer",
            ));
        }
        let cmsg_len = cmsg_len as usize;
        let data = &buf[at + CMSGHDR_LEN..at + cmsg_len];
        if level == SOL_SOCKET {
            match kind {
                SCM_RIGHTS => {
                    if sock.family() != AF_UNIX {
                        return Err(err(Errno::EINVAL));
                    }
                    let n = data.len() / 4;
                    if n > 0 {
                        if nfds + n > SCM_MAX_FD {
                            return Err(err(Errno::EINVAL));
                        }
                        nfds += n;
                        let mut files = crate::fallible::with_capacity(n)?;
                        {
                            let shared = ctx.process.files();
                            let table = shared.lock();
                            for c in data.chunks_exact(4) {
                                let fd = i32::from_ne_bytes(c.try_into().unwrap_or([0; 4]));
                                files.push(table.get(fd)?);
                            }
                        }
                        out.push(ControlMsg::Rights(files));
                    }
                }
                SCM_CREDENTIALS => {
                    if data.len() != 12 {
                        return Err(err(Errno::EINVAL));
                    }
                    let w =
                        |i: usize| u32::from_ne_bytes(data[i..i + 4].try_into().unwrap_or([0; 4]));
                    let (pid, uid, gid) = (w(0), w(4), w(8));
                    check_creds(ctx, pid, uid, gid)?;
                    out.push(ControlMsg::Credentials { pid, uid, gid });
                }
                _ => return Err(err(Errno::EINVAL)),
            }
        } else {
            let mut v = Vec::new();
            crate::fallible::extend(&mut v, data)?;
            out.push(ControlMsg::Other {
                level,
                kind,
                data: v,
            });
        }
        // CMSG_NXTHDR.
        at = match at.checked_add(cmsg_align(cmsg_len)) {
            Some(next) => next,
            None => break,
        };
    }
    Ok(out)
}

/// Linux's scm_check_creds: a sender may claim its own process id (any
/// with CAP_SYS_ADMIN) and one of its real, effective or saved uids and
/// gids (any with CAP_SETUID / CAP_SETGID); EPERM otherwise.
fn check_creds(ctx: &Context, pid: u32, uid: u32, gid: u32) -> Result<()> {
    let c = ctx.process.creds();
    let pid_ok = pid == ctx.process.pid() || c.capable(crate::caps::CAP_SYS_ADMIN);
    let uid_ok = [c.ruid, c.euid, c.suid].contains(&uid) || c.capable(crate::caps::CAP_SETUID);
    let gid_ok = [c.rgid, c.egid, c.sgid].contains(&gid) || c.capable(crate::caps::CAP_SETGID);
    if pid_ok && uid_ok && gid_ok {
        Ok(())
    } else {
        Err(err(Errno::EPERM))
    }
}

/// Builds recvmsg(2)'s control buffer into user memory at `buf` of `cap`
/// bytes (Linux's put_cmsg and scm_detach_fds): what does not fit sets
/// MSG_CTRUNC; received descriptors that do not fit are closed (dropped),
/// never installed. Returns the bytes used and the flags to add.
fn build_control(
    ctx: &Context,
    control: Vec<ControlMsg>,
    buf: u64,
    cap: usize,
    cloexec: bool,
) -> Result<(usize, u32)> {
    let mut used = 0usize;
    let mut flags = 0u32;
    // Credentials first, as Linux emits them.
    let mut ordered: Vec<ControlMsg> = Vec::with_capacity(control.len());
    let mut rest = Vec::new();
    for c in control {
        match c {
            ControlMsg::Rights(_) => rest.push(c),
            _ => ordered.push(c),
        }
    }
    ordered.extend(rest);
    for c in ordered {
        let room = cap - used;
        let at = buf + used as u64;
        match c {
            ControlMsg::Rights(files) => {
                let fdmax = if room > CMSGHDR_LEN {
                    (room - CMSGHDR_LEN) / 4
                } else {
                    0
                };
                let limit = crate::process::nofile_limit(ctx.process);
                let mut fds: Vec<i32> = Vec::new();
                let mut files = files.into_iter();
                let mut failed = false;
                for f in files.by_ref() {
                    if fds.len() >= fdmax {
                        failed = true;
                        break;
                    }
                    match ctx.process.files().lock().insert(f, cloexec, limit) {
                        Ok(fd) => fds.push(fd),
                        Err(_) => {
                            failed = true;
                            break;
                        }
                    }
                }
                // The ones that did not fit are closed here.
                let left: Vec<_> = files.collect();
                if failed || !left.is_empty() {
                    flags |= MSG_CTRUNC;
                }
                drop(left);
                if !fds.is_empty() {
                    let len = CMSGHDR_LEN + fds.len() * 4;
                    let mut bytes = Vec::with_capacity(len);
                    bytes.extend_from_slice(&(len as u64).to_ne_bytes());
                    bytes.extend_from_slice(&SOL_SOCKET.to_ne_bytes());
                    bytes.extend_from_slice(&SCM_RIGHTS.to_ne_bytes());
                    for fd in &fds {
                        bytes.extend_from_slice(&fd.to_ne_bytes());
                    }
                    if let Err(e) = ctx.write_bytes(at, &bytes) {
                        // Linux keeps what it installed; the caller
                        // cannot learn the numbers, so close them.
                        uninstall(ctx, &fds);
                        return Err(e);
                    }
                    used += cmsg_align(len).min(room);
                }
            }
            ControlMsg::Credentials { pid, uid, gid } => {
                let mut data = Vec::with_capacity(12);
                data.extend_from_slice(&pid.to_ne_bytes());
                data.extend_from_slice(&uid.to_ne_bytes());
                data.extend_from_slice(&gid.to_ne_bytes());
                put_cmsg(
                    ctx,
                    at,
                    room,
                    SOL_SOCKET,
                    SCM_CREDENTIALS,
                    &data,
                    &mut used,
                    &mut flags,
                )?;
            }
            ControlMsg::Other { level, kind, data } => {
                put_cmsg(ctx, at, room, level, kind, &data, &mut used, &mut flags)?;
            }
        }
    }
    Ok((used, flags))
}

/// One control message (Linux's put_cmsg): cut to the room left, with
/// MSG_CTRUNC; nothing at all if not even a header fits.
#[allow(clippy::too_many_arguments)]
fn put_cmsg(
    ctx: &Context,
    at: u64,
    room: usize,
    level: i32,
    kind: i32,
    data: &[u8],
    used: &mut usize,
    flags: &mut u32,
) -> Result<()> {
    if room < CMSGHDR_LEN {
        *flags |= MSG_CTRUNC;
        return Ok(());
    }
    let mut len = CMSGHDR_LEN + data.len();
    if len > room {
        *flags |= MSG_CTRUNC;
        len = room;
    }
    let mut bytes = Vec::with_capacity(len);
    bytes.extend_from_slice(&((CMSGHDR_LEN + data.len()).min(len) as u64).to_ne_bytes());
    bytes.extend_from_slice(&level.to_ne_bytes());
    bytes.extend_from_slice(&kind.to_ne_bytes());
    bytes.extend_from_slice(&data[..len - CMSGHDR_LEN]);
    ctx.write_bytes(at, &bytes)?;
    *used += cmsg_align(len).min(room);
    Ok(())
}

// ---------------------------------------------------------------------------
// send and receive

/// A `struct msghdr` as read from user space.
struct MsgHdr {
    name: u64,
    namelen: i32,
    iov: u64,
    iovlen: u64,
    control: u64,
    controllen: u64,
}

impl MsgHdr {
    /// Reads and checks it (Linux's copy_msghdr_from_user): EINVAL for a
    /// negative name length (a longer one is cut to sockaddr_storage),
    /// EMSGSIZE for more than UIO_MAXIOV iovecs.
    fn read(ctx: &Context, addr: u64) -> Result<MsgHdr> {
        let b = ctx.read_bytes(addr, MSGHDR_LEN)?;
        let q = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let mut m = MsgHdr {
            name: q(0),
            namelen: i32::from_ne_bytes(b[8..12].try_into().unwrap_or([0; 4])),
            iov: q(16),
            iovlen: q(24),
            control: q(32),
            controllen: q(40),
        };
        if m.name == 0 {
            m.namelen = 0;
        }
        if m.namelen < 0 {
            return Err(err(Errno::EINVAL));
        }
        m.namelen = m.namelen.min(SOCKADDR_MAX as i32);
        if m.iovlen > UIO_MAXIOV as u64 {
            return Err(err(Errno::EMSGSIZE));
        }
        Ok(m)
    }
}

fn nonblocking(file: &File, flags: u32) -> bool {
    file.is_nonblocking() || flags & MSG_DONTWAIT != 0
}

/// The common part of sendto(2) and sendmsg(2).
fn do_send(
    ctx: &Context,
    file: &File,
    sock: &dyn Socket,
    iovs: IoVecs,
    addr: Option<SockAddr>,
    control: Vec<ControlMsg>,
    flags: u32,
) -> Result<usize> {
    let total = iovs.total();
    let data = UserSend { ctx, iovs, total };
    sock.send(
        &data,
        SendMeta { addr, control },
        flags,
        nonblocking(file, flags),
        &CallerCtx(ctx),
    )
}

fn send_msg(
    ctx: &Context,
    file: &File,
    sock: &dyn Socket,
    msg_addr: u64,
    flags: u32,
) -> Result<usize> {
    let m = MsgHdr::read(ctx, msg_addr)?;
    let addr = if m.namelen > 0 {
        Some(parse_for(
            sock,
            &read_sockaddr_bytes(ctx, m.name, m.namelen)?,
        )?)
    } else {
        None
    };
    let iovs = IoVecs::read(ctx, m.iov, m.iovlen, Errno::EMSGSIZE)?;
    if m.controllen > i32::MAX as u64 {
        return Err(err(Errno::ENOBUFS));
    }
    let control = if m.controllen > 0 {
        if m.controllen as usize > OPTMEM_MAX {
            return Err(err(Errno::ENOBUFS));
        }
        let buf = ctx.read_bytes(m.control, m.controllen as usize)?;
        parse_control(ctx, sock, &buf)?
    } else {
        Vec::new()
    };
    do_send(ctx, file, sock, iovs, addr, control, flags)
}

pub fn sys_sendto(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let iovs = IoVecs::single(args[1], args[2] as usize)?;
    let flags = args[3] as u32;
    let addr = if args[4] != 0 {
        let bytes = read_sockaddr_bytes(ctx, args[4], int_arg(args[5]))?;
        if bytes.is_empty() {
            None
        } else {
            Some(parse_for(&*sock, &bytes)?)
        }
    } else {
        None
    };
    Ok(do_send(ctx, &file, &*sock, iovs, addr, Vec::new(), flags)? as isize)
}

pub fn sys_sendmsg(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    Ok(send_msg(ctx, &file, &*sock, args[1], args[2] as u32)? as isize)
}

/// The common part of recvfrom(2) and recvmsg(2).
fn do_recv(
    ctx: &Context,
    file: &File,
    sock: &dyn Socket,
    iovs: IoVecs,
    flags: u32,
) -> Result<RecvMeta> {
    let total = iovs.total();
    let mut data = UserRecv { ctx, iovs, total };
    let nb = nonblocking(file, flags);
    sock.recv(&mut data, flags & !MSG_CMSG_CLOEXEC, nb, &CallerCtx(ctx))
}

/// What recv returns: the byte count, or the full datagram length with
/// MSG_TRUNC.
fn recv_count(meta: &RecvMeta, flags: u32) -> usize {
    if flags & MSG_TRUNC != 0 {
        meta.full_len
    } else {
        meta.len
    }
}

pub fn sys_recvfrom(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let iovs = IoVecs::single(args[1], args[2] as usize)?;
    let flags = args[3] as u32;
    let meta = do_recv(ctx, &file, &*sock, iovs, flags)?;
    if args[4] != 0 {
        let bytes = meta
            .addr
            .as_ref()
            .map(SockAddr::to_bytes)
            .unwrap_or_default();
        write_sockaddr(ctx, &bytes, args[4], args[5])?;
    }
    Ok(recv_count(&meta, flags) as isize)
}

fn recv_msg(
    ctx: &Context,
    file: &File,
    sock: &dyn Socket,
    msg_addr: u64,
    flags: u32,
) -> Result<usize> {
    let m = MsgHdr::read(ctx, msg_addr)?;
    let iovs = IoVecs::read(ctx, m.iov, m.iovlen, Errno::EMSGSIZE)?;
    let meta = do_recv(ctx, file, sock, iovs, flags)?;
    let count = recv_count(&meta, flags);
    let mut out_flags = meta.flags;
    if m.name != 0 {
        let bytes = meta
            .addr
            .as_ref()
            .map(SockAddr::to_bytes)
            .unwrap_or_default();
        write_sockaddr_sized(ctx, &bytes, m.name, m.namelen, msg_addr + 8)?;
    }
    let cap = if m.control == 0 {
        0
    } else {
        m.controllen.min(i32::MAX as u64) as usize
    };
    let (used, cflags) = if meta.control.is_empty() {
        (0, 0)
    } else {
        build_control(
            ctx,
            meta.control,
            m.control,
            cap,
            flags & MSG_CMSG_CLOEXEC != 0,
        )?
    };
    out_flags |= cflags;
    ctx.write_val(msg_addr + 40, &(used as u64))?;
    ctx.write_val(msg_addr + 48, &out_flags)?;
    Ok(count)
}

pub fn sys_recvmsg(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    Ok(recv_msg(ctx, &file, &*sock, args[1], args[2] as u32)? as isize)
}

pub fn sys_sendmmsg(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let (vec, vlen, flags) = (
        args[1],
        (args[2] as u32 as usize).min(UIO_MAXIOV),
        args[3] as u32,
    );
    let mut sent = 0usize;
    while sent < vlen {
        let at = vec + sent as u64 * MMSGHDR_LEN;
        match send_msg(ctx, &file, &*sock, at, flags) {
            Ok(n) => {
                if let Err(e) = ctx.write_val(at + MSGHDR_LEN as u64, &(n as u32)) {
                    if sent == 0 {
                        return Err(e);
                    }
                    break;
                }
                sent += 1;
            }
            Err(e) if sent == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(sent as isize)
}

pub fn sys_recvmmsg(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (file, sock) = socket_fd(ctx, fd_arg(args[0]))?;
    let (vec, vlen, mut flags) = (
        args[1],
        (args[2] as u32 as usize).min(UIO_MAXIOV),
        args[3] as u32,
    );
    let deadline = if args[4] != 0 {
        let ts: [i64; 2] = [
            ctx.read_val::<i64>(args[4])?,
            ctx.read_val::<i64>(args[4] + 8)?,
        ];
        if ts[0] < 0 || !(0..1_000_000_000).contains(&ts[1]) {
            return Err(err(Errno::EINVAL));
        }
        Some(
            frame::timer::monotonic_ns()
                .saturating_add((ts[0] as u64).saturating_mul(1_000_000_000))
                .saturating_add(ts[1] as u64),
        )
    } else {
        None
    };
    let mut got = 0usize;
    while got < vlen {
        let at = vec + got as u64 * MMSGHDR_LEN;
        match recv_msg(ctx, &file, &*sock, at, flags) {
            Ok(n) => {
                ctx.write_val(at + MSGHDR_LEN as u64, &(n as u32))?;
                got += 1;
            }
            Err(e) if got == 0 => return Err(e),
            Err(_) => break,
        }
        if flags & MSG_WAITFORONE != 0 {
            flags |= MSG_DONTWAIT;
        }
        if deadline.is_some_and(|d| frame::timer::monotonic_ns() >= d) {
            break;
        }
    }
    Ok(got as isize)
}
