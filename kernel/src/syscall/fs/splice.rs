//! splice(2), tee(2) and vmsplice(2): moving data between a pipe and a
//! file, two pipes, or a pipe and user memory. Data is copied through a
//! kernel buffer (pipe pages are never shared or gifted), at most what the
//! source holds and the destination pipe has room for at that moment, so
//! nothing read is left over. Blocking follows Linux: SPLICE_F_NONBLOCK or
//! an O_NONBLOCK pipe makes an empty or full pipe EAGAIN (vmsplice only
//! looks at SPLICE_F_NONBLOCK); an empty pipe without writers is the end
//! (0); a pipe without readers is EPIPE and SIGPIPE.

use super::io::IoVecs;
use super::{CallerCtx, count_arg, fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::pipe::{PipeEnd, pipe_end};
use crate::fs::{Caller, File, FileOps, FileType, O_APPEND, kernel_buffer};
use crate::syscall::{Context, SyscallArgs};

const SPLICE_F_NONBLOCK: u32 = 0x02;
/// SPLICE_F_MOVE | NONBLOCK | MORE | GIFT: MOVE, MORE and GIFT are hints.
const SPLICE_F_ALL: u32 = 0x0f;
/// Most bytes moved by one call (the largest pipe).
const MAX_STEP: usize = 1 << 20;
const SIGPIPE: u32 = 13;

/// Waits until `end`'s pipe holds data: false at the end (empty, no
/// writers); EAGAIN instead of sleeping if `nonblock`.
fn wait_data(caller: &dyn Caller, end: &PipeEnd, nonblock: bool) -> Result<bool> {
    loop {
        let st = end.state();
        if st.len > 0 {
            return Ok(true);
        }
        if st.writers == 0 {
            return Ok(false);
        }
        if nonblock {
            return Err(Error::new(Errno::EAGAIN));
        }
        let mut ready = || {
            let s = end.state();
            s.len > 0 || s.writers == 0
        };
        caller.wait(end.queue(), &mut ready, u64::MAX)?;
    }
}

/// Waits until `end`'s pipe has room, returning how much: EPIPE (and
/// SIGPIPE) without readers, EAGAIN instead of sleeping if `nonblock`.
fn wait_space(caller: &dyn Caller, end: &PipeEnd, nonblock: bool) -> Result<usize> {
    loop {
        let st = end.state();
        if st.readers == 0 {
            caller.raise(SIGPIPE);
            return Err(Error::new(Errno::EPIPE));
        }
        if st.space > 0 {
            return Ok(st.space);
        }
        if nonblock {
            return Err(Error::new(Errno::EAGAIN));
        }
        let mut ready = || {
            let s = end.state();
            s.space > 0 || s.readers == 0
        };
        caller.wait(end.queue(), &mut ready, u64::MAX)?;
    }
}

/// An optional `loff_t *` of splice(2): EINVAL if negative.
fn read_offset(ctx: &Context, addr: u64) -> Result<Option<usize>> {
    if addr == 0 {
        return Ok(None);
    }
    let off: i64 = ctx.read_val(addr)?;
    usize::try_from(off)
        .map(Some)
        .map_err(|_| Error::new(Errno::EINVAL))
}

/// splice(2), checked in Linux's order: flags (EINVAL), a zero length (0),
/// the descriptors (EBADF), an offset for a pipe (ESPIPE), the access
/// modes (EBADF), then per direction.
pub fn sys_splice(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let (off_in_addr, off_out_addr, flags) = (a[1], a[3], a[5] as u32);
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let len = count_arg(a[4]);
    if len == 0 {
        return Ok(0);
    }
    let input = get_io_file(ctx, fd_arg(a[0]))?;
    let output = get_io_file(ctx, fd_arg(a[2]))?;
    let (ipipe, opipe) = (pipe_end(&input), pipe_end(&output));
    if (off_in_addr != 0 && ipipe.is_some()) || (off_out_addr != 0 && opipe.is_some()) {
        return Err(Error::new(Errno::ESPIPE));
    }
    if !input.can_read() || !output.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    let nonblock = flags & SPLICE_F_NONBLOCK != 0;
    let caller = &CallerCtx(ctx);
    match (ipipe, opipe) {
        (Some(i), Some(o)) => {
            if i.same_pipe(o) {
                return Err(Error::new(Errno::EINVAL));
            }
            let nonblock = nonblock || input.is_nonblocking() || output.is_nonblocking();
            pipe_to_pipe(caller, i, o, len, nonblock, false)
        }
        (Some(i), None) => {
            let off = read_offset(ctx, off_out_addr)?;
            if output.flags() & O_APPEND != 0 {
                return Err(Error::new(Errno::EINVAL));
            }
            let nonblock = nonblock || input.is_nonblocking();
            if !wait_data(caller, i, nonblock)? {
                return Ok(0);
            }
            let want = len.min(i.state().len).min(MAX_STEP);
            let mut buf = kernel_buffer(want)?;
            let n = i.read(&mut buf, caller)?;
            let source = &mut |done: usize, chunk: &mut [u8]| {
                chunk.copy_from_slice(&buf[done..done + chunk.len()]);
                Ok(())
            };
            let written = match off {
                Some(at) => output.write_at(at, n, source, caller)?,
                None => output.write(n, source, caller)?,
            };
            if let Some(at) = off {
                ctx.write_val(off_out_addr, &((at + written) as i64))?;
            }
            Ok(written as isize)
        }
        (None, Some(o)) => {
            let off = read_offset(ctx, off_in_addr)?;
            if input.node().file_type() == FileType::Directory && input.ops().is_none() {
                return Err(Error::new(Errno::EINVAL));
            }
            let nonblock = nonblock || output.is_nonblocking();
            let pushed = file_to_pipe(caller, &input, off, o, len, nonblock)?;
            if let Some(at) = off {
                ctx.write_val(off_in_addr, &((at + pushed) as i64))?;
            }
            Ok(pushed as isize)
        }
        (None, None) => Err(Error::new(Errno::EINVAL)),
    }
}

/// Reads up to what the pipe has room for from `input` (at `off`, or its
/// position) and writes it into the pipe.
fn file_to_pipe(
    caller: &dyn Caller,
    input: &File,
    off: Option<usize>,
    o: &PipeEnd,
    len: usize,
    nonblock: bool,
) -> Result<usize> {
    let space = wait_space(caller, o, nonblock)?;
    let want = len.min(space).min(MAX_STEP);
    let mut buf = kernel_buffer(want)?;
    let mut take = |done: usize, data: &[u8]| {
        buf[done..done + data.len()].copy_from_slice(data);
        Ok(())
    };
    let start = input.position();
    let n = match off {
        Some(at) => input.read_at(at, want, &mut take, caller)?,
        None => input.read(want, &mut take, caller)?,
    };
    if n == 0 {
        return Ok(0);
    }
    let pushed = match o.write(&buf[..n], caller) {
        Ok(p) => p,
        Err(e) => {
            if off.is_none() && input.ops().is_none() {
                input.set_position(start);
            }
            return Err(e);
        }
    };
    // The pipe filled up meanwhile: give back what did not fit.
    if pushed < n && off.is_none() && input.ops().is_none() {
        input.set_position(start + pushed as u64);
    }
    Ok(pushed)
}

/// Moves (or with `keep`, copies: tee) what `i` holds, up to what `o` has
/// room for.
fn pipe_to_pipe(
    caller: &dyn Caller,
    i: &PipeEnd,
    o: &PipeEnd,
    len: usize,
    nonblock: bool,
    keep: bool,
) -> Result<isize> {
    if !wait_data(caller, i, nonblock)? {
        return Ok(0);
    }
    let space = wait_space(caller, o, nonblock)?;
    let want = len.min(i.state().len).min(space).min(MAX_STEP);
    let mut buf = kernel_buffer(want)?;
    let n = if keep {
        i.peek(&mut buf)
    } else {
        i.read(&mut buf, caller)?
    };
    let pushed = o.write(&buf[..n], caller)?;
    Ok(pushed as isize)
}

/// tee(2): copies from one pipe to another without consuming. EINVAL for
/// bad flags, a file that is not a pipe, or one pipe on both sides; EBADF
/// for a wrong access mode.
pub fn sys_tee(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let flags = a[3] as u32;
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let len = count_arg(a[2]);
    if len == 0 {
        return Ok(0);
    }
    let input = get_io_file(ctx, fd_arg(a[0]))?;
    let output = get_io_file(ctx, fd_arg(a[1]))?;
    if !input.can_read() || !output.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    let (Some(i), Some(o)) = (pipe_end(&input), pipe_end(&output)) else {
        return Err(Error::new(Errno::EINVAL));
    };
    if i.same_pipe(o) {
        return Err(Error::new(Errno::EINVAL));
    }
    let nonblock =
        flags & SPLICE_F_NONBLOCK != 0 || input.is_nonblocking() || output.is_nonblocking();
    pipe_to_pipe(&CallerCtx(ctx), i, o, len, nonblock, true)
}

/// vmsplice(2): copies user memory into a pipe open for writing, or out
/// of a pipe open for reading (SPLICE_F_GIFT changes nothing: the pages
/// are copied). EBADF if `fd` is not a pipe.
pub fn sys_vmsplice(ctx: &mut Context, a: &SyscallArgs) -> Result<isize> {
    let flags = a[3] as u32;
    if flags & !SPLICE_F_ALL != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let file = get_io_file(ctx, fd_arg(a[0]))?;
    let end = pipe_end(&file).ok_or(Error::new(Errno::EBADF))?;
    if !file.can_write() && !file.can_read() {
        return Err(Error::new(Errno::EBADF));
    }
    let iovs = IoVecs::read(ctx, a[1], a[2])?;
    let total = iovs.total();
    if total == 0 {
        return Ok(0);
    }
    let nonblock = flags & SPLICE_F_NONBLOCK != 0;
    let caller = &CallerCtx(ctx);
    if file.can_write() {
        let space = wait_space(caller, end, nonblock)?;
        let mut buf = kernel_buffer(total.min(space).min(MAX_STEP))?;
        iovs.gather(ctx, 0, &mut buf)?;
        Ok(end.write(&buf, caller)? as isize)
    } else {
        if !wait_data(caller, end, nonblock)? {
            return Ok(0);
        }
        let mut buf = kernel_buffer(total.min(end.state().len).min(MAX_STEP))?;
        let n = end.read(&mut buf, caller)?;
        iovs.scatter(ctx, 0, &buf[..n])?;
        Ok(n as isize)
    }
}
