//! Calls on byte ranges of regular files: fallocate(2),
//! copy_file_range(2), and the page-cache hints fadvise64(2),
//! readahead(2) and sync_file_range(2) (validated, nothing to do).

use alloc::sync::Arc;

use super::{CallerCtx, fd_arg, get_io_file};
use crate::error::{Errno, Error, Result};
use crate::fs::{Allocate, File, FileType, IO_CHUNK, O_APPEND, kernel_buffer};
use crate::syscall::{Context, SyscallArgs};

/// Linux's MAX_RW_COUNT: most bytes one call moves.
const MAX_COPY: usize = 0x7fff_f000;

const FALLOC_FL_KEEP_SIZE: u32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: u32 = 0x02;
const FALLOC_FL_COLLAPSE_RANGE: u32 = 0x08;
const FALLOC_FL_ZERO_RANGE: u32 = 0x10;
const FALLOC_FL_INSERT_RANGE: u32 = 0x20;
const FALLOC_FL_UNSHARE_RANGE: u32 = 0x40;
const FALLOC_FL_WRITE_ZEROES: u32 = 0x80;
/// The operations; at most one may be given (0 allocates).
const FALLOC_FL_MODE_MASK: u32 = FALLOC_FL_PUNCH_HOLE
    | FALLOC_FL_COLLAPSE_RANGE
    | FALLOC_FL_ZERO_RANGE
    | FALLOC_FL_INSERT_RANGE
    | FALLOC_FL_UNSHARE_RANGE
    | FALLOC_FL_WRITE_ZEROES;

/// The file type checks fallocate and copy_file_range share: EISDIR for a
/// directory, and `other` for anything but a regular file.
fn regular(file: &File, other: Errno) -> Result<()> {
    match file.node().file_type() {
        FileType::Regular if file.ops().is_none() => Ok(()),
        FileType::Directory => Err(Error::new(Errno::EISDIR)),
        _ => Err(Error::new(other)),
    }
}

/// fallocate(2), checked in the order of Linux's vfs_fallocate. The
/// in-memory file systems support modes 0, FALLOC_FL_KEEP_SIZE and
/// FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, as tmpfs does.
pub fn sys_fallocate(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (mode, offset, len) = (args[1] as u32, args[2] as i64, args[3] as i64);
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if offset < 0 || len <= 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // One operation, with KEEP_SIZE where it makes sense (Linux 6.17's
    // vfs_fallocate; earlier kernels answer EINVAL for some of these).
    let keep = mode & FALLOC_FL_KEEP_SIZE != 0;
    let valid = match mode & FALLOC_FL_MODE_MASK {
        _ if mode & !(FALLOC_FL_MODE_MASK | FALLOC_FL_KEEP_SIZE) != 0 => false,
        0 | FALLOC_FL_UNSHARE_RANGE | FALLOC_FL_ZERO_RANGE => true,
        FALLOC_FL_PUNCH_HOLE => keep,
        FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE | FALLOC_FL_WRITE_ZEROES => !keep,
        _ => false,
    };
    if !valid {
        return Err(Error::new(Errno::EOPNOTSUPP));
    }
    if !file.can_write() {
        return Err(Error::new(Errno::EBADF));
    }
    if file.node().file_type() == FileType::Fifo {
        return Err(Error::new(Errno::ESPIPE));
    }
    regular(&file, Errno::ENODEV)?;
    if offset.checked_add(len).is_none() {
        return Err(Error::new(Errno::EFBIG));
    }
    let how = match mode {
        0 => Allocate::Extend,
        FALLOC_FL_KEEP_SIZE => Allocate::KeepSize,
        m if m == FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE => Allocate::PunchHole,
        _ => return Err(Error::new(Errno::EOPNOTSUPP)),
    };
    if how == Allocate::Extend {
        crate::fs::file_size_grow_check(file.node().size(), (offset + len) as usize, &CallerCtx(ctx))?;
    }
    file.node().allocate(how, offset as usize, len as usize)?;
    Ok(0)
}

/// An optional `loff_t *` argument: its value, or None for NULL. A
/// negative offset is taken as the unsigned number Linux's range checks
/// see (so it overflows: EOVERFLOW).
fn offset_arg(ctx: &Context, addr: u64) -> Result<Option<usize>> {
    if addr == 0 {
        return Ok(None);
    }
    let off: u64 = ctx.read_val(addr)?;
    Ok(Some(off as usize))
}

/// copy_file_range(2): copies bytes between two regular files of one file
/// system through a kernel buffer, from `*off_in` (or the input's
/// position) to `*off_out` (or the output's), updating whichever was used.
pub fn sys_copy_file_range(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (off_in_addr, off_out_addr, raw_count, flags) = (args[1], args[3], args[4], args[5] as u32);
    let input = get_io_file(ctx, fd_arg(args[0]))?;
    let output = get_io_file(ctx, fd_arg(args[2]))?;
    let off_in = offset_arg(ctx, off_in_addr)?;
    let off_out = offset_arg(ctx, off_out_addr)?;
    if flags != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    // generic_file_rw_checks, then generic_copy_file_checks.
    for file in [&input, &output] {
        regular(file, Errno::EINVAL)?;
    }
    if !input.can_read() || !output.can_write() || output.flags() & O_APPEND != 0 {
        return Err(Error::new(Errno::EBADF));
    }
    let (in_meta, out_meta) = (input.node().metadata(), output.node().metadata());
    if in_meta.dev != out_meta.dev {
        return Err(Error::new(Errno::EXDEV));
    }
    let pos_in = off_in.unwrap_or(input.position() as usize);
    let pos_out = off_out.unwrap_or(output.position() as usize);
    // The length as given (a size_t) must not wrap either offset.
    let wraps = |pos: usize| (pos as u64).checked_add(raw_count).is_none();
    if wraps(pos_in) || wraps(pos_out) {
        return Err(Error::new(Errno::EOVERFLOW));
    }
    let count = usize::try_from(raw_count).unwrap_or(usize::MAX).min(MAX_COPY);
    // rw_verify_area: offsets beyond the largest file offset.
    if pos_in > i64::MAX as usize || pos_out > i64::MAX as usize {
        return Err(Error::new(Errno::EINVAL));
    }
    let size_in = in_meta.size as usize;
    let count = count.min(size_in.saturating_sub(pos_in));
    if in_meta.ino == out_meta.ino && pos_out + count > pos_in && pos_out < pos_in + count {
        return Err(Error::new(Errno::EINVAL));
    }
    let count = crate::fs::file_size_check(pos_out, count, &CallerCtx(ctx))?;
    let copied = copy(&input, pos_in, &output, pos_out, count)?;
    let advance = |file: &Arc<File>, addr: u64, given: Option<usize>, start: usize| {
        let end = (start + copied) as u64;
        match given {
            Some(_) => ctx.write_val(addr, &(end as i64)),
            None => {
                file.set_position(end);
                Ok(())
            }
        }
    };
    advance(&input, off_in_addr, off_in, pos_in)?;
    advance(&output, off_out_addr, off_out, pos_out)?;
    Ok(copied as isize)
}

/// Copies up to `count` bytes chunk by chunk; stops at the input's end or
/// the first short write, failing only if nothing was copied.
fn copy(input: &File, pos_in: usize, output: &File, pos_out: usize, count: usize) -> Result<usize> {
    let mut buf = kernel_buffer(count.min(IO_CHUNK))?;
    let mut done = 0;
    while done < count {
        let want = (count - done).min(buf.len());
        let step = input
            .node()
            .read_at(pos_in + done, &mut buf[..want])
            .and_then(|n| output.node().write_at(pos_out + done, &buf[..n]));
        match step {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    input.accessed();
    Ok(done)
}

const POSIX_FADV_NOREUSE: u64 = 5;

/// fadvise64(2): there is no page cache to advise, so after Linux's checks
/// (EBADF, ESPIPE for a pipe or FIFO, EINVAL for a negative length or
/// unknown advice) the advice is accepted and ignored, as Linux does for
/// files without a backing device (tmpfs).
pub fn sys_fadvise64(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (len, advice) = (args[2] as i64, args[3]);
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if file.node().file_type() == FileType::Fifo {
        return Err(Error::new(Errno::ESPIPE));
    }
    if len < 0 || advice > POSIX_FADV_NOREUSE {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok(0)
}

/// readahead(2): EBADF unless open for reading, EINVAL unless a regular
/// file; otherwise nothing to do (all data is in memory already).
pub fn sys_readahead(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if !file.can_read() {
        return Err(Error::new(Errno::EBADF));
    }
    if file.ops().is_some() || file.node().file_type() != FileType::Regular {
        return Err(Error::new(Errno::EINVAL));
    }
    Ok(0)
}

const SYNC_FILE_RANGE_VALID: u32 = 0x1 | 0x2 | 0x4;

/// sync_file_range(2): EBADF first, then EINVAL for unknown flags or a
/// range that is negative or overflows, ESPIPE for anything but a regular
/// file, directory or symlink; nothing is ever dirty, so that is all.
pub fn sys_sync_file_range(ctx: &mut Context, args: &SyscallArgs) -> Result<isize> {
    let (offset, nbytes, flags) = (args[1] as i64, args[2] as i64, args[3] as u32);
    let file = get_io_file(ctx, fd_arg(args[0]))?;
    if flags & !SYNC_FILE_RANGE_VALID != 0 {
        return Err(Error::new(Errno::EINVAL));
    }
    let end = offset.wrapping_add(nbytes);
    if offset < 0 || end < 0 || end < offset {
        return Err(Error::new(Errno::EINVAL));
    }
    let ok_type = matches!(
        file.node().file_type(),
        FileType::Regular | FileType::Directory | FileType::Symlink | FileType::BlockDevice
    );
    if file.ops().is_some() || !ok_type {
        return Err(Error::new(Errno::ESPIPE));
    }
    // SYNC_FILE_RANGE_WRITE (and the waits): the whole file is written
    // back and flushed, more than asked and never less.
    if flags != 0 {
        file.node().sync(true)?;
    }
    Ok(0)
}
