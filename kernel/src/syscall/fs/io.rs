//! read(2), write(2), pread64/pwrite64, readv/writev, preadv/pwritev and
//! the *v2 calls, lseek(2), sendfile(2).

use alloc::vec::Vec;

use super::{CallerCtx, count_arg, fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::{File, FileType, IO_CHUNK, O_APPEND, RwFlags, kernel_buffer};
use crate::mm::page_cache::PageSource;
use crate::syscall::{Context, SyscallArgs};

/// Most iovecs in one call (UIO_MAXIOV).
const IOV_MAX: u64 = 1024;

/// Linux's vfs_read/vfs_write check the whole buffer with access_ok()
/// before anything moves (after the descriptor and its access mode): a
/// buffer that leaves user space is EFAULT with the pipe's data, the file
/// offset and the file untouched. `count` is the caller's, before
/// MAX_RW_COUNT clamps it.
fn user_buffer(buf: u64, count: u64) -> Result<()> {
    if crate::syscall::access_ok(buf, count) {
        Ok(())
    } else {
        Err(Error::new(Errno::EFAULT))
    }
}

/// The checks read(2)/pread64(2) make before the buffer (EBADF for a file
/// not open for reading; for pread, ESPIPE on a stream first).
fn readable(file: &File, positional: bool) -> Result<()> {
    if positional && file.ops().is_some_and(|ops| !ops.allows_positional_io()) {
        return Err(Error::new(Errno::ESPIPE));
    }
    if !file.can_read() {
        return Err(Error::new(Errno::EBADF));
    }
    Ok(())
}

/// [`readable`] for writes.
fn writable(file: &File, positional: bool) -> Result<()> {
    if positional && file.ops().is_some_and(|ops| !ops.allows_positional_io()) {
        return Err(Error::new(Errno::ESPIPE));
    }
    if !file.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    Ok(())
}

pub fn sys_read(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (buf, count) = (args[1], count_arg(args[2]));
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    readable(&file, false)?;
    user_buffer(buf, args[2])?;
    let n = file.read_paged(
        count,
        &mut |done, data| ctx.write_bytes(buf.wrapping_add(done as u64), data),
        Some(&mut |done, frames, at, n| ctx.write_from_frames(buf.wrapping_add(done as u64), frames, at, n)),
        &CallerCtx(ctx),
        RwFlags::default(),
    )?;
    Ok(n as isize)
}

pub fn sys_write(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (buf, count) = (args[1], count_arg(args[2]));
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    writable(&file, false)?;
    user_buffer(buf, args[2])?;
    // Straight into the cached page, resolving no fault while the page is
    // claimed (File::write_paged): a fault on a mapping of that same page
    // would wait for itself.
    let n = file.write_paged(
        count,
        &mut |done, chunk| ctx.read_into(buf.wrapping_add(done as u64), chunk),
        Some(&mut PageSource {
            copy: &mut |done, frame, at, n| Ok(ctx.read_into_frame_nofault(buf.wrapping_add(done as u64), frame, at, n)),
            fetch: &mut |done, frame, at, n| ctx.read_into_frame(buf.wrapping_add(done as u64), frame, at, n),
        }),
        &CallerCtx(ctx),
        RwFlags::default(),
    )?;
    Ok(n as isize)
}

/// A file offset argument: EINVAL if negative.
fn offset_arg(arg: u64) -> Result<usize> {
    usize::try_from(arg as i64).map_err(|_| Error::new(Errno::EINVAL))
}

pub fn sys_pread64(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (buf, count, offset) = (args[1], count_arg(args[2]), offset_arg(args[3])?);
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    readable(&file, true)?;
    user_buffer(buf, args[2])?;
    let n = file.read_at_paged(
        offset,
        count,
        &mut |done, data| ctx.write_bytes(buf.wrapping_add(done as u64), data),
        Some(&mut |done, frames, at, n| ctx.write_from_frames(buf.wrapping_add(done as u64), frames, at, n)),
        &CallerCtx(ctx),
        RwFlags::default(),
    )?;
    Ok(n as isize)
}

pub fn sys_pwrite64(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (buf, count, offset) = (args[1], count_arg(args[2]), offset_arg(args[3])?);
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    writable(&file, true)?;
    user_buffer(buf, args[2])?;
    let source =
        &mut |done: usize, chunk: &mut [u8]| ctx.read_into(buf.wrapping_add(done as u64), chunk);
    let pages = &mut PageSource {
        copy: &mut |done, frame, at, n| Ok(ctx.read_into_frame_nofault(buf.wrapping_add(done as u64), frame, at, n)),
        fetch: &mut |done, frame, at, n| ctx.read_into_frame(buf.wrapping_add(done as u64), frame, at, n),
    };
    let n = file.write_at_paged(offset, count, source, Some(pages), &CallerCtx(ctx), RwFlags::default())?;
    Ok(n as isize)
}

/// A user iovec array: (base, len) pairs, validated as readv(2) requires:
/// EINVAL for a negative length, EFAULT for a vector that leaves user space
/// (Linux's __import_iovec checks each one with access_ok() before any
/// data moves).
pub(super) struct IoVecs(Vec<(u64, usize)>);

impl IoVecs {
    pub(super) fn read(ctx: &Context, addr: u64, count: u64) -> Result<IoVecs> {
        if count > IOV_MAX {
            return Err(Error::new(Errno::EINVAL));
        }
        if count == 0 {
            return Ok(IoVecs(Vec::new()));
        }
        let raw = ctx.read_bytes(addr, count as usize * 16)?;
        let mut iovs = crate::fallible::with_capacity(count as usize)?;
        let mut total: usize = 0;
        for pair in raw.chunks_exact(16) {
            let mut base = [0u8; 8];
            let mut len = [0u8; 8];
            base.copy_from_slice(&pair[..8]);
            len.copy_from_slice(&pair[8..]);
            let len = u64::from_ne_bytes(len);
            let len = usize::try_from(len)
                .ok()
                .filter(|l| *l <= isize::MAX as usize)
                .ok_or(Error::new(Errno::EINVAL))?;
            let base = u64::from_ne_bytes(base);
            if !crate::syscall::access_ok(base, len as u64) {
                return Err(Error::new(Errno::EFAULT));
            }
            total = total
                .checked_add(len)
                .filter(|t| *t <= isize::MAX as usize)
                .ok_or(Error::new(Errno::EINVAL))?;
            iovs.push((base, len));
        }
        Ok(IoVecs(iovs))
    }

    pub(super) fn total(&self) -> usize {
        self.0
            .iter()
            .map(|(_, len)| *len)
            .sum::<usize>()
            .min(super::MAX_RW_COUNT)
    }

    /// The user ranges covering bytes `[at, at + len)` of the whole vector.
    fn ranges(&self, mut at: usize, mut len: usize) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.0.iter().filter_map(move |&(base, iov_len)| {
            if len == 0 {
                return None;
            }
            if at >= iov_len {
                at -= iov_len;
                return None;
            }
            let n = (iov_len - at).min(len);
            let r = (base.wrapping_add(at as u64), n);
            at = 0;
            len -= n;
            Some(r)
        })
    }

    pub(super) fn scatter(&self, ctx: &Context, at: usize, data: &[u8]) -> Result<()> {
        let mut off = 0;
        for (addr, n) in self.ranges(at, data.len()) {
            ctx.write_bytes(addr, &data[off..off + n])?;
            off += n;
        }
        Ok(())
    }

    pub(super) fn gather(&self, ctx: &Context, at: usize, buf: &mut [u8]) -> Result<()> {
        let mut off = 0;
        for (addr, n) in self.ranges(at, buf.len()) {
            ctx.read_into(addr, &mut buf[off..off + n])?;
            off += n;
        }
        Ok(())
    }
}

pub fn sys_readv(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if !file.can_read() {
        return Err(Error::new(Errno::EBADF));
    }
    let iovs = IoVecs::read(ctx, args[1], args[2])?;
    let n = file.read(
        iovs.total(),
        &mut |done, data| iovs.scatter(ctx, done, data),
        &CallerCtx(ctx),
    )?;
    Ok(n as isize)
}

pub fn sys_writev(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if !file.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    let iovs = IoVecs::read(ctx, args[1], args[2])?;
    let n = file.write(
        iovs.total(),
        &mut |done, buf| iovs.gather(ctx, done, buf),
        &CallerCtx(ctx),
    )?;
    Ok(n as isize)
}

pub fn sys_lseek(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    let pos = file.seek(args[1] as i64, args[2] as u32)?;
    Ok(pos as isize)
}

/// sendfile(2): copies through a kernel buffer, from `in_fd`'s position
/// (or `*offset`, which is then updated and the position left alone) to
/// `out_fd`. Checked in the order of Linux's do_sendfile: EFAULT for the
/// offset pointer, EBADF for a descriptor not open for reading / writing,
/// ESPIPE for an offset on an unseekable input, EINVAL for a negative
/// offset, an input that cannot be spliced from (a pipe or directory) or
/// an O_APPEND output other than a pipe.
pub fn sys_sendfile(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (out_fd, in_fd, offset_addr, count) = (
        fd_arg(args[0]),
        fd_arg(args[1]),
        args[2],
        count_arg(args[3]),
    );
    let given: Option<i64> = if offset_addr != 0 {
        Some(ctx.read_val(offset_addr)?)
    } else {
        None
    };
    let input = get_io_file(ctx, in_fd)?;
    if !input.can_read() {
        return Err(Error::new(Errno::EBADF));
    }
    if given.is_some() && input.ops().is_some() {
        return Err(Error::new(Errno::ESPIPE));
    }
    let mut offset = match given {
        Some(off) => Some(usize::try_from(off).map_err(|_| Error::new(Errno::EINVAL))?),
        None => None,
    };
    let output = get_io_file(ctx, out_fd)?;
    if !output.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    let out_is_pipe = output.node().file_type() == FileType::Fifo;
    if !out_is_pipe && output.flags() & O_APPEND != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    if matches!(input.node().file_type(), FileType::Fifo | FileType::Directory) {
        return Err(Error::new(Errno::EINVAL));
    }
    let mut chunk = kernel_buffer(count.min(IO_CHUNK))?;
    let mut total = 0;
    while total < count {
        let want = (count - total).min(chunk.len());
        let mut got = 0;
        let mut take = |done: usize, data: &[u8]| {
            chunk[done..done + data.len()].copy_from_slice(data);
            got = done + data.len();
            Ok(())
        };
        let read = match offset {
            Some(off) => input.read_at(off, want, &mut take, &CallerCtx(ctx)),
            None => input.read(want, &mut take, &CallerCtx(ctx)),
        };
        let n = match read {
            Ok(n) => n.min(got),
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        };
        if n == 0 {
            break;
        }
        let mut give = |done: usize, buf: &mut [u8]| {
            buf.copy_from_slice(&chunk[done..done + buf.len()]);
            Ok(())
        };
        let written = match output.write(n, &mut give, &CallerCtx(ctx)) {
            Ok(w) => w,
            Err(e) if total == 0 => return Err(e),
            Err(_) => 0,
        };
        total += written;
        if let Some(off) = offset.as_mut() {
            *off += written;
        } else if written < n {
            // Give back what was read but not written.
            input.set_position(input.position().saturating_sub((n - written) as u64));
        }
        // A stream read returns what was there; reading on could block on
        // (and swallow) an end-of-file mark meant for the next call.
        if written < n || input.ops().is_some() {
            break;
        }
    }
    if let Some(off) = offset {
        ctx.write_val(offset_addr, &(off as i64))?;
    }
    Ok(total as isize)
}

const RWF_HIPRI: u32 = 0x01;
const RWF_DSYNC: u32 = 0x02;
const RWF_SYNC: u32 = 0x04;
const RWF_NOWAIT: u32 = 0x08;
const RWF_APPEND: u32 = 0x10;
const RWF_NOAPPEND: u32 = 0x20;
/// The flags preadv2/pwritev2 accept (the rest: EOPNOTSUPP, as Linux
/// answers for flags it does not know or the file cannot honour).
const RWF_SUPPORTED: u32 = RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND;

/// Linux's kiocb_set_rw_flags for the file: EOPNOTSUPP for unknown flags
/// and for RWF_NOWAIT on files that cannot honour it (the in-memory
/// regular files, as tmpfs; streams can). HIPRI, DSYNC and SYNC have
/// nothing to do here: there is no polled I/O, and nothing to write back.
fn rw_flags(file: &File, flags: u32, write: bool) -> Result<RwFlags> {
    if flags & !RWF_SUPPORTED != 0 {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    let nowait = flags & RWF_NOWAIT != 0;
    if nowait && file.ops().is_none() {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    Ok(RwFlags {
        nowait,
        append: write && flags & RWF_APPEND != 0,
        noappend: write && flags & (RWF_APPEND | RWF_NOAPPEND) == RWF_NOAPPEND,
    })
}

/// preadv/pwritev and the *v2 calls: `offset` None means the file
/// position (the *v2 calls' -1). Checked in Linux's order: the offset
/// (EINVAL), the descriptor (EBADF), positional I/O on a stream (ESPIPE),
/// the access mode (EBADF), the vector (EINVAL, EFAULT), then the flags.
fn vectored(ctx: &Context, a: &SyscallArgs, offset: Option<usize>, flags: u32, write: bool) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(a[0]))?;
    if offset.is_some() && file.ops().is_some_and(|ops| !ops.allows_positional_io()) {
        return Err(Error::new(Errno::ESPIPE));
    }
    if (write && !file.can_write()) || (!write && !file.can_read()) {
        return Err(Error::new(Errno::EBADF));
    }
    let iovs = IoVecs::read(ctx, a[1], a[2])?;
    let total = iovs.total();
    if total == 0 {
        return Ok(0);
    }
    let rw = rw_flags(&file, flags, write)?;
    let caller = &CallerCtx(ctx);
    let n = if write {
        let source = &mut |done: usize, buf: &mut [u8]| iovs.gather(ctx, done, buf);
        match offset {
            Some(off) => file.write_at_with(off, total, source, caller, rw)?,
            None => file.write_with(total, source, caller, rw)?,
        }
    } else {
        let sink = &mut |done: usize, data: &[u8]| iovs.scatter(ctx, done, data);
        match offset {
            Some(off) => file.read_at_with(off, total, sink, caller, rw)?,
            None => file.read_with(total, sink, caller, rw)?,
        }
    };
    Ok(n as isize)
}

/// The offset of preadv/pwritev (on x86-64 the low word holds all of
/// it): EINVAL if negative.
fn v1_offset(arg: u64) -> Result<Option<usize>> {
    Ok(Some(offset_arg(arg)?))
}

/// The offset of preadv2/pwritev2: -1 is the file position.
fn v2_offset(arg: u64) -> Result<Option<usize>> {
    if arg as i64 == -1 {
        return Ok(None);
    }
    v1_offset(arg)
}

pub fn sys_preadv(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    vectored(ctx, a, v1_offset(a[3])?, 0, false)
}

pub fn sys_pwritev(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    vectored(ctx, a, v1_offset(a[3])?, 0, true)
}

pub fn sys_preadv2(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    vectored(ctx, a, v2_offset(a[3])?, a[5] as u32, false)
}

pub fn sys_pwritev2(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    vectored(ctx, a, v2_offset(a[3])?, a[5] as u32, true)
}
